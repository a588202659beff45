//! Where clients send and fetch files: the service's own storage endpoint when the files are in
//! its data folder, the S3 store itself when they are in a bucket (bytes then never pass through
//! the service).

use serde_json::{Map, Value};

use super::caller::Caller;
use super::uploads::Started;
use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::signing::{DOWNLOAD_VALID_HOURS, PolicyKey, STORE_DOWNLOAD_VALID_MINUTES, post_policy, upload_url};

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
            let key = s3.full_key(&super::files::incoming_key(key));
            (s3.public_bucket_url(), post_policy(&by, &key, size, sha256, at, valid_for))
        }
        None => (upload_url(&state.public_url), state.signer.upload_form(key, size, sha256, at, valid_for)),
    }
}

/// An address to GET the object `key` at, named `filename`, for `caller`.
///
/// From the service's storage endpoint, valid for [`DOWNLOAD_VALID_HOURS`], it names its holder
/// (the caller and their key epoch; empty for anonymous) and works only while they may see the
/// record and hold the same key. From an S3 store, it is the store's own signed address, good
/// for [`STORE_DOWNLOAD_VALID_MINUTES`] whatever happens to the record meanwhile.
pub async fn download_address(state: &AppState, key: &str, filename: &str, caller: &Caller) -> ApiResult<String> {
    let valid = std::time::Duration::from_secs(STORE_DOWNLOAD_VALID_MINUTES * 60);
    match state.storage.presigned_get(key, filename, valid).await {
        Some(signed) => signed.map_err(ApiError::internal),
        None => Ok(state.signer.download_url(&state.public_url, key, filename, &caller.holder(), DOWNLOAD_VALID_HOURS)),
    }
}
