//! Tags: create-and-attach, list, get.

use axum::Router;
use axum::extract::{OriginalUri, Path, State};
use axum::routing::get;
use mgds_api::{MAX_TAG_NAME_CHARS, Ref, Tag, TagCreate};

use super::{Json, ListParams, ListSpec, Listed, ref_id};
use crate::AppState;
use crate::access;
use crate::auth::Caller;
use crate::db::begin_write;
use crate::error::{ApiError, ApiResult};
use crate::listing::{Field, FieldKind};

pub(super) fn router() -> Router<AppState> {
    Router::new().route("/tags", get(list_tags).post(create_tag)).route("/tags/{id}", get(get_tag))
}

pub(crate) const TAG_FIELDS: &[Field] = &[
    Field { name: "$uri", column: "t.id", kind: FieldKind::Uri { collection: "tags" }, sortable: true },
    Field { name: "name", column: "t.name", kind: FieldKind::Text, sortable: true },
    Field { name: "created_at", column: "t.created_at", kind: FieldKind::DateTime, sortable: true },
];

pub(crate) const TAGS: ListSpec = ListSpec {
    from: "tags t",
    columns: "t.id, t.name",
    fields: TAG_FIELDS,
    default_order: "t.name ASC",
    tiebreak: "t.id ASC",
};

#[derive(sqlx::FromRow)]
struct TagRow {
    id: String,
    name: String,
}

impl TagRow {
    fn into_api(self) -> Tag {
        Tag { uri: Ref::new("tags", &self.id).uri, name: Some(self.name) }
    }
}

async fn list_tags(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<Tag>> {
    caller.require()?;
    let rows: Listed<TagRow> = super::list(&state, &uri, &params, &TAGS, access::tag(&caller, "t"), None).await?;
    Ok(rows.map(TagRow::into_api))
}

async fn get_tag(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<axum::Json<Tag>> {
    caller.require()?;
    let row: TagRow = super::fetch_one(&state, &TAGS, "t.id", &id, access::tag(&caller, "t"))
        .await?
        .ok_or_else(|| ApiError::not_found("tag"))?;
    Ok(axum::Json(row.into_api()))
}

/// Creates the caller's tag (or finds the one with that name) and attaches it to a sample the
/// caller owns or may edit as a project member.
async fn create_tag(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<TagCreate>,
) -> ApiResult<axum::Json<Tag>> {
    let user = caller.require()?;
    let name = req.name.trim();
    let n = name.chars().count();
    if n == 0 || n > MAX_TAG_NAME_CHARS {
        return Err(ApiError::BadRequest(format!("name must be 1 to {MAX_TAG_NAME_CHARS} characters")));
    }
    let sample_id = ref_id("sample", &req.sample, "samples")?;
    super::samples::sample_for(&state, &caller, sample_id, "can_edit_metadata", "tag it").await?;
    let mut tx = begin_write(&state.db).await?;
    let tag_id = super::samples::tag_by_name(&mut tx, &user.id, name).await?;
    sqlx::query("INSERT OR IGNORE INTO sample_tags (sample_id, tag_id) VALUES (?, ?)")
        .bind(sample_id)
        .bind(&tag_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(axum::Json(Tag { uri: Ref::new("tags", &tag_id).uri, name: Some(name.to_string()) }))
}
