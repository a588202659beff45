//! MGDS Desktop with many samples: the real app (a release build) in a real WebKitGTK window,
//! driven through WebDriver, over a local service holding 100 samples and then 10,000. Prints a
//! table: start-up to a painted samples table, the table's interactions (next page and sort, each
//! the median of six; filter; 200 rows a page), each timed inside the page from the click to the
//! frame that shows the new rows, and the memory of the app's processes at rest. The 100-sample
//! run is the anchor. Before both, a first start on a fresh data folder is measured at rest.
//!
//! Run it with `tests/e2e/bench.sh` (it builds the UI and the app in release, installs
//! `tauri-driver`, and gives the bench a keyring and a virtual display).

#[path = "common/populate.rs"]
mod populate;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use mgds_e2e::bench::{Memory, fmt_count, median, memory};
use mgds_e2e::{Driver, FreshHome, Session};
use serde_json::json;

const LONG: Duration = Duration::from_secs(300);

/// One run's figures.
struct Figures {
    samples: usize,
    populate_s: f64,
    start_s: f64,
    call_ms: f64,
    next_page_ms: f64,
    sort_ms: f64,
    filter_ms: f64,
    per_page_ms: f64,
    mem: Memory,
}

fn env_path(name: &str) -> Result<PathBuf> {
    let p = std::env::var_os(name)
        .map(PathBuf::from)
        .with_context(|| format!("{name} is not set; run tests/e2e/bench.sh"))?;
    ensure!(p.exists(), "{name}={} does not exist; run tests/e2e/bench.sh", p.display());
    Ok(p)
}

/// Fills a new data folder with `n` samples through the real API (the local user the app will
/// sign in as, no reference data, so no analyses run while the app is measured).
async fn populate(data_dir: &Path, n: usize) -> Result<f64> {
    let started = Instant::now();
    let mut config = mgds_server::Config::new(data_dir);
    config.runner.workers = 0;
    let (url, state) = mgds_server::spawn(config, "127.0.0.1:0".parse()?).await?;
    let key = mgds_server::admin::create_user(
        &state.db,
        mgds_profiles::local::LOCAL_USER,
        None,
        mgds_server::admin::Role::Owner,
    )
    .await?
    .api_key;
    let client = mgds_client::Client::builder(&url).api_key(&key).build()?;
    populate::samples(&client, &data_dir.join("bench-files"), n).await?;
    Ok(started.elapsed().as_secs_f64())
}

/// Clicks (or types into) `target`, then answers the milliseconds until a frame is painted in
/// which `expect` contains `text`, measured by the page's own clock.
async fn timed(s: &Session, action: &str, target: &str, value: &str, expect: &str, text: &str) -> Result<f64> {
    let v = s
        .script(
            "const [action, target, value, expect, text] = arguments;
             const t0 = performance.now();
             const el = document.querySelector(target);
             if (action === 'click') el.click();
             else { el.value = value; el.dispatchEvent(new Event(action, {bubbles: true})); }
             return new Promise((done) => {
               const check = () => {
                 const e = document.querySelector(expect);
                 if (e && e.innerText.includes(text)) requestAnimationFrame(() => done(performance.now() - t0));
                 else requestAnimationFrame(check);
               };
               check();
             });",
            json!([action, target, value, expect, text]),
        )
        .await?;
    v.as_f64().with_context(|| format!("no time for {target}: {v}"))
}

/// Memory at rest of a first start on a fresh data folder: the empty samples screen shown,
/// nothing done, a few seconds' rest.
async fn fresh(app: &Path, tauri_driver: &Path, shots: &Path) -> Result<Memory> {
    let home = FreshHome::new()?;
    let driver = Driver::start(tauri_driver, &home.env(&[("MGDS_LOG", "error")])).await?;
    let s = Session::new(&driver, app, shots.to_path_buf()).await?;
    s.wait_for("[data-testid=empty]", LONG).await?;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let mem = memory(driver.pid());
    s.close().await?;
    drop(driver);
    Ok(mem)
}

