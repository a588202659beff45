//! Uploads from a browser, which holds the file: it cannot be read here, and should not be (a
//! 20 GB file goes straight to the store). The upload is the S3 multipart flow every client of
//! the service uses (`init_multipart_upload`, parts, callback), split so that the browser needs
//! no signing code of its own and works over plain HTTP too (where browsers offer no crypto):
//! - [`begin`] asks the service for the upload (its sample or document, keys and credentials)
//!   and starts a multipart upload of each file on the store;
//! - the browser asks [`sign`] for the addresses of the parts it is about to send, sends each
//!   part there itself (a slice of the file, read from disk as it goes), and keeps each part's
//!   `ETag`;
//! - [`finish`] completes each file from those tags and reports the upload to the service,
//!   which checks the file (and joins a pair) where it checks every upload.
//!
//! The browser keeps what [`begin`] answered, with the tags of the parts it sent, until the
//! upload is finished or given up; after a dropped connection, or a reload and the file picked
//! again, it goes on from the parts already stored. Nothing here holds any of it.

use std::time::Duration;

use mgds_api::{InitMultipartUploadRequest, InitMultipartUploadResponse, MetadataInput, RefOrId, TagInput};
use mgds_client::{Client, SignedParts};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::{CmdError, CmdResult};

/// The smallest part sent to an object store (S3's minimum is 5 MiB but for the last): large
/// enough that a 20 GB file is about 1,300 requests, small enough that a dropped part costs
/// seconds, and sent three at a time.
pub const MIN_PART_SIZE: u64 = 16 * 1024 * 1024;
/// The smallest part sent to the service's own endpoint, one at a time (it writes parts that
/// arrive in order straight into the file): fewer, larger requests (the endpoint takes up to
/// 128 MiB in one).
pub const MIN_OWN_PART_SIZE: u64 = 64 * 1024 * 1024;
/// Parts one upload's file may have (S3 allows 10,000; some room is kept).
pub const MAX_PARTS: u64 = 9_000;
/// Part addresses signed at once.
pub const MAX_SIGNED_AT_ONCE: usize = 64;
/// How long a part's address is good for.
const PART_ADDRESS_VALID: Duration = Duration::from_secs(3600);

/// What a browser asks to upload.
#[derive(Debug, Clone, Deserialize, TS)]
#[ts(optional_fields = nullable)]
pub struct BrowserUploadRequest {
    /// A sample's reads or a document.
    pub kind: UploadKind,
    /// The file's name (read 1's, for a pair).
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// Read 2's file, for a pair joined into one sample.
    #[serde(default)]
    pub mate: Option<MateFile>,
    /// Tag names for a sample.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub tags: Vec<String>,
    /// A project id for a sample.
    #[serde(default)]
    pub project: Option<String>,
    /// Metadata for a sample.
    #[serde(default)]
    pub metadata: Option<MetadataInput>,
}

/// Read 2 of a pair.
#[derive(Debug, Clone, Deserialize, TS)]
pub struct MateFile {
    /// Its name.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
}

/// What an upload makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum UploadKind {
    /// A sample, from reads.
    Sample,
    /// A document.
    Document,
}

/// A started upload as the browser keeps it (and sends it back with each step).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct BrowserUpload {
    /// A sample's reads or a document.
    pub kind: UploadKind,
    /// The service's answer to `init_multipart_upload` (with the upload's credentials, which
    /// sign its parts' addresses; they write this upload's files and nothing else).
    #[ts(type = "unknown")]
    pub init: InitMultipartUploadResponse,
    /// One per file: read 1 (or the document), then read 2 of a pair.
    pub files: Vec<UploadObject>,
    /// Whether parts should be sent one after another: the service's own store writes parts
    /// that arrive in order straight into the file, and others twice.
    pub in_order: bool,
}

/// One file of an upload, as a multipart upload on the store.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct UploadObject {
    /// The file's name.
    pub name: String,
    /// Its size.
    pub size: u64,
    /// The object it becomes.
    pub key: String,
    /// The store's id of its multipart upload.
    pub upload_id: String,
    /// Bytes per part (the last may be smaller).
    pub part_size: u64,
    /// Parts in all.
    pub parts: u32,
}

/// What a finished upload made.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(optional_fields = nullable)]
pub struct UploadMade {
    /// The new sample.
    pub sample_id: Option<String>,
    /// The new document.
    pub document_id: Option<String>,
}

/// Where the store is for an upload: the address this process reaches it at (to start,
/// complete and abort), and the one the browser sends its parts to. Taken from the service's
/// own configuration, never from what a browser sends.
#[derive(Debug, Clone)]
pub struct StoreAddresses {
    /// This process's.
    pub control: String,
    /// The browser's.
    pub public: String,
    /// Whether it is the service's own S3-compatible endpoint (which takes parts best in order).
    pub own_endpoint: bool,
}

