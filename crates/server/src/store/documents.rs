//! Documents: their records, the changes their uploader makes, their deletion with their file,
//! and sharing them for download.

use mgds_api::{Document, DocumentUpdate, Ref, UserRequest};

use super::access;
use super::audit;
use super::caller::Caller;
use super::db::{Scope, begin_write, id_list};
use super::deletes::{queue_delete, remove_queued};
use super::handle::Store;
use super::members;
use super::records::{self, Found, ListQuery, ListSpec};
use super::users;
use crate::error::{ApiError, ApiResult};
use crate::listing::{Field, FieldKind};
use serde_json::json;

/// The fields of `where` and `sort` in lists of documents.
pub(crate) const DOCUMENT_FIELDS: &[Field] = &[
    Field { name: "$uri", column: "d.id", kind: FieldKind::Uri { collection: "documents" }, sortable: true },
    Field { name: "created_at", column: "d.created_at", kind: FieldKind::DateTime, sortable: true },
    Field { name: "filename", column: "d.filename", kind: FieldKind::Text, sortable: true },
    Field { name: "size", column: "d.size", kind: FieldKind::Integer, sortable: true },
    Field { name: "description", column: "d.description", kind: FieldKind::Text, sortable: true },
    Field { name: "uploader", column: "d.uploader_id", kind: FieldKind::Ref { collection: "users" }, sortable: true },
    Field {
        name: "downloaders",
        column: "",
        kind: FieldKind::RefSet {
            collection: "users",
            row: "d.id",
            table: "document_downloaders dd",
            holder: "dd.document_id",
            value: "dd.user_id",
        },
        sortable: false,
    },
];

const DOCUMENTS: ListSpec = ListSpec {
    from: "documents d",
    columns: "d.id, d.created_at, d.filename, d.size, d.description, d.uploader_id, d.object_key, \
              (SELECT json_group_array(dd.user_id) FROM document_downloaders dd WHERE dd.document_id = d.id) AS downloader_ids",
    fields: DOCUMENT_FIELDS,
    default_order: "d.created_at ASC",
    tiebreak: "d.id ASC",
};

#[derive(sqlx::FromRow)]
struct DocumentRow {
    id: String,
    created_at: String,
    filename: String,
    size: i64,
    description: Option<String>,
    uploader_id: String,
    object_key: String,
    downloader_ids: String,
}

impl DocumentRow {
    fn into_api(self) -> Document {
        Document {
            uri: Ref::new("documents", &self.id).uri,
            created_at: self.created_at,
            filename: self.filename,
            size: self.size.max(0) as u64,
            description: self.description,
            uploader: Ref::new("users", &self.uploader_id),
            downloaders: id_list(&self.downloader_ids).iter().map(|u| Ref::new("users", u)).collect(),
            valid_until: None,
        }
    }
}

/// One page of the documents the caller may see: their own and those shared with them.
pub async fn list(state: &Store, caller: &Caller, q: &ListQuery<'_>) -> ApiResult<Found<Document>> {
    caller.require()?;
    let rows: Found<DocumentRow> =
        records::list_parts(&state.db, &DOCUMENTS, q, access::document_parts(caller), None).await?;
    Ok(rows.map(DocumentRow::into_api))
}

/// The statements of [`list`] for a list whose total is `total`, for checking their plans.
#[doc(hidden)]
pub fn list_statements(caller: &Caller, q: &ListQuery<'_>, total: i64) -> ApiResult<Vec<records::Statement>> {
    records::parts_statements(&DOCUMENTS, q, &access::document_parts(caller), None, total)
}

async fn visible(state: &Store, caller: &Caller, id: &str) -> ApiResult<DocumentRow> {
    caller.require()?;
    records::fetch_one(&state.db, &DOCUMENTS, "d.id", id, access::document(caller, "d"))
        .await?
        .ok_or_else(|| ApiError::not_found("document"))
}

/// The document `id` if the caller may see it.
pub async fn get(state: &Store, caller: &Caller, id: &str) -> ApiResult<Document> {
    Ok(visible(state, caller, id).await?.into_api())
}

/// The visible document `id`, which the caller must have uploaded or administer (an admin of
/// the uploader's organisation): 403 if not.
async fn modifiable(state: &Store, caller: &Caller, id: &str, doing: &str) -> ApiResult<DocumentRow> {
    let user = caller.require()?;
    let row = visible(state, caller, id).await?;
    if row.uploader_id != user.id && !members::administers(&state.db, user, &row.uploader_id).await? {
        return Err(ApiError::Forbidden(format!(
            "only the document's uploader, or an admin of their organisation, may {doing} it"
        )));
    }
    Ok(row)
}

