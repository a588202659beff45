//! Which reference sequences make up one genome, for genome-copy abundance (reads over genome
//! length).
//!
//! A bacterial assembly is often several FASTA records (a chromosome and plasmids, or two
//! chromosomes, or many contigs); counting each record as a genome of its own makes a species
//! look several times more abundant. Records are grouped into genomes, in this order:
//!
//! 1. an explicit genome (the third column of the sequence-to-taxon map);
//! 2. an NCBI assembly accession (`GCF_...`/`GCA_...`) at the start of the FASTA file's name
//!    (one file per assembly, as NCBI downloads are named), or the assembly whose WGS project
//!    (`wgs_master` in `assembly_summary.txt`) the record's accession belongs to;
//! 3. within one file and one taxon, the WGS project of the record's accession (draft assemblies:
//!    `AKGH01000001`, `AKGH01000002`, ... are one genome);
//! 4. within one file and one taxon, the organism and strain named in the record's description,
//!    without the part naming the replicon (`Vibrio cholerae O395 chromosome I, complete
//!    sequence` and `... chromosome II, ...` are one genome; `... plasmid pKPHS1, ...` joins its
//!    chromosome);
//! 5. otherwise all records of one taxon in one file are one genome.
//!
//! A group found by rules 3 to 5 that holds several records described as a `complete genome`
//! (not a plasmid) is that many genomes of the group's mean length: assemblies whose
//! descriptions do not name their strain.
//!
//! Where several genomes share a taxon (strains mapped to their species), a taxon's genome
//! length is the mean over its genomes, never their sum.

use std::collections::HashMap;

use mgds_formats::TaxId;
use serde::{Deserialize, Serialize};

use crate::taxonomy::Taxonomy;

/// One reference genome found in a database's references.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Genome {
    /// A name for it: the explicit genome name, the assembly accession, or the first record's
    /// identifier.
    pub name: String,
    /// The taxon its records are mapped to (the lowest common ancestor if they differ).
    pub tax_id: TaxId,
    /// Total length of its records (bases).
    pub length: u64,
    /// Number of FASTA records.
    pub sequences: u32,
}

/// The genomes of one species (or of a taxon above species for genomes mapped there), as a
/// build reports them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeciesGenomes {
    /// The species' tax id.
    pub tax_id: TaxId,
    /// Its scientific name.
    pub name: String,
    /// Its rank (`species`, or the rank of the taxon the genomes are mapped to when it is not
    /// at or below a species).
    pub rank: String,
    /// Genomes found.
    pub genomes: u32,
    /// FASTA records in them.
    pub sequences: u32,
    /// Mean genome length (bases): the length used for genome-copy abundance.
    pub mean_length: u64,
}

/// Where a record's genome key came from, most reliable first.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Explicit(String),
    Assembly(String),
    Group { file: u32, taxon: u32, group: String },
}

/// Collects records into genomes.
#[derive(Debug, Default)]
pub(crate) struct GenomeCollector {
    keys: HashMap<Key, usize>,
    genomes: Vec<Group>,
}

/// Records grouped under one key.
#[derive(Debug)]
struct Group {
    taxon: u32,
    length: u64,
    sequences: u32,
    name: String,
    // Records described as a whole genome (see `is_whole_genome`), for heuristic keys only.
    whole: u32,
    heuristic: bool,
}

/// What is known about one record for grouping.
pub(crate) struct RecordInfo<'a> {
    pub file: u32,
    pub seq_id: &'a str,
    pub explicit: Option<&'a str>,
    pub assembly: Option<&'a str>,
    /// The WGS project or the organism and strain from the description (see [`group_hint`]).
    pub hint: &'a str,
    /// Whether the description calls the record a complete genome ([`is_whole_genome`]).
    pub whole_genome: bool,
    pub taxon: u32,
    pub length: u64,
}

