//! What a controls analysis reads (its control, the control's sequencing batch, and each of the
//! batch's samples' primary classification, else its newest finished one) and which samples' pages its scores
//! mark afterwards.
//!
//! The batch is the samples of the control's project when it has one, else its owner's samples
//! outside projects, whose custom field (`batch_field`, else the first of
//! [`BATCH_FIELDS`](mgds_api::controls::BATCH_FIELDS) the control has) holds the control's value
//! of it: at most [`MAX_BATCH_SAMPLES`] of them. Anyone who may see the control may read its
//! scores, which name the batch's samples, as a document shared with them would.

use std::sync::Arc;

use futures::StreamExt;
use mgds_api::controls::{BATCH_FIELDS, BatchSample, ControlsInput, MAX_BATCH_SAMPLES, control_kind, custom_text};
use mgds_api::{Analysis, ClassificationResults, Metadata};
use serde_json::{Map, Value};

use super::access;
use super::caller::Caller;
use super::db::{args, numbered};
use super::handle::Store;
use super::metadata::{self, MetadataRow};
use crate::error::{ApiError, ApiResult};
use crate::listing::Bind;

/// Why a batch could not be read.
#[derive(Debug)]
pub enum Unreadable {
    /// Running again would not change it; the reason in words.
    Refused(String),
    /// The database or the store failed; may pass.
    Transient(String),
}

impl From<ApiError> for Unreadable {
    fn from(e: ApiError) -> Self {
        Unreadable::Transient(format!("the service could not read what the analysis is made from: {e}"))
    }
}

impl From<sqlx::Error> for Unreadable {
    fn from(e: sqlx::Error) -> Self {
        Unreadable::Transient(format!("the service could not read what the analysis is made from: {e}"))
    }
}

/// How to mark a control, for the refusals.
fn marking() -> String {
    format!(
        "mark a negative control with a custom metadata field \"control\" set to one of: {}",
        mgds_api::controls::CONTROL_VALUES.join(", ")
    )
}

/// The field that names a control's batch: the one the arguments name, else the first of
/// [`BATCH_FIELDS`] the control has; with its value.
fn batch_of(control: &Metadata, job_args: &Map<String, Value>) -> Result<(String, String), String> {
    if let Some(field) = job_args.get("batch_field").and_then(Value::as_str).map(str::trim).filter(|f| !f.is_empty()) {
        return match custom_text(control, field) {
            Some(v) => Ok((field.to_string(), v)),
            None => Err(format!(
                "the control has no value in its batch field \"{}\": give it the batch's value there, or run the job without batch_field",
                shown(field)
            )),
        };
    }
    BATCH_FIELDS.iter().find_map(|f| custom_text(control, f).map(|v| (f.to_string(), v))).ok_or_else(|| {
        format!(
            "the control names no sequencing batch: give it and its batch's samples the same value in a custom field ({}; a watched sequencer folder sets run_id), or name the field in the job's batch_field",
            BATCH_FIELDS.join(", ")
        )
    })
}

/// Checks, when a controls job is run on `sample_id`, that the sample is a negative control
/// and names its batch: a 400 saying what to add otherwise.
pub async fn check_control(state: &Store, sample_id: &str, job_args: &Map<String, Value>) -> ApiResult<()> {
    let control =
        metadata::of_sample_row(&state.db, sample_id).await?.ok_or_else(|| ApiError::not_found("sample"))?.into_api();
    if control_kind(&control).is_none() {
        return Err(ApiError::BadRequest(format!("this sample is not a negative control: {}", marking())));
    }
    batch_of(&control, job_args).map(drop).map_err(ApiError::BadRequest)
}

#[derive(sqlx::FromRow)]
struct Candidate {
    #[sqlx(flatten)]
    metadata: MetadataRow,
    filename: Option<String>,
}

#[derive(sqlx::FromRow)]
struct Classified {
    sample_id: String,
    complete: i64,
    success: i64,
    results_key: Option<String>,
}

