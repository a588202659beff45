//! The demo panel (`assets/panels/demo/`), built into the crate so the service can install and
//! run it without the repository: ten real antimicrobial-resistance genes from NCBI's Reference
//! Gene Catalog (public domain); see its README.

use std::io;
use std::path::Path;

use crate::definition::{PANEL_FILE, Panel};
use crate::error::Error;

/// The demo panel's files: (name inside the panel folder, contents).
pub const FILES: &[(&str, &[u8])] = &[
    (PANEL_FILE, include_bytes!("../../../assets/panels/demo/panel.json")),
    ("amr_genes.fasta", include_bytes!("../../../assets/panels/demo/amr_genes.fasta")),
    ("README.md", include_bytes!("../../../assets/panels/demo/README.md")),
];

/// The demo panel, loaded from the built-in files.
pub fn panel() -> Panel {
    // The files are fixed at build time and the tests load them, so this cannot fail at run
    // time unless the build is broken.
    Panel::load_with(Path::new("demo"), |name| {
        FILES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, bytes)| bytes.to_vec())
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    })
    .expect("the built-in demo panel is valid")
}

/// Writes the demo panel's files into `dir` (created if missing), ready for [`Panel::load`].
pub fn write_demo_panel(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Write { path: dir.to_owned(), source })?;
    for (name, bytes) in FILES {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|source| Error::Write { path, source })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_panel_loads() {
        let p = panel();
        assert_eq!(p.name(), "MGDS demo AMR panel");
        let subs = p.sub_panels();
        assert_eq!(subs.len(), 1);
        assert_eq!(subs[0].markers.len(), 10);
        assert!(subs[0].markers.iter().all(|m| !m.is_short(p.thresholds())));
    }
}
