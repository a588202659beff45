//! Documents: upload, list (own and shared with me), get, update, share, download, delete.

use std::path::PathBuf;

use futures::TryStreamExt;
use mgds_api::{
    ConfirmUploadResponse, Document, DocumentConfirmUploadRequest, DocumentInitUploadRequest, DocumentUpdate,
    DownloadUri, InitMultipartUploadRequest, InitMultipartUploadResponse, InitUploadResponse, UserRequest,
};
use reqwest::Method;
use tokio_util::sync::CancellationToken;

use crate::list::Filter;
use crate::retry::Idempotency;
use crate::samples::{default_filename, file_size, missing};
use crate::transfer::{self, Progress, UploadForm};
use crate::{Client, Destination, Error, ListRequest, ResourceId, Result, reference};

/// The documents of the service (`client.documents()`).
#[derive(Debug, Clone)]
pub struct Documents {
    client: Client,
}

impl Documents {
    pub(crate) fn new(client: Client) -> Self {
        Documents { client }
    }

    /// Every document the caller can download: their own and those shared with them
    /// (`GET /documents`).
    pub fn list(&self) -> ListRequest<Document> {
        ListRequest::new(self.client.clone(), &["documents"])
    }

    /// The caller's own documents (those they uploaded).
    pub async fn list_own(&self) -> Result<Vec<Document>> {
        let me = self.client.account().await?.user;
        self.list().filter(Filter::new().eq_ref("uploader", &me)).per_page(mgds_api::MAX_PER_PAGE).all().await
    }

    /// Documents others shared with the caller.
    pub async fn list_shared_with_me(&self) -> Result<Vec<Document>> {
        let me = self.client.account().await?.user;
        let all = self
            .list()
            .filter(Filter::new().ne("uploader", serde_json::json!({"$ref": me.uri})))
            .per_page(mgds_api::MAX_PER_PAGE);
        // Filter by membership here too: an organisation admin also sees documents not shared
        // with them.
        all.stream().try_filter(|d| std::future::ready(d.downloaders.contains(&me))).try_collect().await
    }

    /// One document (`GET /documents/{id}`).
    pub async fn get(&self, id: impl ResourceId) -> Result<Document> {
        self.client.get_json(self.client.api_url(&["documents", id.resource_id()])).await
    }

    /// Changes the file name or description (`PATCH /documents/{id}`).
    pub async fn update(&self, id: impl ResourceId, update: &DocumentUpdate) -> Result<Document> {
        let url = self.client.api_url(&["documents", id.resource_id()]);
        self.client.send_json(Method::PATCH, url, update, Idempotency::Safe).await
    }

    /// Renames it (`PATCH /documents/{id}/rename`).
    pub async fn rename(&self, id: impl ResourceId, filename: &str) -> Result<Document> {
        let url = self.client.api_url(&["documents", id.resource_id(), "rename"]);
        self.client.send_json(Method::PATCH, url, &serde_json::json!({"filename": filename}), Idempotency::Safe).await
    }

    /// Deletes it (`DELETE /documents/{id}`); only its uploader may.
    pub async fn delete(&self, id: impl ResourceId) -> Result<()> {
        self.client.delete(self.client.api_url(&["documents", id.resource_id()])).await
    }

    /// Lets `user` download it (`POST /documents/{id}/add_user`); answers the document.
    pub async fn share(&self, id: impl ResourceId, user: impl ResourceId) -> Result<Document> {
        let url = self.client.api_url(&["documents", id.resource_id(), "add_user"]);
        let body = UserRequest { user: reference("users", &user) };
        self.client.send_json(Method::POST, url, &body, Idempotency::Safe).await
    }

    /// Stops `user` downloading it (`POST /documents/{id}/remove_user`); answers the document.
    pub async fn unshare(&self, id: impl ResourceId, user: impl ResourceId) -> Result<Document> {
        let url = self.client.api_url(&["documents", id.resource_id(), "remove_user"]);
        let body = UserRequest { user: reference("users", &user) };
        self.client.send_json(Method::POST, url, &body, Idempotency::Safe).await
    }

    /// A pre-signed, expiring address of the file (`POST /documents/{id}/download_uri`).
    pub async fn download_uri(&self, id: impl ResourceId) -> Result<DownloadUri> {
        let url = self.client.api_url(&["documents", id.resource_id(), "download_uri"]);
        self.client.send_json(Method::POST, url, &serde_json::json!({}), Idempotency::Safe).await
    }

