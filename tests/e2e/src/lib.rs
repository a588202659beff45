//! A small WebDriver client, the `tauri-driver` and `chromedriver` processes, and axe-core, for
//! the end-to-end tests of MGDS Desktop and of MGDS in a browser ([`Driver`] starts
//! `tauri-driver` or Debian's `chromedriver`, [`Session`] drives one app window or one headless
//! Chromium, [`Axe`] checks a page's accessibility).
//!
//! Only the WebDriver commands the tests need are here: find, click, type, run a script, take a
//! screenshot. Every wait polls a condition until a deadline ([`Session::wait_for`]).

pub mod bench;

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail, ensure};
use base64::Engine;
use serde_json::{Value, json};

/// The element key of the W3C WebDriver protocol.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// The path in the environment variable `name`, which must exist (`test.sh` sets them).
pub fn env_path(name: &str) -> Result<PathBuf> {
    let p = std::env::var_os(name)
        .map(PathBuf::from)
        .with_context(|| format!("{name} is not set; run the end-to-end tests through ./test.sh"))?;
    ensure!(p.exists(), "{name}={} does not exist; run ./test.sh", p.display());
    Ok(p)
}

/// The workspace's root folder.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Polls `f` every 100 ms until it answers `Some`, or fails with `what` after `timeout`.
pub async fn poll<T, F, Fut>(what: &str, timeout: Duration, mut f: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>>>,
{
    let deadline = Instant::now() + timeout;
    let mut last_error = None;
    loop {
        match f().await {
            Ok(Some(v)) => return Ok(v),
            Ok(None) => {}
            Err(e) => last_error = Some(e),
        }
        if Instant::now() >= deadline {
            return Err(match last_error {
                Some(e) => e.context(format!("timed out after {timeout:?} waiting for {what}")),
                None => anyhow!("timed out after {timeout:?} waiting for {what}"),
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A first start of the app: empty data, configuration, home and XDG folders in a temporary
/// folder (removed on drop), and the environment that points the app at them.
pub struct FreshHome {
    dir: tempfile::TempDir,
}

impl FreshHome {
    /// Makes the folders.
    pub fn new() -> Result<FreshHome> {
        let dir = tempfile::tempdir()?;
        for d in ["data", "config", "home", "xdg-config", "xdg-cache"] {
            std::fs::create_dir_all(dir.path().join(d))?;
        }
        Ok(FreshHome { dir })
    }

    /// The temporary folder holding them (tests may put their own files there).
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The app's data folder (`MGDS_DATA_DIR`).
    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The app's configuration folder (`MGDS_CONFIG_DIR`).
    pub fn config_dir(&self) -> PathBuf {
        self.dir.path().join("config")
    }

    /// The environment for the app, with `extra` variables after it.
    pub fn env(&self, extra: &[(&'static str, &str)]) -> Vec<(&'static str, std::ffi::OsString)> {
        let at = |d: &str| self.dir.path().join(d).into_os_string();
        let mut env = vec![
            ("MGDS_DATA_DIR", at("data")),
            ("MGDS_CONFIG_DIR", at("config")),
            ("HOME", at("home")),
            ("XDG_CONFIG_HOME", at("xdg-config")),
            ("XDG_CACHE_HOME", at("xdg-cache")),
        ];
        env.extend(extra.iter().map(|(k, v)| (*k, std::ffi::OsString::from(v))));
        env
    }
}

/// A running `tauri-driver` (which runs `WebKitWebDriver`), stopped with SIGTERM on drop so it
/// can close the app it started.
pub struct Driver {
    child: Child,
    /// The WebDriver address.
    pub url: String,
}

impl Driver {
    /// Starts `tauri-driver` with the app's environment, and waits until both it and the
    /// native `WebKitWebDriver` behind it accept connections.
    pub async fn start(tauri_driver: &Path, env: &[(&str, std::ffi::OsString)]) -> Result<Driver> {
        let (port, native) = (free_port()?, free_port()?);
        let mut cmd = Command::new(tauri_driver);
        cmd.args(["--port", &port.to_string(), "--native-port", &native.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().with_context(|| format!("cannot start {}", tauri_driver.display()))?;
        let driver = Driver { child, url: format!("http://127.0.0.1:{port}") };
        // tauri-driver listens before WebKitWebDriver does: wait for both.
        for p in [port, native] {
            poll(&format!("port {p} to accept connections"), Duration::from_secs(30), || async move {
                Ok(TcpStream::connect(("127.0.0.1", p)).ok().map(|_| ()))
            })
            .await?;
        }
        Ok(driver)
    }

    /// Starts Debian's `chromedriver` (at `chromedriver`) on a free port, and waits until it
    /// accepts connections.
    pub async fn chromium(chromedriver: &Path) -> Result<Driver> {
        let port = free_port()?;
        let child = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot start {}", chromedriver.display()))?;
        let driver = Driver { child, url: format!("http://127.0.0.1:{port}") };
        poll(&format!("chromedriver on port {port}"), Duration::from_secs(30), || async move {
            Ok(TcpStream::connect(("127.0.0.1", port)).ok().map(|_| ()))
        })
        .await?;
        Ok(driver)
    }

    /// The process id of `tauri-driver`: the app and its WebKit processes run beneath it.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // SIGTERM, not SIGKILL: tauri-driver then stops WebKitWebDriver and the app.
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One WebDriver session: one app window.
pub struct Session {
    http: reqwest::Client,
    base: String,
    screenshots: PathBuf,
}

/// An element found in the page.
#[derive(Debug, Clone)]
pub struct Element(String);

impl Session {
    /// Starts the app `application` through the driver; screenshots go to `screenshots`.
    pub async fn new(driver: &Driver, application: &Path, screenshots: PathBuf) -> Result<Session> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder().timeout(Duration::from_secs(90)).build()?;
        let caps = json!({"capabilities": {"alwaysMatch": {
            "tauri:options": {"application": application}
        }}});
        let v = send(http.post(format!("{}/session", driver.url)).json(&caps)).await.context("cannot start the app")?;
        let id = v["sessionId"].as_str().context("no sessionId in the driver's answer")?;
        std::fs::create_dir_all(&screenshots)?;
        Ok(Session { http, base: format!("{}/session/{id}", driver.url), screenshots })
    }

    /// Starts a headless Chromium (Debian's `/usr/bin/chromium`) through `chromedriver`, with a
    /// profile of its own (its own cookies), a window of 1280 by 860, saving downloads into
    /// `downloads` without asking; screenshots go to `screenshots`.
    pub async fn chromium(driver: &Driver, screenshots: PathBuf, downloads: &Path) -> Result<Session> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder().timeout(Duration::from_secs(90)).build()?;
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1280,860", "--no-first-run", "--password-store=basic"],
                "prefs": {
                    "download.default_directory": downloads,
                    "download.prompt_for_download": false,
                    "download.directory_upgrade": true,
                    "profile.default_content_setting_values.automatic_downloads": 1,
                    "safebrowsing.enabled": false
                }
            }
        }}});
        let v =
            send(http.post(format!("{}/session", driver.url)).json(&caps)).await.context("cannot start Chromium")?;
        let id = v["sessionId"].as_str().context("no sessionId in the driver's answer")?;
        std::fs::create_dir_all(&screenshots)?;
        Ok(Session { http, base: format!("{}/session/{id}", driver.url), screenshots })
    }

    /// Opens `url` in the browser.
    pub async fn navigate(&self, url: &str) -> Result<()> {
        self.post("/url", json!({"url": url})).await.map(|_| ())
    }

    async fn post(&self, path: &str, body: Value) -> Result<Value> {
        send(self.http.post(format!("{}{path}", self.base)).json(&body)).await
    }

    async fn get(&self, path: &str) -> Result<Value> {
        send(self.http.get(format!("{}{path}", self.base))).await
    }

    /// Chooses the job whose name starts with `prefix` in the run-analysis form; whether one was
    /// offered.
    pub async fn choose_job(&self, prefix: &str) -> Result<bool> {
        let v = self
            .script(
                "const sel = document.querySelector('[data-testid=run-job]'); \
                 const o = [...sel.options].find(o => o.text.startsWith(arguments[0])); \
                 if (!o) return false; sel.value = o.value; \
                 sel.dispatchEvent(new Event('change', {bubbles: true})); return true;",
                json!([prefix]),
            )
            .await?;
        Ok(v == json!(true))
    }

    /// Waits (up to `timeout`) until the sample page lists a complete analysis whose name starts
    /// with `prefix`, and opens it.
    pub async fn open_when_complete(&self, prefix: &str, timeout: Duration) -> Result<()> {
        poll(&format!("the {prefix} analysis to complete"), timeout, || async {
            let done = self
                .script(
                    "const b = [...document.querySelectorAll('[data-testid=analyses] button')]\
                     .find(b => b.innerText.startsWith(arguments[0]) && b.innerText.includes('Complete')); \
                     if (b) b.click(); return !!b;",
                    json!([prefix]),
                )
                .await?;
            Ok(done.as_bool().unwrap_or(false).then_some(()))
        })
        .await
    }

    /// Limits the browser's uploads to `bytes_per_second` (Chromium's network emulation, through
    /// `chromedriver`), or lifts the limit with `None`.
    pub async fn limit_uploads(&self, bytes_per_second: Option<u64>) -> Result<()> {
        match bytes_per_second {
            Some(b) => {
                let conditions = json!({"offline": false, "latency": 0, "download_throughput": 1_000_000_000u64, "upload_throughput": b});
                self.post("/chromium/network_conditions", json!({"network_conditions": conditions})).await.map(drop)
            }
            None => send(self.http.delete(format!("{}/chromium/network_conditions", self.base))).await.map(drop),
        }
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page and answers its value.
    pub async fn script(&self, script: &str, args: Value) -> Result<Value> {
        self.post("/execute/sync", json!({"script": script, "args": args})).await
    }

    /// The first element matching the CSS `selector`, if any.
    pub async fn find(&self, selector: &str) -> Result<Option<Element>> {
        let v = self.post("/elements", json!({"using": "css selector", "value": selector})).await?;
        Ok(v.as_array().and_then(|a| a.first()).and_then(|e| e[ELEMENT].as_str()).map(|s| Element(s.to_string())))
    }

    /// Waits until an element matches `selector`.
    pub async fn wait_for(&self, selector: &str, timeout: Duration) -> Result<Element> {
        poll(&format!("an element matching {selector:?}"), timeout, || self.find(selector)).await
    }

    /// Waits until the text of the element matching `selector` contains `text`; answers the text.
    pub async fn wait_for_text(&self, selector: &str, text: &str, timeout: Duration) -> Result<String> {
        poll(&format!("{selector:?} to contain {text:?}"), timeout, || async {
            let v = self
                .script(
                    "const e = document.querySelector(arguments[0]); return e ? e.innerText : null;",
                    json!([selector]),
                )
                .await?;
            Ok(v.as_str().filter(|t| t.contains(text)).map(str::to_string))
        })
        .await
    }

    /// Sets the value of the form control matching `selector` as a person's choice or typing
    /// would (its `input` and `change` events fire); for menus and for replacing a field's text.
    pub async fn set_value(&self, selector: &str, value: &str) -> Result<()> {
        let set = self
            .script(
                "const e = document.querySelector(arguments[0]); if (!e) return false; e.value = arguments[1]; \
                 e.dispatchEvent(new Event('input', {bubbles: true})); \
                 e.dispatchEvent(new Event('change', {bubbles: true})); return true;",
                json!([selector, value]),
            )
            .await?;
        if set != json!(true) {
            bail!("no element matches {selector:?}");
        }
        Ok(())
    }

    /// How many elements matching `selector` contain `text`.
    pub async fn count_with_text(&self, selector: &str, text: &str) -> Result<u64> {
        let n = self
            .script(
                "return [...document.querySelectorAll(arguments[0])].filter(e => e.innerText.includes(arguments[1])).length;",
                json!([selector, text]),
            )
            .await?;
        n.as_u64().context("the count was not a number")
    }

    /// Clicks an element.
    pub async fn click(&self, e: &Element) -> Result<()> {
        self.post(&format!("/element/{}/click", e.0), json!({})).await.map(|_| ())
    }

    /// Types `text` into an element.
    pub async fn type_text(&self, e: &Element, text: &str) -> Result<()> {
        self.post(&format!("/element/{}/value", e.0), json!({"text": text})).await.map(|_| ())
    }

    /// Presses `keys` one after the other on whatever has the focus, as a keyboard does
    /// (WebDriver's key codes: Enter is `\u{E007}`, Escape `\u{E00C}`, Tab `\u{E004}`).
    pub async fn press(&self, keys: &str) -> Result<()> {
        let mut actions = Vec::new();
        for c in keys.chars() {
            actions.push(json!({"type": "keyDown", "value": c.to_string()}));
            actions.push(json!({"type": "keyUp", "value": c.to_string()}));
        }
        self.post("/actions", json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]}))
            .await
            .map(|_| ())
    }

    /// Saves a screenshot of the window as `<name>.png` in the screenshots folder.
    pub async fn screenshot(&self, name: &str) -> Result<PathBuf> {
        // Let the page paint what the test just waited for: two animation frames. The app draws
        // without accelerated compositing, and WebKit then paints only what changed, while the
        // WebDriver snapshot waits for the next painting: a one-pixel mark in the corner that
        // changes every frame keeps paintings coming until the snapshot is taken.
        self.script(
            "const m = document.createElement('div'); m.id = '__snapshot_tick'; m.setAttribute('aria-hidden', 'true'); \
             m.style.cssText = 'position:fixed;left:0;top:0;width:1px;height:1px;pointer-events:none;z-index:2147483647'; \
             document.documentElement.appendChild(m); let on = false; \
             const tick = () => { on = !on; m.style.background = on ? 'rgba(255,255,255,0.02)' : 'transparent'; \
               if (m.isConnected) requestAnimationFrame(tick); }; tick(); \
             return new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))));",
            json!([]),
        )
        .await?;
        let v = self.get("/screenshot").await;
        self.script("document.getElementById('__snapshot_tick')?.remove(); return true;", json!([])).await?;
        let v = v?;
        let png = base64::engine::general_purpose::STANDARD.decode(v.as_str().context("no screenshot data")?)?;
        let path = self.screenshots.join(format!("{name}.png"));
        std::fs::write(&path, png)?;
        Ok(path)
    }

    /// Ends the session (the driver closes the app).
    pub async fn close(self) -> Result<()> {
        send(self.http.delete(&self.base)).await.map(|_| ())
    }
}

async fn send(req: reqwest::RequestBuilder) -> Result<Value> {
    let resp = req.send().await?;
    let status = resp.status();
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    if !status.is_success() {
        let v = &body["value"];
        bail!(
            "WebDriver answered {status}: {} {}",
            v["error"].as_str().unwrap_or_default(),
            v["message"].as_str().unwrap_or_default()
        );
    }
    Ok(body["value"].clone())
}

/// axe-core (from `ui/node_modules`), run in the page.
pub struct Axe {
    source: String,
}

impl Axe {
    /// Reads axe-core from the workspace at `root`.
    pub fn new(root: &Path) -> Result<Axe> {
        let path = root.join("ui/node_modules/axe-core/axe.min.js");
        let source = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}; run `npm ci` in ui/ (./test.sh does)", path.display()))?;
        Ok(Axe { source })
    }

    /// Checks the page as it is now: no serious or critical violation of WCAG 2.1 A/AA or of
    /// axe's best practices.
    pub async fn check(&self, s: &Session, screen: &str) -> Result<()> {
        let loaded = s.script("return typeof window.axe !== 'undefined';", json!([])).await?;
        if loaded != json!(true) {
            s.script(&format!("{}\n;return true;", self.source), json!([])).await.context("cannot load axe-core")?;
        }
        let found = s
            .script(
                "return axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', \
                 'best-practice']}, resultTypes: ['violations']}).then(r => r.violations \
                 .filter(v => v.impact === 'serious' || v.impact === 'critical') \
                 .map(v => `${v.impact} ${v.id} (${v.help}): ${v.nodes.slice(0, 4).map(n => n.target.join(' ')).join(' | ')}`));",
                json!([]),
            )
            .await?;
        let found: Vec<String> = serde_json::from_value(found)?;
        ensure!(found.is_empty(), "axe-core found on the {screen} screen:\n  {}", found.join("\n  "));
        eprintln!("axe-core: no serious or critical violation on the {screen} screen");
        Ok(())
    }
}
