//! Real bacterial genomes, Kraken 2 and simulated reads, for the tests and the `kraken2` bench.
//!
//! Genomes come from Debian's example-data packages (`apt-get download` and `dpkg-deb -x`, the
//! only downloads); reads are simulated with ART (`art_illumina`) when it is installed, else with
//! a simple built-in simulator; Kraken 2 databases are built with Debian's `kraken2-build`
//! offline (taxonomy dumps, `--no-masking --add-to-library`, `--build`). Everything is cached
//! outside the checkout, in `$MGDS_CACHE_DIR`, else `$XDG_CACHE_HOME/mgds`, else
//! `~/.cache/mgds`, under a key of its inputs, so that CI runs reuse it. Concurrent test
//! processes take a file lock while they fill the cache.
//!
//! The bench includes this file by path (`#[path]`); each of the two uses a part of it.
#![allow(dead_code)]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use flate2::read::MultiGzDecoder;
use sha2::{Digest, Sha256};

/// Errors of the set-up steps, as messages.
pub type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// The cache folder: `$MGDS_CACHE_DIR`, else `$XDG_CACHE_HOME/mgds`, else `~/.cache/mgds`.
pub fn cache_dir() -> PathBuf {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    env("MGDS_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("mgds")))
        .or_else(|| env("HOME").map(|h| h.join(".cache").join("mgds")))
        .unwrap_or_else(|| std::env::temp_dir().join("mgds-cache"))
}

/// A subfolder of the cache, created.
pub fn cache(sub: &str) -> Res<PathBuf> {
    let dir = cache_dir().join(sub);
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create the cache folder {}: {e}", dir.display()))?;
    Ok(dir)
}

/// An exclusive lock on `name` in the cache, held while the returned file is open: test
/// processes running side by side fill the cache one at a time.
pub fn lock(name: &str) -> Res<File> {
    let file = File::create(cache("locks")?.join(format!("{name}.lock")))?;
    file.lock()?;
    Ok(file)
}

/// The path of `binary` on the `PATH`.
pub fn which(binary: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(binary)).find(|p| p.is_file())
}

/// Kraken 2's version line; an error asking to install it when it is missing.
pub fn require_kraken2() -> Res<String> {
    if which("kraken2").is_none() || which("kraken2-build").is_none() {
        return Err("Kraken 2 is not installed, and these tests compare with it: install it (`apt-get install kraken2`, as root on Debian or Ubuntu) and run them again".into());
    }
    let out = run_ok(Command::new("kraken2").arg("--version"))?;
    Ok(String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("kraken2").trim().to_owned())
}

/// ART's version line, when `art_illumina` is installed.
pub fn art_version() -> Option<String> {
    which("art_illumina")?;
    let out = Command::new("art_illumina").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Some(text.lines().find(|l| l.contains("Version")).map(|l| l.trim().to_owned()).unwrap_or_default())
}

/// Installs a Debian package unless `binary` is on the `PATH` (needs root); whether `binary`
/// is there afterwards.
pub fn apt_install(package: &str, binary: &str) -> bool {
    if which(binary).is_some() {
        return true;
    }
    eprintln!("{binary} not found: installing the Debian package {package}");
    let _ = Command::new("apt-get").args(["update", "-q"]).stdout(Stdio::null()).status();
    let status = Command::new("apt-get")
        .args(["install", "-y", "-q", "--no-install-recommends", package])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdout(Stdio::null())
        .status();
    if !matches!(status, Ok(s) if s.success()) {
        eprintln!("could not install {package} ({status:?})");
    }
    which(binary).is_some()
}

/// Runs a command; its output, or an error with its messages.
pub fn run_ok(cmd: &mut Command) -> Res<std::process::Output> {
    let out = cmd.output().map_err(|e| format!("could not run {cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(out)
}

/// Downloads and unpacks a Debian package into the cache (once); returns its folder and
/// `PACKAGE VERSION`.
pub fn fetch_package(pkg: &str) -> Res<(PathBuf, String)> {
    let _lock = lock(&format!("package-{pkg}"))?;
    let debs = cache("debs")?;
    let dir = cache("packages")?.join(pkg);
    let find_deb = || -> Res<Option<PathBuf>> {
        Ok(fs::read_dir(&debs)?.filter_map(|e| e.ok().map(|e| e.path())).find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{pkg}_")) && n.ends_with(".deb"))
        }))
    };
    let deb = match find_deb()? {
        Some(deb) => deb,
        None => {
            eprintln!("downloading the Debian package {pkg}");
            run_ok(Command::new("apt-get").args(["download", "-q", pkg]).current_dir(&debs))
                .map_err(|e| format!("apt-get download {pkg}: {e}"))?;
            find_deb()?.ok_or(format!("apt-get download {pkg} left no .deb"))?
        }
    };
    if !dir.join(".unpacked").exists() {
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir)?;
        run_ok(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&dir))?;
        fs::write(dir.join(".unpacked"), "")?;
    }
    let name = deb.file_name().and_then(|n| n.to_str()).unwrap_or(pkg);
    let version = name.split('_').nth(1).unwrap_or("?").replace("%3a", ":");
    Ok((dir, format!("{pkg} {version}")))
}

