//! Abundance on reads simulated from real genomes, against the truth: genome copies (reads over
//! genome length) with genomes found from a two-column map, the same with an explicit genome
//! column, with `kraken:taxid` headers and for a Kraken 2 folder's library; re-estimated
//! abundance (Bracken's method) against plain read shares.

use std::collections::HashMap;

use mgds_api::ClassificationResults;
use mgds_classify::{ClassifyOptions, Database, Kraken2Database, OpenOptions, Pairing, PrepareOptions, classify};

use crate::real::{MapKind, fixture, l1, normalise, our_db, scratch};

fn run(db: &Database) -> ClassificationResults {
    let fx = fixture();
    let opts = ClassifyOptions { paired: Pairing::Single, threads: 2, ..ClassifyOptions::default() };
    classify(db, &fx.single.r1, &opts, &mut std::io::sink()).expect("classify")
}

/// Species → value of the species rows of a table.
fn species(results: &ClassificationResults, value: impl Fn(&mgds_api::TaxonRow) -> Option<f64>) -> HashMap<u64, f64> {
    results
        .table
        .iter()
        .filter(|r| r.rank == "species")
        .filter_map(|r| Some((r.tax_id.parse().unwrap(), value(r)?)))
        .collect()
}

/// The true share of genome copies of each species: each genome's reads over its length.
fn true_copies() -> HashMap<u64, f64> {
    let fx = fixture();
    let mut copies = HashMap::new();
    for (g, &n) in fx.genomes.iter().zip(&fx.single.reads_per_genome) {
        *copies.entry(g.species).or_default() += n as f64 / g.bases() as f64;
    }
    normalise(copies)
}

/// The true share of reads of each species.
fn true_reads() -> HashMap<u64, f64> {
    let fx = fixture();
    let mut reads = HashMap::new();
    for (g, &n) in fx.genomes.iter().zip(&fx.single.reads_per_genome) {
        *reads.entry(g.species).or_default() += n as f64;
    }
    normalise(reads)
}

#[test]
fn genomes_are_found_from_a_two_column_map() {
    let fx = fixture();
    let db = our_db(MapKind::TwoColumns);
    let by_species: HashMap<u64, (u32, u32, u64)> =
        db.species_genomes().iter().map(|s| (s.tax_id, (s.genomes, s.sequences, s.mean_length))).collect();
    let len = |label: &str| fx.genomes.iter().find(|g| g.label == label).unwrap().bases();
    // The Klebsiella chromosome and its six plasmids are one genome; so are the two Vibrio
    // chromosomes; the two H. pylori assemblies mapped to the species are two genomes, their
    // lengths averaged.
    assert_eq!(by_species[&573], (1, 7, len("Kpneumoniae_HS11286")));
    assert_eq!(by_species[&666], (1, 2, len("Vcholerae_O395")));
    assert_eq!(by_species[&562], (1, 1, len("Ecoli_536")));
    let hp = (len("Hpylori_G27") + len("Hpylori_Puno120")).div_ceil(2);
    assert_eq!(by_species[&210], (2, 2, hp));
    assert_eq!(by_species.len(), 4);
}

#[test]
fn genome_copies_with_a_two_column_map_are_near_the_truth() {
    let results = run(our_db(MapKind::TwoColumns));
    let estimated = species(&results, |r| r.abundance);
    let truth = true_copies();
    let distance = l1(&estimated, &truth);
    eprintln!("genome copies: estimated {estimated:?}\ntruth {truth:?}\nL1 {distance:.4}");
    assert!((estimated.values().sum::<f64>() - 1.0).abs() < 1e-9);
    assert!(distance < 0.01, "L1 to the true genome copies {distance:.4}");
}

#[test]
fn an_explicit_genome_column_kraken_headers_or_one_library_file_give_the_same_results() {
    let two = run(our_db(MapKind::TwoColumns));
    let three = run(our_db(MapKind::ThreeColumns));
    let headers = run(our_db(MapKind::Headers));
    assert_eq!(two, three, "two-column map vs explicit genomes");
    assert_eq!(two, headers, "two-column map vs kraken:taxid headers");
    // Every genome in one file, as Kraken 2's library.fna: the genomes are told apart by their
    // records' organism and strain (two H. pylori assemblies of one species taxon stay two).
    let library = run(our_db(MapKind::Library));
    assert_eq!(two, library, "two-column map vs one library.fna with kraken:taxid headers");
    let summary = |kind| -> Vec<(u64, u32, u64)> {
        our_db(kind).species_genomes().iter().map(|s| (s.tax_id, s.genomes, s.mean_length)).collect()
    };
    assert_eq!(summary(MapKind::TwoColumns), summary(MapKind::ThreeColumns));
    assert_eq!(summary(MapKind::TwoColumns), summary(MapKind::Headers));
    assert_eq!(summary(MapKind::TwoColumns), summary(MapKind::Library));
}

