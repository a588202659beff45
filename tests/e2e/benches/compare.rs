//! The comparison view at scale: the real app (a release build) in a real WebKitGTK window over a
//! local service holding 500 classified samples, each a mix of up to 60 species. Prints a table:
//! the first comparison (every sample's results fetched), then, with the results cached, the
//! redraw after changing the number of taxa to 50, the clustered heatmap of 500 samples by 50
//! taxa, and the memory of the app's processes before and after. The anchor is the goal the
//! comparison is held to: a redraw of 500 samples × 50 taxa in under 1 s once the results are
//! cached. A comparison of 50 samples is timed beside it.
//!
//! The reference is synthetic (60 random 20 kbp genomes in 12 genera, a taxonomy made for them)
//! so that 50 taxa exist to compare; the reads are drawn from those genomes with 1% substitutions
//! and classified by the service's own engine before the app starts.
//!
//! Run it with `MGDS_BENCH=compare tests/e2e/bench.sh`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use futures::StreamExt;
use mgds_e2e::bench::{fmt_count, median, memory};
use mgds_e2e::{Driver, FreshHome, Session};
use rand::{RngExt, SeedableRng};
use serde_json::json;

const LONG: Duration = Duration::from_secs(600);
const SAMPLES: usize = 500;
const SPECIES: usize = 60;
const GENERA: usize = 12;
const GENOME: usize = 20_000;
const READS: usize = 1_000;
const READ_LEN: usize = 100;
/// How long the app rests before its memory is measured again.
const REST_SECS: u64 = 60;

fn env_path(name: &str) -> Result<PathBuf> {
    let p = std::env::var_os(name)
        .map(PathBuf::from)
        .with_context(|| format!("{name} is not set; run MGDS_BENCH=compare tests/e2e/bench.sh"))?;
    ensure!(p.exists(), "{name}={} does not exist; run MGDS_BENCH=compare tests/e2e/bench.sh", p.display());
    Ok(p)
}

/// The bench's data generator, seeded: the same data on every run.
type Rng = rand::rngs::Xoshiro256PlusPlus;

fn below(rng: &mut Rng, n: usize) -> usize {
    rng.random_range(0..n)
}

fn unit(rng: &mut Rng) -> f64 {
    rng.random::<f64>()
}

/// The synthetic reference: genomes, their taxonomy and map, installed as the default
/// classification of `data_dir`.
fn install_reference(data_dir: &Path, rng: &mut Rng) -> Result<Vec<Vec<u8>>> {
    let dir = data_dir.join("bench-reference");
    std::fs::create_dir_all(&dir)?;
    let mut nodes = String::from("1\t|\t1\t|\tno rank\t|\n2\t|\t1\t|\tdomain\t|\n");
    let mut names =
        String::from("1\t|\troot\t|\t\t|\tscientific name\t|\n2\t|\tBacteria\t|\t\t|\tscientific name\t|\n");
    for g in 0..GENERA {
        nodes.push_str(&format!("{}\t|\t2\t|\tgenus\t|\n", 1000 + g));
        names.push_str(&format!("{}\t|\tBenchgenus{g:02}\t|\t\t|\tscientific name\t|\n", 1000 + g));
    }
    let mut fasta = String::new();
    let mut map = String::new();
    let mut genomes = Vec::new();
    for s in 0..SPECIES {
        let (id, genus) = (2000 + s, 1000 + s % GENERA);
        nodes.push_str(&format!("{id}\t|\t{genus}\t|\tspecies\t|\n"));
        names.push_str(&format!("{id}\t|\tBenchgenus{:02} species{s:02}\t|\t\t|\tscientific name\t|\n", s % GENERA));
        let genome: Vec<u8> = (0..GENOME).map(|_| b"ACGT"[below(rng, 4)]).collect();
        fasta.push_str(&format!(">bench_{s:02}\n{}\n", String::from_utf8_lossy(&genome)));
        map.push_str(&format!("bench_{s:02}\t{id}\n"));
        genomes.push(genome);
    }
    std::fs::create_dir_all(dir.join("taxonomy"))?;
    std::fs::write(dir.join("taxonomy/nodes.dmp"), nodes)?;
    std::fs::write(dir.join("taxonomy/names.dmp"), names)?;
    std::fs::write(dir.join("genomes.fa"), fasta)?;
    std::fs::write(dir.join("seqid2taxid.tsv"), map)?;
    let input = mgds_classify::BuildInput {
        references: vec![dir.join("genomes.fa")],
        seqid2taxid: dir.join("seqid2taxid.tsv"),
        nodes: dir.join("taxonomy/nodes.dmp"),
        names: dir.join("taxonomy/names.dmp"),
    };
    let options = mgds_classify::BuildOptions::default().read_length(Some(READ_LEN as u32));
    mgds_server::references::install_classification(
        data_dir,
        "bench-60-species",
        "Bench: 60 synthetic species",
        &input,
        &options,
        true,
        &mut |_| {},
    )?;
    Ok(genomes)
}

