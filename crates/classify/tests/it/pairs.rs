//! Interleaved pairs: mates are classified together and get the same call.

use std::io::Read;
use std::path::PathBuf;

use flate2::read::MultiGzDecoder;
use mgds_classify::{ClassifyOptions, Pairing, classify};

use crate::{demo_db, demo_reads, run, scratch, truth};

fn revcomp(seq: &[u8]) -> Vec<u8> {
    seq.iter()
        .rev()
        .map(|&b| match b {
            b'A' => b'T',
            b'C' => b'G',
            b'G' => b'C',
            _ => b'A',
        })
        .collect()
}

/// (name, sequence) of the demo reads.
fn demo_sequences() -> Vec<(String, Vec<u8>)> {
    let mut text = String::new();
    MultiGzDecoder::new(std::fs::File::open(demo_reads()).unwrap()).read_to_string(&mut text).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    lines.chunks(4).map(|r| (r[0][1..].to_owned(), r[1].as_bytes().to_vec())).collect()
}

fn fastq(records: &[(String, Vec<u8>)]) -> String {
    let mut out = String::new();
    for (name, seq) in records {
        let seq = String::from_utf8_lossy(seq);
        out += &format!("@{name}\n{seq}\n+\n{}\n", "I".repeat(seq.len()));
    }
    out
}

/// An interleaved file of 300 pairs: each demo read split into a 75 bp read 1 and the reverse
/// complement of its other half as read 2, then 100 chimeric pairs whose mates come from reads
/// of different species.
fn interleaved() -> (PathBuf, Vec<(String, Vec<u8>)>) {
    let reads = demo_sequences();
    let truth = truth();
    let mut records = Vec::new();
    for (i, (_, seq)) in reads.iter().take(200).enumerate() {
        records.push((format!("frag{i}/1"), seq[..75].to_vec()));
        records.push((format!("frag{i}/2"), revcomp(&seq[75..])));
    }
    let mut made = 0;
    for i in 0..reads.len() - 1 {
        if made == 100 {
            break;
        }
        if truth[i].1 != truth[i + 1].1 && !truth[i].2.contains("heldout") {
            records.push((format!("chimera{i} 1:N:0:1"), reads[i].1.clone()));
            records.push((format!("chimera{i} 2:N:0:1"), revcomp(&reads[i + 1].1)));
            made += 1;
        }
    }
    let path = scratch("pairs").join("interleaved.fastq");
    std::fs::write(&path, fastq(&records)).unwrap();
    (path, records)
}

#[test]
fn mates_get_the_same_call() {
    let (path, records) = interleaved();
    let (results, _, rows) = run(&path, &ClassifyOptions::default());
    assert_eq!(results.n_reads, records.len() as u64);
    assert_eq!(rows.len(), records.len());
    for (pair, recs) in rows.chunks(2).zip(records.chunks(2)) {
        assert_eq!(pair[0].tax_id, pair[1].tax_id, "{}", recs[0].0);
        assert_eq!(pair[0].passed, pair[1].passed);
        // Each mate keeps its own length.
        assert_eq!(pair[0].seq_len, recs[0].1.len() as u64);
        assert_eq!(pair[1].seq_len, recs[1].1.len() as u64);
    }
    // Most split fragments are still called.
    let called = rows[..400].iter().filter(|r| r.passed && r.tax_id != 0).count();
    assert!(called > 380, "{called}");

    // The same file read as single-end: the chimeric mates then disagree.
    let single = ClassifyOptions { paired: Pairing::Single, ..ClassifyOptions::default() };
    let (_, _, rows) = run(&path, &single);
    let split = rows[400..].chunks(2).filter(|p| p[0].tax_id != p[1].tax_id).count();
    assert!(split > 50, "{split}");

    // Forcing interleaved gives the same as detecting it.
    let forced = ClassifyOptions { paired: Pairing::Interleaved, ..ClassifyOptions::default() };
    assert_eq!(run(&path, &forced).1, run(&path, &ClassifyOptions::default()).1);
}

#[test]
fn broken_pairs_are_errors() {
    let (_, records) = interleaved();
    let forced = ClassifyOptions { paired: Pairing::Interleaved, ..ClassifyOptions::default() };
    let mut sink = Vec::new();

    let odd = scratch("pairs").join("odd.fastq");
    std::fs::write(&odd, fastq(&records[..5])).unwrap();
    let e = classify(demo_db(), &odd, &forced, &mut sink).unwrap_err();
    assert!(matches!(e.sequence_error(), Some(mgds_formats::Error::OddInterleaved { records: 5, .. })), "{e}");

    let mut shuffled = records[..6].to_vec();
    shuffled.swap(3, 4);
    let bad = scratch("pairs").join("mismatch.fastq");
    std::fs::write(&bad, fastq(&shuffled)).unwrap();
    // Detected as interleaved from the first pair, then record 3's mate is missing.
    let e = classify(demo_db(), &bad, &ClassifyOptions::default(), &mut sink).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("record 3") && msg.contains("mismatch.fastq"), "{msg}");
}
