//! The database: SQLite in the data folder (the default: one machine, nothing to set up) or
//! PostgreSQL (`--database postgres://...`: many machines, many labs), opened durably and
//! brought up to date; identifiers, timestamps, write transactions, and how values are stored
//! (booleans as integers, id lists as JSON text, bound parameters).
//!
//! The service runs the same SQL on both, through sqlx's `Any` driver. Statements number their
//! parameters (`$1`, `$2`, ...), which both take; statements put together from pieces (lists,
//! visibility rules) write `?` and go through [`numbered`]. The few differences live in one place
//! each: the PostgreSQL schema defines the SQLite functions the SQL uses and keeps a `rowid` where
//! SQLite's is read; [`begin_write`] takes SQLite's write lock or PostgreSQL row locks of the
//! records a write is about ([`Scope`]); [`begin_read`] reads one snapshot;
//! [`Backend::skip_locked`] lets queue claims pass over rows another worker holds;
//! [`notify_queued`] and [`relay_queued`] tell other machines of queued work; PostgreSQL plans
//! each statement for its values, SQLite refreshes its statistics ([`refresh_statistics`]); and
//! PostgreSQL's indexes for lists are built online after the migrations.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::any::{AnyArguments, AnyConnectOptions, AnyPoolOptions};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Any, Arguments, AssertSqlSafe, ConnectOptions, Executor, Transaction};

use crate::error::{ApiError, ApiResult};

/// File name of the database inside the data folder.
pub const DB_FILE: &str = "mgds.sqlite3";

static SQLITE_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// A pool of connections to the service's database, either kind.
pub type Pool = sqlx::AnyPool;

/// A transaction on the database.
pub type Tx = Transaction<'static, Any>;

/// Which database a [`Pool`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// SQLite, a file in the data folder.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

impl Backend {
    /// The kind of database `pool` connects to.
    pub fn of(pool: &Pool) -> Backend {
        Backend::of_url(pool.connect_options().database_url.as_str())
    }

    /// The kind of database a connection address names.
    pub fn of_url(url: &str) -> Backend {
        if url.starts_with("postgres:") || url.starts_with("postgresql:") { Backend::Postgres } else { Backend::Sqlite }
    }

    /// What a claim's subquery adds so that concurrent claims pass over the rows other workers
    /// are taking (PostgreSQL; SQLite has one writer at a time).
    pub fn skip_locked(self) -> &'static str {
        match self {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR UPDATE SKIP LOCKED",
        }
    }

    /// [`skip_locked`](Self::skip_locked) for a claim whose subquery joins other tables: only
    /// the rows of `alias` are locked (PostgreSQL locks no row of an outer join's nullable side).
    pub fn skip_locked_of(self, alias: &str) -> String {
        match self {
            Backend::Sqlite => String::new(),
            Backend::Postgres => format!(" FOR UPDATE OF {alias} SKIP LOCKED"),
        }
    }
}

/// Opens the service's database and brings its schema up to date: PostgreSQL at `url` when one
/// is given (`postgres://...`), else SQLite in `data_dir` (created if needed).
pub async fn open(data_dir: &Path, url: Option<&str>) -> Result<Pool, sqlx::Error> {
    sqlx::any::install_default_drivers();
    match url {
        Some(url) if Backend::of_url(url) == Backend::Postgres => open_postgres(url).await,
        Some(url) => Err(sqlx::Error::Configuration(
            format!("{} is not a PostgreSQL address (postgres://user@host/database)", redact(url)).into(),
        )),
        None => open_sqlite(data_dir).await,
    }
}

/// SQLite in `data_dir`: WAL journal, `synchronous=FULL` (a committed write survives power
/// loss), foreign keys on, a busy timeout so that concurrent writers queue instead of failing,
/// and the planner's statistics refreshed where they are stale (`PRAGMA optimize`, on a sample
/// of each index, as SQLite advises for connections that live long).
async fn open_sqlite(data_dir: &Path) -> Result<Pool, sqlx::Error> {
    let url = SqliteConnectOptions::new().filename(data_dir.join(DB_FILE)).create_if_missing(true).to_url_lossy();
    let pool = AnyPoolOptions::new()
        .max_connections(8)
        .min_connections(1)
        .after_connect(|conn, _| {
            Box::pin(async move {
                conn.execute(
                    "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; \
                     PRAGMA busy_timeout = 30000; PRAGMA analysis_limit = 1000; PRAGMA optimize = 0x10002;",
                )
                .await?;
                Ok(())
            })
        })
        .connect_with(AnyConnectOptions::from_url(&url)?)
        .await?;
    // sqlx takes no lock around SQLite migrations: two processes opening a new data folder at
    // once (`mgds serve` and `mgds worker` started together, or `mgds admin` beside a starting
    // service) would both run the first. A lock on a file beside the database makes them take
    // turns; the second finds the schema up to date.
    let lock_path = data_dir.join(MIGRATION_LOCK);
    let lock = tokio::task::spawn_blocking(move || migration_lock(&lock_path))
        .await
        .map_err(|e| sqlx::Error::Io(std::io::Error::other(e)))?;
    let migrated = SQLITE_MIGRATOR.run(&pool).await;
    drop(lock);
    migrated?;
    Ok(pool)
}

