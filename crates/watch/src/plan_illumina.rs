//! Planning one Illumina run folder: complete once the instrument says so, the newest on-board
//! analysis (if any) finished and every sample of the sample sheet has its FASTQ files, all
//! settled; its samples are the sheet's, per lane unless lanes are joined, R1 and R2
//! interleaved or apart.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use mgds_upload::Source;

use crate::config::FolderConfig;
use crate::illumina;
use crate::spec::{RunKind, RunReport, RunState, Spec, View, dir_name, read_settled, report, run_spec};

/// The state of the Illumina run folder `run` and, once it is complete, its samples; `seqs` are
/// the sequence files inside it.
pub(crate) fn plan_run(
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
            Ok(v) => specs.extend(v.into_iter().map(|(n, r)| run_spec(run, &id, n, r, files))),
            Err(why) => return waiting(why),
        }
    }
    for p in singles {
        let name = mgds_api::sequence_file_stem(&p.file_name().unwrap_or_default().to_string_lossy())
            .unwrap_or("sample")
            .to_string();
        specs.push(run_spec(run, &id, name, Source::Single(p), files));
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
