//! Uploads through `init_multipart_upload` straight to the S3 store, on a store whose admin API
//! the service may use (Garage): each upload's credentials are the store's own, for a bucket of
//! the upload's own, and the store checks them. Runs when the test command's Garage is there
//! (`MGDS_TEST_S3_*` and `MGDS_TEST_GARAGE_ADMIN_*`; see `tests/garage.sh`).

use bytes::Bytes;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde_json::{Value, json};

use super::{Service, TestUser, assert_error, fastq};
use mgds_server::storage::S3Config;

const INIT: &str = "/api/v1/samples/init_multipart_upload";

/// A service whose uploads get buckets of their own, or `None` without Garage's admin API.
async fn service() -> Option<Service> {
    let Some(store) = S3Config::for_tests_with_garage_admin() else {
        eprintln!("not run: needs MGDS_TEST_S3_* and MGDS_TEST_GARAGE_ADMIN_* (the test command starts Garage)");
        return None;
    };
    Some(Service::start_with(|c| c.store = Some(store)).await)
}

/// The S3 client an upload's answer sets up: its endpoint, region, bucket and credentials.
fn client_of(init: &Value) -> impl ObjectStore {
    client_for(init, init["s3_bucket"].as_str().unwrap())
}

fn client_for(init: &Value, bucket: &str) -> impl ObjectStore {
    let endpoint = init["s3_endpoint"].as_str().unwrap();
    AmazonS3Builder::new()
        .with_endpoint(endpoint)
        .with_allow_http(true)
        .with_region(init["s3_region"].as_str().expect("the answer names the store's region"))
        .with_bucket_name(bucket)
        .with_access_key_id(init["upload_aws_access_key_id"].as_str().unwrap())
        .with_secret_access_key(init["upload_aws_secret_access_key"].as_str().unwrap())
        .with_virtual_hosted_style_request(false)
        .build()
        .unwrap()
}

async fn put(store: &impl ObjectStore, key: &str, bytes: &[u8]) -> object_store::Result<()> {
    store.put(&ObjectPath::from(key), PutPayload::from(Bytes::copy_from_slice(bytes))).await.map(drop)
}

