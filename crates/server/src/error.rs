//! The one error type of the service and its HTTP answer: `{"message": ..., "status": ...}`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mgds_api::{ErrorBody, ErrorCode};

/// Everything a handler can answer with instead of success.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request is malformed or breaks a rule; the message says which.
    #[error("{0}")]
    BadRequest(String),
    /// 401: no valid credentials for a route that needs them.
    #[error("{0}")]
    Unauthorized(String),
    /// 403: the caller can see the record but may not do this to it.
    #[error("{0}")]
    Forbidden(String),
    /// 404: no such record, or one the caller may not see (the two answer identically).
    #[error("{0}")]
    NotFound(String),
    /// 405: the route exists but not with this method.
    #[error("{0}")]
    MethodNotAllowed(String),
    /// 409: the request conflicts with an existing record.
    #[error("{0}")]
    Conflict(String),
    /// 413: the request body is larger than the route accepts.
    #[error("{0}")]
    PayloadTooLarge(String),
    /// 414: the address (path and query) is longer than the service reads.
    #[error("{0}")]
    UriTooLong(String),
    /// 422: the body is JSON, but not of the shape the route takes (an array for an object, a
    /// string for a boolean); the message names the field.
    #[error("{0}")]
    Unprocessable(String),
    /// 429: too many failed attempts (unknown API keys from this address, or e-mail lookups
    /// that found nobody); retry after this many seconds.
    #[error(
        "too many failed attempts (API keys that are not valid, or e-mail addresses that match nobody); \
         try again in {0} seconds"
    )]
    TooManyRequests(u64),
    /// 431: the request's headers are larger than the service reads.
    #[error("{0}")]
    HeadersTooLarge(String),
    /// 503: something the service needs is not reachable now (the single sign-on provider);
    /// the message says what, and to try again.
    #[error("{0}")]
    ServiceUnavailable(String),
    /// 500: something broke inside the service. The cause is logged, never sent.
    #[error("internal error")]
    Internal(#[source] BoxError),
    /// A refusal that clients act on: the answer of `error`, with `code` beside its message.
    #[error("{error}")]
    Coded {
        /// Which refusal it is.
        code: ErrorCode,
        /// The answer.
        error: Box<ApiError>,
    },
}

/// A boxed error, for causes that are only logged.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

impl ApiError {
    /// 404 with the same words whether the record is absent or hidden.
    pub fn not_found(collection: &str) -> Self {
        ApiError::NotFound(format!("no such {collection} record, or you do not have access to it"))
    }

    /// 401 for a protected route called without valid credentials.
    pub fn unauthorized() -> Self {
        ApiError::Unauthorized(
            "authentication required: send your API key as the HTTP Basic username (empty password) \
             or in the X-API-Key header"
                .into(),
        )
    }

    /// 500 carrying a cause to log.
    pub fn internal(e: impl Into<BoxError>) -> Self {
        ApiError::Internal(e.into())
    }

    /// This refusal, named by `code` in the answer's body.
    pub fn with_code(self, code: ErrorCode) -> Self {
        ApiError::Coded { code, error: Box::new(self) }
    }

    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Coded { error, .. } => error.status(),
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UriTooLong(_) => StatusCode::URI_TOO_LONG,
            ApiError::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::HeadersTooLarge(_) => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            ApiError::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            ApiError::ServiceUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> Self {
        // A constraint the request broke is the caller's conflict, not our failure.
        if let sqlx::Error::Database(db) = &e
            && (db.is_unique_violation() || db.is_foreign_key_violation())
        {
            return ApiError::Conflict(
                "the request conflicts with an existing record (a value that must be unique is \
                 already used, or a referenced record is gone)"
                    .into(),
            );
        }
        ApiError::internal(e)
    }
}

impl From<object_store::Error> for ApiError {
    fn from(e: object_store::Error) -> Self {
        ApiError::internal(e)
    }
}

impl From<std::io::Error> for ApiError {
    fn from(e: std::io::Error) -> Self {
        ApiError::internal(e)
    }
}

impl From<serde_json::Error> for ApiError {
    fn from(e: serde_json::Error) -> Self {
        ApiError::internal(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let (code, this) = match self {
            ApiError::Coded { code, error } => (Some(code), *error),
            other => (None, other),
        };
        let message = match &this {
            ApiError::Internal(cause) => {
                tracing::error!(error = %cause, source = ?cause.source(), "internal error");
                "the service failed to handle this request; the cause has been logged for the \
                 operator"
                    .to_string()
            }
            other => other.to_string(),
        };
        let body = ErrorBody { message, status: status.as_u16(), code };
        let mut response = (status, axum::Json(body)).into_response();
        let headers = response.headers_mut();
        match &this {
            ApiError::Unauthorized(_) => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Basic realm=\"MGDS\", charset=\"UTF-8\""),
                );
            }
            ApiError::TooManyRequests(secs) => {
                if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                    headers.insert(header::RETRY_AFTER, v);
                }
            }
            _ => {}
        }
        response
    }
}

/// Result of a handler.
pub type ApiResult<T> = Result<T, ApiError>;
