//! Samples whose file needs work on its bytes before it is theirs: a pair uploaded as two files
//! (`init_multipart_upload` with `paired_end_filename`, as the `onecodex` client sends a pair),
//! joined into one interleaved file, and a file written to an upload's own bucket of the store
//! ([`super::upload_buckets`]), copied into the service's bucket. Such an upload's callback only
//! checks what is cheap and makes the sample at once, `importing`, with no file yet: the work
//! reads or copies every byte, so it runs where analyses run (a worker; a join in an engine
//! process with the record limit and memory ceiling of analyses), never in the API process. It
//! waits here, claimed by workers under a lease dated by the database's clock as analyses are
//! ([`claim`], [`renew`]); once done, the sample gets its file, becomes `private` and is
//! classified ([`finish`]). Work that cannot be done (mates that do not pair, a file that changed
//! after it was checked) keeps the reason ([`fail`]): the sample stays `importing` and says why
//! in its `error_msg`.

use std::time::Duration;

use super::db::{self, Backend, Pool, Scope, Tx, begin_write};
use super::deletes::queue_delete;
use super::queue;
use crate::error::ApiResult;

/// Longest reason kept for a join that failed.
pub const MAX_IMPORT_ERROR_CHARS: usize = 500;

/// A pair waiting to be joined into its sample's file.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Import {
    /// The sample the joined file is for.
    pub sample_id: String,
    /// The upload the two files came with; for a copy without the host's reads, the sample it
    /// is made from.
    pub upload_id: String,
    /// Where read 1's file is stored.
    pub r1_key: String,
    /// Where read 2's file is stored, for a pair.
    pub r2_key: Option<String>,
    /// Read 1's file name, as uploaded (named in messages instead of any path).
    pub r1_name: String,
    /// Read 2's file name, as uploaded.
    pub r2_name: Option<String>,
    /// Where the sample's file goes: the joined file of a pair, else read 1's own key.
    pub object_key: String,
    /// The sample's file name.
    pub filename: String,
    /// The upload's own bucket in the store, when the files are to be copied in from there
    /// first (to the same keys in the service's bucket).
    pub bucket: Option<String>,
    /// The ETag of read 1's file as it was checked in `bucket`: the version copied.
    pub r1_etag: Option<String>,
    /// The ETag of read 2's file as it was checked.
    pub r2_etag: Option<String>,
    /// For a copy of a sample without its host reads: the classification whose read-level
    /// results say which reads are the host's (`r1_key` is then the source sample's own file,
    /// never removed with the import).
    pub host_of: Option<String>,
    /// The host's taxa with everything below them, as a JSON array of tax ids.
    pub host_tax_ids: Option<String>,
    /// Where that classification's read-level results are stored.
    pub host_readlevel_key: Option<String>,
}

impl Import {
    /// The stored files that were only steps to the sample's file, to remove once it is made.
    fn sources(&self) -> impl Iterator<Item = &String> {
        let own = self.host_of.is_none();
        std::iter::once(&self.r1_key).chain(self.r2_key.as_ref()).filter(move |k| own && **k != self.object_key)
    }
}

/// The columns of an [`Import`].
const COLUMNS: &str = "sample_id, upload_id, r1_key, r2_key, r1_name, r2_name, object_key, filename, bucket, r1_etag, \
                       r2_etag, host_of, host_tax_ids, host_readlevel_key";

/// Records `import` inside the transaction that makes its sample; on PostgreSQL, workers on
/// other machines hear of it when the transaction commits.
pub async fn record(tx: &mut Tx, import: &Import) -> ApiResult<()> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO imports ({COLUMNS}, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"
    )))
    .bind(&import.sample_id)
    .bind(&import.upload_id)
    .bind(&import.r1_key)
    .bind(&import.r2_key)
    .bind(&import.r1_name)
    .bind(&import.r2_name)
    .bind(&import.object_key)
    .bind(&import.filename)
    .bind(&import.bucket)
    .bind(&import.r1_etag)
    .bind(&import.r2_etag)
    .bind(&import.host_of)
    .bind(&import.host_tax_ids)
    .bind(&import.host_readlevel_key)
    .bind(db::now())
    .execute(&mut **tx)
    .await?;
    db::notify_queued(tx).await?;
    Ok(())
}

/// Claims for `worker`, under a lease of `lease`, the oldest join that waits (or whose lease
/// has lapsed) among those claimed the fewest times. Returns it and how many times it has now
/// been claimed.
pub async fn claim(db: &Pool, worker: &str, lease: Duration) -> Result<Option<(Import, i64)>, sqlx::Error> {
    let now = db::clock(db).await?;
    let until = db::ts(now + chrono::Duration::from_std(lease).unwrap_or_default());
    let sql = format!(
        "UPDATE imports SET lease_until = $1, worker = $2, claims = claims + 1 \
         WHERE sample_id = (SELECT sample_id FROM imports WHERE error IS NULL \
           AND (lease_until IS NULL OR lease_until < $3) ORDER BY claims, created_at, sample_id LIMIT 1{}) \
         RETURNING sample_id, claims",
        Backend::of(db).skip_locked()
    );
    let claimed: Option<(String, i64)> =
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(until).bind(worker).bind(db::ts(now)).fetch_optional(db).await?;
    let Some((sample_id, claims)) = claimed else { return Ok(None) };
    let import: Option<Import> =
        sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM imports WHERE sample_id = $1")))
            .bind(&sample_id)
            .fetch_optional(db)
            .await?;
    Ok(import.map(|i| (i, claims)))
}

