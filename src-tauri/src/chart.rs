//! The sample page's abundance chart ([`mgds_app::chart`]), and saving it where the user
//! chooses.

use tauri::{AppHandle, State};

pub use mgds_app::chart::{BarView, ChartControls, ChartView, MAX_TOP_N};

use crate::dialogs::{ask_save_path, write_file};
use crate::error::CmdResult;
use crate::results::ResultsCache;
use crate::session::Session;

/// The abundance chart of classification `id`.
#[tauri::command]
pub async fn abundance_chart(
    session: State<'_, Session>,
    cache: State<'_, ResultsCache>,
    id: String,
    options: ChartControls,
) -> CmdResult<ChartView> {
    let c = session.connected().await?;
    let results = cache.classification(&c.client, &c.base_url, &id).await?;
    mgds_app::chart::view(results, &options).await
}

/// Saves the chart as SVG or PNG where the user chooses; answers the path, or `None` if cancelled.
#[tauri::command]
pub async fn export_chart(
    app: AppHandle,
    session: State<'_, Session>,
    cache: State<'_, ResultsCache>,
    id: String,
    options: ChartControls,
    format: String,
    file_name: String,
) -> CmdResult<Option<String>> {
    let png = format == "png";
    let filter: (&str, &[&str]) = if png { ("PNG image", &["png"]) } else { ("SVG drawing", &["svg"]) };
    let Some(path) = ask_save_path(&app, "Save the chart", &file_name, filter).await else {
        return Ok(None);
    };
    let c = session.connected().await?;
    let results = cache.classification(&c.client, &c.base_url, &id).await?;
    let bytes = mgds_app::chart::image(results, &options, png).await?;
    write_file(&path, &bytes)?;
    Ok(Some(path.display().to_string()))
}
