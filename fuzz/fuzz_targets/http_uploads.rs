//! The two doors that read upload bodies, driven through the service's own router with
//! arbitrary bytes: the storage endpoint's multipart form (the first byte picks it) and the
//! S3-compatible endpoint's SigV4 check (the input's lines become the request's headers, the rest
//! its body). Every answer is a 4xx, a success or S3's 501 NotImplemented, never another 5xx or
//! a panic.
#![no_main]

use std::sync::OnceLock;

use axum::body::Body;
use axum::http::Request;
use libfuzzer_sys::fuzz_target;
use tower::ServiceExt;

struct Service {
    rt: tokio::runtime::Runtime,
    app: axum::Router,
    _dir: tempfile::TempDir,
}

fn service() -> &'static Service {
    static SERVICE: OnceLock<Service> = OnceLock::new();
    SERVICE.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let app = rt.block_on(async {
            let mut config = mgds_server::Config::new(dir.path().join("data"));
            config.runner.workers = 0;
            let state = mgds_server::AppState::open(&config).await.unwrap().with_public_url("http://127.0.0.1:1");
            mgds_server::app(state)
        });
        Service { rt, app, _dir: dir }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else { return };
    let s = service();
    let request = if which % 2 == 0 {
        Request::post("/storage/mgds")
            .header("content-type", "multipart/form-data; boundary=XyZ")
            .body(Body::from(rest.to_vec()))
    } else {
        let text = String::from_utf8_lossy(rest);
        let (head, body) = text.split_once("\n\n").unwrap_or((&text, ""));
        let mut r = Request::put("/mgds-uploads/samples/x/reads.fastq.gz");
        for line in head.lines() {
            if let Some((k, v)) = line.split_once(':') {
                r = r.header(k.trim(), v.trim());
            }
        }
        r.body(Body::from(body.to_string()))
    };
    let Ok(request) = request else { return };
    let status = s.rt.block_on(s.app.clone().oneshot(request)).map(|r| r.status().as_u16()).unwrap_or(500);
    // 501 is S3's own answer to a request for something the endpoint does not do (a signing
    // scope for another service, an unsupported header), not a fault.
    assert!(status < 500 || status == 501, "answered {status}");
});
