//! Jobs: their records, the versions the service registers for its engines and reference data,
//! and a run, which checks the arguments against the job's schema and queues a pending analysis.

use mgds_api::{ErrorCode, Job, JobRunRequest, MAX_RUN_DESCRIPTION_CHARS, Ref};
use serde_json::{Map, Value};

use super::access;
use super::analyses::{self, ANALYSIS_TYPES};
use super::caller::Caller;
use super::db::{self, Scope, begin_write, flag, new_id};
use super::handle::Store;
use super::queue;
use super::records::{self, Found, ListQuery, ListSpec, ref_id};
use super::samples;
use crate::error::{ApiError, ApiResult};
use crate::listing::{Field, FieldKind};

/// The fields of `where` and `sort` in lists of jobs.
pub(crate) const JOB_FIELDS: &[Field] = &[
    Field { name: "$uri", column: "j.id", kind: FieldKind::Uri { collection: "jobs" }, sortable: true },
    Field { name: "analysis_type", column: "j.analysis_type", kind: FieldKind::Enum(&ANALYSIS_TYPES), sortable: true },
    Field { name: "created_at", column: "j.created_at", kind: FieldKind::DateTime, sortable: true },
    Field { name: "name", column: "j.name", kind: FieldKind::Text, sortable: true },
    Field { name: "public", column: "j.public", kind: FieldKind::Bool, sortable: true },
];

const JOBS: ListSpec = ListSpec {
    from: "jobs j",
    columns: "j.id, j.analysis_type, j.created_at, j.name, j.public, j.draft, j.creator_id, j.job_args_schema, \
              j.engine, j.engine_version, j.reference",
    fields: JOB_FIELDS,
    default_order: "j.created_at ASC",
    tiebreak: "j.id ASC",
};

#[derive(sqlx::FromRow)]
struct JobRow {
    id: String,
    analysis_type: String,
    created_at: String,
    name: String,
    public: i64,
    draft: i64,
    creator_id: Option<String>,
    job_args_schema: String,
    engine: String,
    engine_version: String,
    reference: String,
}

impl JobRow {
    /// The record as a list shows it, or with `job_args_schema` when `single`.
    fn into_api(self, single: bool) -> Job {
        Job {
            uri: Ref::new("jobs", &self.id).uri,
            analysis_type: Some(self.analysis_type),
            created_at: self.created_at,
            name: Some(self.name),
            public: Some(flag(self.public)),
            draft: Some(flag(self.draft)),
            job_args_schema: single
                .then(|| serde_json::from_str(&self.job_args_schema).unwrap_or_else(|_| Value::Object(Map::new()))),
            engine: Some(self.engine).filter(|e| !e.is_empty()),
            engine_version: Some(self.engine_version).filter(|v| !v.is_empty()),
            reference_digest: Some(self.reference).filter(|r| !r.is_empty()),
        }
    }
}

/// One page of the jobs the caller may see.
pub async fn list(state: &Store, caller: &Caller, q: &ListQuery<'_>) -> ApiResult<Found<Job>> {
    caller.require()?;
    let rows: Found<JobRow> = records::list(&state.db, &JOBS, q, access::job(caller, "j"), None).await?;
    Ok(rows.map(|r| r.into_api(false)))
}

async fn visible(state: &Store, caller: &Caller, id: &str) -> ApiResult<JobRow> {
    records::fetch_one(&state.db, &JOBS, "j.id", id, access::job(caller, "j"))
        .await?
        .ok_or_else(|| ApiError::not_found("job"))
}

/// The job `id` if the caller may see it, with its draft flag and argument schema.
pub async fn get(state: &Store, caller: &Caller, id: &str) -> ApiResult<Job> {
    caller.require()?;
    Ok(visible(state, caller, id).await?.into_api(true))
}

/// Checks `args` against a job's JSON Schema; the 400 lists every problem with its place.
fn check_args(schema: &Value, args: &Map<String, Value>) -> ApiResult<()> {
    let problems =
        mgds_api::JobArgsSchema::new(schema).map_err(|e| ApiError::internal(std::io::Error::other(e)))?.problems(args);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ApiError::BadRequest(format!("job_args do not fit this job's job_args_schema: {}", problems.join("; ")))
            .with_code(ErrorCode::InvalidJobArgs))
    }
}

