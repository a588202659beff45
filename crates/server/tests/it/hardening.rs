//! Odd input answered with a clear 4xx in the service's error shape, or simply handled: each
//! case here once answered a 500, a wrong success or a bare status.

use reqwest::Method;
use serde_json::{Value, json};

use crate::{Service, assert_error, fastq, json_of};

fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn message(v: &Value) -> String {
    v["message"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn file_names_of_254_and_255_characters_upload_and_download() {
    let svc = Service::start().await;
    let u = svc.user("a@lab.org").await;
    for len in [254, 255] {
        let name = format!("{}.fastq", "s".repeat(len - 6));
        assert_eq!(name.len(), len);
        let id = svc.upload_sample(&u, &name, &fastq(3), json!({})).await;
        let (s, sample) = svc.get(Some(&u), &format!("/api/v1/samples/{id}")).await;
        assert_eq!((s, sample["filename"].clone()), (200, json!(name)), "the name is kept whole");
        let (s, d) = svc.post(Some(&u), &format!("/api/v1/samples/{id}/download_uri"), json!({})).await;
        assert_eq!(s, 200, "{d}");
        let r = svc.http.get(d["download_uri"].as_str().unwrap()).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200);
        assert_eq!(r.bytes().await.unwrap().as_ref(), fastq(3).as_slice());
        let doc = svc.upload_document(&u, &format!("{}.pdf", "d".repeat(len - 4)), b"%PDF").await;
        let (s, d) = svc.post(Some(&u), &format!("/api/v1/documents/{doc}/download_uri"), json!({})).await;
        assert_eq!(s, 200, "{d}");
    }
}

#[tokio::test]
async fn documents_named_dot_and_dot_dot_are_stored_and_downloadable() {
    let svc = Service::start().await;
    let u = svc.user("a@lab.org").await;
    for name in [".", ".."] {
        let id = svc.upload_document(&u, name, name.as_bytes()).await;
        let (s, doc) = svc.get(Some(&u), &format!("/api/v1/documents/{id}")).await;
        assert_eq!((s, doc["filename"].clone()), (200, json!(name)));
        let (s, d) = svc.post(Some(&u), &format!("/api/v1/documents/{id}/download_uri"), json!({})).await;
        assert_eq!(s, 200, "{d}");
        let r = svc.http.get(d["download_uri"].as_str().unwrap()).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200, "{name}");
        assert_eq!(r.bytes().await.unwrap().as_ref(), name.as_bytes());
    }
}

