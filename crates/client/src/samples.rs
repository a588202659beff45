//! Samples: list, get, the three-step upload, pre-upload, update, delete and download.

use std::path::{Path, PathBuf};

use mgds_api::{
    CancelUploadRequest, ConfirmUploadRequest, ConfirmUploadResponse, DownloadUri, InitMultipartUploadRequest,
    InitMultipartUploadResponse, InitUploadRequest, InitUploadResponse, MetadataInput, PreuploadRequest,
    PreuploadResponse, RemoveHostRequest, Sample, SampleUpdate, SuccessResponse, TagInput, Visibility,
};
use reqwest::Method;
use tokio_util::sync::CancellationToken;

use crate::retry::Idempotency;
use crate::transfer::{self, Bandwidth, Progress, UploadForm};
use crate::{Client, Destination, Error, ListRequest, ResourceId, Result, reference};

/// The samples of the service (`client.samples()`).
#[derive(Debug, Clone)]
pub struct Samples {
    client: Client,
}

impl Samples {
    pub(crate) fn new(client: Client) -> Self {
        Samples { client }
    }

    /// The samples the caller can see (`GET /samples`).
    pub fn list(&self) -> ListRequest<Sample> {
        ListRequest::new(self.client.clone(), &["samples"])
    }

    /// Public samples (`GET /samples/public`).
    pub fn list_public(&self) -> ListRequest<Sample> {
        ListRequest::new(self.client.clone(), &["samples", "public"])
    }

    /// One sample (`GET /samples/{id}`).
    pub async fn get(&self, id: impl ResourceId) -> Result<Sample> {
        self.client.get_json(self.client.api_url(&["samples", id.resource_id()])).await
    }

    /// Changes a sample's visibility, project or tags (`PATCH /samples/{id}`).
    pub fn update(&self, id: impl ResourceId) -> SampleUpdateRequest {
        SampleUpdateRequest {
            client: self.client.clone(),
            id: id.resource_id().to_string(),
            body: SampleUpdate::default(),
        }
    }

    /// Deletes a sample with its file, metadata, tag links and analyses (`DELETE /samples/{id}`).
    pub async fn delete(&self, id: impl ResourceId) -> Result<()> {
        self.client.delete(self.client.api_url(&["samples", id.resource_id()])).await
    }

    /// A pre-signed, expiring address of the sample's file (`POST /samples/{id}/download_uri`).
    pub async fn download_uri(&self, id: impl ResourceId) -> Result<DownloadUri> {
        let url = self.client.api_url(&["samples", id.resource_id(), "download_uri"]);
        self.client.send_json(Method::POST, url, &serde_json::json!({}), Idempotency::Safe).await
    }

    /// Downloads the sample's file to `dest` (whole or not at all): a path, or a
    /// [`Destination`] made from the sample's `filename`, which never replaces a file unless asked
    /// to. Returns its size.
    pub async fn download(&self, id: impl ResourceId, dest: impl Into<Destination>) -> Result<u64> {
        self.download_with_progress(id, dest, None).await
    }

    /// [`Samples::download`], reporting progress.
    pub async fn download_with_progress(
        &self,
        id: impl ResourceId,
        dest: impl Into<Destination>,
        progress: Option<Progress>,
    ) -> Result<u64> {
        let uri = self.download_uri(id).await?;
        transfer::download_to_file(&self.client, &uri.download_uri, &dest.into(), progress.as_ref()).await
    }

    /// Registers a sample before its data exists (`POST /samples/preupload`).
    pub fn preupload(&self) -> Preupload {
        Preupload { client: self.client.clone(), body: PreuploadRequest::default() }
    }

    /// Uploads the FASTA/FASTQ file at `path` as a sample: `init_upload`, the form POST streamed
    /// from disk, `confirm_upload`.
    pub fn upload(&self, path: impl Into<PathBuf>) -> SampleUpload {
        SampleUpload {
            client: self.client.clone(),
            path: path.into(),
            body: InitUploadRequest::default(),
            progress: None,
            cancel: CancellationToken::new(),
            bandwidth: None,
            confirm_after: None,
        }
    }

