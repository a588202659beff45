//! What the routes take from a request and give back: JSON bodies that fail in the API's error
//! shape, the list parameters, and a page of a list with its `X-Total-Count` and `Link`.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, OriginalUri, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::ApiError;
use crate::listing::{self, Page};
use crate::store::records::{Found, ListQuery};

/// A JSON body, read whatever the content type, with a 400 in the service's shape when it is
/// malformed or does not fit the route's fields.
pub struct Json<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::PayloadTooLarge(format!(
                    "the request body is larger than the {} KB this route reads; send only the fields it takes",
                    JSON_BODY_LIMIT / 1024
                ))
            } else {
                ApiError::BadRequest(format!("could not read the request body: {}", e.body_text()))
            }
        })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ApiError::BadRequest("the request needs a JSON body".into()));
        }
        // Every route takes an object. serde would also read a struct from an array of its
        // fields in order (`[true]` for `{"public": true}`), which no client means.
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace()).copied();
        if first != Some(b'{') {
            let got = match first {
                Some(b'[') => "an array",
                Some(b'"') => "a string",
                Some(b't' | b'f') => "a boolean",
                Some(b'n') => "null",
                Some(b'-' | b'0'..=b'9') => "a number",
                _ => "not JSON",
            };
            return Err(if got == "not JSON" {
                ApiError::BadRequest("the request body is not valid JSON; send a JSON object".into())
            } else {
                ApiError::Unprocessable(format!("the request body must be a JSON object of fields; it is {got}"))
            });
        }
        let mut de = serde_json::Deserializer::from_slice(&bytes);
        let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            // A value of the wrong JSON type is 422 naming the field; an unknown field, a
            // missing one or a value outside the allowed ones stays 400, as the spec has it.
            let wrong_type = inner.to_string().starts_with("invalid type");
            let at = if path == "." { String::new() } else { format!(" at {path}") };
            if inner.is_syntax() || inner.is_eof() {
                ApiError::BadRequest(format!("the request body is not valid JSON: {inner}"))
            } else if wrong_type {
                ApiError::Unprocessable(format!("the request body does not fit this route{at}: {inner}"))
            } else {
                ApiError::BadRequest(format!("the request body does not fit this route{at}: {inner}"))
            }
        })?;
        de.end().map_err(|e| ApiError::BadRequest(format!("the request body is not valid JSON: {e}")))?;
        Ok(Json(value))
    }
}

/// Most bytes of a JSON request body (axum's default body limit).
pub const JSON_BODY_LIMIT: usize = 2 * 1024 * 1024;

/// The raw list parameters. Besides `page`, a client may page with a cursor, as the real
/// service's clients do for samples and metadata: it asks with `X-Pagination-Style: cursor`,
/// gets `X-Next-Cursor` while more records remain, and sends it back as `cursor`. The cursor is
/// the next page's number (with the same `per_page`, `where` and `sort`).
#[derive(Debug, Default, serde::Deserialize)]
pub struct ListParams {
    #[serde(rename = "where")]
    filter: Option<String>,
    sort: Option<String>,
    page: Option<String>,
    per_page: Option<String>,
    cursor: Option<String>,
    #[serde(skip)]
    cursor_style: bool,
}

impl ListParams {
    /// The parameters as the store reads them.
    pub fn query(&self) -> ListQuery<'_> {
        ListQuery {
            filter: self.filter.as_deref(),
            sort: self.sort.as_deref(),
            page: self.cursor.as_deref().or(self.page.as_deref()),
            per_page: self.per_page.as_deref(),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ListParams {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        check_query_text(parts.uri.query().unwrap_or_default())?;
        let axum::extract::Query(mut p) = axum::extract::Query::<ListParams>::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::BadRequest(format!("the query string is malformed: {}", e.body_text())))?;
        p.cursor_style = p.cursor.is_some()
            || parts
                .headers
                .get("x-pagination-style")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("cursor"));
        Ok(p)
    }
}

/// `?wait=SECS` on one analysis (an MGDS addition): answer once the analysis is complete, or
/// after at most this many seconds ([`MAX_WAIT_SECS`]), whichever comes first.
#[derive(Debug, Default)]
pub struct WaitParam(pub Option<std::time::Duration>);

/// The longest `?wait=` honoured: shorter than the usual idle timeouts of proxies.
pub const MAX_WAIT_SECS: u64 = 30;

impl<S: Send + Sync> FromRequestParts<S> for WaitParam {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or_default();
        let Some(value) = query.split('&').find_map(|p| p.strip_prefix("wait=")) else { return Ok(WaitParam(None)) };
        let secs: u64 = value.parse().map_err(|_| {
            ApiError::BadRequest(format!(
                "wait must be a whole number of seconds (at most {MAX_WAIT_SECS}), not {:?}",
                value.chars().take(40).collect::<String>()
            ))
        })?;
        Ok(WaitParam((secs > 0).then(|| std::time::Duration::from_secs(secs.min(MAX_WAIT_SECS)))))
    }
}

/// Refuses a query string whose parameters are not UTF-8 once percent-decoded (the decoder
/// would otherwise replace the bytes with U+FFFD and filter on something nobody sent).
fn check_query_text(query: &str) -> Result<(), ApiError> {
    for pair in query.split('&') {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        for (part, what) in [(name, "name"), (value, "value")] {
            let plus = part.replace('+', " ");
            if percent_encoding::percent_decode_str(&plus).decode_utf8().is_err() {
                let name = percent_encoding::percent_decode_str(name).decode_utf8_lossy();
                return Err(ApiError::BadRequest(format!(
                    "the query parameter {name:?} has a {what} that is not UTF-8 text once percent-decoded; \
                     encode it as UTF-8"
                )));
            }
        }
    }
    Ok(())
}

/// One page of a list.
pub struct Listed<T> {
    items: Vec<T>,
    total: u64,
    page: Page,
    path: String,
    params: Vec<(&'static str, String)>,
    cursor_style: bool,
}

impl<T> Listed<T> {
    /// The answer to the list request at `uri` with `params`: the page found, with links to the
    /// other pages that keep the request's `where` and `sort`.
    pub fn new(found: Found<T>, uri: &OriginalUri, params: &ListParams) -> Self {
        let mut others = Vec::new();
        if let Some(w) = &params.filter {
            others.push(("where", w.clone()));
        }
        if let Some(s) = &params.sort {
            others.push(("sort", s.clone()));
        }
        Listed {
            items: found.items,
            total: found.total,
            page: found.page,
            path: uri.path().to_string(),
            params: others,
            cursor_style: params.cursor_style,
        }
    }
}

impl<T: Serialize> IntoResponse for Listed<T> {
    fn into_response(self) -> Response {
        let others: Vec<(&str, &str)> = self.params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let link = listing::link_header(&self.path, &others, &self.page, self.total);
        let mut headers = HeaderMap::new();
        headers.insert(HeaderName::from_static("x-total-count"), HeaderValue::from(self.total));
        if !link.is_empty()
            && let Ok(v) = HeaderValue::from_str(&link)
        {
            headers.insert(axum::http::header::LINK, v);
        }
        // No cursor on the last page: that is how a cursor client knows it has everything.
        let seen = u64::from(self.page.page) * u64::from(self.page.per_page);
        if self.cursor_style && seen < self.total {
            headers.insert(HeaderName::from_static("x-next-cursor"), HeaderValue::from(self.page.page + 1));
        }
        (StatusCode::OK, headers, axum::Json(self.items)).into_response()
    }
}
