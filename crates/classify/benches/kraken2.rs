//! Compares mgds-classify with Kraken 2 on the same real genomes and the same simulated reads.
//!
//! `cargo bench -p mgds-classify --bench kraken2`
//!
//! Sets everything up itself on Debian (as root, with apt):
//! - installs `kraken2` and `art-nextgen-simulation-tools` (ART, `art_illumina`) if missing;
//!   without Kraken 2 its columns are left empty, without ART a simple built-in simulator is
//!   used (both said in the output);
//! - takes real bacterial genomes from Debian example-data packages (`apt-get download` and
//!   `dpkg-deb -x` into `TARGET/kraken2-bench/`, never into the repository);
//! - writes an NCBI `nodes.dmp`/`names.dmp` for the species used and all their ancestors (real
//!   NCBI ids, names, ranks and parents, from a real classification result);
//! - builds both databases from the same FASTA, simulates Illumina reads (ART HiSeq 2500 error
//!   profile, 150 bp, single-end) from genomes in the database, from held-out strains of the
//!   same species and from species absent from the database, into one gzipped FASTQ;
//! - classifies it with both tools at 1 and 2 threads, each as a child process, and prints a
//!   markdown table.
//!
//! Simulated reads are cached between runs (the recipe is checked); both databases are rebuilt
//! every run. `KRAKEN2_BENCH_DIR` overrides the cache folder.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use mgds_classify::{
    BuildInput, ClassifyOptions, DEFAULT_CONFIDENCE, DEFAULT_MIN_HITS, Database, Taxonomy, build, classify,
};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// NCBI taxa (tax id, parent, rank, scientific name) copied from a real classification result
/// (`b50c176668234fe7` of the API fixtures, 2,284 taxa): the species used and every ancestor.
/// Vibrio cholerae and Helicobacter pylori are not among those taxa, so they serve as species
/// absent from the database.
const TAXA: &[(u64, u64, &str, &str)] = &[
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
    (1783272, 2, "no rank", "Terrabacteria group"),
    (1239, 1783272, "phylum", "Firmicutes"),
    (91061, 1239, "class", "Bacilli"),
    (1385, 91061, "order", "Bacillales"),
    (90964, 1385, "family", "Staphylococcaceae"),
    (1279, 90964, "genus", "Staphylococcus"),
    (1280, 1279, "species", "Staphylococcus aureus"),
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    InDb,
    HeldOut,
    Absent,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::InDb => "in database",
            Role::HeldOut => "held-out strain",
            Role::Absent => "species not in database",
        }
    }
}

struct Genome {
    label: &'static str,
    description: &'static str,
    /// Species tax id (0 for a species absent from the taxonomy).
    species: u64,
    role: Role,
    package: &'static str,
    path: &'static str,
    /// Read coverage simulated.
    coverage: f64,
}

const RAGOUT: &str = "usr/share/doc/ragout/examples";
const GENOMES: &[Genome] = &[
    Genome {
        label: "Ecoli_MG1655",
        description: "Escherichia coli K-12 MG1655",
        species: 562,
        role: Role::InDb,
        package: "ragout-examples",
        path: "E.Coli/references/MG1655-K12.fasta.gz",
        coverage: 3.0,
    },
    Genome {
        label: "Saureus_COL",
        description: "Staphylococcus aureus COL",
        species: 1280,
        role: Role::InDb,
        package: "ragout-examples",
        path: "S.Aureus/references/COL.fasta.gz",
        coverage: 3.0,
    },
    Genome {
        label: "Saureus_N315",
        description: "Staphylococcus aureus N315",
        species: 1280,
        role: Role::InDb,
        package: "ragout-examples",
        path: "S.Aureus/references/N315.fasta.gz",
        coverage: 3.0,
    },
    Genome {
        label: "Kpneumoniae_HS11286",
        description: "Klebsiella pneumoniae HS11286 (+3 plasmids)",
        species: 573,
        role: Role::InDb,
        package: "kleborate-examples",
        path: "usr/share/doc/kleborate/examples/data/Klebs_HS11286.fna.xz",
        coverage: 3.0,
    },
    Genome {
        label: "Kpneumoniae_MGH78578",
        description: "Klebsiella pneumoniae MGH 78578 (+3 plasmids)",
        species: 573,
        role: Role::InDb,
        package: "kleborate-examples",
        path: "usr/share/doc/kleborate/examples/data/MGH78578.fna.xz",
        coverage: 3.0,
    },
    Genome {
        label: "Ecoli_536",
        description: "Escherichia coli 536 (UPEC)",
        species: 562,
        role: Role::HeldOut,
        package: "bowtie-examples",
        path: "usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz",
        coverage: 3.0,
    },
    Genome {
        label: "Saureus_RF122",
        description: "Staphylococcus aureus RF122 (bovine)",
        species: 1280,
        role: Role::HeldOut,
        package: "ragout-examples",
        path: "S.Aureus/references/RF122.fasta.gz",
        coverage: 3.0,
    },
    Genome {
        label: "Kpneumoniae_NTUH-K2044",
        description: "Klebsiella pneumoniae NTUH-K2044 (+1 plasmid)",
        species: 573,
        role: Role::HeldOut,
        package: "kleborate-examples",
        path: "usr/share/doc/kleborate/examples/data/NTUH-K2044.fna.xz",
        coverage: 3.0,
    },
    Genome {
        label: "Vcholerae_O395",
        description: "Vibrio cholerae O395",
        species: 0,
        role: Role::Absent,
        package: "ragout-examples",
        path: "V.Cholerae/references/O395.fasta.gz",
        coverage: 1.0,
    },
    Genome {
        label: "Hpylori_G27",
        description: "Helicobacter pylori G27",
        species: 0,
        role: Role::Absent,
        package: "ragout-examples",
        path: "H.Pylori/references/G27.fasta.gz",
        coverage: 1.0,
    },
];

