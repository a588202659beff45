//! Sequencing batches: the lists callers read, and the records the operator's commands create
//! and move forward.

use crate::store::db::Pool;
use mgds_api::{BatchStatus, Ref, SequencingBatch};

use super::access;
use super::caller::Caller;
use super::db::{self, Scope, begin_write, new_id};
use super::handle::Store;
use super::records::{self, Found, ListQuery, ListSpec};
use crate::error::{ApiError, ApiResult};
use crate::listing::{Field, FieldKind};

/// The fields of `where` and `sort` in lists of sequencing batches.
pub(crate) const BATCH_FIELDS: &[Field] = &[
    Field { name: "$uri", column: "b.id", kind: FieldKind::Uri { collection: "sequencing/batches" }, sortable: true },
    Field { name: "batch_number", column: "b.batch_number", kind: FieldKind::Text, sortable: true },
    Field { name: "created_at", column: "b.created_at", kind: FieldKind::DateTime, sortable: true },
    Field { name: "name", column: "b.name", kind: FieldKind::Text, sortable: true },
    Field { name: "owner", column: "b.owner_id", kind: FieldKind::Ref { collection: "users" }, sortable: true },
    Field {
        name: "status",
        column: "b.status",
        kind: FieldKind::Enum(&[
            "registered",
            "shipped_to_lab",
            "received_at_lab",
            "extracting",
            "preparing_library",
            "sequencing",
            "quality_control",
            "done",
            "canceled",
        ]),
        sortable: true,
    },
];

const BATCHES: ListSpec = ListSpec {
    from: "sequencing_batches b",
    columns: "b.id, b.batch_number, b.created_at, b.name, b.owner_id, b.status",
    fields: BATCH_FIELDS,
    default_order: "b.created_at ASC",
    tiebreak: "b.id ASC",
};

#[derive(sqlx::FromRow)]
struct BatchRow {
    id: String,
    batch_number: String,
    created_at: String,
    name: Option<String>,
    owner_id: String,
    status: String,
}

impl BatchRow {
    fn into_api(self) -> SequencingBatch {
        SequencingBatch {
            uri: Ref::new("sequencing/batches", &self.id).uri,
            batch_number: self.batch_number,
            created_at: self.created_at,
            name: self.name,
            owner: Ref::new("users", &self.owner_id),
            status: BatchStatus::parse(&self.status).unwrap_or(BatchStatus::Registered),
        }
    }
}

/// One page of the batches the caller may see.
pub async fn list(state: &Store, caller: &Caller, q: &ListQuery<'_>) -> ApiResult<Found<SequencingBatch>> {
    caller.require()?;
    let rows: Found<BatchRow> = records::list(&state.db, &BATCHES, q, access::batch(caller, "b"), None).await?;
    Ok(rows.map(BatchRow::into_api))
}

/// The batch `id` if the caller may see it.
pub async fn get(state: &Store, caller: &Caller, id: &str) -> ApiResult<SequencingBatch> {
    caller.require()?;
    let row: BatchRow = records::fetch_one(&state.db, &BATCHES, "b.id", id, access::batch(caller, "b"))
        .await?
        .ok_or_else(|| ApiError::not_found("sequencing batch"))?;
    Ok(row.into_api())
}

/// The batch with this number or id.
pub async fn find(db: &Pool, number_or_id: &str) -> Result<Option<SequencingBatch>, sqlx::Error> {
    let row: Option<BatchRow> = sqlx::query_as(
        "SELECT id, batch_number, created_at, name, owner_id, status FROM sequencing_batches WHERE batch_number = $1 OR id = $2",
    )
    .bind(number_or_id)
    .bind(number_or_id)
    .fetch_optional(db)
    .await?;
    Ok(row.map(BatchRow::into_api))
}

/// Registers a batch for the user `owner`; returns its id, or `None` if the number is used.
pub async fn insert(
    db: &Pool,
    batch_number: &str,
    name: Option<&str>,
    owner: &str,
) -> Result<Option<String>, sqlx::Error> {
    let now = db::now();
    let id = new_id();
    let r = sqlx::query(
        "INSERT INTO sequencing_batches (id, batch_number, name, owner_id, status, created_at, updated_at) VALUES ($1, $2, $3, $4, 'registered', $5, $6)",
    )
    .bind(&id)
    .bind(batch_number)
    .bind(name)
    .bind(owner)
    .bind(&now)
    .bind(&now)
    .execute(db)
    .await;
    match r {
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(None),
        Err(e) => Err(e),
        Ok(_) => Ok(Some(id)),
    }
}

/// What asking a batch to move to another status did.
#[derive(Debug)]
pub enum Moved {
    /// There is no such batch.
    NoSuchBatch,
    /// The batch may not move from its status to the one asked.
    Refused {
        /// The batch number.
        number: String,
        /// Its status, which stays.
        from: BatchStatus,
    },
    /// The batch moved.
    Done {
        /// The batch id.
        id: String,
    },
}

/// Moves a batch to `status` if its current status allows it, in one write transaction.
pub async fn move_to(db: &Pool, number_or_id: &str, status: BatchStatus) -> Result<Moved, sqlx::Error> {
    let mut tx = begin_write(db, Scope::Named("sequencing_batches")).await?;
    let current: Option<(String, String, String)> =
        sqlx::query_as("SELECT id, batch_number, status FROM sequencing_batches WHERE batch_number = $1 OR id = $2")
            .bind(number_or_id)
            .bind(number_or_id)
            .fetch_optional(&mut *tx)
            .await?;
    let Some((id, number, from)) = current else { return Ok(Moved::NoSuchBatch) };
    let from = BatchStatus::parse(&from).unwrap_or(BatchStatus::Registered);
    if !from.can_move_to(status) {
        return Ok(Moved::Refused { number, from });
    }
    sqlx::query("UPDATE sequencing_batches SET status = $1, updated_at = $2 WHERE id = $3")
        .bind(status.as_str())
        .bind(db::now())
        .bind(&id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Moved::Done { id })
}
