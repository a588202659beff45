//! Query-parameter compiler for the list routes.
//!
//! Every `GET /api/v1/<collection>` route accepts `where` (a Mongo-style JSON filter),
//! `sort` (a JSON object of field → `true` for descending / `false` for ascending),
//! `page` and `per_page`. This module turns those into SQLite fragments with `?`
//! placeholders plus the values to bind, so user input never becomes SQL text.
//! Each route describes its filterable columns with a table of [`Field`]s; the
//! operators each [`FieldKind`] accepts follow the reference hyper-schema.
//!
//! Error strings are returned verbatim to API users as 400 bodies, so they name
//! the offending field/operator and what would have been accepted instead.
//!
//! Longer than most files: every operator of every field kind is one table, kept beside its tests.

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, SecondsFormat, Utc};
use serde_json::Value;

/// How a field is stored and which `where` operators it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// Text column: `$eq $ne $in` plus the substring operators; `null` matches SQL NULL.
    Text,
    /// RFC 3339 timestamp stored as normalised UTC text: `$eq $ne $in $lt $lte $gt $gte $between`.
    DateTime,
    /// Integer column: `$eq $ne $in $lt $lte $gt $gte $between`.
    Integer,
    /// Floating-point column: same operators as [`FieldKind::Integer`].
    Number,
    /// Boolean stored as INTEGER 0/1: `$eq $ne $in` with `true`/`false`/`null`.
    Bool,
    /// Text column restricted to a fixed set of values (exact-match comparisons).
    Enum(&'static [&'static str]),
    /// The `$uri` pseudo-field: values are `/api/v1/<collection>/<id>`; the id is bound.
    Uri {
        /// Collection segment the URIs must name, e.g. `"samples"`.
        collection: &'static str,
    },
    /// A nullable column holding the id of another resource.
    Ref {
        /// Collection the referenced resource lives in, e.g. `"projects"`.
        collection: &'static str,
    },
    /// A many-valued reference (e.g. a sample's tags), held in a table of pairs.
    RefSet {
        /// Collection the referenced resources live in, e.g. `"tags"`.
        collection: &'static str,
        /// The row's id, e.g. `"s.id"`.
        row: &'static str,
        /// The table of pairs, aliased, e.g. `"sample_tags st"`: read from the referenced side
        /// (its index on `value`), not once per listed row.
        table: &'static str,
        /// Its column of the rows' ids, e.g. `"st.sample_id"`.
        holder: &'static str,
        /// Its column of the referenced ids, e.g. `"st.tag_id"`.
        value: &'static str,
    },
}

/// One filterable / sortable field of a list route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Name as used in the API (`where` / `sort` keys).
    pub name: &'static str,
    /// SQL expression for the column, e.g. `"s.created_at"`.
    pub column: &'static str,
    /// Storage type, which decides accepted operators and value types.
    pub kind: FieldKind,
    /// Whether the field may appear in `sort`.
    pub sortable: bool,
}

/// A value to bind to one `?` placeholder, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Bind {
    /// TEXT value.
    Text(String),
    /// INTEGER value.
    Int(i64),
    /// REAL value.
    Real(f64),
    /// SQL NULL.
    Null,
}

/// A compiled `WHERE` condition with its bind values.
#[derive(Debug, Clone, PartialEq)]
pub struct Compiled {
    /// `"1=1"` when there is no filter; otherwise parenthesised conditions joined with `" AND "`.
    pub sql: String,
    /// Values for the `?` placeholders in `sql`, in order.
    pub binds: Vec<Bind>,
}

const EQ_OPS: &[&str] = &["$eq", "$ne", "$in"];
const TEXT_OPS: &[&str] =
    &["$eq", "$ne", "$in", "$contains", "$icontains", "$startswith", "$istartswith", "$endswith", "$iendswith"];
const RANGE_OPS: &[&str] = &["$eq", "$ne", "$in", "$lt", "$lte", "$gt", "$gte", "$between"];
const REFSET_OPS: &[&str] = &["$eq", "$ne", "$in", "$contains", "$containsany", "$containsall"];

impl FieldKind {
    fn operators(&self) -> &'static [&'static str] {
        match self {
            // The reference schema also lists the substring operators for enum fields
            // (samples.visibility), so accept them there too.
            FieldKind::Text | FieldKind::Enum(_) => TEXT_OPS,
            FieldKind::DateTime | FieldKind::Integer | FieldKind::Number => RANGE_OPS,
            FieldKind::Bool | FieldKind::Uri { .. } | FieldKind::Ref { .. } => EQ_OPS,
            // The schema spells these $contains/$containsany/$containsall; $eq/$ne/$in are aliases.
            FieldKind::RefSet { .. } => REFSET_OPS,
        }
    }

    /// Human description of an acceptable value, for error messages.
    fn expects(&self, range: bool) -> String {
        match self {
            FieldKind::Text => "a string".into(),
            FieldKind::DateTime => "an RFC 3339 date-time string".into(),
            FieldKind::Integer if !range => "an integer".into(),
            FieldKind::Integer | FieldKind::Number => "a number".into(),
            FieldKind::Bool => "true or false".into(),
            FieldKind::Enum(allowed) => format!("one of: {}", allowed.join(", ")),
            FieldKind::Uri { collection } => format!("a \"/api/v1/{collection}/<id>\" string"),
            FieldKind::Ref { collection } | FieldKind::RefSet { collection, .. } => {
                format!("a reference like {{\"$ref\": \"/api/v1/{collection}/<id>\"}}")
            }
        }
    }
}

