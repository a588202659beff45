//! Files written beside their final name and renamed into place when complete, so that no
//! reader ever sees one half written: the database file and the files kept beside it.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::Error;

/// A file written beside its final name and renamed into place when complete, so that no
/// reader ever sees it half written.
pub(crate) struct AtomicFile {
    out: PathBuf,
    w: BufWriter<tempfile::NamedTempFile>,
}

impl AtomicFile {
    /// Starts writing `out`.
    pub fn create(out: &Path) -> Result<AtomicFile, Error> {
        let dir = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let tmp = tempfile::Builder::new()
            .prefix(".mgdsdb-")
            .tempfile_in(dir)
            .map_err(|source| Error::Write { path: out.to_owned(), source })?;
        Ok(AtomicFile { out: out.to_owned(), w: BufWriter::with_capacity(1 << 20, tmp) })
    }

    /// Where to write.
    pub fn writer(&mut self) -> &mut dyn Write {
        &mut self.w
    }

    /// The error for a failed write.
    pub fn error(&self, source: io::Error) -> Error {
        Error::Write { path: self.out.clone(), source }
    }

    /// Renames the finished file into place; returns its size.
    pub fn commit(self) -> Result<u64, Error> {
        let out = self.out;
        let write_err = |source| Error::Write { path: out.clone(), source };
        let tmp = self.w.into_inner().map_err(|e| write_err(e.into_error()))?;
        // A temporary file is private to its owner; a database is ordinary data that other
        // accounts (a service, a colleague) may read.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644)).map_err(write_err)?;
        }
        tmp.as_file().sync_all().map_err(write_err)?;
        let bytes = tmp.as_file().metadata().map_err(write_err)?.len();
        tmp.persist(&out).map_err(|e| write_err(e.error))?;
        Ok(bytes)
    }
}

/// Writes a file through `f` atomically ([`AtomicFile`]); returns its size and what `f`
/// returned.
pub(crate) fn write_atomically<T>(
    out: &Path,
    f: impl FnOnce(&mut dyn Write) -> io::Result<T>,
) -> Result<(u64, T), Error> {
    let mut file = AtomicFile::create(out)?;
    let value = f(file.writer()).map_err(|e| file.error(e))?;
    Ok((file.commit()?, value))
}
