//! The commands the UI invokes: each a few lines over the crates, errors as `{code, message}`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use tauri::{AppHandle, Manager, State};
use tauri_plugin_dialog::DialogExt;

use crate::analyses::{self, AnalysesPage, AnalysisQuery, BatchRun};
use crate::compare::{self, CompareCache, CompareRequest, ComparisonView, TaxonReadsProgress};
use crate::contamination::{ContaminationRequest, ContaminationView};
use crate::dialogs::{ask_folder, ask_save_path, chart_or_table, write_file};
use crate::diversity::{self, DiversityRequest, DiversityScreen};
use crate::documents::{DocumentFile, DocumentTransfers, DocumentsView};
use crate::error::{CmdError, CmdResult};
use crate::events;
use crate::organization::{
    AuditPage, AuditQuery, LinkView, OrganizationView, UserChange, WebhookSecretView, WebhooksView,
};
use crate::projects::{Access, NewProject, ProjectChange, ProjectDetail, ProjectRow};
use crate::qc::{self, QcComparison};
use crate::report::{self, ComparisonReportRequest, ReportMade};
use crate::results::{ClassificationView, HostCopy, PanelView, ResultsCache, SampleContaminants, Watcher};
use crate::samples::{
    self, BulkChange, BulkOutcome, JobArgs, Lookups, Named, SampleChange, SampleDetail, SampleQuery, SamplesPage,
    TagCount,
};
use crate::session::{ConnectionView, NewProfile, NewSsoProfile, ProfilesView, Session};
use crate::uploads::{self, FileCheck, UploadBatch, UploadFile, UploadState, Uploads};
use crate::watching::{self, AlertsView, NewFolder, WatchView, Watching};
use mgds_watch::LiveRun;

/// The connection in use, connecting (and on first start, starting the local service) if needed.
#[tauri::command]
pub async fn connection(session: State<'_, Session>) -> CmdResult<ConnectionView> {
    let c = session.connected().await?;
    let email = c.client.account().await?.email;
    Ok(ConnectionView {
        profile: c.profile,
        base_url: c.base_url,
        local: c.local,
        email,
        data_dir: session.paths().data_dir.display().to_string(),
    })
}

/// The profiles screen.
#[tauri::command]
pub async fn profiles(session: State<'_, Session>) -> CmdResult<ProfilesView> {
    let current = session.connected().await.ok().map(|c| c.profile);
    session.profiles(current.as_deref())
}

/// Adds a remote profile after checking its key, and switches to it.
#[tauri::command]
pub async fn add_profile(app: AppHandle, session: State<'_, Session>, profile: NewProfile) -> CmdResult<ProfilesView> {
    let c = session.add(profile).await?;
    app.state::<Watching>().restart(&app).await;
    session.profiles(Some(&c.profile))
}

/// Adds a remote profile signed in by the service's single sign-on (the system browser opens
/// at the provider), and switches to it.
#[tauri::command]
pub async fn add_sso_profile(
    app: AppHandle,
    session: State<'_, Session>,
    profile: NewSsoProfile,
) -> CmdResult<ProfilesView> {
    let c = session.add_sso(profile).await?;
    app.state::<Watching>().restart(&app).await;
    session.profiles(Some(&c.profile))
}

/// Switches to another profile.
#[tauri::command]
pub async fn switch_profile(app: AppHandle, session: State<'_, Session>, name: String) -> CmdResult<ProfilesView> {
    let c = session.switch(&name).await?;
    app.state::<Watching>().restart(&app).await;
    session.profiles(Some(&c.profile))
}

/// Forgets a remote profile and its key.
#[tauri::command]
pub async fn remove_profile(app: AppHandle, session: State<'_, Session>, name: String) -> CmdResult<ProfilesView> {
    session.remove(&name).await?;
    app.state::<Watching>().restart(&app).await;
    let current = session.connected().await.ok().map(|c| c.profile);
    session.profiles(current.as_deref())
}

/// One page of the samples table, each row with the taxon alerts the watched folders raised.
#[tauri::command]
pub async fn list_samples(
    session: State<'_, Session>,
    watching: State<'_, Watching>,
    query: SampleQuery,
) -> CmdResult<SamplesPage> {
    let mut page = samples::list(&session.connected().await?.client, &query).await?;
    let ids: Vec<String> = page.rows.iter().map(|r| r.id.clone()).collect();
    let mut alerts = watching.alerts_of(&session, &ids).await?;
    for row in &mut page.rows {
        row.alerts = alerts.remove(&row.id).unwrap_or_default();
    }
    Ok(page)
}

