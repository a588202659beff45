//! From the files a folder holds now to the samples that are ready to be made, and the state of
//! each run. Pure apart from reading the small marker files; the watcher calls it whenever
//! something changed. Here: which folders are runs (and of which kind) and which files are
//! samples by themselves; each run is planned by its kind's planner.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use mgds_upload::Source;

use crate::config::{FolderConfig, Layout};
use crate::spec::{RunKind, RunReport, Spec, View, external_id};
use crate::{plan_illumina, plan_nanopore};

/// What a folder holds now.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub runs: Vec<RunReport>,
    pub samples: Vec<Spec>,
}

/// Marker and description files the watcher follows (besides sequence files).
pub(crate) fn is_marker(name: &str) -> bool {
    matches!(
        name,
        "RunInfo.xml"
            | "RunParameters.xml"
            | "runParameters.xml"
            | "RTAComplete.txt"
            | "CopyComplete.txt"
            | "RunCompletionStatus.xml"
            | "Secondary_Analysis_Complete.txt"
            | "CompletedJobInfo.xml"
    ) || (name.starts_with("SampleSheet") && name.ends_with(".csv"))
        || (name.starts_with("final_summary_") && name.ends_with(".txt"))
}

/// Whether a file name is a sequence file's.
pub(crate) fn is_sequence(name: &str) -> bool {
    mgds_api::sequence_file_stem(name).is_some()
}

/// Plans one folder. `files` holds every relevant file found under it (sequence files that
/// pass the include/exclude patterns, and markers).
pub(crate) fn plan(cfg: &FolderConfig, root: &Path, files: &BTreeMap<PathBuf, View>) -> Plan {
    let mut out = Plan::default();
    let name_of = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut illumina_roots = BTreeSet::new();
    let mut nanopore_roots = BTreeSet::new();
    if cfg.layout != Layout::Files {
        for p in files.keys() {
            let n = name_of(p);
            let parent = p.parent().unwrap_or(root).to_path_buf();
            if n == "RunInfo.xml" && matches!(cfg.layout, Layout::Auto | Layout::Illumina) {
                illumina_roots.insert(parent);
            } else if matches!(cfg.layout, Layout::Auto | Layout::Nanopore) {
                if n.starts_with("final_summary_") && n.ends_with(".txt") {
                    nanopore_roots.insert(parent);
                } else if let Some(r) =
                    ancestors_within(p, root).find(|a| a.file_name().is_some_and(|f| f == "fastq_pass"))
                {
                    nanopore_roots.insert(r.parent().unwrap_or(root).to_path_buf());
                }
            }
        }
    }
    nanopore_roots.retain(|n| !illumina_roots.iter().any(|i| n.starts_with(i)));
    let mut runs: BTreeMap<PathBuf, (RunKind, Vec<PathBuf>)> = BTreeMap::new();
    for r in &illumina_roots {
        runs.insert(r.clone(), (RunKind::Illumina, Vec::new()));
    }
    for r in &nanopore_roots {
        runs.insert(r.clone(), (RunKind::Nanopore, Vec::new()));
    }
    for p in files.keys() {
        if !is_sequence(&name_of(p)) {
            continue;
        }
        // The deepest run folder holding the file.
        match ancestors_within(p, root).find(|a| runs.contains_key(*a)) {
            Some(r) => {
                if let Some(e) = runs.get_mut(r) {
                    e.1.push(p.clone());
                }
            }
            None if matches!(cfg.layout, Layout::Auto | Layout::Files) => {
                if let Some(v) = files.get(p).filter(|v| v.settled) {
                    let recipe = Source::Single(p.clone());
                    let name = mgds_api::sequence_file_stem(&name_of(p)).unwrap_or("sample").to_string();
                    let hashes = [v.hash.as_deref().unwrap_or("")];
                    out.samples.push(Spec {
                        key: format!("file:{}", p.display()),
                        run: None,
                        run_id: None,
                        external_id: external_id(&name, None, &recipe, &hashes),
                        name,
                        recipe,
                    });
                }
            }
            None => {}
        }
    }
    for (run, (kind, seqs)) in runs {
        let (report, specs) = match kind {
            RunKind::Illumina => plan_illumina::plan_run(cfg, &run, &seqs, files),
            RunKind::Nanopore => plan_nanopore::plan_run(cfg, &run, &seqs, files),
        };
        out.runs.push(report);
        out.samples.extend(specs);
    }
    out
}

/// The folders above `p`, up to and including `root`, nearest first.
fn ancestors_within<'a>(p: &'a Path, root: &'a Path) -> impl Iterator<Item = &'a Path> {
    p.ancestors().skip(1).take_while(move |a| a.starts_with(root))
}
