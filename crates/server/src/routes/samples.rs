//! Samples and their metadata: pre-upload, the three-step upload, list, get, update, delete.

use axum::Router;
use axum::extract::{OriginalUri, Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use chrono::Utc;
use mgds_api::{
    CancelUploadRequest, ConfirmUploadRequest, ConfirmUploadResponse, DownloadUri, ErrorCode, InitUploadRequest,
    InitUploadResponse, LIBRARY_TYPES, MAX_EXTERNAL_SAMPLE_ID_CHARS, MAX_TAG_NAME_CHARS, MAX_UPLOAD_BYTES, Metadata,
    MetadataInput, PLATFORMS, PreuploadRequest, PreuploadResponse, Ref, SAMPLE_TYPES, Sample, SampleUpdate,
    SuccessResponse, TagInput, Visibility,
};
use serde_json::{Map, Value};
use sqlx::{Sqlite, Transaction};

use super::{Json, ListParams, ListSpec, Listed, flag, id_list, ref_id};
use crate::access;
use crate::auth::{Caller, User};
use crate::db::{self, begin_write, new_id};
use crate::error::{ApiError, ApiResult};
use crate::listing::{Bind, Compiled, Field, FieldKind};
use crate::signing::BUCKET;
use crate::{AppState, listing};

/// How long an upload form stays valid.
const UPLOAD_VALID_HOURS: i64 = 24;
/// How long a download address stays valid.
pub const DOWNLOAD_VALID_HOURS: u32 = 24;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/samples", get(list_samples))
        .route("/samples/public", get(list_public))
        .route("/samples/preupload", post(preupload))
        .route("/samples/init_upload", post(init_upload))
        .route("/samples/confirm_upload", post(confirm_upload))
        .route("/samples/cancel_upload", post(cancel_upload))
        .route("/samples/{id}", get(get_sample).patch(update_sample).delete(delete_sample))
        .route("/samples/{id}/download_uri", post(download_uri))
        .route("/metadata", get(list_metadata))
        .route("/metadata/{id}", get(get_metadata).patch(update_metadata))
}

pub(crate) const SAMPLE_FIELDS: &[Field] = &[
    Field { name: "$uri", column: "s.id", kind: FieldKind::Uri { collection: "samples" }, sortable: true },
    Field { name: "created_at", column: "s.created_at", kind: FieldKind::DateTime, sortable: true },
    Field { name: "filename", column: "s.filename", kind: FieldKind::Text, sortable: true },
    Field { name: "size", column: "s.size", kind: FieldKind::Integer, sortable: true },
    Field {
        name: "visibility",
        column: "s.visibility",
        kind: FieldKind::Enum(&["public", "shared", "private", "importing", "awaiting data"]),
        sortable: true,
    },
    Field { name: "owner", column: "s.owner_id", kind: FieldKind::Ref { collection: "users" }, sortable: true },
    Field { name: "project", column: "s.project_id", kind: FieldKind::Ref { collection: "projects" }, sortable: true },
    Field {
        name: "primary_classification",
        column: "s.primary_classification_id",
        kind: FieldKind::Ref { collection: "classifications" },
        sortable: true,
    },
    Field {
        name: "metadata",
        column: "(SELECT m.id FROM metadata m WHERE m.sample_id = s.id)",
        kind: FieldKind::Ref { collection: "metadata" },
        sortable: true,
    },
    Field {
        name: "tags",
        column: "",
        kind: FieldKind::RefSet {
            collection: "tags",
            subquery: "SELECT st.tag_id FROM sample_tags st WHERE st.sample_id = s.id",
        },
        sortable: false,
    },
];

pub(crate) const SAMPLES: ListSpec = ListSpec {
    from: "samples s",
    columns: "s.id, s.owner_id, s.visibility, s.filename, s.size, s.project_id, s.primary_classification_id, \
              s.created_at, (SELECT m.id FROM metadata m WHERE m.sample_id = s.id) AS metadata_id, \
              (SELECT json_group_array(st.tag_id) FROM sample_tags st WHERE st.sample_id = s.id) AS tag_ids",
    fields: SAMPLE_FIELDS,
    default_order: "s.created_at ASC",
    tiebreak: "s.id ASC",
};

#[derive(sqlx::FromRow)]
pub(crate) struct SampleRow {
    pub id: String,
    pub owner_id: String,
    pub visibility: String,
    filename: Option<String>,
    size: Option<i64>,
    pub project_id: Option<String>,
    primary_classification_id: Option<String>,
    created_at: String,
    metadata_id: Option<String>,
    tag_ids: String,
}

impl SampleRow {
    fn into_api(self) -> Sample {
        Sample {
            uri: Ref::new("samples", &self.id).uri,
            created_at: self.created_at,
            filename: self.filename,
            size: self.size.map(|s| s.max(0) as u64),
            visibility: Visibility::parse(&self.visibility).unwrap_or(Visibility::Private),
            owner: Ref::new("users", &self.owner_id),
            metadata: self.metadata_id.map(|m| Ref::new("metadata", &m)),
            project: self.project_id.map(|p| Ref::new("projects", &p)),
            primary_classification: self.primary_classification_id.map(|c| Ref::new("classifications", &c)),
            tags: id_list(&self.tag_ids).iter().map(|t| Ref::new("tags", t)).collect(),
        }
    }
}

