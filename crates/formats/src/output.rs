//! Output files written whole or not at all.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, TrySendError, sync_channel};
use std::thread::JoinHandle;

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

pub(crate) enum Sink {
    Plain(FileWriter),
    // Boxed: the encoder's state is much larger than a plain writer.
    Gzip(Box<GzEncoder<FileWriter>>),
}

/// A file being written: the bytes go to a temporary file beside `path`, which becomes `path`
/// only in [`Output::finish`]. Dropped without `finish` (on an error), it leaves nothing behind,
/// so a half-written output is never mistaken for a complete one.
pub(crate) struct Output {
    records: RecordWriter<Sink>,
    temp: TempPath,
    /// Whether the finished file may replace one already at its path.
    replace: bool,
}

/// Writes whole records to any writer, each starting on its own line; `name` is the
/// destination as errors name it.
pub(crate) struct RecordWriter<W> {
    inner: W,
    name: PathBuf,
    // Whether the last byte written was a line ending (or nothing was written).
    at_line_start: bool,
}

impl<W: Write> RecordWriter<W> {
    pub(crate) fn new(inner: W, name: &Path) -> Self {
        RecordWriter { inner, name: name.to_owned(), at_line_start: true }
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
        self.inner.write_all(bytes).map_err(|source| Error::Write { path: self.name.clone(), source })
    }
}

impl Write for Sink {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Plain(w) => w.write(data),
            Sink::Gzip(w) => w.write(data),
        }
    }

    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        match self {
            Sink::Plain(w) => w.write_all(data),
            Sink::Gzip(w) => w.write_all(data),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Plain(w) => w.flush(),
            Sink::Gzip(w) => w.flush(),
        }
    }
}

impl Output {
    pub(crate) fn create(path: &Path, compression: OutputCompression) -> Result<Output, Error> {
        let err = |source| Error::Write { path: path.to_owned(), source };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
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
        let file = FileWriter::spawn(file);
        let sink = match compression {
            OutputCompression::Plain => Sink::Plain(file),
            OutputCompression::Gzip { level } => {
                Sink::Gzip(Box::new(GzEncoder::new(file, flate2::Compression::new(level.min(9)))))
            }
        };
        Ok(Output { records: RecordWriter::new(sink, path), temp, replace: true })
    }

    /// The same output, finished without replacing a file that is already at its path
    /// ([`Error::OutputExists`] instead).
    pub(crate) fn keep_existing(self) -> Output {
        Output { replace: false, ..self }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.records.name
    }

    /// See [`RecordWriter::write_record`].
    pub(crate) fn write_record(&mut self, raw: &[u8]) -> Result<(), Error> {
        self.records.write_record(raw)
    }

    /// The records' writer, to hand to code that writes to any writer.
    pub(crate) fn records(&mut self) -> &mut RecordWriter<Sink> {
        &mut self.records
    }

    /// Flushes everything and moves the file into place.
    pub(crate) fn finish(self) -> Result<(), Error> {
        let path = self.records.name;
        let err = |source: io::Error| Error::Write { path: path.clone(), source };
        let file = match self.records.inner {
            Sink::Plain(w) => w.finish().map_err(err)?,
            Sink::Gzip(w) => w.finish().map_err(err)?.finish().map_err(err)?,
        };
        file.sync_all().map_err(err)?;
        if self.replace {
            self.temp.persist(&path).map_err(|e| err(e.error))?;
        } else {
            self.temp.persist_noclobber(&path).map_err(|e| match e.error.kind() {
                io::ErrorKind::AlreadyExists => Error::OutputExists { path: path.clone() },
                _ => err(e.error),
            })?;
        }
        Ok(())
    }
}

/// Bytes handed to the writing thread at a time: large, so a run of selected records goes out
/// in few system calls.
const CHUNK_SIZE: usize = 1 << 20;
/// Chunks waiting for the writing thread; memory stays under a few of them.
const CHUNKS_AHEAD: usize = 4;
/// The disk is asked to catch up every this many bytes written (see [`FileWriter`]).
const SYNC_EVERY: u64 = 16 << 20;

/// A buffered writer whose file is written on a thread of its own.
///
/// The caller (parsing and selecting records, on a machine whose other core is decompressing)
/// only copies bytes into a chunk; the system calls happen on the thread.
///
/// The disk is kept writing while the file grows, so that the final `sync_all` in
/// [`Output::finish`] (which stays: an output must survive a crash once it is in place) waits
/// for the last few megabytes only, not for the whole file (the kernel alone would start
/// writing a 300 MB file back only after 30 s). Every [`SYNC_EVERY`] bytes the writing thread
/// asks a third thread, which sleeps in between, to sync the file's data. The sync used to be on
/// the writing thread, every 64 MiB: each took about 30 ms, during which the writer stopped,
/// the chunks ahead filled up within a few ms and the whole pipeline (reads decompressed,
/// records selected) stood still: four times, up to about 0.1 s, in a 0.6 s subset of a 294 MB
/// output. Asked for beside the writes, a sync costs the pipeline nothing, so syncs can come
/// more often and leave a shorter tail for the final one (at 16 MiB: about 7 ms each, and a
/// final `sync_all` of about 11 ms). A request made while a sync is running is folded into the
/// next one.
pub(crate) struct FileWriter {
    buf: Vec<u8>,
    chunks: Option<SyncSender<Vec<u8>>>,
    spare: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<io::Result<File>>>,
}

