//! Panel results JSON (`GET /panels/{id}/results`) into the `mgds-api` types.

use std::io::Read;
use std::path::Path;

use mgds_api::{PanelResults, SubPanel};
use serde::Deserialize;

use crate::compression::open;
use crate::error::Error;

/// Reads panel results from a JSON file (gzipped or not).
pub fn read_panel_results(path: impl AsRef<Path>) -> Result<PanelResults, Error> {
    let path = path.as_ref();
    let (_, reader) = open(path)?;
    parse_panel_results(reader, path)
}

/// Parses panel results JSON from `reader`; `name` is used in messages.
pub fn parse_panel_results<R: Read>(reader: R, name: &Path) -> Result<PanelResults, Error> {
    serde_json::from_reader(reader).map_err(|source| match source.classify() {
        serde_json::error::Category::Io => Error::Io { path: name.to_owned(), source: source.into() },
        _ => Error::Json { path: name.to_owned(), what: "panel results JSON", source },
    })
}

/// The sub-panels of `results` as typed [`SubPanel`]s, in the order of the JSON, each with its
/// name.
pub fn sub_panels(results: &PanelResults) -> SubPanels<'_> {
    SubPanels { panel: &results.panel_name, inner: results.panel_results.iter() }
}

/// Iterator over the sub-panels of [`PanelResults`]; see [`sub_panels`]. A sub-panel that is
/// not a description with a list of markers is an [`Error::SubPanel`]; the others still follow.
pub struct SubPanels<'a> {
    panel: &'a str,
    inner: serde_json::map::Iter<'a>,
}

impl<'a> Iterator for SubPanels<'a> {
    type Item = Result<(&'a str, SubPanel), Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let (name, value) = self.inner.next()?;
        // `&Value` is a deserializer itself, so the sub-panel is not cloned first.
        Some(SubPanel::deserialize(value).map(|sub| (name.as_str(), sub)).map_err(|source| Error::SubPanel {
            panel: self.panel.to_owned(),
            name: name.clone(),
            source,
        }))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mgds_api::MarkerStatus;

    const JSON: &[u8] = br#"{
        "panel_name": "AMR demo",
        "panel_results": {
            "beta-lactamases": {
                "description": "Beta-lactam resistance genes",
                "markers": [
                    {"name": "blaTEM-1", "description": "TEM-1", "status": "present", "length": 861,
                     "identity": 99.8, "coverage": 100.0, "depth": 31.5},
                    {"name": "blaKPC-2", "description": "KPC-2", "status": "absent", "length": 882,
                     "identity": 0.0, "coverage": 0.0, "depth": 0.0}
                ]
            },
            "snps": {
                "description": "Point mutations",
                "markers": [
                    {"name": "gyrA_S83L", "description": "", "status": "probable", "length": 31,
                     "n_reads_exact_match": 0, "n_reads_partial_match": 4}
                ]
            }
        }
    }"#;

    #[test]
    fn parses_long_and_short_markers() {
        let results = parse_panel_results(JSON, Path::new("panel.json")).unwrap();
        assert_eq!(results.panel_name, "AMR demo");
        let subs: Vec<(&str, SubPanel)> = sub_panels(&results).collect::<Result<_, _>>().unwrap();
        assert_eq!(subs.len(), 2);
        let (name, beta) = &subs[0];
        assert_eq!(*name, "beta-lactamases");
        assert_eq!(beta.markers.len(), 2);
        assert_eq!(beta.markers[0].status, MarkerStatus::Present);
        assert_eq!(beta.markers[0].depth, Some(31.5));
        assert_eq!(beta.markers[0].n_reads_exact_match, None);
        let (_, snps) = &subs[1];
        assert_eq!(snps.markers[0].status, MarkerStatus::Probable);
        assert_eq!(snps.markers[0].n_reads_partial_match, Some(4));
        assert_eq!(snps.markers[0].identity, None);
    }

    #[test]
    fn bad_sub_panel_is_named_and_others_follow() {
        let json = br#"{"panel_name": "p", "panel_results": {
            "broken": {"description": "x", "markers": [{"name": "m", "status": "maybe", "length": 1}]},
            "fine": {"description": "y", "markers": null}}}"#;
        let results = parse_panel_results(&json[..], Path::new("p.json")).unwrap();
        let all: Vec<_> = sub_panels(&results).collect();
        let err = all[0].as_ref().unwrap_err();
        assert!(err.to_string().starts_with("sub-panel `broken` of panel `p`"), "{err}");
        let (name, fine) = all[1].as_ref().unwrap();
        assert_eq!((*name, fine.markers.len()), ("fine", 0));
    }

    #[test]
    fn not_json_is_an_error_naming_the_file() {
        let e = parse_panel_results(&b"%PDF-1.4"[..], Path::new("p.json")).unwrap_err();
        assert!(matches!(e, Error::Json { .. }));
        assert!(e.to_string().starts_with("p.json is not valid panel results JSON"), "{e}");
    }
}
