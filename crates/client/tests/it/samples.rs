//! Samples: the three-step upload (progress, retry after a cut connection, cancel), pre-upload
//! and matching, update, delete and download.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mgds_api::{MetadataInput, Visibility};
use mgds_client::{CancellationToken, Error, Filter, RetryPolicy};
use serde_json::json;

use super::proxy::{Direction, Fault, Proxy};
use super::{Service, fastq_bytes, names_in, quick_retry, write_file};

#[tokio::test]
async fn upload_with_metadata_progress_then_download_update_delete() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;
    let c = svc.client(&alice);
    let project = c.projects().create("gut_study").send().await.unwrap();
    // Several of the 1 MiB pieces the file is read in, so that progress has steps to show.
    let bytes = fastq_bytes(8_000_000);
    let path = write_file(&svc.scratch(), "gut sample 1.fastq", &bytes);

    let seen: Arc<Mutex<Vec<(u64, u64)>>> = Arc::default();
    let s = seen.clone();
    let mut custom = serde_json::Map::new();
    custom.insert("site".into(), json!("ward 3"));
    let sample = c
        .samples()
        .upload(&path)
        .metadata(MetadataInput {
            external_sample_id: Some(Some("LAB-001".into())),
            custom: Some(custom),
            starred: Some(true),
            ..MetadataInput::default()
        })
        .tag("gut")
        .project(&project)
        .progress(move |sent, total| s.lock().unwrap().push((sent, total)))
        .send()
        .await
        .unwrap();

    // The name is cleaned; size, project and tag are those given.
    assert_eq!(sample.filename.as_deref(), Some("gut_sample_1.fastq"));
    assert_eq!(sample.size, Some(bytes.len() as u64));
    assert_eq!(sample.visibility, Visibility::Private);
    assert_eq!(sample.project.as_ref().map(|p| p.uri.as_str()), Some(project.uri.as_str()));
    assert_eq!(sample.tags.len(), 1);
    let tag = c.tags().get(&sample.tags[0]).await.unwrap();
    assert_eq!(tag.name.as_deref(), Some("gut"));

    // Progress went from 0 to the whole file, never backwards, always with the right total.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.first(), Some(&(0, bytes.len() as u64)));
    assert_eq!(seen.last(), Some(&(bytes.len() as u64, bytes.len() as u64)));
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "{seen:?}");
    assert!(seen.len() > 5, "progress is reported as the file goes: {}", seen.len());

    // Metadata arrived with the sample.
    let md = c.metadata().get(sample.metadata.as_ref().unwrap()).await.unwrap();
    assert_eq!(md.external_sample_id.as_deref(), Some("LAB-001"));
    assert_eq!(md.custom.get("site"), Some(&json!("ward 3")));
    assert!(md.starred);

    // Get, download (whole, byte for byte), update, delete.
    assert_eq!(c.samples().get(&sample).await.unwrap(), sample);
    let dest = svc.scratch().join("copy.fastq");
    let n = c.samples().download(&sample, &dest).await.unwrap();
    assert_eq!(n, bytes.len() as u64);
    assert_eq!(std::fs::read(&dest).unwrap(), bytes);
    let uri = c.samples().download_uri(&sample).await.unwrap();
    assert!(uri.download_uri.starts_with(&svc.url) && uri.expires_in_hours > 0);

    let updated = c.samples().update(&sample).visibility(Visibility::Public).no_project().send().await.unwrap();
    assert_eq!(updated.visibility, Visibility::Public);
    assert_eq!(updated.project, None);
    let public = c.samples().list_public().per_page(10).send().await.unwrap();
    assert_eq!(public.items.len(), 1);
    let untagged = c.samples().update(&sample).tags(Vec::<String>::new()).send().await.unwrap();
    assert!(untagged.tags.is_empty());
    let moved = c.samples().update(&sample).project(&project).tags([&tag]).send().await.unwrap();
    assert_eq!(moved.project.map(|p| p.uri), Some(project.uri.clone()));
    assert_eq!(moved.tags.len(), 1);
    let again = svc.scratch().join("again.fastq");
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let n = calls.clone();
    let progress: mgds_client::Progress = Arc::new(move |_, _| {
        n.fetch_add(1, Ordering::SeqCst);
    });
    c.samples().download_with_progress(&sample, &again, Some(progress)).await.unwrap();
    assert!(calls.load(Ordering::SeqCst) > 1);
    assert_eq!(std::fs::read(&again).unwrap(), bytes);

    c.samples().delete(&sample).await.unwrap();
    assert!(matches!(c.samples().get(&sample).await, Err(Error::NotFound { .. })));
    assert!(c.samples().list().per_page(10).send().await.unwrap().items.is_empty());
}

