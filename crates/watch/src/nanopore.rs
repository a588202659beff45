//! What MinKNOW's `final_summary_*.txt` says about a finished run.

/// The fields of a final summary the watcher uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FinalSummary {
    /// `sample_id`: the sample name typed into MinKNOW.
    pub sample_id: Option<String>,
    /// `protocol_run_id`: unique per run.
    pub protocol_run_id: Option<String>,
    /// `fastq_files_in_final_dest`: how many FASTQ files MinKNOW wrote (pass and fail).
    pub fastq_files: Option<u64>,
}

/// Parses the `key=value` lines of a final summary.
pub fn final_summary(text: &str) -> FinalSummary {
    let mut s = FinalSummary::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once('=') else { continue };
        let v = v.trim();
        match k.trim() {
            "sample_id" if !v.is_empty() => s.sample_id = Some(v.to_string()),
            "protocol_run_id" if !v.is_empty() => s.protocol_run_id = Some(v.to_string()),
            "fastq_files_in_final_dest" => s.fastq_files = v.parse().ok(),
            _ => {}
        }
    }
    s
}

/// Folders of a MinKNOW output that hold no reads to upload.
pub const SKIPPED_DIRS: [&str; 4] = ["fastq_fail", "tmp", "queued_reads", "unclassified"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_fields_used() {
        let s = final_summary(
            "instrument=MN1\nsample_id=iso7\nprotocol_run_id=0a1b\nfastq_files_in_final_dest=12\nfast5_files_in_final_dest=0\n",
        );
        assert_eq!(
            s,
            FinalSummary {
                sample_id: Some("iso7".into()),
                protocol_run_id: Some("0a1b".into()),
                fastq_files: Some(12)
            }
        );
    }
}
