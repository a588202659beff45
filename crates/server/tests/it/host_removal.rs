//! A copy of a sample without its host's reads (`POST /samples/{id}/remove_host`), with the
//! real engine over the demo database whose host is named E. coli (562) for the test (the demo
//! taxonomy has no human): the copy holds exactly the reads the classification did not call
//! the host's, in order, says what was removed, is classified again with no host reads, and
//! the source is left as it was.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::time::{Duration, Instant};

use mgds_server::references;
use mgds_server::store::host_removal::MAX_PENDING_COPIES;
use serde_json::{Value, json};

use crate::engines::{demo_reads, finished, start_with_demo};
use crate::{Service, TestUser};

const SAMPLES: &str = "/api/v1/samples";

fn gunzip(bytes: &[u8]) -> String {
    let mut s = String::new();
    flate2::read::MultiGzDecoder::new(bytes).read_to_string(&mut s).unwrap();
    s
}

async fn download(svc: &Service, url: &str) -> Vec<u8> {
    let r = svc.http.get(url).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    r.bytes().await.unwrap().to_vec()
}

/// The sample's primary classification, once finished.
async fn classified(svc: &Service, u: &TestUser, sample: &str) -> String {
    let (_, s) = svc.get(Some(u), &format!("{SAMPLES}/{sample}")).await;
    let id = s["primary_classification"]["$ref"].as_str().expect("classified").rsplit('/').next().unwrap().to_string();
    let a = finished(svc, u, &id).await;
    assert_eq!(a["success"], json!(true), "{a}");
    id
}

/// The read names of a FASTQ text, in order.
fn read_names(fastq: &str) -> Vec<String> {
    fastq.lines().step_by(4).map(|l| l.trim_start_matches('@').split_whitespace().next().unwrap().to_string()).collect()
}

