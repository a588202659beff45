//! Compression detected from magic bytes, and a guess at what other files are.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use flate2::read::MultiGzDecoder;

use crate::error::Error;

// Large buffers: reads are consumed sequentially and the decompressor works best in big chunks.
const BUF_SIZE: usize = 128 * 1024;

/// How a file is compressed, as told by its first bytes (never by its name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Not compressed.
    None,
    /// gzip, including several concatenated members (as sequencers and `cat a.gz b.gz` write).
    Gzip,
    /// bzip2 (recognised, not read).
    Bzip2,
    /// Zstandard (recognised, not read).
    Zstd,
    /// xz (recognised, not read).
    Xz,
}

impl Compression {
    /// The compression that `magic` (a file's first bytes, at least 6 for a sure answer) shows.
    pub fn detect(magic: &[u8]) -> Compression {
        if magic.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if magic.starts_with(b"BZh") && magic.get(3).is_none_or(|b| (b'1'..=b'9').contains(b)) {
            Compression::Bzip2
        } else if magic.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else if magic.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Compression::Xz
        } else {
            Compression::None
        }
    }

    /// Whether this crate can read it.
    pub fn is_supported(self) -> bool {
        matches!(self, Compression::None | Compression::Gzip)
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compression::None => "no compression",
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
        })
    }
}

/// Opens `path` and returns its compression and a reader of its decompressed bytes.
///
/// Fails with [`Error::UnsupportedCompression`] for bzip2, zstd and xz.
///
/// A gzip file is decompressed on a thread of its own, a few chunks ahead of the reader, so that
/// parsing and decompression run side by side (and two files read together, such as reads and
/// their read-level results, decompress in parallel).
pub fn open(path: impl AsRef<Path>) -> Result<(Compression, Box<dyn BufRead + Send>), Error> {
    open_from(path.as_ref(), |f| f)
}

/// [`open`], adding to `consumed` the bytes read from the file itself (before decompression):
/// how far through the file a reader is, for progress.
pub fn open_counted(
    path: impl AsRef<Path>,
    consumed: Arc<AtomicU64>,
) -> Result<(Compression, Box<dyn BufRead + Send>), Error> {
    open_from(path.as_ref(), |inner| Counted { inner, consumed })
}

fn open_from<R: Read + Send + 'static>(
    path: &Path,
    wrap: impl FnOnce(File) -> R,
) -> Result<(Compression, Box<dyn BufRead + Send>), Error> {
    let mut file = wrap(File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?);
    let mut magic = [0u8; 6];
    let n = read_up_to(&mut file, &mut magic).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    let compression = Compression::detect(&magic[..n]);
    let whole = Cursor::new(magic).take(n as u64).chain(file);
    match compression {
        Compression::Gzip => {
            Ok((compression, Box::new(Prefetch::spawn(MultiGzDecoder::new(BufReader::with_capacity(BUF_SIZE, whole))))))
        }
        _ => decompress(whole, path),
    }
}

