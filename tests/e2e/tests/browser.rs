//! MGDS in a real browser: the real `mgds serve` serving its web UI, and Debian's Chromium
//! (headless) driven through `chromedriver`: a wrong password refused, signing in, the samples
//! that `mgds upload` sent (classified by the service) in the samples table, a sample's page with
//! its abundance chart, the chart, table and reads saved to the browser's downloads (the reads
//! byte for byte), the two samples compared and the numbers saved, the other screens, a document
//! shared with a colleague, the account with its sessions, a second browser signed in and then
//! signed out from the first, a new API key made with the password (and the old one refused), a
//! forged write from another site and one without the token refused, the password changed
//! (every session ends) and signing in with the new one, signing out everywhere, signing out,
//! and the colleague signing in and downloading the shared document. Every screen is checked
//! with axe-core; screenshots go to `target/e2e-screenshots/browser-*.png`.
//!
//! Needs `MGDS_BIN` (the `mgds` binary) and `CHROMEDRIVER`; `test.sh` provides both.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use mgds_e2e::{Axe, Driver, Session, env_path, free_port, poll, workspace_root};
use mgds_oidc::testing::TestProvider;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(30);
const PASSWORD: &str = "correct horse battery";
const SHEET: &str = "sample,barcode,site\ngut_day1,barcode01,ward 3\ngut_day2,barcode02,ward 3\n";

/// The demo reads the test uploads.
fn root_reads() -> PathBuf {
    workspace_root().join("assets/demo/reads.fastq.gz")
}

/// Where the screenshots go: `MGDS_E2E_SCREENSHOTS`, or `target/e2e-screenshots`.
fn screenshots_dir(root: &Path) -> PathBuf {
    std::env::var_os("MGDS_E2E_SCREENSHOTS").map(PathBuf::from).unwrap_or_else(|| root.join("target/e2e-screenshots"))
}

/// `mgds serve` on a data folder of its own, stopped on drop.
struct Served {
    child: Child,
    url: String,
    bin: PathBuf,
    data: tempfile::TempDir,
}

