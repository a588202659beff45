//! Files: the object store behind samples, documents and results.
//!
//! The default is a local folder (`object_store`'s `LocalFileSystem` with fsync): a write goes
//! to a staging file that is renamed into place only once complete, so a half-written file never
//! appears under its key. Staging files left by a crash are swept at start-up.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use futures::{Stream, StreamExt, TryStreamExt};
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload, WriteMultipart};

/// Why a streamed write stopped.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The incoming stream failed (the client went away or sent a malformed body).
    #[error("the upload was interrupted: {0}")]
    Source(String),
    /// More bytes than allowed arrived.
    #[error("the file is larger than this upload allows ({max} bytes)")]
    TooLarge {
        /// The limit.
        max: u64,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] object_store::Error),
}

/// What a streamed write stored.
#[derive(Debug, Clone)]
pub struct Written {
    /// Bytes written.
    pub bytes: u64,
    /// The store's entity tag for the object, if it gives one.
    pub e_tag: Option<String>,
}

/// The service's object store.
#[derive(Debug, Clone)]
pub struct Storage {
    store: Arc<dyn ObjectStore>,
    /// The same place without fsync, for objects that are only steps to another (the parts of
    /// an S3 multipart upload): their joined object is synced, and a part cut short by a power
    /// loss is found by its size when they are joined.
    scratch: Arc<dyn ObjectStore>,
    root: Option<PathBuf>,
}

impl Storage {
    /// A store in the local folder `root` (created if missing), with durable writes.
    pub fn local(root: &Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(root)?;
        let store = LocalFileSystem::new_with_prefix(root)
            .map_err(std::io::Error::other)?
            .with_fsync(true)
            .with_automatic_cleanup(true);
        let scratch =
            LocalFileSystem::new_with_prefix(root).map_err(std::io::Error::other)?.with_automatic_cleanup(true);
        Ok(Storage { store: Arc::new(store), scratch: Arc::new(scratch), root: Some(root.to_path_buf()) })
    }

