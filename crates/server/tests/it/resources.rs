//! Each resource's routes: success and error answers.

use mgds_server::admin::Role;
use reqwest::Method;
use serde_json::{Value, json};

use crate::{Service, assert_error};

fn sref(id: &str) -> Value {
    json!({"$ref": format!("/api/v1/samples/{id}")})
}

#[tokio::test]
async fn errors_share_one_shape() {
    let svc = Service::start().await;
    let u = svc.user("a@lab.org").await;
    let (s, b) = svc.get(Some(&u), "/api/v1/no_such_route").await;
    assert_error(s, &b, 404);
    let (s, b) = crate::json_of(svc.as_user(Some(&u), Method::PUT, "/api/v1/samples").send().await.unwrap()).await;
    assert_error(s, &b, 405);
    let r = svc.as_user(Some(&u), Method::POST, "/api/v1/projects").body("{\"project_name\": ").send().await.unwrap();
    let (s, b) = crate::json_of(r).await;
    assert_error(s, &b, 400);
    assert!(b["message"].as_str().unwrap().contains("not valid JSON"), "{b}");
    let (s, b) = svc.post(Some(&u), "/api/v1/projects", json!({"project_name": "abc", "colour": 1})).await;
    assert_error(s, &b, 400);
    assert!(b["message"].as_str().unwrap().contains("colour"), "{b}");
    let (s, b) = svc.get(None, "/api/v1/account").await;
    assert_error(s, &b, 401);
}

#[tokio::test]
async fn account_and_users() {
    let svc = Service::start().await;
    let a = svc.user_in("a@lab.org", Some("lab"), Role::Admin).await;
    let b = svc.user_in("b@lab.org", Some("lab"), Role::Member).await;
    let stranger = svc.user("c@elsewhere.org").await;
    let (s, acct) = svc.get(Some(&a), "/api/v1/account").await;
    assert_eq!(s, 200);
    assert_eq!(acct["user"]["$ref"], json!(format!("/api/v1/users/{}", a.id)));
    assert_eq!(acct["email"], json!("a@lab.org"));
    assert_eq!(acct["organization"], json!("lab"));
    let (s, users) = svc.get(Some(&a), "/api/v1/users").await;
    assert_eq!(s, 200);
    let emails: Vec<&str> = users.as_array().unwrap().iter().map(|u| u["email"].as_str().unwrap()).collect();
    assert_eq!(emails, vec!["a@lab.org", "b@lab.org"], "the organisation, not strangers");
    let (s, one) = svc.get(Some(&a), &format!("/api/v1/users/{}", b.id)).await;
    assert_eq!((s, one["email"].clone()), (200, json!("b@lab.org")));
    let (s, body) = svc.get(Some(&a), &format!("/api/v1/users/{}", stranger.id)).await;
    assert_error(s, &body, 404);
}

