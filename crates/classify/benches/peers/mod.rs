//! Classifiers and profilers beyond Kraken 2 in the `kraken2` bench, each installed once into the
//! cache from its registry:
//!
//! - **Kun-peng** (crates.io `kun_peng`): a Rust reimplementation of Kraken 2's classification
//!   that reads a Kraken 2 database after converting its hash table into shards
//!   (`kun_peng hashshard`). Its `direct` mode loads every shard and classifies each read, as
//!   Kraken 2 does: per-read answers, a Kraken-style report. Its other mode (`classify`) spills
//!   minimizers to disk in chunks to use less memory than the table; not run here, the table
//!   being small.
//! - **sylph** (PyPI `pysylph`, its Python binding): a profiler, not a classifier. It sketches
//!   genomes and a sample with FracMinHash (k = 31) and estimates each genome's ANI to the
//!   sample and its share of genome copies ("taxonomic abundance"). It gives no per-read
//!   answers, and names genomes, not taxa: the bench sums its genomes into their species.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::real_genomes::{self, Prepared, Res};
use super::{Measured, Run, measure};

/// The Kun-peng release the bench installs (`cargo install kun_peng --version … --locked`).
pub const KUN_PENG: &str = "0.7.5";

/// The pysylph release the bench installs into a virtual environment.
pub const PYSYLPH: &str = "0.1.3";

/// `kun_peng`, built once from crates.io into the cache; `Err` says why there is none.
pub fn kun_peng() -> Result<PathBuf, String> {
    let root = real_genomes::cache(&format!("kun_peng-{KUN_PENG}")).map_err(|e| e.to_string())?;
    let bin = root.join("bin/kun_peng");
    let _lock = real_genomes::lock("kun_peng").map_err(|e| e.to_string())?;
    if !bin.exists() {
        eprintln!("installing kun_peng {KUN_PENG} from crates.io into {}", root.display());
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        real_genomes::run_ok(
            Command::new(cargo)
                .args(["install", "--quiet", "--locked", "--version", KUN_PENG, "--root"])
                .arg(&root)
                .arg("kun_peng"),
        )
        .map_err(|e| format!("cargo install kun_peng: {e}"))?;
    }
    Ok(bin)
}

/// Kun-peng's copy of a Kraken 2 database: the folder's three files, the hash table converted
/// into shards by `kun_peng hashshard`. Made again on every run, as the Kraken 2 database is.
pub fn kun_peng_db(bin: &Path, k2_db: &Path, dir: &Path) -> Res<Measured> {
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir)?;
    for f in ["hash.k2d", "opts.k2d", "taxo.k2d"] {
        fs::copy(k2_db.join(f), dir.join(f))?;
    }
    let m = measure(Command::new(bin).args(["hashshard", "--hash-capacity", "1G", "--db"]).arg(dir))?;
    // The shards hold the table now; the monolithic copy would only double the folder.
    fs::remove_file(dir.join("hash.k2d"))?;
    Ok(m)
}

/// Runs `kun_peng direct` (every shard loaded, as Kraken 2 loads its table) on `reads` with
/// `threads` classifying threads. Its `--num-threads` counts a reading and a writing thread
/// besides them (it refuses fewer than 3), so it is given `threads + 2`, as MGDS reads on a
/// thread of its own and writes on the calling one. Its output folder is made fresh: Kun-peng
/// numbers the files of a folder across runs.
///
/// Kun-peng prints one time, its shard load included; `load` (from [`kun_peng_load`]) is taken
/// off it, so that its reads/s and its gain from a second thread count classification alone,
/// as Kraken 2's and MGDS's do.
pub fn run_kun_peng(
    bin: &Path,
    db: &Path,
    reads: &Path,
    threads: usize,
    out_dir: &Path,
    tag: &str,
    load: f64,
) -> Res<Run> {
    let dir = out_dir.join(format!("{tag}_t{threads}"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir)?;
    let m = measure(
        Command::new(bin)
            .arg("direct")
            .arg("--db")
            .arg(db)
            .args(["--num-threads", &(threads + 2).to_string()])
            .arg("--output-dir")
            .arg(&dir)
            .arg(reads),
    )?;
    // "classify took: 1.234s": its own time, which includes loading the shards.
    let took = m
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("classify took: "))
        .ok_or_else(|| format!("no timing in Kun-peng's output:\n{}{}", m.stdout, m.stderr))?;
    let secs = debug_duration(took.trim()).ok_or_else(|| format!("Kun-peng's time: {took}"))?;
    let output = dir.join("output_1.txt");
    let reads = fs::read_to_string(&output)?.lines().count() as u64;
    Ok(Run {
        classify_secs: (secs - load).max(1e-6),
        load_secs: load,
        peak_kb: m.peak_kb,
        reads,
        output,
        report: dir.join("output_1.kreport2"),
    })
}

