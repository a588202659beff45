//! The service past one machine: `mgds serve` (no workers of its own) and two `mgds worker`
//! processes, each with a data folder of its own as on separate machines, sharing only a
//! PostgreSQL database and an S3 store (Garage). Runs when the test command's throwaway
//! PostgreSQL and Garage are there (`MGDS_TEST_POSTGRES`, `MGDS_TEST_S3_*`; see `test.sh`).

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::engines::{demo_reads, wait_for};
use crate::procs::Proc;
use crate::{Http, MGDS};

/// The database, the store and its credentials, as the service's commands take them.
struct Backends {
    database: String,
    store: String,
    s3: mgds_server::storage::S3Config,
}

impl Backends {
    fn from_env(rt: &tokio::runtime::Runtime) -> Option<Backends> {
        let s3 = mgds_server::storage::S3Config::for_tests()?;
        let database = rt.block_on(mgds_server::db::test_database())?;
        let store = format!("s3://{}/{}", s3.bucket, s3.prefix.as_deref().unwrap_or_default());
        Some(Backends { database, store, s3 })
    }

    /// `mgds` with `args` on these backends, from the data folder `data`.
    fn mgds(&self, data: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(MGDS);
        c.args(args)
            .arg("--data-dir")
            .arg(data)
            .args(["--database", &self.database, "--store", &self.store])
            .args(["--s3-endpoint", self.s3.endpoint.as_deref().unwrap_or_default(), "--s3-region", &self.s3.region])
            .env("AWS_ACCESS_KEY_ID", &self.s3.access_key_id)
            .env("AWS_SECRET_ACCESS_KEY", &self.s3.secret_access_key)
            .env("NO_COLOR", "1")
            .env("MGDS_LOG", "info");
        c
    }

    /// A user made with `mgds admin` on these backends; answers their API key.
    fn user(&self, data: &Path) -> String {
        let made = self.mgds(data, &["admin", "user", "create", "lab@example.org"]).output().unwrap();
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        String::from_utf8(made.stdout).unwrap().trim().to_string()
    }
}

