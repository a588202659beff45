//! Beta diversity: how different two samples are, for every pair of samples.

use serde::{Deserialize, Serialize};

use crate::tree::Tree;
use crate::{Error, Taxonomy};

/// A beta diversity measure (a distance between two samples).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BetaMetric {
    /// Bray–Curtis dissimilarity of the samples' shares.
    BrayCurtis,
    /// Jaccard distance of the taxa present.
    Jaccard,
    /// Weighted UniFrac over the taxonomy, normalised to 0–1.
    WeightedUnifrac,
    /// Unweighted UniFrac over the taxonomy.
    UnweightedUnifrac,
    /// Aitchison distance: Euclidean distance of the centred log-ratios.
    Aitchison,
}

impl BetaMetric {
    /// Every measure, in the order shown.
    pub const ALL: [BetaMetric; 5] = [
        BetaMetric::BrayCurtis,
        BetaMetric::Jaccard,
        BetaMetric::WeightedUnifrac,
        BetaMetric::UnweightedUnifrac,
        BetaMetric::Aitchison,
    ];

    /// The name in options, CSV headers and JSON (as the `onecodex` library names it).
    pub fn key(self) -> &'static str {
        match self {
            BetaMetric::BrayCurtis => "braycurtis",
            BetaMetric::Jaccard => "jaccard",
            BetaMetric::WeightedUnifrac => "weighted_unifrac",
            BetaMetric::UnweightedUnifrac => "unweighted_unifrac",
            BetaMetric::Aitchison => "aitchison",
        }
    }

    /// The measure named `key` (also `bray_curtis`).
    pub fn from_key(key: &str) -> Option<BetaMetric> {
        if key == "bray_curtis" {
            return Some(BetaMetric::BrayCurtis);
        }
        BetaMetric::ALL.into_iter().find(|m| m.key() == key)
    }

    /// A label for a chart.
    pub fn label(self) -> &'static str {
        match self {
            BetaMetric::BrayCurtis => "Bray–Curtis",
            BetaMetric::Jaccard => "Jaccard",
            BetaMetric::WeightedUnifrac => "Weighted UniFrac",
            BetaMetric::UnweightedUnifrac => "Unweighted UniFrac",
            BetaMetric::Aitchison => "Aitchison",
        }
    }

    /// How it is computed, in a sentence.
    pub fn explanation(self) -> &'static str {
        match self {
            BetaMetric::BrayCurtis => {
                "Σ|a − b| / Σ(a + b) over the taxa, on each sample's shares (two samples with nothing at the rank: 0)"
            }
            BetaMetric::Jaccard => "the share of the taxa present in either sample that are present in only one",
            BetaMetric::WeightedUnifrac => {
                "the differences in share of every branch of the taxonomy (each of length 1, from each taxon up to the root), over the shares' mean depth: 0 to 1"
            }
            BetaMetric::UnweightedUnifrac => {
                "the branches of the taxonomy (each of length 1) under taxa of only one sample, over the branches under taxa of either"
            }
            BetaMetric::Aitchison => {
                "the Euclidean distance of the centred log-ratios of the shares, zeros replaced by 1/D² (D the taxa present in any sample) and the other shares scaled to keep the sum"
            }
        }
    }
}

/// Distances between samples: symmetric, zero on the diagonal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DistanceMatrix {
    /// The samples, in order.
    pub ids: Vec<String>,
    /// `d[i][j]`.
    pub d: Vec<Vec<f64>>,
}

impl DistanceMatrix {
    /// The samples.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    fn from_pairs(ids: &[String], mut f: impl FnMut(usize, usize) -> f64) -> DistanceMatrix {
        let n = ids.len();
        let mut d = vec![vec![0.0; n]; n];
        for (i, row) in d.iter_mut().enumerate() {
            for (j, cell) in row.iter_mut().enumerate().skip(i + 1) {
                *cell = f(i, j);
            }
        }
        // The lower triangle mirrors the upper.
        for i in 1..n {
            let (above, below) = d.split_at_mut(i);
            for (j, row) in above.iter().enumerate() {
                below[0][j] = row[i];
            }
        }
        DistanceMatrix { ids: ids.to_vec(), d }
    }
}

/// Checks a table: one row per sample, one value per taxon, each 0 or more.
pub(crate) fn check(ids: &[String], taxa: &[String], rows: &[Vec<f64>]) -> Result<(), Error> {
    if ids.len() != rows.len() {
        return Err(Error::Samples { samples: ids.len(), rows: rows.len() });
    }
    for (i, row) in rows.iter().enumerate() {
        if row.len() != taxa.len() {
            return Err(Error::Ragged { row: i, got: row.len(), expected: taxa.len() });
        }
        if let Some((j, &value)) = row.iter().enumerate().find(|(_, v)| !(**v >= 0.0 && v.is_finite())) {
            let sample = ids.get(i).cloned().unwrap_or_else(|| format!("row {i}"));
            return Err(Error::BadValue { sample, taxon: taxa[j].clone(), value });
        }
    }
    Ok(())
}

