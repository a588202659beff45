//! Files: the object store behind samples, documents and results.
//!
//! The default is a local folder (`object_store`'s `LocalFileSystem` with fsync): a write goes
//! to a staging file that is renamed into place only once complete, so a half-written file never
//! appears under its key. Staging files left by a crash are swept at start-up.
//!
//! Past one machine, a bucket of an S3-compatible store ([`S3Config`]; Garage, MinIO, AWS):
//! the service reads and writes through `object_store`, upload forms are signed for the store
//! itself so that clients send their files straight to it (the store checks the policy), and
//! downloads are addresses the store signs. An object there appears only once its upload is
//! complete, as S3 has it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use futures::{Stream, StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::signer::{SignedUrlOptions, Signer as _};
use object_store::{Attribute, Attributes, ClientOptions, ObjectStore, ObjectStoreExt, PutPayload, WriteMultipart};

use super::garage_admin::GarageAdmin;
pub use super::garage_admin::GarageAdminConfig;

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

/// A bucket of an S3-compatible store to keep the service's files in.
#[derive(Clone)]
pub struct S3Config {
    /// The bucket (created beforehand, with the store's own tools).
    pub bucket: String,
    /// A folder of the bucket to keep everything under (`s3://bucket/folder`), so that several
    /// services can share one bucket; `None` for the whole bucket.
    pub prefix: Option<String>,
    /// The store's address as the service reaches it, e.g. `http://garage.lab.internal:3900`
    /// (`None`: AWS S3 itself).
    pub endpoint: Option<String>,
    /// The store's address as clients reach it, for upload forms and download addresses, if
    /// not `endpoint` (a store behind a proxy, or inside a cluster network).
    pub public_endpoint: Option<String>,
    /// The region the store signs for (`garage` for Garage's default, `us-east-1` for MinIO).
    pub region: String,
    /// The access key the service writes with.
    pub access_key_id: String,
    /// Its secret.
    pub secret_access_key: String,
    /// Garage's admin API, when the service may use it to give each upload through
    /// `init_multipart_upload` a bucket and a write-only key of its own, so that the client
    /// writes straight to the store (see [`super::upload_buckets`]). Without it, those uploads
    /// pass through the service's own S3-compatible endpoint.
    pub garage_admin: Option<GarageAdminConfig>,
}

impl std::fmt::Debug for S3Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Config")
            .field("bucket", &self.bucket)
            .field("prefix", &self.prefix)
            .field("endpoint", &self.endpoint)
            .field("public_endpoint", &self.public_endpoint)
            .field("region", &self.region)
            .field("access_key_id", &self.access_key_id)
            .field("garage_admin", &self.garage_admin)
            .finish_non_exhaustive()
    }
}

impl S3Config {
    /// The key in the bucket of the service's object `key` (under the prefix, if any).
    pub fn full_key(&self, key: &str) -> String {
        match self.prefix.as_deref().map(|p| p.trim_matches('/')).filter(|p| !p.is_empty()) {
            Some(p) => format!("{p}/{key}"),
            None => key.to_string(),
        }
    }

    /// The address of the bucket as clients reach it (path style): where upload forms go.
    pub fn public_bucket_url(&self) -> String {
        format!("{}/{}", self.public_base_url(), self.bucket)
    }

    /// The store's address as clients reach it.
    pub fn public_base_url(&self) -> String {
        self.public_endpoint.as_deref().or(self.endpoint.as_deref()).map_or_else(
            || format!("https://s3.{}.amazonaws.com", self.region),
            |e| e.trim_end_matches('/').to_string(),
        )
    }

    fn builder(&self, endpoint: Option<&str>) -> AmazonS3Builder {
        self.bucket_builder(&self.bucket, endpoint)
    }

