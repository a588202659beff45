//! The real `mgds-desktop` binary in a real WebKitGTK window, driven through `tauri-driver` and
//! `WebKitWebDriver` under Xvfb (see `test.sh`): first start on the embedded service, a FASTQ
//! dropped and uploaded, its sample opened with its abundance chart, a panel run from the sample
//! page (after a wrong argument is refused), then an alignment to one of its species and a
//! functional profile, each with its results, a bad file explained, a remote profile with a wrong
//! key refused, a watched folder whose new FASTQ becomes a sample (its settings then changed),
//! both samples tagged together from the table's selection and moved into a new project, and an
//! R1/R2 pair joined into one sample. Then the rest of the job from the window alone: a document
//! dropped on the Documents screen, shared by e-mail with a second user (made with `mgds admin`)
//! who sees it in their own list (the app switched to their profile) and may download but not
//! change it, renamed and deleted; a project created, a member added, made public, opened with its
//! samples, and another deleted while its samples stay; a job run on three selected samples and
//! followed to its end, then found on the Analyses screen and opened; the tags with their counts,
//! and the table filtered by one. Then the samples compared side by side (rank, taxa, heatmap
//! clustered, the table, a taxon's reads offered), the chart and its numbers saved through the
//! real save dialog and checked against the service's results, and a Nanopore run written into a
//! watched folder batch by batch, growing on the run dashboard until one taxon alert is raised
//! and marked on the dashboard and the samples, and a FASTQ dropped on the window afterwards
//! raising the same rule's alert. Every screen is checked with axe-core (no serious or critical
//! violation) and driven by keyboard where it matters. Last, a second start on the same data
//! folder hands over to the first, and one on another folder runs beside it. Screenshots go to
//! `target/e2e-screenshots/`.
//!
//! Needs `MGDS_DESKTOP_BIN` (the app), `TAURI_DRIVER` (the driver) and a `DISPLAY`; `test.sh`
//! provides all three.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use mgds_e2e::{Axe, Driver, FreshHome, Session, env_path, poll, workspace_root};
use mgds_oidc::testing::TestProvider;
use serde_json::json;

/// Emits Tauri's drag-and-drop event with `paths`, as a native drop does (WebDriver cannot drop
/// files from outside the window): the app's own drop handler takes it from there.
async fn drop_files(s: &Session, paths: &[&Path]) -> Result<()> {
    let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    s.script(
        "return window.__TAURI_INTERNALS__.invoke('plugin:event|emit', \
         {event: 'tauri://drag-drop', payload: {paths: arguments[0], position: {x: 200, y: 200}}}).then(() => true);",
        json!([paths]),
    )
    .await?;
    Ok(())
}

const LONG: Duration = Duration::from_secs(120);
const SHORT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread")]
async fn desktop_app_end_to_end() -> Result<()> {
    std::env::var_os("DISPLAY").context("no DISPLAY: run the end-to-end tests through ./test.sh (it starts Xvfb)")?;
    let app = env_path("MGDS_DESKTOP_BIN")?;
    let tauri_driver = env_path("TAURI_DRIVER")?;
    let root = workspace_root();
    let screenshots = std::env::var_os("MGDS_E2E_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/e2e-screenshots"));

    // A first start: empty data, configuration, home and XDG folders. Watched files settle
    // within a second or two instead of the default 30 s.
    let home = FreshHome::new()?;
    // The system browser the app opens for single sign-on: a scripted one that signs in at the
    // test's OpenID provider as Bob (tests/oidc/browser.py).
    let browser = root.join("tests/oidc/browser.py");
    let browser = browser.to_str().context("the checkout's path is not UTF-8")?;
    let env = home.env(&[
        ("MGDS_WATCH_POLL_SECS", "0.5"),
        ("MGDS_WATCH_MIN_AGE_SECS", "0.5"),
        ("BROWSER", browser),
        ("MGDS_TEST_OIDC_ACCOUNT", "bob-sub"),
    ]);
    let driver = Driver::start(&tauri_driver, &env).await?;
    let started = Instant::now();
    let s = Session::new(&driver, &app, screenshots).await?;
    let mut outcome = scenario(&s, &root, home.root(), &home.config_dir(), started).await;
    if outcome.is_ok() {
        let axe = Axe::new(&root)?;
        outcome = whole_job(&s, &axe, &app, home.root(), &home.data_dir()).await;
    }
    if outcome.is_ok() {
        let axe = Axe::new(&root)?;
        outcome = compare_and_live_run(&s, &axe, &root, home.root()).await;
    }
    if outcome.is_ok() {
        outcome = single_sign_on(&s, &app).await;
    }
    if outcome.is_ok() {
        outcome = second_starts(&s, &app, &env).await;
    }
    if let Err(e) = &outcome {
        // What the window showed when it went wrong, for the log and the artifacts.
        let _ = s.screenshot("failure").await;
        let text = s.script("return document.body.innerText;", json!([])).await;
        eprintln!(
            "error: {e:#}\nthe window showed:\n{}",
            text.map(|t| t.as_str().unwrap_or_default().to_string()).unwrap_or_default()
        );
    }
    let closed = s.close().await;
    drop(driver);
    outcome?;
    closed
}

