//! Uploads through `init_multipart_upload` that go straight from the client to the S3 store,
//! when the store can mint credentials (Garage, through its admin API: see [`GarageAdmin`]).
//!
//! S3 clients such as boto3 (which the `onecodex` client uploads with) sign every request with
//! credentials, so the store can only check an upload itself if it holds credentials for that
//! upload alone. Garage's keys are granted whole buckets, so each upload gets:
//! - a bucket of its own (`mgds-upload-<upload id>`), limited to as many objects as the upload
//!   has files;
//! - a key that may write there and nowhere else (not even read), and stops working when the
//!   upload expires.
//!
//! The service's own key may read, write and own the bucket. At the callback the service checks
//! that the files arrived and revokes the upload's key, so nothing more can be written, and reads
//! each file's size and ETag ([`seal`]); a worker then has the store copy exactly those versions
//! into its bucket ([`copy_in`]: a copy inside the store, so no byte of the upload passes through
//! the service, and one that can take seconds per gigabyte, so never on the callback's path; see
//! [`super::imports`]). A document, which has no `importing` state, is copied in at its callback
//! ([`take_in`]). The bucket and key are then removed by [`sweep`], which also
//! finishes what a crash left: a row of the table `upload_buckets` whose upload was confirmed,
//! canceled or abandoned.

use chrono::{DateTime, Utc};
use futures::TryStreamExt;
use mgds_api::ErrorCode;
use object_store::aws::{AwsAuthorizer, AwsCredential};
use object_store::client::{HttpRequest, HttpRequestBody};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};

use super::db::{self, Pool};
use super::files::S3Config;
use super::garage_admin::{AdminError, GarageAdmin};
use super::handle::Store;
use super::s3_grants::Minted;
use crate::error::{ApiError, ApiResult};

/// The bucket of upload `upload_id` (an S3 bucket name: lowercase, at most 63 characters).
pub fn bucket_name(upload_id: &str) -> String {
    format!("mgds-upload-{}", upload_id.to_ascii_lowercase())
}

/// Whether the store's admin API, if given, answers with the token and knows the service's
/// bucket, so that a mistake shows at start rather than at the first upload.
pub async fn check(storage: &super::files::Storage) -> Result<(), String> {
    let Some((s3, admin)) = storage.upload_buckets() else { return Ok(()) };
    if s3.endpoint.is_none() {
        return Err("Garage's admin API was given but not the store's address (--s3-endpoint)".into());
    }
    match admin.bucket_id(&s3.bucket).await {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(format!("Garage's admin API knows no bucket {:?}: is it the same Garage?", s3.bucket)),
        Err(e) => Err(e.to_string()),
    }
}

/// An upload's bucket as recorded.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct UploadBucket {
    /// The upload.
    pub upload_id: String,
    /// The bucket's name.
    pub bucket: String,
    /// The store's id of the bucket, once made.
    pub bucket_id: Option<String>,
    /// The upload's key, once made.
    pub key_id: Option<String>,
}

fn admin_failed(e: AdminError) -> ApiError {
    tracing::error!(error = %e, "the S3 store's admin API failed");
    ApiError::internal(e)
}

