//! Uploads: files are checked first (format, compression, reads, pairing), then each becomes a
//! sample through the upload pipeline (`mgds-upload`) with progress events, cancellation and the
//! batch's tags, project and metadata. What is the app's own: the checks it shows, the queue of
//! two uploads at a time, and the events to the window.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use mgds_client::{CancellationToken, Client};
use mgds_formats::ReadPairing;
use mgds_upload::{Progress, Source, Upload, UploadError};
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;
use ts_rs::TS;

use crate::error::{CmdError, sentence};

/// How many files a drop may add at once.
const MAX_DROPPED_FILES: usize = 2000;

/// What checking one file found.
#[derive(Debug, Clone, Serialize, TS)]
pub struct FileCheck {
    /// The file.
    pub path: String,
    /// Its name.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// FASTA or FASTQ, when readable.
    pub format: Option<String>,
    /// The compression, when readable.
    pub compression: Option<String>,
    /// Reads (records).
    pub reads: u64,
    /// Bases.
    pub bases: u64,
    /// Mean read length.
    pub mean_length: f64,
    /// What the reads' names say about pairing, in words.
    pub pairing: Option<String>,
    /// The other file of a suggested read pair.
    pub mate: Option<String>,
    /// Why the file cannot be uploaded; `None` when it can.
    pub problem: Option<String>,
}

fn pairing_words(p: ReadPairing) -> &'static str {
    match p {
        ReadPairing::Unmarked => "single-end reads",
        ReadPairing::Mate1 => "read 1 of a pair",
        ReadPairing::Mate2 => "read 2 of a pair",
        ReadPairing::Interleaved => "interleaved pairs",
        ReadPairing::Mixed => "mixed read names",
    }
}

/// Checks one file (reads it all: the same streaming validation the upload would fail on).
pub fn check(path: &Path) -> FileCheck {
    let mut c = unchecked(path);
    match mgds_formats::validate(path) {
        Ok(s) => {
            c.format = Some(s.format.to_string());
            c.compression = Some(s.compression.to_string());
            c.reads = s.records;
            c.bases = s.bases;
            c.mean_length = s.mean_len();
            c.pairing = Some(pairing_words(s.pairing).to_string());
        }
        // The file's name is shown beside the message: the message need not repeat its folder.
        Err(e) => c.problem = Some(CmdError::from(e).message.replace(&c.path, &c.name)),
    }
    c
}

/// Checks files in parallel (bounded by the machine's cores) and marks suggested read pairs.
pub async fn check_all(paths: Vec<PathBuf>) -> Result<Vec<FileCheck>, CmdError> {
    let files = tokio::task::spawn_blocking(move || mgds_upload::sequence_files(&paths))
        .await
        .map_err(|e| CmdError::new("failed", format!("The files could not be listed: {e}.")))?
        .map_err(|e| CmdError::new("invalid", sentence(&e.to_string())))?;
    if files.len() > MAX_DROPPED_FILES {
        return Err(CmdError::new(
            "invalid",
            format!(
                "These folders hold {} sequence files; add at most {MAX_DROPPED_FILES} at a time (drop fewer folders, \
                 or watch the folder instead).",
                files.len()
            ),
        ));
    }
    let limit = Arc::new(Semaphore::new(std::thread::available_parallelism().map_or(2, |n| n.get()).min(4)));
    let tasks: Vec<_> = files
        .iter()
        .cloned()
        .map(|p| {
            let limit = limit.clone();
            tokio::spawn(async move {
                let _permit = limit.acquire_owned().await;
                tokio::task::spawn_blocking(move || check(&p)).await
            })
        })
        .collect();
    let mut checks = Vec::with_capacity(tasks.len());
    for (t, path) in tasks.into_iter().zip(&files) {
        checks.push(match t.await {
            Ok(Ok(c)) => c,
            _ => FileCheck { problem: Some("This file could not be checked.".into()), ..unchecked(path) },
        });
    }
    mark_pairs(&mut checks);
    Ok(checks)
}

/// A file's name and size, before its content is read.
fn unchecked(path: &Path) -> FileCheck {
    named(
        path.display().to_string(),
        path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| path.display().to_string()),
        std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
    )
}

/// A file known by its path, name and size alone.
fn named(path: String, name: String, size: u64) -> FileCheck {
    FileCheck {
        path,
        name,
        size,
        format: None,
        compression: None,
        reads: 0,
        bases: 0,
        mean_length: 0.0,
        pairing: None,
        mate: None,
        problem: None,
    }
}

