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
/// credentials.
fn endpoint_store(svc: &Service, up: &Started) -> AmazonS3 {
    AmazonS3Builder::new()
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
        tx.send(Ok(Bytes::from(first))).await.unwrap();
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