    /// Step one of an upload, by hand (`POST /samples/init_upload`). Not retried once sent.
    pub async fn init_upload(&self, body: &InitUploadRequest) -> Result<InitUploadResponse> {
        let url = self.client.api_url(&["samples", "init_upload"]);
        self.client.send_json(Method::POST, url, body, Idempotency::ConnectOnly).await
    }

    /// Step three of an upload, by hand (`POST /samples/confirm_upload`); safe to repeat.
    pub async fn confirm_upload(&self, sample_id: &str) -> Result<ConfirmUploadResponse> {
        let url = self.client.api_url(&["samples", "confirm_upload"]);
        let body = ConfirmUploadRequest { sample_id: sample_id.to_string(), upload_type: None, sha256: None };
        self.client.send_json(Method::POST, url, &body, Idempotency::Safe).await
    }

    /// Starts an upload through the service's S3-compatible store (`POST
    /// /samples/init_multipart_upload`): an object key and credentials to write it with. Not
    /// retried once sent.
    pub async fn init_multipart_upload(
        &self,
        body: &InitMultipartUploadRequest,
    ) -> Result<InitMultipartUploadResponse> {
        let url = self.client.api_url(&["samples", "init_multipart_upload"]);
        self.client.send_json(Method::POST, url, body, Idempotency::ConnectOnly).await
    }

    /// `POST /samples/{id}/remove_host` (an MGDS addition): starts a copy of the sample without
    /// the reads `classification` (default: the sample's newest finished classification made
    /// with a database that names a host) called the host's. Answers the new sample,
    /// `importing` until the service has written the copy; what was removed is then in its
    /// custom metadata (`host_reads_removed`, `host_reads_removed_percent`). Never sent twice:
    /// each request makes a copy.
    pub async fn remove_host(&self, id: impl ResourceId, classification: Option<&str>) -> Result<Sample> {
        let url = self.client.api_url(&["samples", id.resource_id(), "remove_host"]);
        let body = RemoveHostRequest { classification: classification.map(str::to_string) };
        self.client.send_json(Method::POST, url, &body, Idempotency::ConnectOnly).await
    }

    /// `GET /samples/{id}/controls` (an MGDS addition): the finished controls analyses whose
    /// control's batch held this sample, newest first (at most 20); their results mark the taxa
    /// called contaminants.
    pub async fn controls(&self, id: impl ResourceId) -> Result<Vec<mgds_api::Analysis>> {
        self.client.get_json(self.client.api_url(&["samples", id.resource_id(), "controls"])).await
    }

    /// Abandons an upload that was not confirmed (`POST /samples/cancel_upload`): its file and
    /// proposed sample go.
    pub async fn cancel_upload(&self, sample_id: &str) -> Result<SuccessResponse> {
        let url = self.client.api_url(&["samples", "cancel_upload"]);
        let body = CancelUploadRequest { sample_id: sample_id.to_string() };
        self.client.send_json(Method::POST, url, &body, Idempotency::Safe).await
    }
}

/// `PATCH /samples/{id}`: set only what is given.
#[derive(Debug, Clone)]
pub struct SampleUpdateRequest {
    client: Client,
    id: String,
    body: SampleUpdate,
}

impl SampleUpdateRequest {
    /// New visibility: public, shared or private.
    pub fn visibility(mut self, v: Visibility) -> Self {
        self.body.visibility = Some(v);
        self
    }

    /// Moves the sample into this project.
    pub fn project(mut self, project: impl ResourceId) -> Self {
        self.body.project = Some(Some(reference("projects", &project)));
        self
    }

    /// Takes the sample out of its project.
    pub fn no_project(mut self) -> Self {
        self.body.project = Some(None);
        self
    }

    /// Replaces the sample's tags with these.
    pub fn tags<I: ResourceId>(mut self, tags: impl IntoIterator<Item = I>) -> Self {
        self.body.tags = Some(Some(tags.into_iter().map(|t| reference("tags", &t)).collect()));
        self
    }

