//! The Organisation screen: the user's organisation and role; for its admins and owners, its
//! users with their roles and state, and what may be done to each: invite, change a role,
//! disable and enable, make a password reset link, revoke keys and sessions; its audit trail;
//! its webhooks and their events. Who may manage
//! whom is the service's rule ([`Role::may_manage`], [`Role::may_give`]); the screen offers only
//! what the rule allows, and the service checks it again.

use mgds_api::{Member, MemberUpdate, PasswordLink, Role};
use mgds_client::{Client, Filter, Sort};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::{CmdError, CmdResult};
use crate::people::check_email;
use crate::samples::id_of;

/// Most users the screen lists at once (a department's lab has far fewer); the count says when
/// there are more, and the filter finds any of them.
pub const MAX_USERS_SHOWN: u32 = 1000;

/// One user of the organisation, as its admins see them.
#[derive(Debug, Clone, Serialize, TS)]
pub struct UserRow {
    /// User id.
    pub id: String,
    /// E-mail address.
    pub email: String,
    /// Role in the organisation.
    pub role: Role,
    /// When the account was made.
    pub created_at: String,
    /// When it was disabled, if it is.
    pub disabled_at: Option<String>,
    /// Whether they have a password (else they have not taken up their invitation, or use an
    /// API key only).
    pub has_password: bool,
    /// When their open invitation or reset link ends, if they have one.
    pub link_expires_at: Option<String>,
    /// When one of their browser sessions was last used.
    pub last_seen_at: Option<String>,
    /// Whether this is the signed-in user.
    pub me: bool,
    /// Whether the signed-in user may disable, enable, reset or revoke them.
    pub manageable: bool,
    /// The roles the signed-in user may give them (empty if none but their own).
    pub roles: Vec<Role>,
}

/// The Organisation screen.
#[derive(Debug, Clone, Serialize, TS)]
pub struct OrganizationView {
    /// Its name.
    pub name: String,
    /// The signed-in user's role.
    pub role: Role,
    /// How many users it has.
    pub user_count: i64,
    /// Its users (admins and owners only; `None` for members), by e-mail; at most
    /// [`MAX_USERS_SHOWN`] of those the filter keeps.
    pub users: Option<Vec<UserRow>>,
    /// How many users the filter keeps.
    pub shown_of: u64,
    /// The roles the signed-in user may invite with.
    pub invite_roles: Vec<Role>,
    /// The lab's name on its reports' covers (its name unless set).
    pub lab_name: String,
    /// Its logo on its reports' covers, as a `data:` address for an `<img>` (nothing in an
    /// image runs), if it has one.
    pub logo: Option<String>,
}

/// A one-time link to give a user: an invitation or a password reset.
#[derive(Debug, Clone, Serialize, TS)]
pub struct LinkView {
    /// Whom it is for.
    pub email: String,
    /// The address.
    pub url: String,
    /// When it ends.
    pub expires_at: String,
}

impl From<PasswordLink> for LinkView {
    fn from(l: PasswordLink) -> Self {
        LinkView { email: l.user.email, url: l.url, expires_at: l.expires_at }
    }
}

/// A change to a user from the screen.
#[derive(Debug, Clone, Default, Deserialize, TS)]
#[ts(optional_fields = nullable)]
pub struct UserChange {
    /// A new role.
    #[serde(default)]
    pub role: Option<Role>,
    /// Disable (`true`) or enable (`false`).
    #[serde(default)]
    pub disabled: Option<bool>,
}

fn row(m: Member, me: &str, my_role: Role) -> UserRow {
    let id = id_of(&m.uri);
    let is_me = id == me;
    let manageable = !is_me && my_role.may_manage(m.role);
    let roles = if manageable { Role::ALL.into_iter().filter(|r| my_role.may_give(*r)).collect() } else { Vec::new() };
    UserRow {
        id,
        email: m.email,
        role: m.role,
        created_at: m.created_at,
        disabled_at: m.disabled_at,
        has_password: m.has_password,
        link_expires_at: m.link_expires_at,
        last_seen_at: m.last_seen_at,
        me: is_me,
        manageable,
        roles,
    }
}

