//! The S3-compatible endpoint's path from first byte to confirmed record, as an attacker walks
//! it: writes that end after the callback or a cancel, parts left behind, and a property test of
//! every order of its steps. Against the real service over HTTP (on SQLite with a local folder,
//! and again on PostgreSQL with the files in Garage).

use std::time::Duration;

use bytes::Bytes;
use object_store::aws::{AmazonS3, AmazonS3Builder, AwsAuthorizer, AwsCredential};
use object_store::client::{HttpRequest, HttpRequestBody};
use object_store::path::Path as ObjectPath;
use object_store::{MultipartUpload, ObjectStoreExt};
use serde_json::{Value, json};

use crate::{Service, TestUser};

/// A started S3 upload: the `init_multipart_upload` answer.
pub(crate) struct Started {
    pub(crate) init: Value,
}

impl Started {
    fn file_key(&self) -> &str {
        self.init["file_id"].as_str().unwrap()
    }

    fn upload_id(&self) -> &str {
        self.init["callback_url"].as_str().unwrap().rsplit('/').next().unwrap()
    }

    fn access_key(&self) -> &str {
        self.init["upload_aws_access_key_id"].as_str().unwrap()
    }

    fn secret(&self) -> &str {
        self.init["upload_aws_secret_access_key"].as_str().unwrap()
    }
}

pub(crate) async fn start(svc: &Service, user: &TestUser, filename: &str) -> Started {
    let (s, init) =
        svc.post(Some(user), "/api/v1/samples/init_multipart_upload", json!({ "filename": filename })).await;
    assert_eq!(s, 200, "{init}");
    Started { init }
}

/// The service's S3-compatible endpoint as an S3 client reaches it with the upload's
/// credentials. Requests are not retried: a retry of a request whose answer was lost on a busy
/// machine would do a step twice behind the test's back.
fn endpoint_store(svc: &Service, up: &Started) -> AmazonS3 {
    AmazonS3Builder::new()
        .with_retry(object_store::RetryConfig { max_retries: 0, ..Default::default() })
        .with_client_options(object_store::ClientOptions::new().with_timeout(Duration::from_secs(120)))
        .with_endpoint(mgds_server::s3::endpoint(&svc.url))
        .with_bucket_name(mgds_server::s3::BUCKET)
        .with_region("us-east-1")
        .with_access_key_id(up.access_key())
        .with_secret_access_key(up.secret())
        .with_allow_http(true)
        .with_virtual_hosted_style_request(false)
        .build()
        .unwrap()
}

async fn callback(svc: &Service, user: &TestUser, up: &Started) -> (u16, Value) {
    svc.post(
        Some(user),
        up.init["callback_url"].as_str().unwrap(),
        json!({ "s3_path": format!("s3://{}/{}", mgds_server::s3::BUCKET, up.file_key()) }),
    )
    .await
}

async fn cancel(svc: &Service, user: &TestUser, up: &Started) -> u16 {
    let id = up.init["sample_id"].as_str().unwrap();
    svc.post(Some(user), "/api/v1/samples/cancel_upload", json!({ "sample_id": id })).await.0
}

/// The stored bytes of `sample`'s file.
async fn sample_bytes(svc: &Service, sample: &str) -> Vec<u8> {
    let key: String = sqlx::query_scalar("SELECT object_key FROM samples WHERE id = $1")
        .bind(sample)
        .fetch_one(&svc.state.db)
        .await
        .unwrap();
    svc.state.storage.read(&key).await.unwrap().expect("the sample's file is stored").to_vec()
}

/// Every object the store holds for upload `upload_id`: where its writes land, its parts, its
/// files.
async fn objects_of(svc: &Service, upload_id: &str) -> Vec<String> {
    let mut keys = svc.state.storage.keys(None).await.unwrap();
    keys.retain(|k| k.contains(upload_id));
    keys
}

/// Runs the janitor's sweep (what the hourly housekeeping does).
async fn sweep(svc: &Service) {
    mgds_server::store::deletes::purge(&svc.state).await.unwrap();
}

fn fastq(n: usize, tag: u8) -> Vec<u8> {
    let mut v = Vec::new();
    for i in 0..n {
        v.extend_from_slice(format!("@r{i}\nACGT{}\n+\nIIII{}\n", char::from(tag), "I").as_bytes());
    }
    v
}

