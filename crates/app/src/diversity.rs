//! Diversity of compared samples: alpha diversity per sample with a rank test between groups,
//! a beta diversity matrix, its principal coordinates and a PERMANOVA, computed by
//! `mgds-diversity` from the samples' classifications (fetched as the comparison fetches them,
//! through its cache). The view, its exports and `mgds compare --diversity` all come from
//! [`prepare`], so screen, command line and files cannot disagree.
//!
//! What goes in, stated on every chart and export ([`DiversityView::methods`]):
//! - alpha diversity from the reads of each taxon at the rank (its `readcount_w_children`):
//!   Chao1 needs whole read counts, and the other three are the same on counts and on shares;
//! - beta diversity on the chosen measure at the rank, each sample's values made shares of its
//!   total (as the `onecodex` library does);
//! - the host's taxa (the results' `host_tax_ids` and what lies below them) left out unless asked
//!   for, as the `onecodex` library's `include_host=False`.

use std::collections::HashMap;

use mgds_api::ClassificationResults;
use mgds_diversity::{AlphaMetric, BetaMetric, Taxonomy};
use mgds_plots::Metric;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::compare::{CompareProgress, Gathered, SkippedSample, Source, gather, metric_for, metric_key};
use crate::error::{CmdError, CmdResult, sentence};
use crate::text::shown_text;

/// PERMANOVA's permutations unless asked otherwise.
pub const PERMUTATIONS: usize = 999;
/// The most permutations asked for.
pub const MAX_PERMUTATIONS: usize = 9_999;
/// The permutations' seed unless asked otherwise.
pub const SEED: u64 = 42;
/// Principal axes given (their share of variance and coordinates).
pub const AXES: usize = 10;
/// The longest rank named.
const MAX_NAME_CHARS: usize = 32;
/// The longest metadata field name to group by: the service's own ceiling on custom keys.
const MAX_FIELD_CHARS: usize = mgds_api::MAX_CUSTOM_METADATA_KEY_CHARS;

/// What the diversity view asks for.
#[derive(Debug, Clone, Deserialize, TS)]
#[ts(optional_fields = nullable)]
pub struct DiversityRequest {
    /// The samples (ids), 2 to 500.
    pub samples: Vec<String>,
    /// The rank: `species`, `genus`, ...
    pub rank: String,
    /// The measure of the beta diversity (a comparison measure, or `readcount`); none: the best
    /// measure every sample has.
    pub measure: Option<String>,
    /// The beta diversity: `braycurtis` (the default), `jaccard`, `weighted_unifrac`,
    /// `unweighted_unifrac`, `aitchison`.
    pub metric: Option<String>,
    /// Group samples by this metadata field for the tests and the points' colours.
    pub group_by: Option<String>,
    /// PERMANOVA's permutations (default 999, at most 9,999).
    pub permutations: Option<usize>,
    /// The permutations' seed (default 42).
    #[ts(type = "number | null")]
    pub seed: Option<u64>,
    /// Keep the host's reads (default: left out).
    #[serde(default)]
    pub show_host: bool,
}

/// A sample in the diversity view.
#[derive(Debug, Clone, Serialize, TS)]
pub struct DiversitySample {
    /// Its id.
    pub id: String,
    /// Its name.
    pub label: String,
    /// Its value of the grouping field.
    pub group: Option<String>,
}

/// One alpha diversity measure over the samples.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AlphaColumn {
    /// `observed_taxa`, `shannon`, `simpson`, `chao1`.
    pub metric: String,
    /// Its name on a chart.
    pub label: String,
    /// How it is computed.
    pub explanation: String,
    /// One value per sample (none where undefined: a sample with no reads at the rank).
    pub values: Vec<Option<f64>>,
    /// The rank test between the groups, when samples are grouped and a test can be made.
    pub test: Option<TestView>,
}

/// A test's outcome, with its method in words.
#[derive(Debug, Clone, Serialize, TS)]
pub struct TestView {
    /// The test and its parameters, as written on charts and exports.
    pub method: String,
    /// Its statistic (none where undefined).
    pub statistic: Option<f64>,
    /// Its p-value (none where undefined).
    pub p_value: Option<f64>,
    /// The groups tested, with their sizes.
    pub groups: Vec<GroupSize>,
}

