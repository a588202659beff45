//! What a watched folder is and what to do with what it finds.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::alerts::AlertRule;

/// How the files of a folder are turned into samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Layout {
    /// Illumina run folders and Nanopore run folders are recognised by their files; any other
    /// sequence file is one sample.
    #[default]
    Auto,
    /// Only Illumina run folders (a folder with `RunInfo.xml`).
    Illumina,
    /// Only MinKNOW output (a folder with `fastq_pass/` or `final_summary_*.txt`).
    Nanopore,
    /// Every settled FASTA/FASTQ file is one sample; no run logic.
    Files,
}

impl Layout {
    /// The name used on the command line and in saved folders.
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Auto => "auto",
            Layout::Illumina => "illumina",
            Layout::Nanopore => "nanopore",
            Layout::Files => "files",
        }
    }
}

impl std::str::FromStr for Layout {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Layout::Auto),
            "illumina" => Ok(Layout::Illumina),
            "nanopore" => Ok(Layout::Nanopore),
            "files" => Ok(Layout::Files),
            other => Err(format!("unknown layout {other:?}; use auto, illumina, nanopore or files")),
        }
    }
}

/// How an Illumina run's FASTQ files become samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct IlluminaOptions {
    /// Make one interleaved sample of a sample's R1 and R2 files.
    pub pair: bool,
    /// Join a sample's lanes (L001, L002, ...) into one sample.
    pub join_lanes: bool,
}

impl Default for IlluminaOptions {
    fn default() -> Self {
        IlluminaOptions { pair: true, join_lanes: true }
    }
}

/// How a Nanopore run's batch files become samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum NanoporeGrouping {
    /// One sample per barcode (or per run without barcodes), its batch files concatenated,
    /// made once the run's `final_summary_*.txt` says it is done.
    #[default]
    PerBarcode,
    /// One sample per batch file, uploaded as each file settles.
    PerFile,
}

/// One watched folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FolderConfig {
    /// The folder.
    pub path: PathBuf,
    /// Look into subfolders (run folders need it).
    pub recursive: bool,
    /// Glob patterns (relative to the folder) a file must match to be considered; none: all.
    pub include: Vec<String>,
    /// Glob patterns (relative to the folder) of files to leave alone.
    pub exclude: Vec<String>,
    /// How files become samples.
    pub layout: Layout,
    /// Illumina options.
    pub illumina: IlluminaOptions,
    /// Nanopore options.
    pub nanopore: NanoporeGrouping,
    /// The project (id) new samples go into.
    pub project: Option<String>,
    /// Tags (names) given to new samples.
    pub tags: Vec<String>,
    /// Custom metadata given to new samples (string, number or boolean values).
    pub metadata: Map<String, Value>,
    /// Jobs (ids) to run on each new sample once it is confirmed.
    pub jobs: Vec<String>,
    /// Alert rules for this folder's samples and runs, besides the ones for every folder.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(type = "Array<string>"))]
    pub alerts: Vec<AlertRule>,
}

impl Default for FolderConfig {
    fn default() -> Self {
        FolderConfig {
            path: PathBuf::new(),
            recursive: true,
            include: Vec::new(),
            exclude: Vec::new(),
            layout: Layout::Auto,
            illumina: IlluminaOptions::default(),
            nanopore: NanoporeGrouping::default(),
            project: None,
            tags: Vec::new(),
            metadata: Map::new(),
            jobs: Vec::new(),
            alerts: Vec::new(),
        }
    }
}

impl FolderConfig {
    /// A folder with the defaults: recursive, auto layout, pairs and lanes joined.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FolderConfig { path: path.into(), ..FolderConfig::default() }
    }
}

/// How the watcher looks and how it uploads; the same for every folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Time between polling passes. A file settles after two passes that see it unchanged.
    pub poll_interval: Duration,
    /// A file must also be at least this old (since its last change) to settle.
    pub min_age: Duration,
    /// Listen to file-system events as well as polling. Without events (network shares
    /// deliver none) every pass walks the whole tree.
    pub events: bool,
    /// With events on, the whole tree is still walked this often (events can be lost); in
    /// between only unsettled files are looked at again.
    pub rescan_interval: Duration,
    /// Upload speed limit in bytes per second (0: none).
    pub bandwidth: u64,
    /// First wait before retrying a sample whose upload failed for a passing reason; it
    /// doubles up to `max_backoff`.
    pub initial_backoff: Duration,
    /// Longest wait between retries.
    pub max_backoff: Duration,
    /// A file whose presence pauses uploads (the `mgds watch pause` switch); none: no file.
    pub pause_file: Option<PathBuf>,
    /// Alert rules for every folder's samples and runs.
    pub alerts: Vec<AlertRule>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            poll_interval: Duration::from_secs(10),
            min_age: Duration::from_secs(30),
            events: true,
            rescan_interval: Duration::from_secs(120),
            bandwidth: 0,
            initial_backoff: Duration::from_secs(2),
            max_backoff: Duration::from_secs(300),
            pause_file: None,
            alerts: Vec::new(),
        }
    }
}