impl Served {
    /// `mgds serve` with `extra` options.
    fn start_with(bin: &Path, extra: &[String]) -> Result<Served> {
        let data = tempfile::tempdir()?;
        let port = free_port()?;
        let child = Command::new(bin)
            .args(["--data-dir"])
            .arg(data.path())
            .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--workers", "1"])
            // The webhooks of the tests go to receivers on this machine.
            .args(["--webhook-allow-network", "127.0.0.0/8"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .context("cannot start mgds serve")?;
        Ok(Served { child, url: format!("http://127.0.0.1:{port}"), bin: bin.to_path_buf(), data })
    }

    /// `mgds serve`, once it answers (a first start installs the demo references).
    async fn ready(bin: &Path) -> Result<Served> {
        Served::ready_with(bin, &[]).await
    }

    /// [`Served::start_with`], once it answers.
    async fn ready_with(bin: &Path, extra: &[String]) -> Result<Served> {
        let served = Served::start_with(bin, extra)?;
        let url = served.url.clone();
        poll("mgds serve to answer", Duration::from_secs(120), || async {
            Ok(reqwest::get(format!("{url}/api/v1/health")).await.ok().filter(|r| r.status().is_success()).map(|_| ()))
        })
        .await?;
        Ok(served)
    }

    /// `mgds admin user create EMAIL --password`, the password on standard input; the API key.
    fn user(&self, email: &str, password: &str) -> Result<String> {
        self.user_as(email, password, "member")
    }

    /// [`Served::user`] with a role in the organisation.
    fn user_as(&self, email: &str, password: &str, role: &str) -> Result<String> {
        let mut child = Command::new(&self.bin)
            .args(["--data-dir"])
            .arg(self.data.path())
            .args(["admin", "user", "create", email, "--password", "--organization", "Microbiology", "--role", role])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        writeln!(child.stdin.take().context("stdin")?, "{password}")?;
        let out = child.wait_with_output()?;
        ensure!(out.status.success(), "mgds admin user create {email} failed");
        Ok(String::from_utf8(out.stdout)?.trim().to_string())
    }
}

impl Served {
    /// `mgds upload FILE` with `key`, as a colleague with the command line (or the desktop)
    /// would: a sample the browser then shows.
    fn upload(&self, key: &str, file: &Path) -> Result<()> {
        self.cli(key, &["upload"], file)
    }

    /// `mgds db ARGS` on the service's data folder, as its administrator.
    fn db(&self, args: &[&str]) -> Result<()> {
        let out = Command::new(&self.bin)
            .args(["--data-dir"])
            .arg(self.data.path())
            .arg("db")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .status()?;
        ensure!(out.success(), "mgds db {} failed", args.join(" "));
        Ok(())
    }

    /// `mgds ARGS` with `key`, against the service: what it prints.
    fn cli_out(&self, key: &str, args: &[&str]) -> Result<String> {
        let out = Command::new(&self.bin)
            .args(["--base-url", &self.url, "--api-key", key])
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()?;
        ensure!(out.status.success(), "mgds {} failed", args.join(" "));
        Ok(String::from_utf8(out.stdout)?)
    }

    /// `mgds ARGS FILE` with `key`, against the service.
    fn cli(&self, key: &str, args: &[&str], file: &Path) -> Result<()> {
        let out = Command::new(&self.bin)
            .args(["--base-url", &self.url, "--api-key", key])
            .args(args)
            .arg(file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .status()?;
        ensure!(out.success(), "mgds {} {} failed", args.join(" "), file.display());
        Ok(())
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether `key` opens the account on the service.
async fn key_works(url: &str, key: &str) -> Result<bool> {
    let r = reqwest::Client::new().get(format!("{url}/api/v1/account")).basic_auth(key, Some("")).send().await?;
    Ok(r.status().is_success())
}

/// Opens the Account screen from the main menu.
async fn open_account(s: &Session) -> Result<()> {
    s.click(&s.wait_for("[data-testid=nav-account]", WAIT).await?).await?;
    s.wait_for_text("[data-testid=account-email]", "ana@lab.example.org", WAIT).await?;
    Ok(())
}

/// Waits until the page shows Ana signed in.
async fn signed_in_as_ana(s: &Session) -> Result<()> {
    s.wait_for_text("[data-testid=connection]", "ana@lab.example.org", WAIT).await?;
    Ok(())
}

async fn sign_in(s: &Session, email: &str, password: &str) -> Result<()> {
    s.wait_for("#sign-in-title", WAIT).await?;
    s.set_value("input[type=email]", email).await?;
    s.set_value("input[autocomplete=current-password]", password).await?;
    let button = s.wait_for("button[type=submit]", WAIT).await?;
    s.click(&button).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_browser_signs_in_and_keeps_its_account() -> Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let bin = env_path("MGDS_BIN")?;
    let root = workspace_root();
    // The first start installs the demo references (for the classifications below).
    let served = Served::ready(&bin).await?;
    let old_key = served.user("ana@lab.example.org", PASSWORD)?;
    // A sample of reads uploaded from the command line; the service classifies it. The
    // browser uploads a pair of read files and a document below.
    let reads = tempfile::tempdir()?;
    let file = reads.path().join("gut_day1.fastq.gz");
    std::fs::copy(root.join("assets/demo/reads.fastq.gz"), &file)?;
    served.upload(&old_key, &file)?;
    write_pair(&root_reads(), &reads.path().join("gut_day2_R1.fastq.gz"), &reads.path().join("gut_day2_R2.fastq.gz"))?;
    std::fs::write(reads.path().join("sample-sheet.csv"), SHEET)?;
    // A colleague to share the document with.
    served.user("bo@lab.example.org", PASSWORD)?;
    let downloads = tempfile::tempdir()?;
    let saved = downloads.path();
    in_two_browsers("browser-failure", saved, async |a, b, axe| {
        scenario(a, b, axe, &served, &old_key, saved, reads.path()).await
    })
    .await
}

/// Runs `scenario` in two headless Chromium windows (`a` and `b`, one downloads folder) with
/// axe-core; on failure, screenshots of both (`{failure}`, `{failure}-b`) and `a`'s text.
async fn in_two_browsers(
    failure: &str,
    downloads: &Path,
    scenario: impl AsyncFnOnce(&Session, &Session, &Axe) -> Result<()>,
) -> Result<()> {
    let chromedriver = env_path("CHROMEDRIVER")?;
    let root = workspace_root();
    let screenshots = screenshots_dir(&root);
    let driver = Driver::chromium(&chromedriver).await?;
    let a = Session::chromium(&driver, screenshots.clone(), downloads).await?;
    let b = Session::chromium(&driver, screenshots, downloads).await?;
    let axe = Axe::new(&root)?;
    let outcome = scenario(&a, &b, &axe).await;
    if let Err(e) = &outcome {
        let _ = a.screenshot(failure).await;
        let _ = b.screenshot(&format!("{failure}-b")).await;
        let text = a.script("return document.body.innerText;", json!([])).await;
        eprintln!(
            "error: {e:#}\nthe page showed:\n{}",
            text.map(|t| t.as_str().unwrap_or_default().to_string()).unwrap_or_default()
        );
    }
    let _ = b.close().await;
    let _ = a.close().await;
    drop(driver);
    outcome
}

/// Clicks the button whose text starts with `label`, as a person does (a WebDriver click, which
/// the browser takes as the user's gesture, as it needs for a download).
async fn click_button(s: &Session, label: &str) -> Result<()> {
    let marked = s
        .script(
            "document.querySelectorAll('[data-e2e-click]').forEach(e => e.removeAttribute('data-e2e-click')); \
             const b = [...document.querySelectorAll('button')].find(b => b.innerText.trim().startsWith(arguments[0])); \
             if (!b) return false; b.setAttribute('data-e2e-click', ''); return true;",
            json!([label]),
        )
        .await?;
    ensure!(marked == json!(true), "no button {label:?}");
    let button = s.wait_for("[data-e2e-click]", WAIT).await?;
    s.click(&button).await
}

/// Waits until a file whose name ends with `suffix` is whole in `dir` (Chromium writes
/// `.crdownload` first); answers its path.
async fn downloaded(dir: &Path, suffix: &str) -> Result<PathBuf> {
    poll(&format!("a downloaded file ending in {suffix}"), WAIT, || async {
        Ok(std::fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.to_string_lossy().ends_with(suffix) && p.metadata().is_ok_and(|m| m.len() > 0)))
    })
    .await
}

/// A pair of read files from the single reads of `from`: read 1 as it is, read 2 its reverse
/// complement, named as Illumina names mates (` 1:N:0:1`, ` 2:N:0:1`).
fn write_pair(from: &Path, r1: &Path, r2: &Path) -> Result<()> {
    use std::io::{BufRead, BufReader};
    let text = BufReader::new(flate2::read::GzDecoder::new(std::fs::File::open(from)?));
    let gz = |p: &Path| -> Result<_> {
        Ok(flate2::write::GzEncoder::new(std::fs::File::create(p)?, flate2::Compression::fast()))
    };
    let (mut one, mut two) = (gz(r1)?, gz(r2)?);
    let lines: Vec<String> = text.lines().collect::<std::io::Result<_>>()?;
    for rec in lines.chunks(4) {
        let [head, seq, _, qual] = rec else { break };
        let id = head.split_whitespace().next().unwrap_or(head);
        let rc: String = seq
            .bytes()
            .rev()
            .map(|b| match b {
                b'A' => 'T',
                b'C' => 'G',
                b'G' => 'C',
                b'T' => 'A',
                _ => 'N',
            })
            .collect();
        let q2: String = qual.chars().rev().collect();
        write!(one, "{id} 1:N:0:1\n{seq}\n+\n{qual}\n")?;
        write!(two, "{id} 2:N:0:1\n{rc}\n+\n{q2}\n")?;
    }
    one.finish()?;
    two.finish()?;
    Ok(())
}

/// Gives `paths` to the page's file input `kind` (`files` or `documents`), as choosing them
/// in the browser's file dialog does.
async fn choose_files(s: &Session, kind: &str, paths: &[PathBuf]) -> Result<()> {
    let input = s.wait_for(&format!("input[data-testid=browser-pick-{kind}]"), WAIT).await?;
    let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    s.type_text(&input, &list.join("\n")).await
}

async fn scenario(
    a: &Session,
    b: &Session,
    axe: &Axe,
    served: &Served,
    old_key: &str,
    downloads: &Path,
    files: &Path,
) -> Result<()> {
    let url = &served.url;
    // The sign-in page, and a wrong password refused with the service's words.
    a.navigate(&format!("{url}/")).await?;
    a.wait_for("#sign-in-title", WAIT).await?;
    axe.check(a, "browser sign-in").await?;
    a.screenshot("browser-01-sign-in").await?;
    sign_in(a, "ana@lab.example.org", "not my password").await?;
    a.wait_for_text("[data-testid=sign-in-problem]", "not right", WAIT).await?;
    a.screenshot("browser-02-wrong-password").await?;

    // Signed in: the sample the command line uploaded, in the same table as the desktop's.
    sign_in(a, "ana@lab.example.org", PASSWORD).await?;
    a.wait_for_text("[data-testid=samples-table] tbody", "gut_day1.fastq.gz", WAIT).await?;
    a.wait_for_text("[data-testid=connection]", "ana@lab.example.org", WAIT).await?;
    ensure!(a.find("[data-testid=nav-watch]").await?.is_none(), "watched folders are the desktop's");
    axe.check(a, "browser samples").await?;
    a.screenshot("browser-03a-samples").await?;

    // A pair of read files chosen in the browser: checked from their first bytes, found to be a
    // pair, joined, sent in parts to the store, and made one sample by the service. A file that
    // is not reads is refused with the reason, before anything is sent.
    std::fs::write(files.join("notes_R1.fastq"), "%PDF-1.4 not reads\n")?;
    choose_files(
        a,
        "files",
        &[files.join("gut_day2_R1.fastq.gz"), files.join("gut_day2_R2.fastq.gz"), files.join("notes_R1.fastq")],
    )
    .await?;
    a.wait_for("[data-testid=upload-panel] [data-testid=join-pair]", WAIT).await.context("the pair was not found")?;
    a.wait_for_text("[data-testid=upload-panel] [data-testid=problem]", "does not start with @ (FASTQ)", WAIT).await?;
    a.click(&a.wait_for("[data-testid=join-pair]", WAIT).await?).await?;
    a.wait_for("[data-testid=pair-joined]", WAIT).await?;
    axe.check(a, "browser uploads").await?;
    a.screenshot("browser-03a-upload-checked").await?;
    a.click(&a.wait_for("[data-testid=upload-start]", WAIT).await?).await?;
    a.wait_for("[data-testid=upload-item][data-state=done]", Duration::from_secs(60))
        .await
        .context("the pair's upload never finished")?;
    a.screenshot("browser-03a-uploaded").await?;
    a.wait_for_text("[data-testid=samples-table] tbody", "gut_day2_interleaved.fastq.gz", WAIT).await?;
    // A sample's page, its classification drawn once the service has classified both samples.
    poll("both classifications to finish", Duration::from_secs(120), || async {
        let list: serde_json::Value = reqwest::Client::new()
            .get(format!("{url}/api/v1/classifications"))
            .basic_auth(old_key, Some(""))
            .send()
            .await?
            .json()
            .await?;
        let done = list.as_array().is_some_and(|l| {
            l.len() == 2 && l.iter().all(|c| c["complete"] == json!(true) && c["success"] == json!(true))
        });
        Ok(done.then_some(()))
    })
    .await?;
    // The pair is one sample of both files' reads, interleaved.
    let samples: serde_json::Value = reqwest::Client::new()
        .get(format!("{url}/api/v1/samples"))
        .basic_auth(old_key, Some(""))
        .send()
        .await?
        .json()
        .await?;
    let pair = samples
        .as_array()
        .and_then(|l| l.iter().find(|s| s["filename"] == json!("gut_day2_interleaved.fastq.gz")))
        .context("no sample gut_day2_interleaved.fastq.gz")?;
    // Both files' reads, read 1 then read 2 of each pair.
    let id = pair["$uri"].as_str().and_then(|u| u.rsplit('/').next()).context("the pair's id")?;
    let address: serde_json::Value = reqwest::Client::new()
        .post(format!("{url}/api/v1/samples/{id}/download_uri"))
        .basic_auth(old_key, Some(""))
        .json(&json!({}))
        .send()
        .await?
        .json()
        .await?;
    let gz = reqwest::get(address["download_uri"].as_str().context("no download_uri")?).await?.bytes().await?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(&gz[..]), &mut text)?;
    let heads: Vec<&str> = text.lines().step_by(4).collect();
    let demo_reads = {
        let mut t = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::MultiGzDecoder::new(std::fs::File::open(root_reads())?),
            &mut t,
        )?;
        t.lines().count() / 4
    };
    ensure!(heads.len() == 2 * demo_reads, "the pair's sample has {} reads, not {}", heads.len(), 2 * demo_reads);
    ensure!(
        heads[0].ends_with(" 1:N:0:1") && heads[1].ends_with(" 2:N:0:1"),
        "the pair's reads are interleaved read 1 first: {:?}",
        &heads[..2]
    );
    a.navigate(&format!("{url}/")).await?;
    poll("a row of gut_day1.fastq.gz", WAIT, || async {
        let marked = a
            .script(
                "const td = [...document.querySelectorAll('[data-testid=samples-table] tbody tr[data-id] td.name')]\
                 .find(td => td.innerText.includes('gut_day1')); if (td) td.setAttribute('data-e2e-row', ''); return !!td;",
                json!([]),
            )
            .await?;
        Ok((marked == json!(true)).then_some(()))
    })
    .await?;
    let row = a.wait_for("[data-e2e-row]", WAIT).await?;
    a.click(&row).await?;
    a.wait_for("[data-testid=chart] svg rect.bar", WAIT)
        .await
        .context("the sample's abundance chart never appeared")?;
    axe.check(a, "browser sample").await?;
    a.screenshot("browser-03b-sample").await?;
    // Its chart, table and reads saved by the browser into its downloads folder.
    click_button(a, "Save chart as SVG").await?;
    let svg = std::fs::read_to_string(downloaded(downloads, ".svg").await?)?;
    ensure!(
        svg.starts_with("<svg") && svg.contains("Klebsiella pneumoniae"),
        "the chart saved: {}",
        &svg[..svg.len().min(200)]
    );
    click_button(a, "Save chart as PNG").await?;
    let png = std::fs::read(downloaded(downloads, ".png").await?)?;
    ensure!(png.starts_with(b"\x89PNG"), "the chart saved as PNG");
    click_button(a, "Save table as CSV").await?;
    let csv = std::fs::read_to_string(downloaded(downloads, "_taxa.csv").await?)?;
    ensure!(csv.lines().count() > 5 && csv.contains("Escherichia coli"), "the table saved: {csv}");
    click_button(a, "Save the reads").await?;
    let reads = std::fs::read(downloaded(downloads, ".fastq.gz").await?)?;
    ensure!(reads == std::fs::read(root_reads())?, "the reads saved are the reads uploaded");
    // The sample's hierarchy: a click on a segment puts its clade at the centre, with the way
    // back; the hierarchy saved as Krona's text.
    a.wait_for("[data-testid=sunburst-chart] svg path.segment[data-tax-id]", WAIT)
        .await
        .context("the sunburst never drew")?;
    let clicked = a
        .script(
            "const s = [...document.querySelectorAll('[data-testid=sunburst-chart] path.segment[data-tax-id]')]\
             .find(p => (p.querySelector('title')?.textContent || '').startsWith('Bacteria (')); \
             if (!s) return false; s.dispatchEvent(new MouseEvent('click', {bubbles: true})); return true;",
            json!([]),
        )
        .await?;
    ensure!(clicked == json!(true), "no Bacteria segment in the sunburst");
    a.wait_for_text("[data-testid=sunburst] .crumbs", "cellular organisms", WAIT)
        .await
        .context("zooming into Bacteria")?;
    a.wait_for("[data-testid=sunburst-chart] circle.centre[data-tax-id]", WAIT).await?;
    axe.check(a, "browser sunburst").await?;
    a.script("document.querySelector('[data-testid=sunburst]').scrollIntoView();", json!([])).await?;
    a.screenshot("browser-03b-sunburst").await?;
    click_button(a, "Krona text").await?;
    let krona = std::fs::read_to_string(downloaded(downloads, "_krona.tsv").await?)?;
    ensure!(
        krona.lines().any(|l| l.contains("\tBacteria\t") && l.ends_with("\tEscherichia coli")),
        "the Krona text saved: {krona}"
    );
    // The sample's read quality: the service's figures and verdict, its chart, the figures
    // saved as CSV.
    a.wait_for("[data-testid=qc-chart] svg", WAIT).await.context("the quality chart never drew")?;
    a.wait_for_text("[data-testid=qc-summary]", " reads", WAIT).await?;
    a.wait_for("[data-testid=qc-verdict]", WAIT).await?;
    a.script("document.querySelector('[data-testid=qc]').scrollIntoView();", json!([])).await?;
    axe.check(a, "browser read quality").await?;
    a.screenshot("browser-03b-quality").await?;
    click_button(a, "Figures as CSV").await?;
    let qc = std::fs::read_to_string(downloaded(downloads, "_qc.csv").await?)?;
    ensure!(
        qc.starts_with("sample_id,sample,passed,reads,") && qc.contains("# Threshold: at least 1000 reads"),
        "the quality figures saved: {qc}"
    );
    // A panel run from the sample page: it shows up, runs, and opens once the page (which asks
    // again while it runs) sees it complete.
    a.click(&a.wait_for("[data-testid=run-analysis]", WAIT).await?).await?;
    a.wait_for("[data-testid=run-form]", WAIT).await?;
    ensure!(a.choose_job("Panel").await?, "no panel job offered in the browser");
    a.wait_for_text("[data-testid=run-form]", "takes no settings", WAIT).await?;
    a.click(&a.wait_for("[data-testid=run-start]", WAIT).await?).await?;
    a.open_when_complete("Panel", Duration::from_secs(120)).await?;
    a.wait_for_text("[data-testid=panel]", "4 of 10 found", WAIT).await.context("the panel's markers")?;
    a.screenshot("browser-03b-panel").await?;
    // Both samples compared side by side.
    a.navigate(&format!("{url}/")).await?;
    a.wait_for_text("[data-testid=samples-table] tbody", "gut_day1.fastq.gz", WAIT).await?;
    a.click(&a.wait_for("[data-testid=select-all]", WAIT).await?).await?;
    a.click(&a.wait_for("[data-testid=bulk-compare]", WAIT).await?).await?;
    a.wait_for("[data-testid=compare-chart] svg", Duration::from_secs(120))
        .await
        .context("the comparison never drew")?;
    a.wait_for_text("[data-testid=compare-caption]", "species rank", WAIT).await?;
    axe.check(a, "browser comparison").await?;
    a.screenshot("browser-03c-compare").await?;
    click_button(a, "Save numbers as CSV").await?;
    let numbers = std::fs::read_to_string(downloaded(downloads, "_bars.csv").await?)?;
    ensure!(
        numbers.contains("gut_day1.fastq.gz") && numbers.contains("gut_day2_interleaved.fastq.gz"),
        "the comparison saved: {numbers}"
    );
    // A taxon's reads from the command line's sample, made by the service as it sends them.
    let marked = a
        .script(
            "const b = [...document.querySelectorAll('[data-testid=compare-chart] [data-tax-id][data-sample]')]\
             .find(e => e.getAttribute('data-tax-id') && e.getBoundingClientRect().width > 2); \
             if (!b) return null; b.setAttribute('data-e2e-bar', ''); return b.getAttribute('data-tax-id');",
            json!([]),
        )
        .await?;
    ensure!(marked.is_string(), "no bar of a taxon in the comparison");
    a.click(&a.wait_for("[data-e2e-bar]", WAIT).await?).await?;
    a.wait_for("[data-testid=compare-taxon]", WAIT).await?;
    a.screenshot("browser-03c-compare-taxon").await?;
    a.click(&a.wait_for("[data-testid=taxon-reads-download]", WAIT).await?).await?;
    let subset = downloaded(downloads, ".filtered.fastq.gz").await?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(std::fs::File::open(&subset)?), &mut text)?;
    let mut all = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::MultiGzDecoder::new(std::fs::File::open(root_reads())?),
        &mut all,
    )?;
    // By read name: the pair's sample holds each read twice (read 1 and read 2).
    let name = |h: &str| h.split_whitespace().next().unwrap_or_default().to_string();
    let known: std::collections::HashSet<String> = all.lines().step_by(4).map(name).collect();
    let got: Vec<String> = text.lines().step_by(4).map(name).collect();
    ensure!(
        !got.is_empty() && got.len() < 2 * known.len() && got.iter().all(|h| known.contains(h)),
        "the taxon's reads ({} of {}) are some of the sample's reads",
        got.len(),
        known.len()
    );