/// A reader that counts the bytes read through it.
struct Counted<R> {
    inner: R,
    consumed: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Chunks read ahead by [`Prefetch`]'s thread.
const PREFETCH_CHUNKS: usize = 4;
const CHUNK_SIZE: usize = 1 << 20;

/// A reader whose source is read on a background thread, in chunks, a few chunks ahead.
///
/// Errors of the source arrive in order, after the bytes before them. Dropping the reader stops
/// the thread at its next chunk.
struct Prefetch {
    chunks: std::sync::mpsc::Receiver<io::Result<Vec<u8>>>,
    spare: std::sync::mpsc::SyncSender<Vec<u8>>,
    current: Vec<u8>,
    pos: usize,
    done: bool,
}

impl Prefetch {
    fn spawn<R: Read + Send + 'static>(mut source: R) -> Prefetch {
        let (tx, chunks) = std::sync::mpsc::sync_channel::<io::Result<Vec<u8>>>(PREFETCH_CHUNKS);
        let (spare, recycled) = std::sync::mpsc::sync_channel::<Vec<u8>>(PREFETCH_CHUNKS + 2);
        std::thread::spawn(move || {
            loop {
                let mut buf = recycled.try_recv().unwrap_or_default();
                buf.resize(CHUNK_SIZE, 0);
                let mut filled = 0;
                let result = loop {
                    match source.read(&mut buf[filled..]) {
                        Ok(0) => break Ok(()),
                        Ok(k) => {
                            filled += k;
                            if filled == buf.len() {
                                break Ok(());
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => break Err(e),
                    }
                };
                buf.truncate(filled);
                let end = filled == 0;
                if filled > 0 && tx.send(Ok(buf)).is_err() {
                    return;
                }
                if let Err(e) = result {
                    let _ = tx.send(Err(e));
                    return;
                }
                if end {
                    return;
                }
            }
        });
        Prefetch { chunks, spare, current: Vec::new(), pos: 0, done: false }
    }
}

impl Read for Prefetch {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let available = self.fill_buf()?;
            let n = available.len().min(out.len());
            out[..n].copy_from_slice(&available[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Prefetch {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.pos == self.current.len() && !self.done {
            match self.chunks.recv() {
                Ok(Ok(next)) => {
                    let used = std::mem::replace(&mut self.current, next);
                    let _ = self.spare.try_send(used);
                    self.pos = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                // The thread finished: the source has ended.
                Err(_) => self.done = true,
            }
        }
        Ok(&self.current[self.pos..])
    }

    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.current.len());
    }
}

/// Detects the compression of `reader` from its first bytes and returns a reader of the
/// decompressed bytes. `name` is used in error messages.
pub fn decompress<'a, R: Read + Send + 'a>(
    mut reader: R,
    name: &Path,
) -> Result<(Compression, Box<dyn BufRead + Send + 'a>), Error> {
    let mut magic = [0u8; 6];
    let n = read_up_to(&mut reader, &mut magic).map_err(|source| Error::Io { path: name.to_owned(), source })?;
    let compression = Compression::detect(&magic[..n]);
    // The peeked bytes go back in front of the rest of the stream.
    let whole = Cursor::new(magic).take(n as u64).chain(reader);
    let out: Box<dyn BufRead + Send + 'a> = match compression {
        Compression::None => Box::new(BufReader::with_capacity(BUF_SIZE, whole)),
        Compression::Gzip => {
            Box::new(BufReader::with_capacity(BUF_SIZE, MultiGzDecoder::new(BufReader::with_capacity(BUF_SIZE, whole))))
        }
        _ => {
            return Err(Error::UnsupportedCompression { path: name.to_owned(), compression });
        }
    };
    Ok((compression, out))
}

/// Reads until `buf` is full or the stream ends; returns the number of bytes read.
pub(crate) fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match reader.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// What a file that is not FASTA/FASTQ looks like, from its first (decompressed) bytes, in
/// words for a message ("a PDF document").
pub(crate) fn describe_content(start: &[u8]) -> String {
    const KNOWN: &[(&[u8], &str)] = &[
        (b"%PDF", "a PDF document"),
        (b"PK\x03\x04", "a ZIP archive (unzip it and choose the reads inside)"),
        (b"BAM\x01", "a BAM alignment file (convert it to FASTQ first, for example with `samtools fastq`)"),
        (b"CRAM", "a CRAM alignment file (convert it to FASTQ first, for example with `samtools fastq`)"),
        (b"\x89HDF\r\n\x1a\n", "an HDF5 file, such as Nanopore FAST5 (basecall it to FASTQ first)"),
        (b"\x89PNG", "a PNG image"),
        (b"\xff\xd8\xff", "a JPEG image"),
        (b"GIF8", "a GIF image"),
        (b"SQLite format 3\0", "an SQLite database"),
        (b"\xd0\xcf\x11\xe0", "a Microsoft Office document"),
        (b"{\\rtf", "an RTF document"),
        (b"##fileformat=VCF", "a VCF variants file"),
        (b"\x1f\x8b", "gzip data inside gzip (the file was compressed twice; decompress it once)"),
        (b"BZh", "bzip2 data inside gzip"),
    ];
    for (magic, what) in KNOWN {
        if start.starts_with(magic) {
            return (*what).to_owned();
        }
    }
    if start.len() > 262 && &start[257..262] == b"ustar" {
        return "a tar archive (extract it and choose the reads inside)".to_owned();
    }
    // SAM headers start with `@` like FASTQ; their tab-separated tags give them away.
    for tag in [&b"@HD\t"[..], b"@SQ\t", b"@RG\t", b"@PG\t", b"@CO\t"] {
        if start.starts_with(tag) {
            return "a SAM alignment file (convert it to FASTQ first, for example with `samtools fastq`)".to_owned();
        }
    }
    let text = start.strip_prefix(b"\xef\xbb\xbf").unwrap_or(start);
    let first = text.iter().copied().find(|b| !b.is_ascii_whitespace());
    match first {
        _ if is_binary(start) => "binary data".to_owned(),
        Some(b'<') => "an HTML or XML document".to_owned(),
        Some(b'{' | b'[') => "a JSON document".to_owned(),
        None => "blank text".to_owned(),
        Some(_) => {
            let line = text.split(|&b| b == b'\n').find(|l| !crate::error::trim_eol(l).is_empty());
            format!("text starting `{}`", crate::error::excerpt(line.unwrap_or_default()))
        }
    }
}

/// Whether bytes look like binary rather than text: a NUL, or many control characters.
pub(crate) fn is_binary(bytes: &[u8]) -> bool {
    let control =
        bytes.iter().filter(|&&b| b == 0 || (b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t')) || b == 0x7f).count();
    bytes.contains(&0) || control * 20 > bytes.len().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_magic() {
        assert_eq!(Compression::detect(&[0x1f, 0x8b, 8, 0]), Compression::Gzip);
        assert_eq!(Compression::detect(b"BZh91AY"), Compression::Bzip2);
        assert_eq!(Compression::detect(&[0x28, 0xb5, 0x2f, 0xfd, 0, 0]), Compression::Zstd);
        assert_eq!(Compression::detect(&[0xfd, b'7', b'z', b'X', b'Z', 0]), Compression::Xz);
        assert_eq!(Compression::detect(b"@r1\nACGT"), Compression::None);
        assert_eq!(Compression::detect(b"BZhello"), Compression::None);
        assert_eq!(Compression::detect(b""), Compression::None);
    }

    #[test]
    fn decompress_plain_keeps_every_byte() {
        let (c, mut r) = decompress(&b"@r\nAC\n+\nII\n"[..], Path::new("x")).unwrap();
        assert_eq!(c, Compression::None);
        let mut s = Vec::new();
        r.read_to_end(&mut s).unwrap();
        assert_eq!(s, b"@r\nAC\n+\nII\n");
        // Shorter than the magic buffer.
        let (_, mut r) = decompress(&b"@"[..], Path::new("x")).unwrap();
        s.clear();
        r.read_to_end(&mut s).unwrap();
        assert_eq!(s, b"@");
    }

    #[test]
    fn decompress_rejects_bzip2_with_its_name() {
        let err = decompress(&b"BZh91AY&SY"[..], Path::new("a.fq.bz2")).err().unwrap();
        assert!(matches!(err, Error::UnsupportedCompression { compression: Compression::Bzip2, .. }));
    }

    #[test]
    fn describes_common_wrong_files() {
        assert_eq!(describe_content(b"%PDF-1.7\n%\xe2\xe3"), "a PDF document");
        assert!(describe_content(b"PK\x03\x04\x14\0").starts_with("a ZIP archive"));
        assert!(describe_content(b"@HD\tVN:1.6\tSO:coordinate\n").starts_with("a SAM"));
        assert_eq!(describe_content(b"\x00\x01\x02\x03junk"), "binary data");
        assert_eq!(describe_content(b"sample,reads\nA,1\n"), "text starting `sample,reads`");
        assert_eq!(describe_content(b"  \n"), "blank text");
    }
}
