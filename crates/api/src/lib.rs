//! Wire types of the Microbial Genomics Data Service API v1.
//!
//! Shared by the service (`mgds-server`) and its clients so the two cannot drift apart. The crate
//! does no I/O. Main types: [`Ref`], the resources ([`Sample`], [`Metadata`], [`Analysis`], [`Job`],
//! [`Document`], [`Project`], [`Tag`], [`SequencingBatch`], [`User`], [`Account`]), the list query
//! ([`ListQuery`]), the error body ([`ErrorBody`]), the upload and run bodies, and the results
//! ([`ClassificationResults`], [`PanelResults`]).
//!
//! Types deserialize leniently (unknown fields are ignored, nullable fields are `Option`) so that a
//! client built on them reads any compatible service, including the real one whose responses are
//! kept as test fixtures.

pub mod controls;
mod events;
mod job_args;
mod multipart;
mod organization;
pub mod palette;
mod qc;
mod requests;
mod resources;
mod results;
mod rules;

pub use events::*;
pub use job_args::*;
pub use multipart::*;
pub use organization::*;
pub use qc::*;
pub use requests::*;
pub use resources::*;
pub use results::*;
pub use rules::*;

use serde::{Deserialize, Deserializer, Serialize};

/// The path every API v1 address starts with.
pub const API_PREFIX: &str = "/api/v1";

/// A reference to another resource: `{"$ref": "/api/v1/<collection>/<id>"}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Ref {
    /// The address of the referenced resource.
    #[serde(rename = "$ref")]
    pub uri: String,
}

impl Ref {
    /// A reference to `id` in `collection` (for example `samples`).
    pub fn new(collection: &str, id: &str) -> Self {
        Ref { uri: format!("{API_PREFIX}/{collection}/{id}") }
    }

    /// The identifier: the last path segment of the address.
    pub fn id(&self) -> &str {
        self.uri.rsplit('/').next().unwrap_or_default()
    }

    /// The collection part of the address (`samples` for `/api/v1/samples/<id>`,
    /// `sequencing/batches` for a batch), or `None` if the address is not an API v1 address.
    pub fn collection(&self) -> Option<&str> {
        let rest = self.uri.strip_prefix(API_PREFIX)?.strip_prefix('/')?;
        let (collection, _id) = rest.rsplit_once('/')?;
        Some(collection)
    }
}

/// A reference given in a request body: either a reference object or a bare identifier, as the
/// reference schema allows for request fields such as `project`, `sample` and `user`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(untagged)]
pub enum RefOrId {
    /// `{"$ref": "/api/v1/<collection>/<id>"}`.
    Ref(Ref),
    /// A bare identifier.
    Id(String),
}

impl RefOrId {
    /// The identifier this names.
    pub fn id(&self) -> &str {
        match self {
            RefOrId::Ref(r) => r.id(),
            RefOrId::Id(id) => id,
        }
    }

    /// The collection named by a reference object; `None` for a bare identifier.
    pub fn collection(&self) -> Option<&str> {
        match self {
            RefOrId::Ref(r) => r.collection(),
            RefOrId::Id(_) => None,
        }
    }
}

impl From<Ref> for RefOrId {
    fn from(r: Ref) -> Self {
        RefOrId::Ref(r)
    }
}

/// The body of every error answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ErrorBody {
    /// Why the request failed, in words a person can act on.
    pub message: String,
    /// The HTTP status code.
    pub status: u16,
    /// Which refusal this is, for the refusals a client acts on (an addition of this service;
    /// other services leave it out, and clients must not rely on it being there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<ErrorCode>,
}

/// Refusals that a client acts on rather than shows: named in [`ErrorBody::code`] so that no
/// client has to recognise a refusal by its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// The pre-uploaded sample named by an upload is not awaiting data (any more): another
    /// file was confirmed for it, or it is gone.
    NotAwaitingData,
    /// `confirm_upload` came before the file arrived whole.
    FileNotArrived,
    /// The stored file's size is not the size announced at `init_upload`.
    SizeMismatch,
    /// The file's SHA-256 is not the one given for the upload.
    ChecksumMismatch,
    /// Another of the caller's samples has this `external_sample_id`.
    DuplicateExternalSampleId,
    /// The job's arguments do not fit its `job_args_schema`.
    InvalidJobArgs,
    /// The analysis has not finished successfully, so it has no results (yet).
    AnalysisNotFinished,
    /// A code this client does not know (a newer service).
    #[serde(other)]
    Other,
}

/// Reads `null` as the type's default (the real service sends `"tags": null` for some samples).
pub(crate) fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Distinguishes an absent field (`None`) from an explicit `null` (`Some(None)`) in update bodies.
pub(crate) fn double_option<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ref_parts() {
        let r = Ref::new("samples", "0123456789abcdef");
        assert_eq!(r.uri, "/api/v1/samples/0123456789abcdef");
        assert_eq!(r.id(), "0123456789abcdef");
        assert_eq!(r.collection(), Some("samples"));
        let b = Ref { uri: "/api/v1/sequencing/batches/00000000000000aa".into() };
        assert_eq!(b.collection(), Some("sequencing/batches"));
        assert_eq!(Ref { uri: "/other/x".into() }.collection(), None);
    }

    #[test]
    fn ref_or_id_accepts_both_shapes() {
        let a: RefOrId = serde_json::from_str(r#"{"$ref":"/api/v1/projects/abc"}"#).unwrap();
        let b: RefOrId = serde_json::from_str(r#""abc""#).unwrap();
        assert_eq!(a.id(), "abc");
        assert_eq!(b.id(), "abc");
        assert_eq!(a.collection(), Some("projects"));
    }
}
