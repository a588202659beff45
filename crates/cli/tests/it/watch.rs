//! `mgds watch` as a process: killed with SIGKILL at random points of a run and started again,
//! every file arrives exactly once; saved folders; the pause switch.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{Http, MGDS, Serve, create_user};

/// Reads with random bases (so the file stays a few tens of kB compressed and its upload,
/// under the bandwidth limit, takes a while: kills land inside transfers too).
fn fastq(prefix: &str, n: usize, rng: &mut Lcg) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    for i in 0..n {
        let seq: String = (0..96).map(|_| ['A', 'C', 'G', 'T'][rng.below(4) as usize]).collect();
        writeln!(e, "@{prefix}.{i}\n{seq}\n+\n{}", "I".repeat(96)).unwrap();
    }
    e.finish().unwrap()
}

fn watcher(url: &str, key: &str, folder: &Path, state: &Path, extra: &[&str]) -> Child {
    Command::new(MGDS)
        .args(["watch", "run", "--folder"])
        .arg(folder)
        .args(["--base-url", url, "--api-key", key, "--state-dir"])
        .arg(state)
        .args(["--poll-interval", "0.1", "--min-age", "0.1"])
        .args(extra)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("mgds watch starts")
}

/// Sample names on the service (with "?" appended for samples still awaiting data).
fn names(http: &Http, url: &str, key: &str) -> Vec<String> {
    let (s, md) = http.json("GET", &format!("{url}/api/v1/metadata?per_page=500"), key, None);
    assert_eq!(s, 200, "{md}");
    let (s, samples) = http.json("GET", &format!("{url}/api/v1/samples?per_page=500"), key, None);
    assert_eq!(s, 200, "{samples}");
    let mut out: Vec<String> = md
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let sid = m["sample"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
            let s = samples.as_array().unwrap().iter().find(|s| s["$uri"].as_str().unwrap().ends_with(&sid)).unwrap();
            let awaiting = s["visibility"] == Value::String("awaiting data".into());
            format!("{}{}", m["name"].as_str().unwrap_or(""), if awaiting { "?" } else { "" })
        })
        .collect();
    out.sort();
    out
}

