//! Webhooks and events (the reference schema's `webhooks` and `events`; everything but reading
//! them is an MGDS addition). All for an organisation's admins and owners:
//!
//! - `GET, POST /webhooks`: the organisation's webhooks; registering one (answers its secret, once);
//! - `GET, PATCH, DELETE /webhooks/{id}`: one; its address, event type or state; deleting it;
//! - `POST /webhooks/{id}/secret`: a new secret (answered once);
//! - `POST /webhooks/{id}/ping`: a `ping` event for it alone;
//! - `GET /webhooks/{id}/deliveries`: its delivery log, newest first;
//! - `GET /events`, `GET /events/{id}`: the organisation's events with their delivery's state;
//! - `POST /events/{id}/redeliver`: delivers one again.

use axum::Router;
use axum::extract::{OriginalUri, Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use mgds_api::{Event, Webhook, WebhookCreate, WebhookDelivery, WebhookUpdate, WebhookWithSecret};

use super::extract::{Json, ListParams, Listed};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::AppState;
use crate::store::{events, webhooks};

/// The routes of a signed-in caller.
pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/webhooks", get(list).post(create))
        .route("/webhooks/{id}", get(one).patch(update).delete(remove))
        .route("/webhooks/{id}/secret", post(secret))
        .route("/webhooks/{id}/ping", post(ping))
        .route("/webhooks/{id}/deliveries", get(deliveries))
        .route("/events", get(list_events))
        .route("/events/{id}", get(event))
        .route("/events/{id}/redeliver", post(redeliver))
}

/// A secret is shown once: never cached.
fn with_secret(status: StatusCode, w: WebhookWithSecret) -> Response {
    let mut response = (status, axum::Json(w)).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<Webhook>> {
    Ok(Listed::new(webhooks::list(&state, &caller, &params.query()).await?, &uri, &params))
}

async fn create(State(state): State<AppState>, caller: Caller, Json(req): Json<WebhookCreate>) -> ApiResult<Response> {
    Ok(with_secret(StatusCode::CREATED, webhooks::create(&state, &caller, &req).await?))
}

async fn one(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<axum::Json<Webhook>> {
    Ok(axum::Json(webhooks::get(&state, &caller, &id).await?))
}

async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<WebhookUpdate>,
) -> ApiResult<axum::Json<Webhook>> {
    Ok(axum::Json(webhooks::update(&state, &caller, &id, &req).await?))
}

async fn remove(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<StatusCode> {
    webhooks::delete(&state, &caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn secret(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<Response> {
    Ok(with_secret(StatusCode::OK, webhooks::replace_secret(&state, &caller, &id).await?))
}

async fn ping(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, axum::Json<Event>)> {
    Ok((StatusCode::CREATED, axum::Json(webhooks::ping(&state, &caller, &id).await?)))
}

async fn deliveries(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<WebhookDelivery>> {
    Ok(Listed::new(webhooks::deliveries(&state, &caller, &id, &params.query()).await?, &uri, &params))
}

async fn list_events(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<Event>> {
    Ok(Listed::new(events::list_events(&state, &caller, &params.query()).await?, &uri, &params))
}

async fn event(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<axum::Json<Event>> {
    Ok(axum::Json(events::get_event(&state, &caller, &id).await?))
}

async fn redeliver(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Event>> {
    Ok(axum::Json(webhooks::redeliver(&state, &caller, &id).await?))
}