    /// Downloads the file to `dest` (whole or not at all): a path, or a [`Destination`] made from
    /// the file's `filename`, which never replaces a file unless asked to. Returns its size.
    pub async fn download(&self, id: impl ResourceId, dest: impl Into<Destination>) -> Result<u64> {
        self.download_with_progress(id, dest, None).await
    }

    /// [`Documents::download`], reporting progress.
    pub async fn download_with_progress(
        &self,
        id: impl ResourceId,
        dest: impl Into<Destination>,
        progress: Option<Progress>,
    ) -> Result<u64> {
        let uri = self.download_uri(id).await?;
        transfer::download_to_file(&self.client, &uri.download_uri, &dest.into(), progress.as_ref()).await
    }

    /// Uploads the file at `path` as a document.
    pub fn upload(&self, path: impl Into<PathBuf>) -> DocumentUpload {
        DocumentUpload {
            client: self.client.clone(),
            path: path.into(),
            filename: None,
            progress: None,
            cancel: CancellationToken::new(),
        }
    }

    /// Step one of an upload, by hand (`POST /documents/init_upload`). Not retried once sent.
    pub async fn init_upload(&self, body: &DocumentInitUploadRequest) -> Result<InitUploadResponse> {
        let url = self.client.api_url(&["documents", "init_upload"]);
        self.client.send_json(Method::POST, url, body, Idempotency::ConnectOnly).await
    }

    /// Starts an upload through the service's S3-compatible store (`POST
    /// /documents/init_multipart_upload`), the document named `filename`. Not retried once sent.
    pub async fn init_multipart_upload(&self, filename: &str) -> Result<InitMultipartUploadResponse> {
        let url = self.client.api_url(&["documents", "init_multipart_upload"]);
        let body = InitMultipartUploadRequest { filename: Some(filename.to_string()), ..Default::default() };
        self.client.send_json(Method::POST, url, &body, Idempotency::ConnectOnly).await
    }

    /// Step three of an upload, by hand (`POST /documents/confirm_upload`); safe to repeat.
    pub async fn confirm_upload(&self, document_id: &str) -> Result<ConfirmUploadResponse> {
        let url = self.client.api_url(&["documents", "confirm_upload"]);
        let body = DocumentConfirmUploadRequest { document_id: document_id.to_string(), sha256: None };
        self.client.send_json(Method::POST, url, &body, Idempotency::Safe).await
    }
}

/// Uploads one file as a document; see [`Documents::upload`].
pub struct DocumentUpload {
    client: Client,
    path: PathBuf,
    filename: Option<String>,
    progress: Option<Progress>,
    cancel: CancellationToken,
}

impl std::fmt::Debug for DocumentUpload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DocumentUpload")
            .field("path", &self.path)
            .field("filename", &self.filename)
            .finish_non_exhaustive()
    }
}

impl DocumentUpload {
    /// The document's file name (default: the file's own name). Spaces become underscores.
    pub fn filename(mut self, name: impl Into<String>) -> Self {
        self.filename = Some(name.into());
        self
    }

    /// Called with (bytes sent, total) as the file goes.
    pub fn progress(mut self, f: impl Fn(u64, u64) + Send + Sync + 'static) -> Self {
        self.progress = Some(std::sync::Arc::new(f));
        self
    }

    /// Stops the upload when this token is cancelled; `send` then answers [`Error::Cancelled`].
    /// (API v1 has no route to cancel a document upload; the service discards the unconfirmed
    /// upload when its form expires.)
    pub fn cancel_token(mut self, token: CancellationToken) -> Self {
        self.cancel = token;
        self
    }

    /// Runs the upload; answers the new document.
    pub async fn send(self) -> Result<Document> {
        let size = file_size(&self.path).await?;
        let filename = match self.filename {
            Some(f) => f,
            None => default_filename(&self.path)?,
        };
        let filename = mgds_api::clean_filename(&filename).map_err(|e| Error::InvalidInput(e.to_string()))?;
        if self.cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let docs = Documents::new(self.client.clone());
        let init =
            docs.init_upload(&DocumentInitUploadRequest { filename: filename.clone(), size, sha256: None }).await?;
        let id = init.document_id.clone().ok_or_else(|| missing("documents/init_upload", "document_id"))?;
        let form = UploadForm {
            url: &init.upload_url,
            fields: &init.additional_fields,
            path: &self.path,
            filename: &filename,
            size,
            bandwidth: None,
        };
        transfer::post_file(&self.client, &form, self.progress.as_ref(), &self.cancel).await?;
        let confirmed = docs.confirm_upload(&id).await?;
        let id = confirmed.document.as_ref().map_or(id.as_str(), |r| r.id());
        docs.get(id).await
    }
}