/// The part size of a file of `size` bytes: [`MIN_PART_SIZE`] ([`MIN_OWN_PART_SIZE`] to the
/// service's own endpoint), or larger (by whole MiB) where the file would need more than
/// [`MAX_PARTS`] parts.
pub fn part_size(size: u64, own_endpoint: bool) -> u64 {
    let mib = 1024 * 1024;
    let least = if own_endpoint { MIN_OWN_PART_SIZE } else { MIN_PART_SIZE };
    least.max(size.div_ceil(MAX_PARTS).div_ceil(mib) * mib)
}

fn object(name: &str, size: u64, key: String, upload_id: String, own_endpoint: bool) -> UploadObject {
    let part_size = part_size(size, own_endpoint);
    let parts = u32::try_from(size.div_ceil(part_size).max(1)).unwrap_or(u32::MAX);
    UploadObject { name: name.to_string(), size, key, upload_id, part_size, parts }
}

fn check_name(name: &str, size: u64) -> CmdResult<()> {
    if name.trim().is_empty() {
        return Err(CmdError::new("invalid", "The file has no name."));
    }
    if size == 0 {
        return Err(CmdError::new("invalid", format!("{name} is empty: there is nothing to upload.")));
    }
    Ok(())
}

/// Starts an upload: the service's `init_multipart_upload` for the sample (a pair's two files
/// as one) or document, then a multipart upload on the store for each file.
pub async fn begin(
    client: &Client,
    store: impl FnOnce(&InitMultipartUploadResponse) -> CmdResult<StoreAddresses>,
    req: BrowserUploadRequest,
) -> CmdResult<BrowserUpload> {
    check_name(&req.name, req.size)?;
    if let Some(m) = &req.mate {
        check_name(&m.name, m.size)?;
    }
    let init = match req.kind {
        UploadKind::Sample => {
            let body = InitMultipartUploadRequest {
                filename: Some(req.name.clone()),
                paired_end_filename: req.mate.as_ref().map(|m| m.name.clone()),
                metadata: req.metadata.clone(),
                tags: req.tags.iter().map(|t| TagInput { name: t.clone() }).collect(),
                project: req.project.clone().map(RefOrId::Id),
                ..Default::default()
            };
            client.samples().init_multipart_upload(&body).await?
        }
        UploadKind::Document => client.documents().init_multipart_upload(&req.name).await?,
    };
    let started = start_objects(client, store, &init, &req).await;
    match started {
        Ok((files, in_order)) => Ok(BrowserUpload { kind: req.kind, init, files, in_order }),
        Err(e) => {
            // Nothing is left half-made: the sample the service proposed goes (a document's
            // record, never confirmed, expires with its upload).
            if let (UploadKind::Sample, Some(id)) = (req.kind, &init.sample_id) {
                let _ = client.samples().cancel_upload(id).await;
            }
            Err(e)
        }
    }
}

async fn start_objects(
    client: &Client,
    store: impl FnOnce(&InitMultipartUploadResponse) -> CmdResult<StoreAddresses>,
    init: &InitMultipartUploadResponse,
    req: &BrowserUploadRequest,
) -> CmdResult<(Vec<UploadObject>, bool)> {
    let at = store(init)?;
    let signed = SignedParts::new(client, init, &at.control, &at.public)?;
    let own = at.own_endpoint;
    let mut files = vec![object(&req.name, req.size, init.file_id.clone(), signed.start(&init.file_id).await?, own)];
    if let Some(mate) = &req.mate {
        let key = init.paired_end_file_id.as_ref().ok_or_else(|| {
            CmdError::new(
                "service_failed",
                "The service gave no place for read 2 of the pair; upload each file on its own.",
            )
        })?;
        files.push(object(&mate.name, mate.size, key.clone(), signed.start(key).await?, own));
    }
    Ok((files, at.own_endpoint))
}

/// What a browser sends back must be what [`begin`] gave: one file, or a pair's two, under the
/// keys the service gave, with the parts their sizes make.
fn check_upload(upload: &BrowserUpload) -> CmdResult<()> {
    let keys: Vec<&String> =
        std::iter::once(&upload.init.file_id).chain(upload.init.paired_end_file_id.as_ref()).collect();
    let right = upload.files.len() == keys.len()
        && upload.files.iter().zip(&keys).all(|(f, k)| {
            let o = object(&f.name, f.size, f.key.clone(), f.upload_id.clone(), upload.in_order);
            &&f.key == k && f.size > 0 && o.part_size == f.part_size && o.parts == f.parts
        });
    if right { Ok(()) } else { Err(CmdError::new("invalid", "This upload is not one the service started for you.")) }
}

fn file_of(upload: &BrowserUpload, file: usize) -> CmdResult<&UploadObject> {
    upload.files.get(file).ok_or_else(|| CmdError::new("invalid", format!("This upload has no file {file}.")))
}

