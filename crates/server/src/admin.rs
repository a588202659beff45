//! The operator's actions, which have no HTTP route: users and their API keys, and sequencing
//! batches. `mgds admin ...` calls these.

use crate::state::AppState;
use crate::store::db::Pool;

use crate::auth::{hash_key, new_api_key};
use crate::store::batches::{self, Moved};
use crate::store::{members, users};
pub use mgds_api::Role;
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
    /// The records or files could not be changed.
    #[error("the service's records or files could not be changed")]
    Store(#[source] crate::error::ApiError),
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

/// Creates a user with `role` in `organization` (created if needed) and returns their API key.
pub async fn create_user(
    db: &Pool,
    email: &str,
    organization: Option<&str>,
    role: Role,
) -> Result<NewUser, AdminError> {
    let email = email.trim();
    if !email.contains('@') || email.starts_with('@') || email.ends_with('@') || email.contains(char::is_whitespace) {
        return Err(AdminError::BadEmail(email.to_string()));
    }
    let api_key = new_api_key();
    let id = users::insert(db, email, organization.unwrap_or(DEFAULT_ORGANIZATION), role, &hash_key(&api_key))
        .await?
        .ok_or_else(|| AdminError::UserExists(email.to_string()))?;
    let entry = crate::store::audit::Entry::new("user.created", "user", &id, &id)
        .with(serde_json::json!({"email": email, "role": role.as_str()}));
    crate::store::audit::record_now(db, None, entry).await.map_err(AdminError::Store)?;
    Ok(NewUser { id, api_key })
}

/// A new API key, and what the rotation stopped.
#[derive(Debug)]
pub struct Rotated {
    /// The new key.
    pub api_key: String,
    /// Uploads not yet confirmed that were canceled with the old key.
    pub canceled_uploads: usize,
}

/// Gives a user a new API key. The old one stops working at once, and so does everything
/// obtained with it that the service checks: download addresses of the service's own storage
/// endpoint, upload forms and S3 credentials (their uploads are canceled), and the store's keys
/// for uploads that go straight to it (removed through its admin API before this answers).
pub async fn rotate_key(state: &AppState, email: &str) -> Result<Rotated, AdminError> {
    rotate_key_by(state, None, email).await
}

/// [`rotate_key`], as the user `by` (`None`: the operator), for the audit trail.
pub async fn rotate_key_by(
    state: &AppState,
    by: Option<&crate::store::caller::User>,
    email: &str,
) -> Result<Rotated, AdminError> {
    let api_key = new_api_key();
    let canceled = users::set_key_hash(&state.db, by, email.trim(), &hash_key(&api_key))
        .await
        .map_err(AdminError::Store)?
        .ok_or_else(|| AdminError::NoSuchUser(email.to_string()))?;
    // The canceled uploads' files, and their buckets and keys in the store, go now.
    crate::store::deletes::purge(state).await.map_err(AdminError::Store)?;
    Ok(Rotated { api_key, canceled_uploads: canceled })
}

/// A user's id by e-mail.
pub async fn user_id(db: &Pool, email: &str) -> Result<String, AdminError> {
    users::id_by_email(db, email.trim()).await?.ok_or_else(|| AdminError::NoSuchUser(email.to_string()))
}

/// Every user, by organisation and e-mail.
pub async fn list_users(db: &Pool) -> Result<Vec<users::Listed>, AdminError> {
    Ok(users::all(db).await?)
}

/// Gives the user `email` the role `role` in their organisation. The operator may give any
/// role, to anyone (an organisation's first owner is made this way).
pub async fn set_role(db: &Pool, email: &str, role: Role) -> Result<(), AdminError> {
    let id = user_id(db, email).await?;
    members::set_role(db, &id, role).await.map_err(AdminError::Store)
}

/// Disables (`true`) or enables the account `email`: see [`members`] for what stops. Answers
/// what disabling stopped.
pub async fn set_disabled(state: &AppState, email: &str, disabled: bool) -> Result<members::CutOff, AdminError> {
    let id = user_id(&state.db, email).await?;
    let stopped = members::set_disabled(&state.db, &id, disabled, None).await.map_err(AdminError::Store)?;
    crate::store::deletes::purge(state).await.map_err(AdminError::Store)?;
    Ok(stopped)
}

/// Revokes the API key and ends the sessions of the account `email`, without giving a new key
/// (`rotate-key` gives one).
pub async fn revoke(state: &AppState, email: &str) -> Result<members::CutOff, AdminError> {
    let id = user_id(&state.db, email).await?;
    members::revoke_credentials(state, None, &id).await.map_err(AdminError::Store)
}

/// A password link (an invitation if the user never had a password, else a reset) for the
/// account `email`, at the service's address `public_url`: the address to give them and when it
/// ends.
pub async fn password_link(db: &Pool, email: &str, public_url: &str) -> Result<(String, String), AdminError> {
    let id = user_id(db, email).await?;
    members::operator_link(db, &id, public_url).await.map_err(AdminError::Store)
}

async fn batch(db: &Pool, number_or_id: &str) -> Result<SequencingBatch, AdminError> {
    batches::find(db, number_or_id).await?.ok_or_else(|| AdminError::NoSuchBatch(number_or_id.to_string()))
}

/// Registers a sequencing batch for the user `owner_email`.
pub async fn create_batch(
    db: &Pool,
    owner_email: &str,
    batch_number: &str,
    name: Option<&str>,
) -> Result<SequencingBatch, AdminError> {
    let owner = user_id(db, owner_email).await?;
    match batches::insert(db, batch_number, name, &owner).await? {
        None => Err(AdminError::BatchExists(batch_number.to_string())),
        Some(id) => {
            let entry = crate::store::audit::Entry::new("batch.created", "sequencing_batch", &id, &owner)
                .with(serde_json::json!({"batch_number": batch_number, "name": name}));
            crate::store::audit::record_now(db, None, entry).await.map_err(AdminError::Store)?;
            batch(db, &id).await
        }
    }
}

/// Moves a batch to `status`: forward only, or to canceled before it is done.
pub async fn set_batch_status(
    db: &Pool,
    number_or_id: &str,
    status: BatchStatus,
) -> Result<SequencingBatch, AdminError> {
    match batches::move_to(db, number_or_id, status).await? {
        Moved::NoSuchBatch => Err(AdminError::NoSuchBatch(number_or_id.to_string())),
        Moved::Refused { number, from } => {
            Err(AdminError::BadTransition { number, from: from.as_str(), to: status.as_str() })
        }
        Moved::Done { id } => {
            let b = batch(db, &id).await?;
            let entry = crate::store::audit::Entry::new("batch.status_changed", "sequencing_batch", &id, b.owner.id())
                .with(serde_json::json!({"status": status.as_str()}));
            crate::store::audit::record_now(db, None, entry).await.map_err(AdminError::Store)?;
            Ok(b)
        }
    }
}
