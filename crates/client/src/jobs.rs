//! Jobs: list, get (with `job_args_schema`), run with the arguments checked first, and waiting
//! for the analysis a run created.

use std::time::{Duration, Instant};

use mgds_api::{Analysis, Job, JobRunRequest, Ref, RunDependency};
use reqwest::Method;
use serde_json::{Map, Value};

use crate::retry::Idempotency;
use crate::{Client, Error, ListRequest, ResourceId, Result, reference};

/// The jobs of the service (`client.jobs()`).
#[derive(Debug, Clone)]
pub struct Jobs {
    client: Client,
}

impl Jobs {
    pub(crate) fn new(client: Client) -> Self {
        Jobs { client }
    }

    /// The jobs the caller can run or has results of (`GET /jobs`).
    pub fn list(&self) -> ListRequest<Job> {
        ListRequest::new(self.client.clone(), &["jobs"])
    }

    /// One job, with `draft` and `job_args_schema` (`GET /jobs/{id}`).
    pub async fn get(&self, id: impl ResourceId) -> Result<Job> {
        self.client.get_json(self.client.api_url(&["jobs", id.resource_id()])).await
    }

    /// Runs `job` on `sample` (`POST /jobs/{id}/run`). The arguments are checked against the
    /// job's `job_args_schema` before anything is sent.
    pub fn run(&self, job: impl ResourceId, sample: impl ResourceId) -> JobRun {
        JobRun {
            client: self.client.clone(),
            job: job.resource_id().to_string(),
            body: JobRunRequest {
                job_args: Map::new(),
                sample: reference("samples", &sample),
                dependencies: Vec::new(),
                description: None,
                populate_default_arguments: None,
                force: None,
            },
            schema: None,
        }
    }

    /// Waits until the analysis `id` is complete (succeeded or failed), polling with backoff.
    pub fn wait(&self, analysis: impl ResourceId) -> WaitForAnalysis {
        WaitForAnalysis {
            client: self.client.clone(),
            id: analysis.resource_id().to_string(),
            timeout: Duration::from_secs(3600),
            first_interval: Duration::from_secs(1),
            max_interval: Duration::from_secs(30),
        }
    }
}

/// A job run being prepared; see [`Jobs::run`].
#[derive(Debug, Clone)]
pub struct JobRun {
    client: Client,
    job: String,
    body: JobRunRequest,
    schema: Option<Value>,
}

impl JobRun {
    /// Sets one argument.
    pub fn arg(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.body.job_args.insert(name.into(), value.into());
        self
    }

    /// Sets every argument at once.
    pub fn args(mut self, args: Map<String, Value>) -> Self {
        self.body.job_args = args;
        self
    }

    /// A description of the run (at most 250 characters), visible with its results.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.body.description = Some(text.into());
        self
    }

    /// Uses the output of `analysis` instead of the default dependency, placed at `download_path`.
    pub fn dependency(mut self, analysis: impl ResourceId, download_path: impl Into<String>) -> Self {
        self.body
            .dependencies
            .push(RunDependency { analysis: reference("analyses", &analysis), download_path: download_path.into() });
        self
    }

    /// Lets the service fill absent arguments from the schema's defaults.
    pub fn populate_default_arguments(mut self, yes: bool) -> Self {
        self.body.populate_default_arguments = Some(yes);
        self
    }

    /// Runs again even if an identical analysis exists.
    pub fn force(mut self, yes: bool) -> Self {
        self.body.force = Some(yes);
        self
    }

    /// Checks the arguments against this schema instead of fetching the job's.
    pub fn schema(mut self, schema: Value) -> Self {
        self.schema = Some(schema);
        self
    }

    /// Checks the arguments, then starts the run (not retried once sent). Answers the reference
    /// of the new analysis (`/api/v1/analyses/<id>`).
    pub async fn send(self) -> Result<Ref> {
        if let Some(d) = &self.body.description {
            let n = d.chars().count();
            if n > mgds_api::MAX_RUN_DESCRIPTION_CHARS {
                return Err(Error::InvalidInput(format!(
                    "the run description has {n} characters; at most {} are allowed",
                    mgds_api::MAX_RUN_DESCRIPTION_CHARS
                )));
            }
        }
        let schema = match self.schema {
            Some(s) => s,
            None => {
                let job = Jobs::new(self.client.clone()).get(self.job.as_str()).await?;
                job.job_args_schema.unwrap_or_else(|| Value::Object(Map::new()))
            }
        };
        let mut args = self.body.job_args.clone();
        if self.body.populate_default_arguments == Some(true) {
            mgds_api::populate_default_args(&schema, &mut args);
        }
        // A schema this client cannot compile (one referring to remote documents, say) is left to
        // the service to apply.
        let problems = mgds_api::JobArgsSchema::new(&schema).map(|s| s.problems(&args)).unwrap_or_default();
        if !problems.is_empty() {
            return Err(Error::InvalidJobArgs { job: self.job, problems });
        }
        let url = self.client.api_url(&["jobs", &self.job, "run"]);
        self.client.send_json(Method::POST, url, &self.body, Idempotency::ConnectOnly).await
    }
}

/// Waiting for an analysis; see [`Jobs::wait`].
#[derive(Debug, Clone)]
pub struct WaitForAnalysis {
    client: Client,
    id: String,
    timeout: Duration,
    first_interval: Duration,
    max_interval: Duration,
}

impl WaitForAnalysis {
    /// Gives up after this long with [`Error::Timeout`] (default 1 hour).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The first wait between two looks (default 1 s); it doubles up to the maximum.
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.first_interval = interval;
        self
    }

    /// The longest wait between two looks (default 30 s).
    pub fn max_interval(mut self, interval: Duration) -> Self {
        self.max_interval = interval;
        self
    }

    /// Polls `GET /analyses/{id}` until it is complete; answers it (check `success` and
    /// `error_msg`).
    pub async fn send(self) -> Result<Analysis> {
        let analyses = self.client.analyses();
        let start = Instant::now();
        let deadline = start + self.timeout;
        let mut interval = self.first_interval.max(Duration::from_millis(10));
        loop {
            let a = analyses.get(self.id.as_str()).await?;
            if a.complete {
                return Ok(a);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::Timeout { analysis: self.id, waited: start.elapsed() });
            }
            // Jitter so that many waiting clients spread out.
            let half = interval / 2;
            let jitter_ms = u64::try_from(half.as_millis()).unwrap_or(0);
            let wait = half + Duration::from_millis(if jitter_ms == 0 { 0 } else { rand::random_range(0..=jitter_ms) });
            tokio::time::sleep(wait.min(deadline - now)).await;
            interval = (interval * 2).min(self.max_interval.max(self.first_interval));
        }
    }
}
