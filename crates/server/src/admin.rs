//! The operator's actions, which have no HTTP route: users and their API keys, sequencing
//! batches, and the service's signing secret. `mgds admin ...` calls these.

use sqlx::SqlitePool;

use crate::auth::{hash_key, new_api_key};
use crate::db::{self, begin_write, new_id};
use mgds_api::{BatchStatus, SequencingBatch};

/// Why an admin action failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// A user with this e-mail already exists.
    #[error("a user with the e-mail address {0} already exists; use `mgds admin user rotate-key {0}` for a new key")]
    UserExists(String),
    /// No user with this e-mail.
    #[error("there is no user with the e-mail address {0}; create one with `mgds admin user create {0}`")]
    NoSuchUser(String),
    /// The e-mail address is not plausible.
    #[error("{0:?} does not look like an e-mail address")]
    BadEmail(String),
    /// A batch number is already used.
    #[error("batch number {0} is already used")]
    BatchExists(String),
    /// No batch with this number or id.
    #[error("there is no sequencing batch {0}")]
    NoSuchBatch(String),
    /// A status change that would go backwards or leave a final status.
    #[error(
        "batch {number} is {from}; it cannot move to {to} (batches only move forward, and done or canceled is final)"
    )]
    BadTransition {
        /// The batch number.
        number: String,
        /// Current status.
        from: &'static str,
        /// Requested status.
        to: &'static str,
    },
    /// The database failed.
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

/// The secret that signs upload forms and download addresses, created on first use.
pub async fn signing_secret(db: &SqlitePool) -> Result<Vec<u8>, sqlx::Error> {
    let candidate = hex::encode(rand::random::<[u8; 32]>());
    sqlx::query("INSERT OR IGNORE INTO settings (key, value) VALUES ('signing_secret', ?)")
        .bind(&candidate)
        .execute(db)
        .await?;
    let secret: String =
        sqlx::query_scalar("SELECT value FROM settings WHERE key = 'signing_secret'").fetch_one(db).await?;
    Ok(hex::decode(&secret).unwrap_or_else(|_| secret.into_bytes()))
}

/// The name of the organisation users join when none is given.
pub const DEFAULT_ORGANIZATION: &str = "default";

/// A new user and their first API key.
#[derive(Debug, Clone)]
pub struct NewUser {
    /// The user id.
    pub id: String,
    /// The API key; shown once, stored only as a hash.
    pub api_key: String,
}

/// Creates a user in `organization` (created if needed) and returns their API key.
pub async fn create_user(
    db: &SqlitePool,
    email: &str,
    organization: Option<&str>,
    org_admin: bool,
) -> Result<NewUser, AdminError> {
    let email = email.trim();
    if !email.contains('@') || email.starts_with('@') || email.ends_with('@') || email.contains(char::is_whitespace) {
        return Err(AdminError::BadEmail(email.to_string()));
    }
    let org_name = organization.unwrap_or(DEFAULT_ORGANIZATION);
    let mut tx = begin_write(db).await?;
    let exists: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM users WHERE email = ?").bind(email).fetch_one(&mut *tx).await?;
    if exists > 0 {
        return Err(AdminError::UserExists(email.to_string()));
    }
    let org_id = match sqlx::query_scalar::<_, String>("SELECT id FROM organizations WHERE name = ?")
        .bind(org_name)
        .fetch_optional(&mut *tx)
        .await?
    {
        Some(id) => id,
        None => {
            let id = new_id();
            sqlx::query("INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?)")
                .bind(&id)
                .bind(org_name)
                .bind(db::now())
                .execute(&mut *tx)
                .await?;
            id
        }
    };
    let id = new_id();
    let api_key = new_api_key();
    sqlx::query(
        "INSERT INTO users (id, email, organization_id, is_org_admin, key_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(&id)
    .bind(email)
    .bind(&org_id)
    .bind(i64::from(org_admin))
    .bind(hash_key(&api_key))
    .bind(db::now())
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(NewUser { id, api_key })
}

/// Gives a user a new API key; the old one stops working at once.
pub async fn rotate_key(db: &SqlitePool, email: &str) -> Result<String, AdminError> {
    let api_key = new_api_key();
    let n = sqlx::query("UPDATE users SET key_hash = ? WHERE email = ?")
        .bind(hash_key(&api_key))
        .bind(email.trim())
        .execute(db)
        .await?
        .rows_affected();
    if n == 0 {
        return Err(AdminError::NoSuchUser(email.to_string()));
    }
    Ok(api_key)
}

/// A user's id by e-mail.
pub async fn user_id(db: &SqlitePool, email: &str) -> Result<String, AdminError> {
    sqlx::query_scalar("SELECT id FROM users WHERE email = ?")
        .bind(email.trim())
        .fetch_optional(db)
        .await?
        .ok_or_else(|| AdminError::NoSuchUser(email.to_string()))
}

/// Users as (id, e-mail, organisation, admin), by e-mail.
pub async fn list_users(db: &SqlitePool) -> Result<Vec<(String, String, String, bool)>, AdminError> {
    let rows: Vec<(String, String, String, i64)> = sqlx::query_as(
        "SELECT u.id, u.email, o.name, u.is_org_admin FROM users u JOIN organizations o ON o.id = u.organization_id ORDER BY u.email",
    )
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(a, b, c, d)| (a, b, c, d != 0)).collect())
}

