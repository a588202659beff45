//! Samples: their records, who may see them and act on them, the changes their owner makes
//! (visibility, project, tags), their deletion with every file they hold, and tags attached to
//! them by name.

use mgds_api::{MAX_TAG_NAME_CHARS, Ref, Sample, SampleUpdate, Tag, TagCreate, Visibility};
use serde_json::json;

use super::access;
use super::audit;
use super::caller::{Caller, User};
use super::db::{self, Scope, begin_write, id_list};
use super::deletes::{queue_delete, remove_queued};
use super::handle::Store;
use super::members;
use super::projects;
use super::records::{self, Found, ListQuery, ListSpec, ref_id};
use super::tags;
use crate::error::{ApiError, ApiResult};
use crate::listing::{Bind, Compiled, Field, FieldKind};

/// The fields of `where` and `sort` in lists of samples.
pub const SAMPLE_FIELDS: &[Field] = &[
    Field { name: "$uri", column: "s.id", kind: FieldKind::Uri { collection: "samples" }, sortable: true },
    Field { name: "created_at", column: "s.created_at", kind: FieldKind::DateTime, sortable: true },
    Field { name: "filename", column: "s.filename", kind: FieldKind::Text, sortable: true },
    Field { name: "size", column: "s.size", kind: FieldKind::Integer, sortable: true },
    Field {
        name: "visibility",
        column: "s.visibility",
        kind: FieldKind::Enum(&["public", "shared", "private", "importing", "awaiting data"]),
        sortable: true,
    },
    Field { name: "owner", column: "s.owner_id", kind: FieldKind::Ref { collection: "users" }, sortable: true },
    Field { name: "project", column: "s.project_id", kind: FieldKind::Ref { collection: "projects" }, sortable: true },
    Field {
        name: "primary_classification",
        column: "s.primary_classification_id",
        kind: FieldKind::Ref { collection: "classifications" },
        sortable: true,
    },
    Field {
        name: "metadata",
        column: "(SELECT m.id FROM metadata m WHERE m.sample_id = s.id)",
        kind: FieldKind::Ref { collection: "metadata" },
        sortable: true,
    },
    Field {
        name: "tags",
        column: "",
        kind: FieldKind::RefSet {
            collection: "tags",
            row: "s.id",
            table: "sample_tags st",
            holder: "st.sample_id",
            value: "st.tag_id",
        },
        sortable: false,
    },
];

const SAMPLES: ListSpec = ListSpec {
    from: "samples s",
    columns: "s.id, s.owner_id, s.visibility, s.filename, s.size, s.project_id, s.primary_classification_id, \
              s.created_at, s.updated_at, (SELECT m.id FROM metadata m WHERE m.sample_id = s.id) AS metadata_id, \
              (SELECT json_group_array(st.tag_id) FROM sample_tags st WHERE st.sample_id = s.id) AS tag_ids, \
              (SELECT i.error FROM imports i WHERE i.sample_id = s.id) AS import_error",
    fields: SAMPLE_FIELDS,
    default_order: "s.created_at ASC",
    tiebreak: "s.id ASC",
};

/// A sample as stored.
#[derive(sqlx::FromRow)]
pub(crate) struct SampleRow {
    id: String,
    pub(crate) owner_id: String,
    pub(crate) visibility: String,
    pub(crate) filename: Option<String>,
    size: Option<i64>,
    project_id: Option<String>,
    primary_classification_id: Option<String>,
    created_at: String,
    updated_at: Option<String>,
    metadata_id: Option<String>,
    tag_ids: String,
    import_error: Option<String>,
}

impl SampleRow {
    fn into_api(self) -> Sample {
        Sample {
            uri: Ref::new("samples", &self.id).uri,
            created_at: self.created_at,
            filename: self.filename,
            size: self.size.map(|s| s.max(0) as u64),
            visibility: Visibility::parse(&self.visibility).unwrap_or(Visibility::Private),
            owner: Ref::new("users", &self.owner_id),
            metadata: self.metadata_id.map(|m| Ref::new("metadata", &m)),
            project: self.project_id.map(|p| Ref::new("projects", &p)),
            primary_classification: self.primary_classification_id.map(|c| Ref::new("classifications", &c)),
            tags: id_list(&self.tag_ids).iter().map(|t| Ref::new("tags", t)).collect(),
            // The real service's word for a sample whose file is in; before that, its visibility
            // says what it waits for.
            status: match self.visibility.as_str() {
                "awaiting data" | "importing" => self.visibility.clone(),
                _ => "available".into(),
            },
            updated_at: self.updated_at,
            import_error: self.import_error,
        }
    }
}

