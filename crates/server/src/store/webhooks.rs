//! Webhooks as an organisation's admins manage them: registering, changing, new secrets, pings,
//! removal, redelivery of an event, and the delivery log (MGDS additions; the reference schema
//! has `webhooks` read-only). The events themselves, and what delivers them, are
//! [`super::events`]'s.

use mgds_api::{Event, Ref, Webhook, WebhookCreate, WebhookDelivery, WebhookUpdate, WebhookWithSecret};
use serde_json::{Value, json};

use super::audit::{self, Entry};
use super::caller::{Caller, User};
use super::db::{self, Pool, Scope, begin_write, new_id};
use super::events::{self, MADE, manager, of_org};
use super::handle::Store;
use super::records::{self, Found, ListQuery, ListSpec};
use crate::error::{ApiError, ApiResult};
use crate::listing::{Bind, Compiled, Field, FieldKind};

/// Most webhooks an organisation may have.
pub const MAX_WEBHOOKS: i64 = 50;

/// The fields of `where` and `sort` in the list of webhooks.
pub(crate) const WEBHOOK_FIELDS: &[Field] = &[
    Field { name: "$uri", column: "w.id", kind: FieldKind::Uri { collection: "webhooks" }, sortable: true },
    Field { name: "post_url", column: "w.post_url", kind: FieldKind::Text, sortable: true },
    Field { name: "event_type", column: "w.event_type", kind: FieldKind::Text, sortable: true },
    Field { name: "enabled", column: "w.enabled", kind: FieldKind::Bool, sortable: true },
    Field { name: "api_version", column: "w.api_version", kind: FieldKind::Text, sortable: true },
    Field { name: "created_at", column: "w.created_at", kind: FieldKind::DateTime, sortable: true },
];

const WEBHOOKS: ListSpec = ListSpec {
    from: "webhooks w",
    columns: "w.id, w.post_url, w.event_type, w.enabled, w.api_version, w.created_at, w.created_by, \
              (SELECT COUNT(*) FROM events e WHERE e.webhook_id = w.id AND e.status IN ('pending', 'retryable')) AS waiting",
    fields: WEBHOOK_FIELDS,
    default_order: "w.created_at ASC",
    tiebreak: "w.id ASC",
};

#[derive(sqlx::FromRow)]
struct WebhookRow {
    id: String,
    post_url: String,
    event_type: String,
    enabled: i64,
    api_version: String,
    created_at: String,
    created_by: Option<String>,
    waiting: i64,
}

impl WebhookRow {
    fn into_api(self) -> Webhook {
        Webhook {
            uri: Ref::new("webhooks", &self.id).uri,
            post_url: self.post_url,
            event_type: self.event_type,
            enabled: db::flag(self.enabled),
            api_version: self.api_version,
            created_at: self.created_at,
            created_by: self.created_by.map(|u| Ref::new("users", &u)),
            waiting: self.waiting,
        }
    }

    fn described(&self) -> Value {
        json!({"post_url": self.post_url, "event_type": self.event_type, "enabled": db::flag(self.enabled)})
    }
}

/// One page of the caller's organisation's webhooks.
pub async fn list(state: &Store, caller: &Caller, q: &ListQuery<'_>) -> ApiResult<Found<Webhook>> {
    let user = manager(caller)?;
    let rows: Found<WebhookRow> = records::list(&state.db, &WEBHOOKS, q, of_org("w", user), None).await?;
    Ok(rows.map(WebhookRow::into_api))
}

async fn row(db: &Pool, user: &User, id: &str) -> ApiResult<WebhookRow> {
    records::fetch_one(db, &WEBHOOKS, "w.id", id, of_org("w", user))
        .await?
        .ok_or_else(|| ApiError::not_found("webhook"))
}

/// Webhook `id` of the caller's organisation.
pub async fn get(state: &Store, caller: &Caller, id: &str) -> ApiResult<Webhook> {
    Ok(row(&state.db, manager(caller)?, id).await?.into_api())
}

fn new_secret() -> String {
    format!("whsec_{}", hex::encode(rand::random::<[u8; 32]>()))
}

fn sender(state: &Store) -> ApiResult<&mgds_webhook::Sender> {
    state.webhooks.sender.as_ref().ok_or_else(|| ApiError::internal("this process does not deliver webhooks"))
}

/// Checks an address and event type for a webhook.
async fn checked(state: &Store, post_url: &str, event_type: &str) -> ApiResult<String> {
    if !mgds_api::is_event_type(event_type) {
        let known: Vec<&str> = mgds_api::EVENT_TYPES.iter().map(|(t, _)| *t).collect();
        return Err(ApiError::BadRequest(format!(
            "event_type {event_type:?} is not one the service sends; use one of {} or * for every type",
            known.join(", ")
        )));
    }
    let url = mgds_webhook::check_url(post_url).map_err(ApiError::BadRequest)?;
    sender(state)?.check_reachable(&url).await.map_err(|e| ApiError::BadRequest(format!("post_url: {e}")))?;
    Ok(url.to_string())
}