async fn batch(db: &SqlitePool, number_or_id: &str) -> Result<SequencingBatch, AdminError> {
    let row: Option<(String, String, String, Option<String>, String, String)> = sqlx::query_as(
        "SELECT id, batch_number, created_at, name, owner_id, status FROM sequencing_batches WHERE batch_number = ? OR id = ?",
    )
    .bind(number_or_id)
    .bind(number_or_id)
    .fetch_optional(db)
    .await?;
    let (id, batch_number, created_at, name, owner, status) =
        row.ok_or_else(|| AdminError::NoSuchBatch(number_or_id.to_string()))?;
    Ok(SequencingBatch {
        uri: mgds_api::Ref::new("sequencing/batches", &id).uri,
        batch_number,
        created_at,
        name,
        owner: mgds_api::Ref::new("users", &owner),
        status: BatchStatus::parse(&status).unwrap_or(BatchStatus::Registered),
    })
}

/// Registers a sequencing batch for the user `owner_email`.
pub async fn create_batch(
    db: &SqlitePool,
    owner_email: &str,
    batch_number: &str,
    name: Option<&str>,
) -> Result<SequencingBatch, AdminError> {
    let owner = user_id(db, owner_email).await?;
    let now = db::now();
    let id = new_id();
    let r = sqlx::query(
        "INSERT INTO sequencing_batches (id, batch_number, name, owner_id, status, created_at, updated_at) VALUES (?, ?, ?, ?, 'registered', ?, ?)",
    )
    .bind(&id)
    .bind(batch_number)
    .bind(name)
    .bind(&owner)
    .bind(&now)
    .bind(&now)
    .execute(db)
    .await;
    match r {
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
            Err(AdminError::BatchExists(batch_number.to_string()))
        }
        Err(e) => Err(e.into()),
        Ok(_) => batch(db, &id).await,
    }
}

/// Moves a batch to `status`: forward only, or to canceled before it is done.
pub async fn set_batch_status(
    db: &SqlitePool,
    number_or_id: &str,
    status: BatchStatus,
) -> Result<SequencingBatch, AdminError> {
    let mut tx = begin_write(db).await?;
    let current: Option<(String, String, String)> =
        sqlx::query_as("SELECT id, batch_number, status FROM sequencing_batches WHERE batch_number = ? OR id = ?")
            .bind(number_or_id)
            .bind(number_or_id)
            .fetch_optional(&mut *tx)
            .await?;
    let (id, number, from) = current.ok_or_else(|| AdminError::NoSuchBatch(number_or_id.to_string()))?;
    let from = BatchStatus::parse(&from).unwrap_or(BatchStatus::Registered);
    if !from.can_move_to(status) {
        return Err(AdminError::BadTransition { number, from: from.as_str(), to: status.as_str() });
    }
    sqlx::query("UPDATE sequencing_batches SET status = ?, updated_at = ? WHERE id = ?")
        .bind(status.as_str())
        .bind(db::now())
        .bind(&id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    batch(db, &id).await
}
