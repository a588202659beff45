//! The service past one machine, measured: lists over a million samples on PostgreSQL beside
//! SQLite with the same rows, from one client and from many at once; analyses per minute with 1,
//! 2 and 4 worker processes (and a worker killed mid-run); concurrent uploads straight to an S3
//! store (Garage) with the API host's memory, by form and (with Garage's admin API) by S3
//! multipart into buckets of their own; writes per second with 1, 2 and 4 API hosts on one
//! PostgreSQL, and whether one user's slow write holds up another's; and the latency of deletes
//! and upload confirms beside thousands of abandoned uploads. Prints one table.
//!
//! Parts (`MGDS_BENCH_ONLY=lists,jobs,uploads,writes,purge` runs some of them; all by default):
//! - `lists`: `MGDS_BENCH_SAMPLES` (1,000,000) samples of 100 users made by SQL, with 10
//!   projects and 10 tags per user (every 7th sample in a project, every 3rd tagged) and a
//!   metadata platform; each list shape (pages near the start, deep and last; filters on
//!   visibility, a tag, a project, the creation time; sorts; public samples; metadata, analyses,
//!   tags, projects, documents) `MGDS_BENCH_LIST_ROUNDS` (40) times from one client, p50 and
//!   p99; then `MGDS_BENCH_CLIENTS` (50) clients at once sending `MGDS_BENCH_CONCURRENT_REQUESTS`
//!   (2,000) pages of samples, plain and filtered: p50, p99 and requests per second.
//! - `jobs`: `MGDS_BENCH_JOBS` (200) small classifications with 1, 2 and 4 workers.
//! - `uploads`: `MGDS_BENCH_UPLOADS` (20) uploads of `MGDS_BENCH_UPLOAD_MB` (1,000) each.
//! - `writes` (PostgreSQL and Garage): 1, 2 and 4 `mgds serve` hosts on one database;
//!   `MGDS_BENCH_WRITE_CLIENTS` (32) clients, each a user of its own and spread over the hosts,
//!   each making `MGDS_BENCH_WRITE_ROUNDS` (25) pre-uploads, then as many tags, metadata edits
//!   and small uploads (init, form, confirm), then as many rounds of all four: writes per second
//!   and p99 of each kind and of the four together. Then, on one host, user B's
//!   `MGDS_BENCH_SLOW_WRITES` (500) one-line pre-uploads in a row, alone and while user A
//!   pre-uploads samples with 100 tags each from 4 tasks: B's p50 and p99.
//! - `purge` (SQLite and PostgreSQL, Garage): `MGDS_BENCH_PURGE_REQUESTS` (200) upload confirms
//!   (each on a freshly uploaded sample) and as many sample deletes, p50 and p99, with no
//!   abandoned upload, with `MGDS_BENCH_STALE_UPLOADS` (10,000) abandoned uploads two days past
//!   their expiry while the janitor is held off, and while the janitor removes them.
//!
//! Run: `tests/scale-bench.sh` (starts a throwaway PostgreSQL and Garage, as the tests do, and
//! runs `cargo bench -p mgds-cli --bench scale`).

#![allow(missing_docs)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use reqwest::Method;
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

