//! Passwords and the sessions of signed-in browsers.
//!
//! - A password is kept as an argon2id hash (the `argon2` crate's defaults: 19 MiB, 2 passes,
//!   one lane; its PHC string holds the salt and the parameters, so that stronger ones can come
//!   later without a migration). Hashing runs on the blocking pool, [`HASHING_AT_ONCE`] at a
//!   time per process, with at most [`HASHING_QUEUE`] waiting: a flood of sign-ins answers 429
//!   instead of taking the machine's memory and cores.
//! - A session is a random 256-bit secret in a cookie; the database keeps its SHA-256, its
//!   CSRF token, who it is for, when it was made and last used, and the browser and address it
//!   was made from, so that its user can list and end it, and every API host knows it. A
//!   session ends [`SESSION_IDLE_DAYS`] after it was last used, and [`SESSION_MAX_DAYS`] after
//!   it was made whatever its use; a user has at most [`MAX_SESSIONS_PER_USER`] (signing in
//!   past that ends the oldest).
//! - Failed password checks (signing in, or the current password of a change) are counted in
//!   the database, so that several API hosts count together, for the account from one address,
//!   for the account from anywhere and for the address (an IPv6 address by its /64): past the
//!   free ones of each ([`FREE_FAILURES_PER_PAIR`], [`FREE_FAILURES_PER_ACCOUNT`],
//!   [`FREE_FAILURES_PER_ADDRESS`]), each next attempt waits twice as long as the last, up to
//!   [`MAX_SIGN_IN_WAIT_SECS`]; none locks an account for good. The wait is checked before the
//!   password, so that guessing through it learns nothing, and it is checked and counted while
//!   holding a hashing turn, so that guesses sent at once do not all pass one check.
//! - Times are the API host's clock (hosts of one install keep theirs in step, as any web
//!   service's do); sessions measure days and waits seconds.

use std::net::IpAddr;

use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use chrono::{DateTime, Duration, Utc};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::caller::{USER_COLUMNS, User, UserRow};
use super::db::{self, Pool, new_id, ts};
use crate::error::{ApiError, ApiResult};

/// The cookie that holds a session's secret.
pub const SESSION_COOKIE: &str = "mgds_session";

/// Its name when the service is reached over TLS at the root of its address: the `__Host-`
/// prefix makes browsers refuse it from any other host or path, or without `Secure`.
pub const HOST_SESSION_COOKIE: &str = "__Host-mgds_session";

/// Days without use after which a session ends.
pub const SESSION_IDLE_DAYS: i64 = 14;

/// Most sessions one user has at once.
pub const MAX_SESSIONS_PER_USER: i64 = 20;

/// Fewest characters of a password.
pub const MIN_PASSWORD_CHARS: usize = 10;

/// Most bytes of a password (argon2 takes any length; a bound keeps a request's cost known).
pub const MAX_PASSWORD_BYTES: usize = 1024;

/// Days after which a session ends however much it is used: the cookie's lifetime.
pub const SESSION_MAX_DAYS: i64 = 90;

/// Failed password checks of one account from one address that cost no wait.
pub const FREE_FAILURES_PER_PAIR: i64 = 5;

/// Failed password checks of one account from anywhere that cost no wait: more than from one
/// address, so that someone guessing from elsewhere slows the account's owner only much later.
pub const FREE_FAILURES_PER_ACCOUNT: i64 = 20;

/// Failed password checks from one address that cost no wait (a lab's people may share one).
pub const FREE_FAILURES_PER_ADDRESS: i64 = 50;

/// Password hashes computed at once in one process.
pub const HASHING_AT_ONCE: usize = 2;

/// Password checks waiting for a turn in one process, past which a sign-in answers 429.
pub const HASHING_QUEUE: usize = 64;

/// Longest e-mail address a sign-in reads (RFC 5321's limit on a path).
const MAX_EMAIL_BYTES: usize = 254;

static HASHING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(HASHING_AT_ONCE);
static WAITING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A turn to hash a password, or `None` when too many wait already.
async fn hashing_turn() -> Option<tokio::sync::SemaphorePermit<'static>> {
    use std::sync::atomic::Ordering;
    if WAITING.fetch_add(1, Ordering::SeqCst) >= HASHING_QUEUE {
        WAITING.fetch_sub(1, Ordering::SeqCst);
        return None;
    }
    let turn = HASHING.acquire().await.ok();
    WAITING.fetch_sub(1, Ordering::SeqCst);
    turn
}

