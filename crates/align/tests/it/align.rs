//! `align`: mapping rate, breadth and depth, per-contig rows and the SAM text.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::GzEncoder;
use mgds_align::{AlignOptions, AlignmentResults, Error, Preset, align};

use crate::sim::{self, Rng};

const READ_LEN: usize = 150;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn write_gz(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    let mut gz = GzEncoder::new(std::fs::File::create(&path).unwrap(), Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap();
    path
}

fn run(reference: &Path, reads: &Path) -> (AlignmentResults, String) {
    let mut sam = Vec::new();
    let opts = AlignOptions { threads: 2, preset: Preset::ShortReads, ..Default::default() };
    let results = align(reference, reads, &opts, &mut sam).unwrap();
    (results, String::from_utf8(sam).unwrap())
}

#[test]
fn reads_with_one_percent_errors_map_and_cover_the_whole_reference() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(1);
    let genome = sim::random_seq(&mut rng, 50_000);
    // 20x: 50 kb * 20 / 150 bp.
    let reads = sim::reads_from(&mut rng, &genome, 0, genome.len(), 6_667, READ_LEN, 0.01);
    let reference = write_gz(dir.path(), "ref.fa.gz", &sim::fasta(&[("chr1 Synthetic genome", &genome)]));
    let reads_path = write_gz(dir.path(), "reads.fq.gz", &sim::fastq("r", &reads));

    let (r, sam) = run(&reference, &reads_path);

    assert_eq!(r.reference_name, "chr1 Synthetic genome");
    assert_eq!(r.reference_length, 50_000);
    assert_eq!(r.n_reads, 6_667);
    assert!(r.percent_mapped > 95.0, "{r:?}");
    assert!(r.breadth_of_coverage > 0.999, "{r:?}");
    assert!((r.mean_depth - 20.0).abs() < 1.0, "{r:?}");
    assert_eq!(r.contigs.len(), 1);
    assert_eq!(r.contigs[0].name, "chr1");
    assert_eq!(r.contigs[0].mapped_reads, r.n_mapped_reads);
    check_sam(&sam, &r);

    // The body is plain JSON and comes back the same.
    let json = serde_json::to_string(&r).unwrap();
    assert_eq!(serde_json::from_str::<AlignmentResults>(&json).unwrap(), r);
}

#[test]
fn reads_from_an_unrelated_sequence_do_not_map() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(2);
    let genome = sim::random_seq(&mut rng, 30_000);
    let other = sim::random_seq(&mut rng, 30_000);
    let reads = sim::reads_from(&mut rng, &other, 0, other.len(), 2_000, READ_LEN, 0.01);
    let reference = write(dir.path(), "ref.fa", &sim::fasta(&[("chr", &genome)]));
    let reads_path = write(dir.path(), "reads.fq", &sim::fastq("r", &reads));

    let (r, sam) = run(&reference, &reads_path);

    assert_eq!(r.n_reads, 2_000);
    assert_eq!(r.n_mapped_reads, 0, "{r:?}");
    assert_eq!(r.breadth_of_coverage, 0.0);
    assert_eq!(r.mean_depth, 0.0);
    check_sam(&sam, &r);
}

#[test]
fn uncovered_region_gives_partial_breadth_and_rows_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(3);
    let a = sim::random_seq(&mut rng, 30_000);
    let b = sim::random_seq(&mut rng, 20_000);
    // Contig a: reads only from its first half; contig b: all of it; both about 20x.
    let mut reads = sim::reads_from(&mut rng, &a, 0, 15_000, 2_000, READ_LEN, 0.01);
    reads.extend(sim::reads_from(&mut rng, &b, 0, 20_000, 2_667, READ_LEN, 0.01));
    let reference = write(dir.path(), "ref.fa", &sim::fasta(&[("contig_a", &a), ("contig_b plasmid", &b)]));
    // FASTA reads work as well as FASTQ.
    let fasta_reads: Vec<(String, &[u8])> =
        reads.iter().enumerate().map(|(i, r)| (format!("read{i}"), r.as_slice())).collect();
    let named: Vec<(&str, &[u8])> = fasta_reads.iter().map(|(n, r)| (n.as_str(), *r)).collect();
    let reads_path = write(dir.path(), "reads.fa", &sim::fasta(&named));

    let (r, sam) = run(&reference, &reads_path);

    let names: Vec<&str> = r.contigs.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["contig_a", "contig_b"]);
    let (ca, cb) = (&r.contigs[0], &r.contigs[1]);
    assert!((ca.breadth_of_coverage - 0.5).abs() < 0.01, "{ca:?}");
    assert!(cb.breadth_of_coverage > 0.999, "{cb:?}");
    assert!((r.breadth_of_coverage - 0.7).abs() < 0.01, "{r:?}");
    // Reads of one contig land on that contig.
    assert!(ca.mapped_reads >= 1_950 && ca.mapped_reads <= 2_000, "{ca:?}");
    assert!(cb.mapped_reads >= 2_600 && cb.mapped_reads <= 2_667, "{cb:?}");

    // The rows add up to the totals.
    let len: u64 = r.contigs.iter().map(|c| c.length).sum();
    assert_eq!(len, r.reference_length);
    let mapped: u64 = r.contigs.iter().map(|c| c.mapped_reads).sum();
    assert_eq!(mapped, r.n_mapped_reads);
    let covered: f64 = r.contigs.iter().map(|c| c.breadth_of_coverage * c.length as f64).sum();
    assert!((covered / len as f64 - r.breadth_of_coverage).abs() < 1e-9);
    let aligned: f64 = r.contigs.iter().map(|c| c.mean_depth * c.length as f64).sum();
    assert!((aligned / len as f64 - r.mean_depth).abs() < 1e-9);
    check_sam(&sam, &r);
}

