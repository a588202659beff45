//! Uploads: files are checked first (format, compression, reads, pairing), then sent one batch at
//! a time with progress events, cancellation and the batch's tags, project and metadata.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mgds_client::{CancellationToken, Client};
use mgds_formats::{FileGroup, ReadPairing};
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

use crate::error::CmdError;

/// File name endings of sequence files, for picking them out of a dropped folder.
const SEQUENCE_ENDINGS: &[&str] = &[".fastq", ".fq", ".fasta", ".fa", ".fna", ".fas"];
const COMPRESSED_ENDINGS: &[&str] = &["", ".gz", ".bz2", ".xz", ".zst"];
/// How many files a dropped folder may add at once.
const MAX_FOLDER_FILES: usize = 2000;

/// Whether a file name looks like a sequence file (used only inside dropped folders: a file
/// dropped on its own is always checked by its content).
pub fn looks_like_sequence_file(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SEQUENCE_ENDINGS.iter().any(|s| COMPRESSED_ENDINGS.iter().any(|c| name.ends_with(&format!("{s}{c}"))))
}

/// The files behind dropped or picked paths: files as they are; folders walked for sequence files
/// (hidden entries skipped), sorted by path.
pub fn expand(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found);
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        if out.len() >= MAX_FOLDER_FILES {
            return;
        }
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with('.') {
            continue;
        }
        let path = e.path();
        if path.is_dir() {
            walk(&path, out);
        } else if looks_like_sequence_file(&name) {
            out.push(path);
        }
    }
}

/// What checking one file found.
#[derive(Debug, Clone, Serialize)]
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
pub async fn check_all(paths: Vec<PathBuf>) -> Vec<FileCheck> {
    let files = tokio::task::spawn_blocking(move || expand(&paths)).await.unwrap_or_default();
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
    checks
}

/// A file's name and size, before its content is read.
fn unchecked(path: &Path) -> FileCheck {
    FileCheck {
        path: path.display().to_string(),
        name: path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| path.display().to_string()),
        size: std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
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
    for g in mgds_formats::group_paths(&good) {
        if let FileGroup::Pair { r1, r2, .. } = g {
            let (a, b) = (r1.display().to_string(), r2.display().to_string());
            mates.insert(a.clone(), b.clone());
            mates.insert(b, a);
        }
    }
    for c in checks {
        c.mate = mates.get(&c.path).cloned();
    }
}

/// One file to upload.
#[derive(Debug, Clone, Deserialize)]
pub struct UploadFile {
    /// The UI's id for this upload (progress events carry it).
    pub id: String,
    /// The file (read 1 of a pair that is joined).
    pub path: String,
    /// Read 2 of a pair to join with `path` into one interleaved sample.
    #[serde(default)]
    pub mate: Option<String>,
}

/// What the UI sends to start uploads.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct UploadBatch {
    /// The files.
    pub files: Vec<UploadFile>,
    /// Tag names for every sample.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Project id for every sample.
    #[serde(default)]
    pub project: Option<String>,
    /// Metadata for every sample.
    #[serde(default)]
    pub metadata: Option<mgds_api::MetadataInput>,
}

