//! The panel definition: a folder with `panel.json` and one FASTA file of markers per sub-panel.

use std::collections::HashSet;
use std::io::{self, Cursor};
use std::path::{Component, Path, PathBuf};

use mgds_formats::{Format, Reader, Record};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::dna;
use crate::error::Error;

/// The name of the definition file in a panel folder.
pub const PANEL_FILE: &str = "panel.json";

/// Long markers are seeded with k-mers of this length, so a long marker must be at least this
/// long.
pub(crate) const LONG_K: usize = 21;

/// The status cut-offs of a panel. Every field may be left out of `panel.json`; the defaults are
/// the spec's (long markers: identity and coverage both at least 99% for present, 95% for
/// probable; short markers: an exact match for present, a match within 3 SNPs for probable).
///
/// Percentages are percents (0 to 100), as in the results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Thresholds {
    /// Markers of at most this many bases are short markers (found whole inside single reads);
    /// longer ones are long markers (covered by many reads, each aligned to part of it).
    pub short_max_length: usize,
    /// Identity (percent) a long marker needs to be present.
    pub long_present_identity: f64,
    /// Coverage (percent) a long marker needs to be present.
    pub long_present_coverage: f64,
    /// Identity (percent) a long marker needs to be probable.
    pub long_probable_identity: f64,
    /// Coverage (percent) a long marker needs to be probable.
    pub long_probable_coverage: f64,
    /// Mean depth a long marker needs to be present or probable (0: no minimum).
    pub long_min_depth: f64,
    /// The most mismatches (SNPs) a partial match of a short marker may have.
    pub short_max_mismatches: usize,
    /// Reads with an exact match a short marker needs to be present.
    pub short_present_reads: u64,
    /// Reads with an exact or partial match a short marker needs to be probable.
    pub short_probable_reads: u64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            short_max_length: 50,
            long_present_identity: 99.0,
            long_present_coverage: 99.0,
            long_probable_identity: 95.0,
            long_probable_coverage: 95.0,
            long_min_depth: 0.0,
            short_max_mismatches: 3,
            short_present_reads: 1,
            short_probable_reads: 1,
        }
    }
}

/// A loaded panel: its name, cut-offs and sub-panels of markers, in definition order.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    name: String,
    description: String,
    thresholds: Thresholds,
    sub_panels: Vec<SubPanelDef>,
    digest: String,
}

/// One sub-panel of a [`Panel`]: a named group of markers (for example "AMR genes").
#[derive(Debug, Clone, PartialEq)]
pub struct SubPanelDef {
    /// The name, the key of the sub-panel in the results.
    pub name: String,
    /// What the sub-panel detects.
    pub description: String,
    /// The marker FASTA file, relative to the panel folder.
    pub file: String,
    /// The markers, in the order of the FASTA file.
    pub markers: Vec<MarkerDef>,
}

/// One marker: a FASTA record `>name description`.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkerDef {
    /// The identifier (the header up to the first space).
    pub name: String,
    /// The rest of the header.
    pub description: String,
    /// The sequence, upper-case A, C, G and T only.
    pub sequence: Vec<u8>,
}

impl MarkerDef {
    /// The length in bases.
    pub fn len(&self) -> usize {
        self.sequence.len()
    }

    /// Whether the sequence is empty (never, for a marker of a loaded panel).
    pub fn is_empty(&self) -> bool {
        self.sequence.is_empty()
    }

    /// Whether this is a short marker under `thresholds` (found whole inside reads).
    pub fn is_short(&self, thresholds: &Thresholds) -> bool {
        self.len() <= thresholds.short_max_length
    }
}

// The shape of panel.json.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PanelFile {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    thresholds: Thresholds,
    sub_panels: Vec<SubPanelFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SubPanelFile {
    name: String,
    #[serde(default)]
    description: String,
    markers: String,
}

impl Panel {
    /// Loads the panel in folder `dir`: `panel.json` and the marker files it names.
    ///
    /// Errors name the file and the field (`panel.json`) or line (FASTA) at fault.
    pub fn load(dir: impl AsRef<Path>) -> Result<Panel, Error> {
        let dir = dir.as_ref();
        Panel::load_with(dir, |name| std::fs::read(dir.join(name)))
    }

