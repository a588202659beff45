//! The analyses of a freshly started `mgds serve`: an uploaded FASTQ is classified with no other
//! action, and a service killed in the middle of a classification finishes it after a restart.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::procs::Proc;
use crate::{Http, MGDS, Serve, create_user, ok, varied_pair};

pub(crate) fn demo_reads() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo/reads.fastq.gz")).unwrap()
}

/// Waits until `check` answers `Some`, polling every 100 ms, for at most `secs` seconds.
pub(crate) fn wait_for<T>(secs: u64, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
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
pub(crate) fn finished_primary(c: &Http, url: &str, key: &str) -> (String, Value) {
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
    assert_eq!(results["n_reads"], json!(10_019));
    assert!(results["table"].as_array().unwrap().iter().any(|r| r["name"] == json!("Escherichia coli")), "{results}");
    let (s, rl) = c.json("GET", &format!("{}/api/v1/classifications/{id}/readlevel", serve.url), &key, None);
    assert_eq!(s, 200);
    let body =
        c.rt.block_on(async { c.client.get(rl["url"].as_str().unwrap()).send().await.unwrap().bytes().await.unwrap() });
    let mut tsv = String::new();
    std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(&body[..]), &mut tsv).unwrap();
    assert_eq!(tsv.lines().count(), 10_020, "a header and one row per read");

    // The same results through the command line, as a species table.
    let out = Command::new(MGDS)
        .args(["--base-url", &serve.url, "--api-key", &key, "analyses", "results", &id])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(ok(&out).contains("Escherichia coli"));

    // A functional profile run from the command line, and its table downloaded; a
    // classification has no such file and says so.
    let mgds = |args: &[&str]| {
        Command::new(MGDS)
            .args(["--base-url", &serve.url, "--api-key", &key])
            .args(args)
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let jobs: Value = serde_json::from_str(&ok(&mgds(&["jobs", "list", "--json"]))).unwrap();
    let profile_job = jobs
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["analysis_type"] == json!("functional_profile"))
        .expect("a functional profile job");
    let job_id = profile_job["$uri"].as_str().unwrap().rsplit('/').next().unwrap();
    let sample = a["sample"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap();
    let done: Value = serde_json::from_str(&ok(&mgds(&["jobs", "run", job_id, "--sample", sample, "--wait"]))).unwrap();
    let profile_id = done["$uri"].as_str().unwrap().rsplit('/').next().unwrap();
    let tsv = dir.path().join("functions.tsv");
    ok(&mgds(&["analyses", "download", profile_id, "-o", tsv.to_str().unwrap()]));
    let table = std::fs::read_to_string(&tsv).unwrap();
    assert!(table.lines().count() > 2, "the demo reads map to the demo catalogue: {table}");
    let out = mgds(&["analyses", "download", &id, "-o", dir.path().join("x").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is a classification") && err.contains("mgds readlevel download"), "{err}");
    assert!(!dir.path().join("x").exists());
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
    wait_for(60, "the classification to start", || std::fs::read_dir(data.join("work")).ok()?.next().map(|_| ()));
    serve.child.kill().unwrap();
    serve.child.wait().unwrap();

    let c = Http::new();
    let serve = Serve::start(&data, &lease);
    let (id, a) = finished_primary(&c, &serve.url, &key);
    assert_eq!(a["success"], json!(true), "run again after the lease lapsed: {a}");
    let (_, results) = c.json("GET", &format!("{}/api/v1/classifications/{id}/results", serve.url), &key, None);
    assert_eq!(results["n_reads"], json!(40 * 10_019), "every read of the whole file");
}

/// SIGTERM in the middle of an analysis: the worker stops its engine, gives the analysis back
/// to the queue at once (its lease of an hour is not waited out) and exits 0, leaving no work
/// folder; the next worker runs it, once.
#[test]
fn a_worker_stopped_mid_analysis_gives_it_back_and_the_next_runs_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let one = demo_reads();
    let big: Vec<u8> = std::iter::repeat_n(one.as_slice(), 40).flatten().copied().collect();
    let reads = dir.path().join("big.fastq.gz");
    std::fs::write(&reads, &big).unwrap();
    let serve = Serve::start(&data, &["--workers", "0"]);
    let key = create_user(&data, "lab@example.org");
    ok(&Command::new(MGDS).args(["--base-url", &serve.url, "--api-key", &key, "upload"]).arg(&reads).output().unwrap());
    let worker = || {
        let mut c = Command::new(MGDS);
        c.arg("--data-dir")
            .arg(&data)
            .args(["worker", "--threads", "1", "--job-lease", "3600"])
            .env("MGDS_LOG", "info");
        Proc::spawn(c)
    };
    let work = data.join("work");
    let mut first = worker();
    wait_for(60, "the classification to start", || std::fs::read_dir(&work).ok()?.next().map(|_| ()));
    Command::new("kill").arg("-TERM").arg(first.child.id().to_string()).status().unwrap();
    let status = first.child.wait().unwrap();
    assert!(status.success(), "the worker exits 0 on SIGTERM: {status}\n{}", first.log());
    // Its last line may still be on its way from the pipe to the log when it has exited.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !first.log().contains("gave 1 unfinished analysis back to the queue") {
        assert!(Instant::now() < deadline, "the worker never said it gave the analysis back:\n{}", first.log());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(first.completed(), 0);
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0, "the stopped run's work folder is removed");

    let second = worker();
    let c = Http::new();
    let (id, a) = finished_primary(&c, &serve.url, &key);
    assert_eq!(a["success"], json!(true), "{a}");
    let (_, results) = c.json("GET", &format!("{}/api/v1/classifications/{id}/results", serve.url), &key, None);
    assert_eq!(results["n_reads"], json!(40 * 10_019));
    assert_eq!(second.completed(), 1, "{}", second.log());
}

#[test]
fn db_build_installs_a_new_versioned_job_and_a_separate_worker_runs_analyses() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo");
    let db = |args: &[&str]| {
        Command::new(MGDS).args(["--data-dir"]).arg(&data).arg("db").args(args).env("NO_COLOR", "1").output().unwrap()
    };
    ok(&db(&["install", "--demo"]));
    // A database of one genome of the demo (the same genomes as the demo would be the same
    // database, and so the same job).
    let mut all = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::MultiGzDecoder::new(std::fs::File::open(demo.join("genomes.fa.gz")).unwrap()),
        &mut all,
    )
    .unwrap();
    let first = &all[..all[1..].find('>').map_or(all.len(), |i| i + 1)];
    let id = first[1..].split_whitespace().next().unwrap();
    let map = std::fs::read_to_string(demo.join("seqid2taxid.tsv")).unwrap();
    let row = map.lines().find(|l| l.split('\t').next() == Some(id)).unwrap();
    let (fasta, seqmap) = (dir.path().join("one.fa"), dir.path().join("one.tsv"));
    std::fs::write(&fasta, first).unwrap();
    std::fs::write(&seqmap, format!("{row}\n")).unwrap();
    let build = |name: &str| {
        db(&[
            "build",
            "--name",
            name,
            "--fasta",
            fasta.to_str().unwrap(),
            "--seqid2taxid",
            seqmap.to_str().unwrap(),
            "--taxonomy",
            demo.join("taxonomy").to_str().unwrap(),
        ])
    };
    // The build says what genomes it found, per species, with their mean length.
    let built = ok(&build("lab-genomes"));
    let species_line = built.lines().find(|l| l.contains("Escherichia coli")).unwrap_or_else(|| panic!("{built}"));
    assert!(built.contains("mean_length_bp") && species_line.contains("60000"), "{built}");
    let list = ok(&db(&["list"]));
    assert!(list.lines().any(|l| l.starts_with("lab-genomes\tclassification\tlab-genomes\t")), "{list}");
    // And keeps it for `db list --json`.
    let json: Value = serde_json::from_str(&ok(&db(&["list", "--json"]))).unwrap();
    let entry = json.as_array().unwrap().iter().find(|e| e["folder"] == json!("lab-genomes")).expect("listed");
    let genomes = entry["genomes"].as_array().unwrap();
    assert_eq!(genomes.len(), 1, "{entry}");
    assert_eq!(
        (&genomes[0]["tax_id"], &genomes[0]["genomes"], &genomes[0]["sequences"], &genomes[0]["mean_length"]),
        (&json!(562), &json!(1), &json!(1), &json!(60000)),
        "{entry}"
    );
    assert!(list.lines().any(|l| l.starts_with("demo-bacteria\t") && l.ends_with("default")), "{list}");
    // The same name twice is refused with what to do.
    let again = build("lab-genomes");
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("installed already"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );

    // A service without workers, and a worker process beside it.
    let serve = Serve::start(&data, &["--workers", "0"]);
    let key = create_user(&data, "lab@example.org");
    let c = Http::new();
    let (_, jobs) = c.json("GET", &format!("{}/api/v1/jobs?per_page=100", serve.url), &key, None);
    let classification_jobs =
        jobs.as_array().unwrap().iter().filter(|j| j["analysis_type"] == json!("classification")).count();
    assert_eq!(classification_jobs, 2, "one job per installed database: {jobs}");
    let reads = dir.path().join("reads.fastq.gz");
    std::fs::write(&reads, demo_reads()).unwrap();
    ok(&Command::new(MGDS).args(["--base-url", &serve.url, "--api-key", &key, "upload"]).arg(&reads).output().unwrap());
    let mut worker =
        Command::new(MGDS).args(["--data-dir"]).arg(&data).args(["worker", "--threads", "1"]).spawn().unwrap();
    let (_, a) = finished_primary(&c, &serve.url, &key);
    assert_eq!(a["success"], json!(true), "{a}");
    // SIGTERM stops the worker cleanly.
    Command::new("kill").arg("-TERM").arg(worker.id().to_string()).status().unwrap();
    let status = worker.wait().unwrap();
    assert!(status.success(), "the worker exits 0 on SIGTERM: {status}");
}