/// The tags and projects, for filters and pickers.
#[tauri::command]
pub async fn lookups(session: State<'_, Session>) -> CmdResult<Lookups> {
    samples::lookups(&session.connected().await?.client).await
}

/// The sample page; its analyses are then watched and sent in `analyses-changed` events.
#[tauri::command]
pub async fn sample(
    app: AppHandle,
    session: State<'_, Session>,
    watcher: State<'_, Watcher>,
    id: String,
) -> CmdResult<SampleDetail> {
    let client = session.connected().await?.client;
    let detail = samples::detail(&client, &id).await?;
    watcher.watch(client, id, move |e| {
        events::emit(&app, e);
    });
    Ok(detail)
}

/// Stops watching the sample page's analyses.
#[tauri::command]
pub fn leave_sample(watcher: State<'_, Watcher>) {
    watcher.stop();
}

/// The results of a finished alignment or functional profile, as the service sends them at
/// `/analyses/{id}/results` (everything the engine reported; `kind` is kept for the window's
/// calls and not needed).
#[tauri::command]
pub async fn analysis_results(session: State<'_, Session>, id: String, kind: String) -> CmdResult<serde_json::Value> {
    let _ = kind;
    Ok(session.connected().await?.client.analyses().results(&id).await?)
}

/// Creates a project (its short name is checked before anything is sent).
#[tauri::command]
pub async fn create_project(session: State<'_, Session>, project: NewProject) -> CmdResult<Named> {
    crate::projects::create(&session.connected().await?.client, project).await
}

/// The Projects screen: own projects, those the user is a member of, and public ones.
#[tauri::command]
pub async fn projects(session: State<'_, Session>) -> CmdResult<Vec<ProjectRow>> {
    crate::projects::list(&session.connected().await?.client).await
}

/// A project's page: the project, its members and how many samples it holds.
#[tauri::command]
pub async fn project(session: State<'_, Session>, id: String) -> CmdResult<ProjectDetail> {
    crate::projects::detail(&session.connected().await?.client, &id).await
}

/// Renames, describes, or makes public or private a project the user owns.
#[tauri::command]
pub async fn change_project(
    session: State<'_, Session>,
    id: String,
    change: ProjectChange,
) -> CmdResult<ProjectDetail> {
    crate::projects::change(&session.connected().await?.client, &id, change).await
}

/// Adds the colleague with this e-mail address to a project.
#[tauri::command]
pub async fn add_project_member(
    session: State<'_, Session>,
    id: String,
    email: String,
    access: Access,
) -> CmdResult<ProjectDetail> {
    crate::projects::add_member(&session.connected().await?.client, &id, &email, access).await
}

/// Takes a member off a project.
#[tauri::command]
pub async fn remove_project_member(session: State<'_, Session>, id: String, user: String) -> CmdResult<ProjectDetail> {
    crate::projects::remove_member(&session.connected().await?.client, &id, &user).await
}

/// Deletes a project; its samples stay, out of any project.
#[tauri::command]
pub async fn delete_project(session: State<'_, Session>, id: String) -> CmdResult<()> {
    crate::projects::delete(&session.connected().await?.client, &id).await
}

/// The Organisation screen: the organisation, the user's role, and for its admins its users
/// (filtered by part of an e-mail address).
#[tauri::command]
pub async fn organization(session: State<'_, Session>, search: Option<String>) -> CmdResult<OrganizationView> {
    crate::organization::view(&session.connected().await?.client, search).await
}

/// Adds someone to the organisation: the invitation link to give them.
#[tauri::command]
pub async fn invite_user(session: State<'_, Session>, email: String, role: mgds_api::Role) -> CmdResult<LinkView> {
    crate::organization::invite(&session.connected().await?.client, &email, role).await
}

/// Sets the lab's name on the organisation's reports (admins and owners).
#[tauri::command]
pub async fn set_lab_name(session: State<'_, Session>, name: String) -> CmdResult<()> {
    crate::organization::set_lab_name(&session.connected().await?.client, &name).await
}

/// Sets the organisation's logo from a picture read by the window (base64).
#[tauri::command]
pub async fn set_organization_logo(session: State<'_, Session>, base64: String) -> CmdResult<()> {
    crate::organization::set_logo(&session.connected().await?.client, &base64).await
}

/// Removes the organisation's logo.
#[tauri::command]
pub async fn remove_organization_logo(session: State<'_, Session>) -> CmdResult<()> {
    crate::organization::remove_logo(&session.connected().await?.client).await
}

