//! The reads' quality control for the screens, the files and `mgds samples qc`: one sample's
//! figures with their chart ([`view`], [`file`]), and many samples side by side ([`compare`],
//! [`write_table`]). The figures are the service's own (`results.qc`, counted as its engine read
//! the sample and judged there on [`mgds_api::QC_THRESHOLDS`]); nothing here counts again.

use std::io::Write;
use std::sync::Arc;

use mgds_api::{ClassificationResults, ReadQc};
use serde::Serialize;
use ts_rs::TS;

use crate::compare::{CompareProgress, Source, gather};
use crate::error::{CmdError, CmdResult, sentence};

/// The chart's width on screen, in pixels.
pub const WIDTH: u32 = 900;
/// Why a sample has no figures: its results came from a service (or a version of this one)
/// that does not count them.
pub const NO_QC: &str = "This sample's classification has no quality control: it was made before the service counted it, or by a service that does not. Run the classification again to count it.";

/// One sample's quality control on its page.
#[derive(Debug, Clone, Serialize, TS)]
pub struct QcView {
    /// The figures, or `None` (see `missing`).
    pub qc: Option<ReadQc>,
    /// Why there are none.
    pub missing: Option<String>,
    /// The chart (four panels, the figures and the verdict under them), as SVG.
    pub svg: Option<String>,
    /// The thresholds a sample is judged by, in words.
    pub thresholds: Vec<String>,
}

/// `qc` as a service sent it, held to the stated ceilings: histograms no longer than
/// [`mgds_api::MAX_LENGTH_BINS`] and the others, at most [`mgds_api::MAX_FAILURES`] failures
/// of [`mgds_api::MAX_FAILURE_CHARS`] characters each, without control characters.
pub fn bounded(mut qc: ReadQc) -> ReadQc {
    qc.lengths.truncate(mgds_api::MAX_LENGTH_BINS);
    qc.quality_by_position.truncate(mgds_api::MAX_POSITION_BINS);
    qc.read_quality.truncate(usize::from(mgds_api::MAX_QUALITY) + 1);
    qc.gc_content.truncate(101);
    qc.failures.truncate(mgds_api::MAX_FAILURES);
    for f in &mut qc.failures {
        *f = crate::text::shown(f, mgds_api::MAX_FAILURE_CHARS);
    }
    qc
}

fn thresholds() -> Vec<String> {
    mgds_api::QC_THRESHOLDS.iter().map(|t| t.to_string()).collect()
}

fn draw_error(e: impl std::fmt::Display) -> CmdError {
    CmdError::new("chart", format!("The quality control could not be drawn ({}).", e.to_string().trim_end_matches('.')))
}

/// The quality control of `results` for the sample page.
pub async fn view(results: Arc<ClassificationResults>) -> CmdResult<QcView> {
    let Some(qc) = results.qc.clone().map(bounded) else {
        return Ok(QcView { qc: None, missing: Some(NO_QC.to_string()), svg: None, thresholds: thresholds() });
    };
    let drawn = qc.clone();
    let svg = tokio::task::spawn_blocking(move || mgds_plots::qc_chart(&drawn, None, WIDTH))
        .await
        .map_err(draw_error)?
        .map_err(draw_error)?;
    Ok(QcView { qc: Some(qc), missing: None, svg: Some(svg), thresholds: thresholds() })
}

/// The files of one sample's quality control.
pub const FILES: [&str; 4] = ["svg", "png", "csv", "positions"];

