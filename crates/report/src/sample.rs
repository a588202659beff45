//! The report of one sample: what it is (its file and metadata), how good its reads are
//! (QC), what is in it (the abundance chart and table, alpha diversity), what a panel found,
//! and how all of it was made (engines, versions, the database's digest, the arguments).
//! The charts are the ones the app draws (`mgds-plots`), the numbers the ones the service
//! serves, so a report cannot disagree with the screens.

use mgds_api::{ClassificationResults, Measure, Metadata, PanelResults};
use mgds_diversity::AlphaMetric;
use mgds_plots::{AbundanceChartOptions, Metric};
use serde_json::{Map, Value};

use crate::{Block, Column, Lab, Report};

/// The species a report's table lists at most (the largest first).
pub const TABLE_SPECIES: usize = 40;
/// The custom metadata fields a report lists at most.
pub const CUSTOM_FIELDS: usize = 40;

/// An analysis and the job that made it, for the methods.
#[derive(Debug, Clone)]
pub struct MadeBy {
    /// The analysis's id.
    pub analysis_id: String,
    /// The job's name.
    pub job_name: String,
    /// The engine and its version.
    pub engine: String,
    /// The engine's version.
    pub engine_version: String,
    /// The digest of its reference data.
    pub reference_digest: String,
    /// The arguments it ran with.
    pub args: Map<String, Value>,
    /// When it finished.
    pub finished_at: String,
}

/// What a sample's report is made from.
#[derive(Debug, Clone, Default)]
pub struct SampleInput<'a> {
    /// The lab, for the cover.
    pub lab: Lab,
    /// When the report is made, as shown.
    pub made: String,
    /// The sample's id.
    pub sample_id: String,
    /// Its file's name.
    pub filename: Option<String>,
    /// Its file's size in bytes.
    pub size: Option<u64>,
    /// When it was uploaded.
    pub uploaded: String,
    /// Its metadata.
    pub metadata: Option<&'a Metadata>,
    /// Its classification, with what made it.
    pub classification: Option<(&'a ClassificationResults, MadeBy)>,
    /// A panel's results, with what made them.
    pub panel: Option<(&'a PanelResults, MadeBy)>,
    /// The version of the program making the report.
    pub made_with: String,
}

/// `n` with commas between thousands ("10,019").
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn percent(v: f64) -> String {
    format!("{:.2}%", v * 100.0)
}

fn size_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GB", b as f64 / f64::from(1u32 << 30)),
        b if b >= 1 << 20 => format!("{:.1} MB", b as f64 / f64::from(1u32 << 20)),
        b if b >= 1 << 10 => format!("{:.0} KB", b as f64 / 1024.0),
        b => format!("{b} bytes"),
    }
}

/// The name a sample goes by: its metadata's name, else its file's, else its id.
pub fn sample_name(input: &SampleInput<'_>) -> String {
    input
        .metadata
        .and_then(|m| m.name.clone())
        .filter(|n| !n.trim().is_empty())
        .or_else(|| input.filename.clone())
        .unwrap_or_else(|| input.sample_id.clone())
}

