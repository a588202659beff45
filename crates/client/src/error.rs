//! The one error type of the client, typed by what it means for the caller.

use std::path::PathBuf;
use std::time::Duration;

use mgds_api::ErrorCode;

/// Everything a client call can fail with. Each message says what to do next.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// 401: the service did not accept the API key (or none was given for a protected route).
    #[error("the service refused the API key; check it or run `mgds login` (the service said: {message})")]
    Unauthorized {
        /// The service's own words.
        message: String,
    },
    /// 403: the record exists and is visible, but this user may not do this to it.
    #[error("you are not allowed to do this: {message}")]
    Forbidden {
        /// The service's own words.
        message: String,
    },
    /// 404: no such record, or one this user may not see (services answer both alike).
    #[error("not found, or you do not have access to it; check the id (the service said: {message})")]
    NotFound {
        /// The service's own words.
        message: String,
    },
    /// 409: the request conflicts with an existing record (a duplicate name or id).
    #[error("this conflicts with an existing record; choose another name or id (the service said: {message})")]
    Conflict {
        /// The service's own words.
        message: String,
        /// Which refusal it is, when the service names it.
        code: Option<ErrorCode>,
    },
    /// 429: the service is limiting requests; `retry_after` is how long it asked to wait.
    #[error("the service is limiting requests{}; wait and try again (the service said: {message})", wait_text(*.retry_after))]
    RateLimited {
        /// How long the service asked to wait (`Retry-After`), if it said.
        retry_after: Option<Duration>,
        /// The service's own words.
        message: String,
    },
    /// Another 4xx (mostly 400): the request breaks one of the service's rules; the message
    /// says which.
    #[error("the service refused the request: {message}")]
    InvalidRequest {
        /// The HTTP status (400, 405, 412, 413, ...).
        status: u16,
        /// The service's own words.
        message: String,
        /// Which refusal it is, when the service names it.
        code: Option<ErrorCode>,
    },
    /// 5xx: the service failed; retried where that is safe, and still failing.
    #[error(
        "the service failed (HTTP {status}); try again later, and tell its operator if this persists (the service said: {message})"
    )]
    Server {
        /// The HTTP status.
        status: u16,
        /// The service's own words (or the start of its answer).
        message: String,
    },
    /// The service could not be reached or the connection broke (after the retries that were
    /// safe to make).
    #[error(
        "could not reach the service at {url} after {attempts} attempt(s); check the address, your network and proxy settings"
    )]
    Transport {
        /// The address that was being reached (without any query string).
        url: String,
        /// How many times it was tried.
        attempts: u32,
        /// What went wrong.
        #[source]
        source: reqwest::Error,
    },
    /// A file transfer made no progress for too long (after the retries allowed).
    #[error("the transfer to or from {url} made no progress for {waited:?}; check your network and try again")]
    TransferStalled {
        /// The address (without any query string).
        url: String,
        /// How long it was idle.
        waited: Duration,
    },
    /// The address is plain `http://` to another machine: API keys and data would cross the
    /// network in clear text.
    #[error("refusing {url}: plain http:// is only allowed to this machine (localhost); use https://")]
    InsecureUrl {
        /// The refused address.
        url: String,
    },
    /// The address is not a usable URL.
    #[error("{url:?} is not a valid service address (expected e.g. https://mgds.example.org): {reason}")]
    InvalidUrl {
        /// The address as given.
        url: String,
        /// Why it is not usable.
        reason: String,
    },
    /// The HTTP client could not be set up (TLS, proxy or certificate settings).
    #[error("could not set up the HTTPS client; check the proxy and certificate settings")]
    Setup(#[source] reqwest::Error),
    /// The extra CA certificate file could not be read or holds no PEM certificate.
    #[error("cannot use {path} as a CA certificate file (it must hold PEM certificates): {reason}")]
    CaCertificate {
        /// The file.
        path: PathBuf,
        /// Why it is not usable.
        reason: String,
    },
    /// A value given to the client breaks a rule of the API before anything is sent.
    #[error("{0}")]
    InvalidInput(String),
    /// The job's arguments do not fit its `job_args_schema`; nothing was sent.
    #[error("the arguments do not fit job {job}'s job_args_schema: {}", .problems.join("; "))]
    InvalidJobArgs {
        /// The job id.
        job: String,
        /// Every problem found, each with its place in the arguments.
        problems: Vec<String>,
    },
    /// The service answered with something that is not what API v1 describes.
    #[error("the service's answer to {what} is not what API v1 describes; is this an API v1 service?")]
    Decode {
        /// The request whose answer could not be read.
        what: String,
        /// Why it could not be read.
        #[source]
        source: serde_json::Error,
    },
    /// A local file could not be read or written.
    #[error("cannot {action} {path}")]
    Io {
        /// What was being done (`read`, `write`, ...).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// A download would have replaced a file under a name the service chose; nothing was
    /// written. The caller may ask to replace it ([`Destination::new_file`](crate::Destination::new_file)).
    #[error("{} already exists and was not replaced", .path.display())]
    FileExists {
        /// The file that is already there.
        path: PathBuf,
    },
    /// The operation was cancelled by the caller; what it started was cleaned up.
    #[error("cancelled")]
    Cancelled,
    /// Writing to the upload's S3-compatible store failed (after the store client's retries).
    #[error("the upload's storage refused or failed the transfer: {source}")]
    Storage {
        /// What the store (or the way to it) said.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Waiting for an analysis took longer than allowed; it may still finish later.
    #[error("analysis {analysis} had not finished after {waited:?}; check it again later")]
    Timeout {
        /// The analysis id.
        analysis: String,
        /// How long was waited.
        waited: Duration,
    },
}

fn wait_text(d: Option<Duration>) -> String {
    match d {
        Some(d) => format!(" for the next {} seconds", d.as_secs().max(1)),
        None => String::new(),
    }
}

impl Error {
    /// The HTTP status the service answered with, for errors that come from an answer.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Unauthorized { .. } => Some(401),
            Error::Forbidden { .. } => Some(403),
            Error::NotFound { .. } => Some(404),
            Error::Conflict { .. } => Some(409),
            Error::RateLimited { .. } => Some(429),
            Error::InvalidRequest { status, .. } | Error::Server { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The service's own message, for errors that come from an answer.
    pub fn service_message(&self) -> Option<&str> {
        match self {
            Error::Unauthorized { message }
            | Error::Forbidden { message }
            | Error::NotFound { message }
            | Error::Conflict { message, .. }
            | Error::RateLimited { message, .. }
            | Error::InvalidRequest { message, .. }
            | Error::Server { message, .. } => Some(message),
            _ => None,
        }
    }

    /// Which refusal this is, when the service named it ([`mgds_api::ErrorBody::code`]).
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Error::Conflict { code, .. } | Error::InvalidRequest { code, .. } => *code,
            _ => None,
        }
    }

    /// Whether trying the same thing again later may succeed: the service could not be
    /// reached, failed, was limiting requests, or a transfer stalled. Everything else (a
    /// refusal, a bad file, a cancel) stays the same however often it is tried.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Error::Transport { .. }
                | Error::Server { .. }
                | Error::RateLimited { .. }
                | Error::TransferStalled { .. }
                | Error::Storage { .. }
        )
    }

    /// The error for an answer with a non-success `status`, its `Retry-After` and its body.
    pub(crate) fn from_answer(status: u16, retry_after: Option<Duration>, body: &[u8]) -> Error {
        let (message, code) = match serde_json::from_slice::<mgds_api::ErrorBody>(body) {
            Ok(b) => (b.message, b.code),
            // Not the API's error shape (a proxy's page, an S3 XML error): keep its start.
            Err(_) => {
                let text = String::from_utf8_lossy(body);
                let text = text.trim();
                let message = if text.is_empty() {
                    format!("HTTP {status} with no explanation")
                } else {
                    text.chars().take(300).collect()
                };
                (message, None)
            }
        };
        match status {
            401 => Error::Unauthorized { message },
            403 => Error::Forbidden { message },
            404 => Error::NotFound { message },
            409 => Error::Conflict { message, code },
            429 => Error::RateLimited { retry_after, message },
            500..=599 => Error::Server { status, message },
            _ => Error::InvalidRequest { status, message, code },
        }
    }

    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io { action, path: path.into(), source }
    }
}

/// Result of a client call.
pub type Result<T, E = Error> = std::result::Result<T, E>;