/// One FASTA record of `bases` bases (a repeating pattern, so the gzip stays small), gzipped.
fn huge_record_fasta_gz(bases: usize) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b">huge one enormous record\n").unwrap();
    let line: Vec<u8> = b"ACGTTGCAAGGCTTACGATCGATCGGATCCATGCATGCAAATTTGGGCCCTTAAGGCCAT\n".to_vec();
    for _ in 0..bases / 60 {
        gz.write_all(&line).unwrap();
    }
    gz.finish().unwrap()
}

/// Uploads `bytes` as `filename` through the three steps (no client-side checks); returns the
/// sample id.
pub(crate) fn upload_raw(c: &Http, url: &str, key: &str, filename: &str, bytes: &[u8]) -> String {
    let (s, init) = c.json(
        "POST",
        &format!("{url}/api/v1/samples/init_upload"),
        key,
        Some(json!({"filename": filename, "size": bytes.len()})),
    );
    assert_eq!(s, 200, "{init}");
    let status = c.upload(init["upload_url"].as_str().unwrap(), init["additional_fields"].as_object().unwrap(), bytes);
    assert_eq!(status, 201);
    let id = init["sample_id"].as_str().unwrap().to_string();
    let (s, b) = c.json("POST", &format!("{url}/api/v1/samples/confirm_upload"), key, Some(json!({"sample_id": id})));
    assert_eq!(s, 200, "{b}");
    id
}

