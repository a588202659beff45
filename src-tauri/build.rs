//! Embeds the Tauri configuration and the capabilities into the app.
fn main() {
    tauri_build::build();
}