/// Compile a `where` parameter against a route's field table.
///
/// `None`, an empty string or `{}` yields the match-all condition `"1=1"`.
pub fn compile_where(fields: &[Field], where_json: Option<&str>) -> Result<Compiled, String> {
    let raw = where_json.map(str::trim).unwrap_or("");
    let mut conds: Vec<String> = Vec::new();
    let mut binds = Vec::new();
    if !raw.is_empty() {
        let parsed: Value = serde_json::from_str(raw).map_err(|e| format!("where is not valid JSON: {e}"))?;
        let Value::Object(map) = parsed else {
            return Err("where must be a JSON object, e.g. {\"filename\": \"reads.fastq\"}".into());
        };
        for (name, value) in &map {
            let field = fields.iter().find(|f| f.name == name).ok_or_else(|| {
                let known: Vec<&str> = fields.iter().map(|f| f.name).collect();
                format!("unknown field '{name}' in where; fields you can filter on: {}", known.join(", "))
            })?;
            match value {
                // `{"$ref": ..}` and `{"$date": ..}` are values, not operator objects.
                Value::Object(ops) if !ops.contains_key("$ref") && !ops.contains_key("$date") => {
                    if ops.is_empty() {
                        return Err(format!("field '{name}' has an empty operator object; use e.g. {{\"$eq\": ...}}"));
                    }
                    for (op, v) in ops {
                        conds.push(compile_op(field, op, v, &mut binds)?);
                    }
                }
                // A bare value means equality.
                _ => conds.push(compile_op(field, "$eq", value, &mut binds)?),
            }
        }
    }
    let sql = if conds.is_empty() {
        "1=1".to_string()
    } else {
        conds.iter().map(|c| format!("({c})")).collect::<Vec<_>>().join(" AND ")
    };
    Ok(Compiled { sql, binds })
}

/// Compile one `field op value` triple, pushing its binds; returns an unparenthesised condition.
fn compile_op(field: &Field, op: &str, v: &Value, binds: &mut Vec<Bind>) -> Result<String, String> {
    let name = field.name;
    if !field.kind.operators().contains(&op) {
        return Err(format!(
            "unknown operator '{op}' for field '{name}'; allowed: {}",
            field.kind.operators().join(", ")
        ));
    }
    let col = field.column;
    if let FieldKind::RefSet { row, table, holder, value, .. } = field.kind {
        return compile_refset(field, [row, table, holder, value], op, v, binds);
    }
    let cond = match op {
        "$eq" | "$ne" => match (value_bind(field, op, v, false)?, op == "$eq") {
            (Bind::Null, true) => format!("{col} IS NULL"),
            (Bind::Null, false) => format!("{col} IS NOT NULL"),
            (b, eq) => {
                binds.push(b);
                // Mongo semantics: "not equal" also matches rows where the field is null.
                if eq { format!("{col} = ?") } else { format!("{col} != ? OR {col} IS NULL") }
            }
        },
        "$in" => {
            let items = list(field, op, v)?;
            let mut has_null = false;
            let mut marks = Vec::new();
            for item in items {
                match value_bind(field, op, item, false)? {
                    Bind::Null => has_null = true,
                    b => {
                        binds.push(b);
                        marks.push("?");
                    }
                }
            }
            // SQL `x IN (NULL)` never matches, so nulls become an explicit IS NULL.
            match (marks.is_empty(), has_null) {
                (true, false) => "0=1".to_string(),
                (true, true) => format!("{col} IS NULL"),
                (false, false) => format!("{col} IN ({})", marks.join(", ")),
                (false, true) => format!("{col} IN ({}) OR {col} IS NULL", marks.join(", ")),
            }
        }
        "$lt" | "$lte" | "$gt" | "$gte" => {
            let sym = match op {
                "$lt" => "<",
                "$lte" => "<=",
                "$gt" => ">",
                _ => ">=",
            };
            binds.push(value_bind(field, op, v, true)?);
            format!("{col} {sym} ?")
        }
        "$between" => {
            let items = list(field, op, v)?;
            let [lo, hi] = items else {
                return Err(format!("'$between' on '{name}' needs a list of exactly two values"));
            };
            binds.push(value_bind(field, op, lo, true)?);
            binds.push(value_bind(field, op, hi, true)?);
            format!("{col} BETWEEN ? AND ?")
        }
        _ => {
            // Substring operators. SQLite's lower() folds ASCII only, which is enough for
            // filenames and identifiers.
            let Some(s) = v.as_str().filter(|s| !s.is_empty()) else {
                return Err(format!("field '{name}' expects a non-empty string for {op}"));
            };
            let ci = op.starts_with("$i");
            let (c, p) = if ci { (format!("lower({col})"), "lower(?)") } else { (col.to_string(), "?") };
            let times = if op.ends_with("contains") { 1 } else { 2 };
            for _ in 0..times {
                binds.push(Bind::Text(s.to_string()));
            }
            // Written so that SQLite and PostgreSQL read it alike (PostgreSQL's schema defines
            // `instr`; a negative start means different things to their `substr`).
            match op.trim_start_matches("$i").trim_start_matches('$') {
                "contains" => format!("instr({c}, {p}) > 0"),
                "startswith" => format!("substr({c}, 1, length(?)) = {p}"),
                _ => format!("substr({c}, length({c}) - length(?) + 1) = {p}"),
            }
        }
    };
    Ok(cond)
}