/// The primary classification of sample `id`, once complete.
pub(crate) fn finished_classification(c: &Http, url: &str, key: &str, id: &str) -> Value {
    wait_for(300, "a classification", || {
        let (_, sample) = c.json("GET", &format!("{url}/api/v1/samples/{id}"), key, None);
        let r = sample["primary_classification"]["$ref"].as_str()?.to_string();
        let (_, a) = c.json("GET", &format!("{url}{r}"), key, None);
        (a["complete"] == json!(true)).then_some(a)
    })
}

/// Peak resident memory of process `pid`, in MB.
fn peak_mb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap();
    kb / 1024
}

/// The engine processes the service `pid` has started and that are running now.
fn engine_processes(pid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            let parent = stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().nth(1)).unwrap_or_default();
            let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            parent == pid.to_string() && String::from_utf8_lossy(&cmdline).contains("__mgds-engine")
        })
        .collect()
}

#[test]
fn one_enormous_record_fails_its_own_analysis_once_and_the_service_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let serve = Serve::start(&data, &[]);
    let key = create_user(&data, "lab@example.org");
    let c = Http::new();
    // 250 Mbp in one record: under a megabyte of gzip.
    let huge = huge_record_fasta_gz(250_000_000);
    assert!(huge.len() < 5_000_000, "{} bytes", huge.len());
    let bad = upload_raw(&c, &serve.url, &key, "one_record.fasta.gz", &huge);
    let good = upload_raw(&c, &serve.url, &key, "reads.fastq.gz", &demo_reads());

    let a = finished_classification(&c, &serve.url, &key, &bad);
    assert_eq!(a["success"], json!(false), "{a}");
    let msg = a["error_msg"].as_str().unwrap();
    assert!(msg.contains("huge") && msg.contains("32 Mbp") && msg.contains("--max-record-length"), "{msg}");
    assert!(msg.contains("one_record.fasta.gz"), "the message names the file: {msg}");
    // The other analysis is untouched.
    let a = finished_classification(&c, &serve.url, &key, &good);
    assert_eq!(a["success"], json!(true), "{a}");
    // The engines ran in processes of their own: the service never held the record.
    let peak = peak_mb(serve.child.id());
    eprintln!("service peak with a 250 Mbp record refused by the record limit: {peak} MB");
    assert!(peak < 150, "the service process peaked at {peak} MB");
    drop(serve);

    // Past the record limit, the memory ceiling stops it: once, with a message, not retried.
    let serve = Serve::start(&data, &["--max-record-length", "1000000000", "--engine-memory", "200"]);
    let again = upload_raw(&c, &serve.url, &key, "one_record.fasta.gz", &huge);
    let started = Instant::now();
    let a = finished_classification(&c, &serve.url, &key, &again);
    assert_eq!(a["success"], json!(false), "{a}");
    let msg = a["error_msg"].as_str().unwrap();
    assert!(msg.contains("memory") && msg.contains("ceiling") && msg.contains("--engine-memory"), "{msg}");
    assert!(started.elapsed() < Duration::from_secs(60), "failed at once, not after retries");
    let peak = peak_mb(serve.child.id());
    eprintln!("service peak with the same record stopped by a 200 MB engine ceiling: {peak} MB ({msg})");
    assert!(peak < 150, "the service process peaked at {peak} MB");
}

