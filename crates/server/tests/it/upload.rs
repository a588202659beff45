//! The upload paths end to end over real HTTP: init_upload, the multipart POST to the storage
//! endpoint (and every way of tampering with it), confirm, cancel, pre-upload, documents,
//! pre-signed downloads and deletion, checking the object folder after each step.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use base64::Engine;
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use super::{Service, TestUser, assert_error, fastq, post_form};

const INIT: &str = "/api/v1/samples/init_upload";
const CONFIRM: &str = "/api/v1/samples/confirm_upload";
const CANCEL: &str = "/api/v1/samples/cancel_upload";
const PREUPLOAD: &str = "/api/v1/samples/preupload";
const SAMPLES: &str = "/api/v1/samples";

// ---------------------------------------------------------------------------------------------
// Helpers

/// 16 lowercase hexadecimal characters.
fn is_id(s: &str) -> bool {
    s.len() == 16 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn objects_root(svc: &Service) -> PathBuf {
    svc.data_dir().join(mgds_server::OBJECTS_DIR)
}

/// The keys of the objects the service's store holds, sorted (its data folder's `objects/`, or
/// its folder of the S3 bucket).
pub(crate) async fn stored(svc: &Service) -> Vec<String> {
    svc.state.storage.keys(None).await.expect("the store lists its objects")
}

/// Where a file posted with an upload's form is, before the upload is confirmed: at its key in
/// the data folder, at its incoming key in an S3 store (see `files::incoming_key`).
fn posted_key(svc: &Service, key: &str) -> String {
    if svc.on_s3() { mgds_server::store::files::incoming_key(key) } else { key.to_string() }
}

/// The key the form of `init` names, relative to the service's store (an S3 store's form
/// names the key in the bucket, under the service's folder of it).
fn form_key(svc: &Service, init: &Value) -> String {
    let key = init["additional_fields"]["key"].as_str().expect("a key field");
    match svc.state.storage.s3_config() {
        Some(s3) => {
            let inside = key.strip_prefix(&s3.full_key("")).unwrap_or(key);
            inside.strip_prefix("incoming/").unwrap_or(inside).to_string()
        }
        None => key.to_string(),
    }
}

/// Every regular file under `objects/` of the data folder, staging files included, as sorted
/// paths relative to it with `/` separators. Tolerates folders vanishing during the walk (the
/// store removes empty folders).
pub(crate) fn object_files(svc: &Service) -> Vec<String> {
    let root = objects_root(svc);
    assert!(root.is_dir(), "the object folder {} must exist", root.display());
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let Ok(ft) = entry.file_type() else { continue };
            let path = entry.path();
            if ft.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

/// A staging file name of the local object store: `<name>#<digits>`.
fn is_staging(path: &str) -> bool {
    path.rsplit_once('#').is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn staging_files(svc: &Service) -> Vec<String> {
    object_files(svc).into_iter().filter(|p| is_staging(p)).collect()
}

/// Polls `cond` every 10 ms for at most `limit`; returns whether it became true.
async fn wait_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if cond() {
            return true;
        }
        if start.elapsed() > limit {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// One part of a hand-made multipart form.
#[derive(Clone, Debug)]
enum Piece {
    Field(String, String),
    File(Vec<u8>),
}

fn field(name: &str, value: &str) -> Piece {
    Piece::Field(name.to_string(), value.to_string())
}

/// The `additional_fields` of an init_upload answer as ordered (name, value) pairs.
fn fields_of(init: &Value) -> Vec<(String, String)> {
    init["additional_fields"]
        .as_object()
        .expect("additional_fields is an object")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().expect("every additional field is a string").to_string()))
        .collect()
}

/// The fields, in order, then the file: the form a well-behaved client posts.
fn standard_pieces(fields: &[(String, String)], file: &[u8]) -> Vec<Piece> {
    let mut p: Vec<Piece> = fields.iter().map(|(k, v)| Piece::Field(k.clone(), v.clone())).collect();
    p.push(Piece::File(file.to_vec()));
    p
}

fn set_field(fields: &mut [(String, String)], name: &str, value: String) {
    let f = fields.iter_mut().find(|(k, _)| k == name).unwrap_or_else(|| panic!("no field {name}"));
    f.1 = value;
}

fn get_field<'a>(fields: &'a [(String, String)], name: &str) -> &'a str {
    &fields.iter().find(|(k, _)| k == name).unwrap_or_else(|| panic!("no field {name}")).1
}

/// Posts the pieces as multipart/form-data in the given order. Returns status and body text.
async fn post_pieces(http: &reqwest::Client, url: &str, pieces: Vec<Piece>) -> (u16, String) {
    let mut form = Form::new();
    for p in pieces {
        form = match p {
            Piece::Field(k, v) => form.text(k, v),
            Piece::File(b) => form.part("file", Part::bytes(b).file_name("upload")),
        };
    }
    let r = http.post(url).multipart(form).send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.text().await.unwrap())
}

/// The JSON of an error body (panics with the text if it is not JSON).
fn json_body(status: u16, text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| panic!("answer {status} must have a JSON error body, got: {text:?}"))
}

fn message(body: &Value) -> String {
    body["message"].as_str().unwrap_or_default().to_string()
}

async fn start_upload(svc: &Service, user: &TestUser, body: Value) -> Value {
    let (status, init) = svc.post(Some(user), INIT, body).await;
    assert_eq!(status, 200, "init_upload: {init}");
    init
}

async fn confirm(svc: &Service, user: &TestUser, id: &str) -> (u16, Value) {
    svc.post(Some(user), CONFIRM, json!({ "sample_id": id })).await
}

/// Asserts that confirming `id` answers 400 because the file has not arrived.
async fn assert_not_arrived(svc: &Service, user: &TestUser, id: &str, after: &str) {
    let (status, body) = confirm(svc, user, id).await;
    assert_error(status, &body, 400);
    assert!(message(&body).contains("not arrived"), "after {after}: confirm must say the file has not arrived: {body}");
}

async fn list_samples(svc: &Service, user: &TestUser) -> Vec<Value> {
    let (status, list) = svc.get(Some(user), SAMPLES).await;
    assert_eq!(status, 200, "list samples: {list}");
    list.as_array().expect("the sample list is an array").clone()
}

/// GETs a pre-signed address, returning status, Content-Disposition and body bytes.
async fn fetch(svc: &Service, url: &str) -> (u16, Option<String>, Vec<u8>) {
    let r = svc.http.get(url).send().await.unwrap();
    let status = r.status().as_u16();
    let cd = r.headers().get(reqwest::header::CONTENT_DISPOSITION).map(|v| v.to_str().unwrap().to_string());
    (status, cd, r.bytes().await.unwrap().to_vec())
}

/// The value of query parameter `name` in `url`.
fn param<'a>(url: &'a str, name: &str) -> &'a str {
    let query = url.split_once('?').expect("a query string").1;
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix(name).and_then(|r| r.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {name} in {url}"))
}

/// `url` with query parameter `name` set to `value`.
fn with_param(url: &str, name: &str, value: &str) -> String {
    let (base, query) = url.split_once('?').expect("a query string");
    let parts: Vec<String> = query
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some((k, _)) if k == name => format!("{k}={value}"),
            _ => kv.to_string(),
        })
        .collect();
    let out = format!("{base}?{}", parts.join("&"));
    assert_ne!(out, url, "setting {name} must change the address");
    out
}

