//! The Analyses screen and runs on many samples. The screen lists every analysis the user can
//! see across samples, a page at a time, filtered by status and job and sorted by the service.
//! "Run…" on the samples table's selection starts one job on every selected sample; the run is
//! then followed until its last analysis ends, its progress sent to the window in
//! `batch-changed` events, with a desktop notification when one fails and when the last ends.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use mgds_api::Analysis;
use mgds_client::{Client, Filter, Sort};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::{CmdError, CmdResult, sentence};
use crate::samples::{AnalysisState, MAX_PER_PAGE, id_of};

/// The Analyses table's state as the window sends it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, TS)]
#[ts(optional_fields = nullable)]
pub struct AnalysisQuery {
    /// Page number, from 1.
    pub page: u32,
    /// Rows per page.
    pub per_page: u32,
    /// Column to sort by: `created_at` (started), `updated_at` (finished), `kind`, `status`.
    #[serde(default)]
    pub sort: Option<String>,
    /// Descending order.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub desc: bool,
    /// Only analyses in this state.
    #[serde(default)]
    pub status: Option<AnalysisState>,
    /// Only analyses of this job (id).
    #[serde(default)]
    pub job: Option<String>,
}

impl AnalysisQuery {
    /// The `where` clause.
    pub fn filter(&self) -> Filter {
        let mut f = Filter::new();
        match self.status {
            Some(AnalysisState::Running) => f = f.eq("complete", false),
            Some(AnalysisState::Complete) => f = f.eq("complete", true).eq("success", true),
            Some(AnalysisState::Failed) => f = f.eq("complete", true).eq("success", false),
            None => {}
        }
        if let Some(job) = self.job.as_deref().map(str::trim).filter(|j| !j.is_empty()) {
            f = f.eq_ref("job", &mgds_api::Ref::new("jobs", job));
        }
        f
    }

    /// The `sort` clause: newest first unless a known column is chosen; ties in start order.
    pub fn sort(&self) -> Sort {
        let by = |field: &str| if self.desc { Sort::desc(field) } else { Sort::asc(field) };
        match self.sort.as_deref() {
            Some("updated_at") => by("updated_at").then_desc("created_at"),
            Some("kind") => by("analysis_type").then_desc("created_at"),
            // Running first (ascending), then failed, then complete; the other way descending.
            Some("status") if self.desc => Sort::desc("complete").then_desc("success").then_desc("created_at"),
            Some("status") => Sort::asc("complete").then_asc("success").then_desc("created_at"),
            _ => by("created_at"),
        }
    }

    /// The page and page size, kept within bounds.
    pub fn paging(&self) -> (u32, u32) {
        (self.page.max(1), self.per_page.clamp(1, MAX_PER_PAGE))
    }
}

/// One row of the Analyses table.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct AnalysisListRow {
    /// Analysis id.
    pub id: String,
    /// `classification`, `panel`, ...
    pub kind: String,
    /// Where it stands.
    pub state: AnalysisState,
    /// Why it failed, in the service's words.
    pub error: Option<String>,
    /// When it was started (RFC 3339).
    pub created_at: String,
    /// When it finished (RFC 3339), once it has.
    pub finished_at: Option<String>,
    /// The job's id.
    pub job: String,
    /// The job's name.
    pub job_name: String,
    /// The sample's id.
    pub sample: String,
    /// The sample's file name.
    pub sample_name: Option<String>,
    /// The note given when it was run.
    pub description: Option<String>,
    /// The taxon whose genome an alignment is to.
    pub tax_id: Option<String>,
}

/// One page of the Analyses table.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AnalysesPage {
    /// The rows.
    pub rows: Vec<AnalysisListRow>,
    /// Analyses matching the filters on all pages.
    pub total: u64,
    /// This page's number.
    pub page: u32,
    /// Rows per page.
    pub per_page: u32,
}

fn state_of(a: &Analysis) -> AnalysisState {
    match (a.complete, a.success) {
        (false, _) => AnalysisState::Running,
        (true, true) => AnalysisState::Complete,
        (true, false) => AnalysisState::Failed,
    }
}

