//! Tags: their records, and a user's tags found or created by name and attached to samples.

use mgds_api::{MAX_TAG_NAME_CHARS, MAX_TAGS_PER_SAMPLE, Ref, Tag, TagInput};

use super::access;
use super::caller::Caller;
use super::db::{self, Tx, new_id};
use super::handle::Store;
use super::records::{self, Found, ListQuery, ListSpec};
use crate::error::{ApiError, ApiResult};
use crate::listing::{Field, FieldKind};

/// The fields of `where` and `sort` in lists of tags.
pub(crate) const TAG_FIELDS: &[Field] = &[
    Field { name: "$uri", column: "t.id", kind: FieldKind::Uri { collection: "tags" }, sortable: true },
    Field { name: "name", column: "t.name", kind: FieldKind::Text, sortable: true },
    Field { name: "created_at", column: "t.created_at", kind: FieldKind::DateTime, sortable: true },
];

const TAGS: ListSpec = ListSpec {
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

/// One page of the tags the caller may see.
pub async fn list(state: &Store, caller: &Caller, q: &ListQuery<'_>) -> ApiResult<Found<Tag>> {
    caller.require()?;
    let rows: Found<TagRow> = records::list(&state.db, &TAGS, q, access::tag(caller, "t"), None).await?;
    Ok(rows.map(TagRow::into_api))
}

/// The statements of [`list`], for checking their plans.
#[doc(hidden)]
pub fn list_statements(caller: &Caller, q: &ListQuery<'_>) -> ApiResult<Vec<records::Statement>> {
    records::plain_list_statements(&TAGS, q, &access::tag(caller, "t"), None)
}

/// The tag `id` if the caller may see it.
pub async fn get(state: &Store, caller: &Caller, id: &str) -> ApiResult<Tag> {
    caller.require()?;
    let row: TagRow = records::fetch_one(&state.db, &TAGS, "t.id", id, access::tag(caller, "t"))
        .await?
        .ok_or_else(|| ApiError::not_found("tag"))?;
    Ok(row.into_api())
}

/// Checks the names of tags to create with a sample, and that there are at most
/// [`MAX_TAGS_PER_SAMPLE`].
pub fn check_names(tags: &[TagInput]) -> ApiResult<()> {
    check_count(tags.len())?;
    for t in tags {
        let n = t.name.trim().chars().count();
        if n == 0 || n > MAX_TAG_NAME_CHARS {
            return Err(ApiError::BadRequest(format!(
                "tag name {:?} must be 1 to {MAX_TAG_NAME_CHARS} characters",
                t.name
            )));
        }
    }
    Ok(())
}

/// Refuses a request that names more than [`MAX_TAGS_PER_SAMPLE`] tags for one sample.
pub fn check_count(n: usize) -> ApiResult<()> {
    if n > MAX_TAGS_PER_SAMPLE {
        return Err(ApiError::BadRequest(format!(
            "{n} tags were given; a sample has at most {MAX_TAGS_PER_SAMPLE} tags"
        )));
    }
    Ok(())
}

/// Finds or creates the owner's tags by name and attaches them to a sample.
pub(crate) async fn attach(tx: &mut Tx, owner: &str, sample_id: &str, tags: &[TagInput]) -> ApiResult<()> {
    check_count(tags.len())?;
    let mut ids = Vec::with_capacity(tags.len());
    for t in tags {
        ids.push(by_name(tx, owner, t.name.trim()).await?);
    }
    link(tx, sample_id, &ids).await
}

/// How many tags sample `sample_id` has.
async fn count(tx: &mut Tx, sample_id: &str) -> ApiResult<usize> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sample_tags WHERE sample_id = $1")
        .bind(sample_id)
        .fetch_one(&mut **tx)
        .await?;
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// Attaches tags to a sample (each once), refusing to take it past [`MAX_TAGS_PER_SAMPLE`]
/// (a sample already past it, from before the limit, keeps its tags and can lose some, but
/// gains none).
pub(crate) async fn link(tx: &mut Tx, sample_id: &str, tag_ids: &[String]) -> ApiResult<()> {
    let before = count(tx, sample_id).await?;
    for tag_id in tag_ids {
        sqlx::query("INSERT INTO sample_tags (sample_id, tag_id) VALUES ($1, $2) ON CONFLICT DO NOTHING")
            .bind(sample_id)
            .bind(tag_id)
            .execute(&mut **tx)
            .await?;
    }
    let after = count(tx, sample_id).await?;
    if after > before && after > MAX_TAGS_PER_SAMPLE {
        return Err(ApiError::BadRequest(format!(
            "the sample would have {after} tags; a sample has at most {MAX_TAGS_PER_SAMPLE} tags (remove some first)"
        )));
    }
    Ok(())
}

/// The owner's tag called `name`, created if it does not exist yet (a user's tag names are
/// unique, so the same label always means the same tag).
pub(crate) async fn by_name(tx: &mut Tx, owner: &str, name: &str) -> ApiResult<String> {
    if let Some(id) = sqlx::query_scalar::<_, String>("SELECT id FROM tags WHERE owner_id = $1 AND name = $2")
        .bind(owner)
        .bind(name)
        .fetch_optional(&mut **tx)
        .await?
    {
        return Ok(id);
    }
    let id = new_id();
    sqlx::query("INSERT INTO tags (id, owner_id, name, created_at) VALUES ($1, $2, $3, $4)")
        .bind(&id)
        .bind(owner)
        .bind(name)
        .bind(db::now())
        .execute(&mut **tx)
        .await?;
    Ok(id)
}
