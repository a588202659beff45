//! A real OpenID provider for tests: npm's `oidc-provider`, run by `tests/oidc/provider.mjs`
//! (installed by `install_test_oidc` of `tests/oidc.sh`, which `test.sh` sources and which
//! exports `MGDS_TEST_OIDC_PROVIDER`), and a browser that signs in and out at it.
//!
//! The configuration given to [`TestProvider::start`] is the JSON object `provider.mjs`
//! describes: `port`, `clients`, `accounts` (sub → claims), `resource`, `access_token_ttl`,
//! `id_token_ttl`, `key_dir` and `signing_keys`. Without a `key_dir` the provider's keys are
//! kept in a temporary folder of its own, removed with it, so that [`TestProvider::restart`]
//! finds them again (key rotation: `{"signing_keys": ["k2", "k1"]}`, then `["k2"]`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdout, Command};
use url::Url;

/// The environment variable naming the runnable `provider.mjs`.
pub const PROVIDER_ENV: &str = "MGDS_TEST_OIDC_PROVIDER";

/// The longest wait for the provider to listen.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The most requests one sign-in or sign-out makes.
const MAX_STEPS: usize = 20;

/// A running oidc-provider (killed on drop).
pub struct TestProvider {
    /// Its issuer identifier, `http://127.0.0.1:PORT`.
    pub issuer: String,
    port: u16,
    config: Value,
    child: Child,
    // Kept open: the provider writes nothing more, but a closed pipe would fail it if it did.
    _stdout: BufReader<ChildStdout>,
    key_dir: PathBuf,
    own_key_dir: bool,
}

impl TestProvider {
    /// Starts `node $MGDS_TEST_OIDC_PROVIDER` with `config` (a JSON object, see the module) on
    /// its stdin and waits for it to listen (at most 30 s). Panics, saying how to install it,
    /// when the variable is missing or the provider does not start.
    pub async fn start(config: Value) -> TestProvider {
        let mut fields = match config {
            Value::Object(fields) => fields,
            other => panic!("the test OpenID provider's configuration must be a JSON object, not {other}"),
        };
        let (key_dir, own_key_dir) = match fields.get("key_dir").and_then(Value::as_str) {
            Some(dir) => (PathBuf::from(dir), false),
            None => {
                let dir = temporary_dir();
                fields.insert("key_dir".into(), Value::String(dir.to_string_lossy().into_owned()));
                (dir, true)
            }
        };
        let config = Value::Object(fields);
        let (child, stdout, issuer) = spawn(&config).await;
        let port = Url::parse(&issuer)
            .ok()
            .and_then(|u| u.port())
            .unwrap_or_else(|| panic!("the test OpenID provider announced an issuer without a port: {issuer}"));
        TestProvider { issuer, port, config, child, _stdout: stdout, key_dir, own_key_dir }
    }

    /// Stops the provider and starts it again on the same port with `changes` (a JSON object)
    /// laid over its configuration, e.g. `{"signing_keys": ["k2", "k1"]}`. Sessions, grants and
    /// tokens it held in memory are gone afterwards; its keys stay (same `key_dir`).
    pub async fn restart(&mut self, changes: Value) {
        let changes = match changes {
            Value::Object(changes) => changes,
            other => panic!("the test OpenID provider's configuration changes must be a JSON object, not {other}"),
        };
        let fields = self.config.as_object_mut().expect("the configuration is an object");
        fields.extend(changes);
        fields.insert("port".into(), Value::from(self.port));
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
        let (child, stdout, issuer) = spawn(&self.config).await;
        assert_eq!(issuer, self.issuer, "the test OpenID provider came back under another issuer");
        self.child = child;
        self._stdout = stdout;
    }

    /// A browser at the provider, with a cookie jar of its own.
    pub fn browser(&self) -> ProviderBrowser {
        ProviderBrowser {
            http: http_client(),
            issuer: Url::parse(&self.issuer).expect("the issuer is a URL"),
            cookies: Mutex::new(Vec::new()),
        }
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The folder of its signing keys (`<kid>.json`, private JWKs).
    pub fn key_dir(&self) -> &Path {
        &self.key_dir
    }
}

impl Drop for TestProvider {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        if self.own_key_dir {
            let _ = std::fs::remove_dir_all(&self.key_dir);
        }
    }
}

