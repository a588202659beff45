//! What an Illumina run folder says about itself: `RunInfo.xml` (the run id),
//! `RunCompletionStatus.xml` (how it ended), `SampleSheet.csv` v1 and v2 (the samples) and the
//! names bcl2fastq / BCL Convert give FASTQ files.
//!
//! The XML files are read with a few string searches rather than an XML parser: only one
//! attribute and one element are needed, and the instruments write them in a fixed form.

/// The run id from `RunInfo.xml` (`<Run Id="...">`).
pub fn run_id(run_info: &str) -> Option<String> {
    let at = run_info.find("<Run ")?;
    attribute(&run_info[at..], "Id")
}

fn attribute(tag: &str, name: &str) -> Option<String> {
    let end = tag.find('>')?;
    let tag = &tag[..end];
    let key = format!("{name}=\"");
    let start = tag.find(&key)? + key.len();
    let len = tag[start..].find('"')?;
    Some(tag[start..start + len].to_string())
}

/// The text of the first `<name>` element.
fn element(xml: &str, name: &str) -> Option<String> {
    let open = format!("<{name}>");
    let start = xml.find(&open)? + open.len();
    let len = xml[start..].find("</")?;
    Some(xml[start..start + len].trim().to_string())
}

/// How `RunCompletionStatus.xml` says the run ended: `Ok(())` for `CompletedAsPlanned`,
/// otherwise the status and the instrument's message.
pub fn completion_status(xml: &str) -> Result<(), String> {
    match element(xml, "CompletionStatus") {
        Some(s) if s == "CompletedAsPlanned" => Ok(()),
        Some(s) => {
            let msg = element(xml, "ErrorDescription").or_else(|| element(xml, "Message")).filter(|m| !m.is_empty());
            Err(match msg {
                Some(m) => format!("{s}: {m}"),
                None => s,
            })
        }
        None => Err("RunCompletionStatus.xml has no CompletionStatus".into()),
    }
}

/// One sample of a sample sheet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SheetSample {
    /// `Sample_ID`.
    pub id: String,
    /// `Sample_Name` (v1), if given.
    pub name: Option<String>,
}

/// The samples of a sample sheet (v1 `[Data]` or v2 `[BCLConvert_Data]`), once each, in
/// order of first appearance: the order that gives them their `S` numbers in file names.
pub fn sample_sheet(text: &str) -> Vec<SheetSample> {
    let mut out: Vec<SheetSample> = Vec::new();
    let mut in_data = false;
    let mut header: Option<Vec<String>> = None;
    for line in text.lines() {
        let line = line.trim_start_matches('\u{feff}').trim_end_matches('\r');
        let first = line.split(',').next().unwrap_or("").trim();
        if first.starts_with('[') {
            let section = first.trim_matches(|c| c == '[' || c == ']').to_ascii_lowercase();
            in_data = section == "data" || section == "bclconvert_data";
            header = None;
            continue;
        }
        if !in_data || line.split(',').all(|c| c.trim().is_empty()) {
            continue;
        }
        let cells: Vec<String> = line.split(',').map(|c| c.trim().to_string()).collect();
        let Some(h) = &header else {
            header = Some(cells);
            continue;
        };
        let col = |name: &str| h.iter().position(|c| c.eq_ignore_ascii_case(name)).and_then(|i| cells.get(i));
        let Some(id) = col("Sample_ID").filter(|s| !s.is_empty()).cloned() else { continue };
        if out.iter().any(|s| s.id == id) {
            continue;
        }
        let name = col("Sample_Name").filter(|s| !s.is_empty()).cloned();
        out.push(SheetSample { id, name });
    }
    out
}

/// What a bcl2fastq / BCL Convert FASTQ file name says:
/// `{sample}_S{n}[_L{lane}]_{R|I}{read}_001.fastq.gz`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FastqName {
    /// The sample part (`Sample_Name` or `Sample_ID`).
    pub sample: String,
    /// The `S` number (0 for `Undetermined`).
    pub number: u32,
    /// The lane, if the file is split by lane.
    pub lane: Option<u32>,
    /// 1 or 2 for reads; index reads are not sample data and are not parsed.
    pub read: u8,
}

