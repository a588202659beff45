//! MGDS in a browser: the real `mgds serve` (a release build) holding 10,000 samples, and Debian's
//! Chromium (headless) through `chromedriver`. Prints a table against the goals the web UI is held
//! to: navigation to a painted samples table (≤ 1 s), next page (≤ 100 ms), a sample's page with
//! its chart (≤ 500 ms), the JavaScript each screen needs (gzip, as sent), and a large FASTQ.gz
//! (2 GiB unless `MGDS_BENCH_UPLOAD_MB` says) uploaded from the browser against `mgds upload` of
//! the same file to the same service (≥ 0.8x), with the tab's memory while it goes.
//!
//! Run it with `MGDS_BENCH=browser tests/e2e/bench.sh` (it builds the UI and `mgds` in release).

use std::io::Write;
#[path = "common/populate.rs"]
mod populate;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use mgds_e2e::bench::{fmt_count, median};
use mgds_e2e::{Driver, Session, env_path, free_port, poll, workspace_root};
use serde_json::json;

const LONG: Duration = Duration::from_secs(600);
const PASSWORD: &str = "correct horse battery";
const EMAIL: &str = "ana@lab.example.org";
const REPEATS: usize = 6;

/// `mgds serve` on `data`, stopped on drop.
struct Served {
    child: Child,
    url: String,
}

impl Served {
    async fn start(bin: &Path, data: &Path, workers: u32) -> Result<Served> {
        let port = free_port()?;
        let child = Command::new(bin)
            .arg("--data-dir")
            .arg(data)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--workers", &workers.to_string()])
            .env("MGDS_LOG", "error")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()?;
        let url = format!("http://127.0.0.1:{port}");
        let health = format!("{url}/api/v1/health");
        poll("mgds serve to answer", Duration::from_secs(300), || async {
            Ok(reqwest::get(&health).await.ok().filter(|r| r.status().is_success()).map(|_| ()))
        })
        .await?;
        Ok(Served { child, url })
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let _ = self.child.wait();
    }
}

fn mgds(bin: &Path, data: &Path) -> Command {
    let mut c = Command::new(bin);
    c.arg("--data-dir").arg(data).env("MGDS_LOG", "error");
    c
}

/// Ana, with a password; answers her API key.
fn user(bin: &Path, data: &Path) -> Result<String> {
    let mut child = mgds(bin, data)
        .args(["admin", "user", "create", EMAIL, "--password"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    writeln!(child.stdin.take().context("stdin")?, "{PASSWORD}")?;
    let out = child.wait_with_output()?;
    ensure!(out.status.success(), "mgds admin user create failed");
    Ok(String::from_utf8(out.stdout)?.trim().to_string())
}

/// `n` small samples of Ana's, through the API of a service of this process that runs no
/// analyses and has no reference data yet (so no classification is queued for them).
async fn populate(data: &Path, key: &str, n: usize) -> Result<()> {
    let mut config = mgds_server::Config::new(data);
    config.runner.workers = 0;
    let (url, _state) = mgds_server::spawn(config, "127.0.0.1:0".parse()?).await?;
    let client = mgds_client::Client::builder(&url).api_key(key).build()?;
    populate::samples(&client, &data.join("bench-files"), n).await
}

/// A FASTQ.gz of about `mb` MiB of pseudo-random 150 bp reads, made once and kept.
fn big_reads(dir: &Path, mb: u64) -> Result<PathBuf> {
    let path = dir.join(format!("bench-{mb}mb.fastq.gz"));
    if path.metadata().is_ok_and(|m| m.len() >= mb * 1024 * 1024) {
        return Ok(path);
    }
    let partial = path.with_extension("partial");
    let mut gz = flate2::write::GzEncoder::new(
        std::io::BufWriter::new(std::fs::File::create(&partial)?),
        flate2::Compression::fast(),
    );
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut i = 0u64;
    let mut record = Vec::with_capacity(400);
    loop {
        for _ in 0..10_000 {
            record.clear();
            writeln!(record, "@bench:{i} 1:N:0:1")?;
            for _ in 0..150 {
                record.push(b"ACGT"[(next() % 4) as usize]);
            }
            record.extend_from_slice(b"\n+\n");
            for _ in 0..150 {
                record.push(b'5' + (next() % 10) as u8);
            }
            record.push(b'\n');
            gz.write_all(&record)?;
            i += 1;
        }
        if gz.get_ref().get_ref().metadata()?.len() >= mb * 1024 * 1024 {
            break;
        }
    }
    gz.finish()?.flush()?;
    std::fs::rename(&partial, &path)?;
    Ok(path)
}

/// Resident memory (MiB) of the browser's page processes (Chromium's renderers).
fn tab_rss_mb() -> f64 {
    let mut kb = 0u64;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let p = entry.path();
        let cmd = std::fs::read(p.join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd);
        if !(cmd.contains("chromium") && cmd.contains("--type=renderer")) {
            continue;
        }
        let status = std::fs::read_to_string(p.join("status")).unwrap_or_default();
        if let Some(v) = status.lines().find_map(|l| l.strip_prefix("VmRSS:")) {
            kb += v.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap_or(0);
        }
    }
    kb as f64 / 1024.0
}

/// Milliseconds from `action` (a script run in the page) to the frame in which `ready` (a
/// selector) is found, by the page's clock.
async fn timed(s: &Session, action: &str, ready: &str) -> Result<f64> {
    let v = s
        .script(
            &format!(
                "const t0 = performance.now(); {action};
                 return new Promise((done) => {{
                   const check = () => document.querySelector(arguments[0])
                     ? requestAnimationFrame(() => done(performance.now() - t0)) : requestAnimationFrame(check);
                   check();
                 }});"
            ),
            json!([ready]),
        )
        .await?;
    v.as_f64().with_context(|| format!("no time for {ready}: {v}"))
}

/// Milliseconds from the navigation's start to the frame with the samples table's rows.
async fn painted_table(s: &Session, url: &str) -> Result<f64> {
    s.navigate(url).await?;
    let v = s
        .script(
            "return new Promise((done) => {
               const check = () => document.querySelector('[data-testid=samples-table] tbody tr[data-id]')
                 ? requestAnimationFrame(() => done(performance.now())) : requestAnimationFrame(check);
               check();
             });",
            json!([]),
        )
        .await?;
    v.as_f64().context("no time for the painted table")
}

