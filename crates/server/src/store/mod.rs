//! The service under its routes: records and who may see them, the upload lifecycle, the job
//! queue and file storage, over SQLite or PostgreSQL and a local folder or an S3 store.
//!
//! The statements of the records are here, and nothing here knows the routes or the service
//! above them: functions take ids, the [`Caller`](caller::Caller), the API's request values and
//! the raw list parameters, and answer with the API's records or an
//! [`ApiError`](crate::error::ApiError) (which carries the status an answer gets). Record functions
//! take a [`Store`] (the database and the files); those the operator's commands and the
//! workers call take the database alone. How the two databases store values and run
//! statements is in [`db`]. Outside this layer, SQL is the
//! operators' alone: copying an install (`migrate`), sharing reference data
//! (`shared_references`) and the health and queue figures (`metrics`).

pub mod access;
pub mod analyses;
pub mod analysis_kind;
pub mod audit;
pub mod batches;
pub mod caller;
pub mod change;
pub mod controls;
pub mod db;
pub mod deletes;
pub mod documents;
pub mod events;
pub mod files;
pub mod garage_admin;
mod handle;
pub mod host_removal;
pub mod identities;
pub mod imports;
pub mod jobs;
pub mod lab;
pub mod leases;
pub mod members;
pub mod metadata;
pub mod projects;
pub mod queue;
pub mod records;
pub mod reports;
pub mod s3_grants;
pub mod samples;
pub mod sessions;
pub mod settings;
pub mod tags;
pub mod upload_buckets;
pub mod uploads;
pub mod users;
pub mod webhooks;

pub use handle::{AuditPolicy, DeliveryPolicy, Store};
