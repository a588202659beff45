//! The events the shell sends to the window: the application's [`ShellEvent`]s, each emitted
//! under its own name, so a name cannot be sent with another payload, and the UI's typed
//! listeners are generated from the same pairs (`ui/src/lib/bindings.ts`).

use tauri::{AppHandle, Emitter};

pub use mgds_app::events::ShellEvent;

/// Sends `payload` to the window as its event.
pub fn emit<E: ShellEvent>(app: &AppHandle, payload: E) {
    // The only failure is a window that is gone (the app is closing): nobody is left to tell.
    let _ = app.emit(E::NAME, payload);
}
