//! Many samples side by side: the numbers behind the comparison charts ([`compare`]), their
//! tidy table ([`Comparison::write_table`]), and the order clustering gives ([`cluster_order`]).

use std::collections::{HashMap, HashSet};

use mgds_api::{ClassificationResults, Measure};

use crate::Error;
use crate::data::{AbundanceChartOptions, Metric, top_taxa};

/// What to compare.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    /// Taxa at this rank are compared (`species`, `genus`, ...).
    pub rank: String,
    /// How many taxa get their own column (the most abundant across the samples, by mean
    /// value); the rest are summed into "Other". 0 is treated as 1.
    pub top_n: usize,
    /// The value compared (a [`Measure`] in percent, or reads).
    pub metric: Metric,
    /// Leave out the host's taxa (the results' `host_tax_ids` and what descends from them).
    pub hide_host: bool,
    /// Add the sample's unclassified reads as a column of their own, where the value counts them
    /// (reads, or the share of reads); abundance measures are shares of classified species.
    pub show_unclassified: bool,
    /// Taxa marked as possible contaminants (by negative controls): named so on the chart, or
    /// left out with `hide_flagged`.
    pub flagged: Vec<String>,
    /// Leave the flagged taxa out (the chart says how many).
    pub hide_flagged: bool,
}

pub use crate::data::FLAGGED_MARK;

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            rank: "species".into(),
            top_n: 20,
            metric: Metric::default(),
            hide_host: true,
            show_unclassified: false,
            flagged: Vec::new(),
            hide_flagged: false,
        }
    }
}

/// What a compared column stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Column {
    /// A taxon.
    Taxon {
        /// Its tax id.
        tax_id: String,
        /// Its name.
        name: String,
    },
    /// The sum of the taxa that are not among the top ones.
    Other {
        /// How many taxa it sums.
        taxa: usize,
    },
    /// The reads no taxon was given.
    Unclassified,
}

impl Column {
    /// The name to show.
    pub fn label(&self) -> String {
        match self {
            Column::Taxon { name, .. } => name.clone(),
            Column::Other { taxa } => format!("Other ({taxa} taxa)"),
            Column::Unclassified => "Unclassified".into(),
        }
    }

    /// The tax id, for a taxon.
    pub fn tax_id(&self) -> Option<&str> {
        match self {
            Column::Taxon { tax_id, .. } => Some(tax_id),
            _ => None,
        }
    }
}

/// One sample to compare: the label to show and its classification.
#[derive(Debug, Clone, Copy)]
pub struct Compared<'a> {
    /// Its label (a name, or a metadata field's value).
    pub label: &'a str,
    /// Its classification results.
    pub results: &'a ClassificationResults,
}

/// The numbers behind a comparison: samples (rows) by columns (taxa, "Other", "Unclassified").
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The rank compared.
    pub rank: String,
    /// The value compared.
    pub metric: Metric,
    /// The samples' labels, in order.
    pub samples: Vec<String>,
    /// The columns, in order: the top taxa (most abundant first), then "Other", then
    /// "Unclassified" where they apply.
    pub columns: Vec<Column>,
    /// `values[sample][column]`, in percent for a measure, reads for [`Metric::Readcount`].
    pub values: Vec<Vec<f64>>,
    /// `reads[sample][column]`: reads of the taxon and below (summed for "Other").
    pub reads: Vec<Vec<u64>>,
    /// What the comparison leaves out, in words for the chart (`host reads hidden`, ...).
    pub notes: Vec<String>,
}