/// The screen, its users filtered by `search` (part of an e-mail address) when given.
pub async fn view(client: &Client, search: Option<String>) -> CmdResult<OrganizationView> {
    let org = client.organization();
    let (o, me) = tokio::join!(org.get(), client.account());
    let (o, me) = (o?, me?);
    let me = me.user.id().to_string();
    let invite_roles: Vec<Role> = Role::ALL.into_iter().filter(|r| o.role.may_give(*r)).collect();
    let (users, shown_of) = if o.role.manages() {
        let mut filter = Filter::new();
        if let Some(s) = search.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            filter = filter.op("email", "$icontains", s.to_ascii_lowercase());
        }
        let page = org.users().filter(filter).sort(Sort::asc("email")).per_page(MAX_USERS_SHOWN).send().await?;
        let total = page.total.unwrap_or(page.items.len() as u64);
        (Some(page.items.into_iter().map(|m| row(m, &me, o.role)).collect()), total)
    } else {
        (None, 0)
    };
    // The logo is looked at with the screen, not with each search; a logo that cannot be
    // fetched leaves the screen without it.
    let logo = match (&o.logo, search.as_deref().map(str::trim).filter(|s| !s.is_empty())) {
        (Some(_), None) => org.logo().await.ok().flatten().map(|b| logo_address(&b)),
        _ => None,
    };
    let lab_name = o.lab_name.clone().unwrap_or_else(|| o.name.clone());
    Ok(OrganizationView {
        name: o.name,
        role: o.role,
        user_count: o.users,
        users,
        shown_of,
        invite_roles,
        lab_name,
        logo,
    })
}

