//! The upload lifecycle: a sample announced before its file (pre-upload), an upload started and
//! waiting for its file, the check that the file arrived whole, its confirmation into a sample or
//! a document, and its cancellation.

use chrono::{DateTime, Utc};
use mgds_api::{
    CancelUploadRequest, ConfirmUploadRequest, DocumentInitUploadRequest, ErrorCode, InitMultipartUploadRequest,
    InitUploadRequest, MAX_UPLOAD_BYTES, MetadataInput, PreuploadRequest, TagInput, Visibility,
};
use serde_json::{Map, Value, json};

use super::audit;
use super::caller::{Caller, User};
use super::db::{self, Scope, Tx, begin_write, new_id};
use super::deletes::{forget, queue_delete, remove_queued};
use super::files::{incoming_key, key_name};
use super::handle::Store;
use super::{imports, metadata, projects, queue, s3_grants, tags, upload_buckets};
use crate::error::{ApiError, ApiResult};

/// How long an upload form stays valid.
const UPLOAD_VALID_HOURS: i64 = 24;

/// An upload waiting for its file.
#[derive(Debug, Clone)]
pub struct Started {
    /// The id the client confirms the upload with: the sample or document to be.
    pub id: String,
    /// Where the file is to be stored.
    pub object_key: String,
    /// The size announced for the file.
    pub size: u64,
    /// When the upload started.
    pub at: DateTime<Utc>,
    /// How long its form stays valid.
    pub valid_for: chrono::Duration,
    /// The file's SHA-256, when declared: the form carries it and the store checks it.
    pub sha256: Option<[u8; 32]>,
}

/// Reads a SHA-256 given in a request (64 hex digits, either case).
fn parse_sha256(field: &str, hex_digits: Option<&str>) -> ApiResult<Option<[u8; 32]>> {
    let Some(h) = hex_digits else { return Ok(None) };
    let mut out = [0u8; 32];
    hex::decode_to_slice(h.trim(), &mut out).map_err(|_| {
        ApiError::BadRequest(format!("{field} must be the file's SHA-256 as 64 hexadecimal digits; got {h:?}"))
    })?;
    Ok(Some(out))
}

/// Registers a sample that awaits its file, with its metadata, tags and project; returns its id.
pub async fn preupload(state: &Store, caller: &Caller, mut req: PreuploadRequest) -> ApiResult<String> {
    let user = caller.require()?;
    let mut metadata = req.metadata.take().unwrap_or_default();
    metadata::validate(&mut metadata)?;
    tags::check_names(&req.tags)?;
    let project = match &req.project {
        Some(p) => Some(projects::to_add_to(state, user, p).await?),
        None => None,
    };
    let id = new_id();
    // BEGIN IMMEDIATE: the uniqueness check and the insert are one step for concurrent callers.
    let mut tx = begin_write(&state.db, Scope::User(&user.id)).await?;
    if let Some(Some(ext)) = &metadata.external_sample_id
        && metadata::external_id_taken(&mut tx, &user.id, ext, None).await?
    {
        return Err(metadata::duplicate_external_id(ext));
    }
    let metadata_id =
        insert_sample(&mut tx, &id, &user.id, Visibility::AwaitingData.as_str(), None, None, None, project.as_deref())
            .await?;
    metadata::apply(&mut tx, &metadata_id, &metadata).await?;
    tags::attach(&mut tx, &user.id, &id, &req.tags).await?;
    let entry = audit::Entry::new("sample.preuploaded", "sample", &id, &user.id)
        .with(json!({"external_sample_id": metadata.external_sample_id, "project": project}));
    audit::record(&mut tx, Some(user), entry).await?;
    tx.commit().await?;
    Ok(id)
}

