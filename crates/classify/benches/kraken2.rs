//! Compares mgds-classify with Kraken 2 on the same machine, the same real genomes and the same
//! simulated reads, and prints one table.
//!
//! `cargo bench -p mgds-classify --bench kraken2`
//!
//! Sets everything up itself on Debian (as root, with apt; see `tests/it/real_genomes.rs`, shared
//! with the tests): installs `kraken2` and ART if missing (without Kraken 2 its column is empty;
//! without ART a built-in simulator is used, both said in the output); takes real bacterial
//! genomes from Debian example-data packages into the cache folder; writes an NCBI taxonomy of
//! their species and ancestors; simulates Illumina reads (ART HiSeq 2500, 150 bp, single-end)
//! from genomes in the database, from held-out strains of the same species and from a species
//! absent from the database.
//!
//! Then, each as a child process whose peak memory is followed: builds a Kraken 2 database
//! (`kraken2-build`, 1 thread) and ours (1 thread) from the same FASTA files; reads the Kraken 2
//! folder's library once for its genomes and k-mer distribution (`Kraken2Database::prepare`);
//! classifies the reads with Kraken 2, with MGDS on the Kraken 2 folder read in place, and with
//! MGDS on its own database, at 1 and 2 threads. Both databases are rebuilt every run; reads are
//! cached. `BENCH_REPEATS` (default 2) sets the runs per tool and thread count.

#[path = "../tests/it/real_genomes.rs"]
mod real_genomes;

mod peers;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use flate2::read::MultiGzDecoder;
use mgds_api::ClassificationResults;
use mgds_classify::{
    BuildInput, BuildOptions, ClassifyOptions, DEFAULT_CONFIDENCE, DEFAULT_MIN_HITS, Database, Kraken2Database,
    PrepareOptions, Taxonomy, build_with, classify,
};
use real_genomes::{Prepared, Res, Sample};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    InDb,
    HeldOut,
    Absent,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::InDb => "in-database strains",
            Role::HeldOut => "held-out strains",
            Role::Absent => "a species not in the database",
        }
    }
}

/// The genomes, their role and the coverage of their reads.
const GENOMES: &[(&str, Role, f64)] = &[
    ("Ecoli_MG1655", Role::InDb, 1.0),
    ("Saureus_COL", Role::InDb, 1.0),
    ("Saureus_N315", Role::InDb, 1.0),
    ("Kpneumoniae_HS11286", Role::InDb, 1.0),
    ("Kpneumoniae_MGH78578", Role::InDb, 1.0),
    ("Vcholerae_N16961", Role::InDb, 1.0),
    ("Ecoli_536", Role::HeldOut, 1.0),
    ("Saureus_RF122", Role::HeldOut, 1.0),
    ("Kpneumoniae_NTUH-K2044", Role::HeldOut, 1.0),
    ("Vcholerae_O395", Role::HeldOut, 1.0),
    ("Hpylori_G27", Role::Absent, 0.5),
];

/// A second sample for abundance: the in-database genomes at uneven coverage.
const UNEVEN: &[(&str, f64)] = &[
    ("Ecoli_MG1655", 0.3),
    ("Saureus_COL", 1.5),
    ("Saureus_N315", 0.6),
    ("Kpneumoniae_HS11286", 1.0),
    ("Kpneumoniae_MGH78578", 0.4),
    ("Vcholerae_N16961", 2.0),
];

const READ_LEN: usize = 150;
const SEED: u64 = 20_240_611;
const THREADS: [usize; 2] = [1, 2];

