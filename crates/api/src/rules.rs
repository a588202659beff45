//! Validation rules of API v1 that clients and the service both apply.

use std::fmt;

/// Largest file a standard upload accepts: 20 GB (decimal gigabytes, as the spec writes it).
pub const MAX_UPLOAD_BYTES: u64 = 20_000_000_000;
/// Longest run description.
pub const MAX_RUN_DESCRIPTION_CHARS: usize = 250;
/// Longest `error_msg` of an analysis.
pub const MAX_ERROR_MSG_CHARS: usize = 255;
/// Longest tag name.
pub const MAX_TAG_NAME_CHARS: usize = 30;
/// Longest `external_sample_id`.
pub const MAX_EXTERNAL_SAMPLE_ID_CHARS: usize = 60;
/// Most tags on one sample, and in one request (a lab tags a sample with a few dozen at most).
/// A sample record then stays small: its tags are at most about 9 KB of JSON.
pub const MAX_TAGS_PER_SAMPLE: usize = 200;
/// Most keys in a metadata record's `custom` object.
pub const MAX_CUSTOM_METADATA_KEYS: usize = 100;
/// Longest key in a metadata record's `custom` object.
pub const MAX_CUSTOM_METADATA_KEY_CHARS: usize = 100;
/// Largest `custom` object of a metadata record, as JSON.
pub const MAX_CUSTOM_METADATA_BYTES: usize = 16 * 1024;
/// Longest metadata `description`.
pub const MAX_DESCRIPTION_CHARS: usize = 2_000;

/// Sequencing platforms the metadata `platform` field accepts.
pub const PLATFORMS: [&str; 28] = [
    "Illumina Genome Analyzer II",
    "Illumina HiSeq",
    "Illumina HiSeq 2000",
    "Illumina HiSeq 2500",
    "Illumina HiSeq 3000",
    "Illumina HiSeq 4000",
    "Illumina HiSeq X",
    "Illumina iSeq 100",
    "Illumina MiniSeq",
    "Illumina MiSeq",
    "Illumina NextSeq 500",
    "Illumina NextSeq 550",
    "Illumina NovaSeq 6000",
    "PacBio",
    "PacBio Sequel",
    "PacBio Sequel II System",
    "PacBio RS II",
    "Oxford Nanopore MinION",
    "Oxford Nanopore GridION X5",
    "Oxford Nanopore PromethION",
    "Ion GeneStudio S5",
    "Ion PGM",
    "Ion Proton",
    "Ion Torrent",
    "SOLiD",
    "454 sequencing",
    "Sanger",
    "Other",
];
/// Values of the metadata `library_type` field.
pub const LIBRARY_TYPES: [&str; 3] = ["WGS", "Targeted/16S", "Other"];
/// Values of the metadata `sample_type` field.
pub const SAMPLE_TYPES: [&str; 3] = ["Isolate", "Metagenomic", "Other"];

/// Sequence file extensions a sample upload accepts (before an optional `.gz`/`.gzip`).
pub const SEQUENCE_EXTENSIONS: [&str; 8] = [".fastq", ".fq", ".fasta", ".fa", ".fna", ".fas", ".ffn", ".faa"];

/// Compression suffixes a sequence file's name may end in. Uploads take `.gz` and `.gzip`; the
/// others are recognised so that such files are found, and then refused by their content with a
/// message saying what to do, rather than passed over without a word.
pub const COMPRESSION_SUFFIXES: [&str; 5] = [".gz", ".gzip", ".bz2", ".xz", ".zst"];

/// The stem of a sequence file's name: the name without its FASTA/FASTQ extension (one of
/// [`SEQUENCE_EXTENSIONS`]) and an optional compression suffix (one of [`COMPRESSION_SUFFIXES`]),
/// compared without regard to case. `None` for any other name (`SampleSheet.csv`,
/// `reads.fastq.md5`, `.fastq`).
pub fn sequence_file_stem(name: &str) -> Option<&str> {
    let ends_with = |s: &str, suffix: &str| {
        s.len() >= suffix.len()
            && s.is_char_boundary(s.len() - suffix.len())
            && s[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
    };
    let base = COMPRESSION_SUFFIXES.iter().find(|c| ends_with(name, c)).map_or(name, |c| &name[..name.len() - c.len()]);
    SEQUENCE_EXTENSIONS
        .iter()
        .find(|ext| ends_with(base, ext) && base.len() > ext.len())
        .map(|ext| &base[..base.len() - ext.len()])
}

/// Why a file name was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilenameError {
    /// The name is empty (or only spaces).
    Empty,
    /// The name has characters other than letters, digits, `-`, `_` and `.`.
    BadCharacters {
        /// The offending characters, each once, in order of appearance.
        chars: Vec<char>,
    },
    /// A sample file name without a FASTA/FASTQ extension.
    NotSequenceFile {
        /// The name as given.
        name: String,
    },
    /// Longer than 255 bytes.
    TooLong,
}