/// Registers a webhook for the caller's organisation; answers it with its secret (shown once).
pub async fn create(state: &Store, caller: &Caller, req: &WebhookCreate) -> ApiResult<WebhookWithSecret> {
    let user = manager(caller)?.clone();
    let url = checked(state, &req.post_url, &req.event_type).await?;
    let id = new_id();
    let secret = new_secret();
    let now = db::now();
    let mut tx = begin_write(&state.db, Scope::User(&user.id)).await?;
    let made = async {
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM webhooks WHERE organization_id = $1")
            .bind(&user.organization_id)
            .fetch_one(&mut *tx)
            .await?;
        if count >= MAX_WEBHOOKS {
            return Err(ApiError::Conflict(format!(
                "your organisation has {MAX_WEBHOOKS} webhooks, the most it may have; delete one first"
            )));
        }
        sqlx::query(
            "INSERT INTO webhooks (id, organization_id, created_by, post_url, event_type, enabled, api_version, \
             secret, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, 'v1', $7, $8, $8)",
        )
        .bind(&id)
        .bind(&user.organization_id)
        .bind(&user.id)
        .bind(&url)
        .bind(&req.event_type)
        .bind(i64::from(req.enabled.unwrap_or(true)))
        .bind(&secret)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        let entry = Entry::new("webhook.created", "webhook", &id, &user.id)
            .with(json!({"post_url": url, "event_type": req.event_type, "enabled": req.enabled.unwrap_or(true)}));
        audit::record(&mut tx, Some(&user), entry).await
    }
    .await;
    db::finish(tx, made).await?;
    Ok(WebhookWithSecret { webhook: row(&state.db, &user, &id).await?.into_api(), secret })
}

/// Changes webhook `id`'s address, event type or state.
pub async fn update(state: &Store, caller: &Caller, id: &str, req: &WebhookUpdate) -> ApiResult<Webhook> {
    let user = manager(caller)?.clone();
    let before = row(&state.db, &user, id).await?;
    let url = match &req.post_url {
        Some(u) => Some(checked(state, u, req.event_type.as_deref().unwrap_or(&before.event_type)).await?),
        None => {
            if let Some(t) = &req.event_type
                && !mgds_api::is_event_type(t)
            {
                checked(state, &before.post_url, t).await?;
            }
            None
        }
    };
    let mut tx = begin_write(&state.db, Scope::User(&user.id)).await?;
    let changed = async {
        sqlx::query(
            "UPDATE webhooks SET post_url = COALESCE($1, post_url), event_type = COALESCE($2, event_type), \
             enabled = COALESCE($3, enabled), updated_at = $4 WHERE id = $5 AND organization_id = $6",
        )
        .bind(&url)
        .bind(&req.event_type)
        .bind(req.enabled.map(i64::from))
        .bind(db::now())
        .bind(id)
        .bind(&user.organization_id)
        .execute(&mut *tx)
        .await?;
        let mut asked = serde_json::Map::new();
        if let Some(u) = &url {
            asked.insert("post_url".into(), json!(u));
        }
        if let Some(t) = &req.event_type {
            asked.insert("event_type".into(), json!(t));
        }
        if let Some(e) = req.enabled {
            asked.insert("enabled".into(), json!(e));
        }
        let changes = audit::changed(&before.described(), &Value::Object(asked));
        if changes.as_object().is_some_and(|c| !c.is_empty()) {
            audit::record(&mut tx, Some(&user), Entry::new("webhook.updated", "webhook", id, &user.id).with(changes))
                .await?;
        }
        Ok(())
    }
    .await;
    db::finish(tx, changed).await?;
    if req.enabled == Some(true) {
        MADE.notify_one();
    }
    get(state, caller, id).await
}

/// Deletes webhook `id`, with its events and their delivery log.
pub async fn delete(state: &Store, caller: &Caller, id: &str) -> ApiResult<()> {
    let user = manager(caller)?.clone();
    let before = row(&state.db, &user, id).await?;
    let mut tx = begin_write(&state.db, Scope::User(&user.id)).await?;
    let deleted = async {
        sqlx::query("DELETE FROM webhook_deliveries WHERE webhook_id = $1").bind(id).execute(&mut *tx).await?;
        sqlx::query("DELETE FROM events WHERE webhook_id = $1").bind(id).execute(&mut *tx).await?;
        sqlx::query("DELETE FROM webhooks WHERE id = $1").bind(id).execute(&mut *tx).await?;
        let entry = Entry::new("webhook.deleted", "webhook", id, &user.id).with(before.described());
        audit::record(&mut tx, Some(&user), entry).await
    }
    .await;
    db::finish(tx, deleted).await
}

