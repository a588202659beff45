//! Where the screens are connected: the service, and who is signed in.

use serde::Serialize;
use ts_rs::TS;

/// What the screens show about the connection.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ConnectionView {
    /// The profile's name.
    pub profile: String,
    /// The service's base address.
    pub base_url: String,
    /// Whether this is the embedded local service.
    pub local: bool,
    /// The signed-in user's e-mail address.
    pub email: Option<String>,
    /// The local service's data folder (the desktop's embedded service; empty elsewhere).
    pub data_dir: String,
}
