//! A Kraken 2 database folder read in place gives, read for read, Kraken 2's output and its
//! report (Debian's `kraken2` on a database its `kraken2-build` made from real genomes); broken
//! folders are refused with the file named.

use std::path::Path;

use mgds_classify::{
    ClassifyOptions, Database, DatabaseKind, Error, Kraken2Database, Outputs, Pairing, Reads, classify_reads,
};

use crate::real::{fixture, lines, scratch};
use crate::real_genomes::{Sample, run_kraken2};

/// Our Kraken-style output and report for a sample.
fn ours(
    db: &Database,
    sample: &Sample,
    opts: &ClassifyOptions,
) -> (Vec<String>, String, mgds_classify::Classification) {
    let reads = match &sample.r2 {
        Some(r2) => Reads::Pair(&sample.r1, r2),
        None => Reads::File(&sample.r1),
    };
    let mut out = Vec::new();
    let mut readlevel = Vec::new();
    let c = classify_reads(db, reads, opts, Outputs { readlevel: Some(&mut readlevel), kraken: Some(&mut out) })
        .expect("classify");
    let text = String::from_utf8(out).expect("UTF-8");
    (text.lines().map(str::to_owned).collect(), c.report.render(db), c)
}

/// The rank codes Kraken 2 (upstream) gives the fixture's taxa.
fn upstream_code(tax_id: u64) -> &'static str {
    match tax_id {
        0 => "U",
        1 => "R",
        131567 => "R1",
        2 => "D",
        1224 => "P",
        1236 | 29547 => "C",
        91347 | 135623 | 213849 => "O",
        543 | 641 | 72293 => "F",
        561 | 570 | 662 | 209 => "G",
        562 | 573 | 666 | 210 => "S",
        72407 => "S1",
        1125630 => "S2",
        other => panic!("unexpected tax id {other} in a report"),
    }
}

/// Compares our report with Debian's `kraken2 --report` line for line: every column equal but the
/// rank code, which must follow upstream's rule (Debian 12's 2.1.2 drops the letter of the codes
/// of the top levels: an empty code for the root and the superkingdom, `1` for `R1`).
fn compare_reports(debian: &[String], ours: &str) {
    let ours: Vec<&str> = ours.lines().collect();
    assert_eq!(
        ours.len(),
        debian.len(),
        "report lengths differ:\nours:\n{}\nKraken 2:\n{}",
        ours.join("\n"),
        debian.join("\n")
    );
    let mut letter_dropped = 0;
    for (o, d) in ours.iter().zip(debian) {
        let of: Vec<&str> = o.split('\t').collect();
        let df: Vec<&str> = d.split('\t').collect();
        assert_eq!(of.len(), 6, "{o}");
        for i in [0, 1, 2, 4, 5] {
            assert_eq!(of[i], df[i], "column {} differs:\nours:     {o}\nKraken 2: {d}", i + 1);
        }
        let tax_id: u64 = of[4].parse().unwrap();
        assert_eq!(of[3], upstream_code(tax_id), "our rank code of {tax_id}");
        if df[3] != of[3] {
            assert_eq!(df[3], &of[3][1..], "Kraken 2's rank code of {tax_id}: {d}");
            letter_dropped += 1;
        }
    }
    assert!(letter_dropped <= 3, "more rank codes differ than Debian's defect explains");
}

/// Compares per-read outputs, showing the first difference.
fn compare_outputs(kraken2: &[String], ours: &[String]) {
    assert_eq!(ours.len(), kraken2.len(), "numbers of reads differ");
    let differ: Vec<usize> = (0..ours.len()).filter(|&i| ours[i] != kraken2[i]).collect();
    assert!(
        differ.is_empty(),
        "{} of {} reads differ; first:\nours:     {}\nKraken 2: {}",
        differ.len(),
        ours.len(),
        ours[differ[0]],
        kraken2[differ[0]]
    );
}

