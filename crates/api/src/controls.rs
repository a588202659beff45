//! Negative controls (the reference schema's `controls` analyses): which samples are controls,
//! what a control's sequencing batch is, and what the service hands the scoring and takes back.
//!
//! A controls analysis runs on a negative control and scores every taxon of its batch's samples
//! against it (and against the batch's other controls) as decontam does. The scoring itself is
//! the application logic the comparison's contaminants view uses, so the service and the
//! screens cannot disagree; the service supplies the batch's samples and their newest finished
//! classifications ([`ControlsInput`]) and stores what comes back ([`ControlsOutput`]).

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::{ClassificationResults, Metadata};

/// Values of a sample's custom field `control` (or `negative_control`) that mark it as a
/// negative control, compared with case, hyphens, underscores and runs of spaces aside.
pub const CONTROL_VALUES: [&str; 9] = [
    "negative",
    "negative control",
    "blank",
    "extraction blank",
    "kit blank",
    "ntc",
    "no template control",
    "yes",
    "true",
];

/// The custom fields that name a sample's sequencing batch, in the order they are looked for
/// when a controls analysis names none: a batch number (`sequencing_batch`, as the
/// `/sequencing/batches` records number them), a lab's own `batch`, and the `run_id` a watched
/// sequencer folder gives every sample of a run.
pub const BATCH_FIELDS: [&str; 3] = ["sequencing_batch", "batch", "run_id"];

/// The most samples (controls among them) one controls analysis scores: a 384-well plate with
/// room to spare. A batch with more is refused with the reason.
pub const MAX_BATCH_SAMPLES: usize = 400;

/// The control a sample's metadata marks it as (the value, normalised), if any.
pub fn control_kind(m: &Metadata) -> Option<String> {
    let value = m.custom.iter().find_map(|(k, v)| {
        let k = k.trim().to_ascii_lowercase();
        (k == "control" || k == "negative_control").then_some(v)
    })?;
    let text = match value {
        Value::String(s) => {
            s.to_ascii_lowercase().replace(['-', '_'], " ").split_whitespace().collect::<Vec<_>>().join(" ")
        }
        Value::Bool(true) => "true".into(),
        _ => return None,
    };
    CONTROL_VALUES.contains(&text.as_str()).then_some(text)
}

/// The value of `field` in a sample's custom metadata as text (a number or a flag as written),
/// `None` when absent, null or empty.
pub fn custom_text(m: &Metadata, field: &str) -> Option<String> {
    match m.custom.get(field)? {
        Value::Null => None,
        Value::String(s) if s.trim().is_empty() => None,
        Value::String(s) => Some(s.trim().to_string()),
        other => Some(other.to_string()),
    }
}

/// One sample of a control's batch, as the service found it.
#[derive(Debug, Clone)]
pub struct BatchSample {
    /// Its id.
    pub id: String,
    /// Its name (the metadata's name, else its file's).
    pub name: String,
    /// Its metadata.
    pub metadata: Metadata,
    /// Its newest finished classification's results, if it has one.
    pub results: Option<Arc<ClassificationResults>>,
    /// Why it has none, in words (`None` when it has results).
    pub missing: Option<String>,
}

/// What a controls analysis scores.
#[derive(Debug, Clone)]
pub struct ControlsInput {
    /// The control the analysis ran on.
    pub control: String,
    /// The field that names the batch, and its value.
    pub batch_field: String,
    /// The batch's value of that field.
    pub batch: String,
    /// The batch's samples, the control first.
    pub samples: Vec<BatchSample>,
    /// The analysis's arguments (method, threshold, rank, concentration field, host).
    pub args: Map<String, Value>,
}

/// What the scoring gives back.
#[derive(Debug, Clone)]
pub struct ControlsOutput {
    /// The results JSON (`/controls/{id}/results`).
    pub results: Value,
    /// The scores as CSV (`/controls/{id}/files`).
    pub table_csv: Vec<u8>,
    /// The samples scored (controls and true samples): those whose pages mark the flagged taxa.
    pub scored: Vec<String>,
}

/// The scoring a service is given: the application's ([`ControlsInput`] in, a result or the
/// reason in words out).
pub type ScoreControls = fn(ControlsInput) -> Result<ControlsOutput, String>;

#[cfg(test)]
mod tests {
    use super::*;

    fn with(k: &str, v: Value) -> Metadata {
        let mut m: Metadata = serde_json::from_value(
            serde_json::json!({"$uri": "/api/v1/metadata/x", "sample": {"$ref": "/api/v1/samples/x"}}),
        )
        .unwrap();
        m.custom.insert(k.into(), v);
        m
    }

    #[test]
    fn controls_are_marked_by_their_metadata() {
        assert_eq!(control_kind(&with("control", "Negative ".into())).as_deref(), Some("negative"));
        assert_eq!(control_kind(&with("Control", "blank".into())).as_deref(), Some("blank"));
        assert_eq!(control_kind(&with("negative_control", true.into())).as_deref(), Some("true"));
        assert_eq!(
            control_kind(&with("control", "No-Template  control".into())).as_deref(),
            Some("no template control")
        );
        assert_eq!(control_kind(&with("control", "positive".into())), None);
        assert_eq!(control_kind(&with("negative_control", false.into())), None);
        assert_eq!(control_kind(&with("site", "blank".into())), None);
    }

    #[test]
    fn batch_values_are_read_as_text() {
        assert_eq!(custom_text(&with("batch", " B-7 ".into()), "batch").as_deref(), Some("B-7"));
        assert_eq!(custom_text(&with("batch", 7.into()), "batch").as_deref(), Some("7"));
        assert_eq!(custom_text(&with("batch", "  ".into()), "batch"), None);
        assert_eq!(custom_text(&with("batch", Value::Null), "batch"), None);
        assert_eq!(custom_text(&with("run", "x".into()), "batch"), None);
    }
}
