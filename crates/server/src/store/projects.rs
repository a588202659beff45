//! Projects: their records, members and sharing, and what a caller may do in one.

use mgds_api::{
    PROJECT_PERMISSIONS, Project, ProjectAddUser, ProjectCreate, ProjectMember, ProjectUpdate, Ref, RefOrId,
};

use super::access;
use super::audit;
use super::caller::{Caller, User};
use super::db::{self, Scope, Tx, args, begin_write, flag, new_id};
use super::handle::Store;
use super::members;
use super::records::{self, Found, ListQuery, ListSpec, ref_id};
use super::users;
use crate::error::{ApiError, ApiResult};
use crate::listing::{Bind, Compiled, Field, FieldKind};
use serde_json::{Value, json};

/// The fields of `where` and `sort` in lists of projects.
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
const PROJECTS: ListSpec = ListSpec {
    from: "projects p, (SELECT ? AS v) me",
    columns: "p.id, p.owner_id, p.organization_id, p.project_name, p.name, p.description, p.external_id, p.public, \
              (SELECT pm.permissions FROM project_members pm WHERE pm.project_id = p.id AND pm.user_id = me.v) AS my_permissions",
    fields: PROJECT_FIELDS,
    default_order: "p.created_at ASC",
    tiebreak: "p.id ASC",
};

#[derive(sqlx::FromRow)]
struct ProjectRow {
    id: String,
    owner_id: String,
    organization_id: String,
    project_name: String,
    name: String,
    description: Option<String>,
    external_id: Option<String>,
    public: i64,
    my_permissions: Option<String>,
}

/// Every permission, which a project's owner holds.
fn all_permissions() -> Vec<String> {
    PROJECT_PERMISSIONS.iter().map(|s| s.to_string()).collect()
}

impl ProjectRow {
    /// Whether `caller` acts on the project as its owner: they own it, or administer its
    /// organisation.
    fn run_by(&self, caller: &Caller) -> bool {
        caller
            .0
            .as_ref()
            .is_some_and(|u| u.id == self.owner_id || (u.manages_org() && u.organization_id == self.organization_id))
    }

