//! Property tests of what the service parses from outside: `where` and `sort`, page numbers, the
//! signed POST policy of uploads, and, through a running service, JSON bodies and multipart
//! forms. Whatever comes in answers records or a 4xx naming the problem: never a panic, never a
//! 500, and a value from a request never becomes SQL text.

use std::sync::OnceLock;

use chrono::{Duration, Utc};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::listing::{compile_sort, compile_where, parse_page};
use crate::store::caller::{Caller, User};
use crate::store::records::ListQuery;
use crate::store::samples::SAMPLE_FIELDS;

/// A marker no field name or SQL keyword holds: where it appears in a value, it must not reach
/// the SQL text.
const MARK: &str = "zq'\"x";

fn field_name() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "$uri",
        "created_at",
        "filename",
        "size",
        "visibility",
        "owner",
        "project",
        "primary_classification",
        "metadata",
        "tags",
        "status",
        "updated_at",
        "colour",
        "$and",
        "",
    ])
    .prop_map(String::from)
}

fn operator() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "$eq",
        "$ne",
        "$in",
        "$lt",
        "$lte",
        "$gt",
        "$gte",
        "$between",
        "$contains",
        "$icontains",
        "$startswith",
        "$istartswith",
        "$endswith",
        "$iendswith",
        "$containsany",
        "$containsall",
        "$regex",
        "$ref",
        "$date",
    ])
    .prop_map(String::from)
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e12f64..1e12).prop_map(Value::from),
        ".{0,12}".prop_map(|s| Value::from(format!("{s}{MARK}"))),
        Just(json!("2026-01-02T03:04:05Z")),
        Just(json!("/api/v1/tags/0123456789abcdef")),
        Just(json!({"$ref": "/api/v1/projects/0123456789abcdef"})),
        Just(json!({"$date": "2026-01-02"})),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(operator(), inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn filter() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::btree_map(field_name(), value(), 0..4)
            .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>()).to_string()),
        value().prop_map(|v| v.to_string()),
        ".{0,40}",
    ]
}

fn sort() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::btree_map(field_name(), leaf(), 0..3)
            .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>()).to_string()),
        ".{0,20}",
    ]
}

proptest! {
    #[test]
    fn a_where_compiles_to_bound_values_or_a_message(raw in filter()) {
        match compile_where(SAMPLE_FIELDS, Some(&raw)) {
            Ok(c) => {
                prop_assert_eq!(c.sql.matches('?').count(), c.binds.len(), "{}", c.sql);
                prop_assert!(!c.sql.contains(MARK), "a value reached the SQL: {}", c.sql);
            }
            Err(m) => prop_assert!(!m.is_empty()),
        }
    }

    #[test]
    fn a_sort_compiles_to_known_columns_or_a_message(raw in sort()) {
        if let Ok(sql) = compile_sort(SAMPLE_FIELDS, Some(&raw), "s.created_at ASC", "s.id ASC") {
            prop_assert!(!sql.contains('?') && !sql.contains(MARK) && !sql.contains('\''), "{}", sql);
            prop_assert!(
                sql.ends_with("s.id ASC NULLS FIRST") || sql.ends_with("s.id DESC NULLS LAST"),
                "every order ends with the id: {}",
                sql
            );
        }
    }

    #[test]
    fn page_numbers_are_in_range_or_refused(page in ".{0,12}", per_page in ".{0,12}") {
        if let Ok(p) = parse_page(Some(&page), Some(&per_page)) {
            prop_assert!(p.page >= 1 && (1..=crate::listing::MAX_PER_PAGE).contains(&p.per_page));
        }
    }

    #[test]
    fn a_signed_form_verifies_and_any_changed_field_does_not(
        which in 0usize..16,
        changed in "[ -~]{0,24}",
        size in 1u64..1_000_000_000,
        sha256 in proptest::option::of(proptest::array::uniform32(any::<u8>())),
    ) {
        let signer = crate::signing::Signer::new(b"a secret of the service".to_vec());
        let now = Utc::now();
        let form = signer.upload_form("samples/abc/reads.fastq.gz", size, sha256.as_ref(), now, Duration::hours(1));
        let fields: Vec<(String, String)> =
            form.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect();
        let signed = signer.verify_form(crate::signing::BUCKET, &fields, now);
        prop_assert!(signed.is_ok(), "{:?}", signed.err());
        let mut altered = fields.clone();
        let i = which % altered.len();
        prop_assume!(altered[i].1 != changed);
        let name = altered[i].0.clone();
        altered[i].1 = changed;
        // Only what the policy does not pin may change: the form's own acl and status fields.
        if !matches!(name.as_str(), "acl" | "success_action_status") {
            prop_assert!(signer.verify_form(crate::signing::BUCKET, &altered, now).is_err(), "changed {}", name);
        }
    }
}

/// A running service with one user and a few samples, shared by the HTTP properties.
struct Running {
    rt: tokio::runtime::Runtime,
    url: String,
    state: crate::state::AppState,
    user: User,
    key: String,
    http: reqwest::Client,
    _dir: tempfile::TempDir,
}