fn main() {
    // `cargo bench` passes `--bench`; flags are not ours.
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("child-classify") => child_classify(&args[1..]),
        Some("child-build") => child_build(&args[1..]),
        _ => run(),
    };
    if let Err(e) = outcome {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// `child-classify DB READS THREADS OUT RESULTS`: opens the database (a file or a Kraken 2
/// folder) and classifies, each timed; prints `open_secs classify_secs reads`.
fn child_classify(args: &[String]) -> Res<()> {
    let [db, reads, threads, out, results] = args else {
        return Err("child-classify DB READS THREADS OUT RESULTS".into());
    };
    let started = Instant::now();
    let db = Database::open(db)?;
    let open_secs = started.elapsed().as_secs_f64();
    let opts = ClassifyOptions { threads: threads.parse()?, ..ClassifyOptions::default() };
    let mut out = BufWriter::new(File::create(out)?);
    let started = Instant::now();
    let r = classify(&db, Path::new(reads), &opts, &mut out)?;
    out.flush()?;
    let classify_secs = started.elapsed().as_secs_f64();
    fs::write(results, serde_json::to_vec(&r)?)?;
    println!("{open_secs} {classify_secs} {}", r.n_reads);
    Ok(())
}

/// `child-build MAP OUT NODES NAMES FASTA...`: builds our database (prints its build report's
/// size, kmers and seconds).
fn child_build(args: &[String]) -> Res<()> {
    let [map, out, nodes, names, fasta @ ..] = args else {
        return Err("child-build MAP OUT NODES NAMES FASTA...".into());
    };
    let input = BuildInput {
        references: fasta.iter().map(PathBuf::from).collect(),
        seqid2taxid: PathBuf::from(map),
        nodes: PathBuf::from(nodes),
        names: PathBuf::from(names),
    };
    let r = build_with(&input, &BuildOptions::default(), Path::new(out))?;
    println!("{} {} {} {} {}", r.bytes, r.companion_bytes, r.kmers, r.capacity, r.seconds);
    Ok(())
}

fn run() -> Res<()> {
    let started = Instant::now();
    let dir = real_genomes::cache("bench")?;
    eprintln!("kraken2 bench: working in {}", dir.display());
    let kraken2 = real_genomes::apt_install("kraken2", "kraken2") && real_genomes::which("kraken2-build").is_some();
    let art = real_genomes::apt_install("art-nextgen-simulation-tools", "art_illumina");

    let mut genomes = Vec::new();
    for (label, _, _) in GENOMES {
        genomes.push(real_genomes::prepare(real_genomes::genome(label))?);
    }
    let role = |i: usize| GENOMES[i].1;
    let in_db: Vec<&Prepared> = (0..genomes.len()).filter(|&i| role(i) == Role::InDb).map(|i| &genomes[i]).collect();
    let tax_dir = dir.join("taxonomy");
    real_genomes::write_taxonomy(&tax_dir)?;
    let taxonomy = Taxonomy::from_dmp(&tax_dir.join("nodes.dmp"), &tax_dir.join("names.dmp"))?;
    let with_coverage: Vec<(&Prepared, f64)> = genomes.iter().zip(GENOMES).map(|(g, (_, _, c))| (g, *c)).collect();
    let sample = real_genomes::simulate("bench-single", &with_coverage, false, READ_LEN, SEED, true)?;
    let uneven_genomes: Vec<Prepared> = UNEVEN
        .iter()
        .map(|(label, _)| genomes[GENOMES.iter().position(|g| g.0 == *label).expect("a bench genome")].clone())
        .collect();
    let uneven_coverage: Vec<(&Prepared, f64)> = uneven_genomes.iter().zip(UNEVEN).map(|(g, (_, c))| (g, *c)).collect();
    let uneven = real_genomes::simulate("bench-uneven", &uneven_coverage, false, READ_LEN, SEED + 100, true)?;

    // Builds.
    let exe = std::env::current_exe()?;
    let ours_dir = dir.join("mgds");
    let _ = fs::remove_dir_all(&ours_dir);
    fs::create_dir_all(&ours_dir)?;
    let (mut two, mut three) = (String::new(), String::new());
    for g in &in_db {
        for (id, _) in &g.records {
            writeln!(two, "{id}\t{}", g.tax_id)?;
            writeln!(three, "{id}\t{}\t{}", g.tax_id, g.label)?;
        }
    }
    fs::write(ours_dir.join("two-columns.tsv"), two)?;
    fs::write(ours_dir.join("three-columns.tsv"), three)?;
    let ours_build = |map: &str, out: &str| -> Res<(Measured, Vec<String>)> {
        let mut cmd = Command::new(&exe);
        cmd.arg("child-build").arg(ours_dir.join(map)).arg(ours_dir.join(out));
        cmd.arg(tax_dir.join("nodes.dmp")).arg(tax_dir.join("names.dmp"));
        cmd.args(in_db.iter().map(|g| &g.plain));
        let m = measure(&mut cmd)?;
        let f = m.stdout.split_whitespace().map(str::to_owned).collect();
        Ok((m, f))
    };
    eprintln!("building the MGDS database");
    let (ours_build_run, ours_fields) = ours_build("two-columns.tsv", "two.mgdsdb")?;
    let ours_bytes: u64 = ours_fields[0].parse()?;
    let ours_companion: u64 = ours_fields[1].parse()?;
    eprintln!("building the MGDS database with explicit genomes");
    ours_build("three-columns.tsv", "three.mgdsdb")?;
    let ours_db = ours_dir.join("two.mgdsdb");

    let k2_db = dir.join("kraken2-db");
    let mut k2 = None;
    if kraken2 {
        eprintln!("building the Kraken 2 database");
        let build = build_kraken2(&k2_db, &tax_dir, &in_db)?;
        let bytes: u64 = ["hash.k2d", "opts.k2d", "taxo.k2d"]
            .iter()
            .map(|f| fs::metadata(k2_db.join(f)).map(|m| m.len()))
            .sum::<Result<u64, _>>()?;
        eprintln!("reading the Kraken 2 library for its genomes and k-mer distribution");
        let prepared = Instant::now();
        let mut k = Kraken2Database::open(&k2_db)?;
        k.prepare(&PrepareOptions::default(), &mut |_| {})?;
        k2 = Some((build, bytes, prepared.elapsed().as_secs_f64()));
    }

    // Classification.
    let out_dir = dir.join("out");
    fs::create_dir_all(&out_dir)?;
    let repeats: usize = std::env::var("BENCH_REPEATS").ok().map(|n| n.parse()).transpose()?.unwrap_or(2).max(1);
    let load_before = load_average();
    let (mut own_runs, mut folder_runs, mut k2_runs) = (Vec::new(), Vec::new(), Vec::new());
    for threads in THREADS {
        let (mut own, mut folder, mut kraken) = (Vec::new(), Vec::new(), Vec::new());
        // Alternate the tools, so that a busy spell on a shared machine is shared too.
        for _ in 0..repeats {
            eprintln!("classifying with MGDS (own database), {threads} thread(s)");
            own.push(run_ours(&exe, &ours_db, &sample.r1, threads, &out_dir, "own")?);
            if kraken2 {
                eprintln!("classifying with MGDS (Kraken 2 folder), {threads} thread(s)");
                folder.push(run_ours(&exe, &k2_db, &sample.r1, threads, &out_dir, "folder")?);
                eprintln!("classifying with Kraken 2, {threads} thread(s)");
                kraken.push(run_kraken2(&k2_db, &sample.r1, threads, &out_dir)?);
            }
        }
        own_runs.push(fastest(own));
        if kraken2 {
            folder_runs.push(fastest(folder));
            k2_runs.push(fastest(kraken));
        }
    }
    let load_after = load_average();

    // Accuracy.
    let own_acc = score_readlevel(&own_runs[0].output, &sample, &taxonomy)?;
    let folder_acc = folder_runs.first().map(|r| score_readlevel(&r.output, &sample, &taxonomy)).transpose()?;
    let k2_acc = k2_runs.first().map(|r| score_kraken2(&r.output, &sample, &taxonomy)).transpose()?;

    // Abundance, on both samples.
    let mut abundance = Vec::new();
    let mixed_roles: Vec<Role> = GENOMES.iter().map(|g| g.1).collect();
    let uneven_roles = vec![Role::InDb; UNEVEN.len()];
    for (name, tag, sample, genomes, roles) in [
        ("mixed sample (held-out strains included)", "mixed", &sample, &genomes, &mixed_roles),
        ("in-database genomes at uneven coverage", "uneven", &uneven, &uneven_genomes, &uneven_roles),
    ] {
        eprintln!("abundance: {name}");
        let truth = Truth::new(genomes, sample, roles);
        let ours = |db: &Path, what: &str| -> Res<ClassificationResults> {
            read_results(&run_ours(&exe, db, &sample.r1, 2, &out_dir, &format!("{tag}-{what}"))?)
        };
        let own = ours(&ours_db, "own")?;
        let explicit = ours(&ours_dir.join("three.mgdsdb"), "explicit")?;
        let (folder, k2_shares) = if kraken2 {
            let tag_dir = out_dir.join(tag);
            fs::create_dir_all(&tag_dir)?;
            let run = run_kraken2(&k2_db, &sample.r1, 2, &tag_dir)?;
            (Some(ours(&k2_db, "folder")?), Some(kraken2_report_shares(&run.report, &taxonomy)?))
        } else {
            (None, None)
        };
        abundance.push((name, truth, own, explicit, folder, k2_shares));
    }

    // The table.
    print_inputs(&genomes, &sample, art, kraken2, &in_db)?;
    let mut rows = Vec::new();
    let k2b = k2.as_ref();
    rows.push(Row::info(
        "database build time (s, 1 thread)",
        k2b.map(|k| k.0.wall_secs),
        None,
        Some(ours_build_run.wall_secs),
        2,
    ));
    rows.push(Row::lower(
        "database build peak memory (MB)",
        k2b.map(|k| mb(k.0.peak_kb)),
        None,
        Some(mb(ours_build_run.peak_kb)),
        0,
        "≤ Kraken 2",
    ));
    rows.push(Row::lower(
        "database size on disk (MB; Kraken 2: hash.k2d + opts.k2d + taxo.k2d)",
        k2b.map(|k| k.1 as f64 / 1e6),
        k2b.map(|k| k.1 as f64 / 1e6),
        Some(ours_bytes as f64 / 1e6),
        1,
        "≤ 1.05 × Kraken 2",
    ));
    rows.push(Row::info(
        "abundance companion files (MB; k-mer profile + 150-mer distribution)",
        None,
        None,
        Some(ours_companion as f64 / 1e6),
        1,
    ));
    rows.push(Row::info(
        "reading the Kraken 2 library once (s; genomes, k-mer distribution)",
        None,
        k2b.map(|k| k.2),
        None,
        2,
    ));
    for (i, threads) in THREADS.into_iter().enumerate() {
        let rate = |r: &Run| r.reads as f64 / r.classify_secs;
        rows.push(Row::higher(
            &format!("reads/s, {threads} thread(s), classification (after the database load)"),
            k2_runs.get(i).map(rate),
            folder_runs.get(i).map(rate),
            Some(rate(&own_runs[i])),
            0,
            "≥ 2 × Kraken 2",
        ));
    }
    for (i, threads) in THREADS.into_iter().enumerate() {
        rows.push(Row::lower(
            &format!("classification peak memory, {threads} thread(s) (MB)"),
            k2_runs.get(i).map(|r| mb(r.peak_kb)),
            folder_runs.get(i).map(|r| mb(r.peak_kb)),
            Some(mb(own_runs[i].peak_kb)),
            0,
            "≤ Kraken 2",
        ));
    }
    rows.push(Row::info(
        "database load (s, 1-thread run)",
        k2_runs.first().map(|r| r.load_secs),
        folder_runs.first().map(|r| r.load_secs),
        Some(own_runs[0].load_secs),
        2,
    ));
    for role in [Role::InDb, Role::HeldOut] {
        let i = role as usize;
        let precision = |s: &Scores| s[i].correct as f64 / s[i].species_calls.max(1) as f64;
        let recall = |s: &Scores| s[i].correct as f64 / s[i].reads.max(1) as f64;
        rows.push(Row::higher(
            &format!("species precision, reads of {}", role.name()),
            k2_acc.as_ref().map(precision),
            folder_acc.as_ref().map(precision),
            Some(precision(&own_acc)),
            4,
            "≥ Kraken 2",
        ));
        rows.push(Row::higher(
            &format!("species recall, reads of {}", role.name()),
            k2_acc.as_ref().map(recall),
            folder_acc.as_ref().map(recall),
            Some(recall(&own_acc)),
            4,
            "≥ Kraken 2",
        ));
    }
    let absent = Role::Absent as usize;
    let wrong = |s: &Scores| s[absent].species_calls as f64 / s[absent].reads.max(1) as f64;
    rows.push(Row::lower(
        "share of reads of a species not in the database given a species",
        k2_acc.as_ref().map(wrong),
        folder_acc.as_ref().map(wrong),
        Some(wrong(&own_acc)),
        4,
        "≤ Kraken 2",
    ));
    for (name, truth, own, explicit, folder, k2_shares) in &abundance {
        let shares = |r: &ClassificationResults| truth.l1_reads(&species(r, |t| Some(t.readcount_w_children as f64)));
        let copies = |r: &ClassificationResults| {
            let a = species(r, |t| t.abundance);
            (!a.is_empty()).then(|| truth.l1_copies(&a))
        };
        let reest = |r: &ClassificationResults| {
            let a = species(r, |t| t.reestimated_abundance);
            (!a.is_empty()).then(|| truth.l1_reads(&a))
        };
        rows.push(Row::info(
            &format!("species abundance L1 to truth, {name}: read shares"),
            k2_shares.as_ref().map(|s| truth.l1_reads(s)),
            folder.as_ref().map(shares),
            Some(shares(own)),
            4,
        ));
        rows.push(Row::info(
            "… genome copies (MGDS: two-column map; on the Kraken 2 folder: its seqid2taxid.map and library)",
            None,
            folder.as_ref().and_then(copies),
            copies(own),
            4,
        ));
        rows.push(Row::info("… genome copies, explicit genomes (third map column)", None, None, copies(explicit), 4));
        let mut row = Row::lower(
            "… re-estimated (Bracken's method)",
            None,
            folder.as_ref().and_then(reest),
            reest(own),
            4,
            "< read shares",
        );
        row.against = Some(shares(own));
        rows.push(row);
    }
    print_table(&rows);
    print_definitions(&own_runs, &folder_runs, &k2_runs, repeats, &load_before, &load_after);
    if kraken2 {
        let setup = Setup { exe: &exe, ours_db: &ours_db, k2_db: &k2_db, out_dir: &out_dir, repeats };
        read_kinds(&setup, &genomes, &sample, &taxonomy)?;
    }
    println!("\nBench run time: {:.0} s (including set-up).", started.elapsed().as_secs_f64());
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Short and long reads against Kraken 2 master

/// Nanopore reads simulated in all, shared among the genomes by their bases times coverage.
const NANOPORE_READS: u64 = 8_000;

/// Kraken 2's master from the anchors folder (`../shared/anchors/kraken2-*.tar.gz` beside the
/// repository, or `$MGDS_ANCHORS`), built once with its `install_kraken2.sh` into the cache;
/// `Err` says why there is none.
fn kraken2_master() -> Result<(PathBuf, String), String> {
    let anchors = std::env::var_os("MGDS_ANCHORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/anchors"));
    let tarball = fs::read_dir(&anchors)
        .map_err(|e| format!("no anchors folder at {} ({e})", anchors.display()))?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("kraken2-") && n.ends_with(".tar.gz"))
        })
        .ok_or_else(|| format!("no kraken2-*.tar.gz in {}", anchors.display()))?;
    let name = tarball.file_name().and_then(|n| n.to_str()).unwrap_or("kraken2").trim_end_matches(".tar.gz").to_owned();
    let commit = name.trim_start_matches("kraken2-").to_owned();
    let dir = real_genomes::cache(&format!("{name}-master")).map_err(|e| e.to_string())?;
    let bin = dir.join("bin/kraken2");
    let _lock = real_genomes::lock(&name).map_err(|e| e.to_string())?;
    if !bin.exists() {
        for (package, binary) in [("g++", "g++"), ("make", "make")] {
            if !real_genomes::apt_install(package, binary) {
                return Err(format!("{binary} is missing and could not be installed"));
            }
        }
        if !Path::new("/usr/include/zlib.h").exists() {
            real_genomes::apt_install("zlib1g-dev", "no-such-binary-zlib");
        }
        eprintln!("building Kraken 2 master ({commit}) into {}", dir.display());
        let src = dir.join("src");
        let _ = fs::remove_dir_all(&src);
        fs::create_dir_all(&src).map_err(|e| e.to_string())?;
        real_genomes::run_ok(
            Command::new("tar").arg("xzf").arg(&tarball).arg("-C").arg(&src).arg("--strip-components=1"),
        )
        .map_err(|e| format!("unpacking {}: {e}", tarball.display()))?;
        real_genomes::run_ok(Command::new("./install_kraken2.sh").arg(dir.join("bin")).current_dir(&src))
            .map_err(|e| format!("building Kraken 2 master: {e}"))?;
        let _ = fs::remove_dir_all(&src);
    }
    Ok((bin, commit))
}

