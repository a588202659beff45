//! Lists: where, sort, page, per_page, X-Total-Count and Link.

use mgds_server::admin::Role;
use std::collections::HashSet;

use reqwest::Method;
use serde_json::{Value, json};

use crate::{Service, TestUser, assert_error};

async fn page(svc: &Service, user: &TestUser, query: &str) -> (u16, Value, Option<u64>, String) {
    list(svc, user, "samples", query).await
}

async fn list(svc: &Service, user: &TestUser, collection: &str, query: &str) -> (u16, Value, Option<u64>, String) {
    let r = svc.as_user(Some(user), Method::GET, &format!("/api/v1/{collection}?{query}")).send().await.unwrap();
    let total = r.headers().get("x-total-count").map(|v| v.to_str().unwrap().parse().unwrap());
    let link = r.headers().get("link").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    let (status, body) = crate::json_of(r).await;
    (status, body, total, link)
}

fn enc(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn uris(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|s| s["$uri"].as_str().unwrap().to_string()).collect()
}

/// 23 samples with sizes 1..=23 where several share a size (ties for the sort).
async fn populate(svc: &Service, user: &TestUser) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..23usize {
        let reads = crate::fastq(1 + i % 4);
        let name = if i % 2 == 0 { format!("gut_{i}.fastq") } else { format!("SOIL_{i}.fq") };
        ids.push(svc.upload_sample(user, &name, &reads, json!({})).await);
    }
    ids
}

#[tokio::test]
async fn pages_concatenate_to_the_whole_list_in_a_stable_order() {
    let svc = Service::start().await;
    let u = svc.user("a@lab.org").await;
    populate(&svc, &u).await;
    for sort in ["", "&sort=%7B%22size%22%3Atrue%7D", "&sort=%7B%22filename%22%3Afalse%7D"] {
        let (_, all, total, _) = page(&svc, &u, &format!("per_page=1000{sort}")).await;
        assert_eq!(total, Some(23));
        let all = uris(&all);
        let mut joined = Vec::new();
        for p in 1..=5 {
            let (status, body, total, link) = page(&svc, &u, &format!("page={p}&per_page=5{sort}")).await;
            assert_eq!(status, 200);
            assert_eq!(total, Some(23));
            assert!(link.contains("rel=\"self\"") && link.contains("rel=\"last\""), "{link}");
            assert!(link.contains("page=5&per_page=5>; rel=\"last\""), "{link}");
            assert_eq!(link.contains("rel=\"next\""), p < 5, "{link}");
            assert_eq!(link.contains("rel=\"prev\""), p > 1, "{link}");
            joined.extend(uris(&body));
        }
        assert_eq!(joined, all, "pages in order equal the whole list (sort {sort:?})");
        assert_eq!(joined.iter().collect::<HashSet<_>>().len(), 23, "no duplicates");
    }
    // Descending by size really is descending.
    let (_, body, _, _) = page(&svc, &u, "per_page=1000&sort=%7B%22size%22%3Atrue%7D").await;
    let sizes: Vec<u64> = body.as_array().unwrap().iter().map(|s| s["size"].as_u64().unwrap()).collect();
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
    // Default page size is 50 and a page past the end is empty with the same total.
    let (_, body, total, _) = page(&svc, &u, "page=9&per_page=5").await;
    assert_eq!(body, json!([]));
    assert_eq!(total, Some(23));
}

