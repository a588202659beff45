//! Paired-end files: recognising pairs, checking them, interleaving them into one file.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use crate::compression::{open, open_counted};
use crate::error::Error;
use crate::fastx::{Mate, Reader, Record};
use crate::output::{Output, OutputCompression, RecordWriter};
use crate::validate::{Summary, SummaryBuilder};

/// File-name patterns of a pair, most specific first: the first that appears in a name decides.
const NAME_PATTERNS: [(&str, &str); 3] = [("_R1_", "_R2_"), ("_R1.", "_R2."), ("_1.", "_2.")];

/// What a file name says about which read of a pair the file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameMate {
    /// Read 1 or read 2.
    pub mate: Mate,
    /// The pattern found (`_R1_`, `_R1.` or `_1.`, or their read-2 forms).
    pub pattern: &'static str,
    /// The name with the mate token blanked out: both files of a pair have the same key.
    pub key: String,
    /// The Illumina lane (`_L001` is 1), when the name has one.
    pub lane: Option<u16>,
}

/// Reads a file name (without its folder) for a mate token: `_R1_`/`_R2_`
/// (`S1_L001_R1_001.fastq.gz`), `_R1.`/`_R2.` (`S1_R1.fastq`), `_1.`/`_2.` (`SRR123_1.fastq.gz`).
/// When a name holds more than one token of a pattern, the last one counts.
pub fn mate_from_file_name(name: &str) -> Option<NameMate> {
    for (index, (t1, t2)) in NAME_PATTERNS.iter().enumerate() {
        let found = match (name.rfind(t1), name.rfind(t2)) {
            (Some(a), Some(b)) if b > a => Some((b, Mate::R2, *t2)),
            (Some(a), _) => Some((a, Mate::R1, *t1)),
            (None, Some(b)) => Some((b, Mate::R2, *t2)),
            (None, None) => None,
        };
        if let Some((at, mate, token)) = found {
            // The key keeps which pattern matched, so `x_R1_.fq` never pairs with `x_2.fq`.
            let key = format!("{}\0{index}\0{}", &name[..at], &name[at + token.len()..]);
            return Some(NameMate { mate, pattern: token, key, lane: lane(name) });
        }
    }
    None
}

/// The lane number of an Illumina name (`_L001` followed by `_` or `.`).
fn lane(name: &str) -> Option<u16> {
    let bytes = name.as_bytes();
    name.match_indices("_L").find_map(|(i, _)| {
        let digits = bytes.get(i + 2..i + 5)?;
        let after = bytes.get(i + 5).copied();
        let ok = digits.iter().all(u8::is_ascii_digit) && matches!(after, Some(b'_' | b'.') | None);
        ok.then(|| digits.iter().fold(0u16, |n, d| n * 10 + u16::from(d - b'0')))
    })
}

/// Why two files were taken as a pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairReason {
    /// Their names differ only in a mate token.
    FileName {
        /// The read-1 token (`_R1_`, `_R1.` or `_1.`).
        pattern: &'static str,
    },
    /// Their first reads have the same name, marked read 1 in one file and read 2 in the other.
    ReadHeaders {
        /// The shared read name.
        read_id: String,
    },
}

impl fmt::Display for PairReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PairReason::FileName { pattern } => {
                let other = NAME_PATTERNS.iter().find(|(a, _)| a == pattern).map_or("", |(_, b)| b);
                write!(f, "the file names differ only in `{pattern}` / `{other}`")
            }
            PairReason::ReadHeaders { read_id } => {
                write!(f, "the first read of both files is `{read_id}`, marked read 1 in one and read 2 in the other")
            }
        }
    }
}

/// Why a file was left on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SingleReason {
    /// Neither its name nor its first read says it is one read of a pair.
    NotPaired,
    /// Its name says read 1 or 2, but no file with the mate's name is in the list.
    MateNotFound,
    /// More than one file could be its mate.
    Ambiguous,
}

impl fmt::Display for SingleReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SingleReason::NotPaired => "neither its name nor its reads mark it as one file of a pair",
            SingleReason::MateNotFound => {
                "its name marks it as one file of a pair, but its mate file is not among the files given"
            }
            SingleReason::Ambiguous => "more than one file could be its mate",
        })
    }
}