#[tokio::test]
async fn upload_is_retried_from_the_start_after_the_connection_is_cut_mid_file() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;
    let proxy = Proxy::start(
        &svc.url,
        Fault::Cut { method: "POST", path: "/storage/", direction: Direction::Up, after: 300_000, times: 1 },
    )
    .await;
    let c = svc.client_via(&alice, &proxy.url, quick_retry());
    let bytes = fastq_bytes(1_000_000);
    let path = write_file(&svc.scratch(), "reads.fastq", &bytes);
    let seen: Arc<Mutex<Vec<(u64, u64)>>> = Arc::default();
    let s = seen.clone();
    let sample = c
        .samples()
        .upload(&path)
        .progress(move |sent, total| s.lock().unwrap().push((sent, total)))
        .send()
        .await
        .unwrap();

    assert_eq!(proxy.stats.cuts.load(Ordering::SeqCst), 1, "the first transfer was cut");
    assert_eq!(proxy.stats.matched.load(Ordering::SeqCst), 2, "and the file was posted again");
    // Progress started again from 0 for the second attempt.
    let seen = seen.lock().unwrap().clone();
    let restarts = seen.iter().filter(|(sent, _)| *sent == 0).count();
    assert_eq!(restarts, 2, "{seen:?}");
    assert_eq!(seen.last(), Some(&(bytes.len() as u64, bytes.len() as u64)));

    // The sample holds exactly the file's bytes.
    assert_eq!(sample.size, Some(bytes.len() as u64));
    let dest = svc.scratch().join("back.fastq");
    c.samples().download(&sample, &dest).await.unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), bytes);
}

#[tokio::test]
async fn a_cut_upload_without_retries_fails_and_leaves_nothing() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;
    let proxy = Proxy::start(
        &svc.url,
        Fault::Cut { method: "POST", path: "/storage/", direction: Direction::Up, after: 100_000, times: 1 },
    )
    .await;
    let c = svc.client_via(&alice, &proxy.url, RetryPolicy::none());
    let path = write_file(&svc.scratch(), "reads.fastq", &fastq_bytes(500_000));
    let err = c.samples().upload(&path).send().await.unwrap_err();
    assert!(matches!(err, Error::Transport { attempts: 1, .. }), "{err:?}");
    assert!(err.to_string().contains("could not reach the service"), "{err}");
    assert!(c.samples().list().per_page(10).send().await.unwrap().items.is_empty());
    assert!(wait_for_no_files(&svc).await, "left: {:?}", svc.stored_files());
}

async fn wait_for_no_files(svc: &Service) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if svc.stored_files().is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn a_cancelled_upload_leaves_no_sample() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;
    let c = svc.client(&alice);
    let bytes = fastq_bytes(4_000_000);
    let path = write_file(&svc.scratch(), "big.fastq", &bytes);
    let token = CancellationToken::new();
    let t = token.clone();
    let last_sent = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let l = last_sent.clone();
    let err = c
        .samples()
        .upload(&path)
        .cancel_token(token)
        .progress(move |sent, _| {
            l.store(sent, Ordering::SeqCst);
            if sent > 200_000 {
                t.cancel();
            }
        })
        .send()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Cancelled), "{err:?}");
    let sent = last_sent.load(Ordering::SeqCst);
    assert!(sent < bytes.len() as u64, "stopped part-way ({sent} bytes)");

    // No sample, no upload to confirm, no stored bytes.
    assert!(c.samples().list().per_page(10).send().await.unwrap().items.is_empty());
    assert!(wait_for_no_files(&svc).await, "left: {:?}", svc.stored_files());

    // Cancelled before it starts: nothing is sent at all.
    let token = CancellationToken::new();
    token.cancel();
    let err = c.samples().upload(&path).cancel_token(token).send().await.unwrap_err();
    assert!(matches!(err, Error::Cancelled));
    assert!(c.samples().list().per_page(10).send().await.unwrap().items.is_empty());
}