fn check(sample: &Sample, name: &str, kraken_args: &[&str], opts: &ClassifyOptions) {
    let fx = fixture();
    let dir = scratch("kraken2");
    let run = run_kraken2(&fx.kraken2, sample, kraken_args, &dir, name).unwrap_or_else(|e| panic!("{e}"));
    let db = Kraken2Database::open(&fx.kraken2).expect("open the Kraken 2 folder").into_database();
    assert_eq!(db.kind(), DatabaseKind::Kraken2);
    let (out, report, c) = ours(&db, sample, opts);
    compare_outputs(&lines(&run.output), &out);
    compare_reports(&lines(&run.report), &report);
    // The results table says the same as the report: each mate counts in it.
    let mates = if sample.r2.is_some() { 2 } else { 1 };
    assert_eq!(c.results.n_reads, sample.truth.len() as u64 * mates);
    let classified: u64 = c.results.table.iter().map(|r| r.readcount).sum();
    assert_eq!(classified, (c.report.total() - c.report.unclassified()) * mates);
    let calls = out.iter().filter(|l| l.starts_with('C')).count() as u64;
    assert_eq!(calls, c.report.total() - c.report.unclassified());
    // Reads of the genome not in the database are mostly unclassified.
    let absent = sample.truth.iter().filter(|&&g| g as usize == fx.genomes.len()).count() as u64;
    assert!(c.report.unclassified() * 10 > absent * 8, "{} reads of {}", c.report.unclassified(), fx.absent.label);
    let pct = 100.0 * c.report.unclassified() as f64 / c.report.total() as f64;
    assert!(report.starts_with(&format!("{pct:6.2}\t{}\t", c.report.unclassified())), "{report}");
    eprintln!("{name}: {} reads, {} classified, output and report as Kraken 2's", out.len(), calls);
}

#[test]
fn single_end_reads_get_kraken2s_calls_and_report() {
    let fx = fixture();
    let opts = ClassifyOptions { paired: Pairing::Single, threads: 2, ..ClassifyOptions::default() };
    check(&fx.single, "single", &["--threads", "2"], &opts);
}

#[test]
fn paired_reads_get_kraken2s_calls_and_report() {
    let fx = fixture();
    let opts = ClassifyOptions { threads: 2, ..ClassifyOptions::default() };
    check(&fx.paired, "paired", &["--threads", "2"], &opts);
}

#[test]
fn confidence_and_minimum_hit_groups_are_kraken2s() {
    let fx = fixture();
    let opts = ClassifyOptions { confidence: 0.15, min_hits: 3, threads: 2, ..ClassifyOptions::default() };
    check(&fx.paired, "paired-c015-g3", &["--confidence", "0.15", "--minimum-hit-groups", "3"], &opts);
}

/// Real Oxford Nanopore reads from Debian's example-data packages: `python3-nanoget-examples`
/// (371 ultra-long E. coli reads, up to 393 kbp: the longest are scanned in pieces on all
/// threads) and `qcat-examples` (989 barcoded reads, up to 35 kbp, a third of them E. coli). Both tools classify them
/// against the fixture's folder (E. coli 536 among its genomes); every line of the output, hit
/// lists included, and the report must be Kraken 2's, at one thread and at two.
#[test]
fn real_nanopore_reads_get_kraken2s_calls_and_report() {
    let fx = fixture();
    let dir = scratch("nanopore");
    let (nanoget, _) = crate::real_genomes::fetch_package("python3-nanoget-examples").unwrap_or_else(|e| panic!("{e}"));
    let (qcat, _) = crate::real_genomes::fetch_package("qcat-examples").unwrap_or_else(|e| panic!("{e}"));
    let files = [
        ("nanoget", nanoget.join("usr/share/doc/python3-nanoget/examples/nanotest/reads.fastq.gz"), 371, 250),
        // A third of these are E. coli's.
        ("qcat", qcat.join("usr/share/doc/qcat/examples/qcat/test/data/barcode_1k.fastq.gz"), 989, 300),
    ];
    let db = Kraken2Database::open(&fx.kraken2).expect("open the Kraken 2 folder").into_database();
    for (name, reads, n, min_classified) in files {
        let sample = Sample {
            r1: reads,
            r2: None,
            truth: Vec::new(),
            reads_per_genome: Vec::new(),
            simulator: "real Oxford Nanopore reads".into(),
        };
        let run =
            run_kraken2(&fx.kraken2, &sample, &["--gzip-compressed"], &dir, name).unwrap_or_else(|e| panic!("{e}"));
        let kraken2 = lines(&run.output);
        assert_eq!(kraken2.len(), n, "{name}: Kraken 2's reads");
        for threads in [1, 2] {
            let opts = ClassifyOptions { paired: Pairing::Single, threads, ..ClassifyOptions::default() };
            let (out, report, c) = ours(&db, &sample, &opts);
            compare_outputs(&kraken2, &out);
            compare_reports(&lines(&run.report), &report);
            let classified = out.iter().filter(|l| l.starts_with('C')).count();
            assert!(classified >= min_classified, "{name}: {classified} of {n} reads classified");
            assert_eq!(c.results.n_reads, n as u64);
            eprintln!(
                "{name}, {threads} thread(s): {n} reads, {classified} classified, output and report as Kraken 2's"
            );
        }
        // The longest reads of the ultra-long set are well past the length scanned in pieces.
        let longest = kraken2.iter().filter_map(|l| l.split('\t').nth(3)?.parse::<usize>().ok()).max().unwrap();
        if name == "nanoget" {
            assert!(longest > 300_000, "{longest}");
        }
    }
}