/// One sample's reads: a random subset of the species at random depths, 1% substitutions.
fn sample_reads(genomes: &[Vec<u8>], rng: &mut Rng, i: usize) -> String {
    let weights: Vec<f64> =
        (0..genomes.len()).map(|_| if unit(rng) < 0.5 { (unit(rng) * 4.0).exp() } else { 0.0 }).collect();
    let total: f64 = weights.iter().sum::<f64>().max(1e-9);
    let mut out = String::with_capacity(READS * (2 * READ_LEN + 30));
    for r in 0..READS {
        let mut x = unit(rng) * total;
        let mut pick = 0;
        for (k, w) in weights.iter().enumerate() {
            if x < *w {
                pick = k;
                break;
            }
            x -= w;
        }
        let g = &genomes[pick];
        let at = below(rng, g.len() - READ_LEN);
        let seq: String = g[at..at + READ_LEN]
            .iter()
            .map(|&b| if below(rng, 100) == 0 { b"ACGT"[below(rng, 4)] as char } else { b as char })
            .collect();
        out.push_str(&format!("@s{i}r{r}\n{seq}\n+\n{}\n", "I".repeat(READ_LEN)));
    }
    out
}

/// Fills a new data folder with the reference and `SAMPLES` classified samples through the real
/// API, as the app's local user.
async fn populate(data_dir: &Path) -> Result<f64> {
    let started = Instant::now();
    let mut rng = Rng::seed_from_u64(0x5eed_cafe_f00d_d00d);
    let genomes = install_reference(data_dir, &mut rng)?;
    let mut config = mgds_server::Config::new(data_dir);
    config.runner.workers = 2;
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
    let files = data_dir.join("bench-files");
    std::fs::create_dir_all(&files)?;
    let mut paths = Vec::new();
    for i in 0..SAMPLES {
        let path = files.join(format!("patient-{i:03}.fastq"));
        std::fs::File::create(&path)?.write_all(sample_reads(&genomes, &mut rng, i).as_bytes())?;
        paths.push(path);
    }
    let uploaded: Vec<Result<String>> = futures::stream::iter(paths)
        .map(|path| {
            let client = client.clone();
            async move {
                let s = client.samples().upload(&path).send().await?;
                std::fs::remove_file(&path)?;
                let c = client.samples().get(s.uri.rsplit('/').next().unwrap_or_default()).await?;
                Ok(c.primary_classification.context("no classification started")?.id().to_string())
            }
        })
        .buffer_unordered(8)
        .collect()
        .await;
    for a in uploaded {
        let a = a?;
        let done = client.jobs().wait(a.as_str()).send().await?;
        ensure!(done.success, "a classification failed: {:?}", done.error_msg);
    }
    Ok(started.elapsed().as_secs_f64())
}

/// Changes a control of the comparison view (`change` on `target`), then answers the
/// milliseconds until a frame is painted in which the chart is no longer stale and its SVG
/// contains `text`, measured by the page's own clock.
async fn redraw(s: &Session, target: &str, value: &str, text: &str) -> Result<f64> {
    let v = s
        .script(
            "const [target, value, text] = arguments;
             const t0 = performance.now();
             const el = document.querySelector(target);
             if (el.type === 'checkbox') el.click();
             else { el.value = value; el.dispatchEvent(new Event('change', {bubbles: true})); }
             return new Promise((done) => {
               const check = () => {
                 const c = document.querySelector('[data-testid=compare-chart]');
                 const svg = c && c.querySelector('svg');
                 if (svg && !c.classList.contains('stale') && svg.outerHTML.includes(text))
                   requestAnimationFrame(() => done(performance.now() - t0));
                 else requestAnimationFrame(check);
               };
               requestAnimationFrame(check);
             });",
            json!([target, value, text]),
        )
        .await?;
    v.as_f64().with_context(|| format!("no time for {target}: {v}"))
}

/// Selects the first `n` samples (across pages of 200) and opens their comparison; answers the
/// seconds until the chart is painted.
async fn open_comparison(s: &Session, n: usize) -> Result<f64> {
    s.script(
        "const c = [...document.querySelectorAll('[data-testid=bulk-bar] button')].find(b => b.innerText === 'Clear selection'); \
         if (c) c.click(); return true;",
        json!([]),
    )
    .await?;
    s.set_value("[data-testid=per-page]", "200").await?;
    s.wait_for_text("[data-testid=range]", "1–200", LONG).await?;
    let mut chosen = 0;
    let mut page = 1;
    while chosen < n {
        let take = (n - chosen).min(200);
        s.script(
            "[...document.querySelectorAll('[data-testid=samples-table] tbody tr[data-id] td.check input')] \
               .slice(0, arguments[0]).forEach(c => { if (!c.checked) c.click(); }); return true;",
            json!([take]),
        )
        .await?;
        chosen += take;
        if chosen < n {
            page += 1;
            s.click(&s.wait_for("[data-testid=next-page]", LONG).await?).await?;
            s.wait_for_text("[data-testid=range]", &format!("{}–", (page - 1) * 200 + 1), LONG).await?;
        }
    }
    s.wait_for_text("[data-testid=bulk-bar]", &format!("{} samples selected", fmt_count(n)), LONG).await?;
    let t0 = Instant::now();
    s.click(&s.wait_for("[data-testid=bulk-compare]", LONG).await?).await?;
    s.wait_for_text("[data-testid=compare-caption]", &format!("{n} samples"), LONG).await?;
    s.wait_for("[data-testid=compare-chart] svg", LONG).await?;
    Ok(t0.elapsed().as_secs_f64())
}

