//! Measures the classifier: database build time and size, and reads per second.
//!
//! `cargo run -p mgds-classify --release --example classify-speed [-- REPEATS [EXTRA_MBP]]`
//!
//! Builds the demo database in a temporary folder, writes the demo reads REPEATS times (default
//! 50, so 300,000 reads of 150 bp) into one gzipped FASTQ, and classifies it with 1 and 2
//! threads. EXTRA_MBP adds that many megabases of random reference sequence (mapped to
//! Bacteria) so the index outgrows the CPU caches as a real database does.
//!
//! Also prints species-level precision and recall on the demo reads for a few confidence
//! thresholds (definitions in `tests/it/accuracy.rs`).

use std::io::{Read, Write};
use std::time::Instant;

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use mgds_classify::{ClassifyOptions, Database, build, classify, demo};

fn main() {
    let mut args = std::env::args().skip(1);
    let repeats: usize = args.next().map_or(50, |a| a.parse().expect("REPEATS"));
    let extra_mbp: usize = args.next().map_or(0, |a| a.parse().expect("EXTRA_MBP"));
    let dir = tempfile::tempdir().expect("temporary folder");
    let mut input = demo::write_demo_sources(&dir.path().join("src")).expect("demo sources");

    if extra_mbp > 0 {
        let mut state = 42u64;
        let mut fasta = Vec::new();
        for n in 0..extra_mbp {
            writeln!(fasta, ">extra{n}").unwrap();
            for _ in 0..1_000_000 / 80 {
                for _ in 0..80 {
                    state = mgds_classify::mix64(state.wrapping_add(0x9e37_79b9_7f4a_7c15));
                    fasta.push(b"ACGT"[(state >> 62) as usize]);
                }
                fasta.push(b'\n');
            }
        }
        let path = dir.path().join("extra.fa");
        std::fs::write(&path, fasta).unwrap();
        input.references.push(path);
        let mut map = std::fs::read_to_string(&input.seqid2taxid).unwrap();
        for n in 0..extra_mbp {
            map += &format!("extra{n}\t2\n");
        }
        std::fs::write(&input.seqid2taxid, map).unwrap();
    }

    let db_path = dir.path().join("demo.mgdsdb");
    let report = build(&input, &db_path).expect("build");
    println!(
        "build: {:.2} s, {} sequences, {} bases, {} minimizers, {} taxa, {:.1} MB",
        report.seconds,
        report.sequences,
        report.bases,
        report.kmers,
        report.taxa,
        report.bytes as f64 / 1e6
    );
    let started = Instant::now();
    let db = Database::open(&db_path).expect("open");
    println!("open: {:.2} s", started.elapsed().as_secs_f64());

    let mut fastq = Vec::new();
    MultiGzDecoder::new(demo::READS_FASTQ_GZ).read_to_end(&mut fastq).unwrap();
    let reads_path = dir.path().join("reads.fastq.gz");
    let mut gz = GzEncoder::new(std::fs::File::create(&reads_path).unwrap(), flate2::Compression::default());
    for _ in 0..repeats {
        gz.write_all(&fastq).unwrap();
    }
    gz.finish().unwrap();

    // The floor set by decompressing and parsing alone (one thread).
    let started = Instant::now();
    let (_, decoded) = mgds_formats::open(&reads_path).unwrap();
    let mut reader = mgds_formats::Reader::new(decoded);
    let mut record = mgds_formats::Record::default();
    let mut n = 0u64;
    while reader.read_record(&mut record).unwrap() > 0 {
        n += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    println!("decompress + parse only: {n} reads in {secs:.2} s, {:.0} reads/s", n as f64 / secs);

    if std::env::var_os("BENCH_THREADS").is_none() {
        accuracy_by_confidence(&db);
    }

    println!("| threads | reads | seconds | reads/s |");
    println!("|---|---|---|---|");
    // BENCH_THREADS=2 measures one thread count only (for example under `perf stat`).
    let counts: Vec<usize> = match std::env::var("BENCH_THREADS") {
        Ok(t) => vec![t.parse().expect("BENCH_THREADS")],
        Err(_) => vec![1, 2],
    };
    for threads in counts {
        let opts = ClassifyOptions { threads, ..ClassifyOptions::default() };
        let mut sink = std::io::sink();
        let started = Instant::now();
        let results = classify(&db, &reads_path, &opts, &mut sink).expect("classify");
        let secs = started.elapsed().as_secs_f64();
        println!("| {threads} | {} | {secs:.2} | {:.0} |", results.n_reads, results.n_reads as f64 / secs);
    }
}

/// Species-level precision and recall on the demo reads, by confidence threshold.
fn accuracy_by_confidence(db: &Database) {
    let truth_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo/truth.tsv");
    let truth = std::fs::read_to_string(truth_path).expect("assets/demo/truth.tsv");
    let truth: Vec<(u64, bool)> = truth
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[1].parse().unwrap(), f[2].contains("heldout"))
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let reads = dir.path().join("reads.fastq.gz");
    demo::write_demo_reads(&reads).unwrap();
    let taxonomy = db.taxonomy();
    println!("| confidence | precision | recall | held-out strain precision | held-out strain recall |");
    println!("|---|---|---|---|---|");
    for confidence in [0.0, 0.05, 0.1, 0.2, 0.3, 0.5] {
        let opts = ClassifyOptions { confidence, ..ClassifyOptions::default() };
        let mut gz = Vec::new();
        classify(db, &reads, &opts, &mut gz).unwrap();
        let mut text = String::new();
        MultiGzDecoder::new(&gz[..]).read_to_string(&mut text).unwrap();
        // [in database, held out] x (reads, species calls, correct)
        let mut score = [(0u64, 0u64, 0u64); 2];
        for (line, &(species, held_out)) in text.lines().skip(1).zip(&truth) {
            let f: Vec<&str> = line.split('\t').collect();
            let s = &mut score[usize::from(held_out)];
            s.0 += 1;
            let tax_id: u64 = f[0].parse().unwrap();
            let called = taxonomy
                .index_of(tax_id)
                .and_then(|i| taxonomy.ancestor_at_rank(i, "species"))
                .map(|i| taxonomy.tax_id(i));
            if let (Some(called), "T") = (called, f[3]) {
                s.1 += 1;
                s.2 += u64::from(called == species);
            }
        }
        let p = |s: (u64, u64, u64)| s.2 as f64 / s.1.max(1) as f64;
        let r = |s: (u64, u64, u64)| s.2 as f64 / s.0.max(1) as f64;
        println!(
            "| {confidence} | {:.4} | {:.4} | {:.4} | {:.4} |",
            p(score[0]),
            r(score[0]),
            p(score[1]),
            r(score[1])
        );
    }
}