/// The control of the controls analysis `analysis_id` and its batch, each sample with its
/// classification (primary, else newest finished; or why it has none), the control first.
pub async fn gather(state: &Store, analysis_id: &str) -> Result<ControlsInput, Unreadable> {
    let row: Option<(String, Option<String>)> =
        sqlx::query_as("SELECT sample_id, job_args FROM analyses WHERE id = $1")
            .bind(analysis_id)
            .fetch_optional(&state.db)
            .await?;
    let Some((control_id, job_args)) = row else {
        return Err(Unreadable::Refused("the analysis or its sample was deleted".into()));
    };
    let job_args: Map<String, Value> = job_args.and_then(|a| serde_json::from_str(&a).ok()).unwrap_or_default();
    let owner: Option<(String, Option<String>)> =
        sqlx::query_as("SELECT owner_id, project_id FROM samples WHERE id = $1")
            .bind(&control_id)
            .fetch_optional(&state.db)
            .await?;
    let Some((owner, project)) = owner else {
        return Err(Unreadable::Refused("the control was deleted".into()));
    };
    let control = metadata::of_sample_row(&state.db, &control_id)
        .await?
        .ok_or_else(|| Unreadable::Refused("the control was deleted".into()))?
        .into_api();
    if control_kind(&control).is_none() {
        return Err(Unreadable::Refused(format!("the sample is no longer a negative control: {}", marking())));
    }
    let (field, value) = batch_of(&control, &job_args).map_err(Unreadable::Refused)?;
    // Samples whose stored metadata holds `"field":<the control's value>` (custom fields are
    // stored as compact JSON), checked exactly below.
    let needle = format!(
        "%{}:{}%",
        like_escaped(&Value::String(field.clone()).to_string()),
        like_escaped(&control.custom.get(&field).cloned().unwrap_or(Value::Null).to_string())
    );
    let mut binds = vec![Bind::Text(needle), Bind::Text(owner)];
    // The control's scope: its project's samples, or, outside projects, its owner's samples
    // outside projects; never a sample its readers would not see beside it.
    let whose = match project {
        Some(p) => {
            binds[1] = Bind::Text(p);
            "s.project_id = ?"
        }
        None => "s.owner_id = ? AND s.project_id IS NULL",
    };
    binds.push(Bind::Int(2 * (MAX_BATCH_SAMPLES as i64 + 1)));
    let sql = format!(
        "SELECT {}, s.filename AS filename FROM metadata m JOIN samples s ON s.id = m.sample_id \
         WHERE m.custom LIKE ? ESCAPE '\\' AND {whose} ORDER BY s.created_at ASC, s.id ASC LIMIT ?",
        metadata::COLUMNS
    );
    let candidates: Vec<Candidate> = sqlx::query_as_with(numbered(sql), args(&binds)?).fetch_all(&state.db).await?;
    // The candidates are a prefilter (a number's value also finds longer numbers that start
    // with it): all of them are read, or the batch is refused, never scored in part.
    if candidates.len() >= 2 * (MAX_BATCH_SAMPLES + 1) {
        return Err(Unreadable::Refused(format!(
            "more than {} samples have a value of \"{}\" like \"{}\"; give each run's samples a batch value of their own",
            2 * MAX_BATCH_SAMPLES,
            shown(&field),
            shown(&value)
        )));
    }
    let mut members: Vec<(String, Metadata)> = candidates
        .into_iter()
        .map(|c| {
            let m = c.metadata.into_api();
            let name =
                m.name.clone().filter(|n| !n.trim().is_empty()).or(c.filename).unwrap_or_else(|| "a sample".into());
            (name, m)
        })
        .filter(|(_, m)| custom_text(m, &field).as_deref() == Some(value.as_str()))
        .collect();
    if members.len() > MAX_BATCH_SAMPLES {
        return Err(Unreadable::Refused(format!(
            "the batch \"{}\" = \"{}\" has more than {MAX_BATCH_SAMPLES} samples; give each run's samples a batch value of their own",
            shown(&field),
            shown(&value)
        )));
    }
    // The control first.
    members.sort_by_key(|(_, m)| m.sample.id() != control_id);
    if members.first().is_none_or(|(_, m)| m.sample.id() != control_id) {
        return Err(Unreadable::Refused("the control was deleted".into()));
    }
    let newest =
        newest_classifications(state, members.iter().map(|(_, m)| m.sample.id().to_string()).collect()).await?;
    let loaded: Vec<Result<BatchSample, Unreadable>> = futures::stream::iter(members.into_iter().map(|(name, m)| {
        let found = newest.get(m.sample.id()).cloned();
        async move {
            let id = m.sample.id().to_string();
            let (results, missing) = match found {
                Some(Newest::Finished(key)) => {
                    let bytes = state.storage.read(&key).await.map_err(|e| {
                        Unreadable::Transient(format!("the results of a classification could not be read: {e}"))
                    })?;
                    match bytes.and_then(|b| serde_json::from_slice::<ClassificationResults>(&b).ok()) {
                        Some(r) => (Some(Arc::new(r)), None),
                        None => (None, Some("its classification's results could not be read".to_string())),
                    }
                }
                Some(Newest::Running) => (None, Some("it is still being classified".to_string())),
                None => (None, Some("it has no finished classification".to_string())),
            };
            Ok(BatchSample { id, name, metadata: m, results, missing })
        }
    }))
    .buffered(8)
    .collect()
    .await;
    let samples: Vec<BatchSample> = loaded.into_iter().collect::<Result<_, _>>()?;
    if let Some(first) = samples.first()
        && first.results.is_none()
    {
        return Err(Unreadable::Refused(format!(
            "the control has no classification to score against ({}); run this job again once it has",
            first.missing.as_deref().unwrap_or("none")
        )));
    }
    Ok(ControlsInput { control: control_id, batch_field: field, batch: value, samples, args: job_args })
}