#[tokio::test]
async fn upload_steps_by_hand_confirm_is_repeatable_and_cancel_works() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;
    let c = svc.client(&alice);
    let init = c
        .samples()
        .init_upload(&mgds_api::InitUploadRequest { filename: "a.fq".into(), size: 10, ..Default::default() })
        .await
        .unwrap();
    let id = init.sample_id.unwrap();
    // Not yet sent: confirming says why.
    let err = c.samples().confirm_upload(&id).await.unwrap_err();
    assert!(matches!(err, Error::InvalidRequest { status: 400, .. }), "{err:?}");
    assert!(err.to_string().contains("has not arrived"), "{err}");
    let cancelled = c.samples().cancel_upload(&id).await.unwrap();
    assert!(cancelled.success);
    assert!(matches!(c.samples().confirm_upload(&id).await, Err(Error::NotFound { .. })));

    // A finished upload confirmed twice answers the same sample.
    let path = write_file(&svc.scratch(), "x.fastq", &fastq_bytes(1000));
    let s = c.samples().upload(&path).send().await.unwrap();
    let again = c.samples().confirm_upload(s.uri.rsplit('/').next().unwrap()).await.unwrap();
    assert_eq!(again.sample.unwrap().uri, s.uri);
}

#[tokio::test]
async fn preupload_then_match_by_external_id_and_by_sample_id() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;
    let c = svc.client(&alice);
    let project = c.projects().create("run_42").send().await.unwrap();

    let pre = c.samples().preupload().external_sample_id("EXT-1").tag("batch7").project(&project).send().await.unwrap();
    let waiting = c.samples().get(&pre.sample_id).await.unwrap();
    assert_eq!(waiting.visibility, Visibility::AwaitingData);
    assert_eq!(waiting.filename, None);

    // A duplicate external id is a conflict, with the service's words.
    let err = c.samples().preupload().external_sample_id("EXT-1").send().await.unwrap_err();
    assert!(matches!(err, Error::Conflict { .. }), "{err:?}");
    assert!(err.service_message().unwrap().contains("unique"), "{err}");

    let path = write_file(&svc.scratch(), "ext1.fastq", &fastq_bytes(5000));
    let s = c.samples().upload(&path).external_sample_id("EXT-1").send().await.unwrap();
    assert_eq!(s.uri, waiting.uri, "the file went to the pre-uploaded sample");
    assert_eq!(s.visibility, Visibility::Private);
    assert_eq!(s.size, Some(std::fs::metadata(&path).unwrap().len()));
    assert_eq!(s.tags.len(), 1);

    let pre2 = c.samples().preupload().send().await.unwrap();
    let s2 = c.samples().upload(&path).sample_id(&pre2.sample_id).send().await.unwrap();
    assert!(s2.uri.ends_with(&pre2.sample_id));

    // No match: 400 with the service's explanation.
    let err = c.samples().upload(&path).external_sample_id("NOPE").send().await.unwrap_err();
    assert!(matches!(err, Error::InvalidRequest { status: 400, .. }), "{err:?}");
    assert!(err.to_string().contains("no pre-uploaded sample"), "{err}");

    // Only the two samples exist.
    let all = c.samples().list().per_page(100).all().await.unwrap();
    assert_eq!(all.len(), 2);
    let in_project = c
        .samples()
        .list()
        .filter(Filter::new().eq_ref("project", &mgds_api::Ref { uri: project.uri.clone() }))
        .send()
        .await
        .unwrap();
    assert_eq!(in_project.items.len(), 1);
}

#[tokio::test]
async fn bad_files_are_refused_before_anything_is_sent() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;
    let c = svc.client(&alice);
    let dir = svc.scratch();
    let empty = write_file(&dir, "empty.fastq", b"");
    assert!(matches!(c.samples().upload(&empty).send().await, Err(Error::InvalidInput(m)) if m.contains("empty")));
    let pdf = write_file(&dir, "report.pdf", b"%PDF");
    assert!(
        matches!(c.samples().upload(&pdf).send().await, Err(Error::InvalidInput(m)) if m.contains("FASTA or FASTQ"))
    );
    let missing = dir.join("missing.fastq");
    assert!(matches!(c.samples().upload(&missing).send().await, Err(Error::Io { action: "read", .. })));
    assert!(c.samples().list().per_page(10).send().await.unwrap().items.is_empty());
    assert_eq!(names_in(&dir), ["empty.fastq", "report.pdf"]);
}