const READ_LEN: usize = 150;
const SEED: u64 = 20_240_611;
const THREADS: [usize; 2] = [1, 2];

fn main() {
    // `cargo bench` passes `--bench`; flags are not ours.
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let outcome =
        if args.first().map(String::as_str) == Some("child-classify") { child_classify(&args[1..]) } else { run() };
    if let Err(e) = outcome {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// `child-classify DB READS THREADS CONFIDENCE OUT`: opens the database and classifies, each
/// timed, and prints `open_secs classify_secs reads`.
fn child_classify(args: &[String]) -> Res<()> {
    let [db, reads, threads, confidence, out] = args else {
        return Err("child-classify DB READS THREADS CONFIDENCE OUT".into());
    };
    let started = Instant::now();
    let db = Database::open(db)?;
    let open_secs = started.elapsed().as_secs_f64();
    let opts =
        ClassifyOptions { threads: threads.parse()?, confidence: confidence.parse()?, ..ClassifyOptions::default() };
    let mut out = BufWriter::new(File::create(out)?);
    let started = Instant::now();
    let results = classify(&db, Path::new(reads), &opts, &mut out)?;
    out.flush()?;
    let classify_secs = started.elapsed().as_secs_f64();
    println!("{open_secs} {classify_secs} {}", results.n_reads);
    Ok(())
}

fn run() -> Res<()> {
    let started = Instant::now();
    let cache = match std::env::var_os("KRAKEN2_BENCH_DIR") {
        Some(dir) => PathBuf::from(dir),
        // TARGET/release/deps/kraken2-HASH
        None => std::env::current_exe()?
            .ancestors()
            .nth(3)
            .ok_or("no target folder above the bench binary")?
            .join("kraken2-bench"),
    };
    fs::create_dir_all(&cache)?;
    let cache = cache.canonicalize()?;
    eprintln!("kraken2 bench: working in {}", cache.display());

    // Tools.
    let mut apt = Apt::default();
    let kraken2 = apt.ensure("kraken2", "kraken2") && which("kraken2-build").is_some();
    let art = apt.ensure("art-nextgen-simulation-tools", "art_illumina");
    let mut notes = Vec::new();
    if !kraken2 {
        notes.push("KRAKEN2 IS NOT AVAILABLE (`apt-get install kraken2` failed): its columns are empty.".to_owned());
    }
    if !art {
        notes.push("ART (art_illumina) is not available: reads come from a simple built-in simulator (uniform positions, 0.3% substitutions) instead of ART's HiSeq 2500 error profile.".to_owned());
    }

    // Genomes.
    let mut packages: Vec<&str> = GENOMES.iter().map(|g| g.package).collect();
    packages.sort_unstable();
    packages.dedup();
    let mut package_versions = Vec::new();
    for pkg in &packages {
        package_versions.push(fetch_package(&cache, pkg)?);
    }
    let genome_dir = cache.join("genomes");
    fs::create_dir_all(&genome_dir)?;
    let mut genome_stats = Vec::new();
    for g in GENOMES {
        genome_stats.push(prepare_genome(&cache, &genome_dir, g)?);
    }

    // Taxonomy.
    let tax_dir = cache.join("taxonomy");
    write_taxonomy(&tax_dir)?;
    let taxonomy = Taxonomy::from_dmp(&tax_dir.join("nodes.dmp"), &tax_dir.join("names.dmp"))?;

    // Reads.
    let reads = cache.join("reads").join("reads.fastq.gz");
    let truth = simulate_reads(&cache.join("reads"), &genome_dir, art)?;

    // Databases.
    let in_db: Vec<usize> = (0..GENOMES.len()).filter(|&i| GENOMES[i].role == Role::InDb).collect();
    let ours_dir = cache.join("mgds");
    fs::create_dir_all(&ours_dir)?;
    let mut map = String::new();
    for &i in &in_db {
        for id in &genome_stats[i].seq_ids {
            writeln!(map, "{id}\t{}\t{}", GENOMES[i].species, GENOMES[i].label)?;
        }
    }
    fs::write(ours_dir.join("seqid2taxid.tsv"), map)?;
    let ours_db = ours_dir.join("bench.mgdsdb");
    let _ = fs::remove_file(&ours_db);
    eprintln!("building the mgds database");
    let report = build(
        &BuildInput {
            references: in_db.iter().map(|&i| genome_path(&genome_dir, i)).collect(),
            seqid2taxid: ours_dir.join("seqid2taxid.tsv"),
            nodes: tax_dir.join("nodes.dmp"),
            names: tax_dir.join("names.dmp"),
        },
        &ours_db,
    )?;

    let k2_db = cache.join("kraken2-db");
    let k2_build = if kraken2 {
        eprintln!("building the Kraken 2 database");
        Some(build_kraken2(&k2_db, &tax_dir, &genome_dir, &in_db, 7)?)
    } else {
        None
    };

    // Classification.
    let out_dir = cache.join("out");
    fs::create_dir_all(&out_dir)?;
    let exe = std::env::current_exe()?;
    let repeats: usize = match std::env::var("BENCH_REPEATS") {
        Ok(n) => n.parse()?,
        Err(_) => 2,
    };
    let load_before = load_average();
    let mut ours_runs = Vec::new();
    let mut k2_runs = Vec::new();
    for threads in THREADS {
        let (mut ours, mut k2) = (Vec::new(), Vec::new());
        // Alternate the tools, so that a busy spell on a shared machine is shared too.
        for _ in 0..repeats.max(1) {
            eprintln!("classifying with mgds, {threads} thread(s)");
            ours.push(run_ours(&exe, &ours_db, &reads, threads, DEFAULT_CONFIDENCE, &out_dir)?);
            if kraken2 {
                eprintln!("classifying with Kraken 2, {threads} thread(s)");
                k2.push(run_kraken2(&k2_db, &reads, threads, 0.0, &out_dir)?);
            }
        }
        ours_runs.push(fastest(ours));
        if kraken2 {
            k2_runs.push(fastest(k2));
        }
    }
    let load_after = load_average();
    // Both tools at confidence 0 (Kraken 2's default) and at 0.1, for accuracy only (2 threads;
    // calls do not depend on the thread count). mgds's default run is reused for its own value.
    let ours_at = |confidence: f64| -> Res<Scores> {
        let output = if confidence == DEFAULT_CONFIDENCE {
            ours_runs[0].output.clone()
        } else {
            eprintln!("classifying with mgds at confidence {confidence}");
            run_ours(&exe, &ours_db, &reads, 2, confidence, &out_dir)?.output
        };
        score_ours(&output, &truth, &taxonomy)
    };
    let ours_acc_c0 = ours_at(0.0)?;
    let ours_acc_c01 = ours_at(0.1)?;
    eprintln!("classifying with Kraken 2 at confidence 0.1");
    let k2_c01 = if kraken2 { Some(run_kraken2(&k2_db, &reads, 2, 0.1, &out_dir)?) } else { None };

    let ours_acc = score_ours(&ours_runs[0].output, &truth, &taxonomy)?;
    let k2_acc = match k2_runs.first() {
        Some(run) => Some(score_kraken2(&run.output, &truth, &taxonomy)?),
        None => None,
    };
    let k2_acc_c01 = match &k2_c01 {
        Some(run) => Some(score_kraken2(&run.output, &truth, &taxonomy)?),
        None => None,
    };

    // Kraken 2 without its spaced seed: the same exact 31-mer minimizers as mgds.
    let mut unspaced = None;
    if kraken2 {
        eprintln!("building and running Kraken 2 with --minimizer-spaces 0");
        let db = cache.join("kraken2-db-unspaced");
        let b = build_kraken2(&db, &tax_dir, &genome_dir, &in_db, 0)?;
        let c0 = run_kraken2(&db, &reads, 2, 0.0, &out_dir)?;
        let c01 = run_kraken2(&db, &reads, 2, 0.1, &out_dir)?;
        let acc0 = score_kraken2(&c0.output, &truth, &taxonomy)?;
        let acc01 = score_kraken2(&c01.output, &truth, &taxonomy)?;
        unspaced = Some((b, c0, acc0, acc01));
    }

    // Report.
    print_inputs(&package_versions, &genome_stats, &truth, art, kraken2, &report)?;
    for note in &notes {
        println!("**{note}**\n");
    }
    let mut rows = Vec::new();
    rows.push(Row::info(
        "spaced seed (minimizer positions ignored; Kraken 2's --minimizer-spaces)",
        report.spaces as f64,
        kraken2.then_some(7.0),
        0,
    ));
    rows.push(Row::info("database build time (s, 1 thread)", report.seconds, k2_build.as_ref().map(|b| b.seconds), 2));
    rows.push(Row::info(
        "database size on disk (MB)",
        report.bytes as f64 / 1e6,
        k2_build.as_ref().map(|b| b.bytes as f64 / 1e6),
        1,
    ));
    for (i, threads) in THREADS.into_iter().enumerate() {
        let o = &ours_runs[i];
        let k = k2_runs.get(i);
        rows.push(Row::higher(
            &format!("reads/s, {threads} thread(s), classification only (excl. DB load)"),
            o.reads as f64 / o.classify_secs,
            k.map(|k| k.reads as f64 / k.classify_secs),
            0,
            "≥ Kraken 2",
        ));
    }
    for (i, threads) in THREADS.into_iter().enumerate() {
        let o = &ours_runs[i];
        let k = k2_runs.get(i);
        rows.push(Row::info(
            &format!("reads/s, {threads} thread(s), whole process (incl. DB load)"),
            o.reads as f64 / o.wall_secs,
            k.map(|k| k.reads as f64 / k.wall_secs),
            0,
        ));
    }
    rows.push(Row::info(
        "database load time (s, 1-thread run)",
        ours_runs[0].load_secs,
        k2_runs.first().map(|k| k.load_secs),
        2,
    ));
    for (i, threads) in THREADS.into_iter().enumerate() {
        rows.push(Row::info(
            &format!("peak memory, {threads} thread(s) (MB, VmHWM)"),
            ours_runs[i].peak_kb as f64 / 1024.0,
            k2_runs.get(i).map(|k| k.peak_kb as f64 / 1024.0),
            0,
        ));
    }
    accuracy_rows(
        &mut rows,
        &ours_acc,
        k2_acc.as_ref(),
        &format!("each tool's default confidence: mgds {DEFAULT_CONFIDENCE}, Kraken 2 0"),
    );
    print_table(&rows, kraken2);

    if DEFAULT_CONFIDENCE != 0.0 {
        println!(
            "\nSpecies-level accuracy with the confidence thresholds swapped (calls do not depend on the thread count):\n"
        );
        let mut rows = Vec::new();
        accuracy_rows(
            &mut rows,
            &ours_acc_c0,
            k2_acc_c01.as_ref(),
            &format!("mgds at 0, Kraken 2 at {DEFAULT_CONFIDENCE}"),
        );
        print_table(&rows, kraken2);
    }
    let mut same = Vec::new();
    accuracy_rows(&mut same, &ours_acc_c01, k2_acc_c01.as_ref(), "both at confidence 0.1");
    accuracy_rows(&mut same, &ours_acc_c0, k2_acc.as_ref(), "both at confidence 0");
    println!("\nSpecies-level accuracy at the same confidence threshold:\n");
    print_table(&same, kraken2);

    if let Some((b, run, acc0, acc01)) = &unspaced {
        println!(
            "\nAgainst Kraken 2 built with `--minimizer-spaces 0` (no spaced seed: exact 31-mer minimizers; mgds with its spaced seed of {} spaces; 2 threads):\n",
            report.spaces
        );
        let mut rows = vec![
            Row::info("database build time (s, 1 thread)", report.seconds, Some(b.seconds), 2),
            Row::info("database size on disk (MB)", report.bytes as f64 / 1e6, Some(b.bytes as f64 / 1e6), 1),
            Row::higher(
                &format!("reads/s, 2 thread(s), classification only (mgds at {DEFAULT_CONFIDENCE}, Kraken 2 at 0)"),
                ours_runs[1].reads as f64 / ours_runs[1].classify_secs,
                Some(run.reads as f64 / run.classify_secs),
                0,
                "≥ Kraken 2",
            ),
        ];
        accuracy_rows(&mut rows, &ours_acc_c01, Some(acc01), "both at confidence 0.1");
        accuracy_rows(&mut rows, &ours_acc_c0, Some(acc0), "both at confidence 0");
        print_table(&rows, kraken2);
    }

    print_definitions(&ours_runs, &k2_runs, repeats, &load_before, &load_after);
    println!("\nBench run time: {:.0} s (including setup).", started.elapsed().as_secs_f64());
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Tools and packages

#[derive(Default)]
struct Apt {
    updated: bool,
}

impl Apt {
    /// Installs `package` unless `binary` is on the PATH; true if `binary` is there afterwards.
    fn ensure(&mut self, package: &str, binary: &str) -> bool {
        if which(binary).is_some() {
            return true;
        }
        eprintln!("{binary} not found: installing the Debian package {package}");
        if !self.updated {
            self.updated = true;
            let _ = Command::new("apt-get").args(["update", "-q"]).stdout(Stdio::null()).status();
        }
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
}

fn which(binary: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(binary)).find(|p| p.is_file())
}

fn run_ok(cmd: &mut Command) -> Res<std::process::Output> {
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

/// Downloads and unpacks a Debian package into `cache/packages/PKG/` (once); returns
/// `PKG VERSION`.
fn fetch_package(cache: &Path, pkg: &str) -> Res<String> {
    let debs = cache.join("debs");
    let dir = cache.join("packages").join(pkg);
    fs::create_dir_all(&debs)?;
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
            eprintln!("downloading {pkg}");
            run_ok(Command::new("apt-get").args(["download", "-q", pkg]).current_dir(&debs))
                .map_err(|e| format!("apt-get download {pkg}: {e}"))?;
            find_deb()?.ok_or(format!("apt-get download {pkg} left no .deb"))?
        }
    };
    if !dir.join(".unpacked").exists() {
        fs::create_dir_all(&dir)?;
        run_ok(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&dir))?;
        fs::write(dir.join(".unpacked"), "")?;
    }
    let name = deb.file_name().and_then(|n| n.to_str()).unwrap_or(pkg);
    let version = name.split('_').nth(1).unwrap_or("?").replace("%3a", ":");
    Ok(format!("{pkg} {version}"))
}

// ---------------------------------------------------------------------------------------------
// Genomes, taxonomy, reads

struct GenomeStats {
    seq_ids: Vec<String>,
    bases: u64,
}

fn genome_path(dir: &Path, i: usize) -> PathBuf {
    dir.join(format!("{}.fa", GENOMES[i].label))
}

/// Writes the genome as FASTA with headers `LABEL_N|kraken:taxid|TAXID` (both tools read the
/// same file) and returns its sequence ids and length.
fn prepare_genome(cache: &Path, genome_dir: &Path, g: &Genome) -> Res<GenomeStats> {
    let pkg_dir = cache.join("packages").join(g.package);
    let source = if g.path.starts_with("usr/") { pkg_dir.join(g.path) } else { pkg_dir.join(RAGOUT).join(g.path) };
    let text: Box<dyn Read> = if g.path.ends_with(".xz") {
        let out = run_ok(Command::new("xz").arg("-dc").arg(&source))?;
        Box::new(std::io::Cursor::new(out.stdout))
    } else {
        Box::new(MultiGzDecoder::new(File::open(&source).map_err(|e| format!("{}: {e}", source.display()))?))
    };
    let out_path = genome_dir.join(format!("{}.fa", g.label));
    let mut out = BufWriter::new(File::create(&out_path)?);
    let mut stats = GenomeStats { seq_ids: Vec::new(), bases: 0 };
    for line in BufReader::new(text).lines() {
        let line = line?;
        if let Some(header) = line.strip_prefix('>') {
            let id = if g.species == 0 {
                format!("{}_{}", g.label, stats.seq_ids.len() + 1)
            } else {
                format!("{}_{}|kraken:taxid|{}", g.label, stats.seq_ids.len() + 1, g.species)
            };
            writeln!(out, ">{id} {}", header.trim())?;
            stats.seq_ids.push(id);
        } else {
            let line = line.trim();
            stats.bases += line.len() as u64;
            writeln!(out, "{line}")?;
        }
    }
    out.flush()?;
    Ok(stats)
}

fn write_taxonomy(dir: &Path) -> Res<()> {
    fs::create_dir_all(dir)?;
    let ids: HashMap<u64, u64> = TAXA.iter().map(|t| (t.0, t.1)).collect();
    // Every species used must reach the root through taxa in the table.
    for g in GENOMES.iter().filter(|g| g.species != 0) {
        let mut id = g.species;
        while id != 1 {
            id = *ids.get(&id).ok_or(format!("tax id {id} (above {}) is missing", g.species))?;
        }
    }
    let (mut nodes, mut names) = (String::new(), String::new());
    for &(id, parent, rank, name) in TAXA {
        writeln!(nodes, "{id}\t|\t{parent}\t|\t{rank}\t|")?;
        writeln!(names, "{id}\t|\t{name}\t|\t\t|\tscientific name\t|")?;
    }
    fs::write(dir.join("nodes.dmp"), nodes)?;
    fs::write(dir.join("names.dmp"), names)?;
    Ok(())
}

/// Truth of each read, in file order (read `rN` is entry N).
struct Truth {
    genome: Vec<u8>,
    reads_per_genome: Vec<u64>,
    simulator: String,
}

/// Simulates reads from every genome and interleaves them (in a fixed random order) into
/// `dir/reads.fastq.gz`, named `r0`, `r1`, ...; reuses them if the recipe is unchanged.
fn simulate_reads(dir: &Path, genome_dir: &Path, art: bool) -> Res<Truth> {
    fs::create_dir_all(dir)?;
    let simulator = if art {
        let out = Command::new("art_illumina").output()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let version = text.lines().find(|l| l.contains("Version")).map(|l| l.trim().to_owned()).unwrap_or_default();
        format!("ART art_illumina ({version}): -ss HS25 -l {READ_LEN} -f COVERAGE -na -rs SEED+i, single-end")
    } else {
        "built-in: uniform positions, both strands, 0.3% substitutions".to_owned()
    };
    let mut recipe = format!("{simulator}\nseed {SEED}\n");
    for g in GENOMES {
        writeln!(recipe, "{} {} {}", g.label, g.coverage, g.path)?;
    }
    let truth_path = dir.join("truth.tsv");
    let reads_path = dir.join("reads.fastq.gz");
    if fs::read_to_string(dir.join("recipe.txt")).ok().as_deref() == Some(recipe.as_str())
        && reads_path.exists()
        && let Ok(truth) = read_truth(&truth_path, simulator.clone())
    {
        eprintln!("reusing simulated reads in {}", dir.display());
        return Ok(truth);
    }
    let _ = fs::remove_file(dir.join("recipe.txt"));

    let mut per_genome = Vec::new();
    for (i, g) in GENOMES.iter().enumerate() {
        let fq = dir.join(format!("{}.fq", g.label));
        eprintln!("simulating reads from {}", g.label);
        if art {
            run_ok(
                Command::new("art_illumina")
                    .args(["-ss", "HS25", "-l", &READ_LEN.to_string(), "-na"])
                    .args(["-f", &g.coverage.to_string()])
                    .args(["-rs", &(SEED + i as u64).to_string()])
                    .arg("-i")
                    .arg(genome_path(genome_dir, i))
                    .arg("-o")
                    .arg(dir.join(g.label)),
            )?;
        } else {
            builtin_simulate(&genome_path(genome_dir, i), &fq, g.coverage, SEED + i as u64)?;
        }
        per_genome.push(fq);
    }

    // Count, then interleave at random in proportion to what is left in each file.
    let mut left: Vec<u64> = Vec::new();
    for fq in &per_genome {
        let n = BufReader::new(File::open(fq)?).lines().count() as u64 / 4;
        left.push(n);
    }
    let reads_per_genome = left.clone();
    let mut readers: Vec<_> = per_genome.iter().map(|p| File::open(p).map(BufReader::new)).collect::<Result<_, _>>()?;
    let mut gz = GzEncoder::new(BufWriter::new(File::create(&reads_path)?), flate2::Compression::default());
    let mut truth_out = BufWriter::new(File::create(&truth_path)?);
    writeln!(truth_out, "read\tgenome")?;
    let mut genome = Vec::new();
    let mut rng = SEED;
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
        for l in &mut lines {
            l.clear();
            readers[g].read_line(l)?;
        }
        let n = genome.len();
        write!(gz, "@r{n} {}\n{}+\n{}", GENOMES[g].label, lines[1], lines[3])?;
        writeln!(truth_out, "r{n}\t{}", GENOMES[g].label)?;
        genome.push(g as u8);
        left[g] -= 1;
        total -= 1;
    }
    gz.finish()?.flush()?;
    truth_out.flush()?;
    for fq in &per_genome {
        let _ = fs::remove_file(fq);
    }
    fs::write(dir.join("recipe.txt"), recipe)?;
    Ok(Truth { genome, reads_per_genome, simulator })
}

