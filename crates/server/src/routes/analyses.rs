//! Analyses: the generic `/analyses` collection and the typed ones (`/classifications`,
//! `/panels`, `/alignments`, `/functional_profiles`), their results and read-level downloads.

use axum::Router;
use axum::extract::{OriginalUri, Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use mgds_api::{Analysis, FileDetail, FileDetails, ReadlevelUrl};

use super::extract::{ListParams, Listed, WaitParam};
use super::transfers;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::store::analyses::{self, AnalysisKind};

pub(super) fn router() -> Router<AppState> {
    let mut r = Router::new()
        .route("/analyses", get(|s, c, u, p| list(s, c, u, p, None)))
        .route("/analyses/public", get(|s, u, p| list_public(s, u, p, None)))
        .route("/analyses/{id}", get(|s, c, p, w| get_one(s, c, p, w, None)))
        .route("/analyses/{id}/results", get(|s, c, p| results(s, c, p, None)))
        .route("/analyses/{id}/files", get(|s, c, p| files(s, c, p, None)))
        .route("/analyses/{id}/file_details", get(|s, c, p| file_details(s, c, p, None)));
    for kind in AnalysisKind::ALL {
        let c = kind.collection();
        r = r
            .route(&format!("/{c}"), get(move |s, c, u, p| list(s, c, u, p, Some(kind))))
            .route(&format!("/{c}/public"), get(move |s, u, p| list_public(s, u, p, Some(kind))))
            .route(&format!("/{c}/{{id}}"), get(move |s, c, p, w| get_one(s, c, p, w, Some(kind))))
            .route(&format!("/{c}/{{id}}/results"), get(move |s, c, p| results(s, c, p, Some(kind))))
            .route(&format!("/{c}/{{id}}/files"), get(move |s, c, p| files(s, c, p, Some(kind))))
            .route(&format!("/{c}/{{id}}/file_details"), get(move |s, c, p| file_details(s, c, p, Some(kind))));
    }
    r.route("/classifications/{id}/readlevel", get(readlevel))
        .route("/classifications/{id}/kraken_report", get(kraken_report))
}

/// `GET /classifications/{id}/kraken_report` (an MGDS addition): the classification's report as
/// `kraken2 --report` writes it (tab-separated text), for Bracken, Pavian and Krona.
async fn kraken_report(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<impl axum::response::IntoResponse> {
    let body = analyses::kraken_report(&state, &caller, &id).await?;
    Ok(([(axum::http::header::CONTENT_TYPE, "text/plain; charset=utf-8")], body))
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
    kind: Option<AnalysisKind>,
) -> ApiResult<Listed<Analysis>> {
    Ok(Listed::new(analyses::list(&state, &caller, &params.query(), kind).await?, &uri, &params))
}

async fn list_public(
    State(state): State<AppState>,
    uri: OriginalUri,
    params: ListParams,
    kind: Option<AnalysisKind>,
) -> ApiResult<Listed<Analysis>> {
    Ok(Listed::new(analyses::list_public(&state, &params.query(), kind).await?, &uri, &params))
}

/// One analysis; with `?wait=SECS` (an MGDS addition), once it is complete or after at most
/// that many seconds (30 at most), so that a client following an analysis learns of its end at
/// once without asking again and again.
async fn get_one(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    WaitParam(wait): WaitParam,
    kind: Option<AnalysisKind>,
) -> ApiResult<axum::Json<Analysis>> {
    Ok(axum::Json(match wait {
        Some(wait) => analyses::get_when_complete(&state, &caller, &id, kind, wait).await?,
        None => analyses::get(&state, &caller, &id, kind).await?,
    }))
}

async fn results(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    kind: Option<AnalysisKind>,
) -> ApiResult<Response> {
    let bytes = analyses::results(&state, &caller, &id, kind).await?;
    Ok(([(header::CONTENT_TYPE, "application/json")], bytes).into_response())
}

/// The pre-signed address of the analysis's output file (the read-level TSV of a
/// classification, the alignment, the profile table), as the reference's `files` link gives it.
async fn files(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    kind: Option<AnalysisKind>,
) -> ApiResult<axum::Json<String>> {
    let file = analyses::output_file(&state, &caller, &id, kind).await?.ok_or_else(|| {
        ApiError::NotFound("this analysis has no output file (its results are at .../results)".into())
    })?;
    crate::store::audit::analysis_downloaded(&state.db, &caller, &id, &file.name).await?;
    Ok(axum::Json(transfers::download_address(&state, &file.key, &file.name, &caller).await?))
}

/// The analysis's output files with their sizes and pre-signed addresses, as the real
/// service's clients list and download them (`onecodex analyses files|download`).
async fn file_details(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    kind: Option<AnalysisKind>,
) -> ApiResult<axum::Json<FileDetails>> {
    let files = match analyses::output_file(&state, &caller, &id, kind).await? {
        Some(f) => vec![FileDetail {
            url: {
                crate::store::audit::analysis_downloaded(&state.db, &caller, &id, &f.name).await?;
                transfers::download_address(&state, &f.key, &f.name, &caller).await?
            },
            filepath: f.name.clone(),
            filename: f.name,
            size: f.size,
        }],
        None => Vec::new(),
    };
    Ok(axum::Json(FileDetails { files }))
}

async fn readlevel(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<ReadlevelUrl>> {
    let key = analyses::readlevel(&state, &caller, &id).await?;
    let filename = analyses::file_name(&id, &key);
    crate::store::audit::analysis_downloaded(&state.db, &caller, &id, &filename).await?;
    Ok(axum::Json(ReadlevelUrl { url: transfers::download_address(&state, &key, &filename, &caller).await? }))
}
