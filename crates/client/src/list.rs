//! Lists: typed `where` and `sort` builders, the list request, and the page it answers (read from
//! the `Link` and `X-Total-Count` headers), which can become a stream of every item.

use std::marker::PhantomData;

use futures::stream::{self, Stream, StreamExt, TryStreamExt};
use mgds_api::Ref;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::{Client, Error, Result, decode};

/// A Mongo-style `where` clause, built one condition at a time. Several conditions on one field
/// are combined (`{"created_at": {"$gte": a, "$lt": b}}`); all fields must match.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    fields: Map<String, Value>,
}

impl Filter {
    /// An empty filter (matches everything).
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether no condition was added.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Adds `op: value` to the operator object of `field`.
    pub fn op(mut self, field: &str, op: &str, value: impl Into<Value>) -> Self {
        let entry = self.fields.entry(field.to_string()).or_insert_with(|| Value::Object(Map::new()));
        // A bare value (equality) becomes `$eq` when another operator joins it.
        let is_operator_object =
            matches!(entry, Value::Object(m) if !m.contains_key("$ref") && !m.contains_key("$date"));
        if !is_operator_object {
            let bare = entry.take();
            let mut m = Map::new();
            m.insert("$eq".into(), bare);
            *entry = Value::Object(m);
        }
        if let Value::Object(m) = entry {
            m.insert(op.to_string(), value.into());
        }
        self
    }

    /// `field` equals `value`. On `$uri` this is `{"$uri": {"$eq": ...}}`, as the spec writes it;
    /// elsewhere the bare value.
    pub fn eq(mut self, field: &str, value: impl Into<Value>) -> Self {
        if field == "$uri" || self.fields.contains_key(field) {
            return self.op(field, "$eq", value);
        }
        self.fields.insert(field.to_string(), value.into());
        self
    }

    /// `field` refers to the resource `r`: `{"project": {"$ref": "/api/v1/projects/<id>"}}`.
    pub fn eq_ref(self, field: &str, r: &Ref) -> Self {
        self.eq(field, ref_value(r))
    }

    /// `field` is null or absent (`{"project": null}`).
    pub fn is_null(self, field: &str) -> Self {
        self.eq(field, Value::Null)
    }

    /// `field` differs from `value` (or is null).
    pub fn ne(self, field: &str, value: impl Into<Value>) -> Self {
        self.op(field, "$ne", value)
    }

    /// `field` is one of `values`.
    pub fn is_in<V: Into<Value>>(self, field: &str, values: impl IntoIterator<Item = V>) -> Self {
        self.op(field, "$in", Value::Array(values.into_iter().map(Into::into).collect()))
    }

    /// `field` refers to one of `refs`.
    pub fn in_refs<'r>(self, field: &str, refs: impl IntoIterator<Item = &'r Ref>) -> Self {
        self.op(field, "$in", Value::Array(refs.into_iter().map(ref_value).collect()))
    }

    /// `field < value`.
    pub fn lt(self, field: &str, value: impl Into<Value>) -> Self {
        self.op(field, "$lt", value)
    }

    /// `field <= value`.
    pub fn lte(self, field: &str, value: impl Into<Value>) -> Self {
        self.op(field, "$lte", value)
    }

    /// `field > value`.
    pub fn gt(self, field: &str, value: impl Into<Value>) -> Self {
        self.op(field, "$gt", value)
    }

    /// `field >= value`.
    pub fn gte(self, field: &str, value: impl Into<Value>) -> Self {
        self.op(field, "$gte", value)
    }

    /// `low <= field <= high` (for dates: RFC 3339 strings).
    pub fn between(self, field: &str, low: impl Into<Value>, high: impl Into<Value>) -> Self {
        self.op(field, "$between", Value::Array(vec![low.into(), high.into()]))
    }

    /// `field` contains `text` (case-sensitive).
    pub fn contains(self, field: &str, text: &str) -> Self {
        self.op(field, "$contains", text)
    }

    /// `field` contains `text`, ignoring case.
    pub fn icontains(self, field: &str, text: &str) -> Self {
        self.op(field, "$icontains", text)
    }

    /// `field` starts with `text`.
    pub fn startswith(self, field: &str, text: &str) -> Self {
        self.op(field, "$startswith", text)
    }

    /// `field` starts with `text`, ignoring case.
    pub fn istartswith(self, field: &str, text: &str) -> Self {
        self.op(field, "$istartswith", text)
    }

    /// `field` ends with `text`.
    pub fn endswith(self, field: &str, text: &str) -> Self {
        self.op(field, "$endswith", text)
    }

    /// `field` ends with `text`, ignoring case.
    pub fn iendswith(self, field: &str, text: &str) -> Self {
        self.op(field, "$iendswith", text)
    }

    /// A many-valued reference `field` (a sample's `tags`) holds every one of `refs`.
    pub fn contains_all<'r>(self, field: &str, refs: impl IntoIterator<Item = &'r Ref>) -> Self {
        self.op(field, "$containsall", Value::Array(refs.into_iter().map(ref_value).collect()))
    }

    /// A many-valued reference `field` holds at least one of `refs`.
    pub fn contains_any<'r>(self, field: &str, refs: impl IntoIterator<Item = &'r Ref>) -> Self {
        self.op(field, "$containsany", Value::Array(refs.into_iter().map(ref_value).collect()))
    }

    /// The clause as a JSON value.
    pub fn to_value(&self) -> Value {
        Value::Object(self.fields.clone())
    }

    /// The clause as the JSON text sent in `where`.
    pub fn to_json(&self) -> String {
        self.to_value().to_string()
    }
}

