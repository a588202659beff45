//! Looking at a folder: which files matter, walking the tree, and the one read that decides a
//! settled file is whole (gzip to its end) and gives its content hash.

use std::fs;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use globset::{Glob, GlobSet, GlobSetBuilder};
use sha2::{Digest, Sha256};

use crate::Error;
use crate::config::FolderConfig;
use crate::plan::{is_marker, is_sequence};

/// A file's fingerprint as the file system tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub size: u64,
    pub mtime_ns: i64,
}

/// The fingerprint of a regular file, or `None` (gone, or not a file).
pub(crate) fn stat(path: &Path) -> Option<Stat> {
    let m = fs::metadata(path).ok()?;
    if !m.is_file() {
        return None;
    }
    let mtime_ns = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
    Some(Stat { size: m.len(), mtime_ns })
}

/// Which files of a folder matter: sequence files passing the patterns, and run markers.
#[derive(Debug, Clone)]
pub(crate) struct Filter {
    root: PathBuf,
    recursive: bool,
    include: Option<GlobSet>,
    exclude: GlobSet,
}

fn globs(patterns: &[String]) -> Result<GlobSet, Error> {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        b.add(Glob::new(p).map_err(|e| Error::Pattern { pattern: p.clone(), source: e })?);
    }
    b.build().map_err(|e| Error::Pattern { pattern: patterns.join(" "), source: e })
}

/// Folders that never hold reads to upload but can hold very many files (cycle images,
/// per-lane base calls, raw signal): not walked.
fn skipped_dir(name: &str) -> bool {
    name.starts_with('.')
        || matches!(name, "Thumbnail_Images" | "InterOp" | "Logs" | "Images" | "Recipe" | "Config")
        || name.starts_with("fast5")
        || name.starts_with("pod5")
        || (name.len() == 4 && name.starts_with('L') && name[1..].bytes().all(|b| b.is_ascii_digit()))
}

impl Filter {
    /// The filter of a folder's configuration.
    pub fn new(cfg: &FolderConfig, root: &Path) -> Result<Filter, Error> {
        Ok(Filter {
            root: root.to_path_buf(),
            recursive: cfg.recursive,
            include: if cfg.include.is_empty() { None } else { Some(globs(&cfg.include)?) },
            exclude: globs(&cfg.exclude)?,
        })
    }

    /// Whether the file at `path` matters.
    pub fn wants(&self, path: &Path) -> bool {
        let Ok(rel) = path.strip_prefix(&self.root) else { return false };
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
        if name.starts_with('.') || self.exclude.is_match(rel) {
            return false;
        }
        if !self.recursive && rel.components().count() > 1 {
            return false;
        }
        if rel.parent().is_some_and(|p| p.components().any(|c| skipped_dir(&c.as_os_str().to_string_lossy()))) {
            return false;
        }
        if is_marker(name) {
            return true;
        }
        is_sequence(name) && self.include.as_ref().is_none_or(|i| i.is_match(rel))
    }

    /// Every file under `dir` (the root or a folder inside it) that matters, with its
    /// fingerprint. Unreadable folders are skipped (they may be appearing or going).
    pub fn walk(&self, dir: &Path) -> Vec<(PathBuf, Stat)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            let Ok(entries) = fs::read_dir(&d) else { continue };
            for e in entries.flatten() {
                let Ok(ft) = e.file_type() else { continue };
                let name = e.file_name();
                let name = name.to_string_lossy();
                if ft.is_dir() {
                    if self.recursive && !skipped_dir(&name) {
                        stack.push(e.path());
                    }
                    continue;
                }
                // Only the file name decides before the (costlier) stat.
                if !(is_marker(&name) || is_sequence(&name)) {
                    continue;
                }
                let p = e.path();
                if self.wants(&p)
                    && let Some(s) = stat(&p)
                {
                    out.push((p, s));
                }
            }
        }
        out
    }
}

/// Hashes the bytes read through it.
struct Hashing<R> {
    inner: R,
    hash: Sha256,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

/// Reads the file once: its SHA-256, and for gzip (told by its magic bytes) a full decode
/// of every member, which fails on a file cut short. Answers the hash, or why it is not whole.
pub(crate) fn check(path: &Path) -> Result<String, String> {
    let file = fs::File::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    let mut r = Hashing { inner: BufReader::with_capacity(256 * 1024, file), hash: Sha256::new() };
    let mut magic = [0u8; 2];
    let n = read_up_to(&mut r, &mut magic).map_err(|e| format!("cannot read it: {e}"))?;
    if n == 2 && magic == [0x1f, 0x8b] {
        let chained = io::Cursor::new(magic).chain(&mut r);
        let mut gz = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(256 * 1024, chained));
        io::copy(&mut gz, &mut io::sink()).map_err(|e| format!("it is not a whole gzip file ({e})"))?;
        // Whatever the decoder buffered has been hashed already; hash any tail it left.
        let mut rest = gz.into_inner();
        io::copy(&mut rest, &mut io::sink()).map_err(|e| format!("cannot read it: {e}"))?;
    } else {
        io::copy(&mut r, &mut io::sink()).map_err(|e| format!("cannot read it: {e}"))?;
    }
    Ok(hex::encode(r.hash.finalize()))
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn a_cut_gzip_is_not_whole_and_hashes_cover_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let whole = [gz(b"@r1\nACGT\n+\nIIII\n"), gz(b"@r2\nACGT\n+\nIIII\n")].concat();
        let p = dir.path().join("a.fastq.gz");
        fs::write(&p, &whole).unwrap();
        assert_eq!(check(&p).unwrap(), hex::encode(Sha256::digest(&whole)));
        fs::write(&p, &whole[..whole.len() - 5]).unwrap();
        assert!(check(&p).is_err());
        let q = dir.path().join("b.fastq");
        fs::write(&q, b"@r\nA\n+\nI\n").unwrap();
        assert_eq!(check(&q).unwrap(), hex::encode(Sha256::digest(b"@r\nA\n+\nI\n")));
    }
}
