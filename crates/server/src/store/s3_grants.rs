//! What the S3-compatible endpoint keeps: credentials minted for one upload, the multipart
//! uploads under way on them, and the parts that arrived (each an object of its own until the
//! upload is completed or aborted).

use chrono::{DateTime, Utc};
use sqlx::SqlitePool;

use super::db::{self, Tx};

/// How long minted credentials may start writes.
pub const CREDENTIALS_VALID: chrono::Duration = chrono::Duration::hours(1);

/// Credentials for one upload, as `init_multipart_upload` hands them out.
#[derive(Debug, Clone)]
pub struct Minted {
    /// The access key id.
    pub access_key: String,
    /// The secret access key.
    pub secret: String,
    /// When they stop starting writes.
    pub expires_at: DateTime<Utc>,
}

/// Makes credentials for upload `upload_id`, inside the transaction that records the upload.
/// The secret is kept as it is, because checking a signature needs it; it is good for one upload
/// and expires.
pub async fn mint(tx: &mut Tx, upload_id: &str, now: DateTime<Utc>) -> Result<Minted, sqlx::Error> {
    // AWS's shapes: a 20-character key id, a 40-character secret.
    let access_key = format!("MGDS{}", hex::encode_upper(rand::random::<[u8; 8]>()));
    let secret = hex::encode(rand::random::<[u8; 20]>());
    let expires_at = now + CREDENTIALS_VALID;
    sqlx::query("INSERT INTO s3_grants (access_key, secret, upload_id, expires_at) VALUES (?, ?, ?, ?)")
        .bind(&access_key)
        .bind(&secret)
        .bind(upload_id)
        .bind(db::ts(expires_at))
        .execute(&mut **tx)
        .await?;
    Ok(Minted { access_key, secret, expires_at })
}

/// What a set of credentials allows, with the state of its upload.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Grant {
    /// The access key id.
    pub access_key: String,
    /// The secret.
    pub secret: String,
    /// When the credentials stop starting writes.
    pub expires_at: String,
    /// The upload they are for.
    pub upload_id: String,
    /// The object key of the upload's file (read 1 of a pair).
    pub object_key: String,
    /// The object key of read 2, for a paired upload.
    pub paired_object_key: Option<String>,
    /// Set once the upload was confirmed (its objects are then closed).
    pub confirmed_id: Option<String>,
    /// When the upload itself expires.
    pub upload_expires_at: String,
}

impl Grant {
    /// Whether the credentials may write `key`.
    pub fn covers(&self, key: &str) -> bool {
        key == self.object_key || Some(key) == self.paired_object_key.as_deref()
    }
}

/// The grant of `access_key`, if any.
pub async fn grant(db: &SqlitePool, access_key: &str) -> Result<Option<Grant>, sqlx::Error> {
    sqlx::query_as(
        "SELECT g.access_key, g.secret, g.expires_at, g.upload_id, u.object_key, u.paired_object_key, \
         u.confirmed_id, u.expires_at AS upload_expires_at \
         FROM s3_grants g JOIN uploads u ON u.id = g.upload_id WHERE g.access_key = ?",
    )
    .bind(access_key)
    .fetch_optional(db)
    .await
}

/// Records a multipart upload started on `key` with `access_key`; returns its id.
pub async fn start_multipart(db: &SqlitePool, access_key: &str, key: &str) -> Result<String, sqlx::Error> {
    let id = hex::encode(rand::random::<[u8; 16]>());
    sqlx::query("INSERT INTO s3_multipart (id, access_key, object_key, created_at) VALUES (?, ?, ?, ?)")
        .bind(&id)
        .bind(access_key)
        .bind(key)
        .bind(db::now())
        .execute(db)
        .await?;
    Ok(id)
}

/// The credentials and object key of multipart upload `id`.
pub async fn multipart(db: &SqlitePool, id: &str) -> Result<Option<(String, String)>, sqlx::Error> {
    sqlx::query_as("SELECT access_key, object_key FROM s3_multipart WHERE id = ?").bind(id).fetch_optional(db).await
}

/// Records part `n` of multipart upload `id` (a part sent again replaces the earlier one).
pub async fn record_part(db: &SqlitePool, id: &str, n: i32, e_tag: &str, size: u64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO s3_parts (multipart_id, part_number, e_tag, size) VALUES (?, ?, ?, ?) \
         ON CONFLICT (multipart_id, part_number) DO UPDATE SET e_tag = excluded.e_tag, size = excluded.size",
    )
    .bind(id)
    .bind(n)
    .bind(e_tag)
    .bind(i64::try_from(size).unwrap_or(i64::MAX))
    .execute(db)
    .await?;
    Ok(())
}

/// The parts of multipart upload `id`: number, ETag, size, in order.
pub async fn parts(db: &SqlitePool, id: &str) -> Result<Vec<(i32, String, i64)>, sqlx::Error> {
    sqlx::query_as("SELECT part_number, e_tag, size FROM s3_parts WHERE multipart_id = ? ORDER BY part_number")
        .bind(id)
        .fetch_all(db)
        .await
}

/// Forgets multipart upload `id` (its parts' rows go with it; their objects are the caller's).
pub async fn forget_multipart(db: &SqlitePool, id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM s3_multipart WHERE id = ?").bind(id).execute(db).await?;
    Ok(())
}

/// The object key where part `n` of multipart upload `multipart` of upload `upload` waits.
pub fn part_key(upload: &str, multipart: &str, n: i32) -> String {
    format!("s3-parts/{upload}/{multipart}/{n:05}")
}

/// The objects of upload `upload_id`'s unfinished multipart uploads, to remove with it.
pub async fn part_keys(tx: &mut Tx, upload_id: &str) -> Result<Vec<String>, sqlx::Error> {
    let rows: Vec<(String, i32)> = sqlx::query_as(
        "SELECT m.id, p.part_number FROM s3_grants g JOIN s3_multipart m ON m.access_key = g.access_key \
         JOIN s3_parts p ON p.multipart_id = m.id WHERE g.upload_id = ?",
    )
    .bind(upload_id)
    .fetch_all(&mut **tx)
    .await?;
    Ok(rows.into_iter().map(|(m, n)| part_key(upload_id, &m, n)).collect())
}
