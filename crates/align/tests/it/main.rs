//! Integration tests: simulated reads through minimap2 and back as statistics.

mod align;
mod profile;
mod sim;

// A service shares one loaded catalogue between jobs and sends errors across threads.
const _: () = {
    const fn shareable<T: Send + Sync + 'static>() {}
    shareable::<mgds_align::Catalogue>();
    shareable::<mgds_align::Error>();
    shareable::<mgds_align::AlignmentResults>();
    shareable::<mgds_align::FunctionalProfile>();
};
