//! Analyses: the kinds and their collections, the records as each collection shows them, and
//! what an engine produced (the results JSON and a file beside it), stored when a run ends.

use bytes::Bytes;
use mgds_api::{Analysis, ErrorCode, Ref};

use super::access;
use super::caller::Caller;
use super::db::{self, Scope, begin_write, flag};
use super::deletes::{queue_delete, remove_queued};
use super::handle::Store;
use super::records::{self, Found, ListQuery, ListSpec};
use crate::error::{ApiError, ApiResult};
use crate::listing::{Bind, Compiled, Field, FieldKind};

pub(crate) use super::analysis_kind::ANALYSIS_TYPES;
pub use super::analysis_kind::AnalysisKind;

/// The fields of `where` and `sort` in lists of analyses.
pub(crate) const ANALYSIS_FIELDS: &[Field] = &[
    Field { name: "$uri", column: "a.id", kind: FieldKind::Uri { collection: "analyses" }, sortable: true },
    Field { name: "created_at", column: "a.created_at", kind: FieldKind::DateTime, sortable: true },
    Field { name: "updated_at", column: "a.updated_at", kind: FieldKind::DateTime, sortable: true },
    Field { name: "analysis_type", column: "a.analysis_type", kind: FieldKind::Enum(&ANALYSIS_TYPES), sortable: true },
    Field { name: "complete", column: "a.complete", kind: FieldKind::Bool, sortable: true },
    Field { name: "success", column: "a.success", kind: FieldKind::Bool, sortable: true },
    Field { name: "error_msg", column: "a.error_msg", kind: FieldKind::Text, sortable: true },
    Field { name: "job", column: "a.job_id", kind: FieldKind::Ref { collection: "jobs" }, sortable: true },
    Field { name: "sample", column: "a.sample_id", kind: FieldKind::Ref { collection: "samples" }, sortable: true },
    Field { name: "tax_id", column: "a.tax_id", kind: FieldKind::Text, sortable: true },
];

const ANALYSES: ListSpec = ListSpec {
    from: "analyses a",
    columns: "a.id, a.analysis_type, a.created_at, a.updated_at, a.complete, a.success, a.error_msg, a.job_id, \
              a.sample_id, a.job_args, a.description, a.tax_id, a.readlevel_key, \
              (SELECT json_group_array(json_object('id', d.dependency_id)) \
               FROM analysis_dependencies d WHERE d.analysis_id = a.id) AS deps, \
              (SELECT j.draft FROM jobs j WHERE j.id = a.job_id) AS draft",
    fields: ANALYSIS_FIELDS,
    default_order: "a.created_at ASC",
    tiebreak: "a.id ASC",
};

#[derive(sqlx::FromRow)]
struct AnalysisRow {
    id: String,
    analysis_type: String,
    created_at: String,
    updated_at: String,
    complete: i64,
    success: i64,
    error_msg: Option<String>,
    job_id: String,
    sample_id: String,
    job_args: Option<String>,
    description: Option<String>,
    tax_id: Option<String>,
    readlevel_key: Option<String>,
    deps: String,
    draft: i64,
}

impl AnalysisRow {
    /// The record as the collection `kind` (or `/analyses` for `None`) shows it.
    fn into_api(self, kind: Option<AnalysisKind>) -> Analysis {
        let collection = kind.map_or("analyses", AnalysisKind::collection);
        // The spec: classifications and /analyses carry analysis_type; the other kinds do not.
        let show_type = matches!(kind, None | Some(AnalysisKind::Classification));
        #[derive(serde::Deserialize)]
        struct Dep {
            id: Option<String>,
        }
        let deps: Vec<Dep> = serde_json::from_str(&self.deps).unwrap_or_default();
        Analysis {
            uri: Ref::new(collection, &self.id).uri,
            analysis_type: show_type.then(|| self.analysis_type.clone()),
            created_at: self.created_at,
            updated_at: Some(self.updated_at),
            complete: flag(self.complete),
            success: flag(self.success),
            error_msg: Some(self.error_msg.unwrap_or_default()),
            job: Ref::new("jobs", &self.job_id),
            sample: Ref::new("samples", &self.sample_id),
            job_args: self.job_args.and_then(|j| serde_json::from_str(&j).ok()),
            description: self.description,
            dependencies: deps.into_iter().filter_map(|d| Some(Ref::new("analyses", &d.id?))).collect(),
            cost: None,
            draft: flag(self.draft),
            // Where the real service gives a results_uri it is the results JSON, which its clients
            // fetch instead of `.../results`; here they use `.../results`, and output files are
            // listed by `.../file_details`.
            results_uri: None,
            tax_id: if kind == Some(AnalysisKind::Alignment) || (kind.is_none() && self.analysis_type == "alignment") {
                self.tax_id
            } else {
                None
            },
        }
    }
}

