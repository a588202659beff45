//! The small demo reference data (fragments of real genomes), embedded so that the demo database can be built
//! on any machine without the repository (`mgds db install --demo`).
//!
//! The files are `assets/demo/` of the repository; see its `README.md` for how they were made.

use std::path::{Path, PathBuf};

use crate::build::BuildInput;
use crate::error::Error;

/// NCBI `nodes.dmp` subset: root down to the demo species.
pub const NODES_DMP: &[u8] = include_bytes!("../../../assets/demo/taxonomy/nodes.dmp");
/// NCBI `names.dmp` subset (scientific names of the taxa in [`NODES_DMP`]).
pub const NAMES_DMP: &[u8] = include_bytes!("../../../assets/demo/taxonomy/names.dmp");
/// Reference sequences: fragments of real genomes and phage lambda (gzipped FASTA).
pub const GENOMES_FA_GZ: &[u8] = include_bytes!("../../../assets/demo/genomes.fa.gz");
/// Sequence-to-taxon map of [`GENOMES_FA_GZ`] (`seq_id<TAB>tax_id<TAB>genome`).
pub const SEQID2TAXID: &[u8] = include_bytes!("../../../assets/demo/seqid2taxid.tsv");
/// Reads simulated from the demo sequences (gzipped FASTQ), to try a classification.
pub const READS_FASTQ_GZ: &[u8] = include_bytes!("../../../assets/demo/reads.fastq.gz");

/// Writes the demo database sources into `dir` (created if missing) and returns the input for
/// [`crate::build`].
pub fn write_demo_sources(dir: &Path) -> Result<BuildInput, Error> {
    let write = |name: &str, bytes: &[u8]| -> Result<PathBuf, Error> {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| Error::Write { path: parent.to_owned(), source })?;
        }
        std::fs::write(&path, bytes).map_err(|source| Error::Write { path: path.clone(), source })?;
        Ok(path)
    };
    Ok(BuildInput {
        nodes: write("taxonomy/nodes.dmp", NODES_DMP)?,
        names: write("taxonomy/names.dmp", NAMES_DMP)?,
        references: vec![write("genomes.fa.gz", GENOMES_FA_GZ)?],
        seqid2taxid: write("seqid2taxid.tsv", SEQID2TAXID)?,
    })
}

/// Writes the demo reads (gzipped FASTQ) to `path`.
pub fn write_demo_reads(path: &Path) -> Result<(), Error> {
    std::fs::write(path, READS_FASTQ_GZ).map_err(|source| Error::Write { path: path.to_owned(), source })
}