/// The SAM has @HD first, one @SQ per contig and @PG lines; then one primary line per mapped
/// read and one unmapped line per other read, in the reads' order.
fn check_sam(sam: &str, r: &AlignmentResults) {
    assert!(sam.starts_with("@HD\tVN:1.6\t"), "{}", &sam[..40.min(sam.len())]);
    let header: Vec<&str> = sam.lines().take_while(|l| l.starts_with('@')).collect();
    let sq: Vec<&str> = header.iter().filter(|l| l.starts_with("@SQ")).copied().collect();
    let expected: Vec<String> = r.contigs.iter().map(|c| format!("@SQ\tSN:{}\tLN:{}", c.name, c.length)).collect();
    assert_eq!(sq, expected);
    assert!(header.iter().any(|l| l.starts_with("@PG\tID:mgds-align")));

    let mut primary = HashSet::new();
    let mut unmapped = 0;
    for line in sam.lines().skip(header.len()) {
        let fields: Vec<&str> = line.split('\t').collect();
        assert!(fields.len() >= 11, "{line}");
        let flag: u16 = fields[1].parse().unwrap();
        if flag & 0x4 != 0 {
            unmapped += 1;
            assert_eq!(fields[2], "*");
        } else if flag & 0x900 == 0 {
            assert!(primary.insert(fields[0].to_owned()), "two primary lines for {}", fields[0]);
            assert!(r.contigs.iter().any(|c| c.name == fields[2]), "{line}");
            assert!(fields[3].parse::<u64>().unwrap() >= 1);
            let seq_len = fields[9].len();
            assert_eq!(seq_len, READ_LEN, "{line}");
        }
    }
    assert_eq!(primary.len() as u64, r.n_mapped_reads);
    assert_eq!(primary.len() as u64 + unmapped, r.n_reads);
}

#[test]
fn a_reads_file_that_is_not_sequence_data_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(4);
    let genome = sim::random_seq(&mut rng, 5_000);
    let reference = write(dir.path(), "ref.fa", &sim::fasta(&[("chr", &genome)]));
    let reads = write(dir.path(), "reads.csv", "sample,reads\nA,1\n");
    let err = align(&reference, &reads, &AlignOptions::default(), &mut Vec::new()).unwrap_err();
    assert!(matches!(&err, Error::Sequence(e) if matches!(**e, mgds_formats::Error::NotSequence { .. })), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("reads.csv is not a FASTA or FASTQ file"), "{msg}");
    assert!(msg.contains("text starting `sample"), "{msg}");

    let empty = write(dir.path(), "empty.fq", "");
    let err = align(&reference, &empty, &AlignOptions::default(), &mut Vec::new()).unwrap_err();
    assert!(err.to_string().contains("empty.fq is empty"), "{err}");
}

#[test]
fn repeated_or_empty_reference_sequences_are_refused_before_minimap2_sees_them() {
    let dir = tempfile::tempdir().unwrap();
    let reads = write(dir.path(), "reads.fq", "@r\nACGT\n+\nIIII\n");
    let reference = write(dir.path(), "ref.fa", ">a\nACGTACGT\n>b\nACGT\n>a second\nTTTT\n");
    let err = align(&reference, &reads, &AlignOptions::default(), &mut Vec::new()).unwrap_err();
    assert!(
        err.to_string().ends_with(
            "ref.fa, line 5: the name `a` is used twice (first at line 1); give every sequence its own name"
        ),
        "{err}"
    );
    let reference = write(dir.path(), "ref2.fa", ">a\nACGT\n>b\n>c\nACGT\n");
    let err = align(&reference, &reads, &AlignOptions::default(), &mut Vec::new()).unwrap_err();
    assert!(err.to_string().contains("ref2.fa, line 3: `b` has an empty sequence"), "{err}");
}