/// A group and its size.
#[derive(Debug, Clone, Serialize, TS)]
pub struct GroupSize {
    /// The group's value of the field.
    pub group: String,
    /// Its samples.
    pub samples: usize,
}

/// The principal coordinates of the beta diversity.
#[derive(Debug, Clone, Serialize, TS)]
pub struct OrdinationView {
    /// Each axis's share of the variance (the first [`AXES`] at most).
    pub proportion_explained: Vec<f64>,
    /// `coordinates[sample][axis]`, the same axes.
    pub coordinates: Vec<Vec<f64>>,
}

/// The diversity view.
#[derive(Debug, Clone, Serialize, TS)]
pub struct DiversityView {
    /// The samples, in order.
    pub samples: Vec<DiversitySample>,
    /// The rank.
    pub rank: String,
    /// The beta diversity's measure (key).
    pub measure: String,
    /// Its name, lower case ("re-estimated abundance").
    pub measure_label: String,
    /// The beta diversity (key) and its name.
    pub metric: String,
    /// Its name on a chart.
    pub metric_label: String,
    /// The grouping field, if any.
    pub group_by: Option<String>,
    /// The metadata fields to group by: the samples' custom fields, then the standard ones.
    pub fields: Vec<String>,
    /// Alpha diversity, one column per measure.
    pub alpha: Vec<AlphaColumn>,
    /// `distances[i][j]`.
    pub distances: Vec<Vec<f64>>,
    /// The principal coordinates.
    pub ordination: OrdinationView,
    /// PERMANOVA of the grouping on the distances, when samples are grouped.
    pub permanova: Option<TestView>,
    /// Why a test could not be made, in words.
    pub test_notes: Vec<String>,
    /// What went in and how, one sentence each: written on every chart and export.
    pub methods: Vec<String>,
    /// Samples left out, with why.
    pub skipped: Vec<SkippedSample>,
}

fn invalid(message: String) -> CmdError {
    CmdError::new("invalid", message)
}

/// The taxa at `rank` of each sample, with the value `value` gives, host taxa left out unless
/// `show_host`: the table's taxa (in first-seen order) and one row per sample.
pub(crate) fn table(
    results: &[&ClassificationResults],
    rank: &str,
    show_host: bool,
    value: &dyn Fn(&mgds_api::TaxonRow, &ClassificationResults) -> Option<f64>,
) -> (Vec<String>, Vec<Vec<f64>>) {
    let mut column: HashMap<String, usize> = HashMap::new();
    let mut taxa: Vec<String> = Vec::new();
    let mut cells: Vec<Vec<(usize, f64)>> = Vec::with_capacity(results.len());
    for r in results {
        let host = if show_host { Default::default() } else { mgds_plots::host_subtree(r) };
        let mut row = Vec::new();
        for t in r.table.iter().filter(|t| t.rank == rank && !host.contains(&t.tax_id)) {
            let Some(v) = value(t, r).filter(|v| *v > 0.0 && v.is_finite()) else { continue };
            let j = *column.entry(t.tax_id.clone()).or_insert_with(|| {
                taxa.push(t.tax_id.clone());
                taxa.len() - 1
            });
            row.push((j, v));
        }
        cells.push(row);
    }
    let rows = cells
        .into_iter()
        .map(|cells| {
            let mut row = vec![0.0; taxa.len()];
            for (j, v) in cells {
                row[j] += v;
            }
            row
        })
        .collect();
    (taxa, rows)
}

