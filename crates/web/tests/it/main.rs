//! The web UI as the service serves it, over real HTTP: the page with its policy and never
//! cached, the build's files cached for good and compressed, any other address answered with
//! the page, and the API, storage, upload and metrics routes untouched (their 404s stay JSON);
//! `--no-web` leaves the UI out. The screens' commands for a browser, signed in with a session:
//! what the API allows that user, and nothing without the session's token.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use mgds_server::{AppState, Config};

struct Service {
    url: String,
    http: reqwest::Client,
    state: AppState,
    _dir: tempfile::TempDir,
}

async fn start(web: bool, public_url: Option<&str>) -> Service {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::new(dir.path().join("data"));
    let bound = mgds_server::bind("127.0.0.1:0".parse().unwrap(), None).await.unwrap();
    let url = bound.url();
    let mut state: AppState = AppState::open(&config).await.unwrap().with_public_url(public_url.unwrap_or(&url));
    if web {
        state = state.with_web(Arc::new(mgds_web::WebUi::default()));
    }
    tokio::spawn(mgds_server::serve(bound, state.clone(), std::future::pending()));
    let _ = rustls::crypto::ring::default_provider().install_default();
    Service { url, http: reqwest::Client::new(), state, _dir: dir }
}

/// The build's files the page names (`./assets/...`).
fn assets_of(html: &str) -> Vec<String> {
    html.split("./assets/").skip(1).map(|rest| format!("assets/{}", rest.split('"').next().unwrap())).collect()
}

#[tokio::test]
async fn the_page_and_its_files_are_served_as_a_browser_needs() {
    assert!(mgds_web::WebUi::is_built(), "build the UI first (cd ui && npm ci && npm run build); ./test.sh does");
    let svc = start(true, None).await;
    for path in ["/", "/index.html", "/samples/0123456789abcdef", "/account"] {
        let r = svc.http.get(format!("{}{path}", svc.url)).header("accept", HTML).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200, "{path}");
        let h = r.headers().clone();
        assert_eq!(h["content-type"], "text/html; charset=utf-8", "{path}");
        assert_eq!(h["cache-control"], "no-store", "{path}");
        let csp = h["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("script-src 'self';") && !csp.contains("unsafe-eval"), "{csp}");
        assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
        assert_eq!(h["x-frame-options"], "DENY");
        let html = r.text().await.unwrap();
        assert!(html.contains("<base href=\"/\" />"), "{html}");
        assert!(!html.contains("<script>") && !html.contains("<script type=\"module\">"), "no inline script: {html}");
    }
    let html = svc.http.get(format!("{}/", svc.url)).header("accept", HTML).send().await.unwrap().text().await.unwrap();
    let assets = assets_of(&html);
    assert!(assets.iter().any(|a| a.ends_with(".js")) && assets.iter().any(|a| a.ends_with(".css")), "{assets:?}");
    for a in &assets {
        let plain = svc.http.get(format!("{}/{a}", svc.url)).send().await.unwrap();
        assert_eq!(plain.status().as_u16(), 200, "{a}");
        assert_eq!(plain.headers()["cache-control"], "public, max-age=31536000, immutable", "{a}");
        assert!(plain.headers().get("content-encoding").is_none());
        let size = plain.bytes().await.unwrap().len();
        let gz = svc.http.get(format!("{}/{a}", svc.url)).header("accept-encoding", "gzip").send().await.unwrap();
        assert_eq!(gz.headers()["content-encoding"], "gzip", "{a}");
        assert_eq!(gz.headers()["vary"], "accept-encoding");
        let zipped = gz.bytes().await.unwrap().len();
        assert!(zipped < size, "{a}: {zipped} bytes gzipped of {size}");
        if size > 20_000 {
            assert!(zipped < size / 2, "{a}: {zipped} bytes gzipped of {size}");
        }
    }
    // A file of the build that is not there is a 404, not the page; nor does a path climb out.
    let r = svc.http.get(format!("{}/assets/index-gone.js", svc.url)).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 404);
    for path in ["/assets/%2e%2e/%2e%2e/Cargo.toml", "/..%2f..%2fCargo.toml", "/assets/..%5c..%5cCargo.toml"] {
        let r = svc.http.get(format!("{}{path}", svc.url)).header("accept", HTML).send().await.unwrap();
        let body = r.text().await.unwrap();
        assert!(!body.contains("[package]") && !body.contains("[workspace"), "{path} reached a file outside the build");
    }
    // A raw `..` (an HTTP client normalises it away; a hand-made request does not).
    for path in ["/assets/../../../Cargo.toml", "/../../Cargo.toml", "/assets/..\\..\\Cargo.toml"] {
        let answer = raw_get(&svc.url, path).await;
        assert!(!answer.contains("[package]") && !answer.contains("[workspace"), "{path}: {answer}");
    }
    // A script's request for an unknown path keeps its JSON 404 (no Accept: text/html).
    let r = svc.http.get(format!("{}/healthz", svc.url)).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 404);
    let r = svc.http.get(format!("{}//api/v1/samples", svc.url)).header("accept", HTML).send().await.unwrap();
    assert!(
        !r.headers()["content-type"].to_str().unwrap().starts_with("text/html"),
        "a doubled slash in an API address"
    );
    // The API, the storage and upload routes and /metrics keep their own answers.
    for path in ["/api/v1/nothing-here", "/api", "/storage/nothing", "/mgds-uploads/x"] {
        let r = svc.http.get(format!("{}{path}", svc.url)).send().await.unwrap();
        assert!(r.status().is_client_error(), "{path}: {}", r.status());
        let ct = r.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
        assert!(!ct.starts_with("text/html"), "{path} answered the page");
    }
    let r = svc.http.get(format!("{}/api/v1/nothing-here", svc.url)).send().await.unwrap();
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["status"], 404);
    let r = svc.http.get(format!("{}/metrics", svc.url)).send().await.unwrap();
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("application/openmetrics-text"));
    // Writes to a page address are not pages.
    let r = svc.http.post(format!("{}/account", svc.url)).send().await.unwrap();
    assert!(r.status().is_client_error());
}

