//! The world labs already script against: the real `onecodex` client (library and CLI, from
//! PyPI, pinned in `tests/onecodex/requirements.txt`) pointed at `mgds serve`, and every response
//! of a populated service checked against the reference schema and the client's own models.
//!
//! The Python environment is made once into a cache folder outside the checkout (see
//! `python_env`) and reused while the requirements stay the same.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::python_env::{python, python_tests};
use crate::{Http, MGDS, Serve, create_user, varied_pair};

/// A signed-in view of the service for setting it up.
struct Admin<'a> {
    http: &'a Http,
    url: &'a str,
}

impl Admin<'_> {
    fn call(&self, method: &str, path: &str, key: &str, body: Option<Value>) -> Value {
        let (s, v) = self.http.json(method, &format!("{}{path}", self.url), key, body);
        assert!((200..300).contains(&s), "{method} {path}: {s} {v}");
        v
    }

    fn get(&self, path: &str, key: &str) -> Value {
        self.call("GET", path, key, None)
    }

    /// Waits for an analysis to complete; returns it.
    fn finished(&self, id: &str, key: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            let a = self.get(&format!("/api/v1/analyses/{id}"), key);
            if a["complete"] == json!(true) {
                return a;
            }
            assert!(Instant::now() < deadline, "analysis {id} did not finish: {a}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

fn id_of(v: &Value) -> String {
    let uri =
        v.get("$uri").or_else(|| v.get("$ref")).and_then(Value::as_str).unwrap_or_else(|| panic!("no uri in {v}"));
    uri.rsplit('/').next().unwrap().to_string()
}

/// `mgds upload FILE --json` as `key`: the new sample.
fn mgds_upload(url: &str, key: &str, file: &Path, extra: &[&str]) -> Value {
    let out = Command::new(MGDS)
        .args(["upload", "--json"])
        .args(extra)
        .arg(file)
        .env("MGDS_BASE_URL", url)
        .env("MGDS_API_KEY", key)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "mgds upload: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v[0].clone()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// `n` reads of varied bases in FASTQ.
fn fastq(n: usize, seed: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut x = seed | 1;
    for i in 0..n {
        let seq: String = (0..150)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ['A', 'C', 'G', 'T'][(x % 4) as usize]
            })
            .collect();
        out.extend_from_slice(format!("@s{seed}r{i}\n{seq}\n+\n{}\n", "F".repeat(150)).as_bytes());
    }
    out
}

/// Fills the service with records of every kind and state; answers what was made (the world
/// file the Python tests read).
fn populate(serve: &Serve, data: &Path, scratch: &Path, s3_endpoint: &str) -> Value {
    let http = Http::new();
    let admin = Admin { http: &http, url: &serve.url };
    let lab_key = create_user(data, "lab@example.org");
    let colleague_key = create_user(data, "colleague@example.org");
    let lab = admin.get("/api/v1/account", &lab_key);
    let colleague = admin.get("/api/v1/account", &colleague_key);
    let lab_id = id_of(&lab["user"]);
    let colleague_id = id_of(&colleague["user"]);

    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo/reads.fastq.gz");
    let reads = scratch.join("gut_reads.fastq.gz");
    std::fs::copy(&demo, &reads).unwrap();

    // A project the colleague is a member of.
    let project = admin.call(
        "POST",
        "/api/v1/projects",
        &lab_key,
        Some(json!({"name": "Gut study", "project_name": "gut_study", "description": "demo"})),
    );
    let project_id = id_of(&project);
    admin.call(
        "POST",
        &format!("/api/v1/projects/{project_id}/add_user"),
        &lab_key,
        Some(json!({"user": colleague_id})),
    );

    // Samples in each state.
    let classified = mgds_upload(&serve.url, &lab_key, &reads, &[]);
    let classified_id = id_of(&classified);
    let metadata_id = id_of(&classified["metadata"]);
    admin.call(
        "PATCH",
        &format!("/api/v1/metadata/{metadata_id}"),
        &lab_key,
        Some(json!({"name": "gut day 1", "platform": "Illumina MiSeq"})),
    );
    let public_file = scratch.join("public_reads.fastq.gz");
    std::fs::write(&public_file, gzip(&fastq(200, 3))).unwrap();
    let public_id = id_of(&mgds_upload(&serve.url, &lab_key, &public_file, &[]));
    admin.call("PATCH", &format!("/api/v1/samples/{public_id}"), &lab_key, Some(json!({"visibility": "public"})));
    let tagged_file = scratch.join("tagged_reads.fastq.gz");
    std::fs::write(&tagged_file, gzip(&fastq(200, 5))).unwrap();
    let tagged = mgds_upload(&serve.url, &lab_key, &tagged_file, &["--tag", "batch-7"]);
    let tagged_id = id_of(&tagged);
    admin.call(
        "PATCH",
        &format!("/api/v1/metadata/{}", id_of(&tagged["metadata"])),
        &lab_key,
        Some(json!({"name": "tagged one", "platform": "Oxford Nanopore MinION"})),
    );
    let tag_id = id_of(&tagged["tags"][0]);
    let project_file = scratch.join("project_reads.fastq");
    std::fs::write(&project_file, fastq(100, 7)).unwrap();
    let in_project_id = id_of(&mgds_upload(&serve.url, &lab_key, &project_file, &["--project", &project_id]));
    // Four parts of the demo reads, two of each site, for the diversity tests (with the whole).
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(&demo).unwrap()).read_to_string(&mut text).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut diversity = vec![classified_id.clone()];
    for (k, (from, site)) in [(0, "A"), (3000, "A"), (6000, "B"), (8500, "B")].into_iter().enumerate() {
        let part = scratch.join(format!("gut_part_{k}.fastq"));
        std::fs::write(&part, lines[from * 4..(from + 1500) * 4].join("\n") + "\n").unwrap();
        let s = mgds_upload(&serve.url, &lab_key, &part, &[]);
        let m = id_of(&s["metadata"]);
        admin.call("PATCH", &format!("/api/v1/metadata/{m}"), &lab_key, Some(json!({"custom": {"site": site}})));
        diversity.push(id_of(&s));
    }
    // A file that is not sequence data (our client refuses it; the API takes what it is given and
    // the engine is what reads it): the classification fails, saying why.
    let init = admin.call(
        "POST",
        "/api/v1/samples/init_upload",
        &lab_key,
        Some(json!({"filename": "not_reads.fastq", "size": 32})),
    );
    let fields = init["additional_fields"].as_object().unwrap().clone();
    assert_eq!(http.upload(init["upload_url"].as_str().unwrap(), &fields, b"this file holds no reads at all\n"), 201);
    let failed_id = init["sample_id"].as_str().unwrap().to_string();
    admin.call("POST", "/api/v1/samples/confirm_upload", &lab_key, Some(json!({"sample_id": failed_id})));
    let failed = admin.get(&format!("/api/v1/samples/{failed_id}"), &lab_key);
    let awaiting = admin.call(
        "POST",
        "/api/v1/samples/preupload",
        &lab_key,
        Some(json!({"metadata": {"external_sample_id": "ext-awaiting-1", "name": "awaiting"}})),
    );
    let awaiting_for_python = admin.call(
        "POST",
        "/api/v1/samples/preupload",
        &lab_key,
        Some(json!({"metadata": {"external_sample_id": "ext-awaiting-2"}, "project": {"$ref": format!("/api/v1/projects/{project_id}")}})),
    );
    // More than one page of the client's 100.
    for i in 0..105 {
        admin.call(
            "POST",
            "/api/v1/samples/preupload",
            &lab_key,
            Some(json!({"metadata": {"external_sample_id": format!("bulk-{i:03}")}})),
        );
    }

    // Analyses: the default classifications, a failed one, and one of every other kind.
    let classification_id = id_of(&classified["primary_classification"]);
    admin.finished(&classification_id, &lab_key);
    let failed_classification = id_of(&failed["primary_classification"]);
    let f = admin.finished(&failed_classification, &lab_key);
    assert_eq!(f["success"], json!(false));
    for s in [&public_id, &tagged_id, &in_project_id].into_iter().chain(&diversity[1..]) {
        let sample = admin.get(&format!("/api/v1/samples/{s}"), &lab_key);
        admin.finished(&id_of(&sample["primary_classification"]), &lab_key);
    }
    let jobs = admin.get("/api/v1/jobs?per_page=100", &lab_key);
    let job_of = |kind: &str| {
        let j = jobs.as_array().unwrap().iter().find(|j| j["analysis_type"] == json!(kind));
        id_of(j.unwrap_or_else(|| panic!("no {kind} job")))
    };
    let run = |kind: &str, args: Value| {
        let r = admin.call(
            "POST",
            &format!("/api/v1/jobs/{}/run", job_of(kind)),
            &lab_key,
            Some(json!({"sample": classified_id, "job_args": args, "populate_default_arguments": true})),
        );
        let id = id_of(&r);
        let a = admin.finished(&id, &lab_key);
        assert_eq!(a["success"], json!(true), "{kind}: {a}");
        id
    };
    let panel = run("panel", json!({}));
    let results = admin.get(&format!("/api/v1/classifications/{classification_id}/results"), &lab_key);
    let species = results["table"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["rank"] == json!("species"))
        .max_by_key(|r| r["readcount"].as_u64())
        .expect("a species")["tax_id"]
        .clone();
    let alignment = run("alignment", json!({"tax_id": species}));
    let profile = run("functional_profile", json!({}));

    // A document the lab shares with the colleague.
    let document_file = scratch.join("protocol.txt");
    std::fs::write(&document_file, "extraction protocol v3\n").unwrap();
    let out = Command::new(MGDS)
        .args(["documents", "upload"])
        .arg(&document_file)
        .env("MGDS_BASE_URL", &serve.url)
        .env("MGDS_API_KEY", &lab_key)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let docs = admin.get("/api/v1/documents", &lab_key);
    let document_id = id_of(&docs[0]);
    admin.call(
        "POST",
        &format!("/api/v1/documents/{document_id}/add_user"),
        &lab_key,
        Some(json!({"user": colleague_id})),
    );

    // Files for the client to upload.
    let small_single = scratch.join("small_one.fastq");
    std::fs::write(&small_single, fastq(50, 11)).unwrap();
    let small_single_2 = scratch.join("small_two.fastq");
    std::fs::write(&small_single_2, fastq(50, 13)).unwrap();
    let cli_single = scratch.join("cli_one.fastq.gz");
    std::fs::write(&cli_single, gzip(&fastq(100, 17))).unwrap();
    // Over boto3's 8 MiB multipart threshold, and not compressible to below it.
    let big_single = scratch.join("big_reads.fastq");
    std::fs::write(&big_single, fastq(32_000, 19)).unwrap();
    let pair_dir = scratch.join("pair");
    varied_pair(&pair_dir, 300);
    let cli_pair_dir = scratch.join("cli_pair");
    varied_pair(&cli_pair_dir, 200);
    let report = scratch.join("report.pdf");
    std::fs::write(&report, b"%PDF-1.4\n% a report\n").unwrap();
    let cli_report = scratch.join("cli_report.pdf");
    std::fs::write(&cli_report, b"%PDF-1.4\n% another report\n").unwrap();

    let path = |p: &Path| Value::String(p.display().to_string());
    let pair = |d: &Path| json!([path(&d.join("gut_S1_L001_R1_001.fastq")), path(&d.join("gut_S1_L001_R2_001.fastq"))]);
    json!({
        "base_url": serve.url,
        "s3_endpoint": s3_endpoint,
        "scratch": path(scratch),
        "database": path(&data.join("mgds.sqlite3")),
        "objects_dir": path(&data.join("objects")),
        "users": {
            "lab": {"id": lab_id, "email": "lab@example.org", "key": lab_key},
            "colleague": {"id": colleague_id, "email": "colleague@example.org", "key": colleague_key},
        },
        "project": {"id": project_id, "name": "Gut study", "project_name": "gut_study"},
        "tag": {"id": tag_id, "name": "batch-7"},
        "samples": {
            "classified": classified_id,
            "public": public_id,
            "tagged": tagged_id,
            "in_project": in_project_id,
            "failed": failed_id,
            "awaiting": awaiting["sample_id"],
            "awaiting_for_python": awaiting_for_python["sample_id"],
        },
        "sample_names": {"classified": "gut day 1"},
        "diversity": {"samples": diversity, "group_by": "site"},
        "external_ids": {"awaiting": "ext-awaiting-1"},
        "analyses": {
            "classification": classification_id,
            "failed": failed_classification,
            "panel": panel,
            "alignment": alignment,
            "functional_profile": profile,
        },
        "document": {"id": document_id, "filename": "protocol.txt"},
        "files": {
            "reads": path(&reads),
            "document": path(&document_file),
            "small_single": path(&small_single),
            "small_single_2": path(&small_single_2),
            "big_single": path(&big_single),
            "pair": pair(&pair_dir),
            "cli_single": path(&cli_single),
            "cli_pair": pair(&cli_pair_dir),
            "report": path(&report),
            "cli_report": path(&cli_report),
        },
    })
}

