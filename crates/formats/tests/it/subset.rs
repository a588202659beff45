//! Subset reads against hand-built FASTQ and read-level TSV files, for every option combination,
//! comparing the exact bytes written.

use std::path::{Path, PathBuf};

use mgds_api::ClassificationResults;
use mgds_formats::{Error, OutputCompression, PairMode, SubsetInput, SubsetOptions, TaxTree, subset_reads};

use crate::{gunzip, gz, listing, multi_gz, write};

// Four pairs. R1 uses `\n`; R2 uses `\r\n` and its last record has no final line ending, so
// byte-for-byte copying shows.
const R1: [&[u8]; 4] = [
    b"@p1 1:N:0:ACGT\nAAAA\n+\nIIII\n",
    b"@p2 1:N:0:ACGT\nCCCC\n+\nIII#\n",
    b"@p3 1:N:0:ACGT\nGGGG\n+\nII##\n",
    b"@p4 1:N:0:ACGT\nTTTT\n+\nI###\n",
];
const R2: [&[u8]; 4] = [
    b"@p1 2:N:0:ACGT\r\nAAAC\r\n+\r\n####\r\n",
    b"@p2 2:N:0:ACGT\r\nCCCA\r\n+\r\n#III\r\n",
    b"@p3 2:N:0:ACGT\r\nGGGA\r\n+\r\n##II\r\n",
    b"@p4 2:N:0:ACGT\r\nTTTA\r\n+\r\n###I",
];

// Read-level rows in the service's order for a pair: R1 of pair 1, R2 of pair 1, ...
//   p1: 562 passed, unclassified passed     p2: 1280 low confidence, 1280 passed
//   p3: 83333 (an E. coli strain) x2        p4: unclassified passed, unclassified failed
const HEADER: &str = "Seq Len\tTax ID\tN Hits\tPassed Filter\tSomething New\n";
const ROWS: [(u64, &str); 8] =
    [(562, "T"), (0, "T"), (1280, "F"), (1280, "T"), (83333, "T"), (83333, "T"), (0, "T"), (0, "F")];

fn tsv(rows: &[(u64, &str)]) -> Vec<u8> {
    let mut s = HEADER.to_owned();
    for (i, (tax, pf)) in rows.iter().enumerate() {
        s.push_str(&format!("4\t{tax}\t{}\t{pf}\tx\n", i * 3));
    }
    s.into_bytes()
}

fn interleaved_records() -> Vec<&'static [u8]> {
    (0..4).flat_map(|k| [R1[k], R2[k]]).collect()
}

fn tree() -> TaxTree {
    let json = r#"{"n_reads": 8, "host_tax_ids": [], "table": [
        {"tax_id": "1", "name": "root", "rank": "no rank", "parent_tax_id": null, "readcount": 0, "readcount_w_children": 5},
        {"tax_id": "2", "name": "Bacteria", "rank": "superkingdom", "parent_tax_id": "1", "readcount": 0, "readcount_w_children": 5},
        {"tax_id": "561", "name": "Escherichia", "rank": "genus", "parent_tax_id": "2", "readcount": 0, "readcount_w_children": 3},
        {"tax_id": "562", "name": "Escherichia coli", "rank": "species", "parent_tax_id": "561", "readcount": 1, "readcount_w_children": 3},
        {"tax_id": "83333", "name": "Escherichia coli K-12", "rank": "no rank", "parent_tax_id": "562", "readcount": 2, "readcount_w_children": 2},
        {"tax_id": "1280", "name": "Staphylococcus aureus", "rank": "species", "parent_tax_id": "2", "readcount": 2, "readcount_w_children": 2}
    ]}"#;
    let results: ClassificationResults = serde_json::from_str(json).unwrap();
    TaxTree::from_results(&results).unwrap()
}

