//! The events the application sends to the screens as work goes on (upload progress, analysis
//! state, transfers). Each payload type carries its event's name, so a name cannot be sent with
//! another payload, and the UI's typed listeners are generated from the same pairs
//! (`ui/src/lib/bindings.ts`). How an event reaches the screens is the shell's: the desktop
//! emits it to its window.

use serde::Serialize;

/// A payload sent to the screens as the event [`ShellEvent::NAME`].
pub trait ShellEvent: Serialize + Clone + ts_rs::TS + 'static {
    /// The event's name, as the UI listens for it.
    const NAME: &'static str;
}