/// The longest wait between attempts, in seconds.
pub const MAX_SIGN_IN_WAIT_SECS: i64 = 15 * 60;

/// Hours after the last failure when the count starts again.
const FAILURES_FORGOTTEN_HOURS: i64 = 24;

/// How often, at most, a session's last use is written (each request would be a write).
const TOUCH_EVERY_MINUTES: i64 = 10;

/// Checks a new password: [`MIN_PASSWORD_CHARS`] characters or more, at most
/// [`MAX_PASSWORD_BYTES`] bytes, not only spaces.
pub fn check_new_password(password: &str) -> ApiResult<()> {
    if password.chars().count() < MIN_PASSWORD_CHARS || password.trim().is_empty() {
        return Err(ApiError::BadRequest(format!(
            "the password is too short: use at least {MIN_PASSWORD_CHARS} characters (a few words make a good one)"
        )));
    }
    if password.len() > MAX_PASSWORD_BYTES {
        return Err(ApiError::BadRequest(format!("the password is longer than {MAX_PASSWORD_BYTES} bytes")));
    }
    Ok(())
}

/// The argon2id hash of `password`, as a PHC string, made on the blocking pool.
pub async fn hash_password(password: &str) -> ApiResult<String> {
    let _turn = hashing_turn().await.ok_or(ApiError::TooManyRequests(1))?;
    let password = password.to_string();
    tokio::task::spawn_blocking(move || {
        Argon2::default().hash_password(password.as_bytes()).map(|h| h.to_string()).map_err(ApiError::internal)
    })
    .await
    .map_err(ApiError::internal)?
}

/// Whether `password` matches the PHC string `stored`; with no stored hash, a hash of the same
/// cost is still computed, so that the answer takes as long whether the account exists or not.
async fn verify_password(password: &str, stored: Option<String>) -> bool {
    let password = password.to_string();
    tokio::task::spawn_blocking(move || match stored.as_deref().map(PasswordHash::new) {
        Some(Ok(hash)) => Argon2::default().verify_password(password.as_bytes(), &hash).is_ok(),
        _ => {
            let _ = Argon2::default().hash_password(password.as_bytes());
            false
        }
    })
    .await
    .unwrap_or(false)
}

/// Sets the password of the user `user_id`, as `by` (`None`: the operator), and ends all their
/// sessions and their password link. `None` if there is no
/// such user.
pub async fn set_password(db: &Pool, by: Option<&User>, user_id: &str, password: &str) -> ApiResult<Option<()>> {
    check_new_password(password)?;
    let hash = hash_password(password).await?;
    let mut tx = db::begin_write(db, db::Scope::User(user_id)).await?;
    let changed = sqlx::query("UPDATE users SET password_hash = $1 WHERE id = $2")
        .bind(&hash)
        .bind(user_id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    sqlx::query("DELETE FROM sessions WHERE user_id = $1").bind(user_id).execute(&mut *tx).await?;
    // A reset link made before stops too: the password it would replace is this new one.
    sqlx::query("DELETE FROM password_links WHERE user_id = $1").bind(user_id).execute(&mut *tx).await?;
    if changed > 0 {
        super::audit::record(&mut tx, by, super::audit::Entry::new("user.password_changed", "user", user_id, user_id))
            .await?;
    }
    tx.commit().await?;
    Ok((changed > 0).then_some(()))
}

/// A session just made: what the cookie and the page hold.
#[derive(Debug, Clone)]
pub struct NewSession {
    /// The session's id (for listing and ending it; not a secret).
    pub id: String,
    /// The secret the cookie holds; shown once.
    pub token: String,
    /// The token every cookie-authenticated write sends back in `X-CSRF-Token`.
    pub csrf_token: String,
    /// When the session ends unless used.
    pub expires_at: String,
    /// Who signed in.
    pub user: User,
}

/// Why a sign-in failed.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    /// The e-mail address and password do not match an account with a password.
    #[error("the e-mail address or the password is not right")]
    Wrong,
    /// Too many failures of the account or from the address: try again after this many seconds.
    #[error("too many failed sign-ins; try again in {0} s")]
    Wait(i64),
    /// The password is right but an admin of the organisation disabled the account.
    #[error("this account is disabled; ask an admin of your organisation to enable it again")]
    Disabled,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] ApiError),
}

