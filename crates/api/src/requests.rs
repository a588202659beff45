//! Request bodies, their answers, and the list query.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{Ref, RefOrId, Visibility, double_option, null_as_default};

/// Default page number of a list.
pub const DEFAULT_PAGE: u32 = 1;
/// Default page size of a list (the spec's value; the real service uses 20, so clients always
/// send `per_page`).
pub const DEFAULT_PER_PAGE: u32 = 50;
/// Largest page size a list accepts.
pub const MAX_PER_PAGE: u32 = 1000;

/// The query parameters of every list route. `where` and `sort` are JSON texts on the wire.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListQuery {
    /// Mongo-style filter, e.g. `{"filename": {"$icontains": "gut"}}`.
    #[serde(rename = "where", default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// Mongo-style sort, e.g. `{"created_at": true}` (true is descending).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<String>,
    /// Page number, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// Records per page, 1 to [`MAX_PER_PAGE`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_page: Option<u32>,
}

/// Metadata given with a pre-upload or upload, or in a metadata update. Absent fields are left
/// alone; in an update an explicit `null` clears a field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
// In TypeScript every field may be left out (`name?: string | null`): absent fields are left
// alone, and the double options take `null` to clear a field.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(deny_unknown_fields)]
pub struct MetadataInput {
    /// Marked as a favourite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starred: Option<bool>,
    /// Free-form key/value pairs (values: string, number, boolean or null).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<Map<String, Value>>,
    /// The lab's own identifier, at most 60 characters.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub external_sample_id: Option<Option<String>>,
    /// Display name, at most 255 characters.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub name: Option<Option<String>>,
    /// Free-text description.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub description: Option<Option<String>>,
    /// When the specimen was collected (RFC 3339).
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub date_collected: Option<Option<String>>,
    /// When it was sequenced (RFC 3339).
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub date_sequenced: Option<Option<String>>,
    /// One of [`PLATFORMS`](crate::PLATFORMS).
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub platform: Option<Option<String>>,
    /// One of [`LIBRARY_TYPES`](crate::LIBRARY_TYPES).
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub library_type: Option<Option<String>>,
    /// One of [`SAMPLE_TYPES`](crate::SAMPLE_TYPES).
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub sample_type: Option<Option<String>>,
    /// Latitude, -90 to 90.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub location_lat: Option<Option<f64>>,
    /// Longitude, -180 to 180.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub location_lon: Option<Option<f64>>,
    /// Collection site in words, at most 255 characters.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub location_string: Option<Option<String>>,
    /// The sample (accepted and ignored in updates: a record never moves to another sample).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<RefOrId>,
}

/// A tag given by name in an upload or pre-upload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TagInput {
    /// The label, at most 30 characters.
    pub name: String,
}

/// `POST /samples/preupload`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PreuploadRequest {
    /// Metadata for the sample; `external_sample_id` must be unique among the caller's samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<MetadataInput>,
    /// Tags to attach.
    #[serde(default, deserialize_with = "null_as_default", skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<TagInput>,
    /// Project to place the sample in (its members then see it while it awaits data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<RefOrId>,
}

/// Answer to `POST /samples/preupload`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PreuploadResponse {
    /// The new sample's identifier.
    pub sample_id: String,
}

/// `POST /samples/init_upload`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct InitUploadRequest {
    /// FASTA or FASTQ file name, optionally `.gz`/`.gzip`.
    pub filename: String,
    /// Exact size of the file in bytes.
    pub size: u64,
    /// Only `standard`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload_type: Option<String>,
    /// Metadata for the sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<MetadataInput>,
    /// Tags to attach.
    #[serde(default, deserialize_with = "null_as_default", skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<TagInput>,
    /// Project to place the sample in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<RefOrId>,
    /// A pre-uploaded sample to give this file to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_id: Option<String>,
    /// A pre-uploaded sample to give this file to, by external id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_sample_id: Option<String>,
    /// Whether the file holds interleaved paired-end reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleaved: Option<bool>,
    /// The file's SHA-256 (64 hex digits), an MGDS addition: the upload form then carries it
    /// and the store refuses any other bytes (S3's `x-amz-checksum-sha256`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// Answer to an `init_upload`: where and how to send the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct InitUploadResponse {
    /// The proposed sample's identifier (samples only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_id: Option<String>,
    /// The proposed document's identifier (documents only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document_id: Option<String>,
    /// Where to POST the multipart form.
    pub upload_url: String,
    /// Form fields to send unchanged, in this order, before the `file` part.
    pub additional_fields: Map<String, Value>,
}

