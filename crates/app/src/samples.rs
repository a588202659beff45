//! The samples table and the sample page: list queries built from the UI's table state, and
//! the records the UI shows.

use futures::StreamExt;
use mgds_api::{Analysis, Metadata, Ref, Sample};
use mgds_client::{Client, Filter, Sort};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::{CmdError, CmdResult};

/// The table's state as the UI sends it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, TS)]
// What the shell defaults (`#[serde(default)]`, and any `Option`) the UI may leave out.
#[ts(optional_fields = nullable)]
pub struct SampleQuery {
    /// Page number, from 1.
    pub page: u32,
    /// Rows per page.
    pub per_page: u32,
    /// Column to sort by: `created_at`, `filename`, `size`, `visibility`.
    #[serde(default)]
    pub sort: Option<String>,
    /// Descending order.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub desc: bool,
    /// The file name contains this (any case).
    #[serde(default)]
    pub filename: Option<String>,
    /// Carries these tags (ids): all of them, or any of them with `any_tag`.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub tags: Vec<String>,
    /// Samples with any of `tags` rather than all of them.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub any_tag: bool,
    /// In this project (id).
    #[serde(default)]
    pub project: Option<String>,
    /// Uploaded on or after this day (`YYYY-MM-DD`).
    #[serde(default)]
    pub from: Option<String>,
    /// Uploaded on or before this day (`YYYY-MM-DD`).
    #[serde(default)]
    pub to: Option<String>,
    /// Visibility: `public`, `shared` or `private`.
    #[serde(default)]
    pub visibility: Option<String>,
}

const SORTABLE: &[&str] = &["created_at", "filename", "size", "visibility"];
/// The largest page the UI may ask for.
pub const MAX_PER_PAGE: u32 = 200;

fn non_empty(s: &Option<String>) -> Option<&str> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

impl SampleQuery {
    /// The `where` clause.
    pub fn filter(&self) -> CmdResult<Filter> {
        let mut f = Filter::new();
        if let Some(text) = non_empty(&self.filename) {
            f = f.icontains("filename", text);
        }
        let tags: Vec<Ref> =
            self.tags.iter().map(|t| t.trim()).filter(|t| !t.is_empty()).map(|t| Ref::new("tags", t)).collect();
        if tags.len() == 1 || (self.any_tag && !tags.is_empty()) {
            f = f.contains_any("tags", &tags);
        } else if !tags.is_empty() {
            f = f.contains_all("tags", &tags);
        }
        if let Some(project) = non_empty(&self.project) {
            f = f.eq_ref("project", &Ref::new("projects", project));
        }
        if let Some(v) = non_empty(&self.visibility) {
            f = f.eq("visibility", v);
        }
        if let Some(day) = non_empty(&self.from) {
            f = f.gte("created_at", format!("{}T00:00:00Z", check_day(day)?));
        }
        if let Some(day) = non_empty(&self.to) {
            f = f.lte("created_at", format!("{}T23:59:59.999999Z", check_day(day)?));
        }
        Ok(f)
    }

    /// The `sort` clause: newest first unless a known column is chosen.
    pub fn sort(&self) -> Sort {
        let field = self.sort.as_deref().filter(|f| SORTABLE.contains(f)).unwrap_or("created_at");
        let sort = if self.desc { Sort::desc(field) } else { Sort::asc(field) };
        // A stable order across pages when the column has ties.
        if field == "created_at" { sort } else { sort.then_desc("created_at") }
    }

    /// The page and page size, kept within bounds.
    pub fn paging(&self) -> (u32, u32) {
        (self.page.max(1), self.per_page.clamp(1, MAX_PER_PAGE))
    }
}

fn check_day(day: &str) -> CmdResult<&str> {
    let b = day.as_bytes();
    let ok = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if ok { Ok(day) } else { Err(CmdError::new("invalid", format!("“{day}” is not a date; use the date picker."))) }
}