/// Fetches the samples `req` names and computes their diversity (see the module's notes),
/// reporting the fetching's progress.
pub async fn prepare(
    src: Source<'_>,
    req: &DiversityRequest,
    progress: &(dyn Fn(CompareProgress) + Sync),
) -> CmdResult<DiversityView> {
    let metric = match req.metric.as_deref().filter(|m| !m.is_empty()) {
        None => BetaMetric::BrayCurtis,
        Some(key) => BetaMetric::from_key(key).ok_or_else(|| {
            let known: Vec<&str> = BetaMetric::ALL.iter().map(|m| m.key()).collect();
            invalid(format!("There is no beta diversity {key:?}: choose one of {}.", known.join(", ")))
        })?,
    };
    let permutations = req.permutations.unwrap_or(PERMUTATIONS);
    if permutations > MAX_PERMUTATIONS {
        return Err(invalid(format!("Ask for at most {MAX_PERMUTATIONS} permutations ({permutations} asked for).")));
    }
    let seed = req.seed.unwrap_or(SEED);
    let rank = req.rank.trim().to_lowercase();
    if rank.is_empty() || rank.len() > MAX_NAME_CHARS || !rank.bytes().all(|b| b.is_ascii_alphabetic() || b == b' ') {
        let shown: String = rank.chars().take(MAX_NAME_CHARS).collect();
        return Err(invalid(format!(
            "There is no rank {shown:?}: choose species, genus, family, order, class or phylum."
        )));
    }
    if let Some(g) = req.group_by.as_deref()
        && (g.chars().count() > MAX_FIELD_CHARS || g.chars().any(char::is_control))
    {
        let shown: String = g.chars().take(40).collect();
        return Err(invalid(format!(
            "There is no metadata field {shown:?}: field names are at most {MAX_FIELD_CHARS} characters, on one line."
        )));
    }
    let Gathered { fetched, skipped, fields } = gather(src, &req.samples, progress, "for their diversity").await?;
    let ready: Vec<&crate::compare::Fetched> = fetched.iter().filter(|f| f.results.is_some()).collect();
    let owned: Vec<std::sync::Arc<ClassificationResults>> = ready.iter().filter_map(|f| f.results.clone()).collect();
    let group_by = req.group_by.as_deref().map(str::trim).filter(|g| !g.is_empty()).map(String::from);
    let samples: Vec<DiversitySample> = ready
        .iter()
        .map(|f| DiversitySample {
            id: f.id.clone(),
            label: shown_text(&f.info.name),
            group: group_by
                .as_deref()
                .and_then(|g| f.info.metadata.as_ref().and_then(|m| m.field_text(g)))
                .map(|g| shown_text(&g)),
        })
        .collect();
    let (measure_key, show_host) = (req.measure.clone(), req.show_host);
    let work = Work { samples, rank, metric, group_by, permutations, seed, show_host, fields, skipped };
    // The numbers are CPU work (a PERMANOVA of 500 samples is seconds): off the async runtime,
    // a few at a time in this process whoever asks.
    let _turn = COMPUTING.acquire().await.map_err(|_| CmdError::new("busy", "Stopping; try again in a moment."))?;
    tokio::task::spawn_blocking(move || {
        let results: Vec<&ClassificationResults> = owned.iter().map(|r| r.as_ref()).collect();
        let measure = metric_for(measure_key.as_deref(), &results)?;
        compute(&results, measure, work)
    })
    .await
    .map_err(|e| CmdError::new("failed", format!("The diversity could not be computed ({e}).")))?
}

/// Diversity computations running at once in this process.
pub(crate) static COMPUTING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

/// What [`compute`] works on, checked.
pub(crate) struct Work {
    pub(crate) samples: Vec<DiversitySample>,
    pub(crate) rank: String,
    pub(crate) metric: BetaMetric,
    pub(crate) group_by: Option<String>,
    pub(crate) permutations: usize,
    pub(crate) seed: u64,
    pub(crate) show_host: bool,
    pub(crate) fields: Vec<String>,
    pub(crate) skipped: Vec<SkippedSample>,
}

