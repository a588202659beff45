//! The screens' commands for a browser: `POST /api/web/v1/commands/{name}` with the command's
//! arguments as a JSON object (the names and shapes MGDS Desktop's window sends its shell),
//! answered with the command's result as JSON, or a refusal `{code, message}` in words.
//!
//! Each command is the application's (`mgds-app`), run here as a client of the service's own
//! API on loopback, signed in with the browser's session (its cookie and CSRF token): the API's
//! rules about who sees and changes what hold for the browser exactly as for any client. What
//! a browser cannot do (pick files on this machine, watch folders, write into a folder) is
//! refused as `desktop_only`; commands not yet offered to a browser the same way.

use axum::http::StatusCode;
use mgds_app::browser_uploads::{self, BrowserUpload, StoreAddresses};
use mgds_app::compare::{self, CompareCache, CompareRequest, Source};
use mgds_app::diversity::{self, DiversityRequest};
use mgds_app::error::{CmdError, CmdResult};
use mgds_app::results::ClassificationView;
use mgds_app::{analyses, documents, organization, projects, results, samples};
use mgds_client::Client;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// Drawings (charts, comparisons) made at once for all browsers together: each takes a core
/// while it draws.
static DRAWING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

/// The most samples one bulk change names (the desktop sends a page's selection).
const MAX_BULK: usize = 1000;

/// The most paths of files found in folders asked about at once.
const MAX_FOLDER_PATHS: usize = 10_000;

/// The highest resolution a browser saves a comparison's PNG at (a 1,100-pixel-wide chart at
/// 300 dpi is about 3,400 pixels wide).
pub(crate) const MAX_BROWSER_DPI: u32 = 300;

pub(crate) async fn drawing_turn() -> CmdResult<tokio::sync::SemaphorePermit<'static>> {
    DRAWING.acquire().await.map_err(|_| CmdError::new("busy", "The service is stopping; try again in a moment."))
}

/// What one command runs with.
pub struct Cx<'a> {
    /// The service's API, as the browser's user.
    pub client: &'a Client,
    /// The signed-in user's id (keys what they fetched in the shared caches).
    pub user: &'a str,
    /// The user's e-mail address.
    pub email: Option<&'a str>,
    /// The service's public address.
    pub public_url: &'a str,
    /// Classification results fetched for comparisons, shared by every browser (one ceiling).
    pub compare: &'a CompareCache,
    /// Where an upload's store is, for an upload whose bucket is the one named.
    pub store: &'a (dyn Fn(&str) -> CmdResult<StoreAddresses> + Send + Sync),
}

/// The argument `key` of `args`.
fn arg<T: DeserializeOwned>(args: &Map<String, Value>, key: &str) -> CmdResult<T> {
    let v = args.get(key).cloned().unwrap_or(Value::Null);
    serde_json::from_value(v).map_err(|e| CmdError::new("invalid", format!("The argument {key} is not right: {e}.")))
}

fn out<T: serde::Serialize>(v: T) -> CmdResult<Value> {
    serde_json::to_value(v).map_err(|e| CmdError::new("failed", format!("The answer could not be written: {e}.")))
}