/// Marks each good file's suggested mate (R1/R2 by name, or by read names).
pub fn mark_pairs(checks: &mut [FileCheck]) {
    let good: Vec<PathBuf> = checks.iter().filter(|c| c.problem.is_none()).map(|c| PathBuf::from(&c.path)).collect();
    let mut mates: HashMap<String, String> = HashMap::new();
    for (r1, r2) in mgds_upload::find_pairs(&good) {
        let (a, b) = (r1.display().to_string(), r2.display().to_string());
        mates.insert(a.clone(), b.clone());
        mates.insert(b, a);
    }
    for c in checks {
        c.mate = mates.get(&c.path).cloned();
    }
}

/// A file a browser was given, described by what the browser read of it: its first bytes and,
/// once decompressed where the browser can (gzip), its first line. The browser does not send
/// the file for checking; the service checks every read once the file is uploaded.
#[derive(Debug, Clone, Deserialize, TS)]
#[ts(optional_fields = nullable)]
pub struct BrowserFile {
    /// Its path as the browser gives it: the file's name, under the folders dropped or picked.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its first bytes (at most [`MAX_MAGIC`] are looked at): the compression.
    #[serde(default)]
    pub magic: Vec<u8>,
    /// Its first line, decompressed (at most [`MAX_FIRST_LINE`] characters are looked at).
    #[serde(default)]
    pub first_line: Option<String>,
    /// Why the browser could not read its start (a gzip stream that does not open).
    #[serde(default)]
    pub unreadable: Option<String>,
    /// Found in a folder the user gave (not named by them): left out unless its name is a
    /// sequence file's and it is not hidden, as in a folder given to the desktop.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub from_folder: bool,
}

/// The first bytes of a described file looked at.
pub const MAX_MAGIC: usize = 8;
/// The characters of a described file's first line looked at.
pub const MAX_FIRST_LINE: usize = 1024;

/// Checks files a browser describes ([`BrowserFile`]): the name, the size, the compression from
/// the first bytes, the format from the first line, and read pairs by the names and by the
/// first reads, as [`check_all`] does on this machine (the reads themselves are counted by the
/// service when the upload is confirmed).
pub fn check_described(files: &[BrowserFile]) -> Result<Vec<FileCheck>, CmdError> {
    let files: Vec<&BrowserFile> = files.iter().filter(|f| !f.from_folder || is_sequence_path(&f.path)).collect();
    if files.len() > MAX_DROPPED_FILES {
        return Err(CmdError::new(
            "invalid",
            format!("{} sequence files were given; add at most {MAX_DROPPED_FILES} at a time.", files.len()),
        ));
    }
    let mut checks: Vec<FileCheck> = files.iter().map(|f| check_one_described(f)).collect();
    let first_reads: HashMap<&str, (Vec<u8>, mgds_formats::Mate)> = files
        .iter()
        .filter_map(|f| {
            let line = first_line(f)?;
            let header = line.strip_prefix(['@', '>'])?;
            let mate = mgds_formats::mate_from_header(header.as_bytes())?;
            Some((f.path.as_str(), (mgds_formats::base_id(header.as_bytes()).to_vec(), mate)))
        })
        .collect();
    let good: Vec<PathBuf> = checks.iter().filter(|c| c.problem.is_none()).map(|c| PathBuf::from(&c.path)).collect();
    let mut mates: HashMap<String, String> = HashMap::new();
    for group in mgds_formats::group_paths_by(&good, |p| first_reads.get(p.to_str()?).cloned()) {
        if let mgds_formats::FileGroup::Pair { r1, r2, .. } = group {
            let (a, b) = (r1.display().to_string(), r2.display().to_string());
            mates.insert(a.clone(), b.clone());
            mates.insert(b, a);
        }
    }
    for c in &mut checks {
        c.mate = mates.get(&c.path).cloned();
    }
    Ok(checks)
}

/// Whether a file found in a folder the user gave is one to check: its name is a sequence
/// file's (`.fastq.gz`, `.fa`, …) and neither it nor a folder on its path is hidden, as for a
/// folder given to the desktop. `path` is relative to that folder, `/`- or `\\`-separated.
pub fn is_sequence_path(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    mgds_api::sequence_file_stem(name).is_some() && !path.split(['/', '\\']).any(|part| part.starts_with('.'))
}