/// Gives upload `upload_id` (recorded and committed by the caller) a bucket of its own for
/// `files` files and a key that writes there until `expires`. On failure the caller forgets the
/// upload; [`sweep`] then removes what was made.
pub async fn open(
    state: &Store,
    (s3, admin): (&S3Config, &GarageAdmin),
    upload_id: &str,
    files: u64,
    expires: DateTime<Utc>,
) -> ApiResult<(String, Minted)> {
    let bucket = bucket_name(upload_id);
    // Recorded first, so that whatever the store makes from here is found again.
    sqlx::query("INSERT INTO upload_buckets (upload_id, bucket, created_at) VALUES ($1, $2, $3)")
        .bind(upload_id)
        .bind(&bucket)
        .bind(db::now())
        .execute(&state.db)
        .await?;
    let bucket_id = admin.create_bucket(&bucket).await.map_err(admin_failed)?;
    set(&state.db, upload_id, "bucket_id", &bucket_id).await?;
    let (key, secret) = admin.create_key(&format!("mgds upload {upload_id}"), expires).await.map_err(admin_failed)?;
    set(&state.db, upload_id, "key_id", &key).await?;
    admin.allow(&bucket_id, &s3.access_key_id, true, true, true).await.map_err(admin_failed)?;
    admin.limit_bucket(&bucket_id, None, files).await.map_err(admin_failed)?;
    admin.allow(&bucket_id, &key, false, true, false).await.map_err(admin_failed)?;
    // Without the rules only browsers cannot send there; every other client can.
    if let Err(e) = allow_browsers(s3, admin.http(), &bucket).await {
        tracing::warn!(error = %e, bucket, "the store refused an upload bucket's CORS rules: browsers cannot upload there");
    }
    Ok((bucket, Minted { access_key: key, secret, expires_at: expires }))
}

/// Signs `req` (its body and headers set) as a `PUT` to `url` with the service's own key of
/// the store; answers the headers to send.
fn signed_put(s3: &S3Config, req: &mut HttpRequest, url: &str) -> ApiResult<axum::http::HeaderMap> {
    *req.method_mut() = axum::http::Method::PUT;
    *req.uri_mut() = url.parse().map_err(ApiError::internal)?;
    let credential =
        AwsCredential { key_id: s3.access_key_id.clone(), secret_key: s3.secret_access_key.clone(), token: None };
    AwsAuthorizer::new(&credential, "s3", &s3.region).try_authorize(req, None).map_err(ApiError::internal)?;
    Ok(req.headers().clone())
}

/// The CORS rules of an upload's bucket: a browser (MGDS in a browser, served from the
/// service's address) sends its parts straight to the store, a page of another origin, so the
/// store must answer its preflight and show it each part's `ETag`, which completing the upload
/// names. Any origin may: what guards the bucket is the upload's signing key, which only its
/// uploader holds, not the page it runs in; and the key may only write there.
async fn allow_browsers(s3: &S3Config, http: &reqwest::Client, bucket: &str) -> ApiResult<()> {
    const RULES: &str = "<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin>\
        <AllowedMethod>PUT</AllowedMethod><AllowedMethod>POST</AllowedMethod><AllowedMethod>DELETE</AllowedMethod>\
        <AllowedHeader>*</AllowedHeader><ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>3600</MaxAgeSeconds>\
        </CORSRule></CORSConfiguration>";
    let endpoint = s3.endpoint.as_deref().unwrap_or_default().trim_end_matches('/');
    let url = format!("{endpoint}/{bucket}?cors");
    let mut req = HttpRequest::new(HttpRequestBody::from(RULES.as_bytes().to_vec()));
    let headers = signed_put(s3, &mut req, &url)?;
    let res = http
        .put(&url)
        .headers(headers)
        .header(reqwest::header::CONTENT_TYPE, "application/xml")
        .body(RULES)
        .timeout(std::time::Duration::from_secs(30))
        .send()
        .await
        .map_err(ApiError::internal)?;
    let status = res.status();
    if !status.is_success() {
        let body = res.text().await.unwrap_or_default();
        return Err(ApiError::internal(std::io::Error::other(format!(
            "the store refused the CORS rules of bucket {bucket} ({status}): {body}"
        ))));
    }
    Ok(())
}

async fn set(db: &Pool, upload_id: &str, column: &'static str, value: &str) -> ApiResult<()> {
    let sql = match column {
        "bucket_id" => "UPDATE upload_buckets SET bucket_id = $1 WHERE upload_id = $2",
        _ => "UPDATE upload_buckets SET key_id = $1 WHERE upload_id = $2",
    };
    sqlx::query(sql).bind(value).bind(upload_id).execute(db).await?;
    Ok(())
}

