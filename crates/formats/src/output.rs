//! Output files written whole or not at all.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use tempfile::TempPath;

use crate::error::Error;

/// How output files are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputCompression {
    /// Uncompressed.
    #[default]
    Plain,
    /// gzip at `level` (0 = store only, 9 = smallest and slowest).
    Gzip {
        /// The compression level, 0 to 9.
        level: u32,
    },
}

impl OutputCompression {
    /// gzip at level 6, the `gzip` tool's default: within a few percent of level 9's size at
    /// several times its speed.
    pub const GZIP: OutputCompression = OutputCompression::Gzip { level: 6 };
}

enum Sink {
    Plain(BufWriter<File>),
    // Boxed: the encoder's state is much larger than a plain writer.
    Gzip(Box<GzEncoder<BufWriter<File>>>),
}

/// A file being written: the bytes go to a temporary file beside `path`, which becomes `path`
/// only in [`Output::finish`]. Dropped without `finish` (on an error), it leaves nothing behind,
/// so a half-written output is never mistaken for a complete one.
pub(crate) struct Output {
    sink: Sink,
    temp: TempPath,
    path: PathBuf,
    // Whether the last byte written was a line ending (or nothing was written).
    at_line_start: bool,
}

const BUF_SIZE: usize = 128 * 1024;

impl Output {
    pub(crate) fn create(path: &Path, compression: OutputCompression) -> Result<Output, Error> {
        let err = |source| Error::Write {
            path: path.to_owned(),
            source,
        };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".part");
        // Temporary files are private by default; the output is an ordinary file.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o644));
        }
        let (file, temp) = builder.tempfile_in(dir).map_err(err)?.into_parts();
        let file = BufWriter::with_capacity(BUF_SIZE, file);
        let sink = match compression {
            OutputCompression::Plain => Sink::Plain(file),
            OutputCompression::Gzip { level } => Sink::Gzip(Box::new(GzEncoder::new(
                file,
                flate2::Compression::new(level.min(9)),
            ))),
        };
        Ok(Output {
            sink,
            temp,
            path: path.to_owned(),
            at_line_start: true,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Writes a record's raw bytes, adding a line ending if the record lacks one (the last
    /// record of an input file may), so the next record starts on its own line.
    pub(crate) fn write_record(&mut self, raw: &[u8]) -> Result<(), Error> {
        if !self.at_line_start {
            self.write(b"\n")?;
        }
        self.write(raw)?;
        self.at_line_start = raw.last().is_none_or(|&b| b == b'\n');
        Ok(())
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let result = match &mut self.sink {
            Sink::Plain(w) => w.write_all(bytes),
            Sink::Gzip(w) => w.write_all(bytes),
        };
        result.map_err(|source| Error::Write {
            path: self.path.clone(),
            source,
        })
    }

    /// Flushes everything and moves the file into place.
    pub(crate) fn finish(self) -> Result<(), Error> {
        let path = self.path;
        let err = |source: io::Error| Error::Write {
            path: path.clone(),
            source,
        };
        let file = match self.sink {
            Sink::Plain(w) => w.into_inner().map_err(|e| err(e.into_error()))?,
            Sink::Gzip(w) => w
                .finish()
                .map_err(err)?
                .into_inner()
                .map_err(|e| err(e.into_error()))?,
        };
        file.sync_all().map_err(err)?;
        self.temp.persist(&path).map_err(|e| err(e.error))?;
        Ok(())
    }
}
