//! Pairing files by name and by read headers, checking and interleaving pairs.

use mgds_formats::{
    Error, FileGroup, OutputCompression, PairReason, ReadPairing, SingleReason, check_pair, group_paths, interleave,
    validate,
};

use crate::{gunzip, gz, listing, write};

const R1: &[u8] = b"@M1:7:FC:1:1:10:20 1:N:0:ACGT\nACGT\n+\nIIII\n@M1:7:FC:1:1:10:21 1:N:0:ACGT\nGG\n+\nI#";
const R2: &[u8] = b"@M1:7:FC:1:1:10:20 2:N:0:ACGT\nTTTT\n+\n####\n@M1:7:FC:1:1:10:21 2:N:0:ACGT\nCC\n+\n#I\n";

#[test]
fn pairs_by_read_headers_when_names_say_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let fwd = write(dir.path(), "sampleA_forward.fq", R1);
    let rev = write(dir.path(), "sampleA_reverse.fq.gz", &gz(R2));
    let other = write(dir.path(), "sampleB.fq", b"@x/1\nA\n+\nI\n");
    let named1 = write(dir.path(), "S9_L002_R1_001.fastq", R1);
    let named2 = write(dir.path(), "S9_L002_R2_001.fastq", R2);
    let groups = group_paths(&[&rev, &other, &named1, &fwd, &named2]);
    assert_eq!(
        groups,
        vec![
            FileGroup::Pair {
                r1: fwd.clone(),
                r2: rev.clone(),
                reason: PairReason::ReadHeaders { read_id: "M1:7:FC:1:1:10:20".into() },
                lane: None,
            },
            FileGroup::Single { path: other, reason: SingleReason::NotPaired },
            FileGroup::Pair { r1: named1, r2: named2, reason: PairReason::FileName { pattern: "_R1_" }, lane: Some(2) },
        ]
    );
}

#[test]
fn check_pair_counts_and_names() {
    let dir = tempfile::tempdir().unwrap();
    let r1 = write(dir.path(), "x_R1.fq", R1);
    let r2 = write(dir.path(), "x_R2.fq.gz", &gz(R2));
    let s = check_pair(&r1, &r2).unwrap();
    assert_eq!((s.r1.records, s.r2.records, s.r1.bases, s.r2.bases), (2, 2, 6, 6));
    assert_eq!((s.r1.pairing, s.r2.pairing), (ReadPairing::Mate1, ReadPairing::Mate2));

    // R2 loses its last record.
    let short = write(dir.path(), "short_R2.fq", &R2[..R2.len() - 38]);
    let e = check_pair(&r1, &short).unwrap_err();
    assert!(matches!(e, Error::PairLengthMismatch { records: 1, .. }), "{e:?}");
    assert!(
        e.to_string().starts_with(&format!(
            "{} ends after 1 records but its mate file {}",
            short.display(),
            r1.display()
        )),
        "{e}"
    );

    // Reads out of order.
    let swapped = [&R2[42..], &R2[..42]].concat();
    let swapped = write(dir.path(), "swapped_R2.fq", &swapped);
    let e = check_pair(&r1, &swapped).unwrap_err();
    assert!(matches!(e, Error::NameMismatch { record: 1, .. }), "{e:?}");

    // R2 given first.
    let e = check_pair(&r2, &r1).unwrap_err();
    assert!(e.to_string().contains("give the read-1 (R1) file first"), "{e}");
}

#[test]
fn interleave_writes_exact_bytes_plain_and_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let r1 = write(dir.path(), "x_R1.fq", R1);
    let r2 = write(dir.path(), "x_R2.fq.gz", &gz(R2));
    // R1's last record has no final newline: one is added before R2's record.
    let expected = b"@M1:7:FC:1:1:10:20 1:N:0:ACGT\nACGT\n+\nIIII\n@M1:7:FC:1:1:10:20 2:N:0:ACGT\nTTTT\n+\n####\n\
@M1:7:FC:1:1:10:21 1:N:0:ACGT\nGG\n+\nI#\n@M1:7:FC:1:1:10:21 2:N:0:ACGT\nCC\n+\n#I\n";
    let out = dir.path().join("x.fq");
    interleave(&r1, &r2, &out, OutputCompression::Plain).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), expected.to_vec());
    assert_eq!(validate(&out).unwrap().pairing, ReadPairing::Interleaved);

    let out_gz = dir.path().join("x.fq.gz");
    let s = interleave(&r1, &r2, &out_gz, OutputCompression::GZIP).unwrap();
    assert_eq!(s.r1.records, 2);
    assert_eq!(gunzip(&std::fs::read(&out_gz).unwrap()), expected.to_vec());
    assert_eq!(listing(dir.path()), ["x.fq", "x.fq.gz", "x_R1.fq", "x_R2.fq.gz"]);
}

#[test]
fn failed_interleave_leaves_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let r1 = write(dir.path(), "y_R1.fq", R1);
    let r2 = write(dir.path(), "y_R2.fq", &R2[..R2.len() - 2]);
    let e = interleave(&r1, &r2, dir.path().join("y.fq"), OutputCompression::Plain).unwrap_err();
    assert!(matches!(e, Error::Parse { record: 2, .. }), "{e:?}");
    assert_eq!(listing(dir.path()), ["y_R1.fq", "y_R2.fq"]);
    let e = interleave(&r1, &r2, &r1, OutputCompression::Plain).unwrap_err();
    assert!(matches!(e, Error::OutputIsInput { .. }), "{e:?}");
}
