//! The resources of API v1 as the service returns them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{Ref, null_as_default};

/// Who may see a sample (see the spec's visibility rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Visibility {
    /// Anyone, signed in or not.
    #[serde(rename = "public")]
    Public,
    /// The owner's organisation and the members of the sample's project.
    #[serde(rename = "shared")]
    Shared,
    /// The owner and the members of the sample's project.
    #[serde(rename = "private")]
    Private,
    /// Imported from an external service and not yet retrieved; the owner only.
    #[serde(rename = "importing")]
    Importing,
    /// Created by pre-upload and waiting for its file.
    #[serde(rename = "awaiting data")]
    AwaitingData,
}

impl Visibility {
    /// Every value, in the order the spec lists them.
    pub const ALL: [Visibility; 5] =
        [Visibility::Public, Visibility::Shared, Visibility::Private, Visibility::Importing, Visibility::AwaitingData];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::Public => "public",
            Visibility::Shared => "shared",
            Visibility::Private => "private",
            Visibility::Importing => "importing",
            Visibility::AwaitingData => "awaiting data",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// A sample: a collection of reads or contigs uploaded as FASTA or FASTQ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Sample {
    /// Address of the sample.
    #[serde(rename = "$uri")]
    pub uri: String,
    /// Creation time (RFC 3339).
    pub created_at: String,
    /// File name, spaces replaced with underscores; absent while awaiting data.
    #[serde(default)]
    pub filename: Option<String>,
    /// Size of the uploaded file in bytes; absent while awaiting data.
    #[serde(default)]
    pub size: Option<u64>,
    /// Who may see the sample.
    pub visibility: Visibility,
    /// The owner; only the owner may modify the sample.
    pub owner: Ref,
    /// The sample's metadata record.
    #[serde(default)]
    pub metadata: Option<Ref>,
    /// The project the sample belongs to, if any.
    #[serde(default)]
    pub project: Option<Ref>,
    /// The primary classification, once there is one.
    #[serde(default)]
    pub primary_classification: Option<Ref>,
    /// Tags attached to the sample.
    #[serde(default, deserialize_with = "null_as_default")]
    pub tags: Vec<Ref>,
    /// Where the sample's file stands: `available` once it has arrived, `awaiting data` before.
    /// (Not in the reference schema; the real service sends it and its clients require it.)
    #[serde(default)]
    pub status: String,
    /// Last change (RFC 3339). Sent only when known: the real service's clients refuse `null`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// Why the sample's file could not be made: the two files of a pair uploaded apart whose
    /// mates do not pair, a file that changed after it was checked (the sample then stays
    /// `importing`). Sent as `error_msg`, the field the real service's clients read for it (not
    /// in the reference schema), only when there is such a reason.
    #[serde(default, rename = "error_msg", skip_serializing_if = "Option::is_none")]
    pub import_error: Option<String>,
}

/// The cost of an analysis, on services that charge for them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Cost {
    /// In the currency's smallest unit.
    pub amount: i64,
    /// ISO 4217 code.
    pub currency: String,
}

/// The metadata record of a sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Metadata {
    /// Address of the record.
    #[serde(rename = "$uri")]
    pub uri: String,
    /// The sample described.
    pub sample: Ref,
    /// Marked by the user as a favourite.
    #[serde(default)]
    pub starred: bool,
    /// Free-form key/value pairs.
    #[serde(default, deserialize_with = "null_as_default")]
    pub custom: Map<String, Value>,
    /// The lab's own identifier for the sample; unique among pre-uploaded samples.
    #[serde(default)]
    pub external_sample_id: Option<String>,
    /// Display name.
    #[serde(default)]
    pub name: Option<String>,
    /// Free-text description.
    #[serde(default)]
    pub description: Option<String>,
    /// When the specimen was collected (RFC 3339).
    #[serde(default)]
    pub date_collected: Option<String>,
    /// When it was sequenced (RFC 3339).
    #[serde(default)]
    pub date_sequenced: Option<String>,
    /// Sequencing platform, one of [`PLATFORMS`](crate::PLATFORMS).
    #[serde(default)]
    pub platform: Option<String>,
    /// `WGS`, `Targeted/16S` or `Other`.
    #[serde(default)]
    pub library_type: Option<String>,
    /// `Isolate`, `Metagenomic` or `Other`.
    #[serde(default)]
    pub sample_type: Option<String>,
    /// Latitude of the collection site.
    #[serde(default)]
    pub location_lat: Option<f64>,
    /// Longitude of the collection site.
    #[serde(default)]
    pub location_lon: Option<f64>,
    /// Collection site in words.
    #[serde(default)]
    pub location_string: Option<String>,
}