impl FileWriter {
    fn spawn(mut file: File) -> FileWriter {
        let (chunks, full) = sync_channel::<Vec<u8>>(CHUNKS_AHEAD);
        let (recycle, spare) = sync_channel::<Vec<u8>>(CHUNKS_AHEAD + 1);
        let thread = std::thread::spawn(move || {
            // The syncing thread has a handle of its own on the same open file.
            let to_sync = file.try_clone()?;
            let (ask, asked) = sync_channel::<()>(1);
            let syncer = std::thread::spawn(move || {
                for () in asked {
                    to_sync.sync_data()?;
                }
                Ok::<_, io::Error>(())
            });
            let (mut written, mut synced) = (0u64, 0u64);
            let mut result = Ok(());
            for mut chunk in full {
                if let Err(e) = file.write_all(&chunk) {
                    result = Err(e);
                    break;
                }
                written += chunk.len() as u64;
                if written - synced >= SYNC_EVERY {
                    synced = written;
                    // Full: a sync is waiting to start, and will take these bytes too.
                    // Disconnected: the syncing thread stopped at an error, joined below.
                    if let Err(TrySendError::Disconnected(())) = ask.try_send(()) {
                        break;
                    }
                }
                chunk.clear();
                let _ = recycle.try_send(chunk);
            }
            drop(ask);
            // A sync's error is reported once per open file, which both handles share: it has to
            // come from here, since the final `sync_all` would not see it again.
            let synced = match syncer.join() {
                Ok(r) => r,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            result.and(synced).map(|()| file)
        });
        FileWriter { buf: Vec::with_capacity(CHUNK_SIZE), chunks: Some(chunks), spare, thread: Some(thread) }
    }

    /// Hands the current chunk to the thread.
    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let next = match self.spare.try_recv() {
            Ok(b) => b,
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => Vec::with_capacity(CHUNK_SIZE),
        };
        let full = std::mem::replace(&mut self.buf, next);
        let sent = self.chunks.as_ref().is_some_and(|c| c.send(full).is_ok());
        if sent {
            Ok(())
        } else {
            // The thread stopped at a write error: that error is the answer.
            Err(self.join().err().unwrap_or_else(|| io::Error::other("the writing thread stopped")))
        }
    }

    /// Stops the thread and returns its result.
    fn join(&mut self) -> io::Result<File> {
        self.chunks = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => Err(io::Error::other("the writing thread already stopped")),
        }
    }

    /// Writes what is left and returns the file.
    fn finish(mut self) -> io::Result<File> {
        self.send()?;
        self.join()
    }
}

impl Write for FileWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.write_all(data)?;
        Ok(data.len())
    }

    fn write_all(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            let n = data.len().min(CHUNK_SIZE - self.buf.len());
            self.buf.extend_from_slice(&data[..n]);
            data = &data[n..];
            if self.buf.len() == CHUNK_SIZE {
                self.send()?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}

impl Drop for FileWriter {
    fn drop(&mut self) {
        // Not finished (an error elsewhere): let the thread end; its result no longer matters.
        if self.thread.is_some() {
            let _ = self.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_outputs_arrive_whole_and_only_when_finished() {
        let dir = tempfile::tempdir().unwrap();
        // Several chunks and a bit, in pieces of all sizes, the last without a line ending.
        let mut expected = Vec::new();
        let path = dir.path().join("out.fastq");
        let mut out = Output::create(&path, OutputCompression::Plain).unwrap();
        for i in 0..40_000usize {
            let record = format!("@r{i}\n{}\n+\n{}\n", "A".repeat(i % 150), "I".repeat(i % 150));
            out.write_record(record.as_bytes()).unwrap();
            expected.extend_from_slice(record.as_bytes());
        }
        out.write_record(b"@last\nA\n+\nI").unwrap();
        expected.extend_from_slice(b"@last\nA\n+\nI");
        assert!(expected.len() > 2 * CHUNK_SIZE);
        assert!(!path.exists());
        out.finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), expected);

        // Dropped unfinished: nothing is left, not even the temporary file.
        let other = dir.path().join("other.fastq");
        let mut out = Output::create(&other, OutputCompression::GZIP).unwrap();
        out.write_record(&expected).unwrap();
        drop(out);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1);
    }
}