#[tokio::test]
async fn where_filters_and_counts() {
    let svc = Service::start().await;
    let u = svc.user("a@lab.org").await;
    let ids = populate(&svc, &u).await;
    let q = |w: Value| format!("per_page=1000&where={}", enc(&w.to_string()));

    let (_, body, total, link) = page(&svc, &u, &q(json!({"filename": {"$icontains": "soil"}}))).await;
    assert_eq!(total, Some(11));
    assert_eq!(body.as_array().unwrap().len(), 11);
    assert!(link.contains("where="), "the Link keeps the filter: {link}");
    let (_, _, total, _) = page(&svc, &u, &q(json!({"filename": {"$contains": "soil"}}))).await;
    assert_eq!(total, Some(0), "$contains is case-sensitive");
    let (_, _, total, _) = page(&svc, &u, &q(json!({"filename": {"$startswith": "gut_1"}}))).await;
    assert_eq!(total, Some(5), "gut_10, gut_12, gut_14, gut_16, gut_18");
    let big = crate::fastq(4).len() as u64;
    let (_, _, total, _) = page(&svc, &u, &q(json!({"size": {"$gte": big}}))).await;
    assert_eq!(total, Some(5), "reads of 4 records: i % 4 == 3 for i < 23");
    let (_, _, total, _) = page(&svc, &u, &q(json!({"size": {"$gt": big}}))).await;
    assert_eq!(total, Some(0));
    let pick = vec![format!("/api/v1/samples/{}", ids[0]), format!("/api/v1/samples/{}", ids[5])];
    let (_, body, total, _) = page(&svc, &u, &q(json!({"$uri": {"$in": pick}}))).await;
    assert_eq!(total, Some(2));
    assert_eq!(uris(&body).into_iter().collect::<HashSet<_>>(), pick.into_iter().collect());
    let (_, _, total, _) =
        page(&svc, &u, &q(json!({"created_at": {"$between": ["2000-01-01T00:00:00Z", "2100-01-01T00:00:00+02:00"]}})))
            .await;
    assert_eq!(total, Some(23));
    let (_, _, total, _) = page(&svc, &u, &q(json!({"created_at": {"$lt": "2000-01-01"}}))).await;
    assert_eq!(total, Some(0));
    let (_, _, total, _) = page(&svc, &u, &q(json!({"visibility": "private", "project": null}))).await;
    assert_eq!(total, Some(23));
    // A value that looks like SQL is only ever a value.
    let (status, _, total, _) = page(&svc, &u, &q(json!({"filename": "x' OR '1'='1"}))).await;
    assert_eq!((status, total), (200, Some(0)));

    // Tags: filter by a tag reference.
    let (s, tag) = svc
        .post(
            Some(&u),
            "/api/v1/tags",
            json!({"name": "batch7", "sample": {"$ref": format!("/api/v1/samples/{}", ids[3])}}),
        )
        .await;
    assert_eq!(s, 200, "{tag}");
    let (_, body, total, _) = page(&svc, &u, &q(json!({"tags": {"$ref": tag["$uri"]}}))).await;
    assert_eq!(total, Some(1));
    assert_eq!(uris(&body), vec![format!("/api/v1/samples/{}", ids[3])]);
}