/// An S3 PUT of `first`, then whatever `between` does, then `rest`, in one request signed with
/// the upload's credentials (as a client whose write is slow sends it). Answers the status.
async fn slow_put(
    svc: &Service,
    up: &Started,
    first: Vec<u8>,
    rest: Vec<u8>,
    between: impl std::future::Future<Output = ()>,
) -> u16 {
    let url = format!("{}/{}/{}", mgds_server::s3::endpoint(&svc.url), mgds_server::s3::BUCKET, up.file_key());
    let mut req = HttpRequest::new(HttpRequestBody::from(Vec::new()));
    *req.method_mut() = reqwest::Method::PUT;
    *req.uri_mut() = url.parse().unwrap();
    let credential = AwsCredential { key_id: up.access_key().into(), secret_key: up.secret().into(), token: None };
    AwsAuthorizer::new(&credential, "s3", "us-east-1").with_sign_payload(false).try_authorize(&mut req, None).unwrap();
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(2);
    let len = first.len() + rest.len();
    let body = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) });
    let sent = svc
        .http
        .put(&url)
        .headers(req.headers().clone())
        .header(reqwest::header::CONTENT_LENGTH, len)
        .body(reqwest::Body::wrap_stream(body))
        .send();
    let feed = async move {
        // The service may refuse the write before it reads any of the body (the upload is
        // already confirmed or canceled), and the client then drops the body: the step between
        // still runs, as the model of the walk expects.
        let _ = tx.send(Ok(Bytes::from(first))).await;
        // Let the first bytes reach the service before the rest waits.
        tokio::time::sleep(Duration::from_millis(300)).await;
        between.await;
        let _ = tx.send(Ok(Bytes::from(rest))).await;
    };
    let (res, ()) = tokio::join!(sent, feed);
    match res {
        Ok(r) => r.status().as_u16(),
        // The service may close the connection once it refused the write.
        Err(_) => 0,
    }
}

/// A write that ends after the callback confirmed the sample does not change the sample's file
/// (finding: a signed PUT that sent 1 KB, waited for the callback, then sent the rest replaced a
/// confirmed sample's file with unchecked bytes), and leaves nothing behind once swept.
#[tokio::test]
async fn a_write_that_ends_after_the_callback_changes_nothing() {
    let svc = Service::start().await;
    let user = svc.user("slow@example.org").await;
    let up = start(&svc, &user, "reads.fastq").await;
    let checked = fastq(3, b'A');
    endpoint_store(&svc, &up).put(&ObjectPath::from(up.file_key()), checked.clone().into()).await.unwrap();
    let mut sample = String::new();
    let late = fastq(20_000, b'T');
    let status = slow_put(&svc, &up, late[..1024].to_vec(), late[1024..].to_vec(), async {
        let (s, done) = callback(&svc, &user, &up).await;
        assert_eq!(s, 200, "{done}");
        sample = done["sample_id"].as_str().unwrap().to_string();
    })
    .await;
    assert_ne!(status, 200, "the late write is refused");
    assert_eq!(sample_bytes(&svc, &sample).await, checked, "the sample keeps the file that was checked");
    let (_, record) = svc.get(Some(&user), &format!("/api/v1/samples/{sample}")).await;
    assert_eq!(record["size"], json!(checked.len()));
    sweep(&svc).await;
    let left: Vec<String> = objects_of(&svc, up.upload_id()).await;
    assert_eq!(left, vec![up.file_key().to_string()], "only the sample's file is left");
}

/// A write that ends after its upload was canceled stores nothing (finding: an 8 MB object
/// landed under `objects/samples/<id>/` with nothing pointing at it).
#[tokio::test]
async fn a_write_that_ends_after_a_cancel_leaves_nothing() {
    let svc = Service::start().await;
    let user = svc.user("cancel@example.org").await;
    let up = start(&svc, &user, "reads.fastq").await;
    let late = vec![b'A'; 8 << 20];
    let status = slow_put(&svc, &up, late[..1024].to_vec(), late[1024..].to_vec(), async {
        assert_eq!(cancel(&svc, &user, &up).await, 200);
    })
    .await;
    assert_ne!(status, 200, "the late write is refused");
    sweep(&svc).await;
    assert_eq!(objects_of(&svc, up.upload_id()).await, Vec::<String>::new(), "nothing is left");
}