/// One page of the samples the caller may see.
pub async fn list(state: &Store, caller: &Caller, q: &ListQuery<'_>) -> ApiResult<Found<Sample>> {
    let rows: Found<SampleRow> =
        records::list_parts(&state.db, &SAMPLES, q, access::sample_parts(caller), None).await?;
    Ok(rows.map(SampleRow::into_api))
}

/// The statements of a list of the samples `caller` may see whose total is `total`, as
/// [`list`] runs them: for checking their plans.
#[doc(hidden)]
pub fn list_statements(caller: &Caller, q: &ListQuery<'_>, total: i64) -> ApiResult<Vec<records::Statement>> {
    records::parts_statements(&SAMPLES, q, &access::sample_parts(caller), None, total)
}

/// One page of the public samples.
pub async fn list_public(state: &Store, q: &ListQuery<'_>) -> ApiResult<Found<Sample>> {
    let public = access::sample_parts(&Caller(None));
    let rows: Found<SampleRow> = records::list_parts(&state.db, &SAMPLES, q, public, None).await?;
    Ok(rows.map(SampleRow::into_api))
}

/// The statements of [`list_public`] for a list whose total is `total`, for checking their
/// plans.
#[doc(hidden)]
pub fn list_public_statements(q: &ListQuery<'_>, total: i64) -> ApiResult<Vec<records::Statement>> {
    records::parts_statements(&SAMPLES, q, &access::sample_parts(&Caller(None)), None, total)
}

/// One page of the samples of the caller's organisation (their owners' organisation is the
/// caller's) that the caller may see.
pub async fn list_organization(state: &Store, caller: &Caller, q: &ListQuery<'_>) -> ApiResult<Found<Sample>> {
    let user = caller.require()?;
    let same_org = Compiled {
        sql: "s.owner_id IN (SELECT u.id FROM users u WHERE u.organization_id = ?)".into(),
        binds: vec![Bind::Text(user.organization_id.clone())],
    };
    let rows: Found<SampleRow> =
        records::list_parts(&state.db, &SAMPLES, q, access::sample_parts(caller), Some(same_org)).await?;
    Ok(rows.map(SampleRow::into_api))
}

/// The sample `id` if the caller may see it.
pub(crate) async fn visible(state: &Store, caller: &Caller, id: &str) -> ApiResult<Option<SampleRow>> {
    records::fetch_one(&state.db, &SAMPLES, "s.id", id, access::sample(caller, "s")).await
}

/// The sample `id` if the caller may see it (else 404).
pub async fn get(state: &Store, caller: &Caller, id: &str) -> ApiResult<Sample> {
    let row = visible(state, caller, id).await?.ok_or_else(|| ApiError::not_found("sample"))?;
    Ok(row.into_api())
}

/// Checks the sample `id` named in a request body: the caller must see it (else 400) and own it
/// or hold `permission` on it through its project (else 403, saying that `doing` needs it).
pub async fn may_act_on(state: &Store, caller: &Caller, id: &str, permission: &str, doing: &str) -> ApiResult<()> {
    let user = caller.require()?;
    let sample = visible(state, caller, id)
        .await?
        .ok_or_else(|| ApiError::BadRequest(format!("sample {id} does not exist or you do not have access to it")))?;
    may_act(state, user, &sample, permission, doing).await
}

/// The user owns `sample` or holds `permission` in its project; else 403.
pub(crate) async fn may_act(
    state: &Store,
    user: &User,
    sample: &SampleRow,
    permission: &str,
    doing: &str,
) -> ApiResult<()> {
    if sample.owner_id == user.id || members::administers(&state.db, user, &sample.owner_id).await? {
        return Ok(());
    }
    if let Some(p) = &sample.project_id
        && projects::permissions(state, user, p).await?.is_some_and(|perms| perms.iter().any(|x| x == permission))
    {
        return Ok(());
    }
    Err(ApiError::Forbidden(format!(
        "only the sample's owner, an admin of their organisation, or project members with {permission}, may {doing}"
    )))
}

