//! Reading records of any collection: how a collection is listed, one page of it under the
//! caller's visibility rule with `where`, `sort` and paging, one record by id, whether a record
//! is visible, and the id a reference in a request body names.

use sqlx::FromRow;
use sqlx::any::AnyRow;

use super::db::{Pool, args, numbered};
use crate::error::{ApiError, ApiResult};
use crate::listing::{self, Bind, Compiled, Field, Page};

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

/// What a list request asks for, as the caller wrote it.
#[derive(Debug, Default, Clone, Copy)]
pub struct ListQuery<'a> {
    /// `where`: a JSON filter.
    pub filter: Option<&'a str>,
    /// `sort`: a JSON object of field and direction.
    pub sort: Option<&'a str>,
    /// `page`, from 1.
    pub page: Option<&'a str>,
    /// `per_page`.
    pub per_page: Option<&'a str>,
}

/// One page of a list, with the total of the filtered list.
pub struct Found<T> {
    /// The records of the page.
    pub items: Vec<T>,
    /// How many records pass the filter, over all pages.
    pub total: u64,
    /// The page.
    pub page: Page,
}

impl<T> Found<T> {
    /// Converts each record.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Found<U> {
        Found { items: self.items.into_iter().map(f).collect(), total: self.total, page: self.page }
    }
}

/// Runs a list query: the caller's visibility rule, any fixed condition, then `where`, `sort`
/// and the page, all as bound parameters. Counts the filtered total in the same snapshot.
pub async fn list<T>(
    db: &Pool,
    spec: &ListSpec,
    q: &ListQuery<'_>,
    visible: Compiled,
    fixed: Option<Compiled>,
) -> ApiResult<Found<T>>
where
    T: for<'r> FromRow<'r, AnyRow> + Send + Unpin,
{
    let filter = listing::compile_where(spec.fields, q.filter).map_err(ApiError::BadRequest)?;
    let order =
        listing::compile_sort(spec.fields, q.sort, spec.default_order, spec.tiebreak).map_err(ApiError::BadRequest)?;
    let page = listing::parse_page(q.page, q.per_page).map_err(ApiError::BadRequest)?;

    let mut binds = visible.binds;
    let mut cond = format!("({})", visible.sql);
    if let Some(f) = fixed {
        cond.push_str(&format!(" AND ({})", f.sql));
        binds.extend(f.binds);
    }
    cond.push_str(&format!(" AND ({})", filter.sql));
    binds.extend(filter.binds);

    // One read transaction so the total and the page agree.
    let mut tx = db.begin().await?;
    let count_sql = format!("SELECT COUNT(*) FROM {} WHERE {cond}", spec.from);
    let total: i64 = sqlx::query_scalar_with(numbered(count_sql), args(&binds)?).fetch_one(&mut *tx).await?;
    let mut page_binds = binds;
    page_binds.push(Bind::Int(page.limit()));
    page_binds.push(Bind::Int(page.offset()));
    let sql = format!("SELECT {} FROM {} WHERE {cond} ORDER BY {order} LIMIT ? OFFSET ?", spec.columns, spec.from);
    let items: Vec<T> = sqlx::query_as_with(numbered(sql), args(&page_binds)?).fetch_all(&mut *tx).await?;
    tx.commit().await?;
    Ok(Found { items, total: total.max(0) as u64, page })
}

/// Fetches one record by id under the caller's visibility rule; `None` if absent or hidden.
pub async fn fetch_one<T>(
    db: &Pool,
    spec: &ListSpec,
    id_column: &str,
    id: &str,
    visible: Compiled,
) -> ApiResult<Option<T>>
where
    T: for<'r> FromRow<'r, AnyRow> + Send + Unpin,
{
    let sql = format!("SELECT {} FROM {} WHERE {id_column} = ? AND ({})", spec.columns, spec.from, visible.sql);
    let mut binds = vec![Bind::Text(id.to_string())];
    binds.extend(visible.binds);
    Ok(sqlx::query_as_with(numbered(sql), args(&binds)?).fetch_optional(db).await?)
}

/// Whether the record `id` in `from` (aliased, with `id_column`) passes `visible`.
pub async fn is_visible(db: &Pool, from: &str, id_column: &str, id: &str, visible: Compiled) -> ApiResult<bool> {
    let sql = format!(
        "SELECT CASE WHEN EXISTS (SELECT 1 FROM {from} WHERE {id_column} = ? AND ({})) THEN 1 ELSE 0 END",
        visible.sql
    );
    let mut binds = vec![Bind::Text(id.to_string())];
    binds.extend(visible.binds);
    let found: i64 = sqlx::query_scalar_with(numbered(sql), args(&binds)?).fetch_one(db).await?;
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
