//! Users linked to a single sign-on provider's accounts, and sign-ins at a provider under way.
//!
//! - A user is found by the provider's issuer and the account's subject, which the provider
//!   never reassigns; an e-mail address may change hands, so it links an existing account only
//!   where the configuration allows it, only when the provider says the address is verified,
//!   and only on the first sign-in (the link is then by subject).
//! - A new user is made where the configuration places them (an organisation and a role); the
//!   API key they get is one nobody holds (they sign in at the provider; a key for scripts is
//!   made on the account page).
//! - At each sign-in, the role the configured claims give is set (an owner stays an owner: that
//!   role is the operator's to give or take). A user in another organisation than the claims
//!   place them in is refused rather than moved, since their records stay where they are.

use chrono::{Duration, Utc};
use mgds_api::Role;
use sha2::{Digest, Sha256};

use super::caller::{USER_COLUMNS, User, UserRow};
use super::db::{self, Pool, Scope, Tx, begin_write, ts};
use crate::error::{ApiError, ApiResult};

/// Minutes a sign-in at a provider may take, from leaving MGDS to coming back.
pub const SIGN_IN_MINUTES: i64 = 10;

/// What a sign-in knows of the provider's account.
#[derive(Debug, Clone)]
pub struct Account<'a> {
    /// The provider's issuer.
    pub issuer: &'a str,
    /// The account's subject there.
    pub subject: &'a str,
    /// The e-mail address the provider gives, verified or not.
    pub email: Option<&'a str>,
    /// Whether the provider says the address is verified.
    pub email_verified: bool,
}

/// Where the configuration places a user.
#[derive(Debug, Clone, PartialEq)]
pub enum Placement {
    /// In the organisation of this name, with this role (a rule matched).
    In(String, Role),
    /// No rule matched, and new users go to this organisation as members; an existing user
    /// stays as they are (a role given by hand is kept).
    ByDefault(String),
    /// Nowhere: the configuration has rules and none matched the claims.
    Nowhere,
    /// The configuration says nothing (no rules and no default organisation).
    Unsaid,
}

/// What a sign-in may do with an account it does not know.
#[derive(Debug, Clone, Copy)]
pub struct Linking {
    /// Link an existing user with the same verified e-mail address.
    pub by_verified_email: bool,
}

/// The user linked to `issuer` and `subject`, and whether their account is disabled.
pub async fn find(db: &Pool, issuer: &str, subject: &str) -> ApiResult<Option<(User, bool)>> {
    let sql = format!(
        "SELECT {USER_COLUMNS} FROM user_identities i JOIN users u ON u.id = i.user_id \
         WHERE i.issuer = $1 AND i.subject = $2"
    );
    let row: Option<UserRow> =
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(issuer).bind(subject).fetch_optional(db).await?;
    Ok(row.map(|r| {
        let disabled = r.disabled();
        (r.user(), disabled)
    }))
}

/// Signs in the provider's `account`: the user linked to it, linked now or made now as
/// [`Linking`] and `placement` allow, with the role `placement` gives. Refusals say what to do.
pub async fn sign_in(
    db: &Pool,
    account: &Account<'_>,
    placement: &Placement,
    linking: Linking,
    provider_name: &str,
) -> ApiResult<User> {
    let mut tx = begin_write(db, Scope::Named("users")).await?;
    let result = sign_in_in(&mut tx, account, placement, linking, provider_name).await;
    db::finish(tx, result).await
}