async fn sample_download_uri(svc: &Service, user: &TestUser, id: &str) -> String {
    let (status, d) = svc.post(Some(user), &format!("{SAMPLES}/{id}/download_uri"), json!({})).await;
    assert_eq!(status, 200, "download_uri: {d}");
    d["download_uri"].as_str().expect("download_uri is a string").to_string()
}

// ---------------------------------------------------------------------------------------------
// 0. Checksums

fn sha256_hex(b: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(b))
}

/// A SHA-256 declared at init_upload travels in the signed form and the store itself (the
/// service's endpoint, or the S3 store) refuses other bytes, storing nothing; confirm_upload
/// checks a SHA-256 it is given against the declared one, or, when none was declared, against
/// the stored file. A mismatch never makes a sample or a document, and the upload can still be
/// completed with the right file.
#[tokio::test]
async fn checksums_are_checked_by_the_store_and_at_confirmation() {
    let svc = Service::start().await;
    let u = svc.user("lab@example.org").await;
    let http = reqwest::Client::new();
    let right = fastq(50);
    let mut wrong = right.clone();
    let last = wrong.len() - 2;
    wrong[last] = if wrong[last] == b'I' { b'H' } else { b'I' };
    let (right_sha, wrong_sha) = (sha256_hex(&right), sha256_hex(&wrong));

    // Declared at init_upload: the store refuses the damaged file.
    let (s, init) = svc
        .post(Some(&u), INIT, json!({"filename": "r.fastq", "size": right.len(), "sha256": right_sha.to_uppercase()}))
        .await;
    assert_eq!(s, 200, "{init}");
    assert_eq!(init["additional_fields"]["x-amz-checksum-algorithm"], json!("SHA256"));
    let id = init["sample_id"].as_str().unwrap().to_string();
    let url = init["upload_url"].as_str().unwrap();
    let r = post_form(&http, url, init["additional_fields"].as_object().unwrap(), &wrong).await;
    assert_eq!(r.status().as_u16(), 400, "{}", r.text().await.unwrap_or_default());
    let (s, body) = svc.post(Some(&u), CONFIRM, json!({"sample_id": id})).await;
    assert_eq!((s, &body["code"]), (400, &json!("file_not_arrived")), "nothing was stored: {body}");
    let r = post_form(&http, url, init["additional_fields"].as_object().unwrap(), &right).await;
    assert!(r.status().is_success(), "{}", r.text().await.unwrap_or_default());
    let (s, body) = svc.post(Some(&u), CONFIRM, json!({"sample_id": id, "sha256": wrong_sha})).await;
    assert_eq!((s, &body["code"]), (400, &json!("checksum_mismatch")), "{body}");
    assert!(body["message"].as_str().unwrap().contains("declared at init_upload"), "{body}");
    let (s, body) = svc.post(Some(&u), CONFIRM, json!({"sample_id": id, "sha256": right_sha})).await;
    assert_eq!(s, 200, "{body}");

    // Given at confirmation only: the stored file is read to check it.
    let (_, init) = svc.post(Some(&u), INIT, json!({"filename": "q.fastq", "size": wrong.len()})).await;
    assert!(init["additional_fields"].get("x-amz-checksum-sha256").is_none());
    let id = init["sample_id"].as_str().unwrap().to_string();
    let r =
        post_form(&http, init["upload_url"].as_str().unwrap(), init["additional_fields"].as_object().unwrap(), &wrong)
            .await;
    assert!(r.status().is_success());
    let (s, body) = svc.post(Some(&u), CONFIRM, json!({"sample_id": id, "sha256": right_sha})).await;
    assert_eq!((s, &body["code"]), (400, &json!("checksum_mismatch")), "{body}");
    assert!(body["message"].as_str().unwrap().contains(&wrong_sha), "names what the stored file has: {body}");
    let (s, samples) = svc.get(Some(&u), SAMPLES).await;
    assert_eq!((s, samples.as_array().unwrap().len()), (200, 1), "the mismatched upload made no sample");
    let (s, body) = svc.post(Some(&u), CONFIRM, json!({"sample_id": id, "sha256": "not hex"})).await;
    assert_eq!(s, 400, "{body}");
    let (s, body) = svc.post(Some(&u), CONFIRM, json!({"sample_id": id, "sha256": wrong_sha})).await;
    assert_eq!(s, 200, "{body}");

    // Documents alike.
    let (s, init) = svc
        .post(
            Some(&u),
            "/api/v1/documents/init_upload",
            json!({"filename": "report.txt", "size": right.len(), "sha256": right_sha}),
        )
        .await;
    assert_eq!(s, 200, "{init}");
    let doc = init["document_id"].as_str().unwrap().to_string();
    let fields = init["additional_fields"].as_object().unwrap();
    let r = post_form(&http, init["upload_url"].as_str().unwrap(), fields, &wrong).await;
    assert_eq!(r.status().as_u16(), 400);
    let r = post_form(&http, init["upload_url"].as_str().unwrap(), fields, &right).await;
    assert!(r.status().is_success());
    let (s, body) =
        svc.post(Some(&u), "/api/v1/documents/confirm_upload", json!({"document_id": doc, "sha256": wrong_sha})).await;
    assert_eq!((s, &body["code"]), (400, &json!("checksum_mismatch")), "{body}");
    let (s, body) =
        svc.post(Some(&u), "/api/v1/documents/confirm_upload", json!({"document_id": doc, "sha256": right_sha})).await;
    assert_eq!(s, 200, "{body}");
}

// ---------------------------------------------------------------------------------------------
/// A deletion cut short between its records and its files (the service died after the
/// transaction committed): the next start removes the files, on either store.
#[tokio::test]
async fn a_deletion_cut_short_by_a_crash_is_finished_at_the_next_start() {
    use mgds_server::store::{db, deletes};
    let svc = Service::start().await;
    let u = svc.user("lab@example.org").await;
    let id = svc.upload_sample(&u, "a.fastq", &fastq(10), json!({})).await;
    let key: String = sqlx::query_scalar("SELECT object_key FROM samples WHERE id = $1")
        .bind(&id)
        .fetch_one(&svc.state.db)
        .await
        .unwrap();
    assert!(stored(&svc).await.contains(&key));
    // What the deletion's transaction commits, and nothing after it.
    let mut tx = db::begin_write(&svc.state.db, db::Scope::Rows).await.unwrap();
    deletes::queue_delete(&mut tx, &key).await.unwrap();
    sqlx::query("DELETE FROM samples WHERE id = $1").bind(&id).execute(&mut *tx).await.unwrap();
    tx.commit().await.unwrap();
    assert!(stored(&svc).await.contains(&key), "the file outlived the crash");
    let (s, _) = svc.get(Some(&u), &format!("{SAMPLES}/{id}")).await;
    assert_eq!(s, 404, "the sample is gone already");

    // The next start over the same data, once the janitor's next round is due (a round ran at
    // the first start; the next is due a minute later, on whichever host looks first).
    sqlx::query("UPDATE leases SET until = '2000-01-01T00:00:00.000000+00:00'").execute(&svc.state.db).await.unwrap();
    let restarted = mgds_server::AppState::open(&svc.config).await.expect("the service starts again");
    let keys = restarted.storage.keys(None).await.unwrap();
    assert!(!keys.contains(&key), "the next start removed it: {keys:?}");
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pending_deletes").fetch_one(&restarted.db).await.unwrap();
    assert_eq!(left, 0);
}