/// A new, empty folder under the system's temporary folder.
fn temporary_dir() -> PathBuf {
    static COUNT: AtomicU32 = AtomicU32::new(0);
    let base = std::env::temp_dir();
    loop {
        let name = format!(
            "mgds-oidc-keys-{}-{}-{:08x}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed),
            rand::random::<u32>()
        );
        let dir = base.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return dir,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => panic!("cannot create a folder under {}: {e}", base.display()),
        }
    }
}

/// Starts the provider with `config` and returns it once it has announced its issuer.
async fn spawn(config: &Value) -> (Child, BufReader<ChildStdout>, String) {
    let script = std::env::var_os(PROVIDER_ENV).unwrap_or_else(|| {
        panic!(
            "{PROVIDER_ENV} is not set: the OpenID Connect tests need a real provider; run them through \
             test.sh, or `source tests/oidc.sh && install_test_oidc` first (it installs npm's oidc-provider \
             and exports {PROVIDER_ENV})"
        )
    });
    let mut child = Command::new("node")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run `node {}` (the test OpenID provider; Node.js is needed, see tests/oidc.sh): {e}",
                Path::new(&script).display()
            )
        });
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
    let body = serde_json::to_vec(config).expect("the configuration is JSON");
    let ready = async {
        // A provider that fails early closes its stdin: its exit, below, tells more.
        let _ = stdin.write_all(&body).await;
        drop(stdin);
        let mut line = String::new();
        stdout.read_line(&mut line).await.map(|_| line)
    };
    let line = match tokio::time::timeout(START_TIMEOUT, ready).await {
        Ok(Ok(line)) if !line.trim().is_empty() => line,
        Ok(result) => {
            let status = child.wait().await.map(|s| s.to_string()).unwrap_or_else(|e| e.to_string());
            panic!(
                "the test OpenID provider (node {}) stopped before it was ready ({status}{}); its errors are above. \
                 Is it installed (install_test_oidc, tests/oidc.sh)?",
                Path::new(&script).display(),
                result.err().map(|e| format!(", {e}")).unwrap_or_default()
            );
        }
        Err(_) => panic!("the test OpenID provider did not start within {START_TIMEOUT:?}"),
    };
    let issuer = serde_json::from_str::<Value>(&line)
        .ok()
        .and_then(|v| v.get("issuer").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| panic!("the test OpenID provider said {line:?}, not its issuer"));
    (child, stdout, issuer)
}

/// A client that follows no redirects and keeps no connections (the provider may restart).
fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(15))
        .pool_max_idle_per_host(0)
        .build()
        .expect("an HTTP client")
}

/// A browser at the provider: follows its pages and keeps its cookies.
pub struct ProviderBrowser {
    http: reqwest::Client,
    issuer: Url,
    /// (name, path, value), as the provider set them.
    cookies: Mutex<Vec<(String, String, String)>>,
}

/// One page the provider answered.
struct Page {
    url: Url,
    status: u16,
    location: Option<Url>,
    body: String,
}

impl ProviderBrowser {
    /// Follows `authorization_url` (a URL the relying party built: `/auth?...` with PKCE), signs
    /// in as `account` (a sub of the provider's `accounts`) on the provider's sign-in form,
    /// consents if asked, and returns the URL the provider finally sends the browser to at the
    /// client (`redirect_uri?code=..&state=..&iss=..`, or `?error=..`), without requesting it.
    /// A browser that is already signed in at the provider is not asked again. The error names
    /// what the provider showed (its page's text) when it stops at an error.
    pub async fn sign_in(&self, authorization_url: &str, account: &str) -> Result<String, String> {
        let mut page = self.get(self.at_provider(authorization_url)?).await?;
        let mut signed_in = false;
        for _ in 0..MAX_STEPS {
            if let Some(location) = page.location.take() {
                if !self.is_provider(&location) {
                    return Ok(location.to_string());
                }
                page = self.get(location).await?;
                continue;
            }
            if page.status != 200 {
                return Err(page.error());
            }
            let Some(form) = forms(&page.body).into_iter().find(|f| f.field("prompt").is_some()) else {
                return Err(page.error());
            };
            let mut fields = form.fields.clone();
            match form.field("prompt") {
                Some("login") if !signed_in => {
                    signed_in = true;
                    set(&mut fields, "login", account);
                    set(&mut fields, "password", "any password");
                }
                Some("login") => return Err(format!("the provider asked again for a sign-in: {}", page.text())),
                Some("consent") => {}
                _ => return Err(page.error()),
            }
            let action = page.url.join(&form.action).map_err(|e| format!("a form's address: {e}"))?;
            page = self.post(self.at_provider(action.as_str())?, &fields).await?;
        }
        Err(format!("no answer for the client after {MAX_STEPS} pages of the provider"))
    }

