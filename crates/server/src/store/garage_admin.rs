//! The few calls of Garage's admin API (v2) that let the service hand an upload credentials the
//! store itself checks: a bucket of the upload's own, a key that expires, and the key's
//! permission to write in that bucket alone. Garage's S3 keys cannot be narrowed to object keys
//! inside a bucket, so one bucket per upload is what narrows them.
//!
//! The admin token may be limited to these calls (`garage admin-token create --scope ...`, see
//! `deploy/README.md`).

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Value, json};

/// Where Garage's admin API answers and the token to call it with.
#[derive(Clone)]
pub struct GarageAdminConfig {
    /// The admin API's address, e.g. `http://127.0.0.1:3903`.
    pub url: String,
    /// A bearer token for it.
    pub token: String,
}

impl std::fmt::Debug for GarageAdminConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GarageAdminConfig").field("url", &self.url).finish_non_exhaustive()
    }
}

/// The admin calls an upload bucket needs, as the admin token must allow them.
pub const SCOPE: &str =
    "GetBucketInfo,CreateBucket,UpdateBucket,DeleteBucket,CleanupIncompleteUploads,CreateKey,DeleteKey,AllowBucketKey";

/// Why an admin call failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// Garage could not be reached.
    #[error("Garage's admin API at {url} did not answer: {source}")]
    Unreachable {
        /// The admin API's address.
        url: String,
        /// What failed.
        source: reqwest::Error,
    },
    /// Garage refused the call.
    #[error("Garage's admin API refused {call} ({status}): {message}")]
    Refused {
        /// The call.
        call: &'static str,
        /// Its HTTP status.
        status: u16,
        /// Garage's own message.
        message: String,
    },
}

impl AdminError {
    /// Whether Garage answered that the thing does not exist.
    fn is_not_found(&self) -> bool {
        matches!(self, AdminError::Refused { status: 404, .. })
    }
}

/// A bucket as Garage describes it.
#[derive(Debug, Deserialize)]
struct BucketInfo {
    id: String,
}

/// A key as Garage describes it on creation.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct KeyInfo {
    access_key_id: String,
    secret_access_key: Option<String>,
}

/// A client of Garage's admin API.
#[derive(Debug, Clone)]
pub struct GarageAdmin {
    http: reqwest::Client,
    config: GarageAdminConfig,
}

impl GarageAdmin {
    /// A client for `config`.
    pub fn new(config: GarageAdminConfig) -> Self {
        let http = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(30))
            .build()
            .unwrap_or_else(|_| reqwest::Client::new());
        GarageAdmin { http, config }
    }

    /// The HTTP client it calls with (shared with the store's own requests of the upload
    /// buckets, which set their own timeouts).
    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    async fn call(
        &self,
        call: &'static str,
        query: &[(&str, &str)],
        body: Option<Value>,
    ) -> Result<reqwest::Response, AdminError> {
        let refused = |message: String| AdminError::Refused { call, status: 0, message };
        let mut url = reqwest::Url::parse(&format!("{}/v2/{call}", self.config.url.trim_end_matches('/')))
            .map_err(|e| refused(format!("the admin API's address {:?} is not a URL: {e}", self.config.url)))?;
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let req = match body {
            Some(b) => self.http.post(url).json(&b),
            None => self.http.get(url),
        }
        .bearer_auth(&self.config.token);
        let unreachable = |source| AdminError::Unreachable { url: self.config.url.clone(), source };
        let res = req.send().await.map_err(unreachable)?;
        let status = res.status().as_u16();
        if res.status().is_success() {
            return Ok(res);
        }
        let text = res.text().await.unwrap_or_default();
        let message = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string))
            .unwrap_or(text);
        Err(AdminError::Refused { call, status, message })
    }

    async fn json<T: serde::de::DeserializeOwned>(
        &self,
        call: &'static str,
        query: &[(&str, &str)],
        body: Option<Value>,
    ) -> Result<T, AdminError> {
        let res = self.call(call, query, body).await?;
        res.json().await.map_err(|source| AdminError::Unreachable { url: self.config.url.clone(), source })
    }

    /// The id of the bucket named `alias`, if there is one.
    pub async fn bucket_id(&self, alias: &str) -> Result<Option<String>, AdminError> {
        match self.json::<BucketInfo>("GetBucketInfo", &[("globalAlias", alias)], None).await {
            Ok(b) => Ok(Some(b.id)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Makes a bucket named `alias`; answers its id.
    pub async fn create_bucket(&self, alias: &str) -> Result<String, AdminError> {
        let b: BucketInfo = self.json("CreateBucket", &[], Some(json!({ "globalAlias": alias }))).await?;
        Ok(b.id)
    }

    /// Limits what bucket `id` may hold: its total size and its number of objects.
    pub async fn limit_bucket(&self, id: &str, max_size: Option<u64>, max_objects: u64) -> Result<(), AdminError> {
        let body = json!({ "quotas": { "maxSize": max_size, "maxObjects": max_objects } });
        self.call("UpdateBucket", &[("id", id)], Some(body)).await.map(drop)
    }

    /// Makes a key named `name` that stops working at `expires`; answers its id and secret.
    pub async fn create_key(&self, name: &str, expires: DateTime<Utc>) -> Result<(String, String), AdminError> {
        let body = json!({ "name": name, "expiration": expires.to_rfc3339_opts(chrono::SecondsFormat::Secs, true) });
        let k: KeyInfo = self.json("CreateKey", &[], Some(body)).await?;
        let secret = k.secret_access_key.ok_or_else(|| AdminError::Refused {
            call: "CreateKey",
            status: 200,
            message: "the answer holds no secret key".into(),
        })?;
        Ok((k.access_key_id, secret))
    }

    /// Lets key `key` read, write or own bucket `bucket`.
    pub async fn allow(&self, bucket: &str, key: &str, read: bool, write: bool, owner: bool) -> Result<(), AdminError> {
        let body = json!({
            "bucketId": bucket,
            "accessKeyId": key,
            "permissions": { "read": read, "write": write, "owner": owner },
        });
        self.call("AllowBucketKey", &[], Some(body)).await.map(drop)
    }

    /// Removes key `id` (done if it is already gone): requests signed with it are refused from now.
    pub async fn delete_key(&self, id: &str) -> Result<(), AdminError> {
        match self.call("DeleteKey", &[("id", id)], Some(json!({}))).await {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Drops the unfinished multipart uploads of bucket `id`.
    pub async fn drop_unfinished_uploads(&self, id: &str) -> Result<(), AdminError> {
        let body = json!({ "bucketId": id, "olderThanSecs": 0 });
        match self.call("CleanupIncompleteUploads", &[], Some(body)).await {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Removes bucket `id`, which must be empty (done if it is already gone).
    pub async fn delete_bucket(&self, id: &str) -> Result<(), AdminError> {
        match self.call("DeleteBucket", &[("id", id)], Some(json!({}))).await {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(e),
        }
    }
}
