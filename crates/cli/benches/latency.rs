//! Upload to result on a real `mgds serve`: how long after its upload is confirmed a batch of
//! 4,000 Nanopore-like reads (what one barcode of a live run yields in about a minute) has its
//! classification, for 1, 10 and 100 batches in a row, with warm engine processes (the default)
//! and with a new engine process per analysis (`--warm-engines 0`, the anchor), beside the
//! engine's own time on the same batch in this process. What the service adds around the engine
//! (queue pick-up, engine start, database open, writing and storing results) is the latency less
//! the engine's time.
//!
//! Run: `cargo bench -p mgds-cli --bench latency`. `MGDS_BENCH_READS` (4,000) sets the reads per
//! batch. The database is the demo's, unless `MGDS_BENCH_KRAKEN2` names a Kraken 2 folder (the
//! `kraken2` bench of mgds-classify leaves one of six real genomes in
//! `~/.cache/mgds/bench/kraken2-db`): it is registered with `mgds db import-kraken2`, and the
//! batches are drawn from the genomes of its library.

#![allow(missing_docs)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const MGDS: &str = env!("CARGO_BIN_EXE_mgds");
/// The most the service may add around the engine.
const TARGET_OVERHEAD: Duration = Duration::from_millis(300);

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A batch of Nanopore-like reads from the genomes in `fasta` (gzipped or not): lengths 1 to 7
/// kbp, 6% substitutions, gzipped FASTQ as MinKNOW writes it.
fn batch(reads: usize, fasta: &[PathBuf]) -> Vec<u8> {
    let mut text = String::new();
    for f in fasta {
        let file = std::fs::File::open(f).unwrap();
        if f.extension().is_some_and(|e| e == "gz") {
            flate2::read::MultiGzDecoder::new(file).read_to_string(&mut text).unwrap();
        } else {
            std::io::BufReader::new(file).read_to_string(&mut text).unwrap();
        }
    }
    let seqs: Vec<Vec<u8>> = text
        .split('>')
        .filter(|r| !r.is_empty())
        .map(|r| r.lines().skip(1).flat_map(|l| l.trim().bytes()).collect::<Vec<u8>>())
        .filter(|s| s.len() > 10_000)
        .collect();
    let mut rng = 20_261_128u64;
    let mut next = || {
        rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        rng >> 17
    };
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    for i in 0..reads {
        let s = &seqs[next() as usize % seqs.len()];
        let len = 1_000 + next() as usize % 6_000;
        let len = len.min(s.len());
        let start = next() as usize % (s.len() - len + 1);
        let read: Vec<u8> = s[start..start + len]
            .iter()
            .map(|&b| if next() % 100 < 6 { b"ACGT"[next() as usize % 4] } else { b })
            .collect();
        writeln!(gz, "@read{i} runid=bench\n{}\n+\n{}", String::from_utf8_lossy(&read), "5".repeat(len)).unwrap();
    }
    gz.finish().unwrap()
}

struct Serve {
    child: Child,
    url: String,
    // Kept open: the service writes more lines later.
    _out: BufReader<std::process::ChildStdout>,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-INT", &self.child.id().to_string()]).status();
        let _ = self.child.wait();
    }
}

fn serve(data: &Path, extra: &[&str]) -> Serve {
    let mut child = Command::new(MGDS)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data)
        .args(extra)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("mgds serve starts");
    let mut line = String::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    out.read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("listening on ").expect("the address").to_string();
    Serve { child, url, _out: out }
}

async fn json(http: &reqwest::Client, method: &str, url: &str, key: &str, body: Option<Value>) -> Value {
    let mut req = http.request(method.parse().unwrap(), url).basic_auth(key, Some(""));
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.unwrap();
    let status = r.status();
    let v: Value = r.json().await.unwrap_or(Value::Null);
    assert!(status.is_success(), "{method} {url}: {status} {v}");
    v
}

/// Uploads one batch and confirms it; returns the sample id and when the confirmation answered.
async fn upload(http: &reqwest::Client, url: &str, key: &str, name: &str, bytes: &[u8]) -> (String, Instant) {
    let init = json(
        http,
        "POST",
        &format!("{url}/api/v1/samples/init_upload"),
        key,
        Some(json!({"filename": name, "size": bytes.len()})),
    )
    .await;
    let mut form = reqwest::multipart::Form::new();
    for (k, v) in init["additional_fields"].as_object().unwrap() {
        form = form.text(k.clone(), v.as_str().unwrap_or_default().to_string());
    }
    form = form.part("file", reqwest::multipart::Part::bytes(bytes.to_vec()).file_name(name.to_string()));
    let r = http.post(init["upload_url"].as_str().unwrap()).multipart(form).send().await.unwrap();
    assert!(r.status().is_success(), "upload: {}", r.status());
    let id = init["sample_id"].as_str().unwrap().to_string();
    json(http, "POST", &format!("{url}/api/v1/samples/confirm_upload"), key, Some(json!({"sample_id": id}))).await;
    (id, Instant::now())
}

