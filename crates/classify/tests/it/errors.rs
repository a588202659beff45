//! Bad input gives errors that name the file (and the record or line).

use mgds_classify::{ClassifyOptions, Database, Error, build, classify};

use crate::{demo_db, demo_input, demo_reads, scratch};

fn classify_err(name: &str, bytes: &[u8]) -> (Error, String) {
    let path = scratch("errors").join(name);
    std::fs::write(&path, bytes).unwrap();
    let e = classify(demo_db(), &path, &ClassifyOptions::default(), &mut Vec::new()).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains(name), "message does not name the file: {msg}");
    (e, msg)
}

#[test]
fn truncated_gzip_names_the_file() {
    let bytes = std::fs::read(demo_reads()).unwrap();
    let (e, msg) = classify_err("cut.fastq.gz", &bytes[..bytes.len() / 2]);
    assert!(matches!(e.sequence_error(), Some(mgds_formats::Error::Truncated { .. })), "{msg}");
}

#[test]
fn empty_and_malformed_reads_are_refused() {
    let (e, msg) = classify_err("empty.fastq", b"");
    assert!(matches!(e, Error::NoReads { .. }), "{msg}");
    let (e, _) = classify_err("blank.fastq", b"\n\n");
    assert!(matches!(e, Error::NoReads { .. }));

    let (e, msg) = classify_err("bad.fastq", b"@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nII\n");
    assert!(matches!(e.sequence_error(), Some(mgds_formats::Error::Parse { record: 2, line: 8, .. })), "{msg}");
    assert!(msg.contains("line 8") && msg.contains("r2"), "{msg}");

    let (e, msg) = classify_err("notes.txt", b"hello, these are not reads\n");
    assert!(matches!(e.sequence_error(), Some(mgds_formats::Error::NotSequence { .. })), "{msg}");

    let missing = scratch("errors").join("missing.fastq");
    let e = classify(demo_db(), &missing, &ClassifyOptions::default(), &mut Vec::new()).unwrap_err();
    assert!(e.to_string().contains("missing.fastq"));

    let opts = ClassifyOptions { confidence: 1.5, ..ClassifyOptions::default() };
    assert!(matches!(classify(demo_db(), &demo_reads(), &opts, &mut Vec::new()), Err(Error::Options(_))));
}

#[test]
fn wrong_or_cut_database_files_are_refused() {
    let dir = scratch("badb");
    let not_db = dir.join("reads-as-db.mgdsdb");
    std::fs::copy(demo_reads(), &not_db).unwrap();
    let e = Database::open(&not_db).unwrap_err();
    assert!(matches!(e, Error::NotDatabase { .. }) && e.to_string().contains("reads-as-db.mgdsdb"));

    let good = std::fs::read(demo_db().path()).unwrap();
    let cut = dir.join("cut.mgdsdb");
    for len in [12, 100, good.len() / 2, good.len() - 1] {
        std::fs::write(&cut, &good[..len]).unwrap();
        let e = Database::open(&cut).unwrap_err();
        assert!(matches!(e, Error::DatabaseCorrupt { .. }), "{len}: {e}");
        assert!(e.to_string().contains("cut.mgdsdb"));
    }
}

#[test]
fn bad_build_inputs_name_the_file_and_line() {
    let dir = scratch("badbuild");
    let mut input = demo_input();
    let map = dir.join("map.tsv");
    std::fs::write(&map, "Escherichia_coli_536.chr\t562\nKlebsiella_pneumoniae_HS11286.chr\t99999999\n").unwrap();
    input.seqid2taxid = map;
    let e = build(&input, &dir.join("x.mgdsdb")).unwrap_err().to_string();
    assert!(e.contains("map.tsv, line 2") && e.contains("99999999"), "{e}");

    let mut input = demo_input();
    let map = dir.join("short-map.tsv");
    std::fs::write(&map, "Escherichia_coli_536.chr\t562\n").unwrap();
    input.seqid2taxid = map;
    let e = build(&input, &dir.join("x.mgdsdb")).unwrap_err();
    assert!(matches!(e, Error::UnmappedSequence { record: 2, .. }), "{e}");
    assert!(!dir.join("x.mgdsdb").exists());
}
