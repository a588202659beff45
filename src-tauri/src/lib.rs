//! MGDS Desktop: the Tauri shell of the MGDS app.
//!
//! [`run`] builds the app: the [`session::Session`] (which service, through `mgds-profiles`, the
//! embedded local service when no remote profile is chosen), [`uploads::Uploads`],
//! [`results::Watcher`], [`results::ResultsCache`], [`watching::Watching`] (the watched
//! folders) and [`documents::DocumentTransfers`] as managed state, and the thin
//! [`commands`] the web UI in `ui/` invokes. The screens' logic is the application crate's
//! (`mgds-app`: [`samples`], [`documents`], [`projects`], [`analyses`], [`compare`],
//! [`people`], [`results`], [`uploads`]), re-exported here; this crate adds what only a desktop
//! has: windows, native dialogs, the keychain's profiles, watched folders and live runs. Errors
//! reach the UI as [`error::CmdError`] (`{code, message}`); upload progress and analysis state
//! arrive as [`events`]. The UI's TypeScript types and typed calls (`ui/src/lib/bindings.ts`) are
//! generated from these types and commands, and a test fails when that file is out of date.

pub mod chart;
pub mod commands;
pub mod dialogs;
pub mod events;
pub mod session;
pub mod watching;

pub use mgds_app::{
    analyses, compare, contamination, diversity, documents, error, organization, people, projects, qc, report, results,
    samples, uploads,
};

#[cfg(test)]
mod bindings;

use tauri::Manager;

/// One app per data folder: a second start on the same folder only brings the running window
/// forward. A start with another `MGDS_DATA_DIR` (a side-by-side install, a test) is an instance
/// of its own: on Linux its D-Bus name carries a hash of that folder. (On Windows and macOS the
/// plugin keys on the app's identifier alone, so there one app runs at a time whatever the folder.)
fn single_instance(paths: &session::Paths) -> tauri::plugin::TauriPlugin<tauri::Wry> {
    let builder = tauri_plugin_single_instance::Builder::new().callback(|app, _args, _cwd| {
        if let Some(w) = app.get_webview_window("main") {
            let _ = w.unminimize();
            let _ = w.set_focus();
        }
    });
    match std::env::var_os("MGDS_DATA_DIR") {
        Some(_) => builder.dbus_id(instance_id(&paths.data_dir)).build(),
        None => builder.build(),
    }
}