    // Their diversity and ordination, drawn by the service as the app draws them; the distance
    // matrix saved.
    a.click(&a.wait_for("[data-testid=compare-tab-diversity]", WAIT).await?).await?;
    a.wait_for("[data-testid=alpha-chart] svg circle.point", Duration::from_secs(60))
        .await
        .context("the alpha diversity never drew")?;
    a.wait_for_text("[data-testid=alpha-table]", "Shannon", WAIT).await?;
    axe.check(a, "browser diversity").await?;
    a.screenshot("browser-03c-diversity").await?;
    a.click(&a.wait_for("[data-testid=compare-tab-ordination]", WAIT).await?).await?;
    a.wait_for("[data-testid=ordination-chart] svg circle.point", WAIT).await.context("the ordination never drew")?;
    a.wait_for_text("[data-testid=diversity-tests]", "Bray–Curtis distances", WAIT).await?;
    axe.check(a, "browser ordination").await?;
    a.screenshot("browser-03c-ordination").await?;
    click_button(a, "Save distances as CSV").await?;
    let distances = std::fs::read_to_string(downloaded(downloads, "_distances_braycurtis.csv").await?)?;
    let rows: Vec<&str> = distances.lines().filter(|l| !l.starts_with('#')).collect();
    ensure!(rows.len() == 3 && distances.contains("# Bray–Curtis distances on"), "the distances saved: {distances}");
    // A report of the comparison: the PDF saved by the browser, read back; then kept as a
    // document of the service.
    a.click(&a.wait_for("[data-testid=compare-report-pdf]", WAIT).await?).await?;
    let report = downloaded(downloads, "_samples_species.pdf").await.context("the comparison's report")?;
    let text = std::process::Command::new("pdftotext").arg(&report).arg("-").output()?;
    let text = String::from_utf8_lossy(&text.stdout).replace('\n', " ");
    ensure!(
        text.contains("Comparison of 2 samples") && text.contains("gut_day1.fastq.gz") && text.contains("Methods"),
        "the comparison's report: {text}"
    );
    a.click(&a.wait_for("[data-testid=compare-report-keep]", WAIT).await?).await?;
    a.wait_for_text(
        "[data-testid=compare-report-note]",
        "Kept the report of 2 samples as the document",
        Duration::from_secs(60),
    )
    .await
    .context("the report kept as a document")?;
    a.screenshot("browser-03c-compare-report").await?;
    // The samples' read quality side by side.
    a.click(&a.wait_for("[data-testid=compare-tab-qc]", WAIT).await?).await?;
    a.wait_for("[data-testid=qc-table] tbody tr:nth-child(2)", WAIT).await.context("the quality table never came")?;
    a.wait_for_text("[data-testid=qc-caption]", "Figures counted by the service", WAIT).await?;
    axe.check(a, "browser quality comparison").await?;
    a.screenshot("browser-03c-quality").await?;
    // No sample here is marked a negative control: the controls tab says how to mark one.
    a.click(&a.wait_for("[data-testid=compare-tab-controls]", WAIT).await?).await?;
    a.wait_for_text("[data-testid=contaminants-problem]", "custom metadata field \"control\"", WAIT)
        .await
        .context("the controls tab without controls")?;
    a.click(&a.wait_for("[data-testid=compare-tab-taxa]", WAIT).await?).await?;