#[test]
fn an_engine_process_killed_from_outside_is_tried_again_while_the_service_answers() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let serve = Serve::start(&data, &["--retry-after", "1"]);
    let key = create_user(&data, "lab@example.org");
    let c = Http::new();
    // The demo reads 40 times over (gzip members one after another): long enough to be caught.
    let reads: Vec<u8> = (0..40).flat_map(|_| demo_reads()).collect();
    let id = upload_raw(&c, &serve.url, &key, "reads.fastq.gz", &reads);
    let pid = serve.child.id();
    let deadline = Instant::now() + Duration::from_secs(120);
    let engine = loop {
        if let Some(p) = engine_processes(pid).into_iter().next() {
            break p;
        }
        assert!(Instant::now() < deadline, "no engine process was started");
        std::thread::sleep(Duration::from_millis(5));
    };
    let killed = Command::new("kill").args(["-KILL", &engine.to_string()]).status().unwrap();
    assert!(killed.success());
    // The service answers throughout.
    let (s, _) = c.json("GET", &format!("{}/api/v1/samples", serve.url), &key, None);
    assert_eq!(s, 200);
    let a = finished_classification(&c, &serve.url, &key, &id);
    assert_eq!(a["success"], json!(true), "tried again after the kill: {a}");
}

#[test]
fn a_corpus_of_bad_files_each_gets_a_clear_outcome_and_the_service_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let serve = Serve::start(&data, &["--retry-after", "1"]);
    let key = create_user(&data, "lab@example.org");
    let c = Http::new();
    let demo = demo_reads();
    let gz = |bytes: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    };
    let tiny: Vec<u8> = (0..1_000_000).flat_map(|i| format!(">r{i}\nACGTACGTAC\n").into_bytes()).collect();
    let mut binary = vec![0u8; 4096];
    for (i, b) in binary.iter_mut().enumerate() {
        *b = (i * 7919 % 251) as u8;
    }
    // (file name, bytes, words the analysis's error must hold; empty: it succeeds)
    let cases: Vec<(&str, Vec<u8>, &[&str])> = vec![
        ("truncated.fastq.gz", demo[..demo.len() / 2].to_vec(), &["truncated.fastq.gz"]),
        ("reads.fastq.bz2.fastq", b"BZh91AY&SY\x00\x00\x00\x00".to_vec(), &["bzip2"]),
        ("reads.fastq.zst.fastq", b"\x28\xb5\x2f\xfd\x00\x00\x00\x00".to_vec(), &["zstd"]),
        ("bad_quality.fastq", b"@r1\nACGT\n+\nII I\n".to_vec(), &["line 4", "quality"]),
        ("binary.fastq", binary, &["binary.fastq"]),
        ("tiny_records.fasta.gz", gz(&tiny), &[]),
        ("with spaces.fastq", b"@r1\nACGTACGTAC\n+\nIIIIIIIIII\n".to_vec(), &[]),
    ];
    for (name, bytes, want) in &cases {
        let id = upload_raw(&c, &serve.url, &key, name, bytes);
        let a = finished_classification(&c, &serve.url, &key, &id);
        if want.is_empty() {
            assert_eq!(a["success"], json!(true), "{name}: {a}");
        } else {
            assert_eq!(a["success"], json!(false), "{name}: {a}");
            let msg = a["error_msg"].as_str().unwrap().to_lowercase();
            for w in *want {
                assert!(msg.contains(&w.to_lowercase()), "{name}: {msg:?} should hold {w:?}");
            }
        }
    }
    // Refused before any upload, with the field named: no name, a name that is not ASCII, no bytes.
    for (body, words) in [
        (json!({"filename": "réads.fastq", "size": 10}), &["é"][..]),
        (json!({"filename": "   ", "size": 10}), &["name"][..]),
        (json!({"filename": "empty.fastq", "size": 0}), &["size"][..]),
    ] {
        let (s, b) = c.json("POST", &format!("{}/api/v1/samples/init_upload", serve.url), &key, Some(body.clone()));
        assert_eq!(s, 400, "{body}: {b}");
        let msg = b["message"].as_str().unwrap();
        assert!(words.iter().all(|w| msg.contains(w)), "{body}: {msg}");
    }
    let peak = peak_mb(serve.child.id());
    eprintln!("service peak over the bad-file corpus: {peak} MB");
    assert!(peak < 150, "the service process peaked at {peak} MB");
}