/// What the classification runs of [`read_kinds`] share.
#[derive(Clone, Copy)]
struct Setup<'a> {
    /// This bench's binary (its `child-classify`).
    exe: &'a Path,
    ours_db: &'a Path,
    k2_db: &'a Path,
    out_dir: &'a Path,
    repeats: usize,
}

/// One kind of reads in the speed table.
struct Kind {
    name: String,
    reads: PathBuf,
    tag: &'static str,
    /// Each read's genome (an index into the bench's genomes), for simulated reads.
    truth: Option<Vec<u16>>,
}

/// The fastest run of each tool at one thread count.
struct Fastest {
    own: Run,
    folder: Run,
    k2: Run,
    master: Option<Run>,
    /// Kun-peng, where it could be installed.
    kun: Option<Run>,
}

/// Short reads, simulated Nanopore reads (two error levels) and real Nanopore reads, each
/// classified by the four tools at 1 and 2 threads: speed, peak memory and per-read agreement
/// with Kraken 2 master (with Debian's 2.1.2 where master could not be built).
fn read_kinds(setup: &Setup<'_>, genomes: &[Prepared], short: &Sample, taxonomy: &Taxonomy) -> Res<()> {
    let Setup { exe, ours_db, k2_db, out_dir, repeats } = *setup;
    let master = kraken2_master();
    if let Err(why) = &master {
        eprintln!("Kraken 2 master: {why}; its column is empty");
    }
    let kun = peers::kun_peng();
    let kun_db = out_dir.join("kun-peng-db");
    let kun = kun.and_then(|bin| {
        eprintln!("converting the Kraken 2 database for Kun-peng");
        peers::kun_peng_db(&bin, k2_db, &kun_db).map_err(|e| format!("kun_peng hashshard: {e}"))?;
        let load = peers::kun_peng_load(&bin, &kun_db, out_dir).map_err(|e| format!("kun_peng direct: {e}"))?;
        Ok((bin, load))
    });
    if let Err(why) = &kun {
        eprintln!("Kun-peng: {why}; its columns are empty");
    }
    let sylph = peers::sylph();
    if let Err(why) = &sylph {
        eprintln!("sylph: {why}; its columns are empty");
    }
    let weights: Vec<f64> = genomes.iter().zip(GENOMES).map(|(g, (_, _, c))| g.bases() as f64 * c).collect();
    let total: f64 = weights.iter().sum();
    let counts: Vec<(&Prepared, u64)> = genomes
        .iter()
        .zip(&weights)
        .map(|(g, w)| (g, ((NANOPORE_READS as f64 * w / total).round() as u64).max(1)))
        .collect();
    let mut kinds = vec![Kind {
        name: format!("{} ({} reads)", "ART HiSeq 2500 150 bp", short.truth.len()),
        reads: short.r1.clone(),
        tag: "short",
        truth: Some(short.truth.clone()),
    }];
    let mut simulated_notes = Vec::new();
    for (weight, tag, what) in [(1.0, "r9", "R9 as trained"), (0.3, "r10", "errors x0.3, standing in for R10.4.1")] {
        match real_genomes::simulate_nanopore(&format!("bench-nanopore-{tag}"), &counts, weight, SEED + 7) {
            Ok(s) => {
                let bases = read_bases(&s.r1)?;
                kinds.push(Kind {
                    name: format!(
                        "NanoSim-H ecoli_R9_1D, {what} ({} reads, mean {:.1} kbp)",
                        s.truth.len(),
                        bases as f64 / s.truth.len() as f64 / 1e3
                    ),
                    reads: s.r1.clone(),
                    tag,
                    truth: Some(s.truth.clone()),
                });
                simulated_notes.push(s.simulator);
            }
            Err(e) => eprintln!("Nanopore reads not simulated ({e}): their rows are left out"),
        }
    }
    match real_genomes::fetch_package("python3-nanoget-examples") {
        Ok((dir, package)) => kinds.push(Kind {
            name: format!("real ONT R9, ultra-long E. coli ({package}: 371 reads, mean 23 kbp)"),
            reads: dir.join("usr/share/doc/python3-nanoget/examples/nanotest/reads.fastq.gz"),
            tag: "nanoget",
            truth: None,
        }),
        Err(e) => eprintln!("python3-nanoget-examples: {e}"),
    }
    match real_genomes::fetch_package("qcat-examples") {
        Ok((dir, package)) => kinds.push(Kind {
            name: format!("real ONT, barcoded run ({package}: 989 reads, mean 3.7 kbp)"),
            reads: dir.join("usr/share/doc/qcat/examples/qcat/test/data/barcode_1k.fastq.gz"),
            tag: "qcat",
            truth: None,
        }),
        Err(e) => eprintln!("qcat-examples: {e}"),
    }

    let load_before = load_average();
    let mut results: Vec<(usize, Vec<Fastest>)> = Vec::new();
    for (k, kind) in kinds.iter().enumerate() {
        let mut per_threads = Vec::new();
        for threads in THREADS {
            let (mut own, mut folder, mut k2, mut m, mut kp) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for _ in 0..repeats {
                eprintln!("{}: {threads} thread(s)", kind.tag);
                own.push(run_ours(exe, ours_db, &kind.reads, threads, out_dir, &format!("{}-own", kind.tag))?);
                folder.push(run_ours(exe, k2_db, &kind.reads, threads, out_dir, &format!("{}-folder", kind.tag))?);
                k2.push(run_kraken2_binary(
                    Path::new("kraken2"),
                    k2_db,
                    &kind.reads,
                    threads,
                    out_dir,
                    &format!("{}-k212", kind.tag),
                )?);
                if let Ok((bin, _)) = &master {
                    m.push(run_kraken2_binary(
                        bin,
                        k2_db,
                        &kind.reads,
                        threads,
                        out_dir,
                        &format!("{}-master", kind.tag),
                    )?);
                }
                if let Ok((bin, load)) = &kun {
                    kp.push(peers::run_kun_peng(
                        bin,
                        &kun_db,
                        &kind.reads,
                        threads,
                        out_dir,
                        &format!("{}-kun", kind.tag),
                        *load,
                    )?);
                }
            }
            per_threads.push(Fastest {
                own: fastest(own),
                folder: fastest(folder),
                k2: fastest(k2),
                master: (!m.is_empty()).then(|| fastest(m)),
                kun: (!kp.is_empty()).then(|| fastest(kp)),
            });
        }
        results.push((k, per_threads));
    }
    let load_after = load_average();
    // sylph on the samples whose truth is known, after the timed runs (it sketches the genomes
    // again for each sample: a few seconds not counted in its time).
    let in_db: Vec<&Prepared> =
        genomes.iter().zip(GENOMES).filter(|(_, g)| g.1 == Role::InDb).map(|(g, _)| g).collect();
    let mut profiles: HashMap<usize, peers::Profile> = HashMap::new();
    if let Ok(python) = &sylph {
        for (k, kind) in kinds.iter().enumerate().filter(|(_, k)| k.truth.is_some()) {
            eprintln!("{}: sylph", kind.tag);
            profiles.insert(k, peers::sylph_profile(python, &kind.reads, &in_db, out_dir)?);
        }
    }

    let anchor = match &master {
        Ok((_, commit)) => format!("Kraken 2 master ({commit}, built from the anchors folder)"),
        Err(why) => format!("Kraken 2 2.1.2 (master NOT AVAILABLE: {why})"),
    };
    let cell = |r: Option<&Run>, f: &dyn Fn(&Run) -> String| r.map_or("—".to_owned(), f);
    println!("\n# Short and long reads: speed, memory and per-read answers against {anchor}\n");
    for note in &simulated_notes {
        println!(
            "- simulated: {note}; reads from the bench's 11 genomes in proportion to bases x coverage; both sets from one seed"
        );
    }
    println!(
        "- every tool classifies the same file; MGDS on its own database and on the Kraken 2 folder read in place; Kraken 2 2.1.2 (Debian), master and Kun-peng on that folder"
    );
    print!("{}", peers::describe(&kun.as_ref().map(|(bin, _)| bin.clone()).map_err(Clone::clone), &sylph));
    println!(
        "\n| reads | threads | Kraken 2 2.1.2 reads/s | Kraken 2 master reads/s | Kun-peng reads/s | MGDS folder reads/s | MGDS own reads/s | MGDS own Mbp/s | own / anchor | ≥ 2 × anchor |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (k, per) in &results {
        let kind = &kinds[*k];
        let bases = read_bases(&kind.reads)?;
        for (t, f) in THREADS.iter().zip(per) {
            let rate = |r: &Run| r.reads as f64 / r.classify_secs;
            let anchor = f.master.as_ref().unwrap_or(&f.k2);
            let ratio = rate(&f.own) / rate(anchor);
            println!(
                "| {} | {t} | {:.0} | {} | {} | {:.0} | {:.0} | {:.1} | {ratio:.2} | {} |",
                kind.name,
                rate(&f.k2),
                cell(f.master.as_ref(), &|m| format!("{:.0}", rate(m))),
                cell(f.kun.as_ref(), &|m| format!("{:.0}", rate(m))),
                rate(&f.folder),
                rate(&f.own),
                bases as f64 / 1e6 / f.own.classify_secs,
                if ratio >= 2.0 { "met" } else { "NOT MET" }
            );
        }
    }
    println!(
        "\n| reads | threads | Kraken 2 2.1.2 MB | Kraken 2 master MB | Kun-peng MB | MGDS folder MB | MGDS own MB | own / anchor | ≤ 0.6 × anchor |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (k, per) in &results {
        for (t, f) in THREADS.iter().zip(per) {
            let anchor = f.master.as_ref().unwrap_or(&f.k2);
            let ratio = f.own.peak_kb as f64 / anchor.peak_kb as f64;
            println!(
                "| {} | {t} | {:.0} | {} | {} | {:.0} | {:.0} | {ratio:.2} | {} |",
                kinds[*k].name,
                mb(f.k2.peak_kb),
                cell(f.master.as_ref(), &|m| format!("{:.0}", mb(m.peak_kb))),
                cell(f.kun.as_ref(), &|m| format!("{:.0}", mb(m.peak_kb))),
                mb(f.folder.peak_kb),
                mb(f.own.peak_kb),
                if ratio <= 0.6 { "met" } else { "NOT MET" }
            );
        }
    }
    println!("\n| reads | 2 threads / 1 thread: Kraken 2 2.1.2 | master | Kun-peng | MGDS own |");
    println!("|---|---|---|---|---|");
    for (k, per) in &results {
        let speedup = |a: &Run, b: &Run| a.classify_secs / b.classify_secs;
        let pair = |a: Option<&Run>, b: Option<&Run>| {
            a.zip(b).map_or("—".to_owned(), |(a, b)| format!("{:.2}", speedup(a, b)))
        };
        println!(
            "| {} | {:.2} | {} | {} | {:.2} |",
            kinds[*k].name,
            speedup(&per[0].k2, &per[1].k2),
            pair(per[0].master.as_ref(), per[1].master.as_ref()),
            pair(per[0].kun.as_ref(), per[1].kun.as_ref()),
            speedup(&per[0].own, &per[1].own)
        );
    }
    if let Ok((_, secs)) = &kun {
        println!(
            "\nKun-peng's shard load (the fastest of three runs on one read): {secs:.3} s, taken off its times above."
        );
    }
    println!("\nPer-read answers (2-thread runs; a call that failed the minimum hit groups counts as unclassified):\n");
    println!(
        "| reads | MGDS folder = anchor | MGDS own = anchor (≥ 99.99%) | Kraken 2 2.1.2 = anchor | Kun-peng = anchor |"
    );
    println!("|---|---|---|---|---|");
    for (k, per) in &results {
        let f = &per[1];
        let anchor_run = f.master.as_ref().unwrap_or(&f.k2);
        let anchor = kraken_calls(&anchor_run.output)?;
        let same = |calls: &[u64]| -> String {
            let n = calls.len().min(anchor.len());
            let equal = (0..n).filter(|&i| calls[i] == anchor[i]).count();
            let share = if calls.len() == anchor.len() { equal as f64 / n.max(1) as f64 } else { 0.0 };
            format!("{:.4}% ({} of {} differ)", 100.0 * share, anchor.len() - equal, anchor.len())
        };
        let own = readlevel_calls(&f.own.output)?;
        let own_cell = same(&own);
        let own_share = (0..own.len().min(anchor.len())).filter(|&i| own[i] == anchor[i]).count() as f64
            / anchor.len().max(1) as f64;
        let kun_cell = match &f.kun {
            Some(kp) => {
                let by_name = peers::calls_by_name(&anchor_run.output)?;
                let theirs = peers::calls_by_name(&kp.output)?;
                let equal = by_name.iter().filter(|(name, call)| theirs.get(*name) == Some(call)).count();
                format!(
                    "{:.4}% ({} of {} differ)",
                    100.0 * equal as f64 / by_name.len().max(1) as f64,
                    by_name.len() - equal,
                    by_name.len()
                )
            }
            None => "—".to_owned(),
        };
        println!(
            "| {} | {} | {} {} | {} | {kun_cell} |",
            kinds[*k].name,
            same(&readlevel_calls(&f.folder.output)?),
            own_cell,
            if own_share >= 0.9999 { "met" } else { "NOT MET" },
            if f.master.is_some() { same(&kraken_calls(&f.k2.output)?) } else { "—".to_owned() }
        );
    }
    println!(
        "\nAbundance of the simulated reads (2-thread runs): L1 distance of each measure's species shares to the true genome copies (each genome's read bases over its length, summed by species over the database's species; the absent species left out). The measure MGDS shows first is marked *; re-estimated abundance and the shares of reads estimate shares of reads, not of genome copies, so on reads whose lengths differ by genome (the Nanopore rows) their distance here is large by design.\n"
    );
    println!(
        "| reads | MGDS share of reads | MGDS genome copies (by reads) | MGDS genome copies by bases | MGDS re-estimated | Kraken 2 master (or 2.1.2) share of reads | sylph taxonomic abundance | sylph s (sample) | MGDS s (classify, 2 threads) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (k, per) in &results {
        let kind = &kinds[*k];
        let Some(truth) = &kind.truth else { continue };
        let bases = bases_per_genome(&kind.reads, truth, genomes.len())?;
        let mut copies: HashMap<u64, f64> = HashMap::new();
        for (i, g) in genomes.iter().enumerate() {
            if GENOMES[i].1 != Role::Absent {
                *copies.entry(g.species).or_default() += bases[i] as f64 / g.bases() as f64;
            }
        }
        let copies = normalise(copies);
        let f = &per[1];
        let own = read_results(&f.own)?;
        let shown = mgds_api::Measure::default_for(&own);
        let measure = |m: mgds_api::Measure, value: &dyn Fn(&mgds_api::TaxonRow) -> Option<f64>| -> String {
            let estimate = species(&own, value);
            let star = if m == shown { "*" } else { "" };
            if estimate.is_empty() {
                "—".to_owned()
            } else {
                format!("{:.4}{star}", l1(&normalise(estimate), &copies))
            }
        };
        let anchor = f.master.as_ref().unwrap_or(&f.k2);
        let profile = profiles.get(k);
        println!(
            "| {} | {} | {} | {} | {} | {:.4} | {} | {} | {:.2} |",
            kind.name,
            measure(mgds_api::Measure::ReadShare, &|t| Some(t.readcount_w_children as f64)),
            measure(mgds_api::Measure::GenomeCopies, &|t| t.abundance),
            measure(mgds_api::Measure::BasesGenomeCopies, &|t| t.bases_abundance),
            measure(mgds_api::Measure::Reestimated, &|t| t.reestimated_abundance),
            l1(&kraken2_report_shares(&anchor.report, taxonomy)?, &copies),
            profile.map_or("—".to_owned(), |p| {
                let found = if p.species.is_empty() { " (nothing found)" } else { "" };
                format!("{:.4}{found}", l1(&normalise(p.species.clone()), &copies))
            }),
            profile.map_or("—".to_owned(), |p| format!("{:.2} ({:.0} MB)", p.secs, mb(p.peak_kb))),
            f.own.classify_secs
        );
    }
    println!(
        "\n- Reads/s: classification time after the database load (MGDS: `classify()` in a child process, decompression on its own thread; Kraken 2: its own `processed in` time, decompression in a `gzip -dc` process; Kun-peng: its own `classify took` less its shard load). Fastest of {repeats} runs, the tools alternating. Peak memory: the largest VmHWM among the run's processes. Load average before: {load_before}; after: {load_after}."
    );
    Ok(())
}

