//! Taxon alerts: a watch list of taxa, each with a threshold in reads or as a share of all the
//! reads, checked against every classified sample and against each live run's barcodes (their
//! batches summed). An alert fires once per sample (or run barcode) and taxon.
//!
//! A rule is written `TAXON >= AMOUNT`: `Salmonella enterica >= 0.1%`, `Listeria >= 50 reads`,
//! `590 >= 0.5%` (a taxonomy id). The taxon is matched by id or by its scientific name (any
//! rank; case does not matter), and its reads are its clade's: reads classified to it or to
//! anything below it. The share is of all the reads in the sample, classified or not.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use mgds_api::ClassificationResults;
use serde::{Deserialize, Serialize};

/// How much of a taxon makes an alert.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// At least this many reads.
    Reads(u64),
    /// At least this percentage of all the reads (0.1 means 0.1 %).
    Percent(f64),
}

/// One line of the watch list. It is kept and sent as written (`Salmonella enterica >= 0.1%`),
/// so `watch.toml` stays readable and editable by hand.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertRule {
    /// A taxonomy id or a scientific name.
    pub taxon: String,
    /// What makes it an alert.
    pub threshold: Threshold,
}

impl fmt::Display for AlertRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.threshold {
            Threshold::Reads(n) => write!(f, "{} >= {n} reads", self.taxon),
            Threshold::Percent(p) => write!(f, "{} >= {p}%", self.taxon),
        }
    }
}

impl Serialize for AlertRule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for AlertRule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<AlertRule, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

impl FromStr for AlertRule {
    type Err = String;

    fn from_str(s: &str) -> Result<AlertRule, String> {
        let usage = "write a rule as TAXON >= AMOUNT, the amount in reads or percent: \
                     \"Salmonella enterica >= 0.1%\", \"Listeria >= 50 reads\", \"590 >= 0.5%\"";
        let (taxon, amount) = s.split_once(">=").ok_or_else(|| format!("{s:?}: no `>=`; {usage}"))?;
        let taxon = taxon.trim();
        if taxon.is_empty() {
            return Err(format!("{s:?}: no taxon before `>=`; {usage}"));
        }
        let amount = amount.trim();
        let threshold = if let Some(p) = amount.strip_suffix('%') {
            let p: f64 = p.trim().parse().map_err(|_| format!("{s:?}: {amount:?} is not a percentage; {usage}"))?;
            if !(p > 0.0 && p <= 100.0) {
                return Err(format!("{s:?}: a percentage is above 0 and at most 100"));
            }
            Threshold::Percent(p)
        } else if let Some(n) = amount.strip_suffix("reads").or_else(|| amount.strip_suffix("read")) {
            let n: u64 =
                n.trim().parse().map_err(|_| format!("{s:?}: {amount:?} is not a number of reads; {usage}"))?;
            if n == 0 {
                return Err(format!("{s:?}: at least 1 read"));
            }
            Threshold::Reads(n)
        } else {
            return Err(format!("{s:?}: say whether {amount:?} is reads or percent; {usage}"));
        };
        Ok(AlertRule { taxon: taxon.to_string(), threshold })
    }
}

/// One taxon's reads in a sample (or summed over a run's batches).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TaxonCount {
    /// Taxonomy id.
    pub tax_id: String,
    /// Scientific name.
    pub name: String,
    /// Rank.
    pub rank: String,
    /// Reads classified to it or below it.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub reads: u64,
}

/// What a classification found, as much as the alerts and the run dashboard need: every
/// taxon's clade reads and the sample's reads in all.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Taxa {
    /// Reads in the sample (classified or not).
    pub total: u64,
    /// Taxa with reads, most reads first.
    pub taxa: Vec<TaxonCount>,
}

impl Taxa {
    /// From a classification's results.
    pub fn from_results(r: &ClassificationResults) -> Taxa {
        let mut taxa: Vec<TaxonCount> = r
            .table
            .iter()
            .filter(|t| t.readcount_w_children > 0)
            .map(|t| TaxonCount {
                tax_id: t.tax_id.clone(),
                name: t.name.clone(),
                rank: t.rank.clone(),
                reads: t.readcount_w_children,
            })
            .collect();
        taxa.sort_by(|a, b| b.reads.cmp(&a.reads).then_with(|| a.tax_id.cmp(&b.tax_id)));
        Taxa { total: r.n_reads, taxa }
    }

    /// Several samples' taxa summed (a barcode's batches).
    pub fn sum<'a>(parts: impl IntoIterator<Item = &'a Taxa>) -> Taxa {
        let mut total = 0;
        let mut by_id: BTreeMap<&str, TaxonCount> = BTreeMap::new();
        for p in parts {
            total += p.total;
            for t in &p.taxa {
                by_id.entry(&t.tax_id).and_modify(|c| c.reads += t.reads).or_insert_with(|| t.clone());
            }
        }
        let mut taxa: Vec<TaxonCount> = by_id.into_values().collect();
        taxa.sort_by(|a, b| b.reads.cmp(&a.reads).then_with(|| a.tax_id.cmp(&b.tax_id)));
        Taxa { total, taxa }
    }

    /// The taxon a rule names: by id, or by scientific name whatever the case.
    pub fn find(&self, taxon: &str) -> Option<&TaxonCount> {
        let t = taxon.trim();
        if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
            self.taxa.iter().find(|c| c.tax_id == t)
        } else {
            self.taxa.iter().find(|c| c.name.eq_ignore_ascii_case(t))
        }
    }

    /// The rules these taxa cross, with what crossed them.
    pub fn crossings<'r>(&self, rules: &'r [AlertRule]) -> Vec<Crossing<'r>> {
        rules
            .iter()
            .filter_map(|rule| {
                let found = self.find(&rule.taxon)?;
                let percent = if self.total == 0 { 0.0 } else { found.reads as f64 * 100.0 / self.total as f64 };
                let crossed = match rule.threshold {
                    Threshold::Reads(n) => found.reads >= n,
                    Threshold::Percent(p) => percent >= p,
                };
                crossed.then(|| Crossing { rule, taxon: found.clone(), percent })
            })
            .collect()
    }
}

