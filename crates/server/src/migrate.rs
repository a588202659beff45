//! Moving an install to the server backends: its records into PostgreSQL, its files into an S3
//! store (`mgds admin migrate`), with the service stopped.
//!
//! Records are copied table by table in an order that respects their references, in the order
//! they were made; each row goes in with `ON CONFLICT DO NOTHING`, so a copy interrupted and run
//! again adds only what is missing. Every file's SHA-256 is taken from the data folder and from
//! the bytes the store gives back: an object already there with the same size and SHA-256 is
//! kept, anything else is written (with its SHA-256 in the object's metadata,
//! `x-amz-meta-mgds-sha256`) and read back to check it. The installed reference data is
//! published to the store under its digest, as `mgds serve` does, for workers to fetch. At the
//! end, every table must hold as many rows as the source's, and every file must be there whole.

use std::path::Path;

use sqlx::Row;

use crate::references::list_installed;
use crate::shared_references::publish;
use crate::state::AppState;
use crate::store::db::{self, Pool};
use crate::store::files::{S3Config, Storage};

/// The tables, each after those it refers to. Not copied: `sample_counts` and
/// `analysis_counts` (the target's triggers count the records as they are written), `leases` (the
/// janitor's turn, held only while the service runs) `sign_in_failures` (the delays of
/// failed sign-ins, which start again) and `sso_sign_ins` (sign-ins at a provider under way, for
/// ten minutes).
const TABLES: [&str; 34] = [
    "settings",
    "organizations",
    "users",
    "password_links",
    "sessions",
    "user_identities",
    "projects",
    "project_members",
    "samples",
    "metadata",
    "tags",
    "sample_tags",
    "uploads",
    "imports",
    "jobs",
    "analyses",
    "analysis_dependencies",
    "control_scored",
    "job_queue",
    "queue_turns",
    "documents",
    "document_downloaders",
    "sequencing_batches",
    "pending_deletes",
    "s3_grants",
    "s3_multipart",
    "s3_parts",
    "user_contacts",
    "upload_buckets",
    "audit_entries",
    "audit_checkpoints",
    "webhooks",
    "events",
    "webhook_deliveries",
];

/// Rows read and written together.
const BATCH: i64 = 1000;