fn running() -> &'static Running {
    static RUNNING: OnceLock<Running> = OnceLock::new();
    RUNNING.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (url, state, user, key) = rt.block_on(async {
            let mut config = crate::state::Config::new(dir.path().join("data"));
            config.database_url = crate::db::test_database().await;
            config.store = crate::storage::S3Config::for_tests();
            config.runner.workers = 0;
            config.auth_failure_limit = u32::MAX;
            let (url, state) = crate::spawn(config, "127.0.0.1:0".parse().unwrap()).await.unwrap();
            let made =
                crate::admin::create_user(&state.db, "props@lab.test", None, crate::admin::Role::Member).await.unwrap();
            let user = crate::store::caller::by_id(&state.db, &made.id).await.unwrap().unwrap();
            (url, state, user, made.api_key)
        });
        let _ = rustls::crypto::ring::default_provider().install_default();
        Running { rt, url, state, user, key, http: reqwest::Client::new(), _dir: dir }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn lists_answer_records_or_a_400_never_a_500(raw_where in filter(), raw_sort in sort()) {
        let r = running();
        let caller = Caller(Some(r.user.clone()));
        let q = ListQuery { filter: Some(&raw_where), sort: Some(&raw_sort), page: None, per_page: None };
        let answer = r.rt.block_on(crate::store::samples::list(&r.state, &caller, &q));
        if let Err(e) = answer {
            prop_assert!(e.status().is_client_error(), "{} for where={} sort={}: {}", e.status(), raw_where, raw_sort, e);
        }
    }

    #[test]
    fn any_json_body_answers_a_4xx_with_a_json_message(body in prop_oneof![
        value().prop_map(|v| v.to_string().into_bytes()),
        prop::collection::vec(any::<u8>(), 0..64),
    ], route in prop::sample::select(vec![
        "/api/v1/projects",
        "/api/v1/samples/init_upload",
        "/api/v1/samples/preupload",
        "/api/v1/documents/init_upload",
        "/api/v1/tags",
        "/api/v1/samples/confirm_upload",
    ])) {
        let r = running();
        let (status, text) = r.rt.block_on(async {
            let resp = r.http.post(format!("{}{route}", r.url)).basic_auth(&r.key, Some("")).body(body.clone()).send().await.unwrap();
            (resp.status().as_u16(), resp.text().await.unwrap())
        });
        prop_assert!(status < 500, "{} for {:?}: {}", status, String::from_utf8_lossy(&body), text);
        if status >= 400 {
            let v: Value = serde_json::from_str(&text).unwrap_or_default();
            prop_assert!(v["message"].as_str().is_some_and(|m| !m.is_empty()), "{}", text);
        }
    }

    #[test]
    fn any_upload_form_answers_a_4xx_never_a_500(
        parts in prop::collection::vec(("[a-z_-]{0,12}", prop::collection::vec(any::<u8>(), 0..40)), 0..5),
        raw in prop::collection::vec(any::<u8>(), 0..200),
        use_raw in any::<bool>(),
    ) {
        let r = running();
        let boundary = "XyZbOuNdArY";
        let body: Vec<u8> = if use_raw {
            raw
        } else {
            let mut b = Vec::new();
            for (name, value) in &parts {
                b.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes());
                b.extend_from_slice(value);
                b.extend_from_slice(b"\r\n");
            }
            b.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
            b
        };
        let status = r.rt.block_on(async {
            r.http
                .post(format!("{}/storage/{}", r.url, crate::signing::BUCKET))
                .header("content-type", format!("multipart/form-data; boundary={boundary}"))
                .body(body)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        });
        prop_assert!((400..500).contains(&status), "{}", status);
    }

    #[test]
    fn any_s3_signature_answers_an_s3_error_never_a_500(
        access_key in prop_oneof![Just("MGDSLOCAL".to_string()), "[A-Z0-9]{0,24}"],
        signature in "[0-9a-f]{0,64}",
        signed_headers in "[a-z;-]{0,40}",
        date in prop_oneof![Just(Utc::now().format("%Y%m%dT%H%M%SZ").to_string()), "[0-9TZ]{0,16}"],
        payload in prop_oneof![Just("UNSIGNED-PAYLOAD".to_string()), "[0-9a-f]{64}", "[!-~]{0,12}"],
        method in prop::sample::select(vec!["PUT", "POST", "GET", "DELETE", "HEAD"]),
        query in prop::sample::select(vec!["", "?uploads", "?partNumber=1&uploadId=x", "?uploadId=x"]),
        body in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let r = running();
        let day = date.get(..8).unwrap_or_default();
        let auth = format!(
            "AWS4-HMAC-SHA256 Credential={access_key}/{day}/us-east-1/s3/aws4_request, \
             SignedHeaders={signed_headers}, Signature={signature}"
        );
        let status = r.rt.block_on(async {
            let req = r.http
                .request(method.parse().unwrap(), format!("{}/{}/samples/x/reads.fastq.gz{query}", r.url, crate::s3::BUCKET))
                .header("authorization", auth)
                .header("x-amz-date", date.clone())
                .header("x-amz-content-sha256", payload.clone())
                .body(body);
            req.send().await.unwrap().status().as_u16()
        });
        prop_assert!((400..500).contains(&status), "{} {}{}: {}", method, access_key, query, status);
    }
}