/// Read bases per genome, from the reads file (FASTA or FASTQ) and each read's genome.
fn bases_per_genome(path: &Path, truth: &[u16], genomes: usize) -> Res<Vec<u64>> {
    let (_, decoded) = mgds_formats::open(path)?;
    let mut reader = mgds_formats::Reader::new(decoded);
    let mut record = mgds_formats::Record::default();
    let mut bases = vec![0u64; genomes];
    let mut n = 0;
    while reader.read_record(&mut record)? > 0 {
        let g = *truth.get(n).ok_or_else(|| format!("{}: more reads than simulated", path.display()))?;
        bases[g as usize] += record.sequence().len() as u64;
        n += 1;
    }
    Ok(bases)
}

/// Bases in a reads file (FASTA or FASTQ, gzipped or not).
fn read_bases(path: &Path) -> Res<u64> {
    let (_, decoded) = mgds_formats::open(path)?;
    let mut reader = mgds_formats::Reader::new(decoded);
    let mut record = mgds_formats::Record::default();
    let mut n = 0;
    while reader.read_record(&mut record)? > 0 {
        n += record.sequence().len() as u64;
    }
    Ok(n)
}

/// Each read's call in Kraken 2's per-read output, in order (0: unclassified).
fn kraken_calls(path: &Path) -> Res<Vec<u64>> {
    let mut out = Vec::new();
    for line in BufReader::new(File::open(path)?).lines() {
        let line = line?;
        out.push(line.split('\t').nth(2).ok_or("Kraken 2 output: tax id")?.parse()?);
    }
    Ok(out)
}

