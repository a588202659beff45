//! Negative controls as analyses (the reference schema's `/controls`): a job run on a sample
//! marked as a negative control scores every taxon of the control's sequencing batch against
//! the batch's controls (decontam's methods) and marks the taxa it calls contaminants on the
//! pages of the batch's samples; nothing is subtracted.
//!
//! The scoring is the application's (the comparison's contaminants view), which this crate
//! does not link: the program that runs the service hands it over once at start
//! ([`provide`]), as `mgds` and the desktop app do. A service without it has no controls job,
//! and its workers never claim one. What a run reads (the control, its batch, their newest
//! classifications) is [`crate::store::controls`]'s; it reads stored results, never a sample's
//! reads, so it runs in the worker itself, bounded by [`mgds_api::controls::MAX_BATCH_SAMPLES`].

use std::sync::OnceLock;

use mgds_api::controls::ScoreControls;
use serde_json::Value;

/// The job's engine name.
pub const ENGINE: &str = "mgds-decontam";

/// The scoring this process was given.
#[derive(Debug, Clone)]
pub struct Scoring {
    /// The scoring.
    pub score: ScoreControls,
    /// Its version: a new version is a new job.
    pub version: &'static str,
    /// The job's arguments, as JSON Schema.
    pub args_schema: Value,
}

static SCORING: OnceLock<Scoring> = OnceLock::new();

/// Gives this process the scoring of controls analyses; the first call wins (a test binary
/// starting several services calls it once per service).
pub fn provide(score: ScoreControls, version: &'static str, args_schema: Value) {
    let _ = SCORING.set(Scoring { score, version, args_schema });
}

/// The scoring, if this process was given one.
pub fn scoring() -> Option<&'static Scoring> {
    SCORING.get()
}

/// The name of the controls job.
pub const JOB_NAME: &str = "Negative controls (decontam)";
