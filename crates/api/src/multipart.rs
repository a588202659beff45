//! Uploads through an S3-compatible store, as the real service's clients make them:
//! `init_multipart_upload` hands out an object key and credentials for it, the client writes the
//! object with S3 requests (one PUT, or a multipart upload for big files), then posts to the
//! callback to turn it into a sample or a document.

use serde::{Deserialize, Serialize};

use crate::{MetadataInput, RefOrId, TagInput};

/// `POST /samples/init_multipart_upload`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct InitMultipartUploadRequest {
    /// The file's name (read 1's, for a pair).
    pub filename: Option<String>,
    /// Read 2's file name: the two files are uploaded apart and become one sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired_end_filename: Option<String>,
    /// Give the file to this pre-uploaded sample.
    #[serde(default)]
    pub sample_id: Option<String>,
    /// Give the file to the pre-uploaded sample with this external id.
    #[serde(default)]
    pub external_sample_id: Option<String>,
    /// Metadata for a new sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<MetadataInput>,
    /// Tags (by name) for a new sample.
    #[serde(default, deserialize_with = "crate::null_as_default", skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<TagInput>,
    /// The project of a new sample (its id, or a reference).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<RefOrId>,
    /// The one file holds interleaved paired-end reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleaved: Option<bool>,
}

/// The answer to `init_multipart_upload`: where to write, with what credentials, and where to
/// report that the file is there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct InitMultipartUploadResponse {
    /// The sample the upload makes (or fills), for `cancel_upload`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_id: Option<String>,
    /// The document the upload makes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document_id: Option<String>,
    /// The object key to write the file (read 1) to.
    pub file_id: String,
    /// The object key to write read 2 to, for a pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired_end_file_id: Option<String>,
    /// The bucket.
    pub s3_bucket: String,
    /// The access key id of the upload's credentials.
    pub upload_aws_access_key_id: String,
    /// Their secret.
    pub upload_aws_secret_access_key: String,
    /// The path (under the service's address) to POST [`UploadCallbackRequest`] to once the
    /// objects are written.
    pub callback_url: String,
    /// The S3 endpoint to write to: the service's own, or its object store's when the store
    /// checks uploads itself (absent on services that use a cloud store at its default
    /// address). Clients that cannot take it from the answer (boto3) are pointed at it with
    /// `AWS_ENDPOINT_URL_S3`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3_endpoint: Option<String>,
    /// The region to sign for, when the endpoint checks it (an object store's; the service's
    /// own endpoint takes any). boto3 takes it from `AWS_DEFAULT_REGION`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3_region: Option<String>,
    /// When the credentials stop starting writes (RFC 3339); credentials an object store
    /// minted stop working altogether then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// What the client posts to the callback once the objects are written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UploadCallbackRequest {
    /// `s3://<bucket>/<file_id>`.
    pub s3_path: String,
    /// The file's name as the user knows it.
    #[serde(default)]
    pub filename: Option<String>,
}

/// The callback's answer: the record the upload became.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UploadCallbackResponse {
    /// The sample, for a sample upload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_id: Option<String>,
    /// The document, for a document upload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document_id: Option<String>,
    /// Words for people.
    #[serde(default)]
    pub message: String,
}
