//! Webhook event throughput on a real `mgds serve`: `MGDS_BENCH_ANALYSES` (10,000) analyses
//! complete in a burst (stored by this process as `mgds worker` processes store theirs, on the
//! same data folder), each making an `analysis.completed` event for a webhook whose receiver
//! runs here on loopback. Prints how long until the receiver had acknowledged every delivery,
//! deliveries per second, and the API's latency (p50, p99) for clients listing samples and
//! classifications meanwhile, beside the same clients during the same burst without a webhook (the
//! anchor: what the deliveries add should be within noise) and at rest.
//!
//! Run: `cargo bench -p mgds-cli --bench events`. `MGDS_BENCH_ANALYSES` sets the burst,
//! `MGDS_BENCH_CLIENTS` (8) the clients, `MGDS_BENCH_QUIET_SECS` (10) the time at rest.

#![allow(missing_docs)]

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;

const MGDS: &str = env!("CARGO_BIN_EXE_mgds");

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// What the receiver saw: distinct deliveries acknowledged, and when the last new one came.
#[derive(Default)]
struct Seen {
    ids: HashSet<String>,
    tries: u64,
    last: Option<Instant>,
}

fn main() {
    let analyses = env_num("MGDS_BENCH_ANALYSES", 10_000) as usize;
    let clients = env_num("MGDS_BENCH_CLIENTS", 8) as usize;
    let quiet = Duration::from_secs(env_num("MGDS_BENCH_QUIET_SECS", 10));
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let out = Command::new(MGDS)
        .args(["admin", "--data-dir"])
        .arg(&data)
        .args(["user", "create", "head@lab.org", "--organization", "Lab", "--role", "owner"])
        .output()
        .expect("mgds admin runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let key = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let mut serve = Command::new(MGDS)
        .args(["serve", "--listen", "127.0.0.1:0", "--no-demo", "--workers", "0", "--data-dir"])
        .arg(&data)
        .args(["--webhook-allow-network", "127.0.0.0/8"])
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("mgds serve starts");
    let mut line = String::new();
    // Kept open: the service writes more lines later.
    let mut serve_out = BufReader::new(serve.stdout.take().unwrap());
    serve_out.read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("listening on ").expect("the address").to_string();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();

    let (hook_url, seen) = rt.block_on(receiver());
    let (mut ids, store) = rt.block_on(seed(&data, 2 * analyses));
    let with_hook = ids.split_off(analyses);
    let register = || {
        rt.block_on(async {
            let r = http
                .post(format!("{url}/api/v1/webhooks"))
                .basic_auth(&key, Some(""))
                .json(&json!({"post_url": hook_url, "event_type": "analysis.completed"}))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());
        })
    };

    // The clients run throughout; each latency is kept with when it was measured.
    let stop = Arc::new(AtomicBool::new(false));
    let latencies: Arc<Mutex<Vec<(Instant, Duration)>>> = Arc::default();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (http, url, key, stop, latencies) =
            (http.clone(), url.clone(), key.clone(), stop.clone(), latencies.clone());
        tasks.push(rt.spawn(async move {
            // The same requests in every phase (not the growing list of events).
            let paths = ["/api/v1/samples?per_page=20", "/api/v1/classifications?per_page=20"];
            let mut n = c;
            while !stop.load(Ordering::Relaxed) {
                let started = Instant::now();
                let r = http.get(format!("{url}{}", paths[n % 2])).basic_auth(&key, Some("")).send().await.unwrap();
                assert_eq!(r.status(), 200);
                r.bytes().await.unwrap();
                latencies.lock().unwrap().push((started, started.elapsed()));
                n += 1;
            }
        }));
    }
    let burst = |ids: Vec<String>| {
        let store = store.clone();
        rt.block_on(async move {
            let started = Instant::now();
            futures::stream::iter(ids)
                .for_each_concurrent(16, |id| {
                    let store = store.clone();
                    async move {
                        let produced = mgds_server::store::analyses::Produced {
                            results: json!({"taxa": [{"tax_id": 562, "name": "Escherichia coli", "readcount": 1}]}),
                            artifact: None,
                            report: None,
                            scored: Vec::new(),
                        };
                        mgds_server::store::analyses::store_outcome(&store, &id, None, Ok(produced)).await.unwrap();
                    }
                })
                .await;
            started.elapsed()
        })
    };
    let rest_from = Instant::now();
    std::thread::sleep(quiet);
    // The same burst without a webhook, then with one: the difference is the events' cost.
    let plain_from = Instant::now();
    let plain_stored = burst(ids);
    std::thread::sleep(Duration::from_secs(2));
    register();
    let burst_from = Instant::now();
    let stored = burst(with_hook);
    let deadline = Instant::now() + Duration::from_secs(3600);
    loop {
        let n = seen.lock().unwrap().ids.len();
        if n >= analyses {
            break;
        }
        assert!(Instant::now() < deadline, "only {n} of {analyses} deliveries in an hour");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (acked, tries) = {
        let s = seen.lock().unwrap();
        (s.last.unwrap().duration_since(burst_from), s.tries)
    };
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        rt.block_on(t).unwrap();
    }
    let events_left = rt.block_on(async {
        let r = http
            .get(format!("{url}/api/v1/events?per_page=1&where={}", "%7B%22status%22%3A%22success%22%7D"))
            .basic_auth(&key, Some(""))
            .send()
            .await
            .unwrap();
        r.headers()["x-total-count"].to_str().unwrap().to_string()
    });
    let _ = serve.kill();
    let _ = serve.wait();

    let all = latencies.lock().unwrap().clone();
    let phase = |from: Instant, to: Instant| {
        let mut v: Vec<Duration> = all.iter().filter(|(t, _)| *t >= from && *t < to).map(|(_, d)| *d).collect();
        v.sort();
        v
    };
    let rest = phase(rest_from, plain_from);
    let plain = phase(plain_from, plain_from + plain_stored);
    let burst = phase(burst_from, burst_from + acked);
    println!(
        "\nWebhook events: {analyses} analyses completed in a burst, one webhook, a receiver on loopback (SQLite)\n"
    );
    println!("| measure | value |");
    println!("|---|---|");
    println!(
        "| analyses stored (16 at once, as workers store them), no webhook | {:.1} s |",
        plain_stored.as_secs_f64()
    );
    println!("| the same with the webhook | {:.1} s |", stored.as_secs_f64());
    println!("| burst start to the last delivery acknowledged | {:.1} s |", acked.as_secs_f64());
    println!("| deliveries per second | {:.0} |", analyses as f64 / acked.as_secs_f64());
    println!("| POSTs received (tries; at least once) | {tries} |");
    println!("| events with status success | {events_left} |");
    println!("\nThe API meanwhile: {clients} clients listing samples and classifications, one after another\n");
    println!("| phase | requests | p50 | p99 |");
    println!("|---|---|---|---|");
    let row = |label: String, v: &[Duration]| {
        println!("| {label} | {} | {} | {} |", v.len(), ms(percentile(v, 0.5)), ms(percentile(v, 0.99)))
    };
    row(format!("at rest, {} s", quiet.as_secs()), &rest);
    row("the burst without a webhook (anchor)".into(), &plain);
    row("the burst with the webhook, until its last delivery".into(), &burst);
    let p99 = |v: &[Duration]| percentile(v, 0.99).as_secs_f64().max(1e-9);
    println!(
        "\np99 with the webhook's deliveries is {:.2}x the p99 of the same burst without them ({:.2}x at rest)",
        p99(&burst) / p99(&plain),
        p99(&burst) / p99(&rest)
    );
}