#[test]
fn an_api_host_and_two_workers_share_only_postgresql_and_an_s3_store() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let Some(b) = Backends::from_env(&rt) else {
        eprintln!("not run: needs MGDS_TEST_POSTGRES and MGDS_TEST_S3_* (the test command starts both)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (api, w1, w2) = (dir.path().join("api"), dir.path().join("worker1"), dir.path().join("worker2"));

    // The API host installs the demo references and publishes them to the store at start.
    let (serve, url) = Proc::serve(b.mgds(&api, &["serve", "--listen", "127.0.0.1:0", "--workers", "0"]));
    let key = b.user(&api);

    // Two workers on folders of their own: they fetch the references from the store. The short
    // lease lets the survivor take over an analysis from a killed worker quickly.
    let worker = |data: &Path, extra: &[&str]| {
        let mut cmd = b.mgds(data, &["worker", "--threads", "1", "--job-lease", "3"]);
        cmd.args(extra);
        Proc::spawn(cmd)
    };
    let mut first_worker = worker(&w1, &[]);
    // The second answers its metrics (no API), as a monitored worker machine does.
    let mut second_worker = worker(&w2, &["--metrics-listen", "127.0.0.1:0"]);
    let said = second_worker.read_line();
    let metrics_url = said
        .trim()
        .strip_prefix("metrics on ")
        .unwrap_or_else(|| panic!("{said:?}\n{}", second_worker.log()))
        .to_string();

    // Uploads go straight to the store: the form is the store's.
    let c = Http::new();
    let reads = demo_reads();
    let mut samples = Vec::new();
    for i in 0..6 {
        let (s, init) = c.json(
            "POST",
            &format!("{url}/api/v1/samples/init_upload"),
            &key,
            Some(json!({"filename": format!("s{i}.fastq.gz"), "size": reads.len()})),
        );
        assert_eq!(s, 200, "{init}");
        let upload_url = init["upload_url"].as_str().unwrap();
        assert!(upload_url.starts_with(b.s3.endpoint.as_deref().unwrap()), "the form goes to the store: {upload_url}");
        assert_eq!(c.upload(upload_url, init["additional_fields"].as_object().unwrap(), &reads), 201);
        let id = init["sample_id"].as_str().unwrap().to_string();
        let (s, r) =
            c.json("POST", &format!("{url}/api/v1/samples/confirm_upload"), &key, Some(json!({"sample_id": id})));
        assert_eq!(s, 200, "{r}");
        samples.push(id);
    }

    // The first worker is killed in the middle of an analysis: the other finishes everything.
    wait_for(120, "the first worker to start an analysis", || {
        first_worker.log().contains("running analysis").then_some(())
    });
    first_worker.kill();
    let mut results = Vec::new();
    for id in &samples {
        let analysis = wait_for(300, "a classification", || {
            let (_, s) = c.json("GET", &format!("{url}/api/v1/samples/{id}"), &key, None);
            let a = s["primary_classification"]["$ref"].as_str()?.rsplit('/').next()?.to_string();
            let (_, got) = c.json("GET", &format!("{url}/api/v1/classifications/{a}"), &key, None);
            (got["complete"] == json!(true)).then_some(got)
        });
        assert_eq!(
            analysis["success"],
            json!(true),
            "{analysis}\nworker 1:\n{}\nworker 2:\n{}",
            first_worker.log(),
            second_worker.log()
        );
        let a = analysis["$uri"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
        let (_, r) = c.json("GET", &format!("{url}/api/v1/classifications/{a}/results"), &key, None);
        results.push(r);
    }
    // Every sample was classified once and alike (the same reads, the same reference).
    let n_reads = |r: &Value| r["n_reads"].as_u64().unwrap();
    assert!(results.iter().all(|r| n_reads(r) == n_reads(&results[0]) && r["table"] == results[0]["table"]));
    assert!(second_worker.completed() >= 1, "the second worker ran analyses:\n{}", second_worker.log());
    // Each analysis ran to its end once; the one the first worker was killed in may have
    // finished its engine run there (logged) without its results being stored, and ran again.
    let ran = first_worker.completed() + second_worker.completed();
    eprintln!(
        "runs: worker 1 (killed) {}, worker 2 {}; analyses {}",
        first_worker.completed(),
        second_worker.completed(),
        samples.len()
    );
    assert!(
        (samples.len()..=samples.len() + 1).contains(&ran),
        "{ran} runs for {} analyses\nworker 1:\n{}\nworker 2:\n{}",
        samples.len(),
        first_worker.log(),
        second_worker.log()
    );
    assert!(
        second_worker.log().contains("fetched reference data from the store"),
        "the workers took the references from the store:\n{}",
        second_worker.log()
    );
    // The worker's own metrics count the analyses it ran and stored; its health answers.
    let text = c.rt.block_on(async { c.client.get(&metrics_url).send().await.unwrap().text().await.unwrap() });
    let ran_here = text
        .lines()
        .find_map(|l| {
            l.strip_prefix(r#"mgds_analysis_run_seconds_count{analysis_type="classification",outcome="success"} "#)
        })
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(ran_here.parse::<usize>().unwrap(), second_worker.completed(), "{text}");
    let health = metrics_url.replace("/metrics", "/api/v1/health");
    let status = c.rt.block_on(async { c.client.get(&health).send().await.unwrap().status().as_u16() });
    assert_eq!(status, 200);
    let other = metrics_url.replace("/metrics", "/api/v1/samples");
    let status = c.rt.block_on(async { c.client.get(&other).send().await.unwrap().status().as_u16() });
    assert_eq!(status, 404, "a worker serves no API");

    // Downloads are the service's addresses, checked at each use, which send the client on to
    // the store's own signed address: the bytes come from the store.
    let id = &samples[0];
    let (s, d) = c.json("POST", &format!("{url}/api/v1/samples/{id}/download_uri"), &key, Some(json!({})));
    assert_eq!(s, 200, "{d}");
    let download = d["download_uri"].as_str().unwrap();
    let to = sent_on_to(&c, download);
    assert!(to.starts_with(b.s3.endpoint.as_deref().unwrap()) && to.contains("X-Amz-Signature"), "{to}");
    let got = c.rt.block_on(async { c.client.get(download).send().await.unwrap().bytes().await.unwrap() });
    assert!(got == reads, "the sample's file comes back from the store");

    // Deleting a sample removes its objects from the store.
    let storage = mgds_server::storage::Storage::s3(&b.s3).unwrap();
    let under = |id: &str| {
        let prefix = format!("samples/{id}");
        rt.block_on(storage.keys(Some(&prefix))).unwrap()
    };
    assert!(!under(id).is_empty(), "the sample's file is in the store");
    let (s, _) = c.json("DELETE", &format!("{url}/api/v1/samples/{id}"), &key, None);
    assert_eq!(s, 204);
    assert!(under(id).is_empty(), "deleting the sample removed its objects: {:?}", under(id));
    drop(serve);
}

#[test]
fn an_install_moves_to_postgresql_and_an_s3_store_and_a_second_run_completes_an_interrupted_one() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let Some(b) = Backends::from_env(&rt) else {
        eprintln!("not run: needs MGDS_TEST_POSTGRES and MGDS_TEST_S3_* (the test command starts both)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));

    // An install on one machine: a data folder with two classified samples and a document.
    let local = |args: &[&str]| {
        let mut c = Command::new(MGDS);
        c.args(args).arg("--data-dir").arg(&old).env("NO_COLOR", "1");
        c
    };
    let (serve, url) =
        Proc::serve(local(&["serve", "--listen", "127.0.0.1:0", "--webhook-allow-network", "127.0.0.0/8"]));
    let made = local(&["admin", "user", "create", "lab@example.org", "--role", "owner"]).output().unwrap();
    let key = String::from_utf8(made.stdout).unwrap().trim().to_string();
    let c = Http::new();
    let reads = demo_reads();
    let samples: Vec<String> =
        (0..2).map(|i| crate::engines::upload_raw(&c, &url, &key, &format!("r{i}.fastq.gz"), &reads)).collect();
    let results: Vec<Value> = samples
        .iter()
        .map(|id| {
            let a = crate::engines::finished_classification(&c, &url, &key, id);
            let a = a["$uri"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
            c.json("GET", &format!("{url}/api/v1/classifications/{a}/results"), &key, None).1
        })
        .collect();
    let (st, tag) = c.json(
        "POST",
        &format!("{url}/api/v1/tags"),
        &key,
        Some(json!({"name": "moved", "sample": {"$ref": format!("/api/v1/samples/{}", samples[0])}})),
    );
    assert_eq!(st, 200, "{tag}");
    // A webhook whose receiver is away: its events wait, and move with the rest.
    let (st, hook) = c.json(
        "POST",
        &format!("{url}/api/v1/webhooks"),
        &key,
        Some(json!({"post_url": "http://127.0.0.1:9/lims", "event_type": "sample.updated"})),
    );
    assert_eq!(st, 201, "{hook}");
    let tag_second = |url: &str, name: &str| {
        let body = json!({"name": name, "sample": {"$ref": format!("/api/v1/samples/{}", samples[1])}});
        let (st, tag) = c.json("POST", &format!("{url}/api/v1/tags"), &key, Some(body));
        assert_eq!(st, 200, "{tag}");
    };
    tag_second(&url, "before");
    drop(serve);
    // The user is linked to a single sign-on provider's account: the link moves too.
    rt.block_on(async {
        sqlx::any::install_default_drivers();
        let db = format!("sqlite://{}", old.join(mgds_server::db::DB_FILE).display());
        let sqlite = sqlx::AnyPool::connect(&db).await.unwrap();
        sqlx::query(
            "INSERT INTO user_identities (issuer, subject, user_id, email, created_at, last_signed_in_at) \
             SELECT 'https://idp.lab.example', 'lab-sub', id, email, created_at, created_at FROM users",
        )
        .execute(&sqlite)
        .await
        .unwrap();
        sqlite.close().await;
    });

    let migrate = || {
        let mut cmd = local(&["admin", "migrate", "--to-database", &b.database, "--to-store", &b.store]);
        cmd.args(["--s3-endpoint", b.s3.endpoint.as_deref().unwrap(), "--s3-region", &b.s3.region])
            .env("AWS_ACCESS_KEY_ID", &b.s3.access_key_id)
            .env("AWS_SECRET_ACCESS_KEY", &b.s3.secret_access_key);
        let out = cmd.output().unwrap();
        let (stdout, stderr) =
            (String::from_utf8_lossy(&out.stdout).to_string(), String::from_utf8_lossy(&out.stderr).to_string());
        assert!(out.status.success(), "{stdout}\n{stderr}");
        stdout
    };
    let said = migrate();
    assert!(said.contains(" files copied") && said.contains("0 already there") && said.contains("match"), "{said}");
    let references: u64 = said
        .split(';')
        .find_map(|part| part.trim().strip_suffix(" references in the store")?.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    assert!(references >= 1, "the installed reference data goes to the store: {said}");

    // An interruption: the copy lost a file, left another damaged (same size, other bytes) and
    // lost some rows. A second run puts back just those.
    let storage = mgds_server::storage::Storage::s3(&b.s3).unwrap();
    let lost_file = format!("samples/{}/r0.fastq.gz", samples[0]);
    rt.block_on(storage.delete(&lost_file)).unwrap();
    let damaged = format!("samples/{}/r1.fastq.gz", samples[1]);
    let mut bad = reads.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0xff;
    rt.block_on(storage.put(&damaged, bad.into())).unwrap();
    let pg = rt.block_on(async {
        sqlx::any::install_default_drivers();
        sqlx::AnyPool::connect(&b.database).await.unwrap()
    });
    rt.block_on(sqlx::query("DELETE FROM sample_tags").execute(&pg)).unwrap();
    rt.block_on(sqlx::query("DELETE FROM metadata WHERE sample_id = $1").bind(&samples[1]).execute(&pg)).unwrap();
    let again = migrate();
    assert!(again.contains(" 2 files copied"), "only the lost and the damaged file are copied again: {again}");
    let metadata: i64 = rt.block_on(sqlx::query_scalar("SELECT COUNT(*) FROM metadata").fetch_one(&pg)).unwrap();
    assert_eq!(metadata, 2, "the lost row is back, and only it");
    let tagged: i64 = rt.block_on(sqlx::query_scalar("SELECT COUNT(*) FROM sample_tags").fetch_one(&pg)).unwrap();
    assert_eq!(tagged, 2, "the lost tag links are back");
    let linked: String = rt
        .block_on(
            sqlx::query_scalar("SELECT subject FROM user_identities WHERE issuer = 'https://idp.lab.example'")
                .fetch_one(&pg),
        )
        .unwrap();
    assert_eq!(linked, "lab-sub", "the single sign-on link came along");
    rt.block_on(pg.close());

    // The service on the new backends, on another machine: the same account, samples,
    // results and files.
    let (_serve, url) = Proc::serve(b.mgds(&new, &["serve", "--listen", "127.0.0.1:0", "--workers", "0"]));
    let (s, list) = c.json("GET", &format!("{url}/api/v1/samples"), &key, None);
    assert_eq!(s, 200, "the old key signs in: {list}");
    assert_eq!(list.as_array().unwrap().len(), 2);
    // The webhook and its events came along, and new events are numbered after them.
    let events = |url: &str| c.json("GET", &format!("{url}/api/v1/events"), &key, None).1.as_array().unwrap().len();
    assert_eq!(events(&url), 1);
    tag_second(&url, "after");
    assert_eq!(events(&url), 2);
    for (id, before) in samples.iter().zip(&results) {
        let (_, s) = c.json("GET", &format!("{url}/api/v1/samples/{id}"), &key, None);
        let a = s["primary_classification"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
        let (st, r) = c.json("GET", &format!("{url}/api/v1/classifications/{a}/results"), &key, None);
        assert_eq!((st, &r), (200, before), "the results came along");
        let (_, d) = c.json("POST", &format!("{url}/api/v1/samples/{id}/download_uri"), &key, Some(json!({})));
        let got = c.rt.block_on(async {
            c.client.get(d["download_uri"].as_str().unwrap()).send().await.unwrap().bytes().await.unwrap()
        });
        assert!(got == reads, "the file came along whole");
    }
}

/// The real `onecodex` client on a service whose S3 store mints each upload's credentials
/// (Garage's admin API): boto3 writes straight to the store, into a bucket of the upload's own
/// that the store checks, and no byte passes through the API host. A file, a pair (one
/// interleaved sample) and a document arrive whole; the file is classified from the store; each
/// upload's bucket is gone once it was confirmed.
#[test]
fn the_onecodex_client_uploads_straight_to_the_store() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (Some(b), Some(admin)) = (
        Backends::from_env(&rt),
        mgds_server::storage::S3Config::for_tests_with_garage_admin().and_then(|s| s.garage_admin),
    ) else {
        eprintln!("not run: needs MGDS_TEST_POSTGRES, MGDS_TEST_S3_* and MGDS_TEST_GARAGE_ADMIN_* (see test.sh)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (api, scratch) = (dir.path().join("api"), dir.path().join("scratch"));
    std::fs::create_dir_all(&scratch).unwrap();
    let mut cmd = b.mgds(&api, &["serve", "--listen", "127.0.0.1:0", "--garage-admin-url", &admin.url]);
    cmd.env("MGDS_GARAGE_ADMIN_TOKEN", &admin.token);
    let (mut serve, url) = Proc::serve(cmd);
    let second = serve.read_line();
    let store = b.s3.endpoint.clone().unwrap();
    assert!(second.starts_with(&format!("s3 endpoint: {store} (the object store")), "{second}");
    let key = b.user(&api);

    let reads = demo_reads();
    let gut = scratch.join("gut.fastq.gz");
    std::fs::write(&gut, &reads).unwrap();
    crate::varied_pair(&scratch, 300);
    let report = scratch.join("report.pdf");
    std::fs::write(&report, b"%PDF-1.4\n% a run report\n").unwrap();
    let python = crate::python_env::python();
    let onecodex = |program: &Path, args: &[&std::ffi::OsStr]| {
        let out = Command::new(program)
            .args(args)
            .current_dir(&scratch)
            .env("HOME", &scratch)
            .env("ONE_CODEX_NO_TELEMETRY", "1")
            .env("ONE_CODEX_API_BASE", &url)
            .env("ONE_CODEX_API_KEY", &key)
            // What the service's second line says to set: the store's address and region.
            .env("AWS_ENDPOINT_URL_S3", &store)
            .env("AWS_DEFAULT_REGION", &b.s3.region)
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env_remove("AWS_ACCESS_KEY_ID")
            .env_remove("AWS_SECRET_ACCESS_KEY")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{program:?} {args:?}: {err}\nservice:\n{}", serve.log());
        (String::from_utf8_lossy(&out.stdout).to_string(), err)
    };
    let cli = python.with_file_name("onecodex");
    let uploaded = |err: &str| {
        let tail = err.split("upload finished as sample").nth(1).unwrap_or_else(|| panic!("{err}"));
        tail.split_whitespace().next().unwrap().trim_matches(|c: char| !c.is_ascii_alphanumeric()).to_string()
    };
    let (_, err) = onecodex(&cli, &["upload".as_ref(), gut.as_os_str(), "--tag".as_ref(), "straight".as_ref()]);
    let single = uploaded(&err);
    let (r1, r2) = (scratch.join("gut_S1_L001_R1_001.fastq"), scratch.join("gut_S1_L001_R2_001.fastq"));
    let (_, err) = onecodex(&cli, &["upload".as_ref(), r1.as_os_str(), r2.as_os_str(), "--no-prompt".as_ref()]);
    let pair = uploaded(&err);
    let script = "import sys; from onecodex import Api; print(Api().Documents.upload(sys.argv[1]).id)";
    let (out, _) = onecodex(&python, &["-c".as_ref(), script.as_ref(), report.as_os_str()]);
    let document = out.trim().to_string();

    let c = Http::new();
    // The service's worker copies the files in from each upload's bucket: importing until then.
    let s = wait_for(60, "the sample's file copied in", || {
        let (_, s) = c.json("GET", &format!("{url}/api/v1/samples/{single}"), &key, None);
        (s["visibility"] != json!("importing")).then_some(s)
    });
    assert_eq!(s["size"], json!(reads.len()), "{s}");
    let (_, d) = c.json("POST", &format!("{url}/api/v1/samples/{single}/download_uri"), &key, Some(json!({})));
    let link = d["download_uri"].as_str().unwrap();
    let to = sent_on_to(&c, link);
    assert!(to.starts_with(&store), "downloads come from the store: {link} sends the client on to {to}");
    let got = c.rt.block_on(async { c.client.get(link).send().await.unwrap().bytes().await.unwrap() });
    assert!(got == reads, "the file came through whole");
    let (_, p) = c.json("GET", &format!("{url}/api/v1/samples/{pair}"), &key, None);
    assert!(p["filename"].as_str().unwrap().contains("interleaved"), "one sample of the pair: {p}");
    let (_, doc) = c.json("GET", &format!("{url}/api/v1/documents/{document}"), &key, None);
    assert_eq!((&doc["filename"], &doc["size"]), (&json!("report.pdf"), &json!(24)), "{doc}");

    // Classified from the store by the service's own worker.
    let done = wait_for(180, "the uploaded file's classification", || {
        let (_, s) = c.json("GET", &format!("{url}/api/v1/samples/{single}"), &key, None);
        let a = s["primary_classification"]["$ref"].as_str()?.to_string();
        let (_, got) = c.json("GET", &format!("{url}{a}"), &key, None);
        (got["complete"] == json!(true)).then_some(got)
    });
    assert_eq!(done["success"], json!(true), "{done}\n{}", serve.log());

    // No request reached the service's own S3 endpoint, and every upload's bucket is gone.
    let metrics =
        c.rt.block_on(async { c.client.get(format!("{url}/metrics")).send().await.unwrap().text().await.unwrap() });
    assert!(metrics.contains("init_multipart_upload"), "{metrics}");
    assert!(!metrics.contains("/mgds-uploads"), "bytes went through the API host:\n{metrics}");
    for id in [&single, &pair, &document] {
        let bucket = format!("mgds-upload-{id}");
        let r = c.rt.block_on(async {
            c.client
                .get(format!("{}/v2/GetBucketInfo?globalAlias={bucket}", admin.url))
                .bearer_auth(&admin.token)
                .send()
                .await
                .unwrap()
                .status()
        });
        assert_eq!(r.as_u16(), 404, "the bucket {bucket} is still in the store");
    }
}

/// A worker whose clock runs five minutes ahead (libfaketime, from Debian) does not
/// take over an analysis whose lease another worker holds: leases are dated by the database's
/// clock, not by the workers'. Once that lease lapses, it runs the analysis as any worker does.
#[test]
fn a_worker_whose_clock_is_ahead_leaves_a_held_lease_alone() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let Some(b) = Backends::from_env(&rt) else {
        eprintln!("not run: needs MGDS_TEST_POSTGRES and MGDS_TEST_S3_* (the test command starts both)");
        return;
    };
    // libfaketime itself, preloaded into the worker (the `faketime` command would run it as a
    // child of its own, which the test could not stop).
    let Some(libfaketime) = std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .flatten()
        .map(|d| d.path().join("faketime/libfaketime.so.1"))
        .find(|p| p.is_file())
    else {
        eprintln!("not run: needs libfaketime (Debian's faketime package; the test command installs it)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (api, ahead) = (dir.path().join("api"), dir.path().join("ahead"));
    let (serve, url) = Proc::serve(b.mgds(&api, &["serve", "--listen", "127.0.0.1:0", "--workers", "0"]));
    let key = b.user(&api);

    // A sample whose classification waits in the queue; a worker (on a clock that is right)
    // holds it with a lease of a minute.
    let c = Http::new();
    let reads = demo_reads();
    let (s, init) = c.json(
        "POST",
        &format!("{url}/api/v1/samples/init_upload"),
        &key,
        Some(json!({"filename": "held.fastq.gz", "size": reads.len()})),
    );
    assert_eq!(s, 200, "{init}");
    assert_eq!(
        c.upload(init["upload_url"].as_str().unwrap(), init["additional_fields"].as_object().unwrap(), &reads),
        201
    );
    let id = init["sample_id"].as_str().unwrap().to_string();
    let (s, r) = c.json("POST", &format!("{url}/api/v1/samples/confirm_upload"), &key, Some(json!({"sample_id": id})));
    assert_eq!(s, 200, "{r}");
    let (_, sample) = c.json("GET", &format!("{url}/api/v1/samples/{id}"), &key, None);
    let analysis = sample["primary_classification"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    sqlx::any::install_default_drivers();
    let pool = rt.block_on(sqlx::AnyPool::connect(&b.database)).unwrap();
    // A lease until `secs` from now by the database's clock, written as the queue writes them.
    let hold = |secs: i64| {
        rt.block_on(
            sqlx::query(
                "UPDATE job_queue SET worker = 'elsewhere-1', claims = 1, lease_until = \
                 to_char((now() + make_interval(secs => $1::float8)) AT TIME ZONE 'UTC', \
                 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"') WHERE analysis_id = $2",
            )
            .bind(secs)
            .bind(&analysis)
            .execute(&pool),
        )
        .unwrap();
    };
    hold(60);

    // The worker five minutes ahead: with leases dated by its own clock, that lease would look
    // four minutes old to it.
    let mut cmd = b.mgds(&ahead, &["worker", "--threads", "1"]);
    cmd.env("LD_PRELOAD", &libfaketime).env("FAKETIME", "+300s");
    let mut worker = Proc::spawn(cmd);
    wait_for(60, "the worker to start", || worker.log().contains("worker: running analyses").then_some(()));
    // What is checked is that nothing happens: the worker is given its first claim at start and
    // two more polls (every 2 s) to take the analysis over, which it did at the first with leases
    // dated by its own clock.
    std::thread::sleep(std::time::Duration::from_secs(4));
    // (The row leaves the queue once an analysis is done.)
    let holder: Option<(Option<String>,)> = rt
        .block_on(
            sqlx::query_as("SELECT worker FROM job_queue WHERE analysis_id = $1").bind(&analysis).fetch_optional(&pool),
        )
        .unwrap();
    let holder = holder.and_then(|h| h.0);
    assert_eq!(holder.as_deref(), Some("elsewhere-1"), "a held lease was taken over:\n{}", worker.log());
    let (_, a) = c.json("GET", &format!("{url}/api/v1/analyses/{analysis}"), &key, None);
    assert_eq!(a["complete"], json!(false), "{a}");

    // The holder stops renewing: once its lease lapses, the worker ahead runs the analysis.
    hold(-1);
    let done = wait_for(120, "the analysis, once the lease lapsed", || {
        let (_, a) = c.json("GET", &format!("{url}/api/v1/analyses/{analysis}"), &key, None);
        (a["complete"] == json!(true)).then_some(a)
    });
    assert_eq!(done["success"], json!(true), "{done}\n{}", worker.log());
    worker.kill();
    drop(serve);
}

/// Where the service's download address `link` sends the client on to (its 307's `Location`).
fn sent_on_to(c: &Http, link: &str) -> String {
    let direct = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    c.rt.block_on(async {
        let r = direct.get(link).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 307, "{link}");
        r.headers()[reqwest::header::LOCATION].to_str().unwrap().to_string()
    })
}