/// Whether bucket `name` is gone, or goes within a few seconds (a worker removes an upload's
/// bucket once it copied its files in, just after the sample has its file).
async fn bucket_gone(name: &str) -> bool {
    for _ in 0..50 {
        if !bucket_exists(name).await {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    false
}

/// Whether the store still has the bucket named `name` (asked with the test's admin token).
async fn bucket_exists(name: &str) -> bool {
    let url = std::env::var("MGDS_TEST_GARAGE_ADMIN_URL").unwrap();
    let token = std::env::var("MGDS_TEST_GARAGE_ADMIN_TOKEN").unwrap();
    let r = reqwest::Client::new()
        .get(format!("{url}/v2/GetBucketInfo?globalAlias={name}"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    match r.status().as_u16() {
        200 => true,
        404 => false,
        s => panic!("GetBucketInfo {name}: {s} {}", r.text().await.unwrap()),
    }
}

async fn init(svc: &Service, user: &TestUser, body: Value) -> Value {
    let (s, init) = svc.post(Some(user), INIT, body).await;
    assert_eq!(s, 200, "{init}");
    init
}

async fn callback(svc: &Service, user: &TestUser, init: &Value) -> (u16, Value) {
    let path = format!("s3://{}/{}", init["s3_bucket"].as_str().unwrap(), init["file_id"].as_str().unwrap());
    svc.post(Some(user), init["callback_url"].as_str().unwrap(), json!({ "s3_path": path })).await
}

async fn sample_bytes(svc: &Service, user: &TestUser, id: &str) -> Vec<u8> {
    // A worker copies the file in from the upload's bucket (or joins a pair): the sample is
    // importing until then.
    for _ in 0..300 {
        let (_, s) = svc.get(Some(user), &format!("/api/v1/samples/{id}")).await;
        if s["visibility"] != json!("importing") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let (s, d) = svc.post(Some(user), &format!("/api/v1/samples/{id}/download_uri"), json!({})).await;
    assert_eq!(s, 200, "{d}");
    let url = d["download_uri"].as_str().unwrap();
    let r = svc.http.get(url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    r.bytes().await.unwrap().to_vec()
}

/// The store itself checks an upload's credentials: they write the upload's own bucket and
/// nothing else, not even read it back; the callback before the file arrived is refused with
/// the key still good; after it the key is revoked and the bucket removed, and the sample's
/// file is the one written. No request reaches the service's own S3-compatible endpoint.
#[tokio::test]
async fn an_upload_writes_straight_to_a_bucket_of_its_own_that_the_store_checks() {
    let Some(svc) = service().await else { return };
    let alice = svc.user("alice@example.org").await;
    let bob = svc.user("bob@example.org").await;
    let store = svc.state.storage.s3_config().unwrap().clone();

    let up = init(&svc, &alice, json!({"filename": "gut.fastq"})).await;
    let bucket = up["s3_bucket"].as_str().unwrap().to_string();
    let key = up["file_id"].as_str().unwrap().to_string();
    let id = up["sample_id"].as_str().unwrap().to_string();
    assert_eq!(bucket, format!("mgds-upload-{id}"));
    assert_eq!(up["s3_endpoint"], json!(store.endpoint.clone().unwrap()));
    assert_eq!(up["s3_region"], json!(store.region));
    assert!(bucket_exists(&bucket).await);

    // A browser's page (MGDS in a browser, another origin than the store) may send its parts
    // there: the store answers the preflight of a signed part and shows the part's ETag.
    let preflight = svc
        .http
        .request(
            reqwest::Method::OPTIONS,
            format!("{}/{bucket}/{key}?partNumber=1&uploadId=x", up["s3_endpoint"].as_str().unwrap()),
        )
        .header("Origin", "https://lab.example.org")
        .header("Access-Control-Request-Method", "PUT")
        .header("Access-Control-Request-Headers", "authorization,x-amz-date,x-amz-content-sha256")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), 200, "{:?}", preflight.text().await);
    let allowed =
        |h: &str| preflight.headers().get(h).and_then(|v| v.to_str().ok()).unwrap_or_default().to_ascii_lowercase();
    assert!(["*", "https://lab.example.org"].contains(&allowed("access-control-allow-origin").as_str()));
    assert!(allowed("access-control-allow-methods").contains("put"), "{:?}", preflight.headers());
    assert!(allowed("access-control-expose-headers").contains("etag"), "{:?}", preflight.headers());

    // Not arrived yet: refused, and the key still writes.
    let (s, body) = callback(&svc, &alice, &up).await;
    assert_error(s, &body, 400);
    assert_eq!(body["code"], json!("file_not_arrived"), "{body}");

    let reads = fastq(500);
    let client = client_of(&up);
    put(&client, &key, &reads).await.expect("the upload's key writes its file");
    // Not elsewhere: neither the service's bucket, nor another upload's, nor read back.
    let main = client_for(&up, &store.bucket);
    let refused = put(&main, &store.full_key(&key), b"@x\nA\n+\nI\n").await;
    assert!(matches!(refused, Err(object_store::Error::PermissionDenied { .. })), "{refused:?}");
    let other = init(&svc, &bob, json!({"filename": "other.fastq"})).await;
    let into_other = client_for(&up, other["s3_bucket"].as_str().unwrap());
    let refused = put(&into_other, other["file_id"].as_str().unwrap(), b"@x\nA\n+\nI\n").await;
    assert!(matches!(refused, Err(object_store::Error::PermissionDenied { .. })), "{refused:?}");
    let read = client.get(&ObjectPath::from(key.as_str())).await;
    assert!(matches!(read, Err(object_store::Error::PermissionDenied { .. })), "{read:?}");
    let (s, body) =
        svc.post(Some(&bob), "/api/v1/samples/cancel_upload", json!({"sample_id": other["sample_id"]})).await;
    assert_eq!(s, 200, "{body}");

    // Someone else's callback finds nothing.
    let (s, body) = callback(&svc, &bob, &up).await;
    assert_error(s, &body, 404);
    let (s, body) = callback(&svc, &alice, &up).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["sample_id"], json!(id));
    assert_eq!(sample_bytes(&svc, &alice, &id).await, reads);
    let (_, sample) = svc.get(Some(&alice), &format!("/api/v1/samples/{id}")).await;
    assert_eq!(sample["size"], json!(reads.len()));

    // The key is revoked and the bucket gone; a second callback answers the same sample.
    let late = put(&client, &key, b"@late\nA\n+\nI\n").await;
    assert!(late.is_err(), "a revoked key still writes: {late:?}");
    assert!(bucket_gone(&bucket).await, "the upload's bucket must be removed");
    let (s, again) = callback(&svc, &alice, &up).await;
    assert_eq!((s, &again["sample_id"]), (200, &json!(id)), "{again}");
    assert_eq!(sample_bytes(&svc, &alice, &id).await, reads);

    // Nothing went through the service's own endpoint.
    let metrics = svc.http.get(format!("{}/metrics", svc.url)).send().await.unwrap().text().await.unwrap();
    assert!(!metrics.contains("/mgds-uploads"), "requests reached the service's S3 endpoint:\n{metrics}");
}

/// A browser's upload (MGDS in a browser, a page of another origin than the store): each part
/// is PUT to an address signed with the upload's credentials (no signing in the page), the
/// store answers the page's origin and shows it the part's ETag, and the parts completed make
/// the sample's file.
#[tokio::test]
async fn a_browser_sends_parts_to_signed_addresses_across_origins() {
    use object_store::multipart::{MultipartStore, PartId};
    use object_store::signer::{SignedUrlOptions, Signer};
    let Some(svc) = service().await else { return };
    let alice = svc.user("alice@example.org").await;
    let up = init(&svc, &alice, json!({"filename": "web.fastq"})).await;
    let key = ObjectPath::from(up["file_id"].as_str().unwrap());
    let store = AmazonS3Builder::new()
        .with_endpoint(up["s3_endpoint"].as_str().unwrap())
        .with_allow_http(true)
        .with_region(up["s3_region"].as_str().unwrap())
        .with_bucket_name(up["s3_bucket"].as_str().unwrap())
        .with_access_key_id(up["upload_aws_access_key_id"].as_str().unwrap())
        .with_secret_access_key(up["upload_aws_secret_access_key"].as_str().unwrap())
        .with_virtual_hosted_style_request(false)
        .build()
        .unwrap();
    let upload_id = store.create_multipart(&key).await.unwrap();
    // Two parts: S3's smallest but the last is 5 MiB.
    let reads: Vec<u8> = (0..70_000).flat_map(|i| format!("@w{i:06}\nACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT\n+\nIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII\n").into_bytes()).collect();
    let (one, two) = reads.split_at(5 * 1024 * 1024);
    let mut parts = Vec::new();
    for (n, body) in [(1, one), (2, two)] {
        let options =
            SignedUrlOptions::default().with_query([("partNumber", n.to_string()), ("uploadId", upload_id.clone())]);
        let url = store
            .signed_url_opts(reqwest::Method::PUT, &key, std::time::Duration::from_secs(600), &options)
            .await
            .unwrap();
        let r = svc
            .http
            .put(url.as_str())
            .header("Origin", "https://lab.example.org")
            .body(body.to_vec())
            .send()
            .await
            .unwrap();
        let h =
            |name: &str| r.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_ascii_lowercase();
        assert_eq!(r.status(), 200, "part {n}: {:?}", r.headers());
        assert!(
            ["*", "https://lab.example.org"].contains(&h("access-control-allow-origin").as_str()),
            "{:?}",
            r.headers()
        );
        assert!(h("access-control-expose-headers").contains("etag"), "{:?}", r.headers());
        parts.push(PartId { content_id: r.headers()["etag"].to_str().unwrap().to_string() });
    }
    store.complete_multipart(&key, &upload_id, parts).await.unwrap();
    let (s, body) = callback(&svc, &alice, &up).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(sample_bytes(&svc, &alice, body["sample_id"].as_str().unwrap()).await, reads);
}

/// A pair's two files go to the upload's bucket and become one interleaved sample; a
/// document's file too; a canceled upload's bucket goes at once.
#[tokio::test]
async fn pairs_documents_and_cancels_through_upload_buckets() {
    let Some(svc) = service().await else { return };
    let alice = svc.user("alice@example.org").await;

    let up = init(&svc, &alice, json!({"filename": "s_R1.fastq", "paired_end_filename": "s_R2.fastq"})).await;
    let client = client_of(&up);
    let r1: String = (0..40).map(|i| format!("@r{i}/1\nACGTACGTAC\n+\nIIIIIIIIII\n")).collect();
    let r2: String = (0..40).map(|i| format!("@r{i}/2\nTTGCATTGCA\n+\nIIIIIIIIII\n")).collect();
    put(&client, up["file_id"].as_str().unwrap(), r1.as_bytes()).await.unwrap();
    // Read 2 missing: not confirmed.
    let (s, body) = callback(&svc, &alice, &up).await;
    assert_error(s, &body, 400);
    put(&client, up["paired_end_file_id"].as_str().unwrap(), r2.as_bytes()).await.unwrap();
    let (s, body) = callback(&svc, &alice, &up).await;
    assert_eq!(s, 200, "{body}");
    let id = body["sample_id"].as_str().unwrap();
    let mut joined = Vec::new();
    use std::io::Read;
    flate2::read::MultiGzDecoder::new(sample_bytes(&svc, &alice, id).await.as_slice())
        .read_to_end(&mut joined)
        .unwrap();
    let joined = String::from_utf8(joined).unwrap();
    assert_eq!(joined.lines().count(), 80 * 4);
    assert!(joined.starts_with("@r0/1\nACGTACGTAC\n+\nIIIIIIIIII\n@r0/2\nTTGCATTGCA\n"), "{}", &joined[..80]);
    assert!(bucket_gone(up["s3_bucket"].as_str().unwrap()).await);

    let (s, doc) = svc.post(Some(&alice), "/api/v1/documents/init_multipart_upload", json!({})).await;
    assert_eq!(s, 200, "{doc}");
    put(&client_of(&doc), doc["file_id"].as_str().unwrap(), b"%PDF-1.4 report").await.unwrap();
    let path = format!("s3://{}/{}", doc["s3_bucket"].as_str().unwrap(), doc["file_id"].as_str().unwrap());
    let (s, body) = svc
        .post(Some(&alice), doc["callback_url"].as_str().unwrap(), json!({"s3_path": path, "filename": "report.pdf"}))
        .await;
    assert_eq!(s, 200, "{body}");
    let (_, d) = svc.get(Some(&alice), &format!("/api/v1/documents/{}", body["document_id"].as_str().unwrap())).await;
    assert_eq!((&d["filename"], &d["size"]), (&json!("report.pdf"), &json!(15)), "{d}");
    assert!(!bucket_exists(doc["s3_bucket"].as_str().unwrap()).await);

    let up = init(&svc, &alice, json!({"filename": "dropped.fastq"})).await;
    put(&client_of(&up), up["file_id"].as_str().unwrap(), &fastq(3)).await.unwrap();
    let (s, body) =
        svc.post(Some(&alice), "/api/v1/samples/cancel_upload", json!({"sample_id": up["sample_id"]})).await;
    assert_eq!(s, 200, "{body}");
    assert!(!bucket_exists(up["s3_bucket"].as_str().unwrap()).await, "a canceled upload's bucket must go");
    let refused = put(&client_of(&up), up["file_id"].as_str().unwrap(), &fastq(3)).await;
    assert!(refused.is_err(), "a canceled upload's key still writes: {refused:?}");
}

/// A service that stopped between forgetting an upload and removing its bucket (here: the
/// upload's row removed behind its back, as a cancel that committed just before a crash leaves
/// it) removes the bucket, its files and its key at the next start when the janitor's round is
/// due.
#[tokio::test]
async fn a_bucket_left_by_a_crash_is_removed_at_the_next_start() {
    let Some(svc) = service().await else { return };
    let alice = svc.user("alice@example.org").await;
    let up = init(&svc, &alice, json!({"filename": "left.fastq"})).await;
    let client = client_of(&up);
    put(&client, up["file_id"].as_str().unwrap(), &fastq(3)).await.unwrap();
    sqlx::query("DELETE FROM uploads WHERE id = $1")
        .bind(up["sample_id"].as_str().unwrap())
        .execute(&svc.state.db)
        .await
        .unwrap();
    let bucket = up["s3_bucket"].as_str().unwrap();
    assert!(bucket_exists(bucket).await);
    // The janitor's next round is due (one ran at the first start; the next is due a minute
    // later on whichever host looks first).
    sqlx::query("UPDATE leases SET until = '2000-01-01T00:00:00.000000+00:00'").execute(&svc.state.db).await.unwrap();
    let restarted = mgds_server::AppState::open(&svc.config).await.expect("the service starts again");
    assert!(!bucket_exists(bucket).await, "the bucket left by the crash must be removed at start");
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM upload_buckets").fetch_one(&restarted.db).await.unwrap();
    assert_eq!(left, 0);
    assert!(put(&client, up["file_id"].as_str().unwrap(), &fastq(3)).await.is_err(), "its key must be gone");
}