/// The file names of `samples` (those the user can see).
async fn sample_names(client: &Client, samples: &[String]) -> CmdResult<HashMap<String, String>> {
    let mut out = HashMap::new();
    let mut ids: Vec<&String> = samples.iter().collect();
    ids.sort();
    ids.dedup();
    for chunk in ids.chunks(MAX_PER_PAGE as usize) {
        let uris: Vec<String> = chunk.iter().map(|id| format!("/api/v1/samples/{id}")).collect();
        let found = client
            .samples()
            .list()
            .filter(Filter::new().is_in("$uri", uris))
            .per_page(u32::try_from(chunk.len()).unwrap_or(1).max(1))
            .send()
            .await?;
        for s in found.items {
            if let Some(name) = s.filename {
                out.insert(id_of(&s.uri), name);
            }
        }
    }
    Ok(out)
}

/// The names of the jobs the user can see.
async fn job_names(client: &Client) -> HashMap<String, String> {
    match client.jobs().list().per_page(200).all().await {
        Ok(jobs) => jobs.into_iter().map(|j| (id_of(&j.uri), j.name.unwrap_or_else(|| "(unnamed)".into()))).collect(),
        Err(e) => {
            tracing::warn!("could not list the jobs: {e}");
            HashMap::new()
        }
    }
}

/// One page of the analyses the user can see.
pub async fn list(client: &Client, q: &AnalysisQuery) -> CmdResult<AnalysesPage> {
    let (page, per_page) = q.paging();
    let mut req = client.analyses().list().sort(q.sort()).page(page).per_page(per_page);
    let filter = q.filter();
    if !filter.is_empty() {
        req = req.filter(filter);
    }
    let (p, jobs) = tokio::join!(req.send(), job_names(client));
    let p = p?;
    let samples: Vec<String> = p.items.iter().map(|a| a.sample.id().to_string()).collect();
    let names = sample_names(client, &samples).await?;
    let total = p.total.unwrap_or(u64::from((page - 1) * per_page) + p.items.len() as u64);
    let rows = p
        .items
        .iter()
        .map(|a| {
            let state = state_of(a);
            AnalysisListRow {
                id: id_of(&a.uri),
                kind: a.analysis_type.clone().unwrap_or_else(|| "analysis".into()),
                state,
                error: a.error_msg.clone().filter(|m| !m.trim().is_empty()),
                created_at: a.created_at.clone(),
                finished_at: if state == AnalysisState::Running { None } else { a.updated_at.clone() },
                job: a.job.id().to_string(),
                job_name: jobs.get(a.job.id()).cloned().unwrap_or_else(|| "(a job no longer offered)".into()),
                sample: a.sample.id().to_string(),
                sample_name: names.get(a.sample.id()).cloned(),
                description: a.description.clone().filter(|d| !d.trim().is_empty()),
                tax_id: a.tax_id.clone(),
            }
        })
        .collect();
    Ok(AnalysesPage { rows, total, page, per_page })
}

/// One sample of a run on many.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct BatchItem {
    /// The sample's id.
    pub sample: String,
    /// Its file name.
    pub sample_name: Option<String>,
    /// The analysis, once started.
    pub analysis: Option<String>,
    /// Where it stands.
    pub state: AnalysisState,
    /// Why it failed (or could not start), in the service's words.
    pub error: Option<String>,
}

/// One job run on many samples, sent in `batch-changed` events as it goes (and sent back by a
/// browser, which asks how it stands).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct BatchRun {
    /// The window's id for the run.
    pub id: String,
    /// The job's id.
    pub job: String,
    /// The job's name.
    pub job_name: String,
    /// One per sample.
    pub items: Vec<BatchItem>,
}

impl crate::events::ShellEvent for BatchRun {
    const NAME: &'static str = "batch-changed";
}

impl BatchRun {
    /// Analyses still running.
    pub fn running(&self) -> usize {
        self.items.iter().filter(|i| i.state == AnalysisState::Running).count()
    }

    fn count(&self, state: AnalysisState) -> usize {
        self.items.iter().filter(|i| i.state == state).count()
    }
}

/// How many runs are started at once.
const START_PARALLEL: usize = 4;

