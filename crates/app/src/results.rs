//! Analysis results for the UI: classification tables (cached, since the chart controls ask for
//! the same results again), panels, and the live state of a sample's analyses.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mgds_api::{ClassificationResults, Marker};
use mgds_client::{CancellationToken, Client};
use serde::Serialize;
use ts_rs::TS;

use crate::error::{CmdError, CmdResult};
use crate::samples::{self, AnalysisRow};

/// The last classification fetched (managed state).
#[derive(Default)]
pub struct ResultsCache {
    last: Mutex<Option<(String, Arc<ClassificationResults>)>>,
}

impl ResultsCache {
    /// The results of classification `id`, from the cache or the service.
    pub async fn classification(
        &self,
        client: &Client,
        base_url: &str,
        id: &str,
    ) -> CmdResult<Arc<ClassificationResults>> {
        let key = format!("{base_url} {id}");
        if let Some((k, r)) = &*self.last.lock().unwrap_or_else(|e| e.into_inner())
            && *k == key
        {
            return Ok(r.clone());
        }
        let r = Arc::new(client.classifications().results(id).await?);
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some((key, r.clone()));
        Ok(r)
    }
}

/// One sub-panel for the panels view.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SubPanelView {
    /// Its name.
    pub name: String,
    /// What it detects.
    pub description: String,
    /// Its markers.
    pub markers: Vec<Marker>,
    /// Markers found (present or probable).
    pub found: usize,
}

/// The panels view.
#[derive(Debug, Clone, Serialize, TS)]
pub struct PanelView {
    /// The panel's name.
    pub panel_name: String,
    /// Its sub-panels.
    pub sub_panels: Vec<SubPanelView>,
}

/// The results of panel analysis `id`.
pub async fn panel(client: &Client, id: &str) -> CmdResult<PanelView> {
    let r = client.panels().results(id).await?;
    let mut sub_panels = Vec::new();
    for s in mgds_formats::sub_panels(&r) {
        let (name, s) = s.map_err(|e| CmdError::new("bad_results", crate::error::sentence(&e.to_string())))?;
        let found = s.markers.iter().filter(|m| m.status != mgds_api::MarkerStatus::Absent).count();
        sub_panels.push(SubPanelView { name: name.to_string(), description: s.description, markers: s.markers, found });
    }
    Ok(PanelView { panel_name: r.panel_name, sub_panels })
}

/// The scores of the controls analysis `id` (a negative control's batch).
pub async fn controls(client: &Client, id: &str) -> CmdResult<crate::contamination::ContaminationView> {
    let v = client.analyses().results(id).await?;
    serde_json::from_value(v).map_err(|e| {
        CmdError::new("bad_results", format!("The service's scores of these controls could not be read ({e})."))
    })
}

/// The taxa a controls analysis of a sample's batch calls possible contaminants, for the
/// sample's page: the newest such analysis that scored the sample.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SampleContaminants {
    /// The controls analysis.
    pub analysis_id: String,
    /// The control it ran on.
    pub control_id: String,
    /// The control's name.
    pub control_name: String,
    /// The method in words.
    pub method_label: String,
    /// The threshold.
    pub threshold: f64,
    /// The rank scored.
    pub rank: String,
    /// When it was scored.
    pub created_at: String,
    /// Taxa called possible contaminants (tax id and name), lowest score first.
    pub flagged: Vec<FlaggedTaxon>,
    /// Other controls analyses that scored this sample (older, or of other batches).
    pub others: usize,
}

/// A taxon called a possible contaminant.
#[derive(Debug, Clone, Serialize, TS)]
pub struct FlaggedTaxon {
    /// Its tax id.
    pub tax_id: String,
    /// Its name.
    pub name: String,
    /// Its score.
    pub score: Option<f64>,
}

/// What the newest controls analysis of `sample_id`'s batch calls possible contaminants, or
/// `None` when no controls analysis has scored it (or the service has no such addition).
pub async fn sample_contaminants(client: &Client, sample_id: &str) -> CmdResult<Option<SampleContaminants>> {
    let scored_by = match client.samples().controls(sample_id).await {
        Ok(list) => list,
        // A service without the MGDS addition has no controls to mark with.
        Err(e) if e.status() == Some(404) || e.status() == Some(405) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let Some(newest) = scored_by.first() else { return Ok(None) };
    let id = newest.uri.rsplit('/').next().unwrap_or_default().to_string();
    let view = controls(client, &id).await?;
    let control_id = view.batch_of.as_ref().map(|b| b.control.clone()).unwrap_or_else(|| newest.sample.id().into());
    let control_name =
        view.controls.iter().find(|c| c.id == control_id).map(|c| c.name.clone()).unwrap_or_else(|| control_id.clone());
    Ok(Some(SampleContaminants {
        analysis_id: id,
        control_id,
        control_name,
        method_label: view.method_label.clone(),
        threshold: view.threshold,
        rank: view.rank.clone(),
        created_at: newest.created_at.clone(),
        flagged: view
            .rows
            .into_iter()
            .filter(|r| r.contaminant)
            .map(|r| FlaggedTaxon { tax_id: r.tax_id, name: r.name, score: r.score })
            .collect(),
        others: scored_by.len() - 1,
    }))
}

/// The analyses of one sample, as sent in `analyses-changed` events.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AnalysesChanged {
    /// The sample.
    pub sample_id: String,
    /// Its analyses.
    pub analyses: Vec<AnalysisRow>,
}

