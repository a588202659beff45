//! Documents: upload (init, transfer, confirm), list (own and shared with me), get, update,
//! delete, share for download (`add_user`/`remove_user`) and pre-signed download addresses.

use axum::Router;
use axum::extract::{OriginalUri, Path, State};
use axum::http::StatusCode;
use axum::routing::{get, patch, post};
use mgds_api::{
    ConfirmUploadResponse, Document, DocumentConfirmUploadRequest, DocumentInitUploadRequest, DocumentUpdate,
    DownloadUri, InitUploadResponse, Ref, UserRequest,
};

use super::{Json, ListParams, Listed};
use crate::AppState;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::signing::{DOWNLOAD_VALID_HOURS, upload_url};
use crate::store::{documents, uploads};

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/documents", get(list_documents))
        .route("/documents/init_upload", post(init_upload))
        .route("/documents/confirm_upload", post(confirm_upload))
        .route("/documents/{id}", get(get_document).patch(update_document).delete(delete_document))
        .route("/documents/{id}/rename", patch(rename_document))
        .route("/documents/{id}/add_user", post(add_user))
        .route("/documents/{id}/remove_user", post(remove_user))
        .route("/documents/{id}/download_uri", post(download_uri))
}

async fn list_documents(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<Document>> {
    Ok(Listed::new(documents::list(&state, &caller, &params.query()).await?, &uri, &params))
}

async fn get_document(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Document>> {
    Ok(axum::Json(documents::get(&state, &caller, &id).await?))
}

async fn init_upload(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<DocumentInitUploadRequest>,
) -> ApiResult<axum::Json<InitUploadResponse>> {
    let started = uploads::start_document(&state, &caller, &req).await?;
    Ok(axum::Json(InitUploadResponse {
        additional_fields: state.signer.upload_form(&started.object_key, started.size, started.at, started.valid_for),
        sample_id: None,
        document_id: Some(started.id),
        upload_url: upload_url(&state.public_url),
    }))
}

async fn confirm_upload(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<DocumentConfirmUploadRequest>,
) -> ApiResult<axum::Json<ConfirmUploadResponse>> {
    let document_id = uploads::confirm_document(&state, &caller, &req.document_id).await?;
    Ok(axum::Json(ConfirmUploadResponse {
        success: true,
        message: "upload confirmed".into(),
        sample: None,
        document: Some(Ref::new("documents", &document_id)),
    }))
}

async fn update_document(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<DocumentUpdate>,
) -> ApiResult<axum::Json<Document>> {
    Ok(axum::Json(documents::update(&state, &caller, &id, &req).await?))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Rename {
    filename: String,
}

async fn rename_document(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<Rename>,
) -> ApiResult<axum::Json<Document>> {
    let req = DocumentUpdate { filename: Some(req.filename), description: None };
    Ok(axum::Json(documents::update(&state, &caller, &id, &req).await?))
}

async fn delete_document(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    documents::delete(&state, &caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn add_user(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<UserRequest>,
) -> ApiResult<axum::Json<Document>> {
    Ok(axum::Json(documents::add_downloader(&state, &caller, &id, &req).await?))
}

async fn remove_user(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<UserRequest>,
) -> ApiResult<axum::Json<Document>> {
    Ok(axum::Json(documents::remove_downloader(&state, &caller, &id, &req).await?))
}

async fn download_uri(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<DownloadUri>> {
    let (key, filename) = documents::file(&state, &caller, &id).await?;
    Ok(axum::Json(DownloadUri {
        download_uri: state.signer.download_url(&state.public_url, &key, &filename, DOWNLOAD_VALID_HOURS),
        expires_in_hours: DOWNLOAD_VALID_HOURS,
    }))
}
