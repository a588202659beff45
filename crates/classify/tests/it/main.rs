//! Integration tests: the demo database is built once, then reads are classified against it;
//! real genomes (Debian example data) are compared with Kraken 2 and with the truth of
//! simulated reads.

mod abundance;
mod accuracy;
mod errors;
mod inputs;
mod kraken2;
mod pairs;
mod real;
mod real_genomes;
mod reproducible;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mgds_api::ClassificationResults;
use mgds_classify::{BuildInput, ClassifyOptions, Database, build, classify};
use mgds_formats::{ReadLevelReader, ReadLevelRecord};

/// `assets/demo/` of the repository.
pub fn demo_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo")
}

/// The demo reads.
pub fn demo_reads() -> PathBuf {
    demo_dir().join("reads.fastq.gz")
}

/// The database build input from the repository's demo files.
pub fn demo_input() -> BuildInput {
    let d = demo_dir();
    BuildInput {
        references: vec![d.join("genomes.fa.gz")],
        seqid2taxid: d.join("seqid2taxid.tsv"),
        nodes: d.join("taxonomy/nodes.dmp"),
        names: d.join("taxonomy/names.dmp"),
    }
}

/// A scratch folder under the target directory. The same names are reused by every run, so
/// repeated runs do not pile up files (the demo database alone is 12 MB).
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mgds-classify").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The demo database, built once per test run.
pub fn demo_db() -> &'static Database {
    static DB: OnceLock<Database> = OnceLock::new();
    DB.get_or_init(|| {
        let path = scratch("db").join("demo.mgdsdb");
        build(&demo_input(), &path).expect("build the demo database");
        Database::open(&path).expect("open the demo database")
    })
}

/// One read-level row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// `Tax ID`.
    pub tax_id: u64,
    /// `N Hits`.
    pub n_hits: u64,
    /// `Seq Len`.
    pub seq_len: u64,
    /// `Passed Filter`.
    pub passed: bool,
}

/// Classifies `reads`; returns the results, the read-level bytes and the rows as our reader
/// parses them.
pub fn run(reads: &Path, opts: &ClassifyOptions) -> (ClassificationResults, Vec<u8>, Vec<Row>) {
    let mut gz = Vec::new();
    let results = classify(demo_db(), reads, opts, &mut gz).expect("classify");
    // Tests run in parallel processes (nextest) as well as threads: both go into the name.
    let file = scratch("readlevel").join(format!("{}-{:?}.tsv.gz", std::process::id(), std::thread::current().id()));
    std::fs::write(&file, &gz).unwrap();
    let mut reader = ReadLevelReader::open(&file).expect("our read-level reader accepts it");
    let mut rec = ReadLevelRecord::default();
    let mut rows = Vec::new();
    while reader.read_record(&mut rec).unwrap() > 0 {
        let r = rec.as_row();
        rows.push(Row {
            tax_id: r.tax_id(),
            n_hits: r.n_hits().expect("N Hits column"),
            seq_len: r.seq_len().expect("Seq Len column"),
            passed: r.passed_filter().expect("Passed Filter column"),
        });
    }
    (results, gz, rows)
}

/// truth.tsv: read name -> (species tax id, source genome), in file order.
pub fn truth() -> Vec<(String, u64, String)> {
    let text = std::fs::read_to_string(demo_dir().join("truth.tsv")).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_owned(), f[1].parse().unwrap(), f[2].to_owned())
        })
        .collect()
}

/// Reads per tax id in a results table, by `readcount_w_children`.
pub fn counts_by_taxon(results: &ClassificationResults) -> HashMap<String, u64> {
    results.table.iter().map(|r| (r.tax_id.clone(), r.readcount_w_children)).collect()
}
