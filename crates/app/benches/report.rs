//! A comparison report of 50 samples (the goal: a 20-page report in ≤ 3 s): the report
//! assembled (the comparison, the clustered heatmap, diversity with a PERMANOVA of 999
//! permutations, every chart drawn) and typeset to PDF, then written as HTML, each the median of
//! a few runs, with the PDF's pages (`pdfinfo`, from poppler-utils, where installed).
//!
//! `cargo bench -p mgds-app --bench report`; `BENCH_SAMPLES` (default 50), `BENCH_SPECIES`
//! (default 400 in the community) and `BENCH_REPEATS` (default 5) change the size.
//!
//! The samples are classification results made here: 40 genera of 10 species each under one
//! root, every sample a community of the same taxa whose shares differ by sample and by its
//! group (two groups), with read counts, re-estimated abundances and read quality filled in as
//! the service fills them. Only the report's own work is timed: fetching the results from a
//! service is the comparison's, and is the same for every screen.

use std::time::{Duration, Instant};

use mgds_api::{ClassificationResults, ReadQc, TaxonRow};
use mgds_app::report::{ComparisonReportRequest, ReportSample, assemble, render};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn row(tax_id: u64, name: String, rank: &str, parent: Option<u64>, reads: u64, own: u64) -> TaxonRow {
    TaxonRow {
        tax_id: tax_id.to_string(),
        name,
        rank: rank.into(),
        parent_tax_id: parent.map(|p| p.to_string()),
        readcount: own,
        readcount_w_children: reads,
        abundance: None,
        abundance_w_children: None,
        filtered_readcount: None,
        filtered_readcount_w_children: None,
        reestimated_abundance: None,
        bases_abundance: None,
    }
}

/// Sample `i` of a community of `species` species in 10-species genera.
fn sample(i: usize, species: usize, rng: &mut Rng) -> ClassificationResults {
    let group = i % 2;
    let weights: Vec<f64> = (0..species)
        .map(|s| {
            // A long tail; each group favours its own half of the genera.
            let base = 1.0 / (1.0 + s as f64).powf(1.1);
            let favoured = if (s / 10) % 2 == group { 3.0 } else { 1.0 };
            base * favoured * (0.3 + rng.next()) * if rng.next() < 0.15 { 0.0 } else { 1.0 }
        })
        .collect();
    let total_w: f64 = weights.iter().sum();
    let classified = 200_000u64;
    let counts: Vec<u64> = weights.iter().map(|w| (w / total_w * classified as f64).round() as u64).collect();
    let n_reads = counts.iter().sum::<u64>() + 20_000;
    let mut table = vec![row(1, "root".into(), "no rank", None, n_reads - 20_000, 0)];
    table.push(row(2, "Bacteria".into(), "superkingdom", Some(1), n_reads - 20_000, 0));
    let species_sum: u64 = counts.iter().sum();
    for g in 0..species.div_ceil(10) {
        let members = &counts[g * 10..((g + 1) * 10).min(species)];
        let genus_reads: u64 = members.iter().sum();
        if genus_reads == 0 {
            continue;
        }
        let genus = 1_000 + g as u64;
        table.push(row(genus, format!("Genus{g:02}"), "genus", Some(2), genus_reads, 0));
        for (k, &c) in members.iter().enumerate().filter(|(_, c)| **c > 0) {
            let s = g * 10 + k;
            let mut r = row(100_000 + s as u64, format!("Genus{g:02} species{k}"), "species", Some(genus), c, c);
            r.reestimated_abundance = Some(c as f64 / species_sum as f64);
            table.push(r);
        }
    }
    let qc = ReadQc {
        reads: n_reads,
        bases: n_reads * 150,
        min_length: 35,
        max_length: 151,
        mean_length: 148.7,
        median_length: 150,
        gc: 0.48 + rng.next() * 0.05,
        n_share: 0.0004,
        mean_quality: Some(34.0 + rng.next() * 3.0),
        q30_share: Some(0.9),
        ..Default::default()
    };
    ClassificationResults { table, n_reads, host_tax_ids: Vec::new(), median_read_length: Some(150), qc: Some(qc) }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let (n, species, repeats) =
        (env_usize("BENCH_SAMPLES", 50), env_usize("BENCH_SPECIES", 400), env_usize("BENCH_REPEATS", 5).max(1));
    let mut rng = Rng(42);
    let results: Vec<ClassificationResults> = (0..n).map(|i| sample(i, species, &mut rng)).collect();
    let samples: Vec<ReportSample<'_>> = results
        .iter()
        .enumerate()
        .map(|(i, r)| ReportSample {
            id: format!("{i:016x}"),
            label: format!("ward{}_swab{:02}.fastq.gz", i % 2 + 1, i),
            group: Some(format!("ward {}", i % 2 + 1)),
            results: r,
            classification: None,
        })
        .collect();
    let req = ComparisonReportRequest {
        samples: samples.iter().map(|s| s.id.clone()).collect(),
        rank: "species".into(),
        top: 30,
        measure: None,
        metric: None,
        group_by: Some("ward".into()),
        label: None,
        permutations: Some(999),
        seed: Some(42),
        show_host: false,
        title: None,
    };
    let lab = mgds_report::Lab { name: "Microbiology".into(), logo: None };
    let (mut assembled, mut typeset, mut html) = (Vec::new(), Vec::new(), Vec::new());
    let mut pdf = Vec::new();
    for _ in 0..repeats {
        let t = Instant::now();
        let report = assemble(&samples, &[], &req, lab.clone(), "Made for the benchmark".into()).expect("the report");
        assembled.push(t.elapsed());
        let t = Instant::now();
        pdf = render(&report, "pdf").expect("the PDF").0;
        typeset.push(t.elapsed());
        let t = Instant::now();
        render(&report, "html").expect("the HTML");
        html.push(t.elapsed());
    }
    let pages = {
        let path = std::env::temp_dir().join(format!("mgds-bench-report-{}.pdf", std::process::id()));
        std::fs::write(&path, &pdf).expect("a temporary file");
        let out = std::process::Command::new("pdfinfo").arg(&path).output();
        let _ = std::fs::remove_file(&path);
        match out {
            Ok(o) => String::from_utf8_lossy(&o.stdout)
                .lines()
                .find_map(|l| l.strip_prefix("Pages:").map(|p| p.trim().to_string()))
                .unwrap_or_else(|| "?".into()),
            Err(_) => "? (pdfinfo not installed: apt-get install poppler-utils)".into(),
        }
    };
    let (a, t, h) = (median(assembled), median(typeset), median(html));
    let whole = a + t;
    println!("Comparison report: {n} samples, {species} species in the community, median of {repeats} runs");
    println!();
    println!("| step | time | goal |");
    println!("|---|---|---|");
    println!("| assemble (comparison, heatmap, diversity + PERMANOVA 999, charts) | {:.2} s | |", a.as_secs_f64());
    println!("| typeset the PDF ({pages} pages, {} KB) | {:.2} s | |", pdf.len() / 1024, t.as_secs_f64());
    println!(
        "| **report, assembled and typeset** | **{:.2} s** | ≤ 3 s: {} |",
        whole.as_secs_f64(),
        if whole <= Duration::from_secs(3) { "met" } else { "missed" }
    );
    println!("| the same as HTML (after assembling) | {:.2} s | |", h.as_secs_f64());
}
