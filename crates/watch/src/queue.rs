//! The persistent queue: one SQLite file (`watch.sqlite3` in the data folder) recording every
//! file's fingerprint and state and every sample made from them, so that a restart resumes
//! where the watcher stopped and nothing is sent twice.
//!
//! Written with `synchronous=FULL` in WAL mode: a state change that returned has reached the
//! disk, so a crash or power cut never forgets that a sample was confirmed.
//!
//! The reads a status view makes while a watcher runs are in [`status`].

mod follow;
mod status;

pub use follow::Classification;
pub(crate) use follow::ToFollow;

use std::path::{Path, PathBuf};
use std::time::Duration;

use mgds_upload::Source;
use serde::Serialize;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, SqlitePool};

use crate::Error;
use crate::spec::Spec;

/// The file name of the queue inside the data folder.
pub const QUEUE_FILE: &str = "watch.sqlite3";

/// Where a file or a sample stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "FileState"))]
pub enum State {
    /// Found; its size or time may still change.
    Seen,
    /// Stable and readable to its end; waiting for its run or sample to be ready.
    Settled,
    /// Part of a sample being uploaded (or waiting to be, or to be retried).
    Uploading,
    /// Its sample is on the service.
    Confirmed,
    /// Could not be uploaded; the error says why. Tried again at the next start.
    Failed,
}

impl State {
    /// The name stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Seen => "seen",
            State::Settled => "settled",
            State::Uploading => "uploading",
            State::Confirmed => "confirmed",
            State::Failed => "failed",
        }
    }

    fn parse(s: &str) -> State {
        match s {
            "settled" => State::Settled,
            "uploading" => State::Uploading,
            "confirmed" => State::Confirmed,
            "failed" => State::Failed,
            _ => State::Seen,
        }
    }
}

/// A file as the queue recorded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileRecord {
    /// Its path.
    pub path: PathBuf,
    /// The watched folder it was found in.
    pub folder: PathBuf,
    /// Size in bytes when last seen.
    pub size: u64,
    /// Modification time when last seen, in nanoseconds since 1970.
    pub mtime_ns: i64,
    /// SHA-256 of its content, once settled.
    pub sha256: Option<String>,
    /// Where it stands.
    pub state: State,
    /// The key of the sample it went into.
    pub sample_key: Option<String>,
}

/// A sample as the queue recorded it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SampleRecord {
    /// Stable identity: the run folder (or file) and the sample's name.
    pub key: String,
    /// The watched folder.
    pub folder: PathBuf,
    /// The run folder, if any.
    pub run: Option<PathBuf>,
    /// The run's id, if any.
    pub run_id: Option<String>,
    /// The sample's name (metadata `name`).
    pub name: String,
    /// The `external_sample_id` it has on the service.
    pub external_id: String,
    /// How its file is made.
    pub recipe: Source,
    /// Where it stands.
    pub state: State,
    /// Its id on the service, once known.
    pub sample_id: Option<String>,
    /// Failed attempts so far.
    pub attempts: u32,
    /// The last error.
    pub error: Option<String>,
    /// Jobs still to start on it (after it was confirmed).
    pub jobs_pending: bool,
}

/// A run folder's last reported state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RunRecord {
    /// The run folder.
    pub path: PathBuf,
    /// The watched folder.
    pub folder: PathBuf,
    /// `illumina` or `nanopore`.
    pub kind: String,
    /// The run id.
    pub run_id: String,
    /// `waiting`, `complete`, `uploaded` or `failed`.
    pub state: String,
    /// What it waits for, or why it failed.
    pub detail: Option<String>,
}