    /// Removes staging files a crash left behind, and the empty folders of abandoned uploads
    /// (local folder only). Returns how many files were removed.
    pub fn sweep_staging(&self) -> std::io::Result<usize> {
        let Some(root) = &self.root else { return Ok(0) };
        let mut removed = 0;
        let mut stack = vec![root.clone()];
        let mut dirs = Vec::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir)? {
                let entry = entry?;
                let path = entry.path();
                if entry.file_type()?.is_dir() {
                    stack.push(path.clone());
                    dirs.push(path);
                } else if is_staging_name(&entry.file_name().to_string_lossy()) {
                    std::fs::remove_file(&path)?;
                    removed += 1;
                }
            }
        }
        // Deepest first, so a folder emptied by removing its children goes too.
        dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        for d in dirs {
            // Fails (and is left alone) when the folder is not empty.
            let _ = std::fs::remove_dir(&d);
        }
        Ok(removed)
    }

    /// Streams `body` into `key`, at most `max` bytes. The object appears under `key` only if
    /// the whole stream arrived; on any failure (or if the future is dropped) nothing is left.
    /// Returns what was written.
    pub async fn write_stream<S, E>(&self, key: &str, body: S, max: u64) -> Result<Written, WriteError>
    where
        S: Stream<Item = Result<Bytes, E>> + Unpin,
        E: std::fmt::Display,
    {
        self.write_stream_checked(key, body, max, async |_| Ok(())).await
    }

    /// As [`write_stream`](Self::write_stream), and `check(total)` runs once the stream has
    /// ended, before the object is published; an `Err` from it discards the object.
    pub async fn write_stream_checked<S, E, F, C>(&self, key: &str, body: S, max: u64, check: F) -> Result<Written, C>
    where
        S: Stream<Item = Result<Bytes, E>> + Unpin,
        E: std::fmt::Display,
        F: AsyncFnOnce(u64) -> Result<(), C>,
        C: From<WriteError>,
    {
        stream_into(&*self.store, key, body, max, check).await
    }

    /// As [`write_stream_checked`](Self::write_stream_checked), for an object that is only a
    /// step to another (a part of an S3 multipart upload, joined by [`concat`](Self::concat)):
    /// not synced to disk on its own.
    pub async fn write_scratch_checked<S, E, F, C>(&self, key: &str, body: S, max: u64, check: F) -> Result<Written, C>
    where
        S: Stream<Item = Result<Bytes, E>> + Unpin,
        E: std::fmt::Display,
        F: AsyncFnOnce(u64) -> Result<(), C>,
        C: From<WriteError>,
    {
        stream_into(&*self.scratch, key, body, max, check).await
    }

    /// Stores a small object in one write.
    pub async fn put(&self, key: &str, bytes: Bytes) -> object_store::Result<()> {
        self.store.put(&ObjectPath::from(key), PutPayload::from(bytes)).await?;
        Ok(())
    }

    /// The size of the object at `key`, or `None` if there is none.
    pub async fn size(&self, key: &str) -> object_store::Result<Option<u64>> {
        match self.store.head(&ObjectPath::from(key)).await {
            Ok(meta) => Ok(Some(meta.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Reads a whole (small) object, or `None` if there is none.
    pub async fn read(&self, key: &str) -> object_store::Result<Option<Bytes>> {
        match self.store.get(&ObjectPath::from(key)).await {
            Ok(r) => Ok(Some(r.bytes().await?)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Streams an object: its size and its bytes, or `None` if there is none.
    pub async fn stream(
        &self,
        key: &str,
    ) -> object_store::Result<Option<(u64, impl Stream<Item = object_store::Result<Bytes>> + use<>)>> {
        match self.store.get(&ObjectPath::from(key)).await {
            Ok(r) => Ok(Some((r.meta.size, r.into_stream()))),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Where the object at `key` lives on disk, for engines that read files (local store only).
    pub fn local_path(&self, key: &str) -> Option<PathBuf> {
        let root = self.root.as_ref()?;
        let path = ObjectPath::from(key);
        Some(path.parts().fold(root.clone(), |p, part| p.join(part.as_ref())))
    }

    /// Streams the file at `path` into `key` (for engine outputs of any size).
    pub async fn put_file(&self, key: &str, path: &Path) -> Result<Written, WriteError> {
        let file = tokio::fs::File::open(path)
            .await
            .map_err(|e| WriteError::Source(format!("cannot read {}: {e}", path.display())))?;
        let body = tokio_util::io::ReaderStream::with_capacity(file, 1 << 20);
        self.write_stream(key, body, u64::MAX).await
    }

    /// Copies the object at `key` into the local file `dest` (for engines and joins that read
    /// files, when the store is not a local folder).
    pub async fn download_to(&self, key: &str, dest: &Path) -> Result<u64, WriteError> {
        use tokio::io::AsyncWriteExt;
        let (_, mut body) =
            self.stream(key).await?.ok_or_else(|| WriteError::Source(format!("there is no object {key}")))?;
        let io = |e: std::io::Error| WriteError::Source(format!("cannot write {}: {e}", dest.display()));
        let mut file = tokio::fs::File::create(dest).await.map_err(io)?;
        let mut n = 0u64;
        while let Some(chunk) = body.next().await {
            let chunk = chunk?;
            n += chunk.len() as u64;
            file.write_all(&chunk).await.map_err(io)?;
        }
        file.sync_all().await.map_err(io)?;
        Ok(n)
    }

    /// Joins the objects `parts`, in order, into `key`, at most `max` bytes (an S3 multipart
    /// upload's completion). In a local folder the kernel copies the bytes (`copy_file_range`)
    /// into a staging file that is synced and renamed into place; elsewhere they stream through.
    /// The object appears under `key` only whole.
    pub async fn concat(&self, key: &str, parts: &[String], max: u64) -> Result<Written, WriteError> {
        if let Some(dest) = self.local_path(key) {
            let sources: Vec<PathBuf> = parts.iter().filter_map(|k| self.local_path(k)).collect();
            return tokio::task::spawn_blocking(move || concat_files(&dest, &sources, max))
                .await
                .map_err(|e| WriteError::Source(e.to_string()))?;
        }
        let storage = self.clone();
        let joined = futures::stream::iter(parts.to_vec())
            .then(move |k| {
                let storage = storage.clone();
                async move {
                    match storage.stream(&k).await {
                        Ok(Some((_, s))) => Ok(s.map_err(|e| e.to_string()).boxed()),
                        Ok(None) => Err(format!("part {k} is missing")),
                        Err(e) => Err(e.to_string()),
                    }
                }
            })
            .try_flatten()
            .boxed();
        self.write_stream(key, joined, max).await
    }

    /// Removes an object; a missing object is not an error.
    pub async fn delete(&self, key: &str) -> object_store::Result<()> {
        match self.store.delete(&ObjectPath::from(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// Streams `body` into `key` of `store` (see [`Storage::write_stream_checked`]).
async fn stream_into<S, E, F, C>(
    store: &dyn ObjectStore,
    key: &str,
    mut body: S,
    max: u64,
    check: F,
) -> Result<Written, C>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
    F: AsyncFnOnce(u64) -> Result<(), C>,
    C: From<WriteError>,
{
    let upload = store.put_multipart(&ObjectPath::from(key)).await.map_err(WriteError::from)?;
    let mut writer = WriteMultipart::new_with_chunk_size(upload, 8 * 1024 * 1024);
    let mut total: u64 = 0;
    while let Some(chunk) = body.next().await {
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => {
                let _ = writer.abort().await;
                return Err(WriteError::Source(e.to_string()).into());
            }
        };
        total += chunk.len() as u64;
        if total > max {
            let _ = writer.abort().await;
            return Err(WriteError::TooLarge { max }.into());
        }
        // Bounded memory: wait while parts are in flight before buffering more.
        if let Err(e) = writer.wait_for_capacity(2).await {
            let _ = writer.abort().await;
            return Err(WriteError::from(e).into());
        }
        writer.put(chunk);
    }
    if let Err(e) = check(total).await {
        let _ = writer.abort().await;
        return Err(e);
    }
    let put = writer.finish().await.map_err(WriteError::from)?;
    Ok(Written { bytes: total, e_tag: put.e_tag })
}

/// Copies `sources` in order into a staging file beside `dest` (named as `LocalFileSystem` names
/// its own, so that the start-up sweep removes one a crash left), syncs it and renames it in.
fn concat_files(dest: &Path, sources: &[PathBuf], max: u64) -> Result<Written, WriteError> {
    let io = |e: std::io::Error| {
        WriteError::Store(object_store::Error::Generic { store: "LocalFileSystem", source: e.into() })
    };
    let dir = dest.parent().ok_or_else(|| WriteError::Source(format!("{} has no folder", dest.display())))?;
    std::fs::create_dir_all(dir).map_err(io)?;
    let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let staged =
        tempfile::TempPath::try_from_path(dir.join(format!("{name}#{}{nanos}", std::process::id()))).map_err(io)?;
    let mut out = std::fs::File::create_new(&staged).map_err(io)?;
    let mut total = 0u64;
    for source in sources {
        let mut part = std::fs::File::open(source)
            .map_err(|e| WriteError::Source(format!("part {} is missing: {e}", source.display())))?;
        total += part.metadata().map_err(io)?.len();
        if total > max {
            return Err(WriteError::TooLarge { max });
        }
        // File to file: the standard library copies with copy_file_range, inside the kernel.
        std::io::copy(&mut part, &mut out).map_err(io)?;
    }
    out.sync_all().map_err(io)?;
    staged.persist(dest).map_err(|e| io(e.error))?;
    std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
    Ok(Written { bytes: total, e_tag: None })
}

/// The last part of an object key for a file a person named `filename`: the name itself when
/// it is safe as a file name on disk, else a safe stand-in (the person's name is kept in the
/// database and given back on download). Too long a name is shortened, keeping its extensions,
/// so that the staging name (`<name>#<digits>`) still fits the file system's 255 bytes; a name
/// of dots only (`.`, `..`) would name a folder, so it becomes `file`.
pub fn key_name(filename: &str) -> String {
    const MAX: usize = 200;
    if filename.is_empty() || filename.bytes().all(|b| b == b'.') || filename.contains('/') {
        return "file".into();
    }
    if filename.len() <= MAX {
        return filename.to_string();
    }
    // Keep up to two extensions (`.fastq.gz`) when they are short.
    let mut cut = filename.len();
    for _ in 0..2 {
        match filename[..cut].rfind('.') {
            Some(dot) if filename.len() - dot <= 24 && dot > 0 => cut = dot,
            _ => break,
        }
    }
    let ext = &filename[cut..];
    let mut stem_len = MAX - ext.len();
    while !filename.is_char_boundary(stem_len) {
        stem_len -= 1;
    }
    format!("{}{ext}", &filename[..stem_len])
}

/// `LocalFileSystem` stages a write as `<name>#<n>` next to its destination.
fn is_staging_name(name: &str) -> bool {
    name.rsplit_once('#').is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_names_fit_the_file_system() {
        assert_eq!(key_name("reads.fastq.gz"), "reads.fastq.gz");
        assert_eq!(key_name(".."), "file");
        assert_eq!(key_name("."), "file");
        let long = format!("{}.fastq.gz", "a".repeat(246));
        let k = key_name(&long);
        assert!(k.len() <= 200 && k.ends_with(".fastq.gz"), "{k}");
        assert!(format!("{k}#123456789012").len() < 255);
    }

    #[test]
    fn staging_names() {
        assert!(is_staging_name("x.fastq.gz#1"));
        assert!(is_staging_name("x#23"));
        assert!(!is_staging_name("x.fastq.gz"));
        assert!(!is_staging_name("x#a"));
    }

    #[tokio::test]
    async fn a_failed_stream_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::local(dir.path()).unwrap();
        let ok = futures::stream::iter(vec![Ok::<_, String>(Bytes::from_static(b"abc"))]);
        assert_eq!(s.write_stream("a/b", ok, 10).await.unwrap().bytes, 3);
        assert_eq!(s.size("a/b").await.unwrap(), Some(3));
        let bad = futures::stream::iter(vec![Ok(Bytes::from_static(b"abc")), Err("reset".to_string())]);
        assert!(s.write_stream("a/c", bad, 10).await.is_err());
        let big = futures::stream::iter(vec![Ok::<_, String>(Bytes::from(vec![0; 11]))]);
        assert!(matches!(s.write_stream("a/d", big, 10).await, Err(WriteError::TooLarge { .. })));
        assert_eq!(s.size("a/c").await.unwrap(), None);
        assert_eq!(s.size("a/d").await.unwrap(), None);
        tokio::task::yield_now().await;
        assert_eq!(s.sweep_staging().unwrap(), 0, "no staging file may remain");
    }
}