async fn sign_in_in(
    tx: &mut Tx,
    account: &Account<'_>,
    placement: &Placement,
    linking: Linking,
    provider: &str,
) -> ApiResult<User> {
    let now = db::now();
    let linked: Option<String> =
        sqlx::query_scalar("SELECT user_id FROM user_identities WHERE issuer = $1 AND subject = $2")
            .bind(account.issuer)
            .bind(account.subject)
            .fetch_optional(&mut **tx)
            .await?;
    let user_id = match linked {
        Some(id) => id,
        None => {
            let id = link_or_make(tx, account, placement, linking, provider).await?;
            sqlx::query(
                "INSERT INTO user_identities (issuer, subject, user_id, email, created_at, last_signed_in_at) \
                 VALUES ($1, $2, $3, $4, $5, $5)",
            )
            .bind(account.issuer)
            .bind(account.subject)
            .bind(&id)
            .bind(account.email)
            .bind(&now)
            .execute(&mut **tx)
            .await?;
            id
        }
    };
    sqlx::query("UPDATE user_identities SET last_signed_in_at = $1, email = $2 WHERE issuer = $3 AND subject = $4")
        .bind(&now)
        .bind(account.email)
        .bind(account.issuer)
        .bind(account.subject)
        .execute(&mut **tx)
        .await?;
    let sql = format!(
        "SELECT {USER_COLUMNS}, o.name AS organization_name FROM users u JOIN organizations o ON o.id = u.organization_id WHERE u.id = $1"
    );
    #[derive(sqlx::FromRow)]
    struct Row {
        #[sqlx(flatten)]
        user: UserRow,
        organization_name: String,
    }
    let row: Row = sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(&user_id).fetch_one(&mut **tx).await?;
    if row.user.disabled() {
        return Err(ApiError::Forbidden(
            "your MGDS account is disabled; ask an admin of your organisation to enable it again".into(),
        ));
    }
    let mut user = row.user.user();
    match placement {
        Placement::In(org, role) if *org != row.organization_name => {
            return Err(ApiError::Forbidden(format!(
                "{provider} places you in the organisation \"{org}\", but your MGDS account is in \"{}\"; \
                 ask your lab's IT to change the group you are in, or the operator to move your account",
                row.organization_name
            )));
        }
        Placement::In(_, role) if *role != user.role && user.role != Role::Owner => {
            let before = user.role;
            super::members::set_role_in(tx, &user.id, *role).await?;
            let entry = super::audit::Entry::new("user.role_changed", "user", &user.id, &user.id)
                .with(serde_json::json!({"role": [before.as_str(), role.as_str()], "by": "single sign-on claims"}));
            super::audit::record(tx, None, entry).await?;
            user.role = *role;
        }
        Placement::Nowhere => return Err(placed_nowhere(provider)),
        _ => {}
    }
    Ok(user)
}

/// The user a provider's account is linked to on its first sign-in: an existing user with its
/// verified e-mail address where allowed, else a new one where the configuration places it.
async fn link_or_make(
    tx: &mut Tx,
    account: &Account<'_>,
    placement: &Placement,
    linking: Linking,
    provider: &str,
) -> ApiResult<String> {
    let Some(email) = account.email.map(str::trim).filter(|e| !e.is_empty()) else {
        return Err(ApiError::Forbidden(format!(
            "{provider} did not give an e-mail address for your account; ask your lab's IT to release the \
             `email` claim to MGDS"
        )));
    };
    let stored = super::users::stored_email(email);
    let existing: Option<String> =
        sqlx::query_scalar("SELECT id FROM users WHERE email = $1").bind(&stored).fetch_optional(&mut **tx).await?;
    if let Some(id) = existing {
        let already: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM user_identities WHERE issuer = $1 AND user_id = $2")
                .bind(account.issuer)
                .bind(&id)
                .fetch_one(&mut **tx)
                .await?;
        if linking.by_verified_email && account.email_verified && already == 0 {
            let entry = super::audit::Entry::new("user.identity_linked", "user", &id, &id)
                .with(serde_json::json!({"issuer": account.issuer, "subject": account.subject, "email": email}));
            super::audit::record(tx, None, entry).await?;
            return Ok(id);
        }
        let why = if already > 0 {
            "it is linked to another account there already"
        } else if !linking.by_verified_email {
            "this service does not link accounts by e-mail address"
        } else {
            "the provider does not say the address is verified"
        };
        return Err(ApiError::Conflict(format!(
            "an MGDS account with the address {email} exists, but it cannot be joined to your {provider} account: \
             {why}. Ask the operator of this service"
        )));
    }
    if !account.email_verified {
        return Err(ApiError::Forbidden(format!(
            "{provider} does not say your e-mail address ({email}) is verified, and MGDS makes accounts only for \
             verified addresses (others could take a colleague's); verify it there, or ask your lab's IT"
        )));
    }
    let (organization, role) = match placement {
        Placement::In(org, role) => (org.as_str(), *role),
        Placement::ByDefault(org) => (org.as_str(), Role::Member),
        Placement::Nowhere => return Err(placed_nowhere(provider)),
        Placement::Unsaid => {
            return Err(ApiError::Forbidden(format!(
                "there is no MGDS account for your {provider} account ({email}), and this service does not make \
                 one: ask an admin of your organisation to invite you"
            )));
        }
    };
    let id = super::users::insert_in(tx, email, organization, role, &super::members::unheld_key_hash())
        .await?
        .ok_or_else(|| ApiError::Conflict(format!("an MGDS account with the address {email} exists")))?;
    let entry = super::audit::Entry::new("user.created", "user", &id, &id).with(serde_json::json!({
        "email": email, "role": role.as_str(), "organization": organization,
        "by": "single sign-on", "issuer": account.issuer,
    }));
    super::audit::record(tx, None, entry).await?;
    Ok(id)
}

