//! The lab as its reports show it: its name on the covers (the organisation's own name unless
//! set; the organisation's name itself never changes here, as users are placed in an
//! organisation by it) and its logo, set by its admins and owners (MGDS additions). The logo is an object in the store (its key in
//! `organizations.logo_key`, a new key each time, the old object removed once the new one is
//! recorded), checked before it is kept: a PNG, JPEG or SVG picture of at most 2 MiB that a
//! report can typeset (`mgds_report::check_logo`, on a blocking thread).

use bytes::Bytes;
use mgds_api::{MAX_ORGANIZATION_NAME_CHARS, Organization, OrganizationUpdate};
use serde_json::json;

use super::caller::{Caller, User};
use super::db::{self, new_id};
use super::handle::Store;
use crate::error::{ApiError, ApiResult};

/// The caller, who must be an admin or owner of their organisation.
fn manager(caller: &Caller) -> ApiResult<&User> {
    let user = caller.require()?;
    if !user.manages_org() {
        return Err(ApiError::Forbidden(
            "only an admin or owner of your organisation changes its name and logo".into(),
        ));
    }
    Ok(user)
}

/// Sets the lab's name on the caller's organisation's reports (empty: its own name again).
/// The organisation's own name stays: users are placed in it by that name.
pub async fn update(state: &Store, caller: &Caller, req: &OrganizationUpdate) -> ApiResult<Organization> {
    let user = manager(caller)?;
    if let Some(name) = &req.lab_name {
        let name = name.trim();
        if name.chars().count() > MAX_ORGANIZATION_NAME_CHARS {
            return Err(ApiError::BadRequest(format!(
                "lab_name: give the lab a name of at most {MAX_ORGANIZATION_NAME_CHARS} characters"
            )));
        }
        if name.chars().any(char::is_control) {
            return Err(ApiError::BadRequest("lab_name: the lab's name is one line of text".into()));
        }
        let next = Some(name).filter(|n| !n.is_empty());
        let scope = db::Scope::Row("organizations", &user.organization_id);
        let mut tx = db::begin_write(&state.db, scope).await?;
        let result = async {
            let before: Option<String> = sqlx::query_scalar("SELECT lab_name FROM organizations WHERE id = $1")
                .bind(&user.organization_id)
                .fetch_one(&mut *tx)
                .await?;
            if before.as_deref() != next {
                sqlx::query("UPDATE organizations SET lab_name = $1 WHERE id = $2")
                    .bind(next)
                    .bind(&user.organization_id)
                    .execute(&mut *tx)
                    .await?;
                let entry =
                    super::audit::Entry::new("organization.updated", "organization", &user.organization_id, &user.id)
                        .with(json!({"lab_name": [before, next]}));
                super::audit::record(&mut tx, Some(user), entry).await?;
            }
            Ok(())
        }
        .await;
        db::finish(tx, result).await?;
    }
    super::members::organization(state, caller).await
}

/// The logo's key of organisation `org`, if it has one.
async fn logo_key(state: &Store, org: &str) -> ApiResult<Option<String>> {
    Ok(sqlx::query_scalar::<_, Option<String>>("SELECT logo_key FROM organizations WHERE id = $1")
        .bind(org)
        .fetch_optional(&state.db)
        .await?
        .flatten())
}

/// The logo of organisation `org` (its bytes), if it has one.
pub async fn logo_of(state: &Store, org: &str) -> ApiResult<Option<Bytes>> {
    let Some(key) = logo_key(state, org).await? else { return Ok(None) };
    state.storage.read(&key).await.map_err(ApiError::internal)
}

/// The caller's organisation's logo and its media type (any of its users).
pub async fn logo(state: &Store, caller: &Caller) -> ApiResult<(Bytes, &'static str)> {
    let user = caller.require()?;
    let bytes = logo_of(state, &user.organization_id).await?.ok_or_else(|| {
        ApiError::NotFound("your organisation has no logo (an admin sets one: PUT this address)".into())
    })?;
    let mime = mgds_report::picture_mime(&bytes);
    Ok((bytes, mime))
}