    // The database names a host (E. coli here: the demo taxonomy has no human): a sample
    // classified from then on offers a copy without the host's reads, which the service writes
    // as a new sample.
    served.db(&["host", "demo-bacteria", "562"])?;
    let host_sample = files.join("swab.fastq.gz");
    std::fs::copy(root_reads(), &host_sample)?;
    served.upload(old_key, &host_sample)?;
    a.navigate(&format!("{url}/")).await?;
    a.wait_for_text("[data-testid=samples-table] tbody", "swab.fastq.gz", WAIT).await?;
    let opened = a
        .script(
            "const td = [...document.querySelectorAll('[data-testid=samples-table] tbody tr[data-id] td.name')]\
             .find(td => td.innerText.includes('swab.fastq.gz')); if (td) td.click(); return !!td;",
            json!([]),
        )
        .await?;
    ensure!(opened == json!(true), "no row of swab.fastq.gz");
    let copy =
        a.wait_for("[data-testid=remove-host]", Duration::from_secs(120)).await.context("no host-free copy offered")?;
    a.click(&copy).await?;
    a.wait_for_text("[data-testid=copy-note]", "is being made as swab.host_removed.fastq.gz", WAIT)
        .await
        .context("the copy without the host's reads")?;
    axe.check(a, "browser host-free copy").await?;
    a.screenshot("browser-03c-host-removed").await?;
    // The copy opens from the note, and is written and classified by the service.
    a.click(&a.wait_for("[data-testid=open-copy]", WAIT).await?).await?;
    a.wait_for_text("[data-testid=sample-title]", "swab.fastq.gz (host reads removed)", WAIT)
        .await
        .context("the copy's page")?;
    a.wait_for("[data-testid=chart] svg rect.bar", Duration::from_secs(120))
        .await
        .context("the copy was never written and classified")?;
    a.navigate(&format!("{url}/")).await?;
    a.wait_for_text("[data-testid=samples-table] tbody", "swab.host_removed.fastq.gz", WAIT)
        .await
        .context("the copy in the samples list")?;

    // Negative controls: the swab is a blank of run R-7, its copy a sample of the same run. The
    // controls job, run from the blank's page (a threshold of 0.6 calls the taxa found in
    // every sample of the run), scores the run; the copy's page then marks what it flagged.
    let listed: serde_json::Value =
        serde_json::from_str(&served.cli_out(old_key, &["samples", "list", "--all", "--json"])?)?;
    let id_of = |name: &str| -> Result<String> {
        let s = listed.as_array().into_iter().flatten().find(|s| s["filename"] == name);
        let uri = s.and_then(|s| s["$uri"].as_str()).with_context(|| format!("no sample {name}: {listed}"))?;
        Ok(uri.rsplit('/').next().unwrap_or_default().to_string())
    };
    let (blank, copy_id) = (id_of("swab.fastq.gz")?, id_of("swab.host_removed.fastq.gz")?);
    served.cli_out(old_key, &["samples", "metadata", &blank, "--set", "control=blank", "--set", "run_id=R-7"])?;
    served.cli_out(old_key, &["samples", "metadata", &copy_id, "--set", "run_id=R-7"])?;
    let open_sample = |id: String| async move {
        a.navigate(&format!("{url}/")).await?;
        let row = format!("[data-testid=samples-table] tbody tr[data-id='{id}'] td.name");
        a.click(&a.wait_for(&row, WAIT).await?).await?;
        a.wait_for("[data-testid=sample-title]", WAIT).await?;
        anyhow::Ok(())
    };
    open_sample(blank.clone()).await?;
    a.click(&a.wait_for("[data-testid=run-analysis]", WAIT).await?).await?;
    let chosen = a
        .script(
            "const s = document.querySelector('[data-testid=run-job]'); \
             const o = [...s.options].find(o => o.text.startsWith('Negative controls')); \
             if (!o) return false; s.value = o.value; s.dispatchEvent(new Event('change', {bubbles: true})); return true;",
            json!([]),
        )
        .await?;
    ensure!(chosen == json!(true), "no controls job to choose");
    a.wait_for("[data-testid=run-arg-threshold]", WAIT).await?;
    a.script(
        "const i = document.querySelector('[data-testid=run-arg-threshold]'); i.value = '0.6'; \
         i.dispatchEvent(new Event('input', {bubbles: true})); return true;",
        json!([]),
    )
    .await?;
    a.click(&a.wait_for("[data-testid=run-start]", WAIT).await?).await?;
    let open_controls = "const b = [...document.querySelectorAll('[data-testid=analyses] li button')]\
         .find(b => b.innerText.includes('Negative controls') && b.getAttribute('aria-disabled') === 'false'); \
         if (b) b.click(); return !!b;";
    poll("the controls analysis to finish", Duration::from_secs(90), || async {
        Ok((a.script(open_controls, json!([])).await? == json!(true)).then_some(()))
    })
    .await?;
    a.wait_for_text("[data-testid=controls-batch]", "run_id is “R-7”", WAIT).await.context("the controls' page")?;
    a.wait_for_text("[data-testid=contaminants-caption]", "against 1 negative control", WAIT).await?;
    axe.check(a, "browser controls").await?;
    a.screenshot("browser-03c-controls").await?;
    click_button(a, "Save scores as CSV").await?;
    let scores = std::fs::read_to_string(downloaded(downloads, "contaminants.csv").await?)?;
    ensure!(
        scores.starts_with("tax_id,name,score,contaminant,") && scores.contains("# Controls: swab.fastq.gz"),
        "the scores saved: {scores}"
    );
    open_sample(copy_id.clone()).await?;
    a.wait_for_text("[data-testid=contaminants-note]", "against control swab.fastq.gz", Duration::from_secs(60))
        .await
        .context("the batch's sample names its controls")?;
    a.wait_for("[data-testid=contaminant-badge]", WAIT).await.context("a flagged taxon marked in the table")?;
    a.wait_for_text("[data-testid=chart]", "(possible contaminant)", WAIT).await.context("a flagged bar marked")?;
    a.screenshot("browser-03c-contaminants-marked").await?;
    a.click(&a.wait_for("[data-testid=chart-hide-contaminants]", WAIT).await?).await?;
    let marked = "return !!document.querySelector('[data-testid=contaminant-badge]');";
    poll("the flagged taxa to be left out", WAIT, || async {
        Ok((a.script(marked, json!([])).await? == json!(false)).then_some(()))
    })
    .await?;

