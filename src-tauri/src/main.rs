//! `mgds-desktop`: the MGDS desktop app. Everything happens in [`mgds_desktop::run`].
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // The embedded service runs each analysis in a process of this program, started before
    // any window.
    mgds_server::worker::engine_entry();
    mgds_desktop::run();
}