impl fmt::Display for FilenameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FilenameError::Empty => write!(f, "the file name is empty"),
            FilenameError::BadCharacters { chars } => {
                let list: Vec<String> = chars.iter().map(|c| format!("{c:?}")).collect();
                write!(
                    f,
                    "the file name contains {} which {} not allowed; use only letters, digits, \
                     dashes, underscores and periods (spaces become underscores)",
                    list.join(", "),
                    if chars.len() == 1 { "is" } else { "are" }
                )
            }
            FilenameError::NotSequenceFile { name } => write!(
                f,
                "{name:?} is not a FASTA or FASTQ file name; it must end in one of {} \
                 (optionally followed by .gz or .gzip)",
                SEQUENCE_EXTENSIONS.join(", ")
            ),
            FilenameError::TooLong => write!(f, "the file name is longer than 255 bytes"),
        }
    }
}

impl std::error::Error for FilenameError {}

/// Cleans a document file name: spaces become underscores; only ASCII letters, digits, `-`, `_`
/// and `.` are allowed. Returns the name to store.
pub fn clean_filename(name: &str) -> Result<String, FilenameError> {
    let trimmed = name.trim();
    if trimmed.is_empty() {
        return Err(FilenameError::Empty);
    }
    let cleaned = trimmed.replace(' ', "_");
    let mut bad: Vec<char> = Vec::new();
    for c in cleaned.chars() {
        let ok = c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
        if !ok && !bad.contains(&c) {
            bad.push(c);
        }
    }
    if !bad.is_empty() {
        return Err(FilenameError::BadCharacters { chars: bad });
    }
    if cleaned.len() > 255 {
        return Err(FilenameError::TooLong);
    }
    Ok(cleaned)
}

/// Cleans a sample file name: [`clean_filename`], and the name must end in a FASTA/FASTQ
/// extension, optionally followed by `.gz` or `.gzip` (case-insensitive).
pub fn clean_sample_filename(name: &str) -> Result<String, FilenameError> {
    let cleaned = clean_filename(name)?;
    let lower = cleaned.to_ascii_lowercase();
    let stem = lower.strip_suffix(".gz").or_else(|| lower.strip_suffix(".gzip")).unwrap_or(&lower);
    let ok = SEQUENCE_EXTENSIONS.iter().any(|ext| stem.ends_with(ext) && stem.len() > ext.len());
    if !ok {
        return Err(FilenameError::NotSequenceFile { name: name.to_string() });
    }
    Ok(cleaned)
}

/// Checks a project short name: 3 to 15 of `a-zA-Z0-9_-`. Returns a message on failure.
pub fn check_project_name(name: &str) -> Result<(), String> {
    let n = name.chars().count();
    if !(3..=15).contains(&n) {
        return Err(format!("project_name must be 3 to 15 characters long; {name:?} has {n}"));
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-')) {
        return Err(format!(
            "project_name may only contain letters, digits, underscores and dashes; {c:?} is not allowed"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_filenames() {
        assert_eq!(clean_sample_filename("gut 1_R1.fastq.gz").unwrap(), "gut_1_R1.fastq.gz");
        assert_eq!(clean_sample_filename("a.FQ.GZIP").unwrap(), "a.FQ.GZIP");
        assert_eq!(clean_sample_filename("contigs.fna").unwrap(), "contigs.fna");
        assert!(matches!(clean_sample_filename("report.pdf"), Err(FilenameError::NotSequenceFile { .. })));
        assert!(matches!(clean_sample_filename(".fastq"), Err(FilenameError::NotSequenceFile { .. })));
        assert!(matches!(clean_sample_filename("   "), Err(FilenameError::Empty)));
        let err = clean_sample_filename("gut#1(a).fastq").unwrap_err();
        assert_eq!(err, FilenameError::BadCharacters { chars: vec!['#', '(', ')'] });
        assert!(err.to_string().contains("'#', '(', ')'"));
    }

    #[test]
    fn sequence_file_stems() {
        assert_eq!(sequence_file_stem("S1_R1_001.fastq.gz"), Some("S1_R1_001"));
        assert_eq!(sequence_file_stem("A.FQ.GZ"), Some("A"));
        assert_eq!(sequence_file_stem("c.fasta.bz2"), Some("c"));
        assert_eq!(sequence_file_stem("d.fna"), Some("d"));
        for n in ["SampleSheet.csv", "a.fastq.md5", "notes.txt", ".fastq", ".fq.gz", "é"] {
            assert_eq!(sequence_file_stem(n), None, "{n}");
        }
    }

    #[test]
    fn project_names() {
        assert!(check_project_name("gut_study-1").is_ok());
        assert!(check_project_name("ab").is_err());
        assert!(check_project_name("a_very_long_name_x").is_err());
        assert!(check_project_name("gut study").unwrap_err().contains("' '"));
    }

    #[test]
    fn batch_status_moves_forward_only() {
        use crate::BatchStatus::*;
        assert!(Registered.can_move_to(ShippedToLab));
        assert!(Registered.can_move_to(Sequencing));
        assert!(!Sequencing.can_move_to(Registered));
        assert!(Sequencing.can_move_to(Canceled));
        assert!(!Done.can_move_to(Canceled));
        assert!(!Canceled.can_move_to(Registered));
        assert!(!Extracting.can_move_to(Extracting));
    }
}