/// A group of input files: one sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileGroup {
    /// Two files holding read 1 and read 2 of the same reads.
    Pair {
        /// The read-1 file.
        r1: PathBuf,
        /// The read-2 file.
        r2: PathBuf,
        /// Why they were paired.
        reason: PairReason,
        /// The Illumina lane, when the names have one.
        lane: Option<u16>,
    },
    /// A file on its own (single-end, interleaved, FASTA, or a pair file without its mate).
    Single {
        /// The file.
        path: PathBuf,
        /// Why it was not paired.
        reason: SingleReason,
    },
}

/// Groups files into pairs and singles, in the order the files were given (a pair where its
/// first file was).
///
/// Names are tried first (see [`mate_from_file_name`]; the two files must be in the same folder
/// and agree on everything but the mate token, lane included). Files left over are paired by
/// their first read when exactly two files in one folder start with the same read name, marked
/// read 1 and read 2 (Illumina `1:N:0` / `2:N:0` comments or `/1` / `/2` suffixes); only these
/// files are opened, and one that cannot be read stays single.
pub fn group_paths<P: AsRef<Path>>(paths: &[P]) -> Vec<FileGroup> {
    group_paths_by(paths, |path| {
        let record = first_record(path)?;
        record.mate().map(|mate| (record.base_id().to_vec(), mate))
    })
}

/// [`group_paths`] for files that are not on this machine (a browser's): `first_read` gives
/// the base id and mate of a file's first read, from what was read of it, or `None`.
pub fn group_paths_by<P: AsRef<Path>>(
    paths: &[P],
    first_read: impl Fn(&Path) -> Option<(Vec<u8>, Mate)>,
) -> Vec<FileGroup> {
    let paths: Vec<&Path> = paths.iter().map(AsRef::as_ref).collect();
    let mut partner: Vec<Option<Partner>> = vec![None; paths.len()];
    let mut reason = vec![SingleReason::NotPaired; paths.len()];

    // By name.
    let mut by_key: HashMap<(&Path, String), [Vec<usize>; 2]> = HashMap::new();
    let mut name_mates = Vec::with_capacity(paths.len());
    for (i, path) in paths.iter().enumerate() {
        let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        let nm = mate_from_file_name(&name);
        if let Some(nm) = &nm {
            let slot = usize::from(nm.mate == Mate::R2);
            by_key.entry((parent(path), nm.key.clone())).or_default()[slot].push(i);
        }
        name_mates.push(nm);
    }
    for [ones, twos] in by_key.values() {
        match (ones.as_slice(), twos.as_slice()) {
            (&[a], &[b]) => {
                let nm = name_mates[a].as_ref();
                let pattern = nm.map_or("", |nm| nm.pattern);
                let lane = nm.and_then(|nm| nm.lane);
                partner[a] = Some((b, Mate::R1, PairReason::FileName { pattern }, lane));
                partner[b] = Some((a, Mate::R2, PairReason::FileName { pattern }, lane));
            }
            (ones, twos) => {
                let why = if ones.is_empty() || twos.is_empty() {
                    SingleReason::MateNotFound
                } else {
                    SingleReason::Ambiguous
                };
                for &i in ones.iter().chain(twos) {
                    reason[i] = why.clone();
                }
            }
        }
    }

    // By the first read's header, among the files still single.
    // (folder, first read's base id) -> (file index, mate) of the files starting with that read.
    type ByRead<'p> = HashMap<(&'p Path, Vec<u8>), Vec<(usize, Mate)>>;
    let mut by_read = ByRead::new();
    for (i, path) in paths.iter().enumerate() {
        if partner[i].is_some() {
            continue;
        }
        if let Some((id, mate)) = first_read(path) {
            by_read.entry((parent(path), id)).or_default().push((i, mate));
        }
    }
    for ((_, id), files) in by_read {
        if let [(a, ma), (b, mb)] = files[..]
            && ma != mb
        {
            let (one, two) = if ma == Mate::R1 { (a, b) } else { (b, a) };
            let read_id = String::from_utf8_lossy(&id).into_owned();
            partner[one] = Some((two, Mate::R1, PairReason::ReadHeaders { read_id: read_id.clone() }, None));
            partner[two] = Some((one, Mate::R2, PairReason::ReadHeaders { read_id }, None));
        }
    }

    let mut groups = Vec::new();
    for (i, path) in paths.iter().enumerate() {
        match &partner[i] {
            None => groups.push(FileGroup::Single { path: path.to_path_buf(), reason: reason[i].clone() }),
            // A pair is listed once, where its first file is.
            Some((j, _, _, _)) if *j < i => {}
            Some((j, mate, why, lane)) => {
                let (r1, r2) = if *mate == Mate::R1 { (i, *j) } else { (*j, i) };
                groups.push(FileGroup::Pair {
                    r1: paths[r1].to_path_buf(),
                    r2: paths[r2].to_path_buf(),
                    reason: why.clone(),
                    lane: *lane,
                });
            }
        }
    }
    groups
}