    /// Follows an RP-initiated logout URL (`end_session_endpoint?id_token_hint=..&
    /// post_logout_redirect_uri=..&state=..`), answers "Yes, sign me out" on the provider's page
    /// (the whole session at the provider ends: every client of it is sent a back-channel
    /// logout, before this returns) and returns where the provider sends the browser: the
    /// `post_logout_redirect_uri` (with `state`), or the provider's own "signed out" page.
    pub async fn sign_out(&self, end_session_url: &str) -> Result<String, String> {
        let mut page = self.get(self.at_provider(end_session_url)?).await?;
        let mut confirmed = false;
        for _ in 0..MAX_STEPS {
            if let Some(location) = page.location.take() {
                if confirmed || !self.is_provider(&location) {
                    return Ok(location.to_string());
                }
                page = self.get(location).await?;
                continue;
            }
            if page.status != 200 || confirmed {
                return Err(page.error());
            }
            // The confirmation form (or, without a session, the page that posts it by itself).
            let Some(form) = forms(&page.body).into_iter().find(|f| f.field("xsrf").is_some()) else {
                return Err(page.error());
            };
            let mut fields = form.fields.clone();
            set(&mut fields, "logout", "yes");
            let action = page.url.join(&form.action).map_err(|e| format!("a form's address: {e}"))?;
            confirmed = true;
            page = self.post(self.at_provider(action.as_str())?, &fields).await?;
        }
        Err(format!("no end of the sign-out after {MAX_STEPS} pages of the provider"))
    }

    /// Ends this browser's session at the provider without a relying party, as a user signing
    /// out at the provider itself: every client of the session is sent a back-channel logout.
    pub async fn end_session_at_provider(&self) -> Result<(), String> {
        let url = self.issuer.join("/session/end").map_err(|e| e.to_string())?;
        self.sign_out(url.as_str()).await.map(drop)
    }

    /// `url` as a URL of the provider, or why not.
    fn at_provider(&self, url: &str) -> Result<Url, String> {
        let url = Url::parse(url).map_err(|e| format!("{url:?} is not a URL: {e}"))?;
        if self.is_provider(&url) { Ok(url) } else { Err(format!("{url} is not at the provider {}", self.issuer)) }
    }

    fn is_provider(&self, url: &Url) -> bool {
        url.origin() == self.issuer.origin()
    }

    async fn get(&self, url: Url) -> Result<Page, String> {
        let request = self.http.get(url.clone());
        self.send(url, request).await
    }

    async fn post(&self, url: Url, fields: &[(String, String)]) -> Result<Page, String> {
        let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish();
        let request = self
            .http
            .post(url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body);
        self.send(url, request).await
    }

    async fn send(&self, url: Url, mut request: reqwest::RequestBuilder) -> Result<Page, String> {
        if let Some(cookies) = self.cookie_header(url.path()) {
            request = request.header(reqwest::header::COOKIE, cookies);
        }
        let response = request
            .header(reqwest::header::ACCEPT, "text/html")
            .send()
            .await
            .map_err(|e| format!("the provider could not be reached at {url}: {e}"))?;
        let status = response.status();
        for value in response.headers().get_all(reqwest::header::SET_COOKIE) {
            if let Ok(value) = value.to_str() {
                self.keep_cookie(value);
            }
        }
        let location = match response.headers().get(reqwest::header::LOCATION) {
            Some(value) if status.is_redirection() => {
                let value = value.to_str().map_err(|_| "a redirect to an unreadable address".to_string())?;
                Some(url.join(value).map_err(|e| format!("a redirect to {value:?}: {e}"))?)
            }
            _ => None,
        };
        let body = response.text().await.map_err(|e| format!("the provider's answer at {url}: {e}"))?;
        Ok(Page { url, status: status.as_u16(), location, body })
    }