/// The taxa at and below `top` in a results table.
fn subtree(results: &Value, top: &str) -> HashSet<String> {
    let table = results["table"].as_array().unwrap();
    let parent: HashMap<&str, &str> =
        table.iter().filter_map(|r| Some((r["tax_id"].as_str()?, r["parent_tax_id"].as_str()?))).collect();
    table
        .iter()
        .map(|r| r["tax_id"].as_str().unwrap())
        .filter(|t| {
            let mut at = *t;
            for _ in 0..64 {
                if at == top {
                    return true;
                }
                match parent.get(at) {
                    Some(p) if p != &at => at = p,
                    _ => return false,
                }
            }
            false
        })
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn a_copy_without_the_host_reads_holds_every_other_read_and_says_what_went() {
    let svc = start_with_demo(|_| {}).await;
    // An admin of the lab, who reads its audit trail.
    let u = svc.user_in("lab@example.org", Some("Lab"), mgds_server::admin::Role::Admin).await;
    let reads = demo_reads();

    // The demo database names no host (its taxonomy has no human): nothing to remove by.
    let before = svc.upload_sample(&u, "before.fastq.gz", &reads, json!({})).await;
    let without_host = classified(&svc, &u, &before).await;
    let (s, body) = svc.post(Some(&u), &format!("{SAMPLES}/{before}/remove_host"), json!({})).await;
    assert_eq!(s, 400, "{body}");
    assert!(body["message"].as_str().unwrap().contains("mgds db host"), "{body}");

    // An administrator names the host; a running service picks it up.
    let data = svc.data_dir();
    references::set_host_taxa(&data, "demo-bacteria", Some(vec!["562".into()])).unwrap();
    svc.state.reload_references(&data).await.unwrap();
    let source = svc
        .upload_sample(&u, "stool.fastq.gz", &reads, json!({"metadata": {"name": "stool 1", "custom": {"site": "A"}}}))
        .await;
    let classification = classified(&svc, &u, &source).await;
    let (_, results) = svc.get(Some(&u), &format!("/api/v1/classifications/{classification}/results")).await;
    assert_eq!(results["host_tax_ids"], json!(["562"]), "the results name the database's host");
    let host = subtree(&results, "562");
    let n_reads = results["n_reads"].as_u64().unwrap();

    // Which reads go: every row on a host taxon, whether or not it passed the filter.
    let (_, rl) = svc.get(Some(&u), &format!("/api/v1/classifications/{classification}/readlevel")).await;
    let rows = gunzip(&download(&svc, rl["url"].as_str().unwrap()).await);
    let calls: Vec<bool> = rows.lines().skip(1).map(|l| host.contains(l.split('\t').next().unwrap())).collect();
    let names = read_names(&gunzip(&reads));
    assert_eq!(calls.len(), names.len(), "one row per read");
    let expected: Vec<&String> = names.iter().zip(&calls).filter(|(_, h)| !**h).map(|(n, _)| n).collect();
    let removed = calls.iter().filter(|h| **h).count() as u64;
    assert!(removed > 100, "the demo reads hold E. coli reads: {removed}");

    // Someone else cannot copy it, nor by another sample's classification.
    let other = svc.user("other@example.org").await;
    let (s, _) = svc.post(Some(&other), &format!("{SAMPLES}/{source}/remove_host"), json!({})).await;
    assert_eq!(s, 404);
    let (s, body) =
        svc.post(Some(&u), &format!("{SAMPLES}/{source}/remove_host"), json!({"classification": without_host})).await;
    assert_eq!(s, 400, "{body}");
    let (s, body) = svc.post(Some(&u), &format!("{SAMPLES}/{source}/remove_host"), json!({"classify": true})).await;
    assert_eq!(s, 400, "an unknown field is refused: {body}");

    let (s, copy) = svc.post(Some(&u), &format!("{SAMPLES}/{source}/remove_host"), json!({})).await;
    assert_eq!(s, 201, "{copy}");
    assert_eq!(copy["filename"], json!("stool.host_removed.fastq.gz"), "{copy}");
    assert_eq!(copy["visibility"], json!("importing"), "{copy}");
    let copy_id = copy["$uri"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(120);
    let copy = loop {
        let (_, c) = svc.get(Some(&u), &format!("{SAMPLES}/{copy_id}")).await;
        assert!(c["error_msg"].is_null(), "{c}");
        if c["visibility"] == json!("private") {
            break c;
        }
        assert!(Instant::now() < deadline, "the copy was not written: {c}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };

    // Exactly the other reads, in order.
    let (s, uri) = svc.post(Some(&u), &format!("{SAMPLES}/{copy_id}/download_uri"), json!({})).await;
    assert_eq!(s, 200, "{uri}");
    let bytes = download(&svc, uri["download_uri"].as_str().unwrap()).await;
    assert_eq!(copy["size"].as_u64(), Some(bytes.len() as u64));
    let kept = read_names(&gunzip(&bytes));
    assert_eq!(kept.iter().collect::<Vec<_>>(), expected, "every read but the host's, in order");
    assert_eq!(kept.len() as u64, n_reads - removed);

    // What went is in the copy's metadata, beside the source's.
    let meta_id = copy["metadata"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap();
    let (_, meta) = svc.get(Some(&u), &format!("/api/v1/metadata/{meta_id}")).await;
    assert_eq!(meta["name"], json!("stool 1 (host reads removed)"), "{meta}");
    let custom = &meta["custom"];
    assert_eq!(custom["site"], json!("A"), "{meta}");
    assert_eq!(custom["host_removed_from"], json!(source), "{meta}");
    assert_eq!(custom["host_removed_classification"], json!(classification), "{meta}");
    assert_eq!(custom["host_reads_removed"], json!(removed), "{meta}");
    let percent = (removed as f64 * 10_000.0 / n_reads as f64).round() / 100.0;
    assert_eq!(custom["host_reads_removed_percent"].as_f64(), Some(percent), "{meta}");

    // The copy is classified as every new sample is, and holds no host reads.
    let again = classified(&svc, &u, &copy_id).await;
    let (_, results) = svc.get(Some(&u), &format!("/api/v1/classifications/{again}/results")).await;
    let host_left: u64 = results["table"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| host.contains(r["tax_id"].as_str().unwrap()))
        .map(|r| r["readcount"].as_u64().unwrap())
        .sum();
    assert_eq!(host_left, 0, "no read of the copy is the host's");
    assert_eq!(results["n_reads"].as_u64(), Some(n_reads - removed));

    // The source's owner learns of the copy in the audit trail.
    let (_, audit) = svc.get(Some(&u), "/api/v1/audit?per_page=100").await;
    let said = audit.to_string();
    assert!(said.contains("sample.copied_without_host") && said.contains("sample.host_removed"), "{said}");

    // Deleting the copy leaves the source as it was, file and all.
    let (s, _) = svc.delete(Some(&u), &format!("{SAMPLES}/{copy_id}")).await;
    assert_eq!(s, 204);
    let (_, s) = svc.get(Some(&u), &format!("{SAMPLES}/{source}")).await;
    assert_eq!((s["visibility"].clone(), s["size"].as_u64()), (json!("private"), Some(reads.len() as u64)));
    let (st, uri) = svc.post(Some(&u), &format!("{SAMPLES}/{source}/download_uri"), json!({})).await;
    assert_eq!(st, 200);
    assert_eq!(download(&svc, uri["download_uri"].as_str().unwrap()).await, reads);
}

/// Copies wait for a worker: at most [`MAX_PENDING_COPIES`] per user; deleting one that waits
/// leaves the source's file alone; one whose source is deleted first says why it has no file.
#[tokio::test]
async fn copies_that_wait_are_capped_and_one_whose_source_went_says_so() {
    let svc = start_with_demo(|c| c.runner.workers = 0).await;
    let data = svc.data_dir();
    references::set_host_taxa(&data, "demo-bacteria", Some(vec!["562".into()])).unwrap();
    svc.state.reload_references(&data).await.unwrap();
    let u = svc.user("lab@example.org").await;
    let reads = demo_reads();
    let source = svc.upload_sample(&u, "s.fastq.gz", &reads, json!({})).await;
    // No worker runs here: classify by a worker of its own, then stop it.
    let workers = mgds_server::worker::spawn_workers(&svc.state, 1);
    classified(&svc, &u, &source).await;
    for w in workers {
        w.abort();
    }
    let mut copies = Vec::new();
    for _ in 0..MAX_PENDING_COPIES {
        let (s, copy) = svc.post(Some(&u), &format!("{SAMPLES}/{source}/remove_host"), json!({})).await;
        assert_eq!(s, 201, "{copy}");
        copies.push(copy["$uri"].as_str().unwrap().rsplit('/').next().unwrap().to_string());
    }
    let (s, body) = svc.post(Some(&u), &format!("{SAMPLES}/{source}/remove_host"), json!({})).await;
    assert_eq!(s, 409, "{body}");
    assert!(body["message"].as_str().unwrap().contains("still being written"), "{body}");

    let (s, _) = svc.delete(Some(&u), &format!("{SAMPLES}/{}", copies[0])).await;
    assert_eq!(s, 204);
    let (st, uri) = svc.post(Some(&u), &format!("{SAMPLES}/{source}/download_uri"), json!({})).await;
    assert_eq!(st, 200);
    assert_eq!(download(&svc, uri["download_uri"].as_str().unwrap()).await, reads, "the source's file stays");

    let (s, _) = svc.delete(Some(&u), &format!("{SAMPLES}/{source}")).await;
    assert_eq!(s, 204);
    let workers = mgds_server::worker::spawn_workers(&svc.state, 1);
    let deadline = Instant::now() + Duration::from_secs(60);
    for copy in &copies[1..] {
        let why = loop {
            let (_, c) = svc.get(Some(&u), &format!("{SAMPLES}/{copy}")).await;
            if let Some(why) = c["error_msg"].as_str() {
                break why.to_string();
            }
            assert!(Instant::now() < deadline, "the copy never said why it has no file: {c}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert!(why.contains("s.fastq.gz was deleted before its host reads were removed"), "{why}");
    }
    for w in workers {
        w.abort();
    }
}

/// The host named in the install's database holds on a machine whose manifest says otherwise
/// (a worker on another machine reads the manifest it fetched when the database was new).
#[tokio::test]
async fn the_host_named_in_the_database_holds_over_the_manifest() {
    use mgds_server::store::settings;
    let svc = start_with_demo(|_| {}).await;
    let data = svc.data_dir();
    let manifest = references::read_manifest(&data.join(references::DATABASES_DIR).join("demo-bacteria")).unwrap();
    assert_eq!(manifest.host_tax_ids, None, "this machine's manifest names no host");
    let u = svc.user("lab@example.org").await;
    let host_of = |sample: String| {
        let (svc, u) = (&svc, &u);
        async move {
            let c = classified(svc, u, &sample).await;
            let (_, results) = svc.get(Some(u), &format!("/api/v1/classifications/{c}/results")).await;
            results["host_tax_ids"].clone()
        }
    };
    settings::set_host_taxa(&svc.state.db, &manifest.digest, Some(&["562".to_string()])).await.unwrap();
    svc.state.reload_references(&data).await.unwrap();
    let first = svc.upload_sample(&u, "a.fastq.gz", &demo_reads(), json!({})).await;
    assert_eq!(host_of(first).await, json!(["562"]));
    // This machine's manifest now names another host; the install's "no host", then its
    // "default rule" (the demo taxonomy has no human), hold over it.
    references::set_host_taxa(&data, "demo-bacteria", Some(vec!["573".into()])).unwrap();
    settings::set_host_taxa(&svc.state.db, &manifest.digest, Some(&[])).await.unwrap();
    svc.state.reload_references(&data).await.unwrap();
    let second = svc.upload_sample(&u, "b.fastq.gz", &demo_reads(), json!({})).await;
    assert_eq!(host_of(second).await, json!([]));
    settings::set_host_taxa(&svc.state.db, &manifest.digest, None).await.unwrap();
    svc.state.reload_references(&data).await.unwrap();
    let third = svc.upload_sample(&u, "c.fastq.gz", &demo_reads(), json!({})).await;
    assert_eq!(host_of(third).await, json!([]));
    // Named nowhere on the install: the manifest decides.
    sqlx::query("DELETE FROM settings WHERE key LIKE 'host_tax_ids:%'").execute(&svc.state.db).await.unwrap();
    svc.state.reload_references(&data).await.unwrap();
    let fourth = svc.upload_sample(&u, "d.fastq.gz", &demo_reads(), json!({})).await;
    assert_eq!(host_of(fourth).await, json!(["573"]));
}

#[test]
fn host_names_survive_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join(references::DATABASES_DIR).join("x");
    std::fs::create_dir_all(&db).unwrap();
    let manifest = json!({"name": "x", "kind": "classification", "file": "index.mgdb", "digest": "00"});
    std::fs::write(db.join("manifest.json"), manifest.to_string()).unwrap();
    std::fs::write(db.join("index.mgdb"), b"").unwrap();
    assert_eq!(references::read_manifest(&db).unwrap().host_tax_ids, None);
    references::set_host_taxa(dir.path(), "x", Some(vec!["9606".into(), "10090".into()])).unwrap();
    let m: Value = serde_json::from_str(&std::fs::read_to_string(db.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["host_tax_ids"], json!(["9606", "10090"]));
    assert_eq!(m["digest"], json!("00"), "the rest is kept");
    references::set_host_taxa(dir.path(), "x", None).unwrap();
    assert_eq!(references::read_manifest(&db).unwrap().host_tax_ids, None);
}
