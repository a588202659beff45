//! Contaminants told apart by negative controls, scored as decontam (Davis et al., Microbiome
//! 2018; the R package's `isContaminant`) scores them, for each taxon of an abundance table:
//!
//! - **prevalence**: is the taxon present in a larger share of the negative controls than of
//!   the true samples? A one-sided test on the 2×2 table (control or not × present or not):
//!   the two-proportion test with the continuity correction (R's `prop.test`), or, where a count
//!   expected under no difference is below 5 (where R warns that the approximation may be
//!   wrong), Fisher's exact test with half the probability of the table seen taken off (a mid-p
//!   value). A taxon present in every sample scores 0.5; one present in fewer than two samples,
//!   or a batch without controls (or with nothing else), scores nothing.
//! - **frequency**: does the taxon's share fall as the sample's DNA concentration rises (a
//!   contaminant adds a fixed amount of DNA, so its share is inversely proportional to the total),
//!   or stay put? Over the true samples where the taxon is present, the log share is fitted with
//!   slope −1 against the log concentration and with slope 0; the score is the F distribution's
//!   CDF at the ratio of their residual sums of squares, with n − 1 and n − 1 degrees of freedom.
//!   Fewer than two such samples score nothing.
//!
//! Low scores are contaminant-like; decontam's default threshold is 0.1 (a score strictly below
//! it calls the taxon a contaminant). Within several batches, each is scored on its own and the
//! lowest score is kept (decontam's `batch.combine = "minimum"`); with both methods, the two
//! scores are combined by Fisher's method (decontam's `combined`). Nothing is subtracted: the
//! scores only mark taxa.

use serde::{Deserialize, Serialize};
use statrs::function::beta::beta_reg;
use statrs::function::erf::erfc;
use statrs::function::factorial::ln_binomial;

/// decontam's default threshold: a taxon scoring strictly below it is called a contaminant.
pub const THRESHOLD: f64 = 0.1;

/// How the scores were made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecontamMethod {
    /// Prevalence in negative controls against true samples.
    Prevalence,
    /// Share against DNA concentration in true samples.
    Frequency,
    /// Both, combined by Fisher's method.
    Combined,
}

impl DecontamMethod {
    /// The method's name on screens and in exports.
    pub fn label(self) -> &'static str {
        match self {
            DecontamMethod::Prevalence => "decontam's prevalence method",
            DecontamMethod::Frequency => "decontam's frequency method",
            DecontamMethod::Combined => "decontam's combined method (prevalence and frequency, by Fisher's method)",
        }
    }
}

/// One taxon's scores.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ContaminantScore {
    /// The prevalence score, where it could be made.
    pub prevalence: Option<f64>,
    /// The frequency score, where it could be made.
    pub frequency: Option<f64>,
    /// The score the call is made on (the method's).
    pub score: Option<f64>,
    /// Whether the score is below the threshold.
    pub contaminant: bool,
}

