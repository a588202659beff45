//! Functional profiles: reads aligned to a gene catalogue and counted per function.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::catalogue::Catalogue;
use crate::error::Error;
use crate::mapper;
use crate::seqfile::SeqFile;

/// How to build a functional profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileOptions {
    /// Worker threads for mapping (0 counts as 1).
    pub threads: usize,
    /// Longest read accepted, in bases; a longer one fails the run with an error naming it.
    pub max_record: usize,
}

impl Default for ProfileOptions {
    fn default() -> Self {
        ProfileOptions { threads: 1, max_record: usize::MAX }
    }
}

/// The functional profile of one sample: the results body of a functional profile analysis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionalProfile {
    /// [`Catalogue::digest`] of the catalogue the reads were aligned to.
    pub catalogue_digest: String,
    /// Reads in the reads file.
    pub n_reads: u64,
    /// Reads with a primary alignment to a gene of the catalogue.
    pub n_mapped_reads: u64,
    /// Mapped reads whose gene carries at least one function.
    pub n_assigned_reads: u64,
    /// One row per function with at least one read, by `read_count` (most first), then
    /// `function_id`.
    pub functions: Vec<FunctionAbundance>,
}

/// One function's abundance in a sample.
///
/// A read is assigned to the gene of its primary alignment and counts once for each function
/// that gene carries, so the rows' read counts can add up to more than the mapped reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionAbundance {
    /// The function's identifier, from the catalogue.
    pub function_id: String,
    /// The function's name, from the catalogue.
    pub name: String,
    /// Reads assigned to the function.
    pub read_count: u64,
    /// Reads per kilobase: for each gene carrying the function, its reads divided by its
    /// length in kilobases, summed over those genes (as HUMAnN sums gene families). For a
    /// function on one gene this is `read_count / (gene length / 1000)`.
    pub rpk: f64,
    /// Counts per million: `read_count * 1e6 / n_mapped_reads` (reads mapped to the catalogue,
    /// not all reads, so samples with more host or unknown DNA stay comparable); 0 when no read
    /// mapped.
    pub cpm: f64,
}

/// Aligns `reads` (FASTQ or FASTA, plain or gzip; read as single-end) to the genes of
/// `catalogue` with minimap2's short-read preset and counts the reads per function.
pub fn profile(catalogue: &Catalogue, reads: &Path, opts: &ProfileOptions) -> Result<FunctionalProfile, Error> {
    let mapper = catalogue.mapper()?;
    let pool = mapper::pool(opts.threads)?;
    let mut gene_reads = vec![0u64; catalogue.n_genes()];
    let mut file = SeqFile::open_limited(reads, opts.max_record)?;
    let mut record = mgds_formats::Record::default();
    let mut batch = Vec::new();
    let mut n_reads = 0u64;
    while mapper::next_batch(&mut file, &mut record, &mut batch, false)? {
        n_reads += batch.len() as u64;
        for hits in mapper.map_batch(&pool, &batch) {
            let gene = hits.iter().find(|h| h.is_primary).and_then(|h| usize::try_from(h.target_id).ok());
            if let Some(gene) = gene {
                gene_reads[gene] += 1;
            }
        }
    }
    Ok(tally(catalogue, &gene_reads, n_reads))
}

/// The profile from reads counted per gene (index in the catalogue's gene order).
pub(crate) fn tally(catalogue: &Catalogue, gene_reads: &[u64], n_reads: u64) -> FunctionalProfile {
    let functions = catalogue.functions();
    let mut counts = vec![0u64; functions.len()];
    let mut rpk = vec![0f64; functions.len()];
    let mut n_mapped = 0;
    let mut n_assigned = 0;
    for (gene, &reads) in gene_reads.iter().enumerate() {
        if reads == 0 {
            continue;
        }
        n_mapped += reads;
        let fs = catalogue.gene_functions(gene);
        if !fs.is_empty() {
            n_assigned += reads;
        }
        let kb = catalogue.gene_len(gene) as f64 / 1000.0;
        for &f in fs {
            counts[f] += reads;
            rpk[f] += reads as f64 / kb;
        }
    }
    let mut rows: Vec<FunctionAbundance> = functions
        .iter()
        .zip(counts.iter().zip(&rpk))
        .filter(|(_, (count, _))| **count > 0)
        .map(|(f, (&count, &rpk))| FunctionAbundance {
            function_id: f.id.clone(),
            name: f.name.clone(),
            read_count: count,
            rpk,
            cpm: crate::ratio(count, n_mapped) * 1e6,
        })
        .collect();
    rows.sort_by(|a, b| b.read_count.cmp(&a.read_count).then_with(|| a.function_id.cmp(&b.function_id)));
    FunctionalProfile {
        catalogue_digest: catalogue.digest().to_owned(),
        n_reads,
        n_mapped_reads: n_mapped,
        n_assigned_reads: n_assigned,
        functions: rows,
    }
}

impl FunctionalProfile {
    /// The profile as a tab-separated table for download: a header line
    /// `function_id  name  read_count  rpk  cpm`, then one line per function in the profile's
    /// order, `rpk` and `cpm` with 4 decimals. Tabs and line breaks in names become spaces.
    pub fn to_tsv(&self) -> String {
        let mut out = String::from("function_id\tname\tread_count\trpk\tcpm\n");
        for f in &self.functions {
            let _ = writeln!(
                out,
                "{}\t{}\t{}\t{:.4}\t{:.4}",
                clean(&f.function_id),
                clean(&f.name),
                f.read_count,
                f.rpk,
                f.cpm
            );
        }
        out
    }