fn of_kind(kind: Option<AnalysisKind>) -> Option<Compiled> {
    kind.map(|k| Compiled { sql: "a.analysis_type = ?".into(), binds: vec![Bind::Text(k.analysis_type().into())] })
}

/// One page of the analyses of `kind` (all kinds for `None`) of the samples the caller may see.
pub async fn list(
    state: &Store,
    caller: &Caller,
    q: &ListQuery<'_>,
    kind: Option<AnalysisKind>,
) -> ApiResult<Found<Analysis>> {
    let rows: Found<AnalysisRow> =
        records::list_parts(&state.db, &ANALYSES, q, access::analysis_parts(caller), of_kind(kind)).await?;
    Ok(rows.map(|r| r.into_api(kind)))
}

/// The statements of [`list`] for a list whose total is `total`: for checking their plans.
#[doc(hidden)]
pub fn list_statements(
    caller: &Caller,
    q: &ListQuery<'_>,
    kind: Option<AnalysisKind>,
    total: i64,
) -> ApiResult<Vec<records::Statement>> {
    records::parts_statements(&ANALYSES, q, &access::analysis_parts(caller), of_kind(kind).as_ref(), total)
}

/// One page of the analyses of `kind` of public samples.
pub async fn list_public(state: &Store, q: &ListQuery<'_>, kind: Option<AnalysisKind>) -> ApiResult<Found<Analysis>> {
    list(state, &Caller(None), q, kind).await
}

/// The analysis `id` of `kind` if the caller may see it; an analysis of another kind answers
/// like a missing one.
async fn visible(state: &Store, caller: &Caller, id: &str, kind: Option<AnalysisKind>) -> ApiResult<AnalysisRow> {
    let row: Option<AnalysisRow> =
        records::fetch_one(&state.db, &ANALYSES, "a.id", id, access::via_sample(caller, "a", "sample_id")).await?;
    let what = kind.map_or("analysis", |k| k.analysis_type());
    row.filter(|r| kind.is_none_or(|k| r.analysis_type == k.analysis_type())).ok_or_else(|| ApiError::not_found(what))
}

/// Checks that the caller may see the analysis `id` (of any kind).
pub(crate) async fn check_visible(state: &Store, caller: &Caller, id: &str) -> ApiResult<()> {
    visible(state, caller, id, None).await.map(drop)
}

/// The analysis `id` as the collection `kind` shows it, if the caller may see it.
pub async fn get(state: &Store, caller: &Caller, id: &str, kind: Option<AnalysisKind>) -> ApiResult<Analysis> {
    Ok(visible(state, caller, id, kind).await?.into_api(kind))
}

/// [`get`], once the analysis is complete or `wait` has passed: woken when this process stores
/// an outcome, and looking again every second for outcomes stored by other processes (workers
/// of their own, other hosts). Only a signed-in caller waits, and at most [`super::handle::MAX_WAITS`] at once
/// across the service; others are answered at once.
pub async fn get_when_complete(
    state: &Store,
    caller: &Caller,
    id: &str,
    kind: Option<AnalysisKind>,
    wait: std::time::Duration,
) -> ApiResult<Analysis> {
    let permit = if caller.0.is_some() { state.waits.clone().try_acquire_owned().ok() } else { None };
    if permit.is_none() {
        return get(state, caller, id, kind).await;
    }
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let finished = state.finished.notified();
        let a = get(state, caller, id, kind).await?;
        let now = tokio::time::Instant::now();
        if a.complete || now >= deadline {
            return Ok(a);
        }
        let pause = (deadline - now).min(std::time::Duration::from_secs(1));
        tokio::select! {
            () = finished => {}
            () = tokio::time::sleep(pause) => {}
        }
    }
}

