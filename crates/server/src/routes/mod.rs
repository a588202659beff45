//! The HTTP routes: one module per resource, each with its own `router()`, and the pieces they
//! share (body and query extractors that answer in the service's error shape, list answers with
//! `X-Total-Count` and `Link`, reference resolution).

pub(crate) mod analyses;
mod documents;
mod jobs;
mod misc;
mod projects;
mod samples;
mod storage_endpoint;
mod tags;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, OriginalUri, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;
use sqlx::sqlite::{SqliteArguments, SqliteRow};
use sqlx::{Arguments, AssertSqlSafe, FromRow};

use crate::AppState;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::listing::{self, Bind, Compiled, Field, Page};

pub use analyses::{AnalysisKind, Artifact, store_outcome, store_results};

/// The `where`/`sort` field tables of every list, for the schema.
pub(crate) mod field_tables {
    pub(crate) use super::analyses::ANALYSIS_FIELDS as ANALYSIS;
    pub(crate) use super::documents::DOCUMENT_FIELDS as DOCUMENT;
    pub(crate) use super::jobs::JOB_FIELDS as JOB;
    pub(crate) use super::misc::{BATCH_FIELDS as BATCH, USER_FIELDS as USER};
    pub(crate) use super::projects::PROJECT_FIELDS as PROJECT;
    pub(crate) use super::samples::{METADATA_FIELDS as METADATA, SAMPLE_FIELDS as SAMPLE};
    pub(crate) use super::tags::TAG_FIELDS as TAG;
}
pub use jobs::{JobSpec, register_job};

/// All routes of the service over `state`.
pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .merge(samples::router())
        .merge(analyses::router())
        .merge(jobs::router())
        .merge(documents::router())
        .merge(projects::router())
        .merge(tags::router())
        .merge(misc::router());
    let api = api.route_layer(axum::middleware::from_fn_with_state(state.clone(), authenticate));
    Router::new()
        .nest("/api/v1", api)
        .merge(storage_endpoint::router())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(state)
}

/// Collections whose public records anyone may read without signing in (spec: public samples,
/// projects and analyses, with their metadata).
const OPEN_FOR_READING: &[&str] = &[
    "schema",
    "samples",
    "metadata",
    "projects",
    "analyses",
    "classifications",
    "panels",
    "alignments",
    "functional_profiles",
];

/// Checks credentials before anything else about a request: a bad key answers 401 (or 429)
/// everywhere, and an anonymous caller gets 401 on every route but the public reads, before its
/// body or query is even looked at.
async fn authenticate(
    State(state): State<AppState>,
    mut parts: Parts,
    body: axum::body::Body,
    next: axum::middleware::Next,
) -> Response {
    let caller = match Caller::from_request_parts(&mut parts, &state).await {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    if caller.0.is_none() {
        let reading = parts.method == Method::GET || parts.method == Method::HEAD;
        let path = parts.uri.path().trim_start_matches('/');
        let collection = path.split('/').next().unwrap_or_default();
        if !(reading && OPEN_FOR_READING.contains(&collection)) {
            return ApiError::unauthorized().into_response();
        }
    }
    next.run(Request::from_parts(parts, body)).await
}

async fn not_found(uri: OriginalUri) -> ApiError {
    ApiError::NotFound(format!("there is no route {}; see GET /api/v1/schema for the routes", uri.path()))
}

async fn method_not_allowed(method: Method, uri: OriginalUri) -> ApiError {
    ApiError::MethodNotAllowed(format!("{method} is not allowed on {}", uri.path()))
}

/// Work left half-done by an interrupted run: files of deleted records, abandoned uploads.
pub async fn housekeeping(state: &AppState) {
    if let Err(e) = samples::purge(state).await {
        tracing::warn!(error = %e, "could not finish removing deleted files; will retry at next start");
    }
}

/// A JSON body, read whatever the content type, with a 400 in the service's shape when it is
/// malformed or does not fit the route's fields.
pub struct Json<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiError::BadRequest(format!("could not read the request body: {}", e.body_text())))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ApiError::BadRequest("the request needs a JSON body".into()));
        }
        let mut de = serde_json::Deserializer::from_slice(&bytes);
        let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            if inner.is_syntax() || inner.is_eof() {
                ApiError::BadRequest(format!("the request body is not valid JSON: {inner}"))
            } else if path == "." {
                ApiError::BadRequest(format!("the request body does not fit this route: {inner}"))
            } else {
                ApiError::BadRequest(format!("the request body does not fit this route at {path}: {inner}"))
            }
        })?;
        de.end().map_err(|e| ApiError::BadRequest(format!("the request body is not valid JSON: {e}")))?;
        Ok(Json(value))
    }
}