async fn run(app: &Path, tauri_driver: &Path, n: usize, shots: &Path) -> Result<Figures> {
    let home = FreshHome::new()?;
    let populate_s = populate(&home.data_dir(), n).await?;
    let driver = Driver::start(tauri_driver, &home.env(&[("MGDS_LOG", "error")])).await?;
    let started = Instant::now();
    let s = Session::new(&driver, app, shots.to_path_buf()).await?;
    let total = format!("{} samples", fmt_count(n));
    s.wait_for_text("[data-testid=total]", &total, LONG).await?;
    s.wait_for("[data-testid=samples-table] tbody tr[data-id]", LONG).await?;
    let start_s = started.elapsed().as_secs_f64();
    // The service and the app's command alone, without the page: page 2 of the table.
    let call = s
        .script(
            "const t0 = performance.now();
             return window.__TAURI_INTERNALS__.invoke('list_samples', {query: {page: 2, per_page: 50, sort: 'created_at',
               desc: true}}).then(() => performance.now() - t0);",
            json!([]),
        )
        .await?;
    let call_ms = call.as_f64().context("no time for the list_samples call")?;
    // Each interaction waits for what only the new rows can show; next page and sort are
    // repeated and their median reported (one shot varies with what the webview is doing).
    let mut next = Vec::new();
    for _ in 0..REPEATS {
        next.push(timed(&s, "click", "[data-testid=next-page]", "", "[data-testid=range]", "51–100").await?);
        timed(&s, "click", "[data-testid=prev-page]", "", "[data-testid=range]", "1–50").await?;
    }
    let next_page_ms = median(next);
    // Sorting by file name flips between ascending and descending: the first row tells which.
    let (first, last) = ("isolate-00000".to_string(), format!("isolate-{:05}", n - 1));
    let mut sorts = Vec::new();
    for k in 0..REPEATS {
        let expect = if k % 2 == 0 { &first } else { &last };
        sorts.push(timed(&s, "click", "[data-testid=sort-filename]", "", "tbody tr[data-id] td.name", expect).await?);
    }
    let sort_ms = median(sorts);
    let filter_ms =
        timed(&s, "input", "[data-testid=filter-filename]", "isolate-00042", "[data-testid=range]", "1–1 of 1").await?;
    s.script(
        "const i = document.querySelector('[data-testid=filter-filename]'); i.value = '';
         i.dispatchEvent(new Event('input', {bubbles: true})); return true;",
        json!([]),
    )
    .await?;
    s.wait_for_text("[data-testid=total]", &total, LONG).await?;
    let per_page_ms =
        timed(&s, "change", "[data-testid=per-page]", "200", "[data-testid=range]", &format!("1–{}", n.min(200)))
            .await?;
    s.screenshot(&format!("bench-{n}-samples")).await?;
    // At rest: nothing happening for a few seconds.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let mem = memory(driver.pid());
    s.close().await?;
    drop(driver);
    Ok(Figures { samples: n, populate_s, start_s, call_ms, next_page_ms, sort_ms, filter_ms, per_page_ms, mem })
}

/// How many times next page and sort are timed.
const REPEATS: usize = 6;

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    std::env::var_os("DISPLAY").context("no DISPLAY: run tests/e2e/bench.sh (it starts Xvfb)")?;
    let app = env_path("MGDS_DESKTOP_BIN")?;
    let tauri_driver = env_path("TAURI_DRIVER")?;
    let shots = std::env::var_os("MGDS_E2E_SCREENSHOTS").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let big: usize = std::env::var("MGDS_BENCH_SAMPLES").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    eprintln!("app: {}", app.display());
    let first = fresh(&app, &tauri_driver, &shots).await?;
    let anchor = run(&app, &tauri_driver, 100, &shots).await?;
    let many = run(&app, &tauri_driver, big, &shots).await?;
    println!("\nMGDS Desktop with {} samples against {} (same run, same machine)\n", fmt_count(big), anchor.samples);
    println!("| measure | {} samples | {} samples | ratio |", anchor.samples, fmt_count(many.samples));
    println!("|---|---|---|---|");
    let row = |name: &str, a: f64, b: f64, unit: &str| {
        println!("| {name} ({unit}) | {a:.1} | {b:.1} | {:.2}x |", if a > 0.0 { b / a } else { 0.0 });
    };
    row("start to a painted samples table", anchor.start_s, many.start_s, "s");
    row("one page of 50 from the service, without drawing it", anchor.call_ms, many.call_ms, "ms");
    row("next page (median of 6)", anchor.next_page_ms, many.next_page_ms, "ms");
    row("sort by file name, either way (median of 6)", anchor.sort_ms, many.sort_ms, "ms");
    row("filter by file name (incl. 250 ms typing pause)", anchor.filter_ms, many.filter_ms, "ms");
    row("200 rows a page", anchor.per_page_ms, many.per_page_ms, "ms");
    row("memory at rest, RSS of app + WebKit", anchor.mem.rss, many.mem.rss, "MB");
    row("memory at rest, PSS of app + WebKit", anchor.mem.pss, many.mem.pss, "MB");
    row("  of which the app (and its embedded service)", anchor.mem.app_pss, many.mem.app_pss, "MB");
    row("  of which WebKit's web process", anchor.mem.web_pss, many.mem.web_pss, "MB");
    row("  of which WebKit's network process", anchor.mem.network_pss, many.mem.network_pss, "MB");
    println!(
        "\nA first start on a fresh data folder, at rest on the empty samples screen (goal: at most 250 MB PSS)\n"
    );
    println!("| memory (MB) | RSS | PSS | of which the app | WebKit's web process | WebKit's network process |");
    println!("|---|---|---|---|---|---|");
    println!(
        "| app + WebKit | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
        first.rss, first.pss, first.app_pss, first.web_pss, first.network_pss
    );
    println!(
        "\n(populating through the API took {:.1} s and {:.1} s; it is not part of the figures)",
        anchor.populate_s, many.populate_s
    );
    Ok(())
}
