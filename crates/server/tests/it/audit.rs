//! The audit trail: what is recorded (who, when, from where, with which client, before and
//! after), who reads it, the chain that shows tampering, and expiry from a signed checkpoint.

use std::collections::BTreeSet;

use mgds_server::admin::Role;
use mgds_server::store::audit;

use super::*;

/// Chains what was recorded (the service's chainer does this every few seconds).
async fn chained(svc: &Service) {
    audit::chain(&svc.state.db).await.unwrap();
}

/// The organisation's audit trail as `who` reads it: every entry, newest first.
async fn trail(svc: &Service, who: &TestUser) -> Vec<Value> {
    let (s, b) = svc.get(Some(who), "/api/v1/audit?per_page=1000").await;
    assert_eq!(s, 200, "{b}");
    b.as_array().unwrap().clone()
}

fn find<'a>(entries: &'a [Value], action: &str) -> &'a Value {
    entries
        .iter()
        .find(|e| e["action"] == json!(action))
        .unwrap_or_else(|| panic!("no {action} in {}", serde_json::to_string_pretty(entries).unwrap()))
}

#[tokio::test]
async fn every_change_and_download_is_recorded_with_who_where_and_before_and_after() {
    let svc = Service::start().await;
    let admin = svc.user_in("admin@a.lab", Some("Lab A"), Role::Admin).await;
    let member = svc.user_in("member@a.lab", Some("Lab A"), Role::Member).await;
    let outsider = svc.user_in("admin@b.lab", Some("Lab B"), Role::Admin).await;
    let job = svc.job("Classify", "classification", json!({})).await;

    // The member's day: a sample, its metadata, visibility and tag, a project, a document
    // shared and downloaded, a job run; then the admin's changes.
    let sample = svc.upload_sample(&member, "gut.fastq", &fastq(3), json!({})).await;
    let (_, s) = svc.get(Some(&member), &format!("/api/v1/samples/{sample}")).await;
    let metadata = s["metadata"]["$ref"].as_str().unwrap().to_string();
    let r = svc
        .as_user(Some(&member), Method::PATCH, &metadata)
        .header("user-agent", "onecodex/0.17.0")
        .json(&json!({"description": "ward 3", "platform": "Illumina MiSeq"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    svc.patch(Some(&member), &metadata, json!({"description": "ward 4"})).await;
    svc.patch(Some(&member), &format!("/api/v1/samples/{sample}"), json!({"visibility": "shared"})).await;
    svc.post(
        Some(&member),
        "/api/v1/tags",
        json!({"name": "outbreak", "sample": {"$ref": format!("/api/v1/samples/{sample}")}}),
    )
    .await;
    let (_, p) = svc.post(Some(&member), "/api/v1/projects", json!({"project_name": "ward-3"})).await;
    let project = p["$uri"].as_str().unwrap().to_string();
    svc.post(Some(&member), &format!("{project}/change_sharing"), json!({"public": true})).await;
    let doc = svc.upload_document(&member, "protocol.pdf", b"%PDF-1.7").await;
    svc.post(Some(&member), &format!("/api/v1/documents/{doc}/add_user"), json!({"user": admin.id})).await;
    let (s, _) = svc.post(Some(&admin), &format!("/api/v1/documents/{doc}/download_uri"), json!({})).await;
    assert_eq!(s, 200);
    svc.post(Some(&member), &format!("/api/v1/samples/{sample}/download_uri"), json!({})).await;
    let (s, run) = svc
        .post(
            Some(&member),
            &format!("/api/v1/jobs/{job}/run"),
            json!({"sample": {"$ref": format!("/api/v1/samples/{sample}")}, "job_args": {}}),
        )
        .await;
    assert_eq!(s, 200, "{run}");
    svc.patch(Some(&admin), &format!("/api/v1/organization/users/{}", member.id), json!({"disabled": true})).await;
    svc.patch(Some(&admin), &format!("/api/v1/organization/users/{}", member.id), json!({"disabled": false})).await;
    svc.delete(Some(&admin), &format!("/api/v1/samples/{sample}")).await;
    chained(&svc).await;

    let entries = trail(&svc, &admin).await;
    let actions: BTreeSet<&str> = entries.iter().map(|e| e["action"].as_str().unwrap()).collect();
    for want in [
        "user.created",
        "sample.uploaded",
        "metadata.updated",
        "sample.updated",
        "sample.tagged",
        "project.created",
        "project.sharing_changed",
        "document.uploaded",
        "document.shared",
        "document.downloaded",
        "sample.downloaded",
        "job.run",
        "user.disabled",
        "user.enabled",
        "sample.deleted",
    ] {
        assert!(actions.contains(want), "{want} in {actions:?}");
    }
    // Who, from where, with what, before and after.
    let first_edit = entries
        .iter()
        .filter(|e| e["action"] == json!("metadata.updated"))
        .last()
        .expect("the first metadata change (the list is newest first)");
    assert_eq!(first_edit["actor_email"], json!("member@a.lab"));
    assert_eq!(first_edit["actor"]["$ref"], json!(format!("/api/v1/users/{}", member.id)));
    assert_eq!(first_edit["address"], json!("127.0.0.1"));
    assert_eq!(first_edit["client"], json!("key: onecodex/0.17.0"));
    assert_eq!(first_edit["changes"]["description"], json!([null, "ward 3"]));
    assert_eq!(first_edit["changes"]["platform"], json!([null, "Illumina MiSeq"]));
    let second = find(&entries, "metadata.updated");
    assert_eq!(second["changes"], json!({"description": ["ward 3", "ward 4"]}), "only what changed");
    assert_eq!(find(&entries, "sample.updated")["changes"]["visibility"], json!(["private", "shared"]));
    let deleted = find(&entries, "sample.deleted");
    assert_eq!(
        (deleted["actor_email"].as_str(), deleted["target_id"].as_str()),
        (Some("admin@a.lab"), Some(sample.as_str()))
    );
    assert_eq!(find(&entries, "document.downloaded")["actor_email"], json!("admin@a.lab"));
    assert_eq!(find(&entries, "user.created")["actor"], Value::Null, "the operator made the users");
    assert_eq!(find(&entries, "user.created")["client"], json!("operator"));
    // Chained: numbered without gaps, newest first.
    let seqs: Vec<i64> = entries.iter().map(|e| e["seq"].as_i64().expect("chained")).collect();
    let mut sorted = seqs.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (1..=seqs.len() as i64).collect::<Vec<_>>());

    // The list rules: a filter, paging with the total and links, another sort.
    let filter = percent_encoding::utf8_percent_encode(
        &json!({"action": {"$startswith": "user."}}).to_string(),
        percent_encoding::NON_ALPHANUMERIC,
    )
    .to_string();
    let r = svc
        .as_user(Some(&admin), Method::GET, &format!("/api/v1/audit?where={filter}&per_page=1"))
        .send()
        .await
        .unwrap();
    let users = entries.iter().filter(|e| e["action"].as_str().unwrap().starts_with("user.")).count();
    assert_eq!(r.headers()["x-total-count"].to_str().unwrap(), users.to_string());
    assert!(r.headers()["link"].to_str().unwrap().contains("rel=\"next\""));
    let (_, oldest) = svc.get(Some(&admin), "/api/v1/audit?sort=%7B%22seq%22%3Afalse%7D&per_page=1").await;
    assert_eq!(oldest[0]["seq"], json!(1));

    // Only the organisation's admins read it, and only their organisation's.
    let (s, b) = svc.get(Some(&member), "/api/v1/audit").await;
    assert_error(s, &b, 403);
    let theirs = trail(&svc, &outsider).await;
    assert!(
        theirs.iter().all(|e| e["actor_email"] == json!(null) || e["actor_email"] == json!("admin@b.lab")),
        "{theirs:?}"
    );
    assert_eq!(theirs.len(), 1, "Lab B's trail holds its own user's creation only: {theirs:?}");
    audit_verifies(&svc).await;
}

async fn audit_verifies(svc: &Service) {
    for v in audit::verify(&svc.state.db, &svc.state.audit.key, None).await.unwrap() {
        assert_eq!(v.problem, None, "{v:?}");
    }
}

#[tokio::test]
async fn a_changed_removed_or_forged_entry_breaks_the_chain_where_it_is() {
    let svc = Service::start().await;
    let admin = svc.user_in("admin@a.lab", Some("Lab A"), Role::Admin).await;
    for i in 0..5 {
        svc.post(Some(&admin), "/api/v1/projects", json!({"project_name": format!("p-{i}")})).await;
    }
    chained(&svc).await;
    let verified = audit::verify(&svc.state.db, &svc.state.audit.key, Some("Lab A")).await.unwrap();
    assert_eq!((verified.len(), verified[0].entries, verified[0].problem.clone()), (1, 6, None));

    // An entry changed in the database: the chain breaks at it.
    let db = svc.state.db.clone();
    let set = |sql: &'static str| {
        let db = db.clone();
        async move { sqlx::query(sql).execute(&db).await.unwrap() }
    };
    set("UPDATE audit_entries SET changes = '{\"project_name\": \"innocent\"}' WHERE seq = 3").await;
    let v = &audit::verify(&svc.state.db, &svc.state.audit.key, Some("Lab A")).await.unwrap()[0];
    assert_eq!(v.entries, 2);
    assert!(v.problem.as_deref().unwrap().contains("entry 3 (project.created"), "{v:?}");
    // Its hash recomputed too: then the next one no longer follows it.
    let row: audit::Stored = sqlx::query_as(
        "SELECT id, organization_id, at, actor_id, actor_email, address, client, action, target_kind, target_id, changes, \
         seq, prev_hash, hash FROM audit_entries WHERE seq = 3",
    )
    .fetch_one(&svc.state.db)
    .await
    .unwrap();
    let forged = audit::entry_hash(row.prev_hash.as_deref().unwrap(), 3, &row);
    sqlx::query("UPDATE audit_entries SET hash = $1 WHERE seq = 3").bind(&forged).execute(&svc.state.db).await.unwrap();
    let v = &audit::verify(&svc.state.db, &svc.state.audit.key, Some("Lab A")).await.unwrap()[0];
    assert!(v.problem.as_deref().unwrap().contains("entry 4 does not follow entry 3"), "{v:?}");
    // An entry removed.
    set("DELETE FROM audit_entries WHERE seq = 5").await;
    sqlx::query("DELETE FROM audit_entries WHERE seq >= 3").execute(&svc.state.db).await.unwrap();
    svc.post(Some(&admin), "/api/v1/projects", json!({"project_name": "p-after"})).await;
    chained(&svc).await;
    let v = &audit::verify(&svc.state.db, &svc.state.audit.key, Some("Lab A")).await.unwrap()[0];
    assert_eq!(v.problem, None, "the chain goes on after its last entry: {v:?}");
    let n: i64 = sqlx::query_scalar("SELECT MAX(seq) FROM audit_entries").fetch_one(&svc.state.db).await.unwrap();
    assert_eq!(n, 3);
    set("DELETE FROM audit_entries WHERE seq = 2").await;
    let v = &audit::verify(&svc.state.db, &svc.state.audit.key, Some("Lab A")).await.unwrap()[0];
    assert!(v.problem.as_deref().unwrap().contains("entry 2 is missing"), "{v:?}");
}

#[tokio::test]
async fn entries_past_the_retention_go_after_a_signed_checkpoint_that_verifying_starts_from() {
    let svc = Service::start().await;
    let admin = svc.user_in("admin@a.lab", Some("Lab A"), Role::Admin).await;
    for i in 0..4 {
        svc.post(Some(&admin), "/api/v1/projects", json!({"project_name": format!("old-{i}")})).await;
    }
    chained(&svc).await;
    // The first three are a year old (their hashes are recomputed as if they had been).
    sqlx::query("UPDATE audit_entries SET at = '2025-01-01T00:00:00.000000+00:00' WHERE seq <= 3")
        .execute(&svc.state.db)
        .await
        .unwrap();
    let rows: Vec<audit::Stored> = sqlx::query_as(
        "SELECT id, organization_id, at, actor_id, actor_email, address, client, action, target_kind, target_id, changes, \
         seq, prev_hash, hash FROM audit_entries ORDER BY seq",
    )
    .fetch_all(&svc.state.db)
    .await
    .unwrap();
    let mut prev = audit::GENESIS.to_string();
    for r in &rows {
        let h = audit::entry_hash(&prev, r.seq.unwrap(), r);
        sqlx::query("UPDATE audit_entries SET prev_hash = $1, hash = $2 WHERE id = $3")
            .bind(&prev)
            .bind(&h)
            .bind(&r.id)
            .execute(&svc.state.db)
            .await
            .unwrap();
        prev = h;
    }
    audit_verifies(&svc).await;
    let removed = audit::expire(&svc.state.db, &svc.state.audit.key, 90).await.unwrap();
    assert_eq!(removed, 3);
    let v = &audit::verify(&svc.state.db, &svc.state.audit.key, Some("Lab A")).await.unwrap()[0];
    assert_eq!((v.from_seq, v.entries, v.problem.clone()), (3, 2, None), "{v:?}");
    // New entries go on from the checkpoint.
    svc.post(Some(&admin), "/api/v1/projects", json!({"project_name": "new"})).await;
    chained(&svc).await;
    let v = &audit::verify(&svc.state.db, &svc.state.audit.key, Some("Lab A")).await.unwrap()[0];
    assert_eq!((v.entries, v.problem.clone()), (3, None));
    // A checkpoint changed without the key, or checked with another key, is refused.
    let other = audit::verify(&svc.state.db, b"another key", Some("Lab A")).await.unwrap();
    assert!(other[0].problem.as_deref().unwrap().contains("valid signature"), "{other:?}");
    sqlx::query("UPDATE audit_checkpoints SET hash = 'ff'").execute(&svc.state.db).await.unwrap();
    let v = &audit::verify(&svc.state.db, &svc.state.audit.key, Some("Lab A")).await.unwrap()[0];
    assert!(v.problem.as_deref().unwrap().contains("valid signature"), "{v:?}");
}

/// Writes at once from many clients are all chained, in one order, without gaps.
#[tokio::test]
async fn concurrent_writes_are_all_chained() {
    let svc = Service::start().await;
    let admin = svc.user_in("admin@a.lab", Some("Lab A"), Role::Admin).await;
    let writes = (0..40).map(|i| {
        let (svc, admin) = (&svc, &admin);
        async move { svc.post(Some(admin), "/api/v1/projects", json!({"project_name": format!("c-{i}")})).await.0 }
    });
    let chainer = async {
        for _ in 0..5 {
            chained(&svc).await;
            tokio::task::yield_now().await;
        }
    };
    let (statuses, ()) = tokio::join!(futures::future::join_all(writes), chainer);
    assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
    chained(&svc).await;
    let v = &audit::verify(&svc.state.db, &svc.state.audit.key, Some("Lab A")).await.unwrap()[0];
    assert_eq!((v.entries, v.unchained, v.problem.clone()), (41, 0, None));
}