/// One row of the samples table.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SampleRow {
    /// Sample id.
    pub id: String,
    /// File name (none while awaiting data).
    pub filename: Option<String>,
    /// File size in bytes.
    pub size: Option<u64>,
    /// Upload time (RFC 3339).
    pub created_at: String,
    /// `public`, `shared`, `private`, ...
    pub visibility: String,
    /// Project id.
    pub project: Option<String>,
    /// Tag ids.
    pub tags: Vec<String>,
    /// The primary classification's id, once there is one.
    pub classification: Option<String>,
    /// Taxon alerts the watched folders raised for it (`Salmonella enterica (0.210%, rule:
    /// Salmonella enterica >= 0.1%)`).
    pub alerts: Vec<String>,
    /// Why the service could not make the sample's file (a pair uploaded as two files whose
    /// mates do not pair); the sample then stays `importing`.
    pub import_error: Option<String>,
}

impl From<Sample> for SampleRow {
    fn from(s: Sample) -> Self {
        SampleRow {
            id: id_of(&s.uri),
            filename: s.filename,
            size: s.size,
            created_at: s.created_at,
            visibility: serde_json::to_value(s.visibility)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            project: s.project.map(|r| r.id().to_string()),
            tags: s.tags.iter().map(|r| r.id().to_string()).collect(),
            classification: s.primary_classification.map(|r| r.id().to_string()),
            alerts: Vec::new(),
            import_error: s.import_error,
        }
    }
}

/// The last segment of a resource address.
pub fn id_of(uri: &str) -> String {
    uri.trim_end_matches('/').rsplit('/').next().unwrap_or_default().to_string()
}

/// One page of the table.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SamplesPage {
    /// The rows.
    pub rows: Vec<SampleRow>,
    /// Samples matching the filters on all pages.
    pub total: u64,
    /// This page's number.
    pub page: u32,
    /// Rows per page.
    pub per_page: u32,
}

/// Fetches one page of the table.
pub async fn list(client: &Client, q: &SampleQuery) -> CmdResult<SamplesPage> {
    let (page, per_page) = q.paging();
    let mut req = client.samples().list().sort(q.sort()).page(page).per_page(per_page);
    let filter = q.filter()?;
    if !filter.is_empty() {
        req = req.filter(filter);
    }
    let p = req.send().await?;
    let total = p.total.unwrap_or(((page - 1) * per_page) as u64 + p.items.len() as u64);
    Ok(SamplesPage { rows: p.items.into_iter().map(SampleRow::from).collect(), total, page, per_page })
}

/// A tag or project, for pickers and for showing names in the table.
#[derive(Debug, Clone, Serialize, TS)]
pub struct Named {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
}

/// A job the user can run, for pickers.
#[derive(Debug, Clone, Serialize, TS)]
pub struct JobChoice {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The kind of analysis it makes (`classification`, `panel`, ...).
    pub kind: String,
}

/// The tags, projects and jobs the user can see.
#[derive(Debug, Clone, Serialize, TS)]
pub struct Lookups {
    /// Tags.
    pub tags: Vec<Named>,
    /// Projects.
    pub projects: Vec<Named>,
    /// Jobs (none if the service would not list them).
    pub jobs: Vec<JobChoice>,
    /// The sequencing platforms the metadata accepts.
    pub platforms: Vec<&'static str>,
    /// The library types the metadata accepts.
    pub library_types: Vec<&'static str>,
    /// The sample types the metadata accepts.
    pub sample_types: Vec<&'static str>,
}

/// Fetches all tags, projects and jobs (small lists; fetched once per screen).
pub async fn lookups(client: &Client) -> CmdResult<Lookups> {
    let (tags, projects, jobs) = tokio::join!(
        client.tags().list().per_page(200).all(),
        client.projects().list().per_page(200).all(),
        client.jobs().list().per_page(200).all()
    );
    let (tags, projects) = (tags?, projects?);
    // The jobs only feed optional pickers: a service that will not list them leaves those empty
    // rather than failing the screen.
    let mut jobs: Vec<JobChoice> = jobs
        .unwrap_or_else(|e| {
            tracing::warn!("could not list the jobs: {e}");
            Vec::new()
        })
        .into_iter()
        .map(|j| JobChoice {
            id: id_of(&j.uri),
            name: j.name.unwrap_or_else(|| "(unnamed)".into()),
            kind: j.analysis_type.unwrap_or_default(),
        })
        .collect();
    jobs.sort_by(|a, b| (&a.kind, a.name.to_lowercase()).cmp(&(&b.kind, b.name.to_lowercase())));
    let mut tags: Vec<Named> = tags
        .into_iter()
        .map(|t| Named { id: id_of(&t.uri), name: t.name.unwrap_or_else(|| "(unnamed)".into()) })
        .collect();
    let mut projects: Vec<Named> = projects
        .into_iter()
        .map(|p| Named { id: id_of(&p.uri), name: p.project_name.unwrap_or_else(|| "(unnamed)".into()) })
        .collect();
    tags.sort_by_key(|t| t.name.to_lowercase());
    projects.sort_by_key(|p| p.name.to_lowercase());
    Ok(Lookups {
        tags,
        projects,
        jobs,
        platforms: mgds_api::PLATFORMS.to_vec(),
        library_types: mgds_api::LIBRARY_TYPES.to_vec(),
        sample_types: mgds_api::SAMPLE_TYPES.to_vec(),
    })
}

