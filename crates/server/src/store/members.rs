//! The people of an organisation as its admins and owners manage them (MGDS additions to API
//! v1), and as the operator does with `mgds admin user`: roles, invitations, disabling and
//! enabling accounts, password links, and revoking a user's keys and sessions.
//!
//! Who manages whom ([`may_manage`], [`may_give`]): an owner manages every user of the
//! organisation and gives any role; an admin manages and invites members. Nobody manages
//! themselves here (their own password and key are the account's routes), so an organisation
//! that has an owner keeps one: only another owner can make an owner an admin.
//!
//! A disabled account keeps its records (samples, documents, projects stay, and stay shared as
//! they were); its API key, browser sessions, password links and download addresses stop at
//! once, and so do its uploads not yet confirmed, with their store credentials. Enabling it
//! again brings back its API key (disabling is not a sign that the key leaked; revoking is).

use chrono::{Duration, Utc};
use mgds_api::{Member, MemberInvite, MemberUpdate, Organization, PasswordLink, PasswordLinkInfo, Ref, Revoked, Role};
use sha2::{Digest, Sha256};

use super::caller::{Caller, User};
use super::db::{self, Pool, Scope, Tx, begin_write, ts};
use super::handle::Store;
use super::records::{self, Found, ListQuery, ListSpec};
use super::users;
use crate::error::{ApiError, ApiResult};
use crate::listing::{Bind, Compiled, Field, FieldKind};

/// Days an invitation link works.
pub const INVITATION_DAYS: i64 = 7;

/// Hours a password reset link works.
pub const RESET_HOURS: i64 = 24;

/// The roles, as the lists' `where` names them.
const ROLES: [&str; 3] = ["member", "admin", "owner"];

/// The fields of `where` and `sort` in lists of an organisation's users.
pub(crate) const MEMBER_FIELDS: &[Field] = &[
    Field { name: "$uri", column: "u.id", kind: FieldKind::Uri { collection: "users" }, sortable: true },
    Field { name: "email", column: "u.email", kind: FieldKind::Text, sortable: true },
    Field { name: "role", column: "u.role", kind: FieldKind::Enum(&ROLES), sortable: true },
    Field { name: "created_at", column: "u.created_at", kind: FieldKind::DateTime, sortable: true },
    Field {
        name: "disabled",
        column: "(CASE WHEN u.disabled_at IS NULL THEN 0 ELSE 1 END)",
        kind: FieldKind::Bool,
        sortable: true,
    },
    Field { name: "disabled_at", column: "u.disabled_at", kind: FieldKind::DateTime, sortable: true },
];

const MEMBERS: ListSpec = ListSpec {
    from: "users u LEFT JOIN password_links pl ON pl.user_id = u.id",
    columns: "u.id, u.email, u.role, u.created_at, u.disabled_at, u.disabled_by, \
              CAST(CASE WHEN u.password_hash IS NULL THEN 0 ELSE 1 END AS BIGINT) AS has_password, \
              pl.expires_at AS link_expires_at, \
              (SELECT MAX(s.last_seen_at) FROM sessions s WHERE s.user_id = u.id) AS last_seen_at",
    fields: MEMBER_FIELDS,
    default_order: "u.email ASC",
    tiebreak: "u.id ASC",
};

#[derive(sqlx::FromRow)]
struct MemberRow {
    id: String,
    email: String,
    role: String,
    created_at: String,
    disabled_at: Option<String>,
    disabled_by: Option<String>,
    has_password: i64,
    link_expires_at: Option<String>,
    last_seen_at: Option<String>,
}

impl MemberRow {
    fn role(&self) -> Role {
        Role::parse(&self.role).unwrap_or(Role::Member)
    }

    fn into_api(self) -> Member {
        let now = db::now();
        Member {
            uri: Ref::new("users", &self.id).uri,
            role: self.role(),
            email: self.email,
            created_at: self.created_at,
            disabled_at: self.disabled_at,
            disabled_by: self.disabled_by.map(|id| Ref::new("users", &id)),
            has_password: self.has_password != 0,
            link_expires_at: self.link_expires_at.filter(|e| *e > now),
            last_seen_at: self.last_seen_at,
        }
    }
}

/// Whether a user with role `actor` may manage a user of the same organisation with role
/// `target` (see [`Role::may_manage`]).
pub fn may_manage(actor: Role, target: Role) -> bool {
    actor.may_manage(target)
}