/// Explains why a visible analysis has no results yet.
async fn not_ready(state: &Store, id: &str) -> ApiResult<ApiError> {
    let (complete, success, msg): (i64, i64, Option<String>) =
        sqlx::query_as("SELECT complete, success, error_msg FROM analyses WHERE id = $1")
            .bind(id)
            .fetch_one(&state.db)
            .await?;
    let not_finished = |why: String| ApiError::BadRequest(why).with_code(ErrorCode::AnalysisNotFinished);
    Ok(match (complete != 0, success != 0) {
        (false, _) => not_finished("the analysis has not finished yet; try again when it is complete".into()),
        (true, false) => {
            not_finished(format!("the analysis failed, so it has no results: {}", msg.unwrap_or_default()))
        }
        (true, true) => ApiError::BadRequest("this analysis produced no results of this kind".into()),
    })
}

/// The results JSON of the analysis `id` of `kind`, as stored.
pub async fn results(state: &Store, caller: &Caller, id: &str, kind: Option<AnalysisKind>) -> ApiResult<Bytes> {
    visible(state, caller, id, kind).await?;
    let key: Option<String> =
        sqlx::query_scalar("SELECT results_key FROM analyses WHERE id = $1").bind(id).fetch_one(&state.db).await?;
    let Some(key) = key else { return Err(not_ready(state, id).await?) };
    let stored = state
        .storage
        .read(&key)
        .await?
        .ok_or_else(|| ApiError::internal(std::io::Error::other(format!("results file {key} is missing"))))?;
    // `/functional_profiles/{id}/results` answers in the reference's shape (a table of
    // functional groups); `/analyses/{id}/results` answers everything the engine reported
    // (read counts too).
    if kind == Some(AnalysisKind::FunctionalProfile)
        && let Ok(profile) = serde_json::from_slice::<mgds_align::FunctionalProfile>(&stored)
    {
        return Ok(Bytes::from(serde_json::to_vec(&profile.to_results_table())?));
    }
    Ok(stored)
}

/// The object key of the read-level file of the classification `id`.
pub async fn readlevel(state: &Store, caller: &Caller, id: &str) -> ApiResult<String> {
    visible(state, caller, id, Some(AnalysisKind::Classification)).await?;
    let key: Option<String> =
        sqlx::query_scalar("SELECT readlevel_key FROM analyses WHERE id = $1").bind(id).fetch_one(&state.db).await?;
    match key {
        Some(key) => Ok(key),
        None => Err(not_ready(state, id).await?),
    }
}

/// The Kraken 2-style report a classification's engine writes into its work folder, and the
/// name it is stored under beside the results.
pub const KRAKEN_REPORT: &str = "kraken_report.txt";

/// Where a classification's Kraken-style report is stored: beside its results (`results_key`),
/// in the folder of the run that produced them.
pub fn kraken_report_key(results_key: &str) -> String {
    match results_key.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/{KRAKEN_REPORT}"),
        None => KRAKEN_REPORT.to_string(),
    }
}

/// The folder of everything stored for analysis `id` (each run's outputs in a folder of its own
/// under it): removed whole with the analysis.
pub fn analysis_prefix(id: &str) -> String {
    format!("analyses/{id}/")
}

/// The Kraken 2-style report of the finished classification `id` (as `kraken2 --report` writes
/// it), or a 404 saying why there is none.
pub async fn kraken_report(state: &Store, caller: &Caller, id: &str) -> ApiResult<Bytes> {
    // Visible and finished, as for the read-level results.
    readlevel(state, caller, id).await?;
    let results_key: Option<String> = sqlx::query_scalar("SELECT results_key FROM analyses WHERE id = $1")
        .bind(id)
        .fetch_optional(&state.db)
        .await?
        .flatten();
    let stored = match results_key {
        Some(k) => state.storage.read(&kraken_report_key(&k)).await.map_err(ApiError::internal)?,
        None => None,
    };
    match stored {
        Some(b) => Ok(b),
        None => Err(ApiError::NotFound(
            "this classification has no Kraken-style report (it was made before the service kept them, or the \
             report could not be stored); run its job again for one"
                .into(),
        )),
    }
}