/// `s` with a capital first letter and a full stop.
fn sentence(s: &str) -> String {
    let mut c = s.chars();
    let mut out: String = c.next().map(|f| f.to_uppercase().collect::<String>()).unwrap_or_default();
    out.push_str(c.as_str());
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

fn heading(text: &str) -> Block {
    Block::Heading { text: text.into(), level: 1 }
}

/// The report of a sample.
pub fn sample_report(input: &SampleInput<'_>) -> Report {
    let mut blocks = Vec::new();
    blocks.push(heading("Sample"));
    let mut facts = vec![("Sample id".to_string(), input.sample_id.clone())];
    if let Some(f) = &input.filename {
        let size = input.size.map(|s| format!(" ({})", size_text(s))).unwrap_or_default();
        facts.push(("File".into(), format!("{f}{size}")));
    }
    facts.push(("Uploaded".into(), input.uploaded.clone()));
    if let Some(m) = input.metadata {
        let fields = [
            ("Name", m.name.clone()),
            ("Lab sample id", m.external_sample_id.clone()),
            ("Description", m.description.clone()),
            ("Collected", m.date_collected.clone()),
            ("Sequenced", m.date_sequenced.clone()),
            ("Platform", m.platform.clone()),
            ("Library", m.library_type.clone()),
            ("Sample type", m.sample_type.clone()),
            ("Location", m.location_string.clone()),
        ];
        facts.extend(fields.into_iter().filter_map(|(k, v)| Some((k.to_string(), v.filter(|v| !v.is_empty())?))));
        for (k, v) in m.custom.iter().take(CUSTOM_FIELDS) {
            let v = match v {
                Value::String(s) => s.clone(),
                Value::Null => continue,
                other => other.to_string(),
            };
            facts.push((k.clone(), v));
        }
        if m.custom.len() > CUSTOM_FIELDS {
            facts.push(("…".into(), format!("{} more custom fields", m.custom.len() - CUSTOM_FIELDS)));
        }
    }
    blocks.push(Block::Facts(facts));

    match &input.classification {
        Some((results, _)) => classification_blocks(&mut blocks, results),
        None => blocks.push(Block::Paragraph(
            "The sample has no finished classification: its read quality, abundances and diversity are not in this report."
                .into(),
        )),
    }
    if let Some((panel, _)) = &input.panel {
        panel_blocks(&mut blocks, panel);
    }
    methods(&mut blocks, input);
    Report {
        title: sample_name(input),
        subtitle: Some("Sample report".into()),
        lab: input.lab.clone(),
        made: input.made.clone(),
        blocks,
    }
}

fn classification_blocks(blocks: &mut Vec<Block>, results: &ClassificationResults) {
    if let Some(qc) = &results.qc {
        blocks.push(heading("Read quality"));
        let mut facts = vec![("Reads".to_string(), thousands(qc.reads)), ("Bases".to_string(), thousands(qc.bases))];
        if qc.pairs > 0 {
            facts.push(("Pairs".into(), thousands(qc.pairs)));
        }
        facts.push(("Median length".into(), format!("{} bases", thousands(qc.median_length))));
        if qc.long_reads {
            facts.push(("N50".into(), format!("{} bases", thousands(qc.n50))));
        }
        if let Some(q) = qc.mean_quality {
            facts.push(("Mean quality".into(), format!("Q{q:.1}")));
        }
        if let Some(q) = qc.q30_share {
            facts.push(("Bases at Q30 or better".into(), percent(q)));
        }
        facts.push(("GC content".into(), percent(qc.gc)));
        facts.push(("N bases".into(), percent(qc.n_share)));
        let verdict =
            if qc.failures.is_empty() { "Passed".to_string() } else { format!("Failed: {}", qc.failures.join("; ")) };
        facts.push(("Thresholds".into(), verdict));
        blocks.push(Block::Facts(facts));
        if let Ok(svg) = mgds_plots::qc_chart(qc, None, 900) {
            blocks.push(Block::Figure {
                svg,
                caption: "Read lengths, quality by position, read quality and GC content".into(),
                width: 1.0,
            });
        }
    }

    blocks.push(Block::PageBreak);
    blocks.push(heading("Abundance"));
    let measure = Measure::default_for(results);
    let opts = AbundanceChartOptions { top_n: 15, metric: Metric::Share(measure), height: 620, ..Default::default() };
    match mgds_plots::abundance_bars(results, &opts) {
        Ok(chart) => blocks.push(Block::Figure {
            svg: chart.svg,
            caption: format!(
                "{} by species, the 15 largest; host reads left out. {}",
                measure.label(),
                measure.explanation()
            ),
            width: 1.0,
        }),
        Err(e) => blocks.push(Block::Paragraph(format!("No chart: {e}."))),
    }
    let host = mgds_plots::host_subtree(results);
    let mut species: Vec<&mgds_api::TaxonRow> =
        results.table.iter().filter(|r| r.rank == "species" && !host.contains(&r.tax_id)).collect();
    let value = |r: &mgds_api::TaxonRow| measure.value(r, results.n_reads).unwrap_or(0.0);
    species.sort_by(|a, b| value(b).total_cmp(&value(a)).then_with(|| a.name.cmp(&b.name)));
    let listed = species.len().min(TABLE_SPECIES);
    let rows: Vec<Vec<String>> = species
        .iter()
        .take(TABLE_SPECIES)
        .map(|r| {
            vec![
                r.name.clone(),
                r.tax_id.clone(),
                thousands(r.readcount_w_children),
                measure.value(r, results.n_reads).map(percent).unwrap_or_else(|| "—".into()),
            ]
        })
        .collect();
    blocks.push(Block::Table {
        columns: vec![
            Column::text("Species"),
            Column::number("Tax id"),
            Column::number("Reads"),
            Column::number(measure.label()),
        ],
        rows,
        caption: Some(format!(
            "The {listed} largest of {} species by {}, of {} reads in the sample",
            species.len(),
            measure.label().to_lowercase(),
            thousands(results.n_reads)
        )),
    });

    blocks.push(heading("Diversity"));
    let counts: Vec<f64> = species.iter().map(|r| r.readcount_w_children as f64).collect();
    let rows: Vec<Vec<String>> = AlphaMetric::ALL
        .iter()
        .map(|&m| {
            let v = mgds_diversity::alpha(m, &counts).map_or("—".to_string(), |v| format!("{v:.4}"));
            vec![m.label().to_string(), v]
        })
        .collect();
    blocks.push(Block::Table {
        columns: vec![Column::text("Alpha diversity"), Column::number("Value")],
        rows,
        caption: Some(
            "From the reads of each species (and below it), host left out: the counts the onecodex library's alpha_diversity uses"
                .into(),
        ),
    });
}

fn panel_blocks(blocks: &mut Vec<Block>, panel: &PanelResults) {
    blocks.push(heading(&format!("Panel: {}", panel.panel_name)));
    for sub in mgds_formats::sub_panels(panel) {
        let (name, sub) = match sub {
            Ok(s) => s,
            Err(e) => {
                blocks.push(Block::Paragraph(format!("A sub-panel could not be read: {e}.")));
                continue;
            }
        };
        let found = sub.markers.iter().filter(|m| m.status != mgds_api::MarkerStatus::Absent).count();
        // The markers found; those not found are counted in the caption.
        let rows: Vec<Vec<String>> = sub
            .markers
            .iter()
            .filter(|m| m.status != mgds_api::MarkerStatus::Absent)
            .take(crate::MAX_ROWS)
            .map(|m| {
                let status = match m.status {
                    mgds_api::MarkerStatus::Present => "Present",
                    mgds_api::MarkerStatus::Probable => "Probable",
                    mgds_api::MarkerStatus::Absent => "Not found",
                };
                let pct = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.1}%"));
                vec![
                    m.name.clone(),
                    status.to_string(),
                    pct(m.identity),
                    pct(m.coverage),
                    m.depth.map_or("—".to_string(), |d| format!("{d:.1}×")),
                ]
            })
            .collect();
        blocks.push(Block::Table {
            columns: vec![
                Column::text("Marker"),
                Column::text("Status"),
                Column::number("Identity"),
                Column::number("Coverage"),
                Column::number("Depth"),
            ],
            rows,
            caption: Some(format!(
                "{name}: {} — {found} of {} markers found{}",
                sub.description,
                sub.markers.len(),
                if found == 0 { "" } else { " (listed)" }
            )),
        });
    }
}