/// Changes a user's role, or disables or enables them.
#[tauri::command]
pub async fn change_user(session: State<'_, Session>, id: String, change: UserChange) -> CmdResult<()> {
    crate::organization::change(&session.connected().await?.client, &id, change).await
}

/// A password reset link for a user.
#[tauri::command]
pub async fn reset_user_password(session: State<'_, Session>, id: String) -> CmdResult<LinkView> {
    crate::organization::reset_password(&session.connected().await?.client, &id).await
}

/// A page of the organisation's audit trail (admins and owners).
#[tauri::command]
pub async fn audit_trail(session: State<'_, Session>, query: AuditQuery) -> CmdResult<AuditPage> {
    crate::organization::audit(&session.connected().await?.client, query).await
}

/// The organisation's webhooks and newest events (admins and owners); with `problems`, only the
/// events not delivered.
#[tauri::command]
pub async fn webhooks(session: State<'_, Session>, problems: bool) -> CmdResult<WebhooksView> {
    crate::organization::webhooks(&session.connected().await?.client, problems).await
}

/// Registers a webhook; its secret, shown once.
#[tauri::command]
pub async fn add_webhook(
    session: State<'_, Session>,
    post_url: String,
    event_type: String,
) -> CmdResult<WebhookSecretView> {
    crate::organization::add_webhook(&session.connected().await?.client, &post_url, &event_type).await
}

/// Enables or disables a webhook.
#[tauri::command]
pub async fn set_webhook(session: State<'_, Session>, id: String, enabled: bool) -> CmdResult<()> {
    crate::organization::set_webhook(&session.connected().await?.client, &id, enabled).await
}

/// Gives a webhook a new secret, shown once.
#[tauri::command]
pub async fn replace_webhook_secret(session: State<'_, Session>, id: String) -> CmdResult<WebhookSecretView> {
    crate::organization::replace_webhook_secret(&session.connected().await?.client, &id).await
}

/// Removes a webhook with its events.
#[tauri::command]
pub async fn remove_webhook(session: State<'_, Session>, id: String) -> CmdResult<()> {
    crate::organization::remove_webhook(&session.connected().await?.client, &id).await
}

/// Sends a `ping` event to a webhook.
#[tauri::command]
pub async fn ping_webhook(session: State<'_, Session>, id: String) -> CmdResult<()> {
    crate::organization::ping_webhook(&session.connected().await?.client, &id).await
}

/// Delivers an event again now.
#[tauri::command]
pub async fn redeliver_event(session: State<'_, Session>, id: String) -> CmdResult<()> {
    crate::organization::redeliver_event(&session.connected().await?.client, &id).await
}

/// Ends a user's API key and sessions; what it stopped, in words.
#[tauri::command]
pub async fn revoke_user(session: State<'_, Session>, id: String) -> CmdResult<String> {
    crate::organization::revoke(&session.connected().await?.client, &id).await
}

/// The tags with the number of samples carrying each.
#[tauri::command]
pub async fn tag_counts(session: State<'_, Session>) -> CmdResult<Vec<TagCount>> {
    samples::tag_counts(&session.connected().await?.client).await
}

/// The Documents screen: the user's documents and those shared with them.
#[tauri::command]
pub async fn documents(session: State<'_, Session>) -> CmdResult<DocumentsView> {
    crate::documents::list(&session.connected().await?.client).await
}

/// Opens the native dialog to pick files (any kind) to upload as documents.
#[tauri::command]
pub async fn pick_documents(app: AppHandle) -> CmdResult<Vec<PathBuf>> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog().file().set_title("Choose documents to upload").pick_files(move |p| {
        let _ = tx.send(p.unwrap_or_default());
    });
    let picked = rx.await.unwrap_or_default();
    Ok(picked.into_iter().filter_map(|p| p.into_path().ok()).collect())
}

/// Uploads files as documents; progress arrives in `document-transfer` events.
#[tauri::command]
pub async fn upload_documents(
    app: AppHandle,
    session: State<'_, Session>,
    transfers: State<'_, DocumentTransfers>,
    files: Vec<DocumentFile>,
) -> CmdResult<()> {
    let client = session.connected().await?.client;
    transfers.upload(client, files, move |p| events::emit(&app, p));
    Ok(())
}