    /// Loads a panel whose files are read by `read_file` (given a file name relative to the
    /// panel folder); `dir` is only used in messages.
    pub(crate) fn load_with(dir: &Path, read_file: impl Fn(&str) -> io::Result<Vec<u8>>) -> Result<Panel, Error> {
        let json_path = dir.join(PANEL_FILE);
        let json = read_file(PANEL_FILE).map_err(|source| Error::Io { path: json_path.clone(), source })?;
        let mut de = serde_json::Deserializer::from_slice(&json);
        let json_error = |field: String, source| Error::Json { path: json_path.clone(), field, source };
        let file: PanelFile =
            serde_path_to_error::deserialize(&mut de).map_err(|e| json_error(e.path().to_string(), e.into_inner()))?;
        // Trailing junk after the object is a fault of the whole file.
        de.end().map_err(|e| json_error(String::new(), e))?;
        let invalid = |field: String, problem: String| Error::Invalid { path: json_path.clone(), field, problem };
        check_thresholds(&file.thresholds).map_err(|(f, p)| invalid(format!("thresholds.{f}"), p))?;
        if file.name.trim().is_empty() {
            return Err(invalid("name".into(), "is empty; give the panel a name".into()));
        }
        if file.sub_panels.is_empty() {
            return Err(invalid(
                "sub_panels".into(),
                "is empty; a panel needs at least one sub-panel of markers".into(),
            ));
        }

        let mut hasher = Sha256::new();
        hash_file(&mut hasher, PANEL_FILE, &json);
        let mut names = HashSet::new();
        let mut sub_panels = Vec::with_capacity(file.sub_panels.len());
        for (i, sub) in file.sub_panels.into_iter().enumerate() {
            if sub.name.trim().is_empty() {
                return Err(invalid(format!("sub_panels[{i}].name"), "is empty".into()));
            }
            if !names.insert(sub.name.clone()) {
                return Err(invalid(
                    format!("sub_panels[{i}].name"),
                    format!("repeats the sub-panel name `{}`; names must be unique", sub.name),
                ));
            }
            if !is_plain_relative(&sub.markers) {
                return Err(invalid(
                    format!("sub_panels[{i}].markers"),
                    format!(
                        "is `{}`; it must name a file inside the panel folder (a relative path without `..`)",
                        sub.markers
                    ),
                ));
            }
            let path = dir.join(&sub.markers);
            let bytes = read_file(&sub.markers).map_err(|source| Error::Io { path: path.clone(), source })?;
            hash_file(&mut hasher, &sub.markers, &bytes);
            let markers = parse_markers(&bytes, &path, &file.thresholds)?;
            sub_panels.push(SubPanelDef { name: sub.name, description: sub.description, file: sub.markers, markers });
        }
        Ok(Panel {
            name: file.name,
            description: file.description,
            thresholds: file.thresholds,
            sub_panels,
            digest: hex::encode(hasher.finalize()),
        })
    }

    /// The panel's name (`panel_name` in the results).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the panel is for.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The status cut-offs.
    pub fn thresholds(&self) -> &Thresholds {
        &self.thresholds
    }

    /// The sub-panels, in definition order.
    pub fn sub_panels(&self) -> &[SubPanelDef] {
        &self.sub_panels
    }

    /// Hex SHA-256 over the definition: `panel.json`, then each sub-panel's marker file in
    /// definition order, each as its name, a NUL, its length (8 bytes, little-endian) and its
    /// bytes exactly as loaded. Two panels with the same digest give the same results.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// All markers with their sub-panel, in definition order.
    pub fn markers(&self) -> impl Iterator<Item = (&SubPanelDef, &MarkerDef)> {
        self.sub_panels.iter().flat_map(|s| s.markers.iter().map(move |m| (s, m)))
    }
}