impl crate::events::ShellEvent for AnalysesChanged {
    const NAME: &'static str = "analyses-changed";
}

/// Watches the analyses of the sample on screen (managed state): one at a time.
#[derive(Default)]
pub struct Watcher {
    current: Mutex<Option<CancellationToken>>,
}

/// How long a sample is watched before the page must be reopened.
const WATCH_FOR: Duration = Duration::from_secs(30 * 60);

impl Watcher {
    /// Watches sample `id`, calling `emit` whenever its analyses change, until they are all
    /// finished, another sample is watched, or [`Watcher::stop`].
    pub fn watch(&self, client: Client, id: String, emit: impl Fn(AnalysesChanged) + Send + 'static) {
        let token = CancellationToken::new();
        if let Some(old) = self.current.lock().unwrap_or_else(|e| e.into_inner()).replace(token.clone()) {
            old.cancel();
        }
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            let mut last: Option<Vec<AnalysisRow>> = None;
            let mut interval = Duration::from_millis(500);
            while started.elapsed() < WATCH_FOR {
                if let Ok(now) = samples::analyses(&client, &id).await {
                    let settled = !now.is_empty() && now.iter().all(|a| a.state != samples::AnalysisState::Running);
                    if last.as_ref() != Some(&now) {
                        emit(AnalysesChanged { sample_id: id.clone(), analyses: now.clone() });
                        last = Some(now);
                        interval = Duration::from_millis(500);
                    }
                    if settled {
                        return;
                    }
                }
                tokio::select! {
                    () = tokio::time::sleep(interval) => {}
                    () = token.cancelled() => return,
                }
                interval = (interval * 3 / 2).min(Duration::from_secs(5));
            }
        });
    }

    /// Stops watching.
    pub fn stop(&self) {
        if let Some(t) = self.current.lock().unwrap_or_else(|e| e.into_inner()).take() {
            t.cancel();
        }
    }
}

/// A classification's table, for the taxa table.
#[derive(Debug, Serialize, TS)]
pub struct ClassificationView {
    /// Reads in the sample.
    pub n_reads: u64,
    /// One row per taxon.
    pub table: Vec<mgds_api::TaxonRow>,
    /// Median read length, where the service gives it.
    pub median_read_length: Option<u64>,
    /// The measure shown first ([`mgds_api::Measure::default_for`]: for long reads, genome copies
    /// by bases), by its key.
    pub default_measure: String,
    /// The host's taxa in the table (those the database names as host and those below them),
    /// which the page leaves out unless asked.
    pub host: Vec<String>,
    /// Reads counted for the host's taxa (a copy without the host's reads also removes those
    /// the confidence filter held back).
    pub host_reads: u64,
}

impl ClassificationView {
    /// The view of a classification's results.
    pub fn of(r: &ClassificationResults) -> ClassificationView {
        ClassificationView {
            n_reads: r.n_reads,
            table: r.table.clone(),
            median_read_length: r.median_read_length,
            default_measure: mgds_api::Measure::default_for(r).key().to_owned(),
            host: {
                let mut host: Vec<String> = mgds_plots::host_subtree(r).into_iter().collect();
                host.sort();
                host
            },
            host_reads: {
                let host = mgds_plots::host_subtree(r);
                r.table.iter().filter(|row| host.contains(&row.tax_id)).map(|row| row.readcount).sum()
            },
        }
    }
}

/// A copy of a sample without its host's reads, as started from the sample page.
#[derive(Debug, Serialize, TS)]
pub struct HostCopy {
    /// The new sample's id.
    pub sample_id: String,
    /// Its file name.
    pub filename: String,
}

/// Starts a copy, without the host's reads, of the sample that classification `id` is of, by
/// that classification's calls (`POST /samples/{id}/remove_host`); the service writes it, and
/// the new sample is `importing` until then.
pub async fn remove_host(client: &Client, id: &str) -> CmdResult<HostCopy> {
    let analysis = client.classifications().get(id).await?;
    let copy = client.samples().remove_host(analysis.sample.id(), Some(id)).await?;
    Ok(HostCopy {
        sample_id: mgds_client::ResourceId::resource_id(&copy).to_string(),
        filename: crate::text::shown(copy.filename.as_deref().unwrap_or("sample"), 255),
    })
}
