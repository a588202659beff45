//! The remaining resources: account, schema, documents (upload, list own and shared, share,
//! download whole or not at all), projects, tags, users, sequencing batches, metadata.

use std::sync::atomic::Ordering;

use mgds_api::{BatchStatus, DocumentUpdate};
use mgds_client::{Error, Filter, ResourceId, RetryPolicy, Sort};
use serde_json::json;

use super::proxy::{Direction, Fault, Proxy};
use super::{Service, fastq_bytes, names_in, quick_retry, write_file};

#[tokio::test]
async fn account_and_schema() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;
    let c = svc.client(&alice);
    let account = c.account().await.unwrap();
    assert_eq!(account.email.as_deref(), Some("alice@lab.example.org"));
    assert_eq!(account.user.id(), alice.id);
    let schema = c.schema().await.unwrap();
    assert!(schema["properties"]["samples"]["links"].is_array(), "{schema}");
    let samples = c.resource_schema("samples").await.unwrap();
    assert!(samples["links"].as_array().is_some_and(|l| !l.is_empty()));
    c.resource_schema("sequencing/batches").await.unwrap();
    assert!(matches!(c.resource_schema("nothing").await, Err(Error::NotFound { .. })));
    // The base address may be given with /api/v1.
    let c2 = mgds_client::Client::new(&format!("{}/api/v1/", svc.url), &alice.key).unwrap();
    assert_eq!(c2.account().await.unwrap().user, account.user);
}

#[tokio::test]
async fn documents_upload_share_download_unshare() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;
    let bob = svc.user("bob@lab.example.org").await;
    let a = svc.client(&alice);
    let b = svc.client(&bob);
    let bytes: Vec<u8> = (0..300_000u32).map(|i| (i * 31 % 256) as u8).collect();
    let path = write_file(&svc.scratch(), "run report.pdf", &bytes);
    let doc = a.documents().upload(&path).send().await.unwrap();
    assert_eq!(doc.filename, "run_report.pdf");
    assert_eq!(doc.size, bytes.len() as u64);
    assert!(doc.downloaders.is_empty());

    assert_eq!(a.documents().list_own().await.unwrap().len(), 1);
    assert!(a.documents().list_shared_with_me().await.unwrap().is_empty());
    assert!(b.documents().list().per_page(10).send().await.unwrap().items.is_empty());
    assert!(matches!(b.documents().get(&doc).await, Err(Error::NotFound { .. })));

    // Share with Bob, found by his exact address: he sees it as shared with him, and downloads it.
    let found = a.users().find_by_email(&bob.email.to_uppercase()).await.unwrap().expect("Bob has an account");
    assert_eq!(found.resource_id(), bob.id);
    assert!(a.users().find_by_email("nobody@nowhere.test").await.unwrap().is_none());
    let shared = a.documents().share(&doc, &bob.id).await.unwrap();
    assert_eq!(shared.downloaders.len(), 1);
    assert_eq!(shared.downloaders[0].id(), bob.id);
    let with_bob = b.documents().list_shared_with_me().await.unwrap();
    assert_eq!(with_bob.len(), 1);
    assert!(b.documents().list_own().await.unwrap().is_empty());
    let uri = b.documents().download_uri(&doc).await.unwrap();
    assert!(uri.download_uri.contains("signature="), "{}", uri.download_uri);
    let dest = svc.scratch().join("bob-copy.pdf");
    assert_eq!(b.documents().download(&doc, &dest).await.unwrap(), bytes.len() as u64);
    assert_eq!(std::fs::read(&dest).unwrap(), bytes);
    // Bob may download but not change it.
    assert!(matches!(b.documents().rename(&doc, "mine.pdf").await, Err(Error::Forbidden { .. })));

    // Alice renames and describes it.
    let renamed = a.documents().rename(&doc, "final.pdf").await.unwrap();
    assert_eq!(renamed.filename, "final.pdf");
    let described = a
        .documents()
        .update(&doc, &DocumentUpdate { filename: None, description: Some(Some("QC".into())) })
        .await
        .unwrap();
    assert_eq!(described.description.as_deref(), Some("QC"));
    let filtered = a.documents().list().filter(Filter::new().eq("filename", "final.pdf")).send().await.unwrap();
    assert_eq!(filtered.items.len(), 1);

    // Unshare: Bob no longer sees it.
    let unshared = a.documents().unshare(&doc, &bob.id).await.unwrap();
    assert!(unshared.downloaders.is_empty());
    assert!(matches!(b.documents().get(&doc).await, Err(Error::NotFound { .. })));
    assert!(b.documents().list_shared_with_me().await.unwrap().is_empty());

    a.documents().delete(&doc).await.unwrap();
    assert!(matches!(a.documents().get(&doc).await, Err(Error::NotFound { .. })));
}

