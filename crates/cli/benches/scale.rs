//! The service past one machine, measured: lists over a million samples on PostgreSQL beside
//! SQLite with the same rows; analyses per minute with 1, 2 and 4 worker processes (and a worker
//! killed mid-run); concurrent uploads straight to an S3 store (Garage) with the API host's
//! memory, by form and (with Garage's admin API) by S3 multipart into buckets of their own.
//! Prints one table.
//!
//! Run: `tests/scale-bench.sh` (starts a throwaway PostgreSQL and Garage, as the tests do, and
//! runs `cargo bench -p mgds-cli --bench scale`). Sizes: `MGDS_BENCH_SAMPLES` (1,000,000),
//! `MGDS_BENCH_JOBS` (200), `MGDS_BENCH_UPLOADS` (20) of `MGDS_BENCH_UPLOAD_MB` (1,000) each;
//! `MGDS_BENCH_ONLY=lists,jobs,uploads` runs parts.

#![allow(missing_docs)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const MGDS: &str = env!("CARGO_BIN_EXE_mgds");

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn run_part(name: &str) -> bool {
    std::env::var("MGDS_BENCH_ONLY").map_or(true, |only| only.split(',').any(|p| p.trim() == name))
}

/// The backends the script started: the PostgreSQL server (`MGDS_TEST_POSTGRES`, a new
/// database for each part) and the S3 store.
struct Backends {
    s3: mgds_server::storage::S3Config,
    /// Garage's admin API, for uploads through buckets of their own.
    garage_admin: Option<mgds_server::storage::GarageAdminConfig>,
}

impl Backends {
    fn from_env() -> Backends {
        assert!(std::env::var_os("MGDS_TEST_POSTGRES").is_some(), "MGDS_TEST_POSTGRES (run tests/scale-bench.sh)");
        let s3 = mgds_server::storage::S3Config::for_tests().expect("MGDS_TEST_S3_* (run tests/scale-bench.sh)");
        let garage_admin = mgds_server::storage::S3Config::for_tests_with_garage_admin().and_then(|s| s.garage_admin);
        Backends { s3, garage_admin }
    }

    /// A new empty database on the server.
    fn database(&self, rt: &tokio::runtime::Runtime) -> String {
        rt.block_on(mgds_server::db::test_database()).expect("a database")
    }

    /// `mgds` with these backends (`database`, and the store when `store` is set).
    fn mgds(&self, data: &Path, database: Option<&str>, store: bool, args: &[&str]) -> Command {
        let mut c = Command::new(MGDS);
        c.args(args).arg("--data-dir").arg(data).env("NO_COLOR", "1").env("MGDS_LOG", "info");
        if let Some(db) = database {
            c.args(["--database", db]);
        }
        if store {
            c.args(["--store", &format!("s3://{}/{}", self.s3.bucket, self.s3.prefix.as_deref().unwrap_or_default())])
                .args([
                    "--s3-endpoint",
                    self.s3.endpoint.as_deref().unwrap_or_default(),
                    "--s3-region",
                    &self.s3.region,
                ])
                .env("AWS_ACCESS_KEY_ID", &self.s3.access_key_id)
                .env("AWS_SECRET_ACCESS_KEY", &self.s3.secret_access_key);
        }
        c
    }
}

#[path = "../tests/it/procs.rs"]
mod procs;
use procs::Proc;

fn create_user(b: &Backends, data: &Path, database: Option<&str>, email: &str) -> String {
    let out = b.mgds(data, database, false, &["admin", "user", "create", email]).output().expect("mgds admin");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("key").trim().to_string()
}

struct Table {
    rows: Vec<[String; 4]>,
}

