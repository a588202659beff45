//! The results table of a classification: reads per taxon with genome-copy abundance (from
//! reads and from bases) and re-estimated abundance.

use mgds_api::{ClassificationResults, TaxonRow};

use crate::abundance;
use crate::database::Database;
use crate::error::Error;
use crate::options::ClassifyOptions;
use crate::report::KrakenReport;
use mgds_formats::LengthHistogram;

/// The k-mer distribution for reads of about `mean` bases: a stored one within 5% of it, else
/// one computed for the rounded mean from the k-mer profile, else the stored one nearest to it
/// (as Bracken users take the nearest length built).
pub(crate) fn distribution_for(
    db: &Database,
    mean: f64,
) -> Result<Option<std::sync::Arc<abundance::KmerDistribution>>, Error> {
    if mean < db.k() as f64 {
        return Ok(None);
    }
    let distance = |r: u32| (r as f64 - mean).abs();
    let nearest = db.distribution_read_lengths().into_iter().min_by(|&a, &b| distance(a).total_cmp(&distance(b)));
    if let Some(r) = nearest.filter(|&r| distance(r) <= 0.05 * mean) {
        return db.kmer_distribution(r);
    }
    match db.kmer_distribution(mean.round() as u32)? {
        Some(d) => Ok(Some(d)),
        None => nearest.map_or(Ok(None), |r| db.kmer_distribution(r)),
    }
}

/// What a classification counted, for its results table.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    /// Passing reads (each mate of a pair) placed at each taxon, by flat index.
    pub readcount: Vec<u64>,
    /// Their bases.
    pub bases: Vec<u64>,
    /// Reads (records) in the sample.
    pub n_reads: u64,
    /// The lengths of all of them.
    pub lengths: LengthHistogram,
}

/// Sums per-taxon figures up the tree: each taxon gets its own and its descendants'.
fn with_descendants(taxonomy: &crate::taxonomy::Taxonomy, own: &[u64]) -> Vec<u64> {
    let mut with_children = own.to_vec();
    for i in (1..taxonomy.len()).rev() {
        let p = taxonomy.parent(i as u32).expect("not the root") as usize;
        with_children[p] += with_children[i];
    }
    with_children
}

/// The results table from what a classification counted.
pub(crate) fn results_table(
    db: &Database,
    counts: &Counts,
    report: &KrakenReport,
    dist: Option<&abundance::KmerDistribution>,
    opts: &ClassifyOptions,
) -> ClassificationResults {
    let (readcount, n_reads) = (&counts.readcount, counts.n_reads);
    let taxonomy = db.taxonomy();
    let with_children = with_descendants(taxonomy, readcount);
    let bases_with_children = with_descendants(taxonomy, &counts.bases);
    let present: Vec<u32> = (0..taxonomy.len() as u32).filter(|&i| with_children[i as usize] > 0).collect();
    let is_species = |i: u32| taxonomy.rank(i) == "species";
    // Genome-copy abundance needs every species' genome length; an unknown one would make the
    // others' shares wrong, so then there is none.
    let known = present.iter().filter(|&&i| is_species(i)).all(|&i| db.genome_len(i) > 0);
    let density = |i: u32| with_children[i as usize] as f64 / db.genome_len(i) as f64;
    let total: f64 = if known { present.iter().filter(|&&i| is_species(i)).map(|&i| density(i)).sum() } else { 0.0 };
    // Genome-copy abundance of each species, summed up the tree: a genus's share is that of its
    // species, the root's is 1 (the real service's `abundance_w_children`).
    let mut abundance = vec![None::<f64>; taxonomy.len()];
    if total > 0.0 {
        for &i in present.iter().filter(|&&i| is_species(i)) {
            abundance[i as usize] = Some(density(i) / total);
        }
    }
    // The same counted in bases: sequencing depth over each genome, which reads of different
    // lengths (long reads) do not skew.
    let depth = |i: u32| bases_with_children[i as usize] as f64 / db.genome_len(i) as f64;
    let total_depth: f64 =
        if known { present.iter().filter(|&&i| is_species(i)).map(|&i| depth(i)).sum() } else { 0.0 };
    let mut bases_abundance = vec![None::<f64>; taxonomy.len()];
    if total_depth > 0.0 {
        for &i in present.iter().filter(|&&i| is_species(i)) {
            bases_abundance[i as usize] = Some(depth(i) / total_depth);
        }
    }
    // Parents come before children: whether a taxon sits below a species (a strain).
    let mut below_species = vec![false; taxonomy.len()];
    for i in 1..taxonomy.len() {
        let p = taxonomy.parent(i as u32).expect("not the root");
        below_species[i] = is_species(p) || below_species[p as usize];
    }
    let mut abundance_w_children = abundance.clone();
    for i in (1..taxonomy.len()).rev() {
        let p = taxonomy.parent(i as u32).expect("not the root") as usize;
        if let Some(a) = abundance_w_children[i].filter(|_| !below_species[i]) {
            *abundance_w_children[p].get_or_insert(0.0) += a;
        }
    }
    let mut reestimated = vec![None; taxonomy.len()];
    if let Some(dist) = dist {
        let codes = taxonomy.rank_codes();
        for level in [b'S', b'G'] {
            let est = abundance::reestimate(taxonomy, &codes, report.direct(), dist, level, opts.reestimate_threshold);
            let sum: f64 = est.iter().map(|e| e.1).sum();
            if sum > 0.0 {
                for (i, e) in est {
                    reestimated[i as usize] = Some(e / sum);
                }
            }
        }
    }
    let mut table: Vec<TaxonRow> = present
        .iter()
        .map(|&i| TaxonRow {
            tax_id: taxonomy.tax_id(i).to_string(),
            name: taxonomy.name(i).to_owned(),
            rank: taxonomy.rank(i).to_owned(),
            parent_tax_id: taxonomy.parent(i).map(|p| taxonomy.tax_id(p).to_string()),
            readcount: readcount[i as usize],
            readcount_w_children: with_children[i as usize],
            abundance: abundance[i as usize],
            // A sum of shares that add up to 1 can land a rounding step above it.
            abundance_w_children: abundance_w_children[i as usize].map(|a| a.min(1.0)),
            filtered_readcount: None,
            filtered_readcount_w_children: None,
            reestimated_abundance: reestimated[i as usize],
            bases_abundance: bases_abundance[i as usize],
        })
        .collect();
    table.sort_by(|a, b| {
        b.readcount_w_children.cmp(&a.readcount_w_children).then_with(|| tax_key(&a.tax_id).cmp(&tax_key(&b.tax_id)))
    });
    ClassificationResults {
        table,
        n_reads,
        host_tax_ids: Vec::new(),
        median_read_length: counts.lengths.median(),
        qc: None,
    }
}

fn tax_key(id: &str) -> u64 {
    id.parse().unwrap_or(u64::MAX)
}