impl GenomeCollector {
    /// Adds a record; `lca` merges the taxa of a genome whose records differ.
    pub fn add(&mut self, r: &RecordInfo<'_>, lca: impl Fn(u32, u32) -> u32) {
        let key = if let Some(g) = r.explicit {
            Key::Explicit(g.to_owned())
        } else if let Some(a) = r.assembly {
            Key::Assembly(a.to_owned())
        } else {
            Key::Group { file: r.file, taxon: r.taxon, group: r.hint.to_owned() }
        };
        let heuristic = matches!(key, Key::Group { .. });
        let name = match &key {
            Key::Explicit(n) | Key::Assembly(n) => n.clone(),
            Key::Group { .. } => r.seq_id.to_owned(),
        };
        let next = self.genomes.len();
        let i = *self.keys.entry(key).or_insert(next);
        if i == next {
            self.genomes.push(Group { taxon: r.taxon, length: 0, sequences: 0, name, whole: 0, heuristic });
        }
        let g = &mut self.genomes[i];
        g.taxon = lca(g.taxon, r.taxon);
        g.length += r.length;
        g.sequences += 1;
        g.whole += u32::from(r.whole_genome);
    }

    /// The genomes, in order of first record.
    pub fn finish(self, taxonomy: &Taxonomy) -> Vec<Genome> {
        let mut out = Vec::with_capacity(self.genomes.len());
        for g in self.genomes {
            let tax_id = taxonomy.tax_id(g.taxon);
            let n = if g.heuristic { g.whole.max(1) } else { 1 };
            if n == 1 {
                out.push(Genome { name: g.name, tax_id, length: g.length, sequences: g.sequences });
                continue;
            }
            // Several assemblies under one name: each gets the mean length.
            let length = (g.length + n as u64 / 2) / n as u64;
            for k in 0..n {
                let sequences = g.sequences / n + u32::from(k < g.sequences % n);
                out.push(Genome { name: format!("{} ({} of {n})", g.name, k + 1), tax_id, length, sequences });
            }
        }
        out
    }
}

/// Whether a FASTA description calls its record a whole genome (`..., complete genome`): not a
/// plasmid, nor a second chromosome (`chromosome 2`, `chromosome II`, `chromosome B`...).
pub(crate) fn is_whole_genome(description: &str) -> bool {
    let d = description.to_lowercase();
    if !d.contains("complete genome") || d.contains("plasmid") {
        return false;
    }
    match d.split_once(" chromosome") {
        Some((_, rest)) if rest.starts_with(' ') => {
            let number = rest.trim_start().split([' ', ',']).next().unwrap_or("");
            matches!(number, "" | "1" | "i" | "a")
        }
        _ => true,
    }
}

/// The grouping hint of a record from its identifier and description: `wgs:PROJECT` for an
/// accession of a WGS project, else the organism and strain named in the description
/// (lowercase), else empty.
pub(crate) fn group_hint(seq_id: &str, description: &str) -> String {
    if let Some(p) = wgs_project(accession_of(seq_id)) {
        return format!("wgs:{p}");
    }
    strain_label(description)
}

/// The accession inside an identifier: `gi|227011820|gb|CP001235.1|` and
/// `kraken:taxid|666|CP001235.1` give `CP001235.1`; a plain identifier is its own accession.
pub(crate) fn accession_of(seq_id: &str) -> &str {
    if !seq_id.contains('|') {
        return seq_id;
    }
    seq_id
        .split('|')
        .rev()
        .find(|f| {
            let f = f.strip_prefix("NZ_").unwrap_or(f);
            let letters = f.bytes().take_while(|b| b.is_ascii_alphabetic() || *b == b'_').count();
            letters >= 1 && f.len() > letters && f.as_bytes()[letters].is_ascii_digit()
        })
        .unwrap_or(seq_id)
}

/// The WGS project of an accession: four (or six) letters and two digits followed by at least
/// six digits (`AKGH01000001.1` → `AKGH01`; `NZ_` is ignored).
pub(crate) fn wgs_project(accession: &str) -> Option<&str> {
    let a = accession.strip_prefix("NZ_").unwrap_or(accession);
    let a = a.split('.').next().unwrap_or(a);
    let letters = a.bytes().take_while(u8::is_ascii_uppercase).count();
    let digits = a[letters..].bytes().take_while(u8::is_ascii_digit).count();
    ((letters == 4 || letters == 6) && digits >= 8 && letters + digits == a.len()).then(|| &a[..letters + 2])
}

/// The WGS letters of a `wgs_master` accession of `assembly_summary.txt` (`AKGH00000000.1` →
/// `AKGH`).
pub(crate) fn wgs_letters(master: &str) -> Option<&str> {
    let a = master.strip_prefix("NZ_").unwrap_or(master);
    let letters = a.bytes().take_while(u8::is_ascii_uppercase).count();
    (letters == 4 || letters == 6).then(|| &a[..letters])
}

