//! The live run dashboard: for each run folder the watcher knows, one line per barcode (or
//! sample) with its batches uploaded, classified and failed, its reads so far, and what its
//! classified batches found together, as it grew batch by batch. Everything comes from the
//! queue, so the dashboard is the same after a restart mid-run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sqlx::Row;

use crate::Error;
use crate::alerts::{Alert, Taxa, TaxonCount};
use crate::queue::{Classification, Queue, SampleRecord, State};

/// The group a sample of run folder `run` belongs to on the dashboard, and whether the sample
/// is one batch of it. A MinKNOW batch file made into a sample of its own
/// (`fastq_pass/barcode07/..._12.fastq.gz`, grouped per file) is a batch of its barcode
/// (`barcode07`; `no barcode` when the run has none); any other sample is a group of its own.
pub fn group_of(run: &Path, sample: &SampleRecord) -> (String, bool) {
    if let mgds_upload::Source::Single(p) = &sample.recipe {
        let rel: Vec<String> = p
            .strip_prefix(run)
            .unwrap_or(p)
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let stem = rel.last().and_then(|f| mgds_api::sequence_file_stem(f));
        if rel.first().is_some_and(|c| c.starts_with("fastq_")) && stem == Some(sample.name.as_str()) {
            let group = if rel.len() > 2 { rel[1].clone() } else { "no barcode".to_string() };
            return (group, true);
        }
    }
    (sample.name.clone(), false)
}

/// The subject of a run group's alerts: the run folder and the group. The folder, not the run
/// id, because a MinKNOW run's id changes when its final summary appears (the folder's name
/// until then, `protocol_run_id` after), and a batch classified after that must not raise the
/// barcode's alerts again.
pub fn group_subject(run: &Path, group: &str) -> String {
    format!("run:{}/{group}", run.display())
}

/// A run on the dashboard.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LiveRun {
    /// The run folder.
    pub path: PathBuf,
    /// The run id.
    pub run_id: String,
    /// `illumina` or `nanopore`.
    pub kind: String,
    /// `waiting` (sequencing, or files still being written), `complete`, `uploaded` or
    /// `failed`, as the watcher last saw it.
    pub state: String,
    /// What it waits for, or why it failed.
    pub detail: Option<String>,
    /// The instrument finished the run (its completion marker or final summary is there).
    pub finished: bool,
    /// When the run's state last changed (RFC 3339): when it finished, once finished.
    pub updated_at: Option<String>,
    /// Its barcodes (or samples), by name.
    pub groups: Vec<LiveGroup>,
}

/// One barcode (or sample) of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LiveGroup {
    /// The barcode, or the sample's name.
    pub name: String,
    /// Samples made of it so far: its batches, or the one sample.
    pub batches: u32,
    /// Of those, on the service.
    pub uploaded: u32,
    /// Whose upload failed (and waits for a retry).
    pub upload_failed: u32,
    /// Whose classification finished.
    pub classified: u32,
    /// Whose classification failed.
    pub classification_failed: u32,
    /// Reads in its classified batches.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub reads: u64,
    /// The most abundant taxa at the dashboard's rank across its classified batches, most
    /// reads first.
    pub taxa: Vec<TaxonCount>,
    /// Each of those taxa's colour (`#RRGGBB`), as every chart draws it
    /// ([`mgds_api::palette`]).
    pub colours: Vec<String>,
    /// How the shares of those taxa grew as each batch's classification finished.
    pub series: Vec<LivePoint>,
    /// Its alerts (the group's, and its samples').
    pub alerts: Vec<Alert>,
    /// The ids of its samples on the service.
    pub sample_ids: Vec<String>,
}

/// The group after some of its batches were classified.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LivePoint {
    /// When the last of those batches finished (RFC 3339).
    pub at: String,
    /// Batches classified by then.
    pub batches: u32,
    /// Their reads.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub reads: u64,
    /// Each of the group's `taxa`, in the same order: its reads so far as a percentage of
    /// all the reads so far.
    pub percent: Vec<f64>,
}

/// The most points a group's series keeps (evenly spread, the last always kept).
const MAX_POINTS: usize = 400;