    // The copy's report: the report job run from its page, the report opened, its PDF saved
    // and read back.
    a.click(&a.wait_for("[data-testid=run-analysis]", WAIT).await?).await?;
    let chosen = a
        .script(
            "const s = document.querySelector('[data-testid=run-job]'); \
             const o = [...s.options].find(o => o.text.startsWith('Sample report')); \
             if (!o) return false; s.value = o.value; s.dispatchEvent(new Event('change', {bubbles: true})); return true;",
            json!([]),
        )
        .await?;
    ensure!(chosen == json!(true), "no report job to choose");
    a.click(&a.wait_for("[data-testid=run-start]", WAIT).await?).await?;
    let open_report = "const b = [...document.querySelectorAll('[data-testid=analyses] li button')]\
         .find(b => b.innerText.startsWith('Report') && b.getAttribute('aria-disabled') === 'false'); \
         if (b) b.click(); return !!b;";
    poll("the report to be made", Duration::from_secs(90), || async {
        Ok((a.script(open_report, json!([])).await? == json!(true)).then_some(()))
    })
    .await?;
    a.wait_for_text("[data-testid=report-summary]", "Abundance", WAIT).await.context("the report's page")?;
    axe.check(a, "browser report").await?;
    a.screenshot("browser-03c-report").await?;
    a.click(&a.wait_for("[data-testid=report-save]", WAIT).await?).await?;
    let pdf = downloaded(downloads, ".report.pdf").await?;
    let text = std::process::Command::new("pdftotext").arg(&pdf).arg("-").output()?;
    let text = String::from_utf8_lossy(&text.stdout).replace('\n', " ");
    ensure!(text.contains("Sample report") && text.contains("Read quality"), "the sample's report: {text}");

    // The other screens a browser has.
    for (screen, ready) in [
        ("analyses", "main h1"),
        ("projects", "[data-testid=projects-empty]"),
        ("documents", "main h1"),
        ("tags", "main h1"),
    ] {
        a.click(&a.wait_for(&format!("[data-testid=nav-{screen}]"), WAIT).await?).await?;
        a.wait_for(ready, WAIT).await.with_context(|| format!("the {screen} screen"))?;
        axe.check(a, &format!("browser {screen}")).await?;
        a.screenshot(&format!("browser-03d-{screen}")).await?;
    }