/// The NCBI assembly accession a file name starts with (`GCF_000005845.2_ASM584v2_genomic.fna`
/// → `GCF_000005845.2`).
pub(crate) fn assembly_of_file_name(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("GCF_").or_else(|| name.strip_prefix("GCA_"))?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let mut end = 4 + digits;
    if name.as_bytes().get(end) == Some(&b'.') {
        let version = name[end + 1..].bytes().take_while(u8::is_ascii_digit).count();
        if version > 0 {
            end += 1 + version;
        }
    }
    Some(&name[..end])
}

/// The organism and strain a FASTA description names, without the replicon and sequence kind
/// (`Klebsiella pneumoniae subsp. pneumoniae HS11286 plasmid pKPHS1, complete sequence` →
/// `klebsiella pneumoniae subsp. pneumoniae hs11286`), lowercase; empty when nothing is left.
pub(crate) fn strain_label(description: &str) -> String {
    const CUTS: [&str; 20] = [
        ",",
        " chromosome",
        " plasmid",
        " contig",
        " scaffold",
        " complete genome",
        " complete sequence",
        " whole genome",
        " genomic",
        " dna",
        " unplaced",
        " unlocalized",
        " mitochondri",
        " chloroplast",
        " plastid",
        " segment",
        " node_",
        " genome assembly",
        " map unlocalized",
        " sequence",
    ];
    let lower = description.trim().to_lowercase();
    let end = CUTS.iter().filter_map(|c| lower.find(c)).min().unwrap_or(lower.len());
    lower[..end].split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Mean genome length over the genomes in each taxon's subtree (0 where there is none).
pub(crate) fn subtree_mean_lengths(taxonomy: &Taxonomy, genomes: &[Genome]) -> Vec<u64> {
    let n = taxonomy.len();
    let (mut total, mut count) = (vec![0u64; n], vec![0u64; n]);
    for g in genomes {
        if let Some(t) = taxonomy.index_of(g.tax_id) {
            total[t as usize] += g.length;
            count[t as usize] += 1;
        }
    }
    let parents = taxonomy.parents_slice();
    for i in (1..n).rev() {
        let p = parents[i] as usize;
        total[p] += total[i];
        count[p] += count[i];
    }
    total.iter().zip(&count).map(|(&t, &c)| (t + c / 2).checked_div(c).unwrap_or(0)).collect()
}

/// Genomes per species (each genome counted at its species ancestor, or at its own taxon when it
/// has none), in taxonomy order.
pub(crate) fn per_species(taxonomy: &Taxonomy, genomes: &[Genome]) -> Vec<SpeciesGenomes> {
    let mut by: HashMap<u32, (u32, u32, u64)> = HashMap::new();
    for g in genomes {
        let Some(t) = taxonomy.index_of(g.tax_id) else { continue };
        let s = taxonomy.ancestor_at_rank(t, "species").unwrap_or(t);
        let e = by.entry(s).or_default();
        e.0 += 1;
        e.1 += g.sequences;
        e.2 += g.length;
    }
    let mut out: Vec<(u32, SpeciesGenomes)> = by
        .into_iter()
        .map(|(s, (genomes, sequences, total))| {
            let mean_length = (total + genomes as u64 / 2) / genomes as u64;
            let row = SpeciesGenomes {
                tax_id: taxonomy.tax_id(s),
                name: taxonomy.name(s).to_owned(),
                rank: taxonomy.rank(s).to_owned(),
                genomes,
                sequences,
                mean_length,
            };
            (s, row)
        })
        .collect();
    out.sort_by_key(|(s, _)| *s);
    out.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_drop_the_replicon() {
        let k = "Klebsiella pneumoniae subsp. pneumoniae HS11286";
        for d in [
            "Klebsiella pneumoniae subsp. pneumoniae HS11286, complete genome",
            "Klebsiella pneumoniae subsp. pneumoniae HS11286 plasmid pKPHS1, complete sequence",
        ] {
            assert_eq!(strain_label(d), k.to_lowercase());
        }
        assert_eq!(
            strain_label("Klebsiella pneumoniae subsp. pneumoniae NTUH-K2044 plasmid pK2044 DNA, complete genome"),
            strain_label("Klebsiella pneumoniae subsp. pneumoniae NTUH-K2044 DNA, complete genome")
        );
        assert_eq!(
            strain_label("Vibrio cholerae O395 chromosome I, complete sequence"),
            strain_label("Vibrio cholerae O395 chromosome II, complete sequence")
        );
        assert_ne!(
            strain_label("Helicobacter pylori G27 chromosome, complete genome"),
            strain_label("Helicobacter pylori SJM180 chromosome, complete genome")
        );
        assert_eq!(strain_label("Escherichia coli 536, complete genome"), "escherichia coli 536");
        assert_eq!(strain_label(""), "");
    }

    #[test]
    fn accessions_and_projects() {
        assert_eq!(accession_of("gi|227011820|gb|CP001235.1|"), "CP001235.1");
        assert_eq!(accession_of("kraken:taxid|666|NZ_CP001235.1"), "NZ_CP001235.1");
        assert_eq!(accession_of("contig_1"), "contig_1");
        assert_eq!(wgs_project("AKGH01000002.1"), Some("AKGH01"));
        assert_eq!(wgs_project("NZ_AKGH01000002.1"), Some("AKGH01"));
        assert_eq!(wgs_project("CP001235.1"), None);
        assert_eq!(wgs_project("CM001785.1"), None);
        assert_eq!(group_hint("gi|393210368|gb|AKGH01000001.1|", "whatever"), "wgs:AKGH01");
        assert_eq!(wgs_letters("AKGH00000000.1"), Some("AKGH"));
        assert_eq!(assembly_of_file_name("GCF_000005845.2_ASM584v2_genomic.fna.gz"), Some("GCF_000005845.2"));
        assert_eq!(assembly_of_file_name("GCA_1234_x.fa"), Some("GCA_1234"));
        assert_eq!(assembly_of_file_name("genome.fa"), None);
    }

    #[test]
    fn records_group_into_genomes() {
        let t = crate::taxonomy::tests::small();
        let coli = t.index_of(562).unwrap();
        let mut c = GenomeCollector::default();
        let rec = |file, id: &'static str, hint: &'static str, len| RecordInfo {
            file,
            seq_id: id,
            explicit: None,
            assembly: None,
            hint,
            whole_genome: false,
            taxon: coli,
            length: len,
        };
        // Two strains in one file, one with a plasmid; a third strain in a file of its own.
        c.add(&rec(0, "a1", "e. coli a", 100), |a, _| a);
        c.add(&rec(0, "a2", "e. coli a", 10), |a, _| a);
        c.add(&rec(0, "b1", "e. coli b", 200), |a, _| a);
        c.add(&rec(1, "c1", "", 300), |a, _| a);
        let g = c.finish(&t);
        assert_eq!(g.len(), 3);
        assert_eq!((g[0].length, g[0].sequences, g[0].name.as_str()), (110, 2, "a1"));
        let means = subtree_mean_lengths(&t, &g);
        assert_eq!(means[coli as usize], 203);
        let s = per_species(&t, &g);
        assert_eq!((s[0].tax_id, s[0].genomes, s[0].sequences, s[0].mean_length), (562, 3, 4, 203));

        // Two complete genomes under one description without a strain are two assemblies.
        let mut c = GenomeCollector::default();
        for (id, len, whole) in [("x1", 100, true), ("x2", 20, false), ("y1", 120, true)] {
            c.add(&RecordInfo { whole_genome: whole, ..rec(0, id, "escherichia coli", len) }, |a, _| a);
        }
        let g = c.finish(&t);
        assert_eq!(g.iter().map(|g| (g.length, g.sequences)).collect::<Vec<_>>(), [(120, 2), (120, 1)]);
        assert!(is_whole_genome("Escherichia coli 536, complete genome"));
        assert!(!is_whole_genome("Klebsiella pneumoniae plasmid pK2044 DNA, complete genome"));
        assert!(!is_whole_genome("Vibrio cholerae O395 chromosome I, complete sequence"));
        assert!(is_whole_genome("Vibrio cholerae X chromosome 1, complete genome"));
        assert!(!is_whole_genome("Vibrio cholerae X chromosome II, complete genome"));
        assert!(is_whole_genome("Helicobacter pylori G27 chromosome, complete genome"));
    }
}