/// Compares `samples` at `opts.rank`: every taxon's value in each sample; the `top_n` taxa with
/// the highest mean across the samples get their own column, the rest are summed into "Other".
pub fn compare(samples: &[Compared<'_>], opts: &CompareOptions) -> Result<Comparison, Error> {
    // Every taxon: the host's are left out below, so that the chart can say it hid them.
    let per_rank = AbundanceChartOptions {
        rank: opts.rank.clone(),
        top_n: usize::MAX,
        metric: opts.metric,
        hide_host: false,
        ..Default::default()
    };
    // Each sample's taxa at the rank: tax id -> (name, value, reads).
    let mut tables: Vec<HashMap<String, (String, f64, u64)>> = Vec::with_capacity(samples.len());
    let mut hid_host = false;
    let flagged: HashSet<&str> = opts.flagged.iter().map(String::as_str).collect();
    let mut hid_flagged: HashSet<String> = HashSet::new();
    let mut marked = false;
    for s in samples {
        let hosts = if opts.hide_host { host_subtree(s.results) } else { HashSet::new() };
        let reads_of: HashMap<&str, u64> =
            s.results.table.iter().map(|r| (r.tax_id.as_str(), r.readcount_w_children)).collect();
        let mut taxa = HashMap::new();
        for bar in top_taxa(s.results, &per_rank) {
            let Some(id) = bar.tax_id else { continue };
            if hosts.contains(&id) {
                hid_host = true;
                continue;
            }
            let is_flagged = flagged.contains(id.as_str());
            if is_flagged && opts.hide_flagged {
                hid_flagged.insert(id);
                continue;
            }
            let reads = reads_of.get(id.as_str()).copied().unwrap_or(0);
            marked |= is_flagged;
            let label = if is_flagged { format!("{}{FLAGGED_MARK}", bar.label) } else { bar.label };
            taxa.insert(id, (label, bar.value, reads));
        }
        tables.push(taxa);
    }
    // The top taxa by mean value (the sum, for equal sample counts), ties by name then id.
    let mut totals: HashMap<&str, (f64, &str)> = HashMap::new();
    for t in &tables {
        for (id, (name, value, _)) in t {
            let e = totals.entry(id.as_str()).or_insert((0.0, name.as_str()));
            e.0 += value;
        }
    }
    if totals.is_empty() {
        return Err(Error::NoData { rank: opts.rank.clone() });
    }
    let mut ranked: Vec<(&str, f64, &str)> = totals.iter().map(|(id, (v, name))| (*id, *v, *name)).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.2.cmp(b.2)).then_with(|| a.0.cmp(b.0)));
    let top_n = opts.top_n.max(1);
    let rest = ranked.len().saturating_sub(top_n);
    let mut columns: Vec<Column> = ranked
        .iter()
        .take(top_n)
        .map(|(id, _, name)| Column::Taxon { tax_id: (*id).to_string(), name: (*name).to_string() })
        .collect();
    if rest > 0 {
        columns.push(Column::Other { taxa: rest });
    }
    let unclassified =
        opts.show_unclassified && matches!(opts.metric, Metric::Readcount | Metric::Share(Measure::ReadShare));
    if unclassified {
        columns.push(Column::Unclassified);
    }
    let top: HashSet<&str> = ranked.iter().take(top_n).map(|(id, ..)| *id).collect();
    let mut values = Vec::with_capacity(samples.len());
    let mut reads = Vec::with_capacity(samples.len());
    for (s, t) in samples.iter().zip(&tables) {
        let mut v = Vec::with_capacity(columns.len());
        let mut r = Vec::with_capacity(columns.len());
        for c in &columns {
            let (value, count) = match c {
                Column::Taxon { tax_id, .. } => t.get(tax_id).map_or((0.0, 0), |(_, v, r)| (*v, *r)),
                Column::Other { .. } => t
                    .iter()
                    .filter(|(id, _)| !top.contains(id.as_str()))
                    .fold((0.0, 0), |(a, b), (_, (_, v, r))| (a + v, b + r)),
                Column::Unclassified => {
                    let n = unclassified_reads(s.results);
                    let share = if s.results.n_reads > 0 { n as f64 * 100.0 / s.results.n_reads as f64 } else { 0.0 };
                    (if opts.metric == Metric::Readcount { n as f64 } else { share }, n)
                }
            };
            v.push(value);
            r.push(count);
        }
        values.push(v);
        reads.push(r);
    }
    let mut notes = Vec::new();
    if opts.hide_host {
        if hid_host {
            notes.push("host reads hidden".to_string());
        }
    } else if samples.iter().any(|s| !s.results.host_tax_ids.is_empty()) {
        notes.push("host reads shown".to_string());
    }
    if !hid_flagged.is_empty() {
        let n = hid_flagged.len();
        notes.push(format!("{n} possible contaminant{} left out", if n == 1 { "" } else { "s" }));
    } else if marked {
        notes.push("possible contaminants marked".to_string());
    }
    match (opts.show_unclassified, unclassified) {
        (true, true) => notes.push("unclassified reads shown".into()),
        (true, false) => notes.push("unclassified reads are not part of this measure".into()),
        (false, _) => notes.push("unclassified reads hidden".into()),
    }
    Ok(Comparison {
        rank: opts.rank.clone(),
        metric: opts.metric,
        samples: samples.iter().map(|s| s.label.to_string()).collect(),
        columns,
        values,
        reads,
        notes,
    })
}

