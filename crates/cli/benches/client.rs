//! Client benchmark: one run on generated data, printing a table of our figures beside their
//! anchors measured in the same run.
//!
//! - upload of a FASTQ.gz to a real `mgds serve` (no analyses, so that only the uploads run):
//!   the upload pipeline alone (`mgds_upload`, a process that does nothing else) against
//!   `curl -F` posting the same file to the same kind of `upload_url`; `mgds upload`, which
//!   checks every record beside the transfer, against the slower of `curl -F` and decompressing
//!   the file once; the real `onecodex upload` (PyPI, through the service's S3-compatible
//!   endpoint) against `mgds upload`; the peak memory of the clients and of the service during
//!   each (VmHWM, reset between runs);
//! - read-level parsing: `ReadLevelReader::for_each_row` (the counting path: rows parsed where
//!   they lie in the decompressed buffer) over a gzipped TSV against `zcat FILE > /dev/null`;
//! - subset reads: `mgds subset-reads` against the Python `onecodex` package's `subset_reads`
//!   (the pinned Python environment of the onecodex tests) and against plain decompression of the same FASTQ.gz.
//!
//! - paired subset: `mgds subset-reads R1 R2` on two FASTQ.gz files and a read-level TSV (a row
//!   per mate) against decompressing both files one after the other.
//!
//! Run: `cargo bench -p mgds-cli --bench client` (`MGDS_BENCH_ONLY=subset` for the subset rows
//! alone). Sizes: `MGDS_BENCH_UPLOAD_MB` (default 2000,
//! compressed),
//! `MGDS_BENCH_READS` (default 2,000,000 reads for subset), `MGDS_BENCH_ROWS` (default
//! 10,000,000 read-level rows). Data goes to `MGDS_BENCH_DIR` (default `target/bench-data`) and
//! is reused across runs.

#![allow(missing_docs)]

use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use flate2::Compression;
use flate2::write::GzEncoder;

const MGDS: &str = env!("CARGO_BIN_EXE_mgds");

#[path = "../tests/it/python_env.rs"]
mod python_env;

/// The `onecodex` version pinned in `tests/onecodex/requirements.txt`.
fn onecodex_version() -> String {
    let requirements =
        std::fs::read_to_string(python_env::python_tests().join("requirements.txt")).expect("requirements");
    requirements
        .lines()
        .find_map(|l| l.strip_prefix("onecodex=="))
        .expect("onecodex pinned in tests/onecodex/requirements.txt")
        .trim()
        .to_string()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // The upload pipeline measured on its own: this same binary, re-executed, does only that.
    if args.get(1).map(String::as_str) == Some("child-upload") {
        child_upload(&args[2], &args[3], Path::new(&args[4]));
        return;
    }
    let dir = std::env::var_os("MGDS_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-data"));
    std::fs::create_dir_all(&dir).expect("bench data folder");
    let upload_mb = env_num("MGDS_BENCH_UPLOAD_MB", 2000);
    let reads = env_num("MGDS_BENCH_READS", 2_000_000);
    let rows = env_num("MGDS_BENCH_ROWS", 10_000_000);

    // `MGDS_BENCH_ONLY=subset` (or `upload`, `readlevel`; comma-separated) runs only those parts.
    let only = std::env::var("MGDS_BENCH_ONLY").unwrap_or_default();
    let run = |part: &str| only.is_empty() || only.split(',').any(|p| p.trim() == part);
    let mut table = Table::default();
    if run("upload") {
        upload_bench(&dir, upload_mb, &mut table);
    }
    if run("readlevel") {
        readlevel_bench(&dir, rows, &mut table);
    }
    if run("subset") {
        subset_bench(&dir, reads, &mut table);
        paired_subset_bench(&dir, reads / 2, &mut table);
    }
    table.print();
}

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.replace('_', "").parse().ok()).unwrap_or(default)
}

/// Rows of the final table: what, ours, anchor, ratio, target, verdict.
#[derive(Default)]
struct Table {
    rows: Vec<[String; 6]>,
}