/// A receiver on loopback that acknowledges every POST; answers its address and what it saw.
async fn receiver() -> (String, Arc<Mutex<Seen>>) {
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let s = seen.clone();
    let app = axum::Router::new().fallback(move |headers: axum::http::HeaderMap| {
        let s = s.clone();
        async move {
            let id = headers.get("x-mgds-delivery").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
            let mut seen = s.lock().unwrap();
            seen.tries += 1;
            if seen.ids.insert(id) {
                seen.last = Some(Instant::now());
            }
            axum::http::StatusCode::NO_CONTENT
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

/// `n` samples of the user with an analysis each, not yet complete, made by SQL on the data
/// folder the service runs on; answers the analyses' ids and the data layer to store them with.
async fn seed(data: &std::path::Path, n: usize) -> (Vec<String>, mgds_server::store::Store) {
    let state = mgds_server::AppState::open(&mgds_server::Config::new(data)).await.expect("the data folder opens");
    let db = &state.db;
    let owner: String =
        sqlx::query_scalar("SELECT id FROM users WHERE email = 'head@lab.org'").fetch_one(db).await.unwrap();
    let at = "2026-01-01T00:00:00.000000+00:00";
    sqlx::query("INSERT INTO jobs (id, name, analysis_type, created_at) VALUES ('00000000000000aa', 'Bench', 'classification', $1)")
        .bind(at)
        .execute(db)
        .await
        .unwrap();
    let mut tx = db.begin().await.unwrap();
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let (sample, analysis, metadata) =
            (format!("{i:016x}"), format!("{:016x}", i + (1 << 40)), format!("{:016x}", i + (1 << 41)));
        sqlx::query(
            "INSERT INTO samples (id, owner_id, visibility, filename, size, object_key, created_at, updated_at) \
             VALUES ($1, $2, 'private', $3, 1000, $4, $5, $5)",
        )
        .bind(&sample)
        .bind(&owner)
        .bind(format!("run1_S{i}.fastq.gz"))
        .bind(format!("samples/{sample}/reads.fastq.gz"))
        .bind(at)
        .execute(&mut *tx)
        .await
        .unwrap();
        sqlx::query("INSERT INTO metadata (id, sample_id, owner_id) VALUES ($1, $2, $3)")
            .bind(&metadata)
            .bind(&sample)
            .bind(&owner)
            .execute(&mut *tx)
            .await
            .unwrap();
        sqlx::query(
            "INSERT INTO analyses (id, sample_id, job_id, analysis_type, complete, success, created_at, updated_at) \
             VALUES ($1, $2, '00000000000000aa', 'classification', 0, 0, $3, $3)",
        )
        .bind(&analysis)
        .bind(&sample)
        .bind(at)
        .execute(&mut *tx)
        .await
        .unwrap();
        ids.push(analysis);
    }
    tx.commit().await.unwrap();
    (ids, state.store.clone())
}