// 1. The whole flow

#[tokio::test]
async fn whole_upload_flow_with_a_real_multipart_post() {
    let svc = Service::start().await;
    let alice = svc.user("alice@example.org").await;
    let bytes = fastq(200);

    let init = start_upload(&svc, &alice, json!({"filename": "reads_R1.fastq", "size": bytes.len()})).await;
    let id = init["sample_id"].as_str().expect("sample_id").to_string();
    assert!(is_id(&id), "sample_id must be 16 lowercase hex characters: {id:?}");
    let upload_url = init["upload_url"].as_str().expect("upload_url").to_string();
    let store_url = match svc.state.storage.s3_config() {
        // The form goes to the S3 store itself, which checks it.
        Some(s3) => s3.public_bucket_url(),
        None => format!("{}/storage/mgds", svc.url),
    };
    assert_eq!(upload_url, store_url, "upload_url");
    let fields = init["additional_fields"].as_object().expect("additional_fields").clone();
    for name in [
        "key",
        "acl",
        "success_action_status",
        "policy",
        "x-amz-signature",
        "x-amz-credential",
        "x-amz-date",
        "x-amz-algorithm",
    ] {
        assert!(
            fields.get(name).and_then(Value::as_str).is_some_and(|v| !v.is_empty()),
            "additional_fields must carry a non-empty {name}: {init}"
        );
    }
    assert_eq!(fields["success_action_status"], json!("201"));
    assert_eq!(fields["x-amz-algorithm"], json!("AWS4-HMAC-SHA256"));
    let key = form_key(&svc, &init);
    assert!(key.ends_with("/reads_R1.fastq"), "the key names the file: {key}");

    // A proposed sample is not reachable, nor listed, before confirm.
    let (status, body) = svc.get(Some(&alice), &format!("{SAMPLES}/{id}")).await;
    assert_error(status, &body, 404);
    assert!(list_samples(&svc, &alice).await.is_empty(), "a proposed sample must not be listed");

    // Confirm before the file arrived.
    assert_not_arrived(&svc, &alice, &id, "init only").await;
    assert!(stored(&svc).await.is_empty());

    // The transfer.
    let r = post_form(&svc.http, &upload_url, &fields, &bytes).await;
    let status = r.status().as_u16();
    let xml = r.text().await.unwrap();
    assert_eq!(status, 201, "upload: {xml}");
    // S3's answer (an S3 store words its own: Garage's root element is PostObject).
    assert!(
        svc.on_s3() || (xml.contains("<PostResponse>") && xml.contains("</PostResponse>")),
        "the 201 body is an XML PostResponse: {xml}"
    );
    assert!(xml.contains(&format!("{key}</Key>")), "the PostResponse names the key {key}: {xml}");
    assert_eq!(stored(&svc).await, vec![posted_key(&svc, &key)], "exactly the uploaded object is stored");

    // Still not reachable until confirmed.
    let (status, body) = svc.get(Some(&alice), &format!("{SAMPLES}/{id}")).await;
    assert_error(status, &body, 404);

    let (status, c) = confirm(&svc, &alice, &id).await;
    assert_eq!(status, 200, "confirm: {c}");
    assert_eq!(c["success"], json!(true), "{c}");
    assert_eq!(c["sample"], json!({"$ref": format!("/api/v1/samples/{id}")}), "{c}");
    assert_eq!(stored(&svc).await, vec![key.clone()], "the sample's file is in place");

    let (status, sample) = svc.get(Some(&alice), &format!("{SAMPLES}/{id}")).await;
    assert_eq!(status, 200, "{sample}");
    assert_eq!(sample["filename"], json!("reads_R1.fastq"));
    assert_eq!(sample["size"], json!(bytes.len()));
    assert_eq!(sample["visibility"], json!("private"));

    let list = list_samples(&svc, &alice).await;
    assert_eq!(list.len(), 1, "{list:?}");
    let s = &list[0];
    assert_eq!(s["$uri"], json!(format!("/api/v1/samples/{id}")));
    assert_eq!(s["filename"], json!("reads_R1.fastq"));
    assert_eq!(s["size"], json!(bytes.len()));
    let meta = s["metadata"]["$ref"].as_str().expect("the sample has a metadata $ref").to_string();
    let meta_id = meta.strip_prefix("/api/v1/metadata/").expect("a metadata address");
    assert!(is_id(meta_id), "{meta}");
    let (status, m) = svc.get(Some(&alice), &meta).await;
    assert_eq!(status, 200, "{m}");
    assert_eq!(m["sample"], json!({"$ref": format!("/api/v1/samples/{id}")}));

    // Confirming again is harmless: same sample, no second one.
    let (status, c2) = confirm(&svc, &alice, &id).await;
    assert_eq!(status, 200, "second confirm: {c2}");
    assert_eq!(c2["success"], json!(true));
    assert_eq!(c2["sample"], c["sample"]);
    assert_eq!(list_samples(&svc, &alice).await.len(), 1, "a second confirm must not create a second sample");

    // The file comes back byte for byte.
    let url = sample_download_uri(&svc, &alice, &id).await;
    let (status, _, got) = fetch(&svc, &url).await;
    assert_eq!(status, 200);
    assert!(got == bytes, "the download must return the uploaded bytes ({} vs {} bytes)", got.len(), bytes.len());
}

// ---------------------------------------------------------------------------------------------
// 2. Filename and body rules

#[tokio::test]
async fn init_upload_filename_and_body_rules() {
    let svc = Service::start().await;
    let alice = svc.user("alice@example.org").await;

    // Spaces become underscores in the stored name.
    let id = svc.upload_sample(&alice, "gut sample R1.fastq", &fastq(3), json!({})).await;
    let (status, s) = svc.get(Some(&alice), &format!("{SAMPLES}/{id}")).await;
    assert_eq!(status, 200, "{s}");
    assert_eq!(s["filename"], json!("gut_sample_R1.fastq"));

    for name in ["a.fastq.gz", "b.fq.gzip", "c.fasta"] {
        let (status, body) = svc.post(Some(&alice), INIT, json!({"filename": name, "size": 10})).await;
        assert_eq!(status, 200, "{name} must be accepted: {body}");
        let key = body["additional_fields"]["key"].as_str().unwrap();
        assert!(key.ends_with(&format!("/{name}")), "{key}");
    }

    let (status, body) = svc.post(Some(&alice), INIT, json!({"filename": "report.pdf", "size": 10})).await;
    assert_error(status, &body, 400);
    let m = message(&body);
    assert!(m.contains("FASTA") && m.contains("FASTQ"), "the message must name FASTA/FASTQ: {m}");

    let (status, body) = svc.post(Some(&alice), INIT, json!({"filename": "a#b.fastq", "size": 10})).await;
    assert_error(status, &body, 400);
    assert!(message(&body).contains('#'), "the message must name the character #: {body}");

    let (status, body) = svc.post(Some(&alice), INIT, json!({"filename": "ok.fastq", "size": 0})).await;
    assert_error(status, &body, 400);
    let (status, body) = svc.post(Some(&alice), INIT, json!({"filename": "ok.fastq", "size": 20_000_000_001u64})).await;
    assert_error(status, &body, 400);
    let (status, body) = svc.post(Some(&alice), INIT, json!({"filename": "ok.fastq", "size": 20_000_000_000u64})).await;
    assert_eq!(status, 200, "exactly 20 GB is allowed: {body}");

    let (status, body) =
        svc.post(Some(&alice), INIT, json!({"filename": "ok.fastq", "size": 10, "upload_type": "multipart"})).await;
    assert_error(status, &body, 400);
    let (status, body) =
        svc.post(Some(&alice), INIT, json!({"filename": "ok.fastq", "size": 10, "upload_type": "standard"})).await;
    assert_eq!(status, 200, "upload_type standard is allowed: {body}");

    let (status, body) =
        svc.post(Some(&alice), INIT, json!({"filename": "ok.fastq", "size": 10, "colour": "red"})).await;
    assert_error(status, &body, 400);

    // Nothing but the one confirmed sample exists.
    assert_eq!(list_samples(&svc, &alice).await.len(), 1);
}

