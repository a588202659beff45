//! The S3-compatible endpoint that uploads go to when a client starts them with
//! `init_multipart_upload`, as the real service's clients do (the `onecodex` library and CLI
//! upload with boto3; `mgds` uses it for files it streams as it reads them).
//!
//! The S3 wire protocol and AWS Signature V4 (signed and unsigned payloads, `aws-chunked`
//! bodies with checksum trailers) are the `s3s` crate's; this module decides who may do what
//! and where the bytes go:
//! - credentials minted for one upload ([`crate::store::s3_grants::mint`]) sign requests for
//!   that upload's object keys and nothing else, and stop starting writes after an hour (a
//!   multipart upload started before then may finish until the upload itself expires);
//! - PutObject streams into the object store under the upload's key, in the store's `incoming/`
//!   folder ([`incoming_key`]): the upload's callback takes the file from there into place
//!   (a rename), then checks what it took, so a write that ends after the callback (or a
//!   cancel) can never change a confirmed record's file; such a write is refused before it is
//!   published where the service sees it in time, and its file is removed by the janitor
//!   otherwise. Multipart parts that
//!   arrive in order (boto3 without threads, as `onecodex` runs it, and `mgds` send them so) are
//!   appended to one assembly file, which CompleteMultipartUpload renames into place when it
//!   lists exactly those parts: the bytes are written once, as for a single PUT. A part sent out
//!   of order or again is an object of its own, and completion then copies the parts together.
//!   Nothing is stored under an upload's key unless it arrived whole and its checksum (when the
//!   client sent one) matches;
//! - refusals are the S3 errors clients expect (`AccessDenied`, `ExpiredToken`,
//!   `InvalidAccessKeyId`, `SignatureDoesNotMatch`, `InvalidPart`, `InvalidPartOrder`,
//!   `EntityTooSmall`, `NoSuchUpload`, `BadDigest`).
//!
//! The endpoint is served at the root of the service's address with path-style addressing
//! (`/<bucket>/<key>`), bucket [`BUCKET`]: point boto3 at it with `AWS_ENDPOINT_URL_S3`. A
//! signature covers the path as the client sent it, so a reverse proxy must pass `/mgds-uploads/`
//! through unchanged (no path prefix for this part).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use crate::store::db::Pool;
use bytes::Bytes;
use chrono::Utc;
use futures::TryStreamExt;
use s3s::access::{S3Access, S3AccessContext};
use s3s::auth::{S3Auth, SecretKey};
use s3s::checksum::ChecksumHasher;
use s3s::crypto::{Checksum as _, Md5};
use s3s::dto::{
    AbortMultipartUploadInput, AbortMultipartUploadOutput, CompleteMultipartUploadInput, CompleteMultipartUploadOutput,
    CreateMultipartUploadInput, CreateMultipartUploadOutput, ETag, PutObjectInput, PutObjectOutput, StreamingBlob,
    UploadPartInput, UploadPartOutput,
};
use s3s::path::S3Path;
use s3s::{S3, S3Error, S3Request, S3Response, S3Result, s3_error};

use crate::state::AppState;
use crate::store::db;
use crate::store::files::{Span, Storage, WriteError, incoming_key};
use crate::store::s3_grants;

pub use crate::store::s3_grants::BUCKET;

/// The address S3 clients reach the endpoint at, for a service whose address is `public_url`:
/// its scheme, host and port alone (`https://lab.example.org/mgds` gives
/// `https://lab.example.org`), since an S3 signature covers the request's path; behind a proxy
/// that serves the service under a path, the proxy passes `/mgds-uploads/` through unchanged.
pub fn endpoint(public_url: &str) -> &str {
    match public_url.split_once("://") {
        Some((scheme, rest)) => match rest.find('/') {
            Some(i) => &public_url[..scheme.len() + 3 + i],
            None => public_url,
        },
        None => public_url,
    }
}

/// Largest body one S3 request may carry. Parts of the clients that use the endpoint are 10 to
/// 100 MiB (boto3 in `onecodex`) or 16 MiB (`mgds`), and single PUTs are below 8 MiB; a larger
/// object goes up in parts. The cap also bounds what one `aws-chunked` frame, which is checked
/// whole, can hold in memory.
pub const MAX_REQUEST_BODY: usize = 128 * 1024 * 1024;
/// Smallest part but the last, as S3 has it.
const MIN_PART: i64 = 5 * 1024 * 1024;
/// Most parts in one multipart upload, as S3 has it.
const MAX_PARTS: i32 = 10_000;
/// Most multipart uploads one upload's credentials may have under way at once (a pair's two
/// files, each started again a few times, fit with room to spare); each holds parts on the
/// service until it is completed or aborted, so the number is capped.
pub const MAX_MULTIPART_PER_UPLOAD: i64 = 8;

