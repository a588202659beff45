//! How one sample's file is made from the files on disk, and the staged file it is sent from.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use flate2::write::GzEncoder;
use serde::{Deserialize, Serialize};
use tempfile::TempPath;

use crate::UploadError;

/// gzip level of the file an interleaved pair becomes. Interleaving is on the upload's way, so it
/// must keep pace with a fast link: level 1 compresses FASTQ at over 100 MB/s on one core, and
/// within about a tenth of level 6's size, which runs at a third of that speed.
const PAIR_GZIP_LEVEL: u32 = 1;
/// Bytes read from an input at a time while joining (and between looks at the cancel flag).
const COPY_CHUNK: usize = 1 << 20;

/// How one sample's file is made. (The names on the wire are those of the watcher's journal,
/// which keeps them across versions.)
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Source {
    /// One file, sent as it is.
    Single(PathBuf),
    /// Files joined end to end (the lanes of one read, the batch files of one barcode): all
    /// gzip or all uncompressed, since gzip members join into one gzip file.
    Concat(Vec<PathBuf>),
    /// Read pairs (read 1, read 2), one per lane: each interleaved (read 1, then its read 2),
    /// one after the other, into one gzipped FASTQ.
    Interleave(Vec<(PathBuf, PathBuf)>),
}

impl Source {
    /// Every file it reads.
    pub fn files(&self) -> Vec<PathBuf> {
        match self {
            Source::Single(p) => vec![p.clone()],
            Source::Concat(v) => v.clone(),
            Source::Interleave(v) => v.iter().flat_map(|(a, b)| [a.clone(), b.clone()]).collect(),
        }
    }

    /// Whether the sample is interleaved paired-end reads.
    pub fn is_interleaved(&self) -> bool {
        matches!(self, Source::Interleave(_))
    }

    /// The extension the sample's file name ends in: `.fastq.gz` for interleaved pairs, else the
    /// first file's (`.fq`, `.fasta.gz`, ...).
    pub fn extension(&self) -> String {
        match self {
            Source::Interleave(_) => ".fastq.gz".into(),
            other => {
                let name = other.files().first().map(|p| file_name(p)).unwrap_or_default();
                let stem = mgds_api::sequence_file_stem(&name).map_or(name.len(), str::len);
                name[stem..].to_string()
            }
        }
    }

    /// The file name the sample gets unless told otherwise: the file's own name; for interleaved
    /// pairs the first read 1's name without its mate marker, with `_interleaved.fastq.gz`.
    pub fn default_filename(&self) -> String {
        match self {
            Source::Interleave(pairs) => {
                pairs.first().map(|(r1, _)| mgds_formats::interleaved_name(r1)).unwrap_or_default()
            }
            other => other.files().first().map(|p| file_name(p)).unwrap_or_default(),
        }
    }

    /// The bytes of its files on disk (what the user sees as its size before it is sent).
    pub fn input_bytes(&self) -> u64 {
        self.files().iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum()
    }

    /// The file to send: the file itself, or one made in `staging` (removed when the returned
    /// value is dropped, whatever happened). Blocking; stops early with
    /// [`UploadError::Cancelled`] once `stop` is set.
    pub(crate) fn prepare(&self, staging: &Path, stop: &Arc<AtomicBool>) -> Result<Prepared, UploadError> {
        if let Source::Single(p) = self {
            return Ok(Prepared { path: p.clone(), _staged: None });
        }
        std::fs::create_dir_all(staging)
            .map_err(|source| UploadError::Staging { dir: staging.to_path_buf(), source })?;
        let (file, staged) = tempfile::Builder::new()
            .prefix(STAGED_PREFIX)
            .suffix(&self.extension())
            .tempfile_in(staging)
            .map_err(|source| UploadError::Staging { dir: staging.to_path_buf(), source })?
            .into_parts();
        let path = staged.to_path_buf();
        let mut out = BufWriter::with_capacity(COPY_CHUNK, file);
        let staging_error = |source: io::Error| UploadError::Staging { dir: staging.to_path_buf(), source };
        self.write_to(&mut out, &path, None, stop).map_err(|e| match e {
            UploadError::Write(source) => staging_error(source),
            other => other,
        })?;
        let file = out.into_inner().map_err(|e| staging_error(e.into_error()))?;
        file.sync_all().map_err(staging_error)?;
        Ok(Prepared { path, _staged: Some(staged) })
    }