fn read_truth(path: &Path, simulator: String) -> Res<Truth> {
    let index: HashMap<&str, u8> = GENOMES.iter().enumerate().map(|(i, g)| (g.label, i as u8)).collect();
    let mut genome = Vec::new();
    let mut reads_per_genome = vec![0u64; GENOMES.len()];
    for line in BufReader::new(File::open(path)?).lines().skip(1) {
        let line = line?;
        let label = line.split('\t').nth(1).ok_or("bad truth line")?;
        let g = *index.get(label).ok_or("unknown genome in truth")?;
        reads_per_genome[g as usize] += 1;
        genome.push(g);
    }
    Ok(Truth { genome, reads_per_genome, simulator })
}

/// A plain simulator for machines without ART.
fn builtin_simulate(fasta: &Path, out: &Path, coverage: f64, seed: u64) -> Res<()> {
    let mut seqs: Vec<Vec<u8>> = Vec::new();
    for line in BufReader::new(File::open(fasta)?).lines() {
        let line = line?;
        if line.starts_with('>') {
            seqs.push(Vec::new());
        } else if let Some(s) = seqs.last_mut() {
            s.extend_from_slice(line.trim().as_bytes());
        }
    }
    let mut w = BufWriter::new(File::create(out)?);
    let mut rng = seed;
    let mut next = || {
        rng = mgds_classify::mix64(rng.wrapping_add(0x9e37_79b9_7f4a_7c15));
        rng
    };
    let qual = "I".repeat(READ_LEN);
    for s in seqs.iter().filter(|s| s.len() >= READ_LEN) {
        let n = (coverage * s.len() as f64 / READ_LEN as f64).round() as u64;
        for _ in 0..n {
            let start = (next() % (s.len() - READ_LEN + 1) as u64) as usize;
            let mut read = s[start..start + READ_LEN].to_vec();
            if next() & 1 == 1 {
                read = read
                    .iter()
                    .rev()
                    .map(|b| match b {
                        b'A' | b'a' => b'T',
                        b'C' | b'c' => b'G',
                        b'G' | b'g' => b'C',
                        b'T' | b't' => b'A',
                        _ => b'N',
                    })
                    .collect();
            }
            for b in &mut read {
                if next() % 1000 < 3 {
                    *b = b"ACGT"[(next() % 4) as usize];
                }
            }
            writeln!(w, "@x\n{}\n+\n{qual}", String::from_utf8_lossy(&read))?;
        }
    }
    w.flush()?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Building and running the tools

struct K2Build {
    seconds: f64,
    bytes: u64,
}

fn build_kraken2(db: &Path, tax_dir: &Path, genome_dir: &Path, in_db: &[usize], minimizer_spaces: u32) -> Res<K2Build> {
    let _ = fs::remove_dir_all(db);
    fs::create_dir_all(db.join("taxonomy"))?;
    for f in ["nodes.dmp", "names.dmp"] {
        fs::copy(tax_dir.join(f), db.join("taxonomy").join(f))?;
    }
    let started = Instant::now();
    for &i in in_db {
        run_ok(
            Command::new("kraken2-build")
                .arg("--db")
                .arg(db)
                .arg("--add-to-library")
                .arg(genome_path(genome_dir, i))
                .arg("--no-masking"),
        )?;
    }
    run_ok(
        Command::new("kraken2-build")
            .arg("--db")
            .arg(db)
            .args(["--build", "--threads", "1", "--kmer-len", "35", "--minimizer-len", "31"])
            .args(["--minimizer-spaces", &minimizer_spaces.to_string()]),
    )?;
    let seconds = started.elapsed().as_secs_f64();
    let mut bytes = 0;
    for f in ["hash.k2d", "opts.k2d", "taxo.k2d"] {
        bytes += fs::metadata(db.join(f))?.len();
    }
    Ok(K2Build { seconds, bytes })
}

struct Measured {
    wall_secs: f64,
    peak_kb: u64,
    stdout: String,
    stderr: String,
}

/// Runs a child process, polling its VmHWM (peak resident memory) every 10 ms.
fn measure(cmd: &mut Command) -> Res<Measured> {
    let started = Instant::now();
    let mut child =
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(|e| format!("could not run {cmd:?}: {e}"))?;
    let status_path = format!("/proc/{}/status", child.id());
    // Read the pipes on threads so that the child never blocks on a full pipe.
    let mut out_pipe = child.stdout.take().ok_or("no stdout")?;
    let mut err_pipe = child.stderr.take().ok_or("no stderr")?;
    let out_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out_pipe.read_to_string(&mut s);
        s
    });
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        s
    });
    let mut peak_kb = 0;
    let status = loop {
        if let Some(kb) = fs::read_to_string(&status_path).ok().and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        }) {
            peak_kb = peak_kb.max(kb);
        }
        if let Some(status) = child.try_wait()? {
            break status;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let wall_secs = started.elapsed().as_secs_f64();
    let stdout = out_thread.join().unwrap_or_default();
    let stderr = err_thread.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("{cmd:?} failed ({status}):\n{stdout}{stderr}").into());
    }
    Ok(Measured { wall_secs, peak_kb, stdout, stderr })
}