/// Whether a user with role `actor` may give `role` (see [`Role::may_give`]).
pub fn may_give(actor: Role, role: Role) -> bool {
    actor.may_give(role)
}

/// The caller, who must be an admin or owner of their organisation (else 403).
fn manager(caller: &Caller) -> ApiResult<&User> {
    let user = caller.require()?;
    if !user.manages_org() {
        return Err(ApiError::Forbidden(
            "only an admin or owner of your organisation manages its users; GET /api/v1/users lists \
             the people you may see"
                .into(),
        ));
    }
    Ok(user)
}

/// The organisation's users, as a condition on `users u`.
fn of_org(user: &User) -> Compiled {
    Compiled { sql: "u.organization_id = ?".into(), binds: vec![Bind::Text(user.organization_id.clone())] }
}

/// Whether `user` administers the organisation of the user `owner_id` (an admin or owner of
/// it): they see and act on that user's records as the owner would.
pub(crate) async fn administers(db: &Pool, user: &User, owner_id: &str) -> ApiResult<bool> {
    if !user.manages_org() || owner_id == user.id {
        return Ok(false);
    }
    let org: Option<String> =
        sqlx::query_scalar("SELECT organization_id FROM users WHERE id = $1").bind(owner_id).fetch_optional(db).await?;
    Ok(org.as_deref() == Some(user.organization_id.as_str()))
}

/// The caller's organisation.
pub async fn organization(state: &Store, caller: &Caller) -> ApiResult<Organization> {
    let user = caller.require()?;
    let (name, created_at, users, lab_name, logo): (String, String, i64, Option<String>, Option<String>) =
        sqlx::query_as(
            "SELECT o.name, o.created_at, (SELECT COUNT(*) FROM users u WHERE u.organization_id = o.id), o.lab_name, \
         o.logo_key \
         FROM organizations o WHERE o.id = $1",
        )
        .bind(&user.organization_id)
        .fetch_one(&state.db)
        .await?;
    Ok(Organization {
        uri: "/api/v1/organization".into(),
        name,
        created_at,
        role: user.role,
        users,
        lab_name,
        logo: logo.map(|_| "/api/v1/organization/logo".into()),
    })
}

/// One page of the caller's organisation's users (admins and owners only).
pub async fn list(state: &Store, caller: &Caller, q: &ListQuery<'_>) -> ApiResult<Found<Member>> {
    let user = manager(caller)?;
    let rows: Found<MemberRow> = records::list(&state.db, &MEMBERS, q, of_org(user), None).await?;
    Ok(rows.map(MemberRow::into_api))
}

/// The user `id` of the caller's organisation (404 if not in it).
async fn row(db: &Pool, user: &User, id: &str) -> ApiResult<MemberRow> {
    records::fetch_one(db, &MEMBERS, "u.id", id, of_org(user)).await?.ok_or_else(|| ApiError::not_found("user"))
}

/// The user `id` of the caller's organisation, as its admins see them.
pub async fn get(state: &Store, caller: &Caller, id: &str) -> ApiResult<Member> {
    let user = manager(caller)?;
    Ok(row(&state.db, user, id).await?.into_api())
}

/// The user `id` of the caller's organisation, whom the caller may manage: 404 if not in it,
/// 403 if themselves or above what the caller's role manages.
async fn managed(db: &Pool, caller: &Caller, id: &str, doing: &str) -> ApiResult<(User, MemberRow)> {
    let user = manager(caller)?.clone();
    let target = row(db, &user, id).await?;
    if target.id == user.id {
        return Err(ApiError::Forbidden(format!(
            "you may not {doing} yourself; another owner of your organisation, or the operator \
             (mgds admin user ...), may"
        )));
    }
    if !may_manage(user.role, target.role()) {
        return Err(ApiError::Forbidden(format!(
            "{} is an {} of your organisation; only an owner may {doing} them",
            target.email, target.role
        )));
    }
    Ok((user, target))
}

/// A key hash that no key has: the SHA-256 of random bytes nobody holds (an API key is looked
/// up by its hash, so no key opens the account until a new one is made).
pub(crate) fn unheld_key_hash() -> Vec<u8> {
    Sha256::digest(rand::random::<[u8; 32]>()).to_vec()
}