/// The host's taxa and everything below them in `results`.
pub fn host_subtree(results: &ClassificationResults) -> HashSet<String> {
    let mut out: HashSet<String> = results.host_tax_ids.iter().cloned().collect();
    if out.is_empty() {
        return out;
    }
    let parent: HashMap<&str, &str> =
        results.table.iter().filter_map(|r| Some((r.tax_id.as_str(), r.parent_tax_id.as_deref()?))).collect();
    for row in &results.table {
        let mut at = row.tax_id.as_str();
        for _ in 0..results.table.len() {
            if out.contains(at) {
                out.insert(row.tax_id.clone());
                break;
            }
            match parent.get(at) {
                Some(p) if *p != at => at = p,
                _ => break,
            }
        }
    }
    out
}

/// Reads of the sample that no taxon was given.
fn unclassified_reads(results: &ClassificationResults) -> u64 {
    let classified: u64 =
        results.table.iter().filter(|r| r.parent_tax_id.is_none()).map(|r| r.readcount_w_children).sum();
    results.n_reads.saturating_sub(classified)
}

impl Comparison {
    /// The table behind the charts in tidy form, one row per sample and column: `sample`,
    /// `taxon`, `tax_id`, `rank`, `reads`, and the value under its measure's name
    /// (`reestimated_abundance_percent`, `genome_copies_percent`, `bases_genome_copies_percent`,
    /// `read_share_percent`; none more for reads), separated by `delimiter` (`b','` or `b'\t'`).
    pub fn write_table<W: std::io::Write>(&self, out: W, delimiter: u8) -> std::io::Result<()> {
        let mut w = csv::WriterBuilder::new().delimiter(delimiter).from_writer(out);
        let value_name = match self.metric {
            Metric::Share(Measure::Reestimated) => Some("reestimated_abundance_percent"),
            Metric::Share(Measure::GenomeCopies) => Some("genome_copies_percent"),
            Metric::Share(Measure::BasesGenomeCopies) => Some("bases_genome_copies_percent"),
            Metric::Share(Measure::ReadShare) => Some("read_share_percent"),
            Metric::Readcount => None,
        };
        let mut header = vec!["sample", "taxon", "tax_id", "rank", "reads"];
        header.extend(value_name);
        w.write_record(&header)?;
        for (i, sample) in self.samples.iter().enumerate() {
            for (j, c) in self.columns.iter().enumerate() {
                let rank = if matches!(c, Column::Taxon { .. }) { self.rank.as_str() } else { "" };
                let mut row = vec![
                    sample.clone(),
                    c.label(),
                    c.tax_id().unwrap_or_default().to_string(),
                    rank.to_string(),
                    self.reads[i][j].to_string(),
                ];
                if value_name.is_some() {
                    row.push(format!("{:.6}", self.values[i][j]));
                }
                w.write_record(&row)?;
            }
        }
        w.flush()
    }

    /// The samples in the order [`cluster_order`] gives their rows.
    pub fn clustered_samples(&self) -> Vec<usize> {
        cluster_order(&self.values)
    }

    /// The taxa in the order [`cluster_order`] gives them (each column's values across the
    /// samples), then "Other" and the unclassified reads where they are shown: those two are sums,
    /// not taxa, and stay at the end where a reader looks for them.
    pub fn clustered_columns(&self) -> Vec<usize> {
        let (taxa, rest): (Vec<usize>, Vec<usize>) =
            (0..self.columns.len()).partition(|&j| matches!(self.columns[j], Column::Taxon { .. }));
        let columns: Vec<Vec<f64>> = taxa.iter().map(|&j| self.values.iter().map(|row| row[j]).collect()).collect();
        cluster_order(&columns).into_iter().map(|k| taxa[k]).chain(rest).collect()
    }

