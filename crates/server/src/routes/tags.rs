//! Tags: create-and-attach, list, get.

use axum::Router;
use axum::extract::{OriginalUri, Path, State};
use axum::routing::get;
use mgds_api::{Tag, TagCreate};

use super::extract::{Json, ListParams, Listed};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::AppState;
use crate::store::{samples, tags};

pub(super) fn router() -> Router<AppState> {
    Router::new().route("/tags", get(list_tags).post(create_tag)).route("/tags/{id}", get(get_tag))
}

async fn list_tags(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<Tag>> {
    Ok(Listed::new(tags::list(&state, &caller, &params.query()).await?, &uri, &params))
}

async fn get_tag(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<axum::Json<Tag>> {
    Ok(axum::Json(tags::get(&state, &caller, &id).await?))
}

/// Creates the caller's tag (or finds the one with that name) and attaches it to a sample.
async fn create_tag(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<TagCreate>,
) -> ApiResult<axum::Json<Tag>> {
    Ok(axum::Json(samples::add_tag(&state, &caller, &req).await?))
}