/// Starts the upload of a sample's file: for a new sample, or for a pre-uploaded one named by
/// `sample_id` or `external_sample_id`. The request is kept to be applied at confirmation.
pub async fn start_sample(state: &Store, caller: &Caller, mut req: InitUploadRequest) -> ApiResult<Started> {
    let user = caller.require()?;
    let filename = mgds_api::clean_sample_filename(&req.filename).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    check_upload_type(req.upload_type.as_deref())?;
    check_size(req.size)?;
    let sha256 = parse_sha256("sha256", req.sha256.as_deref())?;
    let target = check_sample_request(
        state,
        user,
        req.metadata.as_mut(),
        &req.tags,
        req.project.as_ref(),
        (req.sample_id.as_deref(), req.external_sample_id.as_deref()),
    )
    .await?;
    let upload_id = new_id();
    let object_key = format!("samples/{upload_id}/{}", key_name(&filename));
    let now = Utc::now();
    let valid_for = chrono::Duration::hours(UPLOAD_VALID_HOURS);
    let stored = serde_json::json!({
        "metadata": req.metadata,
        "tags": req.tags,
        "project": req.project,
        "interleaved": req.interleaved,
    });
    sqlx::query(
        "INSERT INTO uploads (id, kind, owner_id, filename, size, object_key, target_sample, request, created_at, \
         expires_at, sha256) VALUES ($1, 'sample', $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(&upload_id)
    .bind(&user.id)
    .bind(&filename)
    .bind(req.size as i64)
    .bind(&object_key)
    .bind(&target)
    .bind(stored.to_string())
    .bind(db::ts(now))
    .bind(db::ts(now + valid_for))
    .bind(sha256.map(hex::encode))
    .execute(&state.db)
    .await?;
    Ok(Started { id: target.unwrap_or(upload_id), object_key, size: req.size, at: now, valid_for, sha256 })
}

/// What a sample upload asks for, checked before it starts whatever its transport: its
/// metadata, tag names and project, and the pre-uploaded sample it names by `sample_id` or
/// `external_sample_id` (answered: `None` for a new sample).
async fn check_sample_request(
    state: &Store,
    user: &super::caller::User,
    metadata: Option<&mut MetadataInput>,
    tags: &[TagInput],
    project: Option<&mgds_api::RefOrId>,
    (sample_id, external): (Option<&str>, Option<&str>),
) -> ApiResult<Option<String>> {
    if let Some(m) = metadata {
        metadata::validate(m)?;
    }
    tags::check_names(tags)?;
    if let Some(p) = project {
        projects::to_add_to(state, user, p).await?;
    }
    target_of(state, &user.id, sample_id, external).await
}

/// The pre-uploaded sample of `owner` that an upload names by `sample_id` or
/// `external_sample_id` to receive its file; `None` when it names none (a new sample).
async fn target_of(
    state: &Store,
    owner: &str,
    sample_id: Option<&str>,
    external: Option<&str>,
) -> ApiResult<Option<String>> {
    if sample_id.is_none() && external.is_none() {
        return Ok(None);
    }
    let found: Option<String> = sqlx::query_scalar(
        "SELECT s.id FROM samples s JOIN metadata m ON m.sample_id = s.id \
         WHERE s.owner_id = $1 AND s.visibility = 'awaiting data' \
         AND ($2 IS NULL OR s.id = $3) AND ($4 IS NULL OR m.external_sample_id = $5)",
    )
    .bind(owner)
    .bind(sample_id)
    .bind(sample_id)
    .bind(external)
    .bind(external)
    .fetch_optional(&state.db)
    .await?;
    let what = match (sample_id, external) {
        (Some(s), _) => format!("sample_id {s:?}"),
        (None, Some(e)) => format!("external_sample_id {e:?}"),
        (None, None) => String::new(),
    };
    found.map(Some).ok_or_else(|| {
        ApiError::BadRequest(format!(
            "no pre-uploaded sample of yours awaiting data matches {what}; pre-upload it first \
             or leave the field out to create a new sample"
        ))
        .with_code(ErrorCode::NotAwaitingData)
    })
}

/// Starts the upload of a document.
pub async fn start_document(state: &Store, caller: &Caller, req: &DocumentInitUploadRequest) -> ApiResult<Started> {
    let user = caller.require()?;
    let filename = mgds_api::clean_filename(&req.filename).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    check_size(req.size)?;
    let sha256 = parse_sha256("sha256", req.sha256.as_deref())?;
    let id = new_id();
    let object_key = format!("documents/{id}/{}", key_name(&filename));
    let now = Utc::now();
    let valid_for = chrono::Duration::hours(UPLOAD_VALID_HOURS);
    sqlx::query(
        "INSERT INTO uploads (id, kind, owner_id, filename, size, object_key, request, created_at, expires_at, sha256) \
         VALUES ($1, 'document', $2, $3, $4, $5, '{}', $6, $7, $8)",
    )
    .bind(&id)
    .bind(&user.id)
    .bind(&filename)
    .bind(req.size as i64)
    .bind(&object_key)
    .bind(db::ts(now))
    .bind(db::ts(now + valid_for))
    .bind(sha256.map(hex::encode))
    .execute(&state.db)
    .await?;
    Ok(Started { id, object_key, size: req.size, at: now, valid_for, sha256 })
}

/// An upload started for the S3-compatible endpoint: where to write, and with what.
#[derive(Debug, Clone)]
pub struct StartedS3 {
    /// The upload (its callback names it).
    pub upload_id: String,
    /// The sample it makes or fills (for `cancel_upload`), for a sample upload.
    pub sample_id: Option<String>,
    /// The document it makes, for a document upload.
    pub document_id: Option<String>,
    /// The object key of the file (read 1 of a pair).
    pub object_key: String,
    /// The object key of read 2, for a pair.
    pub paired_object_key: Option<String>,
    /// The credentials to write with.
    pub minted: s3_grants::Minted,
    /// The bucket of the upload's own in the object store, when the store checks the upload
    /// itself; `None` when the upload goes to the service's S3-compatible endpoint.
    pub bucket: Option<String>,
}

/// Credentials for upload `upload_id` (of `files` files), recorded by `tx`, which this commits:
/// a bucket and key of the upload's own minted by the object store when it can
/// ([`upload_buckets`]), otherwise credentials for the service's own S3-compatible endpoint.
async fn s3_credentials(
    state: &Store,
    mut tx: Tx,
    upload_id: &str,
    object_key: &str,
    files: u64,
    now: DateTime<Utc>,
) -> ApiResult<(Option<String>, s3_grants::Minted)> {
    let Some(store) = state.storage.upload_buckets() else {
        let minted = s3_grants::mint(&mut tx, upload_id, now).await?;
        tx.commit().await?;
        return Ok((None, minted));
    };
    tx.commit().await?;
    let expires = now + chrono::Duration::hours(UPLOAD_VALID_HOURS);
    match upload_buckets::open(state, store, upload_id, files, expires).await {
        Ok((bucket, minted)) => Ok((Some(bucket), minted)),
        Err(e) => {
            // No upload is left half-open: it goes, and the sweep removes what the store made.
            let mut tx = begin_write(&state.db, Scope::Row("uploads", upload_id)).await?;
            let queued = forget(&mut tx, upload_id, object_key).await?;
            tx.commit().await?;
            remove_queued(state, &queued).await;
            remove_bucket(state, upload_id).await;
            Err(e)
        }
    }
}

/// Starts a sample upload through the S3-compatible endpoint, as the real service's clients
/// make them: the file (or a pair's two files, uploaded apart and interleaved into one sample at
/// confirmation) of unknown size, credentials minted for its object keys only.
pub async fn start_sample_s3(
    state: &Store,
    caller: &Caller,
    mut req: InitMultipartUploadRequest,
) -> ApiResult<StartedS3> {
    let user = caller.require()?;
    let filename = req
        .filename
        .as_deref()
        .ok_or_else(|| ApiError::BadRequest("filename is required: the name of the file to upload".into()))?;
    let filename = mgds_api::clean_sample_filename(filename).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let paired = match req.paired_end_filename.as_deref() {
        Some(p) => {
            let p = mgds_api::clean_sample_filename(p)
                .map_err(|e| ApiError::BadRequest(format!("paired_end_filename: {e}")))?;
            if p == filename {
                return Err(ApiError::BadRequest(
                    "paired_end_filename is the same as filename; give the two files of the pair".into(),
                ));
            }
            Some(p)
        }
        None => None,
    };
    let target = check_sample_request(
        state,
        user,
        req.metadata.as_mut(),
        &req.tags,
        req.project.as_ref(),
        (req.sample_id.as_deref(), req.external_sample_id.as_deref()),
    )
    .await?;
    let upload_id = new_id();
    let object_key = format!("samples/{upload_id}/{}", key_name(&filename));
    let paired_object_key = paired.as_ref().map(|p| format!("samples/{upload_id}/{p}"));
    let now = Utc::now();
    let stored = serde_json::json!({
        "metadata": req.metadata,
        "tags": req.tags,
        "project": req.project,
        "interleaved": req.interleaved.unwrap_or(false) || paired.is_some(),
    });
    let mut tx = begin_write(&state.db, Scope::User(&user.id)).await?;
    sqlx::query(
        "INSERT INTO uploads (id, kind, owner_id, filename, size, object_key, target_sample, request, created_at, \
         expires_at, transport, paired_object_key, paired_filename) \
         VALUES ($1, 'sample', $2, $3, 0, $4, $5, $6, $7, $8, 's3', $9, $10)",
    )
    .bind(&upload_id)
    .bind(&user.id)
    .bind(&filename)
    .bind(&object_key)
    .bind(&target)
    .bind(stored.to_string())
    .bind(db::ts(now))
    .bind(db::ts(now + chrono::Duration::hours(UPLOAD_VALID_HOURS)))
    .bind(&paired_object_key)
    .bind(&paired)
    .execute(&mut *tx)
    .await?;
    let files = if paired_object_key.is_some() { 2 } else { 1 };
    let (bucket, minted) = s3_credentials(state, tx, &upload_id, &object_key, files, now).await?;
    Ok(StartedS3 {
        sample_id: Some(target.unwrap_or_else(|| upload_id.clone())),
        document_id: None,
        upload_id,
        object_key,
        paired_object_key,
        minted,
        bucket,
    })
}

/// Starts a document upload through the S3-compatible endpoint. The real service's clients send
/// no name at the start; the callback gives it.
pub async fn start_document_s3(state: &Store, caller: &Caller, filename: Option<&str>) -> ApiResult<StartedS3> {
    let user = caller.require()?;
    let filename = match filename {
        Some(f) => mgds_api::clean_filename(f).map_err(|e| ApiError::BadRequest(e.to_string()))?,
        None => "document".to_string(),
    };
    let id = new_id();
    let object_key = format!("documents/{id}/file");
    let now = Utc::now();
    let mut tx = begin_write(&state.db, Scope::User(&user.id)).await?;
    sqlx::query(
        "INSERT INTO uploads (id, kind, owner_id, filename, size, object_key, request, created_at, expires_at, transport) \
         VALUES ($1, 'document', $2, $3, 0, $4, '{}', $5, $6, 's3')",
    )
    .bind(&id)
    .bind(&user.id)
    .bind(&filename)
    .bind(&object_key)
    .bind(db::ts(now))
    .bind(db::ts(now + chrono::Duration::hours(UPLOAD_VALID_HOURS)))
    .execute(&mut *tx)
    .await?;
    let (bucket, minted) = s3_credentials(state, tx, &id, &object_key, 1, now).await?;
    Ok(StartedS3 {
        upload_id: id.clone(),
        sample_id: None,
        document_id: Some(id),
        object_key,
        paired_object_key: None,
        minted,
        bucket,
    })
}

#[derive(sqlx::FromRow)]
struct S3UploadRow {
    kind: String,
    object_key: String,
    paired_object_key: Option<String>,
    filename: String,
    paired_filename: Option<String>,
    confirmed_id: Option<String>,
}

/// What an upload's callback answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackDone {
    /// The sample or document.
    pub id: String,
    /// Whether the sample's file is still being made by a worker (a pair joined, a file copied
    /// in from the upload's own bucket).
    pub importing: bool,
}

