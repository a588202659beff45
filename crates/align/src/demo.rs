//! The made-up demo gene catalogue (`assets/functions/demo`), built into the crate so a
//! service can install it without the repository.

use std::fs;
use std::path::Path;

use crate::catalogue::{ANNOTATIONS_FILE, GENES_FILE};
use crate::error::Error;

/// The demo catalogue's `genes.fa`: 30 segments of 600 to 1,500 bp of the demo reference sequences.
pub const GENES_FA: &[u8] = include_bytes!("../../../assets/functions/demo/genes.fa");

/// The demo catalogue's `annotations.tsv`: EC numbers assigned arbitrarily to the genes.
pub const ANNOTATIONS_TSV: &[u8] = include_bytes!("../../../assets/functions/demo/annotations.tsv");

/// The demo catalogue's `README.md`, which says that its genes and functions are made up.
pub const README_MD: &[u8] = include_bytes!("../../../assets/functions/demo/README.md");

/// Writes the demo catalogue's files into `dir` (created if missing), ready for
/// [`crate::Catalogue::load`]. Existing files of the same names are replaced.
pub fn write_demo_catalogue(dir: &Path) -> Result<(), Error> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| Error::Io { path, source }
    };
    fs::create_dir_all(dir).map_err(io(dir))?;
    for (name, bytes) in [(GENES_FILE, GENES_FA), (ANNOTATIONS_FILE, ANNOTATIONS_TSV), ("README.md", README_MD)] {
        let path = dir.join(name);
        fs::write(&path, bytes).map_err(io(&path))?;
    }
    Ok(())
}