/// A picture as a `data:` address, its type by its first bytes.
fn logo_address(bytes: &[u8]) -> String {
    use base64::Engine as _;
    let mime = mgds_report::picture_mime(bytes);
    format!("data:{mime};base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// Sets the lab's name on the organisation's reports (admins and owners; empty: the
/// organisation's own name again).
pub async fn set_lab_name(client: &Client, name: &str) -> CmdResult<()> {
    client.organization().set_lab_name(name.trim()).await?;
    Ok(())
}

/// Sets the organisation's logo (admins and owners) from a picture sent as base64 (what a
/// window or a browser reads from the file the user picks); the service checks it.
pub async fn set_logo(client: &Client, base64: &str) -> CmdResult<()> {
    use base64::Engine as _;
    // 2 MiB of picture is about 2.8 MB of base64.
    if base64.len() > (mgds_api::MAX_LOGO_BYTES / 3 + 1) * 4 + 16 {
        return Err(CmdError::new(
            "invalid",
            format!(
                "A logo is at most {} MiB: choose a smaller PNG, JPEG or SVG picture.",
                mgds_api::MAX_LOGO_BYTES >> 20
            ),
        ));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(base64.trim())
        .map_err(|_| CmdError::new("invalid", "The picture could not be read; choose the file again."))?;
    client.organization().set_logo(bytes.into()).await?;
    Ok(())
}

/// Removes the organisation's logo (admins and owners).
pub async fn remove_logo(client: &Client) -> CmdResult<()> {
    client.organization().remove_logo().await?;
    Ok(())
}

/// Invites `email` with `role`: the link to give them.
pub async fn invite(client: &Client, email: &str, role: Role) -> CmdResult<LinkView> {
    let email = check_email(email)?;
    Ok(client.organization().invite(&email, role).await?.into())
}

/// Changes a user's role, or disables or enables them.
pub async fn change(client: &Client, id: &str, change: UserChange) -> CmdResult<()> {
    if change.role.is_none() && change.disabled.is_none() {
        return Err(CmdError::new("invalid", "Choose a role, or disable or enable the account."));
    }
    client.organization().update(id, &MemberUpdate { role: change.role, disabled: change.disabled }).await?;
    Ok(())
}

/// A password reset link for a user.
pub async fn reset_password(client: &Client, id: &str) -> CmdResult<LinkView> {
    Ok(client.organization().reset_password(id).await?.into())
}

/// Ends a user's API key and sessions: what it stopped, in words.
pub async fn revoke(client: &Client, id: &str) -> CmdResult<String> {
    let r = client.organization().revoke(id).await?;
    Ok(format!(
        "Their API key no longer works; {} browser session{} ended{}.",
        r.sessions,
        if r.sessions == 1 { "" } else { "s" },
        match r.canceled_uploads {
            0 => String::new(),
            1 => "; 1 upload not yet finished was canceled".into(),
            n => format!("; {n} uploads not yet finished were canceled"),
        }
    ))
}

/// Entries of the audit trail one screen shows at a time.
pub const AUDIT_PAGE: u32 = 50;

/// What the audit screen asks for: a page, and filters.
#[derive(Debug, Clone, Default, Deserialize, TS)]
#[ts(optional_fields = nullable)]
pub struct AuditQuery {
    /// Page, from 1.
    #[serde(default)]
    pub page: Option<u32>,
    /// Actions starting with this (`sample.`, `user.disabled`).
    #[serde(default)]
    pub action: Option<String>,
    /// Done by this e-mail address.
    #[serde(default)]
    pub by: Option<String>,
    /// On or after this day (`YYYY-MM-DD`).
    #[serde(default)]
    pub since: Option<String>,
}

/// One entry as the screen shows it.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AuditRow {
    /// When.
    pub at: String,
    /// Its number in the chain (`None` for the few seconds before it is chained).
    pub seq: Option<i64>,
    /// Who (`None`: the operator, on the service's machine).
    pub by: Option<String>,
    /// From which address.
    pub address: Option<String>,
    /// With which client.
    pub client: Option<String>,
    /// What happened.
    pub action: String,
    /// The kind of record and its id.
    pub target: String,
    /// What changed, in words: `description: "ward 3" → "ward 4"`.
    pub changes: Vec<String>,
}

/// A page of the audit trail.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AuditPage {
    /// The entries, newest first.
    pub rows: Vec<AuditRow>,
    /// How many entries the filters keep.
    pub total: u64,
    /// The page shown.
    pub page: u32,
    /// Entries per page.
    pub per_page: u32,
}

/// A value as the screen shows it: text without quotes, `—` for nothing.
fn shown(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "—".into(),
        serde_json::Value::String(s) => format!("\"{}\"", s.chars().take(80).collect::<String>()),
        other => other.to_string().chars().take(120).collect(),
    }
}

/// What an entry's `changes` says, a line per field.
pub fn change_lines(changes: &serde_json::Value) -> Vec<String> {
    let Some(fields) = changes.as_object() else { return Vec::new() };
    fields
        .iter()
        .map(|(k, v)| match v.as_array().map(Vec::as_slice) {
            Some([before, after]) => format!("{k}: {} → {}", shown(before), shown(after)),
            _ => format!("{k}: {}", shown(v)),
        })
        .collect()
}

/// A page of the organisation's audit trail (admins and owners).
pub async fn audit(client: &Client, q: AuditQuery) -> CmdResult<AuditPage> {
    let mut filter = Filter::new();
    if let Some(a) = q.action.as_deref().map(str::trim).filter(|a| !a.is_empty()) {
        filter = filter.op("action", "$startswith", a);
    }
    if let Some(by) = q.by.as_deref().map(str::trim).filter(|b| !b.is_empty()) {
        filter = filter.op("actor_email", "$icontains", by.to_ascii_lowercase());
    }
    if let Some(day) = q.since.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
        let valid = day.len() == 10 && chrono_free_date(day);
        if !valid {
            return Err(CmdError::new("invalid", format!("{day:?} is not a date; pick one as YYYY-MM-DD.")));
        }
        filter = filter.op("at", "$gte", format!("{day}T00:00:00Z"));
    }
    let page = q.page.unwrap_or(1).max(1);
    let found = client.organization().audit().filter(filter).per_page(AUDIT_PAGE).page(page).send().await?;
    let rows = found
        .items
        .into_iter()
        .map(|e| AuditRow {
            at: e.at,
            seq: e.seq,
            by: e.actor_email,
            address: e.address,
            client: e.client,
            action: e.action,
            target: format!("{} {}", e.target_kind, e.target_id),
            changes: change_lines(&e.changes),
        })
        .collect();
    Ok(AuditPage { rows, total: found.total.unwrap_or(0), page, per_page: AUDIT_PAGE })
}

