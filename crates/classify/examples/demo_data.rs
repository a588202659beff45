//! Writes the synthetic demo reference data of `assets/demo/` (see its README.md).
//!
//! `cargo run -p mgds-classify --release --example demo-data [-- OUT_DIR]`
//!
//! Deterministic: a fixed seed and a PRNG written here (not `rand`, whose generators may change
//! their output between versions), so the same program writes the same bytes.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;

/// NCBI taxa (tax id, parent, rank, scientific name), taken from a real classification result
/// (every ancestor of the demo species up to the root).
const TAXA: &[(u64, u64, &str, &str)] = &[
    (1, 1, "no rank", "root"),
    (2, 131567, "superkingdom", "Bacteria"),
    (286, 135621, "genus", "Pseudomonas"),
    (287, 136841, "species", "Pseudomonas aeruginosa"),
    (543, 91347, "family", "Enterobacteriaceae"),
    (561, 543, "genus", "Escherichia"),
    (562, 561, "species", "Escherichia coli"),
    (570, 543, "genus", "Klebsiella"),
    (571, 570, "species", "Klebsiella oxytoca"),
    (573, 570, "species", "Klebsiella pneumoniae"),
    (590, 543, "genus", "Salmonella"),
    (620, 543, "genus", "Shigella"),
    (623, 620, "species", "Shigella flexneri"),
    (1224, 2, "phylum", "Proteobacteria"),
    (1236, 1224, "class", "Gammaproteobacteria"),
    (1239, 1783272, "phylum", "Firmicutes"),
    (1279, 90964, "genus", "Staphylococcus"),
    (1280, 1279, "species", "Staphylococcus aureus"),
    (1282, 1279, "species", "Staphylococcus epidermidis"),
    (1300, 186826, "family", "Streptococcaceae"),
    (1301, 1300, "genus", "Streptococcus"),
    (1311, 1301, "species", "Streptococcus agalactiae"),
    (1313, 1301, "species", "Streptococcus pneumoniae"),
    (1350, 81852, "genus", "Enterococcus"),
    (1351, 1350, "species", "Enterococcus faecalis"),
    (1352, 1350, "species", "Enterococcus faecium"),
    (1385, 91061, "order", "Bacillales"),
    (28901, 590, "species", "Salmonella enterica"),
    (72274, 1236, "order", "Pseudomonadales"),
    (81852, 186826, "family", "Enterococcaceae"),
    (90964, 1385, "family", "Staphylococcaceae"),
    (91061, 1239, "class", "Bacilli"),
    (91347, 1236, "order", "Enterobacteriales"),
    (131567, 1, "no rank", "cellular organisms"),
    (135621, 72274, "family", "Pseudomonadaceae"),
    (136841, 286, "species group", "Pseudomonas aeruginosa group"),
    (186826, 91061, "order", "Lactobacillales"),
    (1783272, 2, "no rank", "Terrabacteria group"),
];

/// A species' synthetic genome.
struct SpeciesSpec {
    tax_id: u64,
    tag: &'static str,
    gc: f64,
    len: usize,
    /// (donor species tag, fraction of 2 kb blocks copied from it, divergence of the copies):
    /// close relatives share sequence, so some k-mers belong to the genus (or family).
    related: Option<(&'static str, f64, f64)>,
    /// Relative abundance (genome copies) in the demo sample.
    abundance: f64,
    /// Genomes of the species: (suffix, divergence from the first, share of the species'
    /// cells, in the database?). The first is the species' base genome.
    strains: &'static [(&'static str, f64, f64, bool)],
}

const ONE: &[(&str, f64, f64, bool)] = &[("A", 0.0, 1.0, true)];

