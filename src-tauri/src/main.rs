//! `mgds-desktop`: the MGDS desktop app. Everything happens in [`mgds_desktop::run`].
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    mgds_desktop::run();
}