/// A file's partner: its index, which mate this file is, why, and the lane.
type Partner = (usize, Mate, PairReason, Option<u16>);

fn parent(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new(""))
}

fn first_record(path: &Path) -> Option<Record> {
    let (_, inner) = open(path).ok()?;
    let mut record = Record::default();
    match Reader::new(inner).read_record(&mut record) {
        Ok(n) if n > 0 => Some(record),
        _ => None,
    }
}

/// The result of streaming both files of a pair in lockstep.
#[derive(Debug, Clone, PartialEq)]
pub struct PairSummary {
    /// The read-1 file.
    pub r1: Summary,
    /// The read-2 file.
    pub r2: Summary,
}

/// Reads both files of a pair once, in lockstep, checking that every record is valid, that
/// record *n* has the same read name in both files (ignoring `/1` `/2` and comments) and that
/// both files hold the same number of records.
pub fn check_pair(r1: impl AsRef<Path>, r2: impl AsRef<Path>) -> Result<PairSummary, Error> {
    walk_pair::<io::Sink>(r1.as_ref(), r2.as_ref(), None)
}

/// Writes a pair as one interleaved file (read 1, then its read 2, and so on) so the pair can
/// be one sample, with the same checks as [`check_pair`]. Streamed: memory stays flat. Records
/// are copied byte-for-byte (a line ending is added after a last record that lacks one). The
/// output appears only once complete.
pub fn interleave(
    r1: impl AsRef<Path>,
    r2: impl AsRef<Path>,
    out: impl AsRef<Path>,
    compression: OutputCompression,
) -> Result<PairSummary, Error> {
    interleave_limited(r1, r2, out, compression, usize::MAX)
}

/// [`interleave`], refusing a record longer than `max_record` bases (the record limit of the
/// service's engines, so that one enormous record cannot take a worker's memory).
pub fn interleave_limited(
    r1: impl AsRef<Path>,
    r2: impl AsRef<Path>,
    out: impl AsRef<Path>,
    compression: OutputCompression,
    max_record: usize,
) -> Result<PairSummary, Error> {
    let (r1, r2, out) = (r1.as_ref(), r2.as_ref(), out.as_ref());
    for input in [r1, r2] {
        if same_file(input, out) {
            return Err(Error::OutputIsInput { path: out.to_owned() });
        }
    }
    let mut output = Output::create(out, compression)?;
    let summary = walk_pair_limited(r1, r2, Some(output.records()), None, max_record)?;
    output.finish()?;
    Ok(summary)
}

/// [`interleave`] into any writer (a compressor, a pipe into an upload): the records of the
/// pair, read 1 then its read 2, with the checks of [`check_pair`]. `out_name` names the
/// destination in errors; `consumed`, when given, counts the bytes read from both files (for
/// progress). On an error, what was written so far is not a whole interleaved file: the caller
/// discards it.
pub fn interleave_into<W: Write>(
    r1: impl AsRef<Path>,
    r2: impl AsRef<Path>,
    out: W,
    out_name: &Path,
    consumed: Option<Arc<AtomicU64>>,
) -> Result<PairSummary, Error> {
    let mut records = RecordWriter::new(out, out_name);
    walk_pair_counted(r1.as_ref(), r2.as_ref(), Some(&mut records), consumed)
}

/// The file name for a pair interleaved into one sample: the R1 file's name without its mate
/// marker and extension, with `_interleaved.fastq.gz` (`S1_L001_R1_001.fastq.gz` gives
/// `S1_L001_001_interleaved.fastq.gz`).
pub fn interleaved_name(r1: &Path) -> String {
    let name = r1.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| "reads".into());
    let lower = name.to_ascii_lowercase();
    let cut = [".fastq.gz", ".fq.gz", ".fastq.gzip", ".fq.gzip", ".fastq", ".fq"]
        .iter()
        .find_map(|ext| lower.strip_suffix(ext).map(|stem| stem.len()))
        .unwrap_or(name.len());
    let stem = &name[..cut];
    let stem = ["_R1_", "_R1", "_1"]
        .iter()
        .find_map(|m| {
            stem.rfind(m)
                .map(|i| format!("{}{}{}", &stem[..i], if *m == "_R1_" { "_" } else { "" }, &stem[i + m.len()..]))
        })
        .unwrap_or_else(|| stem.to_string());
    format!("{stem}_interleaved.fastq.gz")
}