/// A genome from an example-data package.
#[derive(Debug)]
pub struct Genome {
    /// A short name.
    pub label: &'static str,
    /// What it is.
    pub description: &'static str,
    /// The taxon its records are mapped to (a strain, or the species).
    pub tax_id: u64,
    /// Its species (0: a species the taxonomy does not hold).
    pub species: u64,
    /// The Debian package.
    pub package: &'static str,
    /// The FASTA file in the package (gzip or xz).
    pub path: &'static str,
}

const RAGOUT: &str = "usr/share/doc/ragout/examples";
const KLEBORATE: &str = "usr/share/doc/kleborate/examples/data";

/// The genomes the tests and the bench use.
pub const GENOMES: &[Genome] = &[
    Genome {
        label: "Ecoli_MG1655",
        description: "Escherichia coli K-12 MG1655",
        tax_id: 562,
        species: 562,
        package: "ragout-examples",
        path: "E.Coli/references/MG1655-K12.fasta.gz",
    },
    Genome {
        label: "Ecoli_536",
        description: "Escherichia coli 536 (UPEC), one record",
        tax_id: 562,
        species: 562,
        package: "bowtie-examples",
        path: "usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz",
    },
    Genome {
        label: "Saureus_COL",
        description: "Staphylococcus aureus COL",
        tax_id: 1280,
        species: 1280,
        package: "ragout-examples",
        path: "S.Aureus/references/COL.fasta.gz",
    },
    Genome {
        label: "Saureus_N315",
        description: "Staphylococcus aureus N315",
        tax_id: 1280,
        species: 1280,
        package: "ragout-examples",
        path: "S.Aureus/references/N315.fasta.gz",
    },
    Genome {
        label: "Saureus_RF122",
        description: "Staphylococcus aureus RF122 (bovine)",
        tax_id: 1280,
        species: 1280,
        package: "ragout-examples",
        path: "S.Aureus/references/RF122.fasta.gz",
    },
    Genome {
        label: "Kpneumoniae_HS11286",
        description: "Klebsiella pneumoniae HS11286, chromosome + 6 plasmids",
        tax_id: 1125630,
        species: 573,
        package: "kleborate-examples",
        path: "usr/share/doc/kleborate/examples/data/Klebs_HS11286.fna.xz",
    },
    Genome {
        label: "Kpneumoniae_MGH78578",
        description: "Klebsiella pneumoniae MGH 78578, chromosome + 5 plasmids",
        tax_id: 573,
        species: 573,
        package: "kleborate-examples",
        path: "usr/share/doc/kleborate/examples/data/MGH78578.fna.xz",
    },
    Genome {
        label: "Kpneumoniae_NTUH-K2044",
        description: "Klebsiella pneumoniae NTUH-K2044, chromosome + 1 plasmid",
        tax_id: 573,
        species: 573,
        package: "kleborate-examples",
        path: "usr/share/doc/kleborate/examples/data/NTUH-K2044.fna.xz",
    },
    Genome {
        label: "Vcholerae_O395",
        description: "Vibrio cholerae O395, two chromosomes",
        tax_id: 666,
        species: 666,
        package: "ragout-examples",
        path: "V.Cholerae/references/O395.fasta.gz",
    },
    Genome {
        label: "Vcholerae_N16961",
        description: "Vibrio cholerae O1 biovar El Tor N16961, two chromosomes",
        tax_id: 666,
        species: 666,
        package: "ragout-examples",
        path: "V.Cholerae/references/O1_biovar.fasta.gz",
    },
    Genome {
        label: "Hpylori_G27",
        description: "Helicobacter pylori G27, one record",
        tax_id: 210,
        species: 210,
        package: "ragout-examples",
        path: "H.Pylori/references/G27.fasta.gz",
    },
    Genome {
        label: "Hpylori_Puno120",
        description: "Helicobacter pylori Puno120, one record",
        tax_id: 210,
        species: 210,
        package: "ragout-examples",
        path: "H.Pylori/references/Puno120.fasta.gz",
    },
];

/// The genome called `label`.
pub fn genome(label: &str) -> &'static Genome {
    GENOMES.iter().find(|g| g.label == label).unwrap_or_else(|| panic!("no genome {label}"))
}