/// A tag with the number of samples carrying it, for the Tags screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct TagCount {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Samples the user can see that carry it.
    pub samples: u64,
}

/// How many counts are asked for at once.
const COUNT_PARALLEL: usize = 6;

/// Every tag the user can see with its number of samples (each the `X-Total-Count` of a list of
/// one sample filtered by the tag), by name.
pub async fn tag_counts(client: &Client) -> CmdResult<Vec<TagCount>> {
    let tags = client.tags().list().per_page(mgds_api::MAX_PER_PAGE).all().await?;
    let counted: Vec<CmdResult<TagCount>> = futures::stream::iter(tags)
        .map(|t| {
            let client = client.clone();
            async move {
                let id = id_of(&t.uri);
                let page = client
                    .samples()
                    .list()
                    .filter(Filter::new().contains_any("tags", [&Ref::new("tags", &id)]))
                    .per_page(1)
                    .send()
                    .await?;
                let samples = page.total.unwrap_or(page.items.len() as u64);
                Ok(TagCount { id, name: t.name.unwrap_or_else(|| "(unnamed)".into()), samples })
            }
        })
        .buffer_unordered(COUNT_PARALLEL)
        .collect()
        .await;
    let mut out = counted.into_iter().collect::<CmdResult<Vec<_>>>()?;
    out.sort_by(|a, b| a.name.to_lowercase().cmp(&b.name.to_lowercase()).then(a.id.cmp(&b.id)));
    Ok(out)
}

/// Where an analysis stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum AnalysisState {
    /// Pending or running: not complete.
    Running,
    /// Finished successfully.
    Complete,
    /// Finished with an error.
    Failed,
}

/// One analysis of a sample, for the sample page.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct AnalysisRow {
    /// Analysis id.
    pub id: String,
    /// `classification`, `panel`, ...
    pub kind: String,
    /// Where it stands.
    pub state: AnalysisState,
    /// Why it failed.
    pub error: Option<String>,
    /// When it was created.
    pub created_at: String,
    /// The job's id.
    pub job: String,
    /// The taxon whose genome an alignment is to.
    pub tax_id: Option<String>,
    /// The note given when it was run.
    pub description: Option<String>,
}

impl From<&Analysis> for AnalysisRow {
    fn from(a: &Analysis) -> Self {
        let state = match (a.complete, a.success) {
            (false, _) => AnalysisState::Running,
            (true, true) => AnalysisState::Complete,
            (true, false) => AnalysisState::Failed,
        };
        AnalysisRow {
            id: id_of(&a.uri),
            kind: a.analysis_type.clone().unwrap_or_else(|| "analysis".into()),
            state,
            error: a.error_msg.clone().filter(|m| !m.trim().is_empty()),
            created_at: a.created_at.clone(),
            job: a.job.id().to_string(),
            tax_id: a.tax_id.clone(),
            description: a.description.clone().filter(|d| !d.trim().is_empty()),
        }
    }
}

/// The analyses of sample `id`, newest first.
pub async fn analyses(client: &Client, id: &str) -> CmdResult<Vec<AnalysisRow>> {
    let list = client
        .analyses()
        .list()
        .filter(Filter::new().eq_ref("sample", &Ref::new("samples", id)))
        .sort(Sort::desc("created_at"))
        .per_page(100)
        .all()
        .await?;
    Ok(list.iter().map(AnalysisRow::from).collect())
}

