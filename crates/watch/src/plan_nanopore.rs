//! Planning one MinKNOW run folder: complete once its final summary is there and as many FASTQ
//! files as it lists are found, those of `fastq_pass` settled; its samples are one per barcode
//! (or per file, made as they settle).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mgds_upload::Source;

use crate::config::{FolderConfig, NanoporeGrouping};
use crate::nanopore;
use crate::spec::{RunKind, RunReport, RunState, Spec, View, dir_name, read_settled, report, run_spec};

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

/// The state of the MinKNOW run folder `run` and its samples ready to be made; `seqs` are the
/// sequence files inside it.
pub(crate) fn plan_run(
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
                specs.push(run_spec(run, &id, name, Source::Single((*p).clone()), files));
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
                    specs.push(run_spec(run, &id, name, recipe, files));
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
