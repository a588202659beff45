//! From the files a folder holds now to the samples that are ready to be made, and the state of
//! each run. Pure apart from reading the small marker files; the watcher calls it whenever
//! something changed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use mgds_upload::Source;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::{FolderConfig, Layout, NanoporeGrouping};
use crate::{illumina, nanopore};

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
            RunKind::Illumina => plan_illumina(cfg, &run, &seqs, files),
            RunKind::Nanopore => plan_nanopore(cfg, &run, &seqs, files),
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

fn read_settled(files: &BTreeMap<PathBuf, View>, p: &Path) -> Option<Result<String, ()>> {
    let v = files.get(p)?;
    if !v.settled {
        return Some(Err(()));
    }
    Some(std::fs::read_to_string(p).map_err(|_| ()))
}

fn dir_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "run".into())
}

fn report(run: &Path, kind: RunKind, id: &str, state: RunState) -> RunReport {
    RunReport { path: run.to_path_buf(), kind, id: id.to_string(), state, samples: Vec::new() }
}

fn spec(run: &Path, run_id: &str, name: String, recipe: Source, files: &BTreeMap<PathBuf, View>) -> Spec {
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

fn plan_illumina(
    cfg: &FolderConfig,
    run: &Path,
    seqs: &[PathBuf],
    files: &BTreeMap<PathBuf, View>,
) -> (RunReport, Vec<Spec>) {
    let kind = RunKind::Illumina;
    let id = match read_settled(files, &run.join("RunInfo.xml")) {
        Some(Ok(t)) => illumina::run_id(&t).unwrap_or_else(|| dir_name(run)),
        _ => dir_name(run),
    };
    let waiting = |why: String| (report(run, kind, &id, RunState::Waiting(why)), Vec::new());
    match read_settled(files, &run.join("RunCompletionStatus.xml")) {
        Some(Err(())) => return waiting("reading RunCompletionStatus.xml".into()),
        Some(Ok(t)) => {
            if let Err(why) = illumina::completion_status(&t) {
                return (report(run, kind, &id, RunState::Failed(why)), Vec::new());
            }
        }
        None => {
            if !files.contains_key(&run.join("CopyComplete.txt")) && !files.contains_key(&run.join("RTAComplete.txt")) {
                return waiting("sequencing (no RTAComplete.txt or CopyComplete.txt yet)".into());
            }
        }
    }
    // Where the FASTQ files are: the newest on-board analysis (NextSeq 1000/2000, NovaSeq X:
    // Analysis/N/Data/fastq), else the newest MiSeq Local Run Manager folder
    // (Alignment_N/<time>/Fastq), else anywhere in the run (Data/Intensities/BaseCalls from
    // MiSeq Reporter or bcl2fastq, or any other output folder inside the run).
    let rel_first = |p: &Path| -> (String, Option<u32>) {
        let mut c = p.strip_prefix(run).unwrap_or(p).components().map(|c| c.as_os_str().to_string_lossy().into_owned());
        let first = c.next().unwrap_or_default();
        let n = if first == "Analysis" {
            c.next().and_then(|s| s.parse().ok())
        } else {
            first.strip_prefix("Alignment_").and_then(|s| s.parse().ok())
        };
        (first, n)
    };
    let mut analysis: Option<u32> = None;
    let mut alignment: Option<u32> = None;
    for p in seqs {
        match rel_first(p) {
            (f, Some(n)) if f == "Analysis" => analysis = analysis.max(Some(n)),
            (f, Some(n)) if f.starts_with("Alignment_") => alignment = alignment.max(Some(n)),
            _ => {}
        }
    }
    let (source, markers): (Option<PathBuf>, &[&str]) = match (analysis, alignment) {
        (Some(n), _) => {
            (Some(run.join("Analysis").join(n.to_string())), &["CopyComplete.txt", "Secondary_Analysis_Complete.txt"])
        }
        (None, Some(n)) => (Some(run.join(format!("Alignment_{n}"))), &["CompletedJobInfo.xml"]),
        (None, None) => (None, &[]),
    };
    let chosen: Vec<&PathBuf> = match &source {
        Some(dir) => seqs.iter().filter(|p| p.starts_with(dir)).collect(),
        None => seqs.iter().collect(),
    };
    if let Some(dir) = &source {
        let done =
            files.keys().any(|p| p.starts_with(dir) && markers.iter().any(|m| p.file_name().is_some_and(|f| f == *m)));
        if !done {
            return waiting(format!(
                "on-board analysis {} (no {} yet)",
                dir.strip_prefix(run).unwrap_or(dir).display(),
                markers.join(" or ")
            ));
        }
    }
    // The sample sheet: the run's own, else the analysis folder's copy.
    let sheet_path = if files.contains_key(&run.join("SampleSheet.csv")) {
        Some(run.join("SampleSheet.csv"))
    } else {
        source.as_ref().and_then(|d| {
            files
                .keys()
                .find(|p| {
                    p.starts_with(d) && p.file_name().is_some_and(|f| f.to_string_lossy().starts_with("SampleSheet"))
                })
                .cloned()
        })
    };
    let sheet = match sheet_path.as_ref().map(|p| read_settled(files, p)) {
        Some(Some(Err(()))) => return waiting("reading the sample sheet".into()),
        Some(Some(Ok(t))) => illumina::sample_sheet(&t),
        _ => Vec::new(),
    };
    // sample -> (lane, read, path)
    let mut by_sample: BTreeMap<String, Vec<(Option<u32>, u8, PathBuf)>> = BTreeMap::new();
    let mut singles: Vec<PathBuf> = Vec::new();
    for p in chosen {
        let fname = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        match illumina::fastq_name(&fname) {
            Some(n) if n.number == 0 || n.sample == "Undetermined" => {}
            Some(n) => {
                let id = sheet
                    .iter()
                    .find(|s| s.id == n.sample || s.name.as_deref() == Some(n.sample.as_str()))
                    .or_else(|| sheet.get(n.number as usize - 1))
                    .map_or(n.sample.clone(), |s| s.id.clone());
                by_sample.entry(id).or_default().push((n.lane, n.read, p.clone()));
            }
            None if illumina::fastq_name_is_index(&fname) => {}
            None => singles.push(p.clone()),
        }
    }
    let missing: Vec<&str> = sheet.iter().filter(|s| !by_sample.contains_key(&s.id)).map(|s| s.id.as_str()).collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(5).copied().collect();
        return waiting(format!(
            "FASTQ files of {} sample(s) of the sample sheet: {}",
            missing.len(),
            shown.join(", ")
        ));
    }
    let all: Vec<&PathBuf> = by_sample.values().flatten().map(|(_, _, p)| p).chain(singles.iter()).collect();
    if all.is_empty() {
        return waiting("FASTQ files (none found yet)".into());
    }
    let unsettled = all.iter().filter(|p| !files.get(**p).is_some_and(|v| v.settled)).count();
    if unsettled > 0 {
        return waiting(format!("{unsettled} FASTQ file(s) still being written"));
    }
    let mut specs = Vec::new();
    let opts = cfg.illumina;
    for (sid, mut fs) in by_sample {
        fs.sort();
        let lanes: BTreeSet<Option<u32>> = fs.iter().map(|f| f.0).collect();
        let has_r2 = fs.iter().any(|f| f.1 == 2);
        let reads = |lane: Option<u32>, read: u8| -> Vec<PathBuf> {
            fs.iter().filter(|f| (lane.is_none() || f.0 == lane) && f.1 == read).map(|f| f.2.clone()).collect()
        };
        let made = if opts.join_lanes {
            group(sid.clone(), reads(None, 1), reads(None, 2), opts.pair, has_r2)
        } else {
            let mut all = Ok(Vec::new());
            for l in &lanes {
                let name = match l {
                    Some(l) => format!("{sid}_L{l:03}"),
                    None => sid.clone(),
                };
                all = all.and_then(|mut v: Vec<_>| {
                    v.extend(group(name, reads(*l, 1), reads(*l, 2), opts.pair, has_r2)?);
                    Ok(v)
                });
            }
            all
        };
        match made {
            Ok(v) => specs.extend(v.into_iter().map(|(n, r)| spec(run, &id, n, r, files))),
            Err(why) => return waiting(why),
        }
    }
    for p in singles {
        let name = mgds_api::sequence_file_stem(&p.file_name().unwrap_or_default().to_string_lossy())
            .unwrap_or("sample")
            .to_string();
        specs.push(spec(run, &id, name, Source::Single(p), files));
    }
    let mut r = report(run, kind, &id, RunState::Complete);
    r.samples = specs.iter().map(|s| s.key.clone()).collect();
    (r, specs)
}