/// The bucket of upload `upload_id`, if it has one.
pub async fn of(db: &Pool, upload_id: &str) -> ApiResult<Option<UploadBucket>> {
    Ok(sqlx::query_as("SELECT upload_id, bucket, bucket_id, key_id FROM upload_buckets WHERE upload_id = $1")
        .bind(upload_id)
        .fetch_optional(db)
        .await?)
}

fn bucket_store(s3: &S3Config, bucket: &str) -> ApiResult<object_store::aws::AmazonS3> {
    s3.bucket_builder(bucket, s3.endpoint.as_deref()).build().map_err(ApiError::internal)
}

/// A file of an upload's bucket as it stood once the upload's key was revoked.
#[derive(Debug, Clone)]
pub struct Sealed {
    /// Its size.
    pub size: u64,
    /// Its ETag, the version to copy; `None` when it is in the service's bucket already (an
    /// earlier callback copied it).
    pub e_tag: Option<String>,
}

/// Checks that the files `keys` arrived in an upload's bucket (refusing with `file_not_arrived`
/// otherwise, the upload's key still good), revokes the upload's key, then reads each file's
/// size and ETag: from there nothing more can be started with the key, and what is copied in
/// ([`copy_in`]) is exactly that version. Safe to repeat.
pub async fn seal(state: &Store, b: &UploadBucket, keys: &[&str]) -> ApiResult<Vec<Sealed>> {
    let (_, admin) = admin_of(state)?;
    let store = bucket_store(admin_of(state)?.0, &b.bucket)?;
    let not_arrived = |key: &str| {
        ApiError::BadRequest(format!(
            "the file has not arrived yet: write it to {}/{key} before calling back",
            b.bucket
        ))
        .with_code(ErrorCode::FileNotArrived)
    };
    for key in keys {
        match store.head(&ObjectPath::from(*key)).await {
            Ok(_) => {}
            Err(object_store::Error::NotFound { .. }) if b.key_id.is_some() => return Err(not_arrived(key)),
            // Taken in by an earlier callback that stopped before confirming.
            Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(ApiError::internal(e)),
        }
    }
    if let Some(k) = &b.key_id {
        admin.delete_key(k).await.map_err(admin_failed)?;
        set_revoked(&state.db, &b.upload_id).await?;
    }
    let mut sealed = Vec::with_capacity(keys.len());
    for key in keys {
        sealed.push(match store.head(&ObjectPath::from(*key)).await {
            Ok(head) => Sealed { size: head.size, e_tag: head.e_tag },
            Err(object_store::Error::NotFound { .. }) => match state.storage.size(key).await? {
                Some(size) => Sealed { size, e_tag: None },
                None => return Err(not_arrived(key)),
            },
            Err(e) => return Err(ApiError::internal(e)),
        });
    }
    Ok(sealed)
}

/// Has the store copy `key` of upload bucket `bucket` to the same key of the service's bucket,
/// only while it is the version `e_tag` names (`None`: it is there already).
pub async fn copy_in(state: &Store, bucket: &str, key: &str, e_tag: Option<&str>) -> ApiResult<Copied> {
    let Some(tag) = e_tag else { return Ok(Copied::Done) };
    let (s3, admin) = admin_of(state)?;
    copy_object(admin.http(), s3, bucket, key, Some(tag), &s3.full_key(key)).await
}