/// With an S3 store the forms go to the store, and the store itself enforces what the service
/// signed: a file of another size, another key, a changed or expired policy are refused and
/// store nothing. (The service's own endpoint is tested the same way below.) Runs on the test
/// command's Garage pass.
#[tokio::test]
async fn an_s3_store_enforces_the_signed_form() {
    let svc = Service::start().await;
    if !svc.on_s3() {
        eprintln!("not run: needs an S3 store (the test command's PostgreSQL and Garage pass)");
        return;
    }
    let u = svc.user("lab@example.org").await;
    let bytes = fastq(20);
    let init = start_upload(&svc, &u, json!({"filename": "target.fastq", "size": bytes.len()})).await;
    let url = init["upload_url"].as_str().unwrap();
    let fields = init["additional_fields"].as_object().unwrap().clone();
    let before = stored(&svc).await;
    let refused = async |fields: &serde_json::Map<String, Value>, file: &[u8], what: &str| {
        let r = post_form(&svc.http, url, fields, file).await;
        let status = r.status().as_u16();
        assert!((400..500).contains(&status), "{what}: the store answered {status}: {}", r.text().await.unwrap());
        assert_eq!(stored(&svc).await, before, "{what}: nothing stored");
    };
    refused(&fields, &fastq(21), "a larger file").await;
    refused(&fields, &bytes[..bytes.len() - 1], "a shorter file").await;
    let mut other_key = fields.clone();
    let key = other_key["key"].as_str().unwrap().to_string();
    other_key.insert("key".into(), json!(key.replace("target.fastq", "elsewhere.fastq")));
    refused(&other_key, &bytes, "another key").await;
    let mut changed_policy = fields.clone();
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut policy: Value = serde_json::from_slice(&b64.decode(fields["policy"].as_str().unwrap()).unwrap()).unwrap();
    for c in policy["conditions"].as_array_mut().unwrap() {
        if c.get(0) == Some(&json!("content-length-range")) {
            *c = json!(["content-length-range", 0, 1_000_000_000]);
        }
    }
    changed_policy.insert("policy".into(), json!(b64.encode(policy.to_string())));
    refused(&changed_policy, &fastq(21), "a widened policy").await;
    // The form as signed works, and the upload confirms.
    let r = post_form(&svc.http, url, &fields, &bytes).await;
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    let id = init["sample_id"].as_str().unwrap();
    let (s, body) = svc.post(Some(&u), CONFIRM, json!({"sample_id": id})).await;
    assert_eq!(s, 200, "{body}");
}

// ---------------------------------------------------------------------------------------------
// 3. Attacks on the storage policy

#[tokio::test]
async fn storage_policy_attacks_are_refused_and_leave_nothing_behind() {
    let svc = Service::start().await;
    if svc.on_s3() {
        // The service's own storage endpoint only: with an S3 store, forms go to the store and
        // the store checks the forms.
        return;
    }
    let alice = svc.user("alice@example.org").await;

    // A legitimate sample whose file must survive every attack unchanged.
    let legit_bytes = fastq(5);
    let legit = svc.upload_sample(&alice, "legit.fastq", &legit_bytes, json!({})).await;
    let legit_key = format!("samples/{legit}/legit.fastq");
    let baseline = object_files(&svc);
    assert_eq!(baseline, vec![legit_key.clone()], "the legitimate upload is stored under its key");

    let bytes = fastq(50);
    let init = start_upload(&svc, &alice, json!({"filename": "target.fastq", "size": bytes.len()})).await;
    let id = init["sample_id"].as_str().unwrap().to_string();
    let url = init["upload_url"].as_str().unwrap().to_string();
    let good = fields_of(&init);
    let key = get_field(&good, "key").to_string();

    // (name, pieces, status, words the message must contain)
    let mut attacks: Vec<(&str, Vec<Piece>, u16, &str)> = Vec::new();

    // Expired policy: a form genuinely signed by the service, but two hours old and valid for one.
    let expired: Vec<(String, String)> = svc
        .state
        .signer
        .upload_form(
            &key,
            bytes.len() as u64,
            None,
            chrono::Utc::now() - chrono::Duration::hours(2),
            chrono::Duration::hours(1),
        )
        .into_iter()
        .map(|(k, v)| (k, v.as_str().unwrap().to_string()))
        .collect();
    attacks.push(("expired policy", standard_pieces(&expired, &bytes), 403, "expired"));

    // Tampered policy: a wider content-length-range, the old signature kept.
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut policy: Value = serde_json::from_slice(&b64.decode(get_field(&good, "policy")).unwrap()).unwrap();
    let conditions = policy["conditions"].as_array_mut().unwrap();
    let range = conditions
        .iter_mut()
        .find(|c| c.get(0) == Some(&json!("content-length-range")))
        .expect("the policy has a content-length-range");
    assert_eq!(range, &json!(["content-length-range", bytes.len(), bytes.len()]), "the policy pins the exact size");
    *range = json!(["content-length-range", 1, 1_000_000_000]);
    let mut tampered = good.clone();
    set_field(&mut tampered, "policy", b64.encode(policy.to_string()));
    let mut bigger = bytes.clone();
    bigger.extend_from_slice(b"@extra\nACGT\n+\nIIII\n");
    attacks.push(("tampered policy", standard_pieces(&tampered, &bigger), 403, "signature"));

    // Tampered signature.
    let mut bad_sig = good.clone();
    let sig = get_field(&good, "x-amz-signature").to_string();
    let flipped = format!("{}{}", if sig.starts_with('0') { '1' } else { '0' }, &sig[1..]);
    set_field(&mut bad_sig, "x-amz-signature", flipped);
    attacks.push(("tampered signature", standard_pieces(&bad_sig, &bytes), 403, "signature"));

    // A field the policy does not cover.
    let mut extra = good.clone();
    extra.push(("x-evil".into(), "1".into()));
    attacks.push(("uncovered field", standard_pieces(&extra, &bytes), 403, "not covered"));

    // The wrong key: another sample's object (an overwrite attempt), and an arbitrary path.
    let mut other = good.clone();
    set_field(&mut other, "key", legit_key.clone());
    attacks.push(("key of another sample", standard_pieces(&other, &bytes), 403, "key"));
    let mut elsewhere = good.clone();
    set_field(&mut elsewhere, "key", "samples/0123456789abcdef/evil.fastq".into());
    attacks.push(("arbitrary key", standard_pieces(&elsewhere, &bytes), 403, "key"));

    // Sizes off by one.
    let mut plus_one = bytes.clone();
    plus_one.push(b'\n');
    attacks.push(("file 1 byte larger", standard_pieces(&good, &plus_one), 400, "larger"));
    attacks.push(("file 1 byte smaller", standard_pieces(&good, &bytes[..bytes.len() - 1]), 400, "at least"));

    // No file part.
    let no_file: Vec<Piece> = good.iter().map(|(k, v)| field(k, v)).collect();
    attacks.push(("missing file part", no_file, 400, "file"));

    // The file before the fields: the policy fields are missing when the file arrives.
    let mut file_first = vec![Piece::File(bytes.clone())];
    file_first.extend(good.iter().map(|(k, v)| field(k, v)));
    attacks.push(("file part first", file_first, 403, "field"));

    // A duplicated field (the same value twice, and a conflicting second value).
    let mut dup: Vec<Piece> = good.iter().map(|(k, v)| field(k, v)).collect();
    dup.insert(1, field("acl", "private"));
    dup.push(Piece::File(bytes.clone()));
    attacks.push(("duplicate field", dup, 403, "more than once"));
    let mut dup_key: Vec<Piece> = good.iter().map(|(k, v)| field(k, v)).collect();
    dup_key.push(field("key", &legit_key));
    dup_key.push(Piece::File(bytes.clone()));
    attacks.push(("duplicate key field", dup_key, 403, "more than once"));

    for (name, pieces, want, words) in attacks {
        let (status, text) = post_pieces(&svc.http, &url, pieces).await;
        let body = json_body(status, &text);
        assert_error(status, &body, want);
        assert!(message(&body).to_lowercase().contains(words), "{name}: the message should mention {words:?}: {body}");
        // Nothing left behind: no new object, no staging file, the other sample's file intact.
        assert!(
            wait_until(Duration::from_secs(5), || staging_files(&svc).is_empty()).await,
            "{name}: a staging file remains: {:?}",
            object_files(&svc)
        );
        assert_eq!(object_files(&svc), baseline, "{name}: the attack must not store anything");
        assert!(
            std::fs::read(objects_root(&svc).join(&legit_key)).unwrap() == legit_bytes,
            "{name}: the legitimate sample's file must be unchanged"
        );
        assert_not_arrived(&svc, &alice, &id, name).await;
    }

    // The genuine form posted to another bucket.
    let (status, text) =
        post_pieces(&svc.http, &format!("{}/storage/other", svc.url), standard_pieces(&good, &bytes)).await;
    assert_error(status, &json_body(status, &text), 403);
    assert_eq!(object_files(&svc), baseline, "another bucket: the attack must not store anything");
    assert_not_arrived(&svc, &alice, &id, "another bucket").await;

    // The untouched form still works: the refusals were about the tampering, not the form.
    let (status, text) = post_pieces(&svc.http, &url, standard_pieces(&good, &bytes)).await;
    assert_eq!(status, 201, "the genuine form: {text}");
    let (status, c) = confirm(&svc, &alice, &id).await;
    assert_eq!(status, 200, "{c}");
    let mut want = vec![legit_key, key];
    want.sort();
    assert_eq!(object_files(&svc), want);
}