/// Operators on a many-valued reference, each one membership of the row among the holders of
/// the referenced ids, read from the table of pairs: `$containsall` holds those that hold
/// every id (counted), `$containsany` and `$in` any of them, `$ne` not the one.
fn compile_refset(
    field: &Field,
    [row, table, holder, value]: [&str; 4],
    op: &str,
    v: &Value,
    binds: &mut Vec<Bind>,
) -> Result<String, String> {
    match op {
        "$eq" | "$contains" | "$ne" => {
            binds.push(value_bind(field, op, v, false)?);
            let not = if op == "$ne" { "NOT " } else { "" };
            Ok(format!("{row} {not}IN (SELECT {holder} FROM {table} WHERE {value} = ?)"))
        }
        _ => {
            let mut ids = Vec::new();
            for item in list(field, op, v)? {
                let id = value_bind(field, op, item, false)?;
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            if ids.is_empty() {
                // Mongo: `$in: []` and `$all: []` both match no documents.
                return Ok("0=1".into());
            }
            let (n, marks) = (ids.len(), vec!["?"; ids.len()].join(", "));
            binds.extend(ids);
            if op == "$containsall" {
                // Each pair is stored once, so holding all `n` ids is having `n` of them.
                binds.push(Bind::Int(n as i64));
                Ok(format!(
                    "{row} IN (SELECT {holder} FROM {table} WHERE {value} IN ({marks}) GROUP BY {holder} HAVING COUNT(*) = ?)"
                ))
            } else {
                Ok(format!("{row} IN (SELECT {holder} FROM {table} WHERE {value} IN ({marks}))"))
            }
        }
    }
}

fn list<'a>(field: &Field, op: &str, v: &'a Value) -> Result<&'a [Value], String> {
    match v {
        Value::Array(items) => Ok(items),
        _ if op == "$between" => Err(format!("'$between' on '{}' needs a list of exactly two values", field.name)),
        _ => Err(format!("'{op}' on '{}' needs a list of values", field.name)),
    }
}

/// Convert one JSON value to a bind for `field`. `range` is true for ordering operators,
/// which never accept null and (for integer columns) also accept fractional numbers.
fn value_bind(field: &Field, op: &str, v: &Value, range: bool) -> Result<Bind, String> {
    let bad = || format!("field '{}' expects {} for {op}", field.name, field.kind.expects(range));
    let nullable = !matches!(field.kind, FieldKind::Uri { .. } | FieldKind::RefSet { .. });
    if v.is_null() {
        return if nullable && !range { Ok(Bind::Null) } else { Err(bad()) };
    }
    match field.kind {
        FieldKind::Text => v.as_str().map(|s| Bind::Text(s.into())).ok_or_else(bad),
        FieldKind::Enum(allowed) => match v.as_str() {
            Some(s) if allowed.contains(&s) => Ok(Bind::Text(s.into())),
            Some(s) => Err(format!("field '{}' must be one of: {} (got '{s}')", field.name, allowed.join(", "))),
            None => Err(bad()),
        },
        FieldKind::DateTime => match v {
            Value::String(s) => normalize_ts(s)
                .map(Bind::Text)
                .map_err(|e| format!("field '{}' expects an RFC 3339 date-time for {op}: {e}", field.name)),
            // Extended-JSON dates (`{"$date": <ms since epoch>}`) appear in the reference schema.
            Value::Object(m) => m
                .get("$date")
                .and_then(Value::as_i64)
                .and_then(DateTime::from_timestamp_millis)
                .map(|d| Bind::Text(ts(d)))
                .ok_or_else(bad),
            _ => Err(bad()),
        },
        FieldKind::Integer => match (v.as_i64(), v.as_f64()) {
            (Some(i), _) => Ok(Bind::Int(i)),
            (None, Some(f)) if range => Ok(Bind::Real(f)),
            _ => Err(bad()),
        },
        FieldKind::Number => v.as_f64().map(Bind::Real).ok_or_else(bad),
        FieldKind::Bool => v.as_bool().map(|b| Bind::Int(i64::from(b))).ok_or_else(bad),
        FieldKind::Uri { collection } => v.as_str().and_then(|s| uri_id(collection, s)).map(Bind::Text).ok_or_else(bad),
        FieldKind::Ref { collection } | FieldKind::RefSet { collection, .. } => {
            let s = match v {
                Value::Object(m) if m.len() == 1 => m.get("$ref").and_then(Value::as_str),
                Value::String(s) => Some(s.as_str()),
                _ => None,
            };
            // Accept a full resource address or a bare id (no slashes).
            let id = s.and_then(|s| {
                if s.starts_with('/') {
                    uri_id(collection, s)
                } else {
                    (!s.is_empty() && !s.contains('/')).then(|| s.to_string())
                }
            });
            id.map(Bind::Text).ok_or_else(bad)
        }
    }
}

/// The id from `/api/v1/<collection>/<id>`, if `s` has exactly that shape.
fn uri_id(collection: &str, s: &str) -> Option<String> {
    let id = s.strip_prefix("/api/v1/")?.strip_prefix(collection)?.strip_prefix('/')?;
    (!id.is_empty() && !id.contains('/')).then(|| id.to_string())
}