/// An analysis's output file in the store.
#[derive(Debug, Clone)]
pub struct OutputFile {
    /// Its object key.
    pub key: String,
    /// The name it is downloaded under.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
}

/// The name an output file is downloaded under: the analysis id and what the file is
/// (`<id>.readlevel.tsv.gz`, `<id>.alignment.sam.gz`), so that files of several analyses can sit
/// in one folder. The last part of a download address's path is this name too, for clients that
/// name files after it.
pub fn file_name(id: &str, key: &str) -> String {
    format!("{id}.{}", key.rsplit('/').next().unwrap_or("output"))
}

/// The output file of the finished analysis `id` of `kind`, if it has one.
pub async fn output_file(
    state: &Store,
    caller: &Caller,
    id: &str,
    kind: Option<AnalysisKind>,
) -> ApiResult<Option<OutputFile>> {
    let row = visible(state, caller, id, kind).await?;
    let Some(key) = row.readlevel_key else {
        return if flag(row.complete) { Ok(None) } else { Err(not_ready(state, id).await?) };
    };
    let size = state.storage.size(&key).await?.unwrap_or(0);
    Ok(Some(OutputFile { name: file_name(id, &key), key, size }))
}

/// A file an engine produced beside its results: the read-level TSV.gz of a classification,
/// the alignment file of an alignment, the downloadable table of a functional profile.
#[derive(Debug, Clone)]
pub enum Artifact {
    /// Held in memory.
    Bytes(Bytes),
    /// A file on disk, streamed into the store.
    File(std::path::PathBuf),
}

/// Stores what an engine produced for analysis `id` and marks it complete: the results JSON
/// (served at `.../results`), the optional read-level TSV.gz (served through `readlevel`), and
/// success or the error message (cut to 255 characters).
pub async fn store_results(
    state: &Store,
    id: &str,
    outcome: Result<(serde_json::Value, Option<Bytes>), String>,
) -> ApiResult<()> {
    let outcome = outcome.map(|(v, b)| Produced {
        results: v,
        artifact: b.map(Artifact::Bytes),
        report: None,
        scored: Vec::new(),
    });
    store_outcome(state, id, None, outcome).await.map(|_| ())
}

/// What a successful run produced: the results JSON, a file beside them, and (classifications)
/// the Kraken-style report.
#[derive(Debug)]
pub struct Produced {
    /// The results JSON.
    pub results: serde_json::Value,
    /// The read-level TSV.gz, alignment or table.
    pub artifact: Option<Artifact>,
    /// The Kraken-style report, on disk.
    pub report: Option<std::path::PathBuf>,
    /// For a controls analysis, the samples it scored (whose pages mark its flagged taxa).
    pub scored: Vec<String>,
}

/// What [`store_outcome`] did with a run's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stored {
    /// The analysis is complete with this outcome; its `analysis_type`.
    Complete(String),
    /// Nothing was kept: the analysis was deleted, already complete, or (with a `holder`)
    /// claimed by another worker after this one's lease lapsed, so that worker's run counts.
    Discarded,
}