#[tokio::test]
async fn storage_endpoint_errors_have_the_json_error_body() {
    let svc = Service::start().await;
    if svc.on_s3() {
        // The service's own storage endpoint only: with an S3 store, forms go to the store and
        // the store answers in its own words.
        return;
    }
    let alice = svc.user("alice@example.org").await;
    let bytes = fastq(3);
    let id = svc.upload_sample(&alice, "x.fastq", &bytes, json!({})).await;
    let upload_url = format!("{}/storage/mgds", svc.url);
    let download = sample_download_uri(&svc, &alice, &id).await;

    let mut failures: Vec<String> = Vec::new();
    let mut check = |what: &str, status: u16, text: &str, want: &[u16]| {
        let ok = want.contains(&status)
            && serde_json::from_str::<Value>(text)
                .is_ok_and(|b| b["status"] == json!(status) && b["message"].as_str().is_some_and(|m| !m.is_empty()));
        if !ok {
            failures.push(format!("{what}: want {want:?} with a JSON {{message, status}} body, got {status} {text:?}"));
        }
    };

    // A body that is not multipart/form-data at all.
    let r = svc.http.post(&upload_url).json(&json!({"key": "x"})).send().await.unwrap();
    let status = r.status().as_u16();
    check("a JSON body posted to upload_url", status, &r.text().await.unwrap(), &[400]);

    // multipart/form-data without a boundary.
    let r =
        svc.http.post(&upload_url).header("content-type", "multipart/form-data").body("--x\r\n").send().await.unwrap();
    let status = r.status().as_u16();
    check("multipart without a boundary", status, &r.text().await.unwrap(), &[400]);

    // A pre-signed GET whose expires is not a number: the address is not valid.
    let garbled = with_param(&download, "expires", "soon");
    let (status, _, body) = fetch(&svc, &garbled).await;
    check("a download address with a non-numeric expires", status, &String::from_utf8_lossy(&body), &[400, 403]);

    assert!(failures.is_empty(), "error bodies must be JSON {{message, status}}:\n{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// 4. A dropped connection

#[tokio::test]
async fn a_connection_dropped_mid_upload_leaves_nothing_and_the_form_can_be_retried() {
    let svc = Service::start().await;
    if svc.on_s3() {
        // The service's own storage endpoint only: with an S3 store, forms go to the store and
        // the store stores an object only whole.
        return;
    }
    let alice = svc.user("alice@example.org").await;
    let bytes = fastq(20_000);
    let init = start_upload(&svc, &alice, json!({"filename": "big.fastq", "size": bytes.len()})).await;
    let id = init["sample_id"].as_str().unwrap().to_string();
    let fields = init["additional_fields"].as_object().unwrap().clone();
    let key = fields["key"].as_str().unwrap().to_string();

    // The whole body a client would send; only its first part goes out.
    let boundary = "mgds-test-boundary-7d1f";
    let mut head = Vec::new();
    for (k, v) in &fields {
        head.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{}\r\n", v.as_str().unwrap())
                .as_bytes(),
        );
    }
    head.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"upload\"\r\n\
             Content-Type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    let tail = format!("\r\n--{boundary}--\r\n");
    let content_length = head.len() + bytes.len() + tail.len();
    let addr = svc.url.strip_prefix("http://").expect("plain http on loopback");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request_head = format!(
        "POST /storage/mgds HTTP/1.1\r\nHost: {addr}\r\nContent-Type: multipart/form-data; boundary={boundary}\r\n\
         Content-Length: {content_length}\r\n\r\n"
    );
    stream.write_all(request_head.as_bytes()).await.unwrap();
    stream.write_all(&head).await.unwrap();
    stream.write_all(&bytes[..bytes.len() / 2]).await.unwrap();
    stream.flush().await.unwrap();

    // The server has started writing the file...
    assert!(
        wait_until(Duration::from_secs(10), || !staging_files(&svc).is_empty()).await,
        "the server should be staging the partial upload: {:?}",
        object_files(&svc)
    );
    // ...when the client goes away.
    drop(stream);
    assert!(
        wait_until(Duration::from_secs(10), || staging_files(&svc).is_empty()).await,
        "the staging file of the dropped upload must be removed: {:?}",
        object_files(&svc)
    );
    assert!(object_files(&svc).is_empty(), "nothing may remain of the dropped upload: {:?}", object_files(&svc));
    assert_not_arrived(&svc, &alice, &id, "a dropped connection").await;

    // A retry of the same form succeeds.
    let r = post_form(&svc.http, init["upload_url"].as_str().unwrap(), &fields, &bytes).await;
    let status = r.status().as_u16();
    assert_eq!(status, 201, "retry: {}", r.text().await.unwrap());
    let (status, c) = confirm(&svc, &alice, &id).await;
    assert_eq!(status, 200, "{c}");
    assert_eq!(object_files(&svc), vec![key.clone()]);
    let stored = std::fs::read(objects_root(&svc).join(&key)).unwrap();
    assert!(stored == bytes, "the retried upload must store the whole file");
}

/// The storage endpoint limits the form fields before the file to 64 KiB; a field larger than
/// that must be refused as soon as the limit is passed, not buffered whole first (the route has
/// no body limit, so an endless field would otherwise fill the service's memory).
#[tokio::test]
async fn an_oversized_form_field_is_refused_without_being_read_whole() {
    use tokio::io::AsyncReadExt;

    let svc = Service::start().await;
    let boundary = "mgds-test-boundary-big-field";
    let addr = svc.url.strip_prefix("http://").expect("plain http on loopback");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /storage/mgds HTTP/1.1\r\nHost: {addr}\r\nContent-Type: multipart/form-data; boundary={boundary}\r\n\
         Content-Length: 1000000000\r\n\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"policy\"\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // 256 KiB of one field: four times the limit, small enough to sit in the socket buffers.
    stream.write_all(&vec![b'A'; 256 * 1024]).await.unwrap();
    stream.flush().await.unwrap();

    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(5), async {
        while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buf).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            answer.extend_from_slice(&buf[..n]);
        }
    })
    .await;
    let text = String::from_utf8_lossy(&answer).to_string();
    assert!(
        read.is_ok() && !answer.is_empty(),
        "no answer 5 s after a 256 KiB form field (the limit is 64 KiB): the service keeps reading \
         the field into memory instead of refusing it; got {text:?}"
    );
    let status_line = text.lines().next().unwrap_or_default().to_string();
    assert!(
        status_line.starts_with("HTTP/1.1 400") || status_line.starts_with("HTTP/1.1 413"),
        "an oversized field must be refused with 400 or 413: {text:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// 5. Pre-upload

#[tokio::test]
async fn preupload_then_upload_fills_the_same_sample() {
    let svc = Service::start().await;
    let alice = svc.user("alice@example.org").await;

    let (status, p) = svc.post(Some(&alice), PREUPLOAD, json!({"metadata": {"external_sample_id": "EXT-1"}})).await;
    assert_eq!(status, 200, "{p}");
    let pre = p["sample_id"].as_str().expect("sample_id").to_string();
    assert!(is_id(&pre), "{pre}");
    let (status, s) = svc.get(Some(&alice), &format!("{SAMPLES}/{pre}")).await;
    assert_eq!(status, 200, "{s}");
    assert_eq!(s["visibility"], json!("awaiting data"));

    let (status, body) = svc.post(Some(&alice), PREUPLOAD, json!({"metadata": {"external_sample_id": "EXT-1"}})).await;
    assert_error(status, &body, 409);
    assert!(message(&body).to_lowercase().contains("unique"), "the 409 must ask for unique IDs: {body}");
    assert_eq!(list_samples(&svc, &alice).await.len(), 1);

    // Upload data for it by external_sample_id.
    let bytes = fastq(7);
    let init = start_upload(
        &svc,
        &alice,
        json!({"filename": "ext one.fastq", "size": bytes.len(), "external_sample_id": "EXT-1"}),
    )
    .await;
    assert_eq!(init["sample_id"], json!(pre), "init_upload must answer the pre-uploaded sample's id");
    let r = post_form(
        &svc.http,
        init["upload_url"].as_str().unwrap(),
        init["additional_fields"].as_object().unwrap(),
        &bytes,
    )
    .await;
    assert_eq!(r.status().as_u16(), 201);
    let (status, c) = confirm(&svc, &alice, &pre).await;
    assert_eq!(status, 200, "{c}");
    assert_eq!(c["sample"], json!({"$ref": format!("/api/v1/samples/{pre}")}));

    let (status, s) = svc.get(Some(&alice), &format!("{SAMPLES}/{pre}")).await;
    assert_eq!(status, 200, "{s}");
    assert_eq!(s["visibility"], json!("private"));
    assert_eq!(s["filename"], json!("ext_one.fastq"));
    assert_eq!(s["size"], json!(bytes.len()));
    let list = list_samples(&svc, &alice).await;
    assert_eq!(list.len(), 1, "no new sample may be created: {list:?}");
    let (status, m) = svc.get(Some(&alice), s["metadata"]["$ref"].as_str().unwrap()).await;
    assert_eq!(status, 200, "{m}");
    assert_eq!(m["external_sample_id"], json!("EXT-1"));
    let url = sample_download_uri(&svc, &alice, &pre).await;
    let (status, _, got) = fetch(&svc, &url).await;
    assert_eq!(status, 200);
    assert!(got == bytes);

    // And by sample_id.
    let (status, p2) = svc.post(Some(&alice), PREUPLOAD, json!({"metadata": {"external_sample_id": "EXT-2"}})).await;
    assert_eq!(status, 200, "{p2}");
    let pre2 = p2["sample_id"].as_str().unwrap().to_string();
    let init2 = start_upload(&svc, &alice, json!({"filename": "two.fq", "size": 10, "sample_id": pre2})).await;
    assert_eq!(init2["sample_id"], json!(pre2));

    // No match: 400.
    for body in [
        json!({"filename": "x.fastq", "size": 10, "sample_id": "0123456789abcdef"}),
        json!({"filename": "x.fastq", "size": 10, "external_sample_id": "EXT-404"}),
    ] {
        let (status, r) = svc.post(Some(&alice), INIT, body.clone()).await;
        assert_error(status, &r, 400);
    }
    // Another user's pre-uploaded sample does not match either.
    let bob = svc.user("bob@example.org").await;
    let (status, r) = svc.post(Some(&bob), INIT, json!({"filename": "x.fastq", "size": 10, "sample_id": pre2})).await;
    assert_error(status, &r, 400);
    assert_eq!(list_samples(&svc, &alice).await.len(), 2);
}

// ---------------------------------------------------------------------------------------------
// 6. Concurrent pre-uploads

#[tokio::test]
async fn concurrent_preuploads_with_one_external_id_make_one_sample() {
    let svc = Service::start().await;
    let alice = svc.user("alice@example.org").await;
    let calls =
        (0..32).map(|_| svc.post(Some(&alice), PREUPLOAD, json!({"metadata": {"external_sample_id": "RACE-1"}})));
    let results = futures::future::join_all(calls).await;
    let ok = results.iter().filter(|(s, _)| *s == 200).count();
    let conflicts = results.iter().filter(|(s, _)| *s == 409).count();
    let others: Vec<_> = results.iter().filter(|(s, _)| *s != 200 && *s != 409).collect();
    assert!(others.is_empty(), "only 200 and 409 are acceptable answers: {others:?}");
    assert_eq!((ok, conflicts), (1, 31), "exactly one pre-upload may win");
    for (s, body) in &results {
        if *s == 409 {
            assert_error(*s, body, 409);
        }
    }
    let list = list_samples(&svc, &alice).await;
    assert_eq!(list.len(), 1, "{list:?}");
    let winner = results.iter().find(|(s, _)| *s == 200).unwrap().1["sample_id"].clone();
    assert_eq!(list[0]["$uri"], json!(format!("/api/v1/samples/{}", winner.as_str().unwrap())));
}

// ---------------------------------------------------------------------------------------------
// 7. Cancel

#[tokio::test]
async fn cancel_upload_removes_the_object() {
    let svc = Service::start().await;
    let alice = svc.user("alice@example.org").await;
    let bytes = fastq(10);
    let init = start_upload(&svc, &alice, json!({"filename": "c.fastq", "size": bytes.len()})).await;
    let id = init["sample_id"].as_str().unwrap().to_string();
    let key = form_key(&svc, &init);
    let r = post_form(
        &svc.http,
        init["upload_url"].as_str().unwrap(),
        init["additional_fields"].as_object().unwrap(),
        &bytes,
    )
    .await;
    assert_eq!(r.status().as_u16(), 201);
    assert_eq!(stored(&svc).await, vec![posted_key(&svc, &key)]);

    let (status, c) = svc.post(Some(&alice), CANCEL, json!({"sample_id": id})).await;
    assert_eq!(status, 200, "{c}");
    assert_eq!(c["success"], json!(true));
    let left = stored(&svc).await;
    assert!(left.is_empty(), "cancel must remove the object: {left:?}");

    // The upload is gone: confirm and a second cancel answer 404 (the code's answer for an
    // unknown upload; the spec does not document cancel_upload).
    let (status, body) = confirm(&svc, &alice, &id).await;
    assert_error(status, &body, 404);
    let (status, body) = svc.post(Some(&alice), CANCEL, json!({"sample_id": id})).await;
    assert_error(status, &body, 404);
    let (status, body) = svc.get(Some(&alice), &format!("{SAMPLES}/{id}")).await;
    assert_error(status, &body, 404);
    assert!(list_samples(&svc, &alice).await.is_empty());

    // Another user cannot cancel someone else's upload.
    let init = init_as(&svc, &alice, "d.fastq", bytes.len()).await;
    let bob = svc.user("bob@example.org").await;
    let id2 = init["sample_id"].as_str().unwrap();
    let (status, body) = svc.post(Some(&bob), CANCEL, json!({"sample_id": id2})).await;
    assert_error(status, &body, 404);
    let r = post_form(
        &svc.http,
        init["upload_url"].as_str().unwrap(),
        init["additional_fields"].as_object().unwrap(),
        &bytes,
    )
    .await;
    assert_eq!(r.status().as_u16(), 201);
    let (status, body) = confirm(&svc, &alice, id2).await;
    assert_eq!(status, 200, "{body}");
    // A confirmed upload cannot be canceled.
    let (status, body) = svc.post(Some(&alice), CANCEL, json!({"sample_id": id2})).await;
    assert_error(status, &body, 400);
}

async fn init_as(svc: &Service, user: &TestUser, filename: &str, size: usize) -> Value {
    start_upload(svc, user, json!({"filename": filename, "size": size})).await
}

/// The signed form of an upload stays valid for a day, but once the upload is over (canceled,
/// confirmed, or its sample deleted) posting it again must not store a file for good: after a
/// cancel or a delete nothing refers to the file, so nothing would ever remove it, and after a
/// confirm it would silently replace the data of a confirmed sample.
///
/// The service's own storage endpoint refuses such a form. An S3 store cannot be told that a
/// form it would accept is no longer valid: there the form's file lands beside the record's
/// (its incoming key), the confirmed sample keeps the file copied into place at the
/// confirmation, and the service removes what such a form stored.
#[tokio::test]
async fn forms_of_finished_uploads_cannot_store_files() {
    let svc = Service::start().await;
    let alice = svc.user("alice@example.org").await;
    let bytes = fastq(10);
    let mut other = bytes.clone();
    other[1] = b'X';
    assert_eq!(other.len(), bytes.len());
    let mut failures: Vec<String> = Vec::new();
    // Posts the form of a finished upload; records a failure if anything is left of it.
    async fn post_again(
        svc: &Service,
        url: &str,
        fields: &serde_json::Map<String, Value>,
        file: &[u8],
        keep: &[String],
        what: &str,
        failures: &mut Vec<String>,
    ) {
        let status = post_form(&svc.http, url, fields, file).await.status().as_u16();
        if svc.on_s3() {
            mgds_server::store::deletes::sweep_incoming(&svc.state).await.unwrap();
        } else if status < 400 {
            failures.push(format!("the form of {what} answered {status}"));
        }
        let left: Vec<String> = stored(svc).await.into_iter().filter(|k| !keep.contains(k)).collect();
        if !left.is_empty() {
            failures.push(format!("the form of {what} left {left:?}"));
            for k in left {
                svc.state.storage.delete(&k).await.unwrap();
            }
        }
    }

    // Canceled.
    let init = init_as(&svc, &alice, "canceled.fastq", bytes.len()).await;
    let fields = init["additional_fields"].as_object().unwrap().clone();
    let url = init["upload_url"].as_str().unwrap().to_string();
    assert_eq!(post_form(&svc.http, &url, &fields, &bytes).await.status().as_u16(), 201);
    let (status, c) = svc.post(Some(&alice), CANCEL, json!({"sample_id": init["sample_id"]})).await;
    assert_eq!(status, 200, "{c}");
    assert!(stored(&svc).await.is_empty());
    post_again(&svc, &url, &fields, &bytes, &[], "a canceled upload", &mut failures).await;

    // Deleted sample.
    let init = init_as(&svc, &alice, "deleted.fastq", bytes.len()).await;
    let fields = init["additional_fields"].as_object().unwrap().clone();
    let id = init["sample_id"].as_str().unwrap().to_string();
    assert_eq!(post_form(&svc.http, &url, &fields, &bytes).await.status().as_u16(), 201);
    assert_eq!(confirm(&svc, &alice, &id).await.0, 200);
    assert_eq!(svc.delete(Some(&alice), &format!("{SAMPLES}/{id}")).await.0, 204);
    assert!(stored(&svc).await.is_empty());
    post_again(&svc, &url, &fields, &bytes, &[], "a deleted sample", &mut failures).await;

    // Confirmed sample: its data must not change.
    let init = init_as(&svc, &alice, "confirmed.fastq", bytes.len()).await;
    let fields = init["additional_fields"].as_object().unwrap().clone();
    let id = init["sample_id"].as_str().unwrap().to_string();
    assert_eq!(post_form(&svc.http, &url, &fields, &bytes).await.status().as_u16(), 201);
    assert_eq!(confirm(&svc, &alice, &id).await.0, 200);
    let kept = stored(&svc).await;
    post_again(&svc, &url, &fields, &other, &kept, "a confirmed upload", &mut failures).await;
    let download = sample_download_uri(&svc, &alice, &id).await;
    let (_, _, got) = fetch(&svc, &download).await;
    if got != bytes {
        failures.push("the form of a confirmed upload changed the sample's data".into());
    }

    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// 8. Documents

#[tokio::test]
async fn document_upload_and_signed_downloads() {
    let svc = Service::start().await;
    let alice = svc.user("alice@example.org").await;
    let bytes = b"%PDF-1.4 a small report\n".to_vec();

    let (status, body) =
        svc.post(Some(&alice), "/api/v1/documents/init_upload", json!({"filename": "r.pdf", "size": 0})).await;
    assert_error(status, &body, 400);

    let (status, init) = svc
        .post(
            Some(&alice),
            "/api/v1/documents/init_upload",
            json!({"filename": "final report.pdf", "size": bytes.len()}),
        )
        .await;
    assert_eq!(status, 200, "{init}");
    let id = init["document_id"].as_str().expect("document_id").to_string();
    assert!(is_id(&id), "{id}");
    let fields = init["additional_fields"].as_object().unwrap().clone();
    let key = form_key(&svc, &init);
    assert_eq!(key, format!("documents/{id}/final_report.pdf"));

    let (status, body) = svc.post(Some(&alice), "/api/v1/documents/confirm_upload", json!({"document_id": id})).await;
    assert_error(status, &body, 400);

    let r = post_form(&svc.http, init["upload_url"].as_str().unwrap(), &fields, &bytes).await;
    assert_eq!(r.status().as_u16(), 201);
    let (status, c) = svc.post(Some(&alice), "/api/v1/documents/confirm_upload", json!({"document_id": id})).await;
    assert_eq!(status, 200, "{c}");
    assert_eq!(c["success"], json!(true));
    assert_eq!(c["document"], json!({"$ref": format!("/api/v1/documents/{id}")}));

    let (status, list) = svc.get(Some(&alice), "/api/v1/documents").await;
    assert_eq!(status, 200, "{list}");
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["$uri"], json!(format!("/api/v1/documents/{id}")));
    assert_eq!(list[0]["filename"], json!("final_report.pdf"));
    assert_eq!(list[0]["size"], json!(bytes.len()));

    let (status, d) = svc.post(Some(&alice), &format!("/api/v1/documents/{id}/download_uri"), json!({})).await;
    assert_eq!(status, 200, "{d}");
    let url = d["download_uri"].as_str().unwrap().to_string();
    let (status, cd, got) = fetch(&svc, &url).await;
    assert_eq!(status, 200);
    assert!(got == bytes, "the download must return the uploaded bytes");
    let cd = cd.expect("a Content-Disposition header");
    assert!(cd.contains("attachment") && cd.contains("\"final_report.pdf\""), "Content-Disposition: {cd}");
    if svc.on_s3() {
        // The service checks its own address, then sends the client on to the store's, made
        // at that moment and good for a minute; the store refuses it with one character of its
        // signature changed.
        let direct = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        let r = direct.get(&url).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 307);
        let to = r.headers()[reqwest::header::LOCATION].to_str().unwrap().to_string();
        assert_eq!(param(&to, "X-Amz-Expires"), "60", "{to}");
        let sig = param(&to, "X-Amz-Signature");
        let changed = format!("{}{}", if sig.starts_with('0') { '1' } else { '0' }, &sig[1..]);
        let (status, _, _) = fetch(&svc, &with_param(&to, "X-Amz-Signature", &changed)).await;
        assert_eq!(status, 403, "a changed signature must not verify at the store");
    }

    // One character of the signature changed.
    let sig = param(&url, "signature");
    let changed = format!("{}{}", if sig.starts_with('0') { '1' } else { '0' }, &sig[1..]);
    let tampered = with_param(&url, "signature", &changed);
    let (status, _, body) = fetch(&svc, &tampered).await;
    assert_error(status, &serde_json::from_slice(&body).expect("a JSON error body"), 403);
    // The filename changed (the signature covers it).
    let renamed = with_param(&url, "filename", "evil.pdf");
    let (status, _, _) = fetch(&svc, &renamed).await;
    assert_eq!(status, 403, "a changed filename must not verify");

    // Addresses signed by the service itself: one valid (proving the construction), one expired.
    let path = format!("{}/storage/mgds/{key}", svc.url);
    let fresh = svc.state.signer.download_query(
        &key,
        "final_report.pdf",
        &alice.id,
        chrono::Utc::now() + chrono::Duration::hours(1),
    );
    let (status, _, got) = fetch(&svc, &format!("{path}?{fresh}")).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&got));
    assert!(got == bytes);
    let expired = svc.state.signer.download_query(
        &key,
        "final_report.pdf",
        &alice.id,
        chrono::Utc::now() - chrono::Duration::minutes(5),
    );
    let (status, _, body) = fetch(&svc, &format!("{path}?{expired}")).await;
    let body: Value = serde_json::from_slice(&body).expect("a JSON error body");
    assert_error(status, &body, 403);
    assert!(message(&body).contains("expired"), "{body}");
    // Pushing an expired address's expiry forward breaks its signature.
    let future = (chrono::Utc::now().timestamp() + 3600).to_string();
    let moved = with_param(&format!("{path}?{expired}"), "expires", &future);
    let (status, _, body) = fetch(&svc, &moved).await;
    assert_error(status, &serde_json::from_slice(&body).expect("a JSON error body"), 403);
    // Another document's key with this signature is refused too.
    let other = fresh.clone();
    let (status, _, _) = fetch(&svc, &format!("{}/storage/mgds/documents/{id}/other.pdf?{other}", svc.url)).await;
    assert_eq!(status, 403);
}