/// NCBI taxa (tax id, parent, rank, scientific name) of the genomes and all their ancestors,
/// with NCBI's ids, names, ranks and parents.
pub const TAXA: &[(u64, u64, &str, &str)] = &[
    (1, 1, "no rank", "root"),
    (131567, 1, "no rank", "cellular organisms"),
    (2, 131567, "superkingdom", "Bacteria"),
    (1224, 2, "phylum", "Proteobacteria"),
    (1236, 1224, "class", "Gammaproteobacteria"),
    (91347, 1236, "order", "Enterobacteriales"),
    (543, 91347, "family", "Enterobacteriaceae"),
    (561, 543, "genus", "Escherichia"),
    (562, 561, "species", "Escherichia coli"),
    (570, 543, "genus", "Klebsiella"),
    (573, 570, "species", "Klebsiella pneumoniae"),
    (72407, 573, "subspecies", "Klebsiella pneumoniae subsp. pneumoniae"),
    (1125630, 72407, "strain", "Klebsiella pneumoniae subsp. pneumoniae HS11286"),
    (135623, 1236, "order", "Vibrionales"),
    (641, 135623, "family", "Vibrionaceae"),
    (662, 641, "genus", "Vibrio"),
    (666, 662, "species", "Vibrio cholerae"),
    (29547, 1224, "class", "Epsilonproteobacteria"),
    (213849, 29547, "order", "Campylobacterales"),
    (72293, 213849, "family", "Helicobacteraceae"),
    (209, 72293, "genus", "Helicobacter"),
    (210, 209, "species", "Helicobacter pylori"),
    (1783272, 2, "no rank", "Terrabacteria group"),
    (1239, 1783272, "phylum", "Firmicutes"),
    (91061, 1239, "class", "Bacilli"),
    (1385, 91061, "order", "Bacillales"),
    (90964, 1385, "family", "Staphylococcaceae"),
    (1279, 90964, "genus", "Staphylococcus"),
    (1280, 1279, "species", "Staphylococcus aureus"),
];

/// Writes `nodes.dmp` and `names.dmp` of [`TAXA`] into `dir`.
pub fn write_taxonomy(dir: &Path) -> Res<()> {
    fs::create_dir_all(dir)?;
    let (mut nodes, mut names) = (String::new(), String::new());
    for &(id, parent, rank, name) in TAXA {
        writeln!(nodes, "{id}\t|\t{parent}\t|\t{rank}\t|")?;
        writeln!(names, "{id}\t|\t{name}\t|\t\t|\tscientific name\t|")?;
    }
    fs::write(dir.join("nodes.dmp"), nodes)?;
    fs::write(dir.join("names.dmp"), names)?;
    Ok(())
}

/// A genome written out as FASTA twice: with plain headers (`>ACCESSION description`) and with
/// `kraken:taxid` headers (`>kraken:taxid|TAX_ID|ACCESSION description`), the same sequences.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The genome's label.
    pub label: &'static str,
    /// Its tax id and species.
    pub tax_id: u64,
    /// Its species.
    pub species: u64,
    /// FASTA with plain headers.
    pub plain: PathBuf,
    /// FASTA with `kraken:taxid` headers.
    pub kraken: PathBuf,
    /// `(accession, length)` of each record.
    pub records: Vec<(String, u64)>,
    /// The package it came from (`PACKAGE VERSION`).
    pub package: String,
}

impl Prepared {
    /// Total length.
    pub fn bases(&self) -> u64 {
        self.records.iter().map(|r| r.1).sum()
    }
}

/// Fetches the genome's package and writes its two FASTA files into the cache (once).
pub fn prepare(g: &'static Genome) -> Res<Prepared> {
    let (pkg_dir, package) = fetch_package(g.package)?;
    let dir = cache("genomes")?;
    let plain = dir.join(format!("{}.plain.fa", g.label));
    let kraken = dir.join(format!("{}.kraken.fa", g.label));
    let index = dir.join(format!("{}.records.tsv", g.label));
    let _lock = lock(&format!("genome-{}", g.label))?;
    if !(plain.exists() && kraken.exists() && index.exists()) {
        let source = if g.path.starts_with("usr/") { pkg_dir.join(g.path) } else { pkg_dir.join(RAGOUT).join(g.path) };
        let text: Box<dyn Read> = if g.path.ends_with(".xz") {
            let out = run_ok(Command::new("xz").arg("-dc").arg(&source))?;
            Box::new(std::io::Cursor::new(out.stdout))
        } else {
            Box::new(MultiGzDecoder::new(File::open(&source).map_err(|e| format!("{}: {e}", source.display()))?))
        };
        let tmp = |p: &Path| p.with_extension("tmp");
        let mut a = BufWriter::new(File::create(tmp(&plain))?);
        let mut b = BufWriter::new(File::create(tmp(&kraken))?);
        let mut records: Vec<(String, u64)> = Vec::new();
        for line in BufReader::new(text).lines() {
            let line = line?;
            if let Some(header) = line.strip_prefix('>') {
                let (id, description) = header.split_once([' ', '\t']).unwrap_or((header, ""));
                let accession = accession(id);
                writeln!(a, ">{accession} {description}")?;
                writeln!(b, ">kraken:taxid|{}|{accession} {description}", g.tax_id)?;
                records.push((accession, 0));
            } else {
                let line = line.trim();
                if let Some(r) = records.last_mut() {
                    r.1 += line.len() as u64;
                }
                writeln!(a, "{line}")?;
                writeln!(b, "{line}")?;
            }
        }
        a.flush()?;
        b.flush()?;
        let list: String = records.iter().map(|(id, len)| format!("{id}\t{len}\n")).collect();
        fs::write(&index, list)?;
        fs::rename(tmp(&plain), &plain)?;
        fs::rename(tmp(&kraken), &kraken)?;
    }
    let records = fs::read_to_string(&index)?
        .lines()
        .map(|l| {
            let (id, len) = l.split_once('\t').ok_or("bad record list")?;
            Ok((id.to_owned(), len.parse()?))
        })
        .collect::<Res<Vec<_>>>()?;
    Ok(Prepared { label: g.label, tax_id: g.tax_id, species: g.species, plain, kraken, records, package })
}