/// Why a migration stopped.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// The source must be the data folder's SQLite database.
    #[error("the install to move must be a data folder (SQLite); this one already uses PostgreSQL")]
    NotSqlite,
    /// A database failed.
    #[error("{0}")]
    Database(#[from] sqlx::Error),
    /// The store failed.
    #[error("{0}")]
    Store(#[from] object_store::Error),
    /// A file could not be read or written.
    #[error("{0}: {1}")]
    Io(String, #[source] std::io::Error),
    /// The copy does not match the source.
    #[error("the copy does not match: {0}")]
    Mismatch(String),
}

/// What one table's copy found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableCopy {
    /// The table.
    pub table: &'static str,
    /// Rows in the source.
    pub source: i64,
    /// Rows in the target after the copy.
    pub target: i64,
    /// Rows this run added.
    pub added: u64,
}

/// What a migration did.
#[derive(Debug, Default)]
pub struct MigrateReport {
    /// Each table's counts.
    pub tables: Vec<TableCopy>,
    /// Files written to the store by this run.
    pub files_copied: u64,
    /// Their bytes.
    pub bytes_copied: u64,
    /// Files found in the store already, whole.
    pub files_present: u64,
    /// Installed references, each now in the store.
    pub references: u64,
}

/// A step of a migration, for progress.
#[derive(Debug, Clone)]
pub enum Step<'a> {
    /// A table was copied.
    Table(&'a TableCopy),
    /// An installed reference is in the store (`published` false: it was there already).
    Reference {
        /// Its name.
        name: &'a str,
        /// Whether this run put it there.
        published: bool,
    },
    /// A file was copied or found whole (`copied` false).
    File {
        /// Its key.
        key: &'a str,
        /// Its size.
        bytes: u64,
        /// Whether this run wrote it.
        copied: bool,
    },
}

/// Copies the records of `from` (a data folder's SQLite database) into the PostgreSQL database
/// at `to_database` (its schema made first) and its files into the S3 bucket `to_store`; checks
/// the result. Run it again after an interruption: nothing is copied twice.
pub async fn migrate(
    from: &AppState,
    to_database: &str,
    to_store: &S3Config,
    progress: &mut dyn FnMut(Step<'_>),
) -> Result<MigrateReport, MigrateError> {
    if db::Backend::of(&from.db) != db::Backend::Sqlite {
        return Err(MigrateError::NotSqlite);
    }
    let target = db::open(Path::new("."), Some(to_database)).await?;
    let store = Storage::s3(to_store)?;
    store.check().await?;
    let mut report = MigrateReport::default();
    for table in TABLES {
        let copy = copy_table(&from.db, &target, table).await?;
        progress(Step::Table(&copy));
        report.tables.push(copy);
    }
    let mismatched: Vec<String> = report
        .tables
        .iter()
        .filter(|t| t.source != t.target)
        .map(|t| format!("{} has {} rows here and {} in the target", t.table, t.source, t.target))
        .collect();
    if !mismatched.is_empty() {
        return Err(MigrateError::Mismatch(format!(
            "{} (was the service running during the copy? stop it and run this again)",
            mismatched.join("; ")
        )));
    }
    for key in from.storage.keys(None).await? {
        let path = from
            .storage
            .local_path(&key)
            .ok_or_else(|| MigrateError::Mismatch("the install's files are not in its data folder".into()))?;
        let (bytes, sha256) = {
            let p = path.clone();
            tokio::task::spawn_blocking(move || sha256_of(&p))
                .await
                .map_err(|e| MigrateError::Io(path.display().to_string(), std::io::Error::other(e)))?
                .map_err(|e| MigrateError::Io(path.display().to_string(), e))?
        };
        let present = stored_sha256(&store, &key, bytes).await?.as_deref() == Some(sha256.as_str());
        if !present {
            store.put_file_with_sha256(&key, &path, &sha256).await.map_err(|e| match e {
                crate::store::files::WriteError::Store(e) => MigrateError::Store(e),
                other => MigrateError::Io(key.clone(), std::io::Error::other(other.to_string())),
            })?;
            if stored_sha256(&store, &key, bytes).await?.as_deref() != Some(sha256.as_str()) {
                return Err(MigrateError::Mismatch(format!(
                    "{key} is not the same in the store after it was written (size or SHA-256 differ)"
                )));
            }
            report.files_copied += 1;
            report.bytes_copied += bytes;
        } else {
            report.files_present += 1;
        }
        progress(Step::File { key: &key, bytes, copied: !present });
    }
    let databases = from.runner.data_dir.join(crate::references::DATABASES_DIR);
    for (folder, manifest) in list_installed(&from.runner.data_dir) {
        let Ok(manifest) = manifest else { continue };
        let dir = databases.join(&folder);
        let published = publish(&store, &dir, &manifest)
            .await
            .map_err(|e| MigrateError::Io(dir.display().to_string(), std::io::Error::other(e.to_string())))?;
        report.references += 1;
        progress(Step::Reference { name: &manifest.name, published });
    }
    target.close().await;
    Ok(report)
}

/// Copies the rows of `table` that `target` lacks; answers the counts.
async fn copy_table(source: &Pool, target: &Pool, table: &'static str) -> Result<TableCopy, MigrateError> {
    // The target's columns and their types decide how each value is bound (a missing value
    // must be bound with its column's type on PostgreSQL).
    let target_columns: Vec<(String, String)> = sqlx::query_as(
        "SELECT column_name::text, data_type::text FROM information_schema.columns \
         WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
    )
    .bind(table)
    .fetch_all(target)
    .await?;
    let source_columns: Vec<String> =
        sqlx::query_scalar("SELECT name FROM pragma_table_info($1)").bind(table).fetch_all(source).await?;
    // `rowid` is SQLite's own (PostgreSQL numbers its copy as the rows arrive, in order).
    let columns: Vec<(String, String)> =
        target_columns.into_iter().filter(|(c, _)| c != "rowid" && source_columns.contains(c)).collect();
    let names: Vec<&str> = columns.iter().map(|(c, _)| c.as_str()).collect();
    let list = names.join(", ");
    let marks: Vec<String> = (1..=names.len()).map(|i| format!("${i}")).collect();
    let insert = format!("INSERT INTO {table} ({list}) VALUES ({}) ON CONFLICT DO NOTHING", marks.join(", "));
    let select = format!("SELECT rowid AS mgds_rowid, {list} FROM {table} WHERE rowid > $1 ORDER BY rowid LIMIT $2");
    let (mut after, mut added) = (0i64, 0u64);
    loop {
        // Only table and column names, all from the schemas, are formatted in.
        let rows = sqlx::query(sqlx::AssertSqlSafe(select.clone())).bind(after).bind(BATCH).fetch_all(source).await?;
        let Some(last) = rows.last() else { break };
        after = last.try_get("mgds_rowid")?;
        let mut tx = target.begin().await?;
        for row in &rows {
            let mut q = sqlx::query(sqlx::AssertSqlSafe(insert.clone()));
            for (i, (_, ty)) in columns.iter().enumerate() {
                let at = i + 1;
                q = match ty.as_str() {
                    "bigint" | "integer" | "smallint" => q.bind(row.try_get::<Option<i64>, _>(at)?),
                    "double precision" | "real" => q.bind(row.try_get::<Option<f64>, _>(at)?),
                    "bytea" => q.bind(row.try_get::<Option<Vec<u8>>, _>(at)?),
                    _ => q.bind(row.try_get::<Option<String>, _>(at)?),
                };
            }
            added += q.execute(&mut *tx).await?.rows_affected();
        }
        tx.commit().await?;
    }
    // A column PostgreSQL numbers itself (`events.seq`) goes on from the highest copied value.
    let numbered: Vec<String> = sqlx::query_scalar(
        "SELECT column_name::text FROM information_schema.columns \
         WHERE table_schema = current_schema() AND table_name = $1 AND is_identity = 'YES'",
    )
    .bind(table)
    .fetch_all(target)
    .await?;
    for column in numbered {
        let next = format!(
            "SELECT setval(pg_get_serial_sequence('{table}', '{column}'), \
             GREATEST((SELECT COALESCE(MAX({column}), 0) FROM {table}), 1))"
        );
        sqlx::query(sqlx::AssertSqlSafe(next)).execute(target).await?;
    }
    let count = format!("SELECT COUNT(*) FROM {table}");
    let source_rows: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(count.clone())).fetch_one(source).await?;
    let target_rows: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(count)).fetch_one(target).await?;
    Ok(TableCopy { table, source: source_rows, target: target_rows, added })
}