#[tokio::test]
async fn bad_list_parameters_answer_400_naming_the_problem() {
    let svc = Service::start().await;
    let u = svc.user("a@lab.org").await;
    let cases = [
        (format!("where={}", enc(r#"{"colour": "red"}"#)), "colour"),
        (format!("where={}", enc(r#"{"filename": {"$regex": "x"}}"#)), "$regex"),
        (format!("where={}", enc(r#"{"size": {"$gt": "big"}}"#)), "size"),
        (format!("where={}", enc("{not json")), "where"),
        (format!("sort={}", enc(r#"{"colour": true}"#)), "colour"),
        ("per_page=1001".to_string(), "per_page"),
        ("per_page=0".to_string(), "per_page"),
        ("page=0".to_string(), "page"),
        ("page=two".to_string(), "page"),
    ];
    for (query, named) in cases {
        let (status, body, _, _) = page(&svc, &u, &query).await;
        assert_error(status, &body, 400);
        assert!(body["message"].as_str().unwrap().contains(named), "{query}: {body}");
    }
}

/// Behind a proxy that serves the service under a path (`--public-url .../mgds/`), every address
/// it gives keeps the path: list links, upload forms, download addresses; the S3 endpoint is
/// the host alone (S3 signatures cover the path; the proxy passes `/mgds-uploads/` through).
#[tokio::test]
async fn behind_a_proxy_under_a_path_every_address_keeps_the_path() {
    let svc = Service::start().await;
    let u = svc.user("lab@example.org").await;
    for _ in 0..3 {
        let (s, r) = svc.post(Some(&u), "/api/v1/samples/preupload", json!({})).await;
        assert_eq!(s, 200, "{r}");
    }
    // The same service answering as `--public-url https://lab.example.org/mgds/` would (a
    // proxy that takes the path off before passing requests on).
    let bound = mgds_server::bind("127.0.0.1:0".parse().unwrap(), None).await.unwrap();
    let direct = bound.url();
    let state = svc.state.clone().with_public_url("https://lab.example.org/mgds/");
    tokio::spawn(mgds_server::serve(bound, state, std::future::pending()));
    let r = svc
        .http
        .get(format!("{direct}/api/v1/samples?per_page=1&page=2"))
        .basic_auth(&u.key, Some(""))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let link = r.headers().get("link").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    for rel in ["self", "first", "prev", "next", "last"] {
        assert!(link.contains(&format!("rel=\"{rel}\"")), "{link}");
    }
    assert_eq!(link.matches("</mgds/api/v1/samples?").count(), 5, "every address keeps the proxy's path: {link}");
    assert!(!link.contains("</api/"), "{link}");
    let behind =
        |method: Method, path: &str| svc.http.request(method, format!("{direct}{path}")).basic_auth(&u.key, Some(""));
    let bytes = crate::fastq(3);
    let init: Value = behind(Method::POST, "/api/v1/samples/init_upload")
        .json(&json!({"filename": "p.fastq", "size": bytes.len()}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let multipart: Value = behind(Method::POST, "/api/v1/samples/init_multipart_upload")
        .json(&json!({"filename": "q.fastq"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(multipart["s3_endpoint"], json!("https://lab.example.org"), "{multipart}");
    assert!(multipart["callback_url"].as_str().unwrap().starts_with("/api/v1/samples/upload_callback/"));
    if svc.on_s3() {
        return; // Forms and downloads are then the store's own addresses.
    }
    assert_eq!(init["upload_url"], json!("https://lab.example.org/mgds/storage/mgds"), "{init}");
    // The form goes through the proxy to the service, which stores the file.
    let id = init["sample_id"].as_str().unwrap();
    let r = crate::post_form(
        &svc.http,
        &format!("{direct}/storage/mgds"),
        init["additional_fields"].as_object().unwrap(),
        &bytes,
    )
    .await;
    assert_eq!(r.status().as_u16(), 201);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    assert!(location.starts_with("https://lab.example.org/mgds/storage/mgds/"), "{location}");
    let r =
        behind(Method::POST, "/api/v1/samples/confirm_upload").json(&json!({"sample_id": id})).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let d: Value = behind(Method::POST, &format!("/api/v1/samples/{id}/download_uri"))
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let download = d["download_uri"].as_str().unwrap();
    assert!(download.starts_with("https://lab.example.org/mgds/storage/mgds/"), "{download}");
    // Through the proxy (which takes the path off), the address downloads the file.
    let through = download.replace("https://lab.example.org/mgds", &direct);
    let got = svc.http.get(through).send().await.unwrap().bytes().await.unwrap();
    assert_eq!(got.as_ref(), bytes.as_slice());
    // Without a path in the public address, the links are the request's paths.
    let (_, _, _, plain) = page(&svc, &u, "per_page=1&page=2").await;
    assert_eq!(plain.matches("</api/v1/samples?").count(), 5, "{plain}");
}

/// The same records made in the same order in a service on SQLite and one on PostgreSQL; every
/// list below (samples, tags, documents, projects) must answer alike on both: the same records
/// in the same order, the same totals and the same links. Runs on the test command's PostgreSQL pass (`MGDS_TEST_POSTGRES`).
#[tokio::test]
async fn postgresql_and_sqlite_answer_every_list_alike() {
    let Some(pg) = mgds_server::db::test_database().await else {
        eprintln!("not run: needs MGDS_TEST_POSTGRES (the test command's second pass)");
        return;
    };
    let sqlite = Service::start_with(|c| c.database_url = None).await;
    let postgres = Service::start_with(|c| c.database_url = Some(pg)).await;
    let mut answers: Vec<Vec<(String, u64, String)>> = Vec::new();
    for svc in [&sqlite, &postgres] {
        let alice = svc.user("alice@lab.org").await;
        let bob = svc.user("bob@lab.org").await;
        let carol = svc.user_in("carol@other.org", Some("other"), Role::Member).await;
        let (_, project) =
            svc.post(Some(&alice), "/api/v1/projects", json!({"name": "Gut", "project_name": "gut"})).await;
        let project = project["$uri"].as_str().unwrap().to_string();
        let bob_id = svc.find_user(&alice, "bob@lab.org").await;
        let (s, r) = svc.post(Some(&alice), &format!("{project}/add_user"), json!({"user": bob_id})).await;
        assert_eq!(s, 200, "{r}");
        // Unique names and sizes (so no order depends on the random ids that break ties), some
        // names missing a size's neighbours, cases mixed, visibilities and projects varied.
        let names = [
            "Gut_A.fastq",
            "gut_b.fq",
            "soil_c.fastq.gz",
            "SOIL_d.fastq",
            "water_e.fa",
            "gut_f.fastq.gz",
            "Mix_g.fq",
            "mix_h.fastq",
        ];
        for (i, name) in names.iter().enumerate() {
            let reads = crate::fastq(1 + (i * 5) % 11);
            let id = svc.upload_sample(&alice, name, &reads, json!({})).await;
            let patch = match i % 4 {
                0 => json!({"visibility": "public"}),
                1 => json!({"visibility": "shared"}),
                2 => json!({"project": {"$ref": project}}),
                _ => json!({}),
            };
            let (s, r) = svc.patch(Some(&alice), &format!("/api/v1/samples/{id}"), patch).await;
            assert_eq!(s, 200, "{r}");
        }
        let bob_own = svc.upload_sample(&bob, "bob_only.fastq", &crate::fastq(13), json!({})).await;
        assert!(!bob_own.is_empty());
        // Tags, documents and more projects, for the other lists.
        let (_, alice_samples) = svc.get(Some(&alice), "/api/v1/samples?per_page=100").await;
        for (i, sample) in alice_samples.as_array().unwrap().iter().enumerate() {
            for tag in ["Control", "case", "Day-1"].iter().take(1 + i % 3) {
                let (s, r) = svc
                    .post(Some(&alice), "/api/v1/tags", json!({"name": tag, "sample": {"$ref": sample["$uri"]}}))
                    .await;
                assert_eq!(s, 200, "{r}");
            }
        }
        svc.post(
            Some(&bob),
            "/api/v1/tags",
            json!({"name": "bob-tag", "sample": {"$ref": format!("/api/v1/samples/{bob_own}")}}),
        )
        .await;
        for (i, name) in ["Report_B.pdf", "notes_a.txt", "SampleSheet.csv"].iter().enumerate() {
            let doc = svc.upload_document(&alice, name, &vec![b'x'; 10 + i * 7]).await;
            if i == 1 {
                let (s, r) =
                    svc.post(Some(&alice), &format!("/api/v1/documents/{doc}/add_user"), json!({"user": bob_id})).await;
                assert_eq!(s, 200, "{r}");
            }
        }
        svc.upload_document(&bob, "bob_doc.txt", b"bob").await;
        for (name, short, public) in [("Soil", "soil", true), ("Water", "water", false), ("Air", "air-1", false)] {
            let (_, p) = svc.post(Some(&alice), "/api/v1/projects", json!({"name": name, "project_name": short})).await;
            if public {
                let uri = p["$uri"].as_str().unwrap();
                let (s, r) = svc.post(Some(&alice), &format!("{uri}/change_sharing"), json!({"public": true})).await;
                assert_eq!(s, 200, "{r}");
            }
        }
        svc.post(Some(&carol), "/api/v1/projects", json!({"name": "Carol's", "project_name": "carol"})).await;
        let queries = [
            "",
            "per_page=3",
            "per_page=3&page=2",
            "per_page=3&page=9",
            "sort=%7B%22size%22%3Atrue%7D",
            "sort=%7B%22filename%22%3Afalse%7D",
            "sort=%7B%22visibility%22%3Afalse%2C%22size%22%3Afalse%7D",
            "where=%7B%22filename%22%3A%7B%22%24contains%22%3A%22gut%22%7D%7D",
            "where=%7B%22filename%22%3A%7B%22%24icontains%22%3A%22GUT%22%7D%7D",
            "where=%7B%22filename%22%3A%7B%22%24startswith%22%3A%22mix%22%7D%7D",
            "where=%7B%22filename%22%3A%7B%22%24iendswith%22%3A%22.FASTQ%22%7D%7D",
            "where=%7B%22filename%22%3A%7B%22%24endswith%22%3A%22.fastq.gz%22%7D%7D",
            "where=%7B%22size%22%3A%7B%22%24between%22%3A%5B300%2C2000%5D%7D%7D",
            "where=%7B%22visibility%22%3A%7B%22%24in%22%3A%5B%22public%22%2C%22shared%22%5D%7D%7D",
            "where=%7B%22project%22%3A%7B%22%24ne%22%3Anull%7D%7D",
            "where=%7B%22filename%22%3A%7B%22%24ne%22%3A%22gut_b.fq%22%7D%7D&sort=%7B%22filename%22%3Atrue%7D&per_page=4",
        ];
        let mut seen = Vec::new();
        for user in [&alice, &bob, &carol] {
            for q in queries {
                let (status, body, total, link) = page(svc, user, q).await;
                assert_eq!(status, 200, "{q}: {body}");
                let rows: Vec<String> = body
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| format!("{} {} {}", s["filename"], s["size"], s["visibility"]))
                    .collect();
                // Links hold the query and page numbers only (no ids, no host): alike on both.
                seen.push((format!("{} {q}", user.email), total.unwrap_or(0), format!("{rows:?} {link}")));
            }
        }
        let others: [(&str, &[&str], fn(&Value) -> String); 3] = [
            (
                "tags",
                &[
                    "",
                    "per_page=2&page=2",
                    "sort=%7B%22name%22%3Atrue%7D",
                    "where=%7B%22name%22%3A%7B%22%24icontains%22%3A%22C%22%7D%7D",
                ],
                |t| format!("{}", t["name"]),
            ),
            (
                "documents",
                &[
                    "",
                    "sort=%7B%22size%22%3Atrue%7D",
                    "sort=%7B%22filename%22%3Afalse%7D&per_page=2",
                    "where=%7B%22filename%22%3A%7B%22%24iendswith%22%3A%22.TXT%22%7D%7D",
                ],
                |d| format!("{} {}", d["filename"], d["size"]),
            ),
            (
                "projects",
                &["", "sort=%7B%22name%22%3Afalse%7D", "where=%7B%22public%22%3Atrue%7D", "per_page=1&page=2"],
                |p| format!("{} {} {}", p["name"], p["project_name"], p["public"]),
            ),
        ];
        for user in [&alice, &bob, &carol] {
            for (collection, queries, row) in &others {
                for q in *queries {
                    let (status, body, total, link) = list(svc, user, collection, q).await;
                    assert_eq!(status, 200, "{collection}?{q}: {body}");
                    let rows: Vec<String> = body.as_array().unwrap().iter().map(row).collect();
                    seen.push((
                        format!("{} {collection}?{q}", user.email),
                        total.unwrap_or(0),
                        format!("{rows:?} {link}"),
                    ));
                }
            }
        }
        answers.push(seen);
    }
    let (a, b) = (&answers[0], &answers[1]);
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x, y, "SQLite and PostgreSQL differ");
    }
    assert!(a.iter().any(|(_, total, _)| *total == 0) && a.iter().any(|(_, total, _)| *total > 5), "the lists vary");
}