/// Asks where to save a document (the native dialog), then downloads it there; progress
/// arrives in `document-transfer` events under `id`. Answers the chosen path, or `None` when
/// the user cancelled the dialog.
#[tauri::command]
pub async fn download_document(
    app: AppHandle,
    session: State<'_, Session>,
    transfers: State<'_, DocumentTransfers>,
    id: String,
    document: String,
    file_name: String,
) -> CmdResult<Option<String>> {
    let client = session.connected().await?.client;
    let (tx, rx) = tokio::sync::oneshot::channel();
    // The name comes from the service: only a suggestion, and only once made safe.
    let suggested = mgds_client::safe_file_name(&file_name, &format!("document-{document}"));
    app.dialog().file().set_title("Save the document").set_file_name(&suggested).save_file(move |p| {
        let _ = tx.send(p);
    });
    let Some(path) = rx.await.ok().flatten().and_then(|p| p.into_path().ok()) else {
        return Ok(None);
    };
    let shown = path.display().to_string();
    transfers.download(client, id, document, path, move |p| events::emit(&app, p));
    Ok(Some(shown))
}

/// Cancels a document upload or download.
#[tauri::command]
pub fn cancel_document_transfer(transfers: State<'_, DocumentTransfers>, id: String) -> bool {
    transfers.cancel(&id)
}

/// Lets the colleague with this e-mail address download a document.
#[tauri::command]
pub async fn share_document(session: State<'_, Session>, id: String, email: String) -> CmdResult<DocumentsView> {
    crate::documents::share(&session.connected().await?.client, &id, &email).await
}

/// Stops a colleague downloading a document.
#[tauri::command]
pub async fn unshare_document(session: State<'_, Session>, id: String, user: String) -> CmdResult<DocumentsView> {
    crate::documents::unshare(&session.connected().await?.client, &id, &user).await
}

/// Renames a document.
#[tauri::command]
pub async fn rename_document(session: State<'_, Session>, id: String, filename: String) -> CmdResult<DocumentsView> {
    crate::documents::rename(&session.connected().await?.client, &id, &filename).await
}

/// Deletes a document and its file.
#[tauri::command]
pub async fn delete_document(session: State<'_, Session>, id: String) -> CmdResult<DocumentsView> {
    crate::documents::delete(&session.connected().await?.client, &id).await
}

/// One page of the Analyses screen.
#[tauri::command]
pub async fn list_analyses(session: State<'_, Session>, query: AnalysisQuery) -> CmdResult<AnalysesPage> {
    analyses::list(&session.connected().await?.client, &query).await
}

/// Runs one job on every selected sample; the run's progress then arrives in `batch-changed`
/// events, and the desktop is notified when one fails and when the last ends.
#[tauri::command]
pub async fn run_job_on_samples(
    app: AppHandle,
    session: State<'_, Session>,
    id: String,
    samples: Vec<String>,
    job: String,
    args: serde_json::Map<String, serde_json::Value>,
    description: Option<String>,
) -> CmdResult<BatchRun> {
    let client = session.connected().await?.client;
    let run = analyses::start_batch(&client, id, &samples, &job, args, description).await?;
    let (a, b) = (app.clone(), app);
    tokio::spawn(analyses::follow(
        client,
        run.clone(),
        move |r| events::emit(&a, r),
        move |title, body| {
            watching::notify(&b, title, body);
        },
    ));
    Ok(run)
}

/// A job's arguments form (its `job_args_schema`).
#[tauri::command]
pub async fn job_args(session: State<'_, Session>, id: String) -> CmdResult<JobArgs> {
    samples::job_args(&session.connected().await?.client, &id).await
}

/// Runs a job on a sample; the sample page's analyses are then watched again, so the new one
/// shows up and updates live.
#[tauri::command]
pub async fn run_job(
    app: AppHandle,
    session: State<'_, Session>,
    watcher: State<'_, Watcher>,
    sample: String,
    job: String,
    args: serde_json::Map<String, serde_json::Value>,
    description: Option<String>,
) -> CmdResult<String> {
    let client = session.connected().await?.client;
    let analysis = samples::run_job(&client, &sample, &job, args, description).await?;
    watcher.watch(client, sample, move |e| {
        events::emit(&app, e);
    });
    Ok(analysis)
}

/// Changes a sample (visibility, project, tags, metadata).
#[tauri::command]
pub async fn update_sample(session: State<'_, Session>, id: String, change: SampleChange) -> CmdResult<SampleDetail> {
    samples::change(&session.connected().await?.client, &id, change).await
}

/// Changes (or deletes) the selected samples: tags added or taken off, project, visibility.
#[tauri::command]
pub async fn change_samples(
    session: State<'_, Session>,
    ids: Vec<String>,
    change: BulkChange,
) -> CmdResult<BulkOutcome> {
    samples::bulk(&session.connected().await?.client, &ids, change).await
}