/// One choice of taxa, exclude and include_lowconf, with the verdict on each of the eight rows
/// worked out by hand from the rules (a row counts if passed or include_lowconf; a counting row
/// is selected if its taxon is chosen, or is not when excluding).
struct Case {
    name: &'static str,
    options: SubsetOptions,
    verdicts: [u8; 8],
}

fn cases() -> Vec<Case> {
    let tree = tree();
    let taxa = [
        ("562", SubsetOptions::new([562])),
        ("562+children", SubsetOptions::new([562]).with_children(&tree)),
        ("1280", SubsetOptions::new([1280])),
    ];
    let verdicts: [[[u8; 8]; 4]; 3] = [
        // keep; keep+lowconf; exclude; exclude+lowconf
        [[1, 0, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0], [0, 1, 0, 1, 1, 1, 1, 0], [0, 1, 1, 1, 1, 1, 1, 1]],
        [[1, 0, 0, 0, 1, 1, 0, 0], [1, 0, 0, 0, 1, 1, 0, 0], [0, 1, 0, 1, 0, 0, 1, 0], [0, 1, 1, 1, 0, 0, 1, 1]],
        [[0, 0, 0, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0, 0, 0], [1, 1, 0, 0, 1, 1, 1, 0], [1, 1, 0, 0, 1, 1, 1, 1]],
    ];
    let mut out = Vec::new();
    for ((name, base), table) in taxa.into_iter().zip(verdicts) {
        for (i, (exclude, include_lowconf)) in
            [(false, false), (false, true), (true, false), (true, true)].into_iter().enumerate()
        {
            out.push(Case {
                name,
                options: SubsetOptions { exclude, include_lowconf, ..base.clone() },
                verdicts: table[i],
            });
        }
    }
    out
}

/// What a pair's two reads get, by the pair mode.
fn pair_verdict(mode: PairMode, a: bool, b: bool) -> (bool, bool) {
    match mode {
        PairMode::Either => (a || b, a || b),
        PairMode::Both => (a && b, a && b),
        PairMode::Independent => (a, b),
    }
}

struct Inputs {
    _dir: tempfile::TempDir,
    dir: PathBuf,
}

impl Inputs {
    fn new() -> Inputs {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_owned();
        Inputs { _dir: dir, dir: path }
    }

    fn file(&self, name: &str, records: &[&[u8]], gzipped: bool) -> PathBuf {
        let data = if gzipped { multi_gz(records) } else { records.concat() };
        write(&self.dir, name, &data)
    }

    fn results(&self, name: &str, rows: &[(u64, &str)]) -> PathBuf {
        write(&self.dir, name, &gz(&tsv(rows)))
    }
}

fn read_output(path: &Path, compression: OutputCompression) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match compression {
        OutputCompression::Plain => bytes,
        OutputCompression::Gzip { .. } => gunzip(&bytes),
    }
}

fn output(options: &SubsetOptions, gzipped: bool) -> (SubsetOptions, OutputCompression, &'static str) {
    // Gzipped inputs are written gzipped, plain ones plain: both output kinds are covered.
    let compression = if gzipped { OutputCompression::GZIP } else { OutputCompression::Plain };
    let suffix = if gzipped { ".gz" } else { "" };
    (SubsetOptions { output: compression, ..options.clone() }, compression, suffix)
}

#[test]
fn single_end_every_option() {
    for gzipped in [false, true] {
        let inputs = Inputs::new();
        let reads = inputs.file(if gzipped { "S1_single.fastq.gz" } else { "S1_single.fastq" }, &R1, gzipped);
        let r1_rows: Vec<(u64, &str)> = ROWS.iter().step_by(2).copied().collect();
        let results = inputs.results("rl.tsv.gz", &r1_rows);
        for case in cases() {
            let (options, compression, suffix) = output(&case.options, gzipped);
            let out = tempfile::tempdir().unwrap();
            let report = subset_reads(&results, &SubsetInput::Single(reads.clone()), out.path(), &options).unwrap();
            let expected: Vec<u8> =
                (0..4).filter(|&k| case.verdicts[2 * k] == 1).flat_map(|k| R1[k].to_vec()).collect();
            let path = out.path().join(format!("S1_single.filtered.fastq{suffix}"));
            assert_eq!(read_output(&path, compression), expected, "{} {:?}", case.name, case.options);
            assert_eq!(report.outputs[0].path, path);
            assert_eq!(report.outputs[0].records, case.verdicts.iter().step_by(2).map(|&v| u64::from(v)).sum::<u64>());
            assert_eq!((report.records, report.rows), (4, 4));
            assert_eq!(listing(out.path()).len(), 1);
        }
    }
}

