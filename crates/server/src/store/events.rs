//! Webhooks and events (the reference schema's `webhooks` and `events`; registering, changing,
//! redelivering and the delivery log are MGDS additions).
//!
//! - **Making events.** A change that an event type names ([`from_audit`], for every change the
//!   audit trail records; [`analysis_finished`] for the service's own) makes one event per
//!   enabled webhook of the record's organisation that asks for the type, in the change's own
//!   transaction: an event exists exactly when its change does, and survives a restart.
//! - **Delivering.** [`crate::webhooks`] (one host at a time) POSTs them through
//!   `mgds-webhook`, in order per webhook and subject (the record an event is about): an
//!   event waits while an earlier one of its webhook and subject is open ([`heads`]). A failed
//!   try is tried again after a growing wait ([`record_attempts`]) for a day from the event's
//!   making or from a redelivery asked by hand, then given up (`failed`).
//! - **Bounds.** At most [`super::webhooks::MAX_WEBHOOKS`] webhooks per organisation; the last
//!   [`DELIVERIES_KEPT`] tries of an event in the log; finished events kept
//!   [`EVENTS_KEPT_DAYS`] days ([`expire`]).
//! - **Who.** An organisation's admins and owners read its events and manage its webhooks
//!   ([`super::webhooks`]).

use std::sync::LazyLock;

use mgds_api::{Event, EventStatus, Ref};
use serde_json::{Value, json};
use tokio::sync::Notify;

use super::caller::{Caller, User};
use super::change::Entry;
use super::db::{self, Pool, Scope, Tx, begin_write, new_id};
use super::handle::{DeliveryPolicy, Store};
use super::records::{self, Found, ListQuery, ListSpec};
use crate::error::{ApiError, ApiResult};
use crate::listing::{Bind, Compiled, Field, FieldKind};

/// Tries of one event kept in the delivery log (the newest).
pub const DELIVERIES_KEPT: i64 = 50;
/// Days a delivered or given-up event is kept.
pub const EVENTS_KEPT_DAYS: i64 = 30;
pub use super::handle::DELIVER_FOR;

/// The channel on which PostgreSQL tells the deliverer, whichever host runs it, that events
/// were made.
pub const CHANNEL: &str = "mgds_events";

/// Told (in this process) that events were made; the deliverer looks at once.
pub static MADE: LazyLock<Notify> = LazyLock::new(Notify::new);

const OPEN: &str = "('pending', 'retryable')";

// ---- Making events ----