#[tokio::test]
async fn a_broken_download_leaves_no_partial_file_and_a_retried_one_is_whole() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;
    let bytes = fastq_bytes(600_000);
    let path = write_file(&svc.scratch(), "s.fastq", &bytes);
    let sample = svc.client(&alice).samples().upload(&path).send().await.unwrap();
    let dir = svc.scratch().join("downloads");
    std::fs::create_dir_all(&dir).unwrap();
    let dest = dir.join("s.fastq");

    // The connection carrying the file is cut after 100 kB; no retries: an error, no file.
    let cut = Fault::Cut { method: "GET", path: "/storage/", direction: Direction::Down, after: 100_000, times: 1 };
    let proxy = Proxy::start(&svc.url, cut).await;
    let c = svc.client_via(&alice, &proxy.url, RetryPolicy::none());
    let err = c.samples().download(&sample, &dest).await.unwrap_err();
    assert!(matches!(err, Error::Transport { .. }), "{err:?}");
    assert_eq!(proxy.stats.cuts.load(Ordering::SeqCst), 1);
    assert!(names_in(&dir).is_empty(), "no partial or temporary file: {:?}", names_in(&dir));

    // An existing file is not touched by a failed download either.
    std::fs::write(&dest, b"old").unwrap();
    let proxy = Proxy::start(&svc.url, cut).await;
    let c = svc.client_via(&alice, &proxy.url, RetryPolicy::none());
    assert!(c.samples().download(&sample, &dest).await.is_err());
    assert_eq!(std::fs::read(&dest).unwrap(), b"old");
    assert_eq!(names_in(&dir), ["s.fastq"]);

    // With retries, the second attempt starts from the first byte and the file is whole.
    let proxy = Proxy::start(&svc.url, cut).await;
    let c = svc.client_via(&alice, &proxy.url, quick_retry());
    let n = c.samples().download(&sample, &dest).await.unwrap();
    assert_eq!(proxy.stats.cuts.load(Ordering::SeqCst), 1);
    assert_eq!(n, bytes.len() as u64);
    assert_eq!(std::fs::read(&dest).unwrap(), bytes);
    assert_eq!(names_in(&dir), ["s.fastq"]);
}

#[tokio::test]
async fn projects_members_and_sharing() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;
    let bob = svc.user("bob@lab.example.org").await;
    let a = svc.client(&alice);
    let b = svc.client(&bob);

    let p =
        a.projects().create("gut-2026").name("Gut 2026").description("cohort").external_id("G26").send().await.unwrap();
    assert_eq!(p.project_name.as_deref(), Some("gut-2026"));
    assert_eq!(p.name, "Gut 2026");
    assert_eq!(p.permissions.len(), 4);
    assert!(!p.public);
    // A name the API forbids is refused before sending.
    assert!(
        matches!(a.projects().create("a b").send().await, Err(Error::InvalidInput(m)) if m.contains("project_name"))
    );

    assert_eq!(a.projects().get(&p).await.unwrap(), p);
    assert_eq!(a.projects().list().per_page(5).send().await.unwrap().items.len(), 1);
    assert!(b.projects().list().per_page(5).send().await.unwrap().items.is_empty());

    let updated = a.projects().update(&p).name("Gut cohort").description(None).send().await.unwrap();
    assert_eq!(updated.name, "Gut cohort");
    assert_eq!(updated.description, None);

    a.users().find_by_email(&bob.email).await.unwrap().expect("Bob has an account");
    a.projects().add_user(&p, &bob.id, Some(vec!["can_see_files".into()])).await.unwrap();
    let members = a.projects().members(&p).await.unwrap();
    assert_eq!(members.len(), 2);
    assert_eq!(members[1].user.id(), bob.id);
    assert_eq!(members[1].permissions, ["can_see_files"]);
    let seen_by_bob = b.projects().get(&p).await.unwrap();
    assert_eq!(seen_by_bob.permissions, ["can_see_files"]);
    // Bob may not change it.
    assert!(matches!(b.projects().change_sharing(&p, true).await, Err(Error::Forbidden { .. })));

    a.projects().remove_user(&p, &bob.id).await.unwrap();
    assert!(matches!(b.projects().get(&p).await, Err(Error::NotFound { .. })));

    let public = a.projects().change_sharing(&p, true).await.unwrap();
    assert!(public.public);
    assert_eq!(b.projects().list_public().per_page(5).send().await.unwrap().items.len(), 1);
    assert!(matches!(b.projects().members(&p).await, Err(Error::Forbidden { .. })));

    a.projects().delete(&p).await.unwrap();
    assert!(matches!(a.projects().get(&p).await, Err(Error::NotFound { .. })));
}