/// The run with the shortest classification time.
fn fastest(runs: Vec<Run>) -> Run {
    runs.into_iter().min_by(|a, b| a.classify_secs.total_cmp(&b.classify_secs)).expect("at least one run")
}

fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

struct Run {
    wall_secs: f64,
    classify_secs: f64,
    load_secs: f64,
    peak_kb: u64,
    reads: u64,
    output: PathBuf,
}

fn run_ours(exe: &Path, db: &Path, reads: &Path, threads: usize, confidence: f64, out_dir: &Path) -> Res<Run> {
    let output = out_dir.join(format!("mgds_t{threads}_c{confidence}.tsv.gz"));
    let m = measure(
        Command::new(exe)
            .arg("child-classify")
            .arg(db)
            .arg(reads)
            .arg(threads.to_string())
            .arg(confidence.to_string())
            .arg(&output),
    )?;
    let f: Vec<&str> = m.stdout.split_whitespace().collect();
    let [open, secs, n] = f[..] else {
        return Err(format!("unexpected child output: {}", m.stdout).into());
    };
    Ok(Run {
        wall_secs: m.wall_secs,
        classify_secs: secs.parse()?,
        load_secs: open.parse()?,
        peak_kb: m.peak_kb,
        reads: n.parse()?,
        output,
    })
}