/// The diversity of `results` (one per sample of `w.samples`), as [`prepare`] answers it.
pub(crate) fn compute(results: &[&ClassificationResults], measure: Metric, w: Work) -> CmdResult<DiversityView> {
    let Work { samples, rank, metric, group_by, permutations, seed, show_host, fields, skipped } = w;
    let ids: Vec<String> = samples.iter().map(|s| s.id.clone()).collect();
    let req_show_host = show_host;

    // Alpha: reads at the rank.
    let (_, counts) = table(results, &rank, req_show_host, &|t, _| Some(t.readcount_w_children as f64));
    if counts.iter().all(|r| r.is_empty()) {
        return Err(CmdError::new(
            "no_data",
            format!("None of these samples has reads at rank {rank}: choose another rank."),
        ));
    }
    let labels: Vec<Option<String>> = samples.iter().map(|s| s.group.clone()).collect();
    let mut test_notes = Vec::new();
    let alpha: Vec<AlphaColumn> = AlphaMetric::ALL
        .into_iter()
        .map(|m| {
            let values: Vec<Option<f64>> = counts.iter().map(|row| mgds_diversity::alpha(m, row)).collect();
            let test = group_by.as_ref().and_then(|_| match mgds_diversity::group_test(&values, &labels) {
                Ok(t) => Some(TestView {
                    method: t.test.label().to_string(),
                    statistic: t.statistic,
                    p_value: t.p_value,
                    groups: t.groups.into_iter().map(|(group, samples)| GroupSize { group, samples }).collect(),
                }),
                Err(e) => {
                    if m == AlphaMetric::ObservedTaxa {
                        test_notes.push(sentence(&format!("{ALPHA_NOTE}: {e}")));
                    }
                    None
                }
            });
            AlphaColumn {
                metric: m.key().into(),
                label: m.label().into(),
                explanation: sentence(m.explanation()),
                values,
                test,
            }
        })
        .collect();

    // Beta on the measure.
    let value = |t: &mgds_api::TaxonRow, r: &ClassificationResults| match measure {
        Metric::Share(m) => m.value(t, r.n_reads),
        Metric::Readcount => Some(t.readcount_w_children as f64),
    };
    let (taxa, rows) = table(results, &rank, req_show_host, &value);
    // The taxonomy only for UniFrac, which walks it.
    let unifrac = matches!(metric, BetaMetric::WeightedUnifrac | BetaMetric::UnweightedUnifrac);
    let mut taxonomy = Taxonomy::new();
    for r in results.iter().filter(|_| unifrac) {
        for t in &r.table {
            taxonomy.add(&t.tax_id, t.parent_tax_id.as_deref());
        }
    }
    let dm = mgds_diversity::beta(metric, &ids, &taxa, &rows, unifrac.then_some(&taxonomy))
        .map_err(|e| invalid(sentence(&e.to_string())))?;
    let o = mgds_diversity::pcoa(&dm);
    let axes = AXES.min(o.eigenvalues.len());
    // Every distance 0: no axis has any variance (scikit-bio's shares are then NaN).
    let flat = o.proportion_explained.iter().any(|p| !p.is_finite());
    if flat {
        test_notes.push(format!(
            "Every {} distance is 0 (the samples are alike at rank {rank}): no axis explains any variance.",
            metric.label()
        ));
    }
    let permanova = match &group_by {
        None => None,
        Some(_) => {
            // As the `onecodex` library's `beta_diversity_stats`: samples without a group, and
            // groups of one sample, are left out.
            let mut sizes: HashMap<&str, usize> = HashMap::new();
            for s in &samples {
                if let Some(g) = &s.group {
                    *sizes.entry(g.as_str()).or_default() += 1;
                }
            }
            let grouped: Vec<usize> =
                (0..samples.len()).filter(|&i| samples[i].group.as_deref().is_some_and(|g| sizes[g] >= 2)).collect();
            let sub = mgds_diversity::DistanceMatrix {
                ids: grouped.iter().map(|&i| ids[i].clone()).collect(),
                d: grouped.iter().map(|&i| grouped.iter().map(|&j| dm.d[i][j]).collect()).collect(),
            };
            let groups: Vec<String> = grouped.iter().filter_map(|&i| samples[i].group.clone()).collect();
            match mgds_diversity::permanova(&sub, &groups, permutations, seed) {
                Ok(p) => Some(TestView {
                    method: format!(
                        "PERMANOVA on {} distances, {permutations} permutations (seed {seed}; numpy's default_rng, as scikit-bio)",
                        metric.label()
                    ),
                    statistic: p.pseudo_f,
                    p_value: p.p_value,
                    groups: p.groups.into_iter().map(|(group, samples)| GroupSize { group, samples }).collect(),
                }),
                Err(e) => {
                    test_notes.push(sentence(&format!("No PERMANOVA: {e}")));
                    None
                }
            }
        }
    };
    let measure_key = metric_key(measure).to_string();
    let measure_label: String = match measure {
        Metric::Share(m) => m.label().to_lowercase(),
        Metric::Readcount => "reads".into(),
    };
    let mut methods = vec![
        format!("Alpha diversity from the reads of each taxon at rank {rank} (Chao1 needs read counts)."),
        format!(
            "{} distances on the {measure_label} at rank {rank}, each sample's values as shares of its total: {}.",
            metric.label(),
            metric.explanation()
        ),
        "PCoA: the eigenvectors of the double-centred −d²/2 matrix, scaled by the square roots of their eigenvalues; each axis's share of variance over the positive eigenvalues.".to_string(),
    ];
    methods.push(if req_show_host {
        "Host reads included.".to_string()
    } else {
        "Host reads left out (the taxa the database names as host, and those below them).".to_string()
    });
    Ok(DiversityView {
        samples,
        rank,
        measure: measure_key,
        measure_label,
        metric: metric.key().into(),
        metric_label: metric.label().into(),
        group_by,
        fields,
        alpha,
        distances: dm.d,
        ordination: OrdinationView {
            proportion_explained: o.proportion_explained[..axes]
                .iter()
                .map(|p| if p.is_finite() { *p } else { 0.0 })
                .collect(),
            coordinates: o.coordinates.iter().map(|c| c[..axes].to_vec()).collect(),
        },
        permanova,
        test_notes,
        methods,
        skipped,
    })
}