/// The JavaScript the page has loaded so far: (files, KiB as sent, gzip).
async fn js_sent(s: &Session) -> Result<(u64, f64)> {
    let v = s
        .script(
            "const js = performance.getEntriesByType('resource').filter(r => r.name.endsWith('.js'));
             return [js.length, js.reduce((n, r) => n + r.encodedBodySize, 0)];",
            json!([]),
        )
        .await?;
    Ok((v[0].as_u64().unwrap_or(0), v[1].as_f64().unwrap_or(0.0) / 1024.0))
}

async fn sign_in(s: &Session, url: &str) -> Result<()> {
    s.navigate(&format!("{url}/")).await?;
    // The session of an earlier start of the same service (on the same port) may still be good.
    s.wait_for("#sign-in-title, [data-testid=samples-table]", LONG).await?;
    if s.find("#sign-in-title").await?.is_none() {
        return Ok(());
    }
    s.set_value("input[type=email]", EMAIL).await?;
    s.set_value("input[autocomplete=current-password]", PASSWORD).await?;
    s.click(&s.wait_for("button[type=submit]", LONG).await?).await?;
    s.wait_for("[data-testid=samples-table] tbody tr[data-id]", LONG).await?;
    Ok(())
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let bin = env_path("MGDS_BIN")?;
    let chromedriver = env_path("CHROMEDRIVER")?;
    let n: usize = std::env::var("MGDS_BENCH_SAMPLES").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let upload_mb: u64 = std::env::var("MGDS_BENCH_UPLOAD_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(2048);
    let root = workspace_root();
    let shots = root.join("target/e2e-screenshots");
    let cache = root.join("target/bench-files");
    std::fs::create_dir_all(&cache)?;
    let data = tempfile::tempdir()?;
    eprintln!("mgds: {}", bin.display());

    let key = user(&bin, data.path())?;
    let t = Instant::now();
    populate(data.path(), &key, n).await?;
    eprintln!("{} samples in {:.0} s", fmt_count(n), t.elapsed().as_secs_f64());
    // The first start installs the demo references: one classified sample for its page.
    let served = Served::start(&bin, data.path(), 1).await?;
    let demo = root.join("assets/demo/reads.fastq.gz");
    let status = mgds(&bin, data.path())
        .args(["--base-url", &served.url, "--api-key", &key, "upload"])
        .arg(&demo)
        .stdout(Stdio::null())
        .status()?;
    ensure!(status.success(), "mgds upload of the demo reads failed");
    let url = served.url.clone();
    poll("the demo sample's classification", LONG, || async {
        let list: serde_json::Value = reqwest::Client::new()
            .get(format!("{url}/api/v1/classifications"))
            .basic_auth(&key, Some(""))
            .send()
            .await?
            .json()
            .await?;
        Ok(list.as_array().is_some_and(|l| l.iter().any(|c| c["complete"] == json!(true))).then_some(()))
    })
    .await?;

    let driver = Driver::chromium(&chromedriver).await?;
    let downloads = tempfile::tempdir()?;
    let s = Session::chromium(&driver, shots.clone(), downloads.path()).await?;
    s.navigate(&format!("{url}/")).await?;
    s.wait_for("#sign-in-title", LONG).await?;
    let js_sign_in = js_sent(&s).await?;
    sign_in(&s, &url).await?;
    let js_samples = js_sent(&s).await?;
    let total = format!("{} samples", fmt_count(n + 1));
    s.wait_for_text("[data-testid=total]", &total, LONG).await?;

    // Navigation to a painted table: a reload each time (the files then come from the cache,
    // as for a returning user; the first one fetched them).
    let mut paints = Vec::new();
    for _ in 0..REPEATS {
        paints.push(painted_table(&s, &format!("{url}/")).await?);
    }
    let mut next = Vec::new();
    s.wait_for("[data-testid=next-page]", LONG).await?;
    for _ in 0..REPEATS {
        // Back to the first page, then timed to what only the second page shows.
        let v = s
            .script(
                "const t0 = performance.now();
                 document.querySelector('[data-testid=prev-page]').click();
                 return new Promise((done) => {
                   const check = () => document.querySelector('[data-testid=range]').innerText.startsWith('1–')
                     ? requestAnimationFrame(() => done(performance.now() - t0)) : requestAnimationFrame(check);
                   check();
                 }).then(() => {
                   const t1 = performance.now();
                   document.querySelector('[data-testid=next-page]').click();
                   return new Promise((done) => {
                     const check = () => document.querySelector('[data-testid=range]').innerText.startsWith('51–')
                       ? requestAnimationFrame(() => done(performance.now() - t1)) : requestAnimationFrame(check);
                     check();
                   });
                 });",
                json!([]),
            )
            .await?;
        next.push(v.as_f64().context("no time for the next page")?);
    }
    s.screenshot("bench-browser-samples").await?;

    // The sample's page with its chart, from the table (the demo sample is the newest).
    let mut pages = Vec::new();
    for _ in 0..3 {
        painted_table(&s, &format!("{url}/")).await?;
        pages.push(
            timed(
                &s,
                "document.querySelector('[data-testid=samples-table] tbody tr[data-id] td.name').click()",
                "[data-testid=chart] svg rect.bar",
            )
            .await?,
        );
    }
    let js_sample = js_sent(&s).await?;
    s.screenshot("bench-browser-sample").await?;
    drop(served);

    // The upload: the same file from the browser and by `mgds upload`, to a service that runs
    // no analyses meanwhile.
    let file = big_reads(&cache, upload_mb)?;
    let size_mb = file.metadata()?.len() as f64 / 1024.0 / 1024.0;
    let served = Served::start(&bin, data.path(), 0).await?;
    let url = served.url.clone();
    sign_in(&s, &url).await?;
    let rest_mb = tab_rss_mb();
    let input = s.wait_for("input[data-testid=browser-pick-files]", LONG).await?;
    s.type_text(&input, &file.display().to_string()).await?;
    let start = s.wait_for("[data-testid=upload-start]:not([disabled])", LONG).await?;
    let t = Instant::now();
    s.click(&start).await?;
    let mut peak_mb = rest_mb;
    loop {
        peak_mb = peak_mb.max(tab_rss_mb());
        if s.find("[data-testid=upload-item][data-state=done]").await?.is_some() {
            break;
        }
        if s.find("[data-testid=upload-item][data-state=failed]").await?.is_some() {
            anyhow::bail!("the browser's upload failed");
        }
        if t.elapsed() > Duration::from_secs(120 + size_mb as u64) {
            s.screenshot("bench-browser-upload-stuck").await?;
            let text = s.script("return document.body.innerText;", json!([])).await?;
            anyhow::bail!(
                "the browser's upload did not finish; the page showed:\n{}",
                text.as_str().unwrap_or_default()
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let browser_s = t.elapsed().as_secs_f64();
    s.screenshot("bench-browser-upload").await?;
    let t = Instant::now();
    let status = mgds(&bin, data.path())
        .args(["--base-url", &url, "--api-key", &key, "upload"])
        .arg(&file)
        .stdout(Stdio::null())
        .status()?;
    ensure!(status.success(), "mgds upload failed");
    let cli_s = t.elapsed().as_secs_f64();
    drop(served);
    let _ = s.close().await;
    drop(driver);

    let goal = |ok: bool| if ok { "met" } else { "missed" };
    let (paint, next, page) = (median(paints), median(next), median(pages));
    println!("\nMGDS in headless Chromium against mgds serve with {} samples\n", fmt_count(n + 1));
    println!("| measure | result | goal | |");
    println!("|---|---|---|---|");
    println!(
        "| navigation to a painted samples table (median of {REPEATS}) | {paint:.0} ms | ≤ 1000 ms | {} |",
        goal(paint <= 1000.0)
    );
    println!("| next page (median of {REPEATS}) | {next:.0} ms | ≤ 100 ms | {} |", goal(next <= 100.0));
    println!(
        "| sample page with its chart, from the table (median of 3) | {page:.0} ms | ≤ 500 ms | {} |",
        goal(page <= 500.0)
    );
    println!(
        "| upload of a {size_mb:.0} MiB FASTQ.gz: browser / mgds upload | {browser_s:.1} s / {cli_s:.1} s = {:.2}x | ≥ 0.8x | {} |",
        cli_s / browser_s,
        goal(cli_s / browser_s >= 0.8)
    );
    println!(
        "| the tab's memory (renderer RSS): before / peak during the upload | {rest_mb:.0} / {peak_mb:.0} MiB | bounded | |"
    );
    println!("\nJavaScript the browser fetched, gzip as sent (cumulative)\n");
    println!("| screen | files | KiB |");
    println!("|---|---|---|");
    for (screen, (files, kib)) in
        [("signing in", js_sign_in), ("samples table", js_samples), ("sample page with chart", js_sample)]
    {
        println!("| {screen} | {files} | {kib:.1} |");
    }
    Ok(())
}
