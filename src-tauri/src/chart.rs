//! The sample page's abundance chart ([`mgds_app::chart`]), and saving it where the user
//! chooses.

use tauri::{AppHandle, State};

pub use mgds_app::chart::{BarView, ChartControls, ChartView, CrumbView, MAX_TOP_N, SunburstControls, SunburstView};

use crate::dialogs::{ask_save_path, write_file};
use crate::error::CmdResult;
use crate::qc::{self, QcView};
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

/// The sunburst of classification `id` (the sample page's hierarchy).
#[tauri::command]
pub async fn sunburst_chart(
    session: State<'_, Session>,
    cache: State<'_, ResultsCache>,
    id: String,
    options: SunburstControls,
) -> CmdResult<SunburstView> {
    let c = session.connected().await?;
    let results = cache.classification(&c.client, &c.base_url, &id).await?;
    mgds_app::chart::sunburst(results, &options).await
}

/// Saves the sunburst as SVG or PNG, or the hierarchy as Krona's text (`krona`), where the user
/// chooses; answers the path, or `None` if cancelled.
#[tauri::command]
pub async fn export_sunburst(
    app: AppHandle,
    session: State<'_, Session>,
    cache: State<'_, ResultsCache>,
    id: String,
    options: SunburstControls,
    format: String,
    file_name: String,
) -> CmdResult<Option<String>> {
    let (what, filter): (&str, (&str, &[&str])) = match format.as_str() {
        "png" => ("Save the chart", ("PNG image", &["png"])),
        "krona" => ("Save the hierarchy", ("Krona text", &["txt", "tsv"])),
        _ => ("Save the chart", ("SVG drawing", &["svg"])),
    };
    let Some(path) = ask_save_path(&app, what, &file_name, filter).await else {
        return Ok(None);
    };
    let c = session.connected().await?;
    let results = cache.classification(&c.client, &c.base_url, &id).await?;
    let bytes = mgds_app::chart::sunburst_file(results, &options, &format).await?;
    write_file(&path, &bytes)?;
    Ok(Some(path.display().to_string()))
}

/// The reads' quality control of classification `id` (the sample page's quality section).
#[tauri::command]
pub async fn sample_qc(session: State<'_, Session>, cache: State<'_, ResultsCache>, id: String) -> CmdResult<QcView> {
    let c = session.connected().await?;
    let results = cache.classification(&c.client, &c.base_url, &id).await?;
    qc::view(results).await
}

/// Saves a file of the quality control of classification `id` where the user chooses
/// (`format`: one of [`qc::FILES`]); answers the path, or `None` if cancelled.
#[tauri::command]
pub async fn export_qc(
    app: AppHandle,
    session: State<'_, Session>,
    cache: State<'_, ResultsCache>,
    id: String,
    format: String,
    file_name: String,
    title: String,
) -> CmdResult<Option<String>> {
    let c = session.connected().await?;
    let results = cache.classification(&c.client, &c.base_url, &id).await?;
    // Made before asking where, so that a refusal (no figures, no qualities) comes first.
    let bytes = qc::file(results, &title, &format).await?;
    let ext = if format == "positions" { "csv" } else { format.as_str() };
    let (what, filter) = crate::dialogs::chart_or_table(ext);
    let Some(path) = ask_save_path(&app, what, &file_name, filter).await else {
        return Ok(None);
    };
    write_file(&path, &bytes)?;
    Ok(Some(path.display().to_string()))
}
