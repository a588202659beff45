//! The demo gene catalogue (`assets/functions/demo`): 29 real antimicrobial-resistance genes from
//! NCBI's Reference Gene Catalog with the enzyme classes of their products, built into the crate so
//! a service can install it without the repository. Four of its genes are in the demo reads.

use std::fs;
use std::path::Path;

use crate::catalogue::{ANNOTATIONS_FILE, GENES_FILE};
use crate::error::Error;

/// The demo catalogue's `genes.fa`: 29 NCBI reference resistance genes, 426 to 1,920 bp, each
/// named by its gene symbol (made safe for FASTA and SAM: `aph(3'')-Ib` is `aph3pp-Ib`).
pub const GENES_FA: &[u8] = include_bytes!("../../../assets/functions/demo/genes.fa");

/// The demo catalogue's `annotations.tsv`: each enzyme's EC number and IUBMB accepted name; the
/// four genes whose products are not enzymes have no line.
pub const ANNOTATIONS_TSV: &[u8] = include_bytes!("../../../assets/functions/demo/annotations.tsv");

/// The demo catalogue's `README.md`: what the genes and functions are, their source, licence and
/// citation.
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
