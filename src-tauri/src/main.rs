//! `mgds-desktop`: the MGDS desktop app. Everything happens in [`mgds_desktop::run`].
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // The embedded service runs each analysis in a process of this program, started before
    // any window.
    mgds_server::worker::engine_entry();
    lighten_processes();
    // The embedded service's controls analyses score with the application's contaminants logic.
    mgds_server::controls::provide(
        mgds_app::contamination::score_controls,
        mgds_app::contamination::SCORING_VERSION,
        mgds_app::contamination::controls_args_schema(),
    );
    mgds_desktop::run();
}

/// Holds the app's processes to what a window of tables and forms needs, before any thread
/// starts (the setting is only safe to change while this is the only thread): glibc gives each
/// thread that allocates an arena of its own; the app's threads (the async runtime, the embedded
/// service, GTK) mostly wait, so two arenas serve them, and its WebKit processes get the same
/// setting through their environment. A setting already in the environment is kept.
///
/// WebKit's compositing mode stays on: turning it off (`WEBKIT_DISABLE_COMPOSITING_MODE`) saved
/// about 5 MB at rest but cost the web process about 200 MB more while a comparison of 500
/// samples was on screen (`MGDS_BENCH=compare tests/e2e/bench.sh`).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn lighten_processes() {
    const ARENAS: i32 = 2;
    let keep = |name: &str| std::env::var_os(name).is_some();
    // SAFETY: no other thread exists yet (engine_entry returned without starting any, and
    // nothing else has run), so nothing reads the environment or allocates concurrently.
    unsafe {
        if !keep("MALLOC_ARENA_MAX") {
            libc::mallopt(libc::M_ARENA_MAX, ARENAS);
            std::env::set_var("MALLOC_ARENA_MAX", ARENAS.to_string());
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn lighten_processes() {}