/// The files of the view ([`DiversityView::file`]).
pub const FILES: [&str; 8] = [
    "alpha.svg",
    "alpha.png",
    "ordination.svg",
    "ordination.png",
    "alpha.csv",
    "alpha.tsv",
    "distances.csv",
    "distances.tsv",
];

/// The width the charts are drawn at, on screen and in files.
pub const WIDTH: u32 = 1100;

/// Whether a note of [`DiversityView::test_notes`] is about alpha diversity (the others are
/// about the distances: the PERMANOVA, the ordination).
fn is_alpha_note(note: &str) -> bool {
    note.starts_with(ALPHA_NOTE)
}

const ALPHA_NOTE: &str = "No test of alpha diversity";

fn chart_error(e: mgds_plots::Error) -> CmdError {
    CmdError::new("chart", sentence(&e.to_string()))
}

/// A statistic or p-value as written: 4 decimals, or 3 significant figures when tiny.
fn shown_number(v: Option<f64>) -> String {
    match v {
        None => "undefined".to_string(),
        Some(v) if v != 0.0 && v.abs() < 1e-4 => format!("{v:.2e}"),
        Some(v) => format!("{v:.4}"),
    }
}

fn statistic_and_p(t: &TestView, statistic: &str) -> String {
    let groups: Vec<String> = t.groups.iter().map(|g| format!("{} {}", g.group, g.samples)).collect();
    format!("p = {} ({statistic} {}; {})", shown_number(t.p_value), shown_number(t.statistic), groups.join(", "))
}

/// The diversity view as the screens show it: the numbers and both charts.
#[derive(Debug, Clone, Serialize, TS)]
pub struct DiversityScreen {
    /// The numbers.
    pub view: DiversityView,
    /// The alpha diversity chart as SVG (points: `<circle class="point" data-sample>`).
    pub alpha_svg: String,
    /// The ordination chart as SVG (the same points).
    pub ordination_svg: String,
}

/// The diversity view of `req` with its charts, drawn at [`WIDTH`].
pub async fn screen(
    src: Source<'_>,
    req: &DiversityRequest,
    progress: &(dyn Fn(CompareProgress) + Sync),
) -> CmdResult<DiversityScreen> {
    let view = prepare(src, req, progress).await?;
    let _turn = COMPUTING.acquire().await.map_err(|_| CmdError::new("busy", "Stopping; try again in a moment."))?;
    tokio::task::spawn_blocking(move || {
        let (alpha_svg, ordination_svg) = (view.alpha_chart(WIDTH)?, view.ordination_chart(WIDTH)?);
        Ok(DiversityScreen { view, alpha_svg, ordination_svg })
    })
    .await
    .map_err(|e| CmdError::new("chart", format!("The diversity could not be drawn ({e}).")))?
}