/// The events an audited change makes: their types, and the record they are about.
fn events_of(e: &Entry<'_>) -> (&'static [&'static str], &'static str) {
    let preuploaded = e.changes.get("preuploaded").and_then(Value::as_bool).unwrap_or(false);
    match e.action {
        "sample.preuploaded" => (&["sample.created"], "samples"),
        "sample.uploaded" if preuploaded => (&["sample.confirmed"], "samples"),
        "sample.uploaded" => (&["sample.created", "sample.confirmed"], "samples"),
        "sample.updated" | "sample.tagged" | "metadata.updated" => (&["sample.updated"], "samples"),
        "sample.deleted" => (&["sample.deleted"], "samples"),
        "sample.host_removed" => (&["sample.created"], "samples"),
        "document.uploaded" => (&["document.created"], "documents"),
        "document.shared" => (&["document.shared"], "documents"),
        "document.deleted" => (&["document.deleted"], "documents"),
        "project.created" => (&["project.created"], "projects"),
        "project.updated" | "project.member_added" | "project.member_removed" | "project.sharing_changed" => {
            (&["project.updated"], "projects")
        }
        "project.deleted" => (&["project.deleted"], "projects"),
        "batch.created" => (&["batch.created"], "sequencing/batches"),
        "batch.status_changed" => (&["batch.updated"], "sequencing/batches"),
        _ => (&[], ""),
    }
}

/// Makes the events of an audited change, in its transaction (called by
/// [`super::audit::record`]).
pub(crate) async fn from_audit(tx: &mut Tx, actor: Option<&User>, e: &Entry<'_>) -> ApiResult<()> {
    let (types, collection) = events_of(e);
    if types.is_empty() {
        return Ok(());
    }
    let mut data = serde_json::Map::new();
    // Metadata changes are about their sample.
    let subject_id = if e.kind == "metadata" {
        data.insert("metadata".into(), json!(Ref::new("metadata", e.target)));
        let sample: Option<String> = sqlx::query_scalar("SELECT sample_id FROM metadata WHERE id = $1")
            .bind(e.target)
            .fetch_optional(&mut **tx)
            .await?;
        match sample {
            Some(s) => s,
            None => return Ok(()),
        }
    } else {
        e.target.to_string()
    };
    let singular = match collection {
        "samples" => "sample",
        "documents" => "document",
        "projects" => "project",
        _ => "sequencing_batch",
    };
    data.insert(singular.into(), json!(Ref::new(collection, &subject_id)));
    data.insert("action".into(), json!(e.action));
    data.insert("changes".into(), super::change::bounded(&e.changes));
    let data = Value::Object(data);
    let subject = Ref::new(collection, &subject_id).uri;
    for t in types {
        emit(tx, e.owner, actor, t, &subject, &data).await?;
    }
    Ok(())
}

/// Makes the `analysis.completed` or `analysis.failed` event of analysis `id`, in the
/// transaction that stores its outcome.
pub(crate) async fn analysis_finished(tx: &mut Tx, id: &str) -> ApiResult<()> {
    let row: Option<(String, String, String, i64, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT a.sample_id, s.owner_id, a.analysis_type, a.success, a.error_msg, a.job_id \
         FROM analyses a JOIN samples s ON s.id = a.sample_id WHERE a.id = $1",
    )
    .bind(id)
    .fetch_optional(&mut **tx)
    .await?;
    let Some((sample, owner, analysis_type, success, error, job)) = row else { return Ok(()) };
    let success = db::flag(success);
    let t = if success { "analysis.completed" } else { "analysis.failed" };
    let collection = super::analysis_kind::AnalysisKind::from_type(&analysis_type)
        .map_or("analyses", super::analysis_kind::AnalysisKind::collection);
    let data = json!({
        "analysis": Ref::new(collection, id),
        "sample": Ref::new("samples", &sample),
        "analysis_type": analysis_type,
        "job": job.map(|j| Ref::new("jobs", &j)),
        "success": success,
        "error_msg": if success { None } else { error },
    });
    emit(tx, &owner, None, t, &Ref::new("samples", &sample).uri, &data).await
}

/// Makes one event of type `t` about `subject` for each enabled webhook of `owner`'s
/// organisation that asks for it.
async fn emit(tx: &mut Tx, owner: &str, actor: Option<&User>, t: &str, subject: &str, data: &Value) -> ApiResult<()> {
    let hooks: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT id, organization_id, api_version FROM webhooks \
         WHERE organization_id = (SELECT organization_id FROM users WHERE id = $1) \
           AND enabled = 1 AND event_type IN ($2, '*')",
    )
    .bind(owner)
    .bind(t)
    .fetch_all(&mut **tx)
    .await?;
    if hooks.is_empty() {
        return Ok(());
    }
    let now = db::now();
    for (hook, org, version) in &hooks {
        insert(tx, org, hook, version, t, subject, actor.map(|a| a.id.as_str()), data, &now).await?;
    }
    told(tx).await
}

/// Inserts one event.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn insert(
    tx: &mut Tx,
    org: &str,
    hook: &str,
    version: &str,
    t: &str,
    subject: &str,
    actor: Option<&str>,
    data: &Value,
    now: &str,
) -> ApiResult<String> {
    let id = new_id();
    let payload = json!({
        "id": id,
        "type": t,
        "created_at": now,
        "api_version": version,
        "webhook": Ref::new("webhooks", hook),
        "actor": actor.map(|a| Ref::new("users", a)),
        "data": data,
    });
    sqlx::query(
        // From the webhook's row: nothing is made for a webhook deleted a moment ago.
        "INSERT INTO events (id, organization_id, webhook_id, event_type, subject, payload, status, \
         next_attempt_at, tries_from, created_at) \
         SELECT $1, $2, id, $4, $5, $6, 'pending', $7, $7, $7 FROM webhooks WHERE id = $3",
    )
    .bind(&id)
    .bind(org)
    .bind(hook)
    .bind(t)
    .bind(subject)
    .bind(payload.to_string())
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(id)
}