impl Queue {
    /// Every run folder the watcher knows, newest first, with its groups summed at `rank`
    /// (`species`, `genus`, ...) and the `top` taxa of each.
    pub async fn live_runs(&self, rank: &str, top: usize) -> Result<Vec<LiveRun>, Error> {
        let rows =
            sqlx::query("SELECT path, kind, run_id, state, detail, updated_at FROM runs ORDER BY updated_at DESC")
                .fetch_all(&self.pool)
                .await
                .map_err(|e| self.err(e))?;
        let alerts = self.alerts(100_000).await?;
        let mut runs = Vec::new();
        for r in rows {
            let path = PathBuf::from(r.get::<String, _>(0));
            let state: String = r.get(3);
            let run_id: String = r.get(2);
            let samples = self.classifications(Some(&path)).await?;
            let groups = groups(&path, &samples, &alerts, rank, top);
            runs.push(LiveRun {
                finished: matches!(state.as_str(), "complete" | "uploaded"),
                path,
                kind: r.get(1),
                run_id,
                state,
                detail: r.get(4),
                updated_at: r.get(5),
                groups,
            });
        }
        Ok(runs)
    }
}

/// The groups of one run, in name order.
fn groups(
    run: &Path,
    samples: &[(SampleRecord, Option<Classification>)],
    alerts: &[Alert],
    rank: &str,
    top: usize,
) -> Vec<LiveGroup> {
    let mut by_group: BTreeMap<String, Vec<&(SampleRecord, Option<Classification>)>> = BTreeMap::new();
    for s in samples {
        by_group.entry(group_of(run, &s.0).0).or_default().push(s);
    }
    by_group
        .into_iter()
        .map(|(name, members)| {
            let state = |st: State| members.iter().filter(|(s, _)| s.state == st).count() as u32;
            let c_state =
                |st: &str| members.iter().filter(|(_, c)| c.as_ref().is_some_and(|c| c.state == st)).count() as u32;
            // The classified batches in the order they finished.
            let mut done: Vec<(&str, &Taxa)> = members
                .iter()
                .filter_map(|(_, c)| {
                    let c = c.as_ref()?;
                    Some((c.finished_at.as_deref().unwrap_or_default(), c.taxa.as_ref()?))
                })
                .collect();
            done.sort_by(|a, b| a.0.cmp(b.0));
            let sum = Taxa::sum(done.iter().map(|(_, t)| *t));
            let taxa: Vec<TaxonCount> = sum.taxa.iter().filter(|t| t.rank == rank).take(top).cloned().collect();
            let series = series(&done, &taxa);
            let sample_ids: Vec<String> = members.iter().filter_map(|(s, _)| s.sample_id.clone()).collect();
            let subject = group_subject(run, &name);
            let alerts = alerts
                .iter()
                .filter(|a| a.subject == subject || a.sample_id.as_ref().is_some_and(|id| sample_ids.contains(id)))
                .cloned()
                .collect();
            LiveGroup {
                batches: members.len() as u32,
                uploaded: state(State::Confirmed),
                upload_failed: members
                    .iter()
                    .filter(|(s, _)| s.state == State::Failed || (s.state != State::Confirmed && s.error.is_some()))
                    .count() as u32,
                classified: c_state("done"),
                classification_failed: c_state("failed"),
                reads: sum.total,
                colours: {
                    let ids: Vec<&str> = taxa.iter().map(|t| t.tax_id.as_str()).collect();
                    mgds_api::palette::taxon_colours(&ids).into_iter().map(mgds_api::palette::hex).collect()
                },
                taxa,
                series,
                alerts,
                sample_ids,
                name,
            }
        })
        .collect()
}

/// The cumulative shares of `taxa` after each batch of `done` (in order), at most
/// [`MAX_POINTS`] of them.
fn series(done: &[(&str, &Taxa)], taxa: &[TaxonCount]) -> Vec<LivePoint> {
    let mut reads = vec![0u64; taxa.len()];
    let mut total = 0u64;
    let mut points = Vec::with_capacity(done.len().min(MAX_POINTS));
    let step = done.len().div_ceil(MAX_POINTS).max(1);
    for (i, (at, t)) in done.iter().enumerate() {
        total += t.total;
        for (k, taxon) in taxa.iter().enumerate() {
            if let Some(found) = t.taxa.iter().find(|c| c.tax_id == taxon.tax_id) {
                reads[k] += found.reads;
            }
        }
        if (i + 1) % step == 0 || i + 1 == done.len() {
            let percent =
                reads.iter().map(|&r| if total == 0 { 0.0 } else { r as f64 * 100.0 / total as f64 }).collect();
            points.push(LivePoint { at: (*at).to_string(), batches: i as u32 + 1, reads: total, percent });
        }
    }
    points
}