#[tokio::test]
async fn tags_users_batches_and_metadata() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;
    let bob = svc.user("bob@lab.example.org").await;
    let c = svc.client(&alice);
    let path = write_file(&svc.scratch(), "s.fastq", &fastq_bytes(1000));
    let sample = c.samples().upload(&path).send().await.unwrap();

    // Tags: created and attached; the same name is the same tag.
    let t = c.tags().create("outbreak", &sample).await.unwrap();
    assert_eq!(t.name.as_deref(), Some("outbreak"));
    let again = c.tags().create("outbreak", &sample).await.unwrap();
    assert_eq!(again.uri, t.uri);
    assert_eq!(c.tags().get(&t).await.unwrap(), t);
    assert_eq!(c.tags().list().per_page(10).send().await.unwrap().items, vec![t.clone()]);
    let tagged = c
        .samples()
        .list()
        .filter(Filter::new().contains_all("tags", [&mgds_api::Ref { uri: t.uri.clone() }]))
        .send()
        .await
        .unwrap();
    assert_eq!(tagged.items.len(), 1);

    // Users of the organisation.
    let users = c.users().list().sort(Sort::asc("email")).per_page(10).send().await.unwrap();
    let emails: Vec<_> = users.items.iter().filter_map(|u| u.email.clone()).collect();
    assert_eq!(emails, ["alice@lab.example.org", "bob@lab.example.org"]);
    assert_eq!(c.users().get(&bob.id).await.unwrap().email.as_deref(), Some("bob@lab.example.org"));

    // Sequencing batches, registered by the operator.
    let batch =
        mgds_server::admin::create_batch(&svc.state.db, &alice.email, "B-0001", Some("March run")).await.unwrap();
    mgds_server::admin::set_batch_status(&svc.state.db, "B-0001", BatchStatus::Sequencing).await.unwrap();
    let got = c.batches().get(&batch).await.unwrap();
    assert_eq!(got.status, BatchStatus::Sequencing);
    assert_eq!(got.name.as_deref(), Some("March run"));
    let listed = c.batches().list().filter(Filter::new().eq("status", "sequencing")).send().await.unwrap();
    assert_eq!(listed.items, vec![got]);

    // Metadata: get, update, list.
    let md_ref = sample.metadata.clone().unwrap();
    let updated = c
        .metadata()
        .update(&md_ref)
        .starred(true)
        .name(Some("Patient 7 stool".into()))
        .platform(Some("Illumina MiSeq".into()))
        .external_sample_id(Some("P7".into()))
        .description(Some("baseline".into()))
        .custom("ward", "3B")
        .custom("day", 4)
        .send()
        .await
        .unwrap();
    assert!(updated.starred);
    assert_eq!(updated.custom.get("day"), Some(&json!(4)));
    assert_eq!(c.metadata().get(&md_ref).await.unwrap(), updated);
    let err = c.metadata().update(&md_ref).platform(Some("Abacus".into())).send().await.unwrap_err();
    assert!(matches!(err, Error::InvalidRequest { status: 400, .. }) && err.to_string().contains("platform"), "{err}");
    let found = c.metadata().list().filter(Filter::new().eq("external_sample_id", "P7")).send().await.unwrap();
    assert_eq!(found.items.len(), 1);
    // Bob, in the same organisation, may not edit Alice's private sample's metadata: he cannot see it.
    let b = svc.client(&bob);
    assert!(matches!(b.metadata().update(&md_ref).starred(false).send().await, Err(Error::NotFound { .. })));
}
