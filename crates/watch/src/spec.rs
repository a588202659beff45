//! What planning works with and answers: what the planner knows of a file, a sample ready to be
//! made and its `external_sample_id`, a run's kind, state and report, and the pieces the
//! Illumina and Nanopore planners both build them with.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mgds_upload::Source;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// What the planner knows of one file.
#[derive(Debug, Clone, Default)]
pub(crate) struct View {
    /// Size and modification time stable, and (for gzip) it reads to its end.
    pub settled: bool,
    /// SHA-256 of its bytes, once settled.
    pub hash: Option<String>,
}

/// A sample ready to be made.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spec {
    /// Stable identity within the queue: the run folder (or file) and the sample's name.
    pub key: String,
    /// The run folder, if the sample comes from one.
    pub run: Option<PathBuf>,
    /// The run's id (Illumina `RunInfo.xml`, MinKNOW `protocol_run_id`).
    pub run_id: Option<String>,
    /// The sample's name (the sample sheet's `Sample_ID`, the barcode, the file name).
    pub name: String,
    /// The `external_sample_id` the sample gets; see [`external_id`].
    pub external_id: String,
    /// How its file is made.
    pub recipe: Source,
}

/// The kind of a run folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    /// An Illumina run folder.
    Illumina,
    /// A MinKNOW run folder.
    Nanopore,
}

/// Where a run stands, as far as the folder shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// Still being written; says what it waits for.
    Waiting(String),
    /// Complete: its samples are ready (or made).
    Complete,
    /// The instrument reports that the run failed; nothing of it is uploaded.
    Failed(String),
}

/// A run folder and its state.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunReport {
    pub path: PathBuf,
    pub kind: RunKind,
    pub id: String,
    pub state: RunState,
    /// Keys of the samples the complete run makes.
    pub samples: Vec<String>,
}

/// The `external_sample_id` of a sample: its name (cut to fit) and 16 hex digits of a hash of
/// its key, how it is made and the content hashes of its files. The same files found again
/// (after a restart, or copied elsewhere) give the same id, so the service can say whether
/// the sample already exists; different content gives a different id. At most 60 characters,
/// the service's limit.
pub(crate) fn external_id(name: &str, run_id: Option<&str>, recipe: &Source, hashes: &[&str]) -> String {
    let mut h = Sha256::new();
    h.update(run_id.unwrap_or("").as_bytes());
    h.update([0]);
    h.update(name.as_bytes());
    h.update([0]);
    h.update(serde_json::to_vec(&recipe_shape(recipe)).unwrap_or_default());
    for x in hashes {
        h.update([0]);
        h.update(x.as_bytes());
    }
    let digest = hex::encode(h.finalize());
    let short: String = name.chars().take(43).collect();
    format!("{short}-{}", &digest[..16])
}

/// The recipe without paths (the same run copied elsewhere is the same sample).
fn recipe_shape(r: &Source) -> (&'static str, usize) {
    match r {
        Source::Single(_) => ("single", 1),
        Source::Concat(v) => ("concat", v.len()),
        Source::Interleave(v) => ("interleave", v.len()),
    }
}

/// The text of a small file of the run: `None` while it is not there, `Err` until it settled
/// (or when it cannot be read).
pub(crate) fn read_settled(files: &BTreeMap<PathBuf, View>, p: &Path) -> Option<Result<String, ()>> {
    let v = files.get(p)?;
    if !v.settled {
        return Some(Err(()));
    }
    Some(std::fs::read_to_string(p).map_err(|_| ()))
}

/// A run's name when its files do not give one: its folder's.
pub(crate) fn dir_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "run".into())
}

/// A run's report, without samples yet.
pub(crate) fn report(run: &Path, kind: RunKind, id: &str, state: RunState) -> RunReport {
    RunReport { path: run.to_path_buf(), kind, id: id.to_string(), state, samples: Vec::new() }
}

/// A sample of the run folder `run`, with the content hashes of its files from `files`.
pub(crate) fn run_spec(
    run: &Path,
    run_id: &str,
    name: String,
    recipe: Source,
    files: &BTreeMap<PathBuf, View>,
) -> Spec {
    let all = recipe.files();
    let hashes: Vec<&str> = all.iter().map(|p| files.get(p).and_then(|v| v.hash.as_deref()).unwrap_or("")).collect();
    Spec {
        key: format!("run:{}:{name}", run.display()),
        run: Some(run.to_path_buf()),
        run_id: Some(run_id.to_string()),
        external_id: external_id(&name, Some(run_id), &recipe, &hashes),
        name,
        recipe,
    }
}
