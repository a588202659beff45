//! What a change is, as the audit trail records it and the webhooks' events are made from it
//! ([`super::audit::record`] takes one): the action, the record, whose it is, and what changed.

use serde_json::{Value, json};

/// What one entry says of its change.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// What happened, `kind.verb` (`sample.updated`, `user.disabled`, `document.downloaded`).
    pub action: &'static str,
    /// The kind of record (`sample`, `metadata`, `project`, `document`, `user`, ...).
    pub kind: &'static str,
    /// The record's id.
    pub target: &'a str,
    /// The user whose organisation the entry belongs to: the record's owner, or the person a
    /// change of people is about.
    pub owner: &'a str,
    /// What changed: `{"field": [before, after]}`, or facts of the action.
    pub changes: Value,
}

impl<'a> Entry<'a> {
    /// An entry of `action` on `kind` `target`, owned by `owner`, with no details.
    pub fn new(action: &'static str, kind: &'static str, target: &'a str, owner: &'a str) -> Self {
        Entry { action, kind, target, owner, changes: json!({}) }
    }

    /// With these details.
    pub fn with(mut self, changes: Value) -> Self {
        self.changes = changes;
        self
    }
}

/// What a change asked for (`asked`: the fields given, `null` to clear) did to a record that
/// was `before`: `{"field": [before, after]}` for each field it changed.
pub fn changed(before: &Value, asked: &Value) -> Value {
    let mut out = serde_json::Map::new();
    if let Some(fields) = asked.as_object() {
        for (k, after) in fields {
            let was = before.get(k).unwrap_or(&Value::Null);
            if was != after {
                out.insert(k.clone(), json!([was, after]));
            }
        }
    }
    Value::Object(out)
}

/// Most bytes of an entry's `changes` kept (a description changed from one long text to
/// another); longer values are cut, saying so. Events carry the same.
pub const MAX_CHANGES_BYTES: usize = 16 * 1024;

/// `changes` as kept: whole up to [`MAX_CHANGES_BYTES`] as JSON text, else a marker with its
/// size and its first 1,000 characters.
pub fn bounded(changes: &Value) -> Value {
    let text = changes.to_string();
    if text.len() <= MAX_CHANGES_BYTES {
        return changes.clone();
    }
    json!({"truncated": true, "bytes": text.len(), "start": text.chars().take(1000).collect::<String>()})
}