#[tokio::test]
async fn behind_a_proxy_the_page_names_its_path() {
    let svc = start(true, Some("https://lab.example.org/mgds")).await;
    let html = svc.http.get(format!("{}/", svc.url)).header("accept", HTML).send().await.unwrap().text().await.unwrap();
    assert!(html.contains("<base href=\"/mgds/\" />"), "{html}");
}

#[tokio::test]
async fn without_the_web_ui_the_root_is_a_404_in_the_api_s_shape() {
    let svc = start(false, None).await;
    let r = svc.http.get(format!("{}/", svc.url)).header("accept", HTML).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 404);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["status"], 404);
}

/// What a browser's navigation sends as `Accept`.
const HTML: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/// A GET of `path` exactly as written, over a plain TCP connection; the answer as text.
async fn raw_get(url: &str, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = url.trim_start_matches("http://");
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: {HTML}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

/// A user with a password, signed in: (API key, session cookie, CSRF token).
async fn signed_in(svc: &Service, email: &str) -> (String, String, String) {
    let user = mgds_server::admin::create_user(&svc.state.db, email, Some(email), mgds_server::admin::Role::Member)
        .await
        .unwrap();
    mgds_server::store::sessions::set_password(&svc.state.db, None, &user.id, "long enough password").await.unwrap();
    let r = svc
        .http
        .post(format!("{}/api/v1/sign_in", svc.url))
        .json(&serde_json::json!({ "email": email, "password": "long enough password" }))
        .send()
        .await
        .unwrap();
    let cookie = r.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_string();
    let body: serde_json::Value = r.json().await.unwrap();
    (user.api_key, cookie, body["csrf_token"].as_str().unwrap().to_string())
}

async fn command(
    svc: &Service,
    session: &(String, String, String),
    name: &str,
    args: serde_json::Value,
) -> (u16, serde_json::Value) {
    let r = svc
        .http
        .post(format!("{}/api/web/v1/commands/{name}", svc.url))
        .header("cookie", &session.1)
        .header("x-csrf-token", &session.2)
        .json(&args)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(serde_json::Value::Null))
}

