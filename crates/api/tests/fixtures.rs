//! Every real-service fixture in `shared/reference/fixtures/api/v1/` deserializes into our types.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use mgds_api::*;
use serde::de::DeserializeOwned;

fn fixtures() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/fixtures/api/v1");
    assert!(dir.is_dir(), "fixtures not found at {}: shared/ must sit beside the repository", dir.display());
    dir
}

fn load<T: DeserializeOwned>(name: &str) -> T {
    let path = fixtures().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut de = serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(&mut de).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_fixture_deserializes() {
    let samples: Vec<Sample> = load("samples.json");
    assert_eq!(samples.len(), 80);
    assert!(samples.iter().all(|s| s.owner.collection() == Some("users")));
    let metadata: Vec<Metadata> = load("metadata.json");
    assert_eq!(metadata.len(), 80);
    for name in ["analyses.json", "classifications.json", "panels.json", "alignments.json", "functional_profiles.json"]
    {
        let analyses: Vec<Analysis> = load(name);
        assert!(!analyses.is_empty(), "{name}");
    }
    let alignments: Vec<Analysis> = load("alignments.json");
    assert_eq!(alignments[0].tax_id.as_deref(), Some("1639"));
    let jobs: Vec<Job> = load("jobs.json");
    assert_eq!(jobs.len(), 24);
    let documents: Vec<Document> = load("documents.json");
    assert_eq!(documents.len(), 17);
    let tags: Vec<Tag> = load("tags.json");
    assert_eq!(tags.len(), 50);
    let users: Vec<User> = load("users.json");
    assert_eq!(users.len(), 2);
    let account: Account = load("account.json");
    assert_eq!(account.user.collection(), Some("users"));
}

#[test]
fn every_classification_result_deserializes_and_round_trips() {
    let dir = fixtures().join("classifications_results");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = format!("classifications_results/{}", path.file_name().unwrap().to_string_lossy());
        let results: ClassificationResults = load(&name);
        assert!(!results.table.is_empty());
        let again: ClassificationResults = serde_json::from_str(&serde_json::to_string(&results).unwrap()).unwrap();
        assert_eq!(results, again);
        n += 1;
    }
    assert!(n >= 2);
}