    /// The same comparison with its samples in `order` (indices into [`Comparison::samples`]).
    pub fn with_sample_order(mut self, order: &[usize]) -> Comparison {
        fn pick<T: Clone>(v: &mut Vec<T>, order: &[usize]) {
            let old = std::mem::take(v);
            *v = order.iter().map(|&i| old[i].clone()).collect();
        }
        pick(&mut self.samples, order);
        pick(&mut self.values, order);
        pick(&mut self.reads, order);
        self
    }

    /// The same comparison with its columns in `order` (indices into [`Comparison::columns`]).
    pub fn with_column_order(mut self, order: &[usize]) -> Comparison {
        self.columns = order.iter().map(|&j| self.columns[j].clone()).collect();
        for row in &mut self.values {
            *row = order.iter().map(|&j| row[j]).collect();
        }
        for row in &mut self.reads {
            *row = order.iter().map(|&j| row[j]).collect();
        }
        self
    }
}

/// The measure a comparison of `results` shows when none is asked for: where every sample is
/// of long reads ([`Measure::default_for`]'s rule), the share of genome copies by bases if every
/// sample's results carry it; otherwise re-estimated abundance where every sample's results
/// carry it, else the share of genome copies, else (by bases), else the share of reads (which
/// every result has).
pub fn default_metric<'a>(results: impl IntoIterator<Item = &'a ClassificationResults> + Clone) -> Metric {
    let all = |m: Measure| results.clone().into_iter().all(|r| m.available(r));
    let long = results.clone().into_iter().all(|r| r.median_read_length.is_some_and(|m| m > mgds_api::LONG_READS));
    if long && all(Measure::BasesGenomeCopies) {
        return Metric::Share(Measure::BasesGenomeCopies);
    }
    Metric::Share(Measure::ALL.into_iter().find(|&m| all(m)).unwrap_or(Measure::ReadShare))
}

/// The order that sorts samples by a metadata field's values (`keys`, one per sample; a sample
/// without the field sorts first): numbers in numeric order when both are numbers, text in
/// text order otherwise; samples with equal keys keep their order.
pub fn order_by_keys(keys: &[Option<String>]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (keys[a].as_deref().unwrap_or_default(), keys[b].as_deref().unwrap_or_default());
        match (x.parse::<f64>(), y.parse::<f64>()) {
            (Ok(p), Ok(q)) => p.total_cmp(&q),
            _ => x.cmp(y),
        }
    });
    order
}

/// How [`cluster_order`] measures and joins, in words for a chart.
pub const CLUSTERING: &str = "Bray–Curtis dissimilarity, average linkage (UPGMA)";

/// The order of `rows` that hierarchical clustering gives: Bray–Curtis dissimilarity between
/// rows, joined by average linkage (UPGMA); leaves read left to right, the smaller original
/// index first at each join, so the order depends only on the data.
pub fn cluster_order(rows: &[Vec<f64>]) -> Vec<usize> {
    let n = rows.len();
    if n <= 2 {
        return (0..n).collect();
    }
    // Clusters: members (leaf order) and size; distances in a full matrix, updated by UPGMA.
    let mut members: Vec<Option<Vec<usize>>> = (0..n).map(|i| Some(vec![i])).collect();
    let mut d = vec![vec![0.0f64; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            let v = bray_curtis(&rows[i], &rows[j]);
            d[i][j] = v;
            d[j][i] = v;
        }
    }
    for _ in 1..n {
        let mut best = (f64::INFINITY, 0, 0);
        for i in 0..n {
            if members[i].is_none() {
                continue;
            }
            for j in i + 1..n {
                if members[j].is_some() && d[i][j] < best.0 {
                    best = (d[i][j], i, j);
                }
            }
        }
        let (_, a, b) = best;
        let (ma, mb) = (members[a].take().unwrap_or_default(), members[b].take().unwrap_or_default());
        let (na, nb) = (ma.len() as f64, mb.len() as f64);
        for k in 0..n {
            if k != a && k != b && members[k].is_some() {
                let v = (d[a][k] * na + d[b][k] * nb) / (na + nb);
                d[a][k] = v;
                d[k][a] = v;
            }
        }
        let (first, second) = if ma.iter().min() <= mb.iter().min() { (ma, mb) } else { (mb, ma) };
        members[a] = Some(first.into_iter().chain(second).collect());
    }
    members.into_iter().flatten().next().unwrap_or_default()
}