/// As [`store_results`], with the file given in memory or on disk, for the run that `holder`
/// (a worker's name) claimed; `None` stores whoever holds the analysis.
///
/// Exactly once: the outputs are written under a folder of this run's own
/// (`analyses/{id}/{run}/`), then one transaction takes the analysis off the queue only if
/// `holder` still holds it and marks it complete only if it is not; a run that lost its claim
/// (its lease lapsed and another worker took the analysis) keeps nothing and removes its
/// files, so a slow worker can neither overwrite the results of the run that counts nor leave
/// files behind.
pub async fn store_outcome(
    state: &Store,
    id: &str,
    holder: Option<&str>,
    outcome: Result<Produced, String>,
) -> ApiResult<Stored> {
    let run = format!("{}{}", analysis_prefix(id), db::new_id());
    let mut written = Vec::new();
    let write = async {
        let Ok(p) = &outcome else { return Ok::<_, ApiError>(None) };
        let results_key = format!("{run}/results.json");
        state.storage.put(&results_key, Bytes::from(serde_json::to_vec(&p.results)?)).await?;
        written.push(results_key.clone());
        let artifact_key = match &p.artifact {
            Some(a) => {
                let name = match a {
                    Artifact::File(path) => {
                        path.file_name().map_or("output".into(), |n| n.to_string_lossy().to_string())
                    }
                    Artifact::Bytes(_) => "readlevel.tsv.gz".into(),
                };
                let k = format!("{run}/{name}");
                match a {
                    Artifact::Bytes(b) => state.storage.put(&k, b.clone()).await?,
                    Artifact::File(path) => {
                        state.storage.put_file(&k, path).await.map_err(ApiError::internal)?;
                    }
                }
                written.push(k.clone());
                Some(k)
            }
            None => None,
        };
        if let Some(report) = &p.report {
            let k = kraken_report_key(&results_key);
            state.storage.put_file(&k, report).await.map_err(ApiError::internal)?;
            written.push(k);
        }
        Ok(Some((results_key, artifact_key)))
    }
    .await;
    let keys = match write {
        Ok(keys) => keys,
        Err(e) => {
            discard(state, &written).await;
            return Err(e);
        }
    };
    let now = db::now();
    let mut tx = begin_write(&state.db, Scope::Row("analyses", id)).await?;
    let held = match holder {
        Some(worker) => {
            sqlx::query("DELETE FROM job_queue WHERE analysis_id = $1 AND worker = $2")
                .bind(id)
                .bind(worker)
                .execute(&mut *tx)
                .await?
                .rows_affected()
                == 1
        }
        None => {
            sqlx::query("DELETE FROM job_queue WHERE analysis_id = $1").bind(id).execute(&mut *tx).await?;
            true
        }
    };
    let analysis_type: Option<String> = if !held {
        None
    } else {
        match (&outcome, keys) {
            (Ok(_), Some((results_key, artifact_key))) => {
                sqlx::query_scalar(
                    "UPDATE analyses SET complete = 1, success = 1, error_msg = '', results_key = $1, \
                     readlevel_key = $2, updated_at = $3 WHERE id = $4 AND complete = 0 RETURNING analysis_type",
                )
                .bind(&results_key)
                .bind(&artifact_key)
                .bind(&now)
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?
            }
            (Err(msg), _) => {
                let msg: String = msg.chars().take(mgds_api::MAX_ERROR_MSG_CHARS).collect();
                sqlx::query_scalar(
                    "UPDATE analyses SET complete = 1, success = 0, error_msg = $1, updated_at = $2 \
                     WHERE id = $3 AND complete = 0 RETURNING analysis_type",
                )
                .bind(&msg)
                .bind(&now)
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?
            }
            (Ok(_), None) => None,
        }
    };
    if let (Some(t), Ok(p)) = (&analysis_type, &outcome)
        && t == AnalysisKind::Control.analysis_type()
    {
        record_scored(&mut tx, id, &p.scored).await?;
    }
    match analysis_type {
        Some(t) => {
            // The webhooks' `analysis.completed` or `analysis.failed`, with the outcome.
            super::events::analysis_finished(&mut tx, id).await?;
            tx.commit().await?;
            state.finished.notify_waiters();
            Ok(Stored::Complete(t))
        }
        None => {
            drop(tx);
            discard(state, &written).await;
            Ok(Stored::Discarded)
        }
    }
}

/// Records, in the transaction that completes the controls analysis `analysis_id`, the samples
/// whose pages its scores mark.
async fn record_scored(tx: &mut db::Tx, analysis_id: &str, scored: &[String]) -> ApiResult<()> {
    for sample in scored.iter().take(mgds_api::controls::MAX_BATCH_SAMPLES) {
        sqlx::query(
            "INSERT INTO control_scored (analysis_id, sample_id) SELECT $1, id FROM samples WHERE id = $2 \
             ON CONFLICT DO NOTHING",
        )
        .bind(analysis_id)
        .bind(sample)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// Removes the files of a run whose outcome was not kept (through the queue of files to remove,
/// so that a stop halfway finishes at the next start).
async fn discard(state: &Store, keys: &[String]) {
    let queued = async {
        let mut tx = begin_write(&state.db, Scope::Rows).await?;
        for k in keys {
            queue_delete(&mut tx, k).await?;
        }
        tx.commit().await?;
        remove_queued(state, keys).await;
        Ok::<(), ApiError>(())
    };
    if let Err(e) = queued.await {
        tracing::warn!(error = %e, "could not remove the files of a run whose outcome was not kept");
    }
}