/// Runs the job `id` on a sample the caller owns or may add files to: checks the arguments and
/// dependencies, and queues a pending analysis, whose id it returns.
pub async fn run(state: &Store, caller: &Caller, id: &str, mut req: JobRunRequest) -> ApiResult<String> {
    let user = caller.require()?;
    let job = visible(state, caller, id).await?;
    if flag(job.draft) && job.creator_id.as_deref() != Some(user.id.as_str()) {
        return Err(ApiError::not_found("job"));
    }
    if let Some(d) = &req.description
        && d.chars().count() > MAX_RUN_DESCRIPTION_CHARS
    {
        return Err(ApiError::BadRequest(format!(
            "description is {} characters; at most {MAX_RUN_DESCRIPTION_CHARS} are allowed",
            d.chars().count()
        )));
    }
    let sample_id = ref_id("sample", &req.sample, "samples")?.to_string();
    samples::may_act_on(state, caller, &sample_id, "can_add_files", "run jobs on it").await?;
    let schema: Value = serde_json::from_str(&job.job_args_schema).unwrap_or_else(|_| Value::Object(Map::new()));
    if req.populate_default_arguments.unwrap_or(false) {
        mgds_api::populate_default_args(&schema, &mut req.job_args);
    }
    check_args(&schema, &req.job_args)?;
    if job.analysis_type == super::analyses::AnalysisKind::Control.analysis_type() {
        super::controls::check_control(state, &sample_id, &req.job_args).await?;
    }
    let mut deps = Vec::new();
    for d in &req.dependencies {
        // Any analysis collection names the same record (/analyses/x, /classifications/x, ...).
        let aid = d.analysis.id().to_string();
        analyses::check_visible(state, caller, &aid).await.map_err(|_| {
            ApiError::BadRequest(format!("dependency analysis {aid} does not exist or you do not have access to it"))
        })?;
        deps.push((aid, d.download_path.clone()));
    }

    let analysis_id = new_id();
    let now = db::now();
    // An alignment is to the genome of the tax id its arguments name.
    let tax_id = (job.analysis_type == "alignment")
        .then(|| req.job_args.get("tax_id").and_then(Value::as_str).map(str::to_string))
        .flatten();
    let mut tx = begin_write(&state.db, Scope::User(&user.id)).await?;
    sqlx::query(
        "INSERT INTO analyses (id, sample_id, job_id, analysis_type, job_args, description, tax_id, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(&analysis_id)
    .bind(&sample_id)
    .bind(&job.id)
    .bind(&job.analysis_type)
    .bind(Value::Object(req.job_args.clone()).to_string())
    .bind(&req.description)
    .bind(&tax_id)
    .bind(&now)
    .bind(&now)
    .execute(&mut *tx)
    .await?;
    for (dep, path) in &deps {
        sqlx::query(
            "INSERT INTO analysis_dependencies (analysis_id, dependency_id, download_path) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        )
        .bind(&analysis_id)
        .bind(dep)
        .bind(path)
        .execute(&mut *tx)
        .await?;
    }
    queue::enqueue(&mut tx, &analysis_id, &now).await?;
    let owner: String =
        sqlx::query_scalar("SELECT owner_id FROM samples WHERE id = $1").bind(&sample_id).fetch_one(&mut *tx).await?;
    let entry = super::audit::Entry::new("job.run", "analysis", &analysis_id, &owner).with(serde_json::json!({
        "sample": sample_id,
        "job": job.id,
        "job_name": job.name,
        "job_args": req.job_args,
    }));
    super::audit::record(&mut tx, Some(user), entry).await?;
    tx.commit().await?;
    state.wake_workers();
    Ok(analysis_id)
}

/// What defines a job version.
#[derive(Debug, Clone)]
pub struct JobSpec {
    /// Display name.
    pub name: String,
    /// The kind of analysis a run creates.
    pub analysis_type: String,
    /// JSON Schema of its arguments.
    pub job_args_schema: Value,
    /// Whether every user may run it.
    pub public: bool,
    /// An unpublished draft, visible only to its creator.
    pub draft: bool,
    /// Its creator (`None` for built-in jobs).
    pub creator_id: Option<String>,
    /// Engine name and version, and the digest of its reference data: together they pin the job.
    pub engine: String,
    /// Engine version.
    pub engine_version: String,
    /// Reference data digest.
    pub reference: String,
}

/// Registers a job version and returns its id. The same engine, version and reference data give
/// the same job (so registering at every start is harmless); anything new is a new job.
pub async fn register_job(state: &Store, spec: &JobSpec) -> ApiResult<String> {
    let mut tx = begin_write(&state.db, Scope::Named("jobs")).await?;
    if !spec.engine.is_empty()
        && let Some(id) = sqlx::query_scalar::<_, String>(
            "SELECT id FROM jobs WHERE engine = $1 AND engine_version = $2 AND reference = $3 AND analysis_type = $4",
        )
        .bind(&spec.engine)
        .bind(&spec.engine_version)
        .bind(&spec.reference)
        .bind(&spec.analysis_type)
        .fetch_optional(&mut *tx)
        .await?
    {
        return Ok(id);
    }
    let id = new_id();
    sqlx::query(
        "INSERT INTO jobs (id, name, analysis_type, public, draft, creator_id, job_args_schema, engine, engine_version, reference, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(&id)
    .bind(&spec.name)
    .bind(&spec.analysis_type)
    .bind(i64::from(spec.public))
    .bind(i64::from(spec.draft))
    .bind(&spec.creator_id)
    .bind(spec.job_args_schema.to_string())
    .bind(&spec.engine)
    .bind(&spec.engine_version)
    .bind(&spec.reference)
    .bind(db::now())
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(id)
}
