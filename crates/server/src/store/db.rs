//! The SQLite database: opening it durably, identifiers, timestamps, write transactions, and how
//! values are stored (booleans as integers, id lists as JSON text, bound parameters).

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use sqlx::sqlite::{SqliteArguments, SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Arguments, Sqlite, SqlitePool, Transaction};

use crate::error::{ApiError, ApiResult};
use crate::listing::Bind;

/// File name of the database inside the data folder.
pub const DB_FILE: &str = "mgds.sqlite3";

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Opens (creating if needed) the database in `data_dir` and brings its schema up to date.
///
/// WAL journal, `synchronous=FULL` (a committed write survives power loss), foreign keys on,
/// and a busy timeout so that concurrent writers queue instead of failing.
pub async fn open(data_dir: &Path) -> Result<SqlitePool, sqlx::Error> {
    let options = SqliteConnectOptions::from_str("sqlite://")?
        .filename(data_dir.join(DB_FILE))
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .foreign_keys(true)
        .busy_timeout(Duration::from_secs(30));
    let pool = SqlitePoolOptions::new().max_connections(8).min_connections(1).connect_with(options).await?;
    MIGRATOR.run(&pool).await?;
    Ok(pool)
}

/// A transaction on the database.
pub type Tx = Transaction<'static, Sqlite>;

/// Starts a write transaction that takes the write lock at once (`BEGIN IMMEDIATE`), so that a
/// read-then-write inside it cannot be interleaved with another writer.
pub async fn begin_write(pool: &SqlitePool) -> Result<Tx, sqlx::Error> {
    pool.begin_with("BEGIN IMMEDIATE").await
}

/// A new identifier: 16 random lowercase hex characters.
pub fn new_id() -> String {
    let bytes: [u8; 8] = rand::random();
    hex::encode(bytes)
}

/// Whether `s` has the shape of one of our identifiers.
pub fn is_id(s: &str) -> bool {
    s.len() == 16 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Formats a time the way the database stores and the API sends it: RFC 3339, UTC,
/// microseconds, with the offset written `+00:00` rather than `Z` (Python before 3.11, which the
/// real service's clients support, reads only that form).
pub fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, false)
}

/// The current time, formatted with [`ts`].
pub fn now() -> String {
    ts(Utc::now())
}

/// Builds the arguments of a query from bound values, in order.
pub fn args(binds: &[Bind]) -> ApiResult<SqliteArguments> {
    let mut a = SqliteArguments::default();
    for b in binds {
        let r = match b {
            Bind::Text(s) => a.add(s.clone()),
            Bind::Int(i) => a.add(*i),
            Bind::Real(f) => a.add(*f),
            Bind::Null => a.add(Option::<String>::None),
        };
        r.map_err(ApiError::internal)?;
    }
    Ok(a)
}

/// Parses a JSON array of ids stored by `json_group_array`.
pub fn id_list(json: &str) -> Vec<String> {
    serde_json::from_str::<Vec<Option<String>>>(json).unwrap_or_default().into_iter().flatten().collect()
}

/// Converts a stored boolean.
pub fn flag(v: i64) -> bool {
    v != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_16_hex() {
        for _ in 0..100 {
            let id = new_id();
            assert!(is_id(&id), "{id}");
        }
        assert!(!is_id("7428cca4nocaffe1"));
        assert!(!is_id("0123456789ABCDEF"));
    }

    #[test]
    fn timestamps_sort_as_text() {
        let a = ts(DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z").unwrap().into());
        let b = ts(DateTime::parse_from_rfc3339("2026-01-02T03:04:05.5Z").unwrap().into());
        assert_eq!(a, "2026-01-02T03:04:05.000000+00:00");
        assert!(a < b);
    }
}