/// A connection pool to the database of `data` (SQLite) or to `database` (PostgreSQL).
fn connect(rt: &tokio::runtime::Runtime, data: &Path, database: Option<&str>) -> sqlx::AnyPool {
    rt.block_on(async {
        sqlx::any::install_default_drivers();
        match database {
            Some(url) => sqlx::AnyPool::connect(url).await.unwrap(),
            None => sqlx::AnyPool::connect(&format!("sqlite://{}", data.join("mgds.sqlite3").display())).await.unwrap(),
        }
    })
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

/// p50 and p99 of `times` (sorted here).
fn p50_p99(times: &mut [Duration]) -> (Duration, Duration) {
    times.sort();
    (percentile(times, 0.5), percentile(times, 0.99))
}

/// `p50 / p99`.
fn pair(p: (Duration, Duration)) -> String {
    format!("{} / {}", ms(p.0), ms(p.1))
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
    if run_part("writes") {
        writes(&b, &rt, dir.path(), &mut table);
    }
    if run_part("purge") {
        purge(&b, &rt, dir.path(), &mut table);
    }
    println!();
    println!("| measure | SQLite (or 1 worker, 1 host) | PostgreSQL (or N workers, N hosts) | note |");
    println!("|---|---|---|---|");
    for [a, b, c, d] in &table.rows {
        println!("| {a} | {b} | {c} | {d} |");
    }
}

// ---------------------------------------------------------------------------------------------
// Requests made by the parts below

/// One request as `key` to `url`: the answer's body (`null` when it has none), after checking
/// that it succeeded.
async fn api(client: &reqwest::Client, method: Method, url: &str, key: &str, body: Option<&Value>) -> Value {
    let mut r = client.request(method, url).basic_auth(key, Some(""));
    if let Some(b) = body {
        r = r.json(b);
    }
    let r = r.send().await.unwrap_or_else(|e| panic!("{url}: {e}"));
    let s = r.status().as_u16();
    let v: Value = r.json().await.unwrap_or(Value::Null);
    assert!(s < 300, "{url}: {s} {v}");
    v
}

/// The id at the end of a `$ref` or `$uri`.
fn last_segment(uri: &str) -> String {
    uri.rsplit('/').next().unwrap_or_default().to_string()
}

/// A small FASTQ (8 reads of 100 bases), made in memory.
fn small_fastq() -> Vec<u8> {
    (0..8).flat_map(|i| format!("@r{i}\n{}\n+\n{}\n", "ACGT".repeat(25), "I".repeat(100)).into_bytes()).collect()
}

/// The first two steps of a form upload of `reads` as a new sample (`init_upload`, then the
/// form posted to the store): the sample's id, to confirm.
async fn start_upload(client: &reqwest::Client, url: &str, key: &str, name: &str, reads: &[u8]) -> String {
    let body = json!({"filename": name, "size": reads.len()});
    let init = api(client, Method::POST, &format!("{url}/api/v1/samples/init_upload"), key, Some(&body)).await;
    let mut form = reqwest::multipart::Form::new();
    for (k, v) in init["additional_fields"].as_object().expect("additional_fields") {
        form = form.text(k.clone(), v.as_str().unwrap().to_string());
    }
    form = form.part("file", reqwest::multipart::Part::bytes(reads.to_vec()).file_name(name.to_string()));
    let posted = client.post(init["upload_url"].as_str().unwrap()).multipart(form).send().await.unwrap();
    let status = posted.status().as_u16();
    assert_eq!(status, 201, "{}", posted.text().await.unwrap_or_default());
    init["sample_id"].as_str().unwrap().to_string()
}

/// `confirm_upload` of the sample `id`.
async fn confirm_upload(client: &reqwest::Client, url: &str, key: &str, id: &str) {
    let body = json!({"sample_id": id});
    api(client, Method::POST, &format!("{url}/api/v1/samples/confirm_upload"), key, Some(&body)).await;
}

/// Percent-encodes a query parameter's value (all but the unreserved characters).
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// A SQL series `i` from `start` to `end` (both included), as a subquery's body.
fn series(start: u64, end: u64, postgres: bool) -> String {
    if postgres {
        format!("SELECT i FROM generate_series({start}::bigint, {end}::bigint) AS g(i)")
    } else {
        format!("WITH RECURSIVE g(i) AS (SELECT {start} UNION ALL SELECT i + 1 FROM g WHERE i < {end}) SELECT i FROM g")
    }
}

/// The SQL of an id (16 hex characters) made of the integer `expr`.
fn hex(expr: &str, postgres: bool) -> String {
    if postgres { format!("lpad(to_hex({expr}), 16, '0')") } else { format!("printf('%016x', {expr})") }
}

/// The SQL of a timestamp `days` days before the database's now, in the service's form.
fn days_ago(days: u32, postgres: bool) -> String {
    if postgres {
        format!(
            "(to_char((now() - interval '{days} days') AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US') || '+00:00')"
        )
    } else {
        format!("(strftime('%Y-%m-%dT%H:%M:%f', 'now', '-{days} days') || '000+00:00')")
    }
}

// ---------------------------------------------------------------------------------------------
// Lists over a million samples

// The first id of each kind of row the bench makes (16 hex characters, in disjoint ranges; the
// samples' start at 0).
/// Metadata records.
const METADATA_IDS: u64 = 1 << 40;
/// Projects.
const PROJECT_IDS: u64 = 1 << 41;
/// Tags.
const TAG_IDS: u64 = 1 << 42;
/// Abandoned uploads.
const UPLOAD_IDS: u64 = 1 << 43;

/// Projects and tags each user has.
const PER_USER: u64 = 10;

/// Rows made directly in the database (the API would take hours), spread over the users (`u`
/// of them, sample `i` owned by user `i mod u`): 10 projects and 10 tags per user; `n` samples,
/// a tenth of each user's public, sizes and names varied, every 7th in one of its owner's
/// projects and every 3rd tagged with one of its owner's tags (project or tag `j` of user `k`
/// is number `j * u + k`, `j` going round with the owner's samples); each sample's metadata,
/// its platform going round four of them. Then the planner's statistics.
/// The p99 a list must keep at a million samples from one client (issue: lists at scale), and
/// the goal under 50 clients at once. Before the lists were read in parts, a page of 50 took
/// 0.37-0.48 s p50 and 0.62 s p99 on both databases.
const TARGET_P99_SQLITE: Duration = Duration::from_millis(100);
const TARGET_P99_POSTGRES: Duration = Duration::from_millis(50);
const TARGET_P99_CONCURRENT: Duration = Duration::from_millis(200);

/// Which databases kept a target: "both", "SQLite only", "PostgreSQL only" or "neither".
fn within(sqlite: bool, postgres: bool) -> &'static str {
    match (sqlite, postgres) {
        (true, true) => "both",
        (true, false) => "SQLite only",
        (false, true) => "PostgreSQL only",
        (false, false) => "neither",
    }
}

/// The job of the analyses `fill` makes.
const BENCH_JOB: &str = "00000000000000aa";

