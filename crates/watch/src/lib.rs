//! Watched folders: the files a sequencer (or anyone) writes into a folder become samples on an
//! MGDS service, each exactly once, never half-written, whatever stops the watcher.
//!
//! - [`FolderConfig`] says what a folder is ([`Layout`]: Illumina run folders, MinKNOW output
//!   or plain files) and what new samples get (project, tags, metadata, jobs); [`Options`]
//!   say how often to look, how long a file must stay still, the speed limit and the pause file.
//! - [`Watcher::start`] runs the watcher over several folders at once and reports [`Event`]s
//!   on a channel; [`Watcher::pause`], [`Watcher::set_bandwidth`] and [`Watcher::stop`] control
//!   it.
//! - [`SavedFolders`] are the folders saved in `watch.toml` (the command line and the app share
//!   them).
//! - [`Queue`] is the persistent record (`watch.sqlite3` in the data folder): every file's
//!   fingerprint and [`State`] ([`FileRecord`]), every sample made ([`SampleRecord`]) and every
//!   run seen ([`RunRecord`]). A status view reads it while a watcher runs.
//!
//! How a file becomes a sample: file-system events and a polling pass feed one path; a file
//! settles once two polling passes saw the same size and modification time, it is older than
//! the minimum age and (gzip) it decodes to its end, which also gives its SHA-256. A run's
//! samples are made once the run is complete (completion markers, sample sheet, MinKNOW final
//! summary). Each sample is recorded in the queue with an `external_sample_id` derived from
//! its name, run and content hashes; it is created on the service awaiting data under that id
//! before its file is sent, so after any crash the service itself says whether it is done.

pub mod alerts;
mod config;
mod control;
mod error;
mod events;
mod follower;
pub mod illumina;
pub mod live;
pub mod nanopore;
mod plan;
mod plan_illumina;
mod plan_nanopore;
mod queue;
mod saved;
mod scan;
mod scanner;
mod settle;
mod spec;
mod upload;
mod uploader;
mod watcher;

pub use alerts::{Alert, AlertRule, TaxonCount};
pub use config::{FolderConfig, IlluminaOptions, Layout, NanoporeGrouping, Options};
pub use error::Error;
pub use events::Event;
pub use live::{LiveGroup, LivePoint, LiveRun};
pub use queue::{Classification, FileRecord, QUEUE_FILE, Queue, RunRecord, SampleRecord, State};
pub use saved::{PAUSE_FILE, SAVED_FILE, SavedFolders};
pub use spec::{RunKind, RunState};
pub use watcher::{LOCK_FILE, Watcher};
