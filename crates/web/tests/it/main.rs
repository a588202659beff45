//! The web UI as the service serves it, over real HTTP: the page with its policy and never
//! cached, the build's files cached for good and compressed, any other address answered with
//! the page, and the API, storage, upload and metrics routes untouched (their 404s stay JSON);
//! `--no-web` leaves the UI out.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use mgds_server::{AppState, Config};

struct Service {
    url: String,
    http: reqwest::Client,
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
    tokio::spawn(mgds_server::serve(bound, state, std::future::pending()));
    let _ = rustls::crypto::ring::default_provider().install_default();
    Service { url, http: reqwest::Client::new(), _dir: dir }
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
        let r = svc.http.get(format!("{}{path}", svc.url)).send().await.unwrap();
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
    let html = svc.http.get(format!("{}/", svc.url)).send().await.unwrap().text().await.unwrap();
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
        assert!(zipped < size / 2, "{a}: {zipped} bytes gzipped of {size}");
    }
    // A file of the build that is not there is a 404, not the page; nor does a path climb out.
    let r = svc.http.get(format!("{}/assets/index-gone.js", svc.url)).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 404);
    for path in ["/assets/%2e%2e/%2e%2e/Cargo.toml", "/..%2f..%2fCargo.toml", "/assets/..%5c..%5cCargo.toml"] {
        let r = svc.http.get(format!("{}{path}", svc.url)).send().await.unwrap();
        let body = r.text().await.unwrap();
        assert!(!body.contains("[package]") && !body.contains("[workspace"), "{path} reached a file outside the build");
    }
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
    let html = svc.http.get(format!("{}/", svc.url)).send().await.unwrap().text().await.unwrap();
    assert!(html.contains("<base href=\"/mgds/\" />"), "{html}");
}

#[tokio::test]
async fn without_the_web_ui_the_root_is_a_404_in_the_api_s_shape() {
    let svc = start(false, None).await;
    let r = svc.http.get(format!("{}/", svc.url)).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 404);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["status"], 404);
}
