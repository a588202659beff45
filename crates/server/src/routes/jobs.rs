//! Jobs: list, get (with `draft` and `job_args_schema`), and run, which queues a pending analysis
//! in the durable queue.

use axum::Router;
use axum::extract::{OriginalUri, Path, State};
use axum::routing::{get, post};
use mgds_api::{Job, JobRunRequest, Ref};

use super::extract::{Json, ListParams, Listed};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::AppState;
use crate::store::jobs;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/jobs", get(list_jobs))
        .route("/jobs/{id}", get(get_job))
        .route("/jobs/{id}/run", post(run_job))
}

async fn list_jobs(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<Job>> {
    Ok(Listed::new(jobs::list(&state, &caller, &params.query()).await?, &uri, &params))
}

async fn get_job(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<axum::Json<Job>> {
    Ok(axum::Json(jobs::get(&state, &caller, &id).await?))
}

async fn run_job(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<JobRunRequest>,
) -> ApiResult<axum::Json<Ref>> {
    let analysis_id = jobs::run(&state, &caller, &id, req).await?;
    Ok(axum::Json(Ref::new("analyses", &analysis_id)))
}
