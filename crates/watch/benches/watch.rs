//! The watcher's cost at rest and its speed: a folder of 10,000 files that no longer change
//! (CPU time the process spends per minute of watching), and the time from a file settling to
//! its sample being confirmed by the real local service; and the app's read of the queue for its
//! Watched folders screen against reading everything. Prints tables.
//!
//! `cargo bench -p mgds-watch --bench watch` (`WATCH_BENCH_WINDOW=SECS` sets the measured
//! window per row, default 30).

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mgds_client::Client;
use mgds_watch::{Event, FolderConfig, Layout, Options, Queue, Watcher};
use tokio::sync::mpsc::UnboundedReceiver;

/// Files in the folder at rest (`WATCH_BENCH_FILES` overrides, for a quick run).
fn files() -> usize {
    std::env::var("WATCH_BENCH_FILES").ok().and_then(|s| s.parse().ok()).unwrap_or(10_000)
}

/// CPU time (user + system) of this process so far, from /proc/self/stat, in seconds.
/// Linux counts it in clock ticks of 1/100 s (USER_HZ).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat (Linux only)");
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

fn small_fastq(i: usize) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    writeln!(e, "@r{i}\nACGTACGTACGTACGTACGT\n+\nIIIIIIIIIIIIIIIIIIII").unwrap();
    e.finish().unwrap()
}

async fn drain_until(rx: &mut UnboundedReceiver<Event>, count: usize, pred: impl Fn(&Event) -> bool, secs: u64) {
    let start = Instant::now();
    let deadline = start + Duration::from_secs(secs);
    let mut n = 0;
    while n < count {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, rx.recv()).await {
            Ok(Some(e)) if pred(&e) => {
                n += 1;
                if n % 1000 == 0 {
                    eprintln!("{n} of {count} after {:.1} s", start.elapsed().as_secs_f64());
                }
            }
            Ok(Some(_)) => {}
            _ => panic!("only {n} of {count} events arrived"),
        }
    }
}