/// A job's arguments form: its name and the JSON Schema of its arguments (an empty object
/// schema when the job takes none).
#[derive(Debug, Clone, Serialize, TS)]
pub struct JobArgs {
    /// The job's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The kind of analysis it makes.
    pub kind: String,
    /// `job_args_schema`.
    pub schema: serde_json::Value,
}

/// The arguments form of job `id`.
pub async fn job_args(client: &Client, id: &str) -> CmdResult<JobArgs> {
    let job = client.jobs().get(id).await?;
    Ok(JobArgs {
        id: id_of(&job.uri),
        name: job.name.unwrap_or_else(|| "(unnamed)".into()),
        kind: job.analysis_type.unwrap_or_default(),
        schema: job.job_args_schema.unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}})),
    })
}

/// Runs job `job` on sample `sample` with `args` (checked against the job's schema before
/// anything is sent; absent arguments take the schema's defaults). Answers the new analysis id.
pub async fn run_job(
    client: &Client,
    sample: &str,
    job: &str,
    args: serde_json::Map<String, serde_json::Value>,
    description: Option<String>,
) -> CmdResult<String> {
    let mut run = client.jobs().run(job, sample).args(args).populate_default_arguments(true);
    if let Some(d) = description.map(|d| d.trim().to_string()).filter(|d| !d.is_empty()) {
        run = run.description(d);
    }
    let created = run.send().await?;
    Ok(created.id().to_string())
}

/// The sample page.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SampleDetail {
    /// The sample.
    pub sample: SampleRow,
    /// Its metadata record.
    pub metadata: Option<Metadata>,
    /// Its analyses.
    pub analyses: Vec<AnalysisRow>,
    /// Whether the signed-in user owns it (and so may edit it).
    pub editable: bool,
}

/// Fetches the sample page.
pub async fn detail(client: &Client, id: &str) -> CmdResult<SampleDetail> {
    let sample = client.samples().get(id).await?;
    let owner = sample.owner.id().to_string();
    let metadata_ref = sample.metadata.clone();
    let (account, metadata, analyses) = tokio::join!(
        client.account(),
        async {
            match &metadata_ref {
                Some(r) => client.metadata().get(r.id()).await.map(Some),
                None => Ok(None),
            }
        },
        analyses(client, id)
    );
    let editable = account.map(|a| a.user.id() == owner).unwrap_or(false);
    Ok(SampleDetail { sample: sample.into(), metadata: metadata?, analyses: analyses?, editable })
}

/// A change to a sample from its page.
#[derive(Debug, Clone, Default, Deserialize, TS)]
#[ts(optional_fields = nullable)]
pub struct SampleChange {
    /// New visibility.
    #[serde(default)]
    pub visibility: Option<mgds_api::Visibility>,
    /// New project id; an empty string takes it out of its project.
    #[serde(default)]
    pub project: Option<String>,
    /// New tag ids (replacing the old ones).
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// Names of new tags to create and attach.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub new_tags: Vec<String>,
    /// New metadata fields.
    #[serde(default)]
    pub metadata: Option<mgds_api::MetadataInput>,
}

/// Applies a change and answers the sample page as it now is.
pub async fn change(client: &Client, id: &str, change: SampleChange) -> CmdResult<SampleDetail> {
    let mut tags = change.tags.clone();
    for name in change.new_tags.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let tag = client.tags().create(name, id).await?;
        tags.get_or_insert_with(Vec::new).push(id_of(&tag.uri));
    }
    if change.visibility.is_some() || change.project.is_some() || tags.is_some() {
        let mut u = client.samples().update(id);
        if let Some(v) = change.visibility {
            u = u.visibility(v);
        }
        match change.project.as_deref() {
            Some("") => u = u.no_project(),
            Some(p) => u = u.project(p),
            None => {}
        }
        if let Some(t) = &tags {
            u = u.tags(t.clone());
        }
        u.send().await?;
    }
    if let Some(m) = change.metadata {
        let sample = client.samples().get(id).await?;
        let r =
            sample.metadata.ok_or_else(|| CmdError::new("not_found", "This sample has no metadata record to edit."))?;
        client.metadata().update(r.id()).fields(m).send().await?;
    }
    detail(client, id).await
}