impl Metadata {
    /// The value of field `name` as text: a standard field (`name`, `platform`,
    /// `date_collected`, ...) or, failing that, a custom one; `None` when it is unset or null.
    /// Numbers and booleans are written as JSON writes them.
    pub fn field_text(&self, name: &str) -> Option<String> {
        let v = serde_json::to_value(self).ok()?;
        let found = match v.get(name) {
            Some(Value::Null) | None => self.custom.get(name)?,
            Some(found) => found,
        };
        match found {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        }
    }
}

/// An analysis: the result of running a job against a sample. The same shape serves the
/// typed collections (`classifications`, `panels`, `alignments`, `functional_profiles`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Analysis {
    /// Address of the analysis in the collection it was fetched from.
    #[serde(rename = "$uri")]
    pub uri: String,
    /// `classification`, `panel`, `alignment`, `functional_profile`, ... Sent by `/analyses` and
    /// `/classifications`, not by the other typed collections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analysis_type: Option<String>,
    /// Creation time (RFC 3339).
    pub created_at: String,
    /// Last change (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// False while pending or running.
    #[serde(default, deserialize_with = "null_as_default")]
    pub complete: bool,
    /// True if the analysis succeeded.
    #[serde(default, deserialize_with = "null_as_default")]
    pub success: bool,
    /// Why the analysis failed; empty or null otherwise. At most 255 characters.
    #[serde(default)]
    pub error_msg: Option<String>,
    /// The job that was run.
    pub job: Ref,
    /// The sample it was run on.
    pub sample: Ref,
    /// Arguments the analysis was run with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_args: Option<Value>,
    /// Description given when the job was run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Analyses whose output this one used.
    #[serde(default, deserialize_with = "null_as_default")]
    pub dependencies: Vec<Ref>,
    /// What the analysis cost; always `null` here (nothing is charged). Sent because the real
    /// service's clients require the field.
    #[serde(default)]
    pub cost: Option<Cost>,
    /// True for a run of an unpublished (draft) job.
    #[serde(default)]
    pub draft: bool,
    /// Where the results can be downloaded, where the service offers that.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results_uri: Option<String>,
    /// Reference genome taxon (alignments only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax_id: Option<String>,
}

/// A job: a versioned combination of reference data, analysis code and environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Job {
    /// Address of the job.
    #[serde(rename = "$uri")]
    pub uri: String,
    /// The kind of analysis a run creates, for example `classification`.
    #[serde(default)]
    pub analysis_type: Option<String>,
    /// Creation time (RFC 3339).
    pub created_at: String,
    /// Display name.
    #[serde(default)]
    pub name: Option<String>,
    /// Whether every user may run it.
    #[serde(default)]
    pub public: Option<bool>,
    /// True for an unpublished draft, visible only to its creator.
    #[serde(default)]
    pub draft: Option<bool>,
    /// JSON Schema of the job's arguments (single-job answer only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_args_schema: Option<Value>,
    /// The engine that runs it (an MGDS addition, for methods sections: `mgds-classify`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// The engine's version (an MGDS addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<String>,
    /// The digest of its reference data, the database it classifies with (an MGDS addition;
    /// absent for jobs without reference data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_digest: Option<String>,
}

/// A document: a file of any type, shareable for download.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Document {
    /// Address of the document.
    #[serde(rename = "$uri")]
    pub uri: String,
    /// Creation time (RFC 3339).
    pub created_at: String,
    /// File name.
    pub filename: String,
    /// Size in bytes (at least 1).
    pub size: u64,
    /// Free-text description.
    #[serde(default)]
    pub description: Option<String>,
    /// The owner; only the uploader may modify it.
    pub uploader: Ref,
    /// Users who may download but not modify it.
    #[serde(default, deserialize_with = "null_as_default")]
    pub downloaders: Vec<Ref>,
    /// Until when it may be downloaded (`{"$date": <ms>}`); always `null` here: documents do
    /// not expire.
    #[serde(default)]
    pub valid_until: Option<Value>,
}

/// Project permissions a member can hold, as the reference schema names them.
pub const PROJECT_PERMISSIONS: [&str; 4] =
    ["can_see_files", "can_add_files", "can_edit_metadata", "can_download_files"];

