//! The UI's build (`ui/dist`) is embedded: a new build of the UI makes the crate build again.
fn main() {
    println!("cargo:rerun-if-changed=../../ui/dist");
}