    // An upload that goes on after the page is reloaded: a large document sent slowly, the page
    // reloaded once its first part is stored, the file chosen again. It finishes as the same
    // upload (the same document), with every byte.
    let big = files.join("run-report.bin");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&big)?);
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..(150 * 1024 * 1024 / 8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            f.write_all(&x.to_le_bytes())?;
        }
        f.flush()?;
    }
    a.limit_uploads(Some(25 * 1024 * 1024)).await?;
    a.click(&a.wait_for("[data-testid=nav-documents]", WAIT).await?).await?;
    choose_files(a, "documents", std::slice::from_ref(&big)).await?;
    let kept = poll("the first part of the document to be stored", WAIT, || async {
        let v = a
            .script(
                "const k = Object.keys(localStorage).find(k => k.startsWith('mgds-upload:')); if (!k) return null; \
                 const v = JSON.parse(localStorage.getItem(k)); \
                 return v.etags[0].filter(Boolean).length > 0 ? v.upload.init.document_id : null;",
                json!([]),
            )
            .await?;
        Ok(v.as_str().map(String::from))
    })
    .await?;
    a.navigate(&format!("{url}/")).await?;
    a.click(&a.wait_for("[data-testid=nav-documents]", WAIT).await?).await?;
    choose_files(a, "documents", std::slice::from_ref(&big)).await?;
    let size = big.metadata()?.len();
    let documents = poll("the document's upload to go on and finish", Duration::from_secs(60), || async {
        let list: serde_json::Value = reqwest::Client::new()
            .get(format!("{url}/api/v1/documents"))
            .basic_auth(old_key, Some(""))
            .send()
            .await?
            .json()
            .await?;
        let named: Vec<serde_json::Value> = list
            .as_array()
            .map(|l| l.iter().filter(|d| d["filename"] == json!("run-report.bin")).cloned().collect())
            .unwrap_or_default();
        Ok(named.iter().any(|d| d["size"] == json!(size)).then_some(named))
    })
    .await?;
    a.limit_uploads(None).await?;
    ensure!(
        documents.len() == 1 && documents[0]["$uri"].as_str().is_some_and(|u| u.ends_with(&kept)),
        "the upload went on as the same document {kept}: {documents:?}"
    );
    a.screenshot("browser-03e-document-resumed").await?;

    // A document uploaded from the browser, and shared with a colleague (who downloads it at
    // the end).
    a.click(&a.wait_for("[data-testid=nav-documents]", WAIT).await?).await?;
    choose_files(a, "documents", &[files.join("sample-sheet.csv")]).await?;
    a.wait_for_text("[data-testid=documents-table]", "sample-sheet.csv", WAIT)
        .await
        .context("the document's upload")?;
    a.click(&a.wait_for("[data-testid=document-share]", WAIT).await?).await?;
    a.set_value("[data-testid=share-email]", "bo@lab.example.org").await?;
    a.click(&a.wait_for("[data-testid=share-add]", WAIT).await?).await?;
    a.wait_for_text("[data-testid=documents-notice]", "is now shared with bo@lab.example.org", WAIT).await?;
    a.screenshot("browser-03e-document-shared").await?;

    // The account, its one session marked as this browser.
    a.click(&a.wait_for("[data-testid=nav-account]", WAIT).await?).await?;
    a.wait_for_text("[data-testid=account-email]", "ana@lab.example.org", WAIT).await?;
    a.wait_for_text("[data-testid=sessions]", "(this browser)", WAIT).await?;
    axe.check(a, "browser account").await?;
    a.screenshot("browser-03-account").await?;

    // A second browser signs in; the first sees it, and signs it out.
    b.navigate(&format!("{url}/")).await?;
    sign_in(b, "ana@lab.example.org", PASSWORD).await?;
    signed_in_as_ana(b).await?;
    a.navigate(&format!("{url}/")).await?;
    open_account(a).await?;
    poll("the first browser to list two sessions", WAIT, || async {
        let n =
            a.script("return document.querySelectorAll('[data-testid=sessions] tbody tr').length;", json!([])).await?;
        Ok((n == json!(2)).then_some(()))
    })
    .await?;
    a.screenshot("browser-04-two-sessions").await?;
    let ended = a
        .script(
            "const rows = [...document.querySelectorAll('[data-testid=sessions] tbody tr')]; \
             const other = rows.find(r => !r.innerText.includes('(this browser)')); \
             if (!other) return false; other.querySelector('button').click(); return true;",
            json!([]),
        )
        .await?;
    ensure!(ended == json!(true), "no other session to sign out");
    poll("the first browser to list one session", WAIT, || async {
        let n =
            a.script("return document.querySelectorAll('[data-testid=sessions] tbody tr').length;", json!([])).await?;
        Ok((n == json!(1)).then_some(()))
    })
    .await?;
    b.navigate(&format!("{url}/")).await?;
    b.wait_for("#sign-in-title", WAIT).await.context("the second browser was not signed out")?;
    b.screenshot("browser-05-signed-out-elsewhere").await?;

    // A new API key, with the password: shown once; the old one stops at once.
    a.set_value("#key-title ~ form input[type=password]", PASSWORD).await?;
    let make = a
        .script("const f = document.querySelector('#key-title ~ form'); f.requestSubmit(); return true;", json!([]))
        .await?;
    ensure!(make == json!(true));
    let key_input = a.wait_for("[data-testid=new-api-key]", WAIT).await?;
    let _ = key_input;
    let new_key = a.script("return document.querySelector('[data-testid=new-api-key]').value;", json!([])).await?;
    let new_key = new_key.as_str().context("no key shown")?.to_string();
    ensure!(new_key.len() == 32, "a key of 32 characters, not {new_key:?}");
    ensure!(key_works(url, &new_key).await?, "the new key opens the account");
    ensure!(!key_works(url, old_key).await?, "the old key stopped");
    axe.check(a, "browser account with a new key").await?;
    a.screenshot("browser-06-new-key").await?;

    // A forged cross-site write: a page of another site posts a form whose body is the JSON of
    // a new project (a form's plain text needs no preflight). It would make the project if the
    // browser sent the session cookie with it and the service took a cookie's write without
    // the CSRF token. The service refuses it, and no project is made.
    let forged = format!(
        "data:text/html,<form method=post enctype=text/plain action='{url}/api/v1/projects'>\
         <input name='{{\"project_name\":\"forged_p\",\"description\":\"' value='\"}}'></form>\
         <script>document.forms[0].submit()</script>"
    );
    a.navigate(&forged).await?;
    let answered = poll("the forged request's answer", WAIT, || async {
        let v = a
            .script("return location.href.startsWith(arguments[0]) ? document.body.innerText : null;", json!([url]))
            .await?;
        Ok(v.as_str().map(str::to_string))
    })
    .await?;
    ensure!(
        answered.contains("\"status\":401") || answered.contains("\"status\":403"),
        "the forged write was not refused: {answered}"
    );
    let projects = reqwest::Client::new()
        .get(format!("{url}/api/v1/projects"))
        .basic_auth(&new_key, Some(""))
        .send()
        .await?
        .text()
        .await?;
    ensure!(!projects.contains("forged_p"), "the forged write made a project: {projects}");
    a.navigate(&format!("{url}/")).await?;
    signed_in_as_ana(a).await.context("the forged write from another site signed the browser out")?;
    // A write from the service's own page that lacks the token (what a script injected without
    // reading the page's token could send) is refused too.
    let direct = a
        .script(
            "return fetch(arguments[0] + '/api/v1/sessions', {method: 'DELETE', credentials: 'include'}).then(r => r.status);",
            json!([url]),
        )
        .await?;
    ensure!(direct == json!(403), "a write without the token answered {direct}");
    let command = a
        .script(
            "return fetch('api/web/v1/commands/create_project', {method: 'POST', credentials: 'include', \
             headers: {'Content-Type': 'application/json'}, body: JSON.stringify({project: {short_name: 'no_token'}})}) \
             .then(r => r.status);",
            json!([]),
        )
        .await?;
    ensure!(command == json!(403), "a command without the token answered {command}");

    // The password changed: every session ends; the new one signs in.
    open_account(a).await?;
    a.set_value("#password-title ~ form input[autocomplete=current-password]", PASSWORD).await?;
    a.script(
        "const [n, m] = document.querySelectorAll('#password-title ~ form input[autocomplete=new-password]'); \
         for (const e of [n, m]) { e.value = 'a brand new passphrase'; e.dispatchEvent(new Event('input', {bubbles: true})); } \
         document.querySelector('#password-title ~ form').requestSubmit(); return true;",
        json!([]),
    )
    .await?;
    a.wait_for_text(".note", "password was changed", WAIT).await?;
    a.screenshot("browser-07-password-changed").await?;
    sign_in(a, "ana@lab.example.org", "a brand new passphrase").await?;
    signed_in_as_ana(a).await?;

    // Signing out everywhere: the other browser too.
    b.navigate(&format!("{url}/")).await?;
    sign_in(b, "ana@lab.example.org", "a brand new passphrase").await?;
    signed_in_as_ana(b).await?;
    open_account(a).await?;
    a.wait_for("[data-testid=sessions]", WAIT).await?;
    let everywhere = a
        .script(
            "const b = [...document.querySelectorAll('button')].find(b => b.innerText === 'Sign out everywhere'); \
             if (!b) return false; b.click(); return true;",
            json!([]),
        )
        .await?;
    ensure!(everywhere == json!(true), "no Sign out everywhere button");
    a.wait_for_text(".note", "signed out everywhere", WAIT).await?;
    b.navigate(&format!("{url}/")).await?;
    b.wait_for("#sign-in-title", WAIT).await.context("sign-out everywhere left the other browser signed in")?;
    sign_in(a, "ana@lab.example.org", "a brand new passphrase").await?;
    signed_in_as_ana(a).await?;

    // Signing out.
    let out = a
        .script(
            "const b = [...document.querySelectorAll('header button')].find(b => b.innerText === 'Sign out'); \
             if (!b) return false; b.click(); return true;",
            json!([]),
        )
        .await?;
    ensure!(out == json!(true), "no Sign out button in the top bar");
    a.wait_for_text(".note", "signed out", WAIT).await?;
    a.screenshot("browser-08-signed-out").await?;

    // The colleague signs in in the other browser and downloads the shared document.
    b.navigate(&format!("{url}/")).await?;
    sign_in(b, "bo@lab.example.org", PASSWORD).await?;
    b.click(&b.wait_for("[data-testid=nav-documents]", WAIT).await?).await?;
    b.wait_for_text("[data-testid=documents-table]", "sample-sheet.csv", WAIT).await?;
    b.click(&b.wait_for("[data-testid=document-download]", WAIT).await?).await?;
    let sheet = std::fs::read_to_string(downloaded(downloads, "sample-sheet.csv").await?)?;
    ensure!(sheet == SHEET, "the colleague's download is the document: {sheet:?}");
    axe.check(b, "browser documents shared with a colleague").await?;
    b.screenshot("browser-09-colleague-documents").await?;

    // A sequencer's run folder chosen whole: only its reads are read and listed (its sample
    // sheet, metrics and hidden files are left out), the pair found.
    let run = files.join("run-folder");
    std::fs::create_dir_all(run.join("InterOp"))?;
    std::fs::create_dir_all(run.join(".cache"))?;
    std::fs::copy(files.join("gut_day2_R1.fastq.gz"), run.join("colon_R1.fastq.gz"))?;
    std::fs::copy(files.join("gut_day2_R2.fastq.gz"), run.join("colon_R2.fastq.gz"))?;
    std::fs::write(run.join("SampleSheet.csv"), SHEET)?;
    std::fs::write(run.join("InterOp/QMetricsOut.bin"), [0u8; 64])?;
    std::fs::copy(files.join("gut_day2_R1.fastq.gz"), run.join(".cache/old_R1.fastq.gz"))?;
    b.click(&b.wait_for("[data-testid=nav-samples]", WAIT).await?).await?;
    let input = b.wait_for("input[data-testid=browser-pick-folder]", WAIT).await?;
    b.type_text(&input, &run.display().to_string()).await?;
    b.wait_for("[data-testid=upload-panel] [data-testid=join-pair]", WAIT).await.context("the folder's pair")?;
    let listed = b
        .script(
            "return [...document.querySelectorAll('[data-testid=upload-item] .fname')].map(e => e.innerText);",
            json!([]),
        )
        .await?;
    ensure!(listed == json!(["colon_R1.fastq.gz", "colon_R2.fastq.gz"]), "the folder's reads alone: {listed}");
    b.screenshot("browser-10-folder-chosen").await?;
    Ok(())
}

/// Lab IT in a browser: the organisation's owner sees its users on the Organisation screen,
/// invites a colleague (who opens the link in another browser, chooses a password and is signed
/// in), makes a member an admin, and disables a member whose key then stops; a member sees the
/// organisation without its management.
#[tokio::test(flavor = "multi_thread")]
async fn an_owner_runs_the_organisation_from_a_browser() -> Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let bin = env_path("MGDS_BIN")?;
    let served = Served::ready(&bin).await?;
    let url = served.url.clone();
    served.user_as("head@lab.example.org", PASSWORD, "owner")?;
    let tech_key = served.user("tech@lab.example.org", PASSWORD)?;
    served.user("cy@lab.example.org", PASSWORD)?;
    let downloads = tempfile::tempdir()?;
    in_two_browsers("browser-org-failure", downloads.path(), async |a, b, axe| {
        organisation_scenario(a, b, axe, &url, &tech_key).await
    })
    .await
}