/// The queue: open it with [`Queue::open`].
#[derive(Debug, Clone)]
pub struct Queue {
    pub(crate) pool: SqlitePool,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    folder TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT,
    state TEXT NOT NULL,
    sample_key TEXT,
    updated_at TEXT NOT NULL
);
DROP INDEX IF EXISTS files_folder;
CREATE INDEX IF NOT EXISTS files_folder_state ON files (folder, state, path);
CREATE TABLE IF NOT EXISTS samples (
    key TEXT PRIMARY KEY,
    folder TEXT NOT NULL,
    run TEXT,
    run_id TEXT,
    name TEXT NOT NULL,
    external_id TEXT NOT NULL,
    recipe TEXT NOT NULL,
    state TEXT NOT NULL,
    sample_id TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_ms INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    jobs_pending INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS samples_created ON samples (created_at);
CREATE TABLE IF NOT EXISTS runs (
    path TEXT PRIMARY KEY,
    folder TEXT NOT NULL,
    kind TEXT NOT NULL,
    run_id TEXT NOT NULL,
    state TEXT NOT NULL,
    detail TEXT,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS classified (
    sample_key TEXT PRIMARY KEY,
    sample_id TEXT NOT NULL,
    analysis_id TEXT,
    state TEXT NOT NULL,
    taxa TEXT,
    error TEXT,
    checks INTEGER NOT NULL DEFAULT 0,
    finished_at TEXT,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS alerts (
    subject TEXT NOT NULL,
    tax_id TEXT NOT NULL,
    alert TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (subject, tax_id)
);
";

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

impl Queue {
    /// Opens (creating if needed) the queue in `data_dir`.
    pub async fn open(data_dir: &Path) -> Result<Queue, Error> {
        std::fs::create_dir_all(data_dir).map_err(|e| Error::io("create", data_dir, e))?;
        let path = data_dir.join(QUEUE_FILE);
        let opts = SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(Duration::from_secs(10));
        let db = |e| Error::Queue { path: path.clone(), source: e };
        // One connection: the watcher is the only writer, and statements stay in order.
        let pool = SqlitePoolOptions::new().max_connections(1).connect_with(opts).await.map_err(db)?;
        sqlx::raw_sql(SCHEMA).execute(&pool).await.map_err(db)?;
        Ok(Queue { pool })
    }

    /// Closes the file.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    pub(crate) fn err(&self, e: sqlx::Error) -> Error {
        Error::Queue { path: PathBuf::from(QUEUE_FILE), source: e }
    }

    /// Every file recorded under `folder`.
    pub async fn files(&self, folder: &Path) -> Result<Vec<FileRecord>, Error> {
        let rows =
            sqlx::query("SELECT path, folder, size, mtime_ns, sha256, state, sample_key FROM files WHERE folder = ?")
                .bind(text(folder))
                .fetch_all(&self.pool)
                .await
                .map_err(|e| self.err(e))?;
        Ok(rows.iter().map(file_row).collect())
    }

    /// The SHA-256 recorded for the file at `path` when it settled, if any.
    pub(crate) async fn sha256_of(&self, path: &Path) -> Result<Option<String>, Error> {
        let h: Option<Option<String>> = sqlx::query_scalar("SELECT sha256 FROM files WHERE path = ?")
            .bind(text(path))
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| self.err(e))?;
        Ok(h.flatten())
    }

    /// Records files found or changed (state `seen` or `settled`), in one transaction.
    pub(crate) async fn put_files(&self, files: &[FileRecord]) -> Result<(), Error> {
        if files.is_empty() {
            return Ok(());
        }
        let mut tx = self.pool.begin().await.map_err(|e| self.err(e))?;
        let at = now();
        for f in files {
            sqlx::query(
                "INSERT INTO files (path, folder, size, mtime_ns, sha256, state, sample_key, updated_at) \
                 VALUES (?, ?, ?, ?, ?, ?, NULL, ?) \
                 ON CONFLICT (path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns, \
                 sha256 = excluded.sha256, state = excluded.state, updated_at = excluded.updated_at \
                 WHERE files.state IN ('seen', 'settled')",
            )
            .bind(text(&f.path))
            .bind(text(&f.folder))
            .bind(f.size as i64)
            .bind(f.mtime_ns)
            .bind(&f.sha256)
            .bind(f.state.as_str())
            .bind(&at)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.err(e))?;
        }
        tx.commit().await.map_err(|e| self.err(e))
    }

    /// Forgets files that went away before they were part of a sample.
    pub(crate) async fn forget_files(&self, paths: &[PathBuf]) -> Result<(), Error> {
        let mut tx = self.pool.begin().await.map_err(|e| self.err(e))?;
        for p in paths {
            sqlx::query("DELETE FROM files WHERE path = ? AND state IN ('seen', 'settled')")
                .bind(text(p))
                .execute(&mut *tx)
                .await
                .map_err(|e| self.err(e))?;
        }
        tx.commit().await.map_err(|e| self.err(e))
    }

    /// The keys of every sample recorded.
    pub(crate) async fn sample_keys(&self) -> Result<std::collections::HashSet<String>, Error> {
        let keys: Vec<String> =
            sqlx::query_scalar("SELECT key FROM samples").fetch_all(&self.pool).await.map_err(|e| self.err(e))?;
        Ok(keys.into_iter().collect())
    }

    /// Records samples to make and marks their files `uploading`, in one transaction.
    pub(crate) async fn add_samples(&self, folder: &Path, specs: &[&Spec], jobs: bool) -> Result<(), Error> {
        if specs.is_empty() {
            return Ok(());
        }
        let mut tx = self.pool.begin().await.map_err(|e| self.err(e))?;
        let at = now();
        for spec in specs {
            let recipe = serde_json::to_string(&spec.recipe).unwrap_or_default();
            sqlx::query(
            "INSERT OR IGNORE INTO samples (key, folder, run, run_id, name, external_id, recipe, state, jobs_pending, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, 'uploading', ?, ?, ?)",
        )
        .bind(&spec.key)
        .bind(text(folder))
        .bind(spec.run.as_deref().map(text))
        .bind(&spec.run_id)
        .bind(&spec.name)
        .bind(&spec.external_id)
        .bind(recipe)
        .bind(jobs)
        .bind(&at)
        .bind(&at)
        .execute(&mut *tx)
        .await
        .map_err(|e| self.err(e))?;
            for p in spec.recipe.files() {
                sqlx::query("UPDATE files SET state = 'uploading', sample_key = ?, updated_at = ? WHERE path = ?")
                    .bind(&spec.key)
                    .bind(&at)
                    .bind(text(&p))
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| self.err(e))?;
            }
        }
        tx.commit().await.map_err(|e| self.err(e))
    }

    /// Records a sample made elsewhere (uploaded from the app's window) for the follower to
    /// look after: its classification and the rules for every folder. It belongs to no folder
    /// (`folder` is empty), so the watched folders' views leave it out.
    pub(crate) async fn add_followed(&self, sample_id: &str, name: &str, source: &Source) -> Result<(), Error> {
        let at = now();
        sqlx::query(
            "INSERT OR IGNORE INTO samples (key, folder, name, external_id, recipe, state, sample_id, created_at, updated_at) \
             VALUES (?, '', ?, '', ?, 'confirmed', ?, ?, ?)",
        )
        .bind(format!("followed:{sample_id}"))
        .bind(name)
        .bind(serde_json::to_string(source).unwrap_or_default())
        .bind(sample_id)
        .bind(&at)
        .bind(&at)
        .execute(&self.pool)
        .await
        .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The next sample to work on: waiting to be uploaded and due, or confirmed with jobs
    /// still to start.
    pub(crate) async fn next_due(&self) -> Result<Option<SampleRecord>, Error> {
        let row = sqlx::query(
            "SELECT key, folder, run, run_id, name, external_id, recipe, state, sample_id, attempts, error, jobs_pending \
             FROM samples WHERE (state = 'uploading' AND next_attempt_ms <= ?) OR (state = 'confirmed' AND jobs_pending = 1) \
             ORDER BY next_attempt_ms, created_at, rowid LIMIT 1",
        )
        .bind(now_ms())
        .fetch_optional(&self.pool)
        .await
        .map_err(|e| self.err(e))?;
        Ok(row.as_ref().and_then(sample_row))
    }

    /// When the next sample waiting for a retry is due, if any.
    pub(crate) async fn next_retry_in(&self) -> Result<Option<Duration>, Error> {
        let at: Option<i64> = sqlx::query_scalar("SELECT MIN(next_attempt_ms) FROM samples WHERE state = 'uploading'")
            .fetch_one(&self.pool)
            .await
            .map_err(|e| self.err(e))?;
        Ok(at.map(|t| Duration::from_millis(u64::try_from(t - now_ms()).unwrap_or(0))))
    }

    /// Records the sample's id on the service (known before its file is confirmed).
    pub(crate) async fn set_sample_id(&self, key: &str, id: &str) -> Result<(), Error> {
        sqlx::query("UPDATE samples SET sample_id = ?, updated_at = ? WHERE key = ?")
            .bind(id)
            .bind(now())
            .bind(key)
            .execute(&self.pool)
            .await
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Records that the sample is on the service, with its files.
    pub(crate) async fn confirm(&self, key: &str, id: &str) -> Result<(), Error> {
        let mut tx = self.pool.begin().await.map_err(|e| self.err(e))?;
        let at = now();
        sqlx::query(
            "UPDATE samples SET state = 'confirmed', sample_id = ?, error = NULL, updated_at = ? WHERE key = ?",
        )
        .bind(id)
        .bind(&at)
        .bind(key)
        .execute(&mut *tx)
        .await
        .map_err(|e| self.err(e))?;
        sqlx::query("UPDATE files SET state = 'confirmed', updated_at = ? WHERE sample_key = ?")
            .bind(&at)
            .bind(key)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.err(e))?;
        tx.commit().await.map_err(|e| self.err(e))
    }

    /// Records that the jobs of a confirmed sample were started.
    pub(crate) async fn jobs_started(&self, key: &str) -> Result<(), Error> {
        sqlx::query("UPDATE samples SET jobs_pending = 0, updated_at = ? WHERE key = ?")
            .bind(now())
            .bind(key)
            .execute(&self.pool)
            .await
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Records a failed attempt: tried again after `retry_in`, or (`None`) given up until the
    /// next start.
    pub(crate) async fn attempt_failed(&self, key: &str, error: &str, retry_in: Option<Duration>) -> Result<(), Error> {
        let at = now();
        let mut tx = self.pool.begin().await.map_err(|e| self.err(e))?;
        let state = if retry_in.is_some() { "uploading" } else { "failed" };
        let next = now_ms() + retry_in.map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 2));
        sqlx::query(
            "UPDATE samples SET state = ?, attempts = attempts + 1, next_attempt_ms = ?, error = ?, updated_at = ? WHERE key = ?",
        )
        .bind(state)
        .bind(next)
        .bind(error)
        .bind(&at)
        .bind(key)
        .execute(&mut *tx)
        .await
        .map_err(|e| self.err(e))?;
        sqlx::query("UPDATE files SET state = ?, updated_at = ? WHERE sample_key = ?")
            .bind(state)
            .bind(&at)
            .bind(key)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.err(e))?;
        tx.commit().await.map_err(|e| self.err(e))
    }

    /// Puts failed samples back in line (at a start).
    pub(crate) async fn retry_failed(&self) -> Result<(), Error> {
        let mut tx = self.pool.begin().await.map_err(|e| self.err(e))?;
        sqlx::query("UPDATE samples SET state = 'uploading', next_attempt_ms = 0 WHERE state = 'failed'")
            .execute(&mut *tx)
            .await
            .map_err(|e| self.err(e))?;
        sqlx::query("UPDATE files SET state = 'uploading' WHERE state = 'failed' AND sample_key IS NOT NULL")
            .execute(&mut *tx)
            .await
            .map_err(|e| self.err(e))?;
        tx.commit().await.map_err(|e| self.err(e))
    }

    /// Records a run's state; answers whether it changed.
    pub(crate) async fn set_run(&self, run: &RunRecord) -> Result<bool, Error> {
        let old: Option<(String, Option<String>)> = sqlx::query_as("SELECT state, detail FROM runs WHERE path = ?")
            .bind(text(&run.path))
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| self.err(e))?;
        if old.as_ref() == Some(&(run.state.clone(), run.detail.clone())) {
            return Ok(false);
        }
        sqlx::query(
            "INSERT INTO runs (path, folder, kind, run_id, state, detail, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT (path) DO UPDATE SET kind = excluded.kind, run_id = excluded.run_id, state = excluded.state, \
             detail = excluded.detail, updated_at = excluded.updated_at",
        )
        .bind(text(&run.path))
        .bind(text(&run.folder))
        .bind(&run.kind)
        .bind(&run.run_id)
        .bind(&run.state)
        .bind(&run.detail)
        .bind(now())
        .execute(&self.pool)
        .await
        .map_err(|e| self.err(e))?;
        Ok(true)
    }
}

fn file_row(r: &sqlx::sqlite::SqliteRow) -> FileRecord {
    FileRecord {
        path: PathBuf::from(r.get::<String, _>(0)),
        folder: PathBuf::from(r.get::<String, _>(1)),
        size: u64::try_from(r.get::<i64, _>(2)).unwrap_or(0),
        mtime_ns: r.get(3),
        sha256: r.get(4),
        state: State::parse(&r.get::<String, _>(5)),
        sample_key: r.get(6),
    }
}

fn sample_row(r: &sqlx::sqlite::SqliteRow) -> Option<SampleRecord> {
    Some(SampleRecord {
        key: r.get(0),
        folder: PathBuf::from(r.get::<String, _>(1)),
        run: r.get::<Option<String>, _>(2).map(PathBuf::from),
        run_id: r.get(3),
        name: r.get(4),
        external_id: r.get(5),
        recipe: serde_json::from_str(&r.get::<String, _>(6)).ok()?,
        state: State::parse(&r.get::<String, _>(7)),
        sample_id: r.get(8),
        attempts: u32::try_from(r.get::<i64, _>(9)).unwrap_or(0),
        error: r.get(10),
        jobs_pending: r.get::<i64, _>(11) != 0,
    })
}