    /// Sends the change; answers the sample as it now is.
    pub async fn send(self) -> Result<Sample> {
        let url = self.client.api_url(&["samples", &self.id]);
        // Setting fields to given values: the same request twice has the same effect.
        self.client.send_json(Method::PATCH, url, &self.body, Idempotency::Safe).await
    }
}

/// `POST /samples/preupload`: a sample awaiting its data.
#[derive(Debug, Clone)]
pub struct Preupload {
    client: Client,
    body: PreuploadRequest,
}

impl Preupload {
    /// Metadata for the sample.
    pub fn metadata(mut self, metadata: MetadataInput) -> Self {
        self.body.metadata = Some(metadata);
        self
    }

    /// The lab's own id, to match the upload later; must be unique among the caller's samples.
    pub fn external_sample_id(mut self, id: impl Into<String>) -> Self {
        self.body.metadata.get_or_insert_with(MetadataInput::default).external_sample_id = Some(Some(id.into()));
        self
    }

    /// Attaches a tag by name.
    pub fn tag(mut self, name: impl Into<String>) -> Self {
        self.body.tags.push(TagInput { name: name.into() });
        self
    }

    /// Places the sample in a project (its members then see it while it awaits data).
    pub fn project(mut self, project: impl ResourceId) -> Self {
        self.body.project = Some(reference("projects", &project));
        self
    }

    /// Creates it (not retried once sent). A duplicate `external_sample_id` is
    /// [`Error::Conflict`].
    pub async fn send(self) -> Result<PreuploadResponse> {
        let url = self.client.api_url(&["samples", "preupload"]);
        self.client.send_json(Method::POST, url, &self.body, Idempotency::ConnectOnly).await
    }
}

/// Uploads one file as a sample; see [`Samples::upload`].
pub struct SampleUpload {
    client: Client,
    path: PathBuf,
    body: InitUploadRequest,
    progress: Option<Progress>,
    cancel: CancellationToken,
    bandwidth: Option<Bandwidth>,
    confirm_after: Option<ConfirmGate>,
}

/// What an upload waits for between sending its file and confirming it.
type ConfirmGate = std::pin::Pin<Box<dyn std::future::Future<Output = Result<()>> + Send>>;

impl std::fmt::Debug for SampleUpload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SampleUpload").field("path", &self.path).field("body", &self.body).finish_non_exhaustive()
    }
}

impl SampleUpload {
    /// The file name the sample gets (default: the file's own name). Spaces become underscores.
    pub fn filename(mut self, name: impl Into<String>) -> Self {
        self.body.filename = name.into();
        self
    }

    /// Metadata for the sample.
    pub fn metadata(mut self, metadata: MetadataInput) -> Self {
        self.body.metadata = Some(metadata);
        self
    }

    /// Attaches a tag by name.
    pub fn tag(mut self, name: impl Into<String>) -> Self {
        self.body.tags.push(TagInput { name: name.into() });
        self
    }

    /// Places the sample in a project.
    pub fn project(mut self, project: impl ResourceId) -> Self {
        self.body.project = Some(reference("projects", &project));
        self
    }

    /// Gives the file to this pre-uploaded sample instead of creating one.
    pub fn sample_id(mut self, id: impl ResourceId) -> Self {
        self.body.sample_id = Some(id.resource_id().to_string());
        self
    }

    /// Gives the file to the pre-uploaded sample with this external id.
    pub fn external_sample_id(mut self, id: impl Into<String>) -> Self {
        self.body.external_sample_id = Some(id.into());
        self
    }

    /// Marks the file as interleaved paired-end reads.
    pub fn interleaved(mut self, interleaved: bool) -> Self {
        self.body.interleaved = Some(interleaved);
        self
    }

    /// The file's SHA-256 (64 hex digits), when known: the service's store then refuses any
    /// other bytes, and the upload is confirmed only if the stored file has it.
    pub fn sha256(mut self, hex: impl Into<String>) -> Self {
        self.body.sha256 = Some(hex.into());
        self
    }

