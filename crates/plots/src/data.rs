//! The data behind the charts: which taxa become bars and with what value.

use std::collections::HashMap;

use mgds_api::{ClassificationResults, Measure};

/// What to draw in an abundance chart.
#[derive(Debug, Clone, PartialEq)]
pub struct AbundanceChartOptions {
    /// Taxa at this rank become bars: `"species"` (default), `"genus"`, `"family"`, ...
    /// (compared case-insensitively with the table's `rank`).
    pub rank: String,
    /// How many taxa get their own bar (default 10); the rest are summed into one "Other" bar.
    /// 0 is treated as 1.
    pub top_n: usize,
    /// The value of each bar.
    pub metric: Metric,
    /// Width of the image in pixels (default 900).
    pub width: u32,
    /// Height of the image in pixels (default 480).
    pub height: u32,
    /// Title above the chart; `None` picks one from the rank and metric.
    pub title: Option<String>,
    /// Leave out the host's taxa (the results' `host_tax_ids` and what lies below them), as
    /// the `onecodex` library's `include_host=False` does (default).
    pub hide_host: bool,
    /// Tax ids called possible contaminants (by a controls analysis): their bars' names end
    /// with [`FLAGGED_MARK`], or they are left out with `hide_flagged`.
    pub flagged: Vec<String>,
    /// Leave the flagged taxa out.
    pub hide_flagged: bool,
}

impl Default for AbundanceChartOptions {
    fn default() -> Self {
        Self {
            rank: "species".to_owned(),
            top_n: 10,
            metric: Metric::Share(Measure::GenomeCopies),
            width: 900,
            height: 480,
            title: None,
            hide_host: true,
            flagged: Vec::new(),
            hide_flagged: false,
        }
    }
}

/// What a flagged taxon's name ends with on a chart.
pub const FLAGGED_MARK: &str = " (possible contaminant)";

/// The value a bar shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// One of the abundance measures ([`Measure`]), in percent, named in the chart's title and
    /// axis. Re-estimated and genome-copy abundance are given for species, so at any other rank
    /// a taxon's value is the sum over the species below it (a species counts towards the
    /// genus it descends from). The share of reads is read at the rank itself.
    Share(Measure),
    /// Reads assigned to the taxon and its descendants (`readcount_w_children`).
    Readcount,
}

impl Default for Metric {
    fn default() -> Self {
        Metric::Share(Measure::GenomeCopies)
    }
}

impl Metric {
    /// The metric named `key`: `readcount`, or a [`Measure::key`] (`abundance` is the
    /// genome-copy share).
    pub fn from_key(key: &str) -> Option<Metric> {
        if key == "readcount" { Some(Metric::Readcount) } else { Measure::from_key(key).map(Metric::Share) }
    }
}

/// One bar of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// The taxon's full scientific name, or `Other (N taxa)` for the bucket of the rest.
    pub label: String,
    /// The taxon's NCBI tax id; `None` for the "Other" bucket.
    pub tax_id: Option<String>,
    /// Percent (0–100) for [`Metric::Share`], reads for [`Metric::Readcount`].
    pub value: f64,
}

impl Bar {
    /// Whether this is the "Other" bucket.
    pub fn is_other(&self) -> bool {
        self.tax_id.is_none()
    }
}

