//! Samples and their metadata: pre-upload, the three-step upload, list, get, update, delete.

use axum::Router;
use axum::extract::{OriginalUri, Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use mgds_api::{
    CancelUploadRequest, ConfirmUploadRequest, ConfirmUploadResponse, DownloadUri, InitMultipartUploadRequest,
    InitMultipartUploadResponse, InitUploadRequest, InitUploadResponse, Metadata, MetadataInput, PreuploadRequest,
    PreuploadResponse, Ref, RemoveHostRequest, Sample, SampleUpdate, SuccessResponse, UploadCallbackRequest,
    UploadCallbackResponse,
};

use super::extract::{Json, ListParams, Listed};
use super::transfers;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::signing::DOWNLOAD_VALID_HOURS;
use crate::state::AppState;
use crate::store::{host_removal, metadata, samples, uploads};

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/samples", get(list_samples))
        .route("/samples/public", get(list_public))
        .route("/samples/organization", get(list_organization))
        .route("/samples/preupload", post(preupload))
        .route("/samples/init_upload", post(init_upload))
        .route("/samples/confirm_upload", post(confirm_upload))
        .route("/samples/cancel_upload", post(cancel_upload))
        .route("/samples/init_multipart_upload", post(init_multipart_upload))
        .route("/samples/upload_callback/{id}", post(upload_callback))
        .route("/samples/{id}", get(get_sample).patch(update_sample).delete(delete_sample))
        .route("/samples/{id}/download_uri", post(download_uri))
        .route("/samples/{id}/remove_host", post(remove_host))
        .route("/samples/{id}/controls", get(scored_by_controls))
        .route("/metadata", get(list_metadata))
        .route("/metadata/{id}", get(get_metadata).patch(update_metadata))
}

async fn list_samples(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<Sample>> {
    Ok(Listed::new(samples::list(&state, &caller, &params.query()).await?, &uri, &params))
}

async fn list_public(State(state): State<AppState>, uri: OriginalUri, params: ListParams) -> ApiResult<Listed<Sample>> {
    Ok(Listed::new(samples::list_public(&state, &params.query()).await?, &uri, &params))
}

async fn list_organization(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<Sample>> {
    Ok(Listed::new(samples::list_organization(&state, &caller, &params.query()).await?, &uri, &params))
}

async fn get_sample(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Sample>> {
    Ok(axum::Json(samples::get(&state, &caller, &id).await?))
}

async fn preupload(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<PreuploadRequest>,
) -> ApiResult<axum::Json<PreuploadResponse>> {
    Ok(axum::Json(PreuploadResponse { sample_id: uploads::preupload(&state, &caller, req).await? }))
}

async fn init_upload(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<InitUploadRequest>,
) -> ApiResult<axum::Json<InitUploadResponse>> {
    let started = uploads::start_sample(&state, &caller, req).await?;
    let (upload_url, additional_fields) = transfers::upload_target(&state, &started);
    Ok(axum::Json(InitUploadResponse { additional_fields, sample_id: Some(started.id), document_id: None, upload_url }))
}

async fn init_multipart_upload(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<InitMultipartUploadRequest>,
) -> ApiResult<axum::Json<InitMultipartUploadResponse>> {
    let started = uploads::start_sample_s3(&state, &caller, req).await?;
    Ok(axum::Json(transfers::multipart_answer(&state, "samples", started)))
}

async fn upload_callback(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<UploadCallbackRequest>,
) -> ApiResult<axum::Json<UploadCallbackResponse>> {
    let done = uploads::confirm_s3(&state, &caller, "sample", &id, &req.s3_path, req.filename.as_deref()).await?;
    let message = if done.importing {
        "upload confirmed; the service is making the sample's file (joining a pair, or copying the file in): the \
         sample is importing until then, and its error_msg says why if it cannot"
    } else {
        "upload confirmed; the sample is ready"
    };
    Ok(axum::Json(UploadCallbackResponse { sample_id: Some(done.id), document_id: None, message: message.into() }))
}

async fn confirm_upload(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<ConfirmUploadRequest>,
) -> ApiResult<axum::Json<ConfirmUploadResponse>> {
    let sample_id = uploads::confirm_sample(&state, &caller, &req).await?;
    Ok(axum::Json(ConfirmUploadResponse {
        success: true,
        message: "upload confirmed; the sample is ready".into(),
        sample: Some(Ref::new("samples", &sample_id)),
        document: None,
    }))
}

async fn cancel_upload(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<CancelUploadRequest>,
) -> ApiResult<axum::Json<SuccessResponse>> {
    uploads::cancel_sample(&state, &caller, &req).await?;
    Ok(axum::Json(SuccessResponse { success: true, message: "upload canceled".into() }))
}

async fn update_sample(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<SampleUpdate>,
) -> ApiResult<axum::Json<Sample>> {
    Ok(axum::Json(samples::update(&state, &caller, &id, &req).await?))
}

async fn delete_sample(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<StatusCode> {
    samples::delete(&state, &caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn download_uri(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<DownloadUri>> {
    let (key, filename) = samples::file(&state, &caller, &id).await?;
    Ok(axum::Json(DownloadUri {
        download_uri: transfers::download_address(&state, &key, &filename, &caller).await?,
        expires_in_hours: DOWNLOAD_VALID_HOURS,
    }))
}

/// `POST /samples/{id}/remove_host` (an MGDS addition): starts a copy of the sample without the
/// host's reads ([`host_removal`]); 201 with the new sample, which a worker fills.
async fn remove_host(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<RemoveHostRequest>,
) -> ApiResult<(StatusCode, axum::Json<Sample>)> {
    let sample = host_removal::remove_host(&state, &caller, &id, req.classification.as_deref()).await?;
    state.wake_workers();
    Ok((StatusCode::CREATED, axum::Json(sample)))
}

/// `GET /samples/{id}/controls` (an MGDS addition): the finished controls analyses that scored
/// this sample's taxa (it was in their control's batch), newest first, at most
/// [`crate::store::controls::MAX_SCORED_BY`], as `/controls` shows them; a JSON array.
async fn scored_by_controls(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Vec<mgds_api::Analysis>>> {
    Ok(axum::Json(crate::store::controls::scored_by(&state, &caller, &id).await?))
}

async fn list_metadata(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<Metadata>> {
    Ok(Listed::new(metadata::list(&state, &caller, &params.query()).await?, &uri, &params))
}

async fn get_metadata(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Metadata>> {
    Ok(axum::Json(metadata::get(&state, &caller, &id).await?))
}

async fn update_metadata(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<MetadataInput>,
) -> ApiResult<axum::Json<Metadata>> {
    Ok(axum::Json(metadata::update(&state, &caller, &id, req).await?))
}