/// `POST /samples/confirm_upload`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ConfirmUploadRequest {
    /// The identifier from `init_upload`.
    pub sample_id: String,
    /// Must match the value given to `init_upload` (only `standard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload_type: Option<String>,
    /// The file's SHA-256 (64 hex digits): the upload is confirmed only if the stored file has
    /// it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// Answer to `POST /samples/confirm_upload`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ConfirmUploadResponse {
    /// True when the sample exists.
    pub success: bool,
    /// What happened, in words.
    pub message: String,
    /// The sample (samples only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<Ref>,
    /// The document (documents only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<Ref>,
}

/// `POST /samples/cancel_upload`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CancelUploadRequest {
    /// The identifier from `init_upload`.
    pub sample_id: String,
}

/// `POST /samples/{id}/remove_host` (an MGDS addition): a copy of the sample without the
/// reads a classification called the host's. The answer is the new sample, `importing` until
/// the copy is written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RemoveHostRequest {
    /// The classification whose calls say which reads are the host's (default: the sample's
    /// newest finished classification made with a database that names host taxa).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classification: Option<String>,
}

/// Answer to a cancel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SuccessResponse {
    /// True when done.
    pub success: bool,
    /// What happened, in words.
    pub message: String,
}

/// `PATCH /samples/{id}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SampleUpdate {
    /// New visibility: `public`, `shared` or `private`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
    /// New project; `null` takes the sample out of its project.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub project: Option<Option<RefOrId>>,
    /// The complete new list of tags.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub tags: Option<Option<Vec<RefOrId>>>,
}

/// Answer to a `download_uri` request: a pre-signed, expiring GET address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DownloadUri {
    /// Where to GET the file.
    pub download_uri: String,
    /// How long the address stays valid.
    pub expires_in_hours: u32,
}

/// Answer to `GET /classifications/{id}/readlevel`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReadlevelUrl {
    /// A pre-signed address of the gzipped read-level TSV.
    pub url: String,
}

/// `POST /documents/init_upload`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct DocumentInitUploadRequest {
    /// File name: letters, digits, dashes, underscores and periods.
    pub filename: String,
    /// Exact size in bytes (at least 1).
    pub size: u64,
    /// The file's SHA-256 (64 hex digits), an MGDS addition: the store then refuses any other
    /// bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// `POST /documents/confirm_upload`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct DocumentConfirmUploadRequest {
    /// The identifier from `init_upload`.
    pub document_id: String,
    /// The file's SHA-256 (64 hex digits): the upload is confirmed only if the stored file has
    /// it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// `PATCH /documents/{id}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct DocumentUpdate {
    /// New file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// New description; `null` clears it.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub description: Option<Option<String>>,
}

/// A body naming one user: document `add_user`/`remove_user`, project `remove_user`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct UserRequest {
    /// The user.
    pub user: RefOrId,
}

/// `POST /projects`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ProjectCreate {
    /// Display name (defaults to `project_name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Short name: 3 to 15 of `a-zA-Z0-9_-`, unique within the organisation.
    pub project_name: String,
    /// Free-text description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The lab's own identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// Whether anyone may see it (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public: Option<bool>,
}

/// `PATCH /projects/{id}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ProjectUpdate {
    /// New display name, at most 60 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// New short name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_name: Option<String>,
    /// New description; `null` clears it.
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub description: Option<Option<String>>,
}

/// `POST /projects/{id}/add_user`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ProjectAddUser {
    /// The new member.
    pub user: RefOrId,
    /// What they may do; defaults to all of [`PROJECT_PERMISSIONS`](crate::PROJECT_PERMISSIONS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<Vec<String>>,
}

/// `POST /projects/{id}/change_sharing`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ChangeSharing {
    /// Whether anyone may see the project.
    #[serde(default)]
    pub public: bool,
}

/// `POST /tags`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TagCreate {
    /// The label, 1 to 30 characters.
    pub name: String,
    /// The sample to attach it to.
    pub sample: RefOrId,
}

/// `POST /jobs/{id}/run`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct JobRunRequest {
    /// Arguments, checked against the job's `job_args_schema`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub job_args: Map<String, Value>,
    /// The input sample.
    pub sample: RefOrId,
    /// Analyses whose output the run should use instead of the defaults.
    #[serde(default, deserialize_with = "null_as_default", skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<RunDependency>,
    /// At most 250 characters; visible to anyone who can see the results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fill absent arguments from the schema's defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub populate_default_arguments: Option<bool>,
    /// Run again even if an identical analysis exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
}

/// One entry of a run's `dependencies`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RunDependency {
    /// The analysis to use.
    pub analysis: RefOrId,
    /// Where to place its output for the job.
    pub download_path: String,
}