/// The D-Bus name of the app on `data_dir`: the identifier and a hash of the folder (D-Bus name
/// elements are letters, digits and `_`, and do not start with a digit).
fn instance_id(data_dir: &std::path::Path) -> String {
    use std::hash::{Hash, Hasher};
    // The folder is made now (the app makes it anyway) so that a relative or linked path names
    // it the same way at every start.
    let _ = std::fs::create_dir_all(data_dir);
    let dir = std::fs::canonicalize(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
    // SipHash with fixed keys: the same folder gives the same name in every start of a build.
    let mut h = std::hash::DefaultHasher::new();
    dir.hash(&mut h);
    format!("org.mgds.desktop.d{:016x}", h.finish())
}

/// Keeps the webview's memory to what the window needs. Its pages are tables and forms: drawn
/// without accelerated compositing, WebKit's web process does without a GL context and its
/// layers (on a machine without a GPU, a software GL that holds about 80 MB), and with the
/// document-viewer cache model it keeps no page and resource caches for a browser's back button.
/// Sound, video, WebGL and WebRTC, which no screen uses, are off.
#[cfg(target_os = "linux")]
fn lighten_webview(window: &tauri::WebviewWindow) {
    use webkit2gtk::{CacheModel, HardwareAccelerationPolicy, SettingsExt, WebContextExt, WebViewExt};
    let done = window.with_webview(|w| {
        let view = w.inner();
        if let Some(settings) = WebViewExt::settings(&view) {
            settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
            settings.set_enable_page_cache(false);
            settings.set_enable_media(false);
            settings.set_enable_mediasource(false);
            settings.set_enable_media_stream(false);
            settings.set_enable_webaudio(false);
            settings.set_enable_webgl(false);
            settings.set_enable_webrtc(false);
        }
        if let Some(context) = view.context() {
            context.set_cache_model(CacheModel::DocumentViewer);
        }
    });
    if let Err(e) = done {
        tracing::warn!("could not set the webview's settings: {e}");
    }
}

#[cfg(not(target_os = "linux"))]
fn lighten_webview(_window: &tauri::WebviewWindow) {}

/// Runs the app until its window closes.
pub fn run() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("MGDS_LOG").unwrap_or_else(|_| "warn,mgds_desktop=info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let paths = match session::Paths::from_env() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(1);
        }
    };
    let app = tauri::Builder::default()
        // First: a second start only brings the running window forward.
        .plugin(single_instance(&paths))
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_window_state::Builder::default().build())
        .plugin(tauri_plugin_notification::init())
        .manage(session::Session::new(paths))
        .manage(uploads::Uploads::default())
        .manage(results::Watcher::default())
        .manage(results::ResultsCache::default())
        .manage(watching::Watching::default())
        .manage(documents::DocumentTransfers::default())
        .manage(compare::CompareCache::default())
        .setup(|app| {
            if let Some(w) = app.get_webview_window("main") {
                lighten_webview(&w);
            }
            // Pairs joined for an upload that a crash or a forced quit interrupted.
            mgds_upload::sweep_staging(&app.state::<session::Session>().paths().data_dir.join("upload-staging"));
            // Saved watched folders are watched from the start, uploading to the profile in use.
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move { handle.state::<watching::Watching>().restart(&handle).await });
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![
            commands::connection,
            commands::profiles,
            commands::add_profile,
            commands::add_sso_profile,
            commands::switch_profile,
            commands::remove_profile,
            commands::list_samples,
            commands::lookups,
            commands::sample,
            commands::leave_sample,
            commands::update_sample,
            commands::change_samples,
            commands::check_files,
            commands::pick_files,
            commands::start_uploads,
            commands::cancel_upload,
            commands::classification,
            commands::remove_host_reads,
            commands::panel,
            commands::control_scores,
            commands::sample_contaminants,
            chart::abundance_chart,
            chart::export_chart,
            chart::sunburst_chart,
            chart::export_sunburst,
            chart::sample_qc,
            chart::export_qc,
            commands::compare_qc,
            commands::export_compare_qc,
            commands::compare_contaminants,
            commands::export_contaminants,
            commands::save_csv,
            commands::demo_reads,
            commands::watch_view,
            commands::pick_watch_folder,
            commands::create_project,
            commands::analysis_results,
            commands::download_results,
            commands::job_args,
            commands::run_job,
            commands::add_watch_folder,
            commands::update_watch_folder,
            commands::set_upload_limit,
            commands::remove_watch_folder,
            commands::pause_watching,
            commands::projects,
            commands::project,
            commands::change_project,
            commands::add_project_member,
            commands::remove_project_member,
            commands::delete_project,
            commands::organization,
            commands::invite_user,
            commands::change_user,
            commands::reset_user_password,
            commands::revoke_user,
            commands::audit_trail,
            commands::webhooks,
            commands::add_webhook,
            commands::set_webhook,
            commands::replace_webhook_secret,
            commands::remove_webhook,
            commands::ping_webhook,
            commands::redeliver_event,
            commands::tag_counts,
            commands::documents,
            commands::pick_documents,
            commands::upload_documents,
            commands::download_document,
            commands::cancel_document_transfer,
            commands::share_document,
            commands::unshare_document,
            commands::rename_document,
            commands::delete_document,
            commands::list_analyses,
            commands::run_job_on_samples,
            commands::compare_samples,
            commands::sample_diversity,
            commands::export_diversity,
            commands::export_comparison,
            commands::comparison_report,
            commands::set_lab_name,
            commands::set_organization_logo,
            commands::remove_organization_logo,
            commands::refresh_comparison,
            commands::save_taxon_reads,
            commands::live_runs,
            commands::watch_alerts,
            commands::set_watch_alerts,
        ])
        .build(tauri::generate_context!());
    let app = match app {
        Ok(app) => app,
        Err(e) => {
            eprintln!("error: the MGDS window could not open: {e}");
            eprintln!(
                "hint: MGDS Desktop needs a graphical session; on a server run it under `xvfb-run`, or use `mgds serve`"
            );
            std::process::exit(1);
        }
    };
    app.run(|handle, event| {
        if let tauri::RunEvent::Exit = event {
            // Analyses the embedded service was running go back to its queue for the next start.
            tauri::async_runtime::block_on(handle.state::<watching::Watching>().stop());
            let session = handle.state::<session::Session>();
            tauri::async_runtime::block_on(session.stop());
        }
    });
}