    fn cookie_header(&self, path: &str) -> Option<String> {
        let cookies = self.cookies.lock().unwrap_or_else(|e| e.into_inner());
        let header = cookies
            .iter()
            .filter(|(_, cookie_path, _)| path_matches(path, cookie_path))
            .map(|(name, _, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join("; ");
        (!header.is_empty()).then_some(header)
    }

    /// Keeps (or, when expired, forgets) the cookie of one `Set-Cookie` header.
    fn keep_cookie(&self, header: &str) {
        let mut parts = header.split(';');
        let Some((name, value)) = parts.next().and_then(|p| p.split_once('=')) else { return };
        let (name, value) = (name.trim().to_string(), value.trim().to_string());
        let mut path = "/".to_string();
        let mut expired = value.is_empty();
        for attribute in parts {
            let (key, val) = attribute.split_once('=').unwrap_or((attribute, ""));
            match key.trim().to_ascii_lowercase().as_str() {
                "path" => path = val.trim().to_string(),
                "max-age" => expired |= val.trim().parse::<i64>().is_ok_and(|s| s <= 0),
                "expires" => expired |= val.contains("1970"),
                _ => {}
            }
        }
        let mut cookies = self.cookies.lock().unwrap_or_else(|e| e.into_inner());
        cookies.retain(|(n, p, _)| !(*n == name && *p == path));
        if !expired {
            cookies.push((name, path, value));
        }
    }
}

impl Page {
    /// What the page says, as text.
    fn text(&self) -> String {
        page_text(&self.body)
    }

    fn error(&self) -> String {
        format!("the provider answered {} at {}: {}", self.status, self.url, self.text())
    }
}

/// Whether a cookie set for `cookie_path` goes with a request for `path` (RFC 6265 §5.1.4).
fn path_matches(path: &str, cookie_path: &str) -> bool {
    path == cookie_path
        || (path.starts_with(cookie_path) && (cookie_path.ends_with('/') || path[cookie_path.len()..].starts_with('/')))
}

fn set(fields: &mut Vec<(String, String)>, name: &str, value: &str) {
    fields.retain(|(n, _)| n != name);
    fields.push((name.to_string(), value.to_string()));
}

/// A form of a page: its action and the values of its inputs.
#[derive(Debug, Clone)]
struct Form {
    action: String,
    fields: Vec<(String, String)>,
}

impl Form {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// The forms of an HTML page (enough of HTML for the provider's own pages).
fn forms(html: &str) -> Vec<Form> {
    let lower = html.to_ascii_lowercase();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(start) = lower[at..].find("<form").map(|i| at + i) {
        let Some(tag_end) = lower[start..].find('>').map(|i| start + i) else { break };
        let end = lower[tag_end..].find("</form").map(|i| tag_end + i).unwrap_or(html.len());
        let action = attribute(&html[start + 5..tag_end], "action").unwrap_or_default();
        let mut fields = Vec::new();
        let mut i = tag_end;
        while let Some(input) = lower[i..end].find("<input").map(|j| i + j) {
            let input_end = lower[input..end].find('>').map(|j| input + j).unwrap_or(end);
            let attributes = &html[input + 6..input_end];
            if let Some(name) = attribute(attributes, "name") {
                fields.push((name, attribute(attributes, "value").unwrap_or_default()));
            }
            i = input_end;
        }
        found.push(Form { action, fields });
        at = end;
    }
    found
}

/// The (entity-decoded) value of attribute `name` among a tag's attributes.
fn attribute(attributes: &str, name: &str) -> Option<String> {
    let mut rest = attributes.trim_start_matches('/');
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
        if rest.is_empty() {
            return None;
        }
        let key_end = rest.find(|c: char| c.is_whitespace() || c == '=' || c == '/').unwrap_or(rest.len());
        let key = &rest[..key_end];
        rest = rest[key_end..].trim_start();
        let mut value = String::new();
        if let Some(after) = rest.strip_prefix('=') {
            let after = after.trim_start();
            let (raw, remaining) = match after.chars().next() {
                Some(q @ ('"' | '\'')) => {
                    let close = after[1..].find(q).map(|i| i + 1).unwrap_or(after.len());
                    (&after[1..close], after.get(close + 1..).unwrap_or(""))
                }
                _ => {
                    let stop = after.find(char::is_whitespace).unwrap_or(after.len());
                    (&after[..stop], &after[stop..])
                }
            };
            value = decode_entities(raw);
            rest = remaining;
        }
        if key.eq_ignore_ascii_case(name) {
            return Some(value);
        }
    }
}

/// The text of an HTML page: without its styles, scripts and tags, entities decoded, spaces
/// collapsed, at most 800 characters.
fn page_text(html: &str) -> String {
    let mut text = String::new();
    let lower = html.to_ascii_lowercase();
    let mut i = 0;
    while i < html.len() {
        if lower[i..].starts_with("<style") || lower[i..].starts_with("<script") {
            let close = if lower[i..].starts_with("<style") { "</style>" } else { "</script>" };
            i = lower[i..].find(close).map(|j| i + j + close.len()).unwrap_or(html.len());
            text.push(' ');
        } else if html[i..].starts_with('<') {
            i = html[i..].find('>').map(|j| i + j + 1).unwrap_or(html.len());
            text.push(' ');
        } else {
            let next = html[i..].find('<').map(|j| i + j).unwrap_or(html.len());
            text.push_str(&html[i..next]);
            i = next;
        }
    }
    let text = decode_entities(&text).split_whitespace().collect::<Vec<_>>().join(" ");
    match text.char_indices().nth(800) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let decoded = rest[1..].find(';').filter(|&end| end <= 10).and_then(|end| {
            let entity = &rest[1..=end];
            let c = match entity {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                _ => entity
                    .strip_prefix("#x")
                    .or_else(|| entity.strip_prefix("#X"))
                    .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                    .or_else(|| entity.strip_prefix('#').and_then(|dec| dec.parse().ok()))
                    .and_then(char::from_u32),
            }?;
            Some((c, end + 2))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use serde_json::json;
    use sha2::{Digest, Sha256};
    use tokio::io::AsyncReadExt;

    const RESOURCE: &str = "https://mgds.test/api";

    fn have_provider() -> bool {
        let have = std::env::var_os(PROVIDER_ENV).is_some();
        if !have {
            eprintln!("skipped: {PROVIDER_ENV} is not set (source tests/oidc.sh and run install_test_oidc)");
        }
        have
    }

    fn config(backchannel: Option<&str>) -> Value {
        let mut web = json!({
            "client_id": "mgds-web",
            "client_secret": "web-secret",
            "application_type": "web",
            "token_endpoint_auth_method": "client_secret_basic",
            "redirect_uris": ["http://127.0.0.1:9/cb"],
            "post_logout_redirect_uris": ["http://127.0.0.1:9/bye"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        });
        if let Some(uri) = backchannel {
            web["backchannel_logout_uri"] = json!(uri);
            web["backchannel_logout_session_required"] = json!(true);
        }
        json!({
            "port": 0,
            "resource": RESOURCE,
            "accounts": {
                "alice-sub": {"email": "alice@lab.example", "email_verified": true, "name": "Alice", "groups": ["mgds-admins"]},
            },
            "clients": [web, {
                "client_id": "mgds-desktop",
                "application_type": "native",
                "token_endpoint_auth_method": "none",
                "redirect_uris": ["http://127.0.0.1/callback"],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            }],
        })
    }

    struct Request {
        url: String,
        verifier: String,
        state: String,
    }

    fn random() -> String {
        URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>())
    }

    fn authorization(issuer: &str, client_id: &str, redirect_uri: &str) -> Request {
        let (verifier, state) = (random(), random());
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let mut url = Url::parse(&format!("{issuer}/auth")).unwrap();
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", client_id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("scope", "openid email profile groups")
            .append_pair("state", &state)
            .append_pair("nonce", &random())
            .append_pair("code_challenge", &challenge)
            .append_pair("code_challenge_method", "S256");
        Request { url: url.into(), verifier, state }
    }

    fn query(url: &str, name: &str) -> Option<String> {
        Url::parse(url).unwrap().query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
    }

    fn form(fields: &[(&str, &str)]) -> String {
        url::form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish()
    }

    async fn token(issuer: &str, basic: Option<(&str, &str)>, fields: &[(&str, &str)]) -> Value {
        let mut request = http_client()
            .post(format!("{issuer}/token"))
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(form(fields));
        if let Some((id, secret)) = basic {
            request = request.basic_auth(id, Some(secret));
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        assert!(status.is_success(), "token endpoint: {status} {body}");
        body
    }

    fn jwt(token: &str) -> (Value, Value) {
        let mut parts = token.split('.').map(|p| serde_json::from_slice::<Value>(&URL_SAFE_NO_PAD.decode(p).unwrap()));
        (parts.next().unwrap().unwrap(), parts.next().unwrap().unwrap())
    }

    async fn signed_in_web(provider: &TestProvider, browser: &ProviderBrowser) -> Value {
        let request = authorization(&provider.issuer, "mgds-web", "http://127.0.0.1:9/cb");
        let back = browser.sign_in(&request.url, "alice-sub").await.unwrap();
        assert!(back.starts_with("http://127.0.0.1:9/cb?"), "{back}");
        assert_eq!(query(&back, "state").as_deref(), Some(request.state.as_str()));
        assert_eq!(query(&back, "iss").as_deref(), Some(provider.issuer.as_str()));
        let code = query(&back, "code").expect("a code");
        token(
            &provider.issuer,
            Some(("mgds-web", "web-secret")),
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", "http://127.0.0.1:9/cb"),
                ("code_verifier", &request.verifier),
            ],
        )
        .await
    }

    #[tokio::test]
    async fn code_flow_with_pkce_gives_an_id_token_and_a_jwt_access_token() {
        if !have_provider() {
            return;
        }
        let provider = TestProvider::start(config(None)).await;
        let browser = provider.browser();
        let tokens = signed_in_web(&provider, &browser).await;

        let (_, id) = jwt(tokens["id_token"].as_str().unwrap());
        assert_eq!(id["sub"], "alice-sub");
        assert_eq!(id["aud"], "mgds-web");
        assert_eq!(id["email"], "alice@lab.example");
        assert_eq!(id["name"], "Alice");
        assert_eq!(id["groups"], json!(["mgds-admins"]));
        // No `sid`: the provider puts it in ID tokens for clients that want it with back-channel logouts.
        assert!(id.get("sid").is_none());

        let (header, access) = jwt(tokens["access_token"].as_str().unwrap());
        assert_eq!((header["alg"].as_str(), header["kid"].as_str()), (Some("RS256"), Some("k1")));
        assert_eq!(access["aud"], RESOURCE);
        assert_eq!(access["iss"], provider.issuer.as_str());
        assert_eq!(access["client_id"], "mgds-web");
        assert_eq!(access["email"], "alice@lab.example");
        assert_eq!(access["groups"], json!(["mgds-admins"]));
        assert!(tokens["refresh_token"].is_string());

        // Signed in already: no form this time.
        let again = authorization(&provider.issuer, "mgds-web", "http://127.0.0.1:9/cb");
        let back = browser.sign_in(&again.url, "anyone").await.unwrap();
        assert!(query(&back, "code").is_some(), "{back}");

        // An account the provider does not have is refused at the provider.
        let unknown = authorization(&provider.issuer, "mgds-web", "http://127.0.0.1:9/cb");
        let error = provider.browser().sign_in(&unknown.url, "mallory").await.unwrap_err();
        assert!(error.contains("unknown account: mallory"), "{error}");

        // RP-initiated logout comes back to the client with its state.
        let mut end = Url::parse(&format!("{}/session/end", provider.issuer)).unwrap();
        end.query_pairs_mut()
            .append_pair("id_token_hint", tokens["id_token"].as_str().unwrap())
            .append_pair("post_logout_redirect_uri", "http://127.0.0.1:9/bye")
            .append_pair("state", "s1");
        assert_eq!(browser.sign_out(end.as_str()).await.unwrap(), "http://127.0.0.1:9/bye?state=s1");
    }

    #[tokio::test]
    async fn a_native_client_signs_in_on_any_loopback_port_and_refreshes() {
        if !have_provider() {
            return;
        }
        let provider = TestProvider::start(config(None)).await;
        let port = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap().port();
        let redirect_uri = format!("http://127.0.0.1:{port}/callback");
        let request = authorization(&provider.issuer, "mgds-desktop", &redirect_uri);
        let back = provider.browser().sign_in(&request.url, "alice-sub").await.unwrap();
        assert!(back.starts_with(&redirect_uri), "{back}");
        let code = query(&back, "code").expect("a code");
        let tokens = token(
            &provider.issuer,
            None,
            &[
                ("grant_type", "authorization_code"),
                ("client_id", "mgds-desktop"),
                ("code", &code),
                ("redirect_uri", &redirect_uri),
                ("code_verifier", &request.verifier),
            ],
        )
        .await;
        let refresh = tokens["refresh_token"].as_str().expect("a refresh token");
        let refreshed = token(
            &provider.issuer,
            None,
            &[("grant_type", "refresh_token"), ("client_id", "mgds-desktop"), ("refresh_token", refresh)],
        )
        .await;
        assert_eq!(jwt(refreshed["access_token"].as_str().unwrap()).1["sub"], "alice-sub");
        assert_ne!(refreshed["refresh_token"].as_str(), Some(refresh), "a public client's refresh token rotates");
    }

    #[tokio::test]
    async fn ending_the_session_at_the_provider_sends_a_back_channel_logout() {
        if !have_provider() {
            return;
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri = format!("http://{}/backchannel", listener.local_addr().unwrap());
        let provider = TestProvider::start(config(Some(&uri))).await;
        let browser = provider.browser();
        let tokens = signed_in_web(&provider, &browser).await;
        let sid = jwt(tokens["id_token"].as_str().unwrap()).1["sid"].clone();

        let receiver = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                let n = socket.read(&mut buf).await.unwrap();
                assert!(n > 0, "the request ended early");
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request).to_string();
                if let Some(head_end) = text.find("\r\n\r\n") {
                    let length = text[..head_end]
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_string())
                        })
                        .and_then(|v| v.parse::<usize>().ok())
                        .unwrap_or(0);
                    if request.len() >= head_end + 4 + length {
                        socket
                            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                            .await
                            .unwrap();
                        return text;
                    }
                }
            }
        });
        browser.end_session_at_provider().await.unwrap();
        let request =
            tokio::time::timeout(Duration::from_secs(10), receiver).await.expect("a back-channel logout").unwrap();
        assert!(request.starts_with("POST /backchannel "), "{request}");
        let body = &request[request.find("\r\n\r\n").unwrap() + 4..];
        assert!(body.starts_with("logout_token="), "{body}");
        let token = url::form_urlencoded::parse(body.as_bytes()).find(|(k, _)| k == "logout_token").unwrap().1;
        let (_, logout) = jwt(&token);
        assert_eq!(logout["sub"], "alice-sub");
        assert_eq!(logout["sid"], sid);
        assert!(logout["events"]["http://schemas.openid.net/event/backchannel-logout"].is_object());
    }

    #[tokio::test]
    async fn a_restart_rotates_the_signing_keys() {
        if !have_provider() {
            return;
        }
        let mut provider = TestProvider::start(config(None)).await;
        let kids = |jwks: Value| -> Vec<String> {
            jwks["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap().to_string()).collect()
        };
        let jwks = |issuer: String| async move {
            http_client().get(format!("{issuer}/jwks")).send().await.unwrap().json::<Value>().await.unwrap()
        };
        assert_eq!(kids(jwks(provider.issuer.clone()).await), ["k1"]);
        let issuer = provider.issuer.clone();
        provider.restart(json!({"signing_keys": ["k2", "k1"]})).await;
        assert_eq!(provider.issuer, issuer);
        assert_eq!(kids(jwks(provider.issuer.clone()).await), ["k2", "k1"]);
        let tokens = signed_in_web(&provider, &provider.browser()).await;
        assert_eq!(jwt(tokens["access_token"].as_str().unwrap()).0["kid"], "k2");
        assert_eq!(jwt(tokens["id_token"].as_str().unwrap()).0["kid"], "k2");
        provider.restart(json!({"signing_keys": ["k2"]})).await;
        assert_eq!(kids(jwks(provider.issuer.clone()).await), ["k2"]);
        assert!(provider.key_dir().join("k1.json").exists());
    }

    #[test]
    fn forms_and_page_text_are_read() {
        let page = r#"<html><style>p{}</style><form id="op.logoutForm" method="post" action="http://x/session/end/confirm?a=1&amp;b=2"><input type="hidden" name="xsrf" value="abc&#39;d"/></form><p>Do you &amp; me</p></html>"#;
        let found = forms(page);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].action, "http://x/session/end/confirm?a=1&b=2");
        assert_eq!(found[0].field("xsrf"), Some("abc'd"));
        assert_eq!(page_text(page), "Do you & me");
        assert!(path_matches("/auth/abc", "/auth/abc"));
        assert!(path_matches("/interaction/x/y", "/interaction/x"));
        assert!(!path_matches("/authx", "/auth"));
        assert!(path_matches("/anything", "/"));
    }
}