const SPECIES: &[SpeciesSpec] = &[
    SpeciesSpec {
        tax_id: 562,
        tag: "Escherichia_coli",
        gc: 0.508,
        len: 220_000,
        related: None,
        abundance: 0.18,
        strains: &[("A", 0.0, 0.6, true), ("B", 0.008, 0.4, true)],
    },
    SpeciesSpec {
        tax_id: 623,
        tag: "Shigella_flexneri",
        gc: 0.510,
        len: 200_000,
        related: Some(("Escherichia_coli", 0.5, 0.02)),
        abundance: 0.04,
        strains: ONE,
    },
    SpeciesSpec {
        tax_id: 28901,
        tag: "Salmonella_enterica",
        gc: 0.522,
        len: 210_000,
        related: Some(("Escherichia_coli", 0.15, 0.05)),
        abundance: 0.10,
        strains: &[("A", 0.0, 0.6, true), ("heldout", 0.015, 0.4, false)],
    },
    SpeciesSpec {
        tax_id: 573,
        tag: "Klebsiella_pneumoniae",
        gc: 0.573,
        len: 230_000,
        related: None,
        abundance: 0.12,
        strains: &[("A", 0.0, 0.7, true), ("B", 0.007, 0.3, true)],
    },
    SpeciesSpec {
        tax_id: 571,
        tag: "Klebsiella_oxytoca",
        gc: 0.553,
        len: 200_000,
        related: Some(("Klebsiella_pneumoniae", 0.3, 0.03)),
        abundance: 0.04,
        strains: ONE,
    },
    SpeciesSpec {
        tax_id: 287,
        tag: "Pseudomonas_aeruginosa",
        gc: 0.663,
        len: 250_000,
        related: None,
        abundance: 0.10,
        strains: ONE,
    },
    SpeciesSpec {
        tax_id: 1280,
        tag: "Staphylococcus_aureus",
        gc: 0.329,
        len: 180_000,
        related: None,
        abundance: 0.12,
        strains: &[("A", 0.0, 0.5, true), ("B", 0.006, 0.5, true)],
    },
    SpeciesSpec {
        tax_id: 1282,
        tag: "Staphylococcus_epidermidis",
        gc: 0.321,
        len: 170_000,
        related: Some(("Staphylococcus_aureus", 0.3, 0.03)),
        abundance: 0.05,
        strains: ONE,
    },
    SpeciesSpec {
        tax_id: 1351,
        tag: "Enterococcus_faecalis",
        gc: 0.374,
        len: 180_000,
        related: None,
        abundance: 0.08,
        strains: ONE,
    },
    SpeciesSpec {
        tax_id: 1352,
        tag: "Enterococcus_faecium",
        gc: 0.379,
        len: 170_000,
        related: Some(("Enterococcus_faecalis", 0.25, 0.03)),
        abundance: 0.03,
        strains: ONE,
    },
    SpeciesSpec {
        tax_id: 1313,
        tag: "Streptococcus_pneumoniae",
        gc: 0.397,
        len: 150_000,
        related: None,
        abundance: 0.08,
        strains: ONE,
    },
    SpeciesSpec {
        tax_id: 1311,
        tag: "Streptococcus_agalactiae",
        gc: 0.356,
        len: 150_000,
        related: Some(("Streptococcus_pneumoniae", 0.25, 0.03)),
        abundance: 0.06,
        strains: ONE,
    },
];

const SEED: u64 = 20_261_123;
const READS: usize = 6000;
const READ_LEN: usize = 150;
const BLOCK: usize = 2000;
// The last tenth of each genome is written as a second record (a plasmid-like contig), so the
// map's genome column is exercised.
const PLASMID_FRACTION: f64 = 0.1;

/// SplitMix64: tiny, fast and stable across versions.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.f64() * n as f64) as usize
    }
    fn base(&mut self, gc: f64) -> u8 {
        let x = self.f64();
        if x < gc / 2.0 {
            b'G'
        } else if x < gc {
            b'C'
        } else if x < gc + (1.0 - gc) / 2.0 {
            b'A'
        } else {
            b'T'
        }
    }
    /// A different base than `b`.
    fn substitute(&mut self, b: u8) -> u8 {
        let others: Vec<u8> = b"ACGT".iter().copied().filter(|&x| x != b).collect();
        others[self.below(3)]
    }
}

fn mutate(seq: &[u8], rate: f64, rng: &mut Rng) -> Vec<u8> {
    seq.iter().map(|&b| if rng.f64() < rate { rng.substitute(b) } else { b }).collect()
}

fn revcomp(seq: &[u8]) -> Vec<u8> {
    seq.iter()
        .rev()
        .map(|&b| match b {
            b'A' => b'T',
            b'C' => b'G',
            b'G' => b'C',
            _ => b'A',
        })
        .collect()
}

struct Genome {
    id: String,
    tax_id: u64,
    in_db: bool,
    /// Share of all sequenced cells.
    cells: f64,
    contigs: Vec<(String, Vec<u8>)>,
}

impl Genome {
    fn len(&self) -> usize {
        self.contigs.iter().map(|c| c.1.len()).sum()
    }
}

fn gzip(path: &Path, bytes: &[u8]) {
    let file = std::fs::File::create(path).expect("create output");
    let mut gz = GzEncoder::new(file, flate2::Compression::best());
    gz.write_all(bytes).expect("write");
    gz.finish().expect("finish gzip");
}

