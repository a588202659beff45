//! What the [`Watcher`](crate::Watcher) handle shares with its two tasks: whether uploads are
//! paused, the speed limit, and the nudges that wake the uploader and the follower. Its own module because the
//! handle, the scanner and the uploader all hold it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use mgds_client::Bandwidth;
use tokio::sync::Notify;

use crate::config::Options;

/// Shared between the handle and the tasks.
pub(crate) struct Control {
    pub paused: AtomicBool,
    pub pause_file: Option<PathBuf>,
    pub bandwidth: Bandwidth,
    pub wake: Notify,
    /// Wakes the follower (a sample was just confirmed).
    pub classified_wake: Notify,
}

impl Control {
    pub fn new(options: &Options) -> Control {
        Control {
            paused: AtomicBool::new(false),
            pause_file: options.pause_file.clone(),
            bandwidth: Bandwidth::new(options.bandwidth),
            wake: Notify::new(),
            classified_wake: Notify::new(),
        }
    }

    pub fn is_paused(&self) -> bool {
        self.paused.load(Ordering::Relaxed) || self.pause_file.as_ref().is_some_and(|p| p.exists())
    }
}
