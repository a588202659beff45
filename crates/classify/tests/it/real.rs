//! The real-genome fixture of the Kraken 2 and abundance tests: five genomes of four species
//! (a Klebsiella with six plasmids mapped to its strain, a two-chromosome Vibrio, a one-record
//! E. coli, two Helicobacter pylori assemblies sharing the species tax id), a Kraken 2 database
//! of them built with Debian's `kraken2-build`, and simulated reads (single-end and paired) of
//! known origin, from these genomes and from one that is not in the database (S. aureus). Set-up is cached ([`crate::real_genomes`]); our own databases are built once
//! per test binary.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mgds_classify::{BuildInput, BuildOptions, Database, build_with};

use crate::real_genomes::{self, Prepared, Res, Sample};

/// The genomes of the database and the coverage of their simulated reads.
const GENOMES: [(&str, f64); 5] = [
    ("Kpneumoniae_HS11286", 0.4),
    ("Vcholerae_O395", 0.3),
    ("Ecoli_536", 0.25),
    ("Hpylori_G27", 0.5),
    ("Hpylori_Puno120", 0.2),
];

/// A genome with reads in the samples but not in the database.
const ABSENT: (&str, f64) = ("Saureus_RF122", 0.1);

/// Everything set up.
pub struct Fixture {
    /// The genomes of the database, in [`GENOMES`] order.
    pub genomes: Vec<Prepared>,
    /// The genome with reads that is not in the database; its reads are genome
    /// `genomes.len()` in the samples' truth.
    pub absent: Prepared,
    /// `nodes.dmp` and `names.dmp`.
    pub taxonomy: PathBuf,
    /// The Kraken 2 database folder.
    pub kraken2: PathBuf,
    /// Single-end reads.
    pub single: Sample,
    /// Paired reads (two files).
    pub paired: Sample,
}

/// The fixture, set up once per process. Fails the test with the reason (Kraken 2 missing,
/// package download failed...).
pub fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| setup().unwrap_or_else(|e| panic!("{e}")))
}

fn setup() -> Res<Fixture> {
    real_genomes::require_kraken2()?;
    let mut genomes = Vec::new();
    for (label, _) in GENOMES {
        genomes.push(real_genomes::prepare(real_genomes::genome(label))?);
    }
    let taxonomy = real_genomes::cache("taxonomy-tests")?;
    real_genomes::write_taxonomy(&taxonomy)?;
    let refs: Vec<&Prepared> = genomes.iter().collect();
    let kraken2 = real_genomes::cached_kraken2(&taxonomy, &refs, 7)?;
    let absent = real_genomes::prepare(real_genomes::genome(ABSENT.0))?;
    let with_coverage: Vec<(&Prepared, f64)> =
        genomes.iter().zip(GENOMES).map(|(g, (_, c))| (g, c)).chain([(&absent, ABSENT.1)]).collect();
    let single = real_genomes::simulate("tests-single", &with_coverage, false, 150, 20_250_101, false)?;
    let paired = real_genomes::simulate("tests-paired", &with_coverage, true, 150, 20_250_202, false)?;
    Ok(Fixture { genomes, absent, taxonomy, kraken2, single, paired })
}

/// A scratch folder for this test binary's outputs.
pub fn scratch(name: &str) -> PathBuf {
    crate::scratch(&format!("real-{name}"))
}

/// How our database is told each sequence's taxon (and genome).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapKind {
    /// `seq_id<TAB>tax_id`, plain FASTA headers.
    TwoColumns,
    /// `seq_id<TAB>tax_id<TAB>genome`, plain FASTA headers.
    ThreeColumns,
    /// No map: `kraken:taxid|N|` headers.
    Headers,
    /// No map, one file: every genome's records with `kraken:taxid|N|` headers in one FASTA,
    /// as Kraken 2's `library.fna`.
    Library,
}

/// Our database of the fixture's genomes, built once per test binary (test processes running
/// side by side wait for the first one).
pub fn our_db(kind: MapKind) -> &'static Database {
    static DBS: OnceLock<std::sync::Mutex<HashMap<String, &'static Database>>> = OnceLock::new();
    let name = format!("{kind:?}");
    let dbs = DBS.get_or_init(Default::default);
    let mut map = dbs.lock().unwrap();
    if let Some(db) = map.get(&name) {
        return db;
    }
    let db: &'static Database = Box::leak(Box::new(build_ours(kind).unwrap_or_else(|e| panic!("{e}"))));
    map.insert(name, db);
    db
}

fn build_ours(kind: MapKind) -> Res<Database> {
    let fx = fixture();
    // One build per test binary: its path and modification time name the folder.
    let exe = std::env::current_exe()?;
    let stamp = exe.metadata()?.modified()?.duration_since(std::time::UNIX_EPOCH)?.as_nanos();
    let dir = scratch(&format!("dbs-{stamp}"));
    // Databases of earlier builds of the test binary are not used again.
    if let Ok(entries) = std::fs::read_dir(dir.parent().expect("a parent")) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("real-dbs-") && e.path() != dir {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let out = dir.join(format!("{kind:?}.mgdsdb"));
    let lock = std::fs::File::create(dir.join(format!("{kind:?}.lock")))?;
    lock.lock()?;
    if !out.exists() {
        let map = dir.join(format!("{kind:?}.tsv"));
        let mut text = String::new();
        for g in &fx.genomes {
            for (id, _) in &g.records {
                match kind {
                    MapKind::TwoColumns => writeln!(text, "{id}\t{}", g.tax_id)?,
                    MapKind::ThreeColumns => writeln!(text, "{id}\t{}\t{}", g.tax_id, g.label)?,
                    MapKind::Headers | MapKind::Library => {}
                }
            }
        }
        std::fs::write(&map, text)?;
        let references = match kind {
            MapKind::Library => {
                let library = dir.join("library.fna");
                let mut all = Vec::new();
                for g in &fx.genomes {
                    all.extend(std::fs::read(&g.kraken)?);
                }
                std::fs::write(&library, all)?;
                vec![library]
            }
            MapKind::Headers => fx.genomes.iter().map(|g| g.kraken.clone()).collect(),
            _ => fx.genomes.iter().map(|g| g.plain.clone()).collect(),
        };
        let headers = matches!(kind, MapKind::Headers | MapKind::Library);
        let input = BuildInput {
            references,
            seqid2taxid: if headers { PathBuf::new() } else { map },
            nodes: fx.taxonomy.join("nodes.dmp"),
            names: fx.taxonomy.join("names.dmp"),
        };
        build_with(&input, &BuildOptions::default(), &out)?;
    }
    Ok(Database::open(&out)?)
}

/// The L1 distance between two distributions over the same keys (missing keys are 0).
pub fn l1(a: &HashMap<u64, f64>, b: &HashMap<u64, f64>) -> f64 {
    let keys: std::collections::BTreeSet<u64> = a.keys().chain(b.keys()).copied().collect();
    keys.iter().map(|k| (a.get(k).unwrap_or(&0.0) - b.get(k).unwrap_or(&0.0)).abs()).sum()
}

/// Normalises values to sum to 1.
pub fn normalise(v: HashMap<u64, f64>) -> HashMap<u64, f64> {
    let total: f64 = v.values().sum();
    v.into_iter().map(|(k, x)| (k, x / total)).collect()
}

/// A file's lines, for comparisons that show the first difference.
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::to_owned)
        .collect()
}