/// What a request's credentials allow, found by [`Access`] and handed to the backend.
#[derive(Debug, Clone)]
struct Permit {
    access_key: String,
    upload_id: String,
}

fn internal(e: impl std::error::Error + Send + Sync + 'static) -> S3Error {
    tracing::error!(error = %e, "S3 endpoint failure");
    S3Error::internal_error(e)
}

/// Looks up the secret of an access key (its use is decided by [`Access`]).
struct Auth {
    db: Pool,
}

#[async_trait::async_trait]
impl S3Auth for Auth {
    async fn get_secret_key(&self, access_key: &str) -> S3Result<SecretKey> {
        match s3_grants::grant(&self.db, access_key).await.map_err(internal)? {
            Some(g) => Ok(SecretKey::from(g.secret)),
            None => {
                Err(s3_error!(InvalidAccessKeyId, "The AWS access key Id you provided does not exist in our records."))
            }
        }
    }
}

/// Decides, once a request's signature holds, whether its credentials allow it.
struct Access {
    db: Pool,
}

#[async_trait::async_trait]
impl S3Access for Access {
    async fn check(&self, cx: &mut S3AccessContext<'_>) -> S3Result<()> {
        let Some(cred) = cx.credentials() else {
            return Err(s3_error!(
                AccessDenied,
                "Anonymous requests are not accepted; sign them with the upload's credentials."
            ));
        };
        let Some(grant) = s3_grants::grant(&self.db, &cred.access_key).await.map_err(internal)? else {
            return Err(s3_error!(InvalidAccessKeyId));
        };
        let op = cx.s3_op().name();
        let starts = matches!(op, "PutObject" | "CreateMultipartUpload");
        let continues = matches!(op, "UploadPart" | "CompleteMultipartUpload" | "AbortMultipartUpload");
        if !starts && !continues {
            return Err(s3_error!(AccessDenied, "Upload credentials allow uploads only, not {op}."));
        }
        match cx.s3_path() {
            S3Path::Object { bucket, key } if &**bucket == BUCKET && grant.covers(key) => {}
            _ => {
                return Err(s3_error!(
                    AccessDenied,
                    "These credentials may write only to {BUCKET}/{}{}.",
                    grant.object_key,
                    grant.paired_object_key.as_deref().map(|k| format!(" and {BUCKET}/{k}")).unwrap_or_default()
                ));
            }
        }
        if grant.confirmed_id.is_some() {
            return Err(s3_error!(AccessDenied, "This upload was confirmed already; start a new upload."));
        }
        let now = db::ts(Utc::now());
        // Timestamps are stored in one format, so they compare as text.
        if starts && now > grant.expires_at {
            return Err(s3_error!(
                ExpiredToken,
                "The upload's credentials expired at {}; start the upload again.",
                grant.expires_at
            ));
        }
        if now > grant.upload_expires_at {
            return Err(s3_error!(ExpiredToken, "The upload expired at {}; start it again.", grant.upload_expires_at));
        }
        cx.extensions_mut().insert(Permit { access_key: grant.access_key, upload_id: grant.upload_id });
        Ok(())
    }
}

/// Where the bytes go.
struct Backend {
    db: Pool,
    storage: Storage,
    // Multipart uploads whose assembly a request is appending to.
    appending: Arc<Mutex<HashSet<String>>>,
}

fn grant_of<T>(req: &S3Request<T>) -> S3Result<Permit> {
    req.extensions.get::<Permit>().cloned().ok_or_else(|| s3_error!(AccessDenied))
}

fn write_error(e: WriteError) -> S3Error {
    match e {
        WriteError::Source(m) => s3_error!(IncompleteBody, "The body did not arrive whole: {m}"),
        WriteError::TooLarge { max } => s3_error!(EntityTooLarge, "The object is larger than {max} bytes."),
        WriteError::Store(e) => internal(e),
    }
}

/// Why a streamed write was refused before its object was published.
enum Refused {
    Write(WriteError),
    S3(S3Error),
}

