//! Reading records of any collection: how a collection is listed, one page of it under the
//! caller's visibility rule with `where`, `sort` and paging (for samples, metadata and analyses,
//! read in disjoint parts from indexes, [`list_parts`]), one record by id, whether a record is
//! visible, and the id a reference in a request body names.

use sqlx::FromRow;
use sqlx::any::AnyRow;

use super::db::{Pool, args, begin_read, numbered};
use crate::error::{ApiError, ApiResult};
use crate::listing::{self, Bind, Compiled, Field, Page, SortKey};

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

/// The column of a plain list's page that holds the list's total.
const TOTAL_COLUMN: &str = "list_total_count";

/// The statement of a plain list's page, with the total of the filtered list in each row
/// (`COUNT(*) OVER ()`, [`TOTAL_COLUMN`]), and the statement of the total alone, for a page past
/// the end.
fn plain_statements(
    spec: &ListSpec,
    q: &ListQuery<'_>,
    visible: &Compiled,
    fixed: Option<&Compiled>,
) -> ApiResult<(Statement, Statement, Page)> {
    let filter = listing::compile_where(spec.fields, q.filter).map_err(ApiError::BadRequest)?;
    let order =
        listing::compile_sort(spec.fields, q.sort, spec.default_order, spec.tiebreak).map_err(ApiError::BadRequest)?;
    let page = listing::parse_page(q.page, q.per_page).map_err(ApiError::BadRequest)?;
    let mut binds = visible.binds.clone();
    let mut cond = format!("({})", visible.sql);
    if let Some(f) = fixed {
        cond.push_str(&format!(" AND ({})", f.sql));
        binds.extend(f.binds.iter().cloned());
    }
    cond.push_str(&format!(" AND ({})", filter.sql));
    binds.extend(filter.binds);
    let count = (format!("SELECT COUNT(*) FROM {} WHERE {cond}", spec.from), binds.clone());
    binds.push(Bind::Int(page.limit()));
    binds.push(Bind::Int(page.offset()));
    let sql = format!(
        "SELECT {}, COUNT(*) OVER () AS {TOTAL_COLUMN} FROM {} WHERE {cond} ORDER BY {order} LIMIT ? OFFSET ?",
        spec.columns, spec.from
    );
    Ok(((sql, binds), count, page))
}

/// Runs a list query: the caller's visibility rule, any fixed condition, then `where`, `sort`
/// and the page, all as bound parameters. For collections whose records a caller sees few
/// enough of to filter them all per request (tags, projects, documents, jobs, batches, users):
/// the page and the filtered total come from one statement, so they agree; only a page past the
/// end counts again.
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
    use sqlx::Row;
    let ((sql, binds), (count_sql, count_binds), page) = plain_statements(spec, q, &visible, fixed.as_ref())?;
    let rows: Vec<AnyRow> = sqlx::query_with(numbered(sql), args(&binds)?).fetch_all(db).await?;
    let total: i64 = match rows.first() {
        Some(row) => row.try_get(TOTAL_COLUMN)?,
        None if page.offset() == 0 => 0,
        None => sqlx::query_scalar_with(numbered(count_sql), args(&count_binds)?).fetch_one(db).await?,
    };
    let items = rows.iter().map(T::from_row).collect::<Result<Vec<T>, _>>()?;
    Ok(Found { items, total: total.max(0) as u64, page })
}

/// The statements [`list`] runs (the page with its total, and the total alone), numbered as
/// run: for checking their plans.
#[doc(hidden)]
pub fn plain_list_statements(
    spec: &ListSpec,
    q: &ListQuery<'_>,
    visible: &Compiled,
    fixed: Option<&Compiled>,
) -> ApiResult<Vec<Statement>> {
    let (page, count, _) = plain_statements(spec, q, visible, fixed)?;
    Ok([page, count].into_iter().map(|(sql, b)| (numbered(sql).0, b)).collect())
}

