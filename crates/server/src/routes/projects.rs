//! Projects: create, list, get, update, delete, members and sharing.

use axum::Router;
use axum::extract::{OriginalUri, Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use mgds_api::{
    ChangeSharing, PROJECT_PERMISSIONS, Project, ProjectAddUser, ProjectCreate, ProjectMember, ProjectUpdate, Ref,
    UserRequest,
};

use super::{Json, ListParams, ListSpec, Listed, flag, ref_id};
use crate::AppState;
use crate::access;
use crate::auth::Caller;
use crate::db::{self, begin_write, new_id};
use crate::error::{ApiError, ApiResult};
use crate::listing::{Bind, Compiled, Field, FieldKind};

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

pub(crate) const PROJECT_FIELDS: &[Field] = &[
    Field { name: "$uri", column: "p.id", kind: FieldKind::Uri { collection: "projects" }, sortable: true },
    Field { name: "created_at", column: "p.created_at", kind: FieldKind::DateTime, sortable: true },
    Field { name: "name", column: "p.name", kind: FieldKind::Text, sortable: true },
    Field { name: "project_name", column: "p.project_name", kind: FieldKind::Text, sortable: true },
    Field { name: "description", column: "p.description", kind: FieldKind::Text, sortable: true },
    Field { name: "external_id", column: "p.external_id", kind: FieldKind::Text, sortable: true },
    Field { name: "owner", column: "p.owner_id", kind: FieldKind::Ref { collection: "users" }, sortable: true },
    Field { name: "public", column: "p.public", kind: FieldKind::Bool, sortable: true },
];

/// The caller's id is the first parameter of every project query (the `me` row), so that each
/// project can carry the caller's own permissions.
pub(crate) const PROJECTS: ListSpec = ListSpec {
    from: "projects p, (SELECT ? AS v) me",
    columns: "p.id, p.owner_id, p.project_name, p.name, p.description, p.external_id, p.public, \
              (SELECT pm.permissions FROM project_members pm WHERE pm.project_id = p.id AND pm.user_id = me.v) AS my_permissions",
    fields: PROJECT_FIELDS,
    default_order: "p.created_at ASC",
    tiebreak: "p.id ASC",
};

#[derive(sqlx::FromRow)]
struct ProjectRow {
    id: String,
    owner_id: String,
    project_name: String,
    name: String,
    description: Option<String>,
    external_id: Option<String>,
    public: i64,
    my_permissions: Option<String>,
}

impl ProjectRow {
    fn into_api(self, caller: &Caller) -> Project {
        let permissions = if caller.user_id() == Some(self.owner_id.as_str()) {
            PROJECT_PERMISSIONS.iter().map(|s| s.to_string()).collect()
        } else {
            self.my_permissions.and_then(|p| serde_json::from_str(&p).ok()).unwrap_or_default()
        };
        Project {
            uri: Ref::new("projects", &self.id).uri,
            owner: Ref::new("users", &self.owner_id),
            permissions,
            project_name: Some(self.project_name),
            description: self.description,
            external_id: self.external_id,
            name: self.name,
            public: flag(self.public),
        }
    }
}

fn me(caller: &Caller) -> Bind {
    Bind::Text(caller.user_id().unwrap_or_default().to_string())
}

async fn list_projects(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<Project>> {
    let rows = list_with(&state, &caller, &uri, &params, access::project(&caller, "p")).await?;
    Ok(rows.map(|r| r.into_api(&caller)))
}

async fn list_public(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<Project>> {
    let rows = list_with(&state, &caller, &uri, &params, access::project(&Caller(None), "p")).await?;
    Ok(rows.map(|r| r.into_api(&caller)))
}

async fn list_with(
    state: &AppState,
    caller: &Caller,
    uri: &OriginalUri,
    params: &ListParams,
    rule: Compiled,
) -> ApiResult<Listed<ProjectRow>> {
    let mut binds = vec![me(caller)];
    binds.extend(rule.binds);
    super::list(state, uri, params, &PROJECTS, Compiled { sql: rule.sql, binds }, None).await
}

async fn visible_project(state: &AppState, caller: &Caller, id: &str) -> ApiResult<ProjectRow> {
    let rule = access::project(caller, "p");
    let sql = format!("SELECT {} FROM {} WHERE p.id = ? AND ({})", PROJECTS.columns, PROJECTS.from, rule.sql);
    let mut binds = vec![me(caller), Bind::Text(id.to_string())];
    binds.extend(rule.binds);
    sqlx::query_as_with(sqlx::AssertSqlSafe(sql), super::args(&binds)?)
        .fetch_optional(&state.db)
        .await?
        .ok_or_else(|| ApiError::not_found("project"))
}

async fn get_project(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Project>> {
    Ok(axum::Json(visible_project(&state, &caller, &id).await?.into_api(&caller)))
}

/// The visible project `id`, which the caller must own: 403 if not.
async fn owned_project(state: &AppState, caller: &Caller, id: &str) -> ApiResult<ProjectRow> {
    let user = caller.require()?;
    let row = visible_project(state, caller, id).await?;
    if row.owner_id != user.id {
        return Err(ApiError::Forbidden("only the project's owner may change it or its members".into()));
    }
    Ok(row)
}

fn check_name(name: &str) -> ApiResult<()> {
    let n = name.trim().chars().count();
    if n == 0 || n > 60 {
        return Err(ApiError::BadRequest("name must be 1 to 60 characters".into()));
    }
    Ok(())
}

fn name_taken(project_name: &str) -> ApiError {
    ApiError::Conflict(format!(
        "a project called {project_name:?} already exists in your organisation; choose another project_name"
    ))
}

async fn create_project(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<ProjectCreate>,
) -> ApiResult<axum::Json<Project>> {
    let user = caller.require()?;
    mgds_api::check_project_name(&req.project_name).map_err(ApiError::BadRequest)?;
    let name = req.name.clone().unwrap_or_else(|| req.project_name.clone());
    check_name(&name)?;
    let id = new_id();
    let mut tx = begin_write(&state.db).await?;
    let taken: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM projects WHERE organization_id = ? AND project_name = ?")
        .bind(&user.organization_id)
        .bind(&req.project_name)
        .fetch_one(&mut *tx)
        .await?;
    if taken > 0 {
        return Err(name_taken(&req.project_name));
    }
    sqlx::query(
        "INSERT INTO projects (id, owner_id, organization_id, project_name, name, description, external_id, public, created_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&id)
    .bind(&user.id)
    .bind(&user.organization_id)
    .bind(&req.project_name)
    .bind(name.trim())
    .bind(&req.description)
    .bind(&req.external_id)
    .bind(i64::from(req.public.unwrap_or(false)))
    .bind(db::now())
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(axum::Json(visible_project(&state, &caller, &id).await?.into_api(&caller)))
}

async fn update_project(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<ProjectUpdate>,
) -> ApiResult<axum::Json<Project>> {
    let user = caller.require()?;
    owned_project(&state, &caller, &id).await?;
    let mut tx = begin_write(&state.db).await?;
    if let Some(pn) = &req.project_name {
        mgds_api::check_project_name(pn).map_err(ApiError::BadRequest)?;
        let taken: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM projects WHERE organization_id = ? AND project_name = ? AND id != ?",
        )
        .bind(&user.organization_id)
        .bind(pn)
        .bind(&id)
        .fetch_one(&mut *tx)
        .await?;
        if taken > 0 {
            return Err(name_taken(pn));
        }
        sqlx::query("UPDATE projects SET project_name = ? WHERE id = ?").bind(pn).bind(&id).execute(&mut *tx).await?;
    }
    if let Some(n) = &req.name {
        check_name(n)?;
        sqlx::query("UPDATE projects SET name = ? WHERE id = ?").bind(n.trim()).bind(&id).execute(&mut *tx).await?;
    }
    if let Some(d) = &req.description {
        sqlx::query("UPDATE projects SET description = ? WHERE id = ?").bind(d).bind(&id).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(axum::Json(visible_project(&state, &caller, &id).await?.into_api(&caller)))
}

async fn delete_project(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    owned_project(&state, &caller, &id).await?;
    // Samples stay with their owners and leave the project (ON DELETE SET NULL).
    sqlx::query("DELETE FROM projects WHERE id = ?").bind(&id).execute(&state.db).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn members(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Vec<ProjectMember>>> {
    let user = caller.require()?;
    let p = visible_project(&state, &caller, &id).await?;
    // A public project shows its samples to everyone, but who belongs to it only to its people.
    if p.owner_id != user.id && p.my_permissions.is_none() {
        return Err(ApiError::Forbidden("only the project's owner and members can see who belongs to it".into()));
    }
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT user_id, permissions FROM project_members WHERE project_id = ? ORDER BY rowid")
            .bind(&id)
            .fetch_all(&state.db)
            .await?;
    let mut out = vec![ProjectMember {
        user: Ref::new("users", &p.owner_id),
        permissions: PROJECT_PERMISSIONS.iter().map(|s| s.to_string()).collect(),
    }];
    out.extend(rows.into_iter().map(|(u, perms)| ProjectMember {
        user: Ref::new("users", &u),
        permissions: serde_json::from_str(&perms).unwrap_or_default(),
    }));
    Ok(axum::Json(out))
}

async fn named_user(state: &AppState, r: &mgds_api::RefOrId) -> ApiResult<String> {
    let uid = ref_id("user", r, "users")?;
    let found: Option<String> =
        sqlx::query_scalar("SELECT id FROM users WHERE id = ?").bind(uid).fetch_optional(&state.db).await?;
    found.ok_or_else(|| ApiError::BadRequest(format!("there is no user {uid}")))
}

async fn add_user(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<ProjectAddUser>,
) -> ApiResult<axum::Json<Project>> {
    let p = owned_project(&state, &caller, &id).await?;
    let uid = named_user(&state, &req.user).await?;
    if uid == p.owner_id {
        return Err(ApiError::BadRequest("the project's owner is already a member with every permission".into()));
    }
    let perms = req.permissions.unwrap_or_else(|| PROJECT_PERMISSIONS.iter().map(|s| s.to_string()).collect());
    if let Some(bad) = perms.iter().find(|p| !PROJECT_PERMISSIONS.contains(&p.as_str())) {
        return Err(ApiError::BadRequest(format!(
            "unknown permission {bad:?}; permissions are {}",
            PROJECT_PERMISSIONS.join(", ")
        )));
    }
    let mut perms = perms;
    perms.sort();
    perms.dedup();
    sqlx::query(
        "INSERT INTO project_members (project_id, user_id, permissions) VALUES (?, ?, ?) \
         ON CONFLICT (project_id, user_id) DO UPDATE SET permissions = excluded.permissions",
    )
    .bind(&id)
    .bind(&uid)
    .bind(serde_json::to_string(&perms)?)
    .execute(&state.db)
    .await?;
    Ok(axum::Json(visible_project(&state, &caller, &id).await?.into_api(&caller)))
}

async fn remove_user(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<UserRequest>,
) -> ApiResult<axum::Json<Project>> {
    owned_project(&state, &caller, &id).await?;
    let uid = named_user(&state, &req.user).await?;
    sqlx::query("DELETE FROM project_members WHERE project_id = ? AND user_id = ?")
        .bind(&id)
        .bind(&uid)
        .execute(&state.db)
        .await?;
    Ok(axum::Json(visible_project(&state, &caller, &id).await?.into_api(&caller)))
}

async fn change_sharing(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(req): Json<ChangeSharing>,
) -> ApiResult<axum::Json<Project>> {
    owned_project(&state, &caller, &id).await?;
    sqlx::query("UPDATE projects SET public = ? WHERE id = ?")
        .bind(i64::from(req.public))
        .bind(&id)
        .execute(&state.db)
        .await?;
    Ok(axum::Json(visible_project(&state, &caller, &id).await?.into_api(&caller)))
}