/// The lock on `path` for bringing the schema up to date, waited for (saying so) while another
/// process holds it. The file is opened for reading (a lock needs no more), so one left by
/// another user (an `mgds admin` run as root) does not stop the service's user; where it
/// cannot be made or locked (a read-only folder, a file system without locks), the schema is
/// brought up to date without it, as before, with a warning.
fn migration_lock(path: &Path) -> Option<std::fs::File> {
    let opened = std::fs::File::open(path)
        .or_else(|_| std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path));
    let file = match opened {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot open the migration lock; migrating without it");
            return None;
        }
    };
    match file.try_lock() {
        Ok(()) => Some(file),
        Err(std::fs::TryLockError::WouldBlock) => {
            eprintln!("waiting for another mgds process bringing {} up to date", path.display());
            match file.lock() {
                Ok(()) => Some(file),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "cannot lock; migrating without the lock");
                    None
                }
            }
        }
        Err(std::fs::TryLockError::Error(e)) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot lock; migrating without the lock");
            None
        }
    }
}

/// The file locked while the SQLite schema is brought up to date (it stays, empty).
const MIGRATION_LOCK: &str = "mgds.sqlite3.lock";

/// PostgreSQL at `url`. Its text should compare byte by byte, as SQLite's does; the schema's
/// columns say so themselves (collation "C"), whatever the database's default.
async fn open_postgres(url: &str) -> Result<Pool, sqlx::Error> {
    let pool = AnyPoolOptions::new()
        .max_connections(16)
        .min_connections(1)
        .acquire_timeout(Duration::from_secs(30))
        // A statement's plan is made for its values (a user with ten samples or a million, a tag
        // on a few), not once for any: the lists' statements are put together per request and
        // the best plan depends on the values; planning costs well under a millisecond.
        // No just-in-time compilation: the service's statements each read a few thousand index
        // entries at most, where compiling takes longer (15 ms at 1,000,000 samples) than the
        // statement itself; PostgreSQL turns it on by a cost estimate that counts rows the
        // statement never reads past its LIMIT.
        .after_connect(|conn, _| {
            Box::pin(async move {
                conn.execute("SET plan_cache_mode = force_custom_plan").await?;
                conn.execute("SET jit = off").await?;
                Ok(())
            })
        })
        .connect_with(AnyConnectOptions::from_str(url)?)
        .await?;
    POSTGRES_MIGRATOR.run(&pool).await?;
    build_online_indexes(url).await?;
    Ok(pool)
}

/// Statements run after PostgreSQL's migrations, one at a time (see the file).
const ONLINE_INDEXES: &str = include_str!("../../migrations/postgres-online/indexes.sql");

/// Lock held while one host builds the online indexes, so that hosts started together build
/// each once.
const ONLINE_INDEX_LOCK: i64 = 0x6d67_6469; // "mgdi"

/// Builds the indexes of [`ONLINE_INDEXES`] that are missing, without blocking writes, on a
/// connection of its own (the lock it takes is the session's, and ends with it whatever
/// happens). An index that an interrupted build left invalid is dropped and built again.
async fn build_online_indexes(url: &str) -> Result<(), sqlx::Error> {
    use sqlx::Connection;
    let mut conn = sqlx::AnyConnection::connect(url).await?;
    sqlx::query("SELECT 1 FROM (SELECT pg_advisory_lock($1)) AS l").bind(ONLINE_INDEX_LOCK).execute(&mut conn).await?;
    for statement in online_statements(ONLINE_INDEXES) {
        if let Some(name) = statement.split_whitespace().skip_while(|w| *w != "EXISTS").nth(1) {
            let invalid: Option<i64> = sqlx::query_scalar(
                "SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
                 WHERE c.relname = $1 AND NOT i.indisvalid",
            )
            .bind(name)
            .fetch_optional(&mut conn)
            .await?;
            if invalid.is_some() && statement.starts_with("CREATE") {
                tracing::warn!(index = name, "an earlier build of this index was interrupted; building it again");
                conn.execute(AssertSqlSafe(format!("DROP INDEX CONCURRENTLY IF EXISTS {name}"))).await?;
            }
        }
        conn.execute(AssertSqlSafe(statement.to_string())).await?;
    }
    conn.close().await
}

