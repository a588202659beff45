//! The Microbial Genomics Data Service API v1 as a local, self-hostable service.
//!
//! [`app`] builds the axum `Router` of [`routes`] over an [`AppState`] that [`AppState::open`]
//! makes from a data folder ([`Config`], both in [`state`]): a SQLite or PostgreSQL database (see
//! [`store::db`]) and an object store (see [`store::files`]). The routes hold the HTTP handlers;
//! [`store`] under them holds the records, the upload lifecycle, the job queue and the files, and
//! knows nothing above it. [`mod@serve`] runs the service on an address, over TLS when given a
//! certificate, with the [`janitor`] and the job workers beside it. [`admin`] holds the
//! operator's actions (users, keys, sequencing batches) that have no HTTP route.
//! [`reference_data`] is the reference data installed in the data folder, [`references`] the jobs
//! it provides; [`worker`] runs those jobs from the durable queue.

pub mod admin;
pub mod auth;
pub mod controls;
pub mod engine;
pub mod error;
pub mod janitor;
pub mod listing;
pub mod metrics;
pub mod migrate;
pub mod reference_data;
pub mod references;
pub mod reports;
pub mod routes;
pub mod runner;
pub mod s3;
pub mod schema;
pub mod serve;
pub mod shared_references;
pub mod signing;
pub mod sso;
pub mod state;
pub mod store;
mod warm;
pub mod webhooks;
pub mod worker;

#[cfg(test)]
mod props;

pub use error::{ApiError, ApiResult};
pub use serve::{Bound, Tls, app, bind, serve, spawn};
pub use state::{AppState, Config, OBJECTS_DIR, StartError, WebUi, default_data_dir, is_data_dir};
pub use store::{db, files as storage};