#[tokio::test]
async fn a_thousand_tag_ids_filter_and_link_the_next_page_once() {
    let svc = Service::start().await;
    let u = svc.user("a@lab.org").await;
    let mut samples = Vec::new();
    for i in 0..3 {
        samples.push(svc.upload_sample(&u, &format!("s{i}.fastq"), &fastq(1), json!({})).await);
    }
    let (s, tag) = svc
        .post(
            Some(&u),
            "/api/v1/tags",
            json!({"name": "wanted", "sample": {"$ref": format!("/api/v1/samples/{}", samples[1])}}),
        )
        .await;
    assert_eq!(s, 200, "{tag}");
    let tag_id = tag["$uri"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let mut ids: Vec<String> = (0..999).map(|i| format!("{i:016x}")).collect();
    ids.push(tag_id.clone());
    for (op, want) in [("$containsany", 1), ("$containsall", 0)] {
        let filter = json!({"tags": {op: ids}}).to_string();
        let path = format!("/api/v1/samples?per_page=1&where={}", enc(&filter));
        let r = svc.as_user(Some(&u), Method::GET, &path).send().await.unwrap();
        let link = r.headers().get("link").map(|v| v.len()).unwrap_or(0);
        let total: u64 = r.headers()["x-total-count"].to_str().unwrap().parse().unwrap();
        let (s, body) = json_of(r).await;
        assert_eq!(s, 200, "{op} with 1,000 ids: {body}");
        assert_eq!(total, want, "{op}");
        assert!(link < filter.len() * 2, "{op}: a Link header of {link} bytes for a {} byte filter", filter.len());
    }
    // Paging a long filter: `next` is linked, once, and leads on.
    for sample in [&samples[0], &samples[2]] {
        let (s, _) = svc
            .post(
                Some(&u),
                "/api/v1/tags",
                json!({"name": "wanted", "sample": {"$ref": format!("/api/v1/samples/{sample}")}}),
            )
            .await;
        assert_eq!(s, 200);
    }
    let filter = json!({"tags": {"$containsany": ids}}).to_string();
    let r = svc
        .as_user(Some(&u), Method::GET, &format!("/api/v1/samples?per_page=2&where={}", enc(&filter)))
        .send()
        .await
        .unwrap();
    let link = r.headers()["link"].to_str().unwrap().to_string();
    assert_eq!(link.matches("rel=").count(), 1, "{link}");
    assert!(link.ends_with("rel=\"next\""), "{link}");
    let next = link.trim_start_matches('<').split('>').next().unwrap().to_string();
    let r = svc.as_user(Some(&u), Method::GET, &next).send().await.unwrap();
    assert!(r.headers().get("link").is_none(), "the last page links nowhere");
    let (s, body) = json_of(r).await;
    assert_eq!((s, body.as_array().map(Vec::len)), (200, Some(1)));
}

#[tokio::test]
async fn json_of_the_wrong_type_is_422_naming_the_field() {
    let svc = Service::start().await;
    let u = svc.user("a@lab.org").await;
    let (s, p) = svc.post(Some(&u), "/api/v1/projects", json!({"name": "P", "project_name": "p-one"})).await;
    assert_eq!(s, 200, "{p}");
    let uri = p["$uri"].as_str().unwrap().to_string();
    // An array where an object is required: refused, and the project stays private.
    let (s, b) = svc.post(Some(&u), &format!("{uri}/change_sharing"), json!([true])).await;
    assert_error(s, &b, 422);
    assert!(message(&b).contains("JSON object") && message(&b).contains("array"), "{b}");
    let (_, p) = svc.get(Some(&u), &uri).await;
    assert_eq!(p["public"], json!(false), "an array must not change anything");
    // A string for a boolean: 422 naming the field.
    let (s, b) = svc.post(Some(&u), &format!("{uri}/change_sharing"), json!({"public": "yes"})).await;
    assert_error(s, &b, 422);
    assert!(message(&b).contains("public"), "{b}");
    // Other scalars at the top.
    for body in ["true", "null", "\"x\"", "7"] {
        let r = svc.as_user(Some(&u), Method::POST, &format!("{uri}/change_sharing")).body(body).send().await.unwrap();
        let (s, b) = json_of(r).await;
        assert_error(s, &b, 422);
    }
    // Not JSON at all stays 400.
    let r = svc.as_user(Some(&u), Method::POST, &format!("{uri}/change_sharing")).body("{public").send().await.unwrap();
    let (s, b) = json_of(r).await;
    assert_error(s, &b, 400);
}

#[tokio::test]
async fn a_where_that_is_not_utf8_is_400_naming_it() {
    let svc = Service::start().await;
    let u = svc.user("a@lab.org").await;
    let (s, b) = svc.get(Some(&u), "/api/v1/samples?where=%7B%22filename%22%3A%22%FF%FE%22%7D").await;
    assert_error(s, &b, 400);
    assert!(message(&b).contains("\"where\"") && message(&b).contains("UTF-8"), "{b}");
    // UTF-8 proper is fine.
    let (s, _) = svc.get(Some(&u), &format!("/api/v1/samples?where={}", enc(r#"{"filename": "Größe.fastq"}"#))).await;
    assert_eq!(s, 200);
}

#[tokio::test]
async fn oversized_bodies_addresses_and_headers_get_json_413_414_431() {
    let svc = Service::start().await;
    let u = svc.user("a@lab.org").await;
    // A 50 MB JSON body.
    let mut big = String::from("{\"name\": \"");
    big.push_str(&"x".repeat(50 * 1024 * 1024));
    big.push_str("\"}");
    let r = svc.as_user(Some(&u), Method::POST, "/api/v1/projects").body(big).send().await.unwrap();
    let (s, b) = json_of(r).await;
    assert_error(s, &b, 413);
    assert!(message(&b).contains("KB"), "{b}");
    // An address past the limit.
    let long = format!("/api/v1/samples?where={}", "a".repeat(50 * 1024));
    let r = svc.as_user(Some(&u), Method::GET, &long).send().await.unwrap();
    let (s, b) = json_of(r).await;
    assert_error(s, &b, 414);
    // Headers past the limit: one large one, and many small ones.
    let r = svc
        .as_user(Some(&u), Method::GET, "/api/v1/samples")
        .header("x-large", "v".repeat(100 * 1024))
        .send()
        .await
        .unwrap();
    let (s, b) = json_of(r).await;
    assert_error(s, &b, 431);
    assert!(message(&b).contains("x-large"), "{b}");
    let mut req = svc.as_user(Some(&u), Method::GET, "/api/v1/samples");
    for i in 0..300 {
        req = req.header(format!("x-h{i}"), "1");
    }
    let (s, b) = json_of(req.send().await.unwrap()).await;
    assert_error(s, &b, 431);
}

#[tokio::test]
async fn download_addresses_stop_working_once_the_record_is_not_the_holders_to_see() {
    // On an S3 store too: the service checks its address, then sends the download on to the
    // store's own address, made at that moment.
    let svc = Service::start().await;
    let owner = svc.user("owner@lab.org").await;
    // A deleted sample: its address answers 404 at once, not for the rest of a day.
    let id = svc.upload_sample(&owner, "gone.fastq", &fastq(2), json!({})).await;
    let (_, d) = svc.post(Some(&owner), &format!("/api/v1/samples/{id}/download_uri"), json!({})).await;
    let url = d["download_uri"].as_str().unwrap().to_string();
    assert!(d["expires_in_hours"].as_u64().unwrap() <= 1, "{d}");
    assert_eq!(svc.http.get(&url).send().await.unwrap().status().as_u16(), 200);
    let (s, _) = svc.delete(Some(&owner), &format!("/api/v1/samples/{id}")).await;
    assert!(s < 300);
    let (s, b) = json_of(svc.http.get(&url).send().await.unwrap()).await;
    assert_error(s, &b, 404);

    // A public sample's address held by someone else stops when it is made private; the owner's goes on.
    let stranger = svc.user("stranger@elsewhere.org").await;
    let id = svc.upload_sample(&owner, "public.fastq", &fastq(2), json!({})).await;
    let (s, b) = svc.patch(Some(&owner), &format!("/api/v1/samples/{id}"), json!({"visibility": "public"})).await;
    assert_eq!(s, 200, "{b}");
    let (_, anon) = svc.post(Some(&stranger), &format!("/api/v1/samples/{id}/download_uri"), json!({})).await;
    let (_, own) = svc.post(Some(&owner), &format!("/api/v1/samples/{id}/download_uri"), json!({})).await;
    let (anon, own) =
        (anon["download_uri"].as_str().unwrap().to_string(), own["download_uri"].as_str().unwrap().to_string());
    assert_eq!(svc.http.get(&anon).send().await.unwrap().status().as_u16(), 200);
    let (s, b) = svc.patch(Some(&owner), &format!("/api/v1/samples/{id}"), json!({"visibility": "private"})).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(svc.http.get(&anon).send().await.unwrap().status().as_u16(), 404);
    assert_eq!(svc.http.get(&own).send().await.unwrap().status().as_u16(), 200);

    // A shared document stops when sharing stops.
    let reader = svc.user("reader@lab.org").await;
    let doc = svc.upload_document(&owner, "report.pdf", b"%PDF-1.7").await;
    svc.find_user(&owner, &reader.email).await;
    let (s, b) = svc.post(Some(&owner), &format!("/api/v1/documents/{doc}/add_user"), json!({"user": reader.id})).await;
    assert_eq!(s, 200, "{b}");
    let (_, d) = svc.post(Some(&reader), &format!("/api/v1/documents/{doc}/download_uri"), json!({})).await;
    let url = d["download_uri"].as_str().unwrap().to_string();
    assert_eq!(svc.http.get(&url).send().await.unwrap().status().as_u16(), 200);
    let (s, _) =
        svc.post(Some(&owner), &format!("/api/v1/documents/{doc}/remove_user"), json!({"user": reader.id})).await;
    assert_eq!(s, 200);
    assert_eq!(svc.http.get(&url).send().await.unwrap().status().as_u16(), 404);
    // The holder is signed: naming another holder breaks the signature.
    let (_, d) = svc.post(Some(&owner), &format!("/api/v1/documents/{doc}/download_uri"), json!({})).await;
    let forged =
        d["download_uri"].as_str().unwrap().replace(&format!("holder={}", owner.id), &format!("holder={}", reader.id));
    assert_eq!(svc.http.get(&forged).send().await.unwrap().status().as_u16(), 403);
}

/// A signed-looking S3 PUT with `credential` and `date`; the status and body it got (a dropped
/// connection fails the test).
async fn s3_put(svc: &Service, credential: &[u8], date: &str) -> (u16, String) {
    let mut auth = b"AWS4-HMAC-SHA256 Credential=".to_vec();
    auth.extend_from_slice(credential);
    auth.extend_from_slice(b", SignedHeaders=host;x-amz-date, Signature=00");
    let r = svc
        .http
        .put(format!("{}/mgds-uploads/samples/x/reads.fastq.gz", svc.url))
        .header("authorization", reqwest::header::HeaderValue::from_bytes(&auth).unwrap())
        .header("x-amz-date", date)
        .header("x-amz-content-sha256", "UNSIGNED-PAYLOAD")
        .body("@r\nACGT\n+\nIIII\n")
        .send()
        .await
        .expect("an answer, not a dropped connection");
    let status = r.status().as_u16();
    (status, r.text().await.unwrap())
}

#[tokio::test]
async fn an_s3_request_with_a_malformed_date_is_refused_not_dropped() {
    // Found by the http_uploads fuzz target: a date with a non-digit made the S3 layer panic.
    let svc = Service::start().await;
    let scope = b"AKIDEXAMPLE/20261125/us-east-1/s3/aws4_request".as_slice();
    for date in ["20*61125T000000Z", "", "2026112"] {
        let (status, text) = s3_put(&svc, scope, date).await;
        assert!((400..500).contains(&status) && text.contains("<Error>"), "{date:?}: {status} {text}");
    }
    // The same parser reads the date of the credential's scope, commas and bytes past ASCII included.
    for credential in [
        "AKIDEXAMPLE/20*61125/us-east-1/s3/aws4_request",
        "AKIDEXAMPLE/2,261125/us-east-1/s3/aws4_request",
        "AKI\u{fffd}DEXAMPLE/20261%24/us-east-1/s3/aws4_request",
    ] {
        let (status, text) = s3_put(&svc, credential.as_bytes(), "20261125T000000Z").await;
        assert_eq!(status, 400, "{credential}: {text}");
    }
    // Presigned addresses carry both in the query.
    for query in [
        "X-Amz-Credential=AKID%2F2026-11-25%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=00",
        "X-Amz-Date=2026-11-25&X-Amz-Signature=00",
    ] {
        let url = format!("{}/mgds-uploads/samples/x/reads.fastq.gz?{query}", svc.url);
        let r = svc.http.get(url).send().await.expect("an answer");
        assert_eq!(r.status().as_u16(), 400, "{query}");
    }
}

/// Methods a client invents add no metric series (finding: 1,000 requests with different 60 KB
/// methods left the process 115 MB larger for good, and `/metrics` grew to hundreds of MB).
#[tokio::test]
async fn invented_methods_add_no_metric_series() {
    let svc = Service::start().await;
    for i in 0..300 {
        let method = Method::from_bytes(format!("X{i:04}{}", "M".repeat(4000)).as_bytes()).unwrap();
        let r = svc.http.request(method, format!("{}/mgds-uploads/samples/x/reads.fastq", svc.url)).send().await;
        assert!(r.is_ok(), "answered, not dropped");
    }
    let text = svc.http.get(format!("{}/metrics", svc.url)).send().await.unwrap().text().await.unwrap();
    assert!(text.len() < 64 * 1024, "/metrics is {} bytes", text.len());
    assert!(!text.contains("MMMM"), "no invented method is a label");
    assert!(text.contains("method=\"other\""), "invented methods are counted as other");
}

/// Tags are capped per request and per sample, with a 400 naming the cap; a sample already
/// past the cap stays readable and can lose tags (finding: one pre-upload with 100,000 tags
/// held the write lock for 7 s and made each page of samples 41 MB).
#[tokio::test]
async fn tags_are_capped_per_request_and_per_sample() {
    let svc = Service::start().await;
    let user = svc.user("tags@lab.org").await;
    let max = mgds_api::MAX_TAGS_PER_SAMPLE;
    let names =
        |n: usize, from: usize| (from..from + n).map(|i| json!({ "name": format!("t{i}") })).collect::<Vec<_>>();
    let (s, b) = svc.post(Some(&user), "/api/v1/samples/preupload", json!({ "tags": names(max + 1, 0) })).await;
    assert_error(s, &b, 400);
    assert!(message(&b).contains(&format!("at most {max} tags")), "{b}");
    let (s, b) = svc.post(Some(&user), "/api/v1/samples/preupload", json!({ "tags": names(max, 0) })).await;
    assert_eq!(s, 200, "{b}");
    let id = b["sample_id"].as_str().or_else(|| b["$uri"].as_str().and_then(|u| u.rsplit('/').next())).unwrap();
    let id = id.to_string();
    // One more, by name: refused, naming the cap.
    let (s, b) = svc.post(Some(&user), "/api/v1/tags", json!({ "name": "one-more", "sample": id })).await;
    assert_error(s, &b, 400);
    assert!(message(&b).contains(&format!("at most {max} tags")), "{b}");
    // An init_upload asking for too many is refused before anything is stored.
    let (s, b) = svc
        .post(
            Some(&user),
            "/api/v1/samples/init_upload",
            json!({ "filename": "r.fastq", "size": 10, "tags": names(max + 1, 0) }),
        )
        .await;
    assert_error(s, &b, 400);
    // Metadata: too many custom keys, too large a custom object, too long a description.
    let custom: serde_json::Map<String, Value> =
        (0..=mgds_api::MAX_CUSTOM_METADATA_KEYS).map(|i| (format!("k{i}"), json!(i))).collect();
    let (s, b) = svc.post(Some(&user), "/api/v1/samples/preupload", json!({ "metadata": { "custom": custom } })).await;
    assert_error(s, &b, 400);
    assert!(message(&b).contains("at most"), "{b}");
    let big = json!({ "metadata": { "custom": { "notes": "x".repeat(mgds_api::MAX_CUSTOM_METADATA_BYTES) } } });
    let (s, b) = svc.post(Some(&user), "/api/v1/samples/preupload", big).await;
    assert_error(s, &b, 400);
    let long = json!({ "metadata": { "description": "d".repeat(mgds_api::MAX_DESCRIPTION_CHARS + 1) } });
    let (s, b) = svc.post(Some(&user), "/api/v1/samples/preupload", long).await;
    assert_error(s, &b, 400);
    // The worst page of samples: every sample at the caps, the most per page.
    let (s, page) = svc.get(Some(&user), "/api/v1/samples?per_page=1000").await;
    assert_eq!(s, 200);
    let one = page[0].to_string().len();
    eprintln!(
        "a sample with {max} tags is {one} bytes; a page of 1000 such samples is at most {} MB",
        one * 1000 / 1_000_000
    );
    assert!(one < 12_000, "a sample at the tag cap is {one} bytes");
}

/// Rotating a user's key stops what the old key obtained: download addresses of the service's
/// storage endpoint, upload forms and S3 credentials (finding: they went on working for an hour
/// and a day).
#[tokio::test]
async fn rotating_a_key_stops_what_the_old_key_obtained() {
    let svc = Service::start().await;
    let user = svc.user("leaked@lab.org").await;
    let id = svc.upload_sample(&user, "mine.fastq", &fastq(2), json!({})).await;
    let (_, d) = svc.post(Some(&user), &format!("/api/v1/samples/{id}/download_uri"), json!({})).await;
    let download = d["download_uri"].as_str().unwrap().to_string();
    assert_eq!(svc.http.get(&download).send().await.unwrap().status().as_u16(), 200);
    // A form upload started, and an S3 upload with its credentials.
    let (s, form) =
        svc.post(Some(&user), "/api/v1/samples/init_upload", json!({ "filename": "r.fastq", "size": 16 })).await;
    assert_eq!(s, 200, "{form}");
    let s3 = crate::s3_path::start(&svc, &user, "reads.fastq").await;

    let rotated = mgds_server::admin::rotate_key(&svc.state, &user.email).await.unwrap();
    assert_eq!(rotated.canceled_uploads, 2, "both uploads under way were canceled");
    let new = crate::TestUser { key: rotated.api_key, ..user.clone() };
    if !svc.on_s3() {
        // The service's own address names the key epoch it was made in.
        let (s, b) = json_of(svc.http.get(&download).send().await.unwrap()).await;
        assert_error(s, &b, 404);
        assert!(message(&b).contains("API key"), "{b}");
        let (_, d) = svc.post(Some(&new), &format!("/api/v1/samples/{id}/download_uri"), json!({})).await;
        let again = d["download_uri"].as_str().unwrap();
        assert_eq!(svc.http.get(again).send().await.unwrap().status().as_u16(), 200, "a new address works");
    }
    // The form's upload is gone: confirming answers 404, and the form stores nothing.
    let (s, _) =
        svc.post(Some(&new), "/api/v1/samples/confirm_upload", json!({ "sample_id": form["sample_id"] })).await;
    assert_eq!(s, 404);
    // The S3 credentials are refused.
    let store = object_store::aws::AmazonS3Builder::new()
        .with_endpoint(mgds_server::s3::endpoint(&svc.url))
        .with_bucket_name(mgds_server::s3::BUCKET)
        .with_region("us-east-1")
        .with_access_key_id(s3.init["upload_aws_access_key_id"].as_str().unwrap())
        .with_secret_access_key(s3.init["upload_aws_secret_access_key"].as_str().unwrap())
        .with_allow_http(true)
        .build()
        .unwrap();
    let key = object_store::path::Path::from(s3.init["file_id"].as_str().unwrap());
    let refused = object_store::ObjectStoreExt::put(&store, &key, b"@r\nACGT\n+\nIIII\n".to_vec().into()).await;
    assert!(refused.is_err(), "the old upload's credentials no longer write");
}