#[test]
fn the_same_folder_opens_as_a_database() {
    let fx = fixture();
    let db = Database::open(&fx.kraken2).expect("Database::open takes a Kraken 2 folder");
    assert_eq!(db.kind(), DatabaseKind::Kraken2);
    let k = Kraken2Database::open(&fx.kraken2).unwrap();
    let o = k.options();
    assert_eq!((o.k, o.l, o.dna, o.revcom_version), (35, 31, true, 1));
    assert_eq!(db.digest(), k.database().digest());
    assert_eq!((db.k(), db.l(), db.spaces()), (35, 31, 7));
    assert!(db.kmer_count() > 1_000_000);
    // Without its library read, the folder knows no genomes: no genome-copy abundance.
    let fresh = Kraken2Database::open_with(
        &fx.kraken2,
        &mgds_classify::OpenOptions { companion_dir: Some(scratch("no-companions")) },
    )
    .unwrap();
    assert!(fresh.database().genomes().is_none());
}

#[test]
fn broken_kraken2_folders_are_refused_naming_the_file() {
    let fx = fixture();
    let dir = scratch("broken");
    let good = |name: &str| std::fs::read(fx.kraken2.join(name)).unwrap();
    let make = |case: &str, files: &[(&str, Vec<u8>)]| {
        let d = dir.join(case);
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        for (name, bytes) in files {
            std::fs::write(d.join(name), bytes).unwrap();
        }
        d
    };
    let hash_head = || {
        let mut f = std::fs::File::open(fx.kraken2.join("hash.k2d")).unwrap();
        let mut buf = vec![0u8; 1 << 20];
        std::io::Read::read_exact(&mut f, &mut buf).unwrap();
        buf
    };
    let refused = |d: &Path, file: &str| -> String {
        let e = Database::open(d).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(&d.join(file).display().to_string()), "the message does not name {file}: {msg}");
        msg
    };
    // A table cut short.
    let d =
        make("cut-hash", &[("hash.k2d", hash_head()), ("opts.k2d", good("opts.k2d")), ("taxo.k2d", good("taxo.k2d"))]);
    let msg = refused(&d, "hash.k2d");
    assert!(msg.contains("cut or damaged"), "{msg}");
    // A missing taxonomy.
    let d = make("no-taxo", &[("hash.k2d", hash_head()), ("opts.k2d", good("opts.k2d"))]);
    let msg = refused(&d, "taxo.k2d");
    assert!(matches!(Database::open(&d), Err(Error::NotKraken2 { .. })), "{msg}");
    // A taxonomy cut short, options that are not Kraken 2's.
    let taxo = good("taxo.k2d");
    let d = make(
        "cut-taxo",
        &[("hash.k2d", hash_head()), ("opts.k2d", good("opts.k2d")), ("taxo.k2d", taxo[..taxo.len() - 10].to_vec())],
    );
    refused(&d, "taxo.k2d");
    let d = make(
        "bad-opts",
        &[("hash.k2d", good("hash.k2d")), ("opts.k2d", b"not options".to_vec()), ("taxo.k2d", taxo.clone())],
    );
    refused(&d, "opts.k2d");
    // Other files in place of the database.
    let d = make(
        "reads",
        &[("hash.k2d", b"@r1\nACGT\n+\nIIII\n".to_vec()), ("opts.k2d", good("opts.k2d")), ("taxo.k2d", taxo)],
    );
    refused(&d, "hash.k2d");
    let d = make("empty", &[]);
    refused(&d, "hash.k2d");
}
