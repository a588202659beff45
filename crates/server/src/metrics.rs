//! What the service tells its operators: `GET /api/v1/health` for load balancers, and
//! `GET /metrics` in the Prometheus text format (OpenMetrics): requests and their latencies by
//! route, the job queue's depth, analyses finished with their run times, and the time audit
//! entries take to append.
//!
//! Request counts and latencies, and the analyses this process's workers ran, are counted in
//! the process that served or ran them (scrape every `mgds serve`, and every `mgds worker`
//! started with `--metrics-listen`, which answers these two routes alone); the queue is read
//! from the database at each scrape, so any one process answers for the whole queue.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// The labels of a request.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    /// One of [`METHODS`], or `other`.
    method: &'static str,
    /// The route as it is declared (`/api/v1/samples/{id}`), never the address itself, so that
    /// the number of series stays small.
    route: String,
    status: u16,
}

/// The labels of a request's latency.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: &'static str,
    route: String,
}

/// The labels of a finished analysis.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AnalysisLabels {
    analysis_type: String,
    /// `success` or `failure`.
    outcome: &'static str,
}

/// The queue's state, read from the database at each scrape.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    /// `waiting` (no worker holds it) or `running` (a worker's lease holds it).
    state: &'static str,
}

/// The service's metrics.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram, fn() -> Histogram>,
    analyses: Family<AnalysisLabels, Histogram, fn() -> Histogram>,
    queue: Family<QueueLabels, Gauge>,
    engines_started: Gauge,
    engines_waiting: Gauge,
}

fn latency_buckets() -> Histogram {
    // 1 ms to about 33 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

fn run_time_buckets() -> Histogram {
    // 1 s to about 9 hours.
    Histogram::new(exponential_buckets(1.0, 2.0, 16))
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("mgds");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(latency_buckets);
        let analyses = Family::<AnalysisLabels, Histogram, fn() -> Histogram>::new_with_constructor(run_time_buckets);
        let queue = Family::<QueueLabels, Gauge>::default();
        registry.register("http_requests", "HTTP requests answered, by route and status", requests.clone());
        registry.register("http_request_duration_seconds", "Time to answer an HTTP request, by route", latency.clone());
        registry.register(
            "analysis_run_seconds",
            "Run time of the analyses this process's workers finished, by type and outcome",
            analyses.clone(),
        );
        registry.register("job_queue_analyses", "Analyses in the job queue, waiting or running", queue.clone());
        registry.register(
            "audit_write_seconds",
            "Time to append an audit entry (with its webhook events) inside its change's transaction",
            crate::store::audit::WRITE_SECONDS.clone(),
        );
        let (engines_started, engines_waiting) = (Gauge::default(), Gauge::default());
        registry.register(
            "engine_processes_started",
            "Warm engine processes this process's workers started (each serves analyses of one reference until it waits too long)",
            engines_started.clone(),
        );
        registry.register(
            "engine_processes_waiting",
            "Warm engine processes waiting for the next analysis, their reference database mapped",
            engines_waiting.clone(),
        );
        Metrics { registry, requests, latency, analyses, queue, engines_started, engines_waiting }
    }
}

impl Metrics {
    /// Counts a request of `method` to `route` (as declared, or `unmatched`) that answered
    /// `status` after `took`.
    pub fn request_finished(&self, method: &'static str, route: String, status: u16, took: Duration) {
        self.latency.get_or_create(&RouteLabels { method, route: route.clone() }).observe(took.as_secs_f64());
        self.requests.get_or_create(&RequestLabels { method, route, status }).inc();
    }

    /// Counts a finished analysis of `analysis_type` that ran for `took`.
    pub fn analysis_finished(&self, analysis_type: &str, success: bool, took: Duration) {
        let outcome = if success { "success" } else { "failure" };
        self.analyses
            .get_or_create(&AnalysisLabels { analysis_type: analysis_type.to_string(), outcome })
            .observe(took.as_secs_f64());
    }

    /// The metrics in the OpenMetrics text format, with the queue read from the database and the
    /// warm engines of `runner`.
    pub async fn render(
        &self,
        db: &crate::store::db::Pool,
        runner: &crate::runner::Runner,
    ) -> Result<String, crate::error::ApiError> {
        self.engines_started.set(i64::try_from(runner.warm.started()).unwrap_or(i64::MAX));
        self.engines_waiting.set(i64::try_from(runner.warm.waiting()).unwrap_or(i64::MAX));
        let (waiting, running) = crate::store::queue::depth(db).await?;
        self.queue.get_or_create(&QueueLabels { state: "waiting" }).set(waiting);
        self.queue.get_or_create(&QueueLabels { state: "running" }).set(running);
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .map_err(crate::error::ApiError::internal)?;
        Ok(out)
    }
}

/// The methods that get a label of their own; every other method (HTTP lets a client invent
/// any, of any length) is counted as `other`, so that requests cannot add series.
const METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// The label of a request's method: one of GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS, or
/// `other`.
pub fn method_label(method: &axum::http::Method) -> &'static str {
    METHODS.iter().copied().find(|m| *m == method.as_str()).unwrap_or("other")
}