fn first_line(f: &BrowserFile) -> Option<&str> {
    let line = f.first_line.as_deref()?;
    let end = line.char_indices().nth(MAX_FIRST_LINE).map_or(line.len(), |(i, _)| i);
    Some(line[..end].trim_end_matches(['\r', '\n']))
}

fn check_one_described(f: &BrowserFile) -> FileCheck {
    let name = f.path.rsplit(['/', '\\']).next().unwrap_or(&f.path).to_string();
    let mut c = named(f.path.clone(), name.clone(), f.size);
    let compression = mgds_formats::Compression::detect(&f.magic[..f.magic.len().min(MAX_MAGIC)]);
    c.compression = Some(compression.to_string());
    c.problem = if f.size == 0 {
        Some("The file is empty.".to_string())
    } else if !compression.is_supported() {
        let e = mgds_formats::Error::UnsupportedCompression { path: PathBuf::from(&name), compression };
        Some(CmdError::from(e).message)
    } else if let Some(why) = &f.unreadable {
        Some(format!("Its start could not be read ({}): is the file whole?", why.trim_end_matches('.')))
    } else {
        match first_line(f).and_then(|l| l.chars().next()) {
            Some('@') => {
                c.format = Some(mgds_formats::Format::Fastq.to_string());
                None
            }
            Some('>') => {
                c.format = Some(mgds_formats::Format::Fasta.to_string());
                None
            }
            _ => Some(
                "It does not start with @ (FASTQ) or > (FASTA): it is not a file of reads MGDS can read.".to_string(),
            ),
        }
    };
    if c.problem.is_none() {
        let header = first_line(f).map(|l| &l[1..]).unwrap_or_default();
        c.pairing = mgds_formats::mate_from_header(header.as_bytes()).map(|m| {
            pairing_words(match m {
                mgds_formats::Mate::R1 => ReadPairing::Mate1,
                mgds_formats::Mate::R2 => ReadPairing::Mate2,
            })
            .to_string()
        });
    }
    c
}

/// One file to upload.
#[derive(Debug, Clone, Deserialize, TS)]
// What the shell defaults (`#[serde(default)]`, and any `Option`) the UI may leave out.
#[ts(optional_fields = nullable)]
pub struct UploadFile {
    /// The UI's id for this upload (progress events carry it).
    pub id: String,
    /// The file (read 1 of a pair that is joined).
    pub path: String,
    /// Read 2 of a pair to join with `path` into one interleaved sample.
    #[serde(default)]
    pub mate: Option<String>,
}

impl UploadFile {
    /// The files the sample is made from.
    pub fn source(&self) -> Source {
        match &self.mate {
            None => Source::Single(PathBuf::from(&self.path)),
            Some(mate) => Source::Interleave(vec![(PathBuf::from(&self.path), PathBuf::from(mate))]),
        }
    }

    /// The name the sample is known by until the service names it: the file's (read 1's).
    pub fn name(&self) -> String {
        Path::new(&self.path).file_name().map_or_else(|| self.path.clone(), |n| n.to_string_lossy().into_owned())
    }
}

/// What the UI sends to start uploads.
#[derive(Debug, Clone, Default, Deserialize, TS)]
#[ts(optional_fields = nullable)]
pub struct UploadBatch {
    /// The files.
    pub files: Vec<UploadFile>,
    /// Tag names for every sample.
    #[serde(default)]
    #[ts(as = "Option<_>", optional)]
    pub tags: Vec<String>,
    /// Project id for every sample.
    #[serde(default)]
    pub project: Option<String>,
    /// Metadata for every sample.
    #[serde(default)]
    pub metadata: Option<mgds_api::MetadataInput>,
}

/// Where an upload stands, in the window.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, TS)]
#[serde(rename_all = "snake_case")]
pub enum UploadState {
    /// Queued for a free slot.
    Waiting,
    /// A pair being interleaved into one file.
    Joining,
    /// Being sent (or confirmed).
    Sending,
    /// An attempt failed for a reason that may pass; the next starts soon (`error` says why).
    Retrying,
    /// The sample is made.
    Done,
    /// It failed (`error` says why).
    Failed,
    /// The user cancelled it; nothing of it is left on the service.
    Cancelled,
}