struct Figures {
    samples: usize,
    first_s: f64,
    top50_ms: f64,
    heatmap_ms: f64,
    bars_ms: f64,
}

/// Times one comparison of `n` samples: opened (results fetched), then redrawn from the cache.
async fn measure(s: &Session, n: usize) -> Result<Figures> {
    let first_s = open_comparison(s, n).await?;
    let mut top = Vec::new();
    let mut heat = Vec::new();
    let mut bars = Vec::new();
    for _ in 0..3 {
        s.set_value("[data-testid=compare-kind]", "bars").await?;
        redraw(s, "[data-testid=compare-top]", "49", "top 49 taxa").await?;
        top.push(redraw(s, "[data-testid=compare-top]", "50", "top 50 taxa").await?);
        heat.push(redraw(s, "[data-testid=compare-kind]", "heatmap", "top 50 taxa").await?);
        let clustered = redraw(s, "[data-testid=compare-cluster]", "", "clustered").await?;
        heat.push(clustered);
        redraw(s, "[data-testid=compare-cluster]", "", "top 50 taxa").await?;
        bars.push(redraw(s, "[data-testid=compare-kind]", "bars", "top 50 taxa").await?);
    }
    s.screenshot(&format!("bench-compare-{n}")).await?;
    s.click(&s.wait_for("[data-testid=nav-samples]", LONG).await?).await?;
    s.wait_for("[data-testid=samples-table] tbody tr[data-id]", LONG).await?;
    Ok(Figures { samples: n, first_s, top50_ms: median(top), heatmap_ms: median(heat), bars_ms: median(bars) })
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    std::env::var_os("DISPLAY").context("no DISPLAY: run MGDS_BENCH=compare tests/e2e/bench.sh (it starts Xvfb)")?;
    let app = env_path("MGDS_DESKTOP_BIN")?;
    let tauri_driver = env_path("TAURI_DRIVER")?;
    let shots = std::env::var_os("MGDS_E2E_SCREENSHOTS").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    eprintln!("app: {}", app.display());
    let home = FreshHome::new()?;
    eprintln!("making {SAMPLES} samples of {READS} reads and classifying them...");
    let populate_s = populate(&home.data_dir()).await?;
    let driver = Driver::start(&tauri_driver, &home.env(&[("MGDS_LOG", "error")])).await?;
    let s = Session::new(&driver, &app, shots).await?;
    s.wait_for_text("[data-testid=total]", &format!("{} samples", fmt_count(SAMPLES)), LONG).await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before = memory(driver.pid());
    let small = measure(&s, 50).await?;
    let large = measure(&s, SAMPLES).await?;
    // Right after, and at rest: the web process frees the charts' discarded pages and strings
    // when its garbage collector gets to them, not at once.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = memory(driver.pid());
    tokio::time::sleep(Duration::from_secs(REST_SECS)).await;
    let rested = memory(driver.pid());
    s.close().await?;
    drop(driver);

    println!("\nThe comparison view: {} samples against {} (same run, same machine)\n", large.samples, small.samples);
    println!("| measure | {} samples | {} samples | goal |", small.samples, large.samples);
    println!("|---|---|---|---|");
    println!("| first comparison, every result fetched (s) | {:.2} | {:.2} | |", small.first_s, large.first_s);
    let goal = |ms: f64| if ms < 1000.0 { "< 1 s: met" } else { "< 1 s: not met" };
    println!(
        "| cached: redraw at top 50 taxa, stacked bars (ms, median of 3) | {:.0} | {:.0} | {} |",
        small.top50_ms,
        large.top50_ms,
        goal(large.top50_ms)
    );
    println!(
        "| cached: heatmap 50 taxa, plain and clustered (ms, median of 6) | {:.0} | {:.0} | {} |",
        small.heatmap_ms,
        large.heatmap_ms,
        goal(large.heatmap_ms)
    );
    println!("| cached: back to stacked bars (ms, median of 3) | {:.0} | {:.0} | |", small.bars_ms, large.bars_ms);
    println!("\n| memory (MB) | before comparing | 3 s after both comparisons | {REST_SECS} s later |");
    println!("|---|---|---|---|");
    println!("| PSS of app + WebKit | {:.0} | {:.0} | {:.0} |", before.pss, after.pss, rested.pss);
    println!(
        "|   of which the app (and its embedded service, with the cache) | {:.0} | {:.0} | {:.0} |",
        before.app_pss, after.app_pss, rested.app_pss
    );
    println!(
        "|   of which WebKit's web process | {:.0} | {:.0} | {:.0} |",
        before.web_pss, after.web_pss, rested.web_pss
    );
    println!(
        "\n(making and classifying {SAMPLES} samples of {READS} reads took {populate_s:.0} s; it is not part of the figures)"
    );
    Ok(())
}
