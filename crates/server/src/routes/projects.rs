//! Projects: create, list, get, update, delete, members and sharing.

use axum::Router;
use axum::extract::{OriginalUri, Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use mgds_api::{ChangeSharing, Project, ProjectAddUser, ProjectCreate, ProjectMember, ProjectUpdate, UserRequest};

use super::extract::{Json, ListParams, Listed};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::AppState;
use crate::store::projects;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/projects", get(list_projects).post(create_project))
        .route("/projects/public", get(list_public))
        .route("/projects/{id}", get(get_project).patch(update_project).delete(delete_project))
        .route("/projects/{id}/members", get(members))
        .route("/projects/{id}/add_user", post(add_user))
        .route("/projects/{id}/remove_user", post(remove_user))
        .route("/projects/{id}/change_sharing", post(change_sharing))
}

async fn list_projects(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<Project>> {
    Ok(Listed::new(projects::list(&state, &caller, &params.query()).await?, &uri, &params))
}

async fn list_public(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<Project>> {
    Ok(Listed::new(projects::list_public(&state, &caller, &params.query()).await?, &uri, &params))
}

async fn get_project(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Project>> {
    Ok(axum::Json(projects::get(&state, &caller, &id).await?))
}

async fn create_project(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<ProjectCreate>,
) -> ApiResult<axum::Json<Project>> {
    Ok(axum::Json(projects::create(&state, &caller, &req).await?))
}

async fn update_project(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<ProjectUpdate>,
) -> ApiResult<axum::Json<Project>> {
    Ok(axum::Json(projects::update(&state, &caller, &id, &req).await?))
}

async fn delete_project(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    projects::delete(&state, &caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn members(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Vec<ProjectMember>>> {
    Ok(axum::Json(projects::members(&state, &caller, &id).await?))
}

async fn add_user(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<ProjectAddUser>,
) -> ApiResult<axum::Json<Project>> {
    Ok(axum::Json(projects::add_user(&state, &caller, &id, req).await?))
}

async fn remove_user(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<UserRequest>,
) -> ApiResult<axum::Json<Project>> {
    Ok(axum::Json(projects::remove_user(&state, &caller, &id, &req.user).await?))
}

async fn change_sharing(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<ChangeSharing>,
) -> ApiResult<axum::Json<Project>> {
    Ok(axum::Json(projects::set_public(&state, &caller, &id, req.public).await?))
}
