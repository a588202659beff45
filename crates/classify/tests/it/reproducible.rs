//! Same input, same output: the database file and the classification.

use mgds_classify::{ClassifyOptions, Database, build, demo};

use crate::{demo_db, demo_input, demo_reads, run, scratch};

#[test]
fn two_builds_give_identical_files() {
    let dir = scratch("rebuild");
    let (a, b) = (dir.join("a.mgdsdb"), dir.join("b.mgdsdb"));
    let ra = build(&demo_input(), &a).unwrap();
    let rb = build(&demo_input(), &b).unwrap();
    let (ba, bb) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert!(ba == bb, "database files differ");
    assert_eq!(ra.digest, rb.digest);
    assert_eq!(ra.bytes, ba.len() as u64);
    assert_eq!(ra.digest, demo_db().digest());
    let db = Database::open(&a).unwrap();
    assert_eq!(db.digest(), ra.digest);
    assert_eq!(db.digest().len(), 64);
    assert_eq!((db.k(), db.kmer_count() as u64), (ra.k, ra.kmers));
    assert_eq!(db.taxonomy().len(), ra.taxa);
    eprintln!(
        "demo database: {} minimizers, {} taxa, {} bytes, built in {:.2} s",
        ra.kmers, ra.taxa, ra.bytes, ra.seconds
    );
    // Each database has its k-mer profile and 150-base k-mer distribution beside it, the same
    // for both; no temporary file is left.
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    let expected = ["", ".150mers.kmer_distrib", ".kmer-profile"];
    let want: Vec<String> =
        ["a.mgdsdb", "b.mgdsdb"].iter().flat_map(|d| expected.iter().map(move |s| format!("{d}{s}"))).collect();
    assert_eq!(names, want);
    for suffix in &expected[1..] {
        let read = |d: &str| std::fs::read(dir.join(format!("{d}{suffix}"))).unwrap();
        assert!(read("a.mgdsdb") == read("b.mgdsdb"), "{suffix} differs");
    }
}

#[test]
fn embedded_demo_sources_build_the_same_database() {
    let dir = scratch("embedded");
    let input = demo::write_demo_sources(&dir.join("src")).unwrap();
    let report = build(&input, &dir.join("demo.mgdsdb")).unwrap();
    assert_eq!(report.digest, demo_db().digest());
    demo::write_demo_reads(&dir.join("reads.fastq.gz")).unwrap();
    assert_eq!(std::fs::read(dir.join("reads.fastq.gz")).unwrap(), std::fs::read(demo_reads()).unwrap());
}

#[test]
fn two_runs_give_identical_output_whatever_the_threads() {
    let one = ClassifyOptions { threads: 1, ..ClassifyOptions::default() };
    let two = ClassifyOptions { threads: 2, ..ClassifyOptions::default() };
    let (r1, b1, _) = run(&demo_reads(), &one);
    let (r2, b2, _) = run(&demo_reads(), &two);
    let (r3, b3, _) = run(&demo_reads(), &two);
    assert!(b1 == b2 && b2 == b3, "read-level bytes differ");
    assert_eq!(r1, r2);
    assert_eq!(r2, r3);
    assert_eq!(serde_json::to_string(&r1).unwrap(), serde_json::to_string(&r3).unwrap());
}