// ---------------------------------------------------------------------------------------------
// 9. Delete

#[tokio::test]
async fn deleting_a_sample_removes_it_its_metadata_and_its_file() {
    let svc = Service::start().await;
    let alice = svc.user("alice@example.org").await;
    let keep = svc.upload_sample(&alice, "keep.fastq", &fastq(4), json!({})).await;
    let id = svc.upload_sample(&alice, "gone.fastq", &fastq(6), json!({})).await;
    let (status, s) = svc.get(Some(&alice), &format!("{SAMPLES}/{id}")).await;
    assert_eq!(status, 200, "{s}");
    let meta = s["metadata"]["$ref"].as_str().expect("metadata $ref").to_string();
    let (status, m) = svc.get(Some(&alice), &meta).await;
    assert_eq!(status, 200, "{m}");
    let gone_key = format!("samples/{id}/gone.fastq");
    let keep_key = format!("samples/{keep}/keep.fastq");
    let mut both = vec![gone_key.clone(), keep_key.clone()];
    both.sort();
    assert_eq!(stored(&svc).await, both);

    // Only the owner may delete.
    let bob = svc.user("bob@example.org").await;
    let (status, body) = svc.delete(Some(&bob), &format!("{SAMPLES}/{id}")).await;
    assert!(status == 404 || status == 403, "{status} {body}");
    assert_eq!(stored(&svc).await, both);

    let (status, body) = svc.delete(Some(&alice), &format!("{SAMPLES}/{id}")).await;
    assert_eq!(status, 204, "{body}");
    assert_eq!(body, Value::Null, "a 204 has no body");
    let (status, body) = svc.get(Some(&alice), &format!("{SAMPLES}/{id}")).await;
    assert_error(status, &body, 404);
    let (status, body) = svc.get(Some(&alice), &meta).await;
    assert_error(status, &body, 404);
    assert_eq!(stored(&svc).await, vec![keep_key], "the file must be removed and the other kept");
    let list = list_samples(&svc, &alice).await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["$uri"], json!(format!("/api/v1/samples/{keep}")));
    let (status, body) = svc.delete(Some(&alice), &format!("{SAMPLES}/{id}")).await;
    assert_error(status, &body, 404);
}