/// Kun-peng's time to load its shards: a run on one read.
pub fn kun_peng_load(bin: &Path, db: &Path, out_dir: &Path) -> Res<f64> {
    let one = out_dir.join("kun-peng-one-read.fa");
    fs::write(&one, ">r0\nACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT\n")?;
    // The fastest of three.
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        best = best.min(run_kun_peng(bin, db, &one, 1, out_dir, "kun-peng-load", 0.0)?.classify_secs);
    }
    Ok(best)
}

/// A `Duration` as `{:?}` prints it (`1.5s`, `12.3ms`, `4µs`, `7ns`), in seconds.
fn debug_duration(s: &str) -> Option<f64> {
    for (suffix, scale) in [("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9), ("s", 1.0)] {
        if let Some(n) = s.strip_suffix(suffix) {
            return n.parse::<f64>().ok().map(|x| x * scale);
        }
    }
    None
}

/// Each read's call in Kraken 2-style output lines (`C/U  name  taxid  …`), by read name; Kun-peng
/// writes its lines in the order its threads finish.
pub fn calls_by_name(path: &Path) -> Res<HashMap<String, u64>> {
    let mut out = HashMap::new();
    for (n, line) in fs::read_to_string(path)?.lines().enumerate() {
        let mut f = line.split('\t');
        let (Some(_), Some(name), Some(tax_id)) = (f.next(), f.next(), f.next()) else {
            return Err(format!("{} line {}: not a Kraken 2 output line", path.display(), n + 1).into());
        };
        out.insert(name.to_owned(), tax_id.trim().parse()?);
    }
    Ok(out)
}

/// pysylph's virtual environment in the cache, made once; its `python3`.
pub fn sylph() -> Result<PathBuf, String> {
    let venv = real_genomes::cache(&format!("pysylph-{PYSYLPH}")).map_err(|e| e.to_string())?;
    let python = venv.join("bin/python3");
    let _lock = real_genomes::lock("pysylph").map_err(|e| e.to_string())?;
    if !venv.join("bin/pip").exists() || !has_pysylph(&python) {
        eprintln!("installing pysylph {PYSYLPH} from PyPI into {}", venv.display());
        real_genomes::run_ok(Command::new("python3").arg("-m").arg("venv").arg(&venv))
            .map_err(|e| format!("python3 -m venv (install python3-venv): {e}"))?;
        real_genomes::run_ok(Command::new(venv.join("bin/pip")).args([
            "install",
            "-q",
            &format!("pysylph=={PYSYLPH}"),
        ]))
        .map_err(|e| e.to_string())?;
    }
    Ok(python)
}

fn has_pysylph(python: &Path) -> bool {
    Command::new(python).args(["-c", "import pysylph"]).output().is_ok_and(|o| o.status.success())
}

/// What the bench's sylph script does: sketches the database's genomes (once per run of the
/// script: a few seconds) and the sample, profiles the sample, and prints each genome's
/// taxonomic abundance and the seconds the sample took (its sketch and profile).
const SYLPH_SCRIPT: &str = r#"
import gzip, sys, time
import pysylph

def records(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        first = f.read(1)
        f.seek(0)
        if first == b">":
            seq = []
            for line in f:
                if line.startswith(b">"):
                    if seq:
                        yield b"".join(seq)
                    seq = []
                else:
                    seq.append(line.strip())
            if seq:
                yield b"".join(seq)
        else:
            while True:
                header = f.readline()
                if not header:
                    break
                seq = f.readline().strip()
                f.readline()
                f.readline()
                yield seq

reads, genomes = sys.argv[1], sys.argv[2:]
sketcher = pysylph.Sketcher()
database = pysylph.Database(
    [sketcher.sketch_genome(g, list(records(g))) for g in genomes]
)
started = time.perf_counter()
sample = sketcher.sketch_single(reads, records(reads))
profile = pysylph.Profiler(database).profile(sample)
secs = time.perf_counter() - started
print("seconds", secs, sep="\t")
for r in profile:
    print("genome", r.genome_sketch.name, r.taxonomic_abundance / 100.0, r.ani, sep="\t")
"#;

/// One sylph profile of a sample.
pub struct Profile {
    /// Species → share of genome copies (its genomes summed).
    pub species: HashMap<u64, f64>,
    /// The sample's sketch and profile, seconds.
    pub secs: f64,
    /// The script's peak memory (VmHWM), kB.
    pub peak_kb: u64,
}

/// Profiles `reads` against the database's genomes with sylph.
pub fn sylph_profile(python: &Path, reads: &Path, genomes: &[&Prepared], out_dir: &Path) -> Res<Profile> {
    let script = out_dir.join("sylph-profile.py");
    fs::write(&script, SYLPH_SCRIPT)?;
    let mut cmd = Command::new(python);
    cmd.arg(&script).arg(reads).args(genomes.iter().map(|g| &g.plain));
    let m = measure(&mut cmd)?;
    let species_of: HashMap<String, u64> =
        genomes.iter().map(|g| (g.plain.to_string_lossy().into_owned(), g.species)).collect();
    let mut profile = Profile { species: HashMap::new(), secs: 0.0, peak_kb: m.peak_kb };
    for line in m.stdout.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        match f[..] {
            ["seconds", s] => profile.secs = s.parse()?,
            ["genome", name, share, _ani] => {
                let species = species_of.get(name).ok_or_else(|| format!("sylph named an unknown genome {name}"))?;
                *profile.species.entry(*species).or_default() += share.parse::<f64>()?;
            }
            _ => return Err(format!("unexpected line from the sylph script: {line:?}").into()),
        }
    }
    Ok(profile)
}

/// The bench's words on what each peer is, for the output.
pub fn describe(kun: &Result<PathBuf, String>, sylph: &Result<PathBuf, String>) -> String {
    let mut s = String::new();
    let _ = match kun {
        Ok(_) => writeln!(
            s,
            "- Kun-peng {KUN_PENG} (crates.io `kun_peng`): Kraken 2's classification rewritten in Rust, on the same Kraken 2 database after `kun_peng hashshard`; `kun_peng direct` (all shards in memory, as Kraken 2), given the threads of the row for classifying plus its reading and writing threads. Per-read answers and a report. It prints one time for its shard load and classification together: the load (timed on one read) is taken off, and given below."
        ),
        Err(why) => writeln!(s, "- Kun-peng: NOT RUN ({why}); its columns are empty"),
    };
    let _ = match sylph {
        Ok(_) => writeln!(
            s,
            "- sylph (PyPI `pysylph` {PYSYLPH}, the Python binding of sylph): an abundance profiler (FracMinHash sketches, k = 31, ANI-corrected coverage), not a classifier: no per-read answers, genomes rather than taxa (summed here into species), nothing below its 95% ANI floor. Its seconds are the sample's sketch and profile, the genomes' sketches made beforehand."
        ),
        Err(why) => writeln!(s, "- sylph: NOT RUN ({why}); its columns are empty"),
    };
    s
}