/// The caller must own the visible sample `id`: 404 if hidden, 403 if not theirs.
async fn owned(state: &Store, caller: &Caller, id: &str) -> ApiResult<SampleRow> {
    let user = caller.require()?;
    let row = visible(state, caller, id).await?.ok_or_else(|| ApiError::not_found("sample"))?;
    if row.owner_id != user.id && !members::administers(&state.db, user, &row.owner_id).await? {
        return Err(ApiError::Forbidden(
            "only the sample's owner, or an admin of their organisation, may change or delete it".into(),
        ));
    }
    Ok(row)
}

/// Changes the visibility, project or tags of a sample the caller owns.
pub async fn update(state: &Store, caller: &Caller, id: &str, req: &SampleUpdate) -> ApiResult<Sample> {
    let row = owned(state, caller, id).await?;
    let user = caller.require()?;
    if let Some(v) = req.visibility {
        if !matches!(v, Visibility::Public | Visibility::Shared | Visibility::Private) {
            return Err(ApiError::BadRequest(format!(
                "visibility can be set to public, shared or private, not {:?}",
                v.as_str()
            )));
        }
        if row.visibility == Visibility::AwaitingData.as_str() || row.visibility == Visibility::Importing.as_str() {
            return Err(ApiError::BadRequest(format!(
                "the sample is {}; its visibility can be changed once its file has arrived",
                row.visibility
            )));
        }
    }
    let project = match &req.project {
        Some(Some(p)) => Some(Some(projects::to_add_to(state, user, p).await?)),
        Some(None) => Some(None),
        None => None,
    };
    let mut tag_ids: Option<Vec<String>> = None;
    if let Some(tags) = &req.tags {
        let mut ids = Vec::new();
        for t in tags.iter().flatten() {
            let tid = ref_id("tags", t, "tags")?;
            let ok = records::is_visible(&state.db, "tags t", "t.id", tid, access::tag(caller, "t")).await?;
            if !ok {
                return Err(ApiError::BadRequest(format!("tag {tid} does not exist or you do not have access to it")));
            }
            ids.push(tid.to_string());
        }
        tag_ids = Some(ids);
    }
    let mut tx = begin_write(&state.db, Scope::Row("samples", id)).await?;
    let mut changes = serde_json::Map::new();
    if let Some(v) = req.visibility
        && v.as_str() != row.visibility
    {
        changes.insert("visibility".into(), json!([row.visibility, v.as_str()]));
    }
    if let Some(p) = &project
        && *p != row.project_id
    {
        changes.insert("project".into(), json!([row.project_id, p]));
    }
    if let Some(ids) = &tag_ids {
        let before: Vec<String> =
            sqlx::query_scalar("SELECT tag_id FROM sample_tags WHERE sample_id = $1 ORDER BY tag_id")
                .bind(id)
                .fetch_all(&mut *tx)
                .await?;
        let mut after = ids.clone();
        after.sort();
        after.dedup();
        if before != after {
            changes.insert("tags".into(), json!([before, after]));
        }
    }
    if !changes.is_empty() {
        let entry = audit::Entry::new("sample.updated", "sample", id, &row.owner_id).with(changes.into());
        audit::record(&mut tx, Some(user), entry).await?;
    }
    if let Some(v) = req.visibility {
        sqlx::query("UPDATE samples SET visibility = $1 WHERE id = $2")
            .bind(v.as_str())
            .bind(id)
            .execute(&mut *tx)
            .await?;
    }
    if let Some(p) = project {
        sqlx::query("UPDATE samples SET project_id = $1 WHERE id = $2").bind(p).bind(id).execute(&mut *tx).await?;
    }
    if let Some(ids) = tag_ids {
        tags::check_count(ids.len())?;
        sqlx::query("DELETE FROM sample_tags WHERE sample_id = $1").bind(id).execute(&mut *tx).await?;
        tags::link(&mut tx, id, &ids).await?;
    }
    sqlx::query("UPDATE samples SET updated_at = $1 WHERE id = $2").bind(db::now()).bind(id).execute(&mut *tx).await?;
    tx.commit().await?;
    get(state, caller, id).await
}