/// Waits (looking every 5 ms) until the sample's primary classification is complete; when it
/// was seen complete.
async fn classified(http: &reqwest::Client, url: &str, key: &str, id: &str) -> Instant {
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut analysis: Option<String> = None;
    loop {
        assert!(Instant::now() < deadline, "no classification of {id}");
        if analysis.is_none() {
            let s = json(http, "GET", &format!("{url}/api/v1/samples/{id}"), key, None).await;
            analysis = s["primary_classification"]["$ref"].as_str().map(str::to_owned);
        }
        if let Some(a) = &analysis {
            let v = json(http, "GET", &format!("{url}{a}"), key, None).await;
            if v["complete"] == json!(true) {
                assert_eq!(v["success"], json!(true), "{v}");
                return Instant::now();
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

/// The demo classification database installed in `data`.
fn demo_database(data: &Path) -> PathBuf {
    fn find(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                find(&p, out);
            } else if p.extension().is_some_and(|x| x == "mgdb") {
                out.push(p);
            }
        }
    }
    let mut found = Vec::new();
    find(data, &mut found);
    found.into_iter().next().expect("the demo classification database")
}

fn main() {
    let reads = env_num("MGDS_BENCH_READS", 4_000) as usize;
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let out = Command::new(MGDS)
        .args(["admin", "--data-dir"])
        .arg(&data)
        .args(["user", "create", "lab@lab.org"])
        .output()
        .expect("mgds admin runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let key = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let kraken2 = std::env::var_os("MGDS_BENCH_KRAKEN2").map(PathBuf::from);
    let (sources, serve_args, what): (Vec<PathBuf>, &[&str], String) = match &kraken2 {
        Some(k) => {
            let out = Command::new(MGDS)
                .args(["db", "import-kraken2"])
                .arg(k)
                .args(["--name", "bench", "--data-dir"])
                .arg(&data)
                .output()
                .expect("mgds db runs");
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let library: Vec<PathBuf> = std::fs::read_dir(k.join("library/added"))
                .expect("the folder's library (library/added)")
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "fna"))
                .collect();
            (library, &["--no-demo"], format!("the Kraken 2 folder {} (read in place)", k.display()))
        }
        None => (
            vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo/genomes.fa.gz")],
            &[],
            "the demo database".to_string(),
        ),
    };
    let bytes = batch(reads, &sources);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let runs = [1usize, 10, 100];
    let mut table: Vec<(&str, Vec<Vec<Duration>>)> = Vec::new();
    let mut uploaded = 0;
    for (name, extra) in
        [("warm engines (default)", &[][..]), ("a new engine process per analysis", &["--warm-engines", "0"][..])]
    {
        let args: Vec<&str> = serve_args.iter().chain(extra).copied().collect();
        let s = serve(&data, &args);
        let mut per_run = Vec::new();
        for &n in &runs {
            eprintln!("{name}: {n} batch(es) in a row");
            let mut latencies = Vec::new();
            for _ in 0..n {
                uploaded += 1;
                let (id, confirmed) =
                    rt.block_on(upload(&http, &s.url, &key, &format!("batch{uploaded}.fastq.gz"), &bytes));
                let done = rt.block_on(classified(&http, &s.url, &key, &id));
                latencies.push(done - confirmed);
            }
            latencies.sort();
            per_run.push(latencies);
        }
        table.push((name, per_run));
        drop(s);
    }

    // The engine alone on the same batch, the same database, every core, its pages cached.
    let file = dir.path().join("batch.fastq.gz");
    std::fs::write(&file, &bytes).unwrap();
    let db = match &kraken2 {
        Some(k) => mgds_classify::Database::open(k).unwrap(),
        None => mgds_classify::Database::open(demo_database(&data)).unwrap(),
    };
    let opts = mgds_classify::ClassifyOptions::default();
    let mut engine = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        mgds_classify::classify(&db, &file, &opts, &mut std::io::sink()).unwrap();
        engine.push(started.elapsed());
    }
    engine.sort();
    let engine = engine[engine.len() / 2];

    println!(
        "# Upload to result: {reads}-read Nanopore-like batches ({:.1} MB gzipped), {what}\n",
        bytes.len() as f64 / 1e6
    );
    println!(
        "- latency: from the answer to `confirm_upload` until the sample's classification reads complete (looked at every 5 ms)"
    );
    println!(
        "- engine alone: `classify()` of the same batch in this process, every core, median of 5: {}",
        secs(engine)
    );
    println!("- machine: {} CPU(s)\n", std::thread::available_parallelism().map_or(0, |n| n.get()));
    println!(
        "| batches in a row | engines | median | p90 | slowest | added around the engine (median − engine) | ≤ {} |",
        secs(TARGET_OVERHEAD)
    );
    println!("|---|---|---|---|---|---|---|");
    for (i, &n) in runs.iter().enumerate() {
        for (name, per_run) in &table {
            let l = &per_run[i];
            let median = percentile(l, 0.5);
            let added = median.saturating_sub(engine);
            println!(
                "| {n} | {name} | {} | {} | {} | {} | {} |",
                secs(median),
                secs(percentile(l, 0.9)),
                secs(*l.last().unwrap()),
                secs(added),
                if added <= TARGET_OVERHEAD { "met" } else { "NOT MET" }
            );
        }
    }
}
