//! The service's own routes: schema, account, users and sequencing batches.

use axum::Router;
use axum::extract::{OriginalUri, Path, State};
use axum::routing::get;
use mgds_api::{Account, BatchStatus, Ref, SequencingBatch, User};
use serde_json::Value;

use super::{ListParams, ListSpec, Listed};
use crate::access;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::listing::{Field, FieldKind};
use crate::{AppState, schema};

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
    let user = caller.require()?;
    let (email, username, created_at, org, admin): (String, Option<String>, String, String, i64) = sqlx::query_as(
        "SELECT u.email, u.username, u.created_at, o.name, u.is_org_admin FROM users u \
         JOIN organizations o ON o.id = u.organization_id WHERE u.id = ?",
    )
    .bind(&user.id)
    .fetch_one(&state.db)
    .await?;
    Ok(axum::Json(Account {
        user: Ref::new("users", &user.id),
        email: Some(email),
        username,
        created_at: Some(created_at.clone()),
        confirmed_at: Some(created_at),
        coupons: vec![],
        organization: Some(org),
        organization_admin: Some(admin != 0),
    }))
}

pub(crate) const USER_FIELDS: &[Field] = &[
    Field { name: "$uri", column: "u.id", kind: FieldKind::Uri { collection: "users" }, sortable: true },
    Field { name: "email", column: "u.email", kind: FieldKind::Text, sortable: true },
    Field { name: "username", column: "u.username", kind: FieldKind::Text, sortable: true },
];

pub(crate) const USERS: ListSpec = ListSpec {
    from: "users u",
    columns: "u.id, u.email, u.username",
    fields: USER_FIELDS,
    default_order: "u.email ASC",
    tiebreak: "u.id ASC",
};

#[derive(sqlx::FromRow)]
struct UserRow {
    id: String,
    email: String,
    username: Option<String>,
}

impl UserRow {
    fn into_api(self) -> User {
        User { uri: Ref::new("users", &self.id).uri, email: Some(self.email), username: self.username }
    }
}

async fn list_users(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<User>> {
    caller.require()?;
    let rows: Listed<UserRow> = super::list(&state, &uri, &params, &USERS, access::user(&caller, "u"), None).await?;
    Ok(rows.map(UserRow::into_api))
}

async fn get_user(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<User>> {
    caller.require()?;
    let row: UserRow = super::fetch_one(&state, &USERS, "u.id", &id, access::user(&caller, "u"))
        .await?
        .ok_or_else(|| ApiError::not_found("user"))?;
    Ok(axum::Json(row.into_api()))
}

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

pub(crate) const BATCHES: ListSpec = ListSpec {
    from: "sequencing_batches b",
    columns: "b.id, b.batch_number, b.created_at, b.name, b.owner_id, b.status",
    fields: BATCH_FIELDS,
    default_order: "b.created_at ASC",
    tiebreak: "b.id ASC",
};

#[derive(sqlx::FromRow)]
pub(crate) struct BatchRow {
    id: String,
    batch_number: String,
    created_at: String,
    name: Option<String>,
    owner_id: String,
    status: String,
}

impl BatchRow {
    pub(crate) fn into_api(self) -> SequencingBatch {
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

async fn list_batches(
    State(state): State<AppState>,
    caller: Caller,
    uri: OriginalUri,
    params: ListParams,
) -> ApiResult<Listed<SequencingBatch>> {
    caller.require()?;
    let rows: Listed<BatchRow> =
        super::list(&state, &uri, &params, &BATCHES, access::batch(&caller, "b"), None).await?;
    Ok(rows.map(BatchRow::into_api))
}

async fn get_batch(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<SequencingBatch>> {
    caller.require()?;
    let row: BatchRow = super::fetch_one(&state, &BATCHES, "b.id", &id, access::batch(&caller, "b"))
        .await?
        .ok_or_else(|| ApiError::not_found("sequencing batch"))?;
    Ok(axum::Json(row.into_api()))
}