fn run_kraken2(db: &Path, reads: &Path, threads: usize, confidence: f64, out_dir: &Path) -> Res<Run> {
    let output = out_dir.join(format!("kraken2_t{threads}_c{confidence}.out"));
    let report = out_dir.join(format!("kraken2_t{threads}_c{confidence}.report"));
    let m = measure(
        Command::new("kraken2")
            .arg("--db")
            .arg(db)
            .args(["--threads", &threads.to_string()])
            .args(["--confidence", &confidence.to_string()])
            .arg("--gzip-compressed")
            .arg("--output")
            .arg(&output)
            .arg("--report")
            .arg(&report)
            .arg(reads),
    )?;
    // "N sequences (X Mbp) processed in T s (...)": Kraken 2's own timing, after the load.
    let line = m
        .stderr
        .lines()
        .find(|l| l.contains("processed in"))
        .ok_or_else(|| format!("no timing in Kraken 2's messages:\n{}", m.stderr))?;
    let n: u64 = line.split_whitespace().next().ok_or("timing line")?.parse()?;
    let secs: f64 =
        line.split("processed in ").nth(1).and_then(|s| s.split('s').next()).ok_or("timing line")?.trim().parse()?;
    Ok(Run {
        wall_secs: m.wall_secs,
        classify_secs: secs,
        load_secs: m.wall_secs - secs,
        peak_kb: m.peak_kb,
        reads: n,
        output,
    })
}