    /// Writes the sample's file into `out` (`name` names it in errors): pairs interleaved and
    /// gzipped, other files joined as they are. `consumed`, when given, counts the bytes read from
    /// the source files (for progress). Blocking; stops early with [`UploadError::Cancelled`]
    /// once `stop` is set. A failure to write `out` is [`UploadError::Write`].
    pub(crate) fn write_to(
        &self,
        out: &mut impl Write,
        name: &Path,
        consumed: Option<&Arc<AtomicU64>>,
        stop: &Arc<AtomicBool>,
    ) -> Result<(), UploadError> {
        let mut out = Stoppable { inner: out, stop: stop.clone() };
        let write_error = |source: io::Error| {
            if stop.load(Ordering::Relaxed) { UploadError::Cancelled } else { UploadError::Write(source) }
        };
        match self {
            Source::Interleave(pairs) => {
                let mut gz = GzEncoder::new(&mut out, flate2::Compression::new(PAIR_GZIP_LEVEL));
                for (r1, r2) in pairs {
                    if let Err(e) = mgds_formats::interleave_into(r1, r2, &mut gz, name, consumed.cloned()) {
                        return Err(match e {
                            _ if stop.load(Ordering::Relaxed) => UploadError::Cancelled,
                            mgds_formats::Error::Write { source, .. } => UploadError::Write(source),
                            other => UploadError::File(Box::new(other)),
                        });
                    }
                }
                gz.finish().map_err(write_error)?;
            }
            Source::Single(p) => copy_counted(p, &mut out, consumed, &write_error)?,
            Source::Concat(parts) => {
                check_same_compression(parts)?;
                for p in parts {
                    copy_counted(p, &mut out, consumed, &write_error)?;
                }
            }
        }
        out.flush().map_err(write_error)
    }
}

/// Copies the file at `p` into `out`, counting what was read.
fn copy_counted(
    p: &Path,
    out: &mut impl Write,
    consumed: Option<&Arc<AtomicU64>>,
    write_error: &dyn Fn(io::Error) -> UploadError,
) -> Result<(), UploadError> {
    let mut input = File::open(p).map_err(|source| UploadError::Read { path: p.to_path_buf(), source })?;
    let mut buf = vec![0u8; COPY_CHUNK];
    loop {
        let n = input.read(&mut buf).map_err(|source| UploadError::Read { path: p.to_path_buf(), source })?;
        if n == 0 {
            return Ok(());
        }
        out.write_all(&buf[..n]).map_err(write_error)?;
        if let Some(c) = consumed {
            c.fetch_add(n as u64, Ordering::Relaxed);
        }
    }
}

/// Names of staged files start with this, so that leftovers of a crash can be told apart.
pub(crate) const STAGED_PREFIX: &str = ".mgds-upload-";

/// The file an upload sends, and the staged copy to remove once it is sent (or not).
pub(crate) struct Prepared {
    pub path: PathBuf,
    _staged: Option<TempPath>,
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Files joined end to end must all be gzip or all uncompressed: gzip members join into one
/// gzip file, plain text into one text file, but a mix is neither.
fn check_same_compression(parts: &[PathBuf]) -> Result<(), UploadError> {
    let mut first: Option<(&PathBuf, bool)> = None;
    for p in parts {
        let gz = is_gzip(p).map_err(|source| UploadError::Read { path: p.clone(), source })?;
        match first {
            None => first = Some((p, gz)),
            Some((q, g)) if g != gz => {
                let (gzip, plain) = if g { (q.clone(), p.clone()) } else { (p.clone(), q.clone()) };
                return Err(UploadError::MixedCompression { gzip, plain });
            }
            Some(_) => {}
        }
    }
    Ok(())
}

fn is_gzip(p: &Path) -> io::Result<bool> {
    let mut magic = [0u8; 2];
    let mut f = File::open(p)?;
    let mut n = 0;
    while n < 2 {
        match f.read(&mut magic[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n == 2 && magic == [0x1f, 0x8b])
}

/// A writer that fails once `stop` is set, so that a long join ends soon after a cancel.
struct Stoppable<W> {
    inner: W,
    stop: Arc<AtomicBool>,
}

impl<W: Write> Write for Stoppable<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.stop.load(Ordering::Relaxed) {
            // Not `Interrupted`: `write_all` would take that as a cue to try again.
            return Err(io::Error::other("the upload was cancelled"));
        }
        self.inner.write(data)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_extensions() {
        let single = Source::Single("/d/S1.fq.gz".into());
        assert_eq!((single.extension().as_str(), single.default_filename().as_str()), (".fq.gz", "S1.fq.gz"));
        let pair = Source::Interleave(vec![("/d/S1_R1_001.fastq.gz".into(), "/d/S1_R2_001.fastq.gz".into())]);
        assert_eq!(pair.default_filename(), "S1_001_interleaved.fastq.gz");
        assert_eq!(pair.extension(), ".fastq.gz");
        assert!(pair.is_interleaved() && !single.is_interleaved());
        let lanes = Source::Concat(vec!["/d/S1_L001_R1_001.fastq".into(), "/d/S1_L002_R1_001.fastq".into()]);
        assert_eq!(lanes.extension(), ".fastq");
    }

    #[test]
    fn the_journal_names_stay() {
        let s = Source::Concat(vec!["a.fq".into()]);
        assert_eq!(serde_json::to_string(&s).unwrap(), r#"{"concat":["a.fq"]}"#);
    }
}
