//! The follower task: looks after each sample the watcher made until its classification
//! finishes, keeps what it found in the queue (the run dashboard's numbers), and checks the
//! alert rules: a sample against its own taxa, a live run's batch against its barcode's
//! batches summed. Each alert fires once per sample (or run barcode) and taxon, even across
//! restarts.

use std::sync::Arc;
use std::time::Duration;

use mgds_client::{CancellationToken, Client};
use tokio::sync::mpsc;

use crate::Error;
use crate::alerts::{Alert, AlertRule, Taxa};
use crate::config::{FolderConfig, Options};
use crate::control::Control;
use crate::events::Event;
use crate::live::{group_of, group_subject};
use crate::queue::{Queue, ToFollow};

/// Samples looked at per pass.
const PER_PASS: usize = 64;

/// A sample with no classification after this many looks is left alone (the service runs
/// none on upload, or it was deleted).
const LOOKS_FOR_NONE: u32 = 5;

/// Classifications waited for at once ([`Follower::wait_for`]); others are looked at on the
/// next pass.
const WAITING_AT_ONCE: usize = 32;
/// How long one wait asks the service to hold its answer (an MGDS service holds it until the
/// classification is complete, at most this long; another answers at once).
const WAIT_SECS: u64 = 25;
/// Waits of one classification in a row, at most (10 minutes).
const WAIT_ROUNDS: u32 = 24;

pub(crate) struct Follower {
    pub folders: Vec<FolderConfig>,
    pub options: Options,
    pub queue: Queue,
    pub client: Client,
    pub events: mpsc::UnboundedSender<Event>,
    pub control: Arc<Control>,
    /// The classifications being waited for.
    pub waiting: Arc<std::sync::Mutex<std::collections::HashSet<String>>>,
    /// Cancelled when the watcher stops: the waits end with it.
    pub stop: CancellationToken,
}

/// What one look found.
enum Look {
    Waiting(Option<String>),
    Done(String, Taxa),
    Failed(Option<String>, String),
    None(String),
}

impl Follower {
    /// Runs until `stop`.
    pub async fn run(self, stop: CancellationToken) -> Result<(), Error> {
        let pace = self.options.poll_interval.clamp(Duration::from_millis(200), Duration::from_secs(10));
        let mut last_paced: Option<std::time::Instant> = None;
        loop {
            // Passes come at the pace and at every wake (an upload confirmed, a classification
            // finished); a look that finds no classification yet counts towards giving up on
            // the sample only once per pace, so that a burst of wakes does not use up its looks.
            let paced = last_paced.is_none_or(|t| t.elapsed() >= pace);
            if paced {
                last_paced = Some(std::time::Instant::now());
            }
            let due = self.queue.to_follow(PER_PASS).await?;
            for f in &due {
                if stop.is_cancelled() {
                    return Ok(());
                }
                self.follow(f, paced).await?;
            }
            tokio::select! {
                () = stop.cancelled() => return Ok(()),
                () = self.control.classified_wake.notified() => {},
                () = tokio::time::sleep(pace) => {},
            }
        }
    }

    /// Looks at one sample's classification once and records what it found (a look that finds
    /// no classification yet, only on a `paced` pass).
    async fn follow(&self, f: &ToFollow, paced: bool) -> Result<(), Error> {
        let s = &f.sample;
        let look = match self.look(s.sample_id.as_deref().unwrap_or_default(), f.checks, paced).await {
            Ok(look) => look,
            Err(e) if e.status() == Some(404) => Look::None("the sample is no longer on the service".into()),
            Err(e) => {
                // The service is away or busy: looked at again on a later pass.
                tracing::debug!("classification of {} not looked at: {e}", s.name);
                Look::Waiting(None)
            }
        };
        match look {
            Look::Waiting(None) if !paced => Ok(()),
            Look::Waiting(analysis) => {
                if let Some(id) = &analysis {
                    self.wait_for(id);
                }
                self.queue.set_classification(s, "waiting", analysis.as_deref(), None, None).await
            }
            Look::None(why) => self.queue.set_classification(s, "none", None, None, Some(&why)).await,
            Look::Failed(analysis, why) => {
                self.queue.set_classification(s, "failed", analysis.as_deref(), None, Some(&why)).await?;
                let _ = self.events.send(Event::ClassificationFailed {
                    key: s.key.clone(),
                    name: s.name.clone(),
                    error: why,
                });
                Ok(())
            }
            Look::Done(analysis, taxa) => {
                self.queue.set_classification(s, "done", Some(&analysis), Some(&taxa), None).await?;
                let _ = self.events.send(Event::Classified {
                    key: s.key.clone(),
                    name: s.name.clone(),
                    sample_id: s.sample_id.clone().unwrap_or_default(),
                    reads: taxa.total,
                });
                self.check_alerts(f, &taxa).await
            }
        }
    }