/// The accession in an identifier (`gi|227011820|gb|CP001235.1|` → `CP001235.1`).
fn accession(id: &str) -> String {
    if !id.contains('|') {
        return id.to_owned();
    }
    id.split('|').rev().find(|f| !f.is_empty()).unwrap_or(id).to_owned()
}

/// Hex SHA-256 of files and strings, as a cache key.
pub fn key(parts: &[&[u8]], files: &[&Path]) -> Res<String> {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    for f in files {
        let bytes = fs::read(f).map_err(|e| format!("{}: {e}", f.display()))?;
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    Ok(hex::encode(&h.finalize()[..12]))
}

/// Builds a Kraken 2 database with `kraken2-build` offline into `db` (replacing it): the
/// taxonomy dumps, each genome's `kraken:taxid` FASTA added with `--no-masking`, then
/// `--build` with k = 35, l = 31 and `spaces` spaced-seed positions. The library and
/// `seqid2taxid.map` stay (no `--clean`).
pub fn build_kraken2(db: &Path, taxonomy: &Path, genomes: &[&Prepared], spaces: u32, threads: usize) -> Res<()> {
    let _ = fs::remove_dir_all(db);
    fs::create_dir_all(db.join("taxonomy"))?;
    for f in ["nodes.dmp", "names.dmp"] {
        fs::copy(taxonomy.join(f), db.join("taxonomy").join(f))?;
    }
    for g in genomes {
        run_ok(
            Command::new("kraken2-build")
                .arg("--db")
                .arg(db)
                .arg("--add-to-library")
                .arg(&g.kraken)
                .arg("--no-masking"),
        )?;
    }
    run_ok(
        Command::new("kraken2-build")
            .arg("--db")
            .arg(db)
            .args(["--build", "--threads", &threads.to_string(), "--kmer-len", "35", "--minimizer-len", "31"])
            .args(["--minimizer-spaces", &spaces.to_string()]),
    )?;
    Ok(())
}

/// A Kraken 2 database of `genomes`, built once and kept in the cache.
pub fn cached_kraken2(taxonomy: &Path, genomes: &[&Prepared], spaces: u32) -> Res<PathBuf> {
    let version = require_kraken2()?;
    let dumps = [taxonomy.join("nodes.dmp"), taxonomy.join("names.dmp")];
    let files: Vec<&Path> =
        genomes.iter().map(|g| g.kraken.as_path()).chain(dumps.iter().map(PathBuf::as_path)).collect();
    let k = key(&[version.as_bytes(), &spaces.to_le_bytes()], &files)?;
    let dir = cache("kraken2-dbs")?.join(&k);
    let _lock = lock(&format!("kraken2-{k}"))?;
    if !dir.join("hash.k2d").exists() {
        eprintln!("building a Kraken 2 database of {} genomes in {}", genomes.len(), dir.display());
        let tmp = dir.with_extension("building");
        build_kraken2(&tmp, taxonomy, genomes, spaces, 2)?;
        let _ = fs::remove_dir_all(&dir);
        fs::rename(&tmp, &dir)?;
    }
    Ok(dir)
}

/// Simulated reads of known origin.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Reads (read 1 of pairs).
    pub r1: PathBuf,
    /// Read 2 of pairs.
    pub r2: Option<PathBuf>,
    /// Each read's (pair's) genome, an index into the genomes given.
    pub truth: Vec<u16>,
    /// Reads (pairs) per genome.
    pub reads_per_genome: Vec<u64>,
    /// How they were made.
    pub simulator: String,
}