/// How long a callback holds its upload at most; one whose host died lets go after it.
const CALLBACK_HOLD: chrono::Duration = chrono::Duration::minutes(2);

/// Confirms an upload made through the S3-compatible endpoint (the callback its clients post
/// once the objects are written): `s3_path` must name the upload's object.
///
/// One callback per upload runs at a time (a lease on the upload's row, so it holds across API
/// hosts); it takes the files into place before it checks them (a rename out of `incoming/`,
/// or, from an upload's own bucket, a copy of exactly the version checked after the upload's
/// key was revoked), so a write that ends later cannot change what the record gets. It does
/// only what is cheap: the files must be there and not empty. A pair, or a sample in an
/// upload's own bucket, is then made at once, `importing`, and a worker makes its file (joins
/// the pair, copies the file in; [`super::imports`]). Answers the sample or document; a second
/// callback answers it again.
pub async fn confirm_s3(
    state: &Store,
    caller: &Caller,
    kind: &str,
    upload_id: &str,
    s3_path: &str,
    filename: Option<&str>,
) -> ApiResult<CallbackDone> {
    let user = caller.require()?;
    let read = async || -> ApiResult<S3UploadRow> {
        sqlx::query_as(
            "SELECT kind, object_key, paired_object_key, filename, paired_filename, confirmed_id FROM uploads \
             WHERE id = $1 AND owner_id = $2 AND kind = $3 AND transport = 's3'",
        )
        .bind(upload_id)
        .bind(&user.id)
        .bind(kind)
        .fetch_optional(&state.db)
        .await?
        .ok_or_else(|| {
            ApiError::NotFound(format!("no upload {upload_id:?} of yours to confirm; call init_multipart_upload first"))
        })
    };
    let up = read().await?;
    if let Some(done) = up.confirmed_id {
        return Ok(CallbackDone { id: done, importing: false });
    }
    let own_bucket = upload_buckets::of(&state.db, upload_id).await?;
    let bucket = own_bucket.as_ref().map_or(s3_grants::BUCKET, |b| b.bucket.as_str());
    let expected = format!("s3://{bucket}/{}", up.object_key);
    if s3_path != expected {
        return Err(ApiError::BadRequest(format!("s3_path is {s3_path:?}; this upload's file is {expected:?}")));
    }
    if let Err(e) = hold_callback(&state.db, upload_id).await {
        // The other callback may have just confirmed the upload: then this one answers it too.
        return match read().await?.confirmed_id {
            Some(done) => Ok(CallbackDone { id: done, importing: false }),
            None => Err(e),
        };
    }
    let outcome = async {
        // Another callback may have finished between the first look and the hold.
        let up = read().await?;
        if let Some(done) = up.confirmed_id {
            return Ok(CallbackDone { id: done, importing: false });
        }
        take_and_confirm(state, caller, upload_id, &up, own_bucket.as_ref(), filename).await
    }
    .await;
    if outcome.is_err() {
        release_callback(&state.db, upload_id).await?;
    }
    outcome
}