/// The samples of one Illumina sample (or lane of it): one interleaved sample when pairing,
/// else one per read (named `_R1`, `_R2` when the run has read 2).
fn group(
    name: String,
    r1: Vec<PathBuf>,
    r2: Vec<PathBuf>,
    pair: bool,
    has_r2: bool,
) -> Result<Vec<(String, Source)>, String> {
    if pair && !r2.is_empty() {
        if r1.len() != r2.len() {
            return Err(format!("sample {name} has {} R1 file(s) but {} R2 file(s)", r1.len(), r2.len()));
        }
        return Ok(vec![(name, Source::Interleave(r1.into_iter().zip(r2).collect()))]);
    }
    let mut out = Vec::new();
    for (suffix, files) in [("_R1", r1), ("_R2", r2)] {
        if files.is_empty() {
            continue;
        }
        let n = if pair || !has_r2 { name.clone() } else { format!("{name}{suffix}") };
        let recipe = if files.len() == 1 { Source::Single(files[0].clone()) } else { Source::Concat(files) };
        out.push((n, recipe));
    }
    Ok(out)
}

/// Orders batch files as MinKNOW numbers them (`..._2` before `..._10`).
fn natural_key(p: &Path) -> Vec<(String, u64)> {
    let name = p.to_string_lossy();
    let mut out = Vec::new();
    let mut text = String::new();
    let mut num: Option<u64> = None;
    for c in name.chars() {
        if let Some(d) = c.to_digit(10) {
            num = Some(num.unwrap_or(0).saturating_mul(10).saturating_add(u64::from(d)));
        } else {
            if let Some(n) = num.take() {
                out.push((std::mem::take(&mut text), n));
            }
            text.push(c);
        }
    }
    out.push((text, num.unwrap_or(0)));
    out
}