    /// Called with (bytes sent, total) as the file goes.
    pub fn progress(mut self, f: impl Fn(u64, u64) + Send + Sync + 'static) -> Self {
        self.progress = Some(std::sync::Arc::new(f));
        self
    }

    /// Stops the upload when this token is cancelled: the transfer ends, the upload is
    /// cancelled on the service (no sample is left), and `send` answers [`Error::Cancelled`].
    /// Once confirmation has started, the upload finishes.
    pub fn cancel_token(mut self, token: CancellationToken) -> Self {
        self.cancel = token;
        self
    }

    /// Keeps the file transfer under this speed limit (shared with every upload given a clone).
    pub fn bandwidth(mut self, limit: Bandwidth) -> Self {
        self.bandwidth = Some(limit);
        self
    }

    /// Waits for `check` once the file is sent and before the upload is confirmed (a check of
    /// the file that runs beside the transfer). An error from it cancels the upload, so that
    /// nothing of it stays on the service, and is what [`send`](Self::send) returns.
    pub fn confirm_after(mut self, check: impl std::future::Future<Output = Result<()>> + Send + 'static) -> Self {
        self.confirm_after = Some(Box::pin(check));
        self
    }

    /// Runs the upload; answers the new (or pre-uploaded) sample.
    pub async fn send(mut self) -> Result<Sample> {
        let size = file_size(&self.path).await?;
        if self.body.filename.is_empty() {
            self.body.filename = default_filename(&self.path)?;
        }
        self.body.filename =
            mgds_api::clean_sample_filename(&self.body.filename).map_err(|e| Error::InvalidInput(e.to_string()))?;
        self.body.size = size;
        if self.cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let samples = Samples::new(self.client.clone());
        let init = samples.init_upload(&self.body).await?;
        let sample_id = init.sample_id.clone().ok_or_else(|| missing("init_upload", "sample_id"))?;
        let form = UploadForm {
            url: &init.upload_url,
            fields: &init.additional_fields,
            path: &self.path,
            filename: &self.body.filename,
            size,
            bandwidth: self.bandwidth.as_ref(),
        };
        let mut sent = match self.cancel.is_cancelled() {
            true => Err(Error::Cancelled),
            false => transfer::post_file(&self.client, &form, self.progress.as_ref(), &self.cancel).await,
        };
        if let (Ok(()), Some(check)) = (&sent, self.confirm_after.take()) {
            sent = check.await;
        }
        if let Err(e) = sent {
            // Leave nothing behind: the service drops the proposed sample and any stored bytes.
            let _ = samples.cancel_upload(&sample_id).await;
            return Err(e);
        }
        let confirmed = samples.confirm_upload(&sample_id).await?;
        let id = confirmed.sample.as_ref().map_or(sample_id.as_str(), |r| r.id());
        samples.get(id).await
    }
}

/// The size of the file to upload, which must be 1 byte to 20 GB.
pub(crate) async fn file_size(path: &Path) -> Result<u64> {
    let meta = tokio::fs::metadata(path).await.map_err(|e| Error::io("read", path, e))?;
    if !meta.is_file() {
        return Err(Error::InvalidInput(format!("{} is not a file", path.display())));
    }
    let size = meta.len();
    if size == 0 {
        return Err(Error::InvalidInput(format!("{} is empty; there is nothing to upload", path.display())));
    }
    if size > mgds_api::MAX_UPLOAD_BYTES {
        return Err(Error::InvalidInput(format!(
            "{} has {size} bytes; uploads are limited to {} bytes (20 GB)",
            path.display(),
            mgds_api::MAX_UPLOAD_BYTES
        )));
    }
    Ok(size)
}

/// The file's own name.
pub(crate) fn default_filename(path: &Path) -> Result<String> {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| Error::InvalidInput(format!("{} has no file name", path.display())))
}

/// An answer lacking a field API v1 promises.
pub(crate) fn missing(route: &str, field: &str) -> Error {
    Error::Decode {
        what: route.to_string(),
        source: <serde_json::Error as serde::de::Error>::custom(format!("missing field `{field}`")),
    }
}
