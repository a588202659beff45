//! Which files become which samples: folders searched for sequence files, and read pairs found.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use mgds_formats::FileGroup;

use crate::Source;

/// A path given to upload that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    /// The path does not exist.
    #[error("{} does not exist; check the path", .path.display())]
    Missing {
        /// The path as given.
        path: PathBuf,
    },
    /// A folder could not be read.
    #[error("cannot read the folder {}; check that you may read it", .path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
}

/// The files behind the given paths: a file as it is (its content is checked later, whatever
/// its name); a folder searched through its subfolders for files named like sequence files
/// (hidden entries skipped, symbolic links to folders not followed), in path order. Each file
/// once, in the order given.
pub fn sequence_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, FilesError> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|_| FilesError::Missing { path: p.clone() })?;
        if meta.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found)?;
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    let mut seen = HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), FilesError> {
    let entries = std::fs::read_dir(dir).map_err(|source| FilesError::Folder { path: dir.to_path_buf(), source })?;
    for entry in entries {
        let entry = entry.map_err(|source| FilesError::Folder { path: dir.to_path_buf(), source })?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        // The entry's own type: a link to a folder is not followed (it could lead back up).
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            walk(&path, out)?;
        } else if mgds_api::sequence_file_stem(&name).is_some() && path.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

/// The read pairs among `files` (read 1, read 2), found by their names (`_R1_`/`_R2_`,
/// `_1`/`_2`) or, failing that, by their first reads' headers.
pub fn find_pairs(files: &[PathBuf]) -> Vec<(PathBuf, PathBuf)> {
    mgds_formats::group_paths(files)
        .into_iter()
        .filter_map(|g| match g {
            FileGroup::Pair { r1, r2, .. } => Some((r1, r2)),
            FileGroup::Single { .. } => None,
        })
        .collect()
}

/// One sample per [`Source`], from a list of files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The samples to make, in the order of their first file.
    pub sources: Vec<Source>,
    /// Pairs that were found but are sent as two samples (joining was not asked for): worth a
    /// word to the user.
    pub unjoined_pairs: Vec<(PathBuf, PathBuf)>,
}

/// Groups `files` into samples: each read pair becomes one interleaved sample when
/// `join_pairs`, two samples otherwise; every other file is a sample of its own.
pub fn plan(files: &[PathBuf], join_pairs: bool) -> Plan {
    let mut plan = Plan::default();
    for group in mgds_formats::group_paths(files) {
        match group {
            FileGroup::Pair { r1, r2, .. } if join_pairs => plan.sources.push(Source::Interleave(vec![(r1, r2)])),
            FileGroup::Pair { r1, r2, .. } => {
                plan.sources.push(Source::Single(r1.clone()));
                plan.sources.push(Source::Single(r2.clone()));
                plan.unjoined_pairs.push((r1, r2));
            }
            FileGroup::Single { path, .. } => plan.sources.push(Source::Single(path)),
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fastq(dir: &Path, name: &str, mate: u8) -> PathBuf {
        let p = dir.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&p, format!("@r1 {mate}:N:0:1\nACGT\n+\nIIII\n")).unwrap();
        p
    }

    #[test]
    fn folders_give_their_sequence_files_and_given_files_stay() {
        let dir = tempfile::tempdir().unwrap();
        let a = fastq(dir.path(), "run/s_R1_001.fastq", 1);
        let b = fastq(dir.path(), "run/s_R2_001.fastq", 2);
        let c = fastq(dir.path(), "run/deeper/t.fq.gz", 1);
        fastq(dir.path(), "run/.hidden/x.fastq", 1);
        std::fs::write(dir.path().join("run/SampleSheet.csv"), "x").unwrap();
        let report = dir.path().join("report.pdf");
        std::fs::write(&report, "%PDF").unwrap();
        let files = sequence_files(&[dir.path().join("run"), report.clone(), a.clone()]).unwrap();
        assert_eq!(files, vec![c, a, b, report]);
        let missing = sequence_files(&[dir.path().join("nope.fastq")]).unwrap_err();
        assert!(missing.to_string().contains("nope.fastq does not exist"), "{missing}");
    }

    #[test]
    fn pairs_become_one_sample_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let r1 = fastq(dir.path(), "s_R1_001.fastq", 1);
        let r2 = fastq(dir.path(), "s_R2_001.fastq", 2);
        let single = fastq(dir.path(), "other.fastq", 1);
        let files = vec![r1.clone(), r2.clone(), single.clone()];
        assert_eq!(find_pairs(&files), vec![(r1.clone(), r2.clone())]);
        let joined = plan(&files, true);
        assert_eq!(
            joined.sources,
            vec![Source::Interleave(vec![(r1.clone(), r2.clone())]), Source::Single(single.clone())]
        );
        assert!(joined.unjoined_pairs.is_empty());
        let apart = plan(&files, false);
        assert_eq!(apart.sources.len(), 3);
        assert_eq!(apart.unjoined_pairs, vec![(r1, r2)]);
    }
}
