//! The kinds of analysis (each with its own collection: `/classifications`, `/panels`, ...) and
//! their `analysis_type` values: what analyses, events and jobs all name.

/// The kinds of analysis, each with its own collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnalysisKind {
    /// `/classifications`.
    Classification,
    /// `/panels`.
    Panel,
    /// `/alignments`.
    Alignment,
    /// `/functional_profiles`.
    FunctionalProfile,
    /// `/controls`: a negative control's batch scored against it ([`super::controls`]).
    Control,
    /// `/reports`: a sample's report, as PDF ([`super::reports`]).
    Report,
}

impl AnalysisKind {
    /// Every kind.
    pub const ALL: [AnalysisKind; 6] = [
        AnalysisKind::Classification,
        AnalysisKind::Panel,
        AnalysisKind::Alignment,
        AnalysisKind::FunctionalProfile,
        AnalysisKind::Control,
        AnalysisKind::Report,
    ];

    /// The `analysis_type` value.
    pub fn analysis_type(self) -> &'static str {
        ANALYSIS_TYPES[self as usize]
    }

    /// The collection name.
    pub fn collection(self) -> &'static str {
        match self {
            AnalysisKind::Classification => "classifications",
            AnalysisKind::Panel => "panels",
            AnalysisKind::Alignment => "alignments",
            AnalysisKind::FunctionalProfile => "functional_profiles",
            AnalysisKind::Control => "controls",
            AnalysisKind::Report => "reports",
        }
    }

    /// The kind of an `analysis_type` value.
    pub fn from_type(t: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.analysis_type() == t)
    }
}

/// The `analysis_type` values, one per [`AnalysisKind`].
pub(crate) const ANALYSIS_TYPES: [&str; 6] =
    ["classification", "panel", "alignment", "functional_profile", "control", "report"];