    /// A client of bucket `bucket` of the same store, with the service's credentials.
    pub(crate) fn bucket_builder(&self, bucket: &str, endpoint: Option<&str>) -> AmazonS3Builder {
        let mut b = AmazonS3Builder::new()
            .with_bucket_name(bucket)
            .with_region(&self.region)
            .with_access_key_id(&self.access_key_id)
            .with_secret_access_key(&self.secret_access_key);
        if let Some(e) = endpoint {
            // Path-style addresses: self-hosted stores seldom have a DNS name per bucket.
            b = b.with_endpoint(e).with_virtual_hosted_style_request(false);
            if e.starts_with("http://") {
                b = b.with_allow_http(true).with_client_options(ClientOptions::new().with_allow_http(true));
            }
        }
        b
    }
}

impl S3Config {
    /// For tests run against an S3 store: the bucket that `MGDS_TEST_S3_ENDPOINT`,
    /// `MGDS_TEST_S3_REGION`, `MGDS_TEST_S3_BUCKET`, `MGDS_TEST_S3_ACCESS_KEY_ID` and
    /// `MGDS_TEST_S3_SECRET_ACCESS_KEY` name (see `tests/garage.sh`); `None` when they are not
    /// set (the tests then keep files in their data folder).
    #[doc(hidden)]
    pub fn for_tests() -> Option<S3Config> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Some(S3Config {
            endpoint: Some(var("MGDS_TEST_S3_ENDPOINT")?),
            // Each test's service in a folder of its own of the shared bucket.
            prefix: Some(format!("test-{}", crate::store::db::new_id())),
            public_endpoint: None,
            region: var("MGDS_TEST_S3_REGION").unwrap_or_else(|| "garage".into()),
            bucket: var("MGDS_TEST_S3_BUCKET")?,
            access_key_id: var("MGDS_TEST_S3_ACCESS_KEY_ID")?,
            secret_access_key: var("MGDS_TEST_S3_SECRET_ACCESS_KEY")?,
            garage_admin: None,
        })
    }

    /// [`S3Config::for_tests`] with Garage's admin API as `MGDS_TEST_GARAGE_ADMIN_URL` and
    /// `MGDS_TEST_GARAGE_ADMIN_TOKEN` name it (uploads then go straight to the store); `None`
    /// without them.
    #[doc(hidden)]
    pub fn for_tests_with_garage_admin() -> Option<S3Config> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let admin =
            GarageAdminConfig { url: var("MGDS_TEST_GARAGE_ADMIN_URL")?, token: var("MGDS_TEST_GARAGE_ADMIN_TOKEN")? };
        Some(S3Config { garage_admin: Some(admin), ..Self::for_tests()? })
    }
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
    s3: Option<Arc<S3Place>>,
}