fn ref_value(r: &Ref) -> Value {
    let mut m = Map::new();
    m.insert("$ref".into(), Value::String(r.uri.clone()));
    Value::Object(m)
}

/// A Mongo-style `sort` clause: fields in order of precedence, `true` for descending.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sort {
    fields: Map<String, Value>,
}

impl Sort {
    /// Sorts by `field`, largest (or newest) first.
    pub fn desc(field: &str) -> Self {
        Sort::default().then_desc(field)
    }

    /// Sorts by `field`, smallest (or oldest) first.
    pub fn asc(field: &str) -> Self {
        Sort::default().then_asc(field)
    }

    /// Then by `field`, descending.
    pub fn then_desc(mut self, field: &str) -> Self {
        self.fields.insert(field.to_string(), Value::Bool(true));
        self
    }

    /// Then by `field`, ascending.
    pub fn then_asc(mut self, field: &str) -> Self {
        self.fields.insert(field.to_string(), Value::Bool(false));
        self
    }

    /// The clause as the JSON text sent in `sort`.
    pub fn to_json(&self) -> String {
        Value::Object(self.fields.clone()).to_string()
    }
}

/// The relations of a `Link` header that a list uses; others (`related`, ...) are ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    /// This page.
    pub this: Option<String>,
    /// The first page.
    pub first: Option<String>,
    /// The previous page.
    pub prev: Option<String>,
    /// The next page; absent on the last one.
    pub next: Option<String>,
    /// The last page.
    pub last: Option<String>,
}

impl Links {
    fn is_empty(&self) -> bool {
        self.this.is_none() && self.first.is_none() && self.prev.is_none() && self.next.is_none() && self.last.is_none()
    }
}

