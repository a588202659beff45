//! The service's own routes: schema, account, users and sequencing batches.

use axum::Router;
use axum::extract::{OriginalUri, Path, State};
use axum::routing::get;
use mgds_api::{Account, SequencingBatch, User};
use serde_json::Value;

use super::extract::{ListParams, Listed};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::schema;
use crate::state::AppState;
use crate::store::{batches, users};

pub(super) fn router() -> Router<AppState> {
    let mut r = Router::new().route("/schema", get(root_schema));
    // One static route per collection, so `/samples/schema` is not taken for a sample id.
    for path in schema::collection_paths() {
        r = r.route(&format!("/{path}/schema"), get(move || async move { resource(path) }));
    }
    r.route("/account", get(account))
        .route("/users", get(list_users))
        .route("/users/{id}", get(get_user))
        .route("/sequencing/batches", get(list_batches))
        .route("/sequencing/batches/{id}", get(get_batch))
}

async fn root_schema() -> axum::Json<Value> {
    axum::Json(schema::root())
}

fn resource(name: &str) -> ApiResult<axum::Json<Value>> {
    schema::resource(name)
        .map(axum::Json)
        .ok_or_else(|| ApiError::NotFound(format!("there is no resource {name:?}; see GET /api/v1/schema")))
}

async fn account(State(state): State<AppState>, caller: Caller) -> ApiResult<axum::Json<Account>> {
    Ok(axum::Json(users::account(&state, &caller).await?))
}

async fn list_users(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<User>> {
    Ok(Listed::new(users::list(&state, &state.limiter.lookups, &caller, &params.query()).await?, &uri, &params))
}

async fn get_user(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<User>> {
    Ok(axum::Json(users::get(&state, &caller, &id).await?))
}

async fn list_batches(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<SequencingBatch>> {
    Ok(Listed::new(batches::list(&state, &caller, &params.query()).await?, &uri, &params))
}

async fn get_batch(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<SequencingBatch>> {
    Ok(axum::Json(batches::get(&state, &caller, &id).await?))
}