/// Whether `d` reads as `YYYY-MM-DD` with a month and a day in range.
fn chrono_free_date(d: &str) -> bool {
    let parts: Vec<&str> = d.split('-').collect();
    let [y, m, day] = parts.as_slice() else { return false };
    let num = |s: &str| s.bytes().all(|b| b.is_ascii_digit()).then(|| s.parse::<u32>().ok()).flatten();
    matches!((y.len(), num(y), num(m), num(day)), (4, Some(_), Some(1..=12), Some(1..=31)))
}

/// Events the Webhooks panel lists at once, newest first.
pub const EVENTS_SHOWN: u32 = 50;

/// A webhook as the screen shows it.
#[derive(Debug, Clone, Serialize, TS)]
pub struct WebhookRow {
    /// Its id.
    pub id: String,
    /// Where events go.
    pub post_url: String,
    /// The event type sent (`*`: every type).
    pub event_type: String,
    /// Whether events are made and sent.
    pub enabled: bool,
    /// Events not yet delivered or given up.
    #[ts(type = "number")]
    pub waiting: i64,
    /// When it was registered.
    pub created_at: String,
}

/// An event as the screen shows it.
#[derive(Debug, Clone, Serialize, TS)]
pub struct EventRow {
    /// Its id.
    pub id: String,
    /// Its webhook's id.
    pub webhook: String,
    /// Its type.
    pub event_type: String,
    /// The record it is about (`samples/…`).
    pub subject: String,
    /// `pending`, `retryable`, `success` or `failed`.
    pub status: String,
    /// Tries so far.
    #[ts(type = "number")]
    pub attempts: i64,
    /// When it happened.
    pub created_at: String,
    /// When it is tried next, if it will be.
    pub next_attempt_at: Option<String>,
    /// Why the last try failed.
    pub last_error: Option<String>,
}

/// An event type a webhook may ask for, and when it is sent.
#[derive(Debug, Clone, Serialize, TS)]
pub struct EventTypeInfo {
    /// Its name (`analysis.completed`; `*` for every type).
    pub name: String,
    /// When it is sent, in words.
    pub means: String,
}

/// The Webhooks panel of the Organisation screen (admins and owners).
#[derive(Debug, Clone, Serialize, TS)]
pub struct WebhooksView {
    /// The organisation's webhooks, oldest first.
    pub hooks: Vec<WebhookRow>,
    /// The newest events (of those the filter keeps), at most [`EVENTS_SHOWN`].
    pub events: Vec<EventRow>,
    /// How many events the filter keeps.
    pub event_total: u64,
    /// The event types to choose from.
    pub types: Vec<EventTypeInfo>,
}

/// A webhook just registered, or given a new secret: the secret is shown this once.
#[derive(Debug, Clone, Serialize, TS)]
pub struct WebhookSecretView {
    /// The webhook's id.
    pub id: String,
    /// Where events go.
    pub post_url: String,
    /// The secret its deliveries are signed with.
    pub secret: String,
}

