//! Integration tests of the service over real HTTP: each test starts the real service on
//! 127.0.0.1:0 with its own temporary data folder (SQLite file and object store), or with a
//! new database of its own on the PostgreSQL server `MGDS_TEST_POSTGRES` names and its files in
//! the S3 bucket `MGDS_TEST_S3_*` name (see `tests/postgres.sh` and `tests/garage.sh`).

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod access;
mod audit;
mod controls;
mod engines;
mod hardening;
mod host_removal;
mod lists;
mod organization;
mod reports;
mod resources;
mod s3_path;
mod scale;
mod schema;
mod sessions;
mod sso;
mod upload;
mod upload_buckets;
mod webhooks;

use std::time::Duration;

use mgds_server::admin::Role;
use mgds_server::{AppState, Config, admin};
use reqwest::{Client, Method, RequestBuilder, Response};
use serde_json::{Map, Value, json};

/// A running service.
pub struct Service {
    pub url: String,
    pub state: AppState,
    pub http: Client,
    /// What it was started with (to open the same data again, as a restart does).
    pub config: Config,
    _dir: tempfile::TempDir,
}

/// A user of the service with their API key.
#[derive(Clone, Debug)]
pub struct TestUser {
    pub id: String,
    pub key: String,
    pub email: String,
}

impl Service {
    /// A service whose auth-failure limit is high enough not to interfere.
    pub async fn start() -> Service {
        Self::start_with(|_| {}).await
    }

    /// A service with adjusted configuration.
    pub async fn start_with(adjust: impl FnOnce(&mut Config)) -> Service {
        let _ = tracing_subscriber::fmt().with_env_filter("warn").with_test_writer().try_init();
        let dir = tempfile::tempdir().expect("temp dir");
        let mut config = Config::new(dir.path().join("data"));
        config.database_url = mgds_server::db::test_database().await;
        config.store = mgds_server::storage::S3Config::for_tests();
        config.auth_failure_limit = 100_000;
        adjust(&mut config);
        let (url, state) =
            mgds_server::spawn(config.clone(), "127.0.0.1:0".parse().unwrap()).await.expect("service starts");
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
        Service { url, state, http, config, _dir: dir }
    }

    /// Whether the service keeps its files in an S3 bucket (`MGDS_TEST_S3_*`) rather than in
    /// its data folder: uploads then go to the store itself, not to the service's own storage
    /// endpoint, and tests of that endpoint have nothing to test.
    pub fn on_s3(&self) -> bool {
        self.state.storage.s3_config().is_some()
    }

    /// The data folder.
    pub fn data_dir(&self) -> std::path::PathBuf {
        self._dir.path().join("data")
    }

    /// Looks `email` up as `by` would before sharing with them (the exact-address lookup that
    /// lets `by` see and add them); returns their id.
    pub async fn find_user(&self, by: &TestUser, email: &str) -> String {
        let filter = serde_json::json!({ "email": email }).to_string();
        let encoded: String = filter
            .bytes()
            .map(|b| if b.is_ascii_alphanumeric() { char::from(b).to_string() } else { format!("%{b:02X}") })
            .collect();
        let r = self
            .req(Method::GET, &format!("/api/v1/users?where={encoded}"))
            .basic_auth(&by.key, Some(""))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        let found: serde_json::Value = r.json().await.unwrap();
        let uri = found[0]["$uri"].as_str().unwrap_or_else(|| panic!("{email} not found: {found}"));
        uri.rsplit('/').next().unwrap().to_string()
    }

    /// Creates a user in `org` (the default organisation if `None`).
    pub async fn user_in(&self, email: &str, org: Option<&str>, role: Role) -> TestUser {
        let u = admin::create_user(&self.state.db, email, org, role).await.expect("create user");
        TestUser { id: u.id, key: u.api_key, email: email.to_string() }
    }

    /// Creates a user in an organisation of their own.
    pub async fn user(&self, email: &str) -> TestUser {
        self.user_in(email, Some(email), Role::Member).await
    }

    /// A request to `path` (relative to the base address, e.g. `/api/v1/samples`).
    pub fn req(&self, method: Method, path: &str) -> RequestBuilder {
        self.http.request(method, format!("{}{path}", self.url))
    }

    /// A request as `user` (HTTP Basic with the key as username), or anonymous for `None`.
    pub fn as_user(&self, user: Option<&TestUser>, method: Method, path: &str) -> RequestBuilder {
        let r = self.req(method, path);
        match user {
            Some(u) => r.basic_auth(&u.key, Some("")),
            None => r,
        }
    }

    /// GET as `user`, returning status and JSON body.
    pub async fn get(&self, user: Option<&TestUser>, path: &str) -> (u16, Value) {
        json_of(self.as_user(user, Method::GET, path).send().await.unwrap()).await
    }