/// Simulates Illumina reads of `read_len` bases from each genome at its coverage (ART HiSeq 2500
/// when installed, else a built-in simulator), single-end or paired (400-base fragments), and
/// shuffles them (a fixed random order) into one file (two for pairs), reads named `r0`, `r1`,
/// ... (`/1`, `/2` for mates). Cached under `name`, remade when the recipe changes.
pub fn simulate(
    name: &str,
    genomes: &[(&Prepared, f64)],
    paired: bool,
    read_len: usize,
    seed: u64,
    gzip: bool,
) -> Res<Sample> {
    let dir = cache("reads")?.join(name);
    fs::create_dir_all(&dir)?;
    let _lock = lock(&format!("reads-{name}"))?;
    let art = art_version();
    let simulator = match &art {
        Some(v) => format!(
            "ART art_illumina ({v}): -ss HS25 -l {read_len}{} -f COVERAGE -na -rs SEED+i",
            if paired { " -p -m 400 -s 20" } else { "" }
        ),
        None => format!(
            "built-in: uniform positions, both strands, 0.3% substitutions{}",
            if paired { ", 400-base fragments" } else { "" }
        ),
    };
    let mut recipe = format!("{simulator}\nseed {seed}\npaired {paired}\ngzip {gzip}\n");
    for (g, c) in genomes {
        writeln!(recipe, "{} {c} {}", g.label, key(&[], &[&g.plain])?)?;
    }
    let ext = if gzip { "fq.gz" } else { "fq" };
    let r1 = dir.join(format!("reads_1.{ext}"));
    let r2 = paired.then(|| dir.join(format!("reads_2.{ext}")));
    let truth_path = dir.join("truth.tsv");
    if fs::read_to_string(dir.join("recipe.txt")).ok().as_deref() == Some(recipe.as_str())
        && let Ok((truth, reads_per_genome)) = read_truth(&truth_path, genomes.len())
    {
        return Ok(Sample { r1, r2, truth, reads_per_genome, simulator });
    }
    let _ = fs::remove_file(dir.join("recipe.txt"));
    eprintln!("simulating reads into {}", dir.display());
    // Per genome: one or two FASTQ files.
    let mut per_genome: Vec<Vec<PathBuf>> = Vec::new();
    for (i, (g, coverage)) in genomes.iter().enumerate() {
        let prefix = dir.join(format!("g{i}_"));
        let files = if paired {
            vec![PathBuf::from(format!("{}1.fq", prefix.display())), PathBuf::from(format!("{}2.fq", prefix.display()))]
        } else {
            vec![PathBuf::from(format!("{}.fq", prefix.display()))]
        };
        if art.is_some() {
            let mut cmd = Command::new("art_illumina");
            cmd.args(["-ss", "HS25", "-l", &read_len.to_string(), "-na"])
                .args(["-f", &coverage.to_string()])
                .args(["-rs", &(seed + i as u64).to_string()])
                .arg("-i")
                .arg(&g.plain)
                .arg("-o")
                .arg(&prefix);
            if paired {
                cmd.args(["-p", "-m", "400", "-s", "20"]);
            }
            run_ok(&mut cmd)?;
        } else {
            builtin_simulate(&g.plain, &files, *coverage, read_len, seed + i as u64)?;
        }
        per_genome.push(files);
    }
    // Count, then interleave at random in proportion to what is left of each genome.
    let mut left: Vec<u64> = Vec::new();
    for files in &per_genome {
        left.push(BufReader::new(File::open(&files[0])?).lines().count() as u64 / 4);
    }
    let reads_per_genome = left.clone();
    let mut readers: Vec<Vec<BufReader<File>>> = per_genome
        .iter()
        .map(|fs| fs.iter().map(|p| File::open(p).map(BufReader::new)).collect())
        .collect::<Result<_, _>>()?;
    let outputs: Vec<&PathBuf> = std::iter::once(&r1).chain(r2.as_ref()).collect();
    let mut writers: Vec<Box<dyn Write>> = Vec::new();
    for p in &outputs {
        let w = BufWriter::new(File::create(p.with_extension("tmp"))?);
        writers.push(if gzip {
            Box::new(flate2::write::GzEncoder::new(w, flate2::Compression::fast()))
        } else {
            Box::new(w)
        });
    }
    let mut truth_out = BufWriter::new(File::create(&truth_path)?);
    writeln!(truth_out, "read\tgenome")?;
    let mut truth = Vec::new();
    let mut rng = seed;
    let mut total: u64 = left.iter().sum();
    let mut lines = [String::new(), String::new(), String::new(), String::new()];
    while total > 0 {
        rng = mgds_classify::mix64(rng.wrapping_add(0x9e37_79b9_7f4a_7c15));
        let mut pick = rng % total;
        let mut g = 0;
        while pick >= left[g] {
            pick -= left[g];
            g += 1;
        }
        let n = truth.len();
        for (mate, (reader, w)) in readers[g].iter_mut().zip(writers.iter_mut()).enumerate() {
            for l in &mut lines {
                l.clear();
                reader.read_line(l)?;
            }
            let suffix = if paired { format!("/{}", mate + 1) } else { String::new() };
            write!(w, "@r{n}{suffix} {}\n{}+\n{}", genomes[g].0.label, lines[1], lines[3])?;
        }
        writeln!(truth_out, "r{n}\t{g}")?;
        truth.push(g as u16);
        left[g] -= 1;
        total -= 1;
    }
    for w in writers {
        drop(w);
    }
    truth_out.flush()?;
    for p in &outputs {
        fs::rename(p.with_extension("tmp"), p)?;
    }
    for f in per_genome.iter().flatten() {
        let _ = fs::remove_file(f);
    }
    fs::write(dir.join("recipe.txt"), recipe)?;
    Ok(Sample { r1, r2, truth, reads_per_genome, simulator })
}