/// The reference schema of `resource`, made usable for validating responses: no `$schema` (a
/// hyper-schema URL validators do not know) and no `links`; a reference field (`{"$ref": ..}`
/// object) may be `null`, as the real service sends for an absent one (see its fixtures).
fn resource_schema(root: &Value, resource: &str) -> Value {
    let mut s = root["properties"][resource].clone();
    let Value::Object(m) = &mut s else { panic!("no resource {resource} in the reference schema") };
    m.remove("$schema");
    m.remove("links");
    allow_null_refs(&mut s);
    s
}

fn allow_null_refs(v: &mut Value) {
    match v {
        Value::Object(m) => {
            let is_ref = m.get("type") == Some(&json!("object"))
                && m.get("properties").and_then(Value::as_object).is_some_and(|p| p.contains_key("$ref"));
            if is_ref {
                m.insert("type".into(), json!(["object", "null"]));
            }
            for (_, child) in m.iter_mut() {
                allow_null_refs(child);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(allow_null_refs),
        _ => {}
    }
}

/// Where classification results deliberately differ from the reference's schema (see the
/// README): rows of taxa with reads only below them (`readcount` 0) and the root's `null`
/// parent, as the real service's own answers have them (its fixtures), the real service's
/// `filtered_readcount` fields, and what this service adds: re-estimated abundance, genome
/// copies by bases, the median read length and the reads' quality control. Nothing else is allowed.
fn classification_results_as_served(results: &mut Value) {
    if let Some(top) = results.pointer_mut("/properties").and_then(Value::as_object_mut) {
        top.insert("median_read_length".into(), json!({"type": "integer", "minimum": 0}));
        top.insert("qc".into(), json!({"type": "object", "required": ["reads", "bases", "failures"]}));
    }
    if let Some(row) = results.pointer_mut("/properties/table/items/properties").and_then(Value::as_object_mut) {
        row.insert("bases_abundance".into(), json!({"type": ["number", "null"], "minimum": 0, "maximum": 1}));
        row.insert("readcount".into(), json!({"type": "integer", "minimum": 0}));
        row.insert("parent_tax_id".into(), json!({"type": ["string", "null"]}));
        row.insert("filtered_readcount".into(), json!({"type": "integer", "minimum": 0}));
        row.insert("filtered_readcount_w_children".into(), json!({"type": "integer", "minimum": 0}));
        row.insert("reestimated_abundance".into(), json!({"type": ["number", "null"], "minimum": 0, "maximum": 1}));
    }
}

/// A link's target schema (for results and other non-resource answers).
fn target_schema(root: &Value, resource: &str, rel: &str) -> Value {
    let link = root["properties"][resource]["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["rel"] == json!(rel))
        .unwrap_or_else(|| panic!("no {rel} link of {resource}"))
        .clone();
    let mut s = link["targetSchema"].clone();
    allow_null_refs(&mut s);
    s
}

/// Walks every list, instance, public list, results and files answer of the populated service;
/// validates each against the reference schema; answers every instance seen, by collection, and
/// the problems found.
fn walk(http: &Http, url: &str, key: &str) -> (Map<String, Value>, Vec<String>) {
    let root: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/onecodex-api-v1-schema.json"),
        )
        .expect("shared/reference/onecodex-api-v1-schema.json beside the repository"),
    )
    .unwrap();
    let mut seen = Map::new();
    let mut problems = Vec::new();
    let check = |what: &str, schema: &Value, value: &Value, problems: &mut Vec<String>| {
        let validator = jsonschema::draft4::new(schema).unwrap_or_else(|e| panic!("schema of {what}: {e}"));
        for e in validator.iter_errors(value) {
            problems.push(format!("{what}: {} at {}", e, e.instance_path()));
        }
        // Every field the schema declares is there, required or not.
        if let (Some(props), Some(obj)) = (schema.get("properties").and_then(Value::as_object), value.as_object()) {
            for name in props.keys() {
                if !obj.contains_key(name) {
                    problems.push(format!("{what}: no field {name:?}"));
                }
            }
        }
    };
    let get = |path: &str| -> (u16, Value) { http.json("GET", &format!("{url}{path}"), key, None) };
    let collections = [
        "samples",
        "metadata",
        "classifications",
        "analyses",
        "alignments",
        "panels",
        "functional_profiles",
        "jobs",
        "documents",
        "projects",
        "tags",
        "users",
    ];
    for c in collections {
        let schema = resource_schema(&root, c);
        let (s, list) = get(&format!("/api/v1/{c}?per_page=1000"));
        assert_eq!(s, 200, "list {c}: {list}");
        let items = list.as_array().unwrap().clone();
        assert!(!items.is_empty(), "the walk needs at least one {c} record");
        let mut instances = Vec::new();
        for item in &items {
            check(&format!("GET /api/v1/{c} item {}", item["$uri"]), &schema, item, &mut problems);
            let id = id_of(item);
            let (s, one) = get(&format!("/api/v1/{c}/{id}"));
            assert_eq!(s, 200, "{c}/{id}: {one}");
            check(&format!("GET /api/v1/{c}/{id}"), &schema, &one, &mut problems);
            instances.push(one);
        }
        let has = |rel: &str| root["properties"][c]["links"].as_array().unwrap().iter().any(|l| l["rel"] == json!(rel));
        if has("instances_public") {
            let (s, public) = get(&format!("/api/v1/{c}/public?per_page=1000"));
            assert_eq!(s, 200, "{c}/public: {public}");
            for item in public.as_array().unwrap() {
                check(&format!("GET /api/v1/{c}/public item"), &schema, item, &mut problems);
            }
        }
        if has("results") {
            let mut results = target_schema(&root, c, "results");
            if c == "classifications" {
                classification_results_as_served(&mut results);
            }
            for item in &items {
                if item["success"] != json!(true) {
                    continue;
                }
                let id = id_of(item);
                let (s, r) = get(&format!("/api/v1/{c}/{id}/results"));
                if c == "analyses" || s == 400 {
                    // The generic route answers each kind's own results; kinds checked below.
                    continue;
                }
                assert_eq!(s, 200, "{c}/{id}/results: {r}");
                check(&format!("GET /api/v1/{c}/{id}/results"), &results, &r, &mut problems);
            }
        }
        if c == "projects" {
            let members = target_schema(&root, c, "members");
            for item in &items {
                let (s, m) = get(&format!("/api/v1/projects/{}/members", id_of(item)));
                assert_eq!(s, 200, "{m}");
                check("GET /api/v1/projects/{id}/members", &members, &m, &mut problems);
            }
        }
        seen.insert(c.to_string(), Value::Array(instances));
    }
    let (s, account) = get("/api/v1/account");
    assert_eq!(s, 200);
    check("GET /api/v1/account", &resource_schema(&root, "account"), &account, &mut problems);
    (seen, problems)
}

/// The real `onecodex` library and CLI against a populated `mgds serve`, and every answer of the
/// service against the reference schema and the client's models.
#[test]
fn the_real_onecodex_client_works_against_mgds() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let scratch = dir.path().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let serve = Serve::start(&data, &[]);
    let s3 = serve.s3_endpoint.clone().expect("mgds serve prints its S3 endpoint");
    let world = populate(&serve, &data, &scratch, &s3);
    let lab_key = world["users"]["lab"]["key"].as_str().unwrap().to_string();
    assert_eq!(lab_key.len(), 32, "keys are 32 characters, as the real service's");

    // The walk, before the Python tests add more.
    let http = Http::new();
    let (seen, problems) = walk(&http, &serve.url, &lab_key);
    let responses = scratch.join("responses.json");
    std::fs::write(&responses, serde_json::to_vec(&seen).unwrap()).unwrap();
    let out = Command::new(&python).arg(python_tests().join("validate_models.py")).arg(&responses).output().unwrap();
    let model_problems = String::from_utf8_lossy(&out.stdout).to_string();
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        problems.is_empty() && out.status.success(),
        "responses that break the reference schema:\n{}\nresponses the onecodex models refuse:\n{model_problems}",
        problems.join("\n")
    );

    // The library and the command line.
    let world_file = scratch.join("world.json");
    std::fs::write(&world_file, serde_json::to_vec_pretty(&world).unwrap()).unwrap();
    let mut child = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=short", "-x"])
        .arg(python_tests())
        .env("MGDS_WORLD", &world_file)
        .env("ONE_CODEX_NO_TELEMETRY", "1")
        .env("HOME", &scratch)
        .env_remove("ONE_CODEX_API_KEY")
        .env_remove("ONE_CODEX_API_BASE")
        .env("AWS_ENDPOINT_URL_S3", &s3)
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut report = String::new();
    child.stdout.take().unwrap().read_to_string(&mut report).unwrap();
    let status = child.wait().unwrap();
    eprintln!("{report}");
    assert!(status.success(), "the onecodex tests failed:\n{report}");
}