/// Parses an RFC 8288 `Link` header (`<url>; rel="next", <url>; rel="last"`). Relations it does
/// not know are ignored, as are malformed entries.
pub fn parse_link_header(value: &str) -> Links {
    let mut links = Links::default();
    let mut rest = value;
    while let Some(open) = rest.find('<') {
        let Some(close) = rest[open..].find('>') else { break };
        let target = rest[open + 1..open + close].trim().to_string();
        rest = &rest[open + close + 1..];
        // Parameters run to the next comma that is outside quotes.
        let mut end = rest.len();
        let mut quoted = false;
        for (i, c) in rest.char_indices() {
            match c {
                '"' => quoted = !quoted,
                ',' if !quoted => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        let params = &rest[..end];
        rest = &rest[end..];
        for param in params.split(';') {
            let Some((k, v)) = param.split_once('=') else { continue };
            if !k.trim().eq_ignore_ascii_case("rel") {
                continue;
            }
            for rel in v.trim().trim_matches('"').split_ascii_whitespace() {
                let slot = match rel.to_ascii_lowercase().as_str() {
                    "self" => &mut links.this,
                    "first" => &mut links.first,
                    "prev" | "previous" => &mut links.prev,
                    "next" => &mut links.next,
                    "last" => &mut links.last,
                    _ => continue,
                };
                slot.get_or_insert_with(|| target.clone());
            }
        }
    }
    links
}

/// The `page` query parameter of a link, if it has one.
fn page_of(client: &Client, link: &str) -> Option<u32> {
    let url = client.base_url.join(link).ok()?;
    url.query_pairs().find(|(k, _)| k == "page").and_then(|(_, v)| v.parse().ok())
}

/// One page of a list, with what the service said about the rest.
#[derive(Debug, Clone)]
pub struct Page<T> {
    /// The records of this page.
    pub items: Vec<T>,
    /// Records matching the filter on all pages (`X-Total-Count`), if the service said.
    pub total: Option<u64>,
    /// This page's number (from 1).
    pub page: u32,
    /// The page size asked for.
    pub per_page: u32,
    /// The `Link` header's relations.
    pub links: Links,
    request: ListRequest<T>,
}

impl<T> Page<T> {
    /// The number of the next page, if there is one: from the `next` link, or, if the service
    /// sends no `Link`, from `X-Total-Count` or a full page.
    pub fn next_page(&self) -> Option<u32> {
        if !self.links.is_empty() {
            let next = self.links.next.as_deref()?;
            return Some(page_of(&self.request.client, next).unwrap_or(self.page + 1)).filter(|n| *n > self.page);
        }
        let more = match self.total {
            Some(total) => u64::from(self.page) * u64::from(self.per_page) < total,
            None => self.items.len() >= self.per_page as usize && !self.items.is_empty(),
        };
        more.then_some(self.page + 1)
    }

    /// The number of the last page, from the `last` link or `X-Total-Count`.
    pub fn last_page(&self) -> Option<u32> {
        if let Some(n) = self.links.last.as_deref().and_then(|l| page_of(&self.request.client, l)) {
            return Some(n);
        }
        let total = self.total?;
        u32::try_from(total.div_ceil(u64::from(self.per_page.max(1))).max(1)).ok()
    }
}

impl<T: DeserializeOwned + Send + 'static> Page<T> {
    /// The request for the next page, if there is one.
    pub fn next_request(&self) -> Option<ListRequest<T>> {
        let n = self.next_page()?;
        Some(self.request.clone().page(n))
    }

    /// This page's items, then those of every following page, fetched as they are needed.
    pub fn into_stream(self) -> impl Stream<Item = Result<T>> + Send + 'static {
        let next = self.next_request();
        let first = stream::iter(self.items.into_iter().map(Ok));
        first.chain(pages_from(next))
    }
}

/// Every item of the pages from `start` on.
fn pages_from<T: DeserializeOwned + Send + 'static>(
    start: Option<ListRequest<T>>,
) -> impl Stream<Item = Result<T>> + Send + 'static {
    stream::try_unfold(start, |req| async move {
        let Some(req) = req else { return Ok::<_, Error>(None) };
        let page = req.send().await?;
        let next = page.next_request();
        Ok(Some((page.items, next)))
    })
    .map_ok(|items| stream::iter(items.into_iter().map(Ok)))
    .try_flatten()
}

/// A list request: filter, sort and page, always sent with explicit `page` and `per_page`.
pub struct ListRequest<T> {
    client: Client,
    segments: Vec<String>,
    filter: Option<Filter>,
    sort: Option<Sort>,
    page: u32,
    per_page: u32,
    _items: PhantomData<fn() -> T>,
}

