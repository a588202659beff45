//! Controls analyses (`/controls`): what the service hands the scoring and keeps of it, over
//! SQLite and PostgreSQL. The scoring is the application's (tested with it in `mgds-app`); here
//! a scoring of the test's own reports what it was given, since the test is about the batch
//! the service gathers: the blank's owner's samples with the blank's value of the batch field,
//! each with its newest finished classification or why it has none, and the pages of the
//! samples scored.

use mgds_api::controls::{ControlsInput, ControlsOutput};
use serde_json::{Value, json};

use crate::engines::{demo_reads, finished, start_with_demo};
use crate::{Service, TestUser};

/// Reports the batch it was given, and calls the first scored sample's first taxon flagged.
fn report(input: ControlsInput) -> Result<ControlsOutput, String> {
    let samples: Vec<Value> = input
        .samples
        .iter()
        .map(|s| json!({"id": s.id, "name": s.name, "classified": s.results.is_some(), "missing": s.missing}))
        .collect();
    let scored: Vec<String> = input.samples.iter().filter(|s| s.results.is_some()).map(|s| s.id.clone()).collect();
    Ok(ControlsOutput {
        results: json!({"control": input.control, "field": input.batch_field, "value": input.batch, "samples": samples, "args": input.args}),
        table_csv: format!("id\n{}\n", scored.join("\n")).into_bytes(),
        scored,
    })
}

fn start_scoring() {
    let schema =
        json!({"type": "object", "properties": {"batch_field": {"type": "string"}}, "additionalProperties": false});
    mgds_server::controls::provide(report, "test", schema);
}

async fn sample_with(svc: &Service, u: &TestUser, name: &str, custom: Value) -> String {
    svc.upload_sample(u, name, &demo_reads(), json!({"metadata": {"custom": custom}})).await
}

async fn classified(svc: &Service, u: &TestUser, sample: &str) {
    let (_, s) = svc.get(Some(u), &format!("/api/v1/samples/{sample}")).await;
    let id = s["primary_classification"]["$ref"].as_str().expect("classified").rsplit('/').next().unwrap().to_string();
    assert_eq!(finished(svc, u, &id).await["success"], json!(true));
}

