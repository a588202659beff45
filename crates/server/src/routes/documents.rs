//! Documents: upload (init, transfer, confirm), list (own and shared with me), get, update,
//! delete, share for download (`add_user`/`remove_user`) and pre-signed download addresses.

use axum::Router;
use axum::extract::{OriginalUri, Path, State};
use axum::http::StatusCode;
use axum::routing::{get, patch, post};
use chrono::Utc;
use mgds_api::{
    ConfirmUploadResponse, Document, DocumentConfirmUploadRequest, DocumentInitUploadRequest, DocumentUpdate,
    DownloadUri, InitUploadResponse, Ref, UserRequest,
};

use super::samples::{DOWNLOAD_VALID_HOURS, check_arrived, check_size, purge, queue_delete};
use super::{Json, ListParams, ListSpec, Listed, id_list, ref_id};
use crate::AppState;
use crate::access;
use crate::auth::{Caller, User};
use crate::db::{self, begin_write, new_id};
use crate::error::{ApiError, ApiResult};
use crate::listing::{Field, FieldKind};
use crate::signing::BUCKET;

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

pub(crate) const DOCUMENT_FIELDS: &[Field] = &[
    Field { name: "$uri", column: "d.id", kind: FieldKind::Uri { collection: "documents" }, sortable: true },
    Field { name: "created_at", column: "d.created_at", kind: FieldKind::DateTime, sortable: true },
    Field { name: "filename", column: "d.filename", kind: FieldKind::Text, sortable: true },
    Field { name: "size", column: "d.size", kind: FieldKind::Integer, sortable: true },
    Field { name: "description", column: "d.description", kind: FieldKind::Text, sortable: true },
    Field { name: "uploader", column: "d.uploader_id", kind: FieldKind::Ref { collection: "users" }, sortable: true },
    Field {
        name: "downloaders",
        column: "",
        kind: FieldKind::RefSet {
            collection: "users",
            subquery: "SELECT dd.user_id FROM document_downloaders dd WHERE dd.document_id = d.id",
        },
        sortable: false,
    },
];

pub(crate) const DOCUMENTS: ListSpec = ListSpec {
    from: "documents d",
    columns: "d.id, d.created_at, d.filename, d.size, d.description, d.uploader_id, d.object_key, \
              (SELECT json_group_array(dd.user_id) FROM document_downloaders dd WHERE dd.document_id = d.id) AS downloader_ids",
    fields: DOCUMENT_FIELDS,
    default_order: "d.created_at ASC",
    tiebreak: "d.id ASC",
};

#[derive(sqlx::FromRow)]
struct DocumentRow {
    id: String,
    created_at: String,
    filename: String,
    size: i64,
    description: Option<String>,
    uploader_id: String,
    object_key: String,
    downloader_ids: String,
}

impl DocumentRow {
    fn into_api(self) -> Document {
        Document {
            uri: Ref::new("documents", &self.id).uri,
            created_at: self.created_at,
            filename: self.filename,
            size: self.size.max(0) as u64,
            description: self.description,
            uploader: Ref::new("users", &self.uploader_id),
            downloaders: id_list(&self.downloader_ids).iter().map(|u| Ref::new("users", u)).collect(),
        }
    }
}

