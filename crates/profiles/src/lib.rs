//! Which MGDS service to talk to, shared by the `mgds` command and the desktop app so both see
//! the same profiles and keys: [`profile::Config`] (profiles in the OS configuration folder),
//! API keys in the OS keychain ([`profile::store_key`], [`profile::load_key`]), and
//! [`local::start`], the embedded local service used when no remote profile is chosen, and
//! [`sso`], profiles signed in by single sign-on (a refresh token in the keychain).

pub mod local;
pub mod profile;
pub mod sso;
