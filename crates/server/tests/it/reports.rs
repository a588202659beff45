//! A sample's report (`/reports`), made by the service's report job from what it stored for the
//! sample, over SQLite and PostgreSQL with the files in the data folder or an S3 store: the PDF
//! read back with pdftotext (poppler-utils).

use serde_json::json;

use crate::engines::{demo_reads, finished, start_with_demo};

fn pdf_text(pdf: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.pdf");
    std::fs::write(&path, pdf).unwrap();
    let out = std::process::Command::new("pdftotext")
        .arg(&path)
        .arg("-")
        .output()
        .expect("pdftotext (Debian: apt-get install poppler-utils)");
    String::from_utf8_lossy(&out.stdout).replace('\n', " ")
}

#[tokio::test]
async fn a_report_job_makes_a_pdf_of_the_sample_from_its_stored_results() {
    let svc = start_with_demo(|_| {}).await;
    let lab = svc.user_in("lab@example.org", Some("Northern Microbiology"), mgds_server::admin::Role::Member).await;
    let sample = svc
        .upload_sample(
            &lab,
            "swab.fastq.gz",
            &demo_reads(),
            json!({"metadata": {"name": "Ward 3 swab", "custom": {"site": "ward 3"}}}),
        )
        .await;
    let (_, s) = svc.get(Some(&lab), &format!("/api/v1/samples/{sample}")).await;
    let classification = s["primary_classification"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    assert_eq!(finished(&svc, &lab, &classification).await["success"], json!(true));

    // The lab's admin gives it a logo: the report's cover shows it.
    let admin = svc.user_in("it@example.org", Some("Northern Microbiology"), mgds_server::admin::Role::Admin).await;
    let logo = br##"<svg xmlns="http://www.w3.org/2000/svg" width="90" height="30"><circle cx="15" cy="15" r="12" fill="#c44"/></svg>"##;
    let r = svc
        .as_user(Some(&admin), reqwest::Method::PUT, "/api/v1/organization/logo")
        .body(logo.to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    let (_, jobs) = svc.get(Some(&lab), "/api/v1/jobs").await;
    let job = jobs.as_array().unwrap().iter().find(|j| j["analysis_type"] == "report").expect("a report job");
    let run = format!("{}/run", job["$uri"].as_str().unwrap());
    let (s, started) = svc.post(Some(&lab), &run, json!({"sample": sample})).await;
    assert_eq!(s, 200, "{started}");
    let id = started["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let done = finished(&svc, &lab, &id).await;
    assert_eq!(done["success"], json!(true), "{done}");

    let (s, results) = svc.get(Some(&lab), &format!("/api/v1/reports/{id}/results")).await;
    assert_eq!(s, 200, "{results}");
    assert_eq!(results["title"], json!("Ward 3 swab"));
    assert_eq!(results["classification"], json!({"$ref": format!("/api/v1/classifications/{classification}")}));
    assert_eq!(results["sections"], json!(["Sample", "Read quality", "Abundance", "Diversity", "Methods"]));
    let (_, listed) = svc.get(Some(&lab), "/api/v1/reports").await;
    assert!(listed.as_array().unwrap().iter().any(|r| r["$uri"] == json!(format!("/api/v1/reports/{id}"))), "{listed}");

    let (s, details) = svc.get(Some(&lab), &format!("/api/v1/reports/{id}/file_details")).await;
    assert_eq!(s, 200, "{details}");
    let url = details["files"][0]["url"].as_str().expect("the PDF").to_string();
    let pdf = svc.http.get(&url).send().await.unwrap().bytes().await.unwrap();
    assert!(pdf.starts_with(b"%PDF-"));
    let text = pdf_text(&pdf);
    for shown in [
        "Northern Microbiology",
        "Ward 3 swab",
        "Sample report",
        "ward 3",
        "Read quality",
        "Klebsiella pneumoniae",
        "Shannon",
        classification.as_str(),
        "mgds-classify",
    ] {
        assert!(text.contains(shown), "{shown:?} is not in the report:\n{text}");
    }

    // The logo is drawn on the cover (an SVG stays vector: a form on page 1, not a picture).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.pdf"), &pdf).unwrap();
    let first = std::process::Command::new("pdftocairo")
        .args(["-svg", "-f", "1", "-l", "1"])
        .arg(dir.path().join("r.pdf"))
        .arg(dir.path().join("p1.svg"))
        .status()
        .unwrap();
    assert!(first.success());
    let page = std::fs::read_to_string(dir.path().join("p1.svg")).unwrap();
    assert!(page.contains("fill:rgb(80.0"), "the logo's red circle (#c44) on the cover");

    // Another user sees neither the report nor runs one on the sample.
    let other = svc.user("other@example.org").await;
    let (s, _) = svc.get(Some(&other), &format!("/api/v1/reports/{id}")).await;
    assert_eq!(s, 404);
    let (s, _) = svc.post(Some(&other), &run, json!({"sample": sample})).await;
    assert_eq!(s, 400);
}