impl DiversityView {
    /// Writes the alpha diversity (one row per sample: id, name, group, each measure) as
    /// delimited text, the tests and methods after it as `#` lines.
    pub fn write_alpha(&self, out: impl std::io::Write, delimiter: u8) -> CmdResult<()> {
        let mut w = csv::WriterBuilder::new().delimiter(delimiter).from_writer(out);
        let err = |e: csv::Error| CmdError::new("file", sentence(&e.to_string()));
        let mut header = vec!["sample_id".to_string(), "sample".into(), "group".into()];
        header.extend(self.alpha.iter().map(|a| a.metric.clone()));
        w.write_record(&header).map_err(err)?;
        for (i, s) in self.samples.iter().enumerate() {
            let mut row = vec![s.id.clone(), s.label.clone(), s.group.clone().unwrap_or_default()];
            row.extend(self.alpha.iter().map(|a| a.values[i].map(|v| format!("{v}")).unwrap_or_default()));
            w.write_record(&row).map_err(err)?;
        }
        self.write_footer(w)
    }

    /// Writes the distance matrix (a header of sample ids, then one row per sample) as
    /// delimited text, the tests and methods after it as `#` lines.
    pub fn write_distances(&self, out: impl std::io::Write, delimiter: u8) -> CmdResult<()> {
        let mut w = csv::WriterBuilder::new().delimiter(delimiter).from_writer(out);
        let err = |e: csv::Error| CmdError::new("file", sentence(&e.to_string()));
        let mut header = vec![String::new()];
        header.extend(self.samples.iter().map(|s| s.id.clone()));
        w.write_record(&header).map_err(err)?;
        for (s, row) in self.samples.iter().zip(&self.distances) {
            let mut r = vec![s.id.clone()];
            r.extend(row.iter().map(|v| format!("{v}")));
            w.write_record(&r).map_err(err)?;
        }
        self.write_footer(w)
    }

    /// Ends a table with the tests and methods as `#` lines (written as they are, not as CSV
    /// fields, so that a reader told that `#` starts a comment skips them).
    fn write_footer<W: std::io::Write>(&self, w: csv::Writer<W>) -> CmdResult<()> {
        let file = |e: std::io::Error| CmdError::new("file", sentence(&e.to_string()));
        let mut out = w.into_inner().map_err(|e| file(e.into_error()))?;
        for line in self.footer() {
            writeln!(out, "# {line}").map_err(file)?;
        }
        out.flush().map_err(file)
    }

    /// The principal coordinates as a chart (the first two axes, points coloured by group),
    /// its PERMANOVA and methods written under it, as SVG `width` pixels wide.
    pub fn ordination_chart(&self, width: u32) -> CmdResult<String> {
        let axis = |k: usize| match self.ordination.proportion_explained.get(k) {
            Some(p) => format!("PC{} ({:.1}%)", k + 1, p * 100.0),
            None => format!("PC{} (none: every distance lies on fewer axes)", k + 1),
        };
        let coordinate = |i: usize, k: usize| self.ordination.coordinates.get(i).and_then(|c| c.get(k)).copied();
        let points = self
            .samples
            .iter()
            .enumerate()
            .map(|(i, s)| mgds_plots::OrdinationPoint {
                label: s.label.clone(),
                group: s.group.clone(),
                x: coordinate(i, 0).unwrap_or(0.0),
                y: coordinate(i, 1).unwrap_or(0.0),
            })
            .collect();
        let mut notes: Vec<String> = self.permanova_line().into_iter().collect();
        notes.extend(self.test_notes.iter().filter(|n| !is_alpha_note(n)).cloned());
        notes.extend(self.methods.iter().skip(1).cloned());
        let o = mgds_plots::Ordination {
            title: format!(
                "PCoA of {} distances: {} at {}, {} samples",
                self.metric_label,
                self.measure_label,
                self.rank,
                self.samples.len()
            ),
            x_label: axis(0),
            y_label: axis(1),
            group_by: self.group_by.clone(),
            points,
            notes,
        };
        mgds_plots::ordination_chart(&o, width).map_err(chart_error)
    }

