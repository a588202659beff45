//! MGDS in a real browser: the real `mgds serve` serving its web UI, and Debian's Chromium
//! (headless) driven through `chromedriver`: a wrong password refused, signing in, the account
//! with its sessions, a second browser signed in and then signed out from the first, a new API
//! key made with the password (and the old one refused), a forged cross-site write refused, the
//! password changed (every session ends) and signing in with the new one, signing out. Every
//! screen is checked with axe-core; screenshots go to `target/e2e-screenshots/browser-*.png`.
//!
//! Needs `MGDS_BIN` (the `mgds` binary) and `CHROMEDRIVER`; `test.sh` provides both.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use mgds_e2e::{Axe, Driver, Session, free_port, poll};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(30);
const PASSWORD: &str = "correct horse battery";

fn env_path(name: &str) -> Result<PathBuf> {
    let p = std::env::var_os(name)
        .map(PathBuf::from)
        .with_context(|| format!("{name} is not set; run the end-to-end tests through ./test.sh"))?;
    ensure!(p.exists(), "{name}={} does not exist; run ./test.sh", p.display());
    Ok(p)
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

/// `mgds serve` on a data folder of its own, stopped on drop.
struct Served {
    child: Child,
    url: String,
    bin: PathBuf,
    data: tempfile::TempDir,
}

impl Served {
    fn start(bin: &Path) -> Result<Served> {
        let data = tempfile::tempdir()?;
        let port = free_port()?;
        let child = Command::new(bin)
            .args(["--data-dir"])
            .arg(data.path())
            .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--no-demo", "--workers", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .context("cannot start mgds serve")?;
        Ok(Served { child, url: format!("http://127.0.0.1:{port}"), bin: bin.to_path_buf(), data })
    }

    /// `mgds admin user create EMAIL --password`, the password on standard input; the API key.
    fn user(&self, email: &str, password: &str) -> Result<String> {
        let mut child = Command::new(&self.bin)
            .args(["--data-dir"])
            .arg(self.data.path())
            .args(["admin", "user", "create", email, "--password", "--organization", "Microbiology"])
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
    let chromedriver = env_path("CHROMEDRIVER")?;
    let root = workspace_root();
    let screenshots = std::env::var_os("MGDS_E2E_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/e2e-screenshots"));
    let served = Served::start(&bin)?;
    let old_key = served.user("ana@lab.example.org", PASSWORD)?;
    let url = served.url.clone();
    poll("mgds serve to answer", WAIT, || async {
        Ok(reqwest::get(format!("{url}/api/v1/health")).await.ok().filter(|r| r.status().is_success()).map(|_| ()))
    })
    .await?;
    let driver = Driver::chromium(&chromedriver).await?;
    let a = Session::chromium(&driver, screenshots.clone()).await?;
    let b = Session::chromium(&driver, screenshots).await?;
    let axe = Axe::new(&root)?;
    let outcome = scenario(&a, &b, &axe, &served, &old_key).await;
    if let Err(e) = &outcome {
        let _ = a.screenshot("browser-failure").await;
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

async fn scenario(a: &Session, b: &Session, axe: &Axe, served: &Served, old_key: &str) -> Result<()> {
    let url = &served.url;
    // The sign-in page, and a wrong password refused with the service's words.
    a.navigate(&format!("{url}/")).await?;
    a.wait_for("#sign-in-title", WAIT).await?;
    axe.check(a, "browser sign-in").await?;
    a.screenshot("browser-01-sign-in").await?;
    sign_in(a, "ana@lab.example.org", "not my password").await?;
    a.wait_for_text("[data-testid=sign-in-problem]", "not right", WAIT).await?;
    a.screenshot("browser-02-wrong-password").await?;

    // Signed in: the account, its one session marked as this browser.
    sign_in(a, "ana@lab.example.org", PASSWORD).await?;
    a.wait_for_text("[data-testid=account-email]", "ana@lab.example.org", WAIT).await?;
    a.wait_for_text("[data-testid=sessions]", "(this browser)", WAIT).await?;
    axe.check(a, "browser account").await?;
    a.screenshot("browser-03-account").await?;

    // A second browser signs in; the first sees it, and signs it out.
    b.navigate(&format!("{url}/")).await?;
    sign_in(b, "ana@lab.example.org", PASSWORD).await?;
    b.wait_for_text("[data-testid=account-email]", "ana@lab.example.org", WAIT).await?;
    a.navigate(&format!("{url}/")).await?;
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

    // A forged cross-site write: a page of another origin posts a form to the service. The
    // browser sends no session cookie with it (SameSite), and even with one, no CSRF token:
    // nothing changes.
    let forged = format!(
        "data:text/html,<form method=post enctype=text/plain action='{url}/api/v1/account/api_key'>\
         <input name='x' value='y'></form><script>document.forms[0].submit()</script>"
    );
    a.navigate(&forged).await?;
    tokio::time::sleep(Duration::from_millis(800)).await;
    ensure!(key_works(url, &new_key).await?, "the forged write made no new key");
    // A write from the service's own page that lacks the token (what a script injected without
    // reading the page's token could send) is refused too.
    a.navigate(&format!("{url}/")).await?;
    a.wait_for("[data-testid=account-email]", WAIT).await?;
    let direct = a
        .script(
            "return fetch(arguments[0] + '/api/v1/sessions', {method: 'DELETE', credentials: 'include'}).then(r => r.status);",
            json!([url]),
        )
        .await?;
    ensure!(direct == json!(401) || direct == json!(403), "a write without the token answered {direct}");

    // The password changed: every session ends; the new one signs in.
    a.navigate(&format!("{url}/")).await?;
    a.wait_for("#password-title", WAIT).await?;
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
    a.wait_for_text("[data-testid=account-email]", "ana@lab.example.org", WAIT).await?;

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
    Ok(())
}