/// An upload's progress, as sent to the UI in `upload-progress` events.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct UploadProgress {
    /// The UI's id for the upload.
    pub id: String,
    /// `waiting`, `joining` (a pair being interleaved), `sending`, `done`, `failed` or `cancelled`.
    pub state: &'static str,
    /// Bytes sent.
    pub sent: u64,
    /// Bytes in all.
    pub total: u64,
    /// The new sample, when done.
    pub sample_id: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
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
    /// Starts every file of `batch`; `emit` is called with progress (throttled to ~8 a second
    /// per upload, plus every change of state). A joined pair is first interleaved into a file in
    /// `staging` (removed once the upload ends, however it ends).
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
            let (client, slots, emit, batch) = (client.clone(), self.slots.clone(), emit.clone(), batch.clone());
            let staging = staging.join(&file.id);
            tokio::spawn(async move {
                let mut total = std::fs::metadata(&file.path).map(|m| m.len()).unwrap_or(0);
                if let Some(m) = &file.mate {
                    total += std::fs::metadata(m).map(|m| m.len()).unwrap_or(0);
                }
                let progress = |state, sent, total, sample_id, error| UploadProgress {
                    id: file.id.clone(),
                    state,
                    sent,
                    total,
                    sample_id,
                    error,
                };
                emit(progress("waiting", 0, total, None, None));
                let _slot = tokio::select! {
                    s = slots.acquire_owned() => s,
                    () = token.cancelled() => { emit(progress("cancelled", 0, total, None, None)); return; }
                };
                let path = match &file.mate {
                    None => PathBuf::from(&file.path),
                    Some(mate) => {
                        emit(progress("joining", 0, total, None, None));
                        match join_pair(Path::new(&file.path), Path::new(mate), &staging, &token).await {
                            Ok(p) => p,
                            Err(JoinError::Cancelled) => {
                                let _ = std::fs::remove_dir_all(&staging);
                                emit(progress("cancelled", 0, total, None, None));
                                return;
                            }
                            Err(JoinError::Failed(message)) => {
                                let _ = std::fs::remove_dir_all(&staging);
                                emit(progress("failed", 0, total, None, Some(message)));
                                return;
                            }
                        }
                    }
                };
                let total = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(total);
                emit(progress("sending", 0, total, None, None));
                let last = Arc::new(Mutex::new(Instant::now()));
                let (id, emit2) = (file.id.clone(), emit.clone());
                let mut up = client.samples().upload(&path).cancel_token(token.clone()).progress(move |sent, total| {
                    let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
                    if last.elapsed() >= Duration::from_millis(120) || sent == total {
                        *last = Instant::now();
                        emit2(UploadProgress {
                            id: id.clone(),
                            state: "sending",
                            sent,
                            total,
                            sample_id: None,
                            error: None,
                        });
                    }
                });
                for t in batch.tags.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
                    up = up.tag(t);
                }
                if let Some(p) = batch.project.as_deref().filter(|p| !p.is_empty()) {
                    up = up.project(p);
                }
                if let Some(m) = batch.metadata.clone() {
                    up = up.metadata(m);
                }
                let result = up.send().await;
                if file.mate.is_some() {
                    let _ = std::fs::remove_dir_all(&staging);
                }
                match result {
                    Ok(s) => emit(progress("done", total, total, Some(crate::samples::id_of(&s.uri)), None)),
                    Err(mgds_client::Error::Cancelled) => emit(progress("cancelled", 0, total, None, None)),
                    Err(e) => emit(progress("failed", 0, total, None, Some(CmdError::from(e).message))),
                }
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

enum JoinError {
    Cancelled,
    Failed(String),
}

/// Interleaves read 1 and read 2 into one gzipped FASTQ in `dir`, named after read 1 (the
/// sample's file name); checks the pair on the way (equal counts, matching read names).
async fn join_pair(r1: &Path, r2: &Path, dir: &Path, token: &CancellationToken) -> Result<PathBuf, JoinError> {
    std::fs::create_dir_all(dir).map_err(|e| {
        JoinError::Failed(format!(
            "Could not make room to join the pair in {}: {e}. Check the disk is not full.",
            dir.display()
        ))
    })?;
    let out = dir.join(mgds_formats::interleaved_name(r1));
    let (a, b, o) = (r1.to_path_buf(), r2.to_path_buf(), out.clone());
    let work = tokio::task::spawn_blocking(move || {
        mgds_formats::interleave(&a, &b, &o, mgds_formats::OutputCompression::GZIP)
            .map_err(|e| CmdError::from(e).message)
    });
    tokio::select! {
        r = work => match r {
            Ok(Ok(_)) => Ok(out),
            Ok(Err(why)) => Err(JoinError::Failed(format!("These two files cannot be joined: {why}"))),
            Err(e) => Err(JoinError::Failed(format!("Joining the pair stopped: {e}."))),
        },
        // The interleaving thread finishes on its own; its output is removed with the folder.
        () = token.cancelled() => Err(JoinError::Cancelled),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn sequence_file_names() {
        for n in ["a.fastq", "A_R1.FQ.GZ", "c.fasta.bz2", "d.fna"] {
            assert!(looks_like_sequence_file(n), "{n}");
        }
        for n in ["SampleSheet.csv", "a.fastq.md5", "notes.txt"] {
            assert!(!looks_like_sequence_file(n), "{n}");
        }
    }

    #[test]
    fn folders_are_expanded_to_their_sequence_files_and_pairs_found() {
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
        let files = expand(&[dir.path().to_path_buf()]);
        assert_eq!(files.len(), 2, "{files:?}");
        let mut checks: Vec<FileCheck> = files.iter().map(|p| check(p)).collect();
        mark_pairs(&mut checks);
        assert!(checks.iter().all(|c| c.problem.is_none()), "{checks:?}");
        assert_eq!(checks[0].mate.as_deref(), Some(checks[1].path.as_str()));
        assert_eq!(checks[0].pairing.as_deref(), Some("read 1 of a pair"));
        assert_eq!(checks[0].reads, 1);
    }

    #[tokio::test]
    async fn a_pair_is_joined_into_one_file_named_after_read_1_and_a_bad_pair_is_explained() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, mate: u8, n: usize| {
            let mut f = std::fs::File::create(dir.path().join(name)).unwrap();
            for i in 0..n {
                writeln!(f, "@r{i} {mate}:N:0:1\nACGTACGT\n+\nIIIIIIII").unwrap();
            }
            dir.path().join(name)
        };
        let (r1, r2) = (write("s_R1_001.fastq", 1, 3), write("s_R2_001.fastq", 2, 3));
        let token = CancellationToken::new();
        let Ok(out) = join_pair(&r1, &r2, &dir.path().join("staging"), &token).await else { panic!("joined") };
        assert_eq!(out.file_name().unwrap(), "s_001_interleaved.fastq.gz");
        let summary = mgds_formats::validate(&out).unwrap();
        assert_eq!(summary.records, 6);

        let short = write("t_R2_001.fastq", 2, 2);
        match join_pair(&r1, &short, &dir.path().join("staging2"), &token).await {
            Err(JoinError::Failed(m)) => assert!(m.starts_with("These two files cannot be joined"), "{m}"),
            _ => panic!("a pair with unequal counts must not be joined"),
        }
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
}