/// Gives webhook `id` a new secret; answers it (shown once). Deliveries made from now on are
/// signed with it.
pub async fn replace_secret(state: &Store, caller: &Caller, id: &str) -> ApiResult<WebhookWithSecret> {
    let user = manager(caller)?.clone();
    row(&state.db, &user, id).await?;
    let secret = new_secret();
    let mut tx = begin_write(&state.db, Scope::User(&user.id)).await?;
    let replaced = async {
        sqlx::query("UPDATE webhooks SET secret = $1, updated_at = $2 WHERE id = $3")
            .bind(&secret)
            .bind(db::now())
            .bind(id)
            .execute(&mut *tx)
            .await?;
        audit::record(&mut tx, Some(&user), Entry::new("webhook.secret_replaced", "webhook", id, &user.id)).await
    }
    .await;
    db::finish(tx, replaced).await?;
    Ok(WebhookWithSecret { webhook: row(&state.db, &user, id).await?.into_api(), secret })
}

/// Makes a `ping` event for webhook `id` alone (to check it by hand); answers the event.
pub async fn ping(state: &Store, caller: &Caller, id: &str) -> ApiResult<Event> {
    let user = manager(caller)?.clone();
    let hook = row(&state.db, &user, id).await?;
    let mut tx = begin_write(&state.db, Scope::Rows).await?;
    let made = async {
        let data = json!({"webhook": Ref::new("webhooks", id), "post_url": hook.post_url});
        let subject = Ref::new("webhooks", id).uri;
        let event = events::insert(
            &mut tx,
            &user.organization_id,
            id,
            &hook.api_version,
            "ping",
            &subject,
            Some(&user.id),
            &data,
            &db::now(),
        )
        .await?;
        events::told(&mut tx).await?;
        Ok(event)
    }
    .await;
    let event = db::finish(tx, made).await?;
    events::get_event(state, caller, &event).await
}

/// Asks for event `id` to be delivered again now, whatever became of it, and tried for a day
/// from now.
pub async fn redeliver(state: &Store, caller: &Caller, id: &str) -> ApiResult<Event> {
    let user = manager(caller)?.clone();
    let before = events::get_event(state, caller, id).await?;
    let mut tx = begin_write(&state.db, Scope::Rows).await?;
    let asked = async {
        let now = db::now();
        sqlx::query(
            "UPDATE events SET status = 'pending', next_attempt_at = $1, tries_from = $1, by_hand = $4 \
             WHERE id = $2 AND organization_id = $3",
        )
        .bind(&now)
        .bind(id)
        .bind(&user.organization_id)
        .bind(events::BY_HAND)
        .execute(&mut *tx)
        .await?;
        let entry = Entry::new("event.redelivered", "event", id, &user.id)
            .with(json!({"event_type": before.event_type, "status": before.status.as_str()}));
        audit::record(&mut tx, Some(&user), entry).await?;
        events::told(&mut tx).await
    }
    .await;
    db::finish(tx, asked).await?;
    events::get_event(state, caller, id).await
}

/// The fields of `where` and `sort` in a webhook's delivery log.
pub(crate) const DELIVERY_FIELDS: &[Field] = &[
    Field { name: "at", column: "d.at", kind: FieldKind::DateTime, sortable: true },
    Field { name: "event", column: "d.event_id", kind: FieldKind::Ref { collection: "events" }, sortable: true },
    Field { name: "event_type", column: "d.event_type", kind: FieldKind::Text, sortable: true },
    Field { name: "delivered", column: "d.delivered", kind: FieldKind::Bool, sortable: true },
    Field { name: "status_code", column: "d.status_code", kind: FieldKind::Integer, sortable: true },
    Field { name: "by_hand", column: "d.by_hand", kind: FieldKind::Bool, sortable: true },
];

const DELIVERIES: ListSpec = ListSpec {
    from: "webhook_deliveries d",
    columns: "d.id, d.event_id, d.event_type, d.at, d.delivered, d.status_code, d.error, d.response, \
              d.duration_ms, d.by_hand",
    fields: DELIVERY_FIELDS,
    default_order: "d.at DESC",
    tiebreak: "d.id DESC",
};

#[derive(sqlx::FromRow)]
struct DeliveryRow {
    #[allow(dead_code)]
    id: String,
    event_id: String,
    event_type: String,
    at: String,
    delivered: i64,
    status_code: Option<i64>,
    error: Option<String>,
    response: String,
    duration_ms: i64,
    by_hand: i64,
}

/// One page of webhook `id`'s delivery log, newest first.
pub async fn deliveries(
    state: &Store,
    caller: &Caller,
    id: &str,
    q: &ListQuery<'_>,
) -> ApiResult<Found<WebhookDelivery>> {
    let user = manager(caller)?;
    row(&state.db, user, id).await?;
    let of_hook = Compiled { sql: "d.webhook_id = ?".into(), binds: vec![Bind::Text(id.to_string())] };
    let rows: Found<DeliveryRow> = records::list(&state.db, &DELIVERIES, q, of_hook, None).await?;
    Ok(rows.map(|d| WebhookDelivery {
        event: Ref::new("events", &d.event_id),
        event_type: d.event_type,
        at: d.at,
        delivered: db::flag(d.delivered),
        status_code: d.status_code,
        error: d.error,
        response: d.response,
        duration_ms: d.duration_ms,
        by_hand: db::flag(d.by_hand),
    }))
}