#[tokio::test]
async fn projects_lifecycle() {
    let svc = Service::start().await;
    let u = svc.user("a@lab.org").await;
    let other = svc.user("b@lab.org").await;
    for bad in ["ab", "sixteen_chars_xx", "gut study", "gut/1"] {
        let (s, b) = svc.post(Some(&u), "/api/v1/projects", json!({"project_name": bad, "name": "x"})).await;
        assert_error(s, &b, 400);
        assert!(b["message"].as_str().unwrap().contains("project_name"), "{b}");
    }
    let (s, p) = svc
        .post(
            Some(&u),
            "/api/v1/projects",
            json!({"project_name": "Gut-2026", "name": "Gut study", "description": "d"}),
        )
        .await;
    assert_eq!(s, 200, "{p}");
    assert_eq!(p["project_name"], json!("Gut-2026"));
    assert_eq!(p["owner"]["$ref"], json!(format!("/api/v1/users/{}", u.id)));
    assert_eq!(p["public"], json!(false));
    assert_eq!(p["permissions"].as_array().unwrap().len(), 4);
    let (s, b) = svc.post(Some(&u), "/api/v1/projects", json!({"project_name": "Gut-2026"})).await;
    assert_error(s, &b, 409);
    // Another organisation may use the same short name.
    let (s, _) = svc.post(Some(&other), "/api/v1/projects", json!({"project_name": "Gut-2026"})).await;
    assert_eq!(s, 200);
    let uri = p["$uri"].as_str().unwrap().to_string();
    let (s, p2) = svc.patch(Some(&u), &uri, json!({"name": "Gut study 2026", "description": null})).await;
    assert_eq!(s, 200, "{p2}");
    assert_eq!(p2["name"], json!("Gut study 2026"));
    assert_eq!(p2["description"], Value::Null);
    let (s, p3) = svc.post(Some(&u), &format!("{uri}/change_sharing"), json!({"public": true})).await;
    assert_eq!((s, p3["public"].clone()), (200, json!(true)));
    svc.find_user(&u, &other.email).await;
    let (s, p4) = svc
        .post(
            Some(&u),
            &format!("{uri}/add_user"),
            json!({"user": {"$ref": format!("/api/v1/users/{}", other.id)}, "permissions": ["can_see_files"]}),
        )
        .await;
    assert_eq!(s, 200, "{p4}");
    let (s, b) =
        svc.post(Some(&u), &format!("{uri}/add_user"), json!({"user": other.id, "permissions": ["can_fly"]})).await;
    assert_error(s, &b, 400);
    let (s, b) = svc.post(Some(&u), &format!("{uri}/add_user"), json!({"user": "0123456789abcdef"})).await;
    assert_error(s, &b, 400);
    let (s, members) = svc.get(Some(&other), &format!("{uri}/members")).await;
    assert_eq!(s, 200);
    assert_eq!(members.as_array().unwrap().len(), 2);
    assert_eq!(members[1]["permissions"], json!(["can_see_files"]));
    let (s, seen) = svc.get(Some(&other), &uri).await;
    assert_eq!((s, seen["permissions"].clone()), (200, json!(["can_see_files"])));
    let (s, _) = svc.post(Some(&u), &format!("{uri}/remove_user"), json!({"user": other.id})).await;
    assert_eq!(s, 200);
    let (s, public) = svc.get(None, "/api/v1/projects/public").await;
    assert_eq!((s, public.as_array().unwrap().len()), (200, 1));
    let (s, _) = svc.delete(Some(&u), &uri).await;
    assert_eq!(s, 204);
    let (s, b) = svc.get(Some(&u), &uri).await;
    assert_error(s, &b, 404);
}