/// The hex SHA-256 of the bytes the store holds at `key`, read back whole, when it is there with
/// `bytes` bytes; `None` when it is missing or another size.
async fn stored_sha256(store: &Storage, key: &str, bytes: u64) -> Result<Option<String>, MigrateError> {
    match store.size(key).await? {
        Some(n) if n == bytes => Ok(Some(hex::encode(store.sha256(key).await?))),
        _ => Ok(None),
    }
}

/// The size and hex SHA-256 of the file at `path`.
fn sha256_of(path: &Path) -> std::io::Result<(u64, String)> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        match file.read(&mut buf)? {
            0 => return Ok((n, hex::encode(h.finalize()))),
            k => {
                h.update(&buf[..k]);
                n += k as u64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every table of the schema is copied, or is said not to be.
    #[tokio::test]
    async fn every_table_is_copied() {
        let dir = tempfile::tempdir().unwrap();
        let pool = db::open(dir.path(), None).await.unwrap();
        let tables: Vec<String> = sqlx::query_scalar(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
             AND name NOT IN ('_sqlx_migrations', 'sample_counts', 'analysis_counts', 'leases', 'sign_in_failures', \
             'sso_sign_ins') ORDER BY name",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        let mut copied: Vec<String> = TABLES.iter().map(|t| t.to_string()).collect();
        copied.sort();
        assert_eq!(tables, copied);
    }
}