/// A change to many samples at once, from the samples table's selection.
#[derive(Debug, Clone, Default, Deserialize, TS)]
#[ts(optional_fields = nullable)]
pub struct BulkChange {
    /// Tag ids to add (the samples keep their other tags).
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub add_tags: Vec<String>,
    /// Names of new tags to create and add.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub new_tags: Vec<String>,
    /// Tag ids to take off.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub remove_tags: Vec<String>,
    /// New project id; an empty string takes them out of their project.
    #[serde(default)]
    pub project: Option<String>,
    /// New visibility.
    #[serde(default)]
    pub visibility: Option<mgds_api::Visibility>,
    /// Delete the samples instead.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub delete: bool,
}

/// What a bulk change did: the samples changed, and those that could not be, with why.
#[derive(Debug, Clone, Default, Serialize, TS)]
pub struct BulkOutcome {
    /// Samples changed (or deleted).
    pub done: usize,
    /// Samples not changed, with the service's reason.
    pub failed: Vec<BulkFailure>,
}

/// One sample a bulk change could not change.
#[derive(Debug, Clone, Serialize, TS)]
pub struct BulkFailure {
    /// The sample.
    pub id: String,
    /// Why, in words.
    pub message: String,
}

/// How many samples a bulk change works on at once.
const BULK_PARALLEL: usize = 4;

/// Applies one change to every sample in `ids`; one sample's failure (not the owner, deleted
/// meanwhile) does not stop the others, and is reported with its reason.
pub async fn bulk(client: &Client, ids: &[String], change: BulkChange) -> CmdResult<BulkOutcome> {
    if ids.is_empty() {
        return Ok(BulkOutcome::default());
    }
    // New tags are made once, on the first sample, then added to all.
    let mut add = change.add_tags.clone();
    for name in change.new_tags.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let tag = client.tags().create(name, &ids[0]).await?;
        add.push(id_of(&tag.uri));
    }
    let change = std::sync::Arc::new(BulkChange { add_tags: add, ..change });
    let results = futures::stream::iter(ids.iter().cloned())
        .map(|id| {
            let (client, change) = (client.clone(), change.clone());
            async move {
                let r = bulk_one(&client, &id, &change).await;
                (id, r)
            }
        })
        .buffer_unordered(BULK_PARALLEL)
        .collect::<Vec<_>>()
        .await;
    let mut out = BulkOutcome::default();
    for (id, r) in results {
        match r {
            Ok(()) => out.done += 1,
            Err(e) => out.failed.push(BulkFailure { id, message: e.message }),
        }
    }
    Ok(out)
}