fn fill(pool: &sqlx::AnyPool, rt: &tokio::runtime::Runtime, users: &[String], n: u64, postgres: bool) {
    let u = users.len() as u64;
    // The owner of row `expr` (CASE over the users' ids).
    let owner_of = |expr: &str| {
        let whens: Vec<String> = users.iter().enumerate().map(|(k, id)| format!("WHEN {k} THEN '{id}'")).collect();
        format!("CASE ({expr}) % {u} {} END", whens.join(" "))
    };
    let at = "'2026-01-01T00:00:00.000000+00:00'";
    rt.block_on(async {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO jobs (id, name, analysis_type, created_at) VALUES ('{BENCH_JOB}', 'Bench', 'classification', {at})"
        )))
        .execute(pool)
        .await
        .unwrap();
        let mut tx = pool.begin().await.unwrap();
        let sql = format!(
            "INSERT INTO projects (id, owner_id, organization_id, project_name, name, public, created_at) \
             SELECT {id}, {owner}, (SELECT organization_id FROM users WHERE id = {owner}), 'p' || i, \
             'Project ' || i, 0, {at} FROM ({series}) AS s",
            id = hex(&format!("{PROJECT_IDS} + i"), postgres),
            owner = owner_of("i"),
            series = series(0, PER_USER * u - 1, postgres),
        );
        sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut *tx).await.unwrap();
        let sql = format!(
            "INSERT INTO tags (id, owner_id, name, created_at) SELECT {id}, {owner}, 'tag' || (i / {u}), {at} \
             FROM ({series}) AS s",
            id = hex(&format!("{TAG_IDS} + i"), postgres),
            owner = owner_of("i"),
            series = series(0, PER_USER * u - 1, postgres),
        );
        sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut *tx).await.unwrap();
        tx.commit().await.unwrap();
        let chunk = 100_000u64;
        for start in (0..n).step_by(chunk as usize) {
            let end = (start + chunk).min(n) - 1;
            let series = series(start, end, postgres);
            // The project or tag `j` of the sample's owner, `j` going round with its samples.
            let theirs = |first: u64| hex(&format!("{first} + ((i / {u}) % {PER_USER}) * {u} + i % {u}"), postgres);
            let mut tx = pool.begin().await.unwrap();
            let sql = format!(
                "INSERT INTO samples (id, owner_id, visibility, filename, size, object_key, project_id, created_at, \
                 updated_at) SELECT {id}, {owner}, CASE WHEN (i / {u}) % 10 = 0 THEN 'public' ELSE 'private' END, \
                 'run' || (i % 997) || '_S' || (i % 96) || '.fastq.gz', 1000 + (i * 7919) % 5000000, \
                 'samples/' || {id} || '/reads.fastq.gz', CASE WHEN i % 7 = 0 THEN {project} END, \
                 '2026-01-01T00:00:00.' || {micros} || '+00:00', {at} FROM ({series}) AS s",
                id = hex("i", postgres),
                owner = owner_of("i"),
                project = theirs(PROJECT_IDS),
                micros = if postgres { "lpad((i % 1000000)::text, 6, '0')" } else { "printf('%06d', i % 1000000)" },
            );
            sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut *tx).await.unwrap();
            let sql = format!(
                "INSERT INTO metadata (id, sample_id, owner_id, platform) SELECT {mid}, {id}, {owner}, \
                 CASE i % 4 WHEN 0 THEN 'Illumina MiSeq' WHEN 1 THEN 'Oxford Nanopore MinION' WHEN 2 THEN 'PacBio' \
                 ELSE 'Ion Torrent' END FROM ({series}) AS s",
                mid = hex(&format!("i + {METADATA_IDS}"), postgres),
                id = hex("i", postgres),
                owner = owner_of("i"),
            );
            sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut *tx).await.unwrap();
            let sql = format!(
                "INSERT INTO sample_tags (sample_id, tag_id) SELECT {id}, {tag} FROM ({series}) AS s WHERE i % 3 = 0",
                id = hex("i", postgres),
                tag = theirs(TAG_IDS),
            );
            sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut *tx).await.unwrap();
            // Every other sample has an analysis: a classification, every fourth a panel.
            let sql = format!(
                "INSERT INTO analyses (id, sample_id, job_id, analysis_type, complete, success, created_at, updated_at) \
                 SELECT {aid}, {id}, '{BENCH_JOB}', CASE WHEN i % 4 = 0 THEN 'panel' ELSE 'classification' END, 1, 1, \
                 {at}, {at} FROM ({series}) AS s WHERE i % 2 = 0",
                aid = hex(&format!("i + {}", 1u64 << 43), postgres),
                id = hex("i", postgres),
            );
            sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut *tx).await.unwrap();
            tx.commit().await.unwrap();
        }
        let analyze = if postgres { "VACUUM ANALYZE" } else { "ANALYZE" };
        // Without parameters, so that PostgreSQL runs VACUUM outside a transaction.
        sqlx::raw_sql(analyze).execute(pool).await.unwrap();
    });
}

/// What one shape of list took from one client, and how many records it matched.
struct Shape {
    label: String,
    total: u64,
    times: (Duration, Duration),
}