/// Parses a bcl2fastq / BCL Convert file name; `None` for other names and index reads.
pub fn fastq_name(file_name: &str) -> Option<FastqName> {
    let stem = mgds_api::sequence_file_stem(file_name)?;
    let mut parts: Vec<&str> = stem.split('_').collect();
    if parts.last() == Some(&"001") {
        parts.pop();
    }
    let read = match parts.pop()? {
        "R1" => 1,
        "R2" => 2,
        _ => return None,
    };
    let mut lane = None;
    if let Some(l) = parts.last().and_then(|p| p.strip_prefix('L')).and_then(|n| n.parse::<u32>().ok()) {
        lane = Some(l);
        parts.pop();
    }
    let number = parts.pop()?.strip_prefix('S')?.parse::<u32>().ok()?;
    if parts.is_empty() {
        return None;
    }
    Some(FastqName { sample: parts.join("_"), number, lane, read })
}

/// Whether a file name is an index read's (`..._I1_001.fastq.gz`): not sample data.
pub fn fastq_name_is_index(file_name: &str) -> bool {
    let Some(stem) = mgds_api::sequence_file_stem(file_name) else { return false };
    let stem = stem.strip_suffix("_001").unwrap_or(stem);
    stem.ends_with("_I1") || stem.ends_with("_I2")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_info_and_status() {
        let info = r#"<?xml version="1.0"?><RunInfo Version="2"><Run Id="230101_M00123_0042_000000000-ABCDE" Number="42"><Flowcell>X</Flowcell></Run></RunInfo>"#;
        assert_eq!(run_id(info).as_deref(), Some("230101_M00123_0042_000000000-ABCDE"));
        let ok = "<RunCompletionStatus><CompletionStatus>CompletedAsPlanned</CompletionStatus></RunCompletionStatus>";
        assert_eq!(completion_status(ok), Ok(()));
        let bad = "<RunCompletionStatus><CompletionStatus>ExceptionEndedEarly</CompletionStatus><ErrorDescription>Fluidics failure</ErrorDescription></RunCompletionStatus>";
        assert_eq!(completion_status(bad), Err("ExceptionEndedEarly: Fluidics failure".into()));
    }

    #[test]
    fn sample_sheets_v1_and_v2() {
        let v1 = "[Header]\r\nIEMFileVersion,4\r\n\r\n[Reads]\r\n151\r\n\r\n[Data]\r\nSample_ID,Sample_Name,index\r\nA1,ecoli,ACGT\r\nB2,,TTTT\r\n";
        assert_eq!(
            sample_sheet(v1),
            vec![
                SheetSample { id: "A1".into(), name: Some("ecoli".into()) },
                SheetSample { id: "B2".into(), name: None }
            ]
        );
        let v2 = "[Header]\nFileFormatVersion,2\n[BCLConvert_Settings]\nAdapterRead1,CTGT\n[BCLConvert_Data]\nLane,Sample_ID,Index\n1,S-1,AAA\n2,S-1,AAA\n1,S-2,CCC\n[Cloud_Data]\nSample_ID,ProjectName\nS-1,p\n";
        let ids: Vec<String> = sample_sheet(v2).into_iter().map(|s| s.id).collect();
        assert_eq!(ids, ["S-1", "S-2"]);
    }

    #[test]
    fn file_names() {
        assert_eq!(
            fastq_name("my_sample_S3_L002_R2_001.fastq.gz"),
            Some(FastqName { sample: "my_sample".into(), number: 3, lane: Some(2), read: 2 })
        );
        assert_eq!(
            fastq_name("A1_S1_R1_001.fastq.gz"),
            Some(FastqName { sample: "A1".into(), number: 1, lane: None, read: 1 })
        );
        assert_eq!(fastq_name("A1_S1_L001_I1_001.fastq.gz"), None);
        assert_eq!(fastq_name("reads.fastq"), None);
    }
}