/// Whether two paths name the same existing file.
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn walk_pair<W: Write>(r1: &Path, r2: &Path, out: Option<&mut RecordWriter<W>>) -> Result<PairSummary, Error> {
    walk_pair_counted(r1, r2, out, None)
}

/// [`walk_pair`], adding the bytes read from both files to `consumed` when given.
fn walk_pair_counted<W: Write>(
    r1: &Path,
    r2: &Path,
    out: Option<&mut RecordWriter<W>>,
    consumed: Option<Arc<AtomicU64>>,
) -> Result<PairSummary, Error> {
    walk_pair_limited(r1, r2, out, consumed, usize::MAX)
}

/// [`walk_pair_counted`], refusing records longer than `max_record` bases.
fn walk_pair_limited<W: Write>(
    r1: &Path,
    r2: &Path,
    mut out: Option<&mut RecordWriter<W>>,
    consumed: Option<Arc<AtomicU64>>,
    max_record: usize,
) -> Result<PairSummary, Error> {
    let opened = |p: &Path| match &consumed {
        Some(c) => open_counted(p, c.clone()),
        None => open(p),
    };
    let (c1, in1) = opened(r1)?;
    let (c2, in2) = opened(r2)?;
    let (mut a, mut b) =
        (Reader::new(in1).with_max_record_length(max_record), Reader::new(in2).with_max_record_length(max_record));
    let (mut ra, mut rb) = (Record::default(), Record::default());
    let (mut sa, mut sb) = (SummaryBuilder::default(), SummaryBuilder::default());
    loop {
        let na = a.read_record(&mut ra).map_err(|e| Error::reading(r1, c1, a.line_number(), e))?;
        let nb = b.read_record(&mut rb).map_err(|e| Error::reading(r2, c2, b.line_number(), e))?;
        let n = a.record_count();
        match (na, nb) {
            (0, 0) => break,
            (0, _) => {
                return Err(Error::PairLengthMismatch { shorter: r1.to_owned(), longer: r2.to_owned(), records: n });
            }
            (_, 0) => {
                let records = b.record_count();
                return Err(Error::PairLengthMismatch { shorter: r2.to_owned(), longer: r1.to_owned(), records });
            }
            _ => {}
        }
        if n == 1 {
            check_first_mates(r1, &ra, r2, &rb)?;
        }
        check_mate_names(r1, &ra, r2, &rb, n)?;
        sa.add(&ra);
        sb.add(&rb);
        if let Some(out) = out.as_deref_mut() {
            out.write_record(ra.raw())?;
            out.write_record(rb.raw())?;
        }
    }
    match (a.format(), b.format()) {
        (Some(fa), Some(fb)) => Ok(PairSummary { r1: sa.finish(fa, c1), r2: sb.finish(fb, c2) }),
        _ => Err(Error::Empty { path: r1.to_owned() }),
    }
}

/// Checks the first records of a pair: same format, and not read 2 in the read-1 file.
pub(crate) fn check_first_mates(r1: &Path, a: &Record, r2: &Path, b: &Record) -> Result<(), Error> {
    if let (Some(fa), Some(fb)) = (a.format(), b.format())
        && fa != fb
    {
        return Err(Error::MixedFormats { path: r1.to_owned(), format: fa, other: r2.to_owned(), other_format: fb });
    }
    if a.mate() == Some(Mate::R2) && b.mate() == Some(Mate::R1) {
        return Err(Error::NameMismatch {
            path: r1.to_owned(),
            record: 1,
            name: String::from_utf8_lossy(a.header()).into_owned(),
            other: r2.to_owned(),
            other_name: String::from_utf8_lossy(b.header()).into_owned(),
            hint: "the headers say the first file holds read 2 and the second read 1; give the read-1 (R1) file first",
        });
    }
    Ok(())
}

/// Checks that record `n` of both files names the same read.
pub(crate) fn check_mate_names(r1: &Path, a: &Record, r2: &Path, b: &Record, n: u64) -> Result<(), Error> {
    if a.base_id() == b.base_id() {
        return Ok(());
    }
    Err(mate_names_differ(r1, a.id(), r2, b.id(), n))
}

