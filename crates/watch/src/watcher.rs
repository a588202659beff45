//! The running watcher's handle: it takes the lock on the data folder, starts the scanner task
//! (events and polling feeding one path, settling, planning), the uploader task (the queue,
//! one sample at a time) and the follower task (classifications and alerts), and pauses,
//! limits and stops them.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use mgds_client::{CancellationToken, Client};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::Error;
use crate::config::{FolderConfig, Options};
use crate::control::Control;
use crate::events::Event;
use crate::follower::Follower;
use crate::queue::Queue;
use crate::scanner::Scanner;
use crate::uploader::Uploader;

/// A running watcher over one or more folders. Start it with [`Watcher::start`]; end it with
/// [`Watcher::stop`].
pub struct Watcher {
    stop: CancellationToken,
    control: Arc<Control>,
    queue: Queue,
    tasks: Vec<JoinHandle<Result<(), Error>>>,
    _lock: std::fs::File,
}

/// The file that keeps a second watcher off the same queue.
pub const LOCK_FILE: &str = "watch.lock";

impl Watcher {
    /// Starts watching `folders`, uploading through `client`, with the queue in `data_dir`
    /// (`watch.sqlite3`; also a `watch-staging/` folder for joined files). Events arrive on
    /// the receiver (dropping it is fine).
    pub async fn start(
        folders: Vec<FolderConfig>,
        options: Options,
        client: Client,
        data_dir: impl AsRef<Path>,
    ) -> Result<(Watcher, mpsc::UnboundedReceiver<Event>), Error> {
        let data_dir = data_dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&data_dir).map_err(|e| Error::io("create", &data_dir, e))?;
        let lock_path = data_dir.join(LOCK_FILE);
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| Error::io("create", &lock_path, e))?;
        if lock.try_lock().is_err() {
            return Err(Error::Locked { path: lock_path });
        }
        let queue = Queue::open(&data_dir).await?;
        queue.retry_failed().await?;
        let follow_queue = queue.clone();
        let (tx, rx) = mpsc::unbounded_channel();
        let stop = CancellationToken::new();
        let control = Arc::new(Control::new(&options));
        let (confirmed_tx, confirmed_rx) = mpsc::unbounded_channel();
        let (scanner, ev_rx) =
            Scanner::new(folders, options.clone(), queue.clone(), tx.clone(), control.clone()).await?;
        let staging = data_dir.join("watch-staging");
        // The lock is held: whatever is staged there was left by a watcher that stopped mid-way.
        mgds_upload::sweep_staging(&staging);
        let follower = Follower {
            folders: scanner.folders(),
            options: options.clone(),
            queue: queue.clone(),
            client: client.clone(),
            events: tx.clone(),
            control: control.clone(),
            waiting: Arc::default(),
            stop: stop.clone(),
        };
        let uploader = Uploader {
            folders: scanner.folders(),
            options,
            queue: queue.clone(),
            client,
            staging,
            events: tx,
            control: control.clone(),
            confirmed: confirmed_tx,
        };
        let s_stop = stop.clone();
        let u_stop = stop.clone();
        let f_stop = stop.clone();
        // A task that fails (the queue file became unwritable) stops the other one too.
        let tasks = vec![
            tokio::spawn(async move {
                let r = scanner.run(s_stop.clone(), ev_rx, confirmed_rx).await;
                if r.is_err() {
                    s_stop.cancel();
                }
                r
            }),
            tokio::spawn(async move {
                let r = uploader.run(u_stop.clone()).await;
                if r.is_err() {
                    u_stop.cancel();
                }
                r
            }),
            tokio::spawn(async move {
                let r = follower.run(f_stop.clone()).await;
                if r.is_err() {
                    f_stop.cancel();
                }
                r
            }),
        ];
        Ok((Watcher { stop, control, queue: follow_queue, tasks, _lock: lock }, rx))
    }

    /// Pauses uploads: an upload under way stops (it starts again from the beginning on
    /// resume; nothing half-made is left as a sample). Scanning goes on.
    pub fn pause(&self) {
        self.control.paused.store(true, Ordering::Relaxed);
        self.control.wake.notify_one();
    }

    /// Resumes uploads (unless the pause file is there).
    pub fn resume(&self) {
        self.control.paused.store(false, Ordering::Relaxed);
        self.control.wake.notify_one();
    }

    /// Whether uploads are paused (by [`Watcher::pause`] or the pause file).
    pub fn is_paused(&self) -> bool {
        self.control.is_paused()
    }

    /// Changes the upload speed limit (bytes per second, 0: none) at once.
    pub fn set_bandwidth(&self, bytes_per_sec: u64) {
        self.control.bandwidth.set_limit(bytes_per_sec);
    }

    /// Looks after a sample made elsewhere (uploaded from the app's window) as after the
    /// watched folders' samples: its classification is followed, across restarts, and the
    /// alert rules for every folder ([`Options::alerts`]) are checked against it once it is
    /// classified. `name` labels its alerts; `source` is the files it was made from.
    pub async fn follow(&self, sample_id: &str, name: &str, source: &mgds_upload::Source) -> Result<(), Error> {
        self.queue.add_followed(sample_id, name, source).await?;
        self.control.classified_wake.notify_one();
        Ok(())
    }

    /// Stops: scanning ends, an upload under way is abandoned (and resumes at the next start).
    /// Answers the first error a task ended with, if any.
    pub async fn stop(self) -> Result<(), Error> {
        self.stop.cancel();
        self.wait().await
    }

    /// Waits until the watcher ends (after a fatal error of the queue).
    pub async fn wait(mut self) -> Result<(), Error> {
        let mut first = Ok(());
        for t in self.tasks.drain(..) {
            match t.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    self.stop.cancel();
                    if first.is_ok() {
                        first = Err(e);
                    }
                }
                Err(e) => tracing::error!("a watcher task failed: {e}"),
            }
        }
        first
    }
}