/// A project: an organising and sharing container for samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Project {
    /// Address of the project.
    #[serde(rename = "$uri")]
    pub uri: String,
    /// The owner.
    pub owner: Ref,
    /// What the caller may do in the project (see [`PROJECT_PERMISSIONS`]).
    #[serde(default, deserialize_with = "null_as_default")]
    pub permissions: Vec<String>,
    /// Short name: 3 to 15 of `a-zA-Z0-9_-`, unique within the owner's organisation.
    #[serde(default)]
    pub project_name: Option<String>,
    /// Free-text description.
    #[serde(default)]
    pub description: Option<String>,
    /// The lab's own identifier.
    #[serde(default)]
    pub external_id: Option<String>,
    /// Display name.
    pub name: String,
    /// Whether anyone may see it.
    #[serde(default)]
    pub public: bool,
}

/// A project member and what they may do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProjectMember {
    /// The member.
    pub user: Ref,
    /// Their permissions (see [`PROJECT_PERMISSIONS`]).
    pub permissions: Vec<String>,
}

/// A free-form label attached to samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Tag {
    /// Address of the tag.
    #[serde(rename = "$uri")]
    pub uri: String,
    /// The label.
    #[serde(default)]
    pub name: Option<String>,
}

/// Where a sequencing order stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum BatchStatus {
    /// Order registered.
    Registered,
    /// Samples on their way to the lab.
    ShippedToLab,
    /// Samples arrived at the lab.
    ReceivedAtLab,
    /// DNA extraction.
    Extracting,
    /// Library preparation.
    PreparingLibrary,
    /// On the sequencer.
    Sequencing,
    /// Quality control of the run.
    QualityControl,
    /// Finished.
    Done,
    /// Stopped before it was done.
    Canceled,
}

impl BatchStatus {
    /// Every status, in the order a batch moves through them (`canceled` last).
    pub const ALL: [BatchStatus; 9] = [
        BatchStatus::Registered,
        BatchStatus::ShippedToLab,
        BatchStatus::ReceivedAtLab,
        BatchStatus::Extracting,
        BatchStatus::PreparingLibrary,
        BatchStatus::Sequencing,
        BatchStatus::QualityControl,
        BatchStatus::Done,
        BatchStatus::Canceled,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            BatchStatus::Registered => "registered",
            BatchStatus::ShippedToLab => "shipped_to_lab",
            BatchStatus::ReceivedAtLab => "received_at_lab",
            BatchStatus::Extracting => "extracting",
            BatchStatus::PreparingLibrary => "preparing_library",
            BatchStatus::Sequencing => "sequencing",
            BatchStatus::QualityControl => "quality_control",
            BatchStatus::Done => "done",
            BatchStatus::Canceled => "canceled",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Whether a batch may move from `self` to `next`: forward only, and to `canceled` from any
    /// status before `done`. `done` and `canceled` are final.
    pub fn can_move_to(self, next: BatchStatus) -> bool {
        match (self, next) {
            (BatchStatus::Done | BatchStatus::Canceled, _) => false,
            (_, BatchStatus::Canceled) => true,
            (from, to) => to > from,
        }
    }
}

/// A sequencing batch: a record tracking a lab sequencing order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SequencingBatch {
    /// Address of the batch.
    #[serde(rename = "$uri")]
    pub uri: String,
    /// Unique batch number.
    pub batch_number: String,
    /// Creation time (RFC 3339).
    pub created_at: String,
    /// Human-readable name.
    pub name: Option<String>,
    /// The user who created the batch.
    pub owner: Ref,
    /// Where the order stands.
    pub status: BatchStatus,
}

/// A user of the service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct User {
    /// Address of the user.
    #[serde(rename = "$uri")]
    pub uri: String,
    /// E-mail address.
    #[serde(default)]
    pub email: Option<String>,
    /// User name.
    #[serde(default)]
    pub username: Option<String>,
}

/// The signed-in user's account.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Account {
    /// The user record.
    pub user: Ref,
    /// E-mail address.
    #[serde(default)]
    pub email: Option<String>,
    /// User name.
    #[serde(default)]
    pub username: Option<String>,
    /// When the account was created (RFC 3339).
    #[serde(default)]
    pub created_at: Option<String>,
    /// When the e-mail address was confirmed.
    #[serde(default)]
    pub confirmed_at: Option<String>,
    /// Billing coupons (always empty on a self-hosted service).
    #[serde(default, deserialize_with = "null_as_default")]
    pub coupons: Vec<Value>,
    /// The organisation the user belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization: Option<String>,
    /// Whether the user administers their organisation (an admin or an owner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization_admin: Option<bool>,
    /// The user's role in their organisation (an MGDS addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<crate::Role>,
}