/// Takes the files `keys` of an upload's bucket into the service's store at once ([`seal`],
/// then [`copy_in`]): a write that was already under way when the key was revoked and ended
/// later changes the version, and the copy is made again of the new one, at most
/// [`COPY_TRIES`] times. Answers the sizes copied, in the order of `keys`. For documents, which
/// have no `importing` state; a sample's files are copied in by a worker
/// ([`super::imports`]).
pub async fn take_in(state: &Store, b: &UploadBucket, keys: &[&str]) -> ApiResult<Vec<u64>> {
    let mut sealed = seal(state, b, keys).await?;
    let store = bucket_store(admin_of(state)?.0, &b.bucket)?;
    let mut sizes = Vec::with_capacity(keys.len());
    for (key, first) in keys.iter().zip(sealed.iter_mut()) {
        let mut tries = 1;
        loop {
            match copy_in(state, &b.bucket, key, first.e_tag.as_deref()).await? {
                Copied::Done => break,
                Copied::Changed if tries < COPY_TRIES => {
                    tries += 1;
                    let head = store.head(&ObjectPath::from(*key)).await.map_err(ApiError::internal)?;
                    *first = Sealed { size: head.size, e_tag: head.e_tag };
                }
                Copied::Changed => {
                    return Err(ApiError::Conflict(format!(
                        "the file {key} kept changing while it was taken in; call back again once every write has \
                         ended"
                    )));
                }
            }
        }
        sizes.push(first.size);
    }
    Ok(sizes)
}

/// The store's settings and admin API, which an upload bucket's callback needs.
fn admin_of(state: &Store) -> ApiResult<(&S3Config, &GarageAdmin)> {
    state.storage.upload_buckets().ok_or_else(|| {
        ApiError::internal(std::io::Error::other(
            "an upload bucket's callback arrived, but the service no longer has the store's admin API",
        ))
    })
}

/// How many times [`take_in`] copies a file whose version changed under it before it gives up.
const COPY_TRIES: u32 = 3;

/// Records that an upload's key was revoked (a later callback does not wait for files).
async fn set_revoked(db: &Pool, upload_id: &str) -> ApiResult<()> {
    sqlx::query("UPDATE upload_buckets SET key_id = NULL WHERE upload_id = $1").bind(upload_id).execute(db).await?;
    Ok(())
}

/// What became of a conditional copy.
#[derive(Debug, PartialEq, Eq)]
pub enum Copied {
    /// The version asked for was copied.
    Done,
    /// The object is no longer that version (a write ended since it was read).
    Changed,
}

/// What S3 leaves as it is in an object key's path: unreserved characters and `/`.
const KEY_PATH: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~').remove(b'/');

/// Percent-encodes an object key for a URL path or `x-amz-copy-source`, as S3 canonicalizes it.
fn encode_key(key: &str) -> String {
    percent_encoding::utf8_percent_encode(key, KEY_PATH).to_string()
}

/// Has the store copy `from_bucket/from_key` to `to_key` of the service's bucket (S3
/// CopyObject, signed with the service's key, which may read the one and write the other).
async fn copy_object(
    http: &reqwest::Client,
    s3: &S3Config,
    from_bucket: &str,
    from_key: &str,
    if_match: Option<&str>,
    to_key: &str,
) -> ApiResult<Copied> {
    let endpoint = s3
        .endpoint
        .as_deref()
        .map_or_else(|| format!("https://s3.{}.amazonaws.com", s3.region), |e| e.trim_end_matches('/').to_string());
    let url = format!("{endpoint}/{}/{}", s3.bucket, encode_key(to_key));
    let mut req = HttpRequest::new(HttpRequestBody::from(Vec::new()));
    let source = format!("/{from_bucket}/{}", encode_key(from_key));
    req.headers_mut()
        .insert("x-amz-copy-source", axum::http::HeaderValue::from_str(&source).map_err(ApiError::internal)?);
    if let Some(tag) = if_match {
        req.headers_mut()
            .insert("x-amz-copy-source-if-match", axum::http::HeaderValue::from_str(tag).map_err(ApiError::internal)?);
    }
    let headers = signed_put(s3, &mut req, &url)?;
    let res = http
        .put(&url)
        .headers(headers)
        // A copy inside the store may rewrite the object (Garage does, to give a multipart
        // upload a whole-object checksum): it is given the time to.
        .timeout(std::time::Duration::from_secs(3600))
        .send()
        .await
        .map_err(ApiError::internal)?;
    let status = res.status();
    if status == reqwest::StatusCode::PRECONDITION_FAILED {
        return Ok(Copied::Changed);
    }
    let body = res.text().await.unwrap_or_default();
    // S3 may answer 200 with an error in the body when a long copy fails late.
    if !status.is_success() || body.contains("<Error>") {
        return Err(ApiError::internal(std::io::Error::other(format!(
            "the store refused to copy {from_bucket}/{from_key} to {}/{to_key} ({status}): {body}",
            s3.bucket
        ))));
    }
    Ok(Copied::Done)
}

