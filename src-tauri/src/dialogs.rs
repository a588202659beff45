//! The native file dialogs, and writing a file the user chose to save.

use std::path::PathBuf;

use tauri::AppHandle;
use tauri_plugin_dialog::DialogExt;

/// Asks for a folder with the native dialog; `None` when the user cancelled.
pub async fn ask_folder(app: &AppHandle, title: &str) -> Option<PathBuf> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog().file().set_title(title).pick_folder(move |p| {
        let _ = tx.send(p);
    });
    rx.await.ok().flatten().and_then(|p| p.into_path().ok())
}

/// The save dialog's title and file filter for a chart or table file with extension `ext`
/// (`svg`, `png`, `tsv`; anything else is CSV).
pub fn chart_or_table(ext: &str) -> (&'static str, (&'static str, &'static [&'static str])) {
    match ext {
        "svg" => ("Save the chart", ("SVG image", &["svg"])),
        "png" => ("Save the chart", ("PNG image", &["png"])),
        "tsv" => ("Save the numbers", ("Tab-separated table", &["tsv"])),
        _ => ("Save the numbers", ("CSV table", &["csv"])),
    }
}

/// Asks where to save, with the native dialog; `None` when the user cancelled.
pub async fn ask_save_path(app: &AppHandle, title: &str, file_name: &str, filter: (&str, &[&str])) -> Option<PathBuf> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    // Suggested names are made from what a service sent (a sample's file name): made safe first.
    let suggested = mgds_client::safe_file_name(file_name, "download");
    app.dialog().file().set_title(title).set_file_name(&suggested).add_filter(filter.0, filter.1).save_file(move |p| {
        let _ = tx.send(p);
    });
    rx.await.ok().flatten().and_then(|p| p.into_path().ok())
}

pub use mgds_app::files::write_file;