// ---------------------------------------------------------------------------------------------
// Accuracy

/// Per role: reads, reads with a call at species level or below, correct species calls.
#[derive(Default, Clone, Copy)]
struct Score {
    reads: u64,
    species_calls: u64,
    correct: u64,
}

type Scores = [Score; 3];

fn role_index(role: Role) -> usize {
    match role {
        Role::InDb => 0,
        Role::HeldOut => 1,
        Role::Absent => 2,
    }
}

fn add_call(scores: &mut Scores, truth: &Truth, read: usize, tax_id: u64, taxonomy: &Taxonomy) {
    let g = &GENOMES[truth.genome[read] as usize];
    let s = &mut scores[role_index(g.role)];
    s.reads += 1;
    if tax_id == 0 {
        return;
    }
    let species =
        taxonomy.index_of(tax_id).and_then(|i| taxonomy.ancestor_at_rank(i, "species")).map(|i| taxonomy.tax_id(i));
    if let Some(species) = species {
        s.species_calls += 1;
        s.correct += u64::from(species == g.species);
    }
}

fn score_ours(path: &Path, truth: &Truth, taxonomy: &Taxonomy) -> Res<Scores> {
    let mut scores = Scores::default();
    let reader = BufReader::new(MultiGzDecoder::new(File::open(path)?));
    let mut n = 0;
    for line in reader.lines().skip(1) {
        let line = line?;
        let f: Vec<&str> = line.split('\t').collect();
        // A call that did not pass the minimum-hits filter is unclassified.
        let tax_id = if f.get(3) == Some(&"T") { f[0].parse()? } else { 0 };
        add_call(&mut scores, truth, n, tax_id, taxonomy);
        n += 1;
    }
    if n != truth.genome.len() {
        return Err(format!("{}: {n} reads, expected {}", path.display(), truth.genome.len()).into());
    }
    Ok(scores)
}