#[test]
fn interleaved_file_as_single_is_subset_record_by_record() {
    // What onecodex does with an interleaved file: each record judged on its own row.
    for gzipped in [false, true] {
        let inputs = Inputs::new();
        let reads = inputs.file("S1_il.fq", &interleaved_records(), gzipped);
        let results = inputs.results("rl.tsv.gz", &ROWS);
        for case in cases() {
            let (options, compression, suffix) = output(&case.options, gzipped);
            let out = tempfile::tempdir().unwrap();
            subset_reads(&results, &SubsetInput::Single(reads.clone()), out.path(), &options).unwrap();
            let expected: Vec<u8> = interleaved_records()
                .iter()
                .zip(case.verdicts)
                .filter(|(_, v)| *v == 1)
                .flat_map(|(r, _)| r.to_vec())
                .collect();
            let got = read_output(&out.path().join(format!("S1_il.filtered.fq{suffix}")), compression);
            assert_eq!(got, expected, "{} {:?}", case.name, case.options);
        }
    }
}

#[test]
fn interleaved_every_option_and_pair_mode() {
    for gzipped in [false, true] {
        let inputs = Inputs::new();
        let reads = inputs.file("S1_il.fastq.gz", &interleaved_records(), gzipped);
        let results = inputs.results("rl.tsv.gz", &ROWS);
        for case in cases() {
            for mode in [PairMode::Either, PairMode::Both, PairMode::Independent] {
                let (mut options, compression, suffix) = output(&case.options, gzipped);
                options.pair_mode = mode;
                let out = tempfile::tempdir().unwrap();
                subset_reads(&results, &SubsetInput::Interleaved(reads.clone()), out.path(), &options).unwrap();
                let mut expected = Vec::new();
                for k in 0..4 {
                    let (w1, w2) = pair_verdict(mode, case.verdicts[2 * k] == 1, case.verdicts[2 * k + 1] == 1);
                    if w1 {
                        expected.extend_from_slice(R1[k]);
                    }
                    if w2 {
                        expected.extend_from_slice(R2[k]);
                    }
                }
                let got = read_output(&out.path().join(format!("S1_il.filtered.fastq{suffix}")), compression);
                assert_eq!(got, expected, "{} {:?}", case.name, options);
            }
        }
    }
}

#[test]
fn paired_every_option_and_pair_mode() {
    for gzipped in [false, true] {
        let inputs = Inputs::new();
        let ext = if gzipped { ".fastq.gz" } else { ".fastq" };
        let r1 = inputs.file(&format!("S1_L001_R1_001{ext}"), &R1, gzipped);
        let r2 = inputs.file(&format!("S1_L001_R2_001{ext}"), &R2, gzipped);
        let results = inputs.results("rl.tsv.gz", &ROWS);
        let input = SubsetInput::Paired { r1: r1.clone(), r2: r2.clone() };
        for case in cases() {
            for mode in [PairMode::Either, PairMode::Both, PairMode::Independent] {
                let (mut options, compression, suffix) = output(&case.options, gzipped);
                options.pair_mode = mode;
                let out = tempfile::tempdir().unwrap();
                let report = subset_reads(&results, &input, out.path(), &options).unwrap();
                let (mut e1, mut e2) = (Vec::new(), Vec::new());
                for k in 0..4 {
                    let (w1, w2) = pair_verdict(mode, case.verdicts[2 * k] == 1, case.verdicts[2 * k + 1] == 1);
                    if w1 {
                        e1.extend_from_slice(R1[k]);
                    }
                    if w2 {
                        e2.extend_from_slice(R2[k]);
                    }
                }
                let p1 = out.path().join(format!("S1_L001_R1_001.filtered.fastq{suffix}"));
                let p2 = out.path().join(format!("S1_L001_R2_001.filtered.fastq{suffix}"));
                assert_eq!(read_output(&p1, compression), e1, "R1 {} {:?}", case.name, options);
                assert_eq!(read_output(&p2, compression), e2, "R2 {} {:?}", case.name, options);
                assert_eq!((report.records, report.rows), (8, 8));
                assert_eq!(report.outputs.iter().map(|o| o.path.clone()).collect::<Vec<_>>(), [p1, p2]);
            }
        }
    }
}

