//! MGDS Desktop: the Tauri shell of the MGDS app.
//!
//! [`run`] builds the app: the [`session::Session`] (which service, through `mgds-profiles`, the
//! embedded local service when no remote profile is chosen), [`uploads::Uploads`],
//! [`results::Watcher`], [`results::ResultsCache`] and [`watching::Watching`] (the watched
//! folders) as managed state, and the thin
//! [`commands`] the web UI in `ui/` invokes. Errors reach the UI as [`error::CmdError`]
//! (`{code, message}`); upload progress and analysis state arrive as events.

pub mod chart;
pub mod commands;
pub mod error;
pub mod results;
pub mod samples;
pub mod session;
pub mod uploads;
pub mod watching;

use tauri::Manager;

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
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| {
            if let Some(w) = app.get_webview_window("main") {
                let _ = w.unminimize();
                let _ = w.set_focus();
            }
        }))
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_window_state::Builder::default().build())
        .plugin(tauri_plugin_notification::init())
        .manage(session::Session::new(paths))
        .manage(uploads::Uploads::default())
        .manage(results::Watcher::default())
        .manage(results::ResultsCache::default())
        .manage(watching::Watching::default())
        .setup(|app| {
            // Pairs joined for an upload that a crash or a forced quit interrupted.
            let staging = app.state::<session::Session>().paths().data_dir.join("upload-staging");
            let _ = std::fs::remove_dir_all(staging);
            // Saved watched folders are watched from the start, uploading to the profile in use.
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move { handle.state::<watching::Watching>().restart(&handle).await });
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![
            commands::connection,
            commands::profiles,
            commands::add_profile,
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
            commands::panel,
            chart::abundance_chart,
            chart::export_chart,
            commands::save_csv,
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