/// The raw list parameters.
#[derive(Debug, Default, serde::Deserialize)]
pub struct ListParams {
    #[serde(rename = "where")]
    filter: Option<String>,
    sort: Option<String>,
    page: Option<String>,
    per_page: Option<String>,
}

impl<S: Send + Sync> FromRequestParts<S> for ListParams {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let axum::extract::Query(p) = axum::extract::Query::<ListParams>::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::BadRequest(format!("the query string is malformed: {}", e.body_text())))?;
        Ok(p)
    }
}

/// How a collection is listed: its table, columns, filterable fields and order.
pub struct ListSpec {
    /// `FROM` clause body, e.g. `samples s`.
    pub from: &'static str,
    /// Selected columns.
    pub columns: &'static str,
    /// Fields of `where` and `sort`.
    pub fields: &'static [Field],
    /// Order when no `sort` is given.
    pub default_order: &'static str,
    /// Unique last sort key that makes the order stable.
    pub tiebreak: &'static str,
}

/// Builds the arguments of a query from bound values, in order.
pub fn args(binds: &[Bind]) -> ApiResult<SqliteArguments> {
    let mut a = SqliteArguments::default();
    for b in binds {
        let r = match b {
            Bind::Text(s) => a.add(s.clone()),
            Bind::Int(i) => a.add(*i),
            Bind::Real(f) => a.add(*f),
            Bind::Null => a.add(Option::<String>::None),
        };
        r.map_err(ApiError::internal)?;
    }
    Ok(a)
}

/// One page of a list.
pub struct Listed<T> {
    items: Vec<T>,
    total: u64,
    page: Page,
    path: String,
    params: Vec<(&'static str, String)>,
}

impl<T> Listed<T> {
    /// Converts each item.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Listed<U> {
        Listed {
            items: self.items.into_iter().map(f).collect(),
            total: self.total,
            page: self.page,
            path: self.path,
            params: self.params,
        }
    }

    /// Converts each item, failing on the first error.
    pub fn try_map<U>(self, f: impl FnMut(T) -> ApiResult<U>) -> ApiResult<Listed<U>> {
        Ok(Listed {
            items: self.items.into_iter().map(f).collect::<ApiResult<_>>()?,
            total: self.total,
            page: self.page,
            path: self.path,
            params: self.params,
        })
    }
}

impl<T: Serialize> IntoResponse for Listed<T> {
    fn into_response(self) -> Response {
        let others: Vec<(&str, &str)> = self.params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let link = listing::link_header(&self.path, &others, &self.page, self.total);
        let mut headers = HeaderMap::new();
        headers.insert(HeaderName::from_static("x-total-count"), HeaderValue::from(self.total));
        if let Ok(v) = HeaderValue::from_str(&link) {
            headers.insert(axum::http::header::LINK, v);
        }
        (StatusCode::OK, headers, axum::Json(self.items)).into_response()
    }
}