impl Table {
    fn add(&mut self, what: &str, ours: String, anchor: String, ratio: String, target: &str, ok: Option<bool>) {
        let verdict = match ok {
            Some(true) => "met",
            Some(false) => "NOT MET",
            None => "-",
        };
        self.rows.push([what.into(), ours, anchor, ratio, target.into(), verdict.into()]);
    }

    fn print(&self) {
        let head = ["measure", "mgds", "anchor", "ratio", "target", "verdict"];
        let mut w = head.map(str::len);
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let line = |cells: &[&str]| {
            let parts: Vec<String> =
                cells.iter().enumerate().map(|(i, c)| format!("{c:<width$}", width = w[i])).collect();
            println!("| {} |", parts.join(" | "));
        };
        println!();
        line(&head);
        let dashes: Vec<String> = w.iter().map(|n| "-".repeat(*n)).collect();
        println!("|-{}-|", dashes.join("-|-"));
        for r in &self.rows {
            line(&r.iter().map(String::as_str).collect::<Vec<_>>());
        }
    }
}

/// A small, fast, deterministic generator for bench data (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Writes one 150 bp FASTQ record named `r{i}` into `out`.
fn fastq_record(out: &mut Vec<u8>, rng: &mut Rng, i: u64) {
    const BASES: &[u8; 4] = b"ACGT";
    writeln!(out, "@r{i} sample=bench").ok();
    let mut x = rng.next();
    for k in 0..150 {
        if k % 32 == 0 {
            x = rng.next();
        }
        out.push(BASES[(x & 3) as usize]);
        x >>= 2;
    }
    out.extend_from_slice(b"\n+\n");
    for k in 0..150u64 {
        out.push(b'5' + ((i + k) % 10) as u8);
    }
    out.push(b'\n');
}

/// Wall time of `f`, best of `n` runs.
fn best_of<T>(n: usize, f: impl FnMut() -> T) -> (Duration, T) {
    best_of_after(n, || {}, f)
}

/// Wall time of `f`, best of `n` runs, each after an untimed `setup`.
fn best_of_after<T>(n: usize, mut setup: impl FnMut(), mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best: Option<(Duration, T)> = None;
    for _ in 0..n {
        setup();
        let t = Instant::now();
        let v = f();
        let d = t.elapsed();
        if best.as_ref().is_none_or(|(b, _)| d < *b) {
            best = Some((d, v));
        }
    }
    best.expect("at least one run")
}

fn rate(units: f64, d: Duration) -> f64 {
    units / d.as_secs_f64()
}

// ---------------------------------------------------------------------------------------------
// Upload

/// A running `mgds serve` on a fresh data folder, stopped when dropped.
struct Serve {
    child: Child,
    url: String,
    s3: String,
    key: String,
    _data: tempfile::TempDir,
}

impl Serve {
    fn start(near: &Path) -> Serve {
        let data = tempfile::tempdir_in(near).expect("data folder");
        let mut child = Command::new(MGDS)
            .args(["serve", "--listen", "127.0.0.1:0", "--workers", "0", "--no-demo", "--data-dir"])
            .arg(data.path())
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("mgds serve starts");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        out.read_line(&mut line).expect("first line");
        let url = line.trim().strip_prefix("listening on ").expect("listening on URL").to_string();
        line.clear();
        out.read_line(&mut line).expect("second line");
        let s3 = line
            .strip_prefix("s3 endpoint: ")
            .and_then(|l| l.split_whitespace().next())
            .expect("s3 endpoint: URL")
            .to_string();
        let out = Command::new(MGDS)
            .args(["admin", "--data-dir"])
            .arg(data.path())
            .args(["user", "create", "bench@lab.example.org"])
            .output()
            .expect("mgds admin");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let key = String::from_utf8(out.stdout).expect("key").trim().to_string();
        Serve { child, url, s3, key, _data: data }
    }

    /// Starts a new peak-memory measurement of the service (writing 5 to `clear_refs` resets
    /// VmHWM to the current resident size).
    fn reset_peak(&self) {
        std::fs::write(format!("/proc/{}/clear_refs", self.child.id()), "5").expect("clear_refs");
    }

    fn peak(&self) -> u64 {
        vm_hwm(self.child.id()).expect("service running")
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime")
}

fn client(url: &str, key: &str) -> mgds_client::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    mgds_client::Client::new(url, key.to_string()).expect("client")
}

