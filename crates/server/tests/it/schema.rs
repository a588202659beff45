//! The service's own hyper-schema: every link it lists is a route the service answers.

use reqwest::Method;
use serde_json::{Value, json};

use crate::Service;

#[tokio::test]
async fn every_schema_link_is_a_route() {
    let svc = Service::start().await;
    let u = svc.user("a@lab.org").await;
    let (s, root) = svc.get(None, "/api/v1/schema").await;
    assert_eq!(s, 200);
    let resources = root["properties"].as_object().unwrap();
    for name in [
        "samples",
        "metadata",
        "analyses",
        "classifications",
        "panels",
        "alignments",
        "functional_profiles",
        "jobs",
        "documents",
        "projects",
        "tags",
        "users",
        "account",
        "sequencing_batches",
        "organization",
        "organization_users",
        "audit",
        "webhooks",
        "events",
    ] {
        assert!(resources.contains_key(name), "{name} missing from the schema");
    }
    assert!(resources["samples"]["properties"]["$uri"].is_object());
    assert!(resources["samples"]["properties"]["visibility"].is_object());
    let where_fields =
        &resources["samples"]["links"].as_array().unwrap().iter().find(|l| l["rel"] == "instances").unwrap()["schema"]
            ["properties"]["where"]["properties"];
    assert!(where_fields["filename"].is_object() && where_fields["tags"].is_object());

    let mut checked = 0;
    for (name, r) in resources {
        for link in r["links"].as_array().unwrap() {
            let href = link["href"].as_str().unwrap().replace("{id}", "0123456789abcdef");
            let method = Method::from_bytes(link["method"].as_str().unwrap().as_bytes()).unwrap();
            let mut req = svc.as_user(Some(&u), method.clone(), &href);
            if method != Method::GET && method != Method::DELETE {
                req = req.json(&json!({}));
            }
            let (status, body) = crate::json_of(req.send().await.unwrap()).await;
            assert_ne!(status, 405, "{name}: {method} {href} is listed but not routed: {body}");
            let unrouted = status == 404 && body["message"].as_str().is_some_and(|m| m.contains("there is no route"));
            assert!(!unrouted, "{name}: {method} {href} is listed but not routed");
            if link["rel"] == "describedBy" {
                assert_eq!(status, 200, "{href}");
                assert!(matches!(body, Value::Object(_)));
            }
            checked += 1;
        }
    }
    assert!(checked > 60, "only {checked} links");
}