    /// The profile in the shape of API v1's `GET /functional_profiles/{id}/results` body
    /// (`{"table": {"functional_groups": [...], "pathways": []}}`), with no per-taxon rows.
    pub fn to_results_table(&self) -> ResultsTable {
        ResultsTable {
            table: Table {
                functional_groups: self
                    .functions
                    .iter()
                    .map(|f| FunctionalGroup {
                        id: f.function_id.clone(),
                        name: Some(f.name.clone()),
                        group: function_group(&f.function_id).to_owned(),
                        rpk: f.rpk,
                        cpm: f.cpm,
                        tax_id: None,
                        tax_name: None,
                    })
                    .collect(),
                pathways: Vec::new(),
            },
        }
    }
}

/// API v1's functional profile results body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultsTable {
    /// The table.
    pub table: Table,
}

/// The table of [`ResultsTable`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// One row per function.
    pub functional_groups: Vec<FunctionalGroup>,
    /// Pathway abundances (always empty: pathways are not computed).
    pub pathways: Vec<serde_json::Value>,
}

/// One function in API v1's results table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionalGroup {
    /// The function's identifier.
    pub id: String,
    /// The function's name.
    pub name: Option<String>,
    /// The kind of identifier, from its form (see [`function_group`]).
    pub group: String,
    /// Reads per kilobase.
    pub rpk: f64,
    /// Counts per million mapped reads.
    pub cpm: f64,
    /// Taxon the row is stratified by (always `null`: rows are not stratified).
    pub tax_id: Option<String>,
    /// Name of that taxon (always `null`).
    pub tax_name: Option<String>,
}

/// The kind of a function identifier, from its form: `ko` (`K` and 5 digits), `ec` (`EC:`
/// or four dotted numbers), `go` (`GO:`), `pfam` (`PF` and 5 digits), `eggnog` (`COG`, `ENOG`),
/// otherwise `function`.
pub fn function_group(id: &str) -> &'static str {
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let dotted = |s: &str| {
        let parts: Vec<&str> = s.split('.').collect();
        parts.len() == 4
            && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    };
    if id.strip_prefix('K').is_some_and(|d| digits(d, 5)) {
        "ko"
    } else if id.starts_with("EC:") || dotted(id) {
        "ec"
    } else if id.starts_with("GO:") {
        "go"
    } else if id.strip_prefix("PF").is_some_and(|d| digits(d, 5)) {
        "pfam"
    } else if id.starts_with("COG") || id.starts_with("ENOG") {
        "eggnog"
    } else {
        "function"
    }
}

fn clean(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalogue() -> (tempfile::TempDir, Catalogue) {
        let dir = tempfile::tempdir().unwrap();
        let a = "A".repeat(1000);
        let b = "C".repeat(2000);
        let c = "G".repeat(500);
        std::fs::write(dir.path().join("genes.fa"), format!(">gA\n{a}\n>gB\n{b}\n>gC\n{c}\n")).unwrap();
        std::fs::write(dir.path().join("annotations.tsv"), "gA\tK00001\tone\ngB\tK00001\tone\ngB\tK00002\ttwo\n")
            .unwrap();
        let cat = Catalogue::load(dir.path()).unwrap();
        (dir, cat)
    }

    // gA (1 kb, K1): 10 reads; gB (2 kb, K1 and K2): 10 reads; gC (0.5 kb, no function): 5.
    // K1: 20 reads, rpk 10/1 + 10/2 = 15, cpm 20/25 * 1e6 = 800000.
    // K2: 10 reads, rpk 10/2 = 5, cpm 10/25 * 1e6 = 400000.
    #[test]
    fn rpk_and_cpm_by_hand() {
        let (_dir, cat) = catalogue();
        let p = tally(&cat, &[10, 10, 5], 40);
        assert_eq!(p.n_reads, 40);
        assert_eq!(p.n_mapped_reads, 25);
        assert_eq!(p.n_assigned_reads, 20);
        let rows: Vec<(&str, u64, f64, f64)> =
            p.functions.iter().map(|f| (f.function_id.as_str(), f.read_count, f.rpk, f.cpm)).collect();
        assert_eq!(rows, vec![("K00001", 20, 15.0, 800_000.0), ("K00002", 10, 5.0, 400_000.0)]);
        assert_eq!(
            p.to_tsv(),
            "function_id\tname\tread_count\trpk\tcpm\nK00001\tone\t20\t15.0000\t800000.0000\nK00002\ttwo\t10\t5.0000\t400000.0000\n"
        );
    }

    #[test]
    fn ties_sort_by_id_and_empty_functions_are_left_out() {
        let (_dir, cat) = catalogue();
        let p = tally(&cat, &[0, 3, 0], 3);
        let ids: Vec<&str> = p.functions.iter().map(|f| f.function_id.as_str()).collect();
        assert_eq!(ids, ["K00001", "K00002"]);
        let p = tally(&cat, &[0, 0, 0], 3);
        assert!(p.functions.is_empty());
        assert_eq!(p.n_mapped_reads, 0);
    }

    #[test]
    fn results_table_has_the_api_shape() {
        let (_dir, cat) = catalogue();
        let v = serde_json::to_value(tally(&cat, &[1, 0, 0], 1).to_results_table()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"table": {"functional_groups": [{
                "id": "K00001", "name": "one", "group": "ko", "rpk": 1.0, "cpm": 1e6,
                "tax_id": null, "tax_name": null
            }], "pathways": []}})
        );
    }

    #[test]
    fn groups_from_id_form() {
        assert_eq!(function_group("K00001"), "ko");
        assert_eq!(function_group("EC:1.1.1.1"), "ec");
        assert_eq!(function_group("2.7.7.-"), "ec");
        assert_eq!(function_group("GO:0008150"), "go");
        assert_eq!(function_group("PF00005"), "pfam");
        assert_eq!(function_group("COG0001"), "eggnog");
        assert_eq!(function_group("K1"), "function");
    }
}
