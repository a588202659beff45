//! How an upload can end other than with its sample.

use std::path::PathBuf;

use mgds_api::ErrorCode;

/// Why an upload did not make its sample. [`UploadError::is_transient`] says whether trying
/// again later may help; [`UploadError::code`] names the service's refusal, when it said which.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UploadError {
    /// The caller cancelled it; nothing of it was left behind.
    #[error("the upload was cancelled")]
    Cancelled,
    /// A file is not sequence data, or two files are not the two reads of a pair (the error
    /// names the file, the line and the record).
    #[error(transparent)]
    File(Box<mgds_formats::Error>),
    /// A file could not be read.
    #[error("cannot read {}; check that it is still there and that you may read it", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// Files to join end to end mix gzip and uncompressed ones.
    #[error(
        "{} is gzip-compressed but {} is not; files joined into one sample must be compressed alike (gzip both, or neither)",
        .gzip.display(), .plain.display()
    )]
    MixedCompression {
        /// A gzip file among them.
        gzip: PathBuf,
        /// An uncompressed file among them.
        plain: PathBuf,
    },
    /// The joined file could not be written where uploads are prepared.
    #[error("cannot prepare the file to upload in {}; check that the disk is not full", .dir.display())]
    Staging {
        /// The staging folder.
        dir: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The file being made could not be written on (a pipe into the transfer that closed).
    #[error("the file being sent could not be written: {0}")]
    Write(#[source] std::io::Error),
    /// The service (or the way to it) refused or failed; see [`mgds_client::Error`].
    #[error(transparent)]
    Service(mgds_client::Error),
}

impl UploadError {
    /// Whether the same upload may succeed if tried again later (the service could not be
    /// reached, failed or was busy). A bad file, a refusal or a cancel stays as it is.
    pub fn is_transient(&self) -> bool {
        match self {
            UploadError::Service(e) => e.is_transient(),
            _ => false,
        }
    }

    /// The service's name for its refusal, when it gave one.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            UploadError::Service(e) => e.code(),
            _ => None,
        }
    }
}

impl From<mgds_client::Error> for UploadError {
    fn from(e: mgds_client::Error) -> Self {
        match e {
            mgds_client::Error::Cancelled => UploadError::Cancelled,
            other => UploadError::Service(other),
        }
    }
}