async fn bulk_one(client: &Client, id: &str, change: &BulkChange) -> CmdResult<()> {
    if change.delete {
        client.samples().delete(id).await?;
        return Ok(());
    }
    let mut u = client.samples().update(id);
    let mut any = false;
    if !change.add_tags.is_empty() || !change.remove_tags.is_empty() {
        let sample = client.samples().get(id).await?;
        let mut tags: Vec<String> = sample.tags.iter().map(|r| r.id().to_string()).collect();
        tags.retain(|t| !change.remove_tags.contains(t));
        for t in &change.add_tags {
            if !tags.contains(t) {
                tags.push(t.clone());
            }
        }
        u = u.tags(tags);
        any = true;
    }
    if let Some(p) = change.project.as_deref() {
        u = if p.is_empty() { u.no_project() } else { u.project(p) };
        any = true;
    }
    if let Some(v) = change.visibility {
        u = u.visibility(v);
        any = true;
    }
    if any {
        u.send().await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three samples on a real local service, changed together.
    #[tokio::test(flavor = "multi_thread")]
    async fn bulk_changes_add_and_take_off_tags_change_visibility_and_delete() {
        let dir = tempfile::tempdir().unwrap();
        let service = crate::testing::TestService::start(&dir.path().join("data"), Default::default()).await;
        let client = service.user("lab@example.org").await;
        let mut ids = Vec::new();
        for i in 0..3 {
            let path = dir.path().join(format!("s{i}.fastq"));
            std::fs::write(&path, format!("@r{i}\nACGTACGT{}\n+\nIIIIIIIII\n", "ACGT".chars().nth(i).unwrap()))
                .unwrap();
            ids.push(id_of(&client.samples().upload(&path).send().await.unwrap().uri));
        }
        let keep = id_of(&client.tags().create("keep", &ids[0]).await.unwrap().uri);
        client.samples().update(&ids[0]).tags([keep.clone()]).send().await.unwrap();
        let tags_of = |id: String| {
            let client = client.clone();
            async move {
                let s = client.samples().get(&id).await.unwrap();
                let mut t: Vec<String> = s.tags.iter().map(|r| r.id().to_string()).collect();
                t.sort();
                (t, s.visibility)
            }
        };

        let change = BulkChange { new_tags: vec!["batch-7".into()], ..Default::default() };
        let out = bulk(&client, &ids, change).await.unwrap();
        assert_eq!((out.done, out.failed.len()), (3, 0));
        let tags = client.tags().list().per_page(50).all().await.unwrap();
        let batch = id_of(&tags.iter().find(|t| t.name.as_deref() == Some("batch-7")).expect("the new tag").uri);
        let mut both = vec![keep.clone(), batch.clone()];
        both.sort();
        assert_eq!(tags_of(ids[0].clone()).await.0, both, "a sample keeps its other tags");
        assert_eq!(tags_of(ids[2].clone()).await.0, vec![batch.clone()]);
        // The Tags screen's counts, and the table filtered by all or any of two tags.
        let counts = tag_counts(&client).await.unwrap();
        let count_of = |name: &str| counts.iter().find(|c| c.name == name).map(|c| c.samples);
        assert_eq!((count_of("batch-7"), count_of("keep")), (Some(3), Some(1)), "{counts:?}");
        let by_tags = |any_tag| SampleQuery {
            page: 1,
            per_page: 50,
            tags: vec![keep.clone(), batch.clone()],
            any_tag,
            ..Default::default()
        };
        assert_eq!(list(&client, &by_tags(false)).await.unwrap().total, 1);
        assert_eq!(list(&client, &by_tags(true)).await.unwrap().total, 3);

        let change = BulkChange {
            remove_tags: vec![batch.clone()],
            visibility: Some(mgds_api::Visibility::Public),
            ..Default::default()
        };
        assert_eq!(bulk(&client, &ids, change).await.unwrap().done, 3);
        assert_eq!(tags_of(ids[0].clone()).await, (vec![keep], mgds_api::Visibility::Public));
        assert_eq!(tags_of(ids[1].clone()).await, (vec![], mgds_api::Visibility::Public));

        // One sample that is not there: the others are deleted all the same, and it is named.
        let mut with_missing = ids.clone();
        with_missing.push("0000000000000000".into());
        let out = bulk(&client, &with_missing, BulkChange { delete: true, ..Default::default() }).await.unwrap();
        assert_eq!(out.done, 3);
        assert_eq!(out.failed.len(), 1);
        assert_eq!(out.failed[0].id, "0000000000000000");
        assert!(!out.failed[0].message.is_empty());
        assert_eq!(client.samples().list().per_page(10).send().await.unwrap().total, Some(0));

        // A new project to move samples into; a name taken is refused with the service's reason.
        let new = |name: &str| crate::projects::NewProject { short_name: name.into(), ..Default::default() };
        let p = crate::projects::create(&client, new(" outbreak_7 ")).await.unwrap();
        assert_eq!(p.name, "outbreak_7");
        assert!(lookups(&client).await.unwrap().projects.iter().any(|x| x.id == p.id));
        let taken = crate::projects::create(&client, new("outbreak_7")).await.unwrap_err();
        assert!(taken.message.contains("outbreak_7") && taken.code == "conflict", "{taken:?}");
        assert!(crate::projects::create(&client, new("a b")).await.is_err());
    }

    /// A job run from the sample page: its form comes from the job's schema, its arguments are
    /// checked before anything is sent, and the analysis is created.
    #[tokio::test(flavor = "multi_thread")]
    async fn jobs_are_listed_and_run_with_checked_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let with = crate::testing::With { demo: true, workers: 0 };
        let service = crate::testing::TestService::start(&dir.path().join("data"), with).await;
        let client = service.user("lab@example.org").await;
        let path = dir.path().join("s.fastq");
        std::fs::write(&path, "@r1\nACGTACGTAC\n+\nIIIIIIIIII\n").unwrap();
        let sample = id_of(&client.samples().upload(&path).send().await.unwrap().uri);

        let jobs = lookups(&client).await.unwrap().jobs;
        let kinds: Vec<&str> = jobs.iter().map(|j| j.kind.as_str()).collect();
        assert!(kinds.contains(&"classification") && kinds.contains(&"panel"), "{kinds:?}");
        let classify = jobs.iter().find(|j| j.kind == "classification").unwrap();
        let form = job_args(&client, &classify.id).await.unwrap();
        assert_eq!(form.schema["properties"]["confidence"]["maximum"], 1);

        let mut bad = serde_json::Map::new();
        bad.insert("confidence".into(), serde_json::json!(2));
        let refused = run_job(&client, &sample, &classify.id, bad, None).await.unwrap_err();
        assert!(refused.message.contains("confidence"), "{refused:?}");
        let before = analyses(&client, &sample).await.unwrap().len();
        let mut good = serde_json::Map::new();
        good.insert("confidence".into(), serde_json::json!(0.1));
        let id = run_job(&client, &sample, &classify.id, good, Some("  follow-up  ".into())).await.unwrap();
        let after = analyses(&client, &sample).await.unwrap();
        assert_eq!(after.len(), before + 1);
        assert!(after.iter().any(|a| a.id == id && a.kind == "classification"));
        let a = client.analyses().get(&id).await.unwrap();
        assert!(a.job_args.as_ref().and_then(|v| v.get("min_hits")).is_some(), "defaults filled in: {a:?}");
    }

    fn q() -> SampleQuery {
        SampleQuery { page: 1, per_page: 50, ..Default::default() }
    }

    #[test]
    fn an_empty_query_is_newest_first_without_a_filter() {
        let q = SampleQuery { desc: true, ..q() };
        assert!(q.filter().unwrap().is_empty());
        assert_eq!(q.sort().to_json(), r#"{"created_at":true}"#);
    }

    #[test]
    fn filters_combine_into_one_clause() {
        let q = SampleQuery {
            filename: Some(" run42 ".into()),
            tags: vec!["00000000000000aa".into()],
            project: Some("00000000000000bb".into()),
            visibility: Some("private".into()),
            from: Some("2026-01-01".into()),
            to: Some("2026-01-31".into()),
            ..q()
        };
        let v = q.filter().unwrap().to_value();
        assert_eq!(v["filename"]["$icontains"], "run42");
        assert_eq!(v["tags"]["$containsany"][0]["$ref"], "/api/v1/tags/00000000000000aa");
        assert_eq!(v["project"]["$ref"], "/api/v1/projects/00000000000000bb");
        assert_eq!(v["visibility"], "private");
        assert_eq!(v["created_at"]["$gte"], "2026-01-01T00:00:00Z");
        assert_eq!(v["created_at"]["$lte"], "2026-01-31T23:59:59.999999Z");
    }

    #[test]
    fn several_tags_match_all_of_them_or_any() {
        let two = vec!["00000000000000aa".to_string(), "00000000000000bb".to_string()];
        let all = SampleQuery { tags: two.clone(), ..q() }.filter().unwrap().to_value();
        assert_eq!(all["tags"]["$containsall"][1]["$ref"], "/api/v1/tags/00000000000000bb");
        let any = SampleQuery { tags: two, any_tag: true, ..q() }.filter().unwrap().to_value();
        assert_eq!(any["tags"]["$containsany"][0]["$ref"], "/api/v1/tags/00000000000000aa");
        assert!(SampleQuery { tags: vec![" ".into()], ..q() }.filter().unwrap().is_empty());
    }

    #[test]
    fn a_bad_date_is_explained_and_unknown_sorts_fall_back() {
        let bad = SampleQuery { from: Some("01/02/2026".into()), ..q() };
        assert_eq!(bad.filter().unwrap_err().code, "invalid");
        let s = SampleQuery { sort: Some("owner; drop".into()), ..q() };
        assert_eq!(s.sort().to_json(), r#"{"created_at":false}"#);
        let s = SampleQuery { sort: Some("filename".into()), ..q() };
        assert_eq!(s.sort().to_json(), r#"{"filename":false,"created_at":true}"#);
    }

    #[test]
    fn paging_is_bounded() {
        let p = SampleQuery { page: 0, per_page: 100_000, ..Default::default() };
        assert_eq!(p.paging(), (1, MAX_PER_PAGE));
    }
}