/// A rule crossed: the taxon as the results name it, its reads and share.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossing<'r> {
    /// The rule.
    pub rule: &'r AlertRule,
    /// The taxon found.
    pub taxon: TaxonCount,
    /// Its reads as a percentage of all the reads.
    pub percent: f64,
}

/// An alert as recorded and reported: a sample (or a run's barcode) crossed a rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Alert {
    /// The sample (its id on the service), or the run barcode (`run:` then the run id and
    /// the barcode) the alert is about.
    pub subject: String,
    /// Said for a person: the sample's name, or the run id and barcode.
    pub label: String,
    /// The sample's id on the service; none for a run barcode's alert.
    pub sample_id: Option<String>,
    /// The run id, for a sample of a run or a run barcode.
    pub run_id: Option<String>,
    /// The rule, as written.
    pub rule: String,
    /// The taxon's id.
    pub tax_id: String,
    /// Its name.
    pub taxon: String,
    /// Its reads.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub reads: u64,
    /// Its share of all the reads, in percent.
    pub percent: f64,
    /// When it fired (RFC 3339).
    pub at: String,
}

impl Alert {
    /// One line for a log or a terminal.
    pub fn message(&self) -> String {
        format!(
            "{}: {} ({}) at {} reads, {:.3}% of all reads (rule: {})",
            self.label, self.taxon, self.tax_id, self.reads, self.percent, self.rule
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mgds_api::TaxonRow;

    fn results(n_reads: u64, rows: &[(&str, &str, u64)]) -> ClassificationResults {
        ClassificationResults {
            n_reads,
            host_tax_ids: Vec::new(),
            median_read_length: None,
            qc: None,
            table: rows
                .iter()
                .map(|(id, name, reads)| TaxonRow {
                    tax_id: (*id).into(),
                    name: (*name).into(),
                    rank: "species".into(),
                    parent_tax_id: None,
                    readcount: *reads,
                    readcount_w_children: *reads,
                    abundance: None,
                    abundance_w_children: None,
                    filtered_readcount: None,
                    filtered_readcount_w_children: None,
                    reestimated_abundance: None,
                    bases_abundance: None,
                })
                .collect(),
        }
    }

    #[test]
    fn rules_parse_and_explain_what_is_wrong() {
        let r: AlertRule = "Salmonella enterica >= 0.1%".parse().unwrap();
        assert_eq!(r, AlertRule { taxon: "Salmonella enterica".into(), threshold: Threshold::Percent(0.1) });
        assert_eq!(r.to_string(), "Salmonella enterica >= 0.1%");
        let r: AlertRule = "590>=50 reads".parse().unwrap();
        assert_eq!(r.threshold, Threshold::Reads(50));
        assert_eq!(r.to_string().parse::<AlertRule>().unwrap(), r);
        for (bad, says) in [
            ("Salmonella 0.1%", "no `>=`"),
            (">= 5 reads", "no taxon"),
            ("Listeria >= 5", "reads or percent"),
            ("Listeria >= lots%", "not a percentage"),
            ("Listeria >= 150%", "at most 100"),
            ("Listeria >= 0 reads", "at least 1"),
        ] {
            let e = bad.parse::<AlertRule>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_rule_is_crossed_by_the_clade_share_of_all_reads() {
        let t = Taxa::from_results(&results(
            10_000,
            &[("28901", "Salmonella enterica", 12), ("562", "Escherichia coli", 900)],
        ));
        let rules: Vec<AlertRule> = ["salmonella ENTERICA >= 0.1%", "562 >= 1000 reads", "1280 >= 1 read"]
            .iter()
            .map(|r| r.parse().unwrap())
            .collect();
        let hits = t.crossings(&rules);
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(hits[0].taxon.name, "Salmonella enterica");
        assert!((hits[0].percent - 0.12).abs() < 1e-9);
        // Summed over batches, E. coli passes 1000 reads.
        let more = Taxa::from_results(&results(5_000, &[("562", "Escherichia coli", 200)]));
        let sum = Taxa::sum([&t, &more]);
        assert_eq!(sum.total, 15_000);
        assert_eq!(sum.taxa[0].reads, 1100);
        let hits = sum.crossings(&rules);
        assert_eq!(hits.iter().map(|h| h.taxon.tax_id.as_str()).collect::<Vec<_>>(), ["562"]);
        // 12 reads of 15,000 is 0.08 %: below the Salmonella threshold once summed.
        assert!(sum.crossings(&rules[..1]).is_empty());
    }
}