/// Tells the deliverer, once `tx` commits, that events were made: every host by PostgreSQL's
/// `NOTIFY`, this one at once (it looks again within a second if it looked too early).
pub(crate) async fn told(tx: &mut Tx) -> ApiResult<()> {
    if tx.backend_name() == "PostgreSQL" {
        sqlx::query(sqlx::AssertSqlSafe(format!("NOTIFY {CHANNEL}"))).execute(&mut **tx).await?;
    }
    MADE.notify_one();
    Ok(())
}

// ---- Who reads them ----

pub(crate) fn manager(caller: &Caller) -> ApiResult<&User> {
    let user = caller.require()?;
    if !user.manages_org() {
        return Err(ApiError::Forbidden(
            "only an admin or owner of your organisation manages its webhooks and reads its events".into(),
        ));
    }
    Ok(user)
}

pub(crate) fn of_org(alias: &str, user: &User) -> Compiled {
    Compiled { sql: format!("{alias}.organization_id = ?"), binds: vec![Bind::Text(user.organization_id.clone())] }
}

// ---- Events ----

const STATUSES: [&str; 4] = ["pending", "retryable", "success", "failed"];

/// The fields of `where` and `sort` in the list of events.
pub(crate) const EVENT_FIELDS: &[Field] = &[
    Field { name: "$uri", column: "e.id", kind: FieldKind::Uri { collection: "events" }, sortable: true },
    Field { name: "payload", column: "e.payload", kind: FieldKind::Text, sortable: true },
    Field { name: "status", column: "e.status", kind: FieldKind::Enum(&STATUSES), sortable: true },
    Field { name: "event_type", column: "e.event_type", kind: FieldKind::Text, sortable: true },
    Field { name: "webhook", column: "e.webhook_id", kind: FieldKind::Ref { collection: "webhooks" }, sortable: true },
    Field { name: "subject", column: "e.subject", kind: FieldKind::Text, sortable: true },
    Field { name: "created_at", column: "e.created_at", kind: FieldKind::DateTime, sortable: true },
    Field { name: "attempts", column: "e.attempts", kind: FieldKind::Integer, sortable: true },
];

const EVENTS: ListSpec = ListSpec {
    from: "events e",
    columns: "e.id, e.payload, e.status, e.event_type, e.webhook_id, e.subject, e.created_at, e.attempts, \
              e.next_attempt_at, e.delivered_at, e.last_error",
    fields: EVENT_FIELDS,
    default_order: "e.created_at DESC",
    tiebreak: "e.id DESC",
};

#[derive(sqlx::FromRow)]
struct EventRow {
    id: String,
    payload: String,
    status: String,
    event_type: String,
    webhook_id: String,
    subject: String,
    created_at: String,
    attempts: i64,
    next_attempt_at: String,
    delivered_at: Option<String>,
    last_error: Option<String>,
}

impl EventRow {
    fn into_api(self) -> Event {
        let status = EventStatus::parse(&self.status).unwrap_or(EventStatus::Failed);
        let open = matches!(status, EventStatus::Pending | EventStatus::Retryable);
        Event {
            uri: Ref::new("events", &self.id).uri,
            payload: self.payload,
            status,
            event_type: self.event_type,
            webhook: Ref::new("webhooks", &self.webhook_id),
            subject: self.subject,
            created_at: self.created_at,
            attempts: self.attempts,
            next_attempt_at: open.then_some(self.next_attempt_at),
            delivered_at: self.delivered_at,
            last_error: self.last_error,
        }
    }
}

/// One page of the caller's organisation's events, newest first.
pub async fn list_events(state: &Store, caller: &Caller, q: &ListQuery<'_>) -> ApiResult<Found<Event>> {
    let user = manager(caller)?;
    let rows: Found<EventRow> = records::list(&state.db, &EVENTS, q, of_org("e", user), None).await?;
    Ok(rows.map(EventRow::into_api))
}

/// Event `id` of the caller's organisation.
pub async fn get_event(state: &Store, caller: &Caller, id: &str) -> ApiResult<Event> {
    let user = manager(caller)?;
    let row: Option<EventRow> = records::fetch_one(&state.db, &EVENTS, "e.id", id, of_org("e", user)).await?;
    Ok(row.ok_or_else(|| ApiError::not_found("event"))?.into_api())
}

// ---- What the deliverer uses ----