impl<T> Clone for ListRequest<T> {
    fn clone(&self) -> Self {
        ListRequest {
            client: self.client.clone(),
            segments: self.segments.clone(),
            filter: self.filter.clone(),
            sort: self.sort.clone(),
            page: self.page,
            per_page: self.per_page,
            _items: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for ListRequest<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListRequest")
            .field("path", &self.segments.join("/"))
            .field("filter", &self.filter)
            .field("sort", &self.sort)
            .field("page", &self.page)
            .field("per_page", &self.per_page)
            .finish()
    }
}

/// The page size a list asks for unless told otherwise (the spec's default, sent explicitly
/// because the real service defaults to 20).
pub(crate) const DEFAULT_PER_PAGE: u32 = mgds_api::DEFAULT_PER_PAGE;

impl<T> ListRequest<T> {
    pub(crate) fn new(client: Client, segments: &[&str]) -> Self {
        ListRequest {
            client,
            segments: segments.iter().map(|s| s.to_string()).collect(),
            filter: None,
            sort: None,
            page: 1,
            per_page: DEFAULT_PER_PAGE,
            _items: PhantomData,
        }
    }

    /// Only records matching `filter`.
    pub fn filter(mut self, filter: Filter) -> Self {
        self.filter = (!filter.is_empty()).then_some(filter);
        self
    }

    /// In this order (the service ends every order with the id, so pages never overlap).
    pub fn sort(mut self, sort: Sort) -> Self {
        self.sort = Some(sort);
        self
    }

    /// The page to fetch, from 1.
    pub fn page(mut self, page: u32) -> Self {
        self.page = page.max(1);
        self
    }

    /// Records per page, 1 to 1000 ([`mgds_api::MAX_PER_PAGE`]).
    pub fn per_page(mut self, per_page: u32) -> Self {
        self.per_page = per_page.clamp(1, mgds_api::MAX_PER_PAGE);
        self
    }

