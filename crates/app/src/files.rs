//! Files the user chose to save.

use crate::error::{CmdError, CmdResult};

/// Writes a whole file, with an error in plain words.
pub fn write_file(path: &std::path::Path, bytes: &[u8]) -> CmdResult<()> {
    std::fs::write(path, bytes).map_err(|e| {
        CmdError::new(
            "file",
            format!(
                "Could not save {}: {e}. Choose a folder you may write to, and check the disk is not full.",
                path.display()
            ),
        )
    })
}