/// Each read's call in MGDS's read-level TSV, in order (0: unclassified or failed the filter).
fn readlevel_calls(path: &Path) -> Res<Vec<u64>> {
    let mut out = Vec::new();
    for line in BufReader::new(MultiGzDecoder::new(File::open(path)?)).lines().skip(1) {
        let line = line?;
        let f: Vec<&str> = line.split('\t').collect();
        out.push(if f.get(3) == Some(&"T") { f[0].parse()? } else { 0 });
    }
    Ok(out)
}

fn mb(kb: u64) -> f64 {
    kb as f64 / 1024.0
}

// ---------------------------------------------------------------------------------------------
// Running and measuring

struct Measured {
    wall_secs: f64,
    peak_kb: u64,
    stdout: String,
    stderr: String,
}

/// Runs a child in a process group of its own, following the peak resident memory (VmHWM) of
/// every process in the group every 10 ms; reports the largest (`kraken2-build` and `kraken2`
/// run their work in child processes).
fn measure(cmd: &mut Command) -> Res<Measured> {
    let started = Instant::now();
    let mut child = cmd
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not run {cmd:?}: {e}"))?;
    let group = child.id();
    let mut out_pipe = child.stdout.take().ok_or("no stdout")?;
    let mut err_pipe = child.stderr.take().ok_or("no stderr")?;
    // Read the pipes on threads so that the child never blocks on a full pipe.
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
        peak_kb = peak_kb.max(group_peak_kb(group));
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

/// The largest VmHWM among the processes of a process group.
fn group_peak_kb(group: u32) -> u64 {
    let Ok(entries) = fs::read_dir("/proc") else { return 0 };
    let mut peak = 0;
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let in_group = pid == group
            || fs::read_to_string(format!("/proc/{pid}/stat")).ok().and_then(|s| {
                s.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(2)?.parse::<u32>().ok())
            }) == Some(group);
        if !in_group {
            continue;
        }
        if let Some(kb) = fs::read_to_string(format!("/proc/{pid}/status")).ok().and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        }) {
            peak = peak.max(kb);
        }
    }
    peak
}