impl From<WriteError> for Refused {
    fn from(e: WriteError) -> Self {
        Refused::Write(e)
    }
}

impl From<Refused> for S3Error {
    fn from(r: Refused) -> Self {
        match r {
            Refused::Write(e) => write_error(e),
            Refused::S3(e) => e,
        }
    }
}

/// Refuses a write to an upload that is no longer waiting for its files (confirmed, canceled,
/// expired or revoked by a key rotation since the request started).
async fn still_open(db: &Pool, upload_id: &str) -> S3Result<()> {
    if s3_grants::upload_open(db, upload_id).await.map_err(internal)? {
        return Ok(());
    }
    Err(s3_error!(
        AccessDenied,
        "The upload was confirmed or canceled while this request was under way; nothing was stored."
    ))
}

/// Hashes of a body as it streams by.
#[derive(Default)]
struct Sums {
    md5: Option<Md5>,
    checksum: ChecksumHasher,
}

/// The ETag of a part: the first half of the SHA-256 of its bytes where the request was signed
/// with it (s3s checks the body against it as it streams, so it costs nothing more); `None`
/// otherwise, and the part's MD5 is computed instead. S3 promises a part's ETag only as an
/// identifier that CompleteMultipartUpload gives back, not as an MD5.
fn signed_payload_tag(headers: &axum::http::HeaderMap) -> Option<String> {
    let sha = headers.get("x-amz-content-sha256")?.to_str().ok()?;
    (sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit())).then(|| sha[..32].to_ascii_lowercase())
}

/// What an incoming body becomes.
enum Stored {
    /// An object of its own (PutObject): synced to disk; its ETag is the MD5 of its bytes.
    Object,
    /// A part of a multipart upload: not synced on its own (the joined object is); its ETag is
    /// the one given, or else the MD5 of its bytes.
    Part { e_tag: Option<String> },
    /// A part appended to its upload's assembly at byte `at` (local folder only), as [`Stored::Part`].
    Appended { e_tag: Option<String>, at: u64 },
}

/// Streams `body` into `key`, published only if it arrived whole and the CRC32 the client gave
/// (header, or `aws-chunked` trailer read once the body ended) matches. Answers the size, the
/// ETag and the CRC32.
#[allow(clippy::too_many_arguments)]
async fn store_body(
    storage: &Storage,
    db: &Pool,
    upload_id: &str,
    key: &str,
    body: StreamingBlob,
    max: u64,
    crc32_header: Option<String>,
    trailers: Option<s3s::TrailingHeaders>,
    stored: Stored,
) -> S3Result<(u64, String, Option<String>)> {
    let e_tag = match &stored {
        Stored::Object => None,
        Stored::Part { e_tag } | Stored::Appended { e_tag, .. } => e_tag.clone(),
    };
    let sums = Arc::new(Mutex::new(Sums {
        md5: e_tag.is_none().then(Md5::new),
        checksum: ChecksumHasher { crc32: Some(Default::default()), ..Default::default() },
    }));
    let seen = sums.clone();
    let body = body
        .inspect_ok(move |b: &Bytes| {
            if let Ok(mut s) = seen.lock() {
                if let Some(m) = s.md5.as_mut() {
                    m.update(b);
                }
                s.checksum.update(b);
            }
        })
        .map_err(|e| e.to_string());
    let computed = Arc::new(Mutex::new(None::<(String, Option<String>)>));
    let result = Arc::clone(&computed);
    let check = async |_n: u64| {
        let (md5, crc) = {
            let mut s = sums.lock().map_err(|_| Refused::S3(s3_error!(InternalError)))?;
            let md5 = s.md5.take().map(|m| hex::encode(m.finalize())).or_else(|| e_tag.clone()).unwrap_or_default();
            let crc = std::mem::take(&mut s.checksum).finalize().checksum_crc32;
            (md5, crc)
        };
        let sent = trailers
            .as_ref()
            .and_then(|t| t.take())
            .and_then(|h| h.get("x-amz-checksum-crc32").and_then(|v| v.to_str().ok()).map(str::to_string))
            .or(crc32_header);
        if let Some(sent) = &sent
            && Some(sent) != crc.as_ref()
        {
            return Err(Refused::S3(s3_error!(
                BadDigest,
                "The CRC32 you sent ({sent}) is not that of the bytes that arrived ({}); nothing was stored.",
                crc.as_deref().unwrap_or("none")
            )));
        }
        // The upload may have been confirmed or canceled while the bytes came: then nothing is
        // published (the callback has taken the file it checked; this one would be left over).
        still_open(db, upload_id).await.map_err(Refused::S3)?;
        if let Ok(mut c) = result.lock() {
            *c = Some((md5, crc));
        }
        Ok(())
    };
    let body = Box::pin(body);
    let written = match stored {
        Stored::Object => storage.write_stream_checked(key, body, max, check).await?,
        Stored::Part { .. } => storage.write_scratch_checked(key, body, max, check).await?,
        Stored::Appended { at, .. } => match storage.append_scratch_checked(key, at, body, max, check).await {
            Some(written) => written?,
            None => return Err(s3_error!(InternalError, "parts are appended in a local folder only")),
        },
    };
    let (md5, crc) = computed.lock().ok().and_then(|mut c| c.take()).unwrap_or_default();
    Ok((written.bytes, md5, crc))
}