/// Starts job `job` on every sample of `samples` with `args` (checked against the job's schema
/// once, before anything is sent; absent arguments take the schema's defaults). A sample the
/// job cannot start on (not allowed, deleted meanwhile) is marked failed with the service's
/// reason; the others start all the same.
pub async fn start_batch(
    client: &Client,
    id: String,
    samples: &[String],
    job: &str,
    mut args: serde_json::Map<String, serde_json::Value>,
    description: Option<String>,
) -> CmdResult<BatchRun> {
    if samples.is_empty() {
        return Err(CmdError::new("invalid", "Select the samples to run the analysis on first."));
    }
    let j = client.jobs().get(job).await?;
    let schema = j.job_args_schema.clone().unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
    mgds_api::populate_default_args(&schema, &mut args);
    let problems = mgds_api::JobArgsSchema::new(&schema).map(|s| s.problems(&args)).unwrap_or_default();
    if !problems.is_empty() {
        return Err(mgds_client::Error::InvalidJobArgs { job: job.to_string(), problems }.into());
    }
    let description = description.map(|d| d.trim().to_string()).filter(|d| !d.is_empty());
    let names = sample_names(client, samples).await?;
    let (schema, args) = (Arc::new(schema), Arc::new(args));
    let started: Vec<(String, Result<String, CmdError>)> = futures::stream::iter(samples.iter().cloned())
        .map(|sample| {
            let (client, schema, args, description) =
                (client.clone(), schema.clone(), args.clone(), description.clone());
            async move {
                let mut run = client
                    .jobs()
                    .run(job, sample.as_str())
                    .args((*args).clone())
                    .schema((*schema).clone())
                    .populate_default_arguments(true);
                if let Some(d) = description {
                    run = run.description(d);
                }
                let r = run.send().await.map(|created| created.id().to_string()).map_err(CmdError::from);
                (sample, r)
            }
        })
        .buffered(START_PARALLEL)
        .collect()
        .await;
    let items = started
        .into_iter()
        .map(|(sample, r)| {
            let sample_name = names.get(&sample).cloned();
            match r {
                Ok(analysis) => BatchItem {
                    sample,
                    sample_name,
                    analysis: Some(analysis),
                    state: AnalysisState::Running,
                    error: None,
                },
                Err(e) => BatchItem {
                    sample,
                    sample_name,
                    analysis: None,
                    state: AnalysisState::Failed,
                    error: Some(format!("It could not be started: {}", e.message)),
                },
            }
        })
        .collect();
    Ok(BatchRun { id, job: job.to_string(), job_name: j.name.unwrap_or_else(|| "The analysis".into()), items })
}

/// The states of the run's analyses as the service has them now.
pub async fn refresh(client: &Client, run: &BatchRun) -> CmdResult<BatchRun> {
    let ids: Vec<&str> =
        run.items.iter().filter(|i| i.state == AnalysisState::Running).filter_map(|i| i.analysis.as_deref()).collect();
    let mut now: HashMap<String, Analysis> = HashMap::new();
    for chunk in ids.chunks(MAX_PER_PAGE as usize) {
        let uris: Vec<String> = chunk.iter().map(|id| format!("/api/v1/analyses/{id}")).collect();
        let page = client
            .analyses()
            .list()
            .filter(Filter::new().is_in("$uri", uris))
            .per_page(u32::try_from(chunk.len()).unwrap_or(1).max(1))
            .send()
            .await?;
        now.extend(page.items.into_iter().map(|a| (id_of(&a.uri), a)));
    }
    let mut next = run.clone();
    for item in next.items.iter_mut().filter(|i| i.state == AnalysisState::Running) {
        let Some(id) = item.analysis.as_deref() else { continue };
        match now.get(id) {
            Some(a) => {
                item.state = state_of(a);
                item.error = a.error_msg.clone().filter(|m| !m.trim().is_empty());
            }
            None => {
                item.state = AnalysisState::Failed;
                item.error =
                    Some("the analysis is gone: its sample was deleted, or you no longer have access to it".into());
            }
        }
    }
    Ok(next)
}

/// A desktop notification: title and body.
pub type Notice = (String, String);

/// What to tell the desktop between two looks at a run: each analysis that has just failed,
/// and the end of the run once its last analysis has ended.
pub fn notices(before: &BatchRun, after: &BatchRun) -> Vec<Notice> {
    let mut out = Vec::new();
    for (b, a) in before.items.iter().zip(&after.items) {
        if b.state == AnalysisState::Running && a.state == AnalysisState::Failed {
            let sample = a.sample_name.clone().unwrap_or_else(|| format!("sample {}", a.sample));
            let why = a.error.as_deref().map(sentence).unwrap_or_else(|| "The service gave no reason.".into());
            out.push((format!("{} failed on {sample}", after.job_name), why));
        }
    }
    if before.running() > 0 && after.running() == 0 {
        let (done, failed, n) =
            (after.count(AnalysisState::Complete), after.count(AnalysisState::Failed), after.items.len());
        let samples = if n == 1 { "1 sample".to_string() } else { format!("{n} samples") };
        let body = match failed {
            0 if n == 1 => "It is complete; its results are on the sample's page.".to_string(),
            0 => format!("All {n} are complete; the results are on each sample's page."),
            _ => format!("{done} complete, {failed} failed. The Analyses screen says why each failed."),
        };
        out.push((format!("{} finished on {samples}", after.job_name), body));
    }
    out
}