/// The error for record `n` of `r1` and of `r2`, whose ids `a` and `b` name different reads.
pub(crate) fn mate_names_differ(r1: &Path, a: &[u8], r2: &Path, b: &[u8], n: u64) -> Error {
    Error::NameMismatch {
        path: r1.to_owned(),
        record: n,
        name: String::from_utf8_lossy(a).into_owned(),
        other: r2.to_owned(),
        other_name: String::from_utf8_lossy(b).into_owned(),
        hint: "mates must have the same read name; the files are not mates, or their reads are in different orders",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_names_drop_the_mate_marker() {
        assert_eq!(interleaved_name(Path::new("/r/S1_L001_R1_001.fastq.gz")), "S1_L001_001_interleaved.fastq.gz");
        assert_eq!(interleaved_name(Path::new("SRR9_1.fq")), "SRR9_interleaved.fastq.gz");
        assert_eq!(interleaved_name(Path::new("iso_R1.FASTQ.GZ")), "iso_interleaved.fastq.gz");
        assert_eq!(interleaved_name(Path::new("plain.fastq")), "plain_interleaved.fastq.gz");
    }

    #[test]
    fn mate_tokens_in_names() {
        let nm = mate_from_file_name("S1_L001_R1_001.fastq.gz").unwrap();
        assert_eq!((nm.mate, nm.pattern, nm.lane), (Mate::R1, "_R1_", Some(1)));
        let nm2 = mate_from_file_name("S1_L001_R2_001.fastq.gz").unwrap();
        assert_eq!(nm2.mate, Mate::R2);
        assert_eq!(nm.key, nm2.key);
        assert_ne!(nm.key, mate_from_file_name("S1_L002_R2_001.fastq.gz").unwrap().key);
        assert_eq!(mate_from_file_name("x_R2.fq").unwrap().pattern, "_R2.");
        assert_eq!(mate_from_file_name("SRR9_2.fastq.gz").unwrap().mate, Mate::R2);
        assert_eq!(mate_from_file_name("sample.fastq.gz"), None);
        assert_eq!(mate_from_file_name("sample_R3_001.fastq"), None);
        // The last token counts: `_R1_` in the sample name, `_R2_` as the read.
        assert_eq!(mate_from_file_name("a_R1_b_R2_001.fq").unwrap().mate, Mate::R2);
        assert_eq!(lane("S_L12_R1.fq"), None);
        assert_eq!(lane("S_L004.fq"), Some(4));
    }

    #[test]
    fn groups_by_name() {
        let paths = [
            "run/A_S1_L001_R2_001.fastq.gz",
            "run/A_S1_L001_R1_001.fastq.gz",
            "run/B_R1.fq",
            "run/C.fastq",
            "run/D_1.fq",
            "run/D_2.fq",
            "other/A_S1_L001_R1_001.fastq.gz",
        ];
        let groups = group_paths(&paths);
        assert_eq!(
            groups,
            vec![
                FileGroup::Pair {
                    r1: "run/A_S1_L001_R1_001.fastq.gz".into(),
                    r2: "run/A_S1_L001_R2_001.fastq.gz".into(),
                    reason: PairReason::FileName { pattern: "_R1_" },
                    lane: Some(1),
                },
                FileGroup::Single { path: "run/B_R1.fq".into(), reason: SingleReason::MateNotFound },
                FileGroup::Single { path: "run/C.fastq".into(), reason: SingleReason::NotPaired },
                FileGroup::Pair {
                    r1: "run/D_1.fq".into(),
                    r2: "run/D_2.fq".into(),
                    reason: PairReason::FileName { pattern: "_1." },
                    lane: None,
                },
                FileGroup::Single {
                    path: "other/A_S1_L001_R1_001.fastq.gz".into(),
                    reason: SingleReason::MateNotFound
                },
            ]
        );
        let reason = PairReason::FileName { pattern: "_R1_" }.to_string();
        assert_eq!(reason, "the file names differ only in `_R1_` / `_R2_`");
    }

    #[test]
    fn two_candidates_are_ambiguous() {
        let groups = group_paths(&["x_R1.fq", "x_R2.fq", "x_R2.fq"]);
        assert!(groups.iter().all(|g| matches!(g, FileGroup::Single { reason: SingleReason::Ambiguous, .. })));
    }
}