#[test]
fn literal_outputs_anchor_the_rules() {
    let inputs = Inputs::new();
    let r1 = inputs.file("A_R1.fq", &R1, false);
    let r2 = inputs.file("A_R2.fq", &R2, true);
    let results = inputs.results("rl.tsv.gz", &ROWS);
    let input = SubsetInput::Paired { r1, r2 };
    let run = |options: SubsetOptions| {
        let out = tempfile::tempdir().unwrap();
        subset_reads(&results, &input, out.path(), &options).unwrap();
        (
            std::fs::read(out.path().join("A_R1.filtered.fq")).unwrap(),
            std::fs::read(out.path().join("A_R2.filtered.fq")).unwrap(),
        )
    };
    // Keep E. coli: pair 1 by its R1.
    assert_eq!(
        run(SubsetOptions::new([562])),
        (b"@p1 1:N:0:ACGT\nAAAA\n+\nIIII\n".to_vec(), b"@p1 2:N:0:ACGT\r\nAAAC\r\n+\r\n####\r\n".to_vec())
    );
    // Exclude E. coli: every pair has a counting mate off E. coli, so everything is written,
    // E. coli's own read in pair 1 included (onecodex's rule), R2's bytes exactly as read.
    let all = run(SubsetOptions { exclude: true, ..SubsetOptions::new([562]) });
    assert_eq!(all, (R1.concat(), R2.concat()));
    assert!(!all.1.ends_with(b"\n"));
    // With children, only pairs where both mates are E. coli (or a strain): pair 3.
    let both = run(SubsetOptions { pair_mode: PairMode::Both, ..SubsetOptions::new([562]).with_children(&tree()) });
    assert_eq!(both, (R1[2].to_vec(), R2[2].to_vec()));
}

#[test]
fn keep_existing_never_replaces_an_output_already_there() {
    let inputs = Inputs::new();
    let r1 = inputs.file("C_R1.fq", &R1, false);
    let r2 = inputs.file("C_R2.fq", &R2, false);
    let results = inputs.results("rl.tsv.gz", &ROWS);
    let input = SubsetInput::Paired { r1, r2 };
    let out = tempfile::tempdir().unwrap();
    let theirs = out.path().join("C_R2.filtered.fq");
    std::fs::write(&theirs, "mine").unwrap();
    let keep = SubsetOptions { keep_existing: true, ..SubsetOptions::new([562]) };
    let e = subset_reads(&results, &input, out.path(), &keep).unwrap_err();
    assert!(matches!(&e, Error::OutputExists { path } if *path == theirs), "{e:?}");
    assert!(e.to_string().contains("C_R2.filtered.fq already exists"), "{e}");
    // Nothing written: not the other output, not a temporary file; the file is as it was.
    let left: Vec<_> = std::fs::read_dir(out.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(left, std::slice::from_ref(&theirs));
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "mine");
    // By default an output replaces what is there, as onecodex's does.
    subset_reads(&results, &input, out.path(), &SubsetOptions::new([562])).unwrap();
    assert_ne!(std::fs::read_to_string(&theirs).unwrap(), "mine");
}