/// Deletes a sample the caller owns, with its metadata, tag links, analyses, uploads and every
/// file they hold.
pub async fn delete(state: &Store, caller: &Caller, id: &str) -> ApiResult<()> {
    let row = owned(state, caller, id).await?;
    let mut tx = begin_write(&state.db, Scope::Row("samples", id)).await?;
    let entry = audit::Entry::new("sample.deleted", "sample", id, &row.owner_id)
        .with(json!({"filename": row.filename, "visibility": row.visibility, "project": row.project_id}));
    audit::record(&mut tx, caller.0.as_ref(), entry).await?;
    // Each analysis's folder goes whole (every run's outputs, and those of a run whose worker
    // stopped before its outcome was stored).
    let keys: Vec<Option<String>> = sqlx::query_scalar(
        "SELECT object_key FROM samples WHERE id = $1 \
         UNION ALL SELECT 'analyses/' || id || '/' FROM analyses WHERE sample_id = $2 \
         UNION ALL SELECT object_key FROM uploads WHERE target_sample = $3 OR id = $4",
    )
    .bind(id)
    .bind(id)
    .bind(id)
    .bind(id)
    .fetch_all(&mut *tx)
    .await?;
    let keys: Vec<String> = keys.into_iter().flatten().collect();
    for k in &keys {
        queue_delete(&mut tx, k).await?;
    }
    // Metadata, tag links, analyses and queue entries go with it (ON DELETE CASCADE).
    sqlx::query("DELETE FROM uploads WHERE id = $1 OR target_sample = $2").bind(id).bind(id).execute(&mut *tx).await?;
    sqlx::query("DELETE FROM samples WHERE id = $1").bind(id).execute(&mut *tx).await?;
    tx.commit().await?;
    remove_queued(state, &keys).await;
    Ok(())
}

/// The file of the sample `id`, for the caller to download: its object key and the name to
/// download it as. Project members need `can_download_files` for a sample that is not public.
pub async fn file(state: &Store, caller: &Caller, id: &str) -> ApiResult<(String, String)> {
    let row = downloadable(state, caller, id).await?;
    let key: Option<String> =
        sqlx::query_scalar("SELECT object_key FROM samples WHERE id = $1").bind(id).fetch_one(&state.db).await?;
    let key = key.ok_or_else(|| ApiError::BadRequest("the sample has no file yet: it is awaiting data".into()))?;
    let entry = audit::Entry::new("sample.downloaded", "sample", id, &row.owner_id)
        .with(json!({"filename": row.filename, "visibility": row.visibility}));
    audit::record_for(&state.db, caller, entry).await?;
    Ok((key, row.filename.unwrap_or_else(|| "sample".into())))
}

/// The sample `id` if the caller may read its file: 404 if hidden, 403 for a project member
/// without `can_download_files` on a sample that is not public.
pub(crate) async fn downloadable(state: &Store, caller: &Caller, id: &str) -> ApiResult<SampleRow> {
    let user = caller.require()?;
    let row = visible(state, caller, id).await?.ok_or_else(|| ApiError::not_found("sample"))?;
    if row.owner_id != user.id
        && !members::administers(&state.db, user, &row.owner_id).await?
        && let Some(project) = &row.project_id
        && row.visibility != "public"
        && let Some(perms) = projects::permissions(state, user, project).await?
        && !perms.iter().any(|p| p == "can_download_files")
    {
        return Err(ApiError::Forbidden(
            "your project membership does not include can_download_files for this sample".into(),
        ));
    }
    Ok(row)
}

/// Creates the caller's tag (or finds the one with that name) and attaches it to a sample the
/// caller owns or may edit as a project member.
pub async fn add_tag(state: &Store, caller: &Caller, req: &TagCreate) -> ApiResult<Tag> {
    let user = caller.require()?;
    let name = req.name.trim();
    let n = name.chars().count();
    if n == 0 || n > MAX_TAG_NAME_CHARS {
        return Err(ApiError::BadRequest(format!("name must be 1 to {MAX_TAG_NAME_CHARS} characters")));
    }
    let sample_id = ref_id("sample", &req.sample, "samples")?;
    may_act_on(state, caller, sample_id, "can_edit_metadata", "tag it").await?;
    let owner: String =
        sqlx::query_scalar("SELECT owner_id FROM samples WHERE id = $1").bind(sample_id).fetch_one(&state.db).await?;
    let mut tx = begin_write(&state.db, Scope::User(&user.id)).await?;
    let tag_id = tags::by_name(&mut tx, &user.id, name).await?;
    tags::link(&mut tx, sample_id, std::slice::from_ref(&tag_id)).await?;
    let entry = audit::Entry::new("sample.tagged", "sample", sample_id, &owner).with(json!({"tag": [tag_id, name]}));
    audit::record(&mut tx, Some(user), entry).await?;
    tx.commit().await?;
    Ok(Tag { uri: Ref::new("tags", &tag_id).uri, name: Some(name.to_string()) })
}