/// The Webhooks panel; with `problems`, only the events not delivered (waiting to be tried
/// again, or given up).
pub async fn webhooks(client: &Client, problems: bool) -> CmdResult<WebhooksView> {
    let org = client.organization();
    let mut filter = Filter::new();
    if problems {
        filter = filter.op("status", "$in", serde_json::json!(["retryable", "failed"]));
    }
    let (hooks, events) = tokio::join!(
        org.webhooks().sort(Sort::asc("created_at")).per_page(mgds_api::MAX_PER_PAGE).send(),
        org.events().filter(filter).per_page(EVENTS_SHOWN).send()
    );
    let (hooks, events) = (hooks?, events?);
    let event_total = events.total.unwrap_or(events.items.len() as u64);
    let mut types = vec![EventTypeInfo { name: mgds_api::EVERY_EVENT.into(), means: "every type below".into() }];
    types.extend(mgds_api::EVENT_TYPES.iter().map(|(n, m)| EventTypeInfo { name: (*n).into(), means: (*m).into() }));
    Ok(WebhooksView {
        hooks: hooks
            .items
            .into_iter()
            .map(|w| WebhookRow {
                id: id_of(&w.uri),
                post_url: w.post_url,
                event_type: w.event_type,
                enabled: w.enabled,
                waiting: w.waiting,
                created_at: w.created_at,
            })
            .collect(),
        events: events
            .items
            .into_iter()
            .map(|e| EventRow {
                id: id_of(&e.uri),
                webhook: id_of(&e.webhook.uri),
                event_type: e.event_type,
                subject: e.subject.trim_start_matches(mgds_api::API_PREFIX).trim_start_matches('/').to_string(),
                status: e.status.as_str().into(),
                attempts: e.attempts,
                created_at: e.created_at,
                next_attempt_at: e.next_attempt_at,
                last_error: e.last_error,
            })
            .collect(),
        event_total,
        types,
    })
}

/// Registers a webhook; its secret, shown once.
pub async fn add_webhook(client: &Client, post_url: &str, event_type: &str) -> CmdResult<WebhookSecretView> {
    let post_url = post_url.trim();
    if post_url.is_empty() {
        return Err(CmdError::new("invalid", "Type the address events are to be sent to (https://…)."));
    }
    let req = mgds_api::WebhookCreate { post_url: post_url.into(), event_type: event_type.into(), enabled: Some(true) };
    let w = client.organization().add_webhook(&req).await?;
    Ok(WebhookSecretView { id: id_of(&w.webhook.uri), post_url: w.webhook.post_url, secret: w.secret })
}

/// Enables or disables a webhook.
pub async fn set_webhook(client: &Client, id: &str, enabled: bool) -> CmdResult<()> {
    let change = mgds_api::WebhookUpdate { enabled: Some(enabled), ..Default::default() };
    client.organization().update_webhook(id, &change).await?;
    Ok(())
}

/// Gives a webhook a new secret, shown once.
pub async fn replace_webhook_secret(client: &Client, id: &str) -> CmdResult<WebhookSecretView> {
    let w = client.organization().replace_webhook_secret(id).await?;
    Ok(WebhookSecretView { id: id_of(&w.webhook.uri), post_url: w.webhook.post_url, secret: w.secret })
}

/// Removes a webhook with its events.
pub async fn remove_webhook(client: &Client, id: &str) -> CmdResult<()> {
    Ok(client.organization().delete_webhook(id).await?)
}

/// Sends a `ping` event to a webhook.
pub async fn ping_webhook(client: &Client, id: &str) -> CmdResult<()> {
    client.organization().ping_webhook(id).await?;
    Ok(())
}

/// Delivers an event again now.
pub async fn redeliver_event(client: &Client, id: &str) -> CmdResult<()> {
    client.organization().redeliver(id).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn changes_read_as_before_and_after() {
        let lines =
            change_lines(&json!({"description": ["ward 3", "ward 4"], "platform": [null, "MinION"], "user": "u1"}));
        assert_eq!(lines, ["description: \"ward 3\" → \"ward 4\"", "platform: — → \"MinION\"", "user: \"u1\""]);
        assert!(change_lines(&json!({})).is_empty());
    }

    #[test]
    fn dates_are_checked() {
        assert!(chrono_free_date("2026-11-01"));
        assert!(!chrono_free_date("2026-13-01"));
        assert!(!chrono_free_date("01/11/2026"));
    }
}