/// One key of an order: an SQL expression and its direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortKey {
    /// SQL expression, e.g. `s.size`.
    pub expr: String,
    /// Descending.
    pub desc: bool,
}

impl SortKey {
    /// `expr ASC NULLS FIRST` or `expr DESC NULLS LAST` (reversed when `reverse`): empty values
    /// first going up and last going down, as SQLite orders them (PostgreSQL's default is the
    /// other way round, so the clause is always written out, and its indexes say the same).
    pub fn render(&self, expr: &str, reverse: bool) -> String {
        if self.desc != reverse { format!("{expr} DESC NULLS LAST") } else { format!("{expr} ASC NULLS FIRST") }
    }
}

/// Renders an order as an ORDER BY body (without the keywords), or its exact reverse.
pub fn render_order(keys: &[SortKey], reverse: bool) -> String {
    if keys.is_empty() {
        return "NULL".into();
    }
    keys.iter().map(|k| k.render(&k.expr, reverse)).collect::<Vec<_>>().join(", ")
}

/// Compile a `sort` parameter into the keys of an order.
///
/// `{"size": true}` sorts descending, `false` ascending, keys in the order given. Without a
/// sort, `default_order` (`"<column> ASC|DESC"`) is used; `tiebreak` (a unique column) is always
/// appended last so that pagination is stable, in the direction of the key before it, so that
/// the whole order read backwards is the reverse order (one index serves both, and a deep page
/// can be read from the end).
pub fn compile_sort_keys(
    fields: &[Field],
    sort_json: Option<&str>,
    default_order: &str,
    tiebreak: &str,
) -> Result<Vec<SortKey>, String> {
    let mut keys: Vec<SortKey> = Vec::new();
    let raw = sort_json.map(str::trim).unwrap_or("");
    if !raw.is_empty() {
        let parsed: Value = serde_json::from_str(raw).map_err(|e| format!("sort is not valid JSON: {e}"))?;
        let Value::Object(map) = parsed else {
            return Err("sort must be a JSON object, e.g. {\"created_at\": true} (true = descending)".into());
        };
        for (name, dir) in &map {
            let field = fields.iter().find(|f| f.name == name && f.sortable).ok_or_else(|| {
                let ok: Vec<&str> = fields.iter().filter(|f| f.sortable).map(|f| f.name).collect();
                format!("unknown field '{name}' in sort; sortable fields: {}", ok.join(", "))
            })?;
            let desc = dir.as_bool().ok_or_else(|| {
                format!("sort values must be true (descending) or false (ascending); got {dir} for '{name}'")
            })?;
            keys.push(SortKey { expr: field.column.to_string(), desc });
        }
    }
    let parse = |s: &str| {
        let s = s.trim();
        match s.rsplit_once(' ') {
            Some((e, d)) if d.eq_ignore_ascii_case("DESC") => SortKey { expr: e.trim().into(), desc: true },
            Some((e, d)) if d.eq_ignore_ascii_case("ASC") => SortKey { expr: e.trim().into(), desc: false },
            _ => SortKey { expr: s.into(), desc: false },
        }
    };
    if keys.is_empty() && !default_order.trim().is_empty() {
        keys.push(parse(default_order));
    }
    if !tiebreak.trim().is_empty() {
        let mut tie = parse(tiebreak);
        tie.desc = keys.last().map_or(tie.desc, |k| k.desc);
        keys.push(tie);
    }
    Ok(keys)
}

/// [`compile_sort_keys`], rendered as an ORDER BY body (without the keywords); `"NULL"` (a
/// valid no-op) if everything is empty.
pub fn compile_sort(
    fields: &[Field],
    sort_json: Option<&str>,
    default_order: &str,
    tiebreak: &str,
) -> Result<String, String> {
    Ok(render_order(&compile_sort_keys(fields, sort_json, default_order, tiebreak)?, false))
}

/// Default `per_page` (per the spec; the reference schema says 20 but the prose governs here).
pub const DEFAULT_PER_PAGE: u32 = 50;
/// Largest accepted `per_page`.
pub const MAX_PER_PAGE: u32 = 1000;

/// A validated page request (1-based page number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// 1-based page number.
    pub page: u32,
    /// Records per page, `1..=MAX_PER_PAGE`.
    pub per_page: u32,
}

impl Page {
    /// SQL OFFSET for this page.
    pub fn offset(&self) -> i64 {
        i64::from(self.page.saturating_sub(1)) * i64::from(self.per_page)
    }

    /// SQL LIMIT for this page.
    pub fn limit(&self) -> i64 {
        i64::from(self.per_page)
    }
}

/// Parse `page` / `per_page` (defaults 1 and 50; `per_page` at most 1000).
pub fn parse_page(page: Option<&str>, per_page: Option<&str>) -> Result<Page, String> {
    fn num(name: &str, raw: Option<&str>, default: u32, max: u32) -> Result<u32, String> {
        let Some(raw) = raw else { return Ok(default) };
        let range = if max == u32::MAX {
            "an integer of at least 1".to_string()
        } else {
            format!("an integer from 1 to {max}")
        };
        // Parse wide so "-3" and "99999999999" get the range message, not a syntax one.
        match raw.trim().parse::<i128>() {
            Ok(n) if n >= 1 && n <= i128::from(max) => u32::try_from(n).map_err(|e| e.to_string()),
            _ => Err(format!("{name} must be {range}; got '{raw}'")),
        }
    }
    Ok(Page {
        page: num("page", page, 1, u32::MAX)?,
        per_page: num("per_page", per_page, DEFAULT_PER_PAGE, MAX_PER_PAGE)?,
    })
}