fn score_kraken2(path: &Path, truth: &Truth, taxonomy: &Taxonomy) -> Res<Scores> {
    let mut scores = Scores::default();
    let mut n = 0;
    for line in BufReader::new(File::open(path)?).lines() {
        let line = line?;
        let f: Vec<&str> = line.split('\t').collect();
        let read: usize = f.get(1).and_then(|r| r.strip_prefix('r')).ok_or("Kraken 2 output: read name")?.parse()?;
        let tax_id: u64 = f.get(2).ok_or("Kraken 2 output: tax id")?.parse()?;
        add_call(&mut scores, truth, read, tax_id, taxonomy);
        n += 1;
    }
    if n != truth.genome.len() {
        return Err(format!("{}: {n} reads, expected {}", path.display(), truth.genome.len()).into());
    }
    Ok(scores)
}

fn accuracy_rows(rows: &mut Vec<Row>, ours: &Scores, k2: Option<&Scores>, setting: &str) {
    let precision = |s: &Score| s.correct as f64 / s.species_calls.max(1) as f64;
    let recall = |s: &Score| s.correct as f64 / s.reads.max(1) as f64;
    for role in [Role::InDb, Role::HeldOut] {
        let i = role_index(role);
        rows.push(Row::higher(
            &format!("species precision, {} reads ({setting})", role.name()),
            precision(&ours[i]),
            k2.map(|k| precision(&k[i])),
            4,
            "≥ Kraken 2",
        ));
        rows.push(Row::higher(
            &format!("species recall, {} reads ({setting})", role.name()),
            recall(&ours[i]),
            k2.map(|k| recall(&k[i])),
            4,
            "≥ Kraken 2",
        ));
    }
    let i = role_index(Role::Absent);
    rows.push(Row::lower(
        &format!("share of reads of species not in the database given a species ({setting})"),
        ours[i].species_calls as f64 / ours[i].reads.max(1) as f64,
        k2.map(|k| k[i].species_calls as f64 / k[i].reads.max(1) as f64),
        4,
        "≤ Kraken 2",
    ));
}

// ---------------------------------------------------------------------------------------------
// Output

#[derive(Clone, Copy, PartialEq, Eq)]
enum Better {
    Higher,
    Lower,
    Info,
}

struct Row {
    measure: String,
    ours: f64,
    k2: Option<f64>,
    decimals: usize,
    better: Better,
    target: &'static str,
}

impl Row {
    fn info(measure: &str, ours: f64, k2: Option<f64>, decimals: usize) -> Row {
        Row { measure: measure.to_owned(), ours, k2, decimals, better: Better::Info, target: "— (information)" }
    }

    fn higher(measure: &str, ours: f64, k2: Option<f64>, decimals: usize, target: &'static str) -> Row {
        Row { better: Better::Higher, target, ..Row::info(measure, ours, k2, decimals) }
    }

    fn lower(measure: &str, ours: f64, k2: Option<f64>, decimals: usize, target: &'static str) -> Row {
        Row { better: Better::Lower, target, ..Row::info(measure, ours, k2, decimals) }
    }
}

fn print_table(rows: &[Row], kraken2: bool) {
    println!("| measure | mgds | Kraken 2 | ratio mgds / Kraken 2 | target | met |");
    println!("|---|---|---|---|---|---|");
    for r in rows {
        let d = r.decimals;
        let k2 = r.k2.map_or("n/a".to_owned(), |k| format!("{k:.d$}"));
        let ratio = match r.k2 {
            Some(k) if k != 0.0 => format!("{:.2}", r.ours / k),
            _ => "n/a".to_owned(),
        };
        // Compared at the precision printed, so that a tie looks like one.
        let round = |x: f64| (x * 10f64.powi(d as i32)).round();
        let met = match (r.better, r.k2) {
            (Better::Info, _) => "—",
            (_, None) => "n/a",
            (Better::Higher, Some(k)) if round(r.ours) >= round(k) => "met",
            (Better::Lower, Some(k)) if round(r.ours) <= round(k) => "met",
            _ => "NOT MET",
        };
        let target = if kraken2 || r.better == Better::Info { r.target } else { "n/a (no Kraken 2)" };
        println!("| {} | {:.d$} | {k2} | {ratio} | {target} | {met} |", r.measure, r.ours);
    }
}