#[derive(Clone)]
enum Newest {
    Finished(String),
    Running,
}

/// Each sample's classification as the comparison reads it: its primary classification (so a
/// batch is scored from one database, as its pages show it), else its newest successful one;
/// `Running` while the one it would be is not finished.
async fn newest_classifications(
    state: &Store,
    ids: Vec<String>,
) -> Result<std::collections::HashMap<String, Newest>, Unreadable> {
    let mut out = std::collections::HashMap::new();
    if ids.is_empty() {
        return Ok(out);
    }
    let marks = vec!["?"; ids.len()].join(", ");
    let binds: Vec<Bind> = ids.into_iter().map(Bind::Text).collect();
    let primary = format!(
        "SELECT s.id AS sample_id, a.complete, a.success, a.results_key FROM samples s \
         JOIN analyses a ON a.id = s.primary_classification_id WHERE s.id IN ({marks})"
    );
    let primaries: Vec<Classified> = sqlx::query_as_with(numbered(primary), args(&binds)?).fetch_all(&state.db).await?;
    for r in primaries {
        match (r.complete != 0, r.success != 0, r.results_key) {
            (true, true, Some(key)) => out.insert(r.sample_id, Newest::Finished(key)),
            (false, _, _) => out.insert(r.sample_id, Newest::Running),
            // A primary classification that failed: the newest that did not, below.
            _ => None,
        };
    }
    let sql = format!(
        "SELECT sample_id, complete, success, results_key FROM analyses \
         WHERE analysis_type = 'classification' AND sample_id IN ({marks}) ORDER BY created_at DESC, id DESC"
    );
    let rows: Vec<Classified> = sqlx::query_as_with(numbered(sql), args(&binds)?).fetch_all(&state.db).await?;
    let decided: std::collections::HashSet<String> = out.keys().cloned().collect();
    for r in rows.into_iter().filter(|r| !decided.contains(&r.sample_id)) {
        match (r.complete != 0, r.success != 0, r.results_key) {
            (true, true, Some(key)) => {
                let e = out.entry(r.sample_id).or_insert(Newest::Running);
                if matches!(e, Newest::Running) {
                    *e = Newest::Finished(key);
                }
            }
            (false, _, _) => {
                out.entry(r.sample_id).or_insert(Newest::Running);
            }
            _ => {}
        }
    }
    Ok(out)
}

/// A name or value from a sample's metadata as a message shows it: at most 60 characters, on
/// one line.
fn shown(s: &str) -> String {
    let mut out: String = s.chars().filter(|c| !c.is_control()).take(60).collect();
    if s.chars().count() > 60 {
        out.push('…');
    }
    out
}

/// `s` with LIKE's wildcards and its escape character escaped (by `\`).
fn like_escaped(s: &str) -> String {
    s.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
}

/// The most controls analyses one sample's list names.
pub const MAX_SCORED_BY: i64 = 20;

/// The finished controls analyses that scored the sample `sample_id` (as `/controls` shows them),
/// newest first, at most [`MAX_SCORED_BY`], of those the caller may see.
pub async fn scored_by(state: &Store, caller: &Caller, sample_id: &str) -> ApiResult<Vec<Analysis>> {
    super::samples::get(state, caller, sample_id).await?;
    let ids: Vec<String> = {
        let visible = access::via_sample(caller, "a", "sample_id");
        let sql = format!(
            "SELECT a.id FROM control_scored c JOIN analyses a ON a.id = c.analysis_id \
             WHERE c.sample_id = ? AND a.complete = 1 AND a.success = 1 AND ({}) \
             ORDER BY a.created_at DESC, a.id DESC LIMIT ?",
            visible.sql
        );
        let mut binds = vec![Bind::Text(sample_id.to_string())];
        binds.extend(visible.binds);
        binds.push(Bind::Int(MAX_SCORED_BY));
        sqlx::query_scalar_with(numbered(sql), args(&binds)?).fetch_all(&state.db).await?
    };
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        out.push(super::analyses::get(state, caller, &id, Some(super::analyses::AnalysisKind::Control)).await?);
    }
    Ok(out)
}
