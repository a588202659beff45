//! Load on a real `mgds serve`: many clients at once for a while, mixing what a lab does (lists
//! with filters, single records, uploads), while classifications run in engine processes beside
//! it. Prints a table: requests per second, p50/p99 latency per kind of request, 5xx answers
//! (the target is none) and the service's peak memory.
//!
//! The audit trail's share of the writes: the time its entries took to append (the service's
//! `mgds_audit_write_seconds`) against the p99 of the uploads, whose confirmation appends one.
//!
//! Then one owner queues a burst of classifications and another owner uploads one: a table says
//! how many of the burst finished first (owners take turns in the queue, so about one) and how
//! long each side waited.
//!
//! Run: `cargo bench -p mgds-cli --bench load`. `MGDS_LOAD_CLIENTS` (default 50),
//! `MGDS_LOAD_SECS` (default 60) and `MGDS_LOAD_BURST` (default 20) set the size of the run.

#![allow(missing_docs)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::Mutex;

const MGDS: &str = env!("CARGO_BIN_EXE_mgds");

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// What each kind of request took.
#[derive(Default)]
struct Tally {
    latencies: Vec<(&'static str, Duration)>,
    server_errors: Vec<String>,
    client_errors: u64,
}

fn main() {
    let clients = env_num("MGDS_LOAD_CLIENTS", 50) as usize;
    let secs = env_num("MGDS_LOAD_SECS", 60);
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let mut serve = Command::new(MGDS)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("mgds serve starts");
    let mut out = BufReader::new(serve.stdout.take().expect("stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("first line");
    let url = line.trim().strip_prefix("listening on ").expect("listening on URL").to_string();
    let key = {
        let out = Command::new(MGDS)
            .args(["admin", "--data-dir"])
            .arg(&data)
            .args(["user", "create", "load@lab.example.org"])
            .output()
            .expect("mgds admin");
        String::from_utf8(out.stdout).expect("key").trim().to_string()
    };
    let reads =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo/reads.fastq.gz")).expect("demo");
    // A sample whose classification runs through the whole run: the demo reads many times over.
    let long: Vec<u8> = (0..400).flat_map(|_| reads.clone()).collect();

    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let tally = Arc::new(Mutex::new(Tally::default()));
    let started = Instant::now();
    rt.block_on(async {
        let http = reqwest::Client::builder().pool_max_idle_per_host(clients).build().expect("client");
        // Something to list and fetch, and the long classification.
        let mut ids = Vec::new();
        for i in 0..20 {
            ids.push(upload(&http, &url, &key, &format!("seed{i}.fastq.gz"), &reads).await.expect("seed upload"));
        }
        upload(&http, &url, &key, "long_run.fastq.gz", &long).await.expect("long upload");
        let ids = Arc::new(ids);
        let until = Instant::now() + Duration::from_secs(secs);
        let mut tasks = Vec::new();
        for client in 0..clients {
            let (http, url, key, ids, tally, reads) =
                (http.clone(), url.clone(), key.clone(), ids.clone(), tally.clone(), reads.clone());
            tasks.push(tokio::spawn(async move {
                let mut n = client;
                while Instant::now() < until {
                    n = n.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let pick = (n >> 33) % 100;
                    let id = &ids[(n >> 40) % ids.len()];
                    let kind = match pick {
                        0..=39 => "list samples, filtered",
                        40..=69 => "get a sample",
                        70..=89 => "list analyses",
                        90..=97 => "list metadata",
                        _ => "upload (3 requests)",
                    };
                    let t = Instant::now();
                    let (status, body) = match pick {
                        0..=39 => {
                            let filter = "%7B%22filename%22%3A%7B%22%24startswith%22%3A%22seed1%22%7D%7D";
                            get(&http, &format!("{url}/api/v1/samples?per_page=20&where={filter}"), &key).await
                        }
                        40..=69 => get(&http, &format!("{url}/api/v1/samples/{id}"), &key).await,
                        70..=89 => get(&http, &format!("{url}/api/v1/analyses?per_page=50"), &key).await,
                        90..=97 => get(&http, &format!("{url}/api/v1/metadata?per_page=20"), &key).await,
                        _ => match upload(&http, &url, &key, &format!("load{client}_{n}.fastq.gz"), &reads).await {
                            Ok(_) => (200, String::new()),
                            Err(e) => e,
                        },
                    };
                    let took = t.elapsed();
                    let mut t = tally.lock().await;
                    t.latencies.push((kind, took));
                    if status >= 500 || status == 0 {
                        t.server_errors
                            .push(format!("{status} {kind}: {}", body.chars().take(200).collect::<String>()));
                    } else if status >= 400 {
                        t.client_errors += 1;
                    }
                }
            }));
        }
        for t in tasks {
            let _ = t.await;
        }
    });
    let elapsed = started.elapsed();
    let audit = rt.block_on(async {
        let text = reqwest::get(format!("{url}/metrics")).await.unwrap().text().await.unwrap();
        AuditWrites::parse(&text)
    });
    let turns = rt.block_on(take_turns(&data, &url, &key, &reads));
    let peak = peak_mb(serve.id());
    let _ = serve.kill();
    let _ = serve.wait();

    let tally = rt.block_on(async { std::mem::take(&mut *tally.lock().await) });
    let total = tally.latencies.len();
    println!();
    println!(
        "load: {clients} clients for {secs} s against mgds serve (1 worker, engines in their own processes); \
         a long classification first, and every upload queues another, so analyses run throughout"
    );
    println!();
    println!("| requests | count | per second | p50 | p99 | max |");
    println!("|---|---|---|---|---|---|");
    let mut kinds: Vec<&str> = tally.latencies.iter().map(|(k, _)| *k).collect();
    kinds.sort_unstable();
    kinds.dedup();
    for kind in kinds.iter().copied().chain(std::iter::once("all")) {
        let mut times: Vec<Duration> =
            tally.latencies.iter().filter(|(k, _)| kind == "all" || *k == kind).map(|(_, d)| *d).collect();
        times.sort_unstable();
        let q = |p: f64| times.get(((times.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or_default();
        println!(
            "| {kind} | {} | {:.0} | {:.1} ms | {:.1} ms | {:.1} ms |",
            times.len(),
            times.len() as f64 / secs as f64,
            q(0.5).as_secs_f64() * 1e3,
            q(0.99).as_secs_f64() * 1e3,
            q(1.0).as_secs_f64() * 1e3
        );
    }
    println!();
    println!("| measure | value | target | verdict |");
    println!("|---|---|---|---|");
    let verdict = |ok: bool| if ok { "met" } else { "NOT MET" };
    println!(
        "| 5xx or failed connections | {} of {total} | 0 | {} |",
        tally.server_errors.len(),
        verdict(tally.server_errors.is_empty())
    );
    println!("| 4xx | {} | - | - |", tally.client_errors);
    println!("| service peak memory (VmHWM) | {peak} MB | < 200 MB | {} |", verdict(peak < 200));
    println!("| wall time | {:.1} s | - | - |", elapsed.as_secs_f64());
    // The audit trail's share of a write: its entries' append time (the service's histogram)
    // against the p99 of the uploads, whose confirmation appends one.
    let mut uploads: Vec<Duration> =
        tally.latencies.iter().filter(|(k, _)| k.starts_with("upload")).map(|(_, d)| *d).collect();
    uploads.sort_unstable();
    let upload_p99 = uploads.get(((uploads.len() as f64 - 1.0) * 0.99).round() as usize).copied().unwrap_or_default();
    let share = audit.p99 / upload_p99.as_secs_f64().max(1e-9) * 100.0;
    println!(
        "| audit entries appended | {} (mean {:.2} ms, p99 {:.2} ms, at most {:.2} ms) | - | - |",
        audit.count,
        audit.mean() * 1e3,
        audit.p99 * 1e3,
        audit.p99_at_most * 1e3
    );
    println!(
        "| audit append p99 against the uploads' p99 ({:.1} ms) | {share:.2}% | <= 5% | {} |",
        upload_p99.as_secs_f64() * 1e3,
        verdict(share <= 5.0)
    );
    for e in tally.server_errors.iter().take(5) {
        println!("server error: {e}");
    }
    let Turns { burst, finished_before, other_wait, burst_wait } = turns;
    println!();
    println!(
        "turns between owners: one owner queues {burst} classifications at once, then another owner uploads one; \
         with the queue in order of arrival the other owner's would wait for all {burst}"
    );
    println!();
    println!("| measure | value |");
    println!("|---|---|");
    println!("| the burst's analyses finished before the other owner's | {finished_before} of {burst} |");
    println!("| the other owner's wait, upload confirmed to classified | {:.1} s |", other_wait.as_secs_f64());
    println!("| the burst's wait, last upload confirmed to all classified | {:.1} s |", burst_wait.as_secs_f64());
    println!(
        "| other owner's wait / burst's | {:.2} (1.00 or more: in order of arrival) |",
        other_wait.as_secs_f64() / burst_wait.as_secs_f64().max(1e-9)
    );
}

/// What [`take_turns`] measured.
struct Turns {
    burst: usize,
    finished_before: usize,
    other_wait: Duration,
    burst_wait: Duration,
}

/// One owner queues a burst of classifications, then another owner uploads one sample: how
/// many of the burst finish before the other owner's, and how long each side waits.
async fn take_turns(data: &Path, url: &str, key: &str, reads: &[u8]) -> Turns {
    let burst = env_num("MGDS_LOAD_BURST", 20) as usize;
    let other = {
        let out = Command::new(MGDS)
            .args(["admin", "--data-dir"])
            .arg(data)
            .args(["user", "create", "other@lab.example.org"])
            .output()
            .expect("mgds admin");
        String::from_utf8(out.stdout).expect("key").trim().to_string()
    };
    let http = reqwest::Client::new();
    let mut mine = Vec::new();
    for i in 0..burst {
        mine.push(upload(&http, url, key, &format!("burst{i}.fastq.gz"), reads).await.expect("burst upload"));
    }
    let queued = Instant::now();
    let theirs = upload(&http, url, &other, "other.fastq.gz", reads).await.expect("other upload");
    let mut done_at: Vec<Option<Instant>> = vec![None; burst];
    let mut other_done = None;
    while other_done.is_none() || done_at.iter().any(Option::is_none) {
        if other_done.is_none() && classified(&http, url, &other, &theirs).await {
            other_done = Some(Instant::now());
        }
        for (id, at) in mine.iter().zip(done_at.iter_mut()) {
            if at.is_none() && classified(&http, url, key, id).await {
                *at = Some(Instant::now());
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let other_done = other_done.unwrap_or(queued);
    let last = done_at.iter().flatten().max().copied().unwrap_or(queued);
    Turns {
        burst,
        finished_before: done_at.iter().flatten().filter(|t| **t < other_done).count(),
        other_wait: other_done - queued,
        burst_wait: last - queued,
    }
}

/// Whether sample `id`'s primary classification has finished.
async fn classified(http: &reqwest::Client, url: &str, key: &str, id: &str) -> bool {
    let (_, sample) = get(http, &format!("{url}/api/v1/samples/{id}"), key).await;
    let sample: Value = serde_json::from_str(&sample).unwrap_or_default();
    let Some(r) = sample["primary_classification"]["$ref"].as_str() else { return false };
    let (_, a) = get(http, &format!("{url}{r}"), key).await;
    serde_json::from_str::<Value>(&a).unwrap_or_default()["complete"] == json!(true)
}

async fn get(http: &reqwest::Client, url: &str, key: &str) -> (u16, String) {
    match http.get(url).basic_auth(key, Some("")).send().await {
        Ok(r) => {
            let s = r.status().as_u16();
            (s, r.text().await.unwrap_or_default())
        }
        Err(e) => (0, e.to_string()),
    }
}

/// The three steps of an upload; the sample id, or the status and body that stopped it.
async fn upload(
    http: &reqwest::Client,
    url: &str,
    key: &str,
    name: &str,
    bytes: &[u8],
) -> Result<String, (u16, String)> {
    let fail = |e: reqwest::Error| (0u16, e.to_string());
    let r = http
        .post(format!("{url}/api/v1/samples/init_upload"))
        .basic_auth(key, Some(""))
        .json(&json!({"filename": name, "size": bytes.len()}))
        .send()
        .await
        .map_err(fail)?;
    let s = r.status().as_u16();
    let init: Value = r.json().await.map_err(fail)?;
    if s != 200 {
        return Err((s, init.to_string()));
    }
    let mut form = reqwest::multipart::Form::new();
    for (k, v) in init["additional_fields"].as_object().into_iter().flatten() {
        form = form.text(k.clone(), v.as_str().unwrap_or_default().to_string());
    }
    form = form.part("file", reqwest::multipart::Part::bytes(bytes.to_vec()).file_name(name.to_string()));
    let r = http.post(init["upload_url"].as_str().unwrap_or_default()).multipart(form).send().await.map_err(fail)?;
    if r.status().as_u16() != 201 {
        let s = r.status().as_u16();
        return Err((s, r.text().await.unwrap_or_default()));
    }
    let id = init["sample_id"].as_str().unwrap_or_default().to_string();
    let r = http
        .post(format!("{url}/api/v1/samples/confirm_upload"))
        .basic_auth(key, Some(""))
        .json(&json!({"sample_id": id}))
        .send()
        .await
        .map_err(fail)?;
    let s = r.status().as_u16();
    if s != 200 {
        return Err((s, r.text().await.unwrap_or_default()));
    }
    Ok(id)
}

/// Peak resident memory of process `pid`, in MB.
fn peak_mb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0)
        / 1024
}

/// The service's `mgds_audit_write_seconds` histogram, as `/metrics` gives it.
#[derive(Debug, Default)]
struct AuditWrites {
    count: u64,
    sum: f64,
    /// The upper bound of the bucket that holds the 99th percentile.
    p99_at_most: f64,
    /// The 99th percentile read from the buckets as Prometheus' `histogram_quantile` reads it
    /// (linear within the bucket that holds it).
    p99: f64,
}

impl AuditWrites {
    fn parse(text: &str) -> AuditWrites {
        let mut buckets: Vec<(f64, u64)> = Vec::new();
        let mut w = AuditWrites::default();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("mgds_audit_write_seconds") else { continue };
            let value = rest.rsplit(' ').next().unwrap_or_default();
            if let Some(le) = rest.strip_prefix("_bucket{le=\"").and_then(|r| r.split('"').next()) {
                let le = if le == "+Inf" { f64::INFINITY } else { le.parse().unwrap_or(f64::INFINITY) };
                buckets.push((le, value.parse().unwrap_or(0)));
            } else if rest.starts_with("_sum") {
                w.sum = value.parse().unwrap_or(0.0);
            } else if rest.starts_with("_count") {
                w.count = value.parse().unwrap_or(0);
            }
        }
        let rank = w.count as f64 * 0.99;
        let mut below = (0.0, 0u64);
        for &(le, n) in &buckets {
            if n as f64 >= rank && n > 0 {
                w.p99_at_most = le;
                let (lower, before) = below;
                let within = (rank - before as f64) / (n - before).max(1) as f64;
                w.p99 = if le.is_finite() { lower + (le - lower) * within } else { lower };
                break;
            }
            below = (le, n);
        }
        w
    }

    fn mean(&self) -> f64 {
        if self.count == 0 { 0.0 } else { self.sum / self.count as f64 }
    }
}