/// Read pairs of fragments of 250 to 450 bp: read 1 from the fragment's start, read 2 the
/// reverse complement of its end, interleaved under `p{i}/1` and `p{i}/2`.
fn interleaved_pairs(rng: &mut Rng, genome: &[u8], n: usize) -> (String, Vec<usize>) {
    let mut text = String::new();
    let mut lengths = Vec::new();
    for i in 0..n {
        let frag = 250 + rng.below(201);
        let start = rng.below(genome.len() - frag);
        let r1 = genome[start..start + READ_LEN].to_vec();
        let r2 = sim::revcomp(&genome[start + frag - READ_LEN..start + frag]);
        // Half the fragments come from the other strand: read 1 is then the reverse one, at the
        // fragment's right end, and read 2 the forward one at its left.
        let (r1, r2) = if i % 2 == 0 { (r1, r2) } else { (r2, r1) };
        for (mate, r) in [(1, &r1), (2, &r2)] {
            let seq = std::str::from_utf8(r).unwrap();
            text.push_str(&format!("@p{i}/{mate}\n{seq}\n+\n{}\n", "I".repeat(r.len())));
        }
        lengths.push(frag);
    }
    (text, lengths)
}

#[test]
fn interleaved_pairs_are_mapped_as_pairs_with_their_mate_fields() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(7);
    let genome = sim::random_seq(&mut rng, 40_000);
    let reference = write(dir.path(), "ref.fa", &sim::fasta(&[("chr1", &genome)]));
    let (text, lengths) = interleaved_pairs(&mut rng, &genome, 400);
    let reads = write_gz(dir.path(), "pairs.fq.gz", &text);

    let (r, sam) = run(&reference, &reads);
    assert!(r.paired, "{r:?}");
    assert_eq!(r.n_reads, 800);
    assert!(r.n_mapped_reads >= 790, "{r:?}");
    assert!(r.n_properly_paired_reads >= 780, "{r:?}");

    // Both reads of a pair under one name, flagged as read 1 and read 2, each pointing at the
    // other, with template lengths of the fragment, opposite in sign.
    let mut by_pair: std::collections::HashMap<String, Vec<Vec<String>>> = Default::default();
    for line in sam.lines().filter(|l| !l.starts_with('@')) {
        let f: Vec<String> = line.split('\t').map(str::to_string).collect();
        let flag: u16 = f[1].parse().unwrap();
        assert_ne!(flag & 0x1, 0, "every line is of a pair: {line}");
        if flag & 0x900 == 0 {
            by_pair.entry(f[0].clone()).or_default().push(f);
        }
    }
    assert_eq!(by_pair.len(), 400, "one name per pair, without /1 and /2");
    let mut checked = 0;
    for (name, reads) in &by_pair {
        let i: usize = name.trim_start_matches('p').parse().unwrap();
        assert_eq!(reads.len(), 2, "{name}");
        let flags: Vec<u16> = reads.iter().map(|f| f[1].parse().unwrap()).collect();
        assert_eq!(flags[0] & 0xC0 | flags[1] & 0xC0, 0xC0, "one read 1 and one read 2: {reads:?}");
        if flags.iter().all(|f| f & 0x2 != 0) {
            let (a, b) = (&reads[0], &reads[1]);
            assert_eq!((a[6].as_str(), b[6].as_str()), ("=", "="));
            assert_eq!((&a[7], &b[7]), (&b[3], &a[3]), "each points at its mate");
            let (ta, tb): (i64, i64) = (a[8].parse().unwrap(), b[8].parse().unwrap());
            assert_eq!(ta, -tb, "{reads:?}");
            assert_eq!(ta.unsigned_abs() as usize, lengths[i], "template length is the fragment's: {reads:?}");
            // Mate strand flags agree with the other read's own strand.
            assert_eq!(flags[0] & 0x20 != 0, flags[1] & 0x10 != 0);
            checked += 1;
        }
    }
    assert!(checked >= 390, "{checked}");
}

#[test]
fn a_file_that_stops_being_interleaved_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(8);
    let genome = sim::random_seq(&mut rng, 5_000);
    let reference = write(dir.path(), "ref.fa", &sim::fasta(&[("chr1", &genome)]));
    let (mut text, _) = interleaved_pairs(&mut rng, &genome, 3);
    text.push_str(&format!("@lonely/1\n{}\n+\n{}\n", "A".repeat(50), "I".repeat(50)));
    text.push_str(&format!("@other/2\n{}\n+\n{}\n", "A".repeat(50), "I".repeat(50)));
    let reads = write(dir.path(), "broken.fq", &text);
    let opts = AlignOptions::default();
    let err = align(&reference, &reads, &opts, &mut Vec::new()).unwrap_err().to_string();
    assert!(err.contains("broken.fq") && err.contains("record 7") && err.contains("lonely"), "{err}");

    // Read as single-end when asked: every record on its own.
    let opts = AlignOptions { pairing: mgds_align::Pairing::Single, ..AlignOptions::default() };
    let r = align(&reference, &reads, &opts, &mut Vec::new()).unwrap();
    assert!(!r.paired);
    assert_eq!(r.n_reads, 8);
}