/// A new password link's secret and the hash kept of it.
fn new_link_secret() -> (String, Vec<u8>) {
    let token = hex::encode(rand::random::<[u8; 32]>());
    let hash = Sha256::digest(token.as_bytes()).to_vec();
    (token, hash)
}

/// The address of the page where a link's secret is used: the web UI reads it from the
/// fragment, which browsers never send to a server (nor to its logs).
pub fn link_url(public_url: &str, token: &str) -> String {
    format!("{}/#link={token}", public_url.trim_end_matches('/'))
}

/// Makes a password link of `kind` for `user_id` (replacing any open one), made by `by`.
async fn make_link(tx: &mut Tx, user_id: &str, kind: &str, by: Option<&str>) -> ApiResult<(String, String)> {
    let (token, hash) = new_link_secret();
    let now = Utc::now();
    let expires_at =
        ts(now + if kind == "invitation" { Duration::days(INVITATION_DAYS) } else { Duration::hours(RESET_HOURS) });
    sqlx::query("DELETE FROM password_links WHERE user_id = $1").bind(user_id).execute(&mut **tx).await?;
    sqlx::query(
        "INSERT INTO password_links (user_id, token_hash, kind, created_by, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(user_id)
    .bind(&hash)
    .bind(kind)
    .bind(by)
    .bind(ts(now))
    .bind(&expires_at)
    .execute(&mut **tx)
    .await?;
    Ok((token, expires_at))
}

/// Checks the shape of an e-mail address for a new account.
pub fn check_email(email: &str) -> ApiResult<String> {
    let e = email.trim();
    let plausible = e.split_once('@').is_some_and(|(local, host)| !local.is_empty() && !host.is_empty())
        && !e.contains(char::is_whitespace)
        && e.len() <= 254;
    if !plausible {
        return Err(ApiError::BadRequest(format!("email: {e:?} does not look like an e-mail address")));
    }
    Ok(e.to_string())
}

/// Adds a user to the caller's organisation with `role` (a member if not given), and makes
/// their invitation link: they choose a password there. Their API key is made on their account
/// page once signed in.
pub async fn invite(state: &Store, caller: &Caller, req: &MemberInvite, public_url: &str) -> ApiResult<PasswordLink> {
    let user = manager(caller)?;
    let role = req.role.unwrap_or(Role::Member);
    if !may_give(user.role, role) {
        return Err(ApiError::Forbidden(format!("only an owner of your organisation may add an {role}")));
    }
    let email = check_email(&req.email)?;
    let org: String = sqlx::query_scalar("SELECT name FROM organizations WHERE id = $1")
        .bind(&user.organization_id)
        .fetch_one(&state.db)
        .await?;
    // A key nobody holds: the invited user signs in with the password they choose.
    let unheld = unheld_key_hash();
    let id = users::insert(&state.db, &email, &org, role, &unheld)
        .await?
        .ok_or_else(|| ApiError::Conflict(format!("{email} already has an account on this service")))?;
    let mut tx = begin_write(&state.db, Scope::User(&id)).await?;
    let (token, expires_at) = make_link(&mut tx, &id, "invitation", Some(&user.id)).await?;
    let entry = super::audit::Entry::new("user.invited", "user", &id, &id).with(
        serde_json::json!({"email": users::stored_email(&email), "role": role.as_str(), "expires_at": expires_at}),
    );
    super::audit::record(&mut tx, Some(user), entry).await?;
    tx.commit().await?;
    tracing::info!(by = %user.id, user = %id, role = %role, "user invited");
    Ok(PasswordLink {
        user: row(&state.db, user, &id).await?.into_api(),
        url: link_url(public_url, &token),
        expires_at,
    })
}

/// Makes a password reset link for the user `id` of the caller's organisation (a new invitation
/// if they never chose a password). Their password stays until the link is used; then their
/// sessions end.
pub async fn reset_link(state: &Store, caller: &Caller, id: &str, public_url: &str) -> ApiResult<PasswordLink> {
    let (user, _) = managed(&state.db, caller, id, "reset the password of").await?;
    let lock = Scope::Row("organizations", &user.organization_id);
    let mut tx = begin_write(&state.db, lock).await?;
    let result = async {
        let tx = &mut tx;
        let (user, target) = managed_now(tx, &user, id, "reset the password of").await?;
        if target.disabled_at.is_some() {
            return Err(ApiError::BadRequest(format!("{} is disabled: enable the account first", target.email)));
        }
        // Someone who never chose a password gets a new invitation instead.
        let kind = if target.has_password != 0 { "reset" } else { "invitation" };
        let (token, expires_at) = make_link(tx, id, kind, Some(&user.id)).await?;
        let entry = super::audit::Entry::new("user.password_link_made", "user", id, id)
            .with(serde_json::json!({"kind": kind, "expires_at": expires_at}));
        super::audit::record(tx, Some(&user), entry).await?;
        Ok((user, token, expires_at))
    }
    .await;
    let (user, token, expires_at) = db::finish(tx, result).await?;
    tracing::info!(by = %user.id, user = %id, "password reset link made");
    Ok(PasswordLink {
        user: row(&state.db, &user, id).await?.into_api(),
        url: link_url(public_url, &token),
        expires_at,
    })
}

/// A password link for the user `id` made by the operator: an invitation if they never had a
/// password, else a reset. Answers its address and when it ends.
pub(crate) async fn operator_link(db: &Pool, id: &str, public_url: &str) -> ApiResult<(String, String)> {
    let has_password: Option<String> =
        sqlx::query_scalar("SELECT password_hash FROM users WHERE id = $1").bind(id).fetch_one(db).await?;
    let kind = if has_password.is_some() { "reset" } else { "invitation" };
    let mut tx = begin_write(db, Scope::User(id)).await?;
    let (token, expires_at) = make_link(&mut tx, id, kind, None).await?;
    tx.commit().await?;
    Ok((link_url(public_url, &token), expires_at))
}

/// What [`cut_off`] stopped.
#[derive(Debug, Default, Clone, Copy)]
pub struct CutOff {
    /// Browser sessions ended.
    pub sessions: u64,
    /// Uploads not yet confirmed that were canceled.
    pub uploads: usize,
}

/// Stops what a user holds, in `tx`: their download addresses (the key epoch moves on), their
/// sessions, their password link, and their uploads not yet confirmed (their forms and S3
/// credentials; the caller purges their files and store keys after the commit with
/// [`super::deletes::purge`]). With `key_hash`, their API key is replaced too.
pub(crate) async fn cut_off(tx: &mut Tx, user_id: &str, key_hash: Option<&[u8]>) -> ApiResult<CutOff> {
    match key_hash {
        Some(hash) => {
            sqlx::query("UPDATE users SET key_hash = $1, key_epoch = key_epoch + 1 WHERE id = $2")
                .bind(hash)
                .bind(user_id)
                .execute(&mut **tx)
                .await?
        }
        None => {
            sqlx::query("UPDATE users SET key_epoch = key_epoch + 1 WHERE id = $1")
                .bind(user_id)
                .execute(&mut **tx)
                .await?
        }
    };
    let sessions =
        sqlx::query("DELETE FROM sessions WHERE user_id = $1").bind(user_id).execute(&mut **tx).await?.rows_affected();
    sqlx::query("DELETE FROM password_links WHERE user_id = $1").bind(user_id).execute(&mut **tx).await?;
    let uploads = super::deletes::cancel_open_uploads(tx, user_id).await?;
    Ok(CutOff { sessions, uploads })
}

/// Disables or enables the user `id` in `tx`, as `by` (`None`: the operator). Disabling cuts
/// them off (see [`cut_off`]); enabling clears the mark. Answers what disabling stopped.
async fn set_disabled_in(tx: &mut Tx, id: &str, disabled: bool, by: Option<&str>) -> ApiResult<CutOff> {
    if disabled {
        let already: Option<String> =
            sqlx::query_scalar("SELECT disabled_at FROM users WHERE id = $1").bind(id).fetch_one(&mut **tx).await?;
        if already.is_none() {
            sqlx::query("UPDATE users SET disabled_at = $1, disabled_by = $2 WHERE id = $3")
                .bind(db::now())
                .bind(by)
                .bind(id)
                .execute(&mut **tx)
                .await?;
        }
        cut_off(tx, id, None).await
    } else {
        sqlx::query("UPDATE users SET disabled_at = NULL, disabled_by = NULL WHERE id = $1")
            .bind(id)
            .execute(&mut **tx)
            .await?;
        Ok(CutOff::default())
    }
}

/// Sets the role of the user `id` in `tx`. Their open password link ends: it was made by
/// someone who managed them in their former role.
pub(crate) async fn set_role_in(tx: &mut Tx, id: &str, role: Role) -> ApiResult<()> {
    sqlx::query("UPDATE users SET role = $1 WHERE id = $2").bind(role.as_str()).bind(id).execute(&mut **tx).await?;
    sqlx::query("DELETE FROM password_links WHERE user_id = $1").bind(id).execute(&mut **tx).await?;
    Ok(())
}

/// The organisation of the user `id`. Changes to an organisation's people lock it and take
/// turns, so that each is checked against what the others did (two owners demoting each other
/// at once cannot leave it without one).
async fn organization_id_of(db: &Pool, id: &str) -> ApiResult<String> {
    sqlx::query_scalar("SELECT organization_id FROM users WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| ApiError::not_found("user"))
}

/// The operator disables or enables the user `id`.
pub(crate) async fn set_disabled(db: &Pool, id: &str, disabled: bool, by: Option<&str>) -> ApiResult<CutOff> {
    let org = organization_id_of(db, id).await?;
    let mut tx = begin_write(db, Scope::Row("organizations", &org)).await?;
    let result = async {
        let tx = &mut tx;
        let stopped = set_disabled_in(tx, id, disabled, by).await?;
        let action = if disabled { "user.disabled" } else { "user.enabled" };
        super::audit::record(tx, None, super::audit::Entry::new(action, "user", id, id)).await?;
        Ok(stopped)
    }
    .await;
    db::finish(tx, result).await
}

/// The operator sets the role of the user `id`.
pub(crate) async fn set_role(db: &Pool, id: &str, role: Role) -> ApiResult<()> {
    let org = organization_id_of(db, id).await?;
    let mut tx = begin_write(db, Scope::Row("organizations", &org)).await?;
    let result = async {
        let tx = &mut tx;
        let before: String =
            sqlx::query_scalar("SELECT role FROM users WHERE id = $1").bind(id).fetch_one(&mut **tx).await?;
        set_role_in(tx, id, role).await?;
        let entry = super::audit::Entry::new("user.role_changed", "user", id, id)
            .with(serde_json::json!({"role": [before, role.as_str()]}));
        super::audit::record(tx, None, entry).await
    }
    .await;
    db::finish(tx, result).await
}

/// Changes the role of the user `id` of the caller's organisation, or disables or enables
/// them. Checked again once the organisation is locked: the caller's role and the target's as
/// they are then.
pub async fn update(state: &Store, caller: &Caller, id: &str, req: &MemberUpdate) -> ApiResult<Member> {
    if req.role.is_none() && req.disabled.is_none() {
        return Err(ApiError::BadRequest("give a role, or disabled (true or false)".into()));
    }
    let doing = if req.role.is_some() { "change the role of" } else { "disable or enable" };
    let (user, _) = managed(&state.db, caller, id, doing).await?;
    let lock = Scope::Row("organizations", &user.organization_id);
    let mut tx = begin_write(&state.db, lock).await?;
    let result = async {
        let tx = &mut tx;
        let (user, target) = managed_now(tx, &user, id, doing).await?;
        let mut disabled_now = false;
        if let Some(role) = req.role
            && role != target.role()
        {
            if !may_give(user.role, role) {
                return Err(ApiError::Forbidden(format!(
                    "only an owner of your organisation may make someone an {role}"
                )));
            }
            set_role_in(tx, id, role).await?;
            let entry = super::audit::Entry::new("user.role_changed", "user", id, id)
                .with(serde_json::json!({"role": [target.role, role.as_str()]}));
            super::audit::record(tx, Some(&user), entry).await?;
            tracing::info!(by = %user.id, user = %id, role = %role, "role changed");
        }
        if let Some(disabled) = req.disabled
            && disabled != target.disabled_at.is_some()
        {
            if !disabled && let Some(by) = &target.disabled_by {
                let by_role: Option<String> =
                    sqlx::query_scalar("SELECT role FROM users WHERE id = $1").bind(by).fetch_optional(&mut **tx).await?;
                if let Some(by_role) = by_role.as_deref().and_then(Role::parse)
                    && !may_manage(user.role, by_role)
                    && by != &user.id
                {
                    return Err(ApiError::Forbidden(format!(
                        "{} was disabled by an {by_role} of your organisation; only an owner may enable them again",
                        target.email
                    )));
                }
            }
            let stopped = set_disabled_in(tx, id, disabled, Some(&user.id)).await?;
            let action = if disabled { "user.disabled" } else { "user.enabled" };
            let entry = super::audit::Entry::new(action, "user", id, id)
                .with(serde_json::json!({"sessions_ended": stopped.sessions, "uploads_canceled": stopped.uploads}));
            super::audit::record(tx, Some(&user), entry).await?;
            disabled_now = disabled;
            tracing::info!(by = %user.id, user = %id, disabled, sessions = stopped.sessions, uploads = stopped.uploads, "account disabled or enabled");
        }
        Ok((user, disabled_now))
    }
    .await;
    let (user, disabled_now) = db::finish(tx, result).await?;
    if disabled_now {
        super::deletes::purge(state).await?;
    }
    Ok(row(&state.db, &user, id).await?.into_api())
}

/// [`managed`] again once the organisation is locked, read in `tx` (on SQLite, a read on
/// another connection while the write lock is held could wait for a new connection that
/// itself waits for the lock): the caller as they are now (still enabled, their role now),
/// and the target as they are now.
async fn managed_now(tx: &mut Tx, user: &User, id: &str, doing: &str) -> ApiResult<(User, MemberRow)> {
    let sql = format!("SELECT {} FROM users u WHERE u.id = $1", super::caller::USER_COLUMNS);
    let now: Option<super::caller::UserRow> =
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(&user.id).fetch_optional(&mut **tx).await?;
    let Some(mut now) = now.and_then(super::caller::UserRow::enabled) else {
        return Err(ApiError::Unauthorized("your account was disabled meanwhile".into()));
    };
    now.origin = user.origin.clone();
    if !now.manages_org() {
        return Err(ApiError::Forbidden("your role in the organisation changed meanwhile".into()));
    }
    let sql = format!("SELECT {} FROM {} WHERE u.id = $1 AND u.organization_id = $2", MEMBERS.columns, MEMBERS.from);
    let target: MemberRow = sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(&now.organization_id)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or_else(|| ApiError::not_found("user"))?;
    if target.id == now.id || !may_manage(now.role, target.role()) {
        return Err(ApiError::Forbidden(format!(
            "you may no longer {doing} {}: their role or yours changed meanwhile",
            target.email
        )));
    }
    Ok((now, target))
}

/// Revokes the API key and ends the sessions of the user `id` of the caller's organisation
/// (for a key or a laptop that may have been lost): they sign in with their password, or a
/// reset link, and make a new key on their account page.
pub async fn revoke(state: &Store, caller: &Caller, id: &str) -> ApiResult<Revoked> {
    let (user, _) = managed(&state.db, caller, id, "revoke the keys of").await?;
    let stopped = revoke_credentials(state, Some(&user), id).await?;
    tracing::info!(by = %user.id, user = %id, "API key and sessions revoked");
    Ok(Revoked { sessions: stopped.sessions as i64, canceled_uploads: stopped.uploads as i64 })
}

/// Replaces the API key of the user `id` with one nobody holds and cuts them off, as `by`
/// (`None`: the operator), who is checked again once the organisation is locked.
pub(crate) async fn revoke_credentials(state: &Store, by: Option<&User>, id: &str) -> ApiResult<CutOff> {
    let unheld = unheld_key_hash();
    let org = organization_id_of(&state.db, id).await?;
    let mut tx = begin_write(&state.db, Scope::Row("organizations", &org)).await?;
    let result = async {
        let tx = &mut tx;
        let by = match by {
            Some(user) => Some(managed_now(tx, user, id, "revoke the keys of").await?.0),
            None => None,
        };
        let stopped = cut_off(tx, id, Some(&unheld)).await?;
        let entry = super::audit::Entry::new("user.keys_revoked", "user", id, id)
            .with(serde_json::json!({"sessions_ended": stopped.sessions, "uploads_canceled": stopped.uploads}));
        super::audit::record(tx, by.as_ref(), entry).await?;
        Ok(stopped)
    }
    .await;
    let stopped = db::finish(tx, result).await?;
    super::deletes::purge(state).await?;
    Ok(stopped)
}

/// The open link whose secret is `token`: its user and kind.
async fn open_link(db: &Pool, token: &str) -> ApiResult<Option<(String, String, String)>> {
    if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    let hash = Sha256::digest(token.as_bytes()).to_vec();
    let row: Option<(String, String, String)> = sqlx::query_as(
        "SELECT pl.user_id, pl.kind, pl.expires_at FROM password_links pl JOIN users u ON u.id = pl.user_id \
         WHERE pl.token_hash = $1 AND u.disabled_at IS NULL",
    )
    .bind(&hash)
    .fetch_optional(db)
    .await?;
    Ok(row.filter(|(_, _, expires)| *expires > db::now()))
}

fn link_gone() -> ApiError {
    ApiError::NotFound(
        "this link has ended: it was used, replaced by a newer one, or is past its time; ask an admin \
         of your organisation for a new one"
            .into(),
    )
}

/// What the link whose secret is `token` is for.
pub async fn link_info(db: &Pool, token: &str) -> ApiResult<PasswordLinkInfo> {
    let (user_id, kind, expires_at) = open_link(db, token).await?.ok_or_else(link_gone)?;
    let (email, organization): (String, String) = sqlx::query_as(
        "SELECT u.email, o.name FROM users u JOIN organizations o ON o.id = u.organization_id WHERE u.id = $1",
    )
    .bind(&user_id)
    .fetch_one(db)
    .await?;
    Ok(PasswordLinkInfo { email, organization, kind, expires_at })
}

/// Uses the link whose secret is `token`: the user's password becomes `password`, their
/// sessions end, and the link ends. Answers the user, to sign in.
pub async fn use_link(db: &Pool, token: &str, password: &str) -> ApiResult<User> {
    super::sessions::check_new_password(password)?;
    let (user_id, _, _) = open_link(db, token).await?.ok_or_else(link_gone)?;
    // The link's maker must still manage the user as they are now (a member's link made by an
    // admin ends if the member became an admin; set_role also removes it).
    let made_by: Option<(Option<String>, String)> = sqlx::query_as(
        "SELECT pl.created_by, u.role FROM password_links pl JOIN users u ON u.id = pl.user_id WHERE pl.user_id = $1",
    )
    .bind(&user_id)
    .fetch_optional(db)
    .await?;
    if let Some((Some(maker), role)) = made_by {
        let maker_role: Option<(String, Option<String>)> =
            sqlx::query_as("SELECT role, disabled_at FROM users WHERE id = $1").bind(&maker).fetch_optional(db).await?;
        let still = maker_role.is_some_and(|(r, disabled)| {
            disabled.is_none()
                && Role::parse(&r).zip(Role::parse(&role)).is_some_and(|(maker, target)| maker.may_manage(target))
        });
        if !still {
            return Err(link_gone());
        }
    }
    let hash = super::sessions::hash_password(password).await?;
    let mut tx = begin_write(db, Scope::User(&user_id)).await?;
    let result = async {
        let tx = &mut tx;
        // The link is taken in the same transaction: of two requests using it at once, one wins.
        let used = sqlx::query("DELETE FROM password_links WHERE token_hash = $1 AND user_id = $2 AND expires_at > $3")
            .bind(Sha256::digest(token.as_bytes()).to_vec())
            .bind(&user_id)
            .bind(db::now())
            .execute(&mut **tx)
            .await?;
        if used.rows_affected() == 0 {
            return Err(link_gone());
        }
        sqlx::query("UPDATE users SET password_hash = $1 WHERE id = $2")
            .bind(&hash)
            .bind(&user_id)
            .execute(&mut **tx)
            .await?;
        sqlx::query("DELETE FROM sessions WHERE user_id = $1").bind(&user_id).execute(&mut **tx).await?;
        let entry = super::audit::Entry::new("user.password_set_by_link", "user", &user_id, &user_id);
        super::audit::record(tx, None, entry).await
    }
    .await;
    db::finish(tx, result).await?;
    super::caller::by_id(db, &user_id).await?.ok_or_else(link_gone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_read_from_the_fragment() {
        assert_eq!(link_url("https://mgds.lab.org/", "ab"), "https://mgds.lab.org/#link=ab");
        assert_eq!(link_url("https://lab.org/mgds", "ab"), "https://lab.org/mgds/#link=ab");
    }

    #[test]
    fn new_accounts_need_an_address() {
        assert!(check_email("a@lab.org").is_ok());
        assert!(check_email(" a@lab.org ").is_ok());
        assert!(check_email("lab.org").is_err());
        assert!(check_email("a b@lab.org").is_err());
        assert!(check_email("@lab.org").is_err());
    }
}