#[tokio::test]
async fn a_controls_analysis_scores_the_blanks_batch_and_marks_its_samples() {
    start_scoring();
    let svc = start_with_demo(|_| {}).await;
    let (lab, other) = (svc.user("lab@example.org").await, svc.user("other@example.org").await);
    // A batch value with LIKE's wildcards and a quote in it is matched exactly.
    let batch = "B_1% \"x\"";
    let blank = sample_with(&svc, &lab, "blank.fastq.gz", json!({"control": "blank", "sequencing_batch": batch})).await;
    let a = sample_with(&svc, &lab, "a.fastq.gz", json!({"sequencing_batch": batch})).await;
    let near = sample_with(&svc, &lab, "near.fastq.gz", json!({"sequencing_batch": "BX1% \"x\""})).await;
    let theirs = sample_with(&svc, &other, "theirs.fastq.gz", json!({"sequencing_batch": batch})).await;
    for (u, s) in [(&lab, &blank), (&lab, &a), (&lab, &near), (&other, &theirs)] {
        classified(&svc, u, s).await;
    }
    let (s, waiting) = svc
        .post(Some(&lab), "/api/v1/samples/preupload", json!({"metadata": {"custom": {"sequencing_batch": batch}}}))
        .await;
    assert_eq!(s, 200, "{waiting}");
    let waiting = waiting["sample_id"].as_str().unwrap().to_string();

    let (_, jobs) = svc.get(Some(&lab), "/api/v1/jobs").await;
    let job = jobs.as_array().unwrap().iter().find(|j| j["analysis_type"] == "control").expect("a controls job");
    let run = format!("{}/run", job["$uri"].as_str().unwrap());
    // Only a negative control, naming its batch, is run on.
    let (s, e) = svc.post(Some(&lab), &run, json!({"sample": a})).await;
    assert_eq!(s, 400, "{e}");
    assert!(e["message"].as_str().unwrap().contains("this sample is not a negative control"), "{e}");
    let (s, e) = svc.post(Some(&lab), &run, json!({"sample": blank, "job_args": {"batch_field": "plate"}})).await;
    assert_eq!(s, 400, "{e}");
    assert!(e["message"].as_str().unwrap().contains("no value in its batch field \"plate\""), "{e}");
    let (s, e) = svc.post(Some(&other), &run, json!({"sample": blank})).await;
    assert_eq!(s, 400, "another user runs nothing on the blank: {e}");
    assert!(e["message"].as_str().unwrap().contains("does not exist or you do not have access to it"), "{e}");

    let (s, started) = svc.post(Some(&lab), &run, json!({"sample": blank})).await;
    assert_eq!(s, 200, "{started}");
    let id = started["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let done = finished(&svc, &lab, &id).await;
    assert_eq!(done["success"], json!(true), "{done}");

    let (s, r) = svc.get(Some(&lab), &format!("/api/v1/controls/{id}/results")).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!((&r["control"], &r["field"], &r["value"]), (&json!(blank), &json!("sequencing_batch"), &json!(batch)));
    let given: Vec<(&str, bool)> =
        r["samples"].as_array().unwrap().iter().map(|s| (s["id"].as_str().unwrap(), s["classified"] == true)).collect();
    assert_eq!(given[0], (blank.as_str(), true), "the blank first: {r}");
    let mut rest = given[1..].to_vec();
    rest.sort();
    let mut want = vec![(a.as_str(), true), (waiting.as_str(), false)];
    want.sort();
    assert_eq!(rest, want, "the owner's samples of the batch, not a near value's, not another user's: {r}");
    let missing = r["samples"].as_array().unwrap().iter().find(|s| s["id"] == json!(waiting)).unwrap();
    assert_eq!(missing["missing"], json!("it has no finished classification"));

    // The analysis in the reference's collection, and the samples it scored.
    let (_, listed) = svc.get(Some(&lab), "/api/v1/controls").await;
    assert!(
        listed.as_array().unwrap().iter().any(|c| c["$uri"] == json!(format!("/api/v1/controls/{id}"))),
        "{listed}"
    );
    for s in [&blank, &a] {
        let (status, by) = svc.get(Some(&lab), &format!("/api/v1/samples/{s}/controls")).await;
        assert_eq!(status, 200, "{by}");
        assert_eq!(by.as_array().unwrap().len(), 1, "{by}");
        assert_eq!(by[0]["$uri"], json!(format!("/api/v1/controls/{id}")));
    }
    for (u, s) in [(&lab, &near), (&lab, &waiting), (&other, &theirs)] {
        let (status, by) = svc.get(Some(u), &format!("/api/v1/samples/{s}/controls")).await;
        assert_eq!((status, by.clone()), (200, json!([])), "{s}");
    }
    let (status, _) = svc.get(Some(&other), &format!("/api/v1/samples/{a}/controls")).await;
    assert_eq!(status, 404, "another user's sample is not theirs to read");
    let (status, details) = svc.get(Some(&lab), &format!("/api/v1/controls/{id}/file_details")).await;
    assert_eq!(status, 200, "{details}");
    let url = details["files"][0]["url"].as_str().expect("the scores' file").to_string();
    let csv = svc.http.get(&url).send().await.unwrap().text().await.unwrap();
    assert_eq!(csv.lines().skip(1).collect::<Vec<_>>().len(), 2, "{csv}");

    // A sample scored and then deleted leaves nothing behind.
    let (s, _) = svc
        .as_user(Some(&lab), reqwest::Method::DELETE, &format!("/api/v1/samples/{a}"))
        .send()
        .await
        .map(|r| (r.status().as_u16(), ()))
        .unwrap();
    assert!(s == 200 || s == 204, "{s}");
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM control_scored WHERE sample_id = $1")
        .bind(&a)
        .fetch_one(&svc.state.db)
        .await
        .unwrap();
    assert_eq!(left, 0);
}
