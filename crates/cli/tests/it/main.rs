//! The `mgds` command as operators and scripts use it: a real process, a real data folder.

#![allow(missing_docs)]

mod diversity;
mod engines;
mod hostile;
mod kraken2;
mod onecodex;
mod procs;
mod python_env;
mod scale;
mod sso;

mod watch;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const MGDS: &str = env!("CARGO_BIN_EXE_mgds");

/// A running `mgds serve`, killed when dropped.
struct Serve {
    child: Child,
    url: String,
    /// The S3-compatible endpoint it printed, if any.
    s3_endpoint: Option<String>,
}

impl Serve {
    fn start(data: &Path, extra: &[&str]) -> Serve {
        let mut child = Command::new(MGDS)
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data)
            .args(extra)
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("mgds serve starts");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        // The second line names the S3-compatible endpoint (both lines come in one write).
        let mut second = String::new();
        out.read_line(&mut second).unwrap();
        let s3_endpoint = second
            .split_whitespace()
            .find(|w| w.starts_with("http://") || w.starts_with("https://"))
            .filter(|_| second.contains("s3"))
            .map(str::to_string);
        Serve { child, url, s3_endpoint }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn create_user(data: &Path, email: &str) -> String {
    let out =
        Command::new(MGDS).args(["admin", "--data-dir"]).arg(data).args(["user", "create", email]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let key = String::from_utf8(out.stdout).unwrap();
    let key = key.strip_suffix('\n').expect("one line");
    assert!(key.len() == 32 && key.bytes().all(|b| b.is_ascii_hexdigit()), "stdout holds only the key: {key:?}");
    key.to_string()
}

/// TLS through rustls with ring, as the service itself uses.
fn ring_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// An HTTP client for these synchronous tests: reqwest on a small runtime of its own.
struct Http {
    rt: tokio::runtime::Runtime,
    client: reqwest::Client,
}

impl Http {
    fn new() -> Self {
        ring_provider();
        Self::with(reqwest::Client::new())
    }

    fn with(client: reqwest::Client) -> Self {
        ring_provider();
        Http { rt: tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap(), client }
    }

    /// A request as the holder of `key`; returns the status and the JSON body.
    fn json(&self, method: &str, url: &str, key: &str, body: Option<Value>) -> (u16, Value) {
        self.rt.block_on(async {
            let mut r = self.client.request(method.parse().unwrap(), url).basic_auth(key, Some(""));
            if let Some(b) = body {
                r = r.json(&b);
            }
            let r = r.send().await.unwrap();
            let s = r.status().as_u16();
            let t = r.text().await.unwrap();
            (s, serde_json::from_str(&t).unwrap_or(Value::String(t)))
        })
    }

    /// The multipart POST of an upload: the fields in order, then the file.
    fn upload(&self, url: &str, fields: &serde_json::Map<String, Value>, file: &[u8]) -> u16 {
        let mut form = reqwest::multipart::Form::new();
        for (k, v) in fields {
            form = form.text(k.clone(), v.as_str().unwrap().to_string());
        }
        form = form.part("file", reqwest::multipart::Part::bytes(file.to_vec()).file_name("reads.fastq"));
        self.rt.block_on(async { self.client.post(url).multipart(form).send().await.unwrap().status().as_u16() })
    }
}

#[test]
fn serve_and_admin_work_on_a_data_folder_that_does_not_exist_yet() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("new").join("data");
    let serve = Serve::start(&data, &[]);
    assert!(serve.url.starts_with("http://127.0.0.1:"), "{}", serve.url);
    let key = create_user(&data, "lab@example.org");
    let c = Http::new();
    let (s, acct) = c.json("GET", &format!("{}/api/v1/account", serve.url), &key, None);
    assert_eq!((s, acct["email"].clone()), (200, json!("lab@example.org")));

    // Rotating the key revokes the old one on the very next request.
    let out = Command::new(MGDS)
        .args(["admin", "--data-dir"])
        .arg(&data)
        .args(["user", "rotate-key", "lab@example.org"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let new_key = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let (s, _) = c.json("GET", &format!("{}/api/v1/account", serve.url), &key, None);
    assert_eq!(s, 401);
    let (s, _) = c.json("GET", &format!("{}/api/v1/account", serve.url), &new_key, None);
    assert_eq!(s, 200);

    // Batches through the admin command.
    let out = Command::new(MGDS)
        .args(["admin", "--data-dir"])
        .arg(&data)
        .args(["batch", "create", "B-1", "--owner", "lab@example.org"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let b: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(b["status"], json!("registered"));
    let out = Command::new(MGDS)
        .args(["admin", "--data-dir"])
        .arg(&data)
        .args(["batch", "status", "B-1", "sequencing"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = Command::new(MGDS)
        .args(["admin", "--data-dir"])
        .arg(&data)
        .args(["batch", "status", "B-1", "registered"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot move to registered"), "{err}");
    let (s, list) = c.json("GET", &format!("{}/api/v1/sequencing/batches", serve.url), &new_key, None);
    assert_eq!((s, list[0]["status"].clone()), (200, json!("sequencing")));
}

#[test]
fn a_network_address_without_tls_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        Command::new(MGDS).args(["serve", "--listen", "0.0.0.0:0", "--data-dir"]).arg(dir.path()).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("without TLS") && err.contains("--tls-cert"), "{err}");
}

#[test]
fn serves_https_with_a_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let (cert_path, key_path) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_path, cert.cert.pem()).unwrap();
    std::fs::write(&key_path, cert.signing_key.serialize_pem()).unwrap();
    let data = dir.path().join("data");
    let serve =
        Serve::start(&data, &["--tls-cert", cert_path.to_str().unwrap(), "--tls-key", key_path.to_str().unwrap()]);
    assert!(serve.url.starts_with("https://"), "{}", serve.url);
    let key = create_user(&data, "lab@example.org");
    ring_provider();
    let http = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(cert.cert.pem().as_bytes()).unwrap()])
        .build()
        .unwrap();
    let c = Http::with(http);
    let url = serve.url.replace("127.0.0.1", "localhost");
    let (s, acct) = c.json("GET", &format!("{url}/api/v1/account"), &key, None);
    assert_eq!((s, acct["email"].clone()), (200, json!("lab@example.org")));
}

/// Sends the start of a multipart upload by hand and leaves the connection open.
fn partial_upload(url: &str, fields: &serde_json::Map<String, Value>, file: &[u8], send: usize) -> std::net::TcpStream {
    let addr = url.strip_prefix("http://").unwrap().split('/').next().unwrap().to_string();
    let path = format!("/{}", url.strip_prefix("http://").unwrap().split_once('/').unwrap().1);
    let boundary = "mgdsboundary7f3a";
    let mut head = Vec::new();
    for (k, v) in fields {
        write!(head, "--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{}\r\n", v.as_str().unwrap())
            .unwrap();
    }
    write!(head, "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"r.fastq\"\r\n\r\n")
        .unwrap();
    let tail = format!("\r\n--{boundary}--\r\n");
    let len = head.len() + file.len() + tail.len();
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {len}\r\n\r\n").unwrap();
    s.write_all(&head).unwrap();
    s.write_all(&file[..send]).unwrap();
    s.flush().unwrap();
    s
}

fn staging_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().unwrap().to_string_lossy().contains('#') {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn a_service_killed_mid_upload_keeps_no_sample_and_accepts_the_retry() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let key = create_user(&data, "lab@example.org");
    let serve = Serve::start(&data, &[]);
    let c = Http::new();
    let file: Vec<u8> = (0..20_000)
        .flat_map(|i| format!("@r{i}\nACGTACGTACGTACGTACGT\n+\nIIIIIIIIIIIIIIIIIIII\n").into_bytes())
        .collect();
    let (s, init) = c.json(
        "POST",
        &format!("{}/api/v1/samples/init_upload", serve.url),
        &key,
        Some(json!({"filename": "reads.fastq", "size": file.len()})),
    );
    assert_eq!(s, 200, "{init}");
    let fields = init["additional_fields"].as_object().unwrap().clone();
    let sample_id = init["sample_id"].as_str().unwrap().to_string();
    let conn = partial_upload(init["upload_url"].as_str().unwrap(), &fields, &file, file.len() / 2);
    // Wait until the service has started writing the file, then kill it without warning.
    let deadline = Instant::now() + Duration::from_secs(20);
    while staging_files(&data.join("objects")).is_empty() {
        assert!(Instant::now() < deadline, "the upload never reached the object store");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(serve); // SIGKILL
    drop(conn);
    assert!(!staging_files(&data.join("objects")).is_empty(), "the kill left a partial file to clean up");

    let serve = Serve::start(&data, &[]);
    assert!(staging_files(&data.join("objects")).is_empty(), "start-up removes partial files");
    let (s, list) = c.json("GET", &format!("{}/api/v1/samples", serve.url), &key, None);
    assert_eq!((s, list), (200, json!([])));
    let (s, body) = c.json(
        "POST",
        &format!("{}/api/v1/samples/confirm_upload", serve.url),
        &key,
        Some(json!({"sample_id": sample_id})),
    );
    assert_eq!(s, 400, "{body}");
    let (s, body) = c.json("GET", &format!("{}/api/v1/samples/{sample_id}", serve.url), &key, None);
    assert_eq!(s, 404, "{body}");

    // The same form, retried against the restarted service (whose address changed).
    let upload_url = format!("{}/storage/mgds", serve.url);
    let status = c.upload(&upload_url, &fields, &file);
    assert_eq!(status, 201);
    let (s, body) = c.json(
        "POST",
        &format!("{}/api/v1/samples/confirm_upload", serve.url),
        &key,
        Some(json!({"sample_id": sample_id})),
    );
    assert_eq!(s, 200, "{body}");
    let (s, list) = c.json("GET", &format!("{}/api/v1/samples", serve.url), &key, None);
    assert_eq!(s, 200);
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["size"], json!(file.len()));
}

#[test]
fn subset_reads_works_offline_like_onecodex() {
    let dir = tempfile::tempdir().unwrap();
    let reads = dir.path().join("gut_sample.fastq");
    let tsv = dir.path().join("gut_sample.readlevel.tsv");
    let results = dir.path().join("results.json");
    // Three reads: E. coli (562), a strain of it (83333, child of 562), and B. subtilis (1423).
    std::fs::write(&reads, "@r1\nACGT\n+\nIIII\n@r2\nGGCC\n+\nIIII\n@r3\nTTAA\n+\nIIII\n").unwrap();
    std::fs::write(&tsv, "Tax ID\tN Hits\tSeq Len\tPassed Filter\n562\t4\t4\tT\n83333\t4\t4\tT\n1423\t4\t4\tT\n")
        .unwrap();
    let row = |id: &str, parent: &str, rank: &str| json!({"tax_id": id, "name": id, "rank": rank, "parent_tax_id": parent, "readcount": 1, "readcount_w_children": 1, "abundance": null});
    std::fs::write(&results, json!({"n_reads": 3, "host_tax_ids": [], "table": [row("562", "561", "species"), row("83333", "562", "no rank"), row("1423", "1386", "species")]}).to_string()).unwrap();
    let out = dir.path().join("out");
    let run = |extra: &[&str]| {
        Command::new(MGDS)
            .arg("subset-reads")
            .arg(&reads)
            .arg("--readlevel")
            .arg(&tsv)
            .arg("-o")
            .arg(&out)
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&["-t", "562"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let written = out.join("gut_sample.filtered.fastq");
    assert_eq!(String::from_utf8(o.stdout).unwrap().trim(), written.display().to_string());
    assert_eq!(std::fs::read_to_string(&written).unwrap(), "@r1\nACGT\n+\nIIII\n");
    let o = run(&["-t", "562", "--with-children", "--results", results.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(&written).unwrap(), "@r1\nACGT\n+\nIIII\n@r2\nGGCC\n+\nIIII\n");
    let o = run(&["-t", "562", "--exclude-reads"]);
    assert!(o.status.success());
    assert_eq!(std::fs::read_to_string(&written).unwrap(), "@r2\nGGCC\n+\nIIII\n@r3\nTTAA\n+\nIIII\n");
    // Wrong input is explained, not a crash.
    let o = run(&["-t", "E.coli"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a taxonomy id"));
    let o = run(&["-t", "562", "--with-children"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--results"));
    std::fs::write(&tsv, "Tax ID\tN Hits\n562\t4\n").unwrap();
    let o = run(&["-t", "562"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("error:"), "{err}");
}

/// `mgds` with its own configuration and data folders.
fn mgds(cfg: &Path, data: &Path) -> Command {
    let mut c = Command::new(MGDS);
    c.env("MGDS_CONFIG_DIR", cfg).env("MGDS_DATA_DIR", data).env("NO_COLOR", "1");
    c.env_remove("MGDS_API_KEY").env_remove("MGDS_BASE_URL").env_remove("MGDS_PROFILE");
    c
}

fn ok(out: &std::process::Output) -> String {
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn the_local_profile_classifies_an_upload_while_a_command_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, data) = (dir.path().join("cfg"), dir.path().join("data"));
    let reads = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo/reads.fastq.gz");
    let sample = ok(&mgds(&cfg, &data).arg("upload").arg(&reads).output().unwrap()).trim().to_string();
    let shown: Value =
        serde_json::from_str(&ok(&mgds(&cfg, &data).args(["samples", "show", &sample]).output().unwrap())).unwrap();
    let analysis = shown["primary_classification"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    // No service runs between commands; the one this command starts classifies the sample.
    let out = mgds(&cfg, &data).args(["analyses", "results", &analysis, "--wait", "--csv"]).output().unwrap();
    let table = ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("waiting for it"));
    assert!(table.lines().next().unwrap().starts_with("tax_id,name,"), "{table}");
    assert!(table.contains("Klebsiella pneumoniae") && table.contains("Escherichia coli"), "{table}");
}

#[test]
fn the_local_profile_uploads_and_lists_with_no_account() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, data) = (dir.path().join("cfg"), dir.path().join("data"));
    let reads = dir.path().join("gut 1.fastq");
    std::fs::write(&reads, "@r1\nACGTACGT\n+\nIIIIIIII\n@r2\nACGTAC\n+\nIIIIII\n").unwrap();
    let bad = dir.path().join("notes.fastq");
    std::fs::write(&bad, "these are my notes\n").unwrap();

    let out = mgds(&cfg, &data).args(["upload", "--tag", "run1", "--metadata", "site=A"]).arg(&reads).output().unwrap();
    let id = ok(&out).trim().to_string();
    assert_eq!(id.len(), 16, "stdout is the new sample id: {id:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("2 reads") && err.contains("uploaded 1 of 1"), "{err}");

    // A bad file is explained and nothing is sent.
    let out = mgds(&cfg, &data).arg("upload").arg(&reads).arg(&bad).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing was uploaded") && err.contains("notes.fastq"), "{err}");

    let list: Value =
        serde_json::from_str(&ok(&mgds(&cfg, &data).args(["samples", "list", "--json"]).output().unwrap())).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 1, "the bad batch sent nothing: {list:?}");
    assert_eq!(list[0]["filename"], json!("gut_1.fastq"));
    assert_eq!(list[0]["tags"].as_array().unwrap().len(), 1);
    let csv = ok(&mgds(&cfg, &data).args(["samples", "list", "--csv", "--filename", "GUT"]).output().unwrap());
    assert!(csv.starts_with("id,filename,size,visibility,project,created\n") && csv.contains(&id), "{csv}");
    let none = ok(&mgds(&cfg, &data).args(["samples", "list", "--json", "--filename", "soil"]).output().unwrap());
    assert_eq!(serde_json::from_str::<Value>(&none).unwrap(), json!([]));
    let shown: Value =
        serde_json::from_str(&ok(&mgds(&cfg, &data).args(["samples", "show", &id]).output().unwrap())).unwrap();
    assert_eq!(shown["$uri"], json!(format!("/api/v1/samples/{id}")));
    let updated: Value = serde_json::from_str(&ok(&mgds(&cfg, &data)
        .args(["samples", "update", &id, "--visibility", "public"])
        .output()
        .unwrap()))
    .unwrap();
    assert_eq!(updated["visibility"], json!("public"));
    assert_eq!(ok(&mgds(&cfg, &data).arg("whoami").output().unwrap()).trim(), "me@local.mgds");
    ok(&mgds(&cfg, &data).args(["samples", "delete", &id]).output().unwrap());
    let out = mgds(&cfg, &data).args(["samples", "show", &id]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error:"));
}

#[test]
fn login_without_a_keychain_needs_consent_to_keep_the_key_in_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, data) = (dir.path().join("cfg"), dir.path().join("data"));
    let serve = Serve::start(&data, &[]);
    let key = create_user(&data, "lab@example.org");
    // No Secret Service reachable: the keychain is unavailable.
    let no_keychain = |c: &mut Command| {
        c.env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus");
    };
    let mut c = mgds(&cfg, &dir.path().join("unused"));
    no_keychain(&mut c);
    let out = c.args(["login", "--profile", "lab", "--base-url", &serve.url, "--api-key", &key]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("keychain") && err.contains("--store-key-in-file"), "{err}");
    assert!(!cfg.join("keys").exists(), "no key file without consent");

    let mut c = mgds(&cfg, &dir.path().join("unused"));
    no_keychain(&mut c);
    let out = c
        .args(["login", "--profile", "lab", "--base-url", &serve.url, "--api-key", &key, "--store-key-in-file"])
        .output()
        .unwrap();
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("only you can read"));
    let config = std::fs::read_to_string(cfg.join("config.toml")).unwrap();
    assert!(!config.contains(&key), "the key never lands in the config file");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(cfg.join("keys/lab.key")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let mut c = mgds(&cfg, &dir.path().join("unused"));
    no_keychain(&mut c);
    assert_eq!(ok(&c.arg("whoami").output().unwrap()).trim(), "lab@example.org");
    let profiles = ok(&mgds(&cfg, &data).args(["profiles", "list"]).output().unwrap());
    assert!(profiles.contains(&format!("*\tlab\t{}", serve.url)), "{profiles}");

    // A wrong key is refused before anything is stored.
    let mut c = mgds(&cfg, &dir.path().join("unused"));
    no_keychain(&mut c);
    let out = c
        .args(["login", "--profile", "other", "--base-url", &serve.url, "--api-key", "wrong", "--store-key-in-file"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(!cfg.join("keys/other.key").exists());

    let mut c = mgds(&cfg, &dir.path().join("unused"));
    no_keychain(&mut c);
    ok(&c.arg("logout").output().unwrap());
    assert!(!cfg.join("keys/lab.key").exists());
    let mut c = mgds(&cfg, &dir.path().join("unused"));
    no_keychain(&mut c);
    let out = c.arg("whoami").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("mgds login --profile lab"));
    // Scripts can always pass the key and address themselves.
    let out = mgds(&cfg, &dir.path().join("unused"))
        .args(["whoami", "--base-url", &serve.url])
        .env("MGDS_API_KEY", &key)
        .output()
        .unwrap();
    assert_eq!(ok(&out).trim(), "lab@example.org");
}

/// Run by `test.sh` inside a D-Bus session with an unlocked gnome-keyring (MGDS_TEST_KEYCHAIN=1):
/// the key goes to the real Secret Service.
#[test]
fn login_keeps_the_key_in_the_os_keychain() {
    if std::env::var_os("MGDS_TEST_KEYCHAIN").is_none() {
        eprintln!("MGDS_TEST_KEYCHAIN is not set: this run has no Secret Service; test.sh provides one");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (cfg, data) = (dir.path().join("cfg"), dir.path().join("data"));
    let serve = Serve::start(&data, &[]);
    let key = create_user(&data, "lab@example.org");
    let profile = format!("kc{}", std::process::id());
    let out = mgds(&cfg, &data)
        .args(["login", "--profile", &profile, "--base-url", &serve.url, "--api-key", &key])
        .output()
        .unwrap();
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("OS keychain"), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!cfg.join("keys").exists(), "no key file when there is a keychain");
    let config = std::fs::read_to_string(cfg.join("config.toml")).unwrap();
    assert!(!config.contains(&key));
    assert_eq!(ok(&mgds(&cfg, &data).arg("whoami").output().unwrap()).trim(), "lab@example.org");
    ok(&mgds(&cfg, &data).arg("logout").output().unwrap());
    let out = mgds(&cfg, &data).arg("whoami").output().unwrap();
    assert!(!out.status.success(), "the key left the keychain");
}

#[test]
fn subset_reads_fetches_a_classification_from_the_service() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (url, state) = rt
        .block_on(mgds_server::spawn(mgds_server::Config::new(dir.path().join("data")), "127.0.0.1:0".parse().unwrap()))
        .unwrap();
    let key = rt
        .block_on(mgds_server::admin::create_user(&state.db, "lab@example.org", None, mgds_server::admin::Role::Member))
        .unwrap()
        .api_key;
    let reads = dir.path().join("s.fastq");
    std::fs::write(&reads, "@r1\nACGT\n+\nIIII\n@r2\nGGCC\n+\nIIII\n").unwrap();
    let http = Http::new();
    // A sample, a classification job run on it, and the results an engine would store.
    let (s, init) = http.json(
        "POST",
        &format!("{url}/api/v1/samples/init_upload"),
        &key,
        Some(json!({"filename": "s.fastq", "size": 32})),
    );
    assert_eq!(s, 200, "{init}");
    assert_eq!(
        http.upload(
            init["upload_url"].as_str().unwrap(),
            init["additional_fields"].as_object().unwrap(),
            &std::fs::read(&reads).unwrap()
        ),
        201
    );
    let sample = init["sample_id"].as_str().unwrap().to_string();
    http.json("POST", &format!("{url}/api/v1/samples/confirm_upload"), &key, Some(json!({"sample_id": sample})));
    let job = rt
        .block_on(mgds_server::routes::register_job(
            &state,
            &mgds_server::routes::JobSpec {
                name: "classify".into(),
                analysis_type: "classification".into(),
                job_args_schema: json!({}),
                public: true,
                draft: false,
                creator_id: None,
                engine: String::new(),
                engine_version: String::new(),
                reference: String::new(),
            },
        ))
        .unwrap();
    let (_, run) = http.json(
        "POST",
        &format!("{url}/api/v1/jobs/{job}/run"),
        &key,
        Some(json!({"sample": {"$ref": format!("/api/v1/samples/{sample}")}, "job_args": {}})),
    );
    let analysis = run["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(b"Tax ID\tSeq Len\n83333\t4\n1423\t4\n").unwrap();
    let row = |id: &str, parent: &str| json!({"tax_id": id, "name": id, "rank": "species", "parent_tax_id": parent, "readcount": 1, "readcount_w_children": 1, "abundance": null});
    let results = json!({"n_reads": 2, "host_tax_ids": [], "table": [row("562", "561"), row("83333", "562"), row("1423", "1386")]});
    rt.block_on(mgds_server::routes::store_results(
        &state,
        &analysis,
        Ok((results, Some(gz.finish().unwrap().into()))),
    ))
    .unwrap();

    let out_dir = dir.path().join("out");
    let out = Command::new(MGDS)
        .arg("subset-reads")
        .arg(&reads)
        .args(["--classification", &analysis, "-t", "562", "--with-children", "--base-url", &url, "-o"])
        .arg(&out_dir)
        .env("MGDS_API_KEY", &key)
        .env("MGDS_CONFIG_DIR", dir.path().join("cfg"))
        .output()
        .unwrap();
    ok(&out);
    assert_eq!(std::fs::read_to_string(out_dir.join("s.filtered.fastq")).unwrap(), "@r1\nACGT\n+\nIIII\n");
}

fn json_out(out: &std::process::Output) -> Value {
    let text = ok(out);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {text:?}"))
}

fn id_of(v: &Value) -> String {
    v["$uri"].as_str().unwrap_or_else(|| panic!("no $uri in {v}")).rsplit('/').next().unwrap().to_string()
}

#[test]
fn the_local_profile_manages_documents_projects_tags_and_preuploads() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, data) = (dir.path().join("cfg"), dir.path().join("data"));
    let run = |args: &[&str]| mgds(&cfg, &data).args(args).current_dir(dir.path()).output().unwrap();

    // Documents: upload, list, download byte-identical, delete.
    let file = dir.path().join("protocol v2.bin");
    let bytes: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    std::fs::write(&file, &bytes).unwrap();
    let doc = json_out(&mgds(&cfg, &data).args(["documents", "upload"]).arg(&file).output().unwrap());
    assert_eq!((doc["filename"].clone(), doc["size"].clone()), (json!("protocol_v2.bin"), json!(70_000)));
    let doc_id = id_of(&doc);
    let table = ok(&run(&["documents", "list"]));
    assert!(table.contains("filename") && table.contains(&doc_id) && table.contains("protocol_v2.bin"), "{table}");
    let list = json_out(&run(&["documents", "list", "--json"]));
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    let csv = ok(&run(&["documents", "list", "--csv"]));
    assert!(csv.starts_with("id,filename,size,") && csv.contains(&doc_id), "{csv}");
    let dest = dir.path().join("copy.bin");
    let out = mgds(&cfg, &data).args(["documents", "download", &doc_id, "-o"]).arg(&dest).output().unwrap();
    ok(&out);
    assert_eq!(std::fs::read(&dest).unwrap(), bytes, "the download is byte-identical");
    // Without -o it goes to the document's own name in the current folder, never over a file.
    ok(&run(&["documents", "download", &doc_id]));
    assert_eq!(std::fs::read(dir.path().join("protocol_v2.bin")).unwrap(), bytes);
    let out = run(&["documents", "download", &doc_id]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists; pass -o"));
    ok(&run(&["documents", "delete", &doc_id]));
    assert_eq!(json_out(&run(&["documents", "list", "--json"])), json!([]));

    // Projects: create, list, show; a bad short name is explained.
    let p = json_out(&run(&["projects", "create", "gut_study", "--name", "Gut study", "--description", "pilot"]));
    assert_eq!(
        (p["project_name"].clone(), p["name"].clone(), p["public"].clone()),
        (json!("gut_study"), json!("Gut study"), json!(false))
    );
    let project_id = id_of(&p);
    let table = ok(&run(&["projects", "list"]));
    assert!(table.contains("gut_study") && table.contains(&project_id), "{table}");
    let shown = json_out(&run(&["projects", "show", &project_id]));
    assert_eq!(shown["description"], json!("pilot"));
    let out = run(&["projects", "create", "x"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: cannot create project \"x\""));

    // Pre-upload: a sample awaiting data, in the project.
    let out = run(&["preupload", "--external-sample-id", "LAB-7", "--tag", "pilot", "--project", &project_id]);
    let sample = ok(&out).trim().to_string();
    assert_eq!(sample.len(), 16, "stdout is the new sample id: {sample:?}");
    let table = ok(&run(&["samples", "list"]));
    assert!(table.contains(&sample) && table.contains("awaiting data"), "{table}");

    // Tags: create on the sample, list.
    let tag = json_out(&run(&["tags", "create", "gut", "--sample", &sample]));
    assert_eq!(tag["name"], json!("gut"));
    let tags = json_out(&run(&["tags", "list", "--json"]));
    let names: Vec<&str> = tags.as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"gut") && names.contains(&"pilot"), "{tags}");
    assert!(ok(&run(&["tags", "list"])).contains("gut"));

    // Jobs: those of the demo references the local service installs, and the two that need
    // none (negative controls, the sample report); running a missing one says what to do.
    let table = ok(&run(&["jobs", "list"]));
    assert!(table.contains("analysis_type") && table.contains("Classification (MGDS demo bacteria)"), "{table}");
    let jobs = json_out(&run(&["jobs", "list", "--json"]));
    let mut kinds: Vec<&str> = jobs.as_array().unwrap().iter().filter_map(|j| j["analysis_type"].as_str()).collect();
    kinds.sort_unstable();
    assert_eq!(kinds, ["alignment", "classification", "control", "functional_profile", "panel", "report"], "{jobs}");
    let out = run(&["jobs", "run", "0123456789abcdef", "--sample", &sample, "--arg", "confidence=0.5"]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot run job 0123456789abcdef") && err.contains("mgds jobs list") && err.contains("not found"),
        "{err}"
    );
    let out = run(&["jobs", "run", "j", "--sample", &sample, "--arg", "novalue"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("KEY=VALUE"));

    // Analyses, batches and the schema.
    assert_eq!(
        json_out(&run(&["analyses", "list", "--json", "--sample", &sample, "--type", "classification"])),
        json!([])
    );
    let out = run(&["analyses", "list", "--type", "nonsense"]);
    assert_eq!(out.status.code(), Some(2), "a bad --type is a command-line error");
    assert_eq!(json_out(&run(&["batches", "list", "--json"])), json!([]));
    let schema = json_out(&run(&["schema"]));
    assert!(schema.to_string().contains("samples"), "{schema}");
    let samples_schema = json_out(&run(&["schema", "samples"]));
    assert!(samples_schema["properties"].get("filename").is_some(), "{samples_schema}");
}

#[test]
fn jobs_run_waits_for_the_analysis_and_results_print_species() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (url, state) = rt
        .block_on(mgds_server::spawn(mgds_server::Config::new(dir.path().join("data")), "127.0.0.1:0".parse().unwrap()))
        .unwrap();
    let key = rt
        .block_on(mgds_server::admin::create_user(&state.db, "lab@example.org", None, mgds_server::admin::Role::Member))
        .unwrap()
        .api_key;
    let cli = || {
        let mut c = Command::new(MGDS);
        c.args(["--base-url", &url])
            .env("MGDS_API_KEY", &key)
            .env("MGDS_CONFIG_DIR", dir.path().join("cfg"))
            .env("NO_COLOR", "1");
        c.env_remove("MGDS_PROFILE").env_remove("MGDS_DATA_DIR");
        c
    };
    let reads = dir.path().join("s.fastq");
    std::fs::write(&reads, "@r1\nACGT\n+\nIIII\n@r2\nGGCC\n+\nIIII\n").unwrap();
    let sample = ok(&cli().arg("upload").arg(&reads).output().unwrap()).trim().to_string();
    let job = rt
        .block_on(mgds_server::routes::register_job(
            &state,
            &mgds_server::routes::JobSpec {
                name: "classify".into(),
                analysis_type: "classification".into(),
                job_args_schema: json!({"type": "object", "properties": {"confidence": {"type": "number"}}, "additionalProperties": false}),
                public: true,
                draft: false,
                creator_id: None,
                engine: String::new(),
                engine_version: String::new(),
                reference: String::new(),
            },
        ))
        .unwrap();
    let table = ok(&cli().args(["jobs", "list"]).output().unwrap());
    assert!(table.contains(&job) && table.contains("classify"), "{table}");
    let shown: Value = serde_json::from_str(&ok(&cli().args(["jobs", "show", &job]).output().unwrap())).unwrap();
    assert!(shown["job_args_schema"].is_object(), "{shown}");

    // Arguments are checked against the job's schema before anything runs.
    let out = cli().args(["jobs", "run", &job, "--sample", &sample, "--arg", "confidence=high"]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("job_args_schema"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // --wait: the command waits until an engine stores the results, then prints the analysis.
    let child = cli()
        .args([
            "jobs",
            "run",
            &job,
            "--sample",
            &sample,
            "--arg",
            "confidence=0.5",
            "--description",
            "first",
            "--wait",
            "--timeout",
            "60",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let analysis = {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let list: Value = serde_json::from_str(&ok(&cli()
                .args(["analyses", "list", "--json", "--sample", &sample])
                .output()
                .unwrap()))
            .unwrap();
            if let Some(a) = list.as_array().unwrap().first() {
                assert_eq!(a["job_args"], json!({"confidence": 0.5}));
                break id_of(a);
            }
            assert!(Instant::now() < deadline, "the run never created an analysis");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let out = cli().args(["analyses", "results", &analysis]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("has not finished yet"));
    let row = |id: &str, name: &str, rank: &str, reads: u64, ab: Option<f64>| json!({"tax_id": id, "name": name, "rank": rank, "parent_tax_id": "1", "readcount": reads, "readcount_w_children": reads, "abundance": ab});
    let results = json!({"n_reads": 2, "host_tax_ids": [], "table": [
        row("561", "Escherichia", "genus", 2, None),
        row("562", "Escherichia coli", "species", 1, Some(0.25)),
        row("1423", "Bacillus subtilis", "species", 1, Some(0.75)),
    ]});
    rt.block_on(mgds_server::routes::store_results(&state, &analysis, Ok((results, None)))).unwrap();
    let out = child.wait_with_output().unwrap();
    let done: Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!((done["complete"].clone(), done["success"].clone()), (json!(true), json!(true)));

    let table = ok(&cli().args(["analyses", "results", &analysis]).output().unwrap());
    let lines: Vec<&str> = table.lines().collect();
    // Each measure has its own column; the results carry no re-estimated abundance, so the rows
    // are sorted by the share of genome copies.
    assert!(
        lines[0].contains("tax_id") && lines[0].contains("genome_copies_%") && lines[0].contains("reestimated_%"),
        "{table}"
    );
    assert!(
        lines[1].contains("Bacillus subtilis") && lines[2].contains("Escherichia coli") && lines.len() == 3,
        "species by abundance: {table}"
    );
    let raw: Value =
        serde_json::from_str(&ok(&cli().args(["analyses", "results", &analysis, "--json"]).output().unwrap())).unwrap();
    assert_eq!(raw["table"].as_array().unwrap().len(), 3);
    let shown: Value =
        serde_json::from_str(&ok(&cli().args(["analyses", "show", &analysis]).output().unwrap())).unwrap();
    assert_eq!(shown["description"], json!("first"));
    let listed = ok(&cli().args(["analyses", "list", "--type", "classification", "--csv"]).output().unwrap());
    assert!(listed.starts_with("id,type,sample,job,") && listed.contains(&analysis), "{listed}");

    // A failed analysis makes --wait exit non-zero after printing it.
    let child = cli()
        .args(["jobs", "run", &job, "--sample", &sample, "--wait", "--timeout", "60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let second = {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let list: Value =
                serde_json::from_str(&ok(&cli().args(["analyses", "list", "--json"]).output().unwrap())).unwrap();
            if let Some(a) = list.as_array().unwrap().iter().find(|a| id_of(a) != analysis) {
                break id_of(a);
            }
            assert!(Instant::now() < deadline, "the second run never created an analysis");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    rt.block_on(mgds_server::routes::store_results(&state, &second, Err("the reference database is missing".into())))
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed["success"], json!(false));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("analysis {second} failed: the reference database is missing")), "{err}");
}

#[test]
fn upload_interleaves_a_read_pair_into_one_sample() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, data) = (dir.path().join("cfg"), dir.path().join("data"));
    let runs = dir.path().join("run7");
    std::fs::create_dir_all(&runs).unwrap();
    std::fs::write(runs.join("gut_S1_L001_R1_001.fastq"), "@a 1:N:0:1\nACGT\n+\nIIII\n@b 1:N:0:1\nGGCC\n+\nIIII\n")
        .unwrap();
    std::fs::write(runs.join("gut_S1_L001_R2_001.fastq"), "@a 2:N:0:1\nTTTT\n+\nIIII\n@b 2:N:0:1\nCCCC\n+\nIIII\n")
        .unwrap();
    let out = mgds(&cfg, &data).arg("upload").arg(&runs).output().unwrap();
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--interleave"), "a pair uploaded apart gets a hint");
    let out = mgds(&cfg, &data).args(["upload", "--interleave", "--json"]).arg(&runs).output().unwrap();
    let uploaded: Value = serde_json::from_str(&ok(&out)).unwrap();
    let uploaded = uploaded.as_array().unwrap();
    assert_eq!(uploaded.len(), 1, "one sample for the pair");
    assert_eq!(uploaded[0]["filename"], json!("gut_S1_L001_001_interleaved.fastq.gz"));
    let list: Value =
        serde_json::from_str(&ok(&mgds(&cfg, &data).args(["samples", "list", "--json"]).output().unwrap())).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 3);
    // Mates that do not match are refused before anything is sent.
    std::fs::write(runs.join("gut_S1_L001_R2_001.fastq"), "@a 2:N:0:1\nTTTT\n+\nIIII\n").unwrap();
    let out = mgds(&cfg, &data).args(["upload", "--interleave"]).arg(&runs).output().unwrap();
    assert!(!out.status.success());
    let list: Value =
        serde_json::from_str(&ok(&mgds(&cfg, &data).args(["samples", "list", "--json"]).output().unwrap())).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 3);
}

/// A read pair of `n` records with varied bases, named as Illumina names them, in `dir`.
fn varied_pair(dir: &Path, n: usize) {
    std::fs::create_dir_all(dir).unwrap();
    for mate in [1u8, 2] {
        let mut text = String::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15 ^ u64::from(mate);
        for i in 0..n {
            let seq: String = (0..100)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    ['A', 'C', 'G', 'T'][(x % 4) as usize]
                })
                .collect();
            text.push_str(&format!("@r{i} {mate}:N:0:1\n{seq}\n+\n{}\n", "I".repeat(100)));
        }
        std::fs::write(dir.join(format!("gut_S1_L001_R{mate}_001.fastq")), text).unwrap();
    }
}

/// Ctrl-C during `mgds upload --interleave` cancels the pair under way: exit code 130, no sample,
/// nothing staged; the same command again makes the one sample.
#[test]
fn an_interrupted_pair_upload_leaves_nothing_and_the_retry_arrives() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, data, tmp) = (dir.path().join("cfg"), dir.path().join("data"), dir.path().join("tmp"));
    let runs = dir.path().join("run8");
    varied_pair(&runs, 20_000);
    std::fs::create_dir_all(&tmp).unwrap();
    let count = || {
        let out = mgds(&cfg, &data).args(["samples", "list", "--json"]).output().unwrap();
        serde_json::from_str::<Value>(&ok(&out)).unwrap().as_array().unwrap().len()
    };
    let before = count();
    let child = mgds(&cfg, &data)
        .args(["upload", "--interleave", "--bandwidth", "200k"])
        .arg(&runs)
        .env("TMPDIR", &tmp)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The pair is checked, interleaved and then sent at 200 kB/s (about 20 s): interrupt it once the
    // upload is under way on the service.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_dir(data.join("objects")).map(|d| d.count() > 0).unwrap_or(false)
        && std::fs::read_dir(&tmp).map(|d| d.count() == 0).unwrap_or(true)
    {
        assert!(Instant::now() < deadline, "the upload never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted: 0 of 1 samples were uploaded"), "{err}");
    assert_eq!(count(), before, "no sample from the cancelled upload");
    let left: Vec<_> = walk(&tmp);
    assert!(left.is_empty(), "nothing staged is left: {left:?}");

    let out = mgds(&cfg, &data).args(["upload", "--interleave", "--json"]).arg(&runs).output().unwrap();
    let uploaded: Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(uploaded[0]["filename"], json!("gut_S1_L001_001_interleaved.fastq.gz"));
    assert_eq!(count(), before + 1);
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

/// Parses CSV text into its header and rows.
fn csv_rows(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header = r.headers().unwrap().iter().map(str::to_string).collect();
    let rows = r.records().map(|x| x.unwrap().iter().map(str::to_string).collect()).collect();
    (header, rows)
}

#[test]
fn compare_draws_samples_side_by_side_with_the_numbers_the_service_gives() {
    use std::io::{BufRead as _, Write as _};
    let dir = tempfile::tempdir().unwrap();
    let (cfg, data) = (dir.path().join("cfg"), dir.path().join("data"));
    let run = |args: &[&str]| mgds(&cfg, &data).args(args).current_dir(dir.path()).output().unwrap();
    // The demo reads and its first and last thousand reads: three samples of one community.
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo/reads.fastq.gz");
    let lines: Vec<String> =
        std::io::BufReader::new(flate2::read::MultiGzDecoder::new(std::fs::File::open(&demo).unwrap()))
            .lines()
            .map(Result::unwrap)
            .collect();
    let mut files = vec![demo.clone()];
    for (name, part) in [("first.fastq", &lines[..4000]), ("last.fastq", &lines[lines.len() - 4000..])] {
        let path = dir.path().join(name);
        let mut f = std::fs::File::create(&path).unwrap();
        for l in part {
            writeln!(f, "{l}").unwrap();
        }
        files.push(path);
    }
    let mut samples = Vec::new();
    for f in &files {
        samples.push(ok(&mgds(&cfg, &data).arg("upload").arg(f).output().unwrap()).trim().to_string());
    }
    ok(&run(&["samples", "metadata", &samples[1], "--set", "name=gut day 1"]));

    // The command waits for the classifications (its own local service runs them).
    let svg = dir.path().join("cmp.svg");
    let mut args: Vec<&str> =
        vec!["compare", "--heatmap", "--cluster", "--top", "4", "--label", "name", "--csv", "-", "--svg"];
    args.push(svg.to_str().unwrap());
    args.extend(samples.iter().map(String::as_str));
    let out = run(&args);
    let (header, rows) = csv_rows(&ok(&out));
    assert_eq!(header, ["sample", "taxon", "tax_id", "rank", "reads", "reestimated_abundance_percent"]);
    assert_eq!(rows.len(), 3 * 5, "four taxa and Other for each sample: {rows:?}");
    let labels: std::collections::BTreeSet<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert!(labels.contains("gut day 1") && labels.contains("reads.fastq.gz (no name)"), "{labels:?}");
    // Every sample's shares add up to 100 %, and each taxon's numbers are the service's own.
    for label in &labels {
        let total: f64 = rows.iter().filter(|r| r[0] == *label).map(|r| r[5].parse::<f64>().unwrap()).sum();
        assert!((total - 100.0).abs() < 0.01, "{label}: {total}");
    }
    let shown = json_out(&run(&["samples", "show", &samples[1]]));
    let analysis = shown["primary_classification"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let (_, species) = csv_rows(&ok(&run(&["analyses", "results", &analysis, "--csv"])));
    let mut checked = 0;
    for r in rows.iter().filter(|r| r[0] == "gut day 1" && !r[2].is_empty()) {
        let theirs = species.iter().find(|s| s[0] == r[2]).unwrap_or_else(|| panic!("{} not in {species:?}", r[2]));
        assert_eq!(r[4], theirs[2], "reads of {}", r[1]);
        let (a, b): (f64, f64) = (r[5].parse().unwrap(), theirs[3].parse().unwrap());
        assert!((a - b).abs() < 0.001, "{}: {a} against {b}", r[1]);
        checked += 1;
    }
    assert_eq!(checked, 4);
    // Its hierarchy: the sunburst names its taxa; Krona's text counts every read of the sample
    // (1,000) once, under its taxon's lineage or as unclassified.
    let (sun, krona) = (dir.path().join("sun.svg"), dir.path().join("krona.tsv"));
    ok(&run(&[
        "analyses",
        "results",
        &analysis,
        "--sunburst",
        sun.to_str().unwrap(),
        "--krona",
        krona.to_str().unwrap(),
    ]));
    let sun = std::fs::read_to_string(&sun).unwrap();
    assert!(
        sun.contains("<path class=\"segment\" data-tax-id=\"573\"") && sun.contains("Klebsiella pneumoniae (species)")
    );
    let krona = std::fs::read_to_string(&krona).unwrap();
    let reads: u64 = krona.lines().map(|l| l.split('\t').next().unwrap().parse::<u64>().unwrap()).sum();
    assert_eq!(reads, 1000, "{krona}");
    assert!(krona.lines().any(|l| l.ends_with("\tKlebsiella\tKlebsiella pneumoniae")), "{krona}");
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.starts_with("<svg") && drawn.contains("gut day 1") && drawn.contains("Klebsiella pneumoniae"));
    assert!(
        drawn.contains("clustered") && drawn.contains("<title>"),
        "the chart names its clustering and explains each cell"
    );

    // Their diversity: the alpha measures of each sample from the reads of its species, as the
    // service gives them; the tests' methods and outcomes after the table.
    ok(&run(&["samples", "metadata", &samples[0], "--set", "site=A"]));
    for s in &samples[1..] {
        ok(&run(&["samples", "metadata", s, "--set", "site=B"]));
    }
    let mut args = vec!["compare", "--alpha-csv", "-", "--group-by", "site"];
    args.extend(samples.iter().map(String::as_str));
    let text = ok(&run(&args));
    let (comments, table): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| l.starts_with("# "));
    let (header, rows) = csv_rows(&table.join("\n"));
    assert_eq!(header, ["sample_id", "sample", "group", "observed_taxa", "shannon", "simpson", "chao1"]);
    assert_eq!(rows.len(), 3, "{text}");
    let day1 = rows.iter().find(|r| r[0] == samples[1]).unwrap_or_else(|| panic!("{text}"));
    assert_eq!((day1[1].as_str(), day1[2].as_str()), ("first.fastq", "B"));
    let reads: Vec<f64> = species.iter().map(|s| s[2].parse::<f64>().unwrap()).collect();
    for (k, m) in mgds_diversity::AlphaMetric::ALL.into_iter().enumerate() {
        let want = mgds_diversity::alpha(m, &reads).unwrap();
        let got: f64 = day1[3 + k].parse().unwrap();
        assert!((got - want).abs() < 1e-9, "{}: {got} against {want}", m.key());
    }
    // One sample in A: groups of one are left out, as the onecodex library leaves them out, so
    // neither a rank test nor a PERMANOVA is made, and both say why.
    let said = comments.join("\n");
    assert!(said.contains("No test of alpha diversity: a test needs at least two groups"), "{said}");
    assert!(said.contains("No PERMANOVA: PERMANOVA needs samples in at least two groups"), "{said}");
    assert!(said.contains("Alpha diversity from the reads of each taxon at rank species"), "{said}");
    // The same as pictures: a point per sample, the methods written on them.
    let (alpha_png, pcoa_svg) = (dir.path().join("alpha.png"), dir.path().join("pcoa.svg"));
    let mut args = vec!["compare", "--group-by", "site", "--metric", "jaccard", "--alpha-chart"];
    args.extend([alpha_png.to_str().unwrap(), "--ordination-chart", pcoa_svg.to_str().unwrap()]);
    args.extend(samples.iter().map(String::as_str));
    let said = String::from_utf8_lossy(&run(&args).stderr).to_string();
    assert!(said.contains("wrote") && said.contains("pcoa.svg"), "{said}");
    let drawn = std::fs::read_to_string(&pcoa_svg).unwrap();
    assert_eq!(drawn.matches("<circle class=\"point\"").count(), 3, "{drawn}");
    assert!(drawn.contains("PCoA of Jaccard distances: re-estimated abundance at species, 3 samples"), "{drawn}");
    assert!(drawn.contains("No PERMANOVA") && drawn.contains("<title>first.fastq · B · PC1 "), "{drawn}");
    assert!(std::fs::read(&alpha_png).unwrap().starts_with(b"\x89PNG"));
    if let Some(shots) = std::env::var_os("MGDS_SCREENSHOT_DIR") {
        std::fs::copy(&alpha_png, Path::new(&shots).join("cli-alpha.png")).unwrap();
    }
    // A report of the comparison as PDF, kept as a document too; the same as HTML; a file that
    // is neither is refused before any work.
    let pdf = dir.path().join("gut.pdf");
    let mut args = vec!["compare", "--group-by", "site", "--title", "Gut series", "--keep", "--report"];
    args.push(pdf.to_str().unwrap());
    args.extend(samples.iter().map(String::as_str));
    let said = ok(&run(&args));
    assert!(said.contains("wrote the report of 3 samples") && said.contains("kept as document"), "{said}");
    let text = String::from_utf8_lossy(
        &std::process::Command::new("pdftotext").arg(&pdf).arg("-").output().expect("pdftotext (poppler-utils)").stdout,
    )
    .replace('\n', " ");
    for shown in [
        "Gut series",
        "Comparison report",
        "first.fastq",
        "Klebsiella pneumoniae 49.00%",
        "Read quality",
        "Klebsiella pneumoniae",
        "Shannon",
        "No PERMANOVA",
        "mgds-classify",
        analysis.as_str(),
    ] {
        assert!(text.contains(shown), "{shown:?} is not in the report:\n{text}");
    }
    let docs = ok(&run(&["documents", "list"]));
    assert!(docs.contains("gut.pdf"), "{docs}");
    if let Some(shots) = std::env::var_os("MGDS_SCREENSHOT_DIR") {
        std::fs::copy(&pdf, Path::new(&shots).join("cli-comparison-report.pdf")).unwrap();
    }
    let html = dir.path().join("gut.html");
    let mut args = vec!["compare", "--report", html.to_str().unwrap()];
    args.extend(samples.iter().map(String::as_str));
    ok(&run(&args));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("Comparison of 3 samples"), "{page}");
    let out = run(&["compare", "--report", "gut.docx", &samples[0], &samples[1]]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains("gut.docx: a report is a .pdf or .html file"), "{said}");

