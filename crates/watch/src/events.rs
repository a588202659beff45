//! What a running watcher reports: files found and settled, runs waiting, failed or uploaded,
//! samples queued, uploading, confirmed or failed, and uploads paused or resumed.

use std::path::PathBuf;
use std::time::Duration;

use crate::spec::RunKind;

/// What the watcher reports as it goes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A file that matters appeared (or changed).
    FileSeen {
        /// The file.
        path: PathBuf,
    },
    /// A file stopped changing and reads to its end.
    FileSettled {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
    /// A file stopped changing but does not read to its end (a cut gzip); it is looked at
    /// again if it changes.
    FileUnreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A run folder is waiting for something (said in words).
    RunWaiting {
        /// The run folder.
        run: PathBuf,
        /// Illumina or Nanopore.
        kind: RunKind,
        /// The run id.
        run_id: String,
        /// What it waits for.
        reason: String,
    },
    /// The instrument reports the run failed: nothing of it is uploaded.
    RunFailed {
        /// The run folder.
        run: PathBuf,
        /// Illumina or Nanopore.
        kind: RunKind,
        /// The run id.
        run_id: String,
        /// The instrument's status and message.
        reason: String,
    },
    /// Every sample of a complete run is on the service.
    RunUploaded {
        /// The run folder.
        run: PathBuf,
        /// Illumina or Nanopore.
        kind: RunKind,
        /// The run id.
        run_id: String,
        /// How many samples it made.
        samples: usize,
    },
    /// A sample is ready and queued for upload.
    SampleQueued {
        /// Its key in the queue.
        key: String,
        /// Its name.
        name: String,
        /// Its `external_sample_id`.
        external_id: String,
        /// The files it is made of.
        files: Vec<PathBuf>,
    },
    /// Upload progress (at most a few times a second).
    Uploading {
        /// The sample's key.
        key: String,
        /// Its name.
        name: String,
        /// Bytes sent.
        sent: u64,
        /// Bytes in all.
        total: u64,
    },
    /// A sample is on the service.
    SampleConfirmed {
        /// Its key.
        key: String,
        /// Its name.
        name: String,
        /// Its id on the service.
        sample_id: String,
        /// Its `external_sample_id`.
        external_id: String,
        /// It was found already there (an earlier attempt finished it): nothing was sent.
        already_there: bool,
    },
    /// An attempt to make a sample failed.
    SampleFailed {
        /// Its key.
        key: String,
        /// Its name.
        name: String,
        /// Why.
        error: String,
        /// When it is tried again; `None`: not before the next start.
        retry_in: Option<Duration>,
    },
    /// Starting a job on a new sample failed (the sample itself is fine).
    JobFailed {
        /// The sample's name.
        name: String,
        /// The job.
        job: String,
        /// Why.
        error: String,
    },
    /// A sample's classification finished; what it found is in the queue (the run
    /// dashboard).
    Classified {
        /// Its key.
        key: String,
        /// Its name.
        name: String,
        /// Its id on the service.
        sample_id: String,
        /// Its reads.
        reads: u64,
    },
    /// A sample's classification failed on the service.
    ClassificationFailed {
        /// Its key.
        key: String,
        /// Its name.
        name: String,
        /// Why, as the service said.
        error: String,
    },
    /// A sample (or a live run's barcode, its batches summed) crossed an alert rule; each
    /// fires once per sample (or barcode) and taxon.
    Alert(crate::alerts::Alert),
    /// Uploads paused (by [`Watcher::pause`](crate::Watcher::pause) or the pause file).
    Paused,
    /// Uploads resumed.
    Resumed,
}
