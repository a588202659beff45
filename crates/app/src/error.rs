//! Errors as the UI receives them: `{code, message}`, the message in words a lab scientist
//! understands, saying what to do next.

use serde::Serialize;
use ts_rs::TS;

/// An error crossing to the UI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct CmdError {
    /// A stable, machine-readable code the UI can branch on (`key_refused`, `unreachable`, ...).
    pub code: &'static str,
    /// What went wrong and what to do, for a person.
    pub message: String,
}

/// The result of a command.
pub type CmdResult<T> = Result<T, CmdError>;

impl CmdError {
    /// An error with this code and message.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        CmdError { code, message: message.into() }
    }
}

impl std::fmt::Display for CmdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for CmdError {}

impl From<mgds_client::Error> for CmdError {
    fn from(e: mgds_client::Error) -> Self {
        from_client(&e)
    }
}

fn from_client(e: &mgds_client::Error) -> CmdError {
    {
        use mgds_client::Error as E;
        let said = |m: &str| if m.trim().is_empty() { String::new() } else { format!(" (the service said: {m})") };
        match e {
            E::Unauthorized { message, .. } => CmdError::new(
                "key_refused",
                format!(
                    "The service did not accept the API key{}. Check the key on the Profiles screen.",
                    said(message)
                ),
            ),
            E::Forbidden { message, .. } => CmdError::new(
                "forbidden",
                format!("You are not allowed to do this; ask the owner of the record for access{}.", said(message)),
            ),
            E::NotFound { .. } => CmdError::new(
                "not_found",
                "This record no longer exists, or you do not have access to it. Go back to the samples list and refresh.",
            ),
            E::Transport { url, .. } | E::TransferStalled { url, .. } => CmdError::new(
                "unreachable",
                format!("Could not reach the service at {url}. Check the address and your network, then try again."),
            ),
            E::Cancelled => CmdError::new("cancelled", "Cancelled."),
            _ => CmdError::new(client_code(e), sentence(&e.to_string())),
        }
    }
}

fn client_code(e: &mgds_client::Error) -> &'static str {
    use mgds_client::Error as E;
    match e {
        E::Conflict { .. } => "conflict",
        E::RateLimited { .. } => "busy",
        E::InvalidRequest { .. } | E::InvalidInput(_) | E::InvalidJobArgs { .. } => "invalid",
        E::Server { .. } => "service_failed",
        E::InsecureUrl { .. } | E::InvalidUrl { .. } => "bad_address",
        E::Io { .. } | E::FileExists { .. } => "file",
        E::Timeout { .. } => "timeout",
        _ => "failed",
    }
}

impl From<mgds_formats::Error> for CmdError {
    fn from(e: mgds_formats::Error) -> Self {
        CmdError::new("bad_file", sentence(&e.to_string()))
    }
}

impl From<mgds_upload::UploadError> for CmdError {
    fn from(e: mgds_upload::UploadError) -> Self {
        use mgds_upload::UploadError as E;
        match e {
            E::Service(c) => from_client(&c),
            E::File(f) => (*f).into(),
            E::Cancelled => CmdError::new("cancelled", "Cancelled."),
            E::MixedCompression { .. } => CmdError::new("bad_file", sentence(&e.to_string())),
            other => CmdError::new("file", sentence(&other.to_string())),
        }
    }
}

impl From<anyhow::Error> for CmdError {
    fn from(e: anyhow::Error) -> Self {
        match e.downcast_ref::<mgds_client::Error>() {
            Some(c) => from_client(c),
            None => CmdError::new("failed", sentence(&format!("{e:#}"))),
        }
    }
}

/// Capitalises the first letter and ends with a full stop, so library messages read as sentences.
pub fn sentence(text: &str) -> String {
    let text = text.trim();
    let mut chars = text.chars();
    let mut out = match chars.next() {
        Some(c) => c.to_uppercase().collect::<String>() + chars.as_str(),
        None => return String::from("Something went wrong."),
    };
    if !out.ends_with(['.', '!', '?']) {
        out.push('.');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_start_upper_and_end_with_a_stop() {
        assert_eq!(sentence("could not read x"), "Could not read x.");
        assert_eq!(sentence("Done."), "Done.");
        assert_eq!(sentence("  "), "Something went wrong.");
    }

    #[test]
    fn a_refused_key_has_its_own_code_and_no_cli_hint() {
        let e = CmdError::from(mgds_client::Error::Unauthorized { message: "bad key".into() });
        assert_eq!(e.code, "key_refused");
        assert!(!e.message.contains("mgds login"), "{}", e.message);
        assert!(e.message.contains("bad key"));
    }

    #[test]
    fn errors_serialize_as_code_and_message() {
        let v = serde_json::to_value(CmdError::new("x", "y")).unwrap();
        assert_eq!(v, serde_json::json!({"code": "x", "message": "y"}));
    }
}
