//! Documents: upload (init, transfer, confirm), list (own and shared with me), get, update,
//! delete, share for download (`add_user`/`remove_user`) and pre-signed download addresses.

use axum::Router;
use axum::extract::{OriginalUri, Path, State};
use axum::http::StatusCode;
use axum::routing::{get, patch, post};
use mgds_api::{
    ConfirmUploadResponse, Document, DocumentConfirmUploadRequest, DocumentInitUploadRequest, DocumentUpdate,
    DownloadUri, InitMultipartUploadRequest, InitMultipartUploadResponse, InitUploadResponse, Ref,
    UploadCallbackRequest, UploadCallbackResponse, UserRequest,
};

use super::extract::{Json, ListParams, Listed};
use super::transfers;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::signing::DOWNLOAD_VALID_HOURS;
use crate::state::AppState;
use crate::store::{documents, uploads};

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/documents", get(list_documents))
        .route("/documents/init_upload", post(init_upload))
        .route("/documents/confirm_upload", post(confirm_upload))
        .route("/documents/init_multipart_upload", post(init_multipart_upload))
        .route("/documents/upload_callback/{id}", post(upload_callback))
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
    let (upload_url, additional_fields) = transfers::upload_target(&state, &started);
    Ok(axum::Json(InitUploadResponse { additional_fields, sample_id: None, document_id: Some(started.id), upload_url }))
}

/// The real service's clients send no body here (the file's name comes with the callback); a
/// body may name the file.
async fn init_multipart_upload(
    State(state): State<AppState>,
    caller: Caller,
    body: axum::body::Bytes,
) -> ApiResult<axum::Json<InitMultipartUploadResponse>> {
    let req: InitMultipartUploadRequest = if body.iter().all(u8::is_ascii_whitespace) {
        InitMultipartUploadRequest::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| ApiError::BadRequest(format!("the request body does not fit this route: {e}")))?
    };
    let started = uploads::start_document_s3(&state, &caller, req.filename.as_deref()).await?;
    Ok(axum::Json(transfers::multipart_answer(&state, "documents", started)))
}

async fn upload_callback(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<UploadCallbackRequest>,
) -> ApiResult<axum::Json<UploadCallbackResponse>> {
    let document =
        uploads::confirm_s3(&state, &caller, "document", &id, &req.s3_path, req.filename.as_deref()).await?.id;
    Ok(axum::Json(UploadCallbackResponse {
        sample_id: None,
        document_id: Some(document),
        message: "upload confirmed".into(),
    }))
}

async fn confirm_upload(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<DocumentConfirmUploadRequest>,
) -> ApiResult<axum::Json<ConfirmUploadResponse>> {
    let document_id = uploads::confirm_document(&state, &caller, &req.document_id, req.sha256.as_deref()).await?;
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
        download_uri: transfers::download_address(&state, &key, &filename, &caller).await?,
        expires_in_hours: DOWNLOAD_VALID_HOURS,
    }))
}