/// Renames or describes a document the caller uploaded or administers.
pub async fn update(state: &Store, caller: &Caller, id: &str, req: &DocumentUpdate) -> ApiResult<Document> {
    let row = modifiable(state, caller, id, "change").await?;
    let mut tx = begin_write(&state.db, Scope::Row("documents", id)).await?;
    let mut changes = serde_json::Map::new();
    if let Some(f) = &req.filename {
        let f = mgds_api::clean_filename(f).map_err(|e| ApiError::BadRequest(e.to_string()))?;
        if f != row.filename {
            changes.insert("filename".into(), json!([row.filename, f]));
        }
        sqlx::query("UPDATE documents SET filename = $1 WHERE id = $2").bind(f).bind(id).execute(&mut *tx).await?;
    }
    if let Some(d) = &req.description {
        if d.as_ref() != row.description.as_ref() {
            changes.insert("description".into(), json!([row.description, d]));
        }
        sqlx::query("UPDATE documents SET description = $1 WHERE id = $2").bind(d).bind(id).execute(&mut *tx).await?;
    }
    if !changes.is_empty() {
        let entry = audit::Entry::new("document.updated", "document", id, &row.uploader_id).with(changes.into());
        audit::record(&mut tx, caller.0.as_ref(), entry).await?;
    }
    tx.commit().await?;
    get(state, caller, id).await
}

/// Deletes a document the caller uploaded or administers, with its file.
pub async fn delete(state: &Store, caller: &Caller, id: &str) -> ApiResult<()> {
    let row = modifiable(state, caller, id, "delete").await?;
    let mut tx = begin_write(&state.db, Scope::Row("documents", id)).await?;
    queue_delete(&mut tx, &row.object_key).await?;
    sqlx::query("DELETE FROM documents WHERE id = $1").bind(id).execute(&mut *tx).await?;
    let entry = audit::Entry::new("document.deleted", "document", id, &row.uploader_id)
        .with(json!({"filename": row.filename, "size": row.size}));
    audit::record(&mut tx, caller.0.as_ref(), entry).await?;
    tx.commit().await?;
    remove_queued(state, std::slice::from_ref(&row.object_key)).await;
    Ok(())
}

/// Lets a user download a document the caller uploaded or administers.
pub async fn add_downloader(state: &Store, caller: &Caller, id: &str, req: &UserRequest) -> ApiResult<Document> {
    let row = modifiable(state, caller, id, "share").await?;
    let uid = users::addable(state, caller, &req.user).await?;
    if uid != row.uploader_id {
        let mut tx = begin_write(&state.db, Scope::Row("documents", id)).await?;
        let added = sqlx::query(
            "INSERT INTO document_downloaders (document_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        )
        .bind(id)
        .bind(&uid)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if added > 0 {
            let entry = audit::Entry::new("document.shared", "document", id, &row.uploader_id)
                .with(json!({"user": uid, "filename": row.filename}));
            audit::record(&mut tx, caller.0.as_ref(), entry).await?;
        }
        tx.commit().await?;
    }
    get(state, caller, id).await
}

/// Stops sharing a document the caller uploaded or administers with a user.
pub async fn remove_downloader(state: &Store, caller: &Caller, id: &str, req: &UserRequest) -> ApiResult<Document> {
    let row = modifiable(state, caller, id, "share").await?;
    // Whoever the id names (or nobody): the answer is the same either way.
    let uid = records::ref_id("user", &req.user, "users")?;
    let mut tx = begin_write(&state.db, Scope::Row("documents", id)).await?;
    let removed = sqlx::query("DELETE FROM document_downloaders WHERE document_id = $1 AND user_id = $2")
        .bind(id)
        .bind(uid)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    if removed > 0 {
        let entry = audit::Entry::new("document.unshared", "document", id, &row.uploader_id)
            .with(json!({"user": uid, "filename": row.filename}));
        audit::record(&mut tx, caller.0.as_ref(), entry).await?;
    }
    tx.commit().await?;
    get(state, caller, id).await
}

/// The file of the document `id`, for the caller to download: its object key and file name.
pub async fn file(state: &Store, caller: &Caller, id: &str) -> ApiResult<(String, String)> {
    let row = visible(state, caller, id).await?;
    let entry = audit::Entry::new("document.downloaded", "document", id, &row.uploader_id)
        .with(json!({"filename": row.filename, "size": row.size}));
    audit::record_for(&state.db, caller, entry).await?;
    Ok((row.object_key, row.filename))
}