    fn into_api(self, caller: &Caller) -> Project {
        let permissions = if self.run_by(caller) {
            all_permissions()
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

/// One page of the projects the caller may see.
pub async fn list(state: &Store, caller: &Caller, q: &ListQuery<'_>) -> ApiResult<Found<Project>> {
    let rows = list_with(state, caller, q, access::project(caller, "p")).await?;
    Ok(rows.map(|r| r.into_api(caller)))
}

/// One page of the public projects, with the caller's permissions in each.
pub async fn list_public(state: &Store, caller: &Caller, q: &ListQuery<'_>) -> ApiResult<Found<Project>> {
    let rows = list_with(state, caller, q, access::project(&Caller(None), "p")).await?;
    Ok(rows.map(|r| r.into_api(caller)))
}

async fn list_with(state: &Store, caller: &Caller, q: &ListQuery<'_>, rule: Compiled) -> ApiResult<Found<ProjectRow>> {
    records::list(&state.db, &PROJECTS, q, with_me(caller, rule), None).await
}

/// The rule, after the caller's id that the list's `FROM` names first.
fn with_me(caller: &Caller, rule: Compiled) -> Compiled {
    let mut binds = vec![me(caller)];
    binds.extend(rule.binds);
    Compiled { sql: rule.sql, binds }
}

/// The statements of [`list`], for checking their plans.
#[doc(hidden)]
pub fn list_statements(caller: &Caller, q: &ListQuery<'_>) -> ApiResult<Vec<records::Statement>> {
    records::plain_list_statements(&PROJECTS, q, &with_me(caller, access::project(caller, "p")), None)
}

async fn visible(state: &Store, caller: &Caller, id: &str) -> ApiResult<ProjectRow> {
    let rule = access::project(caller, "p");
    let sql = format!("SELECT {} FROM {} WHERE p.id = ? AND ({})", PROJECTS.columns, PROJECTS.from, rule.sql);
    let mut binds = vec![me(caller), Bind::Text(id.to_string())];
    binds.extend(rule.binds);
    sqlx::query_as_with(super::db::numbered(sql), args(&binds)?)
        .fetch_optional(&state.db)
        .await?
        .ok_or_else(|| ApiError::not_found("project"))
}

/// The project `id` if the caller may see it.
pub async fn get(state: &Store, caller: &Caller, id: &str) -> ApiResult<Project> {
    Ok(visible(state, caller, id).await?.into_api(caller))
}

/// The visible project `id`, which the caller must own or administer: 403 if not.
async fn owned(state: &Store, caller: &Caller, id: &str) -> ApiResult<ProjectRow> {
    caller.require()?;
    let row = visible(state, caller, id).await?;
    if !row.run_by(caller) {
        return Err(ApiError::Forbidden(
            "only the project's owner, or an admin of their organisation, may change it or its members".into(),
        ));
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

/// Creates a project owned by the caller.
pub async fn create(state: &Store, caller: &Caller, req: &ProjectCreate) -> ApiResult<Project> {
    let user = caller.require()?;
    mgds_api::check_project_name(&req.project_name).map_err(ApiError::BadRequest)?;
    let name = req.name.clone().unwrap_or_else(|| req.project_name.clone());
    check_name(&name)?;
    let id = new_id();
    let mut tx = begin_write(&state.db, Scope::Row("organizations", &user.organization_id)).await?;
    let taken: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM projects WHERE organization_id = $1 AND project_name = $2")
            .bind(&user.organization_id)
            .bind(&req.project_name)
            .fetch_one(&mut *tx)
            .await?;
    if taken > 0 {
        return Err(name_taken(&req.project_name));
    }
    sqlx::query(
        "INSERT INTO projects (id, owner_id, organization_id, project_name, name, description, external_id, public, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
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
    let entry = audit::Entry::new("project.created", "project", &id, &user.id)
        .with(json!({"project_name": req.project_name, "name": name.trim(), "public": req.public.unwrap_or(false)}));
    audit::record(&mut tx, Some(user), entry).await?;
    tx.commit().await?;
    get(state, caller, &id).await
}

/// Changes the given fields of a project the caller owns.
pub async fn update(state: &Store, caller: &Caller, id: &str, req: &ProjectUpdate) -> ApiResult<Project> {
    let user = caller.require()?;
    let before = owned(state, caller, id).await?;
    let mut tx = begin_write(&state.db, Scope::Row("organizations", &user.organization_id)).await?;
    let asked = json!({"project_name": req.project_name, "name": req.name.as_deref().map(str::trim), "description": req.description});
    let mut asked_fields = serde_json::Map::new();
    for (k, v) in asked.as_object().into_iter().flatten() {
        let given = match k.as_str() {
            "project_name" => req.project_name.is_some(),
            "name" => req.name.is_some(),
            _ => req.description.is_some(),
        };
        if given {
            asked_fields.insert(k.clone(), v.clone());
        }
    }
    let was = json!({"project_name": before.project_name, "name": before.name, "description": before.description});
    let changes = audit::changed(&was, &asked_fields.into());
    if changes.as_object().is_some_and(|c| !c.is_empty()) {
        let entry = audit::Entry::new("project.updated", "project", id, &before.owner_id).with(changes);
        audit::record(&mut tx, Some(user), entry).await?;
    }
    if let Some(pn) = &req.project_name {
        mgds_api::check_project_name(pn).map_err(ApiError::BadRequest)?;
        let taken: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM projects WHERE organization_id = $1 AND project_name = $2 AND id != $3",
        )
        .bind(&user.organization_id)
        .bind(pn)
        .bind(id)
        .fetch_one(&mut *tx)
        .await?;
        if taken > 0 {
            return Err(name_taken(pn));
        }
        sqlx::query("UPDATE projects SET project_name = $1 WHERE id = $2").bind(pn).bind(id).execute(&mut *tx).await?;
    }
    if let Some(n) = &req.name {
        check_name(n)?;
        sqlx::query("UPDATE projects SET name = $1 WHERE id = $2").bind(n.trim()).bind(id).execute(&mut *tx).await?;
    }
    if let Some(d) = &req.description {
        sqlx::query("UPDATE projects SET description = $1 WHERE id = $2").bind(d).bind(id).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    get(state, caller, id).await
}

/// Deletes a project the caller owns; its samples stay with their owners.
pub async fn delete(state: &Store, caller: &Caller, id: &str) -> ApiResult<()> {
    let p = owned(state, caller, id).await?;
    let mut tx = begin_write(&state.db, Scope::Row("projects", id)).await?;
    // Samples leave the project (ON DELETE SET NULL).
    sqlx::query("DELETE FROM projects WHERE id = $1").bind(id).execute(&mut *tx).await?;
    let entry = audit::Entry::new("project.deleted", "project", id, &p.owner_id)
        .with(json!({"project_name": p.project_name, "name": p.name}));
    audit::record(&mut tx, caller.0.as_ref(), entry).await?;
    tx.commit().await?;
    Ok(())
}

/// Who belongs to a project: its owner first, then its members in the order they joined.
pub async fn members(state: &Store, caller: &Caller, id: &str) -> ApiResult<Vec<ProjectMember>> {
    caller.require()?;
    let p = visible(state, caller, id).await?;
    // A public project shows its samples to everyone, but who belongs to it only to its people.
    if !p.run_by(caller) && p.my_permissions.is_none() {
        return Err(ApiError::Forbidden(
            "only the project's owner, its members and its organisation's admins can see who belongs to it".into(),
        ));
    }
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT user_id, permissions FROM project_members WHERE project_id = $1 ORDER BY rowid")
            .bind(id)
            .fetch_all(&state.db)
            .await?;
    let mut out = vec![ProjectMember { user: Ref::new("users", &p.owner_id), permissions: all_permissions() }];
    out.extend(rows.into_iter().map(|(u, perms)| ProjectMember {
        user: Ref::new("users", &u),
        permissions: serde_json::from_str(&perms).unwrap_or_default(),
    }));
    Ok(out)
}

/// Adds a member to a project the caller owns, or changes their permissions.
pub async fn add_user(state: &Store, caller: &Caller, id: &str, req: ProjectAddUser) -> ApiResult<Project> {
    let p = owned(state, caller, id).await?;
    let uid = users::addable(state, caller, &req.user).await?;
    if uid == p.owner_id {
        return Err(ApiError::BadRequest("the project's owner is already a member with every permission".into()));
    }
    let perms = req.permissions.unwrap_or_else(all_permissions);
    if let Some(bad) = perms.iter().find(|p| !PROJECT_PERMISSIONS.contains(&p.as_str())) {
        return Err(ApiError::BadRequest(format!(
            "unknown permission {bad:?}; permissions are {}",
            PROJECT_PERMISSIONS.join(", ")
        )));
    }
    let mut perms = perms;
    perms.sort();
    perms.dedup();
    let mut tx = begin_write(&state.db, Scope::Row("projects", id)).await?;
    let before: Option<String> =
        sqlx::query_scalar("SELECT permissions FROM project_members WHERE project_id = $1 AND user_id = $2")
            .bind(id)
            .bind(&uid)
            .fetch_optional(&mut *tx)
            .await?;
    sqlx::query(
        "INSERT INTO project_members (project_id, user_id, permissions) VALUES ($1, $2, $3) \
         ON CONFLICT (project_id, user_id) DO UPDATE SET permissions = excluded.permissions",
    )
    .bind(id)
    .bind(&uid)
    .bind(serde_json::to_string(&perms)?)
    .execute(&mut *tx)
    .await?;
    let before: Option<Value> = before.and_then(|b| serde_json::from_str(&b).ok());
    let entry = audit::Entry::new("project.member_added", "project", id, &p.owner_id)
        .with(json!({"user": uid, "permissions": [before, perms]}));
    audit::record(&mut tx, caller.0.as_ref(), entry).await?;
    tx.commit().await?;
    get(state, caller, id).await
}

/// Removes a member from a project the caller owns.
pub async fn remove_user(state: &Store, caller: &Caller, id: &str, user: &RefOrId) -> ApiResult<Project> {
    let p = owned(state, caller, id).await?;
    // Whoever the id names (or nobody): the answer is the same either way.
    let uid = ref_id("user", user, "users")?;
    let mut tx = begin_write(&state.db, Scope::Row("projects", id)).await?;
    let removed = sqlx::query("DELETE FROM project_members WHERE project_id = $1 AND user_id = $2")
        .bind(id)
        .bind(uid)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    if removed > 0 {
        let entry = audit::Entry::new("project.member_removed", "project", id, &p.owner_id).with(json!({"user": uid}));
        audit::record(&mut tx, caller.0.as_ref(), entry).await?;
    }
    tx.commit().await?;
    get(state, caller, id).await
}

/// Makes a project the caller owns public or not.
pub async fn set_public(state: &Store, caller: &Caller, id: &str, public: bool) -> ApiResult<Project> {
    let p = owned(state, caller, id).await?;
    let mut tx = begin_write(&state.db, Scope::Row("projects", id)).await?;
    sqlx::query("UPDATE projects SET public = $1 WHERE id = $2")
        .bind(i64::from(public))
        .bind(id)
        .execute(&mut *tx)
        .await?;
    if flag(p.public) != public {
        let entry = audit::Entry::new("project.sharing_changed", "project", id, &p.owner_id)
            .with(json!({"public": [flag(p.public), public]}));
        audit::record(&mut tx, caller.0.as_ref(), entry).await?;
    }
    tx.commit().await?;
    get(state, caller, id).await
}

/// What the user may do in a project: `None` if they cannot see it.
pub async fn permissions(state: &Store, user: &User, project_id: &str) -> ApiResult<Option<Vec<String>>> {
    let row: Option<(String, i64, Option<String>)> = sqlx::query_as(
        "SELECT p.owner_id, p.public, pm.permissions FROM projects p \
         LEFT JOIN project_members pm ON pm.project_id = p.id AND pm.user_id = $1 WHERE p.id = $2",
    )
    .bind(&user.id)
    .bind(project_id)
    .fetch_optional(&state.db)
    .await?;
    Ok(match row {
        None => None,
        Some((owner, _, _)) if owner == user.id || members::administers(&state.db, user, &owner).await? => {
            Some(all_permissions())
        }
        Some((_, _, Some(perms))) => Some(serde_json::from_str(&perms).unwrap_or_default()),
        Some((_, public, None)) if public != 0 => Some(vec![]),
        Some(_) => None,
    })
}

/// The project a sample may be placed in by the user: visible (else 400) and owned or joined
/// with `can_add_files` (else 403).
pub async fn to_add_to(state: &Store, user: &User, r: &RefOrId) -> ApiResult<String> {
    let id = ref_id("project", r, "projects")?;
    let perms = permissions(state, user, id)
        .await?
        .ok_or_else(|| ApiError::BadRequest(format!("project {id} does not exist or you do not have access to it")))?;
    if !perms.iter().any(|p| p == "can_add_files") {
        return Err(ApiError::Forbidden(format!(
            "you may not add samples to project {id}: its owner has not given you the can_add_files permission"
        )));
    }
    Ok(id.to_string())
}

/// The project `id` if it still exists.
pub(crate) async fn still_there(tx: &mut Tx, id: &str) -> ApiResult<Option<String>> {
    Ok(sqlx::query_scalar::<_, String>("SELECT id FROM projects WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut **tx)
        .await?)
}