fn read_truth(path: &Path, genomes: usize) -> Res<(Vec<u16>, Vec<u64>)> {
    let mut truth = Vec::new();
    let mut per = vec![0u64; genomes];
    for line in BufReader::new(File::open(path)?).lines().skip(1) {
        let line = line?;
        let g: u16 = line.split('\t').nth(1).ok_or("bad truth line")?.parse()?;
        *per.get_mut(g as usize).ok_or("unknown genome in truth")? += 1;
        truth.push(g);
    }
    Ok((truth, per))
}

/// A plain simulator for machines without ART.
fn builtin_simulate(fasta: &Path, out: &[PathBuf], coverage: f64, read_len: usize, seed: u64) -> Res<()> {
    let mut seqs: Vec<(String, Vec<u8>)> = Vec::new();
    for line in BufReader::new(File::open(fasta)?).lines() {
        let line = line?;
        if let Some(h) = line.strip_prefix('>') {
            seqs.push((h.split(' ').next().unwrap_or("").to_owned(), Vec::new()));
        } else if let Some(s) = seqs.last_mut() {
            s.1.extend_from_slice(line.trim().as_bytes());
        }
    }
    let mut writers: Vec<BufWriter<File>> =
        out.iter().map(|p| File::create(p).map(BufWriter::new)).collect::<Result<_, _>>()?;
    let mut rng = seed;
    let mut next = || {
        rng = mgds_classify::mix64(rng.wrapping_add(0x9e37_79b9_7f4a_7c15));
        rng
    };
    let qual = "I".repeat(read_len);
    let revcomp = |s: &[u8]| -> Vec<u8> {
        s.iter()
            .rev()
            .map(|b| match b {
                b'A' | b'a' => b'T',
                b'C' | b'c' => b'G',
                b'G' | b'g' => b'C',
                b'T' | b't' => b'A',
                _ => b'N',
            })
            .collect()
    };
    let paired = out.len() == 2;
    let fragment = if paired { 400 } else { read_len };
    for (id, s) in seqs.iter().filter(|s| s.1.len() >= fragment) {
        let reads_per = if paired { 2 * read_len } else { read_len };
        let n = (coverage * s.len() as f64 / reads_per as f64).round() as u64;
        for i in 0..n {
            let start = (next() % (s.len() - fragment + 1) as u64) as usize;
            let mut frag = s[start..start + fragment].to_vec();
            if next() & 1 == 1 {
                frag = revcomp(&frag);
            }
            let mut mates = vec![frag[..read_len].to_vec()];
            if paired {
                mates.push(revcomp(&frag[fragment - read_len..]));
            }
            for (w, mut read) in writers.iter_mut().zip(mates) {
                for b in &mut read {
                    if next() % 1000 < 3 {
                        *b = b"ACGT"[(next() % 4) as usize];
                    }
                }
                writeln!(w, "@{id}-{i}\n{}\n+\n{qual}", String::from_utf8_lossy(&read))?;
            }
        }
    }
    for w in &mut writers {
        w.flush()?;
    }
    Ok(())
}

/// NanoSim-H's release on PyPI: a simulator of Oxford Nanopore reads with error profiles
/// trained on real runs (R7 to R9 chemistry; none for R10).
pub const NANOSIM_H: &str = "nanosim-h==1.1.0.4";

/// `nanosim-h`, installed once from PyPI into a virtual environment in the cache.
pub fn nanosim_h() -> Res<PathBuf> {
    let venv = cache("nanosim-h-1.1.0.4")?;
    let bin = venv.join("bin/nanosim-h");
    let _lock = lock("nanosim-h")?;
    if !bin.exists() {
        eprintln!("installing {NANOSIM_H} from PyPI into {}", venv.display());
        run_ok(Command::new("python3").arg("-m").arg("venv").arg(&venv))
            .map_err(|e| format!("python3 -m venv (install python3-venv): {e}"))?;
        run_ok(Command::new(venv.join("bin/pip")).args(["install", "-q", NANOSIM_H]))?;
    }
    Ok(bin)
}