fn main() {
    let out: PathBuf = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo"));
    std::fs::create_dir_all(out.join("taxonomy")).expect("create output folder");
    let mut rng = Rng(SEED);

    // Taxonomy.
    let (mut nodes, mut names) = (String::new(), String::new());
    let mut taxa = TAXA.to_vec();
    taxa.sort_by_key(|t| t.0);
    for (id, parent, rank, name) in taxa {
        writeln!(nodes, "{id}\t|\t{parent}\t|\t{rank}\t|").unwrap();
        writeln!(names, "{id}\t|\t{name}\t|\t\t|\tscientific name\t|").unwrap();
    }
    std::fs::write(out.join("taxonomy/nodes.dmp"), nodes).expect("write nodes.dmp");
    std::fs::write(out.join("taxonomy/names.dmp"), names).expect("write names.dmp");

    // Base genomes, in order, so a relative's donor already exists.
    let mut base: Vec<(&str, Vec<u8>)> = Vec::new();
    for s in SPECIES {
        let donor =
            s.related.map(|(tag, frac, div)| (&base.iter().find(|b| b.0 == tag).expect("donor first").1, frac, div));
        let mut seq = Vec::with_capacity(s.len);
        while seq.len() < s.len {
            let n = BLOCK.min(s.len - seq.len());
            match donor {
                Some((d, frac, div)) if rng.f64() < frac => {
                    let start = rng.below(d.len() - n);
                    seq.extend(mutate(&d[start..start + n], div, &mut rng));
                }
                _ => seq.extend((0..n).map(|_| rng.base(s.gc))),
            }
        }
        base.push((s.tag, seq));
    }

    let mut genomes: Vec<Genome> = Vec::new();
    for (s, (_, seq)) in SPECIES.iter().zip(&base) {
        for &(suffix, div, share, in_db) in s.strains {
            let seq = if div > 0.0 { mutate(seq, div, &mut rng) } else { seq.clone() };
            let id = format!("{}_{suffix}", s.tag);
            let split = seq.len() - (seq.len() as f64 * PLASMID_FRACTION) as usize;
            genomes.push(Genome {
                contigs: vec![
                    (format!("{id}.chr"), seq[..split].to_vec()),
                    (format!("{id}.p1"), seq[split..].to_vec()),
                ],
                id,
                tax_id: s.tax_id,
                in_db,
                cells: s.abundance * share,
            });
        }
    }

    let (mut fasta, mut map) = (Vec::new(), String::new());
    writeln!(map, "# seq_id\ttax_id\tgenome").unwrap();
    for g in genomes.iter().filter(|g| g.in_db) {
        for (name, seq) in &g.contigs {
            writeln!(fasta, ">{name} synthetic {}", g.id).unwrap();
            for line in seq.chunks(80) {
                fasta.extend_from_slice(line);
                fasta.push(b'\n');
            }
            writeln!(map, "{name}\t{}\t{}", g.tax_id, g.id).unwrap();
        }
    }
    gzip(&out.join("genomes.fa.gz"), &fasta);
    std::fs::write(out.join("seqid2taxid.tsv"), map).expect("write seqid2taxid.tsv");

    // Reads per genome: proportional to cells x genome length (largest remainders, so the
    // counts are exact and known).
    let weights: Vec<f64> = genomes.iter().map(|g| g.cells * g.len() as f64).collect();
    let total: f64 = weights.iter().sum();
    let exact: Vec<f64> = weights.iter().map(|w| w / total * READS as f64).collect();
    let mut counts: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
    let mut order: Vec<usize> = (0..genomes.len()).collect();
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())));
    let short = READS - counts.iter().sum::<usize>();
    for &i in order.iter().take(short) {
        counts[i] += 1;
    }
    let mut plan: Vec<usize> = counts.iter().enumerate().flat_map(|(g, &n)| std::iter::repeat_n(g, n)).collect();
    // Fisher-Yates, so species are mixed through the file as on a sequencer.
    for i in (1..plan.len()).rev() {
        let j = rng.below(i + 1);
        plan.swap(i, j);
    }

    let (mut fastq, mut truth) = (Vec::new(), String::new());
    writeln!(truth, "read_name\ttax_id\tsource").unwrap();
    for (n, &g) in plan.iter().enumerate() {
        let genome = &genomes[g];
        let lens: Vec<usize> = genome.contigs.iter().map(|c| c.1.len()).collect();
        let mut pick = rng.below(lens.iter().sum());
        let mut c = 0;
        while pick >= lens[c] {
            pick -= lens[c];
            c += 1;
        }
        let contig = &genome.contigs[c].1;
        let start = rng.below(contig.len() - READ_LEN);
        let mut read = contig[start..start + READ_LEN].to_vec();
        if rng.f64() < 0.5 {
            read = revcomp(&read);
        }
        let mut qual = Vec::with_capacity(READ_LEN);
        for (i, b) in read.iter_mut().enumerate() {
            // Illumina-like: errors (and lower qualities) towards the 3' end; 0.7% on average.
            let t = i as f64 / (READ_LEN - 1) as f64;
            let q = if rng.f64() < 0.003 + 0.012 * t * t {
                *b = rng.substitute(*b);
                12 + rng.below(10)
            } else {
                (38.0 - 8.0 * t * t) as usize - rng.below(4)
            };
            qual.push(b'!' + q as u8);
        }
        let name = format!("demo.{:05}", n + 1);
        writeln!(fastq, "@{name}").unwrap();
        fastq.extend_from_slice(&read);
        fastq.extend_from_slice(b"\n+\n");
        fastq.extend_from_slice(&qual);
        fastq.push(b'\n');
        writeln!(truth, "{name}\t{}\t{}", genome.tax_id, genome.id).unwrap();
    }
    gzip(&out.join("reads.fastq.gz"), &fastq);
    std::fs::write(out.join("truth.tsv"), truth).expect("write truth.tsv");

    eprintln!("wrote {}", out.display());
    for (g, n) in genomes.iter().zip(&counts) {
        eprintln!(
            "  {:32} {:>6} bp  {:>5} reads{}",
            g.id,
            g.len(),
            n,
            if g.in_db { "" } else { "  (not in the database)" }
        );
    }
}