fn lists(b: &Backends, rt: &tokio::runtime::Runtime, dir: &Path, table: &mut Table) {
    let n = env_num("MGDS_BENCH_SAMPLES", 1_000_000);
    let rounds = env_num("MGDS_BENCH_LIST_ROUNDS", 40) as usize;
    let clients = env_num("MGDS_BENCH_CLIENTS", 50) as usize;
    let requests = env_num("MGDS_BENCH_CONCURRENT_REQUESTS", 2_000) as usize;
    // user0 sorts first among the users' ids (their order by e-mail): its first project and tag.
    let project = format!("{:016x}", PROJECT_IDS);
    let tag = format!("{:016x}", TAG_IDS);
    let samples_where = |w: &str| format!("/api/v1/samples?per_page=50&where={}", enc(w));
    // The filtered pages of samples, which the concurrent clients send too.
    let filtered: Vec<(&str, String)> = vec![
        ("samples, private ones", samples_where(r#"{"visibility":"private"}"#)),
        ("samples, public or shared ones ($in)", samples_where(r#"{"visibility":{"$in":["public","shared"]}}"#)),
        ("samples with a tag of the user's", samples_where(&format!(r#"{{"tags":"{tag}"}}"#))),
        (
            "samples in a project of the user's",
            samples_where(&format!(r#"{{"project":{{"$ref":"/api/v1/projects/{project}"}}}}"#)),
        ),
        ("samples created from a time on ($gte)", samples_where(r#"{"created_at":{"$gte":"2026-01-01T00:00:00.9"}}"#)),
    ];
    let mut results: Vec<Vec<Shape>> = Vec::new();
    let mut concurrent: Vec<(Duration, Duration, f64)> = Vec::new();
    for postgres in [false, true] {
        let data = dir.join(if postgres { "lists-pg" } else { "lists-sqlite" });
        let database = postgres.then(|| b.database(rt));
        eprintln!("lists: {} samples on {}...", n, if postgres { "PostgreSQL" } else { "SQLite" });
        // The schema, and 100 users.
        let keys: Vec<String> =
            (0..100).map(|i| create_user(b, &data, database.as_deref(), &format!("user{i}@lab.example.org"))).collect();
        let pool = connect(rt, &data, database.as_deref());
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
        // user0 owns a hundredth of the samples and sees those and the others' public ones.
        let key = &keys[0];
        let client = reqwest::Client::new();
        let get = |path: &str| -> (u64, Duration) {
            let t = Instant::now();
            let r = rt
                .block_on(client.get(format!("{url}{path}")).basic_auth(key, Some("")).send())
                .unwrap_or_else(|e| panic!("{path}: {e}"));
            let status = r.status().as_u16();
            let total = r.headers().get("x-total-count").and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
            let body = rt.block_on(r.bytes()).unwrap();
            let took = t.elapsed();
            assert_eq!(status, 200, "{path}: {}", String::from_utf8_lossy(&body));
            (total.expect("X-Total-Count"), took)
        };
        let (visible, _) = get("/api/v1/samples?per_page=1");
        let last = visible.div_ceil(50).max(1);
        // (label, path and query) as a lab's screens ask them.
        let mut shapes: Vec<(&str, String)> = vec![
            ("a page of 50", "/api/v1/samples?per_page=50&page=3".into()),
            (
                "a filtered page (file name contains, size range)",
                samples_where(r#"{"filename":{"$contains":"run42_"},"size":{"$gt":100000}}"#),
            ),
            (
                "a sorted page (size, descending)",
                format!("/api/v1/samples?per_page=50&sort={}", enc(r#"{"size":true}"#)),
            ),
            (
                "a sorted page (file name, ascending)",
                format!("/api/v1/samples?per_page=50&sort={}", enc(r#"{"filename":false}"#)),
            ),
            ("X-Total-Count alone (a page of 1)", "/api/v1/samples?per_page=1".into()),
            ("a deep page (page 1,500 of 50)", "/api/v1/samples?per_page=50&page=1500".into()),
            ("the last page of 50", format!("/api/v1/samples?per_page=50&page={last}")),
        ];
        shapes.extend(filtered.iter().cloned());
        shapes.extend([
            ("public samples, page 3 of 50", "/api/v1/samples/public?per_page=50&page=3".to_string()),
            ("metadata with a platform", format!("/api/v1/metadata?where={}", enc(r#"{"platform":"Illumina MiSeq"}"#))),
            ("metadata, first page", "/api/v1/metadata".into()),
            ("analyses", "/api/v1/analyses".into()),
            ("analyses, a deep page (page 500 of 50)", "/api/v1/analyses?per_page=50&page=500".into()),
            ("classifications", "/api/v1/classifications".into()),
            ("panels, page 3 of 50", "/api/v1/panels?per_page=50&page=3".into()),
            ("tags", "/api/v1/tags".into()),
            ("projects", "/api/v1/projects".into()),
            ("documents", "/api/v1/documents".into()),
        ]);
        let mut per_shape = Vec::new();
        for (label, path) in &shapes {
            let mut times = Vec::new();
            let mut total = 0;
            for round in 0..rounds + 2 {
                let (t, took) = get(path);
                total = t;
                // The first two warm the caches.
                if round >= 2 {
                    times.push(took);
                }
            }
            per_shape.push(Shape { label: (*label).to_string(), total, times: p50_p99(&mut times) });
        }
        results.push(per_shape);
        // Many clients at once: pages of 50 and the filtered pages, in turn.
        let mut paths = vec![shapes[0].1.clone()];
        paths.extend(filtered.iter().map(|(_, p)| p.clone()));
        eprintln!("  {clients} clients, {requests} requests at once...");
        let (mut times, took) = rt.block_on(many_lists(&client, &url, key, paths, clients, requests));
        let (p50, p99) = p50_p99(&mut times);
        concurrent.push((p50, p99, requests as f64 / took.as_secs_f64()));
    }
    for (s, p) in results[0].iter().zip(&results[1]) {
        assert_eq!(s.total, p.total, "{}: the same records match on both databases", s.label);
        table.add(
            &format!("list, {}: p50 / p99 ({n} samples, 100 users)", s.label),
            pair(s.times),
            pair(p.times),
            format!(
                "{} match; PostgreSQL / SQLite p50: {:.2}x; p99 within the targets (SQLite {} ms, PostgreSQL {} ms; \
                 before, 0.62 s): {}",
                s.total,
                p.times.0.as_secs_f64() / s.times.0.as_secs_f64(),
                TARGET_P99_SQLITE.as_millis(),
                TARGET_P99_POSTGRES.as_millis(),
                within(s.times.1 <= TARGET_P99_SQLITE, p.times.1 <= TARGET_P99_POSTGRES),
            ),
        );
    }
    let [s, p] = [concurrent[0], concurrent[1]];
    table.add(
        &format!("{clients} clients at once, {requests} pages of samples (plain and filtered): p50 / p99, requests/s"),
        format!("{}, {:.0}/s", pair((s.0, s.1)), s.2),
        format!("{}, {:.0}/s", pair((p.0, p.1)), p.2),
        format!(
            "one user, one HTTP client shared by the tasks; PostgreSQL / SQLite requests/s: {:.2}x; p99 within the goal \
             ({} ms): {}",
            p.2 / s.2,
            TARGET_P99_CONCURRENT.as_millis(),
            within(s.1 <= TARGET_P99_CONCURRENT, p.1 <= TARGET_P99_CONCURRENT),
        ),
    );
}

/// `requests` GETs of `paths` (in turn) from `clients` tasks sharing `client`: each request's
/// time, and the time of all.
async fn many_lists(
    client: &reqwest::Client,
    url: &str,
    key: &str,
    paths: Vec<String>,
    clients: usize,
    requests: usize,
) -> (Vec<Duration>, Duration) {
    let next = Arc::new(AtomicUsize::new(0));
    let paths = Arc::new(paths);
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (client, url, key, next, paths) =
                (client.clone(), url.to_string(), key.to_string(), next.clone(), paths.clone());
            tokio::spawn(async move {
                let mut times = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= requests {
                        break;
                    }
                    let path = &paths[i % paths.len()];
                    let t = Instant::now();
                    let r = client.get(format!("{url}{path}")).basic_auth(&key, Some("")).send().await.expect("list");
                    assert_eq!(r.status().as_u16(), 200, "{path}");
                    r.bytes().await.expect("a page");
                    times.push(t.elapsed());
                }
                times
            })
        })
        .collect();
    let times = futures::future::try_join_all(tasks).await.expect("a client task").concat();
    (times, started.elapsed())
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

// ---------------------------------------------------------------------------------------------
// Writes with 1, 2 and 4 API hosts on one PostgreSQL

/// The writes of the mix, in the order each client makes them in a round of all four.
const WRITE_KINDS: [&str; 4] = ["pre-upload", "tag", "metadata edit", "upload (init, form, confirm)"];

fn writes(b: &Backends, rt: &tokio::runtime::Runtime, dir: &Path, table: &mut Table) {
    let clients = env_num("MGDS_BENCH_WRITE_CLIENTS", 32) as usize;
    let rounds = env_num("MGDS_BENCH_WRITE_ROUNDS", 25) as usize;
    let database = b.database(rt);
    let admin = dir.join("writes-admin");
    // The users, before any host starts: one per client, and the two of the slow-write run.
    let keys: Vec<String> =
        (0..clients).map(|i| create_user(b, &admin, Some(&database), &format!("writer{i}@lab.example.org"))).collect();
    let slow = create_user(b, &admin, Some(&database), "slow-a@lab.example.org");
    let quick = create_user(b, &admin, Some(&database), "quick-b@lab.example.org");
    let client = reqwest::Client::new();
    let reads = small_fastq();
    // For each number of hosts: each kind's writes per second and p99, then all writes'.
    let mut runs: Vec<Vec<(f64, Duration)>> = Vec::new();
    let mut beside = None;
    for hosts in [1usize, 2, 4] {
        // Each host with a folder of its own, all on the one database and store.
        let served: Vec<(Proc, String)> = (0..hosts)
            .map(|h| {
                let data = dir.join(format!("writes-{hosts}-host{h}"));
                Proc::serve(b.mgds(
                    &data,
                    Some(&database),
                    true,
                    &["serve", "--listen", "127.0.0.1:0", "--workers", "0", "--no-demo"],
                ))
            })
            .collect();
        let urls: Vec<String> = served.iter().map(|(_, url)| url.clone()).collect();
        eprintln!("writes: {clients} clients, {rounds} rounds, {hosts} host(s)...");
        let edited = rt.block_on(edited_samples(&client, &urls, &keys, hosts));
        // Each kind alone, then the four in turn.
        let mut run = Vec::new();
        for (phase, kinds) in [&[0][..], &[1], &[2], &[3], &[0, 1, 2, 3]].into_iter().enumerate() {
            let (times, took) =
                rt.block_on(write_phase(&client, &urls, &keys, &edited, (hosts, phase), kinds, rounds, &reads));
            let mut all: Vec<Duration> = times.iter().map(|(_, d)| *d).collect();
            run.push((all.len() as f64 / took.as_secs_f64(), p50_p99(&mut all).1));
        }
        runs.push(run);
        if hosts == 1 {
            beside = Some(slow_writes(rt, &client, &urls[0], &slow, &quick));
        }
    }
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    for (k, kind) in WRITE_KINDS.iter().chain(&["all four in turn"]).enumerate() {
        let [one, two, four] = [runs[0][k], runs[1][k], runs[2][k]];
        table.add(
            &format!("writes/s and p99, {kind} ({clients} clients of {clients} users, {rounds} rounds each)"),
            format!("{:.0}/s, p99 {} (1 host)", one.0, ms(one.1)),
            format!("{:.0}/s, p99 {} (2 hosts); {:.0}/s, p99 {} (4 hosts)", two.0, ms(two.1), four.0, ms(four.1)),
            format!(
                "one PostgreSQL, Garage; scaling 2/1: {:.2}x, 4/1: {:.2}x ({cores} cores here for hosts, database, \
                 store and clients)",
                two.0 / one.0,
                four.0 / one.0
            ),
        );
    }
    if let Some([measure, alone, with, note]) = beside {
        table.add(&measure, alone, with, note);
    }
}

/// Each user's sample (`keys[c]` on host `c mod hosts`) that the tags and metadata edits of a
/// run go to, made before the clock starts: its id and its metadata's. `run` tells the runs'
/// external sample ids apart.
async fn edited_samples(
    client: &reqwest::Client,
    urls: &[String],
    keys: &[String],
    run: usize,
) -> Vec<(String, String)> {
    let mut edited = Vec::new();
    for (c, key) in keys.iter().enumerate() {
        let url = &urls[c % urls.len()];
        let body = json!({"metadata": {"external_sample_id": format!("edited-{run}-{c}")}});
        let made = api(client, Method::POST, &format!("{url}/api/v1/samples/preupload"), key, Some(&body)).await;
        let id = made["sample_id"].as_str().expect("sample_id").to_string();
        let sample = api(client, Method::GET, &format!("{url}/api/v1/samples/{id}"), key, None).await;
        edited.push((id, last_segment(sample["metadata"]["$ref"].as_str().expect("the sample's metadata"))));
    }
    edited
}

/// `rounds` rounds of the writes `kinds` (indexes in [`WRITE_KINDS`]) from each of `keys`' users
/// at once, user `c` on host `c mod hosts`, its tags and metadata edits on its sample of
/// `edited`: each write's kind and time, and the time of all. `run` and `phase` tell the
/// external sample ids and tag names apart.
#[allow(clippy::too_many_arguments)]
async fn write_phase(
    client: &reqwest::Client,
    urls: &[String],
    keys: &[String],
    edited: &[(String, String)],
    (run, phase): (usize, usize),
    kinds: &[usize],
    rounds: usize,
    reads: &[u8],
) -> (Vec<(&'static str, Duration)>, Duration) {
    let started = Instant::now();
    let tasks: Vec<_> = keys
        .iter()
        .zip(edited)
        .enumerate()
        .map(|(c, (key, (sample, metadata)))| {
            let (client, url, key, reads, kinds) =
                (client.clone(), urls[c % urls.len()].clone(), key.clone(), reads.to_vec(), kinds.to_vec());
            let (sample, metadata) = (sample.clone(), metadata.clone());
            tokio::spawn(async move {
                let mut times = Vec::new();
                for r in 0..rounds {
                    for &kind in &kinds {
                        let t = Instant::now();
                        match kind {
                            0 => {
                                let body =
                                    json!({"metadata": {"external_sample_id": format!("w{run}-{phase}-{c}-{r}")}});
                                let path = format!("{url}/api/v1/samples/preupload");
                                api(&client, Method::POST, &path, &key, Some(&body)).await;
                            }
                            1 => {
                                // A new tag on the sample each time (a name of this phase's).
                                let to = format!("/api/v1/samples/{sample}");
                                let body = json!({"name": format!("p{phase}r{r}"), "sample": {"$ref": to}});
                                api(&client, Method::POST, &format!("{url}/api/v1/tags"), &key, Some(&body)).await;
                            }
                            2 => {
                                let body = json!({"description": format!("run {run}, phase {phase}, round {r}")});
                                let path = format!("{url}/api/v1/metadata/{metadata}");
                                api(&client, Method::PATCH, &path, &key, Some(&body)).await;
                            }
                            _ => {
                                let id = start_upload(&client, &url, &key, "reads.fastq", &reads).await;
                                confirm_upload(&client, &url, &key, &id).await;
                            }
                        }
                        times.push((WRITE_KINDS[kind], t.elapsed()));
                    }
                }
                times
            })
        })
        .collect();
    let times = futures::future::try_join_all(tasks).await.expect("a client task").concat();
    (times, started.elapsed())
}

/// User B's `MGDS_BENCH_SLOW_WRITES` one-line pre-uploads in a row on the host at `url`, alone
/// and then while user A pre-uploads samples with 100 tags each from 4 tasks: a row of the
/// table.
fn slow_writes(rt: &tokio::runtime::Runtime, client: &reqwest::Client, url: &str, a: &str, b: &str) -> [String; 4] {
    let n = env_num("MGDS_BENCH_SLOW_WRITES", 500) as usize;
    let preupload = format!("{url}/api/v1/samples/preupload");
    let tags: Vec<Value> = (0..100).map(|i| json!({"name": format!("t{i}")})).collect();
    let run_b = |name: &str| -> Vec<Duration> {
        rt.block_on(async {
            let mut times = Vec::with_capacity(n);
            for i in 0..n {
                let body = json!({"metadata": {"external_sample_id": format!("{name}-{i}")}});
                let t = Instant::now();
                api(client, Method::POST, &preupload, b, Some(&body)).await;
                times.push(t.elapsed());
            }
            times
        })
    };
    eprintln!("writes: user B's {n} pre-uploads, alone and beside user A's with 100 tags each...");
    let mut alone = run_b("alone");
    let stop = Arc::new(AtomicBool::new(false));
    let a_done = Arc::new(AtomicUsize::new(0));
    let slow: Vec<_> = (0..4)
        .map(|task| {
            let (client, url, key, tags, stop, done) =
                (client.clone(), preupload.clone(), a.to_string(), tags.clone(), stop.clone(), a_done.clone());
            rt.spawn(async move {
                let mut times = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let body =
                        json!({"metadata": {"external_sample_id": format!("a{task}-{}", times.len())}, "tags": tags});
                    let t = Instant::now();
                    api(&client, Method::POST, &url, &key, Some(&body)).await;
                    times.push(t.elapsed());
                    done.fetch_add(1, Ordering::Relaxed);
                }
                times
            })
        })
        .collect();
    // A's writes under way (each of its tasks past its first) before B's start.
    while a_done.load(Ordering::Relaxed) < 4 {
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut with = run_b("beside");
    stop.store(true, Ordering::Relaxed);
    let mut a_times = rt.block_on(futures::future::try_join_all(slow)).expect("user A's tasks").concat();
    let (alone_p, with_p) = (p50_p99(&mut alone), p50_p99(&mut with));
    let a_count = a_times.len();
    let a_p = p50_p99(&mut a_times);
    [
        format!(
            "user B's one-line pre-uploads ({n} in a row, 1 host): p50 / p99, alone and beside user A's slow writes"
        ),
        format!("{} (B alone)", pair(alone_p)),
        format!("{} (with A)", pair(with_p)),
        format!(
            "A: 4 tasks pre-uploading samples with 100 tags each, {a_count} of them meanwhile (p50 / p99 {}); \
             B's p50 with A / alone: {:.2}x, p99: {:.2}x (the same host and cores serve both)",
            pair(a_p),
            with_p.0.as_secs_f64() / alone_p.0.as_secs_f64(),
            with_p.1.as_secs_f64() / alone_p.1.as_secs_f64()
        ),
    ]
}

// ---------------------------------------------------------------------------------------------
// Requests beside abandoned uploads

/// The abandoned uploads while the requests are timed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Abandoned {
    /// None at all.
    Absent,
    /// Present, the janitor's turn held by the bench so that no round removes them.
    HeldOff,
    /// Present, and a janitor's round removing them (it took its turn just before).
    Sweeping,
}

/// The stale uploads the bench made that are still there.
const LEFT: &str = "SELECT COUNT(*) FROM uploads WHERE filename = 'abandoned.fastq'";

fn purge(b: &Backends, rt: &tokio::runtime::Runtime, dir: &Path, table: &mut Table) {
    let stale = env_num("MGDS_BENCH_STALE_UPLOADS", 10_000);
    let n = env_num("MGDS_BENCH_PURGE_REQUESTS", 200) as usize;
    let reads = small_fastq();
    let client = reqwest::Client::new();
    let cases = [Abandoned::Absent, Abandoned::HeldOff, Abandoned::Sweeping];
    // For each case, on SQLite then PostgreSQL: the confirms' and the deletes' p50 and p99, and
    // the stale uploads left when the timing began and when it ended.
    let mut results: Vec<Vec<[(Duration, Duration); 2]>> = vec![Vec::new(); cases.len()];
    let mut left: Vec<Vec<(i64, i64)>> = vec![Vec::new(); cases.len()];
    for postgres in [false, true] {
        for (c, case) in cases.into_iter().enumerate() {
            let data = dir.join(format!("purge-{}-{c}", if postgres { "pg" } else { "sqlite" }));
            let database = postgres.then(|| b.database(rt));
            eprintln!("purge: case {c} on {}...", if postgres { "PostgreSQL" } else { "SQLite" });
            let key = create_user(b, &data, database.as_deref(), "lab@example.org");
            let pool = connect(rt, &data, database.as_deref());
            rt.block_on(async {
                // The janitor's turn, taken by the bench: no round runs until it is given back.
                sqlx::query(
                    "INSERT INTO leases (name, holder, until) \
                     VALUES ('janitor', 'bench', '2999-01-01T00:00:00.000000+00:00') \
                     ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until",
                )
                .execute(&pool)
                .await
                .unwrap();
                if case != Abandoned::Absent && stale > 0 {
                    let owner: String = sqlx::query_scalar("SELECT id FROM users").fetch_one(&pool).await.unwrap();
                    let id = hex(&format!("{UPLOAD_IDS} + i"), postgres);
                    let sql = format!(
                        "INSERT INTO uploads (id, kind, owner_id, filename, size, object_key, request, created_at, \
                         expires_at) SELECT {id}, 'sample', '{owner}', 'abandoned.fastq', 1000, \
                         'samples/' || {id} || '/abandoned.fastq', '{{}}', {created}, {expired} FROM ({series}) AS s",
                        created = days_ago(3, postgres),
                        expired = days_ago(2, postgres),
                        series = series(0, stale - 1, postgres),
                    );
                    sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&pool).await.unwrap();
                }
            });
            let (serve, url) = Proc::serve(b.mgds(
                &data,
                database.as_deref(),
                true,
                &["serve", "--listen", "127.0.0.1:0", "--workers", "0", "--no-demo"],
            ));
            if case == Abandoned::Sweeping {
                // The turn given back: the janitor's next look (within a minute) takes it and
                // removes the abandoned uploads; the timing starts as soon as it has it.
                rt.block_on(
                    sqlx::query("UPDATE leases SET until = '2000-01-01T00:00:00.000000+00:00' WHERE name = 'janitor'")
                        .execute(&pool),
                )
                .unwrap();
                let deadline = Instant::now() + Duration::from_secs(180);
                loop {
                    let holder: String = rt
                        .block_on(
                            sqlx::query_scalar("SELECT holder FROM leases WHERE name = 'janitor'").fetch_one(&pool),
                        )
                        .unwrap();
                    if holder != "bench" {
                        break;
                    }
                    assert!(Instant::now() < deadline, "the janitor did not take its turn\n{}", serve.log());
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            let before: i64 = rt.block_on(sqlx::query_scalar(LEFT).fetch_one(&pool)).unwrap();
            let (mut confirms, mut deletes) = rt.block_on(async {
                let (mut confirms, mut ids) = (Vec::new(), Vec::new());
                for i in 0..n {
                    let id = start_upload(&client, &url, &key, &format!("p{i}.fastq"), &reads).await;
                    let t = Instant::now();
                    confirm_upload(&client, &url, &key, &id).await;
                    confirms.push(t.elapsed());
                    ids.push(id);
                }
                let mut deletes = Vec::new();
                for id in &ids {
                    let t = Instant::now();
                    api(&client, Method::DELETE, &format!("{url}/api/v1/samples/{id}"), &key, None).await;
                    deletes.push(t.elapsed());
                }
                (confirms, deletes)
            });
            let after: i64 = rt.block_on(sqlx::query_scalar(LEFT).fetch_one(&pool)).unwrap();
            drop(serve);
            rt.block_on(pool.close());
            results[c].push([p50_p99(&mut confirms), p50_p99(&mut deletes)]);
            left[c].push((before, after));
        }
    }
    for (k, kind) in ["upload confirm", "sample delete"].into_iter().enumerate() {
        for (c, case) in cases.into_iter().enumerate() {
            let (s, p) = (results[c][0][k], results[c][1][k]);
            let (base_s, base_p) = (results[0][0][k], results[0][1][k]);
            let (label, what) = match case {
                Abandoned::Absent => ("with no abandoned upload".to_string(), "the baseline".to_string()),
                Abandoned::HeldOff => (
                    format!("beside {stale} abandoned uploads"),
                    format!(
                        "two days past their expiry, no janitor round meanwhile (still there after: SQLite {}, \
                         PostgreSQL {})",
                        left[c][0].1, left[c][1].1
                    ),
                ),
                Abandoned::Sweeping => (
                    format!("while the janitor removes {stale} abandoned uploads"),
                    format!(
                        "the janitor took its turn just before; abandoned uploads left when the timing began \
                         and ended: SQLite {} and {}, PostgreSQL {} and {}",
                        left[c][0].0, left[c][0].1, left[c][1].0, left[c][1].1
                    ),
                ),
            };
            table.add(
                &format!("{kind} {label}: p50 / p99 ({n} in a row, each on a freshly uploaded sample)"),
                pair(s),
                pair(p),
                format!(
                    "{what}; p99 / the baseline's: SQLite {:.2}x, PostgreSQL {:.2}x",
                    s.1.as_secs_f64() / base_s.1.as_secs_f64(),
                    p.1.as_secs_f64() / base_p.1.as_secs_f64()
                ),
            );
        }
    }
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