impl Table {
    fn add(&mut self, measure: &str, sqlite_or_1: String, postgres_or_n: String, note: String) {
        self.rows.push([measure.into(), sqlite_or_1, postgres_or_n, note]);
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let b = Backends::from_env();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = tempfile::tempdir_in(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target")).expect("temp dir");
    let mut table = Table { rows: Vec::new() };
    if run_part("lists") {
        lists(&b, &rt, dir.path(), &mut table);
    }
    if run_part("jobs") {
        jobs(&b, &rt, dir.path(), &mut table);
    }
    if run_part("uploads") {
        uploads(&b, &rt, dir.path(), &mut table);
    }
    println!();
    println!("| measure | SQLite (or 1 worker) | PostgreSQL (or N workers) | note |");
    println!("|---|---|---|---|");
    for [a, b, c, d] in &table.rows {
        println!("| {a} | {b} | {c} | {d} |");
    }
}

// ---------------------------------------------------------------------------------------------
// Lists over a million samples

/// Rows made directly in the database (the API would take hours): `n` samples, each with its
/// metadata, spread over the 100 users, a tenth public, sizes and names varied.
fn fill(pool: &sqlx::AnyPool, rt: &tokio::runtime::Runtime, users: &[String], n: u64, postgres: bool) {
    let hex = |expr: &str| {
        if postgres { format!("lpad(to_hex({expr}), 16, '0')") } else { format!("printf('%016x', {expr})") }
    };
    rt.block_on(async {
        let chunk = 100_000u64;
        for start in (0..n).step_by(chunk as usize) {
            let end = (start + chunk).min(n) - 1;
            let series = if postgres {
                format!("SELECT i FROM generate_series({start}::bigint, {end}::bigint) AS g(i)")
            } else {
                format!("WITH RECURSIVE g(i) AS (SELECT {start} UNION ALL SELECT i + 1 FROM g WHERE i < {end}) SELECT i FROM g")
            };
            let owners: Vec<String> = users.iter().map(|u| format!("'{u}'")).collect();
            // The owner of sample i is user i mod 100 (CASE over the 100 ids).
            let owner = format!(
                "CASE i % {} {} END",
                owners.len(),
                owners.iter().enumerate().map(|(k, o)| format!("WHEN {k} THEN {o}")).collect::<Vec<_>>().join(" ")
            );
            let mut tx = pool.begin().await.unwrap();
            let sql = format!(
                "INSERT INTO samples (id, owner_id, visibility, filename, size, object_key, created_at, updated_at) \
                 SELECT {id}, {owner}, CASE WHEN i % 10 = 0 THEN 'public' ELSE 'private' END, \
                 'run' || (i % 997) || '_S' || (i % 96) || '.fastq.gz', 1000 + (i * 7919) % 5000000, \
                 'samples/' || {id} || '/reads.fastq.gz', \
                 '2026-01-01T00:00:00.' || {micros} || '+00:00', '2026-01-01T00:00:00.000000+00:00' FROM ({series}) AS s",
                id = hex("i"),
                micros = if postgres { "lpad((i % 1000000)::text, 6, '0')".to_string() } else { "printf('%06d', i % 1000000)".to_string() },
            );
            sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut *tx).await.unwrap();
            let sql = format!(
                "INSERT INTO metadata (id, sample_id, owner_id) SELECT {mid}, {id}, {owner} FROM ({series}) AS s",
                mid = hex(&format!("i + {}", 1u64 << 40)),
                id = hex("i"),
            );
            sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut *tx).await.unwrap();
            tx.commit().await.unwrap();
        }
        sqlx::query("ANALYZE").execute(pool).await.unwrap();
    });
}

