//! What a sample's report (the reference's `/reports`) is made from: the sample, its metadata,
//! its primary (else newest) finished classification, its newest panel with the jobs that made them, and the lab (the
//! sample owner's organisation, with its logo). Read by the worker that makes the report; results are read
//! from the store, never the sample's reads.

use std::sync::Arc;

use mgds_api::{ClassificationResults, Metadata, PanelResults};
use serde_json::{Map, Value};

use super::controls::Unreadable;
use super::handle::Store;
use super::metadata;

/// An analysis and the job that made it.
#[derive(Debug, Clone)]
pub struct Made {
    /// The analysis's id.
    pub analysis_id: String,
    /// The job's name.
    pub job_name: String,
    /// Its engine.
    pub engine: String,
    /// The engine's version.
    pub engine_version: String,
    /// Its reference data's digest.
    pub reference: String,
    /// The arguments it ran with.
    pub args: Map<String, Value>,
    /// When it finished.
    pub finished_at: String,
}

/// What a report of a sample is made from.
#[derive(Debug, Clone)]
pub struct ReportInput {
    /// The sample's id.
    pub sample_id: String,
    /// Its file's name.
    pub filename: Option<String>,
    /// Its file's size.
    pub size: Option<u64>,
    /// When it was uploaded.
    pub uploaded: String,
    /// Its metadata.
    pub metadata: Option<Metadata>,
    /// The lab: the sample owner's organisation's name on reports.
    pub lab: String,
    /// Its logo, if it has one.
    pub logo: Option<Vec<u8>>,
    /// Its classification: the primary one where it finished well, else the newest.
    pub classification: Option<(Arc<ClassificationResults>, Made)>,
    /// Its newest finished panel.
    pub panel: Option<(Arc<PanelResults>, Made)>,
}

#[derive(sqlx::FromRow)]
struct Finished {
    id: String,
    results_key: Option<String>,
    job_args: Option<String>,
    updated_at: String,
    name: String,
    engine: String,
    engine_version: String,
    reference: String,
}

/// The sample's successful analysis of `kind`, with its results parsed: its primary
/// classification where that finished well (what its page shows), else the newest.
async fn newest<T: serde::de::DeserializeOwned>(
    state: &Store,
    sample_id: &str,
    kind: &str,
) -> Result<Option<(Arc<T>, Made)>, Unreadable> {
    let row: Option<Finished> = sqlx::query_as(
        "SELECT a.id, a.results_key, a.job_args, a.updated_at, j.name, j.engine, j.engine_version, j.reference \
         FROM analyses a JOIN jobs j ON j.id = a.job_id \
         WHERE a.sample_id = $1 AND a.analysis_type = $2 AND a.complete = 1 AND a.success = 1 \
         ORDER BY CASE WHEN a.id = (SELECT primary_classification_id FROM samples WHERE id = $1) THEN 0 ELSE 1 END, \
         a.created_at DESC, a.id DESC LIMIT 1",
    )
    .bind(sample_id)
    .bind(kind)
    .fetch_optional(&state.db)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let Some(key) = row.results_key else { return Ok(None) };
    let bytes = state
        .storage
        .read(&key)
        .await
        .map_err(|e| Unreadable::Transient(format!("the results of the sample's {kind} could not be read: {e}")))?
        .ok_or_else(|| Unreadable::Refused(format!("the results of the sample's {kind} are missing from the store")))?;
    let results: T = serde_json::from_slice(&bytes)
        .map_err(|e| Unreadable::Refused(format!("the results of the sample's {kind} could not be read: {e}")))?;
    let made = Made {
        analysis_id: row.id,
        job_name: row.name,
        engine: row.engine,
        engine_version: row.engine_version,
        reference: row.reference,
        args: row.job_args.and_then(|a| serde_json::from_str(&a).ok()).unwrap_or_default(),
        finished_at: row.updated_at,
    };
    Ok(Some((Arc::new(results), made)))
}

/// What the report analysis `analysis_id` is made from.
pub async fn gather(state: &Store, analysis_id: &str) -> Result<ReportInput, Unreadable> {
    #[derive(sqlx::FromRow)]
    struct SampleRow {
        id: String,
        filename: Option<String>,
        size: Option<i64>,
        created_at: String,
        lab: String,
        org: String,
    }
    let sample: Option<SampleRow> = sqlx::query_as(
        "SELECT s.id, s.filename, s.size, s.created_at, COALESCE(o.lab_name, o.name) AS lab, o.id AS org FROM analyses a \
         JOIN samples s ON s.id = a.sample_id JOIN users u ON u.id = s.owner_id \
         JOIN organizations o ON o.id = u.organization_id WHERE a.id = $1",
    )
    .bind(analysis_id)
    .fetch_optional(&state.db)
    .await?;
    let Some(sample) = sample else {
        return Err(Unreadable::Refused("the analysis or its sample was deleted".into()));
    };
    let metadata = metadata::of_sample_row(&state.db, &sample.id).await?.map(|m| m.into_api());
    let classification = newest::<ClassificationResults>(state, &sample.id, "classification").await?;
    let panel = newest::<PanelResults>(state, &sample.id, "panel").await?;
    let logo = super::lab::logo_of(state, &sample.org)
        .await
        .map_err(|e| Unreadable::Transient(format!("the lab's logo could not be read: {e}")))?
        .map(|b| b.to_vec());
    Ok(ReportInput {
        filename: sample.filename,
        size: sample.size.and_then(|s| u64::try_from(s).ok()),
        uploaded: sample.created_at,
        metadata,
        lab: sample.lab,
        logo,
        classification,
        panel,
        sample_id: sample.id,
    })
}