/// Writes `bytes` to `key` of the service's S3-compatible endpoint `endpoint` with the
/// credentials an `init_multipart_upload` answer `init` minted, as an S3 client does.
pub(crate) fn s3_put(c: &Http, endpoint: &str, init: &Value, key: &str, bytes: Vec<u8>) {
    use object_store::ObjectStoreExt;
    let store = object_store::aws::AmazonS3Builder::new()
        .with_endpoint(endpoint)
        .with_bucket_name(init["s3_bucket"].as_str().unwrap())
        .with_region("us-east-1")
        .with_access_key_id(init["upload_aws_access_key_id"].as_str().unwrap())
        .with_secret_access_key(init["upload_aws_secret_access_key"].as_str().unwrap())
        .with_allow_http(true)
        .with_virtual_hosted_style_request(false)
        .build()
        .unwrap();
    c.rt.block_on(store.put(&object_store::path::Path::from(key), bytes.into())).expect("the endpoint stores the file");
}

/// A pair uploaded as two files through `init_multipart_upload`, as the `onecodex` client sends
/// one; answers the init answer and the callback's status, body and time.
fn upload_pair(
    serve: &Serve,
    c: &Http,
    key: &str,
    names: [&str; 2],
    files: [Vec<u8>; 2],
) -> (Value, u16, Value, Duration) {
    let (s, init) = c.json(
        "POST",
        &format!("{}/api/v1/samples/init_multipart_upload", serve.url),
        key,
        Some(json!({"filename": names[0], "paired_end_filename": names[1]})),
    );
    assert_eq!(s, 200, "{init}");
    let endpoint = serve.s3_endpoint.clone().unwrap();
    let [r1, r2] = files;
    s3_put(c, &endpoint, &init, init["file_id"].as_str().unwrap(), r1);
    s3_put(c, &endpoint, &init, init["paired_end_file_id"].as_str().unwrap(), r2);
    let started = Instant::now();
    let (s, body) = c.json(
        "POST",
        &format!("{}{}", serve.url, init["callback_url"].as_str().unwrap()),
        key,
        Some(json!({"s3_path": format!("s3://mgds-uploads/{}", init["file_id"].as_str().unwrap())})),
    );
    (init, s, body, started.elapsed())
}

