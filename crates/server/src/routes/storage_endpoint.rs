//! The storage endpoint at `upload_url`: an S3-style POST-policy upload, and pre-signed GETs.
//!
//! The form's fields come first and are checked against the signed policy before a byte of the
//! file is stored; the `file` part is then streamed to the object store (never held in memory)
//! and published under its key only if it arrived whole and within the policy's size range.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::multipart::MultipartRejection;
use axum::extract::rejection::QueryRejection;
use axum::extract::{DefaultBodyLimit, Multipart, Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::Utc;
use futures::TryStreamExt;
use sha2::{Digest, Sha256};

use crate::error::{ApiError, ApiResult};
use crate::signing::{BUCKET, PolicyError};
use crate::state::AppState;
use crate::store::files::WriteError;
use crate::store::uploads;

/// Most bytes of form fields accepted before the file part.
const MAX_FIELDS_BYTES: usize = 64 * 1024;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/storage/{bucket}", post(upload).layer(DefaultBodyLimit::disable()))
        .route("/storage/{bucket}/{*key}", get(download))
}

impl From<PolicyError> for ApiError {
    fn from(e: PolicyError) -> Self {
        match e {
            PolicyError::Forbidden(m) => ApiError::Forbidden(m),
            PolicyError::BadSize(m) => ApiError::BadRequest(m),
        }
    }
}