/// Each row as shares of its total (a row with nothing stays all zero).
fn shares(rows: &[Vec<f64>]) -> Vec<Vec<f64>> {
    rows.iter()
        .map(|r| {
            let total: f64 = r.iter().sum();
            if total > 0.0 { r.iter().map(|v| v / total).collect() } else { r.clone() }
        })
        .collect()
}

/// The distance between every pair of samples. `rows[s][t]` is sample `ids[s]`'s value for
/// taxon `taxa[t]` (read counts or any measure): each row is made shares of its total first, as
/// the `onecodex` library does, so the figures do not depend on the depth of sequencing. UniFrac
/// needs the `taxonomy` the taxa come from.
pub fn beta(
    metric: BetaMetric,
    ids: &[String],
    taxa: &[String],
    rows: &[Vec<f64>],
    taxonomy: Option<&Taxonomy>,
) -> Result<DistanceMatrix, Error> {
    check(ids, taxa, rows)?;
    let p = shares(rows);
    Ok(match metric {
        BetaMetric::BrayCurtis => DistanceMatrix::from_pairs(ids, |i, j| {
            let (mut diff, mut sum) = (0.0, 0.0);
            for (a, b) in p[i].iter().zip(&p[j]) {
                diff += (a - b).abs();
                sum += (a + b).abs();
            }
            if sum == 0.0 { 0.0 } else { diff / sum }
        }),
        BetaMetric::Jaccard => DistanceMatrix::from_pairs(ids, |i, j| {
            let (mut either, mut one) = (0u64, 0u64);
            for (a, b) in p[i].iter().zip(&p[j]) {
                let (a, b) = (*a > 0.0, *b > 0.0);
                either += u64::from(a || b);
                one += u64::from(a != b);
            }
            if either == 0 { 0.0 } else { one as f64 / either as f64 }
        }),
        BetaMetric::Aitchison => aitchison(ids, &p)?,
        BetaMetric::WeightedUnifrac | BetaMetric::UnweightedUnifrac => {
            let taxonomy = taxonomy.ok_or(Error::NoTaxonomy)?;
            unifrac(metric == BetaMetric::WeightedUnifrac, ids, taxa, &p, taxonomy)?
        }
    })
}

/// Aitchison's distance, as the `onecodex` library computes it: over the taxa present in some
/// sample (D of them), zeros replaced by δ = 1/D² and the other shares multiplied by
/// 1 − (zeros)·δ; centred log-ratios; Euclidean distances in the Gram form
/// (|x|² − 2x·y + |y|², as scikit-learn computes them).
fn aitchison(ids: &[String], p: &[Vec<f64>]) -> Result<DistanceMatrix, Error> {
    if let Some(i) = p.iter().position(|r| r.iter().all(|v| *v == 0.0)) {
        return Err(Error::EmptyForAitchison(ids[i].clone()));
    }
    let columns: Vec<usize> = (0..p.first().map_or(0, Vec::len)).filter(|&t| p.iter().any(|r| r[t] > 0.0)).collect();
    let d = columns.len() as f64;
    let delta = (1.0 / d).powi(2);
    let clr: Vec<Vec<f64>> = p
        .iter()
        .map(|r| {
            let zeros = columns.iter().filter(|&&t| r[t] == 0.0).count() as f64;
            let logs: Vec<f64> = columns
                .iter()
                .map(|&t| if r[t] == 0.0 { delta.ln() } else { ((1.0 - zeros * delta) * r[t]).ln() })
                .collect();
            let mean = logs.iter().sum::<f64>() / d;
            logs.into_iter().map(|l| l - mean).collect()
        })
        .collect();
    let norms: Vec<f64> = clr.iter().map(|c| c.iter().map(|x| x * x).sum()).collect();
    Ok(DistanceMatrix::from_pairs(ids, |i, j| {
        let dot: f64 = clr[i].iter().zip(&clr[j]).map(|(a, b)| a * b).sum();
        (norms[i] - 2.0 * dot + norms[j]).max(0.0).sqrt()
    }))
}