    let out = run(&["compare", "--alpha-chart", "alpha.jpg", &samples[0], &samples[1]]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains("alpha.jpg must end in .svg or .png"), "{said}");

    // Their read quality, as the service counted it with each classification: one row each,
    // the thresholds after the table.
    let mut args = vec!["samples", "qc", "--format", "csv"];
    args.extend(samples.iter().map(String::as_str));
    let text = ok(&run(&args));
    let (header, rows) = csv_rows(&text.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n"));
    assert_eq!(&header[..4], ["sample_id", "sample", "passed", "reads"], "{text}");
    assert_eq!(rows.len(), 3, "{text}");
    let reads: Vec<&str> = rows.iter().map(|r| r[3].as_str()).collect();
    assert_eq!(reads, ["10019", "1000", "1000"], "{text}");
    assert!(text.contains("# Threshold: at least 1000 reads"), "{text}");

    // Controls: with none marked, the view says how to mark one; with the first sample a
    // blank, each taxon is scored against it (decontam's prevalence method, no concentrations).
    let mut args = vec!["compare", "--contaminants"];
    args.extend(samples.iter().map(String::as_str));
    let out = run(&args);
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success() && said.contains("custom metadata field \"control\""), "{said}");
    ok(&run(&["samples", "metadata", &samples[0], "--set", "control=blank"]));
    let mut args = vec!["compare", "--contaminants-csv", "-"];
    args.extend(samples.iter().map(String::as_str));
    let text = ok(&run(&args));
    assert!(text.starts_with("tax_id,name,score,contaminant,prevalence_score,"), "{text}");
    assert!(text.contains("# Controls: ") && text.contains("decontam's prevalence method"), "{text}");
    let (_, scored) = csv_rows(&text.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n"));
    assert!(scored.iter().any(|r| r[1] == "Klebsiella pneumoniae"), "{text}");

    // The same as the service's controls analysis (the reference's /controls): run on the
    // blank, it scores the blank's sequencing batch (the samples sharing its run_id) with the
    // same scoring, so its table is the comparison's.
    let jobs: Value = serde_json::from_str(&ok(&run(&["jobs", "list", "--json"]))).unwrap();
    let job = jobs
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["analysis_type"] == "control")
        .unwrap_or_else(|| panic!("a controls job: {jobs}"))["$uri"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    let out = run(&["jobs", "run", &job, "--sample", &samples[0]]);
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success() && said.contains("the control names no sequencing batch"), "{said}");
    for s in &samples {
        ok(&run(&["samples", "metadata", s, "--set", "run_id=R-1"]));
    }
    let out = run(&["jobs", "run", &job, "--sample", &samples[1]]);
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success() && said.contains("this sample is not a negative control"), "{said}");
    let done: Value =
        serde_json::from_str(&ok(&run(&["jobs", "run", &job, "--sample", &samples[0], "--wait"]))).unwrap();
    let analysis = done["$uri"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let out = run(&["analyses", "results", &analysis, "--csv"]);
    let from_job = ok(&out);
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(said.contains(&format!("the batch of control {}: samples whose run_id is R-1", samples[0])), "{said}");
    let rows_of = |t: &str| t.lines().filter(|l| !l.starts_with('#')).map(String::from).collect::<Vec<_>>();
    assert_eq!(rows_of(&from_job), rows_of(&text), "the job's scores are the comparison's");
    assert!(
        from_job.contains(
            "# The batch: the samples of the control's project (else its owner's samples outside projects) whose field \"run_id\" is \"R-1\""
        ),
        "{from_job}"
    );
    let table = ok(&run(&["analyses", "results", &analysis]));
    assert!(table.contains("taxa called contaminants") && table.contains("Klebsiella pneumoniae"), "{table}");
    let file = dir.path().join("scores.csv");
    ok(&run(&["analyses", "download", &analysis, "-o", file.to_str().unwrap()]));
    assert_eq!(rows_of(&std::fs::read_to_string(&file).unwrap()), rows_of(&text));
    let listed = ok(&run(&["analyses", "list", "--type", "control", "--csv"]));
    assert!(listed.contains(&analysis), "{listed}");
    ok(&run(&["samples", "metadata", &samples[0], "--unset", "control"]));

    // A measure a sample lacks, and one sample alone, are explained.
    let out = run(&["compare", "--measure", "readcount", "--rank", "kingdom", &samples[0]]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("2 to 500 samples"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A sample that is not there is named with why, as the app's comparison view names it.
    let out = run(&["compare", &samples[0], "0000000000000000"]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("0000000000000000: it is no longer on the service"), "{said}");
    assert!(said.contains("1 of 2 have one"), "{said}");
}

/// A database names its host; `mgds samples remove-host` makes a copy of a sample without the
/// reads its classification called the host's, and says what went.
#[test]
fn remove_host_copies_a_sample_without_the_reads_of_the_host_the_database_names() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, data) = (dir.path().join("cfg"), dir.path().join("data"));
    let run = |args: &[&str]| mgds(&cfg, &data).args(args).output().unwrap();
    let reads = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo/reads.fastq.gz");
    let classified = |sample: &str| {
        let shown: Value = serde_json::from_str(&ok(&run(&["samples", "show", sample]))).unwrap();
        let a = shown["primary_classification"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
        ok(&run(&["analyses", "results", &a, "--wait", "--csv"]));
        a
    };
    let first = ok(&mgds(&cfg, &data).arg("upload").arg(&reads).output().unwrap()).trim().to_string();
    classified(&first);
    // The demo taxonomy has no human, so by default the demo database has no host.
    let said = ok(&run(&["db", "host", "demo-bacteria"]));
    assert!(said.contains("host is human (9606) where the database has it"), "{said}");
    let out = run(&["samples", "remove-host", &first]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("mgds db host NAME TAXID"), "{err}");
    let out = run(&["db", "host", "demo-bacteria", "E. coli"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"E. coli\" is not a tax id"), "{out:?}");

    // Named E. coli for the test: samples classified from now on carry it.
    assert!(ok(&run(&["db", "host", "demo-bacteria", "562"])).contains("demo-bacteria: host tax ids 562"));
    let second = ok(&mgds(&cfg, &data).arg("upload").arg(&reads).output().unwrap()).trim().to_string();
    let classification = classified(&second);
    let out = run(&["samples", "remove-host", &second, "--wait"]);
    let copy = ok(&out).trim().to_string();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(&format!("is being made from {second} without its host reads")), "{said}");
    let removed: u64 = said
        .split("removed ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .map(|n| n.replace(',', "").parse().unwrap())
        .unwrap_or_else(|| panic!("{said}"));
    let csv = ok(&run(&["analyses", "results", &classification, "--csv"]));
    let e_coli: u64 = csv
        .lines()
        .find(|l| l.starts_with("562,"))
        .and_then(|l| l.split(',').nth(2)?.parse().ok())
        .unwrap_or_else(|| panic!("{csv}"));
    assert!(removed >= e_coli && removed > 0, "{removed} removed, {e_coli} E. coli reads: {said}");
    let shown: Value = serde_json::from_str(&ok(&run(&["samples", "show", &copy]))).unwrap();
    assert_eq!(shown["filename"], json!("reads.host_removed.fastq.gz"), "{shown}");
    assert_eq!(shown["visibility"], json!("private"), "{shown}");
}

/// A lab's IT: the operator makes an organisation's owner; the owner invites and manages its
/// users over the API with `mgds org`; the operator lists, disables and re-enables accounts.
#[test]
fn lab_it_manages_an_organisation_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let admin =
        |args: &[&str]| Command::new(MGDS).args(["admin", "--data-dir"]).arg(&data).args(args).output().unwrap();
    let key_of = |out: &std::process::Output| ok(out).trim().to_string();
    let head = key_of(&admin(&["user", "create", "head@lab.org", "--organization", "Lab", "--role", "owner"]));
    let member = key_of(&admin(&["user", "create", "tech@lab.org", "--organization", "Lab"]));
    let wrong = admin(&["user", "create", "x@lab.org", "--role", "boss"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("use member, admin or owner"));
    let serve = Serve::start(&data, &[]);
    let org = |key: &str, args: &[&str]| {
        Command::new(MGDS)
            .arg("org")
            .args(args)
            .args(["--base-url", &serve.url])
            .env("MGDS_API_KEY", key)
            .env("MGDS_CONFIG_DIR", dir.path().join("cfg"))
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let shown = ok(&org(&head, &["show"]));
    assert!(shown.contains("Lab") && shown.contains("your role: owner") && shown.contains("users: 2"), "{shown}");
    let invited = org(&head, &["invite", "New.Person@lab.org", "--role", "admin"]);
    let link = ok(&invited);
    assert!(link.trim().starts_with(&format!("{}/#link=", serve.url)), "stdout holds only the link: {link}");
    assert!(String::from_utf8_lossy(&invited.stderr).contains("new.person@lab.org (admin)"));
    let table = ok(&org(&head, &["users"]));
    for want in ["head@lab.org", "tech@lab.org", "new.person@lab.org", "owner", "admin", "member"] {
        assert!(table.contains(want), "{want} in {table}");
    }
    let admins = serde_json::from_str::<Value>(&ok(&org(&head, &["users", "--role", "admin", "--json"]))).unwrap();
    assert_eq!(admins.as_array().unwrap().len(), 1, "{admins}");

    // A member is told they may not; the owner disables them; their key stops.
    let refused = org(&member, &["users"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("only an admin or owner"), "{refused:?}");
    let disabled = org(&head, &["disable", "tech@lab.org"]);
    ok(&disabled);
    assert!(String::from_utf8_lossy(&disabled.stderr).contains("disabled tech@lab.org"));
    let stopped = org(&member, &["show"]);
    assert!(!stopped.status.success());
    assert!(String::from_utf8_lossy(&stopped.stderr).contains("disabled"), "{stopped:?}");
    let listed = ok(&admin(&["user", "list"]));
    let line = listed.lines().find(|l| l.contains("tech@lab.org")).unwrap();
    assert!(line.contains("\tLab\tmember\tdisabled "), "{line}");
    let enabled = admin(&["user", "enable", "tech@lab.org"]);
    ok(&enabled);
    ok(&org(&member, &["show"]));
    let missing = org(&head, &["role", "nobody@lab.org", "admin"]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("there is no user nobody@lab.org in your organisation"));
    ok(&org(&head, &["role", "tech@lab.org", "admin"]));
    let reset = ok(&org(&head, &["reset-password", "tech@lab.org"]));
    assert!(reset.contains("#link="), "{reset}");
    let revoked = org(&head, &["revoke", "tech@lab.org"]);
    ok(&revoked);
    assert!(!org(&member, &["show"]).status.success(), "the revoked key stops");
    let link = ok(&admin(&["user", "link", "tech@lab.org", "--public-url", "https://mgds.lab.org"]));
    assert!(link.starts_with("https://mgds.lab.org/#link="), "{link}");

    // The audit trail of all that, as CSV for a spreadsheet, and its chain checked.
    let csv = ok(&org(&head, &["audit", "--csv", "--per-page", "1000"]));
    let header = csv.lines().next().unwrap();
    assert_eq!(header, "at,seq,by,address,client,action,kind,record,changes", "{csv}");
    for action in ["user.invited", "user.disabled", "user.enabled", "user.role_changed", "user.keys_revoked"] {
        assert!(csv.contains(action), "{action} in {csv}");
    }
    let disabled = ok(&org(&head, &["audit", "--action", "user.disabled", "--json"]));
    let disabled: Value = serde_json::from_str(&disabled).unwrap();
    assert_eq!(disabled.as_array().unwrap().len(), 1, "{disabled}");
    assert_eq!(disabled[0]["actor_email"], json!("head@lab.org"));
    let users = ok(&org(&head, &["audit", "--action", "user.", "--by", "head@lab.org", "--json"]));
    let users: Value = serde_json::from_str(&users).unwrap();
    assert!(users.as_array().unwrap().iter().all(|e| e["actor_email"] == json!("head@lab.org")), "{users}");
    let wrong = org(&head, &["audit", "--since", "last tuesday"]);
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("is not a time"), "{wrong:?}");
    let verified = ok(&admin(&["audit", "verify"]));
    assert!(verified.contains("Lab: ") && verified.contains("the chain is whole"), "{verified}");
}

/// Lab IT registers a webhook from the command line; events made while its receiver is away
/// are kept across a service that is killed and started again, and arrive afterwards, signed
/// and in order; the command line shows the events and the delivery log.
#[test]
fn webhook_events_outlive_a_killed_service_and_arrive_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = Command::new(MGDS)
        .args(["admin", "--data-dir"])
        .arg(&data)
        .args(["user", "create", "head@lab.org", "--organization", "Lab", "--role", "owner"])
        .output()
        .unwrap();
    let head = ok(&out).trim().to_string();
    let allow = ["--webhook-allow-network", "127.0.0.0/8"];
    let serve = Serve::start(&data, &allow);
    let org = |url: &str, args: &[&str]| {
        Command::new(MGDS)
            .arg("org")
            .args(args)
            .args(["--base-url", url])
            .env("MGDS_API_KEY", &head)
            .env("MGDS_CONFIG_DIR", dir.path().join("cfg"))
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    // The receiver's port, with nothing listening on it yet.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let hook_url = format!("http://127.0.0.1:{port}/lims");
    let added = org(&serve.url, &["webhook", "add", &hook_url]);
    let secret = ok(&added).trim().to_string();
    assert!(secret.starts_with("whsec_"), "stdout holds only the secret: {secret}");
    assert!(String::from_utf8_lossy(&added.stderr).contains("registered webhook"), "{added:?}");
    let inward = org(&serve.url, &["webhook", "add", "http://10.9.9.9/lims"]);
    assert!(!inward.status.success());
    assert!(String::from_utf8_lossy(&inward.stderr).contains("--webhook-allow-network"), "{inward:?}");
    assert!(ok(&org(&serve.url, &["webhook", "types"])).contains("analysis.completed\t"));
    let hooks: Value = serde_json::from_str(&ok(&org(&serve.url, &["webhooks", "--json"]))).unwrap();
    let hook = hooks[0]["$uri"].as_str().unwrap().rsplit('/').next().unwrap().to_string();

    // An upload (classified by itself) while the receiver is away: its first event is tried
    // and fails; the others wait behind it.
    let reads = dir.path().join("isolate_7.fastq.gz");
    std::fs::write(&reads, engines::demo_reads()).unwrap();
    let uploaded = Command::new(MGDS)
        .args(["upload", "--base-url", &serve.url])
        .arg(&reads)
        .env("MGDS_API_KEY", &head)
        .env("MGDS_CONFIG_DIR", dir.path().join("cfg"))
        .output()
        .unwrap();
    ok(&uploaded);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let events: Value = serde_json::from_str(&ok(&org(&serve.url, &["events", "--json"]))).unwrap();
        let events = events.as_array().unwrap();
        let tried = events.iter().any(|e| e["status"] == json!("retryable"));
        if tried && events.iter().any(|e| e["event_type"] == json!("analysis.completed")) {
            break;
        }
        assert!(Instant::now() < deadline, "{events:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(serve);

    // The receiver comes up; the service is started again and delivers what it kept.
    let got = mgds_webhook::testing::receive_on(std::net::TcpListener::bind(("127.0.0.1", port)).unwrap());
    let serve = Serve::start(&data, &allow);
    let mut types = Vec::new();
    while types.len() < 3 {
        let r = got.recv_timeout(Duration::from_secs(60)).expect("the kept events arrive");
        mgds_webhook::verify(secret.as_bytes(), &r.signature, &r.body, mgds_webhook::unix_now(), 300).unwrap();
        types.push(r.event);
    }
    assert_eq!(types, ["sample.created", "sample.confirmed", "analysis.completed"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let done: Value =
            serde_json::from_str(&ok(&org(&serve.url, &["events", "--status", "success", "--json"]))).unwrap();
        if done.as_array().unwrap().len() == 3 {
            break;
        }
        assert!(Instant::now() < deadline, "{done}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let log = ok(&org(&serve.url, &["webhook", "deliveries", &hook]));
    assert!(
        log.lines().next().unwrap().split_whitespace().eq([
            "at",
            "event",
            "type",
            "delivered",
            "status",
            "ms",
            "by_hand",
            "error"
        ]),
        "{log}"
    );
    assert!(log.contains("Connection refused") || log.contains("connect"), "the failed try is in the log: {log}");
    let failed = ok(&org(&serve.url, &["webhook", "deliveries", &hook, "--failed", "--json"]));
    assert!(
        serde_json::from_str::<Value>(&failed)
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["delivered"] == json!(false))
    );
}
