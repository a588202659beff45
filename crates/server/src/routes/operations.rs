//! What the service tells its operators, over HTTP: `GET /api/v1/health` for load balancers,
//! and `GET /metrics` (see [`crate::metrics`]), with the layer that counts every request.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::state::AppState;

/// Counts every request and its latency by route (a layer over the whole router). Every label
/// comes from a closed set: the methods of [`crate::metrics::method_label`] (else `other`), the routes as declared
/// (else `unmatched`), and the status code; so the series are bounded whatever clients send.
pub async fn record(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let method = crate::metrics::method_label(req.method());
    // Unmatched addresses are one route, not one series each.
    let route = req.extensions().get::<MatchedPath>().map_or("unmatched", |p| p.as_str()).to_string();
    let started = Instant::now();
    let response = next.run(req).await;
    state.metrics.request_finished(method, route, response.status().as_u16(), started.elapsed());
    response
}

/// `GET /metrics`.
pub async fn metrics(State(state): State<AppState>) -> Result<Response, crate::error::ApiError> {
    let text = state.metrics.render(&state.db, &state.runner).await?;
    Ok(([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], text).into_response())
}

/// Answers, on `listener`, what a worker process without the API tells its operators:
/// `GET /metrics` and `GET /api/v1/health`, nothing else (`mgds worker --metrics-listen`).
pub async fn serve_operations(listener: tokio::net::TcpListener, state: AppState) -> std::io::Result<()> {
    let router = axum::Router::new()
        .route("/metrics", axum::routing::get(metrics))
        .route("/api/v1/health", axum::routing::get(health))
        .with_state(state);
    axum::serve(listener, router).await
}

/// `GET /api/v1/health`: 200 `{"status": "ok"}` while the service can read its database, else
/// 503 with what failed (for load balancers and process supervisors; no sign-in needed).
pub async fn health(State(state): State<AppState>) -> Response {
    match sqlx::query_scalar::<_, i64>("SELECT 1").fetch_one(&state.db).await {
        Ok(_) => axum::Json(serde_json::json!({ "status": "ok", "database": "ok" })).into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "health check: the database does not answer");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(serde_json::json!({ "status": "unavailable", "database": "not answering" })),
            )
                .into_response()
        }
    }
}