/// Scores each taxon (a column of `shares`: one row per sample, each row the sample's shares
/// of its reads) by `method`. `control[i]`: sample `i` is a negative control. `batch[i]`: its
/// batch (scored apart, the lowest score kept). `conc[i]`: its DNA concentration (needed for the
/// frequency method; controls' are not used). Rows of other lengths than the first are read as
/// far as they go.
pub fn decontam(
    shares: &[Vec<f64>],
    control: &[bool],
    batch: &[usize],
    conc: Option<&[f64]>,
    method: DecontamMethod,
    threshold: f64,
) -> Vec<ContaminantScore> {
    let taxa = shares.first().map_or(0, Vec::len);
    let batches: std::collections::BTreeSet<usize> = batch.iter().copied().collect();
    // Each batch's samples, found once.
    let members_of: Vec<Vec<usize>> =
        batches.iter().map(|&b| (0..shares.len()).filter(|&s| batch.get(s) == Some(&b)).collect()).collect();
    let value = |s: usize, t: usize| shares.get(s).and_then(|r| r.get(t)).copied().unwrap_or(0.0);
    (0..taxa)
        .map(|t| {
            let mut prevalence: Option<f64> = None;
            let mut frequency: Option<f64> = None;
            for members in &members_of {
                if method != DecontamMethod::Frequency {
                    let present: Vec<bool> = members.iter().map(|&s| value(s, t) > 0.0).collect();
                    let neg: Vec<bool> = members.iter().map(|&s| control.get(s).copied().unwrap_or(false)).collect();
                    prevalence = min_some(prevalence, prevalence_score(&present, &neg));
                }
                if method != DecontamMethod::Prevalence
                    && let Some(conc) = conc
                {
                    let pairs: Vec<(f64, f64)> = members
                        .iter()
                        .filter(|&&s| !control.get(s).copied().unwrap_or(false))
                        .filter_map(|&s| conc.get(s).map(|&c| (value(s, t), c)))
                        .collect();
                    frequency = min_some(frequency, frequency_score(&pairs));
                }
            }
            let score = match method {
                DecontamMethod::Prevalence => prevalence,
                DecontamMethod::Frequency => frequency,
                DecontamMethod::Combined => match (prevalence, frequency) {
                    (Some(p), Some(f)) => Some(fisher_combined(p, f)),
                    _ => None,
                },
            };
            ContaminantScore { prevalence, frequency, score, contaminant: score.is_some_and(|s| s < threshold) }
        })
        .collect()
}

