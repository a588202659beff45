//! The uploader task: takes the queue's samples one at a time, makes each on the service
//! through [`upload::make`], starts its jobs, and retries what failed with backoff. Pausing
//! stops the transfer under way.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mgds_client::{CancellationToken, Client};
use mgds_upload::Source;
use tokio::sync::mpsc;

use crate::Error;
use crate::config::{FolderConfig, Options};
use crate::control::Control;
use crate::events::Event;
use crate::queue::{Queue, SampleRecord, State};
use crate::upload::{self, Outcome};

/// The uploader task, over every watched folder.
pub(crate) struct Uploader {
    /// The watched folders, with their paths made absolute.
    pub folders: Vec<FolderConfig>,
    pub options: Options,
    pub queue: Queue,
    pub client: Client,
    /// Where joined files are staged.
    pub staging: PathBuf,
    pub events: mpsc::UnboundedSender<Event>,
    pub control: Arc<Control>,
    /// Tells the scanner the keys of confirmed samples (a run is uploaded once all are).
    pub confirmed: mpsc::UnboundedSender<String>,
}

impl Uploader {
    /// Runs until `stop`.
    pub async fn run(self, stop: CancellationToken) -> Result<(), Error> {
        // The pause file is looked for at this pace while paused or idle.
        let idle = self.options.poll_interval.min(Duration::from_secs(1));
        loop {
            if stop.is_cancelled() {
                return Ok(());
            }
            if self.control.is_paused() {
                tokio::select! {
                    () = stop.cancelled() => return Ok(()),
                    () = self.control.wake.notified() => {},
                    () = tokio::time::sleep(idle) => {},
                }
                continue;
            }
            let Some(s) = self.queue.next_due().await? else {
                let wait = self.queue.next_retry_in().await?.map_or(idle, |d| d.min(idle));
                tokio::select! {
                    () = stop.cancelled() => return Ok(()),
                    () = self.control.wake.notified() => {},
                    () = tokio::time::sleep(wait) => {},
                }
                continue;
            };
            let Some(cfg) = self.folders.iter().find(|f| f.path == s.folder).cloned() else {
                // A folder no longer watched: its queued samples wait for it.
                self.queue.attempt_failed(&s.key, "its folder is no longer watched", None).await?;
                continue;
            };
            if s.state == State::Confirmed {
                self.start_jobs(&cfg, &s).await?;
                continue;
            }
            self.upload(&cfg, &s, &stop).await?;
        }
    }

    async fn upload(&self, cfg: &FolderConfig, s: &SampleRecord, stop: &CancellationToken) -> Result<(), Error> {
        let cancel = stop.child_token();
        let progress = {
            let events = self.events.clone();
            let (key, name) = (s.key.clone(), s.name.clone());
            let last = std::sync::Mutex::new(None::<Instant>);
            Box::new(move |sent: u64, total: u64| {
                let mut l = last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if sent == total || l.is_none_or(|t| t.elapsed() >= Duration::from_millis(250)) {
                    *l = Some(Instant::now());
                    let _ = events.send(Event::Uploading { key: key.clone(), name: name.clone(), sent, total });
                }
            })
        };
        let sha256 = match &s.recipe {
            Source::Single(path) => self.queue.sha256_of(path).await?,
            _ => None,
        };
        let ctx = upload::Ctx {
            client: &self.client,
            staging: &self.staging,
            bandwidth: &self.control.bandwidth,
            cancel: cancel.clone(),
            progress,
            sha256,
        };
        // Pausing stops the transfer under way.
        let watch_pause = async {
            loop {
                tokio::time::sleep(Duration::from_millis(200)).await;
                if self.control.is_paused() {
                    cancel.cancel();
                    return;
                }
            }
        };
        let (outcome, id) = tokio::select! {
            r = upload::make(ctx, cfg, s) => r,
            () = watch_pause => (Outcome::Stopped, None),
        };
        if let Some(id) = &id
            && s.sample_id.as_deref() != Some(id)
        {
            self.queue.set_sample_id(&s.key, id).await?;
        }
        match outcome {
            Outcome::Confirmed(sample_id, already_there) => {
                self.queue.confirm(&s.key, &sample_id).await?;
                let _ = self.confirmed.send(s.key.clone());
                self.control.classified_wake.notify_one();
                let _ = self.events.send(Event::SampleConfirmed {
                    key: s.key.clone(),
                    name: s.name.clone(),
                    sample_id: sample_id.clone(),
                    external_id: s.external_id.clone(),
                    already_there,
                });
                if s.jobs_pending {
                    let mut s = s.clone();
                    s.sample_id = Some(sample_id);
                    self.start_jobs(cfg, &s).await?;
                }
            }
            Outcome::Stopped => {}
            Outcome::Transient(error) => {
                let retry_in = self.backoff(s.attempts);
                self.queue.attempt_failed(&s.key, &error, Some(retry_in)).await?;
                let _ = self.events.send(Event::SampleFailed {
                    key: s.key.clone(),
                    name: s.name.clone(),
                    error,
                    retry_in: Some(retry_in),
                });
            }
            Outcome::Permanent(error) => {
                self.queue.attempt_failed(&s.key, &error, None).await?;
                let _ = self.events.send(Event::SampleFailed {
                    key: s.key.clone(),
                    name: s.name.clone(),
                    error,
                    retry_in: None,
                });
            }
        }
        Ok(())
    }

    /// Doubling from the first wait, with up to a quarter of jitter, capped.
    fn backoff(&self, attempts: u32) -> Duration {
        let base = self.options.initial_backoff.saturating_mul(1u32 << attempts.min(16)).min(self.options.max_backoff);
        let nanos = u64::from(std::process::id()).wrapping_mul(0x9E37_79B9).wrapping_add(u64::from(attempts)) % 1000;
        base + base / 4 * u32::try_from(nanos).unwrap_or(0) / 1000
    }

    async fn start_jobs(&self, cfg: &FolderConfig, s: &SampleRecord) -> Result<(), Error> {
        let Some(id) = &s.sample_id else {
            return self.queue.jobs_started(&s.key).await;
        };
        for job in &cfg.jobs {
            if let Err(e) = self.client.jobs().run(job.as_str(), id.as_str()).send().await {
                let _ =
                    self.events.send(Event::JobFailed { name: s.name.clone(), job: job.clone(), error: e.to_string() });
            }
        }
        self.queue.jobs_started(&s.key).await
    }
}
