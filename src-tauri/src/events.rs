//! The events the shell sends to the window. Each payload type carries its event's name, so a
//! name cannot be sent with another payload, and the UI's typed listeners are generated from
//! the same pairs (`ui/src/lib/bindings.ts`).

use serde::Serialize;
use tauri::{AppHandle, Emitter};

/// A payload the shell sends to the window as the event [`ShellEvent::NAME`].
pub trait ShellEvent: Serialize + Clone + ts_rs::TS + 'static {
    /// The event's name, as the UI listens for it.
    const NAME: &'static str;
}

/// Sends `payload` to the window as its event.
pub fn emit<E: ShellEvent>(app: &AppHandle, payload: E) {
    // The only failure is a window that is gone (the app is closing): nobody is left to tell.
    let _ = app.emit(E::NAME, payload);
}