/// The addresses to send parts `numbers` (from 1) of the upload's file `file` to.
pub async fn sign(
    client: &Client,
    at: &StoreAddresses,
    upload: &BrowserUpload,
    file: usize,
    numbers: &[u32],
) -> CmdResult<Vec<String>> {
    check_upload(upload)?;
    let f = file_of(upload, file)?;
    if numbers.len() > MAX_SIGNED_AT_ONCE {
        return Err(CmdError::new("invalid", format!("Ask for at most {MAX_SIGNED_AT_ONCE} parts at once.")));
    }
    if let Some(n) = numbers.iter().find(|&&n| n == 0 || n > f.parts) {
        return Err(CmdError::new("invalid", format!("{} has parts 1 to {}, not {n}.", f.name, f.parts)));
    }
    let signed = SignedParts::new(client, &upload.init, &at.control, &at.public)?;
    Ok(signed.sign(&f.key, &f.upload_id, numbers, PART_ADDRESS_VALID).await?)
}

/// Completes each file from its parts' `etags` (in part order, one list per file) and reports
/// the upload to the service: the sample (checked, a pair joined, by a worker) or document.
pub async fn finish(
    client: &Client,
    at: &StoreAddresses,
    upload: &BrowserUpload,
    etags: Vec<Vec<String>>,
) -> CmdResult<UploadMade> {
    check_upload(upload)?;
    if etags.len() != upload.files.len() {
        return Err(CmdError::new("invalid", "Give the parts of every file of the upload."));
    }
    check_callback(&upload.init.callback_url)?;
    let signed = SignedParts::new(client, &upload.init, &at.control, &at.public)?;
    let mut incomplete = None;
    for (f, tags) in upload.files.iter().zip(etags) {
        if tags.len() != f.parts as usize {
            return Err(CmdError::new(
                "invalid",
                format!("{} has {} parts; {} were sent.", f.name, f.parts, tags.len()),
            ));
        }
        // A file completed by an earlier try (whose answer was lost) has no multipart upload
        // left: the callback then says whether the files are there.
        if let Err(e) = signed.complete(&f.key, &f.upload_id, tags).await {
            incomplete = Some(format!("The parts of {} could not be put together ({e})", f.name));
        }
    }
    let name = upload.files.first().map(|f| f.name.as_str()).unwrap_or_default();
    match client.upload_callback(&upload.init, name).await {
        Ok(made) => Ok(UploadMade { sample_id: made.sample_id, document_id: made.document_id }),
        Err(e) => Err(match incomplete {
            Some(why) => CmdError::new("upload_incomplete", format!("{why}; upload the file again.")),
            None => e.into(),
        }),
    }
}

/// The callback a browser sends back must be one the service gives: a path of its own API.
fn check_callback(path: &str) -> CmdResult<()> {
    let id = ["/api/v1/samples/upload_callback/", "/api/v1/documents/upload_callback/"]
        .iter()
        .find_map(|p| path.strip_prefix(p));
    match id {
        Some(id) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') => Ok(()),
        _ => Err(CmdError::new("invalid", "This upload's callback is not one the service gives.")),
    }
}

/// Gives up an upload: the store drops the parts sent, and the service the sample it proposed
/// (a document's record, never confirmed, expires with its upload).
pub async fn cancel(client: &Client, at: &StoreAddresses, upload: &BrowserUpload) -> CmdResult<()> {
    check_upload(upload)?;
    let signed = SignedParts::new(client, &upload.init, &at.control, &at.public)?;
    for f in &upload.files {
        // A part sent meanwhile, or an upload already completed, leaves nothing to abort.
        let _ = signed.abort(&f.key, &f.upload_id).await;
    }
    if let (UploadKind::Sample, Some(id)) = (upload.kind, &upload.init.sample_id) {
        client.samples().cancel_upload(id).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_services_own_callbacks_are_followed() {
        assert!(check_callback("/api/v1/samples/upload_callback/a1B2-c_3").is_ok());
        assert!(check_callback("/api/v1/documents/upload_callback/x9").is_ok());
        for bad in [
            "https://elsewhere.example/api/v1/samples/upload_callback/x",
            "/api/v1/samples/upload_callback/",
            "/api/v1/samples/upload_callback/../users",
            "//evil.example/x",
        ] {
            assert!(check_callback(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn parts_are_16_or_64_mib_until_a_file_would_need_more_than_9000() {
        let mib = 1024 * 1024;
        assert_eq!(part_size(1, false), 16 * mib);
        assert_eq!(part_size(20 * 1024 * mib, false), 16 * mib);
        assert_eq!(part_size(20 * 1024 * mib, true), 64 * mib);
        // 200 GiB: 22.76 MiB per part at least, so 23 MiB.
        let big = 200 * 1024 * mib;
        assert_eq!(part_size(big, false), 23 * mib);
        assert!(big.div_ceil(part_size(big, false)) <= MAX_PARTS);
        let o = object("r.fq", 33 * mib, "k".into(), "u".into(), false);
        assert_eq!((o.parts, o.part_size), (3, 16 * mib));
    }
}