/// Takes the lease of the one callback of `upload_id`, or refuses with 409 while another holds
/// it.
async fn hold_callback(db: &db::Pool, upload_id: &str) -> ApiResult<()> {
    let now = db::clock(db).await?;
    let held = sqlx::query(
        "UPDATE uploads SET callback_until = $1 WHERE id = $2 AND confirmed_id IS NULL \
         AND (callback_until IS NULL OR callback_until < $3)",
    )
    .bind(db::ts(now + CALLBACK_HOLD))
    .bind(upload_id)
    .bind(db::ts(now))
    .execute(db)
    .await?
    .rows_affected();
    if held == 0 {
        return Err(ApiError::Conflict(
            "another callback of this upload is under way; call back again in a moment".into(),
        ));
    }
    Ok(())
}

async fn release_callback(db: &db::Pool, upload_id: &str) -> ApiResult<()> {
    sqlx::query("UPDATE uploads SET callback_until = NULL WHERE id = $1").bind(upload_id).execute(db).await?;
    Ok(())
}

/// The callback's work once it holds the upload: take the files into place, check what is
/// cheap, and confirm (or, for a pair, make the sample and leave the join to a worker).
async fn take_and_confirm(
    state: &Store,
    caller: &Caller,
    upload_id: &str,
    up: &S3UploadRow,
    own_bucket: Option<&upload_buckets::UploadBucket>,
    filename: Option<&str>,
) -> ApiResult<CallbackDone> {
    let user = caller.require()?;
    let keys: Vec<&str> = std::iter::once(up.object_key.as_str()).chain(up.paired_object_key.as_deref()).collect();
    let names: Vec<&str> = std::iter::once(up.filename.as_str()).chain(up.paired_filename.as_deref()).collect();
    // From an upload's own bucket, a sample's files are copied in by a worker: here they are
    // only checked, once the upload's key is revoked (their size, and the version to copy).
    let (sizes, e_tags) = match own_bucket {
        Some(b) if up.kind == "sample" => {
            let sealed = upload_buckets::seal(state, b, &keys).await?;
            (sealed.iter().map(|f| f.size).collect(), sealed.into_iter().map(|f| f.e_tag).collect())
        }
        // A document is copied in now, inside the store.
        Some(b) => (upload_buckets::take_in(state, b, &keys).await?, Vec::new()),
        None => {
            let mut sizes = Vec::with_capacity(keys.len());
            for (key, name) in keys.iter().zip(&names) {
                state.storage.rename(&incoming_key(key), key).await?;
                let size = state.storage.size(key).await?.ok_or_else(|| {
                    ApiError::BadRequest(format!(
                        "the file {name} has not arrived yet: write it to {}/{key} before calling back",
                        s3_grants::BUCKET
                    ))
                    .with_code(ErrorCode::FileNotArrived)
                })?;
                sizes.push(size);
            }
            (sizes, Vec::new())
        }
    };
    if let Some((name, _)) = names.iter().zip(&sizes).find(|(_, n)| **n == 0) {
        return Err(ApiError::BadRequest(format!(
            "the file {name} is empty (0 bytes); write the whole file, then call back"
        )));
    }
    // The multipart uploads begun for the upload can never be completed now: their parts go.
    let mut tx = begin_write(&state.db, Scope::User(&user.id)).await?;
    s3_grants::forget_multiparts_of(&mut tx, upload_id).await?;
    queue_delete(&mut tx, &s3_grants::upload_prefix(upload_id)).await?;
    let in_bucket = own_bucket.filter(|_| up.kind == "sample");
    if up.paired_object_key.is_some() || in_bucket.is_some() {
        let (object_key, filename) = match &up.paired_object_key {
            Some(_) => {
                let joined = mgds_formats::interleaved_name(std::path::Path::new(&up.filename));
                (format!("samples/{upload_id}/{}", key_name(&joined)), joined)
            }
            None => (up.object_key.clone(), up.filename.clone()),
        };
        let import = imports::Import {
            sample_id: String::new(),
            upload_id: upload_id.to_string(),
            r1_key: up.object_key.clone(),
            r2_key: up.paired_object_key.clone(),
            r1_name: up.filename.clone(),
            r2_name: up.paired_filename.clone(),
            object_key,
            filename,
            bucket: in_bucket.map(|b| b.bucket.clone()),
            r1_etag: e_tags.first().cloned().flatten(),
            r2_etag: e_tags.get(1).cloned().flatten(),
            host_of: None,
            host_tax_ids: None,
            host_readlevel_key: None,
        };
        let sample = settle_sample(&mut tx, user, &user.id, upload_id, Settle::Importing(import)).await?;
        tx.commit().await?;
        state.wake_workers();
        // The parts go (the upload's bucket goes with the work on its files).
        remove_queued(state, &[s3_grants::upload_prefix(upload_id)]).await;
        return Ok(CallbackDone { id: sample.0, importing: true });
    }
    let mut name = up.filename.clone();
    if up.kind == "document"
        && let Some(f) = filename
    {
        name = mgds_api::clean_filename(f).unwrap_or(name);
    }
    sqlx::query("UPDATE uploads SET filename = $1, size = $2 WHERE id = $3 AND confirmed_id IS NULL")
        .bind(&name)
        .bind(i64::try_from(sizes[0]).unwrap_or(i64::MAX))
        .bind(upload_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    let confirmed = match up.kind.as_str() {
        "document" => confirm_document(state, caller, upload_id, None).await?,
        _ => {
            let req = ConfirmUploadRequest { sample_id: upload_id.to_string(), upload_type: None, sha256: None };
            confirm_sample(state, caller, &req).await?
        }
    };
    // The parts, and the upload's own bucket, go now.
    remove_queued(state, &[s3_grants::upload_prefix(upload_id)]).await;
    remove_bucket(state, upload_id).await;
    Ok(CallbackDone { id: confirmed, importing: false })
}

/// Refuses an `upload_type` other than `standard`.
pub fn check_upload_type(t: Option<&str>) -> ApiResult<()> {
    match t {
        None | Some("standard") => Ok(()),
        Some(other) => {
            Err(ApiError::BadRequest(format!("upload_type {other:?} is not supported; only \"standard\" is")))
        }
    }
}

fn check_size(size: u64) -> ApiResult<()> {
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
struct UploadRow {
    id: String,
    filename: String,
    size: i64,
    object_key: String,
    target_sample: Option<String>,
    request: String,
    confirmed_id: Option<String>,
    transport: String,
    sha256: Option<String>,
}

/// The caller's upload answering to `id`: the upload itself, or the newest upload for the
/// pre-uploaded sample `id` (preferring one not yet confirmed).
async fn find(tx: &mut Tx, kind: &str, owner: &str, id: &str) -> ApiResult<Option<UploadRow>> {
    Ok(sqlx::query_as(
        "SELECT id, filename, size, object_key, target_sample, request, confirmed_id, transport, sha256 FROM uploads \
         WHERE kind = $1 AND owner_id = $2 AND (id = $3 OR target_sample = $4) \
         ORDER BY (confirmed_id IS NULL) DESC, created_at DESC, rowid DESC LIMIT 1",
    )
    .bind(kind)
    .bind(owner)
    .bind(id)
    .bind(id)
    .fetch_optional(&mut **tx)
    .await?)
}

/// Checks that an upload's file arrived whole: its size, and its SHA-256 when the confirmation
/// gives one (`claimed`). A SHA-256 declared at `init_upload` was checked by the store as the
/// bytes arrived (the form carries it), so it is compared here; otherwise the stored file is
/// read once to hash it.
///
/// On an S3 store, a form upload lands at its [incoming key](incoming_key) and is copied into
/// place here (inside the store): a form posted again after the confirmation, while its policy
/// is still valid, cannot change the record's file.
async fn check_arrived(state: &Store, up: &UploadRow, claimed: Option<&str>) -> ApiResult<()> {
    let claimed = parse_sha256("sha256", claimed)?;
    let declared = parse_sha256("sha256", up.sha256.as_deref())?;
    if let (Some(c), Some(d)) = (claimed, declared)
        && c != d
    {
        return Err(checksum_mismatch(&c, &d, "was declared at init_upload"));
    }
    let key = match (up.transport.as_str(), state.storage.s3_config()) {
        ("form", Some(_)) => incoming_key(&up.object_key),
        _ => up.object_key.clone(),
    };
    if let (Some(c), None) = (claimed, declared)
        && let Some(n) = state.storage.size(&key).await?
    {
        check_size_arrived(n, up.size)?;
        let stored = state.storage.sha256(&key).await?;
        if stored != c {
            return Err(checksum_mismatch(&c, &stored, "the stored file has"));
        }
    }
    check_whole(state, up).await
}

fn checksum_mismatch(claimed: &[u8; 32], other: &[u8; 32], what: &str) -> ApiError {
    ApiError::BadRequest(format!(
        "the file's SHA-256 is given as {} but {what} {}: the file changed or was damaged on the way; \
         upload it again",
        hex::encode(claimed),
        hex::encode(other)
    ))
    .with_code(ErrorCode::ChecksumMismatch)
}

/// Checks that the upload's file is stored whole, moving an S3 form upload into place.
async fn check_whole(state: &Store, up: &UploadRow) -> ApiResult<()> {
    if up.transport == "form" && state.storage.s3_config().is_some() {
        let incoming = incoming_key(&up.object_key);
        if let Some(n) = state.storage.size(&incoming).await? {
            check_size_arrived(n, up.size)?;
            state.storage.copy(&incoming, &up.object_key).await?;
            state.storage.delete(&incoming).await?;
        }
    }
    match state.storage.size(&up.object_key).await? {
        None => Err(ApiError::BadRequest(
            "the file has not arrived yet: POST it to upload_url with the additional_fields before confirming".into(),
        )
        .with_code(ErrorCode::FileNotArrived)),
        Some(n) => check_size_arrived(n, up.size),
    }
}

fn check_size_arrived(n: u64, announced: i64) -> ApiResult<()> {
    if i64::try_from(n).ok() == Some(announced) {
        return Ok(());
    }
    Err(ApiError::BadRequest(format!(
        "the stored file has {n} bytes but init_upload announced {announced}; upload it again"
    ))
    .with_code(ErrorCode::SizeMismatch))
}

/// Confirms a sample upload whose file arrived: fills the pre-uploaded sample or creates a new
/// one, applies the metadata, tags and project given at the start, and queues the default
/// classification. Returns the sample's id; confirming again answers the same sample.
pub async fn confirm_sample(state: &Store, caller: &Caller, req: &ConfirmUploadRequest) -> ApiResult<String> {
    let user = caller.require()?;
    check_upload_type(req.upload_type.as_deref())?;
    let not_found =
        || ApiError::NotFound(format!("no upload {:?} of yours to confirm; call init_upload first", req.sample_id));
    // The file check is outside the write lock (it touches the disk); the decision is inside.
    let mut tx = state.db.begin().await?;
    let up = find(&mut tx, "sample", &user.id, &req.sample_id).await?.ok_or_else(not_found)?;
    drop(tx);
    if let Some(done) = up.confirmed_id {
        return Ok(done);
    }
    check_arrived(state, &up, req.sha256.as_deref()).await?;
    let mut tx = begin_write(&state.db, Scope::User(&user.id)).await?;
    let (sample_id, queued) = settle_sample(&mut tx, user, &user.id, &up.id, Settle::Arrived).await?;
    tx.commit().await?;
    if queued {
        state.wake_workers();
    }
    Ok(sample_id)
}

/// How a confirmed sample upload's file stands.
enum Settle {
    /// It arrived whole and is the sample's file: the sample becomes `private` and is
    /// classified.
    Arrived,
    /// The files arrived and a worker makes the sample's file of them (joins a pair, copies a
    /// file in from an upload's own bucket): the sample is `importing`, without a file, until
    /// then.
    Importing(imports::Import),
}

/// Inside `tx` (a write transaction): fills the pre-uploaded sample or creates a new one for
/// upload `upload_id` of `owner`, applies the metadata, tags and project given at the start, and
/// marks the upload confirmed; then queues the default classification ([`Settle::Arrived`]) or
/// the work on its files ([`Settle::Importing`]). Answers the sample's id and whether an analysis was
/// queued; an upload confirmed already answers its sample.
async fn settle_sample(tx: &mut Tx, by: &User, owner: &str, upload_id: &str, how: Settle) -> ApiResult<(String, bool)> {
    // Read under the write lock: a concurrent confirm may have finished first.
    let up: UploadRow = sqlx::query_as(
        "SELECT id, filename, size, object_key, target_sample, request, confirmed_id, transport, sha256 FROM uploads WHERE id = $1",
    )
    .bind(upload_id)
    .fetch_optional(&mut **tx)
    .await?
    .ok_or_else(|| ApiError::NotFound(format!("no upload {upload_id:?} of yours to confirm; call init_upload first")))?;
    if let Some(done) = up.confirmed_id {
        return Ok((done, false));
    }
    let (visibility, filename, size, object_key) = match &how {
        Settle::Arrived => (Visibility::Private, up.filename.as_str(), Some(up.size), Some(up.object_key.as_str())),
        Settle::Importing(import) => (Visibility::Importing, import.filename.as_str(), None, None),
    };
    let stored: Map<String, Value> = serde_json::from_str(&up.request).unwrap_or_default();
    let sample_id = match &up.target_sample {
        Some(target) => {
            let n = sqlx::query(
                "UPDATE samples SET filename = $1, size = $2, object_key = $3, visibility = $4, updated_at = $5 \
                 WHERE id = $6 AND visibility = 'awaiting data'",
            )
            .bind(filename)
            .bind(size)
            .bind(object_key)
            .bind(visibility.as_str())
            .bind(db::now())
            .bind(target)
            .execute(&mut **tx)
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
                Some(p) => projects::still_there(tx, &p).await?,
                None => None,
            };
            insert_sample(tx, &up.id, owner, visibility.as_str(), Some(filename), size, object_key, project.as_deref())
                .await?;
            up.id.clone()
        }
    };
    let metadata_id = metadata::of_sample(tx, &sample_id).await?;
    if let Some(m) = stored.get("metadata").filter(|m| !m.is_null()) {
        let m: MetadataInput = serde_json::from_value(m.clone())?;
        if let Some(Some(ext)) = &m.external_sample_id
            && up.target_sample.is_none()
            && metadata::external_id_taken(tx, owner, ext, Some(&sample_id)).await?
        {
            // Only pre-uploads must be unique; a plain upload keeps its id but says so in the log.
            tracing::info!(sample = %sample_id, "uploaded sample reuses an external_sample_id");
        }
        metadata::apply(tx, &metadata_id, &m).await?;
    }
    if let Some(tags) = stored.get("tags").filter(|t| !t.is_null()) {
        let tags: Vec<TagInput> = serde_json::from_value(tags.clone())?;
        tags::attach(tx, owner, &sample_id, &tags).await?;
    }
    sqlx::query("UPDATE uploads SET confirmed_id = $1 WHERE id = $2")
        .bind(&sample_id)
        .bind(&up.id)
        .execute(&mut **tx)
        .await?;
    let entry = audit::Entry::new("sample.uploaded", "sample", &sample_id, owner).with(json!({
        "filename": filename,
        "size": size,
        "preuploaded": up.target_sample.is_some(),
        "transport": up.transport,
    }));
    audit::record(tx, Some(by), entry).await?;
    let queued = match how {
        // The default classification runs by itself on every new file, in the same
        // transaction: a confirmed sample never misses it.
        Settle::Arrived => queue::queue_default_classification(tx, &sample_id).await?.is_some(),
        Settle::Importing(mut import) => {
            import.sample_id = sample_id.clone();
            imports::record(tx, &import).await?;
            true
        }
    };
    Ok((sample_id, queued))
}

/// Cancels a sample upload that is not confirmed yet, and removes its file if it arrived.
pub async fn cancel_sample(state: &Store, caller: &Caller, req: &CancelUploadRequest) -> ApiResult<()> {
    let user = caller.require()?;
    let mut tx = begin_write(&state.db, Scope::User(&user.id)).await?;
    let up = find(&mut tx, "sample", &user.id, &req.sample_id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no upload {:?} of yours to cancel", req.sample_id)))?;
    if up.confirmed_id.is_some() {
        return Err(ApiError::BadRequest("this upload is already confirmed; delete the sample instead".into()));
    }
    let queued = forget(&mut tx, &up.id, &up.object_key).await?;
    tx.commit().await?;
    remove_queued(state, &queued).await;
    remove_bucket(state, &up.id).await;
    Ok(())
}

/// Removes an ended upload's own bucket of the store and its key, if it has them; what fails is
/// the janitor's.
async fn remove_bucket(state: &Store, upload_id: &str) {
    if let Err(e) = upload_buckets::sweep_one(state, upload_id).await {
        tracing::warn!(error = %e, "could not remove an upload's bucket; the janitor will");
    }
}

/// Confirms a document upload whose file arrived: the document appears under the upload's id,
/// which it returns; confirming again answers the same document.
pub async fn confirm_document(
    state: &Store,
    caller: &Caller,
    document_id: &str,
    sha256: Option<&str>,
) -> ApiResult<String> {
    let user = caller.require()?;
    let up: UploadRow = sqlx::query_as(
        "SELECT id, filename, size, object_key, target_sample, request, confirmed_id, transport, sha256 FROM uploads \
         WHERE kind = 'document' AND owner_id = $1 AND id = $2",
    )
    .bind(&user.id)
    .bind(document_id)
    .fetch_optional(&state.db)
    .await?
    .ok_or_else(|| {
        ApiError::NotFound(format!("no document upload {document_id:?} of yours to confirm; call init_upload first"))
    })?;
    if let Some(done) = up.confirmed_id {
        return Ok(done);
    }
    check_arrived(state, &up, sha256).await?;
    let mut tx = begin_write(&state.db, Scope::User(&user.id)).await?;
    let n = sqlx::query("UPDATE uploads SET confirmed_id = id WHERE id = $1 AND confirmed_id IS NULL")
        .bind(&up.id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    if n == 1 {
        sqlx::query(
            "INSERT INTO documents (id, uploader_id, filename, size, object_key, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&up.id)
        .bind(&user.id)
        .bind(&up.filename)
        .bind(up.size)
        .bind(&up.object_key)
        .bind(db::now())
        .execute(&mut *tx)
        .await?;
        let entry = audit::Entry::new("document.uploaded", "document", &up.id, &user.id)
            .with(json!({"filename": up.filename, "size": up.size}));
        audit::record(&mut tx, Some(user), entry).await?;
    }
    tx.commit().await?;
    Ok(up.id)
}

/// Whether `key` belongs to an upload still waiting for its file: a form stops storing files
/// once its upload was confirmed, canceled or deleted.
pub async fn check_open(state: &Store, key: &str) -> ApiResult<()> {
    let open: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM uploads WHERE object_key = $1 AND confirmed_id IS NULL")
        .bind(key)
        .fetch_one(&state.db)
        .await?;
    if open == 0 {
        return Err(ApiError::Forbidden(
            "this upload form is no longer valid: its upload was confirmed, canceled or deleted; start a new upload"
                .into(),
        ));
    }
    Ok(())
}

/// Inserts a sample and its (empty) metadata record; returns the metadata record's id.
#[allow(clippy::too_many_arguments)]
pub(super) async fn insert_sample(
    tx: &mut Tx,
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
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
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
    sqlx::query("INSERT INTO metadata (id, sample_id, owner_id) VALUES ($1, $2, $3)")
        .bind(&metadata_id)
        .bind(id)
        .bind(owner)
        .execute(&mut **tx)
        .await?;
    Ok(metadata_id)
}