/// A pair that arrives through the S3 path is joined where analyses run, never in the service:
/// the callback answers at once (the sample `importing`), the joined file becomes the sample's
/// and is classified; a pair of one enormous record per mate, or whose mates do not pair, fails
/// its sample with the reason in `error_msg`, naming the files as uploaded and no path on the
/// service; the service's memory stays small throughout.
#[test]
fn a_pair_is_joined_by_a_worker_and_a_hostile_pair_fails_its_sample_while_the_service_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let serve = Serve::start(&data, &[]);
    let key = create_user(&data, "lab@example.org");
    let c = Http::new();
    let sample = |id: &str| c.json("GET", &format!("{}/api/v1/samples/{id}", serve.url), &key, None).1;

    // One 200 Mbp record per mate: a megabyte of gzip each, 400 Mbp once joined.
    let huge = huge_record_fasta_gz(200_000_000);
    let (_, s, body, took) =
        upload_pair(&serve, &c, &key, ["leak_R1.fasta.gz", "leak_R2.fasta.gz"], [huge.clone(), huge]);
    assert_eq!(s, 200, "{body}");
    eprintln!("callback of a pair of 200 Mbp records answered in {took:?}");
    assert!(took < Duration::from_secs(1), "the callback answers at once: {took:?}");
    let id = body["sample_id"].as_str().unwrap().to_string();
    assert_eq!(sample(&id)["visibility"], json!("importing"));
    let why = wait_for(120, "the join to fail", || sample(&id)["error_msg"].as_str().map(str::to_string));
    assert!(why.contains("leak_R1.fasta.gz") && why.contains("--max-record-length"), "{why}");
    assert!(!why.contains('/'), "no path of the service in {why:?}");
    assert_eq!(sample(&id)["visibility"], json!("importing"), "a failed join leaves no file");

    // Mates that do not pair: the reason names the uploaded files.
    let pairs = dir.path().join("pairs");
    varied_pair(&pairs, 200);
    let r1 = std::fs::read(pairs.join("gut_S1_L001_R1_001.fastq")).unwrap();
    let r2 = std::fs::read(pairs.join("gut_S1_L001_R2_001.fastq")).unwrap();
    // Read 2 one record short.
    let mut short = r2.split(|b| *b == b'\n').take(796).collect::<Vec<_>>().join(&b'\n');
    short.push(b'\n');
    let (_, s, body, _) = upload_pair(&serve, &c, &key, ["odd_R1.fastq", "odd_R2.fastq"], [r1.clone(), short]);
    assert_eq!(s, 200, "{body}");
    let odd = body["sample_id"].as_str().unwrap().to_string();
    let why = wait_for(60, "the join to fail", || sample(&odd)["error_msg"].as_str().map(str::to_string));
    assert!(why.contains("could not be joined") && why.contains("odd_R"), "{why}");
    assert!(!why.contains(&data.display().to_string()) && !why.contains("objects/"), "{why}");

    // A good pair: one interleaved sample, classified.
    let (_, s, body, took) = upload_pair(&serve, &c, &key, ["gut_R1.fastq", "gut_R2.fastq"], [r1, r2]);
    assert_eq!(s, 200, "{body}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    let good = body["sample_id"].as_str().unwrap().to_string();
    let joined = wait_for(60, "the join", || {
        let s = sample(&good);
        (s["visibility"] == json!("private")).then_some(s)
    });
    assert_eq!(joined["filename"], json!("gut_interleaved.fastq.gz"), "{joined}");
    assert!(joined["size"].as_u64().unwrap() > 0);
    assert!(joined.get("error_msg").is_none(), "{joined}");
    let a = finished_classification(&c, &serve.url, &key, &good);
    assert_eq!(a["success"], json!(true), "{a}");

    let peak = peak_mb(serve.child.id());
    eprintln!("service peak with pairs joined by its worker: {peak} MB");
    assert!(peak < 150, "the service process peaked at {peak} MB");
}

