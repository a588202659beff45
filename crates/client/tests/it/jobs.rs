//! Jobs and results: list, get with schema, run with arguments checked first, wait with a
//! timeout, classification tables, read-level downloads, panel results, other analysis kinds.

use std::time::Duration;

use bytes::Bytes;
use mgds_api::MarkerStatus;
use mgds_client::{Error, Filter};
use serde_json::json;

use super::{Service, fastq_bytes, names_in, write_file};

fn schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {"confidence": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5}},
        "additionalProperties": false
    })
}

#[tokio::test]
async fn run_classification_wait_and_read_results() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;
    let c = svc.client(&alice);
    let job_id = svc.job("Classify (demo db)", "classification", schema()).await;
    let path = write_file(&svc.scratch(), "s.fastq", &fastq_bytes(2000));
    let sample = c.samples().upload(&path).send().await.unwrap();

    // List and get; only the single-job answer carries the schema.
    let jobs = c.jobs().list().per_page(10).send().await.unwrap();
    // The job registered here, and the report job every service has.
    let kinds: Vec<&str> = jobs.items.iter().filter_map(|j| j.analysis_type.as_deref()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "classification").count(), 1, "{kinds:?}");
    assert!(jobs.items.iter().all(|j| j.job_args_schema.is_none()));
    let job = c.jobs().get(&job_id).await.unwrap();
    assert_eq!(job.job_args_schema, Some(schema()));
    assert_eq!(job.analysis_type.as_deref(), Some("classification"));

    // Arguments that break the schema are refused before anything is sent.
    let err = c.jobs().run(&job, &sample).arg("confidence", 3).send().await.unwrap_err();
    let Error::InvalidJobArgs { problems, .. } = &err else { panic!("{err:?}") };
    assert!(problems[0].starts_with("/confidence"), "{problems:?}");
    let err = c.jobs().run(&job, &sample).arg("colour", "blue").send().await.unwrap_err();
    assert!(matches!(err, Error::InvalidJobArgs { .. }), "{err:?}");
    assert!(c.analyses().list().per_page(5).send().await.unwrap().items.is_empty(), "nothing was run");
    let long = "x".repeat(251);
    assert!(matches!(c.jobs().run(&job, &sample).description(long).send().await, Err(Error::InvalidInput(_))));

    let analysis = c
        .jobs()
        .run(&job, &sample)
        .arg("confidence", 0.2)
        .description("first look")
        .populate_default_arguments(true)
        .send()
        .await
        .unwrap();
    assert_eq!(analysis.collection(), Some("analyses"));

    // Still pending: waiting gives up at its timeout; results say why there are none.
    let err = c
        .jobs()
        .wait(&analysis)
        .timeout(Duration::from_millis(300))
        .poll_interval(Duration::from_millis(50))
        .send()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    let err = c.classifications().results(&analysis).await.unwrap_err();
    assert!(err.to_string().contains("has not finished"), "{err}");

    // The engine finishes.
    let results = json!({
        "n_reads": 10,
        "host_tax_ids": [],
        "table": [
            {"tax_id": "1", "name": "root", "rank": "no rank", "parent_tax_id": null, "readcount": 0, "readcount_w_children": 8, "abundance": null},
            {"tax_id": "562", "name": "Escherichia coli", "rank": "species", "parent_tax_id": "1", "readcount": 8, "readcount_w_children": 8, "abundance": 1.0}
        ]
    });
    let readlevel: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    mgds_server::routes::store_results(&svc.state, analysis.id(), Ok((results, Some(Bytes::from(readlevel.clone())))))
        .await
        .unwrap();
    let done = c.jobs().wait(&analysis).poll_interval(Duration::from_millis(20)).send().await.unwrap();
    assert!(done.complete && done.success);
    assert_eq!(done.job_args, Some(json!({"confidence": 0.2})));

    let table = c.classifications().results(&analysis).await.unwrap();
    assert_eq!(table.n_reads, 10);
    assert_eq!(table.table[1].name, "Escherichia coli");
    assert_eq!(table.table[1].abundance, Some(1.0));
    let generic = c.analyses().results(&analysis).await.unwrap();
    assert_eq!(generic["n_reads"], json!(10));

    // Read-level results through the pre-signed address, to a file.
    let url = c.classifications().readlevel_url(&analysis).await.unwrap();
    assert!(url.url.starts_with(&svc.url));
    let dest = svc.scratch().join("readlevel.tsv.gz");
    let last = std::sync::Arc::new(std::sync::Mutex::new((0u64, 0u64)));
    let l = last.clone();
    let progress: mgds_client::Progress = std::sync::Arc::new(move |got, total| *l.lock().unwrap() = (got, total));
    let n = c.classifications().download_readlevel_with_progress(&analysis, &dest, Some(progress)).await.unwrap();
    assert_eq!(*last.lock().unwrap(), (n, n));
    assert_eq!(n, readlevel.len() as u64);
    assert_eq!(std::fs::read(&dest).unwrap(), readlevel);

    // A run that uses this analysis's output, with its arguments given at once and the schema
    // supplied by the caller (no job lookup).
    let panel_job = svc.job("Panel after classification", "panel", json!({"type": "object"})).await;
    let mut args = serde_json::Map::new();
    args.insert("min_depth".into(), json!(2));
    let dependent = c
        .jobs()
        .run(&panel_job, &sample)
        .args(args)
        .schema(json!({"type": "object", "properties": {"min_depth": {"type": "integer"}}}))
        .dependency(&analysis, "classification/results.json")
        .send()
        .await
        .unwrap();
    let dep = c.analyses().get(&dependent).await.unwrap();
    assert_eq!(dep.dependencies.len(), 1);
    // Answered as references, as the real service's clients read them.
    assert_eq!(dep.dependencies[0].id(), analysis.id());
    assert_eq!(dep.job_args, Some(json!({"min_depth": 2})));
    let err = c
        .jobs()
        .run(&panel_job, &sample)
        .arg("min_depth", "two")
        .schema(json!({"properties": {"min_depth": {"type": "integer"}}}))
        .send()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidJobArgs { .. }), "{err:?}");

    // The same analysis in the other collections.
    let listed = c.classifications().list().filter(Filter::new().eq("complete", true)).send().await.unwrap();
    assert_eq!(listed.items.len(), 1);
    assert_eq!(c.classifications().get(&analysis).await.unwrap().analysis_type.as_deref(), Some("classification"));
    assert!(matches!(c.panels().get(&analysis).await, Err(Error::NotFound { .. })));
    assert_eq!(c.analyses().get(&analysis).await.unwrap().description.as_deref(), Some("first look"));
    assert!(c.classifications().list_public().per_page(5).send().await.unwrap().items.is_empty());
    assert!(c.analyses().list_public().per_page(5).send().await.unwrap().items.is_empty());
}

