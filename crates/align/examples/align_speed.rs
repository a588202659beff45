//! Throughput of `align` and `profile` on simulated data; prints a table.
//!
//! `cargo run --release -p mgds-align --example align-speed [genome_mb] [reads]`

use std::time::Instant;

use mgds_align::{AlignOptions, Catalogue, Preset, ProfileOptions, align, demo, profile, write_demo_catalogue};

#[allow(dead_code)]
#[path = "../tests/it/sim.rs"]
mod sim;

fn main() {
    let mut args = std::env::args().skip(1);
    let genome_mb: f64 = args.next().map_or(5.0, |a| a.parse().expect("genome size in Mb"));
    let n_reads: usize = args.next().map_or(500_000, |a| a.parse().expect("number of reads"));
    let dir = tempfile::tempdir().expect("temporary folder");
    let mut rng = sim::Rng::new(42);

    let genome = sim::random_seq(&mut rng, (genome_mb * 1e6) as usize);
    let reference = dir.path().join("ref.fa");
    std::fs::write(&reference, sim::fasta(&[("chr", &genome)])).unwrap();
    let reads = sim::reads_from(&mut rng, &genome, 0, genome.len(), n_reads, 150, 0.01);
    let reads_path = dir.path().join("reads.fq");
    std::fs::write(&reads_path, sim::fastq("r", &reads)).unwrap();
    drop(reads);

    println!("| job | input | threads | seconds | reads/s | result |");
    println!("|---|---|---|---|---|---|");
    for threads in [1, 2] {
        let opts = AlignOptions { threads, preset: Preset::ShortReads, ..Default::default() };
        let mut sam = std::io::sink();
        let t = Instant::now();
        let r = align(&reference, &reads_path, &opts, &mut sam).expect("align");
        report(
            "align (SAM to sink)",
            &format!("{genome_mb} Mb genome, {n_reads} x 150 bp, 1% errors"),
            threads,
            t.elapsed().as_secs_f64(),
            n_reads,
            &format!(
                "{:.2}% mapped, breadth {:.4}, depth {:.2}",
                r.percent_mapped, r.breadth_of_coverage, r.mean_depth
            ),
        );
    }

    let catalogue_dir = dir.path().join("demo");
    write_demo_catalogue(&catalogue_dir).unwrap();
    let catalogue = Catalogue::load(&catalogue_dir).unwrap();
    let genes = String::from_utf8(demo::GENES_FA.to_vec()).unwrap();
    let seqs: Vec<String> = genes.split('>').skip(1).map(|r| r.lines().skip(1).collect()).collect();
    let mut reads = Vec::with_capacity(n_reads);
    for i in 0..n_reads {
        let s = seqs[i % seqs.len()].as_bytes();
        let start = rng.below(s.len() - 150);
        reads.push(sim::read_at(&mut rng, s, start, 150, 0.01));
    }
    let fn_reads = dir.path().join("fn_reads.fq");
    std::fs::write(&fn_reads, sim::fastq("f", &reads)).unwrap();
    for threads in [1, 2] {
        let t = Instant::now();
        let p = profile(&catalogue, &fn_reads, &ProfileOptions { threads, ..Default::default() }).expect("profile");
        report(
            "profile (demo catalogue)",
            &format!("{} genes, {n_reads} x 150 bp", catalogue.n_genes()),
            threads,
            t.elapsed().as_secs_f64(),
            n_reads,
            &format!("{} of {} mapped, {} functions", p.n_mapped_reads, p.n_reads, p.functions.len()),
        );
    }
}

fn report(job: &str, input: &str, threads: usize, secs: f64, reads: usize, result: &str) {
    println!("| {job} | {input} | {threads} | {secs:.2} | {:.0} | {result} |", reads as f64 / secs);
}