/// A webhook as the deliverer needs it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Target {
    /// Where to POST.
    pub post_url: String,
    /// What to sign with.
    pub secret: String,
    /// Whether it is enabled.
    pub enabled: i64,
}

/// Webhook `id` as the deliverer needs it (`None`: deleted).
pub async fn target(db: &Pool, id: &str) -> ApiResult<Option<Target>> {
    Ok(sqlx::query_as("SELECT post_url, secret, enabled FROM webhooks WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?)
}

/// An event due for delivery.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Due {
    /// Its id.
    pub id: String,
    /// Its type.
    pub event_type: String,
    /// The body.
    pub payload: String,
    /// Tries so far.
    pub attempts: i64,
    /// When tries began (RFC 3339).
    pub tries_from: String,
    /// [`BY_HAND`] when this try was asked for by hand.
    pub by_hand: i64,
}

/// An event's `by_hand`: redelivered by hand, its first try since not made yet. After that try
/// it is [`REDELIVERED`]. A redelivered event holds up no later event of its subject: it was
/// asked for again out of order.
pub const BY_HAND: i64 = 2;
/// An event's `by_hand`: redelivered by hand and tried since.
pub const REDELIVERED: i64 = 1;

/// The enabled webhooks with an event due now, those waiting longest first (at most `limit`).
pub async fn due_webhooks(db: &Pool, limit: i64) -> ApiResult<Vec<String>> {
    let rows: Vec<(String, String)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT e.webhook_id, MIN(e.next_attempt_at) AS due FROM events e JOIN webhooks w ON w.id = e.webhook_id \
         WHERE w.enabled = 1 AND e.status IN {OPEN} AND e.next_attempt_at <= $1 \
         GROUP BY e.webhook_id ORDER BY due LIMIT $2"
    )))
    .bind(db::now())
    .bind(limit)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(id, _)| id).collect())
}

/// Webhook `hook`'s events due now that are first in their subject's queue (no earlier event of
/// the same webhook and subject still open), oldest first, at most `limit`.
pub async fn heads(db: &Pool, hook: &str, limit: i64) -> ApiResult<Vec<Due>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT e.id, e.event_type, e.payload, e.attempts, e.tries_from, e.by_hand FROM events e \
         WHERE e.webhook_id = $1 AND e.status IN {OPEN} AND e.next_attempt_at <= $2 \
           AND NOT EXISTS (SELECT 1 FROM events p WHERE p.webhook_id = e.webhook_id AND p.subject = e.subject \
                           AND p.status IN {OPEN} AND p.seq < e.seq AND p.by_hand = 0) \
         ORDER BY e.next_attempt_at, e.seq LIMIT $3"
    )))
    .bind(hook)
    .bind(db::now())
    .bind(limit)
    .fetch_all(db)
    .await?)
}

/// Records tries of events for webhook `hook`, in one transaction: each in the delivery log,
/// and in its event's state (delivered; tried again after the policy's wait; or given up once
/// past its day).
pub async fn record_attempts(
    db: &Pool,
    policy: &DeliveryPolicy,
    hook: &str,
    tries: &[(Due, mgds_webhook::Attempt)],
) -> ApiResult<()> {
    if tries.is_empty() {
        return Ok(());
    }
    let now = chrono::Utc::now();
    let at = db::ts(now);
    let mut tx = begin_write(db, Scope::Rows).await?;
    let recorded = async {
        for (e, a) in tries {
            record_one(&mut tx, policy, hook, e, a, now, &at).await?;
        }
        Ok(())
    }
    .await;
    db::finish(tx, recorded).await
}