/// Percent-encode a query component: everything but the RFC 3986 unreserved set.
fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Longest query (`where`, `sort`, encoded) repeated on every link; past it only `next` is given.
const LINK_QUERY_MAX: usize = 1024;

/// Build an RFC 8288 `Link` header value with `self`, `first`, `prev`, `next` and `last`.
///
/// `other_params` (e.g. `where`, `sort`) are percent-encoded and repeated on every link;
/// any `page`/`per_page` among them are dropped in favour of the computed ones. When they are
/// long (a filter listing hundreds of ids), only `next` is given, so the header holds the
/// filter once rather than five times (a client walking the pages needs no other).
pub fn link_header(path: &str, other_params: &[(&str, &str)], page: &Page, total: u64) -> String {
    let per = u64::from(page.per_page.max(1));
    let last = u32::try_from(total.div_ceil(per).max(1)).unwrap_or(u32::MAX);
    let mut query = String::new();
    for (k, v) in other_params.iter().filter(|(k, _)| *k != "page" && *k != "per_page") {
        query.push_str(&format!("{}={}&", encode_component(k), encode_component(v)));
    }
    let link = |n: u32, rel: &str| format!("<{path}?{query}page={n}&per_page={}>; rel=\"{rel}\"", page.per_page);
    if query.len() > LINK_QUERY_MAX {
        return if page.page < last { link(page.page + 1, "next") } else { String::new() };
    }
    let mut rels = vec![link(page.page, "self"), link(1, "first")];
    if page.page > 1 {
        rels.push(link(page.page - 1, "prev"));
    }
    if page.page < last {
        rels.push(link(page.page + 1, "next"));
    }
    rels.push(link(last, "last"));
    rels.join(", ")
}

/// Formats a time the way the database stores and the API sends it: RFC 3339, UTC,
/// microseconds, with the offset written `+00:00` rather than `Z` (Python before 3.11, which the
/// real service's clients support, reads only that form).
pub fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, false)
}