async fn list_documents(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<Document>> {
    caller.require()?;
    let rows: Listed<DocumentRow> =
        super::list(&state, &uri, &params, &DOCUMENTS, access::document(&caller, "d"), None).await?;
    Ok(rows.map(DocumentRow::into_api))
}

async fn visible_document(state: &AppState, caller: &Caller, id: &str) -> ApiResult<DocumentRow> {
    caller.require()?;
    super::fetch_one(state, &DOCUMENTS, "d.id", id, access::document(caller, "d"))
        .await?
        .ok_or_else(|| ApiError::not_found("document"))
}

async fn get_document(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Document>> {
    Ok(axum::Json(visible_document(&state, &caller, &id).await?.into_api()))
}

/// Whether `user` is an admin of `uploader`'s organisation.
async fn is_org_admin_of(state: &AppState, user: &User, uploader: &str) -> ApiResult<bool> {
    if !user.is_org_admin {
        return Ok(false);
    }
    let org: Option<String> = sqlx::query_scalar("SELECT organization_id FROM users WHERE id = ?")
        .bind(uploader)
        .fetch_optional(&state.db)
        .await?;
    Ok(org.as_deref() == Some(user.organization_id.as_str()))
}

/// The visible document `id`, which the caller must have uploaded (or administer): 403 if not.
async fn modifiable(state: &AppState, caller: &Caller, id: &str, admin_allowed: bool) -> ApiResult<DocumentRow> {
    let user = caller.require()?;
    let row = visible_document(state, caller, id).await?;
    if row.uploader_id != user.id && !(admin_allowed && is_org_admin_of(state, user, &row.uploader_id).await?) {
        return Err(ApiError::Forbidden(if admin_allowed {
            "only the document's uploader or an admin of their organisation may share it".into()
        } else {
            "only the document's uploader may change or delete it".into()
        }));
    }
    Ok(row)
}

async fn init_upload(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<DocumentInitUploadRequest>,
) -> ApiResult<axum::Json<InitUploadResponse>> {
    let user = caller.require()?;
    let filename = mgds_api::clean_filename(&req.filename).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    check_size(req.size)?;
    let id = new_id();
    let key = format!("documents/{id}/{filename}");
    let now = Utc::now();
    let valid = chrono::Duration::hours(24);
    sqlx::query(
        "INSERT INTO uploads (id, kind, owner_id, filename, size, object_key, request, created_at, expires_at) \
         VALUES (?, 'document', ?, ?, ?, ?, '{}', ?, ?)",
    )
    .bind(&id)
    .bind(&user.id)
    .bind(&filename)
    .bind(req.size as i64)
    .bind(&key)
    .bind(db::ts(now))
    .bind(db::ts(now + valid))
    .execute(&state.db)
    .await?;
    Ok(axum::Json(InitUploadResponse {
        sample_id: None,
        document_id: Some(id),
        upload_url: format!("{}/storage/{BUCKET}", state.public_url),
        additional_fields: state.signer.upload_form(&key, req.size, now, valid),
    }))
}

async fn confirm_upload(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<DocumentConfirmUploadRequest>,
) -> ApiResult<axum::Json<ConfirmUploadResponse>> {
    let user = caller.require()?;
    let up: super::samples::UploadRow = sqlx::query_as(
        "SELECT id, filename, size, object_key, target_sample, request, confirmed_id FROM uploads \
         WHERE kind = 'document' AND owner_id = ? AND id = ?",
    )
    .bind(&user.id)
    .bind(&req.document_id)
    .fetch_optional(&state.db)
    .await?
    .ok_or_else(|| {
        ApiError::NotFound(format!(
            "no document upload {:?} of yours to confirm; call init_upload first",
            req.document_id
        ))
    })?;
    let answer = |id: &str| {
        axum::Json(ConfirmUploadResponse {
            success: true,
            message: "upload confirmed".into(),
            sample: None,
            document: Some(Ref::new("documents", id)),
        })
    };
    if let Some(done) = &up.confirmed_id {
        return Ok(answer(done));
    }
    check_arrived(&state, &up).await?;
    let mut tx = begin_write(&state.db).await?;
    let n = sqlx::query("UPDATE uploads SET confirmed_id = id WHERE id = ? AND confirmed_id IS NULL")
        .bind(&up.id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    if n == 1 {
        sqlx::query(
            "INSERT INTO documents (id, uploader_id, filename, size, object_key, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(&up.id)
        .bind(&user.id)
        .bind(&up.filename)
        .bind(up.size)
        .bind(&up.object_key)
        .bind(db::now())
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(answer(&up.id))
}

async fn update_document(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<DocumentUpdate>,
) -> ApiResult<axum::Json<Document>> {
    modifiable(&state, &caller, &id, false).await?;
    let mut tx = begin_write(&state.db).await?;
    if let Some(f) = &req.filename {
        let f = mgds_api::clean_filename(f).map_err(|e| ApiError::BadRequest(e.to_string()))?;
        sqlx::query("UPDATE documents SET filename = ? WHERE id = ?").bind(f).bind(&id).execute(&mut *tx).await?;
    }
    if let Some(d) = &req.description {
        sqlx::query("UPDATE documents SET description = ? WHERE id = ?").bind(d).bind(&id).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(axum::Json(visible_document(&state, &caller, &id).await?.into_api()))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Rename {
    filename: String,
}

async fn rename_document(
    state: State<AppState>,
    caller: Caller,
    id: Path<String>,
    Json(req): Json<Rename>,
) -> ApiResult<axum::Json<Document>> {
    update_document(state, caller, id, Json(DocumentUpdate { filename: Some(req.filename), description: None })).await
}

async fn delete_document(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let row = modifiable(&state, &caller, &id, false).await?;
    let mut tx = begin_write(&state.db).await?;
    queue_delete(&mut tx, &row.object_key).await?;
    sqlx::query("DELETE FROM documents WHERE id = ?").bind(&id).execute(&mut *tx).await?;
    tx.commit().await?;
    purge(&state).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The user named in a share request, who must exist.
async fn named_user(state: &AppState, req: &UserRequest) -> ApiResult<String> {
    let uid = ref_id("user", &req.user, "users")?;
    let exists: Option<String> =
        sqlx::query_scalar("SELECT id FROM users WHERE id = ?").bind(uid).fetch_optional(&state.db).await?;
    exists.ok_or_else(|| ApiError::BadRequest(format!("there is no user {uid}")))
}

async fn add_user(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<UserRequest>,
) -> ApiResult<axum::Json<Document>> {
    let row = modifiable(&state, &caller, &id, true).await?;
    let uid = named_user(&state, &req).await?;
    if uid != row.uploader_id {
        sqlx::query("INSERT OR IGNORE INTO document_downloaders (document_id, user_id) VALUES (?, ?)")
            .bind(&id)
            .bind(&uid)
            .execute(&state.db)
            .await?;
    }
    Ok(axum::Json(visible_document(&state, &caller, &id).await?.into_api()))
}

async fn remove_user(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<UserRequest>,
) -> ApiResult<axum::Json<Document>> {
    modifiable(&state, &caller, &id, true).await?;
    let uid = named_user(&state, &req).await?;
    sqlx::query("DELETE FROM document_downloaders WHERE document_id = ? AND user_id = ?")
        .bind(&id)
        .bind(&uid)
        .execute(&state.db)
        .await?;
    Ok(axum::Json(visible_document(&state, &caller, &id).await?.into_api()))
}

async fn download_uri(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<DownloadUri>> {
    let row = visible_document(&state, &caller, &id).await?;
    Ok(axum::Json(DownloadUri {
        download_uri: super::storage_endpoint::download_url(
            &state,
            &row.object_key,
            &row.filename,
            DOWNLOAD_VALID_HOURS,
        ),
        expires_in_hours: DOWNLOAD_VALID_HOURS,
    }))
}