impl From<sqlx::Error> for SignInError {
    fn from(e: sqlx::Error) -> Self {
        SignInError::Store(e.into())
    }
}

fn hash_token(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// 256 random bits as 64 hex characters.
fn random_hex() -> String {
    hex::encode(rand::random::<[u8; 32]>())
}

/// The key of an address in the counts: an IPv4 address, or an IPv6 address's /64 (one host
/// commonly holds a whole /64).
fn address_key(a: IpAddr) -> String {
    match a {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

/// The subjects whose failures a password check counts, each with its free failures: the
/// account from the address, the account, and the address. `account` is `None` for an e-mail
/// address that cannot be one (only the address counts then).
fn subjects(account: Option<&str>, address: Option<IpAddr>) -> Vec<(String, i64)> {
    let address = address.map(address_key);
    let mut s = Vec::new();
    if let Some(account) = account {
        if let Some(a) = &address {
            s.push((format!("pair:{account}|{a}"), FREE_FAILURES_PER_PAIR));
        }
        s.push((format!("account:{account}"), FREE_FAILURES_PER_ACCOUNT));
    }
    if let Some(a) = address {
        s.push((format!("address:{a}"), FREE_FAILURES_PER_ADDRESS));
    }
    s
}

/// Seconds to wait after `failures` failures with `free` of them free.
fn wait_after(failures: i64, free: i64) -> i64 {
    let over = failures - free;
    if over <= 0 { 0 } else { 1i64.checked_shl(over.min(20) as u32).unwrap_or(i64::MAX).min(MAX_SIGN_IN_WAIT_SECS) }
}

/// Seconds until `subject` may try again, at `now`.
async fn waiting(db: &Pool, subject: &str, free: i64, now: DateTime<Utc>) -> ApiResult<i64> {
    let row: Option<(i64, String)> =
        sqlx::query_as("SELECT failures, last_failed_at FROM sign_in_failures WHERE subject = $1")
            .bind(subject)
            .fetch_optional(db)
            .await?;
    let Some((failures, last)) = row else { return Ok(0) };
    let Ok(last) = DateTime::parse_from_rfc3339(&last) else { return Ok(0) };
    let since = (now - last.with_timezone(&Utc)).num_seconds();
    if since >= FAILURES_FORGOTTEN_HOURS * 3600 {
        return Ok(0);
    }
    Ok((wait_after(failures, free) - since).max(0))
}

/// Counts a failure of each subject at `now` (a count older than a day starts again).
async fn failed(db: &Pool, subjects: &[(String, i64)], now: DateTime<Utc>) -> ApiResult<()> {
    let forgotten = ts(now - Duration::hours(FAILURES_FORGOTTEN_HOURS));
    for (subject, _) in subjects {
        sqlx::query(
            "INSERT INTO sign_in_failures (subject, failures, last_failed_at) VALUES ($1, 1, $2) \
             ON CONFLICT (subject) DO UPDATE SET \
             failures = CASE WHEN sign_in_failures.last_failed_at < $3 THEN 1 ELSE sign_in_failures.failures + 1 END, \
             last_failed_at = $2",
        )
        .bind(subject)
        .bind(ts(now))
        .bind(&forgotten)
        .execute(db)
        .await?;
    }
    Ok(())
}

/// A user's row as a password check reads it.
#[derive(sqlx::FromRow)]
struct PasswordRow {
    #[sqlx(flatten)]
    user: UserRow,
    password_hash: Option<String>,
}

/// Checks `password` for the account `email` from `address`, under the waits: the user if it
/// is theirs. A failure is counted against the account from the address, the account, and the
/// address; a success forgets the first two.
async fn check(db: &Pool, email: &str, password: &str, address: Option<IpAddr>) -> Result<User, SignInError> {
    let email = email.trim().to_ascii_lowercase();
    let plausible = email.len() <= MAX_EMAIL_BYTES && email.contains('@');
    let subjects = subjects(plausible.then_some(email.as_str()), address);
    let Some(_turn) = hashing_turn().await else { return Err(SignInError::Wait(1)) };
    let now = Utc::now();
    let mut wait = 0;
    for (subject, free) in &subjects {
        wait = wait.max(waiting(db, subject, *free, now).await?);
    }
    if wait > 0 {
        return Err(SignInError::Wait(wait));
    }
    let row: Option<PasswordRow> = if plausible {
        let sql = format!("SELECT {USER_COLUMNS}, u.password_hash FROM users u WHERE u.email = $1");
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(&email).fetch_optional(db).await?
    } else {
        None
    };
    let stored = row.as_ref().and_then(|r| r.password_hash.clone());
    let fits = password.len() <= MAX_PASSWORD_BYTES && verify_password(password, stored).await;
    let Some(row) = row.filter(|_| fits) else {
        failed(db, &subjects, now).await?;
        return Err(SignInError::Wrong);
    };
    for (subject, _) in subjects.iter().filter(|(s, _)| !s.starts_with("address:")) {
        sqlx::query("DELETE FROM sign_in_failures WHERE subject = $1").bind(subject).execute(db).await?;
    }
    // Said only to whoever knows the password.
    row.user.enabled().ok_or(SignInError::Disabled)
}

/// Checks the current password of the user `user_id` (before a change that needs it), from
/// `address`, under the same waits as signing in. An account without a password passes (it is
/// setting its first).
pub async fn check_current(
    db: &Pool,
    user_id: &str,
    given: Option<&str>,
    address: Option<IpAddr>,
) -> Result<(), SignInError> {
    let row: Option<(String, Option<String>)> =
        sqlx::query_as("SELECT email, password_hash FROM users WHERE id = $1").bind(user_id).fetch_optional(db).await?;
    match row {
        None => Err(SignInError::Wrong),
        Some((_, None)) => Ok(()),
        Some((email, Some(_))) => check(db, &email, given.unwrap_or_default(), address).await.map(|_| ()),
    }
}

/// Checks a sign-in by e-mail address and password from `address`: the user, for [`open`] to
/// make their session.
pub async fn sign_in(db: &Pool, email: &str, password: &str, address: Option<IpAddr>) -> Result<User, SignInError> {
    check(db, email, password, address).await
}

/// A new session of `user`, from `address` with `user_agent`, after the oldest past
/// [`MAX_SESSIONS_PER_USER`] is ended.
pub async fn open(
    db: &Pool,
    user: User,
    address: Option<IpAddr>,
    user_agent: Option<&str>,
    sso: Option<&SsoLink>,
) -> ApiResult<NewSession> {
    let now = Utc::now();
    let (token, csrf_token, session) = (random_hex(), random_hex(), new_id());
    let expires_at = ts(now + Duration::days(SESSION_IDLE_DAYS));
    let user_agent = user_agent.map(|u| u.chars().take(200).collect::<String>());
    let mut tx = db::begin_write(db, db::Scope::User(&user.id)).await?;
    sqlx::query(
        "INSERT INTO sessions (id, token_hash, csrf_token, user_id, created_at, last_seen_at, expires_at, user_agent, \
         address, sso_issuer, sso_subject, sso_sid, id_token) VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(&session)
    .bind(hash_token(&token))
    .bind(&csrf_token)
    .bind(&user.id)
    .bind(ts(now))
    .bind(&expires_at)
    .bind(user_agent)
    .bind(address.map(|a| a.to_string()))
    .bind(sso.map(|s| s.issuer.as_str()))
    .bind(sso.map(|s| s.subject.as_str()))
    .bind(sso.and_then(|s| s.sid.as_deref()))
    .bind(sso.and_then(|s| s.id_token.as_deref()))
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "DELETE FROM sessions WHERE user_id = $1 AND id NOT IN \
         (SELECT id FROM sessions WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2)",
    )
    .bind(&user.id)
    .bind(MAX_SESSIONS_PER_USER)
    .execute(&mut *tx)
    .await?;
    let entry = super::audit::Entry::new("session.signed_in", "session", &session, &user.id);
    super::audit::record(&mut tx, Some(&user), entry).await?;
    tx.commit().await?;
    Ok(NewSession { id: session, token, csrf_token, expires_at, user })
}

/// What a session made by single sign-on keeps of the provider's sign-in.
#[derive(Debug, Clone)]
pub struct SsoLink {
    /// The provider's issuer.
    pub issuer: String,
    /// The user's subject there.
    pub subject: String,
    /// The provider's session (`sid`), which its back-channel logout names.
    pub sid: Option<String>,
    /// The ID token, the hint of an RP-initiated logout.
    pub id_token: Option<String>,
}

/// The ID token a session was made with, if single sign-on made it.
pub async fn id_token(db: &Pool, id: &str) -> ApiResult<Option<String>> {
    Ok(sqlx::query_scalar::<_, Option<String>>("SELECT id_token FROM sessions WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?
        .flatten())
}

/// Ends the sessions a provider's back-channel logout names: the one of its session `sid`, or,
/// with no `sid`, every session of `subject` made by a sign-in there. The users whose sessions
/// ended, with how many each.
pub async fn end_by_provider(
    db: &Pool,
    issuer: &str,
    subject: Option<&str>,
    sid: Option<&str>,
) -> ApiResult<Vec<(String, i64)>> {
    let mut tx = db::begin_write(db, db::Scope::Rows).await?;
    let gone: Vec<String> = match sid {
        Some(sid) => {
            sqlx::query_scalar(
                "DELETE FROM sessions WHERE sso_issuer = $1 AND sso_sid = $2 AND ($3 IS NULL OR sso_subject = $3) \
                 RETURNING user_id",
            )
            .bind(issuer)
            .bind(sid)
            .bind(subject)
            .fetch_all(&mut *tx)
            .await?
        }
        None => {
            sqlx::query_scalar("DELETE FROM sessions WHERE sso_issuer = $1 AND sso_subject = $2 RETURNING user_id")
                .bind(issuer)
                .bind(subject)
                .fetch_all(&mut *tx)
                .await?
        }
    };
    let mut ended: Vec<(String, i64)> = Vec::new();
    for user in gone {
        match ended.iter_mut().find(|(u, _)| *u == user) {
            Some((_, n)) => *n += 1,
            None => ended.push((user, 1)),
        }
    }
    for (user, count) in &ended {
        let entry = super::audit::Entry::new("session.ended_by_provider", "user", user, user)
            .with(serde_json::json!({"sessions": count, "issuer": issuer}));
        super::audit::record(&mut tx, None, entry).await?;
    }
    tx.commit().await?;
    Ok(ended)
}

/// A session found by its cookie.
#[derive(Debug, Clone)]
pub struct Session {
    /// Its id.
    pub id: String,
    /// Its CSRF token.
    pub csrf_token: String,
    /// When it ends unless used.
    pub expires_at: String,
}

impl Session {
    /// Whether `sent` is this session's CSRF token (compared in constant time).
    pub fn csrf_matches(&self, sent: &str) -> bool {
        bool::from(self.csrf_token.as_bytes().ct_eq(sent.as_bytes()))
    }
}

/// The user and session of the cookie's secret `token`, if it is a session that has not
/// ended. Its last use is written at most every few minutes.
pub async fn by_token(db: &Pool, token: &str) -> ApiResult<Option<(User, Session)>> {
    if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    let hash = hash_token(token);
    #[derive(sqlx::FromRow)]
    struct Row {
        session_id: String,
        csrf_token: String,
        expires_at: String,
        last_seen_at: String,
        token_hash: Vec<u8>,
        #[sqlx(flatten)]
        user: UserRow,
    }
    let sql = format!(
        "SELECT s.id AS session_id, s.csrf_token, s.expires_at, s.last_seen_at, s.token_hash, {USER_COLUMNS} \
         FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1 AND s.created_at > $2"
    );
    let row: Option<Row> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(&hash)
        .bind(ts(Utc::now() - Duration::days(SESSION_MAX_DAYS)))
        .fetch_optional(db)
        .await?;
    let Some(Row { session_id: id, csrf_token, expires_at, last_seen_at: last_seen, token_hash: stored, user }) = row
    else {
        return Ok(None);
    };
    // A disabled user's sessions are ended when the account is disabled; this holds meanwhile.
    let Some(user) = user.enabled() else { return Ok(None) };
    if !bool::from(stored.ct_eq(&hash)) {
        return Ok(None);
    }
    let now = Utc::now();
    if expires_at <= ts(now) {
        return Ok(None);
    }
    let mut expires_at = expires_at;
    if last_seen <= ts(now - Duration::minutes(TOUCH_EVERY_MINUTES)) {
        expires_at = ts(now + Duration::days(SESSION_IDLE_DAYS));
        sqlx::query("UPDATE sessions SET last_seen_at = $1, expires_at = $2 WHERE id = $3")
            .bind(ts(now))
            .bind(&expires_at)
            .bind(&id)
            .execute(db)
            .await?;
    }
    Ok(Some((user, Session { id, csrf_token, expires_at })))
}

/// One of a user's sessions, as their account page lists it.
#[derive(Debug, Clone, serde::Serialize, sqlx::FromRow)]
pub struct SessionRecord {
    /// Its id.
    pub id: String,
    /// When it was made (signed in).
    pub created_at: String,
    /// When it was last used (to within a few minutes).
    pub last_seen_at: String,
    /// When it ends unless used.
    pub expires_at: String,
    /// The browser it was made from, as it named itself.
    pub user_agent: Option<String>,
    /// The address it was made from.
    pub address: Option<String>,
}

/// The sessions of `user_id` that have not ended (by their last use), newest first (at most
/// [`MAX_SESSIONS_PER_USER`]).
pub async fn list(db: &Pool, user_id: &str) -> ApiResult<Vec<SessionRecord>> {
    Ok(sqlx::query_as(
        "SELECT id, created_at, last_seen_at, expires_at, user_agent, address FROM sessions \
         WHERE user_id = $1 AND expires_at > $2 ORDER BY created_at DESC, id DESC LIMIT $3",
    )
    .bind(user_id)
    .bind(db::now())
    .bind(MAX_SESSIONS_PER_USER)
    .fetch_all(db)
    .await?)
}

/// Ends the session `id` of `user_id`; whether there was one.
pub async fn end(db: &Pool, user_id: &str, id: &str) -> ApiResult<bool> {
    let done = sqlx::query("DELETE FROM sessions WHERE id = $1 AND user_id = $2")
        .bind(id)
        .bind(user_id)
        .execute(db)
        .await?
        .rows_affected();
    Ok(done > 0)
}

/// Ends every session of `user_id`; how many there were.
pub async fn end_all(db: &Pool, user_id: &str) -> ApiResult<u64> {
    Ok(sqlx::query("DELETE FROM sessions WHERE user_id = $1").bind(user_id).execute(db).await?.rows_affected())
}

/// Removes ended sessions and failure counts nobody waits on any more (the janitor's work).
pub async fn sweep(db: &Pool) -> ApiResult<()> {
    let now = Utc::now();
    sqlx::query("DELETE FROM sessions WHERE expires_at <= $1 OR created_at <= $2")
        .bind(ts(now))
        .bind(ts(now - Duration::days(SESSION_MAX_DAYS)))
        .execute(db)
        .await?;
    sqlx::query("DELETE FROM sign_in_failures WHERE last_failed_at < $1")
        .bind(ts(now - Duration::hours(FAILURES_FORGOTTEN_HOURS)))
        .execute(db)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_count_by_host_and_an_ipv6_host_by_its_64() {
        assert_eq!(address_key("192.0.2.7".parse().unwrap()), "192.0.2.7");
        assert_eq!(address_key("::ffff:192.0.2.7".parse().unwrap()), "192.0.2.7");
        assert_eq!(address_key("2001:db8:1:2:aaaa::1".parse().unwrap()), "2001:db8:1:2::/64");
        assert_eq!(address_key("2001:db8:1:2:bbbb::9".parse().unwrap()), "2001:db8:1:2::/64");
        let s = subjects(Some("a@b.org"), Some("192.0.2.7".parse().unwrap()));
        let names: Vec<&str> = s.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["pair:a@b.org|192.0.2.7", "account:a@b.org", "address:192.0.2.7"]);
        assert_eq!(subjects(None, None), vec![]);
    }

    #[test]
    fn waits_double_past_the_free_failures_and_stop_growing() {
        assert_eq!(wait_after(5, 5), 0);
        assert_eq!(wait_after(6, 5), 2);
        assert_eq!(wait_after(7, 5), 4);
        assert_eq!(wait_after(14, 5), 512);
        assert_eq!(wait_after(15, 5), MAX_SIGN_IN_WAIT_SECS);
        assert_eq!(wait_after(10_000, 5), MAX_SIGN_IN_WAIT_SECS);
    }

    #[test]
    fn short_and_blank_passwords_are_refused() {
        assert!(check_new_password("short").is_err());
        assert!(check_new_password("          ").is_err());
        assert!(check_new_password(&"x".repeat(MAX_PASSWORD_BYTES + 1)).is_err());
        assert!(check_new_password("correct horse battery").is_ok());
    }
}
