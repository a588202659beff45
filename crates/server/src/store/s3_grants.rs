//! What the S3-compatible endpoint keeps: credentials minted for one upload, the multipart
//! uploads under way on them, and the parts that arrived until the upload is completed or
//! aborted: appended to the upload's assembly ([`assembly_key`]) when they come in order, each
//! an object of its own ([`part_key`]) otherwise.

use crate::store::db::Pool;
use chrono::{DateTime, Utc};

use super::db::{self, Tx};

/// The bucket uploads to the service's S3-compatible endpoint are addressed to.
pub const BUCKET: &str = "mgds-uploads";

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
    sqlx::query("INSERT INTO s3_grants (access_key, secret, upload_id, expires_at) VALUES ($1, $2, $3, $4)")
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
pub async fn grant(db: &Pool, access_key: &str) -> Result<Option<Grant>, sqlx::Error> {
    sqlx::query_as(
        "SELECT g.access_key, g.secret, g.expires_at, g.upload_id, u.object_key, u.paired_object_key, \
         u.confirmed_id, u.expires_at AS upload_expires_at \
         FROM s3_grants g JOIN uploads u ON u.id = g.upload_id WHERE g.access_key = $1",
    )
    .bind(access_key)
    .fetch_optional(db)
    .await
}

/// Records a multipart upload started on `key` with `access_key`; returns its id.
pub async fn start_multipart(db: &Pool, access_key: &str, key: &str) -> Result<String, sqlx::Error> {
    let id = hex::encode(rand::random::<[u8; 16]>());
    sqlx::query("INSERT INTO s3_multipart (id, access_key, object_key, created_at) VALUES ($1, $2, $3, $4)")
        .bind(&id)
        .bind(access_key)
        .bind(key)
        .bind(db::now())
        .execute(db)
        .await?;
    Ok(id)
}

/// The credentials and object key of multipart upload `id`.
pub async fn multipart(db: &Pool, id: &str) -> Result<Option<(String, String)>, sqlx::Error> {
    sqlx::query_as("SELECT access_key, object_key FROM s3_multipart WHERE id = $1").bind(id).fetch_optional(db).await
}

/// How far multipart upload `id`'s assembly has come: the parts it holds (1 to the first
/// number) and its length in bytes.
pub async fn assembly(db: &Pool, id: &str) -> Result<Option<(i32, i64)>, sqlx::Error> {
    sqlx::query_as("SELECT assembly_parts, assembly_bytes FROM s3_multipart WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await
}

/// Records part `n` of multipart upload `id` (a part sent again replaces the earlier one):
/// appended to the assembly at `assembly_offset`, or an object of its own (`None`).
pub async fn record_part(
    db: &Pool,
    id: &str,
    n: i32,
    e_tag: &str,
    size: u64,
    assembly_offset: Option<u64>,
) -> Result<(), sqlx::Error> {
    let size = i64::try_from(size).unwrap_or(i64::MAX);
    let offset = assembly_offset.map(|o| i64::try_from(o).unwrap_or(i64::MAX));
    let mut tx = db.begin().await?;
    if let Some(offset) = offset {
        sqlx::query("UPDATE s3_multipart SET assembly_parts = $1, assembly_bytes = $2 WHERE id = $3")
            .bind(n)
            .bind(offset + size)
            .bind(id)
            .execute(&mut *tx)
            .await?;
    }
    sqlx::query(
        "INSERT INTO s3_parts (multipart_id, part_number, e_tag, size, assembly_offset) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (multipart_id, part_number) DO UPDATE SET e_tag = excluded.e_tag, size = excluded.size, \
         assembly_offset = excluded.assembly_offset",
    )
    .bind(id)
    .bind(n)
    .bind(e_tag)
    .bind(size)
    .bind(offset)
    .execute(&mut *tx)
    .await?;
    tx.commit().await
}

/// A part of a multipart upload as it was recorded.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Part {
    /// Its number.
    pub part_number: i32,
    /// Its ETag.
    pub e_tag: String,
    /// Its size in bytes.
    pub size: i64,
    /// Where it starts in the upload's assembly; `None` for an object of its own.
    pub assembly_offset: Option<i64>,
}

/// The parts of multipart upload `id`, in order.
pub async fn parts(db: &Pool, id: &str) -> Result<Vec<Part>, sqlx::Error> {
    sqlx::query_as(
        "SELECT part_number, e_tag, size, assembly_offset FROM s3_parts WHERE multipart_id = $1 ORDER BY part_number",
    )
    .bind(id)
    .fetch_all(db)
    .await
}

/// Forgets multipart upload `id` (its parts' rows go with it; their objects are the caller's).
pub async fn forget_multipart(db: &Pool, id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM s3_multipart WHERE id = $1").bind(id).execute(db).await?;
    Ok(())
}

/// Whether upload `upload_id` still waits for its files: it exists (not canceled, nor revoked
/// by a key rotation), is not confirmed, and has not expired.
pub async fn upload_open(db: &Pool, upload_id: &str) -> Result<bool, sqlx::Error> {
    let open: Option<i64> =
        sqlx::query_scalar("SELECT 1 FROM uploads WHERE id = $1 AND confirmed_id IS NULL AND expires_at > $2")
            .bind(upload_id)
            .bind(db::now())
            .fetch_optional(db)
            .await?;
    Ok(open.is_some())
}

/// How many multipart uploads the credentials of upload `upload_id` have under way.
pub async fn multiparts_of(db: &Pool, upload_id: &str) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM s3_multipart m JOIN s3_grants g ON g.access_key = m.access_key WHERE g.upload_id = $1",
    )
    .bind(upload_id)
    .fetch_one(db)
    .await
}

/// The bytes held by the parts of multipart upload `id` other than part `n`.
pub async fn part_bytes_besides(db: &Pool, id: &str, n: i32) -> Result<i64, sqlx::Error> {
    // PostgreSQL sums BIGINTs as NUMERIC: cast back.
    sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM s3_parts WHERE multipart_id = $1 AND part_number <> $2",
    )
    .bind(id)
    .bind(n)
    .fetch_one(db)
    .await
}

/// Forgets every multipart upload begun for upload `upload_id` (once the upload is confirmed,
/// they can never be completed); the caller removes their objects, all under
/// [`upload_prefix`].
pub async fn forget_multiparts_of(tx: &mut Tx, upload_id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM s3_multipart WHERE access_key IN (SELECT access_key FROM s3_grants WHERE upload_id = $1)")
        .bind(upload_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The folder of keys holding every part and assembly of upload `upload`'s multipart uploads.
pub fn upload_prefix(upload: &str) -> String {
    format!("s3-parts/{upload}/")
}

/// The folder of keys holding the parts and the assembly of multipart upload `multipart`.
pub fn multipart_prefix(upload: &str, multipart: &str) -> String {
    format!("s3-parts/{upload}/{multipart}/")
}

/// The object key where part `n` of multipart upload `multipart` of upload `upload` waits when
/// it is not in the assembly.
pub fn part_key(upload: &str, multipart: &str, n: i32) -> String {
    format!("s3-parts/{upload}/{multipart}/{n:05}")
}

/// The object key of the assembly of multipart upload `multipart` of upload `upload`.
pub fn assembly_key(upload: &str, multipart: &str) -> String {
    format!("s3-parts/{upload}/{multipart}/assembly")
}