#[tokio::test]
async fn samples_metadata_and_tags() {
    let svc = Service::start().await;
    let u = svc.user("a@lab.org").await;
    let id = svc
        .upload_sample(
            &u,
            "gut 1.fastq",
            &crate::fastq(3),
            json!({"metadata": {"platform": "Illumina MiSeq", "custom": {"site": "A"}}, "tags": [{"name": "run1"}]}),
        )
        .await;
    let (s, sample) = svc.get(Some(&u), &format!("/api/v1/samples/{id}")).await;
    assert_eq!(s, 200);
    assert_eq!(sample["filename"], json!("gut_1.fastq"));
    assert_eq!(sample["size"], json!(crate::fastq(3).len()));
    assert_eq!(sample["tags"].as_array().unwrap().len(), 1);
    let meta_uri = sample["metadata"]["$ref"].as_str().unwrap().to_string();
    let (s, meta) = svc.get(Some(&u), &meta_uri).await;
    assert_eq!(s, 200);
    assert_eq!(meta["platform"], json!("Illumina MiSeq"));
    assert_eq!(meta["custom"], json!({"site": "A"}));
    assert_eq!(meta["sample"], sref(&id));

    let (s, m2) = svc
        .patch(Some(&u), &meta_uri, json!({"name": "Gut 1", "starred": true, "date_collected": "2026-03-01T09:30:00+01:00", "location_lat": 52.5}))
        .await;
    assert_eq!(s, 200, "{m2}");
    assert_eq!(m2["date_collected"], json!("2026-03-01T08:30:00.000000+00:00"));
    assert_eq!(m2["starred"], json!(true));
    assert_eq!(m2["platform"], json!("Illumina MiSeq"), "fields not sent are kept");
    for bad in [
        json!({"platform": "Illumina MegaSeq"}),
        json!({"location_lat": 91}),
        json!({"date_collected": "yesterday"}),
        json!({"custom": {"x": [1]}}),
    ] {
        let (s, b) = svc.patch(Some(&u), &meta_uri, bad.clone()).await;
        assert_error(s, &b, 400);
    }

    let (s, tag) = svc.post(Some(&u), "/api/v1/tags", json!({"name": "reviewed", "sample": sref(&id)})).await;
    assert_eq!(s, 200, "{tag}");
    let (s, again) = svc.post(Some(&u), "/api/v1/tags", json!({"name": "reviewed", "sample": sref(&id)})).await;
    assert_eq!((s, &again["$uri"]), (200, &tag["$uri"]), "the same name is the same tag");
    let (s, b) = svc.post(Some(&u), "/api/v1/tags", json!({"name": "x".repeat(31), "sample": sref(&id)})).await;
    assert_error(s, &b, 400);
    let (s, tags) = svc.get(Some(&u), "/api/v1/tags").await;
    assert_eq!((s, tags.as_array().unwrap().len()), (200, 2));
    let (s, t) = svc.get(Some(&u), tag["$uri"].as_str().unwrap()).await;
    assert_eq!((s, t["name"].clone()), (200, json!("reviewed")));

    // PATCH: visibility, project, tags.
    let (_, p) = svc.post(Some(&u), "/api/v1/projects", json!({"project_name": "gut"})).await;
    let (s, patched) = svc
        .patch(
            Some(&u),
            &format!("/api/v1/samples/{id}"),
            json!({"visibility": "public", "project": {"$ref": p["$uri"]}, "tags": [{"$ref": tag["$uri"]}]}),
        )
        .await;
    assert_eq!(s, 200, "{patched}");
    assert_eq!(patched["visibility"], json!("public"));
    assert_eq!(patched["project"]["$ref"], p["$uri"]);
    assert_eq!(patched["tags"], json!([{"$ref": tag["$uri"]}]));
    for bad in [
        json!({"visibility": "importing"}),
        json!({"visibility": "secret"}),
        json!({"project": {"$ref": "/api/v1/projects/0123456789abcdef"}}),
        json!({"tags": ["0123456789abcdef"]}),
    ] {
        let (s, b) = svc.patch(Some(&u), &format!("/api/v1/samples/{id}"), bad.clone()).await;
        assert_error(s, &b, 400);
    }
    let (s, _) = svc.patch(Some(&u), &format!("/api/v1/samples/{id}"), json!({"project": null})).await;
    assert_eq!(s, 200);
    let (_, after) = svc.get(Some(&u), &format!("/api/v1/samples/{id}")).await;
    assert_eq!(after["project"], Value::Null);
}

