//! What counting the reads' quality control costs a classification: the engine with and
//! without it (`ClassifyOptions::qc`), alternating runs, on short reads (the demo reads, 150 bp)
//! and on long reads (2–20 kbp cut from the demo genomes, with Nanopore-like qualities), at 1
//! and 2 threads. The goal is at most 5% of an upload's time; the engine's time is only part
//! of an upload's (the transfer, the queue and storing the results come on top), so the share
//! printed is an upper bound.
//!
//! `cargo bench -p mgds-classify --bench qc` (BENCH_REPEATS=N runs each N times, default 6,
//! in the order without-with, with-without, ...; the median of each counts, the fastest for the
//! counting alone).

use std::io::{Read, Write};
use std::path::Path;
use std::time::Instant;

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use mgds_classify::{ClassifyOptions, Database, build, classify, demo};

fn main() {
    let repeats: usize = std::env::var("BENCH_REPEATS").ok().and_then(|r| r.parse().ok()).unwrap_or(6);
    let dir = tempfile::tempdir().expect("temporary folder");
    let input = demo::write_demo_sources(&dir.path().join("src")).expect("demo sources");
    let db_path = dir.path().join("demo.mgdsdb");
    build(&input, &db_path).expect("build the demo database");
    let db = Database::open(&db_path).expect("open");

    let short = dir.path().join("short.fastq.gz");
    let mut fastq = Vec::new();
    MultiGzDecoder::new(demo::READS_FASTQ_GZ).read_to_end(&mut fastq).unwrap();
    let mut gz = GzEncoder::new(std::fs::File::create(&short).unwrap(), flate2::Compression::new(6));
    for _ in 0..50 {
        gz.write_all(&fastq).unwrap();
    }
    gz.finish().unwrap();
    let long = dir.path().join("long.fastq.gz");
    write_long_reads(&long, 40_000_000);

    // What the counting itself takes on one thread: parsing (from memory), then the same with
    // the counting.
    println!("| reads | parse (s) | with QC counting (s) | counting per base (ns) |");
    println!("|---|---|---|---|");
    for (name, path) in [("demo reads, 150 bp", &short), ("long reads, 2–20 kbp", &long)] {
        let mut best = [f64::MAX; 2];
        let mut bases = 0;
        for _ in 0..repeats {
            for (i, qc) in [false, true].into_iter().enumerate() {
                let (_, mut decoded) = mgds_formats::open(path).unwrap();
                let mut text = Vec::new();
                decoded.read_to_end(&mut text).unwrap();
                let started = Instant::now();
                let mut reader = mgds_formats::Reader::new(&text[..]);
                let mut record = mgds_formats::Record::default();
                let mut counter = mgds_formats::QcCounter::new();
                bases = 0;
                while reader.read_record(&mut record).unwrap() > 0 {
                    bases += record.sequence().len();
                    if qc {
                        counter.add(&record);
                    }
                }
                std::hint::black_box(counter.finish(false));
                best[i] = best[i].min(started.elapsed().as_secs_f64());
            }
        }
        println!("| {name} | {:.3} | {:.3} | {:.2} |", best[0], best[1], (best[1] - best[0]) * 1e9 / bases as f64);
    }
    println!();

    println!(
        "| reads | threads | reads in file | without QC (median s) | with QC (median s) | QC's cost | CPU without (s) | CPU with (s) | QC's CPU cost | goal |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (name, path) in [("demo reads, 150 bp", &short), ("long reads, 2–20 kbp", &long)] {
        for threads in [1, 2] {
            let mut times = [Vec::new(), Vec::new()];
            let mut cpu = [Vec::new(), Vec::new()];
            let mut n = 0;
            for r in 0..repeats {
                // Without, with; then with, without: neither always runs second.
                let order = if r % 2 == 0 { [false, true] } else { [true, false] };
                for qc in order {
                    let opts = ClassifyOptions { threads, qc, ..ClassifyOptions::default() };
                    let (started, cpu_before) = (Instant::now(), cpu_seconds());
                    let results = classify(&db, path, &opts, &mut std::io::sink()).expect("classify");
                    times[usize::from(qc)].push(started.elapsed().as_secs_f64());
                    cpu[usize::from(qc)].push(cpu_seconds() - cpu_before);
                    assert_eq!(results.qc.is_some(), qc);
                    n = results.n_reads;
                }
            }
            let best = times.map(median);
            let cpu = cpu.map(median);
            let cost = (best[1] - best[0]) / best[0] * 100.0;
            let cpu_cost = (cpu[1] - cpu[0]) / cpu[0] * 100.0;
            println!(
                "| {name} | {threads} | {n} | {:.3} | {:.3} | {cost:+.1}% | {:.2} | {:.2} | {cpu_cost:+.1}% | ≤ 5%{} |",
                best[0],
                best[1],
                cpu[0],
                cpu[1],
                if cost <= 5.0 { "" } else { " (missed)" }
            );
        }
    }
}

/// This process's CPU time (user and system), from `/proc/self/stat`, in seconds (to 10 ms).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest.split_whitespace().skip(11).take(2).filter_map(|v| v.parse().ok()).collect();
    f.iter().sum::<f64>() / 100.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len().is_multiple_of(2) { (v[m - 1] + v[m]) / 2.0 } else { v[m] }
}

/// About `bases` of long reads (2–20 kbp, 5% substitutions, qualities around Q12) cut from the
/// demo genomes, as gzipped FASTQ.
fn write_long_reads(path: &Path, bases: usize) {
    let mut text = String::new();
    MultiGzDecoder::new(demo::GENOMES_FA_GZ).read_to_string(&mut text).unwrap();
    let genomes: Vec<Vec<u8>> = text
        .split('>')
        .filter(|r| !r.is_empty())
        .map(|r| r.lines().skip(1).flat_map(|l| l.trim().bytes()).collect::<Vec<u8>>())
        .filter(|s| s.len() > 25_000)
        .collect();
    let mut rng = 20_261_128u64;
    let mut next = || {
        rng = mgds_classify::mix64(rng.wrapping_add(0x9e37_79b9_7f4a_7c15));
        rng
    };
    let mut gz = GzEncoder::new(std::fs::File::create(path).unwrap(), flate2::Compression::new(6));
    let (mut written, mut n) = (0, 0);
    while written < bases {
        let g = &genomes[(next() % genomes.len() as u64) as usize];
        let len = 2_000 + (next() % 18_000) as usize;
        let start = (next() % (g.len() - len) as u64) as usize;
        let mut read = g[start..start + len].to_vec();
        for b in &mut read {
            if next() % 100 < 5 {
                *b = b"ACGT"[(next() % 4) as usize];
            }
        }
        let quality: Vec<u8> = (0..len).map(|_| 33 + 5 + (next() % 15) as u8).collect();
        gz.write_all(format!("@long{n}\n").as_bytes()).unwrap();
        gz.write_all(&read).unwrap();
        gz.write_all(b"\n+\n").unwrap();
        gz.write_all(&quality).unwrap();
        gz.write_all(b"\n").unwrap();
        written += len;
        n += 1;
    }
    gz.finish().unwrap();
}