async fn list_samples(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<Sample>> {
    let rows: Listed<SampleRow> =
        super::list(&state, &uri, &params, &SAMPLES, access::sample(&caller, "s"), None).await?;
    Ok(rows.map(SampleRow::into_api))
}

async fn list_public(State(state): State<AppState>, uri: OriginalUri, params: ListParams) -> ApiResult<Listed<Sample>> {
    let public = Compiled { sql: "s.visibility = 'public'".into(), binds: vec![] };
    let rows: Listed<SampleRow> = super::list(&state, &uri, &params, &SAMPLES, public, None).await?;
    Ok(rows.map(SampleRow::into_api))
}

/// The sample `id` if the caller may see it.
pub(crate) async fn visible_sample(state: &AppState, caller: &Caller, id: &str) -> ApiResult<Option<SampleRow>> {
    super::fetch_one(state, &SAMPLES, "s.id", id, access::sample(caller, "s")).await
}

async fn get_sample(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Sample>> {
    let row = visible_sample(&state, &caller, &id).await?.ok_or_else(|| ApiError::not_found("sample"))?;
    Ok(axum::Json(row.into_api()))
}

// ---------------------------------------------------------------------------------------------
// Project membership

/// What the caller may do in a project: `None` if they cannot see it.
pub(crate) async fn project_permissions(
    state: &AppState,
    user: &User,
    project_id: &str,
) -> ApiResult<Option<Vec<String>>> {
    let row: Option<(String, i64, Option<String>)> = sqlx::query_as(
        "SELECT p.owner_id, p.public, pm.permissions FROM projects p \
         LEFT JOIN project_members pm ON pm.project_id = p.id AND pm.user_id = ? WHERE p.id = ?",
    )
    .bind(&user.id)
    .bind(project_id)
    .fetch_optional(&state.db)
    .await?;
    Ok(match row {
        None => None,
        Some((owner, _, _)) if owner == user.id => {
            Some(mgds_api::PROJECT_PERMISSIONS.iter().map(|s| s.to_string()).collect())
        }
        Some((_, _, Some(perms))) => Some(serde_json::from_str(&perms).unwrap_or_default()),
        Some((_, public, None)) if public != 0 => Some(vec![]),
        Some(_) => None,
    })
}

/// The project a sample may be placed in by the caller: visible (else 400) and owned or joined
/// with `can_add_files` (else 403).
async fn project_to_add_to(state: &AppState, user: &User, r: &mgds_api::RefOrId) -> ApiResult<String> {
    let id = ref_id("project", r, "projects")?;
    let perms = project_permissions(state, user, id)
        .await?
        .ok_or_else(|| ApiError::BadRequest(format!("project {id} does not exist or you do not have access to it")))?;
    if !perms.iter().any(|p| p == "can_add_files") {
        return Err(ApiError::Forbidden(format!(
            "you may not add samples to project {id}: its owner has not given you the can_add_files permission"
        )));
    }
    Ok(id.to_string())
}

/// The sample `id` named in a request body, which the caller must see (else 400) and own or
/// hold `permission` on through its project (else 403, saying that `doing` needs it).
pub(crate) async fn sample_for(
    state: &AppState,
    caller: &Caller,
    id: &str,
    permission: &str,
    doing: &str,
) -> ApiResult<SampleRow> {
    let user = caller.require()?;
    let sample = visible_sample(state, caller, id)
        .await?
        .ok_or_else(|| ApiError::BadRequest(format!("sample {id} does not exist or you do not have access to it")))?;
    may_act(state, user, &sample, permission, doing).await?;
    Ok(sample)
}

/// The caller owns `sample` or holds `permission` in its project; else 403.
async fn may_act(state: &AppState, user: &User, sample: &SampleRow, permission: &str, doing: &str) -> ApiResult<()> {
    if sample.owner_id == user.id {
        return Ok(());
    }
    if let Some(p) = &sample.project_id
        && project_permissions(state, user, p).await?.is_some_and(|perms| perms.iter().any(|x| x == permission))
    {
        return Ok(());
    }
    Err(ApiError::Forbidden(format!("only the sample's owner, or project members with {permission}, may {doing}")))
}

// ---------------------------------------------------------------------------------------------
// Metadata rules

fn check_len(field: &str, v: &Option<Option<String>>, max: usize) -> ApiResult<()> {
    if let Some(Some(s)) = v
        && s.chars().count() > max
    {
        return Err(ApiError::BadRequest(format!("metadata.{field} is longer than {max} characters")));
    }
    Ok(())
}

fn check_enum(field: &str, v: &Option<Option<String>>, allowed: &[&str]) -> ApiResult<()> {
    if let Some(Some(s)) = v
        && !allowed.contains(&s.as_str())
    {
        return Err(ApiError::BadRequest(format!(
            "metadata.{field} {s:?} is not one of the allowed values: {}",
            allowed.join(", ")
        )));
    }
    Ok(())
}

fn check_range(field: &str, v: Option<Option<f64>>, lo: f64, hi: f64) -> ApiResult<()> {
    if let Some(Some(x)) = v
        && !(lo..=hi).contains(&x)
    {
        return Err(ApiError::BadRequest(format!("metadata.{field} must be between {lo} and {hi}")));
    }
    Ok(())
}

fn normalize_date(field: &str, v: &mut Option<Option<String>>) -> ApiResult<()> {
    if let Some(Some(s)) = v {
        *s = listing::normalize_ts(s).map_err(|e| {
            ApiError::BadRequest(format!(
                "metadata.{field} must be an RFC 3339 date-time (e.g. 2026-03-01T09:30:00Z): {e}"
            ))
        })?;
    }
    Ok(())
}

/// Checks metadata against the reference schema's rules; normalises dates.
pub(crate) fn validate_metadata(m: &mut MetadataInput) -> ApiResult<()> {
    check_len("external_sample_id", &m.external_sample_id, MAX_EXTERNAL_SAMPLE_ID_CHARS)?;
    check_len("name", &m.name, 255)?;
    check_len("location_string", &m.location_string, 255)?;
    check_enum("platform", &m.platform, &PLATFORMS)?;
    check_enum("library_type", &m.library_type, &LIBRARY_TYPES)?;
    check_enum("sample_type", &m.sample_type, &SAMPLE_TYPES)?;
    check_range("location_lat", m.location_lat, -90.0, 90.0)?;
    check_range("location_lon", m.location_lon, -180.0, 180.0)?;
    normalize_date("date_collected", &mut m.date_collected)?;
    normalize_date("date_sequenced", &mut m.date_sequenced)?;
    if let Some(custom) = &m.custom {
        for (k, v) in custom {
            if v.is_object() || v.is_array() {
                return Err(ApiError::BadRequest(format!(
                    "metadata.custom.{k} must be a string, number, boolean or null"
                )));
            }
        }
    }
    if let Some(Some(id)) = &m.external_sample_id
        && id.trim().is_empty()
    {
        return Err(ApiError::BadRequest("metadata.external_sample_id must not be empty".into()));
    }
    Ok(())
}

fn check_tags(tags: &[TagInput]) -> ApiResult<()> {
    for t in tags {
        let n = t.name.trim().chars().count();
        if n == 0 || n > MAX_TAG_NAME_CHARS {
            return Err(ApiError::BadRequest(format!(
                "tag name {:?} must be 1 to {MAX_TAG_NAME_CHARS} characters",
                t.name
            )));
        }
    }
    Ok(())
}

/// Whether another of `owner`'s samples already uses `external_id`.
async fn external_id_taken(
    tx: &mut Transaction<'_, Sqlite>,
    owner: &str,
    external_id: &str,
    except_sample: Option<&str>,
) -> ApiResult<bool> {
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM metadata WHERE owner_id = ? AND external_sample_id = ? AND sample_id != ?",
    )
    .bind(owner)
    .bind(external_id)
    .bind(except_sample.unwrap_or(""))
    .fetch_one(&mut **tx)
    .await?;
    Ok(n > 0)
}

fn duplicate_external_id(id: &str) -> ApiError {
    ApiError::Conflict(format!(
        "external_sample_id {id:?} is already used by another of your samples; post only unique IDs"
    ))
    .with_code(ErrorCode::DuplicateExternalSampleId)
}

/// Writes the given metadata fields (absent ones are left alone).
async fn apply_metadata(tx: &mut Transaction<'_, Sqlite>, metadata_id: &str, m: &MetadataInput) -> ApiResult<()> {
    let mut sets: Vec<&'static str> = Vec::new();
    let mut binds: Vec<Bind> = Vec::new();
    let text = |v: &Option<String>| v.clone().map_or(Bind::Null, Bind::Text);
    let real = |v: &Option<f64>| v.map_or(Bind::Null, Bind::Real);
    if let Some(v) = m.starred {
        sets.push("starred = ?");
        binds.push(Bind::Int(i64::from(v)));
    }
    if let Some(v) = &m.custom {
        sets.push("custom = ?");
        binds.push(Bind::Text(Value::Object(v.clone()).to_string()));
    }
    let texts: [(&'static str, &Option<Option<String>>); 9] = [
        ("external_sample_id = ?", &m.external_sample_id),
        ("name = ?", &m.name),
        ("description = ?", &m.description),
        ("date_collected = ?", &m.date_collected),
        ("date_sequenced = ?", &m.date_sequenced),
        ("platform = ?", &m.platform),
        ("library_type = ?", &m.library_type),
        ("sample_type = ?", &m.sample_type),
        ("location_string = ?", &m.location_string),
    ];
    for (set, v) in texts {
        if let Some(v) = v {
            sets.push(set);
            binds.push(text(v));
        }
    }
    for (set, v) in [("location_lat = ?", &m.location_lat), ("location_lon = ?", &m.location_lon)] {
        if let Some(v) = v {
            sets.push(set);
            binds.push(real(v));
        }
    }
    if sets.is_empty() {
        return Ok(());
    }
    binds.push(Bind::Text(metadata_id.to_string()));
    let sql = format!("UPDATE metadata SET {} WHERE id = ?", sets.join(", "));
    sqlx::query_with(sqlx::AssertSqlSafe(sql), super::args(&binds)?).execute(&mut **tx).await?;
    Ok(())
}

/// Finds or creates the caller's tags by name and attaches them to a sample.
async fn attach_tags(
    tx: &mut Transaction<'_, Sqlite>,
    owner: &str,
    sample_id: &str,
    tags: &[TagInput],
) -> ApiResult<()> {
    for t in tags {
        let tag_id = tag_by_name(tx, owner, t.name.trim()).await?;
        sqlx::query("INSERT OR IGNORE INTO sample_tags (sample_id, tag_id) VALUES (?, ?)")
            .bind(sample_id)
            .bind(&tag_id)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// The caller's tag called `name`, created if it does not exist yet (a user's tag names are
/// unique, so the same label always means the same tag).
pub(crate) async fn tag_by_name(tx: &mut Transaction<'_, Sqlite>, owner: &str, name: &str) -> ApiResult<String> {
    if let Some(id) = sqlx::query_scalar::<_, String>("SELECT id FROM tags WHERE owner_id = ? AND name = ?")
        .bind(owner)
        .bind(name)
        .fetch_optional(&mut **tx)
        .await?
    {
        return Ok(id);
    }
    let id = new_id();
    sqlx::query("INSERT INTO tags (id, owner_id, name, created_at) VALUES (?, ?, ?, ?)")
        .bind(&id)
        .bind(owner)
        .bind(name)
        .bind(db::now())
        .execute(&mut **tx)
        .await?;
    Ok(id)
}

/// Inserts a sample and its (empty) metadata record; returns nothing, the ids are given.
#[allow(clippy::too_many_arguments)]
async fn insert_sample(
    tx: &mut Transaction<'_, Sqlite>,
    id: &str,
    owner: &str,
    visibility: &str,
    filename: Option<&str>,
    size: Option<i64>,
    object_key: Option<&str>,
    project: Option<&str>,
) -> ApiResult<String> {
    let now = db::now();
    sqlx::query(
        "INSERT INTO samples (id, owner_id, visibility, filename, size, object_key, project_id, created_at, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(id)
    .bind(owner)
    .bind(visibility)
    .bind(filename)
    .bind(size)
    .bind(object_key)
    .bind(project)
    .bind(&now)
    .bind(&now)
    .execute(&mut **tx)
    .await?;
    let metadata_id = new_id();
    sqlx::query("INSERT INTO metadata (id, sample_id, owner_id) VALUES (?, ?, ?)")
        .bind(&metadata_id)
        .bind(id)
        .bind(owner)
        .execute(&mut **tx)
        .await?;
    Ok(metadata_id)
}

// ---------------------------------------------------------------------------------------------
// Pre-upload and the three-step upload

async fn preupload(
    State(state): State<AppState>,
    caller: Caller,
    Json(mut req): Json<PreuploadRequest>,
) -> ApiResult<axum::Json<PreuploadResponse>> {
    let user = caller.require()?;
    let mut metadata = req.metadata.take().unwrap_or_default();
    validate_metadata(&mut metadata)?;
    check_tags(&req.tags)?;
    let project = match &req.project {
        Some(p) => Some(project_to_add_to(&state, user, p).await?),
        None => None,
    };
    let id = new_id();
    // BEGIN IMMEDIATE: the uniqueness check and the insert are one step for concurrent callers.
    let mut tx = begin_write(&state.db).await?;
    if let Some(Some(ext)) = &metadata.external_sample_id
        && external_id_taken(&mut tx, &user.id, ext, None).await?
    {
        return Err(duplicate_external_id(ext));
    }
    let metadata_id =
        insert_sample(&mut tx, &id, &user.id, Visibility::AwaitingData.as_str(), None, None, None, project.as_deref())
            .await?;
    apply_metadata(&mut tx, &metadata_id, &metadata).await?;
    attach_tags(&mut tx, &user.id, &id, &req.tags).await?;
    tx.commit().await?;
    Ok(axum::Json(PreuploadResponse { sample_id: id }))
}

async fn init_upload(
    State(state): State<AppState>,
    caller: Caller,
    Json(mut req): Json<InitUploadRequest>,
) -> ApiResult<axum::Json<InitUploadResponse>> {
    let user = caller.require()?;
    let filename = mgds_api::clean_sample_filename(&req.filename).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    check_upload_type(req.upload_type.as_deref())?;
    check_size(req.size)?;
    if let Some(m) = req.metadata.as_mut() {
        validate_metadata(m)?;
    }
    check_tags(&req.tags)?;
    if let Some(p) = &req.project {
        project_to_add_to(&state, user, p).await?;
    }
    // A pre-uploaded sample to receive this file.
    let target: Option<String> = match (&req.sample_id, &req.external_sample_id) {
        (None, None) => None,
        (sample_id, external) => {
            let found: Option<String> = sqlx::query_scalar(
                "SELECT s.id FROM samples s JOIN metadata m ON m.sample_id = s.id \
                 WHERE s.owner_id = ? AND s.visibility = 'awaiting data' \
                 AND (? IS NULL OR s.id = ?) AND (? IS NULL OR m.external_sample_id = ?)",
            )
            .bind(&user.id)
            .bind(sample_id)
            .bind(sample_id)
            .bind(external)
            .bind(external)
            .fetch_optional(&state.db)
            .await?;
            Some(found.ok_or_else(|| {
                let what = match (sample_id, external) {
                    (Some(s), _) => format!("sample_id {s:?}"),
                    (None, Some(e)) => format!("external_sample_id {e:?}"),
                    (None, None) => String::new(),
                };
                ApiError::BadRequest(format!(
                    "no pre-uploaded sample of yours awaiting data matches {what}; pre-upload it first \
                     or leave the field out to create a new sample"
                ))
                .with_code(ErrorCode::NotAwaitingData)
            })?)
        }
    };
    let upload_id = new_id();
    let object_key = format!("samples/{upload_id}/{filename}");
    let now = Utc::now();
    let expires = now + chrono::Duration::hours(UPLOAD_VALID_HOURS);
    let stored = serde_json::json!({
        "metadata": req.metadata,
        "tags": req.tags,
        "project": req.project,
        "interleaved": req.interleaved,
    });
    sqlx::query(
        "INSERT INTO uploads (id, kind, owner_id, filename, size, object_key, target_sample, request, created_at, expires_at) \
         VALUES (?, 'sample', ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&upload_id)
    .bind(&user.id)
    .bind(&filename)
    .bind(req.size as i64)
    .bind(&object_key)
    .bind(&target)
    .bind(stored.to_string())
    .bind(db::ts(now))
    .bind(db::ts(expires))
    .execute(&state.db)
    .await?;
    let additional_fields =
        state.signer.upload_form(&object_key, req.size, now, chrono::Duration::hours(UPLOAD_VALID_HOURS));
    Ok(axum::Json(InitUploadResponse {
        sample_id: Some(target.unwrap_or(upload_id)),
        document_id: None,
        upload_url: format!("{}/storage/{BUCKET}", state.public_url),
        additional_fields,
    }))
}

pub(super) fn check_upload_type(t: Option<&str>) -> ApiResult<()> {
    match t {
        None | Some("standard") => Ok(()),
        Some(other) => {
            Err(ApiError::BadRequest(format!("upload_type {other:?} is not supported; only \"standard\" is")))
        }
    }
}

pub(super) fn check_size(size: u64) -> ApiResult<()> {
    if size == 0 {
        return Err(ApiError::BadRequest("size must be at least 1 byte: the file is empty".into()));
    }
    if size > MAX_UPLOAD_BYTES {
        return Err(ApiError::BadRequest(format!(
            "the file is {size} bytes; uploads are limited to {MAX_UPLOAD_BYTES} bytes (20 GB)"
        )));
    }
    Ok(())
}

#[derive(sqlx::FromRow)]
pub(super) struct UploadRow {
    pub id: String,
    pub filename: String,
    pub size: i64,
    pub object_key: String,
    pub target_sample: Option<String>,
    pub request: String,
    pub confirmed_id: Option<String>,
}

/// The caller's upload answering to `id`: the upload itself, or the newest upload for the
/// pre-uploaded sample `id` (preferring one not yet confirmed).
async fn find_upload(
    tx: &mut Transaction<'_, Sqlite>,
    kind: &str,
    owner: &str,
    id: &str,
) -> ApiResult<Option<UploadRow>> {
    Ok(sqlx::query_as(
        "SELECT id, filename, size, object_key, target_sample, request, confirmed_id FROM uploads \
         WHERE kind = ? AND owner_id = ? AND (id = ? OR target_sample = ?) \
         ORDER BY (confirmed_id IS NULL) DESC, created_at DESC, rowid DESC LIMIT 1",
    )
    .bind(kind)
    .bind(owner)
    .bind(id)
    .bind(id)
    .fetch_optional(&mut **tx)
    .await?)
}

/// Checks that an upload's file arrived whole.
pub(super) async fn check_arrived(state: &AppState, up: &UploadRow) -> ApiResult<()> {
    match state.storage.size(&up.object_key).await? {
        None => Err(ApiError::BadRequest(
            "the file has not arrived yet: POST it to upload_url with the additional_fields before confirming".into(),
        )
        .with_code(ErrorCode::FileNotArrived)),
        Some(n) if n as i64 != up.size => Err(ApiError::BadRequest(format!(
            "the stored file has {n} bytes but init_upload announced {}; upload it again",
            up.size
        ))
        .with_code(ErrorCode::SizeMismatch)),
        Some(_) => Ok(()),
    }
}

async fn confirm_upload(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<ConfirmUploadRequest>,
) -> ApiResult<axum::Json<ConfirmUploadResponse>> {
    let user = caller.require()?;
    check_upload_type(req.upload_type.as_deref())?;
    let not_found =
        || ApiError::NotFound(format!("no upload {:?} of yours to confirm; call init_upload first", req.sample_id));
    // The file check is outside the write lock (it touches the disk); the decision is inside.
    let mut tx = state.db.begin().await?;
    let up = find_upload(&mut tx, "sample", &user.id, &req.sample_id).await?.ok_or_else(not_found)?;
    drop(tx);
    if let Some(done) = &up.confirmed_id {
        return Ok(confirmed(done));
    }
    check_arrived(&state, &up).await?;

    let mut tx = begin_write(&state.db).await?;
    // Re-read under the lock: a concurrent confirm may have finished first.
    let up: UploadRow = sqlx::query_as(
        "SELECT id, filename, size, object_key, target_sample, request, confirmed_id FROM uploads WHERE id = ?",
    )
    .bind(&up.id)
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(not_found)?;
    if let Some(done) = &up.confirmed_id {
        return Ok(confirmed(done));
    }
    let stored: Map<String, Value> = serde_json::from_str(&up.request).unwrap_or_default();
    let sample_id = match &up.target_sample {
        Some(target) => {
            let n = sqlx::query(
                "UPDATE samples SET filename = ?, size = ?, object_key = ?, visibility = 'private', updated_at = ? \
                 WHERE id = ? AND visibility = 'awaiting data'",
            )
            .bind(&up.filename)
            .bind(up.size)
            .bind(&up.object_key)
            .bind(db::now())
            .bind(target)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if n == 0 {
                return Err(ApiError::Conflict(format!(
                    "sample {target} is no longer awaiting data (another file was confirmed for it, or it was deleted)"
                ))
                .with_code(ErrorCode::NotAwaitingData));
            }
            target.clone()
        }
        None => {
            let project = stored
                .get("project")
                .and_then(|p| serde_json::from_value::<Option<mgds_api::RefOrId>>(p.clone()).ok().flatten())
                .map(|p| p.id().to_string());
            // The project was checked at init_upload; it may have been deleted since.
            let project = match project {
                Some(p) => {
                    sqlx::query_scalar::<_, String>("SELECT id FROM projects WHERE id = ?")
                        .bind(&p)
                        .fetch_optional(&mut *tx)
                        .await?
                }
                None => None,
            };
            insert_sample(
                &mut tx,
                &up.id,
                &user.id,
                Visibility::Private.as_str(),
                Some(&up.filename),
                Some(up.size),
                Some(&up.object_key),
                project.as_deref(),
            )
            .await?;
            up.id.clone()
        }
    };
    let metadata_id: String =
        sqlx::query_scalar("SELECT id FROM metadata WHERE sample_id = ?").bind(&sample_id).fetch_one(&mut *tx).await?;
    if let Some(m) = stored.get("metadata").filter(|m| !m.is_null()) {
        let m: MetadataInput = serde_json::from_value(m.clone())?;
        if let Some(Some(ext)) = &m.external_sample_id
            && up.target_sample.is_none()
            && external_id_taken(&mut tx, &user.id, ext, Some(&sample_id)).await?
        {
            // Only pre-uploads must be unique; a plain upload keeps its id but says so in the log.
            tracing::info!(sample = %sample_id, "uploaded sample reuses an external_sample_id");
        }
        apply_metadata(&mut tx, &metadata_id, &m).await?;
    }
    if let Some(tags) = stored.get("tags").filter(|t| !t.is_null()) {
        let tags: Vec<TagInput> = serde_json::from_value(tags.clone())?;
        attach_tags(&mut tx, &user.id, &sample_id, &tags).await?;
    }
    sqlx::query("UPDATE uploads SET confirmed_id = ? WHERE id = ?")
        .bind(&sample_id)
        .bind(&up.id)
        .execute(&mut *tx)
        .await?;
    // The default classification runs by itself on every new file, in the same transaction: a
    // confirmed sample never misses it.
    let queued = crate::worker::queue_default_classification(&mut tx, &sample_id).await?;
    tx.commit().await?;
    if queued.is_some() {
        state.runner.wake();
    }
    Ok(confirmed(&sample_id))
}

fn confirmed(sample_id: &str) -> axum::Json<ConfirmUploadResponse> {
    axum::Json(ConfirmUploadResponse {
        success: true,
        message: "upload confirmed; the sample is ready".into(),
        sample: Some(Ref::new("samples", sample_id)),
        document: None,
    })
}

async fn cancel_upload(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<CancelUploadRequest>,
) -> ApiResult<axum::Json<SuccessResponse>> {
    let user = caller.require()?;
    let mut tx = begin_write(&state.db).await?;
    let up = find_upload(&mut tx, "sample", &user.id, &req.sample_id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no upload {:?} of yours to cancel", req.sample_id)))?;
    if up.confirmed_id.is_some() {
        return Err(ApiError::BadRequest("this upload is already confirmed; delete the sample instead".into()));
    }
    sqlx::query("DELETE FROM uploads WHERE id = ?").bind(&up.id).execute(&mut *tx).await?;
    queue_delete(&mut tx, &up.object_key).await?;
    tx.commit().await?;
    purge(&state).await?;
    Ok(axum::Json(SuccessResponse { success: true, message: "upload canceled".into() }))
}

// ---------------------------------------------------------------------------------------------
// Update, delete, download

/// The caller must own the visible sample `id`: 404 if hidden, 403 if not theirs.
async fn owned_sample(state: &AppState, caller: &Caller, id: &str) -> ApiResult<SampleRow> {
    let user = caller.require()?;
    let row = visible_sample(state, caller, id).await?.ok_or_else(|| ApiError::not_found("sample"))?;
    if row.owner_id != user.id {
        return Err(ApiError::Forbidden("only the sample's owner may change or delete it".into()));
    }
    Ok(row)
}

async fn update_sample(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<SampleUpdate>,
) -> ApiResult<axum::Json<Sample>> {
    let row = owned_sample(&state, &caller, &id).await?;
    let user = caller.require()?;
    if let Some(v) = req.visibility {
        if !matches!(v, Visibility::Public | Visibility::Shared | Visibility::Private) {
            return Err(ApiError::BadRequest(format!(
                "visibility can be set to public, shared or private, not {:?}",
                v.as_str()
            )));
        }
        if row.visibility == Visibility::AwaitingData.as_str() || row.visibility == Visibility::Importing.as_str() {
            return Err(ApiError::BadRequest(format!(
                "the sample is {}; its visibility can be changed once its file has arrived",
                row.visibility
            )));
        }
    }
    let project = match &req.project {
        Some(Some(p)) => Some(Some(project_to_add_to(&state, user, p).await?)),
        Some(None) => Some(None),
        None => None,
    };
    let mut tag_ids: Option<Vec<String>> = None;
    if let Some(tags) = &req.tags {
        let mut ids = Vec::new();
        for t in tags.iter().flatten() {
            let tid = ref_id("tags", t, "tags")?;
            let ok = super::is_visible(&state, "tags t", "t.id", tid, access::tag(&caller, "t")).await?;
            if !ok {
                return Err(ApiError::BadRequest(format!("tag {tid} does not exist or you do not have access to it")));
            }
            ids.push(tid.to_string());
        }
        tag_ids = Some(ids);
    }
    let mut tx = begin_write(&state.db).await?;
    if let Some(v) = req.visibility {
        sqlx::query("UPDATE samples SET visibility = ? WHERE id = ?")
            .bind(v.as_str())
            .bind(&id)
            .execute(&mut *tx)
            .await?;
    }
    if let Some(p) = project {
        sqlx::query("UPDATE samples SET project_id = ? WHERE id = ?").bind(p).bind(&id).execute(&mut *tx).await?;
    }
    if let Some(ids) = tag_ids {
        sqlx::query("DELETE FROM sample_tags WHERE sample_id = ?").bind(&id).execute(&mut *tx).await?;
        for t in ids {
            sqlx::query("INSERT OR IGNORE INTO sample_tags (sample_id, tag_id) VALUES (?, ?)")
                .bind(&id)
                .bind(&t)
                .execute(&mut *tx)
                .await?;
        }
    }
    sqlx::query("UPDATE samples SET updated_at = ? WHERE id = ?").bind(db::now()).bind(&id).execute(&mut *tx).await?;
    tx.commit().await?;
    let row = visible_sample(&state, &caller, &id).await?.ok_or_else(|| ApiError::not_found("sample"))?;
    Ok(axum::Json(row.into_api()))
}

async fn delete_sample(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<StatusCode> {
    owned_sample(&state, &caller, &id).await?;
    let mut tx = begin_write(&state.db).await?;
    let keys: Vec<Option<String>> = sqlx::query_scalar(
        "SELECT object_key FROM samples WHERE id = ? \
         UNION ALL SELECT results_key FROM analyses WHERE sample_id = ? \
         UNION ALL SELECT readlevel_key FROM analyses WHERE sample_id = ? \
         UNION ALL SELECT object_key FROM uploads WHERE target_sample = ? OR id = ?",
    )
    .bind(&id)
    .bind(&id)
    .bind(&id)
    .bind(&id)
    .bind(&id)
    .fetch_all(&mut *tx)
    .await?;
    for k in keys.into_iter().flatten() {
        queue_delete(&mut tx, &k).await?;
    }
    // Metadata, tag links, analyses and queue entries go with it (ON DELETE CASCADE).
    sqlx::query("DELETE FROM uploads WHERE id = ? OR target_sample = ?").bind(&id).bind(&id).execute(&mut *tx).await?;
    sqlx::query("DELETE FROM samples WHERE id = ?").bind(&id).execute(&mut *tx).await?;
    tx.commit().await?;
    purge(&state).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Records that a file must go; [`purge`] removes it after the transaction commits, and again at
/// the next start if the service stopped first.
pub(crate) async fn queue_delete(tx: &mut Transaction<'_, Sqlite>, key: &str) -> ApiResult<()> {
    sqlx::query("INSERT OR IGNORE INTO pending_deletes (object_key, queued_at) VALUES (?, ?)")
        .bind(key)
        .bind(db::now())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Removes the files queued by [`queue_delete`], and abandoned uploads a day past their expiry.
pub(crate) async fn purge(state: &AppState) -> ApiResult<()> {
    let cutoff = db::ts(Utc::now() - chrono::Duration::hours(24));
    let mut tx = begin_write(&state.db).await?;
    let stale: Vec<(String, String)> =
        sqlx::query_as("SELECT id, object_key FROM uploads WHERE confirmed_id IS NULL AND expires_at < ?")
            .bind(&cutoff)
            .fetch_all(&mut *tx)
            .await?;
    for (id, key) in &stale {
        queue_delete(&mut tx, key).await?;
        sqlx::query("DELETE FROM uploads WHERE id = ?").bind(id).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    let keys: Vec<String> = sqlx::query_scalar("SELECT object_key FROM pending_deletes").fetch_all(&state.db).await?;
    for key in keys {
        state.storage.delete(&key).await?;
        sqlx::query("DELETE FROM pending_deletes WHERE object_key = ?").bind(&key).execute(&state.db).await?;
    }
    Ok(())
}

async fn download_uri(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<DownloadUri>> {
    let user = caller.require()?;
    let row = visible_sample(&state, &caller, &id).await?.ok_or_else(|| ApiError::not_found("sample"))?;
    if row.owner_id != user.id
        && let Some(project) = &row.project_id
        && row.visibility != "public"
        && let Some(perms) = project_permissions(&state, user, project).await?
        && !perms.iter().any(|p| p == "can_download_files")
    {
        return Err(ApiError::Forbidden(
            "your project membership does not include can_download_files for this sample".into(),
        ));
    }
    let key: Option<String> =
        sqlx::query_scalar("SELECT object_key FROM samples WHERE id = ?").bind(&id).fetch_one(&state.db).await?;
    let key = key.ok_or_else(|| ApiError::BadRequest("the sample has no file yet: it is awaiting data".into()))?;
    let filename = row.filename.unwrap_or_else(|| "sample".into());
    Ok(axum::Json(DownloadUri {
        download_uri: super::storage_endpoint::download_url(&state, &key, &filename, DOWNLOAD_VALID_HOURS),
        expires_in_hours: DOWNLOAD_VALID_HOURS,
    }))
}

// ---------------------------------------------------------------------------------------------
// Metadata

pub(crate) const METADATA_FIELDS: &[Field] = &[
    Field { name: "$uri", column: "m.id", kind: FieldKind::Uri { collection: "metadata" }, sortable: true },
    Field { name: "sample", column: "m.sample_id", kind: FieldKind::Ref { collection: "samples" }, sortable: true },
    Field { name: "starred", column: "m.starred", kind: FieldKind::Bool, sortable: true },
    Field { name: "external_sample_id", column: "m.external_sample_id", kind: FieldKind::Text, sortable: true },
    Field { name: "name", column: "m.name", kind: FieldKind::Text, sortable: true },
    Field { name: "description", column: "m.description", kind: FieldKind::Text, sortable: true },
    Field { name: "date_collected", column: "m.date_collected", kind: FieldKind::DateTime, sortable: true },
    Field { name: "date_sequenced", column: "m.date_sequenced", kind: FieldKind::DateTime, sortable: true },
    Field { name: "platform", column: "m.platform", kind: FieldKind::Enum(&PLATFORMS), sortable: true },
    Field { name: "library_type", column: "m.library_type", kind: FieldKind::Enum(&LIBRARY_TYPES), sortable: true },
    Field { name: "sample_type", column: "m.sample_type", kind: FieldKind::Enum(&SAMPLE_TYPES), sortable: true },
    Field { name: "location_lat", column: "m.location_lat", kind: FieldKind::Number, sortable: true },
    Field { name: "location_lon", column: "m.location_lon", kind: FieldKind::Number, sortable: true },
    Field { name: "location_string", column: "m.location_string", kind: FieldKind::Text, sortable: true },
];

pub(crate) const METADATA: ListSpec = ListSpec {
    from: "metadata m",
    columns: "m.id, m.sample_id, m.starred, m.custom, m.external_sample_id, m.name, m.description, m.date_collected, \
              m.date_sequenced, m.platform, m.library_type, m.sample_type, m.location_lat, m.location_lon, m.location_string",
    fields: METADATA_FIELDS,
    default_order: "m.rowid ASC",
    tiebreak: "m.id ASC",
};

#[derive(sqlx::FromRow)]
struct MetadataRow {
    id: String,
    sample_id: String,
    starred: i64,
    custom: String,
    external_sample_id: Option<String>,
    name: Option<String>,
    description: Option<String>,
    date_collected: Option<String>,
    date_sequenced: Option<String>,
    platform: Option<String>,
    library_type: Option<String>,
    sample_type: Option<String>,
    location_lat: Option<f64>,
    location_lon: Option<f64>,
    location_string: Option<String>,
}

impl MetadataRow {
    fn into_api(self) -> Metadata {
        Metadata {
            uri: Ref::new("metadata", &self.id).uri,
            sample: Ref::new("samples", &self.sample_id),
            starred: flag(self.starred),
            custom: serde_json::from_str(&self.custom).unwrap_or_default(),
            external_sample_id: self.external_sample_id,
            name: self.name,
            description: self.description,
            date_collected: self.date_collected,
            date_sequenced: self.date_sequenced,
            platform: self.platform,
            library_type: self.library_type,
            sample_type: self.sample_type,
            location_lat: self.location_lat,
            location_lon: self.location_lon,
            location_string: self.location_string,
        }
    }
}

async fn list_metadata(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<Metadata>> {
    let rows: Listed<MetadataRow> =
        super::list(&state, &uri, &params, &METADATA, access::via_sample(&caller, "m", "sample_id"), None).await?;
    Ok(rows.map(MetadataRow::into_api))
}

async fn visible_metadata(state: &AppState, caller: &Caller, id: &str) -> ApiResult<MetadataRow> {
    super::fetch_one(state, &METADATA, "m.id", id, access::via_sample(caller, "m", "sample_id"))
        .await?
        .ok_or_else(|| ApiError::not_found("metadata"))
}

async fn get_metadata(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Metadata>> {
    Ok(axum::Json(visible_metadata(&state, &caller, &id).await?.into_api()))
}

async fn update_metadata(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(mut req): Json<MetadataInput>,
) -> ApiResult<axum::Json<Metadata>> {
    let user = caller.require()?;
    let row = visible_metadata(&state, &caller, &id).await?;
    let sample =
        visible_sample(&state, &caller, &row.sample_id).await?.ok_or_else(|| ApiError::not_found("metadata"))?;
    may_act(&state, user, &sample, "can_edit_metadata", "change its metadata").await?;
    if let Some(s) = &req.sample
        && ref_id("sample", s, "samples")? != row.sample_id
    {
        return Err(ApiError::BadRequest("a metadata record cannot be moved to another sample".into()));
    }
    validate_metadata(&mut req)?;
    let mut tx = begin_write(&state.db).await?;
    if let Some(Some(ext)) = &req.external_sample_id
        && external_id_taken(&mut tx, &sample.owner_id, ext, Some(&row.sample_id)).await?
    {
        return Err(duplicate_external_id(ext));
    }
    apply_metadata(&mut tx, &id, &req).await?;
    tx.commit().await?;
    Ok(axum::Json(visible_metadata(&state, &caller, &id).await?.into_api()))
}
