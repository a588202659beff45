//! Alpha diversity: how many taxa one sample holds and how evenly.

use serde::{Deserialize, Serialize};

/// An alpha diversity measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlphaMetric {
    /// Taxa with a non-zero value.
    ObservedTaxa,
    /// Shannon's entropy, natural logarithm.
    Shannon,
    /// Gini–Simpson index, 1 − Σ p².
    Simpson,
    /// Chao1, bias-corrected: estimated taxa from the taxa seen once and twice.
    Chao1,
}

impl AlphaMetric {
    /// Every measure, in the order shown.
    pub const ALL: [AlphaMetric; 4] =
        [AlphaMetric::ObservedTaxa, AlphaMetric::Shannon, AlphaMetric::Simpson, AlphaMetric::Chao1];

    /// The name in options, CSV headers and JSON (as the `onecodex` library names it).
    pub fn key(self) -> &'static str {
        match self {
            AlphaMetric::ObservedTaxa => "observed_taxa",
            AlphaMetric::Shannon => "shannon",
            AlphaMetric::Simpson => "simpson",
            AlphaMetric::Chao1 => "chao1",
        }
    }

    /// The measure named `key`.
    pub fn from_key(key: &str) -> Option<AlphaMetric> {
        AlphaMetric::ALL.into_iter().find(|m| m.key() == key)
    }

    /// A label for a chart.
    pub fn label(self) -> &'static str {
        match self {
            AlphaMetric::ObservedTaxa => "Observed taxa",
            AlphaMetric::Shannon => "Shannon (ln)",
            AlphaMetric::Simpson => "Simpson (1 − Σp²)",
            AlphaMetric::Chao1 => "Chao1 (bias-corrected)",
        }
    }

    /// How it is computed, in a sentence.
    pub fn explanation(self) -> &'static str {
        match self {
            AlphaMetric::ObservedTaxa => "the number of taxa at the rank with a non-zero value",
            AlphaMetric::Shannon => "Shannon's entropy −Σ p ln p of the taxa's shares (natural logarithm)",
            AlphaMetric::Simpson => {
                "the Gini–Simpson index 1 − Σ p²: the chance that two reads drawn at random belong to different taxa"
            }
            AlphaMetric::Chao1 => {
                "observed taxa plus F1(F1 − 1) / (2(F2 + 1)), F1 and F2 the taxa seen in exactly one and two reads (bias-corrected Chao1; it needs read counts)"
            }
        }
    }

    /// Whether the value depends on whole read counts (Chao1 counts singletons and doubletons);
    /// the others are the same on counts and on shares.
    pub fn needs_counts(self) -> bool {
        self == AlphaMetric::Chao1
    }
}

/// One sample's alpha diversity from its values at a rank (read counts, or shares where the
/// measure allows). `None` where it is undefined: Shannon and Simpson of a sample with nothing
/// at the rank (scikit-bio gives NaN). Zeros are ignored; values must be 0 or more.
pub fn alpha(metric: AlphaMetric, values: &[f64]) -> Option<f64> {
    let present = values.iter().copied().filter(|&v| v != 0.0);
    match metric {
        AlphaMetric::ObservedTaxa => Some(present.count() as f64),
        AlphaMetric::Chao1 => {
            let (mut s, mut f1, mut f2) = (0u64, 0u64, 0u64);
            for v in present {
                s += 1;
                f1 += u64::from(v == 1.0);
                f2 += u64::from(v == 2.0);
            }
            let (f1, f2) = (f1 as f64, f2 as f64);
            Some(s as f64 + f1 * (f1 - 1.0) / (2.0 * (f2 + 1.0)))
        }
        AlphaMetric::Shannon | AlphaMetric::Simpson => {
            let total: f64 = values.iter().sum();
            if total <= 0.0 {
                return None;
            }
            let shares = present.map(|v| v / total);
            Some(if metric == AlphaMetric::Shannon {
                shares.map(|p| -p * p.ln()).sum()
            } else {
                1.0 - shares.map(|p| p * p).sum::<f64>()
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_and_uneven_samples() {
        let even = [5.0, 5.0, 5.0, 5.0];
        assert_eq!(alpha(AlphaMetric::ObservedTaxa, &even), Some(4.0));
        assert!((alpha(AlphaMetric::Shannon, &even).unwrap() - 4f64.ln()).abs() < 1e-15);
        assert!((alpha(AlphaMetric::Simpson, &even).unwrap() - 0.75).abs() < 1e-15);
        // Three singletons, no doubleton: 3 + 3·2 / 2.
        assert_eq!(alpha(AlphaMetric::Chao1, &[1.0, 1.0, 1.0, 7.0, 0.0]), Some(7.0));
        // On shares Chao1 is the observed taxa (no value is exactly 1 or 2).
        assert_eq!(alpha(AlphaMetric::Chao1, &[0.25, 0.75]), Some(2.0));
    }

    #[test]
    fn empty_and_single_taxon_samples() {
        assert_eq!(alpha(AlphaMetric::Shannon, &[0.0, 0.0]), None);
        assert_eq!(alpha(AlphaMetric::Simpson, &[]), None);
        assert_eq!(alpha(AlphaMetric::ObservedTaxa, &[0.0]), Some(0.0));
        assert_eq!(alpha(AlphaMetric::Chao1, &[0.0]), Some(0.0));
        assert_eq!(alpha(AlphaMetric::Shannon, &[0.0, 9.0]), Some(0.0));
        assert_eq!(alpha(AlphaMetric::Simpson, &[9.0]), Some(0.0));
    }
}