fn build_kraken2(db: &Path, tax_dir: &Path, genomes: &[&Prepared]) -> Res<Measured> {
    // Timed as a whole: one shell running the offline recipe.
    let _ = fs::remove_dir_all(db);
    fs::create_dir_all(db.join("taxonomy"))?;
    for f in ["nodes.dmp", "names.dmp"] {
        fs::copy(tax_dir.join(f), db.join("taxonomy").join(f))?;
    }
    let mut script = String::from("set -e\n");
    for g in genomes {
        writeln!(
            script,
            "kraken2-build --db '{}' --add-to-library '{}' --no-masking",
            db.display(),
            g.kraken.display()
        )?;
    }
    writeln!(
        script,
        "kraken2-build --db '{}' --build --threads 1 --kmer-len 35 --minimizer-len 31 --minimizer-spaces 7",
        db.display()
    )?;
    measure(Command::new("sh").arg("-c").arg(script))
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
    classify_secs: f64,
    load_secs: f64,
    peak_kb: u64,
    reads: u64,
    output: PathBuf,
    report: PathBuf,
}

fn run_ours(exe: &Path, db: &Path, reads: &Path, threads: usize, out_dir: &Path, name: &str) -> Res<Run> {
    let output = out_dir.join(format!("mgds_{name}_t{threads}.tsv.gz"));
    let report = out_dir.join(format!("mgds_{name}_t{threads}.json"));
    let m = measure(
        Command::new(exe).arg("child-classify").arg(db).arg(reads).arg(threads.to_string()).arg(&output).arg(&report),
    )?;
    let f: Vec<&str> = m.stdout.split_whitespace().collect();
    let [open, secs, n] = f[..] else {
        return Err(format!("unexpected child output: {}", m.stdout).into());
    };
    Ok(Run {
        classify_secs: secs.parse()?,
        load_secs: open.parse()?,
        peak_kb: m.peak_kb,
        reads: n.parse()?,
        output,
        report,
    })
}