/// The records a caller may see, as disjoint parts that each an index reads in order (the
/// samples one owns, the public ones of others, ...), so that a list neither scans the table
/// nor sorts all it may see: each part gives its first rows in the page's order, and those are
/// merged.
pub struct Parts {
    /// The parts: conditions on the spec's table, no two true of one row.
    pub parts: Vec<Part>,
    /// Counts kept as data: the table of counts (aliased as the spec's table, with the columns
    /// that the counted conditions and `countable` fields name) and the column of the count.
    pub counts: Option<(&'static str, &'static str)>,
    /// Fields whose `where` can be answered from the counts (besides none at all).
    pub countable: &'static [&'static str],
}

/// One part of [`Parts`].
pub struct Part {
    /// The condition on the spec's table.
    pub cond: Compiled,
    /// The same condition on the table of counts, where the counts can answer it.
    pub counted: Option<Compiled>,
}

/// The keys of `where` (a JSON object), if it parses; the list then fails on it with its own
/// message.
fn where_keys(filter: Option<&str>) -> Option<Vec<String>> {
    match filter.map(str::trim).filter(|f| !f.is_empty()) {
        None => Some(Vec::new()),
        Some(f) => match serde_json::from_str::<serde_json::Value>(f).ok()? {
            serde_json::Value::Object(m) => Some(m.keys().cloned().collect()),
            _ => None,
        },
    }
}

/// A statement and its values.
pub type Statement = (String, Vec<Bind>);

/// A list of [`Parts`] made ready: each part's condition with the filter, and the order.
struct Prepared {
    conds: Vec<Statement>,
    keys: Vec<SortKey>,
    page: Page,
    count: Statement,
}

fn prepare(spec: &ListSpec, q: &ListQuery<'_>, parts: &Parts, fixed: Option<&Compiled>) -> ApiResult<Prepared> {
    let filter = listing::compile_where(spec.fields, q.filter).map_err(ApiError::BadRequest)?;
    let keys = listing::compile_sort_keys(spec.fields, q.sort, spec.default_order, spec.tiebreak)
        .map_err(ApiError::BadRequest)?;
    let page = listing::parse_page(q.page, q.per_page).map_err(ApiError::BadRequest)?;
    let alias = spec.from.split_once(' ').map_or(spec.from, |(_, a)| a);
    // Each part's condition, with the fixed condition and the filter.
    let with_filter = |cond: &Compiled| {
        let mut sql = format!("({})", cond.sql);
        let mut binds = cond.binds.clone();
        if let Some(f) = fixed {
            sql.push_str(&format!(" AND ({})", f.sql));
            binds.extend(f.binds.iter().cloned());
        }
        sql.push_str(&format!(" AND ({})", filter.sql));
        binds.extend(filter.binds.iter().cloned());
        (sql, binds)
    };
    let conds: Vec<Statement> = parts.parts.iter().map(|p| with_filter(&p.cond)).collect();
    // The total: from the counts where the filter names only fields they hold.
    let from_counts = parts.counts.filter(|_| {
        parts.parts.iter().any(|p| p.counted.is_some())
            && where_keys(q.filter).is_some_and(|k| k.iter().all(|k| parts.countable.contains(&k.as_str())))
    });
    let mut terms = Vec::new();
    let mut binds = Vec::new();
    for (part, (cond, cond_binds)) in parts.parts.iter().zip(&conds) {
        match (&part.counted, from_counts) {
            (Some(counted), Some((counts, n))) => {
                let (sql, b) = with_filter(counted);
                terms.push(format!(
                    "(SELECT CAST(COALESCE(SUM({alias}.{n}), 0) AS BIGINT) FROM {counts} {alias} WHERE {sql})"
                ));
                binds.extend(b);
            }
            _ => {
                terms.push(format!("(SELECT COUNT(*) FROM {} WHERE {cond})", spec.from));
                binds.extend(cond_binds.iter().cloned());
            }
        }
    }
    Ok(Prepared { conds, keys, page, count: (format!("SELECT {}", terms.join(" + ")), binds) })
}