fn lists(b: &Backends, rt: &tokio::runtime::Runtime, dir: &Path, table: &mut Table) {
    let n = env_num("MGDS_BENCH_SAMPLES", 1_000_000);
    let rounds = env_num("MGDS_BENCH_LIST_ROUNDS", 40) as usize;
    // (label, query) as a lab's screens ask them, for a user who owns a hundredth of the rows.
    let queries: [(&str, &str); 4] = [
        ("a page of 50", "per_page=50&page=3"),
        (
            "a filtered page (file name contains, size range)",
            "per_page=50&where=%7B%22filename%22%3A%7B%22%24contains%22%3A%22run42_%22%7D%2C%22size%22%3A%7B%22%24gt%22%3A100000%7D%7D",
        ),
        ("a sorted page (size, descending)", "per_page=50&sort=%7B%22size%22%3Atrue%7D"),
        ("X-Total-Count alone (a page of 1)", "per_page=1"),
    ];
    let mut results: Vec<Vec<(Duration, Duration)>> = Vec::new();
    for postgres in [false, true] {
        let data = dir.join(if postgres { "lists-pg" } else { "lists-sqlite" });
        let database = postgres.then(|| b.database(rt));
        eprintln!("lists: {} samples on {}...", n, if postgres { "PostgreSQL" } else { "SQLite" });
        // The schema, and 100 users.
        let keys: Vec<String> =
            (0..100).map(|i| create_user(b, &data, database.as_deref(), &format!("user{i}@lab.example.org"))).collect();
        let pool = rt.block_on(async {
            sqlx::any::install_default_drivers();
            match &database {
                Some(url) => sqlx::AnyPool::connect(url).await.unwrap(),
                None => {
                    sqlx::AnyPool::connect(&format!("sqlite://{}", data.join("mgds.sqlite3").display())).await.unwrap()
                }
            }
        });
        let ids: Vec<String> =
            rt.block_on(sqlx::query_scalar("SELECT id FROM users ORDER BY email").fetch_all(&pool)).unwrap();
        let started = Instant::now();
        fill(&pool, rt, &ids, n, postgres);
        eprintln!("  {} rows made in {:.0} s", n, started.elapsed().as_secs_f64());
        rt.block_on(pool.close());
        let (_serve, url) = Proc::serve(b.mgds(
            &data,
            database.as_deref(),
            false,
            &["serve", "--listen", "127.0.0.1:0", "--workers", "0", "--no-demo"],
        ));
        // user0 sorts first; every user sees their own 10,000 and the 100,000 public ones.
        let key = &keys[0];
        let client = reqwest::Client::new();
        let mut per_query = Vec::new();
        for (_, q) in &queries {
            let mut times = Vec::new();
            for round in 0..rounds + 2 {
                let t = Instant::now();
                let r = rt
                    .block_on(client.get(format!("{url}/api/v1/samples?{q}")).basic_auth(key, Some("")).send())
                    .expect("list");
                assert_eq!(r.status().as_u16(), 200);
                let total: u64 = r.headers()["x-total-count"].to_str().unwrap().parse().unwrap();
                let body = rt.block_on(r.bytes()).unwrap();
                assert!(total > 0 && !body.is_empty());
                // The first two warm the caches.
                if round >= 2 {
                    times.push(t.elapsed());
                }
            }
            times.sort();
            per_query.push((percentile(&times, 0.5), percentile(&times, 0.99)));
        }
        results.push(per_query);
    }
    for (i, (label, _)) in queries.iter().enumerate() {
        let (s, p) = (results[0][i], results[1][i]);
        table.add(
            &format!("list, {label}: p50 / p99 ({n} samples, 100 users)"),
            format!("{} / {}", ms(s.0), ms(s.1)),
            format!("{} / {}", ms(p.0), ms(p.1)),
            format!("PostgreSQL / SQLite p50: {:.2}x", p.0.as_secs_f64() / s.0.as_secs_f64()),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Analyses per minute with 1, 2 and 4 workers

fn jobs(b: &Backends, rt: &tokio::runtime::Runtime, dir: &Path, table: &mut Table) {
    let n = env_num("MGDS_BENCH_JOBS", 200) as usize;
    let reads = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo/reads.fastq.gz")).unwrap();
    let client = reqwest::Client::new();
    let mut rates = Vec::new();
    // 1, 2 and 4 workers; then 4 again with one killed halfway (its analysis runs again elsewhere
    // once its lease lapses).
    for (workers, kill) in [(1usize, false), (2, false), (4, false), (4, true)] {
        let database = b.database(rt);
        let data = dir.join(format!("jobs-{workers}-{kill}"));
        let (serve, url) =
            Proc::serve(b.mgds(&data, Some(&database), true, &["serve", "--listen", "127.0.0.1:0", "--workers", "0"]));
        let key = create_user(b, &data, Some(&database), "lab@example.org");
        let call = |method: reqwest::Method, path: &str, body: Option<Value>| -> Value {
            let mut r = client.request(method, format!("{url}{path}")).basic_auth(&key, Some(""));
            if let Some(b) = body {
                r = r.json(&b);
            }
            let r = rt.block_on(r.send()).unwrap_or_else(|e| panic!("{path}: {e}\n{}", serve.log()));
            let s = r.status().as_u16();
            let v: Value = rt.block_on(r.json()).unwrap_or(Value::Null);
            assert!(s < 300, "{path}: {s} {v}");
            v
        };
        let init = call(
            reqwest::Method::POST,
            "/api/v1/samples/init_upload",
            Some(json!({"filename": "reads.fastq.gz", "size": reads.len()})),
        );
        let mut form = reqwest::multipart::Form::new();
        for (k, v) in init["additional_fields"].as_object().unwrap() {
            form = form.text(k.clone(), v.as_str().unwrap().to_string());
        }
        form = form.part("file", reqwest::multipart::Part::bytes(reads.clone()).file_name("reads.fastq.gz"));
        let posted = rt.block_on(client.post(init["upload_url"].as_str().unwrap()).multipart(form).send()).unwrap();
        assert_eq!(posted.status().as_u16(), 201);
        let sample = init["sample_id"].as_str().unwrap().to_string();
        call(reqwest::Method::POST, "/api/v1/samples/confirm_upload", Some(json!({"sample_id": sample})));
        let jobs = call(reqwest::Method::GET, "/api/v1/jobs?per_page=100", None);
        let job = jobs.as_array().unwrap().iter().find(|j| j["analysis_type"] == json!("classification")).unwrap();
        let job = job["$uri"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
        // The workers, each on a folder of its own, ready (references fetched) before the queue fills.
        let procs: Vec<Proc> = (0..workers)
            .map(|w| {
                let d = dir.join(format!("jobs-{workers}-{kill}-worker{w}"));
                Proc::spawn(b.mgds(&d, Some(&database), true, &["worker", "--threads", "1", "--job-lease", "5"]))
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(120);
        // The sample's own classification is the first analysis: wait until it is done.
        while procs.iter().map(Proc::completed).sum::<usize>() < 1 {
            assert!(Instant::now() < deadline, "the workers did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        let started = Instant::now();
        for _ in 0..n {
            call(
                reqwest::Method::POST,
                &format!("/api/v1/jobs/{job}/run"),
                Some(json!({"sample": {"$ref": format!("/api/v1/samples/{sample}")}})),
            );
        }
        // Killed in the middle: the last run measures that every analysis is still done once.
        let mut killed = None;
        let mut procs = procs;
        let pool = rt.block_on(sqlx::AnyPool::connect(&database)).unwrap();
        loop {
            let done: i64 = rt
                .block_on(sqlx::query_scalar("SELECT COUNT(*) FROM analyses WHERE complete = 0").fetch_one(&pool))
                .unwrap();
            if kill && killed.is_none() && done < (n / 2) as i64 {
                let mut p = procs.remove(0);
                p.kill();
                killed = Some(p.completed());
            }
            if done == 0 {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(3600), "the queue did not empty");
            std::thread::sleep(Duration::from_millis(100));
        }
        let took = started.elapsed();
        let (complete, succeeded): (i64, i64) = rt
            .block_on(
                sqlx::query_as(
                    "SELECT COUNT(*), COUNT(CASE WHEN success = 1 THEN 1 END) FROM analyses WHERE complete = 1",
                )
                .fetch_one(&pool),
            )
            .unwrap();
        rt.block_on(pool.close());
        assert_eq!((complete, succeeded), ((n + 1) as i64, (n + 1) as i64), "every analysis done, and done well");
        let runs = procs.iter().map(Proc::completed).sum::<usize>() + killed.unwrap_or(0);
        let rate = n as f64 / took.as_secs_f64() * 60.0;
        if !kill {
            rates.push(rate);
        }
        eprintln!(
            "jobs: {workers} worker(s){}: {n} analyses in {:.1} s ({rate:.0}/min), {runs} runs",
            if kill { ", one killed" } else { "" },
            took.as_secs_f64()
        );
        if let Some(k) = killed {
            table.add(
                "a worker killed mid-run (4 workers)",
                format!("{} analyses", n + 1),
                format!("{} complete, {} runs", complete, runs),
                format!(
                    "the killed one had finished {k}; runs beyond the analyses: {}; {:.1} s in all",
                    runs.saturating_sub(n + 1),
                    took.as_secs_f64()
                ),
            );
        }
    }
    table.add(
        &format!("analyses per minute, {n} small classifications"),
        format!("{:.0}/min (1 worker)", rates[0]),
        format!("{:.0}/min (2), {:.0}/min (4)", rates[1], rates[2]),
        format!(
            "scaling 2/1: {:.2}x, 4/1: {:.2}x ({} cores here)",
            rates[1] / rates[0],
            rates[2] / rates[0],
            std::thread::available_parallelism().map_or(0, |n| n.get())
        ),
    );
}

// ---------------------------------------------------------------------------------------------
// Concurrent uploads straight to the store

fn uploads(b: &Backends, rt: &tokio::runtime::Runtime, dir: &Path, table: &mut Table) {
    let count = env_num("MGDS_BENCH_UPLOADS", 20) as usize;
    let mb = env_num("MGDS_BENCH_UPLOAD_MB", 1000);
    let file = dir.join(format!("upload-{mb}MB.fastq.gz"));
    write_gz(&file, mb * 1_000_000);
    let size = std::fs::metadata(&file).unwrap().len();
    let database = b.database(rt);
    let data = dir.join("uploads");
    let (serve, url) = Proc::serve(b.mgds(
        &data,
        Some(&database),
        true,
        &["serve", "--listen", "127.0.0.1:0", "--workers", "0", "--no-demo"],
    ));
    let key = create_user(b, &data, Some(&database), "lab@example.org");
    eprintln!("uploads: {count} x {mb} MB straight to the store...");
    let started = Instant::now();
    let client = reqwest::Client::new();
    let done: Vec<u64> = rt.block_on(async {
        let tasks: Vec<_> = (0..count)
            .map(|i| {
                let (client, url, key, file) = (client.clone(), url.clone(), key.clone(), file.clone());
                tokio::spawn(async move {
                    let init: Value = client
                        .post(format!("{url}/api/v1/samples/init_upload"))
                        .basic_auth(&key, Some(""))
                        .json(&json!({"filename": format!("u{i}.fastq.gz"), "size": size}))
                        .send()
                        .await
                        .unwrap()
                        .json()
                        .await
                        .unwrap();
                    let mut form = reqwest::multipart::Form::new();
                    for (k, v) in init["additional_fields"].as_object().unwrap() {
                        form = form.text(k.clone(), v.as_str().unwrap().to_string());
                    }
                    let f = tokio::fs::File::open(&file).await.unwrap();
                    let body = reqwest::Body::wrap_stream(tokio_util::io::ReaderStream::with_capacity(f, 1 << 20));
                    form = form
                        .part("file", reqwest::multipart::Part::stream_with_length(body, size).file_name("u.fastq.gz"));
                    let r = client.post(init["upload_url"].as_str().unwrap()).multipart(form).send().await.unwrap();
                    assert_eq!(r.status().as_u16(), 201, "{}", r.text().await.unwrap_or_default());
                    let id = init["sample_id"].as_str().unwrap().to_string();
                    let c = client
                        .post(format!("{url}/api/v1/samples/confirm_upload"))
                        .basic_auth(&key, Some(""))
                        .json(&json!({"sample_id": id}))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(c.status().as_u16(), 200);
                    size
                })
            })
            .collect();
        futures::future::try_join_all(tasks).await.expect("an upload task")
    });
    let took = started.elapsed();
    let total: u64 = done.iter().sum();
    let rate = total as f64 / 1e6 / took.as_secs_f64();
    table.add(
        &format!("{count} concurrent uploads of {mb} MB straight to Garage"),
        format!("{rate:.0} MB/s together"),
        format!("API host peak {:.1} MB", serve.peak() as f64 / 1e6),
        format!("{:.1} GB in {:.0} s; target: API host < 100 MB", total as f64 / 1e9, took.as_secs_f64()),
    );
    drop(serve);
    upload_buckets(b, rt, dir, table, &file, count);
}

/// The same uploads as the `onecodex` client makes them (`init_multipart_upload`, S3 multipart
/// into a bucket of the upload's own that the store checks, then the callback), with `mgds`'s
/// own S3 writer.
fn upload_buckets(
    b: &Backends,
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    table: &mut Table,
    file: &Path,
    count: usize,
) {
    let Some(admin) = &b.garage_admin else {
        eprintln!("uploads through buckets of their own: not run (needs MGDS_TEST_GARAGE_ADMIN_*)");
        return;
    };
    let size = std::fs::metadata(file).unwrap().len();
    let database = b.database(rt);
    let data = dir.join("upload-buckets");
    let mut cmd = b.mgds(
        &data,
        Some(&database),
        true,
        &["serve", "--listen", "127.0.0.1:0", "--workers", "0", "--no-demo", "--garage-admin-url", &admin.url],
    );
    cmd.env("MGDS_GARAGE_ADMIN_TOKEN", &admin.token);
    let (serve, url) = Proc::serve(cmd);
    let key = create_user(b, &data, Some(&database), "lab@example.org");
    eprintln!("uploads: {count} x {} MB through buckets of their own...", size / 1_000_000);
    let client = mgds_client::Client::new(&url, key).expect("client");
    let started = Instant::now();
    let done: Vec<u64> = rt.block_on(async {
        let tasks: Vec<_> = (0..count)
            .map(|i| {
                let (client, file) = (client.clone(), file.to_path_buf());
                tokio::spawn(async move {
                    use tokio::io::AsyncReadExt;
                    let req = mgds_api::InitMultipartUploadRequest {
                        filename: Some(format!("b{i}.fastq.gz")),
                        ..Default::default()
                    };
                    let init = client.samples().init_multipart_upload(&req).await.expect("init_multipart_upload");
                    assert!(init.s3_bucket.starts_with("mgds-upload-"), "{init:?}");
                    let mut writer = mgds_client::S3Writer::start(&client, &init).await.expect("S3 upload");
                    let mut f = tokio::fs::File::open(&file).await.unwrap();
                    loop {
                        let mut buf = vec![0u8; 1 << 20];
                        let n = f.read(&mut buf).await.unwrap();
                        if n == 0 {
                            break;
                        }
                        buf.truncate(n);
                        writer.write(buf.into()).await.expect("S3 part");
                    }
                    let sent = writer.finish().await.expect("S3 completion");
                    client.upload_callback(&init, &format!("b{i}.fastq.gz")).await.expect("callback");
                    sent
                })
            })
            .collect();
        futures::future::try_join_all(tasks).await.expect("an upload task")
    });
    let took = started.elapsed();
    let total: u64 = done.iter().sum();
    assert_eq!(total, size * count as u64);
    let rate = total as f64 / 1e6 / took.as_secs_f64();
    table.add(
        &format!("{count} concurrent S3 multipart uploads of {} MB, each to a bucket of its own", size / 1_000_000),
        format!("{rate:.0} MB/s together"),
        format!("API host peak {:.1} MB", serve.peak() as f64 / 1e6),
        format!(
            "as the onecodex client uploads; {:.1} GB in {:.0} s; target: API host < 100 MB",
            total as f64 / 1e9,
            took.as_secs_f64()
        ),
    );
}

/// A gzipped FASTQ of about `bytes` bytes (random reads: they hardly compress), made once.
fn write_gz(path: &PathBuf, bytes: u64) {
    if std::fs::metadata(path).is_ok_and(|m| m.len() >= bytes) {
        return;
    }
    let file = Counting { inner: std::io::BufWriter::new(std::fs::File::create(path).unwrap()), n: 0 };
    let mut out = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut rec = Vec::with_capacity(400);
    let mut i = 0u64;
    while out.get_ref().n < bytes {
        rec.clear();
        writeln!(rec, "@r{i}").unwrap();
        rec.extend((0..150).map(|_| b"ACGT"[(next() & 3) as usize]));
        rec.extend_from_slice(b"\n+\n");
        rec.extend((0..150).map(|_| b'!' + (next() % 40) as u8));
        rec.push(b'\n');
        out.write_all(&rec).unwrap();
        i += 1;
    }
    out.finish().unwrap().inner.flush().unwrap();
}

/// Counts what goes through it.
struct Counting<W> {
    inner: W,
    n: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let k = self.inner.write(buf)?;
        self.n += k as u64;
        Ok(k)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