/// How long a run is followed at most (an app left open over a long weekend).
const FOLLOW_FOR: Duration = Duration::from_secs(7 * 24 * 3600);

/// Follows `run` until its last analysis ends: `emit` gets it whenever it changes, `notify`
/// each notice.
pub async fn follow(
    client: Client,
    mut run: BatchRun,
    emit: impl Fn(BatchRun) + Send + 'static,
    notify: impl Fn(&str, &str) + Send + 'static,
) {
    let started = std::time::Instant::now();
    let mut interval = Duration::from_millis(500);
    while run.running() > 0 && started.elapsed() < FOLLOW_FOR {
        tokio::time::sleep(interval).await;
        interval = (interval * 3 / 2).min(Duration::from_secs(5));
        let Ok(next) = refresh(&client, &run).await else { continue };
        if next != run {
            for (title, body) in notices(&run, &next) {
                notify(&title, &body);
            }
            emit(next.clone());
            run = next;
            interval = Duration::from_millis(500);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(state: AnalysisState, error: Option<&str>) -> BatchItem {
        BatchItem {
            sample: "s".into(),
            sample_name: Some("isolate-7.fastq.gz".into()),
            analysis: Some("a".into()),
            state,
            error: error.map(String::from),
        }
    }

    fn run(items: Vec<BatchItem>) -> BatchRun {
        BatchRun { id: "b1".into(), job: "j".into(), job_name: "Panel (demo AMR)".into(), items }
    }

    #[test]
    fn a_failure_is_told_at_once_and_the_end_once() {
        use AnalysisState::*;
        let start = run(vec![item(Running, None), item(Running, None), item(Running, None)]);
        let one_failed =
            run(vec![item(Failed, Some("the sample has no file yet")), item(Running, None), item(Complete, None)]);
        let n = notices(&start, &one_failed);
        assert_eq!(n.len(), 1, "{n:?}");
        assert_eq!(n[0].0, "Panel (demo AMR) failed on isolate-7.fastq.gz");
        assert_eq!(n[0].1, "The sample has no file yet.");
        let end = run(vec![item(Failed, Some("x")), item(Complete, None), item(Complete, None)]);
        let n = notices(&one_failed, &end);
        assert_eq!(
            n,
            vec![(
                "Panel (demo AMR) finished on 3 samples".into(),
                "2 complete, 1 failed. The Analyses screen says why each failed.".into()
            )]
        );
        assert!(notices(&end, &end).is_empty(), "nothing more once it has ended");
        let all = run(vec![item(Complete, None), item(Complete, None), item(Complete, None)]);
        assert_eq!(notices(&start, &all)[0].1, "All 3 are complete; the results are on each sample's page.");
    }

    /// A job run on three samples of a real local service (demo references, one worker): its
    /// arguments are checked once before anything starts, a sample that is not there fails to
    /// start without stopping the others, the run is followed to its end with a notice at the
    /// end, and the Analyses list filters, names and sorts what ran.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_job_runs_on_many_samples_and_is_followed_to_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let with = crate::testing::With { demo: true, workers: 1 };
        let service = crate::testing::TestService::start(&dir.path().join("data"), with).await;
        let client = service.user("lab@example.org").await;
        let mut samples = Vec::new();
        for i in 0..3 {
            let path = dir.path().join(format!("isolate-{i}.fastq"));
            let seq = ["ATCC", "GATC", "TCGA"][i];
            std::fs::write(&path, format!("@r{i}\nACGTTGCAACGTACGG{seq}\n+\nIIIIIIIIIIIIIIIIIIII\n")).unwrap();
            samples.push(id_of(&client.samples().upload(&path).send().await.unwrap().uri));
        }
        let jobs = crate::samples::lookups(&client).await.unwrap().jobs;
        let panel = jobs.iter().find(|j| j.kind == "panel").expect("a panel job").clone();
        let classify = jobs.iter().find(|j| j.kind == "classification").expect("a classification job").clone();

        let mut bad = serde_json::Map::new();
        bad.insert("confidence".into(), serde_json::json!(2));
        let refused = start_batch(&client, "b0".into(), &samples, &classify.id, bad, None).await.unwrap_err();
        assert!(refused.message.contains("confidence"), "{refused:?}");
        let before = list(&client, &AnalysisQuery { page: 1, per_page: 50, ..Default::default() }).await.unwrap().total;

        let mut with_gone = samples.clone();
        with_gone.push("0000000000000000".into());
        let run =
            start_batch(&client, "b1".into(), &with_gone, &panel.id, serde_json::Map::new(), Some("ward 3".into()))
                .await
                .unwrap();
        assert_eq!(run.items.len(), 4);
        assert_eq!(run.running(), 3);
        let gone = &run.items[3];
        assert_eq!(gone.state, AnalysisState::Failed);
        assert!(gone.error.as_deref().unwrap().starts_with("It could not be started"), "{gone:?}");
        assert_eq!(run.items[0].sample_name.as_deref(), Some("isolate-0.fastq"));

        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let told = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Notice>::new()));
        let t = told.clone();
        let followed = tokio::spawn(follow(
            client.clone(),
            run,
            move |r| drop(tx.send(r)),
            move |title, body| {
                t.lock().unwrap().push((title.to_string(), body.to_string()));
            },
        ));
        tokio::time::timeout(Duration::from_secs(120), followed).await.expect("the run ends").unwrap();
        let mut last = None;
        while let Ok(r) = rx.try_recv() {
            last = Some(r);
        }
        let last = last.expect("progress was sent");
        assert_eq!(last.running(), 0);
        assert_eq!(last.count(AnalysisState::Complete), 3, "{last:?}");
        let told = told.lock().unwrap().clone();
        assert_eq!(told.len(), 1, "{told:?}");
        assert_eq!(told[0].0, format!("{} finished on 4 samples", panel.name));
        assert_eq!(told[0].1, "3 complete, 1 failed. The Analyses screen says why each failed.");

        // The Analyses list: three more, filtered by job and status, named, started and finished.
        let q = |status, job: Option<&str>| AnalysisQuery {
            page: 1,
            per_page: 50,
            status,
            job: job.map(String::from),
            ..Default::default()
        };
        let all = list(&client, &q(None, None)).await.unwrap();
        assert_eq!(all.total, before + 3);
        let panels = list(&client, &q(Some(AnalysisState::Complete), Some(&panel.id))).await.unwrap();
        assert_eq!(panels.total, 3);
        let row = &panels.rows[0];
        assert_eq!((row.kind.as_str(), row.job_name.as_str()), ("panel", panel.name.as_str()));
        assert!(row.sample_name.as_deref().unwrap().starts_with("isolate-"), "{row:?}");
        assert!(row.finished_at.is_some() && row.description.as_deref() == Some("ward 3"));
        assert_eq!(list(&client, &q(Some(AnalysisState::Failed), Some(&panel.id))).await.unwrap().total, 0);
        let by_kind = AnalysisQuery { sort: Some("kind".into()), desc: true, ..q(None, None) };
        let kinds: Vec<String> = list(&client, &by_kind).await.unwrap().rows.into_iter().map(|r| r.kind).collect();
        let mut sorted = kinds.clone();
        sorted.sort_by(|a, b| b.cmp(a));
        assert_eq!(kinds, sorted);
    }

    #[test]
    fn statuses_and_sorts_become_where_and_sort_clauses() {
        let q = AnalysisQuery {
            page: 1,
            per_page: 50,
            status: Some(AnalysisState::Failed),
            job: Some("00000000000000aa".into()),
            ..Default::default()
        };
        let v = q.filter().to_value();
        assert_eq!(v["complete"], true);
        assert_eq!(v["success"], false);
        assert_eq!(v["job"]["$ref"], "/api/v1/jobs/00000000000000aa");
        let running = AnalysisQuery { status: Some(AnalysisState::Running), ..Default::default() };
        assert_eq!(running.filter().to_value(), serde_json::json!({"complete": false}));
        assert_eq!(AnalysisQuery { desc: true, ..Default::default() }.sort().to_json(), r#"{"created_at":true}"#);
        let s = AnalysisQuery { sort: Some("status".into()), ..Default::default() }.sort().to_json();
        assert_eq!(s, r#"{"complete":false,"success":false,"created_at":true}"#);
        let s = AnalysisQuery { sort: Some("; drop".into()), ..Default::default() }.sort().to_json();
        assert_eq!(s, r#"{"created_at":false}"#);
        assert_eq!(AnalysisQuery { page: 0, per_page: 9999, ..Default::default() }.paging(), (1, MAX_PER_PAGE));
    }
}