/// CPU per minute of a watcher over the 10,000 files at rest.
async fn at_rest(client: &Client, folder: &Path, data: &Path, options: Options, window: Duration) -> f64 {
    let _ = std::fs::remove_dir_all(data);
    let mut options = options;
    // Paused: every file is seen, settled and queued, then nothing moves: the scanner's
    // steady state is what is measured, with no uploads going on.
    options.pause_file = Some(data.join("paused"));
    std::fs::create_dir_all(data).unwrap();
    std::fs::write(data.join("paused"), b"").unwrap();
    let (w, mut rx) = Watcher::start(vec![FolderConfig::new(folder)], options, client.clone(), data).await.unwrap();
    drain_until(&mut rx, files(), |e| matches!(e, Event::SampleQueued { .. }), 600).await;
    // Let the last pass finish before measuring.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let start_cpu = cpu_seconds();
    let start = Instant::now();
    tokio::time::sleep(window).await;
    let used = cpu_seconds() - start_cpu;
    let per_minute = used / start.elapsed().as_secs_f64() * 60.0;
    w.stop().await.unwrap();
    per_minute
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let window =
        Duration::from_secs(std::env::var("WATCH_BENCH_WINDOW").ok().and_then(|s| s.parse().ok()).unwrap_or(30));
    let tmp = tempfile::tempdir().unwrap();
    let mut config = mgds_server::Config::new(tmp.path().join("service"));
    config.runner.workers = 0;
    let (url, state) = mgds_server::spawn(config, "127.0.0.1:0".parse().unwrap()).await.unwrap();
    let key = mgds_server::admin::create_user(&state.db, "bench@example.org", None, mgds_server::admin::Role::Member)
        .await
        .unwrap()
        .api_key;
    let client = Client::new(&url, key).unwrap();

    let folder = tmp.path().join("at-rest");
    for i in 0..files() {
        let dir = folder.join(format!("d{:03}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i:05}.fastq.gz")), small_fastq(i)).unwrap();
    }
    let base = Options { min_age: Duration::ZERO, ..Options::default() };
    let rows: Vec<(&str, Options)> = vec![
        ("events + rescan 120 s, poll 10 s (default)", base.clone()),
        ("polling only, poll 10 s", Options { events: false, ..base.clone() }),
        ("polling only, poll 2 s", Options { events: false, poll_interval: Duration::from_secs(2), ..base.clone() }),
    ];
    println!("\n{} files at rest (folders of 100), {} s window per row", files(), window.as_secs());
    println!("| mode | CPU s per minute | CPU % of one core |");
    println!("|---|---:|---:|");
    for (name, options) in rows {
        let cpu = at_rest(&client, &folder, &tmp.path().join("state-rest"), options, window).await;
        println!("| {name} | {cpu:.3} | {:.2} |", cpu / 60.0 * 100.0);
    }

    // The app's Watched folders screen reads the queue every few seconds while it is open: the
    // indexed reads it makes, against loading every file and sample (the anchor).
    let q = Queue::open(&tmp.path().join("state-rest")).await.unwrap();
    const REPS: u32 = 20;
    let start = Instant::now();
    let mut listed = 0;
    for _ in 0..REPS {
        let counts = q.file_counts().await.unwrap();
        let shown = q.files_to_show(&folder, 300).await.unwrap();
        let (samples, _) = q.recent_samples(500).await.unwrap();
        listed = counts.len() + shown.len() + samples.len();
    }
    let screen_ms = start.elapsed().as_secs_f64() * 1000.0 / f64::from(REPS);
    let start = Instant::now();
    let mut all = 0;
    for _ in 0..REPS {
        all = q.all_files().await.unwrap().len() + q.samples().await.unwrap().len();
    }
    let all_ms = start.elapsed().as_secs_f64() * 1000.0 / f64::from(REPS);
    q.close().await;
    println!("\nThe Watched folders screen's read of the queue ({} files, as many samples)", files());
    println!("| read | rows | ms per read |");
    println!("|---|---:|---:|");
    println!("| counts + 300 files + newest 500 samples (indexed) | {listed} | {screen_ms:.1} |");
    println!("| every file and sample (anchor) | {all} | {all_ms:.1} |");

    // Latency: files written one after another; from FileSettled to SampleConfirmed.
    let live = tmp.path().join("live");
    std::fs::create_dir_all(&live).unwrap();
    let options = Options {
        poll_interval: Duration::from_millis(200),
        min_age: Duration::ZERO,
        rescan_interval: Duration::from_secs(5),
        ..Options::default()
    };
    let mut cfg = FolderConfig::new(&live);
    cfg.layout = Layout::Files;
    let (w, mut rx) = Watcher::start(vec![cfg], options, client.clone(), tmp.path().join("state-live")).await.unwrap();
    let mut sizes = Vec::new();
    for (n, size_kb) in [(20usize, 10usize), (10, 1024), (5, 16 * 1024)] {
        let mut settled: HashMap<PathBuf, Instant> = HashMap::new();
        let mut file_of: HashMap<String, PathBuf> = HashMap::new();
        let mut lat = Vec::new();
        let body = {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            let mut i = 0;
            while e.get_ref().len() < size_kb * 1024 {
                // Varied bases so gzip does not shrink it to nothing.
                let seq: String =
                    (0..150).map(|j| ['A', 'C', 'G', 'T'][((i * 2654435761usize) >> (j % 24)) % 4]).collect();
                writeln!(e, "@r{i}\n{seq}\n+\n{}", "I".repeat(150)).unwrap();
                i += 1;
            }
            e.finish().unwrap()
        };
        for k in 0..n {
            std::fs::write(live.join(format!("s{size_kb}k_{k:03}.fastq.gz")), &body).unwrap();
        }
        while lat.len() < n {
            let e = tokio::time::timeout(Duration::from_secs(300), rx.recv()).await.unwrap().unwrap();
            match e {
                Event::FileSettled { path, .. } => {
                    settled.insert(path, Instant::now());
                }
                Event::SampleQueued { key, files, .. } => {
                    file_of.insert(key, files[0].clone());
                }
                Event::SampleConfirmed { key, .. } => {
                    let f = &file_of[&key];
                    lat.push(settled[f].elapsed());
                }
                _ => {}
            }
        }
        lat.sort();
        sizes.push((n, body.len(), lat));
    }
    w.stop().await.unwrap();
    println!("\nFrom a file settling to its sample confirmed (real local service, files queued together)");
    println!("| files | file size | median | p90 | max |");
    println!("|---:|---:|---:|---:|---:|");
    for (n, bytes, lat) in sizes {
        let q = |f: f64| lat[((lat.len() - 1) as f64 * f).round() as usize];
        println!(
            "| {n} | {:.1} MiB | {:.0} ms | {:.0} ms | {:.0} ms |",
            bytes as f64 / 1048576.0,
            q(0.5).as_secs_f64() * 1000.0,
            q(0.9).as_secs_f64() * 1000.0,
            lat.last().unwrap().as_secs_f64() * 1000.0
        );
    }
}