/// The bars of an abundance chart: the `top_n` taxa at `opts.rank` by value, largest first (ties
/// by name, then tax id), then one "Other" bar summing the rest when there are more than `top_n`.
///
/// Taxa whose value is zero are left out, so an empty result means there is nothing to draw at
/// that rank. Abundance that cannot be placed under a taxon of the rank (for example a species
/// with no genus in its lineage, when charting genera) is not shown, so at ranks above species
/// the bars may add up to less than 100%.
pub fn top_taxa(results: &ClassificationResults, opts: &AbundanceChartOptions) -> Vec<Bar> {
    let table = &results.table;
    let mut host = if opts.hide_host { crate::host_subtree(results) } else { Default::default() };
    // Flagged taxa left out are left out as the host's are.
    if opts.hide_flagged {
        host.extend(opts.flagged.iter().cloned());
    }
    let flagged: std::collections::HashSet<&str> = opts.flagged.iter().map(String::as_str).collect();
    let at_rank = |rank: &str| rank.trim().eq_ignore_ascii_case(opts.rank.trim());

    // Per taxon at the rank: (index of its row, value), in table order.
    let mut values: Vec<(usize, f64)> = Vec::new();
    match opts.metric {
        Metric::Readcount | Metric::Share(Measure::ReadShare) => {
            for (i, row) in table.iter().enumerate() {
                if at_rank(&row.rank) && !host.contains(&row.tax_id) {
                    let v = match opts.metric {
                        Metric::Readcount => Some(row.readcount_w_children as f64),
                        _ => Measure::ReadShare.value(row, results.n_reads).map(|v| v * 100.0),
                    };
                    if let Some(v) = v {
                        values.push((i, v));
                    }
                }
            }
        }
        Metric::Share(measure) => {
            let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(table.len());
            for (i, row) in table.iter().enumerate() {
                by_id.entry(row.tax_id.as_str()).or_insert(i);
            }
            let mut slot_of: HashMap<usize, usize> = HashMap::new();
            // Where the results give the measure at the rank itself (re-estimated abundance of
            // genera, estimated at that level), those values; otherwise the species values,
            // summed up to the rank.
            let direct = table.iter().any(|r| at_rank(&r.rank) && measure.value(r, results.n_reads).is_some());
            let source_rank = if direct { opts.rank.as_str() } else { "species" };
            for row in table
                .iter()
                .filter(|r| r.rank.trim().eq_ignore_ascii_case(source_rank.trim()) && !host.contains(&r.tax_id))
            {
                let Some(a) = measure.value(row, results.n_reads).filter(|a| *a > 0.0) else {
                    continue;
                };
                if let Some(anc) = ancestor_at(table, &by_id, row, &at_rank) {
                    let slot = *slot_of.entry(anc).or_insert_with(|| {
                        values.push((anc, 0.0));
                        values.len() - 1
                    });
                    values[slot].1 += a * 100.0;
                }
            }
        }
    }

    let mut bars: Vec<Bar> = values
        .into_iter()
        .filter(|(_, v)| v.is_finite() && *v > 0.0)
        .map(|(i, value)| {
            let row = &table[i];
            let label = if flagged.contains(row.tax_id.as_str()) {
                format!("{}{}", row.name, FLAGGED_MARK)
            } else {
                row.name.clone()
            };
            Bar { label, tax_id: Some(row.tax_id.clone()), value }
        })
        .collect();
    bars.sort_by(|a, b| {
        b.value.total_cmp(&a.value).then_with(|| a.label.cmp(&b.label)).then_with(|| a.tax_id.cmp(&b.tax_id))
    });

    let top_n = opts.top_n.max(1);
    if bars.len() > top_n {
        let rest = bars.split_off(top_n);
        bars.push(Bar {
            label: format!("Other ({} taxa)", rest.len()),
            tax_id: None,
            value: rest.iter().map(|b| b.value).sum(),
        });
    }
    bars
}