#[test]
fn mismatches_name_the_file_that_ran_out_and_leave_nothing() {
    let inputs = Inputs::new();
    let r1 = inputs.file("B_R1.fastq", &R1, false);
    let r2 = inputs.file("B_R2.fastq.gz", &R2, true);
    let pair = SubsetInput::Paired { r1: r1.clone(), r2: r2.clone() };
    let options = SubsetOptions::new([562]);
    let out = tempfile::tempdir().unwrap();

    let extra = inputs.results("extra.tsv.gz", &[&ROWS[..], &[(0, "T")]].concat());
    let e = subset_reads(&extra, &pair, out.path(), &options).unwrap_err();
    assert!(matches!(e, Error::MoreRowsThanReads { records: 4, line: 10, ref reads, .. } if *reads == r1), "{e:?}");
    assert!(e.to_string().contains("extra.tsv.gz has more rows (line 10)"), "{e}");

    let odd = inputs.results("odd.tsv.gz", &ROWS[..7]);
    let e = subset_reads(&odd, &pair, out.path(), &options).unwrap_err();
    assert!(matches!(e, Error::MoreReadsThanRows { rows: 7, record: 4, ref reads, .. } if *reads == r2), "{e:?}");
    assert!(
        e.to_string().starts_with(&format!(
            "{} ends after 7 rows but {} has more records (record 4 has no row)",
            odd.display(),
            r2.display()
        )),
        "{e}"
    );

    let short_r2 = inputs.file("C_R2.fastq", &R2[..3], false);
    let e = subset_reads(
        inputs.results("rl.tsv.gz", &ROWS),
        &SubsetInput::Paired { r1: r1.clone(), r2: short_r2.clone() },
        out.path(),
        &options,
    )
    .unwrap_err();
    assert!(matches!(e, Error::PairLengthMismatch { records: 3, ref shorter, .. } if *shorter == short_r2), "{e:?}");

    let single_rows = inputs.results("single.tsv.gz", &ROWS);
    let e = subset_reads(&single_rows, &SubsetInput::Single(r1.clone()), out.path(), &options).unwrap_err();
    assert!(
        e.to_string().starts_with(&format!(
            "{} ends after 4 records but {} has more rows (line 6)",
            r1.display(),
            single_rows.display()
        )),
        "{e}"
    );

    let no_tax = write(&inputs.dir, "notax.tsv.gz", &gz(b"Seq Len\tTaxon\n4\t562\n"));
    let e = subset_reads(&no_tax, &SubsetInput::Single(r1.clone()), out.path(), &options).unwrap_err();
    assert!(matches!(e, Error::MissingColumn { column: "Tax ID", .. }), "{e:?}");

    let e = subset_reads(&single_rows, &SubsetInput::Single(r1.clone()), out.path(), &SubsetOptions::default())
        .unwrap_err();
    assert!(matches!(e, Error::NoTaxIds));

    // Not interleaved: consecutive records are not mates.
    let e = subset_reads(&single_rows, &SubsetInput::Interleaved(r1), out.path(), &options).unwrap_err();
    assert!(matches!(e, Error::NotInterleaved { record: 1, .. }), "{e:?}");

    // Nothing half-written was left behind by any of these.
    assert!(listing(out.path()).is_empty(), "{:?}", listing(out.path()));
}

#[test]
fn truncated_results_are_reported_as_incomplete() {
    let inputs = Inputs::new();
    let r1 = inputs.file("D.fastq", &R1, false);
    let full = gz(&tsv(&ROWS[..4]));
    let cut = write(&inputs.dir, "cut.tsv.gz", &full[..full.len() - 12]);
    let out = tempfile::tempdir().unwrap();
    let e = subset_reads(&cut, &SubsetInput::Single(r1), out.path(), &SubsetOptions::new([562])).unwrap_err();
    assert!(matches!(e, Error::Truncated { .. }), "{e:?}");
    assert!(listing(out.path()).is_empty());
}