#[async_trait::async_trait]
impl S3 for Backend {
    async fn put_object(&self, req: S3Request<PutObjectInput>) -> S3Result<S3Response<PutObjectOutput>> {
        let grant = grant_of(&req)?;
        let trailers = req.trailing_headers.clone();
        let input = req.input;
        let body = input.body.ok_or_else(|| s3_error!(IncompleteBody))?;
        let (_, md5, crc) = store_body(
            &self.storage,
            &self.db,
            &grant.upload_id,
            &incoming_key(&input.key),
            body,
            mgds_api::MAX_UPLOAD_BYTES,
            input.checksum_crc32,
            trailers,
            Stored::Object,
        )
        .await?;
        tracing::info!(key = %input.key, "stored an S3 upload");
        Ok(S3Response::new(PutObjectOutput {
            e_tag: Some(ETag::Strong(md5)),
            checksum_crc32: crc,
            ..Default::default()
        }))
    }

    async fn create_multipart_upload(
        &self,
        req: S3Request<CreateMultipartUploadInput>,
    ) -> S3Result<S3Response<CreateMultipartUploadOutput>> {
        let grant = grant_of(&req)?;
        let under_way = s3_grants::multiparts_of(&self.db, &grant.upload_id).await.map_err(internal)?;
        if under_way >= MAX_MULTIPART_PER_UPLOAD {
            return Err(s3_error!(
                AccessDenied,
                "This upload has {under_way} multipart uploads under way, the most it may have; complete or abort one \
                 first."
            ));
        }
        let id = s3_grants::start_multipart(&self.db, &grant.access_key, &req.input.key).await.map_err(internal)?;
        Ok(S3Response::new(CreateMultipartUploadOutput {
            bucket: Some(req.input.bucket),
            key: Some(req.input.key),
            upload_id: Some(id),
            ..Default::default()
        }))
    }

    async fn upload_part(&self, req: S3Request<UploadPartInput>) -> S3Result<S3Response<UploadPartOutput>> {
        let grant = grant_of(&req)?;
        let trailers = req.trailing_headers.clone();
        let e_tag = signed_payload_tag(&req.headers);
        let input = req.input;
        if !(1..=MAX_PARTS).contains(&input.part_number) {
            return Err(s3_error!(InvalidArgument, "Part number must be an integer between 1 and {MAX_PARTS}."));
        }
        self.multipart(&grant, &input.upload_id, &input.key).await?;
        // What the multipart upload's other parts hold counts against the largest object, so
        // that parts cannot pile up past it on the service.
        let held =
            s3_grants::part_bytes_besides(&self.db, &input.upload_id, input.part_number).await.map_err(internal)?;
        let room = mgds_api::MAX_UPLOAD_BYTES.saturating_sub(u64::try_from(held).unwrap_or(u64::MAX));
        if input.content_length.is_some_and(|n| u64::try_from(n).unwrap_or(u64::MAX) > room) || room == 0 {
            return Err(s3_error!(
                EntityTooLarge,
                "The parts of this multipart upload would hold more than {} bytes, the largest upload.",
                mgds_api::MAX_UPLOAD_BYTES
            ));
        }
        let body = input.body.ok_or_else(|| s3_error!(IncompleteBody))?;
        // The next part in order goes to the end of the assembly, unless another request is
        // appending to it right now.
        let appending = self.appending(&input.upload_id);
        let append_at = match &appending {
            Some(_) if self.storage.local_path(&input.key).is_some() => {
                match s3_grants::assembly(&self.db, &input.upload_id).await.map_err(internal)? {
                    Some((parts, bytes)) if parts + 1 == input.part_number => u64::try_from(bytes).ok(),
                    _ => None,
                }
            }
            _ => None,
        };
        let (key, stored) = match append_at {
            Some(at) => (s3_grants::assembly_key(&grant.upload_id, &input.upload_id), Stored::Appended { e_tag, at }),
            None => {
                (s3_grants::part_key(&grant.upload_id, &input.upload_id, input.part_number), Stored::Part { e_tag })
            }
        };
        let max = room.min(MAX_REQUEST_BODY as u64);
        let (size, md5, crc) = store_body(
            &self.storage,
            &self.db,
            &grant.upload_id,
            &key,
            body,
            max,
            input.checksum_crc32,
            trailers,
            stored,
        )
        .await?;
        s3_grants::record_part(&self.db, &input.upload_id, input.part_number, &md5, size, append_at)
            .await
            .map_err(internal)?;
        drop(appending);
        if append_at.is_some() {
            // An earlier copy of this part sent out of order is no longer the part.
            let earlier = s3_grants::part_key(&grant.upload_id, &input.upload_id, input.part_number);
            self.storage.delete(&earlier).await.map_err(internal)?;
        }
        Ok(S3Response::new(UploadPartOutput {
            e_tag: Some(ETag::Strong(md5)),
            checksum_crc32: crc,
            ..Default::default()
        }))
    }