#[tokio::test]
async fn panels_alignments_profiles_and_failures() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;
    let c = svc.client(&alice);
    let path = write_file(&svc.scratch(), "s.fastq", &fastq_bytes(2000));
    let sample = c.samples().upload(&path).send().await.unwrap();
    let panel_job = svc.job("AMR panel", "panel", json!({})).await;
    let align_job = svc.job("Align", "alignment", json!({})).await;
    let profile_job = svc.job("Profile", "functional_profile", json!({})).await;

    let panel = c.jobs().run(&panel_job, &sample).send().await.unwrap();
    let results = json!({
        "panel_name": "AMR",
        "panel_results": {
            "beta-lactamases": {
                "description": "Beta-lactam resistance",
                "markers": [
                    {"name": "blaTEM-1", "description": "TEM-1", "status": "present", "length": 861, "identity": 100.0, "coverage": 100.0, "depth": 12.5},
                    {"name": "snpX", "description": "short", "status": "probable", "length": 40, "n_reads_exact_match": 0, "n_reads_partial_match": 3}
                ]
            }
        }
    });
    mgds_server::routes::store_results(&svc.state, panel.id(), Ok((results, None))).await.unwrap();
    let pr = c.panels().results(&panel).await.unwrap();
    assert_eq!(pr.panel_name, "AMR");
    let sub: mgds_api::SubPanel = serde_json::from_value(pr.panel_results["beta-lactamases"].clone()).unwrap();
    assert_eq!(sub.markers[0].status, MarkerStatus::Present);
    assert_eq!(sub.markers[1].n_reads_partial_match, Some(3));
    let p = c.panels().get(&panel).await.unwrap();
    assert!(p.complete && p.success && p.analysis_type.is_none());
    assert_eq!(c.panels().list().per_page(5).send().await.unwrap().items.len(), 1);
    assert!(c.panels().list_public().per_page(5).send().await.unwrap().items.is_empty());
    // Read-level results exist only for classifications.
    assert!(matches!(c.classifications().readlevel_url(&panel).await, Err(Error::NotFound { .. })));

    let align = c.jobs().run(&align_job, &sample).send().await.unwrap();
    assert_eq!(c.alignments().list().per_page(5).send().await.unwrap().items.len(), 1);
    assert!(c.alignments().list_public().per_page(5).send().await.unwrap().items.is_empty());
    let a = c.alignments().get(&align).await.unwrap();
    assert!(!a.complete);

    // A failed analysis: complete, not successful, with the reason; no results.
    let profile = c.jobs().run(&profile_job, &sample).send().await.unwrap();
    mgds_server::routes::store_results(&svc.state, profile.id(), Err("reference database missing".into()))
        .await
        .unwrap();
    let done = c.jobs().wait(&profile).poll_interval(Duration::from_millis(20)).send().await.unwrap();
    assert!(done.complete && !done.success);
    assert_eq!(done.error_msg.as_deref(), Some("reference database missing"));
    let fp = c.functional_profiles().get(&profile).await.unwrap();
    assert_eq!(fp.error_msg.as_deref(), Some("reference database missing"));
    assert_eq!(c.functional_profiles().list().per_page(5).send().await.unwrap().items.len(), 1);
    assert!(c.functional_profiles().list_public().per_page(5).send().await.unwrap().items.is_empty());
    let err = c.functional_profiles().results(&profile).await.unwrap_err();
    assert!(err.to_string().contains("reference database missing"), "{err}");

    // Results of a finished profile.
    let profile2 = c.jobs().run(&profile_job, &sample).force(true).send().await.unwrap();
    mgds_server::routes::store_results(&svc.state, profile2.id(), Ok((json!({"pathways": []}), None))).await.unwrap();
    assert_eq!(c.functional_profiles().results(&profile2).await.unwrap(), json!({"pathways": []}));

    // A failed download leaves no file behind.
    let dir = svc.scratch().join("dl");
    std::fs::create_dir_all(&dir).unwrap();
    let err = c.classifications().download_readlevel(&profile, dir.join("x.tsv.gz")).await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
    assert!(names_in(&dir).is_empty());
}