#[test]
fn reestimated_abundance_is_closer_to_the_truth_than_read_shares() {
    let results = run(our_db(MapKind::TwoColumns));
    let truth = true_reads();
    let shares = normalise(species(&results, |r| Some(r.readcount_w_children as f64)));
    let reestimated = species(&results, |r| r.reestimated_abundance);
    let (d_shares, d_reest) = (l1(&shares, &truth), l1(&reestimated, &truth));
    eprintln!(
        "read shares L1 {d_shares:.4}, re-estimated L1 {d_reest:.4}\ntruth {truth:?}\nre-estimated {reestimated:?}"
    );
    assert_eq!(reestimated.len(), 4);
    assert!((reestimated.values().sum::<f64>() - 1.0).abs() < 1e-9);
    assert!(d_reest < d_shares, "re-estimated {d_reest:.4} is not closer than read shares {d_shares:.4}");
    // Genera are re-estimated too, and only species and genera.
    let genera: f64 = results.table.iter().filter(|r| r.rank == "genus").filter_map(|r| r.reestimated_abundance).sum();
    assert!((genera - 1.0).abs() < 1e-9, "{genera}");
    assert!(
        results.table.iter().all(|r| r.reestimated_abundance.is_none() || r.rank == "species" || r.rank == "genus")
    );
}

#[test]
fn a_kraken2_folder_finds_its_genomes_in_its_library() {
    let fx = fixture();
    let companions = scratch("kraken2-companions");
    let _ = std::fs::remove_dir_all(&companions);
    std::fs::create_dir_all(&companions).unwrap();
    let open = OpenOptions { companion_dir: Some(companions.clone()) };
    // Before its library is read: no genome-copy abundance, no re-estimation, rather than
    // wrong ones.
    let db = Database::open_with(&fx.kraken2, &open).unwrap();
    let before = run(&db);
    assert!(before.table.iter().all(|r| r.abundance.is_none() && r.reestimated_abundance.is_none()));
    assert!(before.table.iter().any(|r| r.rank == "species" && r.readcount > 0));

    let mut k = Kraken2Database::open_with(&fx.kraken2, &open).unwrap();
    let mut stages = Vec::new();
    let report = k.prepare(&PrepareOptions::default(), &mut |p| stages.push(p.stage)).unwrap();
    assert!(!stages.is_empty());
    assert_eq!(report.unmapped, 0);
    let ours: Vec<(u64, u32, u64)> =
        our_db(MapKind::TwoColumns).species_genomes().iter().map(|s| (s.tax_id, s.genomes, s.mean_length)).collect();
    let theirs: Vec<(u64, u32, u64)> = report.genomes.iter().map(|s| (s.tax_id, s.genomes, s.mean_length)).collect();
    let sorted = |mut v: Vec<(u64, u32, u64)>| {
        v.sort();
        v
    };
    assert_eq!(sorted(theirs), sorted(ours), "genomes found in the Kraken 2 library");
    // Prepared once, every later open has them.
    let db = Database::open_with(&fx.kraken2, &open).unwrap();
    assert!(db.genomes().is_some());
    let after = run(&db);
    let estimated = species(&after, |r| r.abundance);
    let distance = l1(&estimated, &true_copies());
    eprintln!("Kraken 2 folder, genome copies L1 {distance:.4}");
    assert!(distance < 0.01, "{distance}");
    let reestimated = species(&after, |r| r.reestimated_abundance);
    assert!(l1(&reestimated, &true_reads()) < 0.02);
    // The calls are Kraken 2's with or without the companions.
    let counts = |r: &ClassificationResults| -> Vec<(String, u64)> {
        r.table.iter().map(|r| (r.tax_id.clone(), r.readcount)).collect()
    };
    assert_eq!(counts(&before), counts(&after));
}

