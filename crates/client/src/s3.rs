//! Writing an upload's file into the S3-compatible store that `init_multipart_upload` names,
//! with the credentials it handed out, as a stream of bytes of unknown length (a pair being
//! interleaved as it is read). The S3 protocol and signing are `object_store`'s; requests go
//! through this client's own HTTP client (its TLS trust and proxy).

use std::sync::Arc;

use bytes::Bytes;
use mgds_api::{InitMultipartUploadResponse, UploadCallbackRequest, UploadCallbackResponse};
use object_store::aws::AmazonS3Builder;
use object_store::client::{ClientOptions, HttpClient, HttpConnector};
use object_store::path::Path as ObjectPath;
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

impl S3Writer {
    /// Starts writing `init.file_id` (a multipart upload on the store).
    pub async fn start(client: &Client, init: &InitMultipartUploadResponse) -> Result<S3Writer> {
        let endpoint = init.s3_endpoint.as_deref().ok_or_else(|| {
            Error::InvalidInput("the service named no S3 endpoint for this upload; use the form upload instead".into())
        })?;
        let url = client.service_url(endpoint)?;
        let store = AmazonS3Builder::new()
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
            .map_err(s3_error)?;
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