/// The statement of the page, given the total; `None` past the end.
fn page_statement(spec: &ListSpec, p: &Prepared, total: i64) -> ApiResult<Option<Statement>> {
    let (table, alias) = spec.from.split_once(' ').unwrap_or((spec.from, spec.from));
    let keys = &p.keys;
    let id = &keys.last().ok_or_else(|| ApiError::internal("a list without a tiebreak"))?.expr;
    // Rows [offset, end) of the order, or the same rows read from the end.
    let (offset, end) = (p.page.offset(), (p.page.offset() + p.page.limit()).min(total));
    if offset >= end {
        return Ok(None);
    }
    let reverse = offset > total - end;
    let (skip, take) = if reverse { (total - end, end - offset) } else { (offset, end - offset) };
    let named: Vec<SortKey> =
        keys.iter().enumerate().map(|(i, k)| SortKey { expr: format!("k{i}"), desc: k.desc }).collect();
    let select_keys =
        keys.iter().enumerate().map(|(i, k)| format!("{} AS k{i}", k.expr)).collect::<Vec<_>>().join(", ");
    let part_order = listing::render_order(keys, reverse);
    let merged_order = listing::render_order(&named, reverse);
    let mut binds = Vec::new();
    let mut selects = Vec::new();
    for (i, (cond, cond_binds)) in p.conds.iter().enumerate() {
        selects.push(format!(
            "SELECT * FROM (SELECT {select_keys} FROM {} WHERE {cond} ORDER BY {part_order} LIMIT ?) AS p{i}",
            spec.from
        ));
        binds.extend(cond_binds.iter().cloned());
        binds.push(Bind::Int(skip + take));
    }
    binds.push(Bind::Int(take));
    binds.push(Bind::Int(skip));
    let last = keys.len() - 1;
    let sql = format!(
        "SELECT {} FROM {table} {alias} WHERE {id} IN (SELECT merged.k{last} FROM ({}) AS merged ORDER BY {merged_order} LIMIT ? OFFSET ?) \
         ORDER BY {}",
        spec.columns,
        selects.join(" UNION ALL "),
        listing::render_order(keys, false),
    );
    Ok(Some((sql, binds)))
}

/// A page of a list whose visible records are [`Parts`]. `fixed` is a condition every part
/// adds (it must name only `countable` fields' columns when the counts are used).
///
/// The total is exact: from the counts kept as data when the filter names only fields they
/// hold, else counted part by part from the parts' indexes. The page's ids come from each
/// part's first `offset + limit` rows in order, merged; a page past the middle is read from the
/// end in the reverse order, so that no page reads more than half of what the caller sees.
pub async fn list_parts<T>(
    db: &Pool,
    spec: &ListSpec,
    q: &ListQuery<'_>,
    parts: Parts,
    fixed: Option<Compiled>,
) -> ApiResult<Found<T>>
where
    T: for<'r> FromRow<'r, AnyRow> + Send + Unpin,
{
    let prepared = prepare(spec, q, &parts, fixed.as_ref())?;
    let mut tx = begin_read(db).await?;
    let (sql, binds) = &prepared.count;
    let total: i64 = sqlx::query_scalar_with(numbered(sql.clone()), args(binds)?).fetch_one(&mut *tx).await?;
    let total = total.max(0);
    let items: Vec<T> = match page_statement(spec, &prepared, total)? {
        Some((sql, binds)) => sqlx::query_as_with(numbered(sql), args(&binds)?).fetch_all(&mut *tx).await?,
        None => Vec::new(),
    };
    tx.commit().await?;
    Ok(Found { items, total: total as u64, page: prepared.page })
}

/// The statements [`list_parts`] runs for a list whose total is `total` (the count, and the
/// page's unless it is past the end), numbered as run: for checking their plans.
#[doc(hidden)]
pub fn parts_statements(
    spec: &ListSpec,
    q: &ListQuery<'_>,
    parts: &Parts,
    fixed: Option<&Compiled>,
    total: i64,
) -> ApiResult<Vec<Statement>> {
    let prepared = prepare(spec, q, parts, fixed)?;
    let mut out = vec![prepared.count.clone()];
    out.extend(page_statement(spec, &prepared, total)?);
    Ok(out.into_iter().map(|(sql, b)| (numbered(sql).0, b)).collect())
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
