//! Webhooks and events against a real receiver on loopback: registered by an organisation's
//! admins only; every event signed, in order per webhook and subject, at least once, retried
//! with a growing wait and given up after its time; a failing receiver holds only its own
//! queue; redelivery by hand and the delivery log; internal addresses refused unless the
//! configuration allows their network; both resources as the reference schema has them.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mgds_server::Config;
use mgds_server::admin::Role;
use reqwest::Method;
use serde_json::{Value, json};

use crate::engines::{demo_reads, finished, start_with_demo};
use crate::{Service, TestUser, fastq};

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Got {
    path: String,
    event: String,
    delivery: String,
    signature: String,
    body: Vec<u8>,
    answered: u16,
}

impl Got {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// A webhook receiver on loopback: answers each path with the statuses scripted for it (then
/// 200), and keeps what it got.
#[derive(Clone, Default)]
struct Receiver {
    base: String,
    got: Arc<Mutex<Vec<Got>>>,
    script: Arc<Mutex<HashMap<String, VecDeque<u16>>>>,
    failing: Arc<Mutex<HashMap<String, u16>>>,
    /// A delivery (its `X-MGDS-Delivery`) answered 500 whatever its path.
    refused_delivery: Arc<Mutex<Option<String>>>,
}

impl Receiver {
    async fn start() -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::serve(listener).await
    }

    async fn serve(listener: tokio::net::TcpListener) -> Receiver {
        let mut r = Receiver { base: format!("http://{}", listener.local_addr().unwrap()), ..Default::default() };
        let me = r.clone();
        let app = axum::Router::new().fallback(
            move |uri: axum::http::Uri, headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let me = me.clone();
                async move {
                    let path = uri.path().to_string();
                    let status = me
                        .script
                        .lock()
                        .unwrap()
                        .get_mut(&path)
                        .and_then(VecDeque::pop_front)
                        .or_else(|| me.failing.lock().unwrap().get(&path).copied())
                        .unwrap_or(200);
                    let h = |n: &str| headers.get(n).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
                    let refused = me.refused_delivery.lock().unwrap().as_deref() == Some(h("x-mgds-delivery").as_str());
                    let status = if refused { 500 } else { status };
                    me.got.lock().unwrap().push(Got {
                        path,
                        event: h("x-mgds-event"),
                        delivery: h("x-mgds-delivery"),
                        signature: h("x-mgds-signature"),
                        body: body.to_vec(),
                        answered: status,
                    });
                    (axum::http::StatusCode::from_u16(status).unwrap(), "thanks")
                }
            },
        );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        r.base = r.base.clone();
        r
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Answers `status` at `path` until told otherwise.
    fn fail(&self, path: &str, status: Option<u16>) {
        let mut f = self.failing.lock().unwrap();
        match status {
            Some(s) => f.insert(path.to_string(), s),
            None => f.remove(path),
        };
    }

    /// What `path` got (every try), in order.
    fn at(&self, path: &str) -> Vec<Got> {
        self.got.lock().unwrap().iter().filter(|g| g.path == path).cloned().collect()
    }

    /// What `path` took (answered 2xx), in order.
    fn taken(&self, path: &str) -> Vec<Got> {
        self.at(path).into_iter().filter(|g| g.answered < 300).collect()
    }