async fn record_one(
    tx: &mut Tx,
    policy: &DeliveryPolicy,
    hook: &str,
    e: &Due,
    a: &mgds_webhook::Attempt,
    now: chrono::DateTime<chrono::Utc>,
    at: &str,
) -> ApiResult<()> {
    let attempts = e.attempts + 1;
    sqlx::query(
        "INSERT INTO webhook_deliveries (id, event_id, webhook_id, event_type, at, delivered, status_code, \
         error, response, duration_ms, by_hand) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(new_id())
    .bind(&e.id)
    .bind(hook)
    .bind(&e.event_type)
    .bind(at)
    .bind(i64::from(a.delivered))
    .bind(a.status.map(i64::from))
    .bind(&a.error)
    .bind(&a.response)
    .bind(i64::try_from(a.took.as_millis()).unwrap_or(i64::MAX))
    .bind(i64::from(e.by_hand == BY_HAND))
    .execute(&mut **tx)
    .await?;
    // A redelivered event stays marked as one (it holds up no later event of its subject).
    let by_hand = if e.by_hand == BY_HAND { REDELIVERED } else { e.by_hand };
    if a.delivered {
        // A success counts even if the event was given up while this try was under way.
        sqlx::query(
            "UPDATE events SET status = 'success', attempts = $1, delivered_at = $2, last_error = NULL, \
             by_hand = $4 WHERE id = $3 AND status IN ('pending', 'retryable', 'failed')",
        )
        .bind(attempts)
        .bind(at)
        .bind(&e.id)
        .bind(by_hand)
        .execute(&mut **tx)
        .await?;
    } else {
        let wait = policy.backoff.after(u32::try_from(attempts).unwrap_or(u32::MAX));
        let next = now + chrono::Duration::from_std(wait).unwrap_or(chrono::Duration::hours(1));
        let deadline =
            chrono::DateTime::parse_from_rfc3339(&e.tries_from).map(|t| t.with_timezone(&chrono::Utc)).unwrap_or(now)
                + chrono::Duration::from_std(policy.deliver_for).unwrap_or(chrono::Duration::days(1));
        let error = a.error.clone().unwrap_or_else(|| "not delivered".into());
        let (status, error) = if next > deadline {
            ("failed", format!("{error}; given up after {attempts} tries"))
        } else {
            ("retryable", error)
        };
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE events SET status = $1, attempts = $2, next_attempt_at = $3, last_error = $4, by_hand = $7 \
             WHERE id = $5 AND status IN {OPEN} AND attempts = $6"
        )))
        .bind(status)
        .bind(attempts)
        .bind(db::ts(next))
        .bind(&error)
        .bind(&e.id)
        .bind(e.attempts)
        .bind(by_hand)
        .execute(&mut **tx)
        .await?;
    }
    if attempts > DELIVERIES_KEPT {
        sqlx::query(
            "DELETE FROM webhook_deliveries WHERE event_id = $1 AND id NOT IN \
             (SELECT id FROM webhook_deliveries WHERE event_id = $1 ORDER BY at DESC LIMIT $2)",
        )
        .bind(&e.id)
        .bind(DELIVERIES_KEPT)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// Gives up the open events whose day has passed without a try that could end it (their
/// webhook was disabled meanwhile); answers how many.
pub async fn give_up_overdue(db: &Pool, policy: &DeliveryPolicy) -> ApiResult<u64> {
    let before =
        chrono::Utc::now() - chrono::Duration::from_std(policy.deliver_for).unwrap_or(chrono::Duration::days(1));
    // A read first: most of the time there is nothing to give up, and no write is needed.
    let overdue: Option<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT 1 FROM events WHERE status IN {OPEN} AND tries_from < $1 LIMIT 1"
    )))
    .bind(db::ts(before))
    .fetch_optional(db)
    .await?;
    if overdue.is_none() {
        return Ok(0);
    }
    Ok(sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE events SET status = 'failed', last_error = COALESCE(last_error || '; ', '') || \
         'given up after ' || attempts || ' tries: not delivered within its time' \
         WHERE status IN {OPEN} AND tries_from < $1"
    )))
    .bind(db::ts(before))
    .execute(db)
    .await?
    .rows_affected())
}

/// Removes delivered and given-up events older than [`EVENTS_KEPT_DAYS`], with their delivery
/// log (the janitor's).
pub async fn expire(db: &Pool) -> ApiResult<u64> {
    let before = db::ts(chrono::Utc::now() - chrono::Duration::days(EVENTS_KEPT_DAYS));
    let mut tx = begin_write(db, Scope::Rows).await?;
    let removed = async {
        sqlx::query(
            "DELETE FROM webhook_deliveries WHERE event_id IN (SELECT id FROM events \
             WHERE status IN ('success', 'failed') AND created_at < $1)",
        )
        .bind(&before)
        .execute(&mut *tx)
        .await?;
        Ok(sqlx::query("DELETE FROM events WHERE status IN ('success', 'failed') AND created_at < $1")
            .bind(&before)
            .execute(&mut *tx)
            .await?
            .rows_affected())
    }
    .await;
    db::finish(tx, removed).await
}