/// A tiny deterministic generator (the test's fixed seed).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[test]
fn watch_killed_at_random_points_uploads_every_file_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("service");
    let serve = Serve::start(&data, &["--no-demo", "--workers", "0"]);
    let key = create_user(&data, "lab@example.org");
    let http = Http::new();
    let folder = dir.path().join("sequencer");
    let state = dir.path().join("watch-state");
    std::fs::create_dir_all(&folder).unwrap();

    let mut rng = Lcg(0x6d67_6473);
    let mut expected: Vec<String> = Vec::new();
    let mut child = watcher(&serve.url, &key, &folder, &state, &["--bandwidth", "300k"]);
    let started = Instant::now();
    // An Illumina-less "files" folder written over time, the watcher killed now and then.
    for i in 0..24 {
        let name = format!("isolate_{i:02}");
        let bytes = fastq(&name, 1000 + 50 * i, &mut rng);
        let path = folder.join(format!("{name}.fastq.gz"));
        let mut f = std::fs::File::create(&path).unwrap();
        for piece in bytes.chunks(bytes.len().div_ceil(3)) {
            f.write_all(piece).unwrap();
            f.flush().unwrap();
            std::thread::sleep(Duration::from_millis(rng.below(40)));
        }
        expected.push(name);
        if rng.below(3) == 0 {
            std::thread::sleep(Duration::from_millis(rng.below(400)));
            child.kill().unwrap(); // SIGKILL
            child.wait().unwrap();
            child = watcher(&serve.url, &key, &folder, &state, &["--bandwidth", "300k"]);
        }
    }
    // A few more kills once everything is written, while uploads go on.
    for round in 0..12 {
        std::thread::sleep(Duration::from_millis(100 + rng.below(500)));
        child.kill().unwrap();
        child.wait().unwrap();
        let limit: &[&str] = if round < 11 { &["--bandwidth", "300k"] } else { &[] };
        child = watcher(&serve.url, &key, &folder, &state, limit);
    }
    expected.sort();
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let got = names(&http, &serve.url, &key);
        if got == expected {
            break;
        }
        assert!(Instant::now() < deadline, "after {:?}: expected {expected:?}, got {got:?}", started.elapsed());
        std::thread::sleep(Duration::from_millis(100));
    }
    // The service has every sample; the last watcher writes its journal a moment later.
    let status = loop {
        let out = Command::new(MGDS).args(["watch", "status", "--json", "--state-dir"]).arg(&state).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let status: Value = serde_json::from_slice(&out.stdout).unwrap();
        let samples = status["samples"].as_array().unwrap();
        if samples.len() == expected.len() && samples.iter().all(|s| s["state"] == "confirmed") {
            break status;
        }
        assert!(Instant::now() < deadline, "the journal does not hold every sample as confirmed: {status:#}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = child.kill();
    child.wait().unwrap();
    assert_eq!(status["samples"].as_array().unwrap().len(), expected.len());
}

#[test]
fn saved_folders_and_the_pause_switch() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    let folder = dir.path().join("runs");
    std::fs::create_dir_all(&folder).unwrap();
    let mgds = |args: &[&str]| {
        let out = Command::new(MGDS).args(args).env("MGDS_CONFIG_DIR", &config).env("NO_COLOR", "1").output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let f = folder.to_str().unwrap();
    let (code, _, err) = mgds(&["watch", "add", f, "--layout", "illumina", "--tag", "miseq", "--no-join-lanes"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = mgds(&["watch", "add", f]);
    assert_eq!(code, Some(1));
    assert!(err.contains("already watched"), "{err}");
    let (_, out, _) = mgds(&["watch", "list", "--json"]);
    let list: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list[0]["layout"], "illumina");
    assert_eq!(list[0]["tags"][0], "miseq");
    assert_eq!(list[0]["illumina"]["join_lanes"], false);

    // Settings changed in place; the upload limit kept beside the folders.
    let (code, _, err) = mgds(&["watch", "add", f, "--replace", "--tag", "nextseq", "--exclude", "Undetermined_*"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("settings changed"), "{err}");
    let (_, out, _) = mgds(&["watch", "list", "--json"]);
    let list: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(
        (&list[0]["layout"], &list[0]["tags"][0], &list[0]["exclude"][0]),
        (&json!("auto"), &json!("nextseq"), &json!("Undetermined_*"))
    );
    let (code, _, err) = mgds(&["watch", "add", dir.path().join("elsewhere").to_str().unwrap(), "--replace"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("elsewhere"), "{err}");
    assert_eq!(mgds(&["watch", "limit", "12.5M"]).0, Some(0));
    assert!(std::fs::read_to_string(config.join("watch.toml")).unwrap().contains("upload_limit = 12500000"));
    let (_, _, err) = mgds(&["watch", "list"]);
    assert!(err.contains("limited to 12.5 MB/s"), "{err}");
    let (code, _, err) = mgds(&["watch", "limit", "fast"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("not a rate"), "{err}");
    assert_eq!(mgds(&["watch", "limit", "off"]).0, Some(0));
    assert!(!std::fs::read_to_string(config.join("watch.toml")).unwrap().contains("upload_limit"));

    let (code, _, _) = mgds(&["watch", "remove", f]);
    assert_eq!(code, Some(0));
    let (_, out, _) = mgds(&["watch", "list"]);
    assert!(out.trim().is_empty(), "{out}");
    let (code, _, err) = mgds(&["watch", "run", "--base-url", "http://127.0.0.1:9", "--api-key", "x"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("no folder to watch"), "{err}");

    let state = dir.path().join("state");
    let s = state.to_str().unwrap();
    assert_eq!(mgds(&["watch", "pause", "--state-dir", s]).0, Some(0));
    assert!(state.join("watch.paused").exists());
    assert_eq!(mgds(&["watch", "resume", "--state-dir", s]).0, Some(0));
    assert!(!state.join("watch.paused").exists());
    let (code, _, _) = mgds(&["watch", "run", "--layout", "bogus", "--folder", f]);
    assert_eq!(code, Some(2));
}

/// Headless alerts: rules saved with `mgds watch alert` and given to `mgds watch run`; a
/// classified sample that crosses one is printed on stdout, posted to the webhook and logged in
/// the queue, once; `mgds watch live` and `mgds watch alert log` read them back.
#[test]
fn alerts_are_printed_posted_to_a_webhook_and_logged_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("service");
    let config = dir.path().join("config");
    let serve = Serve::start(&data, &[]);
    let key = create_user(&data, "lab@example.org");
    let mgds = |args: &[&str]| {
        let out = Command::new(MGDS).args(args).env("MGDS_CONFIG_DIR", &config).env("NO_COLOR", "1").output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, _, err) = mgds(&["watch", "alert", "add", "Escherichia coli >= 5%"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = mgds(&["watch", "alert", "add", "Escherichia coli 5%"]);
    assert_eq!(code, Some(2), "a rule without >= is a wrong command line");
    assert!(err.contains("no `>=`"), "{err}");
    let (_, listed, _) = mgds(&["watch", "alert", "list"]);
    assert_eq!(listed.trim(), "every folder\tEscherichia coli >= 5%");

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hooks/lab", listener.local_addr().unwrap());
    let posted = mgds_webhook::testing::receive_on(listener);
    let folder = dir.path().join("incoming");
    let state = dir.path().join("watch-state");
    std::fs::create_dir_all(&folder).unwrap();
    let watcher = Command::new(MGDS)
        .args(["watch", "run", "--folder"])
        .arg(&folder)
        .args(["--base-url", &serve.url, "--api-key", &key, "--state-dir"])
        .arg(&state)
        .args(["--poll-interval", "0.1", "--min-age", "0.1", "--layout", "files"])
        .args(["--alert", "Vibrio cholerae >= 1000000 reads", "--alert-webhook", &url])
        .env("MGDS_ALERT_WEBHOOK_SECRET", "lab-secret")
        .env("MGDS_CONFIG_DIR", &config)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("mgds watch starts");
    std::fs::write(folder.join("isolate_7.fastq.gz"), crate::engines::demo_reads()).unwrap();
    let got = posted.recv_timeout(Duration::from_secs(120)).expect("the alert is posted to the webhook");
    assert_eq!((got.path.as_str(), got.event.as_str()), ("/hooks/lab", "alert"));
    // Signed as the service's webhooks are.
    mgds_webhook::verify(b"lab-secret", &got.signature, &got.body, mgds_webhook::unix_now(), 300).unwrap();
    assert!(mgds_webhook::verify(b"other", &got.signature, &got.body, mgds_webhook::unix_now(), 300).is_err());
    let body = String::from_utf8(got.body).unwrap();
    let alert: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (&alert["taxon"], &alert["rule"], &alert["label"]),
        (&json!("Escherichia coli"), &json!("Escherichia coli >= 5%"), &json!("isolate_7"))
    );
    assert!(alert["percent"].as_f64().unwrap() > 5.0, "{alert}");
    assert!(alert["text"].as_str().unwrap().starts_with("MGDS alert: isolate_7: Escherichia coli (562)"), "{alert}");

    let (_, log, _) = mgds(&["watch", "alert", "log", "--json", "--state-dir", state.to_str().unwrap()]);
    let log: Value = serde_json::from_str(&log).unwrap();
    assert_eq!(log.as_array().unwrap().len(), 1, "{log}");
    let (_, live, _) = mgds(&["watch", "live", "--json", "--state-dir", state.to_str().unwrap()]);
    let live: Value = serde_json::from_str(&live).unwrap();
    assert!(live.as_array().unwrap().is_empty(), "a plain file is no run: {live}");

    Command::new("kill").arg("-TERM").arg(watcher.id().to_string()).status().unwrap();
    let out = watcher.wait_with_output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("ALERT ")).collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    assert!(
        lines[0].contains("isolate_7: Escherichia coli (562)") && lines[0].contains("rule: Escherichia coli >= 5%"),
        "{stdout}"
    );
    assert!(posted.recv_timeout(Duration::from_secs(1)).is_err(), "posted once");

    let (code, _, _) = mgds(&["watch", "alert", "remove", "Escherichia coli >= 5%"]);
    assert_eq!(code, Some(0));
    let (_, listed, _) = mgds(&["watch", "alert", "list"]);
    assert!(listed.trim().is_empty(), "{listed}");
}