    /// Waits until `path` has taken `n` deliveries; answers them.
    async fn wait_taken(&self, path: &str, n: usize) -> Vec<Got> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let taken = self.taken(path);
            if taken.len() >= n {
                return taken;
            }
            assert!(
                Instant::now() < deadline,
                "{path} took {} of {n} deliveries: {:?}",
                taken.len(),
                taken.iter().map(|g| &g.event).collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Webhooks may reach loopback here, and retry within a second.
fn for_tests(c: &mut Config) {
    c.webhook_allowed_networks = vec!["127.0.0.0/8".parse().unwrap()];
    c.webhook_backoff = mgds_webhook::Backoff { first: Duration::from_millis(200), most: Duration::from_millis(800) };
}

/// Registers a webhook as `by`; answers its id and secret.
async fn register(svc: &Service, by: &TestUser, url: &str, event_type: &str) -> (String, String) {
    let (s, w) = svc.post(Some(by), "/api/v1/webhooks", json!({"post_url": url, "event_type": event_type})).await;
    assert_eq!(s, 201, "{w}");
    (w["$uri"].as_str().unwrap().rsplit('/').next().unwrap().to_string(), w["secret"].as_str().unwrap().to_string())
}

fn types(got: &[Got]) -> Vec<String> {
    got.iter().map(|g| g.event.clone()).collect()
}

/// Checks `value` against the reference schema's resource `name`: it validates, and has every
/// field the schema names.
fn conforms(value: &Value, name: &str) {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/onecodex-api-v1-schema.json");
    let root: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("the reference schema")).unwrap();
    let mut schema = root["properties"][name].clone();
    schema.as_object_mut().unwrap().remove("links");
    let validator = jsonschema::draft4::new(&schema).unwrap();
    let problems: Vec<String> = validator.iter_errors(value).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(problems.is_empty(), "{name}: {problems:?} in {value}");
    for field in schema["properties"].as_object().unwrap().keys() {
        assert!(value.get(field).is_some(), "{name}: no field {field} in {value}");
    }
}

async fn events_where(svc: &Service, by: &TestUser, filter: Value) -> Vec<Value> {
    let path = format!("/api/v1/events?per_page=1000&where={}", urlencode(&filter.to_string()));
    let (s, list) = svc.get(Some(by), &path).await;
    assert_eq!(s, 200, "{list}");
    list.as_array().unwrap().clone()
}

fn urlencode(s: &str) -> String {
    s.bytes().map(|b| if b.is_ascii_alphanumeric() { char::from(b).to_string() } else { format!("%{b:02X}") }).collect()
}

/// Waits until every event of webhook `hook` is `status`.
async fn all_events_are(svc: &Service, by: &TestUser, hook: &str, status: &str) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let events = events_where(svc, by, json!({"webhook": format!("/api/v1/webhooks/{hook}")})).await;
        if !events.is_empty() && events.iter().all(|e| e["status"] == json!(status)) {
            return events;
        }
        assert!(Instant::now() < deadline, "not every event is {status}: {events:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn an_admin_registers_a_webhook_and_every_event_arrives_signed_and_in_order() {
    let rx = Receiver::start().await;
    let svc = start_with_demo(for_tests).await;
    let head = svc.user_in("head@lab.org", Some("Lab"), Role::Owner).await;
    let tech = svc.user_in("tech@lab.org", Some("Lab"), Role::Member).await;

    // A member may not; the owner registers one for every type and one for analyses only. The
    // secret comes once, and is never cached.
    let (s, refused) =
        svc.post(Some(&tech), "/api/v1/webhooks", json!({"post_url": rx.url("/all"), "event_type": "*"})).await;
    assert_eq!(s, 403, "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("only an admin or owner"), "{refused}");
    let r = svc
        .as_user(Some(&head), Method::POST, "/api/v1/webhooks")
        .json(&json!({"post_url": rx.url("/all"), "event_type": "*"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(r.headers()["cache-control"], "no-store");
    let created: Value = r.json().await.unwrap();
    let secret = created["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_") && secret.len() > 40, "{created}");
    conforms(&created, "webhooks");
    let all = created["$uri"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let (_analyses, analyses_secret) = register(&svc, &head, &rx.url("/analyses"), "analysis.completed").await;
    let (s, listed) = svc.get(Some(&head), "/api/v1/webhooks").await;
    assert_eq!((s, listed.as_array().unwrap().len()), (200, 2), "{listed}");
    for w in listed.as_array().unwrap() {
        conforms(w, "webhooks");
        assert!(w.get("secret").is_none(), "the secret is shown only once: {w}");
    }

    // A member works: upload (classified by itself), a metadata change, deletion.
    let sample = svc.upload_sample(&tech, "isolate_7.fastq.gz", &demo_reads(), json!({})).await;
    let (_, s_json) = svc.get(Some(&tech), &format!("/api/v1/samples/{sample}")).await;
    let analysis = s_json["primary_classification"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    finished(&svc, &tech, &analysis).await;
    let metadata = s_json["metadata"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let (s, _) = svc.patch(Some(&tech), &format!("/api/v1/metadata/{metadata}"), json!({"name": "isolate 7"})).await;
    assert_eq!(s, 200);
    let (s, _) = svc.delete(Some(&tech), &format!("/api/v1/samples/{sample}")).await;
    assert_eq!(s, 204);

    // In the order they happened, each signed, named in its headers, about the sample.
    let got = rx.wait_taken("/all", 5).await;
    assert_eq!(
        types(&got),
        ["sample.created", "sample.confirmed", "analysis.completed", "sample.updated", "sample.deleted"]
    );
    for g in &got {
        mgds_webhook::verify(secret.as_bytes(), &g.signature, &g.body, mgds_webhook::unix_now(), 300)
            .unwrap_or_else(|e| panic!("{}: {e}", g.event));
        let p = g.json();
        assert_eq!((p["type"].as_str().unwrap(), p["id"].as_str().unwrap()), (g.event.as_str(), g.delivery.as_str()));
        assert_eq!(p["api_version"], json!("v1"));
        assert_eq!(p["data"]["sample"]["$ref"], json!(format!("/api/v1/samples/{sample}")), "{p}");
    }
    let completed = got[2].json();
    assert_eq!(completed["data"]["analysis"]["$ref"], json!(format!("/api/v1/classifications/{analysis}")));
    assert_eq!(completed["data"]["success"], json!(true));
    assert_eq!(got[3].json()["data"]["changes"]["name"][1], json!("isolate 7"), "{}", got[3].json());
    assert_eq!(got[3].json()["actor"]["$ref"], json!(format!("/api/v1/users/{}", tech.id)));
    let only = rx.wait_taken("/analyses", 1).await;
    assert_eq!(types(&only), ["analysis.completed"]);
    mgds_webhook::verify(analyses_secret.as_bytes(), &only[0].signature, &only[0].body, mgds_webhook::unix_now(), 300)
        .unwrap();
    assert!(
        mgds_webhook::verify(secret.as_bytes(), &only[0].signature, &only[0].body, mgds_webhook::unix_now(), 300)
            .is_err()
    );

    // The events, with their state, as the reference schema has them; filtered by type.
    let events = all_events_are(&svc, &head, &all, "success").await;
    assert_eq!(events.len(), 5);
    for e in &events {
        conforms(e, "events");
        assert_eq!(e["attempts"], json!(1));
    }
    let done = events_where(&svc, &head, json!({"event_type": "analysis.completed"})).await;
    assert_eq!(done.len(), 2, "one per webhook: {done:?}");
    let r = svc.as_user(Some(&head), Method::GET, "/api/v1/events?per_page=2").send().await.unwrap();
    assert_eq!(r.headers()["x-total-count"], "6");
    assert!(r.headers()["link"].to_str().unwrap().contains("rel=\"next\""));
    let (s, _) = svc.get(Some(&tech), "/api/v1/events").await;
    assert_eq!(s, 403);

    // The delivery log: each try, its answer and time.
    let (s, log) = svc.get(Some(&head), &format!("/api/v1/webhooks/{all}/deliveries")).await;
    assert_eq!(s, 200, "{log}");
    let log = log.as_array().unwrap();
    assert_eq!(log.len(), 5);
    assert!(log.iter().all(|d| d["delivered"] == json!(true) && d["status_code"] == json!(200)), "{log:?}");
    assert_eq!(log[0]["event_type"], json!("sample.deleted"), "newest first");
    assert_eq!(log[0]["response"], json!("thanks"));

    // The README's check, in Python, takes a real delivery and refuses a changed one.
    readme_check_accepts(&secret, &got[0]);
}

/// Runs the README's Python signature check on a delivery, and on the same one changed.
fn readme_check_accepts(secret: &str, g: &Got) {
    let readme = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
        .expect("README.md");
    let start = readme.find("def verify_mgds_signature").expect("the README has the Python check");
    let block_start = readme[..start].rfind("```python").expect("in a Python block") + "```python".len();
    let block_end = start + readme[start..].find("```").expect("the block ends");
    let code = &readme[block_start..block_end];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("body"), &g.body).unwrap();
    let script = format!(
        "{code}\nimport sys\nbody = open(sys.argv[1], 'rb').read()\n\
         print(verify_mgds_signature(sys.argv[2], sys.argv[3], body), verify_mgds_signature(sys.argv[2], sys.argv[3], body + b' '))\n"
    );
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(&script)
        .arg(dir.path().join("body"))
        .arg(secret)
        .arg(&g.signature)
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "True False");
}

#[tokio::test]
async fn a_failing_receiver_holds_only_its_own_queue_is_retried_in_order_and_can_be_redelivered() {
    let rx = Receiver::start().await;
    let svc = Service::start_with(for_tests).await;
    let head = svc.user_in("head@lab.org", Some("Lab"), Role::Admin).await;
    let (flaky, _) = register(&svc, &head, &rx.url("/flaky"), "*").await;
    let (steady, _) = register(&svc, &head, &rx.url("/steady"), "*").await;
    rx.fail("/flaky", Some(503));

    let sample = svc.upload_sample(&head, "a.fastq", &fastq(10), json!({})).await;
    let (_, s_json) = svc.get(Some(&head), &format!("/api/v1/samples/{sample}")).await;
    let metadata = s_json["metadata"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    svc.patch(Some(&head), &format!("/api/v1/metadata/{metadata}"), json!({"name": "a"})).await;

    // The steady receiver gets all three while the failing one is tried again and again on the
    // first: the later events of the same sample wait behind it.
    let steady_got = rx.wait_taken("/steady", 3).await;
    assert_eq!(types(&steady_got), ["sample.created", "sample.confirmed", "sample.updated"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while rx.at("/flaky").len() < 3 {
        assert!(Instant::now() < deadline, "the failing receiver is tried again");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let tries = rx.at("/flaky");
    assert!(tries.iter().all(|g| g.event == "sample.created"), "{:?}", types(&tries));
    assert!(tries.iter().all(|g| g.delivery == tries[0].delivery), "one event, tried again");
    let waiting = events_where(&svc, &head, json!({"webhook": format!("/api/v1/webhooks/{flaky}")})).await;
    let first = waiting.iter().find(|e| e["event_type"] == json!("sample.created")).unwrap();
    assert_eq!(first["status"], json!("retryable"), "{first}");
    assert!(first["last_error"].as_str().unwrap().contains("503"), "{first}");
    assert!(first["next_attempt_at"].is_string());
    assert!(waiting.iter().filter(|e| e["event_type"] != json!("sample.created")).all(|e| e["attempts"] == json!(0)));
    let (_, w) = svc.get(Some(&head), &format!("/api/v1/webhooks/{flaky}")).await;
    assert_eq!(w["waiting"], json!(3), "{w}");

    // It comes back: the three arrive, in order, each taken once.
    rx.fail("/flaky", None);
    let got = rx.wait_taken("/flaky", 3).await;
    assert_eq!(types(&got), ["sample.created", "sample.confirmed", "sample.updated"]);
    all_events_are(&svc, &head, &flaky, "success").await;
    all_events_are(&svc, &head, &steady, "success").await;
    let (_, log) = svc.get(Some(&head), &format!("/api/v1/webhooks/{flaky}/deliveries?per_page=1000")).await;
    let log = log.as_array().unwrap();
    assert!(log.iter().any(|d| d["status_code"] == json!(503) && d["delivered"] == json!(false)), "{log:?}");
    assert_eq!(log.iter().filter(|d| d["delivered"] == json!(true)).count(), 3);
    let failed_only = format!("/api/v1/webhooks/{flaky}/deliveries?where={}", urlencode(r#"{"delivered": false}"#));
    let (_, failed) = svc.get(Some(&head), &failed_only).await;
    assert_eq!(failed.as_array().unwrap().len(), log.len() - 3);

    // Redelivered by hand: sent again with the same delivery id, marked in the log.
    let confirmed = got[1].delivery.clone();
    let (s, again) = svc.post(Some(&head), &format!("/api/v1/events/{confirmed}/redeliver"), json!({})).await;
    // Pending, or already delivered again: the deliverer is told at once.
    assert_eq!(s, 200, "{again}");
    assert!(matches!(again["status"].as_str(), Some("pending" | "success")), "{again}");
    let got = rx.wait_taken("/flaky", 4).await;
    assert_eq!((got[3].event.as_str(), got[3].delivery.as_str()), ("sample.confirmed", confirmed.as_str()));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, log) = svc.get(Some(&head), &format!("/api/v1/webhooks/{flaky}/deliveries?per_page=1")).await;
        if log[0]["by_hand"] == json!(true) {
            assert_eq!(log[0]["event"]["$ref"], json!(format!("/api/v1/events/{confirmed}")));
            break;
        }
        assert!(Instant::now() < deadline, "the redelivery is in the log: {log}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn an_event_is_given_up_after_its_time_and_a_disabled_webhook_makes_none() {
    let rx = Receiver::start().await;
    let svc = Service::start_with(|c| {
        for_tests(c);
        c.webhook_deliver_for = Duration::from_secs(3);
    })
    .await;
    let head = svc.user_in("head@lab.org", Some("Lab"), Role::Owner).await;
    let (hook, _) = register(&svc, &head, &rx.url("/down"), "sample.created").await;
    rx.fail("/down", Some(500));
    svc.upload_sample(&head, "a.fastq", &fastq(10), json!({})).await;
    let events = all_events_are(&svc, &head, &hook, "failed").await;
    assert_eq!(events.len(), 1, "only the type asked for");
    assert!(events[0]["last_error"].as_str().unwrap().contains("given up after"), "{}", events[0]);
    let (_, log) = svc.get(Some(&head), &format!("/api/v1/webhooks/{hook}/deliveries")).await;
    assert!(events[0]["attempts"].as_i64().unwrap() >= 2, "{}\n{log}", events[0]);
    assert!(events[0]["next_attempt_at"].is_null());

    // Disabled: no new events.
    let (s, w) = svc.patch(Some(&head), &format!("/api/v1/webhooks/{hook}"), json!({"enabled": false})).await;
    assert_eq!((s, &w["enabled"]), (200, &json!(false)), "{w}");
    svc.upload_sample(&head, "b.fastq", &fastq(10), json!({})).await;
    let events = events_where(&svc, &head, json!({"webhook": format!("/api/v1/webhooks/{hook}")})).await;
    assert_eq!(events.len(), 1);
}

#[tokio::test]
async fn no_webhook_may_reach_an_internal_address_unless_the_configuration_allows_its_network() {
    let svc = Service::start().await;
    let head = svc.user_in("head@lab.org", Some("Lab"), Role::Owner).await;
    for (url, says) in [
        ("http://127.0.0.1:9/hook", "--webhook-allow-network"),
        ("http://localhost:9/hook", "loopback"),
        ("http://10.0.0.5/hook", "private"),
        ("http://169.254.169.254/latest/meta-data", "link-local"),
        ("http://[::1]:9/hook", "loopback"),
        ("http://[::ffff:192.168.1.1]/hook", "private"),
        ("ftp://lims.example.org/hook", "http:// or https://"),
        ("https://user:pw@lims.example.org/hook", "password"),
        ("lims", "not an address"),
    ] {
        let (s, b) = svc.post(Some(&head), "/api/v1/webhooks", json!({"post_url": url, "event_type": "*"})).await;
        assert_eq!(s, 400, "{url}: {b}");
        assert!(b["message"].as_str().unwrap().contains(says), "{url}: {b}");
    }
    let (s, b) = svc
        .post(Some(&head), "/api/v1/webhooks", json!({"post_url": "https://lims.example.org", "event_type": "x"}))
        .await;
    assert_eq!(s, 400);
    assert!(b["message"].as_str().unwrap().contains("sample.confirmed"), "the types are listed: {b}");
    let (s, b) = svc.post(Some(&head), "/api/v1/webhooks", json!({"post_url": "https://a.org", "colour": 1})).await;
    assert_eq!(s, 400, "{b}");
    let (_, listed) = svc.get(Some(&head), "/api/v1/webhooks").await;
    assert_eq!(listed, json!([]));
}

/// Every webhook and event route for an owner and an admin of the organisation, a member of
/// it, the admin of another organisation and an anonymous caller.
#[tokio::test]
async fn only_the_organisations_admins_reach_its_webhooks_and_events() {
    let rx = Receiver::start().await;
    let svc = Service::start_with(for_tests).await;
    let head = svc.user_in("head@lab.org", Some("Lab"), Role::Owner).await;
    let boss = svc.user_in("boss@lab.org", Some("Lab"), Role::Admin).await;
    let tech = svc.user_in("tech@lab.org", Some("Lab"), Role::Member).await;
    let rival = svc.user_in("rival@other.org", Some("Other"), Role::Admin).await;
    let (hook, secret) = register(&svc, &head, &rx.url("/lab"), "*").await;
    let (s, ping) = svc.post(Some(&boss), &format!("/api/v1/webhooks/{hook}/ping"), json!({})).await;
    assert_eq!(s, 201, "{ping}");
    let event = ping["$uri"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let got = rx.wait_taken("/lab", 1).await;
    assert_eq!(got[0].event, "ping");
    mgds_webhook::verify(secret.as_bytes(), &got[0].signature, &got[0].body, mgds_webhook::unix_now(), 300).unwrap();

    let routes: Vec<(Method, String, Option<Value>, u16)> = vec![
        (Method::GET, "/api/v1/webhooks".into(), None, 200),
        (Method::GET, format!("/api/v1/webhooks/{hook}"), None, 200),
        (Method::PATCH, format!("/api/v1/webhooks/{hook}"), Some(json!({"event_type": "*"})), 200),
        (Method::POST, format!("/api/v1/webhooks/{hook}/ping"), Some(json!({})), 201),
        (Method::GET, format!("/api/v1/webhooks/{hook}/deliveries"), None, 200),
        (Method::GET, "/api/v1/events".into(), None, 200),
        (Method::GET, format!("/api/v1/events/{event}"), None, 200),
        (Method::POST, format!("/api/v1/events/{event}/redeliver"), Some(json!({})), 200),
        (Method::POST, "/api/v1/webhooks".into(), Some(json!({"post_url": rx.url("/x"), "event_type": "ping"})), 201),
        (Method::POST, format!("/api/v1/webhooks/{hook}/secret"), Some(json!({})), 200),
    ];
    let lists = ["/api/v1/webhooks", "/api/v1/events"];
    for (method, path, body, ok) in &routes {
        for (who, user) in [
            ("owner", Some(&head)),
            ("admin", Some(&boss)),
            ("member", Some(&tech)),
            ("rival", Some(&rival)),
            ("anonymous", None),
        ] {
            let mut req = svc.as_user(user, method.clone(), path);
            if let Some(b) = body {
                req = req.json(b);
            }
            let r = req.send().await.unwrap();
            let status = r.status().as_u16();
            let text = r.text().await.unwrap();
            let want = match who {
                "owner" | "admin" => *ok,
                "member" => 403,
                "anonymous" => 401,
                // Another organisation's admin: its lists are their own (empty), its records
                // are not there.
                _ if lists.contains(&path.as_str()) || (path == "/api/v1/webhooks" && *method == Method::POST) => *ok,
                _ => 404,
            };
            assert_eq!(status, want, "{who} {method} {path}: {text}");
            if who == "rival" && *method == Method::GET && lists.contains(&path.as_str()) {
                let v: Value = serde_json::from_str(&text).unwrap();
                assert!(v.as_array().unwrap().iter().all(|x| !x.to_string().contains(&hook)), "{text}");
            }
        }
    }

    // The rival's webhook hears nothing of the lab; deleting the lab's takes its events along,
    // and the audit trail has each change.
    let (s, _) = svc.delete(Some(&rival), &format!("/api/v1/webhooks/{hook}")).await;
    assert_eq!(s, 404);
    let (s, _) = svc.delete(Some(&head), &format!("/api/v1/webhooks/{hook}")).await;
    assert_eq!(s, 204);
    let (s, _) = svc.get(Some(&head), &format!("/api/v1/events/{event}")).await;
    assert_eq!(s, 404);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, trail) = svc.get(Some(&head), "/api/v1/audit?per_page=1000").await;
        let actions: Vec<&str> = trail.as_array().unwrap().iter().filter_map(|e| e["action"].as_str()).collect();
        if ["webhook.created", "webhook.secret_replaced", "webhook.deleted", "event.redelivered"]
            .iter()
            .all(|a| actions.contains(a))
        {
            break;
        }
        assert!(Instant::now() < deadline, "{actions:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A redelivered event that fails again holds up no later event of its record: it was asked for
/// out of order, and the record's newer events go on.
#[tokio::test]
async fn a_redelivered_event_that_fails_holds_up_no_later_event() {
    let rx = Receiver::start().await;
    let svc = Service::start_with(for_tests).await;
    let head = svc.user_in("head@lab.org", Some("Lab"), Role::Admin).await;
    register(&svc, &head, &rx.url("/r"), "*").await;
    let sample = svc.upload_sample(&head, "a.fastq", &fastq(10), json!({})).await;
    let got = rx.wait_taken("/r", 2).await;
    let created = got[0].delivery.clone();
    *rx.refused_delivery.lock().unwrap() = Some(created.clone());
    let (s, _) = svc.post(Some(&head), &format!("/api/v1/events/{created}/redeliver"), json!({})).await;
    assert_eq!(s, 200);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !rx.at("/r").iter().any(|g| g.delivery == created && g.answered == 500) {
        assert!(Instant::now() < deadline, "the redelivery is tried");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (_, s_json) = svc.get(Some(&head), &format!("/api/v1/samples/{sample}")).await;
    let metadata = s_json["metadata"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    svc.patch(Some(&head), &format!("/api/v1/metadata/{metadata}"), json!({"name": "a"})).await;
    let got = rx.wait_taken("/r", 3).await;
    assert_eq!(got[2].event, "sample.updated", "the newer event is not held behind the redelivered one");
    let (_, e) = svc.get(Some(&head), &format!("/api/v1/events/{created}")).await;
    assert_eq!(e["status"], json!("retryable"), "{e}");
}