/// Runs the command `name` with `args`.
pub async fn run(name: &str, args: &Map<String, Value>, cx: &Cx<'_>) -> CmdResult<Value> {
    let c = cx.client;
    let id = || arg::<String>(args, "id");
    match name {
        "connection" => out(mgds_app::connection::ConnectionView {
            profile: "browser".into(),
            base_url: cx.public_url.to_string(),
            local: false,
            email: cx.email.map(String::from),
            data_dir: String::new(),
        }),
        "list_samples" => out(samples::list(c, &arg(args, "query")?).await?),
        "lookups" => out(samples::lookups(c).await?),
        "tag_counts" => out(samples::tag_counts(c).await?),
        "sample" => out(samples::detail(c, &id()?).await?),
        // The desktop watches an open sample's analyses and sends their changes as events; a
        // browser asks for the sample again instead.
        "leave_sample" => Ok(Value::Null),
        "update_sample" => out(samples::change(c, &id()?, arg(args, "change")?).await?),
        "change_samples" => {
            let ids: Vec<String> = arg(args, "ids")?;
            if ids.len() > MAX_BULK {
                return Err(CmdError::new("invalid", format!("Change at most {MAX_BULK} samples at once.")));
            }
            out(samples::bulk(c, &ids, arg(args, "change")?).await?)
        }
        "job_args" => out(samples::job_args(c, &id()?).await?),
        // The browser reads the start of each file it is given and sends that: the files
        // themselves go to the store when they are uploaded.
        // Which of the files found in folders a browser was given are sequence files (by
        // their paths alone), before it reads any of them.
        "sequence_file_paths" => {
            let paths: Vec<String> = arg(args, "paths")?;
            if paths.len() > MAX_FOLDER_PATHS {
                return Err(CmdError::new("invalid", format!("Ask about at most {MAX_FOLDER_PATHS} paths at once.")));
            }
            out(paths.iter().map(|p| mgds_app::uploads::is_sequence_path(p)).collect::<Vec<bool>>())
        }
        "check_browser_files" => {
            let files: Vec<mgds_app::uploads::BrowserFile> = arg(args, "files")?;
            out(mgds_app::uploads::check_described(&files)?)
        }
        // A batch run: the desktop follows it and sends its changes as events; a browser asks
        // how it stands now and then, with the run it was given.
        "run_job_on_samples" => {
            let ids: Vec<String> = arg(args, "samples")?;
            if ids.len() > MAX_BULK {
                return Err(CmdError::new(
                    "invalid",
                    format!("Run an analysis on at most {MAX_BULK} samples at once."),
                ));
            }
            let job: String = arg(args, "job")?;
            let job_args: Map<String, Value> = arg::<Option<_>>(args, "args")?.unwrap_or_default();
            out(analyses::start_batch(c, id()?, &ids, &job, job_args, arg(args, "description")?).await?)
        }
        // Uploads: the browser sends the file's parts to the store itself (see
        // `mgds_app::browser_uploads`); here each step is asked of the service and the store.
        "begin_browser_upload" => {
            let request = arg(args, "request")?;
            out(browser_uploads::begin(c, |init| (cx.store)(&init.s3_bucket), request).await?)
        }
        "sign_upload_parts" => {
            let upload: BrowserUpload = arg(args, "upload")?;
            let at = (cx.store)(&upload.init.s3_bucket)?;
            out(browser_uploads::sign(c, &at, &upload, arg(args, "file")?, &arg::<Vec<u32>>(args, "parts")?).await?)
        }
        "finish_browser_upload" => {
            let upload: BrowserUpload = arg(args, "upload")?;
            let at = (cx.store)(&upload.init.s3_bucket)?;
            out(browser_uploads::finish(c, &at, &upload, arg(args, "etags")?).await?)
        }
        "cancel_browser_upload" => {
            let upload: BrowserUpload = arg(args, "upload")?;
            let at = (cx.store)(&upload.init.s3_bucket)?;
            out(browser_uploads::cancel(c, &at, &upload).await?)
        }
        "batch_progress" => {
            let run: analyses::BatchRun = arg(args, "run")?;
            if run.items.len() > MAX_BULK {
                return Err(CmdError::new("invalid", format!("A run has at most {MAX_BULK} samples.")));
            }
            out(analyses::refresh(c, &run).await?)
        }
        "run_job" => {
            let sample: String = arg(args, "sample")?;
            let job: String = arg(args, "job")?;
            let job_args: Map<String, Value> = arg::<Option<_>>(args, "args")?.unwrap_or_default();
            out(samples::run_job(c, &sample, &job, job_args, arg(args, "description")?).await?)
        }
        "analysis_results" => out(c.analyses().results(&id()?).await?),
        "classification" => {
            let r = c.classifications().results(&id()?).await?;
            out(ClassificationView::of(&r))
        }
        "remove_host_reads" => out(results::remove_host(c, &id()?).await?),
        "panel" => out(results::panel(c, &id()?).await?),
        "control_scores" => out(results::controls(c, &id()?).await?),
        "sample_contaminants" => out(results::sample_contaminants(c, &arg::<String>(args, "sampleId")?).await?),
        "abundance_chart" => {
            let r = std::sync::Arc::new(c.classifications().results(&id()?).await?);
            let _turn = drawing_turn().await?;
            out(mgds_app::chart::view(r, &arg(args, "options")?).await?)
        }
        "list_analyses" => out(analyses::list(c, &arg(args, "query")?).await?),
        "projects" => out(projects::list(c).await?),
        "project" => out(projects::detail(c, &id()?).await?),
        "create_project" => out(projects::create(c, arg(args, "project")?).await?),
        "change_project" => out(projects::change(c, &id()?, arg(args, "change")?).await?),
        "add_project_member" => {
            let email: String = arg(args, "email")?;
            out(projects::add_member(c, &id()?, &email, arg(args, "access")?).await?)
        }
        "remove_project_member" => out(projects::remove_member(c, &id()?, &arg::<String>(args, "user")?).await?),
        "delete_project" => out(projects::delete(c, &id()?).await?),
        "organization" => out(organization::view(c, arg(args, "search")?).await?),
        "invite_user" => {
            let email: String = arg(args, "email")?;
            out(organization::invite(c, &email, arg(args, "role")?).await?)
        }
        "change_user" => out(organization::change(c, &id()?, arg(args, "change")?).await?),
        "set_lab_name" => out(organization::set_lab_name(c, &arg::<String>(args, "name")?).await?),
        "set_organization_logo" => out(organization::set_logo(c, &arg::<String>(args, "base64")?).await?),
        "remove_organization_logo" => out(organization::remove_logo(c).await?),
        "reset_user_password" => out(organization::reset_password(c, &id()?).await?),
        "revoke_user" => out(organization::revoke(c, &id()?).await?),
        "audit_trail" => out(organization::audit(c, arg(args, "query")?).await?),
        "webhooks" => out(organization::webhooks(c, arg(args, "problems")?).await?),
        "add_webhook" => {
            let (url, event_type): (String, String) = (arg(args, "postUrl")?, arg(args, "eventType")?);
            out(organization::add_webhook(c, &url, &event_type).await?)
        }
        "set_webhook" => out(organization::set_webhook(c, &id()?, arg(args, "enabled")?).await?),
        "replace_webhook_secret" => out(organization::replace_webhook_secret(c, &id()?).await?),
        "remove_webhook" => out(organization::remove_webhook(c, &id()?).await?),
        "ping_webhook" => out(organization::ping_webhook(c, &id()?).await?),
        "redeliver_event" => out(organization::redeliver_event(c, &id()?).await?),
        "documents" => out(documents::list(c).await?),
        "share_document" => out(documents::share(c, &id()?, &arg::<String>(args, "email")?).await?),
        "unshare_document" => out(documents::unshare(c, &id()?, &arg::<String>(args, "user")?).await?),
        "rename_document" => out(documents::rename(c, &id()?, &arg::<String>(args, "filename")?).await?),
        "delete_document" => out(documents::delete(c, &id()?).await?),
        "compare_samples" => {
            let request: CompareRequest = arg(args, "request")?;
            let src = Source { client: c, base_url: cx.user, cache: cx.compare };
            let _turn = drawing_turn().await?;
            out(compare::compare(src, &request, &|_| {}).await?)
        }
        "sample_diversity" => {
            let request: DiversityRequest = arg(args, "request")?;
            let src = Source { client: c, base_url: cx.user, cache: cx.compare };
            // Computed and drawn a few at a time (`mgds_app::diversity`), after the fetching.
            out(diversity::screen(src, &request, &|_| {}).await?)
        }
        "diversity_file" => {
            let request: DiversityRequest = arg(args, "request")?;
            let what: String = arg(args, "what")?;
            let dpi: u32 = arg::<Option<u32>>(args, "dpi")?.unwrap_or(150).min(MAX_BROWSER_DPI);
            let src = Source { client: c, base_url: cx.user, cache: cx.compare };
            let view = diversity::prepare(src, &request, &|_| {}).await?;
            let _turn = drawing_turn().await?;
            let name = view.file_name(&what);
            let drawn = tokio::task::spawn_blocking(move || view.file(&what, diversity::WIDTH, dpi))
                .await
                .map_err(|e| CmdError::new("chart", format!("The diversity could not be drawn ({e}).")))?;
            let (bytes, mime) = drawn?;
            let mut answer = file_answer(&bytes, mime);
            answer["name"] = json!(name);
            out(answer)
        }
        "compare_contaminants" => {
            let request: mgds_app::contamination::ContaminationRequest = arg(args, "request")?;
            let src = Source { client: c, base_url: cx.user, cache: cx.compare };
            out(mgds_app::contamination::prepare(src, &request, &|_| {}).await?)
        }
        "contaminants_file" => {
            let request: mgds_app::contamination::ContaminationRequest = arg(args, "request")?;
            let src = Source { client: c, base_url: cx.user, cache: cx.compare };
            let v = mgds_app::contamination::prepare(src, &request, &|_| {}).await?;
            let mut bytes = Vec::new();
            v.write_table(&mut bytes, b',')?;
            out(file_answer(&bytes, "text/csv"))
        }
        "compare_qc" => {
            let samples: Vec<String> = arg(args, "samples")?;
            let src = Source { client: c, base_url: cx.user, cache: cx.compare };
            out(mgds_app::qc::compare(src, &samples, &|_| {}).await?)
        }
        "compare_qc_file" => {
            let samples: Vec<String> = arg(args, "samples")?;
            let src = Source { client: c, base_url: cx.user, cache: cx.compare };
            let v = mgds_app::qc::compare(src, &samples, &|_| {}).await?;
            let mut bytes = Vec::new();
            mgds_app::qc::write_table(&mut bytes, &v.rows, b',')?;
            out(file_answer(&bytes, "text/csv"))
        }
        "sample_qc" => {
            let r = std::sync::Arc::new(c.classifications().results(&id()?).await?);
            let _turn = drawing_turn().await?;
            out(mgds_app::qc::view(r).await?)
        }
        "qc_file" => {
            let format: String = arg(args, "format")?;
            let title: String = arg::<Option<String>>(args, "title")?.unwrap_or_default();
            let r = std::sync::Arc::new(c.classifications().results(&id()?).await?);
            let _turn = drawing_turn().await?;
            let bytes = mgds_app::qc::file(r, &title, &format).await?;
            let mime = match format.as_str() {
                "png" => "image/png",
                "svg" => "image/svg+xml",
                _ => "text/csv",
            };
            out(file_answer(&bytes, mime))
        }
        // Files for a browser to save. A stored file (reads, a document, an analysis's output)
        // is the service's own signed, expiring download address, which the browser follows
        // (the file streams from the store; nothing holds it here). A drawn one (a chart, a
        // comparison's numbers) comes whole, bounded by what is drawn.
        "download_address" => {
            let kind: String = arg(args, "kind")?;
            let id = id()?;
            let url = match kind.as_str() {
                "sample" => c.samples().download_uri(id.as_str()).await?.download_uri,
                "document" => c.documents().download_uri(id.as_str()).await?.download_uri,
                "classification" => c.classifications().readlevel_url(id.as_str()).await?.url,
                "alignment" | "functional_profile" | "control" | "report" => {
                    let files = c.analyses().files(id.as_str()).await?;
                    let file = files.into_iter().next().ok_or_else(|| {
                        CmdError::new("not_found", "This analysis has no file to save: its only output is its results.")
                    })?;
                    file.url
                }
                other => return Err(CmdError::new("invalid", format!("There is no file of the kind {other:?}."))),
            };
            out(json!({ "url": url }))
        }
        "chart_file" => {
            let format: String = arg(args, "format")?;
            let controls: mgds_app::chart::ChartControls = arg(args, "options")?;
            let r = std::sync::Arc::new(c.classifications().results(&id()?).await?);
            let png = match format.as_str() {
                "png" => true,
                "svg" => false,
                other => return Err(CmdError::new("invalid", format!("There is no chart file as {other:?}."))),
            };
            let _turn = drawing_turn().await?;
            let bytes = mgds_app::chart::image(r, &controls, png).await?;
            out(file_answer(&bytes, if png { "image/png" } else { "image/svg+xml" }))
        }
        "sunburst_chart" => {
            let controls: mgds_app::chart::SunburstControls = arg(args, "options")?;
            let r = std::sync::Arc::new(c.classifications().results(&id()?).await?);
            let _turn = drawing_turn().await?;
            out(mgds_app::chart::sunburst(r, &controls).await?)
        }
        "sunburst_file" => {
            let format: String = arg(args, "format")?;
            let controls: mgds_app::chart::SunburstControls = arg(args, "options")?;
            let r = std::sync::Arc::new(c.classifications().results(&id()?).await?);
            let _turn = drawing_turn().await?;
            let bytes = mgds_app::chart::sunburst_file(r, &controls, &format).await?;
            let mime = match format.as_str() {
                "png" => "image/png",
                "krona" => "text/tab-separated-values",
                _ => "image/svg+xml",
            };
            out(file_answer(&bytes, mime))
        }
        "comparison_file" => {
            let request: CompareRequest = arg(args, "request")?;
            let format: String = arg(args, "format")?;
            let dpi: u32 = arg::<Option<u32>>(args, "dpi")?.unwrap_or(150).min(MAX_BROWSER_DPI);
            if !["svg", "png", "csv", "tsv"].contains(&format.as_str()) {
                return Err(CmdError::new("invalid", format!("There is no export as {format:?}.")));
            }
            let src = Source { client: c, base_url: cx.user, cache: cx.compare };
            let _turn = drawing_turn().await?;
            let p = compare::prepare(src, &request, &|_| {}).await?;
            let kind = format.clone();
            let drawn = tokio::task::spawn_blocking(move || -> CmdResult<(Vec<u8>, &'static str)> {
                Ok(match kind.as_str() {
                    "svg" => (p.chart(compare::WIDTH)?.into_bytes(), "image/svg+xml"),
                    "png" => (p.png(compare::WIDTH, dpi)?, "image/png"),
                    "csv" => {
                        let mut b = Vec::new();
                        p.write_table(&mut b, b',')?;
                        (b, "text/csv")
                    }
                    _ => {
                        let mut b = Vec::new();
                        p.write_table(&mut b, b'\t')?;
                        (b, "text/tab-separated-values")
                    }
                })
            })
            .await
            .map_err(|e| CmdError::new("chart", format!("The comparison could not be drawn ({e}).")))?;
            let (bytes, mime) = drawn?;
            let mut answer = file_answer(&bytes, mime);
            answer["name"] = json!(compare::export_name(&request, &format));
            out(answer)
        }
        // A comparison's report, saved by the browser or kept as a document of the service.
        "comparison_report" => {
            let request: mgds_app::report::ComparisonReportRequest = arg(args, "request")?;
            let format: String = arg(args, "format")?;
            let kept: bool = arg(args, "keep")?;
            let src = Source { client: c, base_url: cx.user, cache: cx.compare };
            let _turn = drawing_turn().await?;
            let r = mgds_app::report::make(src, &request, &format).await?;
            let document = if kept { Some(mgds_app::report::keep(c, &r).await?) } else { None };
            let mut answer = if kept { json!({}) } else { file_answer(&r.bytes, r.mime) };
            answer["name"] = json!(r.file_name);
            answer["made"] = json!(mgds_app::report::ReportMade {
                file_name: r.file_name.clone(),
                bytes: r.bytes.len() as u64,
                samples: r.samples,
                skipped: r.skipped,
                document,
            });
            out(answer)
        }
        // A browser's comparison looks at its samples again each time (a classification that
        // finished since, or access taken away, is seen at once); results never change.
        "refresh_comparison" => Ok(Value::Null),
        "profiles"
        | "add_profile"
        | "add_sso_profile"
        | "switch_profile"
        | "remove_profile"
        | "watch_view"
        | "pick_watch_folder"
        | "add_watch_folder"
        | "update_watch_folder"
        | "remove_watch_folder"
        | "pause_watching"
        | "set_upload_limit"
        | "live_runs"
        | "watch_alerts"
        | "set_watch_alerts"
        | "pick_files"
        | "pick_documents"
        | "demo_reads" => Err(CmdError::new(
            "desktop_only",
            "This is MGDS Desktop's: it works with folders and files on the computer it runs on.",
        )),
        other => Err(CmdError::new(
            "not_in_browser",
            format!("{other} is not offered in the browser; MGDS Desktop and the mgds command line have it."),
        )),
    }
}

/// A drawn file as a browser saves it: its type and its bytes (base64).
fn file_answer(bytes: &[u8], mime: &str) -> Value {
    use base64::Engine;
    json!({ "mime": mime, "base64": base64::engine::general_purpose::STANDARD.encode(bytes) })
}

/// The HTTP status a refusal is answered with.
pub fn status_of(e: &CmdError) -> StatusCode {
    match e.code {
        "not_found" | "not_in_browser" => StatusCode::NOT_FOUND,
        "forbidden" | "desktop_only" => StatusCode::FORBIDDEN,
        "key_refused" => StatusCode::UNAUTHORIZED,
        "unreachable" | "service_failed" => StatusCode::BAD_GATEWAY,
        "busy" => StatusCode::SERVICE_UNAVAILABLE,
        "timeout" => StatusCode::GATEWAY_TIMEOUT,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    }
}

/// The answer to a refusal.
pub fn refusal(e: &CmdError) -> Value {
    json!({ "code": e.code, "message": e.message })
}