/// Sets the caller's organisation's logo to `bytes`, once checked.
pub async fn set_logo(state: &Store, caller: &Caller, bytes: Bytes) -> ApiResult<Organization> {
    let user = manager(caller)?;
    let checked = bytes.clone();
    let kind = tokio::task::spawn_blocking(move || mgds_report::check_logo(&checked))
        .await
        .map_err(ApiError::internal)?
        .map_err(|e| match e {
            mgds_report::Error::TooLarge(why) => ApiError::PayloadTooLarge(format!("the logo is too large: {why}")),
            mgds_report::Error::Logo => {
                ApiError::Unprocessable("the file is not a PNG, JPEG or SVG picture: choose one of those".into())
            }
            mgds_report::Error::Typeset(why) => ApiError::Unprocessable(format!(
                "{why}: choose a PNG, JPEG or SVG picture that opens in an image viewer"
            )),
        })?;
    let key = format!("organizations/{}/logo-{}.{kind}", user.organization_id, new_id());
    state.storage.put(&key, bytes.clone()).await.map_err(ApiError::internal)?;
    let entry = super::audit::Entry::new("organization.logo_set", "organization", &user.organization_id, &user.id)
        .with(json!({"kind": kind, "bytes": bytes.len()}));
    match swap_logo(state, user, Some(&key), entry).await {
        Ok(before) => super::deletes::remove_queued(state, &before.into_iter().collect::<Vec<_>>()).await,
        Err(e) => {
            forget(state, &key).await;
            return Err(e);
        }
    }
    super::members::organization(state, caller).await
}

/// Removes the caller's organisation's logo (reports show its name alone).
pub async fn remove_logo(state: &Store, caller: &Caller) -> ApiResult<Organization> {
    let user = manager(caller)?;
    if logo_key(state, &user.organization_id).await?.is_some() {
        let entry =
            super::audit::Entry::new("organization.logo_removed", "organization", &user.organization_id, &user.id);
        let before = swap_logo(state, user, None, entry).await?;
        super::deletes::remove_queued(state, &before.into_iter().collect::<Vec<_>>()).await;
    }
    super::members::organization(state, caller).await
}

/// Points the user's organisation at the logo `key` (none: no logo), with `entry` in the audit
/// trail, in one transaction; the key it named before.
async fn swap_logo(
    state: &Store,
    user: &User,
    key: Option<&str>,
    entry: super::audit::Entry<'_>,
) -> ApiResult<Option<String>> {
    // The organisation's row locked: two changes at once each replace the logo the other left.
    let scope = db::Scope::Row("organizations", &user.organization_id);
    let mut tx = db::begin_write(&state.db, scope).await?;
    let result = async {
        let before: Option<String> = sqlx::query_scalar("SELECT logo_key FROM organizations WHERE id = $1")
            .bind(&user.organization_id)
            .fetch_one(&mut *tx)
            .await?;
        sqlx::query("UPDATE organizations SET logo_key = $1 WHERE id = $2")
            .bind(key)
            .bind(&user.organization_id)
            .execute(&mut *tx)
            .await?;
        // The old picture goes with the change: queued in it, so the janitor removes it if the
        // store is away now.
        if let Some(old) = &before {
            super::deletes::queue_delete(&mut tx, old).await?;
        }
        super::audit::record(&mut tx, Some(user), entry).await?;
        Ok(before)
    }
    .await;
    db::finish(tx, result).await
}

/// Removes a new logo that was never named (its change failed); one left behind (the store
/// away) costs only its space.
async fn forget(state: &Store, key: &str) {
    if let Err(e) = state.storage.delete(key).await {
        tracing::warn!(key, error = %e, "an organisation's old logo could not be removed from the store");
    }
}