/// Removes the buckets and keys of uploads that were confirmed, canceled or abandoned (their
/// upload row gone), including those a crash left half-removed or half-made. A bucket that
/// cannot be removed now is left for the next sweep.
pub async fn sweep(state: &Store) -> ApiResult<()> {
    sweep_where(state, None).await
}

/// [`sweep`] for one upload: what a request that ends an upload (its callback, its cancel)
/// removes of its own, at once.
pub async fn sweep_one(state: &Store, upload_id: &str) -> ApiResult<()> {
    sweep_where(state, Some(upload_id)).await
}

async fn sweep_where(state: &Store, upload_id: Option<&str>) -> ApiResult<()> {
    // A confirmed upload's bucket stays while a worker has still to copy its files in.
    let done: Vec<UploadBucket> = sqlx::query_as(
        "SELECT b.upload_id, b.bucket, b.bucket_id, b.key_id FROM upload_buckets b \
         LEFT JOIN uploads u ON u.id = b.upload_id WHERE (u.id IS NULL OR u.confirmed_id IS NOT NULL) \
         AND NOT EXISTS (SELECT 1 FROM imports i WHERE i.upload_id = b.upload_id AND i.bucket IS NOT NULL \
         AND i.error IS NULL) AND (CAST($1 AS TEXT) IS NULL OR b.upload_id = $2)",
    )
    .bind(upload_id)
    .bind(upload_id)
    .fetch_all(&state.db)
    .await?;
    if done.is_empty() {
        return Ok(());
    }
    let Some((s3, admin)) = state.storage.upload_buckets() else {
        tracing::warn!(
            buckets = done.len(),
            "upload buckets are left in the store: the service no longer has its admin API to remove them"
        );
        return Ok(());
    };
    for b in done {
        match remove(s3, admin, &b).await {
            Ok(()) => {
                sqlx::query("DELETE FROM upload_buckets WHERE upload_id = $1")
                    .bind(&b.upload_id)
                    .execute(&state.db)
                    .await?;
            }
            Err(e) => tracing::warn!(bucket = %b.bucket, error = %e, "could not remove an upload bucket; will retry"),
        }
    }
    Ok(())
}

/// Removes an upload's key, the objects and unfinished uploads of its bucket, and the bucket.
/// Errors are in words, for the log.
async fn remove(s3: &S3Config, admin: &GarageAdmin, b: &UploadBucket) -> Result<(), String> {
    if let Some(k) = &b.key_id {
        admin.delete_key(k).await.map_err(|e| e.to_string())?;
    }
    let id = match &b.bucket_id {
        Some(id) => Some(id.clone()),
        None => admin.bucket_id(&b.bucket).await.map_err(|e| e.to_string())?,
    };
    let Some(id) = id else { return Ok(()) };
    admin.drop_unfinished_uploads(&id).await.map_err(|e| e.to_string())?;
    let store = bucket_store(s3, &b.bucket).map_err(|e| e.to_string())?;
    match store.list(None).map_ok(|m| m.location).try_collect::<Vec<ObjectPath>>().await {
        Ok(keys) => {
            for key in keys {
                store.delete(&key).await.map_err(|e| format!("cannot remove {}/{key}: {e}", b.bucket))?;
            }
        }
        // A bucket made by a run that stopped (or failed) before the service's key was let in
        // cannot be listed, and nothing can have been written in it either; any other bucket
        // that still holds files is refused below and tried again at the next sweep.
        Err(e) => tracing::debug!(bucket = %b.bucket, error = %e, "upload bucket not listed"),
    }
    admin.delete_bucket(&id).await.map_err(|e| e.to_string())
}