/// UniFrac over the taxonomy ([`crate::tree`]), as scikit-bio computes it for the `onecodex`
/// library: shares become whole counts at a resolution of 1e-10 (`onecodex` multiplies them by
/// 1e10 and scikit-bio truncates), each node counts the taxa below it. Unweighted: the nodes
/// under only one sample over the nodes under either. Weighted, normalised: Σ over nodes of the
/// difference in share, over Σ over tips of the tip's depth times the two shares.
fn unifrac(
    weighted: bool,
    ids: &[String],
    taxa: &[String],
    p: &[Vec<f64>],
    taxonomy: &Taxonomy,
) -> Result<DistanceMatrix, Error> {
    let tree = Tree::new(taxonomy, taxa)?;
    let nodes = tree.nodes();
    // Counts per node for each sample.
    let counts: Vec<Vec<f64>> = p
        .iter()
        .map(|r| {
            let mut c = vec![0.0; nodes];
            for (t, path) in tree.paths.iter().enumerate() {
                let k = (r[t] * 1e10).trunc();
                if k > 0.0 {
                    for &v in path {
                        c[v] += k;
                    }
                }
            }
            c
        })
        .collect();
    let totals: Vec<f64> =
        counts.iter().map(|c| (0..nodes).filter(|&v| tree.tip[v]).map(|v| c[v]).sum::<f64>()).collect();
    Ok(DistanceMatrix::from_pairs(ids, |i, j| {
        let (a, b) = (&counts[i], &counts[j]);
        if !weighted {
            let (mut either, mut one) = (0u64, 0u64);
            for v in 0..nodes {
                let (x, y) = (a[v] > 0.0, b[v] > 0.0);
                either += u64::from(x || y);
                one += u64::from(x != y);
            }
            return if either == 0 { 0.0 } else { one as f64 / either as f64 };
        }
        let (ta, tb) = (totals[i], totals[j]);
        if ta == 0.0 && tb == 0.0 {
            return 0.0;
        }
        let share = |c: f64, t: f64| if t > 0.0 { c / t } else { c };
        let (mut num, mut den) = (0.0, 0.0);
        for v in 0..nodes {
            let (x, y) = (share(a[v], ta), share(b[v], tb));
            num += (x - y).abs();
            if tree.tip[v] {
                den += tree.depth[v] * (x + y);
            }
        }
        if den == 0.0 { 0.0 } else { num / den }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("s{i}")).collect()
    }

    #[test]
    fn bray_curtis_and_jaccard_of_simple_samples() {
        let taxa: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let rows = vec![vec![10.0, 10.0, 0.0], vec![5.0, 5.0, 0.0], vec![0.0, 0.0, 3.0], vec![0.0, 0.0, 0.0]];
        let bc = beta(BetaMetric::BrayCurtis, &ids(4), &taxa, &rows, None).unwrap();
        assert_eq!(bc.d[0][1], 0.0, "depth does not matter: shares are compared");
        assert_eq!(bc.d[0][2], 1.0);
        assert_eq!(bc.d[2][3], 1.0);
        let j = beta(BetaMetric::Jaccard, &ids(4), &taxa, &rows, None).unwrap();
        assert_eq!(j.d[0][2], 1.0);
        assert_eq!(j.d[2][3], 1.0);
        // Two samples with nothing: 0 apart, as the onecodex library has it.
        let empty = vec![vec![0.0; 3], vec![0.0; 3]];
        assert_eq!(beta(BetaMetric::BrayCurtis, &ids(2), &taxa, &empty, None).unwrap().d[0][1], 0.0);
        assert_eq!(beta(BetaMetric::Jaccard, &ids(2), &taxa, &empty, None).unwrap().d[0][1], 0.0);
    }

    #[test]
    fn aitchison_refuses_an_empty_sample_by_name() {
        let taxa: Vec<String> = ["a", "b"].map(String::from).to_vec();
        let rows = vec![vec![1.0, 2.0], vec![0.0, 0.0]];
        assert_eq!(
            beta(BetaMetric::Aitchison, &ids(2), &taxa, &rows, None),
            Err(Error::EmptyForAitchison("s1".into()))
        );
        let ok = beta(BetaMetric::Aitchison, &ids(2), &taxa, &[vec![1.0, 2.0], vec![2.0, 1.0]], None).unwrap();
        // clr of (1/3, 2/3) is ±ln2/2: the two samples are √2·ln 2 apart.
        assert!((ok.d[0][1] - 2f64.sqrt() * 2f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn unifrac_counts_shared_branches() {
        let mut t = Taxonomy::new();
        for (c, p) in [("1", None), ("2", Some("1")), ("10", Some("2")), ("11", Some("2")), ("20", Some("1"))] {
            t.add(c, p);
        }
        let taxa: Vec<String> = ["10", "11", "20"].map(String::from).to_vec();
        let rows = vec![vec![1.0, 0.0, 0.0], vec![0.0, 1.0, 0.0], vec![0.0, 0.0, 1.0]];
        let u = beta(BetaMetric::UnweightedUnifrac, &ids(3), &taxa, &rows, Some(&t)).unwrap();
        // {10, 2, 1} against {11, 2, 1}: 2 of 4 nodes differ.
        assert_eq!(u.d[0][1], 0.5);
        // {10, 2, 1} against {20, 1}: 3 of 4.
        assert_eq!(u.d[0][2], 0.75);
        let w = beta(BetaMetric::WeightedUnifrac, &ids(3), &taxa, &rows, Some(&t)).unwrap();
        // Nodes 10 and 11 differ by 1 each; depth 3 + 3.
        assert!((w.d[0][1] - 2.0 / 6.0).abs() < 1e-15);
    }
}