/// Normalise a timestamp to the database form `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC).
///
/// Accepts RFC 3339 with any offset, a naive `YYYY-MM-DDTHH:MM:SS[.f]` (taken as UTC)
/// or a bare date `YYYY-MM-DD` (midnight UTC). Because every stored timestamp has this
/// exact shape, text comparison in SQL is time comparison.
pub fn normalize_ts(s: &str) -> Result<String, String> {
    let t = s.trim();
    let utc: DateTime<Utc> = if let Ok(dt) = DateTime::parse_from_rfc3339(t) {
        dt.with_timezone(&Utc)
    } else if let Ok(n) = NaiveDateTime::parse_from_str(t, "%Y-%m-%dT%H:%M:%S%.f")
        .or_else(|_| NaiveDateTime::parse_from_str(t, "%Y-%m-%d %H:%M:%S%.f"))
    {
        n.and_utc()
    } else if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        d.and_time(NaiveTime::MIN).and_utc()
    } else {
        return Err(format!(
            "'{s}' is not an RFC 3339 timestamp (e.g. 2026-11-22T08:01:02Z, 2026-11-22T08:01:02.5-07:00 or 2026-11-22)"
        ));
    };
    Ok(ts(utc))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const VIS: &[&str] = &["public", "shared", "private", "importing", "awaiting data"];
    const TAGS: &str = "SELECT st.sample_id FROM sample_tags st WHERE st.tag_id";

    fn fields() -> Vec<Field> {
        let f = |name, column, kind, sortable| Field { name, column, kind, sortable };
        vec![
            f("$uri", "s.id", FieldKind::Uri { collection: "samples" }, true),
            f("filename", "s.filename", FieldKind::Text, true),
            f("created_at", "s.created_at", FieldKind::DateTime, true),
            f("size", "s.size", FieldKind::Integer, true),
            f("score", "s.score", FieldKind::Number, false),
            f("starred", "m.starred", FieldKind::Bool, false),
            f("visibility", "s.visibility", FieldKind::Enum(VIS), true),
            f("project", "s.project_id", FieldKind::Ref { collection: "projects" }, true),
            f(
                "tags",
                "",
                FieldKind::RefSet {
                    collection: "tags",
                    row: "s.id",
                    table: "sample_tags st",
                    holder: "st.sample_id",
                    value: "st.tag_id",
                },
                false,
            ),
        ]
    }

    /// Assert that `json` compiles to exactly `sql` with `binds`.
    fn chk(json: &str, sql: &str, binds: &[Bind]) {
        let c = compile_where(&fields(), Some(json)).unwrap();
        assert_eq!((c.sql.as_str(), c.binds.as_slice()), (sql, binds), "{json}");
    }

    fn err(json: &str) -> String {
        compile_where(&fields(), Some(json)).unwrap_err()
    }

    fn t(s: &str) -> Bind {
        Bind::Text(s.into())
    }

    #[test]
    fn empty_and_bare_values() {
        for w in [None, Some(""), Some("  "), Some("{}")] {
            assert_eq!(compile_where(&fields(), w).unwrap(), Compiled { sql: "1=1".into(), binds: vec![] });
        }
        chk(
            r#"{"filename": "a.fq", "size": 10, "starred": true, "visibility": "private"}"#,
            "(s.filename = ?) AND (s.size = ?) AND (m.starred = ?) AND (s.visibility = ?)",
            &[t("a.fq"), Bind::Int(10), Bind::Int(1), t("private")],
        );
    }

    #[test]
    fn null_handling() {
        chk(r#"{"filename": null}"#, "(s.filename IS NULL)", &[]);
        chk(r#"{"filename": {"$ne": null}}"#, "(s.filename IS NOT NULL)", &[]);
        chk(r#"{"filename": {"$ne": "x"}}"#, "(s.filename != ? OR s.filename IS NULL)", &[t("x")]);
        chk(
            r#"{"size": {"$in": [1, null, 2]}}"#,
            "(s.size IN (?, ?) OR s.size IS NULL)",
            &[Bind::Int(1), Bind::Int(2)],
        );
        chk(r#"{"project": {"$in": [null]}}"#, "(s.project_id IS NULL)", &[]);
        assert_eq!(err(r#"{"size": {"$gt": null}}"#), "field 'size' expects a number for $gt");
        assert_eq!(err(r#"{"$uri": null}"#), "field '$uri' expects a \"/api/v1/samples/<id>\" string for $eq");
        assert!(err(r#"{"tags": null}"#).starts_with("field 'tags' expects a reference"));
    }

    #[test]
    fn text_operators() {
        chk(
            r#"{"filename": {"$contains": "a%_b", "$icontains": "X"}}"#,
            "(instr(s.filename, ?) > 0) AND (instr(lower(s.filename), lower(?)) > 0)",
            &[t("a%_b"), t("X")],
        );
        chk(r#"{"filename": {"$startswith": "ab"}}"#, "(substr(s.filename, 1, length(?)) = ?)", &[t("ab"), t("ab")]);
        chk(
            r#"{"filename": {"$istartswith": "A"}}"#,
            "(substr(lower(s.filename), 1, length(?)) = lower(?))",
            &[t("A"), t("A")],
        );
        chk(
            r#"{"filename": {"$endswith": ".fq"}}"#,
            "(substr(s.filename, length(s.filename) - length(?) + 1) = ?)",
            &[t(".fq"), t(".fq")],
        );
        chk(
            r#"{"filename": {"$iendswith": ".Q"}}"#,
            "(substr(lower(s.filename), length(lower(s.filename)) - length(?) + 1) = lower(?))",
            &[t(".Q"), t(".Q")],
        );
        chk(r#"{"filename": {"$in": ["a", "b"]}}"#, "(s.filename IN (?, ?))", &[t("a"), t("b")]);
        assert_eq!(
            err(r#"{"filename": {"$contains": ""}}"#),
            "field 'filename' expects a non-empty string for $contains"
        );
        assert_eq!(err(r#"{"filename": 3}"#), "field 'filename' expects a string for $eq");
    }

    #[test]
    fn numeric_operators() {
        chk(
            r#"{"size": {"$gte": 5, "$lt": 10.5}}"#,
            "(s.size >= ?) AND (s.size < ?)",
            &[Bind::Int(5), Bind::Real(10.5)],
        );
        chk(r#"{"size": {"$lte": 1, "$gt": 0}}"#, "(s.size <= ?) AND (s.size > ?)", &[Bind::Int(1), Bind::Int(0)]);
        chk(r#"{"score": {"$between": [1, 2.5]}}"#, "(s.score BETWEEN ? AND ?)", &[Bind::Real(1.0), Bind::Real(2.5)]);
        chk(r#"{"score": {"$ne": 3}}"#, "(s.score != ? OR s.score IS NULL)", &[Bind::Real(3.0)]);
        assert_eq!(err(r#"{"size": {"$gt": "5"}}"#), "field 'size' expects a number for $gt");
        assert_eq!(err(r#"{"size": 1.5}"#), "field 'size' expects an integer for $eq");
        assert_eq!(err(r#"{"size": {"$in": 3}}"#), "'$in' on 'size' needs a list of values");
    }

    #[test]
    fn datetime_values_are_normalised() {
        chk(
            r#"{"created_at": {"$between": ["2015-09-25T17:27:30-07:00", "2015-09-27"]}}"#,
            "(s.created_at BETWEEN ? AND ?)",
            &[t("2015-09-26T00:27:30.000000+00:00"), t("2015-09-27T00:00:00.000000+00:00")],
        );
        chk(
            r#"{"created_at": {"$gt": {"$date": 1000}}}"#,
            "(s.created_at > ?)",
            &[t("1970-01-01T00:00:01.000000+00:00")],
        );
        chk(
            r#"{"created_at": "2020-01-01T00:00:00Z"}"#,
            "(s.created_at = ?)",
            &[t("2020-01-01T00:00:00.000000+00:00")],
        );
        assert!(
            err(r#"{"created_at": {"$lt": "yesterday"}}"#)
                .starts_with("field 'created_at' expects an RFC 3339 date-time for $lt: 'yesterday' is not")
        );
        let msg = "'$between' on 'created_at' needs a list of exactly two values";
        assert_eq!(err(r#"{"created_at": {"$between": ["2020-01-01"]}}"#), msg);
        assert_eq!(err(r#"{"created_at": {"$between": "2020-01-01"}}"#), msg);
    }

    #[test]
    fn bool_enum_uri_ref() {
        chk(r#"{"starred": {"$ne": false}}"#, "(m.starred != ? OR m.starred IS NULL)", &[Bind::Int(0)]);
        assert_eq!(err(r#"{"starred": "yes"}"#), "field 'starred' expects true or false for $eq");
        assert!(err(r#"{"starred": {"$gt": true}}"#).starts_with("unknown operator '$gt' for field 'starred'"));
        chk(r#"{"visibility": {"$in": ["awaiting data"]}}"#, "(s.visibility IN (?))", &[t("awaiting data")]);
        assert_eq!(
            err(r#"{"visibility": {"$in": ["public", "Secret"]}}"#),
            "field 'visibility' must be one of: public, shared, private, importing, awaiting data (got 'Secret')"
        );
        chk(r#"{"$uri": {"$in": ["/api/v1/samples/a", "/api/v1/samples/b"]}}"#, "(s.id IN (?, ?))", &[t("a"), t("b")]);
        chk(r#"{"$uri": {"$eq": "/api/v1/samples/a"}}"#, "(s.id = ?)", &[t("a")]);
        assert!(err(r#"{"$uri": "/api/v1/projects/abc"}"#).starts_with("field '$uri' expects"));
        assert!(err(r#"{"$uri": "abc"}"#).starts_with("field '$uri' expects"));
        for v in [r#"{"$ref": "/api/v1/projects/p1"}"#, r#""/api/v1/projects/p1""#, r#""p1""#] {
            chk(&format!(r#"{{"project": {v}}}"#), "(s.project_id = ?)", &[t("p1")]);
        }
        chk(r#"{"project": {"$ne": "p1"}}"#, "(s.project_id != ? OR s.project_id IS NULL)", &[t("p1")]);
        assert_eq!(
            err(r#"{"project": {"$ref": "/api/v1/samples/p1"}}"#),
            r#"field 'project' expects a reference like {"$ref": "/api/v1/projects/<id>"} for $eq"#
        );
    }

    #[test]
    fn refset_operators() {
        let has = format!("s.id IN ({TAGS} = ?)");
        chk(r#"{"tags": {"$ref": "/api/v1/tags/t1"}}"#, &format!("({has})"), &[t("t1")]);
        chk(r#"{"tags": {"$contains": "t1"}}"#, &format!("({has})"), &[t("t1")]);
        chk(r#"{"tags": {"$ne": "t1"}}"#, &format!("(s.id NOT IN ({TAGS} = ?))"), &[t("t1")]);
        chk(
            r#"{"tags": {"$in": [{"$ref": "/api/v1/tags/a"}, "b", "a"]}}"#,
            &format!("(s.id IN ({TAGS} IN (?, ?)))"),
            &[t("a"), t("b")],
        );
        chk(
            r#"{"tags": {"$containsall": ["a", "b"]}}"#,
            &format!("(s.id IN ({TAGS} IN (?, ?) GROUP BY st.sample_id HAVING COUNT(*) = ?))"),
            &[t("a"), t("b"), Bind::Int(2)],
        );
        chk(r#"{"tags": {"$containsany": ["a"]}}"#, &format!("(s.id IN ({TAGS} IN (?)))"), &[t("a")]);
        chk(r#"{"tags": {"$containsall": []}}"#, "(0=1)", &[]);
    }

    #[test]
    fn empty_in_and_shape_errors() {
        chk(r#"{"filename": {"$in": []}, "size": 3}"#, "(0=1) AND (s.size = ?)", &[Bind::Int(3)]);
        assert!(err("{nope").starts_with("where is not valid JSON: "));
        assert!(err("[1]").starts_with("where must be a JSON object"));
        assert!(err(r#"{"filename": {}}"#).contains("empty operator object"));
        assert_eq!(
            err(r#"{"foo": 1}"#),
            "unknown field 'foo' in where; fields you can filter on: \
             $uri, filename, created_at, size, score, starred, visibility, project, tags"
        );
        assert_eq!(
            err(r#"{"filename": {"$regex": "a.*"}}"#),
            "unknown operator '$regex' for field 'filename'; allowed: \
             $eq, $ne, $in, $contains, $icontains, $startswith, $istartswith, $endswith, $iendswith"
        );
    }

    #[test]
    fn sorting() {
        let fs = fields();
        let sort = |s: Option<&str>, default: &str, tie: &str| compile_sort(&fs, s, default, tie);
        assert_eq!(
            sort(Some(r#"{"size": true, "filename": false}"#), "d", "s.id ASC").unwrap(),
            "s.size DESC NULLS LAST, s.filename ASC NULLS FIRST, s.id ASC NULLS FIRST"
        );
        assert_eq!(
            sort(Some(r#"{"filename": false, "size": true}"#), "d", "s.id ASC").unwrap(),
            "s.filename ASC NULLS FIRST, s.size DESC NULLS LAST, s.id DESC NULLS LAST"
        );
        for none in [None, Some(""), Some("{}")] {
            assert_eq!(
                sort(none, "s.created_at ASC", "s.id ASC").unwrap(),
                "s.created_at ASC NULLS FIRST, s.id ASC NULLS FIRST"
            );
        }
        let keys = compile_sort_keys(&fs, Some(r#"{"size": true}"#), "s.created_at ASC", "s.id ASC").unwrap();
        assert_eq!(render_order(&keys, true), "s.size ASC NULLS FIRST, s.id ASC NULLS FIRST");
        assert_eq!(sort(None, "", "").unwrap(), "NULL");
        assert_eq!(
            sort(Some(r#"{"score": true}"#), "", "s.id").unwrap_err(),
            "unknown field 'score' in sort; sortable fields: $uri, filename, created_at, size, visibility, project"
        );
        assert!(
            sort(Some(r#"{"size": 1}"#), "", "")
                .unwrap_err()
                .starts_with("sort values must be true (descending) or false (ascending)")
        );
        assert!(sort(Some("true"), "", "").unwrap_err().starts_with("sort must be a JSON object"));
        assert!(sort(Some("{"), "", "").unwrap_err().starts_with("sort is not valid JSON"));
    }

    #[test]
    fn page_parsing() {
        let p = parse_page(None, None).unwrap();
        assert_eq!((p.page, p.per_page, p.offset(), p.limit()), (1, 50, 0, 50));
        let p = parse_page(Some("3"), Some("1000")).unwrap();
        assert_eq!((p.offset(), p.limit()), (2000, 1000));
        assert_eq!(parse_page(Some("4294967295"), Some("1000")).unwrap().offset(), 4_294_967_294_000);
        assert_eq!(parse_page(Some("0"), None).unwrap_err(), "page must be an integer of at least 1; got '0'");
        assert_eq!(
            parse_page(None, Some("1001")).unwrap_err(),
            "per_page must be an integer from 1 to 1000; got '1001'"
        );
        for (page, per_page) in [
            (None, Some("0")),
            (Some("1.5"), None),
            (Some("abc"), None),
            (Some("-2"), None),
            (Some("9999999999"), None),
        ] {
            assert!(parse_page(page, per_page).is_err());
        }
    }

    #[test]
    fn link_headers() {
        let h = |page, total| link_header("/api/v1/samples", &[], &Page { page, per_page: 50 }, total);
        let l = |n: u32, rel: &str| format!("</api/v1/samples?page={n}&per_page=50>; rel=\"{rel}\"");
        assert_eq!(h(1, 120), [l(1, "self"), l(1, "first"), l(2, "next"), l(3, "last")].join(", "));
        assert_eq!(h(2, 120), [l(2, "self"), l(1, "first"), l(1, "prev"), l(3, "next"), l(3, "last")].join(", "));
        assert_eq!(h(3, 120), [l(3, "self"), l(1, "first"), l(2, "prev"), l(3, "last")].join(", "));
        assert_eq!(h(1, 0), [l(1, "self"), l(1, "first"), l(1, "last")].join(", "));
        assert_eq!(h(2, 100), [l(2, "self"), l(1, "first"), l(1, "prev"), l(2, "last")].join(", "));
    }

    #[test]
    fn a_long_filter_is_linked_once() {
        let ids: Vec<String> = (0..500).map(|i| format!("\"{i:032x}\"")).collect();
        let filter = format!("{{\"tags\": {{\"$containsany\": [{}]}}}}", ids.join(","));
        let page = Page { page: 2, per_page: 10 };
        let h = link_header("/api/v1/samples", &[("where", &filter)], &page, 100);
        assert_eq!(h.matches("rel=").count(), 1, "{h}");
        assert!(h.ends_with("rel=\"next\"") && h.contains("page=3&"), "{h}");
        assert!(h.len() < filter.len() * 3 + 200);
        let page = Page { page: 10, per_page: 10 };
        assert_eq!(link_header("/api/v1/samples", &[("where", &filter)], &page, 100), "");
    }

    #[test]
    fn link_header_encodes_params() {
        let params = [("where", r#"{"filename": "a b&c/é"}"#), ("page", "9"), ("sort", r#"{"size":true}"#)];
        let h = link_header("/api/v1/samples", &params, &Page { page: 1, per_page: 10 }, 5);
        let want = "</api/v1/samples?where=%7B%22filename%22%3A%20%22a%20b%26c%2F%C3%A9%22%7D\
                    &sort=%7B%22size%22%3Atrue%7D&page=1&per_page=10>; rel=\"self\"";
        assert!(h.starts_with(want), "{h}");
        assert_eq!(encode_component("Az09-._~+"), "Az09-._~%2B");
    }

    #[test]
    fn timestamps() {
        for (input, want) in [
            ("2015-09-25T17:27:30.622286-07:00", "2015-09-26T00:27:30.622286+00:00"),
            ("2026-11-22T08:01:02.123456+00:00", "2026-11-22T08:01:02.123456+00:00"),
            ("2026-11-22T08:01:02+00:00", "2026-11-22T08:01:02.000000+00:00"),
            ("2026-11-22T08:01:02", "2026-11-22T08:01:02.000000+00:00"),
            ("2026-11-22T08:01:02.5", "2026-11-22T08:01:02.500000+00:00"),
            ("2026-11-22 08:01:02.25", "2026-11-22T08:01:02.250000+00:00"),
            ("2026-11-22", "2026-11-22T00:00:00.000000+00:00"),
        ] {
            assert_eq!(normalize_ts(input).unwrap(), want, "{input}");
        }
        assert!(normalize_ts("2026-13-01").is_err());
        assert!(normalize_ts("now").unwrap_err().contains("not an RFC 3339 timestamp"));
    }
}