/// An upload's progress, as sent to the UI in `upload-progress` events.
#[derive(Debug, Clone, Serialize, PartialEq, TS)]
pub struct UploadProgress {
    /// The UI's id for the upload.
    pub id: String,
    /// Where it stands.
    pub state: UploadState,
    /// Bytes sent.
    pub sent: u64,
    /// Bytes in all.
    pub total: u64,
    /// The new sample, when done.
    pub sample_id: Option<String>,
    /// Why it failed, or why it is being retried.
    pub error: Option<String>,
}

impl crate::events::ShellEvent for UploadProgress {
    const NAME: &'static str = "upload-progress";
}

/// The running uploads (managed state).
pub struct Uploads {
    tokens: Mutex<HashMap<String, CancellationToken>>,
    // Two at a time: enough to fill a lab's uplink without starving the rest of the app.
    slots: Arc<Semaphore>,
}

impl Default for Uploads {
    fn default() -> Self {
        Uploads { tokens: Mutex::new(HashMap::new()), slots: Arc::new(Semaphore::new(2)) }
    }
}

impl Uploads {
    /// Starts every file of `batch`; `emit` is called with each change (sending progress at
    /// most ten times a second per upload). A joined pair is interleaved into a file in
    /// `staging`, removed once its upload ends, however it ends.
    pub fn start(
        &self,
        client: Client,
        batch: UploadBatch,
        staging: &Path,
        emit: impl Fn(UploadProgress) + Send + Sync + Clone + 'static,
    ) {
        for file in batch.files.clone() {
            let token = CancellationToken::new();
            self.tokens.lock().unwrap_or_else(|e| e.into_inner()).insert(file.id.clone(), token.clone());
            let (client, slots, emit, batch, staging) =
                (client.clone(), self.slots.clone(), emit.clone(), batch.clone(), staging.to_path_buf());
            tokio::spawn(async move {
                let source = file.source();
                let total = source.input_bytes();
                let id = file.id.clone();
                let event = move |state, sent, total, error| UploadProgress {
                    id: id.clone(),
                    state,
                    sent,
                    total,
                    sample_id: None,
                    error,
                };
                emit(event(UploadState::Waiting, 0, total, None));
                let _slot = tokio::select! {
                    s = slots.acquire_owned() => s,
                    () = token.cancelled() => { emit(event(UploadState::Cancelled, 0, total, None)); return; }
                };
                let (on_progress, ev) = (emit.clone(), event.clone());
                let mut up = Upload::new(&client, source).staging(staging).cancel_token(token).progress(move |p| {
                    on_progress(match p {
                        Progress::Preparing => ev(UploadState::Joining, 0, total, None),
                        Progress::Sending { sent, total } => ev(UploadState::Sending, sent, total, None),
                        Progress::Confirming => ev(UploadState::Sending, total, total, None),
                        Progress::Retrying { wait_secs, reason, .. } => ev(
                            UploadState::Retrying,
                            0,
                            total,
                            Some(format!("{} Trying again in {wait_secs} s.", sentence(&reason))),
                        ),
                    })
                });
                for t in &batch.tags {
                    up = up.tag(t.clone());
                }
                if let Some(p) = &batch.project {
                    up = up.project(p.clone());
                }
                if let Some(m) = batch.metadata.clone() {
                    up = up.metadata(m);
                }
                emit(match up.send().await {
                    Ok(s) => UploadProgress {
                        sample_id: Some(crate::samples::id_of(&s.uri)),
                        ..event(UploadState::Done, total, total, None)
                    },
                    Err(UploadError::Cancelled) => event(UploadState::Cancelled, 0, total, None),
                    Err(e) => event(UploadState::Failed, 0, total, Some(CmdError::from(e).message)),
                });
            });
        }
    }