fn run_kraken2(db: &Path, reads: &Path, threads: usize, out_dir: &Path) -> Res<Run> {
    run_kraken2_binary(Path::new("kraken2"), db, reads, threads, out_dir, "kraken2")
}

/// Runs one Kraken 2 (`binary`: Debian's `kraken2`, or master's script) on `reads`; outputs are
/// `TAG_tTHREADS.out` and `.report` in `out_dir`.
fn run_kraken2_binary(binary: &Path, db: &Path, reads: &Path, threads: usize, out_dir: &Path, tag: &str) -> Res<Run> {
    let output = out_dir.join(format!("{tag}_t{threads}.out"));
    let report = out_dir.join(format!("{tag}_t{threads}.report"));
    let mut cmd = Command::new(binary);
    cmd.arg("--db").arg(db).args(["--threads", &threads.to_string()]);
    if reads.extension().is_some_and(|e| e == "gz") {
        cmd.arg("--gzip-compressed");
    }
    let m = measure(cmd.arg("--output").arg(&output).arg("--report").arg(&report).arg(reads))?;
    // "N sequences (X Mbp) processed in T s (...)": Kraken 2's own timing, after the load.
    let line = m
        .stderr
        .lines()
        .find(|l| l.contains("processed in"))
        .ok_or_else(|| format!("no timing in Kraken 2's messages:\n{}", m.stderr))?;
    let n: u64 = line.split_whitespace().next().ok_or("timing line")?.parse()?;
    let secs: f64 =
        line.split("processed in ").nth(1).and_then(|s| s.split('s').next()).ok_or("timing line")?.trim().parse()?;
    Ok(Run { classify_secs: secs, load_secs: m.wall_secs - secs, peak_kb: m.peak_kb, reads: n, output, report })
}

// ---------------------------------------------------------------------------------------------
// Accuracy and abundance

/// Per role: reads, reads with a call at species level or below, correct species calls.
#[derive(Default, Clone, Copy)]
struct Score {
    reads: u64,
    species_calls: u64,
    correct: u64,
}

type Scores = [Score; 3];

fn add_call(scores: &mut Scores, sample: &Sample, read: usize, tax_id: u64, taxonomy: &Taxonomy) -> Res<()> {
    let g = *sample.truth.get(read).ok_or("more reads than simulated")? as usize;
    let (label, role, _) = GENOMES[g];
    let s = &mut scores[role as usize];
    s.reads += 1;
    if tax_id == 0 {
        return Ok(());
    }
    let species =
        taxonomy.index_of(tax_id).and_then(|i| taxonomy.ancestor_at_rank(i, "species")).map(|i| taxonomy.tax_id(i));
    if let Some(species) = species {
        s.species_calls += 1;
        s.correct += u64::from(species == real_genomes::genome(label).species);
    }
    Ok(())
}

fn score_readlevel(path: &Path, sample: &Sample, taxonomy: &Taxonomy) -> Res<Scores> {
    let mut scores = Scores::default();
    let mut n = 0;
    for line in BufReader::new(MultiGzDecoder::new(File::open(path)?)).lines().skip(1) {
        let line = line?;
        let f: Vec<&str> = line.split('\t').collect();
        // A call that did not pass the minimum hit groups is unclassified, as in Kraken 2.
        let tax_id = if f.get(3) == Some(&"T") { f[0].parse()? } else { 0 };
        add_call(&mut scores, sample, n, tax_id, taxonomy)?;
        n += 1;
    }
    if n != sample.truth.len() {
        return Err(format!("{}: {n} reads, expected {}", path.display(), sample.truth.len()).into());
    }
    Ok(scores)
}

fn score_kraken2(path: &Path, sample: &Sample, taxonomy: &Taxonomy) -> Res<Scores> {
    let mut scores = Scores::default();
    let mut n = 0;
    for line in BufReader::new(File::open(path)?).lines() {
        let line = line?;
        let f: Vec<&str> = line.split('\t').collect();
        let read: usize = f.get(1).and_then(|r| r.strip_prefix('r')).ok_or("Kraken 2 output: read name")?.parse()?;
        let tax_id: u64 = f.get(2).ok_or("Kraken 2 output: tax id")?.parse()?;
        add_call(&mut scores, sample, read, tax_id, taxonomy)?;
        n += 1;
    }
    if n != sample.truth.len() {
        return Err(format!("{}: {n} reads, expected {}", path.display(), sample.truth.len()).into());
    }
    Ok(scores)
}

fn read_results(run: &Run) -> Res<ClassificationResults> {
    Ok(serde_json::from_slice(&fs::read(&run.report)?)?)
}

/// Species → value, over the species rows of a results table.
fn species(r: &ClassificationResults, value: impl Fn(&mgds_api::TaxonRow) -> Option<f64>) -> HashMap<u64, f64> {
    r.table.iter().filter(|t| t.rank == "species").filter_map(|t| Some((t.tax_id.parse().ok()?, value(t)?))).collect()
}

/// Species read shares from a Kraken 2 report (reads in each species' clade).
fn kraken2_report_shares(path: &Path, taxonomy: &Taxonomy) -> Res<HashMap<u64, f64>> {
    let mut out = HashMap::new();
    for line in fs::read_to_string(path)?.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let Some(tax_id) = f.get(4).and_then(|t| t.trim().parse::<u64>().ok()) else { continue };
        if taxonomy.index_of(tax_id).is_some_and(|i| taxonomy.rank(i) == "species") {
            out.insert(tax_id, f[1].trim().parse::<f64>()?);
        }
    }
    Ok(normalise(out))
}

fn normalise(v: HashMap<u64, f64>) -> HashMap<u64, f64> {
    let total: f64 = v.values().sum();
    v.into_iter().map(|(k, x)| (k, if total > 0.0 { x / total } else { 0.0 })).collect()
}

fn l1(a: &HashMap<u64, f64>, b: &HashMap<u64, f64>) -> f64 {
    let keys: std::collections::BTreeSet<u64> = a.keys().chain(b.keys()).copied().collect();
    keys.iter().map(|k| (a.get(k).unwrap_or(&0.0) - b.get(k).unwrap_or(&0.0)).abs()).sum()
}

/// The true species shares, over the species of the database (reads of in-database and held-out
/// strains; the absent species cannot be estimated and is left out).
struct Truth {
    reads: HashMap<u64, f64>,
    copies: HashMap<u64, f64>,
}

impl Truth {
    fn new(genomes: &[Prepared], sample: &Sample, roles: &[Role]) -> Truth {
        let (mut reads, mut copies) = (HashMap::new(), HashMap::new());
        for (i, g) in genomes.iter().enumerate() {
            if roles[i] == Role::Absent {
                continue;
            }
            let n = sample.reads_per_genome[i] as f64;
            *reads.entry(g.species).or_default() += n;
            *copies.entry(g.species).or_default() += n / g.bases() as f64;
        }
        Truth { reads: normalise(reads), copies: normalise(copies) }
    }

    fn l1_reads(&self, estimate: &HashMap<u64, f64>) -> f64 {
        l1(&normalise(estimate.clone()), &self.reads)
    }