fn hash_file(hasher: &mut Sha256, name: &str, bytes: &[u8]) {
    hasher.update(name.as_bytes());
    hasher.update([0]);
    hasher.update((bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

fn is_plain_relative(name: &str) -> bool {
    let path = PathBuf::from(name);
    !name.is_empty() && path.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Checks the cut-offs; on failure gives the field and the problem.
fn check_thresholds(t: &Thresholds) -> Result<(), (&'static str, String)> {
    let percents = [
        ("long_present_identity", t.long_present_identity),
        ("long_present_coverage", t.long_present_coverage),
        ("long_probable_identity", t.long_probable_identity),
        ("long_probable_coverage", t.long_probable_coverage),
    ];
    for (field, v) in percents {
        if !(0.0..=100.0).contains(&v) {
            return Err((field, format!("is {v}; it is a percent, from 0 to 100")));
        }
    }
    if t.long_probable_identity > t.long_present_identity {
        return Err((
            "long_probable_identity",
            "is above `long_present_identity`; probable must not need more than present".into(),
        ));
    }
    if t.long_probable_coverage > t.long_present_coverage {
        return Err((
            "long_probable_coverage",
            "is above `long_present_coverage`; probable must not need more than present".into(),
        ));
    }
    if !(t.long_min_depth >= 0.0 && t.long_min_depth.is_finite()) {
        return Err(("long_min_depth", format!("is {}; it must be 0 or more", t.long_min_depth)));
    }
    if t.short_max_length < 1 {
        return Err(("short_max_length", "must be at least 1".into()));
    }
    // Past a few mismatches a "partial match" of a short marker is noise, and the seeds of
    // the search become too short to be selective.
    if t.short_max_mismatches > 8 {
        return Err((
            "short_max_mismatches",
            format!("is {}; at most 8 mismatches are allowed", t.short_max_mismatches),
        ));
    }
    if t.short_present_reads < 1 || t.short_probable_reads < 1 {
        let field = if t.short_present_reads < 1 { "short_present_reads" } else { "short_probable_reads" };
        return Err((field, "must be at least 1".into()));
    }
    Ok(())
}

/// Reads the markers of one FASTA file.
fn parse_markers(bytes: &[u8], path: &Path, t: &Thresholds) -> Result<Vec<MarkerDef>, Error> {
    let problem = |line: u64, problem: String| Error::Marker { path: path.to_owned(), line, problem };
    let mut reader = Reader::with_format(Cursor::new(bytes), Format::Fasta);
    let mut record = Record::default();
    let mut markers: Vec<MarkerDef> = Vec::new();
    let mut names = HashSet::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                let (line, message) = match e.get_ref().and_then(|e| e.downcast_ref::<mgds_formats::ParseError>()) {
                    Some(pe) => (pe.line, pe.kind.to_string()),
                    None => (reader.line_number(), e.to_string()),
                };
                return Err(problem(line, message));
            }
        }
        let line = record.line();
        let header = String::from_utf8_lossy(record.header()).into_owned();
        let (name, description) = match header.split_once([' ', '\t']) {
            Some((n, d)) => (n.to_owned(), d.trim().to_owned()),
            None => (header.trim().to_owned(), String::new()),
        };
        if name.is_empty() {
            return Err(problem(line, "the marker has no name after `>`".into()));
        }
        if !names.insert(name.clone()) {
            return Err(problem(line, format!("marker `{name}` appears twice in the file; names must be unique")));
        }
        let seq = record.sequence();
        if seq.is_empty() {
            return Err(problem(line, format!("marker `{name}` has no sequence")));
        }
        if let Some(pos) = seq.iter().position(|&b| dna::code(b) > 3 || b == b'U' || b == b'u') {
            return Err(problem(
                line,
                format!(
                    "marker `{name}` has `{}` at position {}; marker sequences may hold only A, C, G and T",
                    seq[pos] as char,
                    pos + 1
                ),
            ));
        }
        let len = seq.len();
        if len <= t.short_max_length {
            if len < t.short_max_mismatches + 1 {
                return Err(problem(
                    line,
                    format!(
                        "short marker `{name}` is {len} bp, shorter than the {} mismatches a partial match may have",
                        t.short_max_mismatches
                    ),
                ));
            }
        } else if len < LONG_K {
            return Err(problem(
                line,
                format!(
                    "marker `{name}` is {len} bp: longer than `short_max_length` ({}) but too short to be a long marker (at least {LONG_K} bp); raise `short_max_length`",
                    t.short_max_length
                ),
            ));
        }
        markers.push(MarkerDef { name, description, sequence: seq.to_ascii_uppercase() });
    }
    if markers.is_empty() {
        return Err(problem(
            reader.line_number().max(1),
            "the file holds no markers; a marker file is FASTA (`>name description`, then the sequence)".into(),
        ));
    }
    Ok(markers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(json: &str, fasta: &str) -> Result<Panel, Error> {
        let (json, fasta) = (json.to_owned(), fasta.to_owned());
        Panel::load_with(Path::new("p"), move |name| match name {
            PANEL_FILE => Ok(json.clone().into_bytes()),
            "m.fasta" => Ok(fasta.clone().into_bytes()),
            _ => Err(io::Error::from(io::ErrorKind::NotFound)),
        })
    }

    const JSON: &str = r#"{"name": "p", "sub_panels": [{"name": "s", "description": "d", "markers": "m.fasta"}]}"#;
    const LONG: &str = "ACGTACGTACGGTACCATGCATGCAAGTCCATGACGATTACAGGCATTACGATCAGTACCA";

    #[test]
    fn loads_markers_with_defaults() {
        let fasta = format!(">long1 a long one\n{LONG}\n>short1\nacgtacgtac\n");
        let p = load(JSON, &fasta).unwrap();
        assert_eq!(p.name(), "p");
        assert_eq!(p.thresholds(), &Thresholds::default());
        let s = &p.sub_panels()[0];
        assert_eq!((s.name.as_str(), s.description.as_str()), ("s", "d"));
        assert_eq!(s.markers[0].name, "long1");
        assert_eq!(s.markers[0].description, "a long one");
        assert_eq!(s.markers[1].sequence, b"ACGTACGTAC");
        assert!(s.markers[1].is_short(p.thresholds()));
        assert!(!s.markers[0].is_short(p.thresholds()));
        assert_eq!(p.digest().len(), 64);
    }

    #[test]
    fn digest_changes_with_any_file() {
        let a = load(JSON, ">m\nACGTACGTAC\n").unwrap();
        let b = load(JSON, ">m\nACGTACGTAA\n").unwrap();
        let c = load(&JSON.replace("\"d\"", "\"e\""), ">m\nACGTACGTAC\n").unwrap();
        assert_ne!(a.digest(), b.digest());
        assert_ne!(a.digest(), c.digest());
        assert_eq!(a.digest(), load(JSON, ">m\nACGTACGTAC\n").unwrap().digest());
    }

    #[test]
    fn wrong_type_names_the_field() {
        let json = r#"{"name": "p", "thresholds": {"long_present_identity": "high"},
            "sub_panels": [{"name": "s", "markers": "m.fasta"}]}"#;
        let e = load(json, ">m\nACGT\n").unwrap_err();
        assert!(e.to_string().contains("field `thresholds.long_present_identity`"), "{e}");
    }

    #[test]
    fn unknown_and_missing_fields_are_named() {
        let json = r#"{"name": "p", "sub_panels": [{"name": "s", "marker": "m.fasta"}]}"#;
        let e = load(json, "").unwrap_err();
        assert!(e.to_string().contains("sub_panels[0]"), "{e}");
        let json = r#"{"name": "p", "thresholds": {"short_max_lenght": 3}, "sub_panels": []}"#;
        let e = load(json, "").unwrap_err();
        assert!(e.to_string().contains("thresholds"), "{e}");
    }

    #[test]
    fn bad_values_are_named() {
        let json = JSON.replace("\"sub_panels\"", "\"thresholds\": {\"long_probable_identity\": 120}, \"sub_panels\"");
        let e = load(&json, ">m\nACGT\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "p/panel.json: field `thresholds.long_probable_identity` is 120; it is a percent, from 0 to 100"
        );
        let json = JSON.replace("m.fasta", "../m.fasta");
        let e = load(&json, ">m\nACGT\n").unwrap_err();
        assert!(e.to_string().contains("`sub_panels[0].markers`"), "{e}");
    }

    #[test]
    fn fasta_problems_name_file_and_line() {
        let e = load(JSON, ">a\nACGTACGT\n>b\nACGTNCGT\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "p/m.fasta, line 3: marker `b` has `N` at position 5; marker sequences may hold only A, C, G and T"
        );
        let e = load(JSON, ">a\nACGTACGT\n>a\nACGTACGT\n").unwrap_err();
        assert!(e.to_string().starts_with("p/m.fasta, line 3: marker `a` appears twice"), "{e}");
        let e = load(JSON, "ACGT\n").unwrap_err();
        assert!(e.to_string().starts_with("p/m.fasta, line 1:"), "{e}");
        let e = load(JSON, "").unwrap_err();
        assert!(e.to_string().contains("holds no markers"), "{e}");
        let json = JSON.replace("\"sub_panels\"", "\"thresholds\": {\"short_max_length\": 10}, \"sub_panels\"");
        let e = load(&json, ">a\nACGTACGTACGTA\n").unwrap_err();
        assert!(e.to_string().contains("too short to be a long marker"), "{e}");
    }

    #[test]
    fn missing_marker_file_is_named() {
        let json = JSON.replace("m.fasta", "other.fasta");
        let e = load(&json, "").unwrap_err();
        assert!(e.to_string().starts_with("could not read p/other.fasta"), "{e}");
    }
}