async fn organisation_scenario(a: &Session, b: &Session, axe: &Axe, url: &str, tech_key: &str) -> Result<()> {
    a.navigate(&format!("{url}/")).await?;
    sign_in(a, "head@lab.example.org", PASSWORD).await?;
    a.click(&a.wait_for("[data-testid=nav-organization]", WAIT).await?).await?;
    a.wait_for_text("[data-testid=org-role]", "owner of Microbiology", WAIT).await?;
    a.wait_for_text("[data-testid=org-users]", "tech@lab.example.org", WAIT).await?;
    axe.check(a, "browser organisation").await?;
    a.screenshot("browser-org-1-users").await?;

    // The lab on its reports: named (the organisation keeps its name), and a logo chosen; a file that is no picture refused by
    // the service with the reason.
    a.click(&a.wait_for("[data-testid=org-rename]", WAIT).await?).await?;
    a.set_value("[data-testid=org-name-input]", "Microbiology, St Olav's").await?;
    a.click(&a.wait_for("[data-testid=org-name-save]", WAIT).await?).await?;
    a.wait_for_text("[data-testid=org-lab]", "Microbiology, St Olav's", WAIT).await?;
    a.wait_for_text("[data-testid=org-lab-note]", "name the lab Microbiology, St Olav's", WAIT).await?;
    let pictures = tempfile::tempdir()?;
    let (logo, fake) = (pictures.path().join("lab-logo.svg"), pictures.path().join("not-a-logo.png"));
    std::fs::write(
        &logo,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="160" height="48"><rect width="48" height="48" rx="8" fill="#2a6f97"/><text x="58" y="32" font-size="22" font-family="sans-serif">St Olav</text></svg>"##,
    )?;
    std::fs::write(&fake, "this is text, not a picture")?;
    let input = a.wait_for("[data-testid=org-logo-file]", WAIT).await?;
    a.type_text(&input, &fake.display().to_string()).await?;
    a.wait_for_text("[data-testid=org-lab-problem]", "not a PNG, JPEG or SVG picture", WAIT).await?;
    let input = a.wait_for("[data-testid=org-logo-file]", WAIT).await?;
    a.type_text(&input, &logo.display().to_string()).await?;
    a.wait_for("[data-testid=org-logo]", WAIT).await.context("the logo shown")?;
    a.wait_for_text("[data-testid=org-lab-note]", "lab-logo.svg is the logo", WAIT).await?;
    axe.check(a, "browser organisation's lab").await?;
    a.screenshot("browser-org-1b-lab").await?;

    // An invitation: the link shown once, opened in another browser.
    a.click(&a.wait_for("[data-testid=org-invite]", WAIT).await?).await?;
    a.set_value("[data-testid=org-invite-email]", "not an address").await?;
    a.click(&a.wait_for("[data-testid=org-invite-send]", WAIT).await?).await?;
    a.wait_for_text("[data-testid=org-invite-error]", "does not look like an e-mail address", WAIT).await?;
    a.set_value("[data-testid=org-invite-email]", "new.colleague@lab.example.org").await?;
    axe.check(a, "browser organisation invite").await?;
    a.click(&a.wait_for("[data-testid=org-invite-send]", WAIT).await?).await?;
    a.wait_for_text("[data-testid=org-link]", "Invitation for new.colleague@lab.example.org", WAIT).await?;
    let link = a.script("return document.querySelector('[data-testid=org-link-value]').value;", json!([])).await?;
    let link = link.as_str().context("the link")?.to_string();
    ensure!(link.starts_with(&format!("{url}/#link=")), "the link {link}");
    a.wait_for_text("[data-testid=org-users]", "Invited; the link works until", WAIT).await?;
    a.screenshot("browser-org-2-invited").await?;

    b.navigate(&link).await?;
    b.wait_for_text("#set-password-title", "Join Microbiology", WAIT).await?;
    let address = b.script("return location.href;", json!([])).await?;
    ensure!(!address.as_str().unwrap_or_default().contains("#link="), "the secret leaves the address bar: {address}");
    axe.check(b, "browser invitation").await?;
    b.set_value("[data-testid=link-password]", "a colleague's passphrase").await?;
    b.set_value("[data-testid=link-password-again]", "a different passphrase").await?;
    b.click(&b.wait_for("[data-testid=link-submit]", WAIT).await?).await?;
    b.wait_for_text("[data-testid=link-problem]", "not the same", WAIT).await?;
    b.screenshot("browser-org-3-invitation").await?;
    b.set_value("[data-testid=link-password-again]", "a colleague's passphrase").await?;
    b.click(&b.wait_for("[data-testid=link-submit]", WAIT).await?).await?;
    b.wait_for_text("[data-testid=connection]", "new.colleague@lab.example.org", WAIT).await?;
    // A member sees the organisation, not its management.
    b.click(&b.wait_for("[data-testid=nav-organization]", WAIT).await?).await?;
    b.wait_for_text("[data-testid=org-role]", "member of Microbiology", WAIT).await?;
    b.wait_for("[data-testid=org-members-only]", WAIT).await?;
    ensure!(b.find("[data-testid=org-invite]").await?.is_none(), "a member invites nobody");
    b.screenshot("browser-org-4-member").await?;
    // The link is used up.
    b.navigate(&link).await?;
    b.wait_for_text("[data-testid=link-gone]", "ended", WAIT).await?;

    // A role given, and a member disabled: their key stops at once.
    a.click(&a.wait_for("[data-testid=nav-samples]", WAIT).await?).await?;
    a.click(&a.wait_for("[data-testid=nav-organization]", WAIT).await?).await?;
    a.wait_for_text("[data-testid=org-users]", "Active", WAIT).await?;
    a.set_value("tr[data-email='cy@lab.example.org'] [data-testid=org-role-select]", "admin").await?;
    a.wait_for_text("[data-testid=org-notice]", "cy@lab.example.org is now an admin", WAIT).await?;
    ensure!(key_works(url, tech_key).await?, "the member's key works before");
    a.click(&a.wait_for("tr[data-email='tech@lab.example.org'] [data-testid=org-disable]", WAIT).await?).await?;
    a.wait_for("[data-testid=confirm-yes]", WAIT).await?;
    a.screenshot("browser-org-5-disable").await?;
    a.click(&a.wait_for("[data-testid=confirm-yes]", WAIT).await?).await?;
    a.wait_for_text("[data-testid=org-notice]", "tech@lab.example.org is disabled", WAIT).await?;
    a.wait_for_text("tr[data-email='tech@lab.example.org']", "Disabled since", WAIT).await?;
    ensure!(!key_works(url, tech_key).await?, "a disabled member's key stops at once");
    axe.check(a, "browser organisation after changes").await?;
    a.screenshot("browser-org-6-disabled").await?;
    a.click(&a.wait_for("tr[data-email='tech@lab.example.org'] [data-testid=org-enable]", WAIT).await?).await?;
    a.wait_for_text("[data-testid=org-notice]", "may sign in again", WAIT).await?;
    ensure!(key_works(url, tech_key).await?, "enabled again, the key works");

    // The audit trail of all that, newest first, filtered to people's changes.
    a.click(&a.wait_for("[data-testid=nav-samples]", WAIT).await?).await?;
    a.click(&a.wait_for("[data-testid=nav-organization]", WAIT).await?).await?;
    a.wait_for_text("[data-testid=audit-table]", "user.enabled", WAIT).await?;
    a.set_value("[data-testid=audit-kind]", "user.").await?;
    let text = poll("the audit trail filtered to people's changes", WAIT, || async {
        let t =
            a.script("return document.querySelector('[data-testid=audit-table]')?.innerText ?? '';", json!([])).await?;
        let t = t.as_str().unwrap_or_default().to_string();
        Ok((!t.contains("session.signed_in") && t.contains("user.disabled")).then_some(t))
    })
    .await?;
    ensure!(text.contains("role: \"member\" → \"admin\""), "the role's change, before and after: {text}");
    ensure!(text.contains("(MGDS web)") && text.contains("127.0.0.1"), "the browser's own client and address: {text}");
    axe.check(a, "browser audit trail").await?;
    a.screenshot("browser-org-7-audit").await?;

    // A webhook: the wrong address refused, the secret shown once, a ping delivered signed.
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let receiver = format!("http://{}/hooks/lims", listener.local_addr()?);
    let got = mgds_webhook::testing::receive_on(listener);
    a.click(&a.wait_for("[data-testid=webhook-add]", WAIT).await?).await?;
    a.set_value("[data-testid=webhook-url]", "lims.lab.org/hooks").await?;
    a.click(&a.wait_for("[data-testid=webhook-save]", WAIT).await?).await?;
    a.wait_for_text("[data-testid=webhook-error]", "starts with https://", WAIT).await?;
    a.set_value("[data-testid=webhook-url]", &receiver).await?;
    a.set_value("[data-testid=webhook-type]", "sample.confirmed").await?;
    axe.check(a, "browser webhook form").await?;
    a.click(&a.wait_for("[data-testid=webhook-save]", WAIT).await?).await?;
    a.wait_for_text("[data-testid=webhook-secret]", "Signing secret for", WAIT).await?;
    let secret =
        a.script("return document.querySelector('[data-testid=webhook-secret-value]').value;", json!([])).await?;
    let secret = secret.as_str().context("the secret")?.to_string();
    ensure!(secret.starts_with("whsec_"), "the secret {secret}");
    a.wait_for_text("[data-testid=webhook-table]", "sample.confirmed", WAIT).await?;
    a.screenshot("browser-org-8-webhook-secret").await?;
    a.click(&a.wait_for("[data-testid=webhook-ping]", WAIT).await?).await?;
    a.wait_for_text("[data-testid=webhook-notice]", "ping event is on its way", WAIT).await?;
    let r = tokio::task::spawn_blocking(move || got.recv_timeout(WAIT)).await??;
    ensure!(r.event == "ping", "the receiver got {}", r.event);
    mgds_webhook::verify(secret.as_bytes(), &r.signature, &r.body, mgds_webhook::unix_now(), 300)
        .map_err(|e| anyhow::anyhow!("the ping's signature: {e}"))?;
    poll("the ping shown as delivered", WAIT, || async {
        a.click(&a.wait_for("[data-testid=webhooks-refresh]", WAIT).await?).await?;
        let t =
            a.script("return document.querySelector('[data-testid=event-table]')?.innerText ?? '';", json!([])).await?;
        Ok(t.as_str().unwrap_or_default().contains("Delivered").then_some(()))
    })
    .await?;
    a.click(&a.wait_for("[data-testid=webhook-toggle]", WAIT).await?).await?;
    a.wait_for_text("[data-testid=webhook-notice]", "Disabled", WAIT).await?;
    a.wait_for_text("[data-testid=webhook-table]", "Disabled", WAIT).await?;
    axe.check(a, "browser webhooks").await?;
    a.screenshot("browser-org-9-webhooks").await?;
    Ok(())
}

