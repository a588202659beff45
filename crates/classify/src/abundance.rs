//! Abundance re-estimation (Bracken; Lu et al. 2017, PeerJ Comput Sci 3:e104).
//!
//! Reads that share k-mers with several species are placed at their common ancestor; how many
//! of a species' reads end up above it depends on how much of its genome it shares. For each
//! reference genome `g` the database knows `P(j|g)`, the share of `g`'s reads (every read of a
//! given length along its sequences) that classification places at taxon `j`: the *k-mer
//! distribution*. A sample's reads at `j` are then shared out to the species below it in
//! proportion to `P(j|g) * A_g`, where `A_g = direct(g) / P(g|g)` estimates `g`'s reads from
//! those it kept for itself.
//!
//! The distribution is computed from a *k-mer profile* of the references: the taxon of every
//! k-mer of every reference sequence (run-length encoded), written once when the database is
//! built. A distribution for any read length is computed from it on demand and stored beside
//! the database, in Bracken's own `database<R>mers.kmer_distrib` format (so Bracken reads ours
//! and we read Bracken's).

use std::collections::HashMap;

use mgds_formats::TaxId;

pub use crate::distribution::KmerDistribution;
use crate::report::KrakenReport;
use crate::taxonomy::Taxonomy;

/// The rank abundance is re-estimated at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Species (Bracken's `-l S`).
    Species,
    /// Genera (Bracken's `-l G`).
    Genus,
}

/// Re-estimates the reads of every species (or genus) with at least `threshold` reads in its
/// clade from a report's counts and a k-mer distribution, as Bracken does; returns `(tax id,
/// estimated reads)` in taxonomy order.
pub fn reestimate_reads(
    taxonomy: &Taxonomy,
    report: &KrakenReport,
    dist: &KmerDistribution,
    level: Level,
    threshold: u64,
) -> Vec<(TaxId, f64)> {
    let code = match level {
        Level::Species => b'S',
        Level::Genus => b'G',
    };
    reestimate(taxonomy, &taxonomy.rank_codes(), report.direct(), dist, code, threshold)
        .into_iter()
        .map(|(i, r)| (taxonomy.tax_id(i), r))
        .collect()
}

/// Re-estimates the reads of each taxon at `level` (`b'S'` species, `b'G'` genus) from the
/// fragments called at each taxon (`direct`, flat indexes) and the k-mer distribution, as
/// Bracken's `est_abundance.py` does. Returns `(flat index, estimated reads)` for every taxon
/// of that level with at least `threshold` reads in its clade; reads of taxa below the
/// threshold, and reads above the level that no kept genome explains, are left out.
pub(crate) fn reestimate(
    taxonomy: &Taxonomy,
    codes: &[String],
    direct: &[u64],
    dist: &KmerDistribution,
    level: u8,
    threshold: u64,
) -> Vec<(u32, f64)> {
    let n = taxonomy.len();
    let parents = taxonomy.parents_slice();
    let mut clade = direct.to_vec();
    for i in (1..n).rev() {
        clade[parents[i] as usize] += clade[i];
    }
    let at_level = |i: usize| codes[i].as_bytes() == [level];
    // The kept taxon each node belongs to (itself or an ancestor at the level), and whether a
    // node is at or below any node of the level (such nodes are never shared out from).
    let mut owner: Vec<Option<u32>> = vec![None; n];
    let mut below = vec![false; n];
    for i in 0..n {
        let p = parents[i] as usize;
        let inherited = i > 0 && below[p];
        if at_level(i) {
            below[i] = true;
            owner[i] = (clade[i] >= threshold && clade[i] > 0).then_some(i as u32);
        } else if inherited {
            below[i] = true;
            owner[i] = owner[p];
        }
    }
    let mut added = vec![0f64; n];
    // Nodes above the level with reads of their own: share those reads out.
    for j in 0..n {
        if below[j] || direct[j] == 0 {
            continue;
        }
        let jid = taxonomy.tax_id(j as u32);
        let mut cands: Vec<(usize, f64, f64)> = Vec::new();
        for (gid, nj, total) in dist.line(jid) {
            let Some(g) = taxonomy.index_of(gid) else { continue };
            let g = g as usize;
            if clade[g] == 0 || owner[g].is_none() || total == 0 {
                continue;
            }
            let p_jg = nj as f64 / total as f64;
            let p_gg = dist.probability(gid, gid).unwrap_or(1.0);
            let a_g = direct[g] as f64 / p_gg;
            cands.push((g, p_jg, a_g));
        }
        let sum_a: f64 = cands.iter().map(|c| c.2).sum();
        let denom: f64 = cands.iter().map(|c| c.1 * c.2).sum();
        if sum_a <= 0.0 || denom <= 0.0 {
            continue;
        }
        for (g, p_jg, a_g) in cands {
            added[g] += p_jg * a_g / denom * direct[j] as f64;
        }
    }
    let mut out: Vec<(u32, f64)> =
        (0..n).filter(|&i| at_level(i) && owner[i].is_some()).map(|i| (i as u32, clade[i] as f64)).collect();
    let slot: HashMap<u32, usize> = out.iter().enumerate().map(|(k, &(i, _))| (i, k)).collect();
    for (g, a) in added.iter().enumerate() {
        if *a > 0.0
            && let Some(s) = owner[g]
        {
            out[slot[&s]].1 += a;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::taxonomy::tests::small;

    #[test]
    fn genus_reads_are_shared_out_by_the_distribution() {
        // Two Escherichia species: E. coli keeps 80% of its reads and leaves 20% at the genus;
        // E. fergusonii keeps 50% and leaves 50%.
        let t = small();
        let idx = |id| t.index_of(id).unwrap() as usize;
        let mut lines: BTreeMap<TaxId, BTreeMap<TaxId, (u64, u64)>> = BTreeMap::new();
        lines.entry(562).or_default().insert(562, (80, 100));
        lines.entry(561).or_default().insert(562, (20, 100));
        lines.entry(564).or_default().insert(564, (50, 100));
        lines.entry(561).or_default().insert(564, (50, 100));
        let d = KmerDistribution { read_length: 100, lines };
        // A sample of 1000 E. coli reads and 1000 E. fergusonii reads, as classification places
        // them.
        let mut direct = vec![0u64; t.len()];
        direct[idx(562)] = 800;
        direct[idx(564)] = 500;
        direct[idx(561)] = 700;
        let codes = t.rank_codes();
        let est: HashMap<u32, f64> = reestimate(&t, &codes, &direct, &d, b'S', 10).into_iter().collect();
        assert!((est[&(idx(562) as u32)] - 1000.0).abs() < 1e-9, "{est:?}");
        assert!((est[&(idx(564) as u32)] - 1000.0).abs() < 1e-9, "{est:?}");
        // Below the threshold, a species is dropped and gets nothing.
        direct[idx(564)] = 5;
        let est = reestimate(&t, &codes, &direct, &d, b'S', 10);
        assert_eq!(est.len(), 1);
        // At genus level the genus keeps everything in its clade.
        let est = reestimate(&t, &codes, &direct, &d, b'G', 10);
        assert_eq!(est, vec![(idx(561) as u32, 1505.0)]);
    }
}