/// The statements of a file of online statements: split at `;` ending a line, without comments.
fn online_statements(file: &str) -> Vec<String> {
    let text: String = file.lines().filter(|l| !l.trim_start().starts_with("--")).collect::<Vec<_>>().join("\n");
    text.split(";\n").map(|s| s.trim().trim_end_matches(';').trim().to_string()).filter(|s| !s.is_empty()).collect()
}

/// For tests run against PostgreSQL: a new, empty database on the server that
/// `MGDS_TEST_POSTGRES` names (`postgres://user@host/postgres`), and its address; `None` when
/// the variable is not set (the tests then use SQLite in their data folder).
#[doc(hidden)]
pub async fn test_database() -> Option<String> {
    use sqlx::Connection;
    let admin = std::env::var("MGDS_TEST_POSTGRES").ok().filter(|u| !u.is_empty())?;
    sqlx::any::install_default_drivers();
    let name = format!("mgds_test_{}", new_id());
    let mut conn = sqlx::AnyConnection::connect(&admin).await.expect("MGDS_TEST_POSTGRES names a PostgreSQL server");
    conn.execute(AssertSqlSafe(format!("CREATE DATABASE {name}"))).await.expect("a test database is created");
    conn.close().await.ok();
    let mut url = url::Url::parse(&admin).expect("MGDS_TEST_POSTGRES is an address");
    url.set_path(&format!("/{name}"));
    Some(url.to_string())
}

/// `url` without its password, to name it in messages and logs.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => url.to_string(),
    }
}