    async fn complete_multipart_upload(
        &self,
        req: S3Request<CompleteMultipartUploadInput>,
    ) -> S3Result<S3Response<CompleteMultipartUploadOutput>> {
        let grant = grant_of(&req)?;
        let input = req.input;
        self.multipart(&grant, &input.upload_id, &input.key).await?;
        still_open(&self.db, &grant.upload_id).await?;
        let listed = input.multipart_upload.and_then(|m| m.parts).unwrap_or_default();
        if listed.is_empty() {
            return Err(s3_error!(InvalidPart, "You must specify at least one part."));
        }
        let stored = s3_grants::parts(&self.db, &input.upload_id).await.map_err(internal)?;
        let assembly = s3_grants::assembly_key(&grant.upload_id, &input.upload_id);
        let assembled = self.storage.size(&assembly).await.map_err(internal)?.unwrap_or(0);
        let mut spans: Vec<Span> = Vec::with_capacity(listed.len());
        let mut md5s = Md5::new();
        let numbers = listed
            .iter()
            .map(|part| part.part_number.ok_or_else(|| s3_error!(InvalidPart, "A part has no PartNumber.")))
            .collect::<S3Result<Vec<i32>>>()?;
        // The order is checked over the whole list before any part, as S3 does.
        if numbers.windows(2).any(|w| w[1] <= w[0]) {
            return Err(s3_error!(InvalidPartOrder, "The parts must be listed in ascending order of PartNumber."));
        }
        for (i, (part, n)) in listed.iter().zip(numbers).enumerate() {
            let Some(s3_grants::Part { e_tag, size, assembly_offset, .. }) = stored.iter().find(|p| p.part_number == n)
            else {
                return Err(s3_error!(InvalidPart, "Part {n} was not uploaded."));
            };
            if let Some(sent) = &part.e_tag
                && sent.value() != e_tag
            {
                return Err(s3_error!(InvalidPart, "Part {n} has ETag {e_tag}, not {}.", sent.value()));
            }
            if i + 1 < listed.len() && *size < MIN_PART {
                return Err(s3_error!(
                    EntityTooSmall,
                    "Part {n} has {size} bytes; every part but the last needs at least {MIN_PART}."
                ));
            }
            md5s.update(&hex::decode(e_tag).unwrap_or_default());
            let size = u64::try_from(*size).unwrap_or(0);
            // Parts are not synced on their own: one cut short by a power loss is found here.
            let span = match assembly_offset.and_then(|o| u64::try_from(o).ok()) {
                Some(offset) => {
                    (offset + size <= assembled).then(|| Span { key: assembly.clone(), range: Some((offset, size)) })
                }
                None => {
                    let key = s3_grants::part_key(&grant.upload_id, &input.upload_id, n);
                    let on_disk = self.storage.size(&key).await.map_err(internal)?;
                    (on_disk == Some(size)).then_some(Span { key, range: None })
                }
            };
            let Some(span) = span else {
                return Err(s3_error!(
                    InvalidPart,
                    "Part {n} is not whole on the service (a restart cut it short); upload it again."
                ));
            };
            // Consecutive ranges of the assembly are one span.
            match spans.last_mut() {
                Some(Span { key, range: Some((start, len)) })
                    if *key == span.key && span.range.is_some_and(|(o, _)| o == *start + *len) =>
                {
                    *len += size;
                }
                _ => spans.push(span),
            }
        }
        let incoming = incoming_key(&input.key);
        self.storage.concat(&incoming, &spans, mgds_api::MAX_UPLOAD_BYTES).await.map_err(write_error)?;
        self.forget(&grant.upload_id, &input.upload_id).await?;
        if let Err(e) = still_open(&self.db, &grant.upload_id).await {
            // Confirmed or canceled while the parts were joined: what was joined is left over.
            self.storage.delete(&incoming).await.map_err(internal)?;
            return Err(e);
        }
        let e_tag = format!("{}-{}", hex::encode(md5s.finalize()), listed.len());
        tracing::info!(key = %input.key, parts = listed.len(), "completed an S3 multipart upload");
        Ok(S3Response::new(CompleteMultipartUploadOutput {
            bucket: Some(input.bucket),
            key: Some(input.key),
            e_tag: Some(ETag::Strong(e_tag)),
            ..Default::default()
        }))
    }