impl From<WriteError> for ApiError {
    fn from(e: WriteError) -> Self {
        match e {
            WriteError::Source(m) => ApiError::BadRequest(format!("the upload was interrupted: {m}")),
            WriteError::TooLarge { max } => {
                ApiError::BadRequest(format!("the file is larger than this upload allows ({max} bytes)"))
            }
            WriteError::Store(e) => ApiError::internal(e),
        }
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

async fn upload(
    State(state): State<AppState>,
    Path(bucket): Path<String>,
    form: Result<Multipart, MultipartRejection>,
) -> ApiResult<Response> {
    let mut form = form.map_err(|e| {
        ApiError::BadRequest(format!("the upload must be a multipart/form-data body: {}", e.body_text()))
    })?;
    let bad_form = |e: axum::extract::multipart::MultipartError| {
        ApiError::BadRequest(format!("the upload is not a valid multipart/form-data body: {}", e.body_text()))
    };
    let mut fields: Vec<(String, String)> = Vec::new();
    let mut used = 0usize;
    loop {
        let Some(field) = form.next_field().await.map_err(bad_form)? else {
            return Err(ApiError::BadRequest(
                "the form has no file part; send the file as a part named \"file\", after the other fields".into(),
            ));
        };
        let name = field.name().unwrap_or_default().to_string();
        if name == "file" {
            let grant = state.signer.verify_form(&bucket, &fields, Utc::now())?;
            if bucket != BUCKET {
                return Err(ApiError::Forbidden(format!("there is no bucket {bucket:?}")));
            }
            let (key, size) = (grant.key, grant.size);
            uploads::check_open(&state, &key).await?;
            // A declared SHA-256 is checked over the bytes as they arrive, as an S3 store does.
            let hash = grant.sha256.map(|want| (want, Arc::new(Mutex::new(Sha256::new()))));
            let hashing = hash.as_ref().map(|(_, h)| h.clone());
            let body = field.map_err(|e| e.body_text()).inspect_ok(move |chunk| {
                if let Some(h) = &hashing {
                    h.lock().unwrap_or_else(std::sync::PoisonError::into_inner).update(chunk);
                }
            });
            let written = state
                .storage
                .write_stream_checked(&key, body, size.max, async |n| {
                    size.check(n)?;
                    if let Some((want, h)) = &hash {
                        let got: [u8; 32] =
                            h.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone().finalize().into();
                        if &got != want {
                            return Err(ApiError::BadRequest(format!(
                                "the file's SHA-256 is {} but this upload declared {}: the file changed or was \
                                 damaged on the way; send it again",
                                hex::encode(got),
                                hex::encode(want)
                            ))
                            .with_code(mgds_api::ErrorCode::ChecksumMismatch));
                        }
                    }
                    // Checked again before publishing: the upload may have ended meanwhile.
                    uploads::check_open(&state, &key).await
                })
                .await?;
            tracing::info!(key = %key, bytes = written.bytes, "stored upload");
            let location = format!("{}/storage/{BUCKET}/{}", state.public_url, key);
            let etag = format!("\"{}\"", written.e_tag.unwrap_or_default().trim_matches('"'));
            let xml = format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<PostResponse><Location>{}</Location><Bucket>{BUCKET}</Bucket><Key>{}</Key><ETag>{}</ETag></PostResponse>",
                xml_escape(&location),
                xml_escape(&key),
                xml_escape(&etag)
            );
            let mut r = (StatusCode::CREATED, xml).into_response();
            r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/xml"));
            if let Ok(v) = HeaderValue::from_str(&etag) {
                r.headers_mut().insert(header::ETAG, v);
            }
            if let Ok(v) = HeaderValue::from_str(&location) {
                r.headers_mut().insert(header::LOCATION, v);
            }
            return Ok(r);
        }
        // Read in chunks so that an endless field is refused, not buffered.
        let mut field = field;
        let mut value = Vec::new();
        used += name.len();
        while let Some(chunk) = field.chunk().await.map_err(bad_form)? {
            used += chunk.len();
            if used > MAX_FIELDS_BYTES {
                return Err(ApiError::BadRequest(format!(
                    "the form fields before the file are larger than {MAX_FIELDS_BYTES} bytes; send only the additional_fields of init_upload"
                )));
            }
            value.extend_from_slice(&chunk);
        }
        let value = String::from_utf8(value)
            .map_err(|_| ApiError::BadRequest(format!("the form field {name:?} is not UTF-8 text")))?;
        fields.push((name, value));
    }
}

#[derive(serde::Deserialize)]
struct DownloadParams {
    expires: Option<i64>,
    filename: Option<String>,
    holder: Option<String>,
    signature: Option<String>,
}

async fn download(
    State(state): State<AppState>,
    Path((bucket, key)): Path<(String, String)>,
    params: Result<Query<DownloadParams>, QueryRejection>,
) -> ApiResult<Response> {
    let Query(p) = params.map_err(|e| {
        ApiError::Forbidden(format!(
            "this download address is malformed ({}); ask the service for a new one",
            e.body_text()
        ))
    })?;
    let (Some(expires), Some(filename), Some(signature)) = (p.expires, p.filename, p.signature) else {
        return Err(ApiError::Forbidden("this address is not signed; ask the service for a download address".into()));
    };
    if bucket != BUCKET {
        return Err(ApiError::Forbidden(format!("there is no bucket {bucket:?}")));
    }
    let holder = p.holder.unwrap_or_default();
    state.signer.verify_download(&key, expires, &filename, &holder, &signature, Utc::now())?;
    let holder = (!holder.is_empty()).then_some(holder.as_str());
    if !crate::store::access::key_visible(&state.db, holder, &key).await? {
        return Err(ApiError::NotFound(
            "this file is no longer yours to download (its record was deleted or is no longer shared with you, or \
             the API key the address was made with was replaced); ask the service for a new address"
                .into(),
        ));
    }
    // An S3 store serves its file itself, at an address made now and good for a minute: the
    // bytes never pass through the service.
    let valid = std::time::Duration::from_secs(crate::signing::STORE_REDIRECT_VALID_SECONDS);
    if let Some(signed) = state.storage.presigned_get(&key, &filename, valid).await {
        let to = signed.map_err(ApiError::internal)?;
        let mut r = axum::response::Redirect::temporary(&to).into_response();
        r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        return Ok(r);
    }
    let (size, stream) =
        state.storage.stream(&key).await?.ok_or_else(|| ApiError::NotFound("the file is no longer stored".into()))?;
    let mut r = Body::from_stream(stream).into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(size));
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
    let safe: String = filename.chars().filter(|c| c.is_ascii_graphic() && *c != '"' && *c != '\\').collect();
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{safe}\"")) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(r)
}