/// What a write transaction locks first on PostgreSQL, so that its read-then-write steps
/// (checking an external sample id is free and taking it, confirming an upload once, moving a
/// batch) never interleave with another's that touch the same records, while writes of
/// unrelated records run side by side. On SQLite, which has one writer at a time, every write
/// transaction takes the database's write lock at once instead (`BEGIN IMMEDIATE`).
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// Everything one user owns: the user's row, locked (`FOR NO KEY UPDATE`, which leaves
    /// rows that refer to it free to be written).
    User(&'a str),
    /// One record: its row of `table` (by `id`), locked.
    Row(&'static str, &'a str),
    /// A rare operation of the whole install (creating users, registering jobs, moving
    /// batches, the janitor's sweeps): a lock of its own name, taken by that operation alone.
    Named(&'static str),
    /// Nothing beyond the rows the statements write (each statement is safe on its own).
    Rows,
}

/// Ends a write transaction by its work's `result`: committed if it succeeded, rolled back at
/// once if it failed (a transaction merely dropped is rolled back only when its connection is
/// next used, and on SQLite it holds the write lock until then).
pub async fn finish<T>(tx: Tx, result: crate::error::ApiResult<T>) -> crate::error::ApiResult<T> {
    match result {
        Ok(v) => {
            tx.commit().await?;
            Ok(v)
        }
        Err(e) => {
            if let Err(rollback) = tx.rollback().await {
                tracing::warn!(error = %rollback, "a failed write could not be rolled back at once");
            }
            Err(e)
        }
    }
}

/// Starts a write transaction holding what `scope` names (see [`Scope`]).
pub async fn begin_write(pool: &Pool, scope: Scope<'_>) -> Result<Tx, sqlx::Error> {
    match Backend::of(pool) {
        Backend::Sqlite => pool.begin_with("BEGIN IMMEDIATE").await,
        Backend::Postgres => {
            let mut tx = pool.begin().await?;
            match scope {
                Scope::User(id) => {
                    sqlx::query("SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE")
                        .bind(id)
                        .fetch_optional(&mut *tx)
                        .await?;
                }
                Scope::Row(table, id) => {
                    // `table` is one of the service's own names, never a caller's.
                    sqlx::query(AssertSqlSafe(format!("SELECT 1 FROM {table} WHERE id = $1 FOR NO KEY UPDATE")))
                        .bind(id)
                        .fetch_optional(&mut *tx)
                        .await?;
                }
                Scope::Named(name) => {
                    sqlx::query("SELECT 1 FROM (SELECT pg_advisory_xact_lock($1)) AS l")
                        .bind(lock_key(name))
                        .execute(&mut *tx)
                        .await?;
                }
                Scope::Rows => {}
            }
            Ok(tx)
        }
    }
}

/// The advisory lock key of a named lock: its name's FNV-1a hash, with a prefix that keeps
/// clear of the service's other advisory locks.
fn lock_key(name: &str) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in b"mgds:".iter().chain(name.as_bytes()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as i64
}

/// The channel on which PostgreSQL tells every machine of an install that work was queued.
const QUEUED_CHANNEL: &str = "mgds_queue";

/// Tells the workers of every machine, once `tx` commits, that work was queued (PostgreSQL's
/// `NOTIFY`; SQLite is one machine, whose workers the caller wakes).
pub async fn notify_queued(tx: &mut Tx) -> Result<(), sqlx::Error> {
    if tx.backend_name() == "PostgreSQL" {
        sqlx::query(AssertSqlSafe(format!("NOTIFY {QUEUED_CHANNEL}"))).execute(&mut **tx).await?;
    }
    Ok(())
}

/// Calls `heard` whenever any machine of the install queues work ([`notify_queued`]), for as
/// long as it runs, listening again after a lost connection; returns at once on SQLite, where
/// there is no other machine to hear from.
pub async fn relay_queued(pool: &Pool, heard: impl Fn()) {
    relay(pool, QUEUED_CHANNEL, heard).await
}

/// Calls `heard` whenever a `NOTIFY` on PostgreSQL's `channel` arrives, for as long as it runs,
/// listening again after a lost connection; returns at once on SQLite.
pub async fn relay(pool: &Pool, channel: &str, heard: impl Fn()) {
    if Backend::of(pool) != Backend::Postgres {
        return;
    }
    let url = pool.connect_options().database_url.to_string();
    loop {
        let listened: Result<std::convert::Infallible, sqlx::Error> = async {
            let mut listener = sqlx::postgres::PgListener::connect(&url).await?;
            listener.listen(channel).await?;
            loop {
                listener.recv().await?;
                heard();
            }
        }
        .await;
        let Err(e) = listened;
        tracing::warn!(error = %e, channel, "lost PostgreSQL's notifications; listening again in a moment");
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
}

/// Brings the planner's statistics up to date where they are stale: SQLite's `PRAGMA
/// optimize` (PostgreSQL's autovacuum does this by itself).
pub async fn refresh_statistics(pool: &Pool) -> Result<(), sqlx::Error> {
    if Backend::of(pool) == Backend::Sqlite {
        sqlx::query("PRAGMA optimize").execute(pool).await?;
    }
    Ok(())
}

/// Starts a read-only transaction that reads one snapshot throughout (a list's total and its
/// page agree): SQLite's deferred transaction holds its snapshot from the first read;
/// PostgreSQL's default gives each statement its own, so this asks for repeatable read.
pub async fn begin_read(pool: &Pool) -> Result<Tx, sqlx::Error> {
    match Backend::of(pool) {
        Backend::Sqlite => pool.begin().await,
        Backend::Postgres => pool.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY").await,
    }
}

/// A statement put together from pieces that mark their parameters `?`, with the parameters
/// numbered (`$1`, `$2`, ...) in order, as both databases take them. Only parameter marks are
/// rewritten: a `?` inside a quoted string stays.
pub fn numbered(sql: String) -> AssertSqlSafe<String> {
    if !sql.contains('?') {
        return AssertSqlSafe(sql);
    }
    let mut out = String::with_capacity(sql.len() + 16);
    let (mut n, mut quoted) = (0, false);
    for ch in sql.chars() {
        match ch {
            '\'' => {
                quoted = !quoted;
                out.push(ch);
            }
            '?' if !quoted => {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            }
            _ => out.push(ch),
        }
    }
    AssertSqlSafe(out)
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

pub use crate::listing::ts;

/// The current time, formatted with [`ts`].
pub fn now() -> String {
    ts(Utc::now())
}

/// The time by the database's clock. On PostgreSQL that is the server's, which every machine of
/// an install shares: the job queue dates its leases by it, so that a worker whose own clock is
/// off neither takes over an analysis that another still runs nor loses its own too early.
/// SQLite is used by one machine, whose clock this is.
pub async fn clock(pool: &Pool) -> Result<DateTime<Utc>, sqlx::Error> {
    match Backend::of(pool) {
        Backend::Sqlite => Ok(Utc::now()),
        Backend::Postgres => {
            let micros: i64 =
                sqlx::query_scalar("SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)")
                    .fetch_one(pool)
                    .await?;
            DateTime::from_timestamp_micros(micros).ok_or_else(|| {
                sqlx::Error::Protocol(format!("the database's clock says {micros} µs since 1970, not a time"))
            })
        }
    }
}

pub use crate::listing::Bind;

/// Builds the arguments of a query from bound values, in order.
pub fn args(binds: &[Bind]) -> ApiResult<AnyArguments> {
    let mut a = AnyArguments::default();
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
    fn pieces_get_numbered_parameters() {
        let n = |s: &str| numbered(s.to_string()).0;
        assert_eq!(n("SELECT 1"), "SELECT 1");
        assert_eq!(n("a = ? AND b IN (?, ?)"), "a = $1 AND b IN ($2, $3)");
        assert_eq!(n("x = '?' AND y = ? AND z = 'it''s?'"), "x = '?' AND y = $1 AND z = 'it''s?'");
    }

    #[test]
    fn online_statements_are_split_one_by_one() {
        let all = online_statements(ONLINE_INDEXES);
        assert!(all.len() >= 7, "{all:?}");
        for s in &all {
            assert!(s.contains("CONCURRENTLY") && !s.contains(';') && !s.contains("--"), "{s}");
        }
    }

    #[test]
    fn timestamps_sort_as_text() {
        let a = ts(DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z").unwrap().into());
        let b = ts(DateTime::parse_from_rfc3339("2026-01-02T03:04:05.5Z").unwrap().into());
        assert_eq!(a, "2026-01-02T03:04:05.000000+00:00");
        assert!(a < b);
    }

    /// The organisation-admin flag becomes a role: every admin an admin, and the earliest admin
    /// of each organisation its owner.
    #[tokio::test]
    async fn organisation_admins_become_admins_and_the_first_of_each_its_owner() {
        sqlx::any::install_default_drivers();
        let dir = tempfile::tempdir().unwrap();
        let url = SqliteConnectOptions::new().filename(dir.path().join(DB_FILE)).create_if_missing(true).to_url_lossy();
        let pool = AnyPoolOptions::new()
            .max_connections(1)
            .connect_with(AnyConnectOptions::from_url(&url).unwrap())
            .await
            .unwrap();
        let before_roles = sqlx::migrate::Migrator {
            migrations: SQLITE_MIGRATOR.migrations.iter().filter(|m| m.version < 17).cloned().collect(),
            ..sqlx::migrate::Migrator::DEFAULT
        };
        before_roles.run(&pool).await.unwrap();
        for org in ["o1", "o2", "o3"] {
            sqlx::query("INSERT INTO organizations (id, name, created_at) VALUES ($1, $1, '2020')")
                .bind(org)
                .execute(&pool)
                .await
                .unwrap();
        }
        let users = [
            ("a1", "o1", 1, "2020-01-01"),
            ("a0", "o1", 1, "2019-01-01"),
            ("m1", "o1", 0, "2018-01-01"),
            ("a2", "o2", 1, "2021-01-01"),
            ("m3", "o3", 0, "2021-01-01"),
        ];
        for (id, org, admin, at) in users {
            sqlx::query(
                "INSERT INTO users (id, email, organization_id, is_org_admin, key_hash, created_at) \
                 VALUES ($1, $1 || '@lab.org', $2, $3, CAST($1 AS BLOB), $4)",
            )
            .bind(id)
            .bind(org)
            .bind(admin)
            .bind(at)
            .execute(&pool)
            .await
            .unwrap();
        }
        SQLITE_MIGRATOR.run(&pool).await.unwrap();
        let roles: Vec<(String, String)> =
            sqlx::query_as("SELECT id, role FROM users ORDER BY id").fetch_all(&pool).await.unwrap();
        let roles: Vec<(&str, &str)> = roles.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(roles, [("a0", "owner"), ("a1", "admin"), ("a2", "owner"), ("m1", "member"), ("m3", "member")]);
    }

    /// Processes that open a new data folder at once take turns at its schema (each open here
    /// has a pool of its own, as separate processes do).
    #[tokio::test(flavor = "multi_thread")]
    async fn opens_of_a_new_folder_at_once_take_turns() {
        for _ in 0..5 {
            let dir = tempfile::tempdir().unwrap();
            let opens: Vec<_> = (0..4).map(|_| open(dir.path(), None)).collect();
            for pool in futures::future::join_all(opens).await {
                pool.expect("every open finds the schema made or makes it");
            }
        }
    }
}
