//! Users: the people a caller may see, the caller's account, the holder of an API key, and the
//! user records the operator's commands create and change.

use crate::store::db::Pool;
use mgds_api::{Account, Ref, RefOrId, Role};

use super::access;
use super::caller::{Caller, USER_COLUMNS, User, UserRow as CallerRow};
use super::db::{self, Scope, begin_write, new_id};
use super::handle::Store;
use super::records::{self, Found, ListQuery, ListSpec, ref_id};
use crate::error::{ApiError, ApiResult};
use crate::listing::{Field, FieldKind};

/// A key's holder as the key lookup finds them.
pub struct KeyHolder {
    /// The user.
    pub user: User,
    /// The hash as stored (for the caller to compare in constant time).
    pub stored: Vec<u8>,
    /// Whether their account is disabled.
    pub disabled: bool,
}

/// The user holding the API key whose hash is `hash`.
pub async fn by_key_hash(db: &Pool, hash: &[u8]) -> ApiResult<Option<KeyHolder>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        #[sqlx(flatten)]
        user: CallerRow,
        key_hash: Vec<u8>,
    }
    let sql = format!("SELECT {USER_COLUMNS}, u.key_hash FROM users u WHERE u.key_hash = $1");
    let row: Option<Row> = sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(hash).fetch_optional(db).await?;
    Ok(row.map(|r| KeyHolder { disabled: r.user.disabled(), user: r.user.user(), stored: r.key_hash }))
}

/// The fields of `where` and `sort` in lists of users.
pub(crate) const USER_FIELDS: &[Field] = &[
    Field { name: "$uri", column: "u.id", kind: FieldKind::Uri { collection: "users" }, sortable: true },
    Field { name: "email", column: "u.email", kind: FieldKind::Text, sortable: true },
    Field { name: "username", column: "u.username", kind: FieldKind::Text, sortable: true },
];

const USERS: ListSpec = ListSpec {
    from: "users u",
    columns: "u.id, u.email, u.username",
    fields: USER_FIELDS,
    default_order: "u.email ASC",
    tiebreak: "u.id ASC",
};

#[derive(sqlx::FromRow)]
struct UserRow {
    id: String,
    email: String,
    username: Option<String>,
}

impl UserRow {
    fn into_api(self) -> mgds_api::User {
        let username = self.username.unwrap_or_else(|| username_for(&self.email));
        mgds_api::User { uri: Ref::new("users", &self.id).uri, email: Some(self.email), username: Some(username) }
    }
}

/// One page of the users the caller may see.
///
/// `where={"email": "someone@lab.org"}` is also how a person is found to share with: an exact
/// address (compared without regard to case; no patterns) that belongs to a user makes that
/// user visible to the caller from then on, so the answer holds them. It reveals only what the
/// caller already typed: that the address has an account, and its id and user name. Lookups
/// that find nobody count against the caller like failed sign-ins, in `lookups`.
pub async fn list(
    state: &Store,
    lookups: &dyn Lookups,
    caller: &Caller,
    q: &ListQuery<'_>,
) -> ApiResult<Found<mgds_api::User>> {
    let user = caller.require()?;
    let exact = q.filter.and_then(exact_email);
    if let Some(email) = &exact {
        look_up(state, lookups, user, email).await?;
    }
    // Addresses are stored in lower case: the one asked for is compared in lower case too.
    let lowered = exact.map(|email| serde_json::json!({ "email": stored_email(&email) }).to_string());
    let mut q = *q;
    if let Some(filter) = &lowered {
        q.filter = Some(filter);
    }
    let rows: Found<UserRow> = records::list(&state.db, &USERS, &q, access::user(caller, "u"), None).await?;
    Ok(rows.map(UserRow::into_api))
}

/// The address of a `where` that asks for exactly one e-mail address and nothing else.
fn exact_email(filter: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(filter).ok()?;
    let obj = v.as_object().filter(|o| o.len() == 1)?;
    let wanted = match obj.get("email")? {
        serde_json::Value::String(s) => s,
        serde_json::Value::Object(op) if op.len() == 1 => op.get("$eq")?.as_str()?,
        _ => return None,
    };
    let wanted = wanted.trim();
    wanted.contains('@').then(|| wanted.to_string())
}