/// The analyses of one reference share a warm engine process: it stays after an analysis, its
/// database mapped, and takes the next; killed while it waits, the next analysis starts a new
/// one; with `--warm-engines 0` none stays. The results are the same either way.
#[test]
fn analyses_of_one_reference_share_a_warm_engine_that_a_kill_only_replaces() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let serve = Serve::start(&data, &["--engine-idle", "600"]);
    let key = create_user(&data, "lab@example.org");
    let c = Http::new();
    let pid = serve.child.id();
    let table = |a: &Value| {
        let (_, r) = c.json("GET", &format!("{}{}/results", serve.url, a["$uri"].as_str().unwrap()), &key, None);
        r
    };
    let first = upload_raw(&c, &serve.url, &key, "reads.fastq.gz", &demo_reads());
    let a = finished_classification(&c, &serve.url, &key, &first);
    assert_eq!(a["success"], json!(true), "{a}");
    let warm = wait_for(30, "a warm engine", || engine_processes(pid).first().copied());
    let second = upload_raw(&c, &serve.url, &key, "again.fastq.gz", &demo_reads());
    let b = finished_classification(&c, &serve.url, &key, &second);
    assert_eq!(b["success"], json!(true), "{b}");
    assert_eq!(engine_processes(pid), [warm], "the second analysis ran in the engine the first left warm");
    assert_eq!(table(&a), table(&b), "the same reads, the same results");

    // Killed while it waits: the next analysis runs in a new engine, and nothing fails.
    assert!(Command::new("kill").args(["-KILL", &warm.to_string()]).status().unwrap().success());
    let third = upload_raw(&c, &serve.url, &key, "third.fastq.gz", &demo_reads());
    let started = Instant::now();
    let t = finished_classification(&c, &serve.url, &key, &third);
    assert_eq!(t["success"], json!(true), "{t}");
    // At once, not after a failed attempt and the 30 s before a retry.
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    let replaced = wait_for(30, "a new warm engine", || engine_processes(pid).first().copied());
    assert_ne!(replaced, warm);
    assert_eq!(table(&t), table(&a));
    drop(serve);

    // No warm engines: each analysis has its process, gone when it ends.
    let serve = Serve::start(&data, &["--warm-engines", "0"]);
    let fourth = upload_raw(&c, &serve.url, &key, "fourth.fastq.gz", &demo_reads());
    let f = finished_classification(&c, &serve.url, &key, &fourth);
    assert_eq!(f["success"], json!(true), "{f}");
    // The process of an analysis ends once its answer is read.
    let pid = serve.child.id();
    wait_for(10, "the engine process to end with its analysis", || engine_processes(pid).is_empty().then_some(()));
}