    fn url(&self) -> url::Url {
        let segments: Vec<&str> = self.segments.iter().map(String::as_str).collect();
        let mut url = self.client.api_url(&segments);
        {
            let mut q = url.query_pairs_mut();
            if let Some(f) = &self.filter {
                q.append_pair("where", &f.to_json());
            }
            if let Some(s) = &self.sort {
                q.append_pair("sort", &s.to_json());
            }
            q.append_pair("page", &self.page.to_string());
            q.append_pair("per_page", &self.per_page.to_string());
        }
        url
    }
}

impl<T: DeserializeOwned + Send + 'static> ListRequest<T> {
    /// Fetches the page.
    pub async fn send(self) -> Result<Page<T>> {
        let url = self.url();
        let what = format!("GET {}", url.path());
        let answer = self.client.get_list(url).await?;
        let items: Vec<T> = decode(&what, &answer.body)?;
        let total =
            answer.headers.get("x-total-count").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse().ok());
        let links =
            answer.headers.get_all("link").iter().filter_map(|v| v.to_str().ok()).collect::<Vec<_>>().join(", ");
        Ok(Page {
            items,
            total,
            page: self.page,
            per_page: self.per_page,
            links: parse_link_header(&links),
            request: self,
        })
    }

    /// Every matching record, from this request's page on, fetched page by page as the stream
    /// is read.
    pub fn stream(self) -> impl Stream<Item = Result<T>> + Send + 'static {
        pages_from(Some(self))
    }

    /// Every matching record, from this request's page on, collected.
    pub async fn all(self) -> Result<Vec<T>> {
        self.stream().try_collect().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn link_header_literal() {
        let h = r#"</api/v1/samples?page=2&per_page=50>; rel="self", </api/v1/samples?page=1&per_page=50>; rel="first", </api/v1/samples?page=1&per_page=50>; rel="prev", </api/v1/samples?page=3&per_page=50>; rel="next", </api/v1/samples?page=7&per_page=50>; rel="last", </api/v1/samples/schema>; rel="related""#;
        let l = parse_link_header(h);
        assert_eq!(l.this.as_deref(), Some("/api/v1/samples?page=2&per_page=50"));
        assert_eq!(l.first.as_deref(), Some("/api/v1/samples?page=1&per_page=50"));
        assert_eq!(l.prev.as_deref(), Some("/api/v1/samples?page=1&per_page=50"));
        assert_eq!(l.next.as_deref(), Some("/api/v1/samples?page=3&per_page=50"));
        assert_eq!(l.last.as_deref(), Some("/api/v1/samples?page=7&per_page=50"));
    }

    #[test]
    fn link_header_oddities() {
        // Unknown relations ignored; several relations in one; commas inside quotes and URLs;
        // unquoted values; extra parameters; no links at all.
        let h = r#"<https://x.org/a?b=1,2>; title="a, b"; rel="next last", <https://x.org/c>; rel=related, <https://x.org/d>;rel=PREV"#;
        let l = parse_link_header(h);
        assert_eq!(l.next.as_deref(), Some("https://x.org/a?b=1,2"));
        assert_eq!(l.last.as_deref(), Some("https://x.org/a?b=1,2"));
        assert_eq!(l.prev.as_deref(), Some("https://x.org/d"));
        assert_eq!(l.first, None);
        assert_eq!(parse_link_header(""), Links::default());
        assert_eq!(parse_link_header("garbage; rel=next"), Links::default());
    }

    #[test]
    fn filter_json() {
        let project = Ref::new("projects", "00000000000000aa");
        let f = Filter::new().icontains("filename", "gut").eq_ref("project", &project).between(
            "created_at",
            "2026-01-01T00:00:00Z",
            "2026-02-01T00:00:00Z",
        );
        assert_eq!(
            f.to_value(),
            json!({
                "filename": {"$icontains": "gut"},
                "project": {"$ref": "/api/v1/projects/00000000000000aa"},
                "created_at": {"$between": ["2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"]}
            })
        );
        // Field order is kept in the text sent.
        assert!(f.to_json().starts_with(r#"{"filename":{"$icontains":"gut"},"project""#), "{}", f.to_json());

        let f = Filter::new()
            .eq("$uri", "/api/v1/samples/0000000000000001")
            .eq("size", 10)
            .gte("size", 5)
            .is_null("primary_classification")
            .is_in("visibility", ["public", "shared"])
            .ne("filename", "x.fq")
            .gte("created_at", "2026-01-01")
            .lt("created_at", "2026-02-01");
        assert_eq!(
            f.to_value(),
            json!({
                "$uri": {"$eq": "/api/v1/samples/0000000000000001"},
                "size": {"$eq": 10, "$gte": 5},
                "primary_classification": null,
                "visibility": {"$in": ["public", "shared"]},
                "filename": {"$ne": "x.fq"},
                "created_at": {"$gte": "2026-01-01", "$lt": "2026-02-01"}
            })
        );
        let t1 = Ref::new("tags", "0000000000000001");
        let t2 = Ref::new("tags", "0000000000000002");
        let f = Filter::new().contains_all("tags", [&t1, &t2]).in_refs("project", [&project]).eq_ref("owner", &t1);
        assert_eq!(
            f.to_value(),
            json!({
                "tags": {"$containsall": [{"$ref": "/api/v1/tags/0000000000000001"}, {"$ref": "/api/v1/tags/0000000000000002"}]},
                "project": {"$in": [{"$ref": "/api/v1/projects/00000000000000aa"}]},
                "owner": {"$ref": "/api/v1/tags/0000000000000001"}
            })
        );
        // A reference joined by another operator on the same field becomes `$eq`.
        let f = Filter::new().eq_ref("project", &project).ne("project", "x");
        assert_eq!(
            f.to_value(),
            json!({"project": {"$eq": {"$ref": "/api/v1/projects/00000000000000aa"}, "$ne": "x"}})
        );
    }

    #[test]
    fn sort_json() {
        assert_eq!(Sort::desc("created_at").to_json(), r#"{"created_at":true}"#);
        assert_eq!(Sort::asc("filename").then_desc("size").to_json(), r#"{"filename":false,"size":true}"#);
    }

    #[test]
    fn list_urls_always_carry_the_page() {
        let c = Client::builder("https://x.example.org").build().unwrap();
        let r: ListRequest<mgds_api::Sample> = ListRequest::new(c, &["samples"]);
        assert_eq!(r.url().as_str(), "https://x.example.org/api/v1/samples?page=1&per_page=50");
        let r = r.filter(Filter::new().eq("filename", "a b.fq")).sort(Sort::desc("size")).page(0).per_page(5000);
        let url = r.url();
        let q: Vec<(String, String)> = url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        assert_eq!(
            q,
            vec![
                ("where".into(), r#"{"filename":"a b.fq"}"#.into()),
                ("sort".into(), r#"{"size":true}"#.into()),
                ("page".into(), "1".into()),
                ("per_page".into(), "1000".into()),
            ]
        );
    }
}
