//! Measures detection speed on simulated reads against the demo panel and prints a table.
//!
//! `cargo run --release -p mgds-panel --example throughput -- [reads] [threads...]`
//! (defaults: 200000 reads of 150 bp, 1 and 2 threads).

use std::time::Instant;

use mgds_panel::simulate::{ReadSimulator, write_fastq};
use mgds_panel::{DetectOptions, Detector, demo};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let mut threads: Vec<usize> = args.filter_map(|a| a.parse().ok()).collect();
    if threads.is_empty() {
        threads = vec![1, 2];
    }
    let panel = demo::panel();
    let mut sim = ReadSimulator::new(42);
    let mut reads = sim.background(n);
    // A few markers present, so the alignment and pile-up paths are exercised too.
    for (_, m) in panel.markers().step_by(2) {
        if m.is_short(panel.thresholds()) {
            reads.extend(sim.embed(&m.sequence, 20));
        } else {
            reads.extend(sim.plant(&m.sequence, 30.0));
        }
    }
    sim.shuffle(&mut reads);
    let dir = std::env::temp_dir().join(format!("mgds-panel-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary folder");
    let path = dir.join("reads.fastq.gz");
    write_fastq(&path, &reads, true).expect("write reads");

    let detector = Detector::new(&panel);
    println!("{:>8} {:>10} {:>10} {:>12} {:>10}", "threads", "reads", "seconds", "reads/s", "Mbases/s");
    for t in threads {
        let start = Instant::now();
        let d = detector.run(&path, &DetectOptions { threads: t, max_record: None }).expect("detect");
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{:>8} {:>10} {:>10.2} {:>12.0} {:>10.1}",
            t,
            d.stats.reads,
            secs,
            d.stats.reads as f64 / secs,
            d.stats.bases as f64 / secs / 1e6
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