/// One sample's quality control as a file: `svg` or `png` (the chart, titled with `title`),
/// `csv` (the figures, one row, thresholds as `#` lines) or `positions` (quality by position
/// as CSV).
pub async fn file(results: Arc<ClassificationResults>, title: &str, what: &str) -> CmdResult<Vec<u8>> {
    let Some(qc) = results.qc.clone().map(bounded) else { return Err(CmdError::new("no_data", NO_QC)) };
    let what = match FILES.iter().find(|f| **f == what) {
        Some(f) => *f,
        None => {
            let shown: String = what.chars().take(20).collect();
            return Err(CmdError::new(
                "invalid",
                format!("There is no quality control file as {shown:?}: {}.", FILES.join(", ")),
            ));
        }
    };
    let title = crate::text::shown_text(title);
    tokio::task::spawn_blocking(move || match what {
        "csv" => {
            let mut out = Vec::new();
            write_table(&mut out, &[QcRow { id: String::new(), name: title, qc: Some(qc), why: None }], b',')?;
            Ok(out)
        }
        "positions" => write_positions(&qc),
        "png" => {
            let svg = mgds_plots::qc_chart(&qc, Some(&title), WIDTH).map_err(draw_error)?;
            mgds_plots::svg_to_png(&svg, 2.0).map_err(draw_error)
        }
        _ => mgds_plots::qc_chart(&qc, Some(&title), WIDTH).map(String::into_bytes).map_err(draw_error),
    })
    .await
    .map_err(draw_error)?
}

/// One sample in a table of quality control.
#[derive(Debug, Clone, Serialize, TS)]
pub struct QcRow {
    /// The sample's id (empty in a one-sample file).
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its figures; `None` when it has none (see `why`).
    pub qc: Option<ReadQc>,
    /// Why it has none.
    pub why: Option<String>,
}

/// Samples side by side in the comparison's quality tab.
#[derive(Debug, Clone, Serialize, TS)]
pub struct QcComparison {
    /// One row per sample asked for, in the order asked (the histograms left out: the table
    /// shows figures).
    pub rows: Vec<QcRow>,
    /// How many failed a threshold.
    pub failed: usize,
    /// The thresholds, in words.
    pub thresholds: Vec<String>,
}

/// The quality control of the compared samples: fetched as the comparison fetches them (its
/// cache), each sample's figures without its histograms.
pub async fn compare(
    src: Source<'_>,
    samples: &[String],
    progress: &(dyn Fn(CompareProgress) + Sync),
) -> CmdResult<QcComparison> {
    let gathered = gather(src, samples, progress, "to compare their quality").await?;
    let rows: Vec<QcRow> = gathered
        .fetched
        .iter()
        .map(|f| {
            let name = crate::text::shown_text(&f.info.name);
            match (&f.results, &f.info.ready) {
                (Some(r), _) => match &r.qc {
                    Some(qc) => QcRow { id: f.id.clone(), name, qc: Some(figures_only(qc)), why: None },
                    None => QcRow { id: f.id.clone(), name, qc: None, why: Some(NO_QC.to_string()) },
                },
                (None, Err(why)) => QcRow { id: f.id.clone(), name, qc: None, why: Some(sentence(why)) },
                (None, Ok(_)) => QcRow { id: f.id.clone(), name, qc: None, why: Some(NO_QC.to_string()) },
            }
        })
        .collect();
    let failed = rows.iter().filter(|r| r.qc.as_ref().is_some_and(|q| !q.passed())).count();
    Ok(QcComparison { rows, failed, thresholds: thresholds() })
}

/// The figures of `qc` without its histograms.
fn figures_only(qc: &ReadQc) -> ReadQc {
    bounded(ReadQc {
        lengths: Vec::new(),
        quality_by_position: Vec::new(),
        read_quality: Vec::new(),
        gc_content: Vec::new(),
        failures: qc.failures.iter().take(mgds_api::MAX_FAILURES).cloned().collect(),
        ..qc.clone()
    })
}

/// The columns of a quality control table.
pub const COLUMNS: [&str; 17] = [
    "sample_id",
    "sample",
    "passed",
    "reads",
    "pairs",
    "bases",
    "min_length",
    "median_length",
    "mean_length",
    "n50",
    "max_length",
    "long_reads",
    "gc_percent",
    "n_percent",
    "mean_quality",
    "q30_percent",
    "failures",
];