/// Single sign-on in a browser, against a real, certified OpenID provider (npm's
/// `oidc-provider`, started here; `tests/oidc.sh`): the sign-in page offers the lab's account,
/// the provider's own sign-in page signs Alice in and sends her back signed in, with the role her
/// group gives; signing out signs out at the provider too and comes back; Carol, whose groups
/// place her nowhere, comes back to the sign-in page told why.
#[tokio::test(flavor = "multi_thread")]
async fn a_lab_account_signs_in_through_the_provider_in_a_browser() -> Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let bin = env_path("MGDS_BIN")?;
    let accounts = json!({
        "alice-sub": {"email": "alice@lab.example", "email_verified": true, "name": "Alice", "groups": ["mgds-admins"]},
        "carol-sub": {"email": "carol@lab.example", "email_verified": true, "name": "Carol", "groups": ["finance"]},
    });
    let mut provider = TestProvider::start(json!({"port": 0, "accounts": accounts, "clients": []})).await;
    let secret = tempfile::NamedTempFile::new()?;
    std::fs::write(secret.path(), "the web client's secret at the provider")?;
    let served = Served::ready_with(
        &bin,
        &[
            "--sso-issuer".into(),
            provider.issuer.clone(),
            "--sso-client-id".into(),
            "mgds-web".into(),
            "--sso-client-secret-file".into(),
            secret.path().display().to_string(),
            "--sso-scopes".into(),
            "openid email profile groups".into(),
            "--sso-place".into(),
            "groups:mgds-admins=Microbiology:admin".into(),
            "--sso-name".into(),
            "Lab account".into(),
        ],
    )
    .await?;
    let url = served.url.clone();
    provider
        .restart(json!({"clients": [{
            "client_id": "mgds-web", "client_secret": "the web client's secret at the provider",
            "application_type": "web", "token_endpoint_auth_method": "client_secret_basic",
            "redirect_uris": [format!("{url}/api/v1/sso/callback")],
            "post_logout_redirect_uris": [format!("{url}/")],
            "backchannel_logout_uri": format!("{url}/api/v1/sso/backchannel_logout"),
            "backchannel_logout_session_required": true,
            "grant_types": ["authorization_code"], "response_types": ["code"]}]}))
        .await;
    let downloads = tempfile::tempdir()?;
    in_two_browsers("browser-sso-failure", downloads.path(), async |a, b, axe| {
        sso_scenario(a, b, axe, &url, &provider.issuer).await
    })
    .await
}

/// Signs in at the provider's own page (its development sign-in form: any password).
async fn at_provider(s: &Session, account: &str) -> Result<()> {
    s.wait_for("input[name=login]", WAIT).await.context("the provider's sign-in page did not open")?;
    s.set_value("input[name=login]", account).await?;
    s.set_value("input[name=password]", "any").await?;
    s.click(&s.wait_for("button[type=submit]", WAIT).await?).await
}

async fn sso_scenario(a: &Session, b: &Session, axe: &Axe, url: &str, issuer: &str) -> Result<()> {
    a.navigate(&format!("{url}/")).await?;
    let button = a.wait_for_text("[data-testid=sso-sign-in]", "Sign in with Lab account", WAIT).await?;
    ensure!(button.contains("Lab account"), "{button}");
    axe.check(a, "sign-in with single sign-on").await?;
    a.screenshot("browser-sso-1-sign-in").await?;
    a.click(&a.wait_for("[data-testid=sso-sign-in]", WAIT).await?).await?;
    poll("the provider's page", WAIT, || async {
        let at = a.script("return location.href;", json!([])).await?;
        Ok(at.as_str().filter(|h| h.starts_with(issuer)).map(|_| ()))
    })
    .await?;
    a.screenshot("browser-sso-2-provider").await?;
    at_provider(a, "alice-sub").await?;
    a.wait_for_text("[data-testid=connection]", "alice@lab.example", WAIT).await.context("Alice was not signed in")?;
    a.screenshot("browser-sso-3-signed-in").await?;
    // Her group makes her an admin: the Organisation screen manages its users.
    a.click(&a.wait_for("[data-testid=nav-organization]", WAIT).await?).await?;
    a.wait_for_text("[data-testid=org-role]", "admin", WAIT).await?;
    a.wait_for("[data-testid=org-invite]", WAIT).await?;

    // Signing out: at the provider too, which asks, then sends the browser back.
    click_button(a, "Sign out").await?;
    a.wait_for("button[name=logout][value=yes]", WAIT).await.context("the provider did not ask to sign out")?;
    a.screenshot("browser-sso-4-provider-sign-out").await?;
    a.click(&a.wait_for("button[name=logout][value=yes]", WAIT).await?).await?;
    a.wait_for("[data-testid=sso-sign-in]", WAIT).await.context("the browser did not come back to MGDS")?;
    let at = a.script("return location.href;", json!([])).await?;
    ensure!(at.as_str().is_some_and(|h| h.starts_with(url)), "back at {at}");
    // Signed out at the provider: signing in again asks for the account again.
    a.click(&a.wait_for("[data-testid=sso-sign-in]", WAIT).await?).await?;
    a.wait_for("input[name=login]", WAIT).await.context("the provider's session should have ended")?;

    // Carol's groups place her nowhere: back at the sign-in page, told why.
    b.navigate(&format!("{url}/")).await?;
    b.click(&b.wait_for("[data-testid=sso-sign-in]", WAIT).await?).await?;
    at_provider(b, "carol-sub").await?;
    let why = b.wait_for_text("[role=alert]", "is in no group", WAIT).await?;
    ensure!(why.contains("Lab account"), "{why}");
    let at = b.script("return location.href;", json!([])).await?;
    ensure!(at.as_str().is_some_and(|h| !h.contains("sign_in_problem")), "the reason leaves the address bar: {at}");
    axe.check(b, "single sign-on refused").await?;
    b.screenshot("browser-sso-5-refused").await?;
    Ok(())
}