/// Checks dropped or picked files before anything is sent. The drop handler calls this with
/// the paths of Tauri's drag-and-drop event.
#[tauri::command]
pub async fn check_files(paths: Vec<PathBuf>) -> CmdResult<Vec<FileCheck>> {
    uploads::check_all(paths).await
}

/// Opens the native dialog to pick sequence files (or a folder); answers the chosen paths.
#[tauri::command]
pub async fn pick_files(app: AppHandle, folder: bool) -> CmdResult<Vec<PathBuf>> {
    if folder {
        return Ok(ask_folder(&app, "Choose a folder of reads").await.into_iter().collect());
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog()
        .file()
        .set_title("Choose read files")
        .add_filter("Reads (FASTQ, FASTA)", &["fastq", "fq", "fasta", "fa", "fna", "gz", "bz2", "xz", "zst"])
        .pick_files(move |p| {
            let _ = tx.send(p.unwrap_or_default());
        });
    let picked = rx.await.unwrap_or_default();
    Ok(picked.into_iter().filter_map(|p| p.into_path().ok()).collect())
}

/// Starts uploads; progress arrives in `upload-progress` events.
#[tauri::command]
pub async fn start_uploads(
    app: AppHandle,
    session: State<'_, Session>,
    uploads: State<'_, Uploads>,
    batch: UploadBatch,
) -> CmdResult<()> {
    let client = session.connected().await?.client;
    let staging = session.paths().data_dir.join("upload-staging");
    let files: Arc<HashMap<String, UploadFile>> =
        Arc::new(batch.files.iter().map(|f| (f.id.clone(), f.clone())).collect());
    uploads.start(client, batch, &staging, move |p| {
        // A new sample is checked against the alert rules for every folder once classified.
        if p.state == UploadState::Done
            && let (Some(sample_id), Some(file)) = (p.sample_id.clone(), files.get(&p.id).cloned())
        {
            let app = app.clone();
            tauri::async_runtime::spawn(async move {
                app.state::<Watching>().follow(&sample_id, &file.name(), &file.source()).await;
            });
        }
        events::emit(&app, p);
    });
    Ok(())
}

/// Cancels an upload.
#[tauri::command]
pub fn cancel_upload(uploads: State<'_, Uploads>, id: String) -> bool {
    uploads.cancel(&id)
}

/// The results of a classification.
#[tauri::command]
pub async fn classification(
    session: State<'_, Session>,
    cache: State<'_, ResultsCache>,
    id: String,
) -> CmdResult<ClassificationView> {
    let c = session.connected().await?;
    let r = cache.classification(&c.client, &c.base_url, &id).await?;
    Ok(ClassificationView::of(&r))
}

/// Starts a copy, without the host's reads, of the sample that classification `id` is of (the
/// service writes it; the new sample is `importing` until then).
#[tauri::command]
pub async fn remove_host_reads(session: State<'_, Session>, id: String) -> CmdResult<HostCopy> {
    crate::results::remove_host(&session.connected().await?.client, &id).await
}

/// The scores of a controls analysis (a negative control's batch).
#[tauri::command]
pub async fn control_scores(session: State<'_, Session>, id: String) -> CmdResult<ContaminationView> {
    crate::results::controls(&session.connected().await?.client, &id).await
}

/// The taxa the newest controls analysis of a sample's batch calls possible contaminants.
#[tauri::command]
pub async fn sample_contaminants(
    session: State<'_, Session>,
    sample_id: String,
) -> CmdResult<Option<SampleContaminants>> {
    crate::results::sample_contaminants(&session.connected().await?.client, &sample_id).await
}

/// The results of a panel analysis.
#[tauri::command]
pub async fn panel(session: State<'_, Session>, id: String) -> CmdResult<PanelView> {
    crate::results::panel(&session.connected().await?.client, &id).await
}

/// The demo reads (simulated from the demo genomes, gzipped FASTQ), written once into the app's
/// cache folder: the path to upload as a first sample from the empty samples screen.
#[tauri::command]
pub async fn demo_reads(app: AppHandle) -> CmdResult<String> {
    let dir = app
        .path()
        .app_cache_dir()
        .map_err(|e| CmdError::new("demo", format!("The app's cache folder could not be found ({e}).")))?
        .join("demo");
    let path = dir.join(mgds_server::references::DEMO_READS_NAME);
    // Written whole or not at all, and again when the file there is not this version's.
    let (d, p) = (dir.clone(), path.clone());
    tokio::task::spawn_blocking(move || {
        std::fs::create_dir_all(&d)?;
        mgds_server::references::write_demo_reads(&p)
    })
    .await
    .map_err(|e| CmdError::new("demo", format!("The demo reads could not be written ({e}).")))?
    .map_err(|e| CmdError::new("demo", format!("The demo reads could not be written to {} ({e}).", dir.display())))?;
    Ok(path.display().to_string())
}

/// Saves text the UI made (the taxa table as CSV) where the user chooses. Answers the path, or
/// `None` when the user cancelled.
#[tauri::command]
pub async fn save_csv(app: AppHandle, file_name: String, text: String) -> CmdResult<Option<String>> {
    let Some(path) = ask_save_path(&app, "Save the table", &file_name, ("CSV table", &["csv"])).await else {
        return Ok(None);
    };
    write_file(&path, text.as_bytes())?;
    Ok(Some(path.display().to_string()))
}

/// Saves a file of the service where the user chooses: a sample's reads (`kind` `sample`), a
/// classification's read-level TSV (gzipped), an alignment (SAM, gzipped) or a functional
/// profile's table (TSV). None if they cancel.
#[tauri::command]
pub async fn download_results(
    app: AppHandle,
    session: State<'_, Session>,
    id: String,
    kind: String,
    file_name: String,
) -> CmdResult<Option<String>> {
    let client = session.connected().await?.client;
    let (title, filter): (&str, (&str, &[&str])) = match kind.as_str() {
        "sample" => ("Save the reads", ("FASTQ or FASTA", &["gz", "fastq", "fq", "fasta", "fa"])),
        "classification" => ("Save the read-level results", ("Read-level TSV (gzipped)", &["gz", "tsv"])),
        "alignment" => ("Save the alignment", ("SAM (gzipped)", &["gz", "sam"])),
        "control" => ("Save the scores", ("CSV table", &["csv"])),
        "report" => ("Save the report", ("PDF", &["pdf"])),
        _ => ("Save the results", ("TSV table", &["tsv", "txt"])),
    };
    let Some(path) = ask_save_path(&app, title, &file_name, filter).await else {
        return Ok(None);
    };
    match kind.as_str() {
        "sample" => client.samples().download(&id, &path).await?,
        "classification" => client.classifications().download_readlevel(&id, &path).await?,
        _ => client.analyses().download_results(&id, &path).await?,
    };
    Ok(Some(path.display().to_string()))
}

/// The "Watched folders" screen; changes arrive in `watch-changed` events.
#[tauri::command]
pub async fn watch_view(session: State<'_, Session>, watching: State<'_, Watching>) -> CmdResult<WatchView> {
    watching.view(&session).await
}

/// Opens the native dialog to choose a folder to watch.
#[tauri::command]
pub async fn pick_watch_folder(app: AppHandle) -> CmdResult<Option<PathBuf>> {
    Ok(ask_folder(&app, "Choose a folder to watch").await)
}

/// Saves a folder to watch and starts watching it.
#[tauri::command]
pub async fn add_watch_folder(app: AppHandle, folder: NewFolder) -> CmdResult<()> {
    watching::add(&app, folder).await
}

/// Changes a watched folder's settings.
#[tauri::command]
pub async fn update_watch_folder(app: AppHandle, original: PathBuf, folder: NewFolder) -> CmdResult<()> {
    watching::update(&app, &original, folder).await
}

/// Sets the watcher's upload speed limit in bytes per second (none: no limit).
#[tauri::command]
pub async fn set_upload_limit(
    session: State<'_, Session>,
    watching: State<'_, Watching>,
    limit: Option<u64>,
) -> CmdResult<()> {
    watching.set_upload_limit(&session.paths().config_dir, limit).await
}

/// Stops watching a folder (what was uploaded stays).
#[tauri::command]
pub async fn remove_watch_folder(app: AppHandle, path: PathBuf) -> CmdResult<()> {
    watching::remove(&app, &path).await
}

/// Pauses or resumes the watcher's uploads.
#[tauri::command]
pub async fn pause_watching(session: State<'_, Session>, watching: State<'_, Watching>, paused: bool) -> CmdResult<()> {
    watching.set_paused(&session.paths().data_dir, paused).await
}

/// Samples side by side (the comparison view); fetching progress arrives in `compare-progress`
/// events.
#[tauri::command]
pub async fn compare_samples(
    app: AppHandle,
    session: State<'_, Session>,
    cache: State<'_, CompareCache>,
    request: CompareRequest,
) -> CmdResult<ComparisonView> {
    let c = session.connected().await?;
    let src = compare::Source { client: &c.client, base_url: &c.base_url, cache: &cache };
    compare::compare(src, &request, &|p| events::emit(&app, p)).await
}

/// Saves the comparison where the user chooses: the chart as `svg` or `png` (at `dpi`), or the
/// numbers behind it as `csv` or `tsv`. Answers the path, or `None` when the user cancelled.
#[tauri::command]
pub async fn export_comparison(
    app: AppHandle,
    session: State<'_, Session>,
    cache: State<'_, CompareCache>,
    request: CompareRequest,
    format: String,
    dpi: u32,
) -> CmdResult<Option<String>> {
    let (title, filter) = chart_or_table(&format);
    let Some(path) = ask_save_path(&app, title, &compare::export_name(&request, &format), filter).await else {
        return Ok(None);
    };
    let c = session.connected().await?;
    let src = compare::Source { client: &c.client, base_url: &c.base_url, cache: &cache };
    compare::export(src, &request, &format, dpi, &path).await?;
    Ok(Some(path.display().to_string()))
}

/// A report of the comparison as `format` (`pdf` or `html`): saved where the user chooses, or
/// with `keep` kept as a document of the service. `None` when the user cancelled.
#[tauri::command]
pub async fn comparison_report(
    app: AppHandle,
    session: State<'_, Session>,
    cache: State<'_, CompareCache>,
    request: ComparisonReportRequest,
    format: String,
    keep: bool,
) -> CmdResult<Option<ReportMade>> {
    let c = session.connected().await?;
    let src = compare::Source { client: &c.client, base_url: &c.base_url, cache: &cache };
    let r = report::make(src, &request, &format).await?;
    let document = if keep {
        Some(report::keep(&c.client, &r).await?)
    } else {
        let filter: (&str, &[&str]) = if format == "html" { ("Web page", &["html"]) } else { ("PDF", &["pdf"]) };
        let Some(path) = ask_save_path(&app, "Save the report", &r.file_name, filter).await else {
            return Ok(None);
        };
        write_file(&path, &r.bytes)?;
        None
    };
    Ok(Some(ReportMade {
        file_name: r.file_name.clone(),
        bytes: r.bytes.len() as u64,
        samples: r.samples,
        skipped: r.skipped,
        document,
    }))
}

/// The compared samples' diversity (the comparison view's diversity and ordination tabs), with
/// its charts; fetching progress arrives in `compare-progress` events.
#[tauri::command]
pub async fn sample_diversity(
    app: AppHandle,
    session: State<'_, Session>,
    cache: State<'_, CompareCache>,
    request: DiversityRequest,
) -> CmdResult<DiversityScreen> {
    let c = session.connected().await?;
    let src = compare::Source { client: &c.client, base_url: &c.base_url, cache: &cache };
    diversity::screen(src, &request, &|p| events::emit(&app, p)).await
}

/// Saves a file of the diversity view where the user chooses (`what`: one of
/// [`diversity::FILES`], a PNG at `dpi`). Answers the path, or `None` when the user cancelled.
#[tauri::command]
pub async fn export_diversity(
    app: AppHandle,
    session: State<'_, Session>,
    cache: State<'_, CompareCache>,
    request: DiversityRequest,
    what: String,
    dpi: u32,
) -> CmdResult<Option<String>> {
    let c = session.connected().await?;
    let src = compare::Source { client: &c.client, base_url: &c.base_url, cache: &cache };
    let view = diversity::prepare(src, &request, &|_| {}).await?;
    let (title, filter) = chart_or_table(what.rsplit('.').next().unwrap_or_default());
    let name = view.file_name(&what);
    let drawn = tokio::task::spawn_blocking(move || view.file(&what, diversity::WIDTH, dpi));
    let (bytes, _) =
        drawn.await.map_err(|e| CmdError::new("chart", format!("The file could not be made ({e}).")))??;
    let Some(path) = ask_save_path(&app, title, &name, filter).await else {
        return Ok(None);
    };
    write_file(&path, &bytes)?;
    Ok(Some(path.display().to_string()))
}

/// The reads' quality control of the compared samples (the comparison's quality tab).
#[tauri::command]
pub async fn compare_qc(
    app: AppHandle,
    session: State<'_, Session>,
    cache: State<'_, CompareCache>,
    samples: Vec<String>,
) -> CmdResult<QcComparison> {
    let c = session.connected().await?;
    let src = compare::Source { client: &c.client, base_url: &c.base_url, cache: &cache };
    qc::compare(src, &samples, &|p| events::emit(&app, p)).await
}

/// Saves the compared samples' quality control as CSV where the user chooses. Answers the
/// path, or `None` when the user cancelled.
#[tauri::command]
pub async fn export_compare_qc(
    app: AppHandle,
    session: State<'_, Session>,
    cache: State<'_, CompareCache>,
    samples: Vec<String>,
    file_name: String,
) -> CmdResult<Option<String>> {
    let c = session.connected().await?;
    let src = compare::Source { client: &c.client, base_url: &c.base_url, cache: &cache };
    let v = qc::compare(src, &samples, &|_| {}).await?;
    let mut bytes = Vec::new();
    qc::write_table(&mut bytes, &v.rows, b',')?;
    let (title, filter) = chart_or_table("csv");
    let Some(path) = ask_save_path(&app, title, &file_name, filter).await else {
        return Ok(None);
    };
    write_file(&path, &bytes)?;
    Ok(Some(path.display().to_string()))
}

/// The compared samples' taxa scored against the negative controls among them (the
/// comparison's controls tab).
#[tauri::command]
pub async fn compare_contaminants(
    app: AppHandle,
    session: State<'_, Session>,
    cache: State<'_, CompareCache>,
    request: ContaminationRequest,
) -> CmdResult<ContaminationView> {
    let c = session.connected().await?;
    let src = compare::Source { client: &c.client, base_url: &c.base_url, cache: &cache };
    crate::contamination::prepare(src, &request, &|p| events::emit(&app, p)).await
}

/// Saves the contaminant scores as CSV where the user chooses. Answers the path, or `None`
/// when the user cancelled.
#[tauri::command]
pub async fn export_contaminants(
    app: AppHandle,
    session: State<'_, Session>,
    cache: State<'_, CompareCache>,
    request: ContaminationRequest,
    file_name: String,
) -> CmdResult<Option<String>> {
    let c = session.connected().await?;
    let src = compare::Source { client: &c.client, base_url: &c.base_url, cache: &cache };
    let v = crate::contamination::prepare(src, &request, &|_| {}).await?;
    let mut bytes = Vec::new();
    v.write_table(&mut bytes, b',')?;
    let (title, filter) = chart_or_table("csv");
    let Some(path) = ask_save_path(&app, title, &file_name, filter).await else {
        return Ok(None);
    };
    write_file(&path, &bytes)?;
    Ok(Some(path.display().to_string()))
}

/// Forgets the samples and results the comparison view fetched, so the next comparison asks the
/// service again.
#[tauri::command]
pub fn refresh_comparison(cache: State<'_, CompareCache>) {
    cache.clear();
}

/// Saves the reads of one taxon (and those below it) from the given samples into a folder the
/// user chooses; progress arrives in `taxon-reads-progress` events. `None` when they cancelled.
#[tauri::command]
pub async fn save_taxon_reads(
    app: AppHandle,
    session: State<'_, Session>,
    cache: State<'_, CompareCache>,
    samples: Vec<String>,
    tax_id: String,
    taxon: String,
) -> CmdResult<Option<TaxonReadsProgress>> {
    let Some(folder) = ask_folder(&app, &format!("Choose a folder for the reads of {taxon}")).await else {
        return Ok(None);
    };
    let c = session.connected().await?;
    let src = compare::Source { client: &c.client, base_url: &c.base_url, cache: &cache };
    let done = compare::taxon_reads(src, &samples, &tax_id, &taxon, &folder, &|p| events::emit(&app, p)).await?;
    Ok(Some(done))
}

/// The run dashboard: every run the watched folders saw, each barcode (or sample) with its
/// batches, reads and its `top` taxa at `rank` as they grew; changes arrive in `watch-changed`
/// events.
#[tauri::command]
pub async fn live_runs(
    session: State<'_, Session>,
    watching: State<'_, Watching>,
    rank: String,
    top: u32,
) -> CmdResult<Vec<LiveRun>> {
    watching.live_runs(&session, &rank, top as usize).await
}

/// The taxon alert rules for every watched folder, and the alerts that fired.
#[tauri::command]
pub async fn watch_alerts(session: State<'_, Session>, watching: State<'_, Watching>) -> CmdResult<AlertsView> {
    watching.alerts(&session).await
}

/// Saves the taxon alert rules for every watched folder (shared with `mgds watch`).
#[tauri::command]
pub async fn set_watch_alerts(app: AppHandle, rules: Vec<String>) -> CmdResult<AlertsView> {
    watching::set_alert_rules(&app, &rules).await
}