    fn l1_copies(&self, estimate: &HashMap<u64, f64>) -> f64 {
        l1(&normalise(estimate.clone()), &self.copies)
    }
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
    k2: Option<f64>,
    folder: Option<f64>,
    own: Option<f64>,
    decimals: usize,
    better: Better,
    target: &'static str,
    /// What the own index is measured against instead of Kraken 2 (strictly below it).
    against: Option<f64>,
}

impl Row {
    fn info(measure: &str, k2: Option<f64>, folder: Option<f64>, own: Option<f64>, decimals: usize) -> Row {
        Row {
            measure: measure.to_owned(), k2, folder, own, decimals, better: Better::Info, target: "—", against: None
        }
    }

    fn higher(
        measure: &str,
        k2: Option<f64>,
        folder: Option<f64>,
        own: Option<f64>,
        d: usize,
        target: &'static str,
    ) -> Row {
        Row { better: Better::Higher, target, ..Row::info(measure, k2, folder, own, d) }
    }

    fn lower(
        measure: &str,
        k2: Option<f64>,
        folder: Option<f64>,
        own: Option<f64>,
        d: usize,
        target: &'static str,
    ) -> Row {
        Row { better: Better::Lower, target, ..Row::info(measure, k2, folder, own, d) }
    }
}

fn print_table(rows: &[Row]) {
    println!(
        "| measure | Kraken 2 | MGDS, Kraken 2 folder read in place | MGDS, own index | MGDS own / Kraken 2 | target | met (own index) |"
    );
    println!("|---|---|---|---|---|---|---|");
    for r in rows {
        let d = r.decimals;
        let cell = |v: Option<f64>| v.map_or("—".to_owned(), |v| format!("{v:.d$}"));
        let ratio = match (r.own, r.k2) {
            (Some(o), Some(k)) if k != 0.0 => format!("{:.2}", o / k),
            _ => "—".to_owned(),
        };
        let met = match (r.better, r.own, r.k2) {
            (_, Some(o), _) if r.against.is_some() => {
                if r.against.is_some_and(|a| o < a) { "met" } else { "NOT MET" }.to_owned()
            }
            (Better::Info, ..) | (_, None, _) | (_, _, None) => "—".to_owned(),
            (better, Some(o), Some(k)) => {
                let factor = if r.target.contains("2 ×") {
                    2.0
                } else if r.target.contains("1.05") {
                    1.05
                } else {
                    1.0
                };
                // Compared at the precision printed, so that a tie looks like one.
                let round = |x: f64| (x * 10f64.powi(d as i32)).round();
                let ok = match better {
                    Better::Higher => round(o) >= round(k * factor),
                    _ => round(o) <= round(k * factor),
                };
                if ok { "met" } else { "NOT MET" }.to_owned()
            }
        };
        println!(
            "| {} | {} | {} | {} | {ratio} | {} | {met} |",
            r.measure,
            cell(r.k2),
            cell(r.folder),
            cell(r.own),
            r.target
        );
    }
}

fn print_inputs(genomes: &[Prepared], sample: &Sample, art: bool, kraken2: bool, in_db: &[&Prepared]) -> Res<()> {
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
        "- mgds-classify {} (release build): k = 35, l = 31, spaced seed of 7 (Kraken 2's defaults), confidence {DEFAULT_CONFIDENCE}, minimum hit groups {DEFAULT_MIN_HITS}",
        mgds_classify::ENGINE_VERSION
    );
    if kraken2 {
        println!(
            "- {} (Debian package): `kraken2-build --no-masking`, k = 35, l = 31, 7 spaces; `kraken2` at its defaults (confidence 0, minimum hit groups 2)",
            version("kraken2", "--version")
        );
    } else {
        println!("- Kraken 2: NOT AVAILABLE (`apt-get install kraken2` failed): its columns are empty");
    }
    println!("- reads: {}{}", sample.simulator, if art { "" } else { " (ART missing)" });
    let mut packages: Vec<&str> = genomes.iter().map(|g| g.package.as_str()).collect();
    packages.sort_unstable();
    packages.dedup();
    println!("- genomes from Debian example-data packages: {}", packages.join(", "));
    println!("- machine: {} CPU(s)\n", std::thread::available_parallelism().map_or(0, |n| n.get()));
    println!("| genome | role | tax id mapped | records | bases | reads |");
    println!("|---|---|---|---|---|---|");
    for (i, g) in genomes.iter().enumerate() {
        let (label, role, coverage) = GENOMES[i];
        println!(
            "| {label} ({}) | {} | {} | {} | {} | {} ({coverage}x) |",
            real_genomes::genome(label).description,
            role.name(),
            if role == Role::Absent { "—".to_owned() } else { g.tax_id.to_string() },
            g.records.len(),
            g.bases(),
            sample.reads_per_genome[i]
        );
    }
    println!(
        "\nDatabases: the {} in-database genomes ({} bases). Reads: {} of {READ_LEN} bp in one gzipped FASTQ, the same file for every tool.\n",
        in_db.len(),
        in_db.iter().map(|g| g.bases()).sum::<u64>(),
        sample.truth.len()
    );
    Ok(())
}

fn print_definitions(own: &[Run], folder: &[Run], k2: &[Run], repeats: usize, before: &str, after: &str) {
    println!("\nDefinitions and what is timed:\n");
    println!(
        "- A read's call is mapped to its species ancestor. A *species call* is a call at species level or below. Precision = correct species calls / species calls; recall = correct species calls / reads of that group. MGDS calls that fail the minimum hit groups (`Passed Filter` F) count as unclassified, as Kraken 2 voids them."
    );
    println!(
        "- Build: Kraken 2 = `kraken2-build --add-to-library` for each genome then `--build --threads 1`; MGDS = `build` (1 thread) with the two-column map, including its k-mer profile and 150-mer distribution. Peak memory: the largest VmHWM among the processes of the build (for Kraken 2, `build_db`)."
    );
    println!(
        "- Classification: MGDS times `classify()` after `Database::open` in a child process (decompressing, classifying, writing the gzipped read-level TSV); Kraken 2's own `processed in` time (after its database load; decompression in a separate `gzip -dc` process, writing its --output and --report). Peak memory: VmHWM, which counts the memory-mapped table pages MGDS touched."
    );
    println!(
        "- Abundance: L1 distance between estimated and true species shares over the database's species (reads of held-out strains count to their species; the absent species is left out). Read shares: reads in each species' clade; genome copies: reads over the species' mean reference genome length, against the true genome copies (each genome's reads over its length); re-estimated: reads shared out from higher taxa by the database's k-mer distribution, against the true read shares."
    );
    let secs: Vec<String> = [("MGDS own", own), ("MGDS folder", folder), ("Kraken 2", k2)]
        .iter()
        .flat_map(|(n, runs)| runs.iter().zip(THREADS).map(move |(r, t)| format!("{n} {t}t: {:.2} s", r.classify_secs)))
        .collect();
    println!(
        "- Classification seconds (fastest of {repeats} runs, the tools alternating; BENCH_REPEATS changes it): {}.",
        secs.join(", ")
    );
    println!("- Load average (1, 5, 15 min) before the timed runs: {before}; after: {after}.");
}