/// An S3 store, and the same store as clients reach it (for signing what they are handed).
#[derive(Debug)]
struct S3Place {
    config: S3Config,
    public: AmazonS3,
    admin: Option<GarageAdmin>,
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
        Ok(Storage { store: Arc::new(store), scratch: Arc::new(scratch), root: Some(root.to_path_buf()), s3: None })
    }

    /// A store in the S3 bucket `config` names. Nothing is checked here; [`Storage::check`]
    /// asks the store whether the bucket answers.
    pub fn s3(config: &S3Config) -> object_store::Result<Self> {
        // The HTTPS client's cryptography, if the process has not chosen it already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let bucket = config.builder(config.endpoint.as_deref()).build()?;
        let store: Arc<dyn ObjectStore> =
            match config.prefix.as_deref().map(|p| p.trim_matches('/')).filter(|p| !p.is_empty()) {
                Some(p) => Arc::new(object_store::prefix::PrefixStore::new(bucket, p)),
                None => Arc::new(bucket),
            };
        let public_endpoint = config.public_endpoint.as_deref().or(config.endpoint.as_deref());
        let public = config.builder(public_endpoint).build()?;
        Ok(Storage {
            store: store.clone(),
            scratch: store,
            root: None,
            s3: Some(Arc::new(S3Place {
                config: config.clone(),
                public,
                admin: config.garage_admin.clone().map(GarageAdmin::new),
            })),
        })
    }

    /// Whether the store answers: lists at most one object (an S3 bucket that does not exist or
    /// refuses the credentials fails here, at start, rather than at the first upload).
    pub async fn check(&self) -> object_store::Result<()> {
        let mut listing = self.store.list(None);
        match listing.next().await {
            Some(Err(e)) => Err(e),
            _ => Ok(()),
        }
    }

    /// On an S3 store whose admin API the service may use, its settings and that API: uploads
    /// through `init_multipart_upload` then get buckets of their own.
    pub fn upload_buckets(&self) -> Option<(&S3Config, &GarageAdmin)> {
        let place = self.s3.as_deref()?;
        Some((&place.config, place.admin.as_ref()?))
    }

    /// The S3 bucket the files are kept in, if they are not in a local folder.
    pub fn s3_config(&self) -> Option<&S3Config> {
        self.s3.as_deref().map(|p| &p.config)
    }

    /// An address the S3 store signs for GETting `key` for `valid`, its download named
    /// `filename`; `None` for a local folder (whose downloads go through the service).
    pub async fn presigned_get(
        &self,
        key: &str,
        filename: &str,
        valid: std::time::Duration,
    ) -> Option<object_store::Result<String>> {
        let place = self.s3.as_ref()?;
        let disposition = format!("attachment; filename=\"{}\"", filename.replace(['"', '\\'], "_"));
        let options = SignedUrlOptions::new().with_query([("response-content-disposition", disposition)]);
        let signed = place
            .public
            .signed_url_opts(
                object_store::signer::Method::GET,
                &ObjectPath::from(place.config.full_key(key)),
                valid,
                &options,
            )
            .await;
        Some(signed.map(|u| u.to_string()))
    }

    /// Removes staging files a crash left behind, and the empty folders of abandoned uploads
    /// (local folder only), when unchanged for `older_than`: another process on the same folder
    /// (a running `mgds serve` beside an `mgds admin` that opens it) may be writing the newer
    /// ones, and files and folders it removes meanwhile are passed over. Returns how many files
    /// were removed.
    pub fn sweep_staging(&self, older_than: std::time::Duration) -> std::io::Result<usize> {
        let Some(root) = &self.root else { return Ok(0) };
        let old = |path: &Path| {
            std::fs::metadata(path)
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age >= older_than))
        };
        let gone = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
        let mut removed = 0;
        let mut stack = vec![root.clone()];
        let mut dirs = Vec::new();
        while let Some(dir) = stack.pop() {
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) if gone(&e) => continue,
                Err(e) => return Err(e),
            };
            for entry in entries {
                let entry = match entry {
                    Ok(entry) => entry,
                    Err(e) if gone(&e) => continue,
                    Err(e) => return Err(e),
                };
                let path = entry.path();
                let is_dir = match entry.file_type() {
                    Ok(t) => t.is_dir(),
                    Err(e) if gone(&e) => continue,
                    Err(e) => return Err(e),
                };
                if is_dir {
                    stack.push(path.clone());
                    dirs.push(path);
                } else if is_staging_name(&entry.file_name().to_string_lossy()) && old(&path) {
                    match std::fs::remove_file(&path) {
                        Ok(()) => removed += 1,
                        Err(e) if gone(&e) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
        }
        // Deepest first, so a folder emptied by removing its children goes too.
        dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        for d in dirs.into_iter().filter(|d| old(d)) {
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
        stream_into(&*self.store, key, body, max, check, Attributes::new()).await
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
        stream_into(&*self.scratch, key, body, max, check, Attributes::new()).await
    }

    /// Appends `body` to the object at `key` from byte `at` on (what lies past `at` is cut
    /// first: the tail of an append a crash cut short), at most `max` bytes, not synced (as
    /// [`write_scratch_checked`](Self::write_scratch_checked)). On any failure, or an `Err` from
    /// `check(total)` once the stream has ended, the object is cut back to `at` bytes. Local folder
    /// only: elsewhere the answer is `None` and nothing is read from `body`.
    pub async fn append_scratch_checked<S, E, F, C>(
        &self,
        key: &str,
        at: u64,
        mut body: S,
        max: u64,
        check: F,
    ) -> Option<Result<Written, C>>
    where
        S: Stream<Item = Result<Bytes, E>> + Unpin,
        E: std::fmt::Display,
        F: AsyncFnOnce(u64) -> Result<(), C>,
        C: From<WriteError>,
    {
        let path = self.local_path(key)?;
        let file = match tokio::task::spawn_blocking(move || open_for_append(&path, at)).await {
            Ok(Ok(f)) => Arc::new(f),
            Ok(Err(e)) => return Some(Err(local_error(e).into())),
            Err(e) => return Some(Err(WriteError::Source(e.to_string()).into())),
        };
        let cut_back = |file: Arc<std::fs::File>| async move {
            let _ = tokio::task::spawn_blocking(move || file.set_len(at)).await;
        };
        // Chunks are gathered into writes of a few MiB; one write is under way while the next
        // fills.
        let mut writing: Option<tokio::task::JoinHandle<std::io::Result<()>>> = None;
        let (mut buf, mut total, mut offset) = (Vec::with_capacity(APPEND_WRITE), 0u64, at);
        loop {
            let next = body.next().await;
            let chunk = match next {
                Some(Ok(c)) => Some(c),
                Some(Err(e)) => {
                    finish_write(writing.take()).await.ok();
                    cut_back(file).await;
                    return Some(Err(WriteError::Source(e.to_string()).into()));
                }
                None => None,
            };
            if let Some(c) = &chunk {
                total += c.len() as u64;
                if total > max {
                    finish_write(writing.take()).await.ok();
                    cut_back(file).await;
                    return Some(Err(WriteError::TooLarge { max }.into()));
                }
                buf.extend_from_slice(c);
            }
            if buf.len() >= APPEND_WRITE || (chunk.is_none() && !buf.is_empty()) {
                if let Err(e) = finish_write(writing.take()).await {
                    cut_back(file).await;
                    return Some(Err(e.into()));
                }
                let (full, f, pos) =
                    (std::mem::replace(&mut buf, Vec::with_capacity(APPEND_WRITE)), file.clone(), offset);
                offset += full.len() as u64;
                writing = Some(tokio::task::spawn_blocking(move || write_all_at(&f, &full, pos)));
            }
            if chunk.is_none() {
                break;
            }
        }
        if let Err(e) = finish_write(writing.take()).await {
            cut_back(file).await;
            return Some(Err(e.into()));
        }
        if let Err(e) = check(total).await {
            cut_back(file).await;
            return Some(Err(e));
        }
        Some(Ok(Written { bytes: total, e_tag: None }))
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

    /// The SHA-256 of the object at `key`, read through once (a missing object is an error).
    pub async fn sha256(&self, key: &str) -> object_store::Result<[u8; 32]> {
        use sha2::{Digest, Sha256};
        let mut stream = self.store.get(&ObjectPath::from(key)).await?.into_stream();
        let mut hash = Sha256::new();
        while let Some(chunk) = stream.try_next().await? {
            hash.update(&chunk);
        }
        Ok(hash.finalize().into())
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

    /// Streams the file at `path` into `key` with its SHA-256 (hex) in the object's metadata
    /// (`x-amz-meta-mgds-sha256` on S3; a migration's copies, so that an operator can see what
    /// each object was checked against).
    pub async fn put_file_with_sha256(&self, key: &str, path: &Path, sha256: &str) -> Result<Written, WriteError> {
        let file = tokio::fs::File::open(path)
            .await
            .map_err(|e| WriteError::Source(format!("cannot read {}: {e}", path.display())))?;
        let body = tokio_util::io::ReaderStream::with_capacity(file, 1 << 20);
        let attributes = Attributes::from_iter([(Attribute::Metadata(SHA256_METADATA.into()), sha256.to_string())]);
        stream_into(&*self.store, key, body, u64::MAX, async |_| Ok::<(), WriteError>(()), attributes).await
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

    /// Joins `parts`, in order, into `key`, at most `max` bytes (an S3 multipart upload's
    /// completion). In a local folder, parts that are one whole object from its start (an
    /// upload's assembly, see [`append_scratch_checked`](Self::append_scratch_checked)) are
    /// cut to length, synced and renamed into place: no byte is copied. Otherwise the kernel
    /// copies the bytes (`copy_file_range`) into a staging file that is synced and renamed into
    /// place; elsewhere they stream through. The object appears under `key` only whole.
    pub async fn concat(&self, key: &str, parts: &[Span], max: u64) -> Result<Written, WriteError> {
        if let Some(dest) = self.local_path(key) {
            let sources: Vec<(PathBuf, Option<(u64, u64)>)> =
                parts.iter().filter_map(|p| Some((self.local_path(&p.key)?, p.range))).collect();
            return tokio::task::spawn_blocking(move || concat_files(&dest, &sources, max))
                .await
                .map_err(|e| WriteError::Source(e.to_string()))?;
        }
        if parts.iter().any(|p| p.range.is_some()) {
            return Err(WriteError::Source("parts of objects are joined in a local folder only".into()));
        }
        let storage = self.clone();
        let joined = futures::stream::iter(parts.iter().map(|p| p.key.clone()).collect::<Vec<_>>())
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

    /// The keys of the objects under `prefix` (everything for `None`), sorted. Staging files of
    /// writes under way are not objects.
    pub async fn keys(&self, prefix: Option<&str>) -> object_store::Result<Vec<String>> {
        let prefix = prefix.map(ObjectPath::from);
        let mut keys: Vec<String> =
            self.store.list(prefix.as_ref()).map_ok(|meta| meta.location.to_string()).try_collect().await?;
        keys.sort();
        Ok(keys)
    }

    /// Copies the object at `from` to `to`, inside the store (no byte passes through here).
    pub async fn copy(&self, from: &str, to: &str) -> object_store::Result<()> {
        self.store.copy(&ObjectPath::from(from), &ObjectPath::from(to)).await
    }

    /// Moves the object at `from` to `to`, replacing any object there: a rename in a local
    /// folder, a copy then a delete inside an S3 store. Answers `false` (and changes nothing)
    /// when there is no object at `from`. Either way what lands at `to` is one whole object as
    /// it stood when the move took it.
    pub async fn rename(&self, from: &str, to: &str) -> object_store::Result<bool> {
        match self.store.rename(&ObjectPath::from(from), &ObjectPath::from(to)).await {
            Ok(()) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Removes every object under `prefix` (a folder of keys, e.g. `s3-parts/<upload>/`);
    /// returns how many.
    pub async fn delete_prefix(&self, prefix: &str) -> object_store::Result<usize> {
        let keys = self.keys(Some(prefix)).await?;
        for k in &keys {
            self.delete(k).await?;
        }
        Ok(keys.len())
    }

    /// Removes an object; a missing object is not an error.
    pub async fn delete(&self, key: &str) -> object_store::Result<()> {
        match self.store.delete(&ObjectPath::from(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// The metadata key that records an object's SHA-256 (`x-amz-meta-mgds-sha256` in S3).
const SHA256_METADATA: &str = "mgds-sha256";

/// Bytes gathered into one write by [`Storage::append_scratch_checked`]: few enough that they
/// are still in the CPU's cache when the kernel copies them into the file (gathering 4 MiB, the
/// copy read them back from memory and took most of an S3 part's time on the service).
const APPEND_WRITE: usize = 256 << 10;

/// One source of an object joined by [`Storage::concat`].
#[derive(Debug, Clone)]
pub struct Span {
    /// The object.
    pub key: String,
    /// The bytes of it to take (offset, length); `None` for all of it.
    pub range: Option<(u64, u64)>,
}

/// Opens (or creates) the file at `path` to write from byte `at` on, cutting what lies past it.
fn open_for_append(path: &Path, at: u64) -> std::io::Result<std::fs::File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path)?;
    file.set_len(at)?;
    Ok(file)
}

/// Writes all of `buf` at byte `pos` of `file`.
#[cfg(unix)]
fn write_all_at(file: &std::fs::File, buf: &[u8], pos: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, pos)
}

/// Writes all of `buf` at byte `pos` of `file`.
#[cfg(windows)]
fn write_all_at(file: &std::fs::File, mut buf: &[u8], mut pos: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_write(file, buf, pos) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                buf = &buf[n..];
                pos += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Waits for a write of [`Storage::append_scratch_checked`], if one is under way.
async fn finish_write(writing: Option<tokio::task::JoinHandle<std::io::Result<()>>>) -> Result<(), WriteError> {
    match writing {
        Some(w) => w.await.map_err(|e| WriteError::Source(e.to_string()))?.map_err(local_error),
        None => Ok(()),
    }
}

/// A local file system error as the object store's.
fn local_error(e: std::io::Error) -> WriteError {
    WriteError::Store(object_store::Error::Generic { store: "LocalFileSystem", source: e.into() })
}

/// Streams `body` into `key` of `store` (see [`Storage::write_stream_checked`]).
async fn stream_into<S, E, F, C>(
    store: &dyn ObjectStore,
    key: &str,
    mut body: S,
    max: u64,
    check: F,
    attributes: Attributes,
) -> Result<Written, C>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
    F: AsyncFnOnce(u64) -> Result<(), C>,
    C: From<WriteError>,
{
    let options = object_store::PutMultipartOptions { attributes, ..Default::default() };
    let upload = store.put_multipart_opts(&ObjectPath::from(key), options).await.map_err(WriteError::from)?;
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

/// Joins `sources` (whole files, or a range of one) in order into `dest` (see
/// [`Storage::concat`]): one source that is a file from its start is cut to length and renamed;
/// otherwise they are copied into a staging file beside `dest` (named as `LocalFileSystem` names
/// its own, so that the start-up sweep removes one a crash left), which is synced and renamed in.
fn concat_files(dest: &Path, sources: &[(PathBuf, Option<(u64, u64)>)], max: u64) -> Result<Written, WriteError> {
    use std::io::{Read, Seek, SeekFrom};
    let io = local_error;
    let dir = dest.parent().ok_or_else(|| WriteError::Source(format!("{} has no folder", dest.display())))?;
    std::fs::create_dir_all(dir).map_err(io)?;
    let missing =
        |source: &Path, e: std::io::Error| WriteError::Source(format!("part {} is missing: {e}", source.display()));
    if let [(source, Some((0, len)))] = sources {
        if *len > max {
            return Err(WriteError::TooLarge { max });
        }
        let file = std::fs::OpenOptions::new().write(true).open(source).map_err(|e| missing(source, e))?;
        file.set_len(*len).map_err(io)?;
        file.sync_all().map_err(io)?;
        std::fs::rename(source, dest).map_err(io)?;
        std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
        return Ok(Written { bytes: *len, e_tag: None });
    }
    let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let staged =
        tempfile::TempPath::try_from_path(dir.join(format!("{name}#{}{nanos}", std::process::id()))).map_err(io)?;
    let mut out = std::fs::File::create_new(&staged).map_err(io)?;
    let mut total = 0u64;
    for (source, range) in sources {
        let mut part = std::fs::File::open(source).map_err(|e| missing(source, e))?;
        let (offset, len) = match range {
            Some(r) => *r,
            None => (0, part.metadata().map_err(io)?.len()),
        };
        total += len;
        if total > max {
            return Err(WriteError::TooLarge { max });
        }
        part.seek(SeekFrom::Start(offset)).map_err(io)?;
        // File to file: the standard library copies with copy_file_range, inside the kernel.
        let copied = std::io::copy(&mut (&mut part).take(len), &mut out).map_err(io)?;
        if copied != len {
            return Err(WriteError::Source(format!("part {} is cut short", source.display())));
        }
    }
    out.sync_all().map_err(io)?;
    staged.persist(dest).map_err(|e| io(e.error))?;
    std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
    Ok(Written { bytes: total, e_tag: None })
}

/// Where the form of the upload whose file is `object_key` puts it in an S3 store, until the
/// upload's confirmation checks it and copies it to `object_key`.
pub fn incoming_key(object_key: &str) -> String {
    format!("incoming/{object_key}")
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

/// How long a staging file (an upload being written to the local folder) stays unchanged
/// before it is taken for one that a crash left behind: a live upload that stalls longer has
/// long been given up by the client.
pub const STAGING_ABANDONED_AFTER: std::time::Duration = std::time::Duration::from_secs(15 * 60);

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
        assert_eq!(s.sweep_staging(std::time::Duration::ZERO).unwrap(), 0, "no staging file may remain");
    }
}