#[tokio::test]
async fn jobs_runs_and_results() {
    let svc = Service::start().await;
    let u = svc.user("a@lab.org").await;
    let schema = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "confidence": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.1},
            "min_hits": {"type": "integer", "minimum": 1}
        }
    });
    let job = svc.job("Classify (demo)", "classification", schema.clone()).await;
    let panel_job = svc.job("AMR panel", "panel", json!({})).await;
    let sample = svc.upload_sample(&u, "s.fastq", &crate::fastq(2), json!({})).await;

    let (s, jobs) = svc.get(Some(&u), "/api/v1/jobs").await;
    assert_eq!((s, jobs.as_array().unwrap().len()), (200, 2 + svc.builtin_jobs().await.len()));
    assert!(jobs[0].get("job_args_schema").is_none(), "lists leave out the schema");
    let (s, one) = svc.get(Some(&u), &format!("/api/v1/jobs/{job}")).await;
    assert_eq!(s, 200);
    assert_eq!(one["draft"], json!(false));
    assert_eq!(one["job_args_schema"], schema);
    let (s, b) = svc.get(None, "/api/v1/jobs").await;
    assert_error(s, &b, 401);

    let run = |args: Value| json!({"sample": sref(&sample), "job_args": args});
    let (s, r) = svc.post(Some(&u), &format!("/api/v1/jobs/{job}/run"), run(json!({"confidence": 0.5}))).await;
    assert_eq!(s, 200, "{r}");
    let aref = r["$ref"].as_str().unwrap().to_string();
    let aid = aref.strip_prefix("/api/v1/analyses/").unwrap().to_string();
    assert!(aid.len() == 16 && aid.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()), "{aref}");
    for (bad, named) in [
        (json!({"confidence": 2}), "confidence"),
        (json!({"min_hits": "five"}), "min_hits"),
        (json!({"colour": 1}), "colour"),
    ] {
        let (s, b) = svc.post(Some(&u), &format!("/api/v1/jobs/{job}/run"), run(bad)).await;
        assert_error(s, &b, 400);
        assert!(b["message"].as_str().unwrap().contains(named), "{b}");
    }
    let mut long = run(json!({}));
    long["description"] = json!("x".repeat(251));
    let (s, b) = svc.post(Some(&u), &format!("/api/v1/jobs/{job}/run"), long).await;
    assert_error(s, &b, 400);
    let (s, b) = svc.post(Some(&u), "/api/v1/jobs/0123456789abcdef/run", run(json!({}))).await;
    assert_error(s, &b, 404);
    let (s, b) = svc
        .post(Some(&u), &format!("/api/v1/jobs/{job}/run"), json!({"sample": sref("0123456789abcdef"), "job_args": {}}))
        .await;
    assert_error(s, &b, 400);
    let mut with_defaults = run(json!({}));
    with_defaults["populate_default_arguments"] = json!(true);
    let (s, r2) = svc.post(Some(&u), &format!("/api/v1/jobs/{job}/run"), with_defaults).await;
    assert_eq!(s, 200);
    let (_, a2) = svc.get(Some(&u), r2["$ref"].as_str().unwrap()).await;
    assert_eq!(a2["job_args"], json!({"confidence": 0.1}));

    // Pending, and recorded in the durable queue.
    let (s, a) = svc.get(Some(&u), &aref).await;
    assert_eq!(s, 200);
    assert_eq!(
        (a["complete"].clone(), a["success"].clone(), a["analysis_type"].clone()),
        (json!(false), json!(false), json!("classification"))
    );
    let queued: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM job_queue").fetch_one(&svc.state.db).await.unwrap();
    assert_eq!(queued, 2);

    // Typed collections.
    let (s, c) = svc.get(Some(&u), &format!("/api/v1/classifications/{aid}")).await;
    assert_eq!((s, c["$uri"].clone()), (200, json!(format!("/api/v1/classifications/{aid}"))));
    for other in ["panels", "alignments", "functional_profiles"] {
        let (s, b) = svc.get(Some(&u), &format!("/api/v1/{other}/{aid}")).await;
        assert_error(s, &b, 404);
    }
    let (_, pr) = svc.post(Some(&u), &format!("/api/v1/jobs/{panel_job}/run"), run(json!({}))).await;
    let pid = pr["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let (s, p) = svc.get(Some(&u), &format!("/api/v1/panels/{pid}")).await;
    assert_eq!(s, 200);
    assert!(p.get("analysis_type").is_none(), "panels do not carry analysis_type: {p}");
    let (s, b) = svc.get(Some(&u), &format!("/api/v1/classifications/{pid}/readlevel")).await;
    assert_error(s, &b, 404);
    let (s, list) = svc.get(Some(&u), "/api/v1/classifications").await;
    assert_eq!((s, list.as_array().unwrap().len()), (200, 2));

    // Results: not before the engine stored them; then exactly what it stored.
    let (s, b) = svc.get(Some(&u), &format!("/api/v1/classifications/{aid}/results")).await;
    assert_error(s, &b, 400);
    let (s, b) = svc.get(Some(&u), &format!("/api/v1/classifications/{aid}/readlevel")).await;
    assert_error(s, &b, 400);
    let results = json!({"table": [{"tax_id": "1", "name": "root", "rank": "no rank", "parent_tax_id": null, "readcount": 0, "readcount_w_children": 2, "abundance": null}], "n_reads": 2, "host_tax_ids": []});
    let tsv_gz = b"\x1f\x8b pretend gzip".to_vec();
    mgds_server::routes::store_results(&svc.state, &aid, Ok((results.clone(), Some(tsv_gz.clone().into()))))
        .await
        .unwrap();
    let (s, got) = svc.get(Some(&u), &format!("/api/v1/classifications/{aid}/results")).await;
    assert_eq!((s, got), (200, results));
    let (s, rl) = svc.get(Some(&u), &format!("/api/v1/classifications/{aid}/readlevel")).await;
    assert_eq!(s, 200);
    let bytes = svc.http.get(rl["url"].as_str().unwrap()).send().await.unwrap().bytes().await.unwrap();
    assert_eq!(bytes.as_ref(), tsv_gz.as_slice());
    let (_, a) = svc.get(Some(&u), &aref).await;
    assert_eq!((a["complete"].clone(), a["success"].clone()), (json!(true), json!(true)));

    // A failure's message is kept to 255 characters.
    mgds_server::routes::store_results(&svc.state, &pid, Err("x".repeat(300))).await.unwrap();
    let (_, p) = svc.get(Some(&u), &format!("/api/v1/panels/{pid}")).await;
    assert_eq!((p["complete"].clone(), p["success"].clone()), (json!(true), json!(false)));
    assert_eq!(p["error_msg"].as_str().unwrap().len(), 255);
    let (s, b) = svc.get(Some(&u), &format!("/api/v1/panels/{pid}/results")).await;
    assert_error(s, &b, 400);

    // Deleting the sample takes its analyses with it.
    let (s, _) = svc.delete(Some(&u), &format!("/api/v1/samples/{sample}")).await;
    assert_eq!(s, 204);
    let (s, b) = svc.get(Some(&u), &aref).await;
    assert_error(s, &b, 404);
    let queued: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM job_queue").fetch_one(&svc.state.db).await.unwrap();
    assert_eq!(queued, 0);
}