#[tokio::test]
async fn a_browser_runs_the_screens_commands_as_its_user() {
    let svc = start(true, None).await;
    let ana = signed_in(&svc, "ana@lab.example.org").await;
    let bo = signed_in(&svc, "bo@lab.example.org").await;
    let (s, c) = command(&svc, &ana, "connection", serde_json::json!({})).await;
    assert_eq!(s, 200, "{c}");
    assert_eq!(c["email"], "ana@lab.example.org");
    assert_eq!(c["local"], false);
    // A sample of Ana's (pre-uploaded with her key) is in her table, not in Bo's.
    let r = svc
        .http
        .post(format!("{}/api/v1/samples/preupload", svc.url))
        .basic_auth(&ana.0, Some(""))
        .json(&serde_json::json!({ "metadata": { "name": "Ana's gut sample" } }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let query = serde_json::json!({ "query": { "page": 1, "per_page": 50 } });
    let (s, page) = command(&svc, &ana, "list_samples", query.clone()).await;
    assert_eq!(s, 200, "{page}");
    assert_eq!(page["total"], 1, "{page}");
    let id = page["rows"][0]["id"].as_str().unwrap().to_string();
    let (s, page) = command(&svc, &bo, "list_samples", query).await;
    assert_eq!((s, &page["total"]), (200, &serde_json::json!(0)), "{page}");
    let (s, detail) = command(&svc, &ana, "sample", serde_json::json!({ "id": id })).await;
    assert_eq!(s, 200, "{detail}");
    let (s, refused) = command(&svc, &bo, "sample", serde_json::json!({ "id": id })).await;
    assert_eq!((s, &refused["code"]), (404, &serde_json::json!("not_found")), "{refused}");
    // Projects made and listed; a project name the service refuses comes back in words.
    let (s, made) = command(
        &svc,
        &ana,
        "create_project",
        serde_json::json!({ "project": { "short_name": "gut_study", "name": "Gut study" } }),
    )
    .await;
    assert_eq!(s, 200, "{made}");
    let (s, list) = command(&svc, &ana, "projects", serde_json::json!({})).await;
    assert_eq!(s, 200);
    assert!(list.to_string().contains("Gut study"), "{list}");
    // What a browser cannot do, and what it is not offered, are refused in words.
    let (s, r) = command(&svc, &ana, "pick_files", serde_json::json!({ "folder": false })).await;
    assert_eq!((s, &r["code"]), (403, &serde_json::json!("desktop_only")), "{r}");
    let (s, r) = command(&svc, &ana, "no_such_command", serde_json::json!({})).await;
    assert_eq!(s, 404, "{r}");
    // Bad arguments name the argument.
    let (s, r) = command(&svc, &ana, "sample", serde_json::json!({ "id": 5 })).await;
    assert_eq!(s, 422, "{r}");
    assert!(r["message"].as_str().unwrap().contains("id"), "{r}");
    // Without the session's token, or with an API key instead of a session, nothing runs.
    let r = svc
        .http
        .post(format!("{}/api/web/v1/commands/projects", svc.url))
        .header("cookie", &ana.1)
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let r = svc
        .http
        .post(format!("{}/api/web/v1/commands/projects", svc.url))
        .basic_auth(&ana.0, Some(""))
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let r = svc
        .http
        .post(format!("{}/api/web/v1/commands/projects", svc.url))
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
}

/// `POST /api/v1/diversity` as a script calls it: with the caller's key, over the samples the
/// caller may read, refusals in the service's error shape naming what to change.
#[tokio::test]
async fn the_diversity_route_answers_scripts_with_their_own_access() {
    let svc = start(true, None).await;
    let ana = signed_in(&svc, "ana@lab.example.org").await;
    let bo = signed_in(&svc, "bo@lab.example.org").await;
    let mut ids = Vec::new();
    for name in ["gut day 1", "gut day 2"] {
        let r = svc
            .http
            .post(format!("{}/api/v1/samples/preupload", svc.url))
            .basic_auth(&ana.0, Some(""))
            .json(&serde_json::json!({ "metadata": { "name": name } }))
            .send()
            .await
            .unwrap();
        let v: serde_json::Value = r.json().await.unwrap();
        ids.push(v["sample_id"].as_str().unwrap().to_string());
    }
    let post = |path: &str, key: Option<&str>, body: serde_json::Value| {
        let mut r = svc.http.post(format!("{}{path}", svc.url)).json(&body);
        if let Some(k) = key {
            r = r.basic_auth(k, Some(""));
        }
        async move {
            let r = r.send().await.unwrap();
            (r.status().as_u16(), r.json::<serde_json::Value>().await.unwrap_or_default())
        }
    };
    let body = serde_json::json!({ "samples": ids, "rank": "species" });
    // Ana's samples have no classification yet: each is named with why.
    let (s, v) = post("/api/v1/diversity", Some(&ana.0), body.clone()).await;
    assert_eq!((s, v["code"].as_str()), (422, Some("not_ready")), "{v}");
    assert!(v["message"].as_str().unwrap().contains("it has no classification yet"), "{v}");
    assert_eq!(v["status"], 422);
    // Bo may not read them: to him they are not there.
    let (s, v) = post("/api/v1/diversity", Some(&bo.0), body.clone()).await;
    assert_eq!(s, 422, "{v}");
    assert!(v["message"].as_str().unwrap().contains("no longer shared with you"), "{v}");
    // No key, a body that is not a request, a file that is not one, a resolution out of range.
    let (s, _) = post("/api/v1/diversity", None, body.clone()).await;
    assert_eq!(s, 401);
    let (s, v) = post("/api/v1/diversity", Some(&ana.0), serde_json::json!({ "samples": "x" })).await;
    assert_eq!((s, v["code"].as_str()), (400, Some("invalid")), "{v}");
    assert!(v["message"].as_str().unwrap().contains("samples, rank"), "{v}");
    let (s, v) = post("/api/v1/diversity/files/alpha.exe", Some(&ana.0), body.clone()).await;
    assert_eq!(s, 404, "{v}");
    assert!(v["message"].as_str().unwrap().contains("alpha.svg"), "{v}");
    let (s, v) = post("/api/v1/diversity/files/alpha.png?dpi=5000", Some(&ana.0), body.clone()).await;
    assert_eq!(s, 400, "{v}");
    let (s, v) = post(
        "/api/v1/diversity",
        Some(&ana.0),
        serde_json::json!({ "samples": ids, "rank": "species", "metric": "euclid" }),
    )
    .await;
    assert_eq!(s, 400, "{v}");
    assert!(v["message"].as_str().unwrap().contains("braycurtis"), "{v}");
    let (s, v) =
        post("/api/v1/diversity", Some(&ana.0), serde_json::json!({ "samples": [ids[0]], "rank": "species" })).await;
    assert_eq!(s, 400, "{v}");
    assert!(v["message"].as_str().unwrap().contains("Choose 2 to 500 samples"), "{v}");
    // Without the web UI there is no such route.
    let bare = start(false, None).await;
    let key = signed_in(&bare, "cy@lab.example.org").await.0;
    let r = bare
        .http
        .post(format!("{}/api/v1/diversity", bare.url))
        .basic_auth(&key, Some(""))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
}
