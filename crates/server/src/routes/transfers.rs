//! Where clients send and fetch files: the service's own storage endpoint when the files are in
//! its data folder, the S3 store itself when they are in a bucket (bytes then never pass through
//! the service).

use serde_json::{Map, Value};

use crate::error::ApiResult;
use crate::signing::{DOWNLOAD_VALID_HOURS, PolicyKey, post_policy, upload_url};
use crate::state::AppState;
use crate::store::caller::Caller;
use crate::store::uploads::Started;

/// The address and form fields a client posts the file of a started upload to: its key,
/// exactly its size (and its SHA-256, when declared), within its validity.
pub fn upload_target(state: &AppState, started: &Started) -> (String, Map<String, Value>) {
    let (key, size, sha256, at, valid_for) =
        (started.object_key.as_str(), started.size, started.sha256.as_ref(), started.at, started.valid_for);
    match state.storage.s3_config() {
        Some(s3) => {
            let by = PolicyKey {
                access_key_id: &s3.access_key_id,
                secret: s3.secret_access_key.as_bytes(),
                region: &s3.region,
                bucket: &s3.bucket,
            };
            let key = s3.full_key(&crate::store::files::incoming_key(key));
            (s3.public_bucket_url(), post_policy(&by, &key, size, sha256, at, valid_for))
        }
        None => (upload_url(&state.public_url), state.signer.upload_form(key, size, sha256, at, valid_for)),
    }
}

/// An address to GET the object `key` at, named `filename`, for `caller`: the service's own,
/// valid for [`DOWNLOAD_VALID_HOURS`], naming its holder (the caller and their key epoch; empty
/// for anonymous). It works only while they may see the record, hold the same key and their
/// account is enabled: each use is checked, whatever store holds the file (an S3 store's file
/// is then sent on to the store's own address, made at that moment and good for
/// [`STORE_REDIRECT_VALID_SECONDS`]).
pub async fn download_address(state: &AppState, key: &str, filename: &str, caller: &Caller) -> ApiResult<String> {
    Ok(state.signer.download_url(&state.public_url, key, filename, &caller.holder(), DOWNLOAD_VALID_HOURS))
}

/// The answer to `init_multipart_upload`: the object keys, the minted credentials, the callback
/// (a path under the service's address, as the real service's clients append it to theirs) and
/// where to write:
/// - a bucket of the upload's own in the object store, at the store's address and region, when
///   the store minted the credentials ([`crate::store::upload_buckets`]);
/// - otherwise bucket [`crate::s3::BUCKET`] of the service's own S3-compatible endpoint: the
///   service's address without any path, since S3 signatures cover the request's path (behind
///   a proxy that serves the service under a path, the proxy passes `/mgds-uploads/` through
///   unchanged).
pub fn multipart_answer(
    state: &AppState,
    collection: &str,
    started: crate::store::uploads::StartedS3,
) -> mgds_api::InitMultipartUploadResponse {
    let (s3_bucket, s3_endpoint, s3_region) = match (started.bucket, state.storage.upload_buckets()) {
        (Some(bucket), Some((store, _))) => (bucket, store.public_base_url(), Some(store.region.clone())),
        _ => (crate::s3::BUCKET.into(), crate::s3::endpoint(&state.public_url).to_string(), None),
    };
    mgds_api::InitMultipartUploadResponse {
        sample_id: started.sample_id,
        document_id: started.document_id,
        file_id: started.object_key,
        paired_end_file_id: started.paired_object_key,
        s3_bucket,
        upload_aws_access_key_id: started.minted.access_key,
        upload_aws_secret_access_key: started.minted.secret,
        callback_url: format!("/api/v1/{collection}/upload_callback/{}", started.upload_id),
        s3_endpoint: Some(s3_endpoint),
        s3_region,
        expires_at: Some(crate::store::db::ts(started.minted.expires_at)),
    }
}