    /// The alpha diversity as a chart (a panel per measure, a strip of points per group, each
    /// panel's test above it, the methods under it), as SVG `width` pixels wide.
    pub fn alpha_chart(&self, width: u32) -> CmdResult<String> {
        let panels = self
            .alpha
            .iter()
            .map(|a| mgds_plots::AlphaPanel {
                label: a.label.clone(),
                values: a.values.clone(),
                test: a.test.as_ref().map(|t| format!("{} · {}", statistic_and_p(t, "statistic"), t.method)),
            })
            .collect();
        let mut notes: Vec<String> = self.test_notes.iter().filter(|n| is_alpha_note(n)).cloned().collect();
        notes.extend(self.methods.first().cloned());
        notes.extend(self.methods.last().cloned());
        let a = mgds_plots::AlphaChart {
            title: format!("Alpha diversity at {}, {} samples", self.rank, self.samples.len()),
            samples: self.samples.iter().map(|s| s.label.clone()).collect(),
            groups: self.samples.iter().map(|s| s.group.clone()).collect(),
            group_by: self.group_by.clone(),
            panels,
            notes,
        };
        mgds_plots::alpha_chart(&a, width).map_err(chart_error)
    }

    /// The file `what` names: `alpha.svg`, `alpha.png`, `ordination.svg`, `ordination.png` (a
    /// chart `width` pixels wide at 96 dpi, the PNG at `dpi`), `alpha.csv`, `alpha.tsv`,
    /// `distances.csv` or `distances.tsv`; its bytes and type.
    pub fn file(&self, what: &str, width: u32, dpi: u32) -> CmdResult<(Vec<u8>, &'static str)> {
        let png = |svg: String| mgds_plots::svg_to_png(&svg, dpi.clamp(72, 600) as f32 / 96.0).map_err(chart_error);
        let table = |alpha: bool, delimiter: u8| -> CmdResult<Vec<u8>> {
            let mut out = Vec::new();
            if alpha {
                self.write_alpha(&mut out, delimiter)?
            } else {
                self.write_distances(&mut out, delimiter)?
            }
            Ok(out)
        };
        Ok(match what {
            "alpha.svg" => (self.alpha_chart(width)?.into_bytes(), "image/svg+xml"),
            "alpha.png" => (png(self.alpha_chart(width)?)?, "image/png"),
            "ordination.svg" => (self.ordination_chart(width)?.into_bytes(), "image/svg+xml"),
            "ordination.png" => (png(self.ordination_chart(width)?)?, "image/png"),
            "alpha.csv" => (table(true, b',')?, "text/csv"),
            "alpha.tsv" => (table(true, b'\t')?, "text/tab-separated-values"),
            "distances.csv" => (table(false, b',')?, "text/csv"),
            "distances.tsv" => (table(false, b'\t')?, "text/tab-separated-values"),
            other => {
                let shown: String = other.chars().take(40).collect();
                return Err(invalid(format!(
                    "There is no diversity file {shown:?}: choose one of {}.",
                    FILES.join(", ")
                )));
            }
        })
    }

    /// The name a file of this view is offered under.
    pub fn file_name(&self, what: &str) -> String {
        let (kind, ext) = what.split_once('.').unwrap_or((what, "txt"));
        let detail = if kind == "alpha" { String::new() } else { format!("_{}", self.metric) };
        format!("diversity_{}_samples_{}_{kind}{detail}.{ext}", self.samples.len(), self.rank)
    }

    fn permanova_line(&self) -> Option<String> {
        let t = self.permanova.as_ref()?;
        Some(format!(
            "{} by {}: {}",
            t.method,
            self.group_by.as_deref().unwrap_or_default(),
            statistic_and_p(t, "pseudo-F")
        ))
    }

    /// The tests, then the methods, one line each.
    pub fn footer(&self) -> Vec<String> {
        let p = shown_number;
        let mut out = Vec::new();
        if let Some(g) = &self.group_by {
            for a in &self.alpha {
                if let Some(t) = &a.test {
                    out.push(format!(
                        "{} by {g}: {}, statistic {}, p = {}",
                        a.label,
                        t.method,
                        p(t.statistic),
                        p(t.p_value)
                    ));
                }
            }
            if let Some(t) = &self.permanova {
                out.push(format!("{} by {g}: pseudo-F {}, p = {}", t.method, p(t.statistic), p(t.p_value)));
            }
        }
        out.extend(self.test_notes.iter().cloned());
        out.extend(self.methods.iter().cloned());
        // One line each, whatever a field's name holds.
        out.into_iter().map(|l| l.replace(['\r', '\n'], " ")).collect()
    }
}