/// Runs a list query: the caller's visibility rule, any fixed condition, then `where`, `sort`
/// and the page, all as bound parameters. Counts the filtered total in the same snapshot.
pub async fn list<T>(
    state: &AppState,
    uri: &OriginalUri,
    params: &ListParams,
    spec: &ListSpec,
    visible: Compiled,
    fixed: Option<Compiled>,
) -> ApiResult<Listed<T>>
where
    T: for<'r> FromRow<'r, SqliteRow> + Send + Unpin,
{
    let filter = listing::compile_where(spec.fields, params.filter.as_deref()).map_err(ApiError::BadRequest)?;
    let order = listing::compile_sort(spec.fields, params.sort.as_deref(), spec.default_order, spec.tiebreak)
        .map_err(ApiError::BadRequest)?;
    let page = listing::parse_page(params.page.as_deref(), params.per_page.as_deref()).map_err(ApiError::BadRequest)?;

    let mut binds = visible.binds;
    let mut cond = format!("({})", visible.sql);
    if let Some(f) = fixed {
        cond.push_str(&format!(" AND ({})", f.sql));
        binds.extend(f.binds);
    }
    cond.push_str(&format!(" AND ({})", filter.sql));
    binds.extend(filter.binds);

    // One read transaction so the total and the page agree.
    let mut tx = state.db.begin().await?;
    let count_sql = format!("SELECT COUNT(*) FROM {} WHERE {cond}", spec.from);
    let total: i64 = sqlx::query_scalar_with(AssertSqlSafe(count_sql), args(&binds)?).fetch_one(&mut *tx).await?;
    let mut page_binds = binds;
    page_binds.push(Bind::Int(page.limit()));
    page_binds.push(Bind::Int(page.offset()));
    let sql = format!("SELECT {} FROM {} WHERE {cond} ORDER BY {order} LIMIT ? OFFSET ?", spec.columns, spec.from);
    let items: Vec<T> = sqlx::query_as_with(AssertSqlSafe(sql), args(&page_binds)?).fetch_all(&mut *tx).await?;
    tx.commit().await?;

    let mut others = Vec::new();
    if let Some(w) = &params.filter {
        others.push(("where", w.clone()));
    }
    if let Some(s) = &params.sort {
        others.push(("sort", s.clone()));
    }
    Ok(Listed { items, total: total.max(0) as u64, page, path: uri.path().to_string(), params: others })
}

/// Fetches one record by id under the caller's visibility rule; `None` if absent or hidden.
pub async fn fetch_one<T>(
    state: &AppState,
    spec: &ListSpec,
    id_column: &str,
    id: &str,
    visible: Compiled,
) -> ApiResult<Option<T>>
where
    T: for<'r> FromRow<'r, SqliteRow> + Send + Unpin,
{
    let sql = format!("SELECT {} FROM {} WHERE {id_column} = ? AND ({})", spec.columns, spec.from, visible.sql);
    let mut binds = vec![Bind::Text(id.to_string())];
    binds.extend(visible.binds);
    Ok(sqlx::query_as_with(AssertSqlSafe(sql), args(&binds)?).fetch_optional(&state.db).await?)
}

/// Whether the record `id` in `from` (aliased, with `id_column`) passes `visible`.
pub async fn is_visible(state: &AppState, from: &str, id_column: &str, id: &str, visible: Compiled) -> ApiResult<bool> {
    let sql = format!("SELECT EXISTS (SELECT 1 FROM {from} WHERE {id_column} = ? AND ({}))", visible.sql);
    let mut binds = vec![Bind::Text(id.to_string())];
    binds.extend(visible.binds);
    let found: i64 = sqlx::query_scalar_with(AssertSqlSafe(sql), args(&binds)?).fetch_one(&state.db).await?;
    Ok(found != 0)
}

/// The id named by a reference in a request body, checked to be of `collection`.
pub fn ref_id<'a>(field: &str, r: &'a mgds_api::RefOrId, collection: &str) -> ApiResult<&'a str> {
    if let Some(c) = r.collection()
        && c != collection
    {
        return Err(ApiError::BadRequest(format!("{field} must reference /api/v1/{collection}/<id>, not {c}")));
    }
    Ok(r.id())
}

/// Parses a JSON array of ids stored by `json_group_array`.
pub fn id_list(json: &str) -> Vec<String> {
    serde_json::from_str::<Vec<Option<String>>>(json).unwrap_or_default().into_iter().flatten().collect()
}

/// Converts a stored boolean.
pub fn flag(v: i64) -> bool {
    v != 0
}