async fn scenario(s: &Session, root: &Path, tmp: &Path, config_dir: &Path, started: Instant) -> Result<()> {
    // 1. First start: the embedded service comes up and the empty samples table is shown.
    s.wait_for("[data-testid=empty]", LONG).await.context("the first start never showed the empty samples screen")?;
    eprintln!("first start to the empty samples screen: {:.1} s", started.elapsed().as_secs_f64());
    s.wait_for_text("[data-testid=connection]", "Local service", SHORT).await?;
    s.screenshot("01-first-start").await?;

    // 1b. The empty screen offers the demo reads: one click makes them a sample.
    let demo = s.wait_for("[data-testid=add-demo]", SHORT).await?;
    s.click(&demo).await?;
    s.wait_for("[data-testid=upload-item][data-state=done]", LONG).await.context("the demo reads were not uploaded")?;
    s.wait_for_text("[data-testid=samples-table] tbody", "mgds-demo-reads.fastq.gz", LONG).await?;
    s.wait_for_text("[data-testid=total]", "1 sample", SHORT).await?;
    s.screenshot("01b-demo-sample").await?;
    let clear = s.wait_for("[data-testid=clear-finished]", SHORT).await?;
    s.click(&clear).await?;

    // 2. A FASTQ dropped on the window is checked, then uploaded.
    let reads = root.join("assets/demo/reads.fastq.gz");
    drop_files(s, &[&reads]).await?;
    s.wait_for("[data-testid=upload-item][data-state=checked]", LONG)
        .await
        .context("the dropped FASTQ was not checked")?;
    let facts = s.wait_for_text("[data-testid=upload-item]", "reads", SHORT).await?;
    ensure!(
        facts.contains("FASTQ") && facts.contains("gzip"),
        "the check should name the format and compression: {facts}"
    );
    s.screenshot("02-dropped-and-checked").await?;
    let start = s.wait_for("[data-testid=upload-start]", SHORT).await?;
    s.click(&start).await?;
    s.wait_for("[data-testid=upload-item][data-state=done]", LONG).await.context("the upload did not finish")?;
    s.screenshot("03-uploaded").await?;

    // 3. The new sample is in the table; open it and wait for its abundance chart.
    s.wait_for_text("[data-testid=samples-table] tbody", "reads.fastq.gz", SHORT).await?;
    s.wait_for_text("[data-testid=total]", "2 samples", SHORT).await?;
    s.screenshot("04-samples-table").await?;
    let row = s.wait_for("[data-testid=samples-table] tbody tr[data-id] td.name", SHORT).await?;
    s.click(&row).await?;
    s.wait_for_text("[data-testid=sample-title]", "reads", SHORT).await?;
    s.wait_for("[data-testid=chart] svg rect.bar", LONG).await.context("the abundance chart never appeared")?;
    s.wait_for_text("[data-testid=analysis-state]", "Complete", SHORT).await?;
    let bars =
        s.script("return document.querySelectorAll('[data-testid=chart] svg rect.bar').length;", json!([])).await?;
    ensure!(bars.as_u64().unwrap_or(0) >= 1, "the chart has no bars: {bars}");
    s.wait_for("[data-testid=taxa-table] tbody tr", SHORT).await?;
    // The figure shown is named: re-estimated abundance by default (the demo database has a
    // k-mer distribution), in the note, the chart's axis and the table's headings.
    s.wait_for_text("[data-testid=measure-note]", "Re-estimated abundance", SHORT).await?;
    let named = s
        .script(
            "return [document.querySelector('[data-testid=chart] svg').textContent, \
             document.querySelector('[data-testid=taxa-table] thead').textContent];",
            json!([]),
        )
        .await?;
    let named = named.to_string();
    ensure!(named.contains("Re-estimated abundance"), "the chart should name its measure: {named}");
    ensure!(
        named.contains("Genome copies") && named.contains("Share of reads"),
        "the table should name each measure: {named}"
    );
    s.screenshot("05-sample-with-chart").await?;
    s.script("document.querySelector('[data-testid=chart]').scrollIntoView(); return true;", json!([])).await?;
    s.screenshot("05a-chart-and-taxa").await?;
    // The sample's hierarchy below it, drawn through the app's own command.
    s.wait_for("[data-testid=sunburst-chart] svg path.segment[data-tax-id]", LONG).await.context("the sunburst")?;
    s.script("document.querySelector('[data-testid=sunburst]').scrollIntoView(); return true;", json!([])).await?;
    s.screenshot("05f-sunburst").await?;
    // Its read quality below that, through the app's own command.
    s.wait_for("[data-testid=qc-chart] svg", LONG).await.context("the read quality chart")?;
    s.wait_for("[data-testid=qc-verdict]", SHORT).await?;
    s.script("document.querySelector('[data-testid=qc]').scrollIntoView(); return true;", json!([])).await?;
    s.screenshot("05g-read-quality").await?;

    // 3b. Another analysis run from the sample page: a wrong argument is named before anything is
    // sent; the panel then runs, shows up in the list, and its markers open.
    s.click(&s.wait_for("[data-testid=run-analysis]", SHORT).await?).await?;
    s.wait_for("[data-testid=run-form]", SHORT).await?;
    ensure!(s.choose_job("Alignment").await?, "no alignment job offered");
    s.type_text(&s.wait_for("[data-testid=run-arg-tax_id]", SHORT).await?, "E. coli").await?;
    s.click(&s.wait_for("[data-testid=run-start]", SHORT).await?).await?;
    let refused = s.wait_for_text("[data-testid=run-error]", "Tax id", SHORT).await?;
    ensure!(refused.contains("E. coli"), "the refusal should quote what was typed: {refused}");
    s.screenshot("05b-run-analysis-refused").await?;
    ensure!(s.choose_job("Panel").await?, "no panel job offered");
    s.wait_for_text("[data-testid=run-form]", "takes no settings", SHORT).await?;
    s.click(&s.wait_for("[data-testid=run-start]", SHORT).await?).await?;
    s.open_when_complete("Panel", LONG).await?;
    s.wait_for("[data-testid=panel]", LONG).await.context("the panel's markers never opened")?;
    // The demo reads carry four of the demo panel's ten genes (on a Klebsiella plasmid).
    let found = s.wait_for_text("[data-testid=panel]", "4 of 10 found", SHORT).await?;
    ensure!(found.contains("blaTEM-1") && found.contains("sul2"), "the plasmid's genes should be listed: {found}");
    s.script("document.querySelector('[data-testid=panel]').scrollIntoView(); return true;", json!([])).await?;
    s.screenshot("05c-panel-run-from-the-app").await?;

    // 3c. An alignment to a species of the sample (suggested from its classification), and a
    // functional profile: each opens its results.
    let run_and_open = |kind: &'static str, testid: &'static str| async move {
        let n_before = s
            .script("return document.querySelectorAll('[data-testid=analyses] li').length;", json!([]))
            .await?
            .as_u64()
            .unwrap_or(0);
        s.click(&s.wait_for("[data-testid=run-analysis]", SHORT).await?).await?;
        ensure!(s.choose_job(kind).await?, "no {kind} job offered");
        if kind == "Alignment" {
            let species = poll("species suggestions from the classification", SHORT, || async {
                let v = s
                    .script("const o = document.querySelector('datalist#species-tax_id option'); return o ? o.value : null;", json!([]))
                    .await?;
                Ok(v.as_str().map(str::to_string))
            })
            .await?;
            s.type_text(&s.wait_for("[data-testid=run-arg-tax_id]", SHORT).await?, &species).await?;
        }
        s.click(&s.wait_for("[data-testid=run-start]", SHORT).await?).await?;
        poll(&format!("the {kind} analysis to complete"), LONG, || async {
            let done = s
                .script(
                    "const items = document.querySelectorAll('[data-testid=analyses] li'); \
                     const b = [...document.querySelectorAll('[data-testid=analyses] button')]\
                     .find(b => b.innerText.startsWith(arguments[0]) && b.innerText.includes('Complete')); \
                     if (b && items.length > arguments[1]) { b.click(); return true; } return false;",
                    json!([kind, n_before]),
                )
                .await?;
            Ok(done.as_bool().unwrap_or(false).then_some(()))
        })
        .await?;
        s.wait_for(&format!("[data-testid={testid}]"), LONG)
            .await
            .with_context(|| format!("the {kind} results never opened"))
    };
    run_and_open("Alignment", "alignment").await?;
    let mapped = s.wait_for_text("[data-testid=alignment-mapped]", "of 10,019", LONG).await?;
    ensure!(!mapped.starts_with("0 of"), "reads of the chosen species should map to its genome: {mapped}");
    s.script("document.querySelector('[data-testid=alignment]').scrollIntoView(); return true;", json!([])).await?;
    s.screenshot("05d-alignment").await?;
    run_and_open("Functional profile", "profile").await?;
    s.wait_for_text("[data-testid=profile]", "reads mapped to the gene catalogue", LONG).await?;
    s.wait_for("[data-testid=profile] tbody tr", SHORT).await.context("the demo reads should give functions")?;
    s.script("document.querySelector('[data-testid=profile]').scrollIntoView(); return true;", json!([])).await?;
    s.screenshot("05e-functional-profile").await?;

    // 4. A file that is not reads is explained, and cannot be sent.
    let bad = tmp.join("run42_notes.fastq");
    std::fs::write(&bad, "Sample sheet for run 42\nplate A, wells 1-12\n")?;
    drop_files(s, &[&bad]).await?;
    let why = s
        .wait_for_text("[data-testid=upload-item][data-state=invalid] [data-testid=problem]", "run42_notes.fastq", LONG)
        .await?;
    ensure!(why.to_lowercase().contains("fast"), "the explanation should say what the file is not: {why}");
    s.screenshot("06-invalid-file-explained").await?;

    // 5. A remote profile with a wrong key is refused, and not saved.
    let nav = s.wait_for("[data-testid=nav-profiles]", SHORT).await?;
    s.click(&nav).await?;
    let url_text = s.wait_for_text("[data-testid=local-url]", "http://127.0.0.1:", SHORT).await?;
    let url = url_text.split_whitespace().next().context("no local address shown")?.to_string();
    s.type_text(&s.wait_for("[data-testid=profile-name]", SHORT).await?, "lab").await?;
    s.type_text(&s.wait_for("[data-testid=profile-url]", SHORT).await?, &url).await?;
    s.type_text(&s.wait_for("[data-testid=profile-key]", SHORT).await?, "not-a-real-key-0000").await?;
    s.click(&s.wait_for("[data-testid=profile-save]", SHORT).await?).await?;
    let refused = s.wait_for_text("[data-testid=profile-error]", "did not accept this API key", LONG).await?;
    ensure!(refused.contains(&url), "the message should name the service: {refused}");
    let listed = s.script("return document.querySelector('[data-testid=profiles]').innerText;", json!([])).await?;
    ensure!(!listed.as_str().unwrap_or_default().contains("lab"), "a refused profile must not be saved: {listed}");
    let config = config_dir.join("config.toml");
    ensure!(
        !config.exists() || !std::fs::read_to_string(&config)?.contains("lab"),
        "a refused profile must not be saved"
    );
    s.screenshot("07-wrong-key-refused").await?;

    // 6. A watched folder: saved from its screen, a FASTQ written into it becomes a sample.
    let watched = tmp.join("sequencer-output");
    std::fs::create_dir_all(&watched)?;
    s.click(&s.wait_for("[data-testid=nav-watch]", SHORT).await?).await?;
    s.wait_for("[data-testid=watch-empty]", SHORT).await.context("the watched folders screen should start empty")?;
    s.click(&s.wait_for("[data-testid=watch-add]", SHORT).await?).await?;
    s.type_text(
        &s.wait_for("[data-testid=watch-path]", SHORT).await?,
        &tmp.join("no-such-folder").display().to_string(),
    )
    .await?;
    s.click(&s.wait_for("[data-testid=watch-save]", SHORT).await?).await?;
    let missing = s.wait_for_text("[data-testid=watch-form-error]", "no-such-folder", SHORT).await?;
    ensure!(
        missing.contains("No such file"),
        "a folder that is not there should be named and refused with why: {missing}"
    );
    s.set_value("[data-testid=watch-path]", &watched.display().to_string()).await?;
    s.click(&s.wait_for("[data-testid=watch-save]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=watch-status]", "Watching 1 folder", LONG).await?;
    ensure!(
        std::fs::read_to_string(config_dir.join("watch.toml"))?.contains("sequencer-output"),
        "the folder should be saved in watch.toml, shared with `mgds watch`"
    );
    // Written in two steps, as an instrument writes: it is sent only once it is whole.
    let bytes = std::fs::read(&reads)?;
    let target = watched.join("isolate-07.fastq.gz");
    std::fs::write(&target, &bytes[..bytes.len() / 2])?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    std::fs::write(&target, &bytes)?;
    s.wait_for("[data-testid=watch-sample][data-state=confirmed]", LONG)
        .await
        .context("the watched file never became a sample")?;
    s.wait_for_text("[data-testid=watch-sample]", "isolate-07", SHORT).await?;
    s.wait_for_text("[data-testid=watch-counts]", "1 uploaded", SHORT).await?;
    // Its settings changed in place, and an upload speed limit set: both saved in watch.toml,
    // and the file already uploaded is not sent again.
    s.click(&s.wait_for("[data-testid=watch-edit]", SHORT).await?).await?;
    s.type_text(&s.wait_for("[data-testid=watch-tags]", SHORT).await?, "nextseq").await?;
    s.screenshot("08-folder-settings").await?;
    s.click(&s.wait_for("[data-testid=watch-save]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=watch-summary]", "tags nextseq", LONG).await?;
    s.set_value("[data-testid=watch-limit]", "10000000").await?;
    let saved_file = config_dir.join("watch.toml");
    poll("the upload limit to be saved", SHORT, || {
        let f = saved_file.clone();
        async move {
            let saved = std::fs::read_to_string(&f)?;
            Ok((saved.contains("upload_limit = 10000000") && saved.contains("nextseq")).then_some(()))
        }
    })
    .await?;
    s.wait_for_text("[data-testid=watch-status]", "Watching 1 folder", LONG).await?;
    s.wait_for_text("[data-testid=watch-counts]", "1 uploaded", SHORT).await?;
    s.screenshot("08-watched-folder-changed").await?;
    s.click(&s.wait_for("[data-testid=nav-samples]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=total]", "3 samples", LONG).await?;

    // 7. All three samples (the demo, the dropped file, the watched one) selected and tagged at
    // once.
    s.click(&s.wait_for("[data-testid=select-all]", SHORT).await?).await?;
    s.type_text(&s.wait_for("[data-testid=bulk-tag]", SHORT).await?, "outbreak-7").await?;
    s.click(&s.wait_for("[data-testid=bulk-tag-add]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=bulk-notice]", "Tagged 3 samples.", LONG).await?;
    // The notice comes with the answer; the table reloads just after it.
    poll("every row to show the new tag", SHORT, || async {
        let n = s.count_with_text("[data-testid=samples-table] tbody tr", "outbreak-7").await?;
        Ok((n == 3).then_some(()))
    })
    .await?;
    // ...and moved together into a new project made on the spot (a name the service would refuse
    // is explained first).
    s.set_value("[data-testid=bulk-project]", "+").await?;
    let name = s.wait_for("[data-testid=bulk-new-project]", SHORT).await?;
    s.type_text(&name, "outbreak 7").await?;
    s.click(&s.wait_for("[data-testid=bulk-new-project-create]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=bulk-bar] .problem", "no spaces", SHORT).await?;
    s.set_value("[data-testid=bulk-new-project]", "outbreak_7").await?;
    s.click(&s.wait_for("[data-testid=bulk-new-project-create]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=bulk-notice]", "Moved to the new project outbreak_7: 3 samples.", LONG).await?;
    poll("every row to show the new project", SHORT, || async {
        let n = s.count_with_text("[data-testid=samples-table] tbody tr", "outbreak_7").await?;
        Ok((n == 3).then_some(()))
    })
    .await?;
    s.screenshot("09-bulk-tagged-and-moved").await?;

    // 8. An R1/R2 pair dropped together is suggested as a pair, joined, and becomes one sample.
    let (r1, r2) = (tmp.join("pairA_S1_L001_R1_001.fastq"), tmp.join("pairA_S1_L001_R2_001.fastq"));
    write_pair(&r1, &r2, 300)?;
    drop_files(s, &[&r1, &r2]).await?;
    let join = s.wait_for("[data-testid=join-pair]", LONG).await.context("the pair was not suggested")?;
    s.click(&join).await?;
    s.wait_for("[data-testid=pair-joined]", SHORT).await?;
    s.screenshot("10-pair-joined").await?;
    s.click(&s.wait_for("[data-testid=upload-start]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=samples-table] tbody", "pairA_S1_L001_001_interleaved.fastq.gz", LONG)
        .await
        .context("the joined pair did not become one sample")?;
    s.wait_for_text("[data-testid=total]", "4 samples", SHORT).await?;
    s.screenshot("11-pair-uploaded").await?;
    Ok(())
}

/// axe-core (the UI's devDependency), run in the page through WebDriver.
const ENTER: &str = "\u{E007}";
const ESCAPE: &str = "\u{E00C}";

/// The rest of the job from the window alone: documents, projects, a job run on many samples
/// and the Analyses screen, tags; every screen checked with axe-core.
async fn whole_job(s: &Session, axe: &Axe, app: &Path, tmp: &Path, data_dir: &Path) -> Result<()> {
    axe.check(s, "samples with the upload panel").await?;
    // Escape closes the upload panel.
    s.script("document.activeElement && document.activeElement.blur(); return true;", json!([])).await?;
    s.press(ESCAPE).await?;
    poll("Escape to close the upload panel", SHORT, || async {
        Ok(s.find("[data-testid=upload-panel]").await?.is_none().then_some(()))
    })
    .await?;
    axe.check(s, "samples").await?;
    let nav = |name: &'static str| async move {
        s.click(&s.wait_for(&format!("[data-testid=nav-{name}]"), SHORT).await?).await
    };

    // A. Documents: empty, then a file dropped on the window is uploaded with its progress.
    nav("documents").await?;
    s.wait_for("[data-testid=documents-empty]", SHORT).await?;
    axe.check(s, "empty documents").await?;
    s.screenshot("12-documents-empty").await?;
    let sheet = tmp.join("Run 42 plate map.csv");
    let mut text = String::from("Sample_ID,Plate,Well\n");
    for i in 0..60_000 {
        text.push_str(&format!("isolate-{i:05},P{},{}{}\n", i / 96 + 1, (b'A' + (i % 8) as u8) as char, i % 12 + 1));
    }
    std::fs::write(&sheet, &text)?;
    drop_files(s, &[&sheet]).await?;
    s.wait_for("[data-testid=transfer][data-direction=upload]", SHORT)
        .await
        .context("the dropped document shows no upload")?;
    s.wait_for("[data-testid=transfer][data-state=done]", LONG).await.context("the document upload never finished")?;
    s.wait_for_text("[data-testid=documents-table]", "Run_42_plate_map.csv", LONG).await?;
    s.wait_for_text("[data-testid=documents-table]", "Not shared", SHORT).await?;
    // A folder is not a document: said so, and nothing is sent.
    let folder = tmp.join("sequencer-output");
    drop_files(s, &[&folder]).await?;
    let why = s.wait_for_text("[data-testid=transfer-error]", "is a folder", SHORT).await?;
    ensure!(why.contains("sequencer-output"), "the refusal should name the folder: {why}");
    axe.check(s, "documents").await?;
    s.screenshot("13-document-uploaded").await?;
    s.click(&s.wait_for("[data-testid=transfers-clear]", SHORT).await?).await?;

    // B. Shared by e-mail with a colleague who has an account (made with `mgds admin`), after an
    // address nobody has is explained.
    let mgds = app.with_file_name("mgds");
    ensure!(mgds.exists(), "{} is missing; build it with `cargo build -p mgds-cli`", mgds.display());
    let out = std::process::Command::new(&mgds)
        .arg("admin")
        .arg("--data-dir")
        .arg(data_dir)
        .args(["user", "create", "colleague@lab.example.org"])
        .output()?;
    ensure!(out.status.success(), "mgds admin user create failed: {}", String::from_utf8_lossy(&out.stderr));
    let colleague_key = String::from_utf8(out.stdout)?.trim().to_string();
    s.click(&s.wait_for("[data-testid=document-share]", SHORT).await?).await?;
    s.type_text(&s.wait_for("[data-testid=share-email]", SHORT).await?, "nobody@lab.example.org").await?;
    s.click(&s.wait_for("[data-testid=share-add]", SHORT).await?).await?;
    s.wait_for_text(
        "[data-testid=document-problem]",
        "Nobody on this service has the address nobody@lab.example.org",
        LONG,
    )
    .await?;
    s.set_value("[data-testid=share-email]", "colleague@lab.example.org").await?;
    // Enter in the address field shares, as the button does.
    s.script("document.querySelector('[data-testid=share-email]').focus(); return true;", json!([])).await?;
    s.press(ENTER).await?;
    s.wait_for_text("[data-testid=documents-notice]", "is now shared with colleague@lab.example.org", LONG).await?;
    s.wait_for_text("[data-testid=share-panel] .people", "colleague@lab.example.org", SHORT).await?;
    s.wait_for(
        "[data-testid=share-panel] [data-testid=unshare][aria-label='Stop sharing with colleague@lab.example.org']",
        SHORT,
    )
    .await?;
    s.screenshot("14-document-shared").await?;
    // Escape closes the sharing panel.
    s.script("document.querySelector('[data-testid=share-email]').focus(); return true;", json!([])).await?;
    s.press(ESCAPE).await?;
    poll("the sharing panel to close", SHORT, || async {
        Ok(s.find("[data-testid=share-panel]").await?.is_none().then_some(()))
    })
    .await?;
    s.wait_for_text("[data-testid=documents-table]", "colleague@lab.example.org", SHORT).await?;

    // C. Renamed (the name the service keeps shown).
    s.click(&s.wait_for("[data-testid=document-rename]", SHORT).await?).await?;
    s.set_value("[data-testid=rename-input]", "plate map v2.csv").await?;
    s.screenshot("15-document-rename").await?;
    s.click(&s.wait_for("[data-testid=rename-save]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=documents-table]", "plate_map_v2.csv", LONG).await?;

    // D. The colleague's own list: the app switched to their profile sees the document, from
    // whom, and may download but not change it.
    nav("profiles").await?;
    let url_text = s.wait_for_text("[data-testid=local-url]", "http://127.0.0.1:", SHORT).await?;
    let url = url_text.split_whitespace().next().context("no local address shown")?.to_string();
    s.set_value("[data-testid=profile-name]", "colleague").await?;
    s.set_value("[data-testid=profile-url]", &url).await?;
    s.set_value("[data-testid=profile-key]", &colleague_key).await?;
    s.click(&s.wait_for("[data-testid=profile-save]", SHORT).await?).await?;
    s.wait_for("[data-testid=use-local]", LONG).await.context("the colleague's profile was not put in use")?;
    axe.check(s, "profiles").await?;
    nav("documents").await?;
    s.wait_for_text("[data-testid=documents-table]", "plate_map_v2.csv", LONG).await?;
    let readonly = s.wait_for_text("[data-testid=document-readonly]", "me@local.mgds", SHORT).await?;
    ensure!(readonly.contains("Only me@local.mgds can rename, share or delete it"), "{readonly}");
    ensure!(s.find("[data-testid=document-delete]").await?.is_none(), "someone else's document offers no Delete");
    s.wait_for("[data-testid=document-download]", SHORT).await?;
    axe.check(s, "documents shared with me").await?;
    s.screenshot("16-documents-as-the-colleague").await?;
    // A profile of a lab's service has its organisation; the colleague is a member of it.
    nav("organization").await?;
    s.wait_for_text("[data-testid=org-role]", "member of", LONG).await?;
    s.wait_for("[data-testid=org-members-only]", SHORT).await?;
    ensure!(s.find("[data-testid=org-invite]").await?.is_none(), "a member invites nobody");
    axe.check(s, "organisation as a member").await?;
    s.screenshot("16a-organisation-as-a-member").await?;
    nav("profiles").await?;
    s.click(&s.wait_for("[data-testid=use-local]", SHORT).await?).await?;
    s.wait_for("[data-testid=use-colleague]", LONG).await?;
    // The local service on this computer has one user: no organisation to manage.
    poll("the local service's screens without the organisation", LONG, || async {
        Ok(s.find("[data-testid=nav-organization]").await?.is_none().then_some(()))
    })
    .await?;

    // E. Deleted after a confirmation that names it.
    nav("documents").await?;
    s.click(&s.wait_for("[data-testid=document-delete]", LONG).await?).await?;
    let asked = s.wait_for_text("[data-testid=confirm-dialog]", "plate_map_v2.csv", SHORT).await?;
    ensure!(asked.contains("shared with") && asked.contains("cannot be undone"), "{asked}");
    axe.check(s, "document delete confirmation").await?;
    s.screenshot("17-document-delete-confirm").await?;
    s.click(&s.wait_for("[data-testid=confirm-yes]", SHORT).await?).await?;
    s.wait_for("[data-testid=documents-empty]", LONG).await?;

    // F. Projects: a short name the service would refuse is explained before anything is sent;
    // a project is created, a member added, made public; another opened with its samples and
    // deleted, its samples staying.
    nav("projects").await?;
    s.wait_for_text("[data-testid=projects-table]", "outbreak_7", LONG).await?;
    axe.check(s, "projects").await?;
    s.screenshot("18-projects").await?;
    s.click(&s.wait_for("[data-testid=project-new]", SHORT).await?).await?;
    s.type_text(&s.wait_for("[data-testid=project-short-name]", SHORT).await?, "isolates 2026").await?;
    s.wait_for_text("#short-name-rule", "no spaces", SHORT).await?;
    s.click(&s.wait_for("[data-testid=project-create]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=project-form-error]", "no spaces", SHORT).await?;
    s.screenshot("19-project-name-rule").await?;
    s.set_value("[data-testid=project-short-name]", "isolates_2026").await?;
    s.set_value("[data-testid=project-name]", "Isolates 2026").await?;
    s.set_value("[data-testid=project-description]", "Every isolate sequenced this year").await?;
    s.click(&s.wait_for("[data-testid=project-create]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=project-title]", "Isolates 2026", LONG).await?;
    s.wait_for("[data-testid=project-empty]", LONG).await?;
    s.type_text(&s.wait_for("[data-testid=member-email]", SHORT).await?, "colleague@lab.example.org").await?;
    s.click(&s.wait_for("[data-testid=member-add]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=project-members]", "colleague@lab.example.org", LONG).await?;
    s.click(&s.wait_for("[data-testid=project-sharing]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=project-visibility]", "Public", LONG).await?;
    s.wait_for_text("[data-testid=project-sharing]", "Make private", SHORT).await?;
    axe.check(s, "project").await?;
    s.screenshot("20-project-created-shared-public").await?;
    // Escape goes back to the list; the project with samples opens with Enter on its row.
    s.script("document.activeElement && document.activeElement.blur(); return true;", json!([])).await?;
    s.press(ESCAPE).await?;
    s.wait_for_text("[data-testid=projects-table]", "isolates_2026", LONG).await?;
    s.script(
        "const r = [...document.querySelectorAll('[data-testid=projects-table] tbody tr')].find(r => r.innerText.includes('outbreak_7')); r.focus(); return true;",
        json!([]),
    )
    .await?;
    s.press(ENTER).await?;
    s.wait_for_text("[data-testid=project-title]", "outbreak_7", LONG).await?;
    s.wait_for_text("[data-testid=total]", "3 samples", LONG).await?;
    let rows = s.count_with_text("[data-testid=samples-table] tbody tr[data-id]", "outbreak_7").await?;
    ensure!(rows == 3, "the project's page should show its three samples, found {rows}");
    axe.check(s, "project with samples").await?;
    s.screenshot("21-project-with-its-samples").await?;
    s.click(&s.wait_for("[data-testid=project-delete]", SHORT).await?).await?;
    let asked = s.wait_for_text("[data-testid=confirm-dialog]", "3 samples stay", SHORT).await?;
    ensure!(asked.contains("taken out of the project"), "{asked}");
    s.screenshot("22-project-delete-confirm").await?;
    s.click(&s.wait_for("[data-testid=confirm-yes]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=projects-table]", "isolates_2026", LONG).await?;
    ensure!(
        s.count_with_text("[data-testid=projects-table]", "outbreak_7").await? == 0,
        "the deleted project is still listed"
    );
    nav("samples").await?;
    s.wait_for_text("[data-testid=total]", "4 samples", LONG)
        .await
        .context("the deleted project's samples should stay")?;

    // G. One job run on three selected samples, followed together to the end.
    s.wait_for("[data-testid=samples-table] tbody tr[data-id]", LONG).await?;
    // Whatever an earlier step left selected is cleared first.
    s.script(
        "const c = [...document.querySelectorAll('[data-testid=bulk-bar] button')].find(b => b.innerText === 'Clear selection'); \
         if (c) c.click(); return true;",
        json!([]),
    )
    .await?;
    poll("the selection to clear", SHORT, || async {
        Ok(s.find("[data-testid=bulk-bar]").await?.is_none().then_some(()))
    })
    .await?;
    s.script(
        "[...document.querySelectorAll('[data-testid=samples-table] tbody tr[data-id] td.check input')].slice(0, 3).forEach(c => c.click()); return true;",
        json!([]),
    )
    .await?;
    s.wait_for_text("[data-testid=bulk-bar]", "3 samples selected", SHORT).await?;
    s.click(&s.wait_for("[data-testid=bulk-run]", SHORT).await?).await?;
    let chosen = s
        .script(
            "const sel = document.querySelector('[data-testid=bulk-run-job]'); \
             const o = [...sel.options].find(o => o.text.startsWith('Panel')); if (!o) return false; \
             sel.value = o.value; sel.dispatchEvent(new Event('change', {bubbles: true})); return true;",
            json!([]),
        )
        .await?;
    ensure!(chosen == json!(true), "no panel job offered to run on the selection");
    s.wait_for_text("[data-testid=bulk-run-form]", "takes no settings", SHORT).await?;
    axe.check(s, "run on the selection").await?;
    s.screenshot("23-run-on-three-samples").await?;
    s.click(&s.wait_for("[data-testid=bulk-run-start]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=run-text]", "on 3 samples", LONG).await?;
    s.screenshot("24-run-in-progress").await?;
    s.wait_for("[data-testid=run-strip][data-done=true]", LONG)
        .await
        .context("the run on three samples never ended")?;
    let ended = s.wait_for_text("[data-testid=run-text]", "3 complete", SHORT).await?;
    ensure!(!ended.contains("failed"), "{ended}");
    s.screenshot("25-run-finished").await?;

    // H. The Analyses screen: every analysis, filtered by job and status, one opened.
    nav("analyses").await?;
    s.wait_for("[data-testid=analyses-table] tbody tr[data-id]", LONG).await?;
    axe.check(s, "analyses").await?;
    s.screenshot("26-analyses").await?;
    let panel_job = s
        .script(
            "const o = [...document.querySelector('[data-testid=analyses-job]').options].find(o => o.text.startsWith('Panel')); return o ? o.value : null;",
            json!([]),
        )
        .await?;
    let panel_job = panel_job.as_str().context("no panel job in the job filter")?.to_string();
    s.set_value("[data-testid=analyses-job]", &panel_job).await?;
    s.set_value("[data-testid=analyses-status]", "complete").await?;
    // The demo sample's panel run from its page, and the three just run.
    s.wait_for_text("[data-testid=analyses-total]", "4 analyses", LONG).await?;
    ensure!(
        s.count_with_text("[data-testid=analyses-table] tbody tr[data-id]", "Complete").await? == 4,
        "four complete panel analyses should be listed"
    );
    s.screenshot("27-analyses-filtered").await?;
    s.script(
        "document.querySelector('[data-testid=analyses-table] tbody tr[data-id]').focus(); return true;",
        json!([]),
    )
    .await?;
    s.press(ENTER).await?;
    s.wait_for("[data-testid=panel]", LONG).await.context("the panel opened from the Analyses screen never showed")?;
    s.wait_for_text("[data-testid=back]", "Analyses", SHORT).await?;
    axe.check(s, "sample").await?;
    s.screenshot("28-analysis-opened").await?;
    // An alignment to a species the references have no genome for fails; the page says what to
    // do, beside the service's words, and so does the Analyses screen.
    s.click(&s.wait_for("[data-testid=run-analysis]", SHORT).await?).await?;
    let chosen = s
        .script(
            "const sel = document.querySelector('[data-testid=run-job]'); \
             const o = [...sel.options].find(o => o.text.startsWith('Alignment')); if (!o) return false; \
             sel.value = o.value; sel.dispatchEvent(new Event('change', {bubbles: true})); return true;",
            json!([]),
        )
        .await?;
    ensure!(chosen == json!(true), "no alignment job offered");
    s.type_text(&s.wait_for("[data-testid=run-arg-tax_id]", SHORT).await?, "9606").await?;
    s.click(&s.wait_for("[data-testid=run-start]", SHORT).await?).await?;
    let failure = s.wait_for_text("[data-testid=analysis-failure]", "The service said", LONG).await?;
    ensure!(
        failure.contains("Run the alignment again with one of the tax ids") && failure.contains("9606"),
        "a failed alignment should say what to do and what the service said: {failure}"
    );
    s.script("document.querySelector('[data-testid=analysis-failure]').scrollIntoView(); return true;", json!([]))
        .await?;
    s.screenshot("28b-failed-analysis-explained").await?;
    nav("analyses").await?;
    s.set_value("[data-testid=analyses-job]", "").await?;
    s.set_value("[data-testid=analyses-status]", "failed").await?;
    s.wait_for_text("[data-testid=analyses-total]", "1 analysis", LONG).await?;
    s.wait_for_text("[data-testid=analyses-table] tbody", "Run the alignment again", SHORT).await?;
    axe.check(s, "failed analyses").await?;
    s.screenshot("28c-failed-analyses").await?;

    // I. Tags with their counts; the table filtered by one.
    nav("tags").await?;
    s.wait_for_text("[data-testid=tags-table]", "outbreak-7", LONG).await?;
    let count = s
        .script(
            "const r = [...document.querySelectorAll('[data-testid=tags-table] tbody tr')].find(r => r.innerText.includes('outbreak-7')); \
             return r.querySelector('[data-testid=tag-count]').innerText;",
            json!([]),
        )
        .await?;
    ensure!(count == json!("3"), "outbreak-7 should count 3 samples: {count}");
    axe.check(s, "tags").await?;
    s.screenshot("29-tags").await?;
    s.script(
        "const r = [...document.querySelectorAll('[data-testid=tags-table] tbody tr')].find(r => r.innerText.includes('outbreak-7')); \
         r.querySelector('[data-testid=tag-pick]').click(); return true;",
        json!([]),
    )
    .await?;
    s.wait_for_text("[data-testid=tags-picked]", "Samples tagged outbreak-7", SHORT).await?;
    s.click(&s.wait_for("[data-testid=tags-show]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=filter-tags]", "outbreak-7", LONG).await?;
    s.wait_for_text("[data-testid=total]", "3 samples", LONG).await?;
    ensure!(
        s.count_with_text("[data-testid=samples-table] tbody tr[data-id]", "outbreak-7").await? == 3,
        "every row should carry the tag"
    );
    axe.check(s, "samples filtered by a tag").await?;
    s.screenshot("30-samples-by-tag").await?;

    // J. The screens not yet checked.
    nav("watch").await?;
    s.wait_for("[data-testid=watch-status]", LONG).await?;
    axe.check(s, "watched folders").await?;
    nav("samples").await?;
    Ok(())
}

/// Answers the native save (or folder) dialog the app opened as a person would: the full path
/// typed into its name field, then Enter (xdotool, in the test's X display).
async fn answer_dialog(title_start: &str, path: &Path) -> Result<()> {
    let xdotool = |args: &[&str]| -> Result<String> {
        let out =
            std::process::Command::new("xdotool").args(args).output().context("xdotool (Debian package xdotool)")?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let pattern = format!("^{title_start}");
    let window = poll(&format!("the dialog \"{title_start}…\""), SHORT, || async {
        Ok(xdotool(&["search", "--onlyvisible", "--name", &pattern])?.lines().next().map(String::from))
    })
    .await?;
    // The dialog takes keys once it has the focus.
    poll("the dialog to take the focus", SHORT, || async {
        xdotool(&["windowfocus", "--sync", &window])?;
        Ok((xdotool(&["getwindowfocus"])?.trim() == window).then_some(()))
    })
    .await?;
    xdotool(&["key", "--clearmodifiers", "ctrl+a"])?;
    xdotool(&["type", "--delay", "5", &path.display().to_string()])?;
    xdotool(&["key", "Return"])?;
    Ok(())
}

/// Issue 16 in the window: the selected samples compared (rank and number of taxa switched,
/// a heatmap clustered, the table), a taxon's reads offered from the chart, the chart and its
/// numbers exported through the save dialog and checked against the service's results; then a
/// Nanopore run written into a watched folder batch by batch grows on the run dashboard and
/// raises one taxon alert, marked on the dashboard and the sample rows.
async fn compare_and_live_run(s: &Session, axe: &Axe, root: &Path, tmp: &Path) -> Result<()> {
    let nav = |name: &'static str| async move {
        s.click(&s.wait_for(&format!("[data-testid=nav-{name}]"), SHORT).await?).await
    };
    // K. Every sample on the page compared.
    nav("samples").await?;
    s.wait_for("[data-testid=samples-table] tbody tr[data-id]", LONG).await?;
    let samples = s
        .script(
            "return window.__TAURI_INTERNALS__.invoke('list_samples', {query: {page: 1, per_page: 50}}).then(p => p.rows);",
            json!([]),
        )
        .await?;
    let samples = samples.as_array().context("the samples list")?.clone();
    let classified: Vec<&serde_json::Value> = samples.iter().filter(|r| r["classification"].is_string()).collect();
    ensure!(classified.len() >= 3, "at least three classified samples to compare: {samples:?}");
    s.click(&s.wait_for("[data-testid=select-all]", SHORT).await?).await?;
    s.click(&s.wait_for("[data-testid=bulk-compare]", SHORT).await?).await?;
    s.wait_for("[data-testid=compare-chart] svg", LONG).await.context("the comparison never drew")?;
    s.wait_for_text("[data-testid=compare-caption]", "species rank", SHORT).await?;
    axe.check(s, "comparison").await?;
    s.screenshot("31-compare-bars").await?;
    s.set_value("[data-testid=compare-rank]", "genus").await?;
    s.wait_for_text("[data-testid=compare-caption]", "genus rank", LONG).await?;
    s.set_value("[data-testid=compare-top]", "3").await?;
    poll("three taxa and Other", LONG, || async {
        let svg =
            s.script("return document.querySelector('[data-testid=compare-chart] svg').outerHTML;", json!([])).await?;
        Ok(svg.as_str().is_some_and(|t| t.contains("top 3 taxa") && t.contains("Other (")).then_some(()))
    })
    .await?;
    s.screenshot("32-compare-genus-top3").await?;
    // Pointing at a taxon names sample, taxon and value; clicking it offers its reads.
    s.script(
        "const r = document.querySelector('[data-testid=compare-chart] rect[data-tax-id]');          r.dispatchEvent(new MouseEvent('mouseover', {bubbles: true})); r.dispatchEvent(new MouseEvent('click', {bubbles: true})); return true;",
        json!([]),
    )
    .await?;
    let readout = s.wait_for_text("[data-testid=compare-readout]", "tax id", SHORT).await?;
    ensure!(readout.contains('%'), "the readout should give the value: {readout}");
    s.wait_for_text("[data-testid=compare-taxon]", "From all", SHORT).await?;
    s.screenshot("33-compare-taxon-reads").await?;
    // The numbers behind the chart, saved as CSV through the save dialog, are the service's.
    let csv_path = tmp.join("comparison-genus.csv");
    s.click(&s.wait_for("[data-testid=compare-save-csv]", SHORT).await?).await?;
    answer_dialog("Save the numbers", &csv_path).await?;
    s.wait_for_text("[data-testid=compare-note]", "comparison-genus.csv", LONG).await?;
    // A report of the comparison, saved through the save dialog and read back.
    let report_path = tmp.join("comparison-report.pdf");
    s.click(&s.wait_for("[data-testid=compare-report-pdf]", SHORT).await?).await?;
    answer_dialog("Save the report", &report_path).await?;
    s.wait_for_text("[data-testid=compare-report-note]", "Saved the report of", LONG).await?;
    let text = std::process::Command::new("pdftotext").arg(&report_path).arg("-").output()?;
    let text = String::from_utf8_lossy(&text.stdout).replace('\n', " ");
    ensure!(
        text.contains("Comparison of") && text.contains("at genus") && text.contains("Methods"),
        "the comparison's report: {text}"
    );
    s.screenshot("33b-compare-report-saved").await?;
    let csv = std::fs::read_to_string(&csv_path)?;
    let mut lines = csv.lines();
    let header = lines.next().unwrap_or_default();
    ensure!(
        header.starts_with("sample,taxon,tax_id,rank,reads,") && header.ends_with("_percent"),
        "the CSV's header: {header}"
    );
    let mut checked = 0;
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        if f[2].is_empty() {
            continue;
        }
        // The samples of that name (one, unless the same file was uploaded twice).
        let mut given = Vec::new();
        for sample in classified.iter().filter(|r| r["filename"].as_str() == Some(f[0])) {
            let results = s
                .script(
                    "return window.__TAURI_INTERNALS__.invoke('classification', {id: arguments[0]});",
                    json!([sample["classification"]]),
                )
                .await?;
            let row = results["table"].as_array().and_then(|t| t.iter().find(|r| r["tax_id"].as_str() == Some(f[2])));
            given.push(row.map_or(0, |r| r["readcount_w_children"].as_u64().unwrap_or(0)).to_string());
        }
        ensure!(!given.is_empty(), "the CSV names a sample the table does not have: {line}");
        ensure!(given.iter().any(|g| g == f[4]), "{line}: the service gives {} reads of {}", given.join(" or "), f[1]);
        ensure!(f[3] == "genus", "{line}");
        checked += 1;
    }
    ensure!(checked >= 3, "the CSV should hold the top genera of every sample: {csv}");
    let svg_path = tmp.join("comparison-genus.svg");
    s.click(&s.wait_for("[data-testid=compare-save-svg]", SHORT).await?).await?;
    answer_dialog("Save the chart", &svg_path).await?;
    s.wait_for_text("[data-testid=compare-note]", "comparison-genus.svg", LONG).await?;
    let svg = std::fs::read_to_string(&svg_path)?;
    let shown =
        s.script("return document.querySelector('[data-testid=compare-chart] svg').outerHTML;", json!([])).await?;
    for taxon in csv.lines().skip(1).map(|l| l.split(',').nth(1).unwrap_or_default()) {
        ensure!(svg.contains(taxon), "the exported SVG should name {taxon}");
    }
    ensure!(
        shown.as_str().is_some_and(|t| t.contains("genus") && svg.contains("genus")),
        "the SVG is the chart on screen"
    );
    // The same samples' diversity and ordination at that rank; the ordination saved as drawn.
    s.click(&s.wait_for("[data-testid=compare-tab-diversity]", SHORT).await?).await?;
    s.wait_for("[data-testid=alpha-chart] svg circle.point", LONG).await.context("the alpha diversity never drew")?;
    s.wait_for_text("[data-testid=alpha-table]", "Chao1", SHORT).await?;
    axe.check(s, "diversity").await?;
    s.screenshot("34-compare-diversity").await?;
    s.click(&s.wait_for("[data-testid=compare-tab-ordination]", SHORT).await?).await?;
    s.wait_for("[data-testid=ordination-chart] svg circle.point", LONG).await.context("the ordination never drew")?;
    s.screenshot("35-compare-ordination").await?;
    let pcoa_path = tmp.join("ordination.svg");
    s.click(&s.wait_for("[data-testid=ordination-save-svg]", SHORT).await?).await?;
    answer_dialog("Save the chart", &pcoa_path).await?;
    s.wait_for_text("[data-testid=compare-note]", "ordination.svg", LONG).await?;
    let pcoa = std::fs::read_to_string(&pcoa_path)?;
    let points = pcoa.matches("<circle class=\"point\"").count();
    ensure!(
        pcoa.contains("PCoA of Bray–Curtis distances") && pcoa.contains("at genus") && points >= 3,
        "the saved ordination: {pcoa}"
    );
    ensure!(pcoa.contains(&format!(", {points} samples")), "a point for each sample compared: {pcoa}");
    s.click(&s.wait_for("[data-testid=compare-tab-taxa]", SHORT).await?).await?;
    s.wait_for("[data-testid=compare-chart] svg", LONG).await?;
    // The heatmap, clustered, then the same numbers as a table.
    s.set_value("[data-testid=compare-kind]", "heatmap").await?;
    s.click(&s.wait_for("[data-testid=compare-cluster]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=compare-caption]", "clustered: Bray–Curtis", LONG).await?;
    axe.check(s, "comparison heatmap").await?;
    s.screenshot("34-compare-heatmap-clustered").await?;
    s.click(&s.wait_for("[data-testid=compare-show-table]", SHORT).await?).await?;
    s.wait_for("[data-testid=compare-table] tbody tr", SHORT).await?;
    axe.check(s, "comparison table").await?;
    s.screenshot("35-compare-table").await?;

    // L. A live Nanopore run: alert rules set on the Runs screen, a MinKNOW folder watched one
    // sample per batch file, and batches written over time.
    nav("runs").await?;
    s.wait_for("[data-testid=alerts]", SHORT).await?;
    s.click(&s.wait_for("[data-testid=alerts-edit]", SHORT).await?).await?;
    s.set_value("[data-testid=alerts-rules]", "Escherichia coli 5%").await?;
    s.click(&s.wait_for("[data-testid=alerts-save]", SHORT).await?).await?;
    let why = s.wait_for_text("[data-testid=alerts-error]", "no `>=`", SHORT).await?;
    ensure!(why.contains("Escherichia coli 5%"), "a bad rule should be named: {why}");
    s.set_value("[data-testid=alerts-rules]", "Escherichia coli >= 5%\nVibrio cholerae >= 100000 reads").await?;
    s.click(&s.wait_for("[data-testid=alerts-save]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=alerts]", "Escherichia coli >= 5%", SHORT).await?;
    axe.check(s, "runs").await?;
    let minknow = tmp.join("minknow");
    std::fs::create_dir_all(&minknow)?;
    nav("watch").await?;
    s.click(&s.wait_for("[data-testid=watch-add]", SHORT).await?).await?;
    s.set_value("[data-testid=watch-path]", &minknow.display().to_string()).await?;
    s.set_value("[data-testid=watch-layout]", "nanopore").await?;
    s.click(&s.wait_for("[data-testid=watch-per-file]", SHORT).await?).await?;
    s.click(&s.wait_for("[data-testid=watch-save]", SHORT).await?).await?;
    s.wait_for_text("[data-testid=watch-status]", "Watching 2 folders", LONG).await?;
    nav("runs").await?;
    let reads = demo_reads(root)?;
    let all: Vec<&str> = reads.iter().map(|(_, r)| r.as_str()).collect();
    let no_coli: Vec<&str> = reads.iter().filter(|(t, _)| t != "562").map(|(_, r)| r.as_str()).collect();
    let run = minknow.join("20261126_1000_MN1_FAQ1_abcd1234");
    let write_batch = |records: &[&str], of: usize, i: usize, barcode: &str| -> Result<()> {
        let mine: Vec<&str> = records.iter().enumerate().filter(|(k, _)| k % of == i).map(|(_, r)| *r).collect();
        let dir = run.join("fastq_pass").join(barcode);
        std::fs::create_dir_all(&dir)?;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        for r in mine {
            std::io::Write::write_all(&mut e, r.as_bytes())?;
        }
        // Written under another name and moved into place, as MinKNOW finishes a batch.
        let part = dir.join(format!(".FAQ1_pass_{barcode}_abcd1234_{i}.tmp"));
        std::fs::write(&part, e.finish()?)?;
        std::fs::rename(&part, dir.join(format!("FAQ1_pass_{barcode}_abcd1234_{i}.fastq.gz")))?;
        Ok(())
    };
    let classified_of = |barcode: &'static str| async move {
        let text = s
            .script(
                "const g = document.querySelector(`[data-testid=run-group][data-group=${arguments[0]}] [data-testid=group-counts]`);                  return g ? g.innerText : '';",
                json!([barcode]),
            )
            .await?;
        Ok::<String, anyhow::Error>(text.as_str().unwrap_or_default().to_string())
    };
    write_batch(&all, 3, 0, "barcode01")?;
    s.wait_for("[data-testid=live-run]", LONG).await.context("the run never showed on the dashboard")?;
    poll("barcode01's first batch classified", LONG, || async {
        Ok(classified_of("barcode01").await?.contains("1 classified").then_some(()))
    })
    .await?;
    s.screenshot("36-live-run-first-batch").await?;
    write_batch(&all, 3, 1, "barcode01")?;
    write_batch(&no_coli, 2, 0, "barcode02")?;
    poll("barcode01's second batch and barcode02's first", LONG, || async {
        let (a, b) = (classified_of("barcode01").await?, classified_of("barcode02").await?);
        Ok((a.contains("2 classified") && b.contains("1 classified")).then_some(()))
    })
    .await?;
    let points = s
        .script("return document.querySelector('[data-group=barcode01] [data-testid=group-chart]').getAttribute('data-points');", json!([]))
        .await?;
    ensure!(points == json!("2"), "barcode01's chart should have grown to two points: {points}");
    s.screenshot("37-live-run-growing").await?;
    write_batch(&all, 3, 2, "barcode01")?;
    write_batch(&no_coli, 2, 1, "barcode02")?;
    poll("every batch classified", LONG, || async {
        let (a, b) = (classified_of("barcode01").await?, classified_of("barcode02").await?);
        Ok((a.contains("3 classified") && b.contains("2 classified")).then_some(()))
    })
    .await?;
    // One alert: barcode01 (E. coli in every batch), never barcode02 (none) nor the Vibrio rule.
    let alert = s.wait_for_text("[data-group=barcode01] [data-testid=group-alert]", "Escherichia coli", LONG).await?;
    ensure!(!alert.contains("Vibrio"), "{alert}");
    ensure!(s.find("[data-group=barcode02] [data-testid=group-alert]").await?.is_none(), "barcode02 has no E. coli");
    s.wait_for_text("[data-testid=alerts-fired]", "Escherichia coli", SHORT).await?;
    let total = s
        .script(
            "return document.querySelector('[data-group=barcode01] [data-testid=group-reads]').innerText;",
            json!([]),
        )
        .await?;
    ensure!(
        total == json!(mgds_e2e::bench::fmt_count(all.len())),
        "barcode01's reads should sum its three batches: {total}"
    );
    axe.check(s, "run dashboard").await?;
    s.screenshot("38-live-run-alert").await?;
    // MinKNOW writes its final summary: the dashboard says the run finished, and when.
    std::fs::write(
        run.join("final_summary_FAQ1_abcd1234.txt"),
        "instrument=MN1\nsample_id=live\nprotocol_run_id=abcd1234\nfastq_files_in_final_dest=5\n",
    )?;
    s.wait_for_text("[data-testid=live-run-state]", "Finished", LONG)
        .await
        .context("the run never showed as finished")?;
    s.wait_for_text("[data-testid=live-run]", "reads classified · finished ", SHORT).await?;
    s.screenshot("38b-live-run-finished").await?;
    // The alert also marks the samples (the batches that crossed it) in the samples table.
    nav("samples").await?;
    if let Some(clear) = s.find("[data-testid=clear-filters]").await? {
        s.click(&clear).await?;
    }
    s.wait_for("[data-testid=row-alert]", LONG).await.context("no sample row is marked with the alert")?;
    s.screenshot("39-sample-row-alert").await?;

    // M. A FASTQ dropped on the window is checked against the same rules once classified.
    let dropped = tmp.join("dropped-after-rules.fastq.gz");
    std::fs::copy(root.join("assets/demo/reads.fastq.gz"), &dropped)?;
    if let Some(clear) = s.find("[data-testid=clear-finished]").await? {
        s.click(&clear).await?;
    }
    drop_files(s, &[&dropped]).await?;
    s.wait_for("[data-testid=upload-item][data-state=checked]", LONG)
        .await
        .context("the dropped FASTQ was not checked")?;
    s.click(&s.wait_for("[data-testid=upload-start]", SHORT).await?).await?;
    nav("runs").await?;
    s.wait_for_text("[data-testid=alerts-fired]", "dropped-after-rules.fastq.gz", LONG)
        .await
        .context("the dropped sample raised no alert")?;
    s.screenshot("39b-dropped-sample-alert").await?;
    nav("samples").await?;
    s.wait_for_text("[data-testid=samples-table] tbody", "dropped-after-rules.fastq.gz", LONG)
        .await
        .context("the dropped sample is not in the table")?;
    let row = s
        .script(
            "const r = [...document.querySelectorAll('[data-testid=samples-table] tbody tr[data-id]')]                  .find(r => r.innerText.includes('dropped-after-rules.fastq.gz'));              return r ? !!r.querySelector('[data-testid=row-alert]') : null;",
            json!([]),
        )
        .await?;
    ensure!(row == json!(true), "the dropped sample's row should be marked with its alert: {row}");
    Ok(())
}

/// The demo reads (`assets/demo`), each with the taxon it was simulated from.
fn demo_reads(root: &Path) -> Result<Vec<(String, String)>> {
    use std::io::BufRead;
    let dir = root.join("assets/demo");
    let truth: std::collections::HashMap<String, String> = std::fs::read_to_string(dir.join("truth.tsv"))?
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Some((f.first()?.to_string(), f.get(1)?.to_string()))
        })
        .collect();
    let gz = flate2::read::MultiGzDecoder::new(std::fs::File::open(dir.join("reads.fastq.gz"))?);
    let lines: Vec<String> = std::io::BufReader::new(gz).lines().collect::<Result<_, _>>()?;
    lines
        .chunks(4)
        .map(|r| {
            let name = r[0].get(1..).and_then(|n| n.split_whitespace().next()).unwrap_or_default().to_string();
            let taxon = truth.get(&name).with_context(|| format!("{name} is not in truth.tsv"))?;
            Ok((taxon.clone(), r.join("\n") + "\n"))
        })
        .collect()
}

/// A lab's service that signs in with the lab's accounts (a real OpenID provider, npm's
/// `oidc-provider`): the Profiles screen signs in through the system browser (a scripted one,
/// signing in as Bob) and a loopback listener, keeps the provider's refresh token in the keychain,
/// and the app works as Bob; then back to the local service.
async fn single_sign_on(s: &Session, app: &Path) -> Result<()> {
    const RESOURCE: &str = "https://mgds.test/api";
    let accounts = json!({"bob-sub": {"email": "bob@lab.example", "email_verified": true, "groups": ["lab"]}});
    let mut provider =
        TestProvider::start(json!({"port": 0, "accounts": accounts, "resource": RESOURCE, "clients": []})).await;
    let data = tempfile::tempdir()?;
    let port = mgds_e2e::free_port()?;
    let url = format!("http://127.0.0.1:{port}");
    let mut serve = std::process::Command::new(app.with_file_name("mgds"))
        .arg("--data-dir")
        .arg(data.path())
        .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--no-demo", "--workers", "0"])
        .args(["--sso-issuer", &provider.issuer, "--sso-client-id", "mgds-web"])
        .args(["--sso-native-client-id", "mgds-desktop", "--sso-audience", RESOURCE, "--sso-name", "Lab account"])
        .args(["--sso-scopes", "openid email profile groups", "--sso-place", "groups:lab=Microbiology:member"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .context("cannot start mgds serve (build it with `cargo build -p mgds-cli`)")?;
    let outcome = async {
        poll("the lab's service to answer", LONG, || async {
            Ok(reqwest::get(format!("{url}/api/v1/health")).await.ok().filter(|r| r.status().is_success()).map(|_| ()))
        })
        .await?;
        provider
            .restart(json!({"clients": [{"client_id": "mgds-desktop", "application_type": "native",
                "token_endpoint_auth_method": "none", "redirect_uris": ["http://127.0.0.1/callback"],
                "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]}]}))
            .await;
        s.click(&s.wait_for("[data-testid=nav-profiles]", SHORT).await?).await?;
        s.set_value("[data-testid=profile-name]", "lab-sso").await?;
        s.set_value("[data-testid=profile-url]", &url).await?;
        s.click(&s.wait_for("[data-testid=profile-sso]", SHORT).await?).await?;
        s.wait_for_text("[data-testid=profiles]", "single sign-on", LONG)
            .await
            .context("the profile signed in by single sign-on was not added")?;
        s.wait_for_text("[data-testid=connection]", "lab-sso", SHORT).await?;
        s.screenshot("40-single-sign-on-profile").await?;
        // The app works as Bob: the organisation his group put him in, as a member.
        s.click(&s.wait_for("[data-testid=nav-organization]", LONG).await?).await?;
        let role = s.wait_for_text("[data-testid=org-role]", "member of", LONG).await?;
        ensure!(role.contains("Microbiology"), "{role}");
        s.screenshot("41-single-sign-on-organisation").await?;
        s.click(&s.wait_for("[data-testid=nav-profiles]", SHORT).await?).await?;
        s.click(&s.wait_for("[data-testid=use-local]", SHORT).await?).await?;
        s.wait_for_text("[data-testid=connection]", "Local service", LONG).await?;
        Ok(())
    }
    .await;
    let _ = serve.kill();
    let _ = serve.wait();
    outcome
}

/// A second start on the same data folder only brings the running window forward and ends; a
/// start on another data folder (a side-by-side install) is an app of its own.
async fn second_starts(s: &Session, app: &Path, env: &[(&str, std::ffi::OsString)]) -> Result<()> {
    let quiet = || std::process::Stdio::null();
    let mut second =
        std::process::Command::new(app).envs(env.iter().cloned()).stdout(quiet()).stderr(quiet()).spawn()?;
    let status = poll("the second start to end", SHORT, || {
        let ended = second.try_wait();
        async move { Ok(ended?) }
    })
    .await?;
    ensure!(status.success(), "a second start should hand over to the running app and end: {status}");
    s.wait_for_text("[data-testid=connection]", "Local service", SHORT).await.context("the first window stays")?;

    let other = FreshHome::new()?;
    let mut side = std::process::Command::new(app).envs(other.env(&[])).stdout(quiet()).stderr(quiet()).spawn()?;
    // Running beside the first means getting as far as starting its own local service (its
    // database appears in its data folder); handing over means ending.
    let database = other.data_dir().join("mgds.sqlite3");
    let outcome = poll("the app on another data folder to start its service, or to end", LONG, || {
        let ended = side.try_wait();
        let started = database.exists();
        async move {
            Ok(match ended? {
                Some(status) => Some(Err(status)),
                None if started => Some(Ok(())),
                None => None,
            })
        }
    })
    .await;
    let _ = side.kill();
    let _ = side.wait();
    if let Err(status) = outcome? {
        bail!("an app on another data folder should run beside the first, but it ended: {status}");
    }
    Ok(())
}

/// Writes `n` read pairs (Illumina-style names, `1:`/`2:` in the comment) as two FASTQ files.
fn write_pair(r1: &Path, r2: &Path, n: usize) -> Result<()> {
    let (mut a, mut b) = (String::new(), String::new());
    for i in 0..n {
        let seq =
            |k: usize| -> String { (0..100).map(|j| b"ACGT"[(i * 31 + j * 7 + k + j / 3) % 4] as char).collect() };
        let q = "F".repeat(100);
        a.push_str(&format!("@M0:1:FC:1:1:{i}:1 1:N:0:1\n{}\n+\n{q}\n", seq(0)));
        b.push_str(&format!("@M0:1:FC:1:1:{i}:1 2:N:0:1\n{}\n+\n{q}\n", seq(1)));
    }
    std::fs::write(r1, a)?;
    std::fs::write(r2, b)?;
    Ok(())
}