    async fn abort_multipart_upload(
        &self,
        req: S3Request<AbortMultipartUploadInput>,
    ) -> S3Result<S3Response<AbortMultipartUploadOutput>> {
        let grant = grant_of(&req)?;
        self.multipart(&grant, &req.input.upload_id, &req.input.key).await?;
        self.forget(&grant.upload_id, &req.input.upload_id).await?;
        Ok(S3Response::new(AbortMultipartUploadOutput::default()))
    }
}

impl Backend {
    /// Checks that multipart upload `id` exists, was started with these credentials and is for
    /// `key`.
    async fn multipart(&self, grant: &Permit, id: &str, key: &str) -> S3Result<()> {
        match s3_grants::multipart(&self.db, id).await.map_err(internal)? {
            Some((a, k)) if a == grant.access_key && k == key => Ok(()),
            _ => Err(s3_error!(NoSuchUpload, "There is no multipart upload {id} for this key and these credentials.")),
        }
    }

    /// Removes a multipart upload's parts (every copy of each, whatever the records say), its
    /// assembly and its record.
    async fn forget(&self, upload: &str, multipart: &str) -> S3Result<()> {
        self.storage.delete_prefix(&s3_grants::multipart_prefix(upload, multipart)).await.map_err(internal)?;
        s3_grants::forget_multipart(&self.db, multipart).await.map_err(internal)
    }

    /// The right to append to multipart upload `id`'s assembly until the answer is dropped;
    /// `None` while another request holds it.
    fn appending(&self, id: &str) -> Option<Appending> {
        let mut held = self.appending.lock().ok()?;
        held.insert(id.to_string()).then(|| Appending { held: self.appending.clone(), id: id.to_string() })
    }
}

/// See [`Backend::appending`].
struct Appending {
    held: Arc<Mutex<HashSet<String>>>,
    id: String,
}

impl Drop for Appending {
    fn drop(&mut self) {
        if let Ok(mut held) = self.held.lock() {
            held.remove(&self.id);
        }
    }
}

/// The endpoint as a service for the router (S3 errors are answers of their own; only a failure
/// of the connection itself reaches the handler).
pub fn service(
    state: &AppState,
) -> axum::error_handling::HandleError<
    s3s::service::S3Service,
    impl Fn(s3s::HttpError) -> std::future::Ready<(axum::http::StatusCode, String)> + Clone + use<>,
    (),
> {
    let mut b = s3s::service::S3ServiceBuilder::new(Backend {
        db: state.db.clone(),
        storage: state.storage.clone(),
        appending: Arc::default(),
    });
    b.set_auth(Auth { db: state.db.clone() });
    b.set_access(Access { db: state.db.clone() });
    axum::error_handling::HandleError::new(b.build(), |e: s3s::HttpError| {
        tracing::warn!(error = ?e, "S3 request failed");
        std::future::ready((
            axum::http::StatusCode::BAD_REQUEST,
            "the request could not be read as an S3 request".to_string(),
        ))
    })
}