    /// POST JSON as `user`.
    pub async fn post(&self, user: Option<&TestUser>, path: &str, body: Value) -> (u16, Value) {
        json_of(self.as_user(user, Method::POST, path).json(&body).send().await.unwrap()).await
    }

    /// PATCH JSON as `user`.
    pub async fn patch(&self, user: Option<&TestUser>, path: &str, body: Value) -> (u16, Value) {
        json_of(self.as_user(user, Method::PATCH, path).json(&body).send().await.unwrap()).await
    }

    /// DELETE as `user`.
    pub async fn delete(&self, user: Option<&TestUser>, path: &str) -> (u16, Value) {
        json_of(self.as_user(user, Method::DELETE, path).send().await.unwrap()).await
    }

    /// The whole upload flow for a new sample: init, multipart POST, confirm. Returns the id.
    pub async fn upload_sample(&self, user: &TestUser, filename: &str, bytes: &[u8], extra: Value) -> String {
        self.upload(user, "samples", "sample_id", filename, bytes, extra).await
    }

    /// The whole upload flow for a document. Returns the id.
    pub async fn upload_document(&self, user: &TestUser, filename: &str, bytes: &[u8]) -> String {
        self.upload(user, "documents", "document_id", filename, bytes, json!({})).await
    }

    /// The three steps for `collection` (`samples` or `documents`), whose records are named by
    /// `id_field` in the init answer and the confirm body; `extra` joins the init body.
    async fn upload(
        &self,
        user: &TestUser,
        collection: &str,
        id_field: &str,
        filename: &str,
        bytes: &[u8],
        extra: Value,
    ) -> String {
        let mut body = json!({"filename": filename, "size": bytes.len()});
        if let (Value::Object(b), Value::Object(e)) = (&mut body, extra) {
            b.extend(e);
        }
        let (status, init) = self.post(Some(user), &format!("/api/v1/{collection}/init_upload"), body).await;
        assert_eq!(status, 200, "init_upload: {init}");
        let r = post_form(
            &self.http,
            init["upload_url"].as_str().unwrap(),
            init["additional_fields"].as_object().unwrap(),
            bytes,
        )
        .await;
        assert_eq!(r.status().as_u16(), 201, "upload: {}", r.text().await.unwrap());
        let id = init[id_field].as_str().unwrap().to_string();
        let confirm = Value::Object([(id_field.to_string(), json!(id))].into_iter().collect());
        let (status, confirmed) = self.post(Some(user), &format!("/api/v1/{collection}/confirm_upload"), confirm).await;
        assert_eq!(status, 200, "confirm: {confirmed}");
        id
    }

    /// The jobs every service offers whatever reference data it has (the report job, and the
    /// controls job where the program gives the scoring): in every list of jobs.
    pub async fn builtin_jobs(&self) -> Vec<String> {
        sqlx::query_scalar("SELECT id FROM jobs WHERE reference = '' AND engine IN ('mgds-report', 'mgds-decontam')")
            .fetch_all(&self.state.db)
            .await
            .unwrap()
    }

    /// Registers a job as the engines do, returning its id.
    pub async fn job(&self, name: &str, analysis_type: &str, schema: Value) -> String {
        mgds_server::routes::register_job(
            &self.state,
            &mgds_server::routes::JobSpec {
                name: name.into(),
                analysis_type: analysis_type.into(),
                job_args_schema: schema,
                public: true,
                draft: false,
                creator_id: None,
                engine: String::new(),
                engine_version: String::new(),
                reference: String::new(),
            },
        )
        .await
        .expect("register job")
    }
}

/// Status and JSON body (or `Null` for an empty body) of a response.
pub async fn json_of(r: Response) -> (u16, Value) {
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    let v = if text.is_empty() { Value::Null } else { serde_json::from_str(&text).unwrap_or(Value::String(text)) };
    (status, v)
}

/// Posts a multipart form: `fields` in order, then `file`.
pub async fn post_form(http: &Client, url: &str, fields: &Map<String, Value>, file: &[u8]) -> Response {
    let mut form = reqwest::multipart::Form::new();
    for (k, v) in fields {
        form = form.text(k.clone(), v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()));
    }
    form = form.part("file", reqwest::multipart::Part::bytes(file.to_vec()).file_name("upload"));
    http.post(url).multipart(form).send().await.unwrap()
}

/// A small valid FASTQ file with `n` reads.
pub fn fastq(n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        out.extend_from_slice(format!("@read{i}\nACGTACGTAC\n+\nIIIIIIIIII\n").as_bytes());
    }
    out
}

/// Asserts an error answer has the service's body shape and the given status.
pub fn assert_error(status: u16, body: &Value, want: u16) {
    assert_eq!(status, want, "body: {body}");
    assert_eq!(body["status"], json!(want), "error body must carry the status: {body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "error body must carry a message: {body}");
}
