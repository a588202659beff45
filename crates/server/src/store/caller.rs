//! Who is calling: the signed-in user of a request, or nobody; every visibility rule and
//! permission check starts from it.

use super::db::Pool;
use crate::error::{ApiError, ApiResult};
use mgds_api::Role;

/// The columns of `users` (aliased `u`) that make a [`User`], in [`UserRow`]'s order.
pub(crate) const USER_COLUMNS: &str = "u.id, u.organization_id, u.role, u.key_epoch, u.disabled_at";

/// A row of [`USER_COLUMNS`].
#[derive(sqlx::FromRow)]
pub(crate) struct UserRow {
    id: String,
    organization_id: String,
    role: String,
    key_epoch: i64,
    disabled_at: Option<String>,
}

impl UserRow {
    /// The user, or `None` if their account is disabled.
    pub(crate) fn enabled(self) -> Option<User> {
        self.disabled_at.is_none().then(|| self.user())
    }

    /// The user, disabled or not.
    pub(crate) fn user(self) -> User {
        User {
            id: self.id,
            organization_id: self.organization_id,
            role: Role::parse(&self.role).unwrap_or(Role::Member),
            key_epoch: self.key_epoch,
            origin: Origin::default(),
        }
    }

    /// Whether the account is disabled.
    pub(crate) fn disabled(&self) -> bool {
        self.disabled_at.is_some()
    }
}

/// The signed-in user of a request.
#[derive(Debug, Clone)]
pub struct User {
    /// User id.
    pub id: String,
    /// Organisation id.
    pub organization_id: String,
    /// Their role in the organisation.
    pub role: Role,
    /// How many times the user's API key was rotated: what the user obtained with an earlier
    /// key (download addresses name the epoch they were made in) stops working.
    pub key_epoch: i64,
    /// Where the request came from, for the audit trail.
    pub origin: Origin,
}

/// Where a request came from: its address and the client it names itself as, for the audit
/// trail. Empty for work that is not a request (the operator's commands, the service's own).
#[derive(Debug, Clone, Default)]
pub struct Origin {
    /// The client's address (see [`crate::auth::AuthLimits::client_address`]).
    pub address: Option<String>,
    /// How it signed in and what it says it is: `key: onecodex/0.17`, `session: Mozilla/5.0 ...`
    /// (at most [`MAX_CLIENT_CHARS`] characters).
    pub client: Option<String>,
}

/// Most characters of a client's self-description kept.
pub const MAX_CLIENT_CHARS: usize = 200;

impl User {
    /// Whether the user is an admin or owner of their organisation: they see and manage every
    /// record of its users, and manage its members.
    pub fn manages_org(&self) -> bool {
        self.role.manages()
    }

    /// The holder named in a download address made for this user: their id and key epoch.
    pub fn holder(&self) -> String {
        format!("{}.{}", self.id, self.key_epoch)
    }
}

/// Who is calling: a user, or nobody (anonymous reads of public records).
#[derive(Debug, Clone)]
pub struct Caller(pub Option<User>);

impl Caller {
    /// The user, or 401 for a route that needs one.
    pub fn require(&self) -> Result<&User, ApiError> {
        self.0.as_ref().ok_or_else(ApiError::unauthorized)
    }

    /// The holder a download address names: the user and their key epoch, or empty for
    /// anonymous.
    pub fn holder(&self) -> String {
        self.0.as_ref().map(User::holder).unwrap_or_default()
    }

    /// The user id, if signed in.
    pub fn user_id(&self) -> Option<&str> {
        self.0.as_ref().map(|u| u.id.as_str())
    }
}

/// The user `id`, as a caller, if they still exist and their account is enabled.
pub async fn by_id(db: &Pool, id: &str) -> ApiResult<Option<User>> {
    let sql = format!("SELECT {USER_COLUMNS} FROM users u WHERE u.id = $1");
    let row: Option<UserRow> = sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(db).await?;
    Ok(row.and_then(UserRow::enabled))
}