    /// Waits, on a task of its own, until classification `id` is complete, then wakes the
    /// follower: the dashboard and the alerts learn of it as soon as the service stores it
    /// (`?wait=`, one request held open at a time), not at the next pass.
    fn wait_for(&self, id: &str) {
        {
            let Ok(mut waiting) = self.waiting.lock() else { return };
            if waiting.len() >= WAITING_AT_ONCE || !waiting.insert(id.to_string()) {
                return;
            }
        }
        let (client, control, waiting, id, stop) =
            (self.client.clone(), self.control.clone(), self.waiting.clone(), id.to_string(), self.stop.clone());
        tokio::spawn(async move {
            let classifications = client.classifications();
            let mut complete = false;
            // At most WAIT_ROUNDS waits (a classification that takes longer is waited for again
            // from a later pass).
            for _ in 0..WAIT_ROUNDS {
                let asked = std::time::Instant::now();
                let answer = tokio::select! {
                    () = stop.cancelled() => break,
                    a = classifications.when_complete(id.as_str(), WAIT_SECS) => a,
                };
                match answer {
                    Ok(a) if a.complete => {
                        complete = true;
                        break;
                    }
                    // Held for its time: still running.
                    Ok(_) if asked.elapsed() >= Duration::from_secs(WAIT_SECS / 2) => {}
                    // Answered at once (a service without `?wait`), or an error: left to the
                    // passes, without waking them.
                    Ok(_) | Err(_) => break,
                }
            }
            if let Ok(mut w) = waiting.lock() {
                w.remove(&id);
            }
            if complete {
                control.classified_wake.notify_one();
            }
        });
    }

    async fn look(&self, sample_id: &str, checks: u32, paced: bool) -> Result<Look, mgds_client::Error> {
        let sample = self.client.samples().get(sample_id).await?;
        let Some(classification) = sample.primary_classification else {
            return Ok(if paced && checks + 1 >= LOOKS_FOR_NONE {
                Look::None("the service made no classification of it".into())
            } else {
                Look::Waiting(None)
            });
        };
        let id = classification.id().to_string();
        let analysis = self.client.analyses().get(id.as_str()).await?;
        if !analysis.complete {
            return Ok(Look::Waiting(Some(id)));
        }
        if !analysis.success {
            let why = analysis.error_msg.unwrap_or_else(|| "the classification failed".into());
            return Ok(Look::Failed(Some(id), why));
        }
        let results = self.client.classifications().results(id.as_str()).await?;
        Ok(Look::Done(id, Taxa::from_results(&results)))
    }

    /// The rules for samples of `folder`: every folder's, then its own.
    fn rules(&self, folder: &std::path::Path) -> Vec<AlertRule> {
        let own = self.folders.iter().filter(|c| c.path == folder).flat_map(|c| c.alerts.iter().cloned());
        self.options.alerts.iter().cloned().chain(own).collect()
    }

    /// Checks the rules after a sample's classification finished: a batch of a live run by
    /// its barcode's batches summed, any other sample by its own taxa.
    async fn check_alerts(&self, f: &ToFollow, taxa: &Taxa) -> Result<(), Error> {
        let s = &f.sample;
        let rules = self.rules(&s.folder);
        if rules.is_empty() {
            return Ok(());
        }
        let at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let batch_of = s.run.as_deref().map(|run| (run, group_of(run, s))).filter(|(_, (_, batch))| *batch);
        let (subject, label, summed) = match batch_of {
            Some((run, (group, _))) => {
                let run_id = s.run_id.clone().unwrap_or_default();
                let members = self.queue.classifications(Some(run)).await?;
                let parts: Vec<&Taxa> = members
                    .iter()
                    .filter(|(m, _)| group_of(run, m) == (group.clone(), true))
                    .filter_map(|(_, c)| c.as_ref().and_then(|c| c.taxa.as_ref()))
                    .collect();
                (group_subject(run, &group), format!("run {run_id}, {group}"), Taxa::sum(parts))
            }
            None => (s.sample_id.clone().unwrap_or_default(), s.name.clone(), taxa.clone()),
        };
        for c in summed.crossings(&rules) {
            let alert = Alert {
                subject: subject.clone(),
                label: label.clone(),
                sample_id: s.sample_id.clone(),
                run_id: s.run_id.clone(),
                rule: c.rule.to_string(),
                tax_id: c.taxon.tax_id.clone(),
                taxon: c.taxon.name.clone(),
                reads: c.taxon.reads,
                percent: c.percent,
                at: at.clone(),
            };
            if self.queue.record_alert(&alert).await? {
                tracing::warn!("alert: {}", alert.message());
                let _ = self.events.send(Event::Alert(alert));
            }
        }
        Ok(())
    }
}