    /// Cancels upload `id`; answers whether it was known.
    pub fn cancel(&self, id: &str) -> bool {
        match self.tokens.lock().unwrap_or_else(|e| e.into_inner()).remove(id) {
            Some(t) => {
                t.cancel();
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[tokio::test]
    async fn dropped_folders_give_their_sequence_files_and_pairs_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let fq = |name: &str, mate: u8| {
            let mut f = std::fs::File::create(dir.path().join(name)).unwrap();
            writeln!(f, "@r1 {mate}:N:0:1\nACGT\n+\nIIII").unwrap();
        };
        fq("s_R1_001.fastq", 1);
        fq("s_R2_001.fastq", 2);
        std::fs::write(dir.path().join("SampleSheet.csv"), "x").unwrap();
        std::fs::create_dir(dir.path().join(".hidden")).unwrap();
        std::fs::write(dir.path().join(".hidden/x.fastq"), "x").unwrap();
        let checks = check_all(vec![dir.path().to_path_buf()]).await.unwrap();
        assert_eq!(checks.len(), 2, "{checks:?}");
        assert!(checks.iter().all(|c| c.problem.is_none()), "{checks:?}");
        assert_eq!(checks[0].mate.as_deref(), Some(checks[1].path.as_str()));
        assert_eq!(checks[0].pairing.as_deref(), Some("read 1 of a pair"));
        assert_eq!(checks[0].reads, 1);
        let gone = check_all(vec![dir.path().join("gone.fastq")]).await.unwrap_err();
        assert!(gone.message.ends_with("gone.fastq does not exist; check the path."), "{}", gone.message);
    }

    #[test]
    fn a_bad_file_is_explained() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("report.fastq");
        std::fs::write(&p, "%PDF-1.4 not reads").unwrap();
        let c = check(&p);
        let why = c.problem.expect("a problem");
        // Named by the file's name alone (shown beside it), in a whole sentence.
        assert!(why.starts_with("report.fastq is not a FASTA or FASTQ file"), "{why}");
        assert!(!why.contains(&dir.path().display().to_string()) && why.ends_with('.'), "{why}");
    }

    fn described(path: &str, magic: &[u8], first_line: Option<&str>) -> BrowserFile {
        BrowserFile {
            path: path.into(),
            size: 1000,
            magic: magic.to_vec(),
            first_line: first_line.map(String::from),
            unreadable: None,
            from_folder: false,
        }
    }

    #[test]
    fn files_a_browser_describes_are_checked_and_paired_as_files_here_are() {
        let gz = [0x1f, 0x8b, 8, 0];
        let files = vec![
            described("run/S1_L001_R2_001.fastq.gz", &gz, Some("@M1:1:FC:1:1101:1:1 2:N:0:ACGT")),
            described("run/S1_L001_R1_001.fastq.gz", &gz, Some("@M1:1:FC:1:1101:1:1 1:N:0:ACGT")),
            // Paired by their first reads alone: the names say nothing.
            described("a.fq", b"@rd", Some("@read7/1\r")),
            described("b.fq", b"@rd", Some("@read7/2")),
            described("contigs.fasta", b">c", Some(">contig_1 length=900")),
            described("reads.fastq.bz2", b"BZh91AY", None),
            described("report.fastq", b"%PDF", Some("%PDF-1.4")),
            described("broken.fastq.gz", &gz, None),
            BrowserFile { size: 0, ..described("empty.fastq", b"", None) },
        ];
        let mut files = files;
        files[7].unreadable = Some("incorrect header check".into());
        // What a folder holds besides reads is left out, as on the desktop.
        for extra in ["run/SampleSheet.csv", "run/.hidden/x.fastq", "run/.x.fastq"] {
            files.push(BrowserFile { from_folder: true, ..described(extra, b"@", Some("@r")) });
        }
        let c = check_described(&files).unwrap();
        assert_eq!(c[0].name, "S1_L001_R2_001.fastq.gz");
        assert_eq!(c[0].mate.as_deref(), Some("run/S1_L001_R1_001.fastq.gz"));
        assert_eq!(c[1].mate.as_deref(), Some("run/S1_L001_R2_001.fastq.gz"));
        assert_eq!((c[1].format.as_deref(), c[1].compression.as_deref()), (Some("FASTQ"), Some("gzip")));
        assert_eq!(c[1].pairing.as_deref(), Some("read 1 of a pair"));
        assert_eq!(c[2].mate.as_deref(), Some("b.fq"));
        assert_eq!(
            (c[4].format.as_deref(), c[4].mate.as_deref(), c[4].pairing.as_deref()),
            (Some("FASTA"), None, None)
        );
        assert!(c[5].problem.as_deref().unwrap().contains("bzip2 -dc reads.fastq.bz2 | gzip"), "{:?}", c[5].problem);
        assert!(c[6].problem.as_deref().unwrap().starts_with("It does not start with @ (FASTQ)"), "{:?}", c[6].problem);
        assert!(c[7].problem.as_deref().unwrap().contains("incorrect header check"), "{:?}", c[7].problem);
        assert_eq!(c[8].problem.as_deref(), Some("The file is empty."));
        assert_eq!(c.len(), 9, "{c:?}");
        assert!(c[..5].iter().all(|c| c.problem.is_none()), "{c:?}");
        let many = vec![described("x.fq", b"@", Some("@r")); MAX_DROPPED_FILES + 1];
        assert!(check_described(&many).unwrap_err().message.contains("at most 2000"));
    }

    /// The events of one upload up to its end, and the states it went through.
    async fn ended(
        rx: &mut tokio::sync::mpsc::UnboundedReceiver<UploadProgress>,
    ) -> (UploadProgress, Vec<UploadState>) {
        let mut states = Vec::new();
        while let Some(p) = rx.recv().await {
            states.push(p.state);
            if matches!(p.state, UploadState::Done | UploadState::Failed | UploadState::Cancelled) {
                return (p, states);
            }
        }
        panic!("the upload never ended")
    }

    /// A pair dropped on the window, through the pipeline to the real local service: one joined
    /// sample; a second drop cancelled mid-way leaves nothing; sent again, it arrives.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_dropped_pair_is_uploaded_a_cancelled_one_leaves_nothing_and_a_retry_arrives() {
        let dir = tempfile::tempdir().unwrap();
        let service = crate::testing::TestService::start(&dir.path().join("data"), Default::default()).await;
        let client = service.user("lab@example.org").await;
        let write = |name: &str, mate: u8, n: usize| {
            let mut f = std::io::BufWriter::new(std::fs::File::create(dir.path().join(name)).unwrap());
            let mut x: u64 = 0x2545_F491_4F6C_DD1D ^ u64::from(mate);
            for i in 0..n {
                let seq: String = (0..100)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        b"ACGT"[(x % 4) as usize] as char
                    })
                    .collect();
                writeln!(f, "@r{i} {mate}:N:0:1\n{seq}\n+\n{}", "I".repeat(100)).unwrap();
            }
            dir.path().join(name).display().to_string()
        };
        let (r1, r2) = (write("s_R1_001.fastq", 1, 3000), write("s_R2_001.fastq", 2, 3000));
        let staging = dir.path().join("upload-staging");
        let uploads = Uploads::default();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let batch = |id: &str| UploadBatch {
            files: vec![UploadFile { id: id.into(), path: r1.clone(), mate: Some(r2.clone()) }],
            tags: vec!["run-7".into()],
            ..UploadBatch::default()
        };
        let t = tx.clone();
        uploads.start(client.clone(), batch("a"), &staging, move |p| drop(t.send(p)));
        let (done, states) = ended(&mut rx).await;
        assert_eq!(done.state, UploadState::Done, "{done:?}");
        // The pair is interleaved as it streams into the service's store: no separate joining step.
        assert!(states.contains(&UploadState::Sending) && !states.contains(&UploadState::Failed), "{states:?}");
        let sample = client.samples().get(done.sample_id.clone().unwrap().as_str()).await.unwrap();
        assert_eq!(sample.filename.as_deref(), Some("s_001_interleaved.fastq.gz"));

        // Cancelled as soon as it starts sending.
        let t = tx.clone();
        let cancel_at_first_byte = {
            let uploads = std::sync::Arc::new(uploads);
            let u = uploads.clone();
            uploads.start(client.clone(), batch("b"), &staging, move |p| {
                if p.state == UploadState::Sending {
                    u.cancel("b");
                }
                drop(t.send(p));
            });
            uploads
        };
        let (cancelled, _) = ended(&mut rx).await;
        assert_eq!(cancelled.state, UploadState::Cancelled, "{cancelled:?}");
        let count = || async { client.samples().list().per_page(50).all().await.unwrap().len() };
        assert_eq!(count().await, 1, "the cancelled upload made no sample");
        assert!(std::fs::read_dir(&staging).map_or(true, |mut d| d.next().is_none()), "no staged file is left");

        // The window's "Retry" sends the same files again.
        let t = tx.clone();
        cancel_at_first_byte.start(client.clone(), batch("c"), &staging, move |p| drop(t.send(p)));
        let (again, _) = ended(&mut rx).await;
        assert_eq!(again.state, UploadState::Done, "{again:?}");
        assert_eq!(count().await, 2);
    }
}