/// NanoSim-H's `ecoli_R9_1D` profile with its errors made rarer by `error_weight` (below 1),
/// written once into the cache; the profile itself for 1.
///
/// NanoSim-H 1.1.0.4 accepts `-m`, `-i` and `-d` ("weight tuning") but never uses them: the
/// reads are the same whatever they say. Its errors come where a match between two errors
/// ends, the match lengths drawn from two ECDFs (`first_match.hist`, and
/// `match_markov_model`, conditioned on the previous match's length). Stretching every match
/// length of both by `1 / error_weight` (bins and conditions alike) leaves the kinds and
/// lengths of the errors as trained and makes them that much rarer per base. Matches of no base
/// between two errors (the first bin) become matches of a few bases: errors come in tight
/// clusters less often than in the trained profile.
pub fn nanosim_profile(error_weight: f64) -> Res<PathBuf> {
    let venv = nanosim_h()?.parent().and_then(Path::parent).ok_or("the venv of nanosim-h")?.to_owned();
    let lib = fs::read_dir(venv.join("lib"))?
        .flatten()
        .map(|e| e.path().join("site-packages/nanosimh/profiles/ecoli_R9_1D"))
        .find(|p| p.is_dir())
        .ok_or("nanosim-h's ecoli_R9_1D profile is not in its venv")?;
    if error_weight == 1.0 {
        return Ok(lib);
    }
    if !(error_weight > 0.0 && error_weight < 1.0) {
        return Err(format!("an error weight between 0 and 1, not {error_weight}").into());
    }
    // The folder's name changes with the way the profile is written (v1).
    let out = cache(&format!("nanosim-profiles/ecoli_R9_1D-errors-x{error_weight}-v1"))?;
    let _lock = lock("nanosim-profiles")?;
    if out.join("done").exists() {
        return Ok(out);
    }
    let stretch = 1.0 / error_weight;
    let scale = |range: &str| -> Res<String> {
        let (a, b) = range.split_once('-').ok_or_else(|| format!("a bin, not {range:?}"))?;
        let (a, b): (f64, f64) = (a.parse()?, b.parse()?);
        Ok(format!("{}-{}", (a * stretch).round(), (b * stretch).round().max((a * stretch).round() + 1.0)))
    };
    for entry in fs::read_dir(&lib)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        if name != "first_match.hist" && name != "match_markov_model" {
            fs::copy(&path, out.join(&name))?;
            continue;
        }
        // A header of condition bins (the first field a label), then rows whose first field is
        // a match-length bin.
        let mut text = String::new();
        for (n, line) in fs::read_to_string(&path)?.lines().enumerate() {
            let mut fields = line.split('\t');
            let first = fields.next().unwrap_or_default();
            if n == 0 {
                let mut header = vec![first.to_owned()];
                for bin in fields {
                    header.push(if name == "match_markov_model" { scale(bin)? } else { bin.to_owned() });
                }
                text.push_str(&header.join("\t"));
            } else {
                text.push_str(&scale(first)?);
                for f in fields {
                    text.push('\t');
                    text.push_str(f);
                }
            }
            text.push('\n');
        }
        fs::write(out.join(&name), text)?;
    }
    fs::write(out.join("done"), "")?;
    Ok(out)
}