fn min_some(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// Fisher's method for two scores: −2 ln(p f) is chi-squared with 4 degrees of freedom, whose
/// upper tail at `x = −2 l` is `e^l (1 − l)`, with `l = ln p + ln f` (in logs, so that two tiny
/// scores do not underflow: a score of 0 gives 0).
fn fisher_combined(p: f64, f: f64) -> f64 {
    let l = p.ln() + f.ln();
    if l == f64::NEG_INFINITY {
        return 0.0;
    }
    (l.exp() * (1.0 - l)).clamp(0.0, 1.0)
}

#[cfg(test)]
fn chi2_upper(x: f64, df: f64) -> f64 {
    if x <= 0.0 { 1.0 } else { statrs::function::gamma::gamma_ur(df / 2.0, x / 2.0) }
}

/// The prevalence score of one taxon in one batch: `present[i]` in sample `i`, `neg[i]` a
/// control.
pub fn prevalence_score(present: &[bool], neg: &[bool]) -> Option<f64> {
    let n_neg = neg.iter().filter(|&&n| n).count();
    let n = present.len().min(neg.len());
    if present.iter().filter(|&&p| p).count() <= 1 || n_neg == 0 || n_neg >= n {
        return None;
    }
    // The table: rows control / true sample, columns present / absent.
    let (mut a, mut b, mut c, mut d) = (0u64, 0u64, 0u64, 0u64);
    for (&p, &g) in present.iter().zip(neg) {
        match (g, p) {
            (true, true) => a += 1,
            (true, false) => b += 1,
            (false, true) => c += 1,
            (false, false) => d += 1,
        }
    }
    if b + d == 0 {
        return Some(0.5);
    }
    let (n1, n2) = ((a + b) as f64, (c + d) as f64);
    let total = n1 + n2;
    let p_all = (a + c) as f64 / total;
    let expected = [n1 * p_all, n1 * (1.0 - p_all), n2 * p_all, n2 * (1.0 - p_all)];
    if expected.iter().any(|&e| e < 5.0) {
        return Some(fisher_mid_p(a, b, c, d));
    }
    // Two proportions, one-sided (controls greater), with Yates' correction as R applies it.
    let delta = a as f64 / n1 - c as f64 / n2;
    let yates = 0.5f64.min(delta.abs() / (1.0 / n1 + 1.0 / n2));
    let observed = [a as f64, b as f64, c as f64, d as f64];
    let statistic: f64 = observed.iter().zip(expected).map(|(o, e)| ((o - e).abs() - yates).powi(2) / e).sum();
    let z = delta.signum() * statistic.sqrt();
    // The upper tail of the standard normal.
    Some(0.5 * erfc(z / std::f64::consts::SQRT_2))
}

/// Fisher's exact test of the 2×2 table `[[a, b], [c, d]]`, one-sided (the first cell larger
/// than its margins lead one to expect), less half the probability of the table itself.
fn fisher_mid_p(a: u64, b: u64, c: u64, d: u64) -> f64 {
    let (row, col, n) = (a + b, a + c, a + b + c + d);
    let hi = row.min(col);
    let ln_p = |x: u64| ln_binomial(col, x) + ln_binomial(n - col, row - x) - ln_binomial(n, row);
    let upper: f64 = (a..=hi).map(|x| ln_p(x).exp()).sum();
    (upper - 0.5 * ln_p(a).exp()).clamp(0.0, 1.0)
}

/// The frequency score of one taxon in one batch: (share, concentration) of each true sample.
pub fn frequency_score(pairs: &[(f64, f64)]) -> Option<f64> {
    let logs: Vec<(f64, f64)> = pairs
        .iter()
        .filter(|(f, c)| *f > 0.0 && *c > 0.0 && f.is_finite() && c.is_finite())
        .map(|(f, c)| (f.ln(), c.ln()))
        .collect();
    let n = logs.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    // Slope −1: log f = b − log c, b the mean of log f + log c.
    let b1 = logs.iter().map(|(f, c)| f + c).sum::<f64>() / nf;
    let ss1: f64 = logs.iter().map(|(f, c)| (f + c - b1).powi(2)).sum();
    // Slope 0: log f = its mean.
    let b0 = logs.iter().map(|(f, _)| f).sum::<f64>() / nf;
    let ss0: f64 = logs.iter().map(|(f, _)| (f - b0).powi(2)).sum();
    let dof = nf - 1.0;
    let ratio = ss1 / ss0;
    if ratio.is_nan() {
        return None;
    }
    if ratio.is_infinite() {
        return Some(1.0);
    }
    // The F distribution's CDF with (dof, dof) degrees of freedom.
    Some(beta_reg(dof / 2.0, dof / 2.0, ratio / (ratio + 1.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taxon_in_most_controls_and_few_samples_scores_low() {
        // 4 controls, 16 samples: present in 4 of 4 controls and 2 of 16 samples.
        let neg: Vec<bool> = (0..20).map(|i| i < 4).collect();
        let present: Vec<bool> = (0..20).map(|i| i < 6).collect();
        let p = prevalence_score(&present, &neg).unwrap();
        assert!(p < 0.01, "{p}");
        // Present alike in both: near the middle.
        let even: Vec<bool> = (0..20).map(|i| i % 2 == 0).collect();
        let q = prevalence_score(&even, &neg).unwrap();
        assert!(q > 0.3, "{q}");
        // Present everywhere: 0.5; in one sample only, or with no controls: no score.
        assert_eq!(prevalence_score(&[true; 20], &neg), Some(0.5));
        assert_eq!(prevalence_score(&(0..20).map(|i| i == 3).collect::<Vec<_>>(), &neg), None);
        assert_eq!(prevalence_score(&present, &[false; 20]), None);
    }

    #[test]
    fn fisher_and_f_agree_with_scipy() {
        // scipy.stats: fisher_exact(alternative="greater") less half of hypergeom.pmf, and f.cdf.
        for ((a, b, c, d), want) in [
            ((3, 1, 2, 10), 0.03296703296703297),
            ((2, 0, 1, 5), 0.05357142857142856),
            ((4, 0, 2, 14), 0.0015479876160990717),
        ] {
            let got = fisher_mid_p(a, b, c, d);
            assert!((got - want).abs() < 1e-12, "{a} {b} {c} {d}: {got} {want}");
        }
        for (x, dof, want) in
            [(0.3, 5.0, 0.10620909869618043), (1.7, 3.0, 0.6631814881227567), (0.05, 9.0, 6.467454136226754e-05)]
        {
            let got = beta_reg(dof / 2.0, dof / 2.0, x / (x + 1.0));
            assert!((got - want).abs() < 1e-12 * want.max(1e-3), "{x} {dof}: {got} {want}");
        }
    }

    #[test]
    fn a_share_falling_with_concentration_scores_low() {
        // A contaminant: a fixed amount, so its share is 1/conc (with a little noise).
        let conc = [5.0, 10.0, 20.0, 40.0, 80.0, 160.0];
        let noise = [1.05, 0.97, 1.02, 0.96, 1.03, 0.99];
        let contaminant: Vec<(f64, f64)> = conc.iter().zip(noise).map(|(c, e)| (0.5 / c * e, *c)).collect();
        let p = frequency_score(&contaminant).unwrap();
        assert!(p < 0.01, "{p}");
        // A real taxon: its share does not follow the concentration.
        let real: Vec<(f64, f64)> = conc.iter().zip(noise).map(|(c, e)| (0.2 * e, *c)).collect();
        let q = frequency_score(&real).unwrap();
        assert!(q > 0.99, "{q}");
        assert_eq!(frequency_score(&[(0.1, 5.0)]), None);
    }

    #[test]
    fn batches_keep_their_lowest_score_and_combined_uses_both() {
        // Two batches of 2 controls + 6 samples; taxon 0 a contaminant in batch 0 only.
        let mut shares = Vec::new();
        let mut control = Vec::new();
        let mut batch = Vec::new();
        let mut conc = Vec::new();
        for b in 0..2 {
            for i in 0..8 {
                let neg = i < 2;
                let c = 10.0 * (i + 1) as f64;
                let t0 = if b == 0 && (neg || i == 2) { 0.3 } else { 0.0 };
                shares.push(vec![t0, 0.5, 0.2 / c]);
                control.push(neg);
                batch.push(b);
                conc.push(c);
            }
        }
        let s = decontam(&shares, &control, &batch, Some(&conc), DecontamMethod::Prevalence, THRESHOLD);
        assert_eq!(s.len(), 3);
        assert!(s[0].prevalence.unwrap() < 0.1 && s[0].contaminant, "{:?}", s[0]);
        assert_eq!(s[1].prevalence, Some(0.5));
        assert!(!s[1].contaminant);
        let f = decontam(&shares, &control, &batch, Some(&conc), DecontamMethod::Frequency, THRESHOLD);
        assert!(f[2].frequency.unwrap() < 0.01 && f[2].contaminant, "{:?}", f[2]);
        let c = decontam(&shares, &control, &batch, Some(&conc), DecontamMethod::Combined, THRESHOLD);
        let (p, q) = (c[2].prevalence.unwrap(), c[2].frequency.unwrap());
        let want = chi2_upper(-2.0 * (p * q).ln(), 4.0);
        assert!((c[2].score.unwrap() - want).abs() < 1e-12, "{} {want}", c[2].score.unwrap());
    }

    #[test]
    fn tiny_scores_combine_without_underflow() {
        assert_eq!(fisher_combined(0.0, 0.3), 0.0);
        // 1e-400 and less: below what a double holds, so 0, not a panic or NaN.
        let tiny = fisher_combined(1e-200, 1e-200);
        assert!((0.0..1e-300).contains(&tiny), "{tiny}");
        let small = fisher_combined(1e-100, 1e-100);
        assert!(small > 0.0 && small < 1e-190, "{small}");
        assert!((fisher_combined(1.0, 1.0) - 1.0).abs() < 1e-15);
        for (p, f) in [(0.3f64, 0.2f64), (0.01, 0.5), (0.9, 0.05)] {
            let want = chi2_upper(-2.0 * (p * f).ln(), 4.0);
            assert!((fisher_combined(p, f) - want).abs() < 1e-12, "{p} {f}");
        }
    }
}