/// Long reads whose lengths differ by genome (2 to 12 kbp on average), from the fixture's five
/// genomes at known genome copies, with 5% substitutions, written as FASTA. Returns the file
/// and the true share of genome copies per species.
fn long_reads_of_uneven_lengths() -> (std::path::PathBuf, HashMap<u64, f64>) {
    let fx = fixture();
    // (mean read length, genome copies) per genome, in the fixture's order: K. pneumoniae,
    // V. cholerae, E. coli, H. pylori G27, H. pylori Puno120.
    let plan = [(2_000usize, 1.0), (8_000, 2.0), (4_000, 0.5), (12_000, 1.0), (6_000, 1.0)];
    let path = scratch("long-reads").join("uneven.fa");
    let mut out = String::new();
    let mut rng = 20_261_128u64;
    let mut next = || {
        rng = mgds_classify::mix64(rng.wrapping_add(0x9e37_79b9_7f4a_7c15));
        rng
    };
    let mut copies = HashMap::new();
    let mut n = 0;
    for (g, &(mean, c)) in fx.genomes.iter().zip(&plan) {
        let text = std::fs::read_to_string(&g.plain).unwrap();
        let seqs: Vec<Vec<u8>> = text
            .split('>')
            .filter(|r| !r.is_empty())
            .map(|r| r.lines().skip(1).flat_map(|l| l.trim().bytes()).collect())
            .collect();
        let genome_len: usize = seqs.iter().map(Vec::len).sum();
        // Half a genome's depth per copy.
        let target = (c * 0.5 * genome_len as f64) as usize;
        let mut bases = 0;
        while bases < target {
            let len = mean / 2 + (next() % mean as u64) as usize;
            let mut pick = (next() % genome_len as u64) as usize;
            let s = seqs.iter().find(|s| {
                let found = pick < s.len();
                if !found {
                    pick -= s.len();
                }
                found
            });
            let s = s.unwrap();
            if s.len() < len {
                continue;
            }
            let start = (next() % (s.len() - len + 1) as u64) as usize;
            let mut read: Vec<u8> = s[start..start + len].to_vec();
            if next() & 1 == 1 {
                read = read
                    .iter()
                    .rev()
                    .map(|b| match b {
                        b'A' => b'T',
                        b'C' => b'G',
                        b'G' => b'C',
                        b'T' => b'A',
                        _ => b'N',
                    })
                    .collect();
            }
            for b in &mut read {
                if next() % 100 < 5 {
                    *b = b"ACGT"[(next() % 4) as usize];
                }
            }
            out.push_str(&format!(">long{n} {}\n{}\n", g.label, String::from_utf8(read).unwrap()));
            n += 1;
            bases += len;
        }
        *copies.entry(g.species).or_default() += c;
    }
    std::fs::write(&path, out).unwrap();
    (path, normalise(copies))
}

#[test]
fn long_reads_of_uneven_lengths_get_genome_copies_from_their_bases() {
    let (reads, truth) = long_reads_of_uneven_lengths();
    let opts = ClassifyOptions { paired: Pairing::Single, threads: 2, ..ClassifyOptions::default() };
    let results = classify(our_db(MapKind::TwoColumns), &reads, &opts, &mut std::io::sink()).expect("classify");
    let by_bases = species(&results, |r| r.bases_abundance);
    let by_reads = species(&results, |r| r.abundance);
    let (d_bases, d_reads) = (l1(&by_bases, &truth), l1(&by_reads, &truth));
    eprintln!("truth {truth:?}\nby bases {by_bases:?} (L1 {d_bases:.4})\nby reads {by_reads:?} (L1 {d_reads:.4})");
    assert!((by_bases.values().sum::<f64>() - 1.0).abs() < 1e-9);
    assert!(d_bases <= 0.02, "genome copies by bases: L1 to the truth {d_bases:.4}");
    assert!(d_bases < d_reads, "by bases {d_bases:.4} is not closer than by reads {d_reads:.4}");
    // These are long reads: the results say so, and genome copies by bases are shown first.
    let median = results.median_read_length.expect("a median read length");
    assert!((2_000..12_000).contains(&median), "{median}");
    assert_eq!(mgds_api::Measure::default_for(&results), mgds_api::Measure::BasesGenomeCopies);
    // Only species rows carry it.
    assert!(results.table.iter().all(|r| r.bases_abundance.is_none() || r.rank == "species"));
    // The reads' quality control was counted as they were read: long reads, their N50 above
    // their median, the length bins holding every read.
    let qc = results.qc.as_ref().expect("quality control");
    assert!(qc.long_reads);
    assert_eq!(qc.reads, results.n_reads);
    assert_eq!(qc.median_length, median);
    assert!(qc.n50 >= qc.median_length, "{} {}", qc.n50, qc.median_length);
    assert_eq!(qc.lengths.iter().map(|b| b.reads).sum::<u64>(), qc.reads);
    assert!(qc.lengths.len() <= mgds_api::MAX_LENGTH_BINS);
}

#[test]
fn short_reads_keep_their_default_measure() {
    let results = run(our_db(MapKind::TwoColumns));
    assert_eq!(results.median_read_length, Some(150));
    assert_eq!(mgds_api::Measure::default_for(&results), mgds_api::Measure::Reestimated);
    let qc = results.qc.as_ref().expect("quality control");
    assert_eq!((qc.reads, qc.median_length, qc.min_length, qc.max_length), (results.n_reads, 150, 150, 150));
    assert_eq!(qc.bases, 150 * qc.reads);
    assert!(!qc.long_reads && (0.2..0.8).contains(&qc.gc), "{qc:?}");
    // For reads of one length, counting bases gives the genome copies counting reads gives.
    let (by_bases, by_reads) = (species(&results, |r| r.bases_abundance), species(&results, |r| r.abundance));
    assert!(l1(&by_bases, &by_reads) < 1e-9, "{by_bases:?} {by_reads:?}");
}