/// How many e-mail lookups that found nobody a user may make: kept by the caller (the
/// service's limits of failed sign-ins).
pub trait Lookups: Send + Sync {
    /// Seconds to wait before `user` may look up again, if they may not now.
    fn blocked_for(&self, user: &str) -> Option<u64>;
    /// Counts a lookup of `user` that found nobody; seconds to wait if that was one too many.
    fn missed(&self, user: &str) -> Option<u64>;
}

/// Finds the user whose address is `email` and lets `user` see them.
async fn look_up(state: &Store, lookups: &dyn Lookups, user: &User, email: &str) -> ApiResult<()> {
    if let Some(wait) = lookups.blocked_for(&user.id) {
        return Err(ApiError::TooManyRequests(wait));
    }
    let found: Option<String> = sqlx::query_scalar("SELECT id FROM users WHERE email = $1")
        .bind(stored_email(email))
        .fetch_optional(&state.db)
        .await?;
    match found {
        Some(id) if id != user.id => {
            sqlx::query(
                "INSERT INTO user_contacts (user_id, contact_id, found_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            )
            .bind(&user.id)
            .bind(&id)
            .bind(db::now())
            .execute(&state.db)
            .await?;
        }
        Some(_) => {}
        None => {
            if let Some(wait) = lookups.missed(&user.id) {
                return Err(ApiError::TooManyRequests(wait));
            }
        }
    }
    Ok(())
}

/// The user `id` if the caller may see them.
pub async fn get(state: &Store, caller: &Caller, id: &str) -> ApiResult<mgds_api::User> {
    caller.require()?;
    let row: UserRow = records::fetch_one(&state.db, &USERS, "u.id", id, access::user(caller, "u"))
        .await?
        .ok_or_else(|| ApiError::not_found("user"))?;
    Ok(row.into_api())
}

/// The user name of a user who has not chosen one, in the reference schema's shape (3 to 15 of
/// `a-z0-9_`): the e-mail address's local part, lowercased, other characters as `_`.
pub fn username_for(email: &str) -> String {
    let local = email.split('@').next().unwrap_or_default();
    let mut name: String = local
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' { c } else { '_' })
        .take(15)
        .collect();
    while name.len() < 3 {
        name.push('_');
    }
    name
}

/// The caller's own account.
pub async fn account(state: &Store, caller: &Caller) -> ApiResult<Account> {
    let user = caller.require()?;
    let (email, username, created_at, org): (String, Option<String>, String, String) = sqlx::query_as(
        "SELECT u.email, u.username, u.created_at, o.name FROM users u \
         JOIN organizations o ON o.id = u.organization_id WHERE u.id = $1",
    )
    .bind(&user.id)
    .fetch_one(&state.db)
    .await?;
    Ok(Account {
        user: Ref::new("users", &user.id),
        username: Some(username.unwrap_or_else(|| username_for(&email))),
        email: Some(email),
        created_at: Some(created_at.clone()),
        confirmed_at: Some(created_at),
        coupons: vec![],
        organization: Some(org),
        organization_admin: Some(user.manages_org()),
        role: Some(user.role),
    })
}

/// The user a request body names, to be added to something the caller owns: someone the caller
/// may see (see [`access::user`]). An unknown id and the id of someone the caller may not see
/// answer the same 400, so ids cannot be tried to learn who has an account.
pub async fn addable(state: &Store, caller: &Caller, r: &RefOrId) -> ApiResult<String> {
    let uid = ref_id("user", r, "users")?;
    let seen: Option<UserRow> = records::fetch_one(&state.db, &USERS, "u.id", uid, access::user(caller, "u")).await?;
    seen.map(|row| row.id).ok_or_else(|| {
        ApiError::BadRequest(format!(
            "user: {uid} is not someone you can add; find a colleague by their exact e-mail address \
             first (GET /api/v1/users?where={{\"email\": \"name@lab.org\"}}), then add the id it answers"
        ))
    })
}

/// Creates a user with the key hash `key_hash` in the organisation called `organization`
/// (created if needed); returns the new id, or `None` if the e-mail address is taken.
pub async fn insert(
    db: &Pool,
    email: &str,
    organization: &str,
    role: Role,
    key_hash: &[u8],
) -> Result<Option<String>, sqlx::Error> {
    let mut tx = begin_write(db, Scope::Named("users")).await?;
    let id = insert_in(&mut tx, email, organization, role, key_hash).await?;
    tx.commit().await?;
    Ok(id)
}

/// [`insert`], in `tx` (which holds the `users` lock).
pub(crate) async fn insert_in(
    tx: &mut db::Tx,
    email: &str,
    organization: &str,
    role: Role,
    key_hash: &[u8],
) -> Result<Option<String>, sqlx::Error> {
    let email = stored_email(email);
    let exists: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM users WHERE email = $1").bind(&email).fetch_one(&mut **tx).await?;
    if exists > 0 {
        return Ok(None);
    }
    let org_id = match sqlx::query_scalar::<_, String>("SELECT id FROM organizations WHERE name = $1")
        .bind(organization)
        .fetch_optional(&mut **tx)
        .await?
    {
        Some(id) => id,
        None => {
            let id = new_id();
            sqlx::query("INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)")
                .bind(&id)
                .bind(organization)
                .bind(db::now())
                .execute(&mut **tx)
                .await?;
            id
        }
    };
    let id = new_id();
    sqlx::query(
        "INSERT INTO users (id, email, organization_id, role, key_hash, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&id)
    .bind(&email)
    .bind(&org_id)
    .bind(role.as_str())
    .bind(key_hash)
    .bind(db::now())
    .execute(&mut **tx)
    .await?;
    Ok(Some(id))
}

/// Replaces the key hash of the user with this e-mail address and moves their key epoch on;
/// their uploads not yet confirmed are canceled (their forms and S3 credentials were obtained
/// with the old key). Answers how many uploads were canceled; `None` if there is no such user.
pub async fn set_key_hash(db: &Pool, by: Option<&User>, email: &str, key_hash: &[u8]) -> ApiResult<Option<usize>> {
    let mut tx = begin_write(db, Scope::Named("users")).await?;
    let id: Option<String> =
        sqlx::query_scalar("UPDATE users SET key_hash = $1, key_epoch = key_epoch + 1 WHERE email = $2 RETURNING id")
            .bind(key_hash)
            .bind(stored_email(email))
            .fetch_optional(&mut *tx)
            .await?;
    let Some(id) = id else { return Ok(None) };
    let canceled = super::deletes::cancel_open_uploads(&mut tx, &id).await?;
    let entry = super::audit::Entry::new("user.key_replaced", "user", &id, &id)
        .with(serde_json::json!({"uploads_canceled": canceled}));
    super::audit::record(&mut tx, by, entry).await?;
    tx.commit().await?;
    Ok(Some(canceled))
}

/// The organisation of the user `id` and their role in it; `None` if there is no such user.
pub async fn organization_of(db: &Pool, id: &str) -> ApiResult<Option<(String, Role)>> {
    let row: Option<(String, String)> =
        sqlx::query_as("SELECT organization_id, role FROM users WHERE id = $1").bind(id).fetch_optional(db).await?;
    Ok(row.map(|(org, role)| (org, Role::parse(&role).unwrap_or(Role::Member))))
}

/// The id of the user with this e-mail address.
pub async fn id_by_email(db: &Pool, email: &str) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar("SELECT id FROM users WHERE email = $1").bind(stored_email(email)).fetch_optional(db).await
}

/// An e-mail address as it is stored and compared: ASCII letters in lower case, so that
/// addresses match whatever their case, on either database.
pub fn stored_email(email: &str) -> String {
    email.to_ascii_lowercase()
}

/// A user as the operator's list shows them.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Listed {
    /// User id.
    pub id: String,
    /// E-mail address.
    pub email: String,
    /// Organisation name.
    pub organization: String,
    /// Role in it.
    pub role: String,
    /// When the account was disabled, if it is.
    pub disabled_at: Option<String>,
}

/// Every user, by organisation and e-mail.
pub async fn all(db: &Pool) -> Result<Vec<Listed>, sqlx::Error> {
    sqlx::query_as(
        "SELECT u.id, u.email, o.name AS organization, u.role, u.disabled_at FROM users u \
         JOIN organizations o ON o.id = u.organization_id ORDER BY o.name, u.email",
    )
    .fetch_all(db)
    .await
}

#[cfg(test)]
mod tests {
    use super::username_for;

    #[test]
    fn user_names_fit_the_reference_shape() {
        assert_eq!(username_for("Lab.Tech-1@example.org"), "lab_tech_1");
        assert_eq!(username_for("a@x.org"), "a__");
        assert_eq!(username_for("a.very.long.address.indeed@x.org"), "a_very_long_add");
    }
}