fn print_inputs(
    packages: &[String],
    stats: &[GenomeStats],
    truth: &Truth,
    art: bool,
    kraken2: bool,
    report: &mgds_classify::BuildReport,
) -> Res<()> {
    let version = |cmd: &str, arg: &str| -> String {
        Command::new(cmd)
            .arg(arg)
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").trim().to_owned())
            .unwrap_or_default()
    };
    println!("# mgds-classify vs Kraken 2\n");
    println!(
        "- mgds-classify {} (release build), k = {}, l = {}, spaced seed of {} spaces (Kraken 2's mask), default confidence {DEFAULT_CONFIDENCE}, minimum hit groups {DEFAULT_MIN_HITS}",
        mgds_classify::ENGINE_VERSION,
        report.k,
        report.l,
        report.spaces
    );
    if kraken2 {
        println!(
            "- {} (Debian package), k = 35, l = 31, Kraken 2's default spaced seed (7 spaces), default confidence 0, minimum hit groups 2; built with --no-masking (mgds does not mask low-complexity sequence either)",
            version("kraken2", "--version")
        );
    } else {
        println!("- Kraken 2: NOT AVAILABLE");
    }
    println!("- reads: {}{}", truth.simulator, if art { "" } else { " (ART missing)" });
    println!("- genomes from Debian example-data packages: {}", packages.join(", "));
    println!(
        "- taxonomy: {} NCBI taxa (the 3 species and all their ancestors), real ids/names/ranks/parents",
        TAXA.len()
    );
    println!("- machine: {} CPU(s); wall times", std::thread::available_parallelism().map_or(0, |n| n.get()));
    println!();
    println!("| genome | role | NCBI species | sequences | bases | reads | coverage |");
    println!("|---|---|---|---|---|---|---|");
    for (i, g) in GENOMES.iter().enumerate() {
        let species = match g.species {
            0 => "— (not in taxonomy)".to_owned(),
            id => format!("{id} {}", TAXA.iter().find(|t| t.0 == id).map_or("", |t| t.3)),
        };
        println!(
            "| {} ({}, {}) | {} | {species} | {} | {} | {} | {}x |",
            g.label,
            g.description,
            g.package,
            g.role.name(),
            stats[i].seq_ids.len(),
            stats[i].bases,
            truth.reads_per_genome[i],
            g.coverage
        );
    }
    let by_role = |role: Role| -> u64 {
        (0..GENOMES.len()).filter(|&i| GENOMES[i].role == role).map(|i| truth.reads_per_genome[i]).sum()
    };
    println!(
        "\nDatabase: the {} in-database genomes ({} sequences, {} bases; mgds: {} minimizers, {} taxa). Reads: {} of {READ_LEN} bp in one gzipped FASTQ ({} from in-database genomes, {} from held-out strains, {} from species not in the database); the same file is given to both tools.\n",
        GENOMES.iter().filter(|g| g.role == Role::InDb).count(),
        report.sequences,
        report.bases,
        report.kmers,
        report.taxa,
        truth.genome.len(),
        by_role(Role::InDb),
        by_role(Role::HeldOut),
        by_role(Role::Absent),
    );
    println!(
        "Held-out strains: one per species, a second strain of a species whose other strain(s) are in the database (E. coli 536 vs K-12 MG1655; S. aureus RF122 vs COL and N315; K. pneumoniae NTUH-K2044 vs HS11286 and MGH 78578).\n"
    );
    Ok(())
}

fn print_definitions(ours: &[Run], k2: &[Run], repeats: usize, before: &str, after: &str) {
    println!("\nDefinitions and what is timed:\n");
    println!(
        "- Each read's call is mapped to its species ancestor in the taxonomy. A read is a *species call* if it is classified at species level or below; calls above species (genus, family...) and unclassified reads are not species calls. Precision = correct species calls / species calls; recall = correct species calls / all reads of that group. Calls above species therefore lower recall but not precision. For reads of species not in the database every species call is wrong; the table gives their share of those reads (lower is better). mgds calls that fail its minimum-hit-groups filter (`Passed Filter` F) count as unclassified, as Kraken 2 voids such calls."
    );
    println!(
        "- Build time: mgds `build()` in this process (reading the FASTA, building and writing the index, single-threaded); Kraken 2: `kraken2-build --add-to-library` (each genome) plus `kraken2-build --build --threads 1`. Size on disk: the mgds database file; Kraken 2's hash.k2d + opts.k2d + taxo.k2d."
    );
    println!(
        "- Classification only: mgds times `classify()` after `Database::open` in a child process (decompressing, classifying, writing the gzipped read-level TSV); Kraken 2's own `processed in` time, which starts after it has loaded its database and includes writing its --output and --report files. Kraken 2 decompresses the input in a separate `gzip -dc` process (its wrapper's pipe), which runs beside its classifier threads; mgds decompresses inside its own process (one reader thread beside the classifier threads)."
    );
    println!(
        "- Whole process: wall time from spawning the child to its exit (process start, database load, classification, output). Database load: mgds `Database::open`; Kraken 2: whole-process time minus its own `processed in` time. Peak memory: the child's VmHWM from /proc, polled every 10 ms."
    );
    let total: Vec<String> = ours
        .iter()
        .zip(THREADS)
        .map(|(r, t)| format!("mgds {t}t: {:.2} s", r.classify_secs))
        .chain(k2.iter().zip(THREADS).map(|(r, t)| format!("Kraken 2 {t}t: {:.2} s", r.classify_secs)))
        .collect();
    println!(
        "- Classification seconds (fastest of {repeats} runs per tool and thread count, the tools alternating; BENCH_REPEATS changes it): {}. The throughput and memory rows come from that fastest run; the accuracy rows at the default confidence from the 1-thread run, the others from 2-thread runs.",
        total.join(", ")
    );
    println!(
        "- Load average (1, 5, 15 min) before the timed runs: {before}; after: {after}. The machine is shared: with other work running, the second thread may add little."
    );
}