/// Writes `rows` as delimited text, one sample a row in [`COLUMNS`] (a sample without figures
/// has only its id, name and why, under `failures`), the thresholds after it as `#` lines.
pub fn write_table(mut out: impl Write, rows: &[QcRow], delimiter: u8) -> CmdResult<()> {
    let err = |e: csv::Error| CmdError::new("file", sentence(&e.to_string()));
    let file = |e: std::io::Error| CmdError::new("file", sentence(&e.to_string()));
    {
        let mut w = csv::WriterBuilder::new().delimiter(delimiter).from_writer(&mut out);
        w.write_record(COLUMNS).map_err(err)?;
        for r in rows {
            let row: Vec<String> = match &r.qc {
                Some(q) => vec![
                    r.id.clone(),
                    r.name.clone(),
                    if q.passed() { "yes" } else { "no" }.into(),
                    q.reads.to_string(),
                    q.pairs.to_string(),
                    q.bases.to_string(),
                    q.min_length.to_string(),
                    q.median_length.to_string(),
                    format!("{:.1}", q.mean_length),
                    q.n50.to_string(),
                    q.max_length.to_string(),
                    if q.long_reads { "yes" } else { "no" }.into(),
                    format!("{:.2}", q.gc * 100.0),
                    format!("{:.3}", q.n_share * 100.0),
                    q.mean_quality.map(|v| format!("{v:.2}")).unwrap_or_default(),
                    q.q30_share.map(|v| format!("{:.2}", v * 100.0)).unwrap_or_default(),
                    q.failures.join("; "),
                ],
                None => {
                    let mut row = vec![String::new(); COLUMNS.len()];
                    row[0] = r.id.clone();
                    row[1] = r.name.clone();
                    row[16] = r.why.clone().unwrap_or_default();
                    row
                }
            };
            w.write_record(&row).map_err(err)?;
        }
        w.flush().map_err(file)?;
    }
    writeln!(out, "# Counted by the service as its classification engine read each sample.").map_err(file)?;
    for t in mgds_api::QC_THRESHOLDS {
        writeln!(out, "# Threshold: {t}").map_err(file)?;
    }
    out.flush().map_err(file)
}

/// Quality by position as CSV: one row per position (or bin of positions).
fn write_positions(qc: &ReadQc) -> CmdResult<Vec<u8>> {
    let err = |e: csv::Error| CmdError::new("file", sentence(&e.to_string()));
    if qc.quality_by_position.is_empty() {
        return Err(CmdError::new("no_data", "This sample has no base qualities (its reads are FASTA)."));
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["from", "to", "bases", "mean", "p10", "q1", "median", "q3", "p90"]).map_err(err)?;
    for p in &qc.quality_by_position {
        w.write_record([
            p.from.to_string(),
            p.to.to_string(),
            p.bases.to_string(),
            format!("{:.3}", p.mean),
            p.p10.to_string(),
            p.q1.to_string(),
            p.median.to_string(),
            p.q3.to_string(),
            p.p90.to_string(),
        ])
        .map_err(err)?;
    }
    w.into_inner().map_err(|e| CmdError::new("file", sentence(&e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qc(failures: Vec<String>) -> ReadQc {
        ReadQc {
            reads: 2_000,
            bases: 300_000,
            min_length: 150,
            max_length: 150,
            mean_length: 150.0,
            median_length: 150,
            n50: 150,
            gc: 0.5123,
            mean_quality: Some(34.5),
            q30_share: Some(0.9),
            failures,
            ..ReadQc::default()
        }
    }

    #[test]
    fn the_table_has_a_row_per_sample_and_the_thresholds_after_it() {
        let rows = vec![
            QcRow { id: "a".into(), name: "one, two".into(), qc: Some(qc(vec![])), why: None },
            QcRow { id: "b".into(), name: "b".into(), qc: Some(qc(vec!["x".into(), "y".into()])), why: None },
            QcRow { id: "c".into(), name: "c".into(), qc: None, why: Some(NO_QC.into()) },
        ];
        let mut out = Vec::new();
        write_table(&mut out, &rows, b',').unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], COLUMNS.join(","));
        assert!(
            lines[1].starts_with("a,\"one, two\",yes,2000,0,300000,150,150,150.0,150,150,no,51.23,0.000,34.50,90.00,")
        );
        assert!(lines[2].starts_with("b,b,no,") && lines[2].ends_with(",x; y"), "{}", lines[2]);
        assert!(lines[3].starts_with("c,c,,,") && lines[3].contains("before the service counted it"));
        assert_eq!(lines.iter().filter(|l| l.starts_with("# Threshold: ")).count(), mgds_api::QC_THRESHOLDS.len());
    }
}