/// Parts of multipart uploads never completed are removed with the upload: after a PutObject
/// and the callback, after a part is sent again, and when the upload is canceled (finding: they
/// stayed in `s3-parts/<upload>/` forever).
#[tokio::test]
async fn parts_left_behind_are_removed_with_their_upload() {
    let svc = Service::start().await;
    let user = svc.user("parts@example.org").await;
    // Parts of a multipart upload never completed, a part sent twice (once out of order), then
    // a single PUT and the callback.
    let up = start(&svc, &user, "reads.fastq").await;
    let store = endpoint_store(&svc, &up);
    let mut writer = store.put_multipart(&ObjectPath::from(up.file_key())).await.unwrap();
    let part = vec![b'A'; 5 << 20];
    writer.put_part(part.clone().into()).await.unwrap();
    writer.put_part(part.into()).await.unwrap();
    assert!(objects_of(&svc, up.upload_id()).await.iter().any(|k| k.starts_with("s3-parts/")));
    let file = fastq(2, b'C');
    store.put(&ObjectPath::from(up.file_key()), file.clone().into()).await.unwrap();
    let (s, done) = callback(&svc, &user, &up).await;
    assert_eq!(s, 200, "{done}");
    sweep(&svc).await;
    assert_eq!(objects_of(&svc, up.upload_id()).await, vec![up.file_key().to_string()]);
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM s3_multipart").fetch_one(&svc.state.db).await.unwrap();
    assert_eq!(n, 0, "no multipart upload is left on record");
    // The sample deleted: its file goes, and nothing else of the upload was left.
    let sample = done["sample_id"].as_str().unwrap();
    assert_eq!(svc.delete(Some(&user), &format!("/api/v1/samples/{sample}")).await.0, 204);
    sweep(&svc).await;
    assert_eq!(objects_of(&svc, up.upload_id()).await, Vec::<String>::new());

    // A canceled upload's unfinished parts go with it.
    let up = start(&svc, &user, "reads.fastq").await;
    let mut writer = endpoint_store(&svc, &up).put_multipart(&ObjectPath::from(up.file_key())).await.unwrap();
    writer.put_part(vec![b'G'; 5 << 20].into()).await.unwrap();
    assert_eq!(cancel(&svc, &user, &up).await, 200);
    sweep(&svc).await;
    assert_eq!(objects_of(&svc, up.upload_id()).await, Vec::<String>::new());
}

/// At most [`mgds_server::s3::MAX_MULTIPART_PER_UPLOAD`] multipart uploads are under way for one
/// upload.
#[tokio::test]
async fn multipart_uploads_under_way_are_capped_per_upload() {
    let svc = Service::start().await;
    let user = svc.user("many@example.org").await;
    let up = start(&svc, &user, "reads.fastq").await;
    let store = endpoint_store(&svc, &up);
    let key = ObjectPath::from(up.file_key());
    let mut open = Vec::new();
    for _ in 0..mgds_server::s3::MAX_MULTIPART_PER_UPLOAD {
        open.push(store.put_multipart(&key).await.unwrap());
    }
    let refused = store.put_multipart(&key).await;
    assert!(refused.is_err(), "one more multipart upload is refused");
}

/// One step of an S3 upload, as a client (honest or not) may take them in any order.
#[derive(Debug, Clone)]
enum Step {
    /// A whole PutObject of payload `n`.
    Put(u8),
    /// A multipart upload begun.
    Begin,
    /// A part of payload `n` sent to the `i`-th multipart upload begun (if there is one).
    Part(usize, u8),
    /// The `i`-th multipart upload completed.
    Complete(usize),
    /// The `i`-th multipart upload aborted.
    Abort(usize),
    /// A PutObject of payload `n` whose body ends only after `during` ran.
    Slow(u8, Box<Step>),
    /// The callback.
    Callback,
    /// `cancel_upload`.
    Cancel,
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    let simple = prop_oneof![
        4 => any::<u8>().prop_map(Step::Put),
        2 => Just(Step::Begin),
        3 => (0..3usize, any::<u8>()).prop_map(|(i, n)| Step::Part(i, n)),
        2 => (0..3usize).prop_map(Step::Complete),
        1 => (0..3usize).prop_map(Step::Abort),
        2 => Just(Step::Callback),
        1 => Just(Step::Cancel),
    ];
    prop_oneof![
        8 => simple.clone(),
        2 => (any::<u8>(), simple).prop_map(|(n, s)| Step::Slow(n, Box::new(s))),
    ]
}

/// A small FASTQ file for payload `n`, of a length of its own.
fn payload(n: u8) -> Vec<u8> {
    let mut v = fastq(1 + usize::from(n % 7), b'A' + n % 4);
    v.extend_from_slice(format!("@p{n}\nACGT\n+\nIIII\n").as_bytes());
    v
}

/// What the steps did, as the service answered them.
#[derive(Default)]
struct Model {
    /// The bytes the last write that was answered 200 left where the callback takes them from.
    last_written: Option<Vec<u8>>,
    /// The bytes the sample was confirmed with, and its id.
    confirmed: Option<(String, Vec<u8>)>,
    canceled: bool,
}

