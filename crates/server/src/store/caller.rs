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
}

/// Who is calling: a user, or nobody (anonymous reads of public records).
#[derive(Debug, Clone)]
pub struct Caller(pub Option<User>);

impl Caller {
    /// The user, or 401 for a route that needs one.
    pub fn require(&self) -> Result<&User, ApiError> {
        self.0.as_ref().ok_or_else(ApiError::unauthorized)
    }

    /// The user id, if signed in.
    pub fn user_id(&self) -> Option<&str> {
        self.0.as_ref().map(|u| u.id.as_str())
    }
}

/// The user `id`, as a caller, if they still exist.
pub async fn by_id(db: &Pool, id: &str) -> ApiResult<Option<User>> {
    let row: Option<(String, String, i64)> =
        sqlx::query_as("SELECT id, organization_id, is_org_admin FROM users WHERE id = $1")
            .bind(id)
            .fetch_optional(db)
            .await?;
    Ok(row.map(|(id, organization_id, admin)| User { id, organization_id, is_org_admin: db::flag(admin) }))
}