/// The refusal of a user the configured claims place nowhere.
fn placed_nowhere(provider: &str) -> ApiError {
    ApiError::Forbidden(format!(
        "your {provider} account is in no group that this MGDS service lets in; \
         ask your lab's IT to add you to the right group"
    ))
}

/// A sign-in at the provider under way, as its browser comes back with it.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The PKCE verifier.
    pub verifier: String,
    /// The nonce the ID token must carry.
    pub nonce: String,
    /// The service's path to show after signing in.
    pub return_to: String,
}

fn state_hash(state: &str) -> Vec<u8> {
    Sha256::digest(state.as_bytes()).to_vec()
}

/// The most sign-ins under way at once, past which new ones wait (answered 429): a flood of
/// sign-ins begun and never finished cannot fill the database.
pub const MAX_SIGN_INS_UNDER_WAY: i64 = 10_000;

/// Remembers a sign-in under way for [`SIGN_IN_MINUTES`], by its `state`.
pub async fn begin(db: &Pool, state: &str, pending: &Pending) -> ApiResult<()> {
    sqlx::query("DELETE FROM sso_sign_ins WHERE created_at < $1")
        .bind(ts(Utc::now() - Duration::minutes(SIGN_IN_MINUTES)))
        .execute(db)
        .await?;
    let under_way: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sso_sign_ins").fetch_one(db).await?;
    if under_way >= MAX_SIGN_INS_UNDER_WAY {
        return Err(ApiError::TooManyRequests(60));
    }
    sqlx::query(
        "INSERT INTO sso_sign_ins (state_hash, verifier, nonce, return_to, created_at) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(state_hash(state))
    .bind(&pending.verifier)
    .bind(&pending.nonce)
    .bind(&pending.return_to)
    .bind(db::now())
    .execute(db)
    .await?;
    Ok(())
}

/// The sign-in under way of `state`, taken (it is used once); `None` if unknown or too old.
pub async fn take(db: &Pool, state: &str) -> ApiResult<Option<Pending>> {
    let hash = state_hash(state);
    let row: Option<(String, String, String, String)> = sqlx::query_as(
        "DELETE FROM sso_sign_ins WHERE state_hash = $1 RETURNING verifier, nonce, return_to, created_at",
    )
    .bind(&hash)
    .fetch_optional(db)
    .await?;
    let Some((verifier, nonce, return_to, created_at)) = row else { return Ok(None) };
    if created_at < ts(Utc::now() - Duration::minutes(SIGN_IN_MINUTES)) {
        return Ok(None);
    }
    Ok(Some(Pending { verifier, nonce, return_to }))
}