fn child_upload(url: &str, key: &str, file: &Path) {
    let c = client(url, key);
    let source = mgds_upload::Source::Single(file.to_path_buf());
    runtime().block_on(mgds_upload::Upload::new(&c, source).send()).expect("upload");
}

/// Writes what earlier runs left in the page cache to disk before a timed upload, so that every
/// upload starts with the disk idle: the service syncs each upload before it answers, and a sync
/// that also had to write the previous run's files would be charged to this one.
fn settle_disk() {
    let _ = Command::new("sync").status();
}

/// Peak resident memory (VmHWM) of a running process, in bytes; `None` once it has exited.
fn vm_hwm(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

/// Runs `cmd` to the end, sampling its peak memory; returns the wall time and the peak.
fn run_measured(cmd: &mut Command) -> (Duration, u64) {
    let t = Instant::now();
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("spawn");
    let mut stderr = child.stderr.take().expect("stderr");
    let errors = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let mut peak = 0;
    loop {
        // VmHWM only grows, so the last reading before exit is the peak (to within 5 ms).
        if let Some(m) = vm_hwm(child.id()) {
            peak = peak.max(m);
        }
        if let Some(status) = child.try_wait().expect("wait") {
            let errors = errors.join().unwrap_or_default();
            assert!(status.success(), "{cmd:?} failed: {status}\n{errors}");
            return (t.elapsed(), peak);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Counts what goes through it: the compressed size of the file being written.
struct Counting<W> {
    inner: W,
    written: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// A FASTQ.gz of at least `bytes` compressed bytes (made once, then reused).
fn make_fastq_gz(path: &Path, bytes: u64) {
    if std::fs::metadata(path).is_ok_and(|m| m.len() >= bytes) {
        return;
    }
    eprintln!("writing {} ({} MB compressed, once)...", path.display(), bytes / 1_000_000);
    let partial = path.with_extension("partial");
    let file = BufWriter::with_capacity(1 << 20, std::fs::File::create(&partial).expect("create"));
    let mut gz = GzEncoder::new(Counting { inner: file, written: 0 }, Compression::fast());
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut buf = Vec::with_capacity(1 << 16);
    let mut i = 0;
    while gz.get_ref().written < bytes {
        buf.clear();
        for _ in 0..256 {
            fastq_record(&mut buf, &mut rng, i);
            i += 1;
        }
        gz.write_all(&buf).expect("write");
    }
    gz.finish().expect("finish").inner.flush().expect("flush");
    std::fs::rename(&partial, path).expect("rename");
}

/// Deletes every sample, so that each upload starts on an empty service and the disk holds one
/// copy at a time.
fn delete_all(rt: &tokio::runtime::Runtime, c: &mgds_client::Client) {
    rt.block_on(async {
        for s in c.samples().list().all().await.expect("list") {
            c.samples().delete(s.uri.as_str()).await.expect("delete");
        }
    });
}

#[derive(Default)]
struct Best {
    time: Option<Duration>,
    client_peak: u64,
    service_peak: u64,
}

impl Best {
    fn add(&mut self, d: Duration, client_peak: u64, service_peak: u64) {
        self.time = Some(self.time.map_or(d, |b| b.min(d)));
        self.client_peak = self.client_peak.max(client_peak);
        self.service_peak = self.service_peak.max(service_peak);
    }
}

fn upload_bench(dir: &Path, mb: u64, table: &mut Table) {
    let file = dir.join(format!("upload-{mb}MB.fastq.gz"));
    make_fastq_gz(&file, mb * 1_000_000);
    let size = std::fs::metadata(&file).expect("size").len();
    let serve = Serve::start(dir);
    let c = client(&serve.url, &serve.key);
    let rt = runtime();
    let have_curl = Command::new("curl").arg("--version").output().is_ok_and(|o| o.status.success());
    let onecodex = python_env::python().with_file_name("onecodex");
    let home = tempfile::tempdir_in(dir).expect("home for onecodex");

    eprintln!(
        "upload: {} MB FASTQ.gz; curl -F, the pipeline alone, mgds upload, onecodex upload; 3 runs each...",
        size / 1_000_000
    );
    let (mut curl, mut pipeline, mut ours, mut ocx) =
        (Best::default(), Best::default(), Best::default(), Best::default());
    for _ in 0..3 {
        if have_curl {
            // The same service and the same kind of signed form: init, POST with curl, cancel.
            let init = rt
                .block_on(c.samples().init_upload(&mgds_api::InitUploadRequest {
                    filename: "curl.fastq.gz".into(),
                    size,
                    ..Default::default()
                }))
                .expect("init_upload");
            let mut cmd = Command::new("curl");
            cmd.args(["-sS", "--fail", "-o", "/dev/null"]);
            for (k, v) in &init.additional_fields {
                cmd.arg("-F").arg(format!("{k}={}", v.as_str().unwrap_or_default()));
            }
            cmd.arg("-F").arg(format!("file=@{}", file.display())).arg(&init.upload_url);
            settle_disk();
            serve.reset_peak();
            let (d, p) = run_measured(&mut cmd);
            curl.add(d, p, serve.peak());
            let sample = init.sample_id.expect("sample id");
            rt.block_on(c.samples().cancel_upload(&sample)).expect("cancel");
        }
        // The upload pipeline on its own (no record check): this binary, re-executed.
        settle_disk();
        serve.reset_peak();
        let exe = std::env::current_exe().expect("own path");
        let (d, p) = run_measured(Command::new(exe).arg("child-upload").arg(&serve.url).arg(&serve.key).arg(&file));
        pipeline.add(d, p, serve.peak());
        delete_all(&rt, &c);

        // The command as a scientist runs it: every record checked beside the transfer.
        settle_disk();
        serve.reset_peak();
        let (d, p) = run_measured(
            Command::new(MGDS)
                .arg("upload")
                .arg(&file)
                .env("MGDS_BASE_URL", &serve.url)
                .env("MGDS_API_KEY", &serve.key)
                .env("NO_COLOR", "1"),
        );
        ours.add(d, p, serve.peak());
        delete_all(&rt, &c);

        // The real client as a lab runs it: nothing changed but the addresses.
        settle_disk();
        serve.reset_peak();
        let (d, p) = run_measured(
            Command::new(&onecodex)
                .arg("upload")
                .arg(&file)
                .env("HOME", home.path())
                .env("ONE_CODEX_API_BASE", &serve.url)
                .env("ONE_CODEX_API_KEY", &serve.key)
                .env("ONE_CODEX_NO_TELEMETRY", "1")
                .env("AWS_ENDPOINT_URL_S3", &serve.s3)
                .env("AWS_EC2_METADATA_DISABLED", "true"),
        );
        ocx.add(d, p, serve.peak());
        delete_all(&rt, &c);
    }
    // Reading every record cannot be faster than decompressing the file once.
    let (floor, _) = best_of(3, || decompress_only(&file));
    let mbps = |d: Duration| rate(size as f64 / 1e6, d);
    let mb = |b: u64| b as f64 / 1e6;
    let pipeline_rate = mbps(pipeline.time.expect("ran"));
    let ours_rate = mbps(ours.time.expect("ran"));
    let curl_rate = curl.time.map(mbps);
    let anchor =
        |r: Option<f64>, what: &str| r.map_or_else(|| "curl not installed".into(), |r| format!("{r:.0} ({what})"));
    table.add(
        "upload pipeline alone (MB/s)",
        format!("{pipeline_rate:.0}"),
        anchor(curl_rate, "curl -F"),
        curl_rate.map_or("-".into(), |c| format!("{:.2}x", pipeline_rate / c)),
        ">= 0.90x curl",
        curl_rate.map(|c| pipeline_rate >= 0.9 * c),
    );
    // The check runs beside the transfer: the command is as fast as the slower of the two.
    let slower = curl.time.map_or(floor, |c| c.max(floor));
    table.add(
        "mgds upload, every record checked (MB/s)",
        format!("{ours_rate:.0}"),
        format!("{:.0} (slower of curl -F and decompression, {:.0})", mbps(slower), mbps(floor)),
        format!("{:.2}x", ours_rate / mbps(slower)),
        ">= 0.90x the slower",
        Some(ours_rate >= 0.9 * mbps(slower)),
    );
    let ocx_rate = mbps(ocx.time.expect("ran"));
    table.add(
        &format!("onecodex {} upload through the S3 endpoint (MB/s)", onecodex_version()),
        format!("{ocx_rate:.0}"),
        format!("{ours_rate:.0} (mgds upload)"),
        format!("{:.2}x", ocx_rate / ours_rate),
        ">= 0.80x mgds upload",
        Some(ocx_rate >= 0.8 * ours_rate),
    );
    let file_mb = size / 1_000_000;
    for (what, best) in [("upload pipeline", &pipeline), ("mgds upload", &ours)] {
        table.add(
            &format!("{what} peak memory, {file_mb} MB file"),
            format!("{:.1} MB", mb(best.client_peak)),
            "-".into(),
            "-".into(),
            "< 64 MB",
            Some(mb(best.client_peak) < 64.0),
        );
    }
    for (what, best) in [("mgds upload", &ours), ("onecodex upload (S3)", &ocx)] {
        table.add(
            &format!("service peak memory during {what}"),
            format!("{:.1} MB", mb(best.service_peak)),
            if have_curl { format!("{:.1} MB (during curl -F)", mb(curl.service_peak)) } else { "-".into() },
            "-".into(),
            "< 100 MB",
            Some(mb(best.service_peak) < 100.0),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Read-level parsing

fn make_readlevel(path: &Path, rows: u64) {
    if path.exists() {
        return;
    }
    eprintln!("writing {} ({rows} rows)...", path.display());
    let tmp = path.with_extension("tmp");
    let mut gz = GzEncoder::new(
        BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp).expect("create")),
        Compression::default(),
    );
    gz.write_all(b"Tax ID\tN Hits\tSeq Len\tPassed Filter\n").expect("write");
    let taxa = [0u64, 562, 561, 1280, 1279, 573, 28901, 1423, 287, 1351];
    let mut rng = Rng(42);
    let mut buf = Vec::with_capacity(1 << 16);
    for i in 0..rows {
        let x = rng.next();
        let tax = taxa[(x % taxa.len() as u64) as usize];
        let hits = if tax == 0 { 0 } else { (x >> 8) % 120 };
        let passed = if tax == 0 || hits > 3 { 'T' } else { 'F' };
        writeln!(buf, "{tax}\t{hits}\t{}\t{passed}", 100 + (x >> 20) % 51).ok();
        if buf.len() > 60_000 || i + 1 == rows {
            gz.write_all(&buf).expect("write");
            buf.clear();
        }
    }
    gz.finish().expect("finish").flush().expect("flush");
    std::fs::rename(&tmp, path).expect("rename");
}

fn zcat(path: &Path) -> Duration {
    let (d, _) = best_of(3, || {
        let st =
            Command::new("sh").arg("-c").arg("zcat \"$1\" > /dev/null").arg("zcat").arg(path).status().expect("zcat");
        assert!(st.success());
    });
    d
}

fn readlevel_bench(dir: &Path, rows: u64, table: &mut Table) {
    let path = dir.join(format!("readlevel-{rows}.tsv.gz"));
    make_readlevel(&path, rows);
    eprintln!("read-level parsing: {rows} rows...");
    let anchor = zcat(&path);
    let (ours, n) = best_of(3, || {
        let mut r = mgds_formats::ReadLevelReader::open(&path).expect("open");
        let mut classified = 0u64;
        r.for_each_row(|row| {
            classified += u64::from(row.tax_id() != 0 && row.passed_filter().unwrap_or(true));
            Ok(())
        })
        .expect("rows");
        (r.row_count(), classified)
    });
    assert_eq!(n.0, rows, "every row parsed");
    let speedup = anchor.as_secs_f64() / ours.as_secs_f64();
    table.add(
        &format!("read-level parse, {}M rows (rows/s)", rows / 1_000_000),
        format!("{:.1}M/s ({:.2} s)", rate(rows as f64, ours) / 1e6, ours.as_secs_f64()),
        format!("{:.1}M/s ({:.2} s, zcat)", rate(rows as f64, anchor) / 1e6, anchor.as_secs_f64()),
        format!("{speedup:.2}x faster"),
        ">= 2x faster than zcat",
        Some(speedup >= 2.0),
    );
}

// ---------------------------------------------------------------------------------------------
// Subset reads

/// The subset inputs: `reads.fastq.gz`, its read-level TSV and a results table with a small
/// tree, so `--with-children` has something to expand.
fn make_subset_inputs(dir: &Path, reads: u64) -> (PathBuf, PathBuf, PathBuf) {
    let sub = dir.join(format!("subset-{reads}"));
    let fq = sub.join("reads.fastq.gz");
    let tsv = sub.join("readlevel.tsv.gz");
    let results = sub.join("results.json");
    if results.exists() {
        return (fq, tsv, results);
    }
    std::fs::create_dir_all(&sub).expect("folder");
    eprintln!("writing subset inputs ({reads} reads)...");
    let mut fq_gz = GzEncoder::new(BufWriter::new(std::fs::File::create(&fq).expect("fq")), Compression::default());
    let mut tsv_gz = GzEncoder::new(BufWriter::new(std::fs::File::create(&tsv).expect("tsv")), Compression::default());
    tsv_gz.write_all(b"Tax ID\tN Hits\tSeq Len\tPassed Filter\n").expect("write");
    // 562 E. coli (strain 83333 below it), 1280 S. aureus, 0 unclassified.
    let taxa = [562u64, 83333, 1280, 0, 1280, 562];
    let mut rng = Rng(7);
    let (mut fb, mut tb) = (Vec::with_capacity(1 << 16), Vec::with_capacity(1 << 12));
    for i in 0..reads {
        fastq_record(&mut fb, &mut rng, i);
        let x = rng.next();
        let tax = taxa[(x % taxa.len() as u64) as usize];
        let passed = if tax != 0 && (x >> 16).is_multiple_of(10) { 'F' } else { 'T' };
        writeln!(tb, "{tax}\t{}\t150\t{passed}", (x >> 24) % 100).ok();
        if fb.len() > 60_000 {
            fq_gz.write_all(&fb).expect("write");
            tsv_gz.write_all(&tb).expect("write");
            fb.clear();
            tb.clear();
        }
    }
    fq_gz.write_all(&fb).expect("write");
    tsv_gz.write_all(&tb).expect("write");
    fq_gz.finish().expect("fq").flush().expect("flush");
    tsv_gz.finish().expect("tsv").flush().expect("flush");
    let table = serde_json::json!({
        "n_reads": reads,
        "host_tax_ids": [],
        "table": [
            {"tax_id": "1", "name": "root", "rank": "no rank", "parent_tax_id": null, "readcount": 0, "readcount_w_children": 0, "abundance": null},
            {"tax_id": "562", "name": "Escherichia coli", "rank": "species", "parent_tax_id": "1", "readcount": 0, "readcount_w_children": 0, "abundance": null},
            {"tax_id": "83333", "name": "Escherichia coli K-12", "rank": "strain", "parent_tax_id": "562", "readcount": 0, "readcount_w_children": 0, "abundance": null},
            {"tax_id": "1280", "name": "Staphylococcus aureus", "rank": "species", "parent_tax_id": "1", "readcount": 0, "readcount_w_children": 0, "abundance": null}
        ]
    });
    std::fs::write(&results, serde_json::to_vec(&table).expect("json")).expect("results");
    (fq, tsv, results)
}

/// The Python anchor: onecodex's `subset_reads` command body, called on local files (the
/// classification object it asks the API for is replaced by one that reads `results.json`, and
/// the read-level file is already where the command looks for its download).
const PY_DRIVER: &str = r#"
import inspect, json, os, sys, time
from onecodex.scripts import subset_reads as sr

fq, tsv, results, out = sys.argv[1:5]

class Classification:
    def results(self):
        with open(results) as f:
            return json.load(f)
    def _readlevel(self):
        return {"url": "http://localhost/" + os.path.basename(tsv)}

class Classifications:
    @staticmethod
    def get(_id):
        return Classification()

class Ctx:
    info_name = "subset_reads"
    obj = {"API": type("Api", (), {"Classifications": Classifications})}

os.chdir(os.path.dirname(tsv))
body = inspect.unwrap(sr.cli.callback)
t = time.perf_counter()
body(Ctx(), "bench", fq, None, ("562",), True, False, False, False, out, False, False, 9)
print(time.perf_counter() - t)
"#;

/// Paired subset inputs: `r1.fastq.gz`, `r2.fastq.gz` (mates `/1` and `/2`), a read-level TSV
/// with a row per mate, and the results table of [`make_subset_inputs`].
fn make_paired_inputs(dir: &Path, pairs: u64) -> (PathBuf, PathBuf, PathBuf, PathBuf) {
    let sub = dir.join(format!("paired-{pairs}"));
    let (r1, r2, tsv, results) =
        (sub.join("r1.fastq.gz"), sub.join("r2.fastq.gz"), sub.join("readlevel.tsv.gz"), sub.join("results.json"));
    if results.exists() {
        return (r1, r2, tsv, results);
    }
    std::fs::create_dir_all(&sub).expect("folder");
    eprintln!("writing paired subset inputs ({pairs} pairs)...");
    let gz =
        |p: &Path| GzEncoder::new(BufWriter::new(std::fs::File::create(p).expect("create")), Compression::default());
    let (mut g1, mut g2, mut gt) = (gz(&r1), gz(&r2), gz(&tsv));
    gt.write_all(b"Tax ID\tN Hits\tSeq Len\tPassed Filter\n").expect("write");
    let taxa = [562u64, 83333, 1280, 0, 1280, 562];
    let mut rng = Rng(11);
    let (mut b1, mut b2, mut bt) = (Vec::with_capacity(1 << 16), Vec::with_capacity(1 << 16), Vec::new());
    for i in 0..pairs {
        for (mate, buf) in [(1, &mut b1), (2, &mut b2)] {
            let start = buf.len();
            fastq_record(buf, &mut rng, i);
            // `@r{i} sample=bench` becomes `@r{i}/{mate} sample=bench`.
            let name_end = start + buf[start..].iter().position(|&c| c == b' ').expect("a description");
            buf.splice(name_end..name_end, format!("/{mate}").into_bytes());
        }
        let x = rng.next();
        let tax = taxa[(x % taxa.len() as u64) as usize];
        let passed = if tax != 0 && (x >> 16).is_multiple_of(10) { 'F' } else { 'T' };
        for _ in 0..2 {
            writeln!(bt, "{tax}\t{}\t150\t{passed}", (x >> 24) % 100).ok();
        }
        if b1.len() > 60_000 {
            g1.write_all(&b1).expect("write");
            g2.write_all(&b2).expect("write");
            gt.write_all(&bt).expect("write");
            b1.clear();
            b2.clear();
            bt.clear();
        }
    }
    g1.write_all(&b1).expect("write");
    g2.write_all(&b2).expect("write");
    gt.write_all(&bt).expect("write");
    for g in [g1, g2, gt] {
        g.finish().expect("gzip").flush().expect("flush");
    }
    let (_, _, single_results) = make_subset_inputs(dir, 1000);
    std::fs::copy(single_results, &results).expect("results");
    (r1, r2, tsv, results)
}

fn paired_subset_bench(dir: &Path, pairs: u64, table: &mut Table) {
    let (r1, r2, tsv, results) = make_paired_inputs(dir, pairs);
    eprintln!("paired subset: {pairs} pairs...");
    let (floor, _) = best_of(3, || decompress_only(&r1) + decompress_only(&r2));
    let out = dir.join("paired-out-mgds");
    std::fs::create_dir_all(&out).expect("out");
    let (ours, _) = best_of_after(
        3,
        || remove_outputs(&out),
        || {
            run_subset(&[&r1, &r2], &tsv, &results, &out);
        },
    );
    let per_s = |d: Duration| rate(pairs as f64, d) / 1e3;
    let vs_floor = ours.as_secs_f64() / floor.as_secs_f64();
    table.add(
        &format!("paired subset, {}k pairs (pairs/s)", pairs / 1000),
        format!("{:.0}k/s ({:.2} s)", per_s(ours), ours.as_secs_f64()),
        format!("{:.0}k/s ({:.2} s, decompressing both files)", per_s(floor), floor.as_secs_f64()),
        format!("{vs_floor:.2}x the time"),
        "<= 1.3x decompression",
        Some(vs_floor <= 1.3),
    );
}

/// `mgds subset-reads` of E. coli (562) and its descendants from `reads` (one file, or R1 and R2)
/// into `out`.
fn run_subset(reads: &[&Path], tsv: &Path, results: &Path, out: &Path) {
    let st = Command::new(MGDS)
        .arg("subset-reads")
        .args(reads)
        .arg("--readlevel")
        .arg(tsv)
        .arg("--results")
        .arg(results)
        .args(["-t", "562", "--with-children", "-o"])
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("mgds subset-reads");
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
}

/// Plain decompression of the FASTQ.gz, as `mgds` reads it: the physical floor of a subset.
fn decompress_only(path: &Path) -> u64 {
    let mut r = flate2::read::MultiGzDecoder::new(std::fs::File::open(path).expect("open"));
    let mut buf = vec![0u8; 1 << 17];
    let mut n = 0;
    loop {
        match r.read(&mut buf).expect("read") {
            0 => return n,
            k => n += k as u64,
        }
    }
}

/// Removes the files a subset run left in `out` (see `subset_bench`).
fn remove_outputs(out: &Path) {
    for entry in std::fs::read_dir(out).expect("output folder") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            std::fs::remove_file(&path).expect("remove old output");
        }
    }
}

fn subset_bench(dir: &Path, reads: u64, table: &mut Table) {
    let (fq, tsv, results) = make_subset_inputs(dir, reads);
    eprintln!("subset reads: {reads} reads...");
    let (floor, _) = best_of(3, || decompress_only(&fq));
    let out_ours = dir.join("subset-out-mgds");
    std::fs::create_dir_all(&out_ours).expect("out");
    // Each run, ours and Python's, starts without the previous run's output: replacing a file
    // of some 300 MB makes the filesystem free its blocks inside the timed run (in `rename` for
    // mgds, in `open` with truncation for Python), which is the last run's cost, not this one's.
    let (ours, _) = best_of_after(
        3,
        || remove_outputs(&out_ours),
        || {
            run_subset(&[&fq], &tsv, &results, &out_ours);
        },
    );
    let per_s = |d: Duration| rate(reads as f64, d) / 1e3;
    let vs_floor = ours.as_secs_f64() / floor.as_secs_f64();
    table.add(
        &format!("subset reads, {}k reads (reads/s)", reads / 1000),
        format!("{:.0}k/s ({:.2} s)", per_s(ours), ours.as_secs_f64()),
        format!("{:.0}k/s ({:.2} s, decompression only)", per_s(floor), floor.as_secs_f64()),
        format!("{vs_floor:.2}x the time"),
        "<= 1.3x decompression",
        Some(vs_floor <= 1.3),
    );
    let py = python_env::python();
    let out_py = dir.join("subset-out-python");
    std::fs::create_dir_all(&out_py).expect("out");
    remove_outputs(&out_py);
    let run = Command::new(&py)
        .arg("-c")
        .arg(PY_DRIVER)
        .arg(&fq)
        .arg(&tsv)
        .arg(&results)
        .arg(&out_py)
        .stderr(Stdio::null())
        .output()
        .expect("python");
    assert!(run.status.success(), "python anchor failed: {}", String::from_utf8_lossy(&run.stdout));
    let secs: f64 =
        String::from_utf8_lossy(&run.stdout).trim().lines().last().and_then(|l| l.parse().ok()).expect("seconds");
    let py_d = Duration::from_secs_f64(secs);
    // Same selection, byte for byte.
    let ours_file = std::fs::read(out_ours.join("reads.filtered.fastq")).expect("ours");
    let py_file = std::fs::read(out_py.join("reads.filtered.fastq")).expect("python's");
    assert!(ours_file == py_file, "mgds and onecodex wrote different subsets");
    let speedup = secs / ours.as_secs_f64();
    table.add(
        &format!("subset reads vs onecodex {}", onecodex_version()),
        format!("{:.0}k/s", per_s(ours)),
        format!("{:.0}k/s (Python)", per_s(py_d)),
        format!("{speedup:.1}x faster"),
        ">= 8x faster",
        Some(speedup >= 8.0),
    );
}