/// Runs `steps` on a new upload and checks, at the end (after the upload is confirmed or
/// canceled, and swept), that a confirmed sample holds exactly the bytes that were written
/// before its callback, and that nothing else of the upload is left in the store.
async fn walk(svc: &Service, user: &TestUser, steps: Vec<Step>) -> Result<(), String> {
    let up = start(svc, user, "reads.fastq").await;
    let store = endpoint_store(svc, &up);
    let key = ObjectPath::from(up.file_key());
    let mut model = Model::default();
    let mut begun: Vec<(Box<dyn object_store::MultipartUpload>, Vec<u8>)> = Vec::new();
    for step in steps {
        Box::pin(run_step(svc, user, &up, &store, &key, &mut begun, &mut model, step)).await?;
    }
    if model.confirmed.is_none() && !model.canceled {
        let (s, b) = callback(svc, user, &up).await;
        if s == 200 {
            let bytes = model.last_written.clone().filter(|b| !b.is_empty());
            let bytes = bytes.ok_or(format!("confirmed with nothing (or an empty file) written: {b}"))?;
            model.confirmed = Some((b["sample_id"].as_str().unwrap().to_string(), bytes));
        } else if cancel(svc, user, &up).await != 200 {
            return Err(format!("neither confirmed ({s} {b}) nor canceled"));
        }
    }
    drop(begun);
    sweep(svc).await;
    let left = objects_of(svc, up.upload_id()).await;
    match &model.confirmed {
        Some((sample, bytes)) => {
            let stored = sample_bytes(svc, sample).await;
            if &stored != bytes {
                return Err(format!(
                    "the sample holds {} bytes, not the {} that were checked",
                    stored.len(),
                    bytes.len()
                ));
            }
            if left != vec![up.file_key().to_string()] {
                return Err(format!("left behind: {left:?}"));
            }
        }
        None if !left.is_empty() => return Err(format!("a canceled upload left {left:?}")),
        None => {}
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn run_step(
    svc: &Service,
    user: &TestUser,
    up: &Started,
    store: &AmazonS3,
    key: &ObjectPath,
    begun: &mut Vec<(Box<dyn object_store::MultipartUpload>, Vec<u8>)>,
    model: &mut Model,
    step: Step,
) -> Result<(), String> {
    let closed = model.confirmed.is_some() || model.canceled;
    match step {
        Step::Put(n) => {
            let ok = store.put(key, payload(n).into()).await.is_ok();
            if ok && closed {
                return Err("a write after the upload ended was accepted".into());
            }
            if ok {
                model.last_written = Some(payload(n));
            }
        }
        Step::Begin => {
            if let Ok(w) = store.put_multipart(key).await {
                begun.push((w, Vec::new()));
            }
        }
        Step::Part(i, n) => {
            if let Some((w, bytes)) = begun.get_mut(i)
                && w.put_part(payload(n).into()).await.is_ok()
            {
                bytes.extend_from_slice(&payload(n));
            }
        }
        Step::Complete(i) => {
            if i < begun.len() {
                let (mut w, bytes) = begun.remove(i);
                // One part is the whole object (none, an empty one); more would need 5 MiB each
                // but the last.
                let whole = bytes.is_empty() || bytes.len() == payload_len_of_one(&bytes);
                if w.complete().await.is_ok() {
                    if closed {
                        return Err("a completion after the upload ended was accepted".into());
                    }
                    if !whole {
                        return Err("small parts were joined".into());
                    }
                    model.last_written = Some(bytes);
                }
            }
        }
        Step::Abort(i) => {
            if i < begun.len() {
                let (mut w, _) = begun.remove(i);
                let _ = w.abort().await;
            }
        }
        Step::Callback => {
            let (s, b) = callback(svc, user, up).await;
            match (s, &model.confirmed) {
                (200, Some((sample, _))) if b["sample_id"] == json!(sample) => {}
                (200, Some(_)) => return Err(format!("a second callback answered another sample: {b}")),
                (200, None) if model.canceled => return Err("a canceled upload was confirmed".into()),
                (200, None) => {
                    let bytes = model.last_written.clone().ok_or(format!("confirmed with nothing written: {b}"))?;
                    if bytes.is_empty() {
                        return Err(format!("an empty file was confirmed: {b}"));
                    }
                    model.confirmed = Some((b["sample_id"].as_str().unwrap().to_string(), bytes));
                }
                (400 | 404, _) => {}
                (s, _) => return Err(format!("the callback answered {s}: {b}")),
            }
        }
        Step::Cancel => {
            let s = cancel(svc, user, up).await;
            if s == 200 {
                if model.confirmed.is_some() {
                    return Err("a confirmed upload was canceled".into());
                }
                model.canceled = true;
            }
        }
        Step::Slow(n, during) => {
            let bytes = payload(n);
            let mut inner = Ok(());
            let status = {
                // Some of the body is held back until `during` has run.
                let (first, rest) = bytes.split_at(bytes.len() / 2);
                let inner = &mut inner;
                let model = &mut *model;
                let during = async move {
                    *inner = Box::pin(run_step(svc, user, up, store, key, begun, model, *during)).await;
                };
                slow_put(svc, up, first.to_vec(), rest.to_vec(), during).await
            };
            inner?;
            let closed = model.confirmed.is_some() || model.canceled;
            if status == 200 {
                if closed {
                    return Err("a write that ended after the upload ended was accepted".into());
                }
                model.last_written = Some(bytes);
            }
        }
    }
    Ok(())
}

/// The length of one payload if `bytes` is exactly one (the parts of a multipart upload that
/// can be completed here are one part each).
fn payload_len_of_one(bytes: &[u8]) -> usize {
    (0..=255u8).map(payload).find(|p| p == bytes).map_or(usize::MAX, |p| p.len())
}

/// Any order and interleaving of the S3 path's steps (writes, multipart uploads, writes still
/// under way while another step runs, callbacks, cancels): a confirmed sample holds exactly the
/// bytes written before its callback, and once the upload ended and was swept, nothing else of
/// it is left in the store.
#[test]
fn any_order_of_s3_steps_keeps_the_checked_bytes_and_leaves_nothing() {
    use proptest::test_runner::{Config, TestCaseError, TestRunner};
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let svc = rt.block_on(Service::start());
    let user = rt.block_on(svc.user("steps@example.org"));
    let mut runner = TestRunner::new(Config { cases: 48, failure_persistence: None, ..Config::default() });
    let steps = proptest::collection::vec(step(), 1..10);
    let result = runner.run(&steps, |steps| rt.block_on(walk(&svc, &user, steps)).map_err(TestCaseError::fail));
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Two callbacks of one pair at once make one sample and one join (finding: both interleaved
/// the pair in the API process, 1.69 GB at peak).
#[tokio::test]
async fn concurrent_callbacks_of_one_pair_make_one_sample() {
    let svc = Service::start().await;
    let user = svc.user("twice@example.org").await;
    let (s, init) = svc
        .post(
            Some(&user),
            "/api/v1/samples/init_multipart_upload",
            json!({ "filename": "p_R1.fastq", "paired_end_filename": "p_R2.fastq" }),
        )
        .await;
    assert_eq!(s, 200, "{init}");
    let up = Started { init };
    let store = endpoint_store(&svc, &up);
    store.put(&ObjectPath::from(up.file_key()), b"@a/1\nACGT\n+\nIIII\n".to_vec().into()).await.unwrap();
    let r2 = up.init["paired_end_file_id"].as_str().unwrap();
    store.put(&ObjectPath::from(r2), b"@a/2\nTTTT\n+\nIIII\n".to_vec().into()).await.unwrap();
    let (a, b) = tokio::join!(callback(&svc, &user, &up), callback(&svc, &user, &up));
    let answered: Vec<&Value> =
        [&a, &b].into_iter().filter(|(s, _)| *s == 200).map(|(_, body)| &body["sample_id"]).collect();
    assert!(!answered.is_empty(), "{a:?} {b:?}");
    assert!(answered.windows(2).all(|w| w[0] == w[1]), "one sample: {a:?} {b:?}");
    for (s, body) in [&a, &b] {
        assert!(*s == 200 || *s == 409, "{s} {body}");
    }
    let imports: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM imports").fetch_one(&svc.state.db).await.unwrap();
    let samples: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM samples").fetch_one(&svc.state.db).await.unwrap();
    assert!(imports <= 1, "{imports} joins");
    assert_eq!(samples, 1);
    // The worker joins it; a callback again answers the same sample.
    let id = answered[0].as_str().unwrap().to_string();
    for _ in 0..100 {
        let (_, s) = svc.get(Some(&user), &format!("/api/v1/samples/{id}")).await;
        if s["visibility"] == json!("private") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (_, s) = svc.get(Some(&user), &format!("/api/v1/samples/{id}")).await;
    assert_eq!(s["visibility"], json!("private"), "{s}");
    assert_eq!(s["filename"], json!("p_interleaved.fastq.gz"));
    let (st, again) = callback(&svc, &user, &up).await;
    assert_eq!((st, &again["sample_id"]), (200, &json!(id)));
}
