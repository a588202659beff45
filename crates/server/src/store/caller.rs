//! Who is calling: the signed-in user of a request, or nobody; every visibility rule and
//! permission check starts from it.

use super::db::{self, Pool};
use crate::error::{ApiError, ApiResult};

/// The signed-in user of a request.
#[derive(Debug, Clone)]
pub struct User {
    /// User id.
    pub id: String,
    /// Organisation id.
    pub organization_id: String,
    /// Whether the user administers their organisation.
    pub is_org_admin: bool,
    /// How many times the user's API key was rotated: what the user obtained with an earlier
    /// key (download addresses name the epoch they were made in) stops working.
    pub key_epoch: i64,
}

impl User {
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

/// The user `id`, as a caller, if they still exist.
pub async fn by_id(db: &Pool, id: &str) -> ApiResult<Option<User>> {
    let row: Option<(String, String, i64, i64)> =
        sqlx::query_as("SELECT id, organization_id, is_org_admin, key_epoch FROM users WHERE id = $1")
            .bind(id)
            .fetch_optional(db)
            .await?;
    Ok(row.map(|(id, organization_id, admin, key_epoch)| User {
        id,
        organization_id,
        is_org_admin: db::flag(admin),
        key_epoch,
    }))
}