#[tokio::test]
async fn sequencing_batches_move_forward_only() {
    use mgds_api::BatchStatus;
    let svc = Service::start().await;
    let u = svc.user_in("a@lab.org", Some("lab"), Role::Member).await;
    let mate = svc.user_in("b@lab.org", Some("lab"), Role::Member).await;
    let stranger = svc.user("c@elsewhere.org").await;
    let db = &svc.state.db;
    let b = mgds_server::admin::create_batch(db, "a@lab.org", "B-2026-001", Some("Gut run")).await.unwrap();
    assert_eq!(b.status, BatchStatus::Registered);
    assert!(
        mgds_server::admin::create_batch(db, "a@lab.org", "B-2026-001", None).await.is_err(),
        "batch numbers are unique"
    );
    let b = mgds_server::admin::set_batch_status(db, "B-2026-001", BatchStatus::Sequencing).await.unwrap();
    assert_eq!(b.status, BatchStatus::Sequencing);
    assert!(mgds_server::admin::set_batch_status(db, "B-2026-001", BatchStatus::Extracting).await.is_err());
    let (s, list) = svc.get(Some(&mate), "/api/v1/sequencing/batches").await;
    assert_eq!(s, 200);
    assert_eq!(list.as_array().unwrap().len(), 1);
    let one = &list[0];
    assert_eq!(one["status"], json!("sequencing"));
    assert_eq!(one["batch_number"], json!("B-2026-001"));
    assert_eq!(one["owner"]["$ref"], json!(format!("/api/v1/users/{}", u.id)));
    for field in ["$uri", "batch_number", "created_at", "name", "owner", "status"] {
        assert!(one.get(field).is_some(), "{field} is required");
    }
    let (s, got) = svc.get(Some(&u), one["$uri"].as_str().unwrap()).await;
    assert_eq!((s, &got), (200, one));
    let (s, body) = svc.get(Some(&stranger), one["$uri"].as_str().unwrap()).await;
    assert_error(s, &body, 404);
    let (_, none) = svc.get(Some(&stranger), "/api/v1/sequencing/batches").await;
    assert_eq!(none, json!([]));
    let b = mgds_server::admin::set_batch_status(db, "B-2026-001", BatchStatus::Canceled).await.unwrap();
    assert_eq!(b.status, BatchStatus::Canceled);
    assert!(
        mgds_server::admin::set_batch_status(db, "B-2026-001", BatchStatus::Done).await.is_err(),
        "canceled is final"
    );
}
