//! The analyses of a freshly started `mgds serve`: an uploaded FASTQ is classified with no other
//! action, and a service killed in the middle of a classification finishes it after a restart.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{Http, MGDS, Serve, create_user, ok};

fn demo_reads() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo/reads.fastq.gz")).unwrap()
}

/// Waits until `check` answers `Some`, polling every 100 ms, for at most `secs` seconds.
fn wait_for<T>(secs: u64, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The primary classification of the only sample, once it has finished.
fn finished_primary(c: &Http, url: &str, key: &str) -> (String, Value) {
    wait_for(180, "the primary classification", || {
        let (_, samples) = c.json("GET", &format!("{url}/api/v1/samples"), key, None);
        let r = samples.get(0)?["primary_classification"]["$ref"].as_str()?.to_string();
        let id = r.rsplit('/').next()?.to_string();
        let (_, a) = c.json("GET", &format!("{url}/api/v1/classifications/{id}"), key, None);
        (a["complete"] == json!(true)).then_some((id, a))
    })
}

#[test]
fn an_upload_to_a_fresh_service_gets_its_classification_with_no_other_action() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let serve = Serve::start(&data, &[]);
    let key = create_user(&data, "lab@example.org");
    let reads = dir.path().join("reads.fastq.gz");
    std::fs::write(&reads, demo_reads()).unwrap();
    let out = Command::new(MGDS)
        .args(["--base-url", &serve.url, "--api-key", &key, "upload"])
        .arg(&reads)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    ok(&out);

    let c = Http::new();
    let (id, a) = finished_primary(&c, &serve.url, &key);
    assert_eq!(a["success"], json!(true), "{a}");
    let (s, results) = c.json("GET", &format!("{}/api/v1/classifications/{id}/results", serve.url), &key, None);
    assert_eq!(s, 200);
    assert_eq!(results["n_reads"], json!(6000));
    assert!(results["table"].as_array().unwrap().iter().any(|r| r["name"] == json!("Escherichia coli")), "{results}");
    let (s, rl) = c.json("GET", &format!("{}/api/v1/classifications/{id}/readlevel", serve.url), &key, None);
    assert_eq!(s, 200);
    let body = c.rt.block_on(async { c.client.get(rl["url"].as_str().unwrap()).send().await.unwrap().bytes().await.unwrap() });
    let mut tsv = String::new();
    std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(&body[..]), &mut tsv).unwrap();
    assert_eq!(tsv.lines().count(), 6001, "a header and one row per read");

    // The same results through the command line, as a species table.
    let out = Command::new(MGDS)
        .args(["--base-url", &serve.url, "--api-key", &key, "analyses", "results", &id])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(ok(&out).contains("Escherichia coli"));
}

#[test]
fn a_service_killed_during_a_classification_finishes_it_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // A sample big enough that the classification is still running when the service dies: the
    // demo reads many times over (concatenated gzip members are one valid file).
    let one = demo_reads();
    let big: Vec<u8> = std::iter::repeat_n(one.as_slice(), 40).flatten().copied().collect();
    let reads = dir.path().join("big.fastq.gz");
    std::fs::write(&reads, &big).unwrap();

    let lease = ["--job-lease", "2", "--threads", "1"];
    let mut serve = Serve::start(&data, &lease);
    let key = create_user(&data, "lab@example.org");
    ok(&Command::new(MGDS).args(["--base-url", &serve.url, "--api-key", &key, "upload"]).arg(&reads).output().unwrap());
    // The engine is at work once it has a folder in work/.
    wait_for(60, "the classification to start", || {
        std::fs::read_dir(data.join("work")).ok()?.next().map(|_| ())
    });
    serve.child.kill().unwrap();
    serve.child.wait().unwrap();

    let c = Http::new();
    let serve = Serve::start(&data, &lease);
    let (id, a) = finished_primary(&c, &serve.url, &key);
    assert_eq!(a["success"], json!(true), "run again after the lease lapsed: {a}");
    let (_, results) = c.json("GET", &format!("{}/api/v1/classifications/{id}/results", serve.url), &key, None);
    assert_eq!(results["n_reads"], json!(240_000), "every read of the whole file");
}
