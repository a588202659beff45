//! Writing an upload's file into the S3-compatible store that `init_multipart_upload` names,
//! with the credentials it handed out, as a stream of bytes of unknown length (a pair being
//! interleaved as it is read). The S3 protocol and signing are `object_store`'s; requests go
//! through this client's own HTTP client (its TLS trust and proxy).

use std::sync::Arc;

use bytes::Bytes;
use mgds_api::{InitMultipartUploadResponse, UploadCallbackRequest, UploadCallbackResponse};
use std::time::Duration;

use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::client::{ClientOptions, HttpClient, HttpConnector};
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path as ObjectPath;
use object_store::signer::{SignedUrlOptions, Signer};
use object_store::{ObjectStore, ObjectStoreExt, WriteMultipart};
use reqwest::Method;

use crate::retry::Idempotency;
use crate::{Client, Error, Result};

/// Part size of the uploads this client makes: S3's minimum is 5 MiB; larger parts mean fewer
/// requests, and three of them in memory at most.
const PART_SIZE: usize = 16 * 1024 * 1024;
/// Parts sent at once (and held in memory while under way).
const PARTS_IN_FLIGHT: usize = 2;

/// Hands `object_store` this client's HTTP client.
#[derive(Debug)]
struct Through(reqwest::Client);

impl HttpConnector for Through {
    fn connect(&self, _options: &ClientOptions) -> object_store::Result<HttpClient> {
        Ok(HttpClient::new(self.0.clone()))
    }
}

fn s3_error(e: object_store::Error) -> Error {
    Error::Storage { source: Box::new(e) }
}

/// An object being written from a stream of bytes.
pub struct S3Writer {
    writer: WriteMultipart,
    written: u64,
}

impl std::fmt::Debug for S3Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Writer").field("written", &self.written).finish_non_exhaustive()
    }
}

/// The store an upload's answer names, at `endpoint` (checked as the client checks any address
/// the service hands out), with the upload's credentials.
fn upload_store(client: &Client, init: &InitMultipartUploadResponse, endpoint: &str) -> Result<AmazonS3> {
    let url = client.service_url(endpoint)?;
    AmazonS3Builder::new()
        .with_endpoint(url.as_str().trim_end_matches('/'))
        .with_bucket_name(&init.s3_bucket)
        .with_access_key_id(&init.upload_aws_access_key_id)
        .with_secret_access_key(&init.upload_aws_secret_access_key)
        // Signatures need a region: the store's, or any for the service's own endpoint.
        .with_region(init.s3_region.as_deref().unwrap_or("us-east-1"))
        // Plain http only where the client allows it (this machine); checked above.
        .with_allow_http(url.scheme() == "http")
        .with_virtual_hosted_style_request(false)
        .with_http_connector(Through(client.http.clone()))
        .build()
        .map_err(s3_error)
}

fn endpoint_of(init: &InitMultipartUploadResponse) -> Result<&str> {
    init.s3_endpoint.as_deref().ok_or_else(|| {
        Error::InvalidInput("the service named no S3 endpoint for this upload; use the form upload instead".into())
    })
}

/// A multipart upload whose parts someone else sends (a browser, which holds the file), each to
/// an address signed here with the upload's credentials; this client starts it, and completes
/// or aborts it, at `control` (the store's address as this client reaches it, which for the
/// service's own endpoint may be another listener than the one the parts go to).
#[derive(Debug)]
pub struct SignedParts {
    control: AmazonS3,
    parts: AmazonS3,
}

impl SignedParts {
    /// The upload `init` answered, started at `control`, its parts sent to `public` (the
    /// store's address as the sender reaches it).
    pub fn new(
        client: &Client,
        init: &InitMultipartUploadResponse,
        control: &str,
        public: &str,
    ) -> Result<SignedParts> {
        Ok(SignedParts { control: upload_store(client, init, control)?, parts: upload_store(client, init, public)? })
    }

    /// Starts a multipart upload of object `key`; answers its upload id.
    pub async fn start(&self, key: &str) -> Result<String> {
        self.control.create_multipart(&ObjectPath::from(key)).await.map_err(s3_error)
    }

    /// Addresses to `PUT` parts `numbers` (from 1) of upload `upload_id` of `key` to, each good
    /// for `valid_for`: the sender needs no credentials, and the part's `ETag` answers it.
    pub async fn sign(&self, key: &str, upload_id: &str, numbers: &[u32], valid_for: Duration) -> Result<Vec<String>> {
        let path = ObjectPath::from(key);
        let mut out = Vec::with_capacity(numbers.len());
        for n in numbers {
            let options = SignedUrlOptions::default()
                .with_query([("partNumber", n.to_string()), ("uploadId", upload_id.to_string())]);
            let url = self.parts.signed_url_opts(Method::PUT, &path, valid_for, &options).await.map_err(s3_error)?;
            out.push(url.to_string());
        }
        Ok(out)
    }

    /// Completes upload `upload_id` of `key` from the parts' `etags`, in part order.
    pub async fn complete(&self, key: &str, upload_id: &str, etags: Vec<String>) -> Result<()> {
        let parts = etags.into_iter().map(|content_id| PartId { content_id }).collect();
        self.control
            .complete_multipart(&ObjectPath::from(key), &upload_id.to_string(), parts)
            .await
            .map(drop)
            .map_err(s3_error)
    }

    /// Gives up upload `upload_id` of `key`: the store drops its parts.
    pub async fn abort(&self, key: &str, upload_id: &str) -> Result<()> {
        self.control.abort_multipart(&ObjectPath::from(key), &upload_id.to_string()).await.map_err(s3_error)
    }
}

impl S3Writer {
    /// Starts writing `init.file_id` (a multipart upload on the store).
    pub async fn start(client: &Client, init: &InitMultipartUploadResponse) -> Result<S3Writer> {
        let store = upload_store(client, init, endpoint_of(init)?)?;
        let store: Arc<dyn ObjectStore> = Arc::new(store);
        let upload = store.put_multipart(&ObjectPath::from(init.file_id.as_str())).await.map_err(s3_error)?;
        Ok(S3Writer { writer: WriteMultipart::new_with_chunk_size(upload, PART_SIZE), written: 0 })
    }

    /// Adds bytes; waits while too many parts are under way, so memory stays bounded.
    pub async fn write(&mut self, bytes: Bytes) -> Result<()> {
        self.writer.wait_for_capacity(PARTS_IN_FLIGHT).await.map_err(s3_error)?;
        self.written += bytes.len() as u64;
        self.writer.put(bytes);
        Ok(())
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Finishes the object; answers its size.
    pub async fn finish(self) -> Result<u64> {
        self.writer.finish().await.map_err(s3_error)?;
        Ok(self.written)
    }

    /// Gives up: the parts written are removed from the store.
    pub async fn abort(self) {
        let _ = self.writer.abort().await;
    }
}

impl Client {
    /// Reports a finished S3 upload to the service (`POST` to the `callback_url` that
    /// `init_multipart_upload` answered): the sample or document it became. Safe to repeat.
    pub async fn upload_callback(
        &self,
        init: &InitMultipartUploadResponse,
        filename: &str,
    ) -> Result<UploadCallbackResponse> {
        let url = self.base_relative(&init.callback_url)?;
        let body = UploadCallbackRequest {
            s3_path: format!("s3://{}/{}", init.s3_bucket, init.file_id),
            filename: Some(filename.to_string()),
        };
        self.send_json(Method::POST, url, &body, Idempotency::Safe).await
    }
}