/// The row index of `row` or its nearest ancestor whose rank matches, walking parent links.
fn ancestor_at(
    table: &[mgds_api::TaxonRow],
    by_id: &HashMap<&str, usize>,
    row: &mgds_api::TaxonRow,
    at_rank: &impl Fn(&str) -> bool,
) -> Option<usize> {
    let mut i = *by_id.get(row.tax_id.as_str())?;
    // A well-formed tree is never deeper than the table; the bound guards against parent cycles.
    for _ in 0..table.len() {
        let r = &table[i];
        if at_rank(&r.rank) {
            return Some(i);
        }
        let parent = r.parent_tax_id.as_deref()?;
        if parent == r.tax_id {
            return None;
        }
        i = *by_id.get(parent)?;
    }
    None
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

    fn results() -> ClassificationResults {
        ClassificationResults {
            table: vec![
                row("1", "root", "no rank", None, 100, None),
                row("10", "Alpha", "genus", Some("1"), 60, None),
                row("11", "Alpha one", "species", Some("10"), 40, Some(0.5)),
                row("12", "Alpha two", "species", Some("10"), 20, Some(0.2)),
                row("20", "Beta", "genus", Some("1"), 30, None),
                row("21", "Beta one", "species", Some("20"), 30, Some(0.25)),
                // No genus in its lineage.
                row("31", "Orphan", "species", Some("1"), 10, Some(0.05)),
                row("41", "Zero", "species", Some("1"), 0, Some(0.0)),
            ],
            n_reads: 100,
            host_tax_ids: vec![],
            median_read_length: None,
            qc: None,
        }
    }

    fn opts(rank: &str, top_n: usize, metric: Metric) -> AbundanceChartOptions {
        AbundanceChartOptions { rank: rank.into(), top_n, metric, ..Default::default() }
    }

    #[test]
    fn the_host_is_left_out_unless_asked_for() {
        let mut r = results();
        r.host_tax_ids = vec!["20".into()];
        let shown = |hide_host: bool, rank: &str| -> Vec<String> {
            let o = AbundanceChartOptions { hide_host, ..opts(rank, 10, Metric::Readcount) };
            top_taxa(&r, &o).into_iter().filter_map(|b| b.tax_id).collect()
        };
        // The host genus and the species below it, by reads and by a measure.
        assert!(!shown(true, "genus").contains(&"20".to_string()));
        assert!(!shown(true, "species").contains(&"21".to_string()));
        assert!(shown(false, "species").contains(&"21".to_string()));
        let o = opts("species", 10, Metric::Share(Measure::GenomeCopies));
        assert!(top_taxa(&r, &o).iter().all(|b| b.tax_id.as_deref() != Some("21")));
    }

    #[test]
    fn a_measure_given_at_the_rank_itself_is_used_there() {
        let mut r = results();
        for row in &mut r.table {
            row.reestimated_abundance = match row.tax_id.as_str() {
                "11" => Some(0.6),
                "12" => Some(0.1),
                "21" => Some(0.3),
                // Genus-level estimates of their own, not the sums of their species.
                "10" => Some(0.65),
                "20" => Some(0.35),
                _ => None,
            };
        }
        let genus = top_taxa(&r, &opts("genus", 10, Metric::Share(Measure::Reestimated)));
        let values: Vec<(&str, f64)> = genus.iter().map(|b| (b.label.as_str(), b.value)).collect();
        assert_eq!(values, [("Alpha", 65.0), ("Beta", 35.0)]);
        // Ranks without their own values sum the species below.
        let species = top_taxa(&r, &opts("species", 10, Metric::Share(Measure::Reestimated)));
        assert_eq!(species[0].value, 60.0);
    }

    #[test]
    fn species_sorted_as_percent_and_zero_left_out() {
        let bars = top_taxa(&results(), &opts("species", 10, Metric::Share(Measure::GenomeCopies)));
        let got: Vec<_> = bars.iter().map(|b| (b.label.as_str(), b.value)).collect();
        assert_eq!(got, [("Alpha one", 50.0), ("Beta one", 25.0), ("Alpha two", 20.0), ("Orphan", 5.0)]);
    }

    #[test]
    fn genus_sums_its_species() {
        let bars = top_taxa(&results(), &opts("Genus", 10, Metric::Share(Measure::GenomeCopies)));
        assert_eq!(bars.len(), 2);
        assert_eq!(bars[0].tax_id.as_deref(), Some("10"));
        assert!((bars[0].value - 70.0).abs() < 1e-9);
        assert!((bars[1].value - 25.0).abs() < 1e-9);
    }

    #[test]
    fn other_sums_the_rest() {
        let bars = top_taxa(&results(), &opts("species", 2, Metric::Share(Measure::GenomeCopies)));
        assert_eq!(bars.len(), 3);
        assert!(bars[2].is_other());
        assert_eq!(bars[2].label, "Other (2 taxa)");
        assert!((bars[2].value - 25.0).abs() < 1e-9);
        // Exactly top_n taxa: no Other.
        let bars = top_taxa(&results(), &opts("species", 4, Metric::Share(Measure::GenomeCopies)));
        assert!(bars.iter().all(|b| !b.is_other()));
        // top_n 0 is treated as 1.
        assert_eq!(top_taxa(&results(), &opts("species", 0, Metric::Share(Measure::GenomeCopies))).len(), 2);
    }

    #[test]
    fn readcount_uses_counts_with_children() {
        let bars = top_taxa(&results(), &opts("genus", 10, Metric::Readcount));
        let got: Vec<_> = bars.iter().map(|b| (b.label.as_str(), b.value)).collect();
        assert_eq!(got, [("Alpha", 60.0), ("Beta", 30.0)]);
    }

    #[test]
    fn unknown_rank_and_parent_cycle_give_nothing() {
        assert!(top_taxa(&results(), &opts("phylum", 10, Metric::Share(Measure::GenomeCopies))).is_empty());
        let mut r = results();
        r.table = vec![row("5", "A", "species", Some("6"), 1, Some(0.5)), row("6", "B", "no rank", Some("5"), 1, None)];
        assert!(top_taxa(&r, &opts("genus", 10, Metric::Share(Measure::GenomeCopies))).is_empty());
    }
}