fn methods(blocks: &mut Vec<Block>, input: &SampleInput<'_>) {
    blocks.push(heading("Methods"));
    let made_by = |what: &str, m: &MadeBy| -> Vec<(String, String)> {
        let args = if m.args.is_empty() { "defaults".to_string() } else { Value::Object(m.args.clone()).to_string() };
        vec![
            (what.to_string(), format!("{} (analysis {}, finished {})", m.job_name, m.analysis_id, m.finished_at)),
            ("Engine".into(), format!("{} {}", m.engine, m.engine_version)),
            ("Reference data digest".into(), m.reference_digest.clone()),
            ("Arguments".into(), args),
        ]
    };
    let mut facts = Vec::new();
    if let Some((_, m)) = &input.classification {
        facts.extend(made_by("Classification", m));
    }
    if let Some((_, m)) = &input.panel {
        facts.extend(made_by("Panel", m));
    }
    facts.push(("Report".into(), format!("mgds-report {}", input.made_with)));
    blocks.push(Block::Facts(facts));
    if let Some((results, _)) = &input.classification {
        blocks.push(Block::Heading { text: "Abundance measures".into(), level: 2 });
        let measures = Measure::ALL.iter().filter(|m| m.available(results));
        blocks.push(Block::Facts(measures.map(|m| (m.label().to_string(), sentence(m.explanation()))).collect()));
        blocks.push(Block::Paragraph(format!(
            "Read quality is counted as the classification reads the sample: every read for the totals, the quality by \
             position from every read of the first 4 Mi bases and then one read in 13. {}",
            if results.host_tax_ids.is_empty() {
                "The database names no host taxa.".to_string()
            } else {
                format!(
                    "Host taxa, left out of the chart, the table and the diversity: {}.",
                    results.host_tax_ids.iter().take(20).cloned().collect::<Vec<_>>().join(", ")
                )
            }
        )));
    }
}
