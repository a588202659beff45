//! The job runner with the real engines over the demo references: uploads classified by
//! themselves, panel, alignment and functional-profile jobs, determinism, and what happens
//! when a worker dies mid-job.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mgds_server::{Config, references, worker};
use serde_json::{Value, json};

use crate::{Service, TestUser, fastq};

/// The demo references, built once per test run and copied into each service's data folder.
fn demo_databases() -> &'static Path {
    static DEMO: OnceLock<PathBuf> = OnceLock::new();
    DEMO.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir").keep();
        references::install_demo(&dir).expect("demo installs");
        dir.join(references::DATABASES_DIR)
    })
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

pub(crate) async fn start_with_demo(adjust: impl FnOnce(&mut Config)) -> Service {
    let src = tokio::task::spawn_blocking(demo_databases).await.unwrap();
    Service::start_with(move |c| {
        copy_dir(src, &c.data_dir.join(references::DATABASES_DIR));
        c.runner.poll = Duration::from_millis(200);
        adjust(c);
    })
    .await
}

pub(crate) fn demo_reads() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo/reads.fastq.gz")).expect("demo reads")
}

/// Waits for analysis `id` to complete; returns it.
pub(crate) async fn finished(svc: &Service, user: &TestUser, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (s, a) = svc.get(Some(user), &format!("/api/v1/analyses/{id}")).await;
        assert_eq!(s, 200, "{a}");
        if a["complete"] == json!(true) {
            return a;
        }
        assert!(Instant::now() < deadline, "analysis {id} did not finish: {a}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn job_id(svc: &Service, user: &TestUser, analysis_type: &str) -> String {
    let (s, jobs) = svc.get(Some(user), "/api/v1/jobs?per_page=100").await;
    assert_eq!(s, 200);
    let job =
        jobs.as_array().unwrap().iter().find(|j| j["analysis_type"] == json!(analysis_type)).expect("job of that type");
    job["$uri"].as_str().unwrap().rsplit('/').next().unwrap().to_string()
}

async fn run(svc: &Service, user: &TestUser, job: &str, sample: &str, args: Value) -> String {
    let (s, r) = svc
        .post(
            Some(user),
            &format!("/api/v1/jobs/{job}/run"),
            json!({"sample": {"$ref": format!("/api/v1/samples/{sample}")}, "job_args": args}),
        )
        .await;
    assert_eq!(s, 200, "{r}");
    r["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string()
}

async fn download(svc: &Service, url: &str) -> Vec<u8> {
    let r = svc.http.get(url).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    r.bytes().await.unwrap().to_vec()
}

fn gunzip(bytes: &[u8]) -> String {
    let mut s = String::new();
    flate2::read::MultiGzDecoder::new(bytes).read_to_string(&mut s).unwrap();
    s
}

#[tokio::test]
async fn an_upload_is_classified_by_itself_with_results_and_read_level_rows() {
    let svc = start_with_demo(|_| {}).await;
    let u = svc.user("lab@example.org").await;
    let reads = demo_reads();
    let sample = svc.upload_sample(&u, "demo.fastq.gz", &reads, json!({})).await;
    let (_, s) = svc.get(Some(&u), &format!("/api/v1/samples/{sample}")).await;
    let primary = s["primary_classification"]["$ref"].as_str().expect("primary classification set at confirm");
    let id = primary.rsplit('/').next().unwrap();
    let a = finished(&svc, &u, id).await;
    assert_eq!((a["success"].clone(), a["error_msg"].clone()), (json!(true), json!("")), "{a}");

    let (st, results) = svc.get(Some(&u), &format!("/api/v1/classifications/{id}/results")).await;
    assert_eq!(st, 200);
    let table = results["table"].as_array().unwrap();
    let n_reads = results["n_reads"].as_u64().unwrap();
    let truth =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo/truth.tsv")).unwrap();
    let expected = truth.lines().filter(|l| !l.is_empty() && !l.starts_with("read")).count() as u64;
    assert_eq!(n_reads, expected, "every demo read counted");
    // Consistency: readcounts sum to the classified reads; the root's subtree holds them all.
    let total: u64 = table.iter().map(|r| r["readcount"].as_u64().unwrap()).sum();
    let root = table.iter().find(|r| r["parent_tax_id"].is_null()).expect("root row");
    assert_eq!(root["readcount_w_children"].as_u64().unwrap(), total);
    assert!(total > n_reads * 8 / 10, "most demo reads classify: {total} of {n_reads}");
    let abundance: f64 = table.iter().filter_map(|r| r["abundance"].as_f64()).sum();
    assert!((abundance - 1.0).abs() < 1e-6, "species abundances sum to 1: {abundance}");
    assert!(table.iter().any(|r| r["tax_id"] == json!("562") && r["rank"] == json!("species")), "E. coli found");
    // The reads' quality control came with the classification, from the same pass: the demo
    // reads are 150 bp single reads of good quality, and pass.
    let qc = &results["qc"];
    assert_eq!(qc["reads"].as_u64(), Some(n_reads), "{qc}");
    assert_eq!((qc["median_length"].as_u64(), qc["pairs"].as_u64()), (Some(150), Some(0)), "{qc}");
    assert!(qc["mean_quality"].as_f64().unwrap() > 20.0, "{qc}");
    assert_eq!(qc["failures"], json!([]), "{qc}");
    assert_eq!(qc["quality_by_position"].as_array().unwrap().len(), 150);

    let (st, rl) = svc.get(Some(&u), &format!("/api/v1/classifications/{id}/readlevel")).await;
    assert_eq!(st, 200);
    let tsv = gunzip(&download(&svc, rl["url"].as_str().unwrap()).await);
    let mut lines = tsv.lines();
    let header = lines.next().unwrap();
    assert!(header.contains("Tax ID") && header.contains("Passed Filter"), "{header}");
    assert_eq!(lines.count() as u64, n_reads, "one row per read");
}

#[tokio::test]
async fn a_classification_keeps_its_kraken_report_until_its_sample_is_deleted() {
    let svc = start_with_demo(|_| {}).await;
    let u = svc.user("lab@example.org").await;
    let sample = svc.upload_sample(&u, "demo.fastq.gz", &demo_reads(), json!({})).await;
    let (_, s) = svc.get(Some(&u), &format!("/api/v1/samples/{sample}")).await;
    let id = s["primary_classification"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    finished(&svc, &u, &id).await;
    let path = format!("/api/v1/classifications/{id}/kraken_report");
    let r = svc.as_user(Some(&u), reqwest::Method::GET, &path).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
    let report = r.text().await.unwrap();
    let (_, results) = svc.get(Some(&u), &format!("/api/v1/classifications/{id}/results")).await;
    // Kraken 2's layout: unclassified first, then the root with every classified read.
    let classified: u64 = results["table"].as_array().unwrap().iter().map(|r| r["readcount"].as_u64().unwrap()).sum();
    let lines: Vec<Vec<&str>> = report.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!((lines[0][3], lines[0][4], lines[0][5]), ("U", "0", "unclassified"), "{report}");
    assert_eq!((lines[1][3], lines[1][4], lines[1][1]), ("R", "1", classified.to_string().as_str()), "{report}");
    assert!(lines.iter().any(|l| l[4] == "562" && l[3] == "S" && l[5].trim() == "Escherichia coli"), "{report}");
    // Another user sees nothing of it.
    let other = svc.user("other@example.org").await;
    let r = svc.as_user(Some(&other), reqwest::Method::GET, &path).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 404);

    let stored = crate::upload::stored(&svc).await;
    assert!(
        stored.iter().any(|k| k.starts_with(&format!("analyses/{id}/")) && k.ends_with("/kraken_report.txt")),
        "{stored:?}"
    );
    let (st, body) = svc.delete(Some(&u), &format!("/api/v1/samples/{sample}")).await;
    assert_eq!(st, 204, "{body}");
    let left: Vec<String> =
        crate::upload::stored(&svc).await.into_iter().filter(|f| f.starts_with("analyses/")).collect();
    assert!(left.is_empty(), "the analyses' files go with the sample: {left:?}");
}

#[tokio::test]
async fn jobs_are_versioned_by_engine_and_reference_and_the_same_input_gives_the_same_output() {
    let svc = start_with_demo(|_| {}).await;
    let u = svc.user("lab@example.org").await;
    let (_, jobs) = svc.get(Some(&u), "/api/v1/jobs?per_page=100").await;
    let types: Vec<&str> = jobs.as_array().unwrap().iter().map(|j| j["analysis_type"].as_str().unwrap()).collect();
    for t in ["classification", "panel", "alignment", "functional_profile"] {
        assert!(types.contains(&t), "a {t} job is registered: {types:?}");
    }
    let job = job_id(&svc, &u, "classification").await;
    let (_, j) = svc.get(Some(&u), &format!("/api/v1/jobs/{job}")).await;
    assert!(j["job_args_schema"]["properties"]["confidence"].is_object(), "{j}");
    // Arguments are checked against the schema before anything is queued.
    let (s, e) = svc
        .post(
            Some(&u),
            &format!("/api/v1/jobs/{job}/run"),
            json!({"sample": {"$ref": "/api/v1/samples/0123456789abcdef"}, "job_args": {"confidence": 3}}),
        )
        .await;
    assert!(s == 400 || s == 404, "{s} {e}");

    let sample = svc.upload_sample(&u, "demo.fastq.gz", &demo_reads(), json!({})).await;
    let first = run(&svc, &u, &job, &sample, json!({"confidence": 0.1})).await;
    let second = run(&svc, &u, &job, &sample, json!({"confidence": 0.1})).await;
    let (a, b) = (finished(&svc, &u, &first).await, finished(&svc, &u, &second).await);
    assert_eq!(a["job_args"], json!({"confidence": 0.1}), "the arguments are kept on the analysis");
    assert_eq!(b["success"], json!(true));
    let (_, ra) = svc.get(Some(&u), &format!("/api/v1/classifications/{first}/results")).await;
    let (_, rb) = svc.get(Some(&u), &format!("/api/v1/classifications/{second}/results")).await;
    assert_eq!(ra, rb, "same input, same results");
    let (_, la) = svc.get(Some(&u), &format!("/api/v1/classifications/{first}/readlevel")).await;
    let (_, lb) = svc.get(Some(&u), &format!("/api/v1/classifications/{second}/readlevel")).await;
    let (da, db) =
        (download(&svc, la["url"].as_str().unwrap()).await, download(&svc, lb["url"].as_str().unwrap()).await);
    assert!(da == db, "same input, byte-identical read-level file");

    // Reinstalling the same data registers no new job.
    svc.state.reload_references(&svc.data_dir()).await.unwrap();
    let (_, again) = svc.get(Some(&u), "/api/v1/jobs?per_page=100").await;
    assert_eq!(again.as_array().unwrap().len(), jobs.as_array().unwrap().len());
}

#[tokio::test]
async fn panel_alignment_and_functional_profile_jobs_produce_their_results() {
    let svc = start_with_demo(|_| {}).await;
    let u = svc.user("lab@example.org").await;
    let sample = svc.upload_sample(&u, "demo.fastq.gz", &demo_reads(), json!({})).await;

    let panel = run(&svc, &u, &job_id(&svc, &u, "panel").await, &sample, json!({})).await;
    let a = finished(&svc, &u, &panel).await;
    assert_eq!(a["success"], json!(true), "{a}");
    let (s, r) = svc.get(Some(&u), &format!("/api/v1/panels/{panel}/results")).await;
    assert_eq!(s, 200);
    assert!(r["panel_name"].is_string() && r["panel_results"].as_object().is_some_and(|m| !m.is_empty()), "{r}");

    let align_job = job_id(&svc, &u, "alignment").await;
    let al = run(&svc, &u, &align_job, &sample, json!({"tax_id": "562"})).await;
    let a = finished(&svc, &u, &al).await;
    assert_eq!(a["success"], json!(true), "{a}");
    let (_, shown) = svc.get(Some(&u), &format!("/api/v1/alignments/{al}")).await;
    assert_eq!(shown["tax_id"], json!("562"));
    let (s, stats) = svc.get(Some(&u), &format!("/api/v1/analyses/{al}/results")).await;
    assert_eq!(s, 200);
    assert!(stats["n_mapped_reads"].as_u64().unwrap() > 0, "{stats}");
    let (_, files) = svc.get(Some(&u), &format!("/api/v1/alignments/{al}/file_details")).await;
    let sam = gunzip(&download(&svc, files["files"][0]["url"].as_str().expect("alignment file")).await);
    assert!(sam.starts_with("@"), "a SAM header first");

    // A tax id without a genome fails with words that say which ones exist.
    let missing = run(&svc, &u, &align_job, &sample, json!({"tax_id": "9606"})).await;
    let a = finished(&svc, &u, &missing).await;
    assert_eq!(a["success"], json!(false));
    assert!(a["error_msg"].as_str().unwrap().contains("no reference genome for tax id 9606"), "{a}");

    let fp = run(&svc, &u, &job_id(&svc, &u, "functional_profile").await, &sample, json!({})).await;
    let a = finished(&svc, &u, &fp).await;
    assert_eq!(a["success"], json!(true), "{a}");
    let (_, shown) = svc.get(Some(&u), &format!("/api/v1/functional_profiles/{fp}")).await;
    let (_, files) = svc.get(Some(&u), &format!("/api/v1/functional_profiles/{fp}/file_details")).await;
    let tsv =
        String::from_utf8(download(&svc, files["files"][0]["url"].as_str().expect("profile table")).await).unwrap();
    assert!(tsv.lines().count() >= 1, "{tsv}");
    assert_eq!(shown["job_args"], json!({}));
}

#[tokio::test]
async fn a_file_that_is_not_sequence_data_fails_its_classification_with_a_message() {
    let svc = start_with_demo(|_| {}).await;
    let u = svc.user("lab@example.org").await;
    // The service stores what it is given; the engine is what reads it.
    let sample = svc.upload_sample(&u, "notes.fastq", b"this is not a FASTQ file\n", json!({})).await;
    let (_, s) = svc.get(Some(&u), &format!("/api/v1/samples/{sample}")).await;
    let id = s["primary_classification"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let a = finished(&svc, &u, &id).await;
    assert_eq!(a["success"], json!(false));
    let msg = a["error_msg"].as_str().unwrap();
    assert!(!msg.is_empty() && msg.len() <= 255, "{msg}");
    assert!(!msg.contains("/objects/"), "the message names the sample's file, not the store's path: {msg}");
}

#[tokio::test]
async fn a_dead_workers_claim_lapses_and_retries_are_bounded() {
    let svc = start_with_demo(|c| {
        c.runner.workers = 0;
        c.runner.lease = Duration::from_secs(1);
    })
    .await;
    let u = svc.user("lab@example.org").await;
    let sample = svc.upload_sample(&u, "demo.fastq.gz", &demo_reads(), json!({})).await;
    // A worker claims the analysis and dies: nobody renews its lease.
    let (id, claims) = worker::claim(&svc.state, "dead-worker-0").await.unwrap().expect("queued");
    assert_eq!(claims, 1);
    assert!(worker::claim(&svc.state, "other-0").await.unwrap().is_none(), "held while the lease runs");
    let workers = worker::spawn_workers(&svc.state, 1);
    let a = finished(&svc, &u, &id).await;
    assert_eq!(a["success"], json!(true), "taken over once the lease lapsed: {a}");
    let (_, s) = svc.get(Some(&u), &format!("/api/v1/samples/{sample}")).await;
    assert!(s["primary_classification"]["$ref"].as_str().unwrap().ends_with(&id));

    // An analysis whose workers keep dying fails for good, with a message.
    for w in workers {
        w.abort();
    }
    let second = svc.upload_sample(&u, "again.fastq.gz", &demo_reads(), json!({})).await;
    let (_, s) = svc.get(Some(&u), &format!("/api/v1/samples/{second}")).await;
    let id2 = s["primary_classification"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    sqlx::query("UPDATE job_queue SET claims = $1, worker = 'dead-worker-1', lease_until = '2000-01-01T00:00:00.000000Z' WHERE analysis_id = $2")
        .bind(worker::MAX_ATTEMPTS)
        .bind(&id2)
        .execute(&svc.state.db)
        .await
        .unwrap();
    let _workers = worker::spawn_workers(&svc.state, 1);
    let a = finished(&svc, &u, &id2).await;
    assert_eq!(a["success"], json!(false));
    assert!(a["error_msg"].as_str().unwrap().contains("stopped before finishing"), "{a}");
}

/// Exactly once: a worker whose lease lapsed while it ran, and whose analysis another worker
/// took over, keeps nothing when it finishes, however it finishes, and its files are removed;
/// the run of the worker that holds the claim counts. Deleting the sample removes every run's
/// files.
#[tokio::test]
async fn a_run_that_lost_its_claim_keeps_nothing() {
    use mgds_server::store::analyses::{Artifact, Produced, Stored, store_outcome};
    let svc = start_with_demo(|c| {
        c.runner.workers = 0;
        c.runner.lease = Duration::from_secs(60);
    })
    .await;
    let u = svc.user("lab@example.org").await;
    let sample = svc.upload_sample(&u, "demo.fastq.gz", &demo_reads(), json!({})).await;
    let (id, _) = worker::claim(&svc.state, "slow-0").await.unwrap().expect("queued");
    // Its lease lapses (the worker stalled) and another worker takes the analysis over.
    sqlx::query("UPDATE job_queue SET lease_until = '2000-01-01T00:00:00.000000Z' WHERE analysis_id = $1")
        .bind(&id)
        .execute(&svc.state.db)
        .await
        .unwrap();
    let (again, claims) = worker::claim(&svc.state, "fast-0").await.unwrap().expect("claimable once lapsed");
    assert_eq!((again.as_str(), claims), (id.as_str(), 2));
    let produced = |who: &str| Produced {
        results: json!({ "run": who }),
        artifact: Some(Artifact::Bytes(bytes::Bytes::from(format!("{who} read-level")))),
        report: None,
        scored: Vec::new(),
    };
    let files = |id: String| {
        let storage = svc.state.storage.clone();
        async move { storage.keys(Some(&format!("analyses/{id}"))).await.unwrap() }
    };

    // The stalled worker wakes up and stores, a success or a failure: neither is kept.
    let slow = store_outcome(&svc.state, &id, Some("slow-0"), Ok(produced("slow"))).await.unwrap();
    assert_eq!(slow, Stored::Discarded);
    assert_eq!(store_outcome(&svc.state, &id, Some("slow-0"), Err("boom".into())).await.unwrap(), Stored::Discarded);
    assert!(files(id.clone()).await.is_empty(), "the discarded run's files are removed");
    let (_, a) = svc.get(Some(&u), &format!("/api/v1/analyses/{id}")).await;
    assert_eq!(a["complete"], json!(false), "{a}");

    // The holder's run counts, once: a second store of the same claim keeps nothing more.
    let fast = store_outcome(&svc.state, &id, Some("fast-0"), Ok(produced("fast"))).await.unwrap();
    assert_eq!(fast, Stored::Complete("classification".into()));
    assert_eq!(store_outcome(&svc.state, &id, Some("fast-0"), Ok(produced("fast"))).await.unwrap(), Stored::Discarded);
    let (s, results) = svc.get(Some(&u), &format!("/api/v1/analyses/{id}/results")).await;
    assert_eq!((s, &results), (200, &json!({ "run": "fast" })));
    assert_eq!(files(id.clone()).await.len(), 2, "one run's results and read-level file");
    let queued: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM job_queue WHERE analysis_id = $1")
        .bind(&id)
        .fetch_one(&svc.state.db)
        .await
        .unwrap();
    assert_eq!(queued, 0);

    let (s, _) = svc.delete(Some(&u), &format!("/api/v1/samples/{sample}")).await;
    assert_eq!(s, 204);
    assert!(files(id).await.is_empty(), "the analysis's files go with the sample");
}

/// A worker on a machine of its own (another data folder, the same database) never changes
/// which classification new uploads get, whatever reference data its folder holds; the service
/// decides it. Runs on the test command's PostgreSQL pass (one database, two data folders).
#[tokio::test]
async fn a_worker_elsewhere_leaves_the_default_classification_alone() {
    let svc = start_with_demo(|c| c.runner.workers = 0).await;
    if svc.config.database_url.is_none() {
        eprintln!("not run: needs MGDS_TEST_POSTGRES (workers on other machines share a PostgreSQL database)");
        return;
    }
    let default = async |db: &mgds_server::db::Pool| -> Option<String> {
        sqlx::query_scalar("SELECT value FROM settings WHERE key = 'default_classification_job'")
            .fetch_optional(db)
            .await
            .unwrap()
    };
    let before = default(&svc.state.db).await;
    assert!(before.is_some(), "the service set it");
    // A worker whose folder holds another classification database, marked default there.
    let elsewhere = tempfile::tempdir().unwrap();
    let mut worker = svc.config.clone();
    worker.data_dir = elsewhere.path().join("data");
    worker.store = None;
    worker.runner.sets_default_classification = false;
    let databases = worker.data_dir.join(references::DATABASES_DIR);
    copy_dir(demo_databases(), &databases);
    let manifest_path = databases.join(references::DEMO_FOLDERS[0]).join("manifest.json");
    let mut manifest: Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    manifest["name"] = json!("bigger-db");
    manifest["digest"] = json!("0".repeat(64));
    manifest["default"] = json!(true);
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let w = mgds_server::AppState::open(&worker).await.expect("the worker opens");
    assert!(!w.runner.references().is_empty());
    assert_eq!(default(&svc.state.db).await, before, "the worker left the site's default alone");
    let u = svc.user("lab@example.org").await;
    let sample = svc.upload_sample(&u, "demo.fastq.gz", &demo_reads(), json!({})).await;
    let (_, s) = svc.get(Some(&u), &format!("/api/v1/samples/{sample}")).await;
    assert!(s["primary_classification"]["$ref"].is_string(), "new uploads still get a classification: {s}");
}

/// A demo database an older engine built (another format version) is made again at start; a
/// current one is left alone.
#[test]
fn an_outdated_demo_database_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(demo_databases(), &dir.path().join(references::DATABASES_DIR));
    assert!(!references::refresh_outdated_demo(dir.path()).unwrap(), "a current database is kept");
    let index = dir.path().join(references::DATABASES_DIR).join(references::DEMO_FOLDERS[0]).join("index.mgdb");
    let mut bytes = std::fs::read(&index).unwrap();
    bytes[8..12].copy_from_slice(&(mgds_classify::FORMAT_VERSION - 1).to_le_bytes());
    std::fs::write(&index, &bytes).unwrap();
    assert!(matches!(mgds_classify::Database::open(&index), Err(mgds_classify::Error::DatabaseVersion { .. })));
    assert!(references::refresh_outdated_demo(dir.path()).unwrap(), "an outdated database is rebuilt");
    assert_eq!(mgds_classify::format_version(&index).unwrap(), mgds_classify::FORMAT_VERSION);
    mgds_classify::Database::open(&index).expect("the rebuilt database opens");
    // The other demo references were not touched.
    for f in &references::DEMO_FOLDERS[1..] {
        assert!(dir.path().join(references::DATABASES_DIR).join(f).join("manifest.json").is_file(), "{f}");
    }

    // A demo reference made from older bundled data (no demo version in its manifest) is made
    // again from this version's data.
    let panel = dir.path().join(references::DATABASES_DIR).join(references::DEMO_FOLDERS[1]);
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(panel.join("manifest.json")).unwrap()).unwrap();
    manifest.as_object_mut().unwrap().remove("demo_version");
    manifest["digest"] = json!("an older panel");
    std::fs::write(panel.join("manifest.json"), manifest.to_string()).unwrap();
    assert!(references::refresh_outdated_demo(dir.path()).unwrap(), "older demo data is replaced");
    let now = references::read_manifest(&panel).unwrap();
    assert_eq!(now.demo_version, Some(references::DEMO_VERSION));
    assert_ne!(now.digest, "an older panel");
    assert!(!references::refresh_outdated_demo(dir.path()).unwrap(), "and then kept");
}

/// A fault of the service itself (here: its work folder cannot be made) puts the analysis back
/// in the queue instead of failing it; once the fault is gone, it completes.
#[tokio::test]
async fn a_transient_fault_puts_the_analysis_back_in_the_queue() {
    let svc = start_with_demo(|c| c.runner.workers = 0).await;
    let u = svc.user("lab@example.org").await;
    let work = svc.data_dir().join(worker::WORK_DIR);
    let _ = std::fs::remove_dir_all(&work);
    std::fs::write(&work, "a file where the work folder should be").unwrap();
    let sample = svc.upload_sample(&u, "demo.fastq.gz", &demo_reads(), json!({})).await;
    let (_, s) = svc.get(Some(&u), &format!("/api/v1/samples/{sample}")).await;
    let id = s["primary_classification"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let workers = worker::spawn_workers(&svc.state, 1);
    // Back in the queue, released and waiting, not failed.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let row: Option<(Option<String>, Option<String>, i64)> =
            sqlx::query_as("SELECT worker, lease_until, attempts FROM job_queue WHERE analysis_id = $1")
                .bind(&id)
                .fetch_optional(&svc.state.db)
                .await
                .unwrap();
        let (worker, lease, attempts) = row.expect("still queued");
        if worker.is_none() && lease.is_some() && attempts == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the analysis was not put back: {worker:?} {lease:?} {attempts}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (_, a) = svc.get(Some(&u), &format!("/api/v1/analyses/{id}")).await;
    assert_eq!(a["complete"], json!(false), "{a}");
    // The fault passes; the next claim (made due at once here) finishes it.
    std::fs::remove_file(&work).unwrap();
    sqlx::query("UPDATE job_queue SET lease_until = '2000-01-01T00:00:00.000000Z' WHERE analysis_id = $1")
        .bind(&id)
        .execute(&svc.state.db)
        .await
        .unwrap();
    svc.state.wake_workers();
    let a = finished(&svc, &u, &id).await;
    assert_eq!(a["success"], json!(true), "{a}");
    for w in workers {
        w.abort();
    }
}

#[tokio::test]
async fn health_and_metrics_answer_for_load_balancers_and_prometheus() {
    let svc = start_with_demo(|_| {}).await;
    let r = svc.http.get(format!("{}/api/v1/health", svc.url)).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200, "no sign-in needed");
    assert_eq!(r.json::<Value>().await.unwrap(), json!({"status": "ok", "database": "ok"}));

    let u = svc.user("lab@example.org").await;
    let sample = svc.upload_sample(&u, "demo.fastq.gz", &demo_reads(), json!({})).await;
    let (_, s) = svc.get(Some(&u), &format!("/api/v1/samples/{sample}")).await;
    let id = s["primary_classification"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    finished(&svc, &u, &id).await;
    for _ in 0..3 {
        svc.get(Some(&u), &format!("/api/v1/samples/{sample}")).await;
    }
    let r = svc.http.get(format!("{}/metrics", svc.url)).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("application/openmetrics-text"));
    let text = r.text().await.unwrap();
    let value = |series: &str| -> f64 {
        let line = text.lines().find(|l| l.starts_with(series)).unwrap_or_else(|| panic!("no {series} in\n{text}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    // Requests by route as declared, not by address.
    assert!(value(r#"mgds_http_requests_total{method="GET",route="/api/v1/samples/{id}",status="200"}"#) >= 4.0);
    assert!(value(r#"mgds_http_request_duration_seconds_count{method="GET",route="/api/v1/samples/{id}"}"#) >= 4.0);
    assert!(!text.contains(&sample), "an address never becomes a series");
    // The queue, read from the database: the classification is done.
    assert_eq!(value(r#"mgds_job_queue_analyses{state="waiting"}"#), 0.0);
    assert_eq!(value(r#"mgds_job_queue_analyses{state="running"}"#), 0.0);
    assert_eq!(value(r#"mgds_analysis_run_seconds_count{analysis_type="classification",outcome="success"}"#), 1.0);
    // The upload's audit entry, timed.
    assert!(value("mgds_audit_write_seconds_count") >= 1.0);
    assert!(value("mgds_audit_write_seconds_sum") > 0.0);
    assert!(text.ends_with("# EOF\n"));

    // A database that stops answering makes the health check say so.
    svc.state.db.close().await;
    let r = svc.http.get(format!("{}/api/v1/health", svc.url)).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 503);
    assert_eq!(r.json::<Value>().await.unwrap()["status"], json!("unavailable"));
}

/// The queue's depth as the metrics give it: what waits and what a worker holds.
#[tokio::test]
async fn the_queue_depth_in_the_metrics_counts_waiting_and_running_analyses() {
    let svc = start_with_demo(|c| c.runner.workers = 0).await;
    let u = svc.user("lab@example.org").await;
    for i in 0..3 {
        svc.upload_sample(&u, &format!("s{i}.fastq.gz"), &demo_reads(), json!({})).await;
    }
    let depth = async |state: &str| -> f64 {
        let text = svc.http.get(format!("{}/metrics", svc.url)).send().await.unwrap().text().await.unwrap();
        let series = format!("mgds_job_queue_analyses{{state=\"{state}\"}} ");
        text.lines().find_map(|l| l.strip_prefix(&series)).unwrap_or_else(|| panic!("{text}")).parse().unwrap()
    };
    assert_eq!((depth("waiting").await, depth("running").await), (3.0, 0.0));
    worker::claim(&svc.state, "metrics-0").await.unwrap().expect("queued");
    assert_eq!((depth("waiting").await, depth("running").await), (2.0, 1.0));
}

/// Owners take turns in the queue: after one owner queued a burst, another owner's analysis is
/// claimed next, not after the whole burst.
#[tokio::test]
async fn owners_take_turns_in_the_queue() {
    let svc = start_with_demo(|c| c.runner.workers = 0).await;
    let busy = svc.user("busy@example.org").await;
    let other = svc.user("other@example.org").await;
    let reads = fastq(4);
    let mut burst = Vec::new();
    for i in 0..6 {
        burst.push(svc.upload_sample(&busy, &format!("burst{i}.fastq"), &reads, json!({})).await);
    }
    svc.upload_sample(&other, "late.fastq", &reads, json!({})).await;
    let mut order = Vec::new();
    for i in 0..7 {
        let (id, _) = worker::claim(&svc.state, &format!("w-{i}")).await.unwrap().expect("queued");
        let owner: String = sqlx::query_scalar(
            "SELECT s.owner_id FROM analyses a JOIN samples s ON s.id = a.sample_id WHERE a.id = $1",
        )
        .bind(&id)
        .fetch_one(&svc.state.db)
        .await
        .unwrap();
        order.push(owner);
    }
    let at = order.iter().position(|o| *o == other.id).expect("the other owner's analysis was claimed");
    assert_eq!(at, 1, "claimed right after the first of the burst, not after all {}: {order:?}", burst.len());
}

/// `?wait=SECS` on an analysis answers as soon as the analysis is stored complete (a worker starts
/// a second into the wait; not at the end of the wait), at once for one already complete, and
/// refuses a wait that is not a number of seconds.
#[tokio::test]
async fn waiting_on_an_analysis_answers_when_it_completes() {
    // No worker until the wait is under way: the analysis cannot be complete when it starts.
    let svc = start_with_demo(|c| c.runner.workers = 0).await;
    let u = svc.user("lab@example.org").await;
    let sample = svc.upload_sample(&u, "demo.fastq.gz", &demo_reads(), json!({})).await;
    let (_, s) = svc.get(Some(&u), &format!("/api/v1/samples/{sample}")).await;
    let id = s["primary_classification"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let (_, a) = svc.get(Some(&u), &format!("/api/v1/classifications/{id}")).await;
    assert_eq!(a["complete"], json!(false));
    let state = svc.state.clone();
    let later = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        worker::spawn_workers(&state, 1)
    });
    let started = Instant::now();
    let (st, a) = svc.get(Some(&u), &format!("/api/v1/classifications/{id}?wait=30")).await;
    let waited = started.elapsed();
    let _workers = later.await.unwrap();
    assert_eq!(st, 200, "{a}");
    assert_eq!(a["complete"], json!(true), "answered when complete: {a}");
    assert!(waited >= Duration::from_secs(1), "it waited for the worker: {waited:?}");
    assert!(waited < Duration::from_secs(25), "answered at completion, not at the end of the wait: {waited:?}");
    // Anonymous callers are answered at once (the sample is private: not found).
    let (st, _) = svc.get(None, &format!("/api/v1/analyses/{id}?wait=5")).await;
    assert_ne!(st, 200);
    // Complete already: at once.
    let started = Instant::now();
    let (st, a) = svc.get(Some(&u), &format!("/api/v1/analyses/{id}?wait=30")).await;
    assert_eq!((st, a["complete"].clone()), (200, json!(true)));
    assert!(started.elapsed() < Duration::from_secs(2));
    // Not a number of seconds.
    let (st, e) = svc.get(Some(&u), &format!("/api/v1/analyses/{id}?wait=soon")).await;
    assert_eq!(st, 400, "{e}");
    assert!(e.to_string().contains("wait"), "{e}");
    // Another caller cannot wait on it either.
    let other = svc.user("other@example.org").await;
    let (st, _) = svc.get(Some(&other), &format!("/api/v1/analyses/{id}?wait=2")).await;
    assert_eq!(st, 404);
}