/// Simulated Oxford Nanopore reads: NanoSim-H with its `ecoli_R9_1D` profile, its errors made
/// rarer by `error_weight` ([`nanosim_profile`]; 1: R9 as trained; below 1, standing in for
/// current chemistry), `reads` reads from each genome, shuffled into one FASTA file as
/// [`simulate`] does (reads `r0`, `r1`, ...). Cached under `name`. The simulator's description
/// gives the errors per kbp of the reads, from NanoSim-H's own list of the errors it made.
pub fn simulate_nanopore(name: &str, genomes: &[(&Prepared, u64)], error_weight: f64, seed: u64) -> Res<Sample> {
    let dir = cache("reads")?.join(name);
    fs::create_dir_all(&dir)?;
    let _lock = lock(&format!("reads-{name}"))?;
    let profile = nanosim_profile(error_weight)?;
    let model = if error_weight == 1.0 {
        "profile ecoli_R9_1D as trained".to_owned()
    } else {
        format!(
            "profile ecoli_R9_1D with its match lengths between errors stretched x{:.2} (errors x{error_weight})",
            1.0 / error_weight
        )
    };
    let mut recipe = format!("NanoSim-H 1.1.0.4 (PyPI), {model}, linear genomes\nseed {seed}\n");
    for (g, n) in genomes {
        writeln!(recipe, "{} {n} {}", g.label, key(&[], &[&g.plain])?)?;
    }
    let r1 = dir.join("reads.fa");
    let truth_path = dir.join("truth.tsv");
    let describe = |errors_per_kbp: &str| {
        format!(
            "NanoSim-H 1.1.0.4 (PyPI), {model}, linear genomes: {errors_per_kbp} error events per kbp of read (NanoSim-H's list of its errors over all the reads' bases, random heads and tails included)"
        )
    };
    if let Ok(errors) = fs::read_to_string(dir.join("errors-per-kbp.txt"))
        && fs::read_to_string(dir.join("recipe.txt")).ok().as_deref() == Some(recipe.as_str())
        && let Ok((truth, reads_per_genome)) = read_truth(&truth_path, genomes.len())
    {
        return Ok(Sample { r1, r2: None, truth, reads_per_genome, simulator: describe(errors.trim()) });
    }
    let _ = fs::remove_file(dir.join("recipe.txt"));
    let bin = nanosim_h()?;
    eprintln!("simulating Nanopore reads into {}", dir.display());
    // Two genomes at a time.
    let jobs: Vec<(usize, PathBuf)> = (0..genomes.len()).map(|i| (i, dir.join(format!("g{i}")))).collect();
    for pair in jobs.chunks(2) {
        let children = pair
            .iter()
            .map(|(i, prefix)| {
                Command::new(&bin)
                    .arg("-p")
                    .arg(&profile)
                    .args(["-n", &genomes[*i].1.to_string()])
                    .args(["-s", &(seed + *i as u64 + 1).to_string()])
                    .arg("-o")
                    .arg(prefix)
                    .arg(&genomes[*i].0.plain)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|e| format!("nanosim-h: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        for child in children {
            let out = child.wait_with_output()?;
            if !out.status.success() {
                return Err(format!("nanosim-h failed: {}", String::from_utf8_lossy(&out.stderr)).into());
            }
        }
    }
    let mut per_genome: Vec<Vec<Vec<u8>>> = Vec::new();
    let (mut error_events, mut simulated_bases) = (0u64, 0u64);
    for (_, prefix) in &jobs {
        // A header line, then one line per error.
        let listed = BufReader::new(File::open(format!("{}.errors.txt", prefix.display()))?).lines().count() as u64;
        error_events += listed.saturating_sub(1);
        let fasta = PathBuf::from(format!("{}.fa", prefix.display()));
        let mut seqs: Vec<Vec<u8>> = Vec::new();
        for line in BufReader::new(File::open(&fasta)?).lines() {
            let line = line?;
            if line.starts_with('>') {
                seqs.push(Vec::new());
            } else if let Some(s) = seqs.last_mut() {
                s.extend_from_slice(line.trim().as_bytes());
            }
        }
        seqs.reverse();
        simulated_bases += seqs.iter().map(|s| s.len() as u64).sum::<u64>();
        per_genome.push(seqs);
        for ext in ["fa", "errors.txt", "log"] {
            let _ = fs::remove_file(format!("{}.{ext}", prefix.display()));
        }
    }
    let reads_per_genome: Vec<u64> = per_genome.iter().map(|s| s.len() as u64).collect();
    let mut out = BufWriter::new(File::create(r1.with_extension("tmp"))?);
    let mut truth_out = BufWriter::new(File::create(&truth_path)?);
    writeln!(truth_out, "read\tgenome")?;
    let mut truth = Vec::new();
    let mut rng = seed;
    let mut total: u64 = reads_per_genome.iter().sum();
    while total > 0 {
        rng = mgds_classify::mix64(rng.wrapping_add(0x9e37_79b9_7f4a_7c15));
        let mut pick = rng % total;
        let mut g = 0;
        while pick >= per_genome[g].len() as u64 {
            pick -= per_genome[g].len() as u64;
            g += 1;
        }
        let seq = per_genome[g].pop().expect("a read left");
        let n = truth.len();
        writeln!(out, ">r{n} {}\n{}", genomes[g].0.label, String::from_utf8_lossy(&seq))?;
        writeln!(truth_out, "r{n}\t{g}")?;
        truth.push(g as u16);
        total -= 1;
    }
    out.flush()?;
    drop(out);
    truth_out.flush()?;
    fs::rename(r1.with_extension("tmp"), &r1)?;
    let errors = format!("{:.1}", error_events as f64 * 1000.0 / simulated_bases.max(1) as f64);
    fs::write(dir.join("errors-per-kbp.txt"), &errors)?;
    fs::write(dir.join("recipe.txt"), recipe)?;
    Ok(Sample { r1, r2: None, truth, reads_per_genome, simulator: describe(&errors) })
}

/// Kraken 2's outputs of one run.
pub struct Kraken2Run {
    /// Its per-read output.
    pub output: PathBuf,
    /// Its `--report`.
    pub report: PathBuf,
    /// Its messages.
    pub stderr: String,
}

/// Runs `kraken2` on a sample (`--paired` for pairs) with `extra` options; outputs go to
/// `out_dir` as `NAME.out` and `NAME.report`.
pub fn run_kraken2(db: &Path, sample: &Sample, extra: &[&str], out_dir: &Path, name: &str) -> Res<Kraken2Run> {
    let output = out_dir.join(format!("{name}.out"));
    let report = out_dir.join(format!("{name}.report"));
    let mut cmd = Command::new("kraken2");
    cmd.arg("--db").arg(db).args(extra).arg("--output").arg(&output).arg("--report").arg(&report);
    if let Some(r2) = &sample.r2 {
        cmd.arg("--paired").arg(&sample.r1).arg(r2);
    } else {
        cmd.arg(&sample.r1);
    }
    let out = run_ok(&mut cmd)?;
    Ok(Kraken2Run { output, report, stderr: String::from_utf8_lossy(&out.stderr).into_owned() })
}

/// `(species tax id → reads)` of a sample's truth, for the genomes given.
pub fn reads_per_species(sample: &Sample, genomes: &[&Prepared]) -> HashMap<u64, u64> {
    let mut out = HashMap::new();
    for (g, n) in genomes.iter().zip(&sample.reads_per_genome) {
        *out.entry(g.species).or_default() += n;
    }
    out
}