/// Extends the lease `worker` holds on the join of `sample_id` to `lease` from now.
pub async fn renew(db: &Pool, sample_id: &str, worker: &str, lease: Duration) -> Result<(), sqlx::Error> {
    let until = db::ts(db::clock(db).await? + chrono::Duration::from_std(lease).unwrap_or_default());
    sqlx::query("UPDATE imports SET lease_until = $1 WHERE sample_id = $2 AND worker = $3")
        .bind(until)
        .bind(sample_id)
        .bind(worker)
        .execute(db)
        .await?;
    Ok(())
}

/// How many times the join of `sample_id` failed in a way that may pass.
pub async fn failures(db: &Pool, sample_id: &str) -> Result<i64, sqlx::Error> {
    let n: Option<i64> = sqlx::query_scalar("SELECT attempts FROM imports WHERE sample_id = $1")
        .bind(sample_id)
        .fetch_optional(db)
        .await?;
    Ok(n.unwrap_or(0))
}

/// Gives the join of `sample_id` back after a failure that may pass, to be claimed again once
/// `after` has passed.
pub async fn requeue(db: &Pool, sample_id: &str, worker: &str, after: Duration) -> Result<(), sqlx::Error> {
    let at = db::ts(db::clock(db).await? + chrono::Duration::from_std(after).unwrap_or_default());
    sqlx::query(
        "UPDATE imports SET lease_until = $1, worker = NULL, attempts = attempts + 1 \
         WHERE sample_id = $2 AND worker = $3",
    )
    .bind(at)
    .bind(sample_id)
    .bind(worker)
    .execute(db)
    .await?;
    Ok(())
}

/// Keeps why the work for `sample_id` cannot be done (the sample stays `importing` and says
/// so); the files it was given go (not a source sample's own file, for a copy without the
/// host's reads).
pub async fn fail(db: &Pool, sample_id: &str, worker: &str, why: &str) -> ApiResult<()> {
    let mut tx = begin_write(db, Scope::Row("samples", sample_id)).await?;
    let keys: Option<(String, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT r1_key, r2_key, host_of FROM imports WHERE sample_id = $1 AND worker = $2 AND error IS NULL",
    )
    .bind(sample_id)
    .bind(worker)
    .fetch_optional(&mut *tx)
    .await?;
    let Some((r1, r2, host_of)) = keys else { return Ok(()) };
    let given = if host_of.is_none() { std::iter::once(r1).chain(r2).collect() } else { Vec::new() };
    let why: String = why.chars().take(MAX_IMPORT_ERROR_CHARS).collect();
    sqlx::query("UPDATE imports SET error = $1, lease_until = NULL, worker = NULL WHERE sample_id = $2")
        .bind(why)
        .bind(sample_id)
        .execute(&mut *tx)
        .await?;
    for key in given {
        queue_delete(&mut tx, &key).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// What [`finish`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Finished {
    /// The sample has its file; its default classification was queued when `true`.
    Done(bool),
    /// The sample was deleted meanwhile, or another worker took the join over: the joined file
    /// is the caller's to remove.
    Discarded,
}

/// Gives the sample of `import` its file (`size` bytes, stored at `import.object_key`) if
/// `worker` still holds the work: the sample becomes `private`, its default classification is
/// queued, and the files that were only steps to it (a pair's two) go. `custom` is written
/// into the sample's custom metadata (what a copy without the host's reads removed).
pub async fn finish(
    db: &Pool,
    import: &Import,
    worker: &str,
    size: u64,
    custom: &serde_json::Map<String, serde_json::Value>,
) -> ApiResult<Finished> {
    let mut tx = begin_write(db, Scope::Row("samples", &import.sample_id)).await?;
    let held = sqlx::query("DELETE FROM imports WHERE sample_id = $1 AND worker = $2 AND error IS NULL")
        .bind(&import.sample_id)
        .bind(worker)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    if held == 0 {
        return Ok(Finished::Discarded);
    }
    let n = sqlx::query(
        "UPDATE samples SET filename = $1, size = $2, object_key = $3, visibility = 'private', updated_at = $4 \
         WHERE id = $5 AND visibility = 'importing'",
    )
    .bind(&import.filename)
    .bind(i64::try_from(size).unwrap_or(i64::MAX))
    .bind(&import.object_key)
    .bind(db::now())
    .bind(&import.sample_id)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if n == 0 {
        return Ok(Finished::Discarded);
    }
    for key in import.sources() {
        queue_delete(&mut tx, key).await?;
    }
    if !custom.is_empty() {
        super::metadata::add_custom(&mut tx, &import.sample_id, custom).await?;
    }
    let queued = queue::queue_default_classification(&mut tx, &import.sample_id).await?;
    tx.commit().await?;
    Ok(Finished::Done(queued.is_some()))
}
