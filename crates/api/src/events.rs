//! Webhooks and events. The reference schema has both, read-only (`webhooks`: `post_url`,
//! `event_type`, `enabled`, `api_version`, `created_at`; `events`: `payload`, `status`);
//! registering and changing webhooks, their secrets, filtering events by type, redelivery and the
//! delivery log are MGDS additions, listed in the README's "for lab IT" section.

use serde::{Deserialize, Serialize};

use crate::Ref;

/// A webhook's `event_type` that takes every type.
pub const EVERY_EVENT: &str = "*";

/// The event types the service emits, and what each is about (its `subject`, by which
/// deliveries keep their order).
pub const EVENT_TYPES: &[(&str, &str)] = &[
    ("sample.created", "a sample was made: by a pre-upload, or by an upload's confirmation"),
    ("sample.confirmed", "a sample's file arrived and was checked (its upload was confirmed)"),
    ("sample.updated", "a sample, its metadata or its tags changed"),
    ("sample.deleted", "a sample was deleted"),
    ("analysis.completed", "an analysis of a sample finished with results"),
    ("analysis.failed", "an analysis of a sample failed"),
    ("document.created", "a document was uploaded"),
    ("document.shared", "a document was shared with someone"),
    ("document.deleted", "a document was deleted"),
    ("project.created", "a project was made"),
    ("project.updated", "a project, its members or its sharing changed"),
    ("project.deleted", "a project was deleted"),
    ("batch.created", "a sequencing batch was made"),
    ("batch.updated", "a sequencing batch's status changed"),
    ("ping", "sent by hand to check a webhook (POST /api/v1/webhooks/{id}/ping)"),
];

/// Whether `t` is an event type a webhook may ask for (one of [`EVENT_TYPES`], or `*`).
pub fn is_event_type(t: &str) -> bool {
    t == EVERY_EVENT || EVENT_TYPES.iter().any(|(name, _)| *name == t)
}

/// A webhook: where an organisation's events of one type are POSTed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Webhook {
    /// Address of the webhook.
    #[serde(rename = "$uri")]
    pub uri: String,
    /// Where events are POSTed.
    pub post_url: String,
    /// The type of event sent (`sample.confirmed`), or `*` for every type.
    pub event_type: String,
    /// Whether events are made and sent; a disabled webhook's waiting events wait.
    pub enabled: bool,
    /// The API version of the payloads (`v1`).
    pub api_version: String,
    /// When it was registered (RFC 3339).
    pub created_at: String,
    /// Who registered it (an MGDS addition).
    #[serde(default)]
    pub created_by: Option<Ref>,
    /// Events made and not yet delivered or given up (an MGDS addition).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub waiting: i64,
}

/// `POST /api/v1/webhooks`: a webhook to register (an MGDS addition).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct WebhookCreate {
    /// Where to POST: an `http://` or `https://` address.
    pub post_url: String,
    /// The type of event to send, or `*` for every type.
    pub event_type: String,
    /// Whether it starts enabled (default `true`).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub enabled: Option<bool>,
}

/// `PATCH /api/v1/webhooks/{id}`: what to change (an MGDS addition).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct WebhookUpdate {
    /// A new address.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub post_url: Option<String>,
    /// A new event type.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub event_type: Option<String>,
    /// Enables or disables it.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub enabled: Option<bool>,
}

/// A webhook with its signing secret, answered once: when it is registered and when its secret
/// is replaced (`POST /api/v1/webhooks/{id}/secret`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WebhookWithSecret {
    /// The webhook.
    #[serde(flatten)]
    pub webhook: Webhook,
    /// The secret every delivery is signed with (`X-MGDS-Signature`); shown only now.
    pub secret: String,
}

/// Where an event's delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum EventStatus {
    /// Not tried yet (or asked for again by hand).
    Pending,
    /// Tried and not delivered; tried again later.
    Retryable,
    /// Delivered: the receiver answered 2xx.
    Success,
    /// Not delivered within a day of tries; given up.
    Failed,
}

impl EventStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            EventStatus::Pending => "pending",
            EventStatus::Retryable => "retryable",
            EventStatus::Success => "success",
            EventStatus::Failed => "failed",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<Self> {
        [EventStatus::Pending, EventStatus::Retryable, EventStatus::Success, EventStatus::Failed]
            .into_iter()
            .find(|v| v.as_str() == s)
    }
}

/// An event: something that happened in an organisation, as made for one webhook, with its
/// delivery's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Event {
    /// Address of the event.
    #[serde(rename = "$uri")]
    pub uri: String,
    /// The JSON body POSTed, as sent.
    pub payload: String,
    /// Where its delivery stands.
    pub status: EventStatus,
    /// Its type (an MGDS addition, as are the fields below).
    pub event_type: String,
    /// The webhook it is for.
    pub webhook: Ref,
    /// The record it is about (`/api/v1/samples/...`); deliveries for one webhook and one record
    /// are made in the order the events happened.
    pub subject: String,
    /// When it happened (RFC 3339).
    pub created_at: String,
    /// Tries so far.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub attempts: i64,
    /// When it is tried next (for `pending` and `retryable`).
    #[serde(default)]
    pub next_attempt_at: Option<String>,
    /// When it was delivered.
    #[serde(default)]
    pub delivered_at: Option<String>,
    /// Why the last try failed.
    #[serde(default)]
    pub last_error: Option<String>,
}

/// One try of an event's delivery, in a webhook's delivery log (an MGDS addition).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WebhookDelivery {
    /// The event delivered.
    pub event: Ref,
    /// Its type.
    pub event_type: String,
    /// When the try was made (RFC 3339).
    pub at: String,
    /// Whether the receiver took it (answered 2xx).
    pub delivered: bool,
    /// The receiver's HTTP status, if it answered.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub status_code: Option<i64>,
    /// Why it failed, in words.
    #[serde(default)]
    pub error: Option<String>,
    /// The first kilobyte of the receiver's answer.
    pub response: String,
    /// How long the try took, in milliseconds.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub duration_ms: i64,
    /// Whether someone asked for it by hand (a redelivery).
    pub by_hand: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_types_are_named_once_and_star_takes_every_one() {
        let mut names: Vec<&str> = EVENT_TYPES.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), EVENT_TYPES.len());
        assert!(is_event_type("*") && is_event_type("analysis.completed"));
        assert!(!is_event_type("sample.exploded"));
        for s in ["pending", "retryable", "success", "failed"] {
            assert_eq!(EventStatus::parse(s).map(EventStatus::as_str), Some(s));
        }
    }
}