/// Bray–Curtis dissimilarity of two non-negative profiles: 0 alike, 1 nothing shared.
fn bray_curtis(a: &[f64], b: &[f64]) -> f64 {
    let (mut diff, mut sum) = (0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        diff += (x - y).abs();
        sum += x + y;
    }
    if sum > 0.0 { diff / sum } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mgds_api::TaxonRow;

    fn row(id: &str, name: &str, rank: &str, parent: Option<&str>, reads: u64, ab: Option<f64>) -> TaxonRow {
        TaxonRow {
            tax_id: id.into(),
            name: name.into(),
            rank: rank.into(),
            parent_tax_id: parent.map(Into::into),
            readcount: reads,
            readcount_w_children: reads,
            abundance: ab,
            abundance_w_children: None,
            filtered_readcount: None,
            filtered_readcount_w_children: None,
            reestimated_abundance: None,
            bases_abundance: None,
        }
    }

    /// A sample of 100 reads: 90 classified (root), species A, B, C and the host H as given.
    fn sample(a: u64, b: u64, c: u64, h: u64) -> ClassificationResults {
        let total = a + b + c + h;
        let ab = |n: u64| Some(n as f64 / total as f64);
        ClassificationResults {
            table: vec![
                row("1", "root", "no rank", None, total, None),
                row("11", "Alpha", "species", Some("1"), a, ab(a)),
                row("12", "Beta", "species", Some("1"), b, ab(b)),
                row("13", "Gamma", "species", Some("1"), c, ab(c)),
                row("9606", "Homo sapiens", "species", Some("1"), h, ab(h)),
            ],
            n_reads: 100,
            host_tax_ids: vec!["9606".into()],
            median_read_length: None,
            qc: None,
        }
    }

    #[test]
    fn possible_contaminants_are_named_or_left_out() {
        let (s1, s2) = (sample(60, 20, 5, 5), sample(10, 50, 20, 10));
        let samples = [Compared { label: "one", results: &s1 }, Compared { label: "two", results: &s2 }];
        let opts =
            CompareOptions { top_n: 5, metric: Metric::Readcount, flagged: vec!["13".into()], ..Default::default() };
        let c = compare(&samples, &opts).unwrap();
        let labels: Vec<String> = c.columns.iter().map(Column::label).collect();
        assert_eq!(labels, ["Alpha", "Beta", "Gamma (possible contaminant)"]);
        assert!(c.notes.contains(&"possible contaminants marked".to_string()));
        let c = compare(&samples, &CompareOptions { hide_flagged: true, ..opts }).unwrap();
        let labels: Vec<String> = c.columns.iter().map(Column::label).collect();
        assert_eq!(labels, ["Alpha", "Beta"]);
        assert!(c.notes.contains(&"1 possible contaminant left out".to_string()), "{:?}", c.notes);
    }

    #[test]
    fn top_taxa_across_samples_with_other_and_hidden_host() {
        let (s1, s2) = (sample(60, 20, 5, 5), sample(10, 50, 20, 10));
        let samples = [Compared { label: "one", results: &s1 }, Compared { label: "two", results: &s2 }];
        let opts = CompareOptions { top_n: 2, metric: Metric::Readcount, ..Default::default() };
        let c = compare(&samples, &opts).unwrap();
        let labels: Vec<String> = c.columns.iter().map(Column::label).collect();
        // Alpha 70 and Beta 70 reads in all: tied, by name; Gamma in Other; the host hidden.
        assert_eq!(labels, ["Alpha", "Beta", "Other (1 taxa)"]);
        assert_eq!(c.values, [[60.0, 20.0, 5.0], [10.0, 50.0, 20.0]]);
        assert!(c.notes.contains(&"host reads hidden".to_string()));
        // Shown, the host is a taxon like the others, and unclassified reads a column.
        let shown = CompareOptions { hide_host: false, show_unclassified: true, top_n: 10, ..opts };
        let c = compare(&samples, &shown).unwrap();
        let labels: Vec<String> = c.columns.iter().map(Column::label).collect();
        assert_eq!(labels, ["Alpha", "Beta", "Gamma", "Homo sapiens", "Unclassified"]);
        assert_eq!(c.values[0][4], 10.0, "100 reads, 90 classified");
    }

    #[test]
    fn samples_sort_by_a_field_numbers_as_numbers_and_ties_kept() {
        let keys = |v: &[Option<&str>]| v.iter().map(|k| k.map(String::from)).collect::<Vec<_>>();
        // 10 after 9 (numbers), a sample without the field first, equal keys as given.
        assert_eq!(order_by_keys(&keys(&[Some("10"), Some("9"), None, Some("9")])), [2, 1, 3, 0]);
        // Text in text order (dates written as RFC 3339 sort by time).
        assert_eq!(order_by_keys(&keys(&[Some("2024-05-02"), Some("2024-04-30"), Some("case")])), [1, 0, 2]);
    }

    #[test]
    fn the_default_measure_is_the_best_every_sample_has() {
        let (mut a, b) = (sample(60, 20, 5, 5), sample(10, 50, 20, 10));
        // Genome copies in both: that measure (re-estimated abundance is in neither).
        assert_eq!(default_metric([&a, &b]), Metric::Share(Measure::GenomeCopies));
        // One sample without genome copies: the share of reads, which every result has.
        for r in &mut a.table {
            r.abundance = None;
        }
        assert_eq!(default_metric([&a, &b]), Metric::Share(Measure::ReadShare));
        // Long reads with genome copies by bases in both: that measure; one sample of short
        // reads, and the rule for short reads holds.
        let (mut c, mut d) = (sample(60, 20, 5, 5), sample(10, 50, 20, 10));
        for r in c.table.iter_mut().chain(d.table.iter_mut()) {
            r.bases_abundance = r.abundance;
        }
        c.median_read_length = Some(8_000);
        d.median_read_length = Some(4_500);
        assert_eq!(default_metric([&c, &d]), Metric::Share(Measure::BasesGenomeCopies));
        d.median_read_length = Some(150);
        assert_eq!(default_metric([&c, &d]), Metric::Share(Measure::GenomeCopies));
    }

    #[test]
    fn the_tidy_table_names_its_measure() {
        let s = sample(60, 20, 10, 0);
        let c = compare(
            &[Compared { label: "s,1", results: &s }],
            &CompareOptions { metric: Metric::Share(Measure::GenomeCopies), ..Default::default() },
        )
        .unwrap();
        let mut out = Vec::new();
        c.write_table(&mut out, b',').unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("sample,taxon,tax_id,rank,reads,genome_copies_percent"));
        assert_eq!(lines.next(), Some("\"s,1\",Alpha,11,species,60,66.666667"));
    }

    #[test]
    fn clustering_puts_alike_rows_together_whatever_their_order() {
        let rows = vec![
            vec![90.0, 10.0, 0.0],
            vec![0.0, 10.0, 90.0],
            vec![88.0, 12.0, 0.0],
            vec![1.0, 9.0, 90.0],
            vec![45.0, 10.0, 45.0],
        ];
        let order = cluster_order(&rows);
        assert_eq!(order.len(), 5);
        let pos = |i: usize| order.iter().position(|&x| x == i).unwrap();
        assert_eq!(pos(0).abs_diff(pos(2)), 1, "{order:?}");
        assert_eq!(pos(1).abs_diff(pos(3)), 1, "{order:?}");
        assert_eq!(cluster_order(&rows[..2]), [0, 1]);
        assert!(cluster_order(&[]).is_empty());
    }

    #[test]
    fn nothing_at_the_rank_is_an_error() {
        let s = sample(1, 1, 1, 0);
        let opts = CompareOptions { rank: "phylum".into(), ..Default::default() };
        assert!(matches!(compare(&[Compared { label: "x", results: &s }], &opts), Err(Error::NoData { .. })));
    }
}