fn plan_nanopore(
    cfg: &FolderConfig,
    run: &Path,
    seqs: &[PathBuf],
    files: &BTreeMap<PathBuf, View>,
) -> (RunReport, Vec<Spec>) {
    let kind = RunKind::Nanopore;
    let summary_path = files
        .keys()
        .find(|p| {
            p.parent() == Some(run)
                && p.file_name().is_some_and(|f| {
                    let f = f.to_string_lossy();
                    f.starts_with("final_summary_") && f.ends_with(".txt")
                })
        })
        .cloned();
    let summary = match summary_path.as_ref().map(|p| read_settled(files, p)) {
        Some(Some(Ok(t))) => Some(nanopore::final_summary(&t)),
        Some(Some(Err(()))) => None,
        _ => None,
    };
    let id = summary.as_ref().and_then(|s| s.protocol_run_id.clone()).unwrap_or_else(|| dir_name(run));
    let base = summary.as_ref().and_then(|s| s.sample_id.clone()).unwrap_or_else(|| dir_name(run));
    let rel = |p: &Path| -> Vec<String> {
        p.strip_prefix(run).unwrap_or(p).components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect()
    };
    let skipped = |r: &[String]| r.iter().any(|c| matches!(c.as_str(), "tmp" | "queued_reads"));
    // Every FASTQ file MinKNOW put in its final folders (pass and fail), to check the count.
    let found = seqs
        .iter()
        .filter(|p| {
            let r = rel(p);
            r.len() >= 2 && r[0].starts_with("fastq_") && !skipped(&r)
        })
        .count();
    let pass: Vec<&PathBuf> = seqs
        .iter()
        .filter(|p| {
            let r = rel(p);
            r.first().is_some_and(|c| c == "fastq_pass")
                && !r[..r.len() - 1].iter().any(|c| nanopore::SKIPPED_DIRS.contains(&c.as_str()))
        })
        .collect();
    let settled = |p: &PathBuf| files.get(p).is_some_and(|v| v.settled);
    let mut specs = Vec::new();
    let done = match &summary {
        None => Err(if summary_path.is_some() {
            "reading the final summary".to_string()
        } else {
            "sequencing (no final_summary_*.txt yet)".to_string()
        }),
        Some(s) => match s.fastq_files {
            Some(n) if (found as u64) < n => {
                Err(format!("the final summary lists {n} FASTQ files; {found} found so far"))
            }
            _ if pass.iter().any(|p| !settled(p)) => Err("FASTQ files still being written".to_string()),
            _ => Ok(()),
        },
    };
    match cfg.nanopore {
        NanoporeGrouping::PerFile => {
            for p in pass.iter().filter(|p| settled(p)) {
                let name = mgds_api::sequence_file_stem(&p.file_name().unwrap_or_default().to_string_lossy())
                    .unwrap_or("reads")
                    .to_string();
                specs.push(spec(run, &id, name, Source::Single((*p).clone()), files));
            }
        }
        NanoporeGrouping::PerBarcode => {
            if done.is_ok() {
                let mut groups: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
                for p in &pass {
                    let r = rel(p);
                    let name = if r.len() > 2 { format!("{base}_{}", r[1]) } else { base.clone() };
                    groups.entry(name).or_default().push((*p).clone());
                }
                for (name, mut fs) in groups {
                    fs.sort_by_key(|p| natural_key(p));
                    let recipe = if fs.len() == 1 { Source::Single(fs.remove(0)) } else { Source::Concat(fs) };
                    specs.push(spec(run, &id, name, recipe, files));
                }
            }
        }
    }
    let state = match done {
        Ok(()) => RunState::Complete,
        Err(why) => RunState::Waiting(why),
    };
    let mut r = report(run, kind, &id, state);
    if r.state == RunState::Complete {
        r.samples = specs.iter().map(|s| s.key.clone()).collect();
    }
    (r, specs)
}
