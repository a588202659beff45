//! From files on disk to samples: the one upload pipeline that MGDS Desktop, `mgds upload` and
//! the folder watcher share.
//!
//! - [`sequence_files`] turns the paths a user gives (files, folders) into the sequence files to
//!   consider; [`find_pairs`] and [`plan`] group them into one [`Source`] per sample, with read
//!   pairs found by file name or read headers.
//! - [`Source`] says how one sample's file is made: one file as it is, files joined end to end,
//!   or R1/R2 pairs interleaved.
//! - [`Upload`] makes the sample: it prepares the file (a staged file for joined and
//!   interleaved sources, removed however the upload ends), sends it with progress, a speed
//!   limit and cancellation, confirms it, and tries again what is worth trying again. It reports
//!   [`Progress`] and ends with the sample or an [`UploadError`] whose kind tells the caller what
//!   to do.
//!
//! The walk is the same for every door: file -> check -> this pipeline -> client -> service ->
//! store. Each door keeps only its own front: the app's queue and window events, the command
//! line's progress bars and exit codes, the watcher's restart-proof journal.

mod error;
mod files;
mod pipeline;
mod source;

pub use error::UploadError;
pub use files::{FilesError, Plan, find_pairs, plan, sequence_files};
pub use pipeline::{Progress, Target, Upload, sweep_staging};
pub use source::Source;
