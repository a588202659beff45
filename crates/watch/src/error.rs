//! The one error type of the watcher.

use std::path::{Path, PathBuf};

/// What can stop a watcher from starting or running.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or folder could not be read or written.
    #[error("cannot {action} {}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// The queue file could not be read or written.
    #[error("the watch queue {} cannot be used", path.display())]
    Queue {
        /// The queue file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: sqlx::Error,
    },
    /// An include or exclude pattern is not a valid glob.
    #[error("the pattern {pattern:?} is not a valid glob")]
    Pattern {
        /// The pattern.
        pattern: String,
        /// What is wrong with it.
        #[source]
        source: globset::Error,
    },
    /// File-system events could not be set up (the watcher can still poll: `--no-events`).
    #[error("cannot listen to file-system events for {}; use polling only (--no-events)", path.display())]
    Events {
        /// The folder.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: notify::Error,
    },
    /// Another watcher already uses this data folder's queue.
    #[error("another watcher is already running on {}; stop it first", path.display())]
    Locked {
        /// The lock file.
        path: PathBuf,
    },
    /// The saved folders file cannot be read or written.
    #[error("the watched folders in {} cannot be read: {message}; fix or delete that file", path.display())]
    Saved {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The folder is already watched.
    #[error("{} is already watched; change its settings instead of adding it again", path.display())]
    AlreadySaved {
        /// The folder.
        path: PathBuf,
    },
    /// The folder to change is not among the saved ones.
    #[error("{} is not a watched folder", path.display())]
    NotSaved {
        /// The folder.
        path: PathBuf,
    },
    /// A watched folder does not exist or is not a folder.
    #[error("{} is not a folder", path.display())]
    NotAFolder {
        /// The path.
        path: PathBuf,
    },
}

impl Error {
    pub(crate) fn io(action: &'static str, path: &Path, source: std::io::Error) -> Error {
        Error::Io { action, path: path.to_path_buf(), source }
    }
}
