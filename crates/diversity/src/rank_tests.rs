//! Rank tests of one value per sample (an alpha diversity) between groups: Kruskal–Wallis H and
//! Mann–Whitney U, as SciPy computes them (ties averaged and corrected for; Mann–Whitney
//! two-sided with the continuity correction; exact unless both groups have more than 8 values or
//! values tie).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use statrs::function::erf::erfc;
use statrs::function::gamma::gamma_ur;

use crate::Error;

/// Which test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankTest {
    /// Kruskal–Wallis H (any number of groups; the chi-squared approximation).
    KruskalWallis,
    /// Mann–Whitney U (two groups), exact.
    MannWhitneyExact,
    /// Mann–Whitney U (two groups), normal approximation with tie and continuity corrections.
    MannWhitneyNormal,
}

impl RankTest {
    /// The test's name on a chart or in an export.
    pub fn label(self) -> &'static str {
        match self {
            RankTest::KruskalWallis => "Kruskal–Wallis H (chi-squared approximation)",
            RankTest::MannWhitneyExact => "Mann–Whitney U, two-sided, exact",
            RankTest::MannWhitneyNormal => {
                "Mann–Whitney U, two-sided, normal approximation with tie and continuity corrections"
            }
        }
    }
}

/// A rank test's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupTest {
    /// The test run.
    pub test: RankTest,
    /// H, or U of the first group (groups sorted by name); `None` where undefined (every value
    /// equal, for Kruskal–Wallis).
    pub statistic: Option<f64>,
    /// The p-value; `None` where undefined.
    pub p_value: Option<f64>,
    /// The groups, sorted, with their sizes.
    pub groups: Vec<(String, usize)>,
}

/// Ranks 1..n, ties given their mean rank; and the sizes of the groups of ties.
fn ranks(values: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut r = vec![0.0; values.len()];
    let mut ties = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let mean = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            r[k] = mean;
        }
        ties.push((j - i + 1) as f64);
        i = j + 1;
    }
    (r, ties)
}

/// Kruskal–Wallis H of the groups' values, and its p-value (chi-squared, groups − 1 degrees of
/// freedom). `None`s where every value is equal.
pub fn kruskal_wallis(groups: &[Vec<f64>]) -> (Option<f64>, Option<f64>) {
    if groups.len() < 2 || groups.iter().any(Vec::is_empty) {
        return (None, None);
    }
    let all: Vec<f64> = groups.iter().flatten().copied().collect();
    let n = all.len() as f64;
    let (r, ties) = ranks(&all);
    let mut h = 0.0;
    let mut k = 0;
    for g in groups {
        let sum: f64 = r[k..k + g.len()].iter().sum();
        h += sum * sum / g.len() as f64;
        k += g.len();
    }
    h = 12.0 / (n * (n + 1.0)) * h - 3.0 * (n + 1.0);
    let correction = 1.0 - ties.iter().map(|t| t * t * t - t).sum::<f64>() / (n * n * n - n);
    if correction <= 0.0 || !h.is_finite() {
        return (None, None);
    }
    h /= correction;
    let df = (groups.len() - 1) as f64;
    // H = 0 (rank sums in proportion to the groups' sizes): no evidence at all.
    let p = if h > 0.0 { gamma_ur(df / 2.0, h / 2.0) } else { 1.0 };
    (Some(h.max(0.0)), Some(p))
}

/// Mann–Whitney U of `x` (its U is returned) against `y`, the two-sided p-value, and the form
/// used, chosen as SciPy's `method="auto"` chooses: exact, unless both groups have more than 8
/// values or some values are tied.
pub fn mann_whitney(x: &[f64], y: &[f64]) -> (f64, f64, RankTest) {
    let (n1, n2) = (x.len() as f64, y.len() as f64);
    let all: Vec<f64> = x.iter().chain(y).copied().collect();
    let (r, ties) = ranks(&all);
    let u1 = r[..x.len()].iter().sum::<f64>() - n1 * (n1 + 1.0) / 2.0;
    let u = u1.max(n1 * n2 - u1);
    let tied = ties.iter().any(|&t| t > 1.0);
    if (x.len() > 8 && y.len() > 8) || tied {
        let n = n1 + n2;
        let sigma =
            (n1 * n2 / 12.0 * ((n + 1.0) - ties.iter().map(|t| t * t * t - t).sum::<f64>() / (n * (n - 1.0)))).sqrt();
        let p = if sigma > 0.0 {
            let z = (u - n1 * n2 / 2.0 - 0.5) / sigma;
            // 2·Φ(−z)
            erfc(z / std::f64::consts::SQRT_2)
        } else {
            1.0
        };
        return (u1, p.clamp(0.0, 1.0), RankTest::MannWhitneyNormal);
    }
    // The exact distribution of U: the arrangements of a values among b (a ≤ 8 here), by U, are
    // the coefficients of the Gaussian binomial ∏ (1 − q^(b+i)) / (1 − q^i), i = 1..a: a·b + 1
    // numbers, built one factor at a time (each division a running sum).
    let (a, b) = (x.len().min(y.len()), x.len().max(y.len()));
    let max_u = a * b;
    let mut dist = vec![0.0; max_u + 1];
    dist[0] = 1.0;
    for i in 1..=a {
        for k in (b + i..=max_u).rev() {
            dist[k] -= dist[k - b - i];
        }
        for k in i..=max_u {
            dist[k] += dist[k - i];
        }
    }
    let total: f64 = dist.iter().sum();
    let at_least = u.round() as usize;
    let p = 2.0 * dist[at_least.min(max_u + 1)..].iter().sum::<f64>() / total;
    (u1, p.clamp(0.0, 1.0), RankTest::MannWhitneyExact)
}

/// Tests one value per sample between the groups `labels` names, as the `onecodex` library's
/// `alpha_diversity_stats` does: samples without a value or a group are left out, then groups
/// of one sample; two groups are compared by Mann–Whitney U, more by Kruskal–Wallis.
pub fn group_test(values: &[Option<f64>], labels: &[Option<String>]) -> Result<GroupTest, Error> {
    if values.len() != labels.len() {
        return Err(Error::Groups(format!("{} group labels for {} samples", labels.len(), values.len())));
    }
    let mut by_group: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (v, l) in values.iter().zip(labels) {
        if let (Some(v), Some(l)) = (v, l)
            && v.is_finite()
        {
            by_group.entry(l.as_str()).or_default().push(*v);
        }
    }
    by_group.retain(|_, v| v.len() >= 2);
    if by_group.len() < 2 {
        return Err(Error::Groups(
            "a test needs at least two groups of two samples or more with a value (groups of one sample are left out)"
                .into(),
        ));
    }
    let groups: Vec<(String, usize)> = by_group.iter().map(|(k, v)| ((*k).to_owned(), v.len())).collect();
    let vals: Vec<Vec<f64>> = by_group.into_values().collect();
    if vals.len() == 2 {
        let (u, p, test) = mann_whitney(&vals[0], &vals[1]);
        return Ok(GroupTest { test, statistic: Some(u), p_value: Some(p), groups });
    }
    let (h, p) = kruskal_wallis(&vals);
    Ok(GroupTest { test: RankTest::KruskalWallis, statistic: h, p_value: p, groups })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mann_whitney_exact_matches_the_count_of_arrangements() {
        // Complete separation of 3 against 3: U = 9 in 1 of C(6,3) = 20 arrangements each way.
        let (u, p, test) = mann_whitney(&[4.0, 5.0, 6.0], &[1.0, 2.0, 3.0]);
        assert_eq!((u, test), (9.0, RankTest::MannWhitneyExact));
        assert!((p - 0.1).abs() < 1e-15);
        // All values tied: no evidence at all.
        let (_, p, test) = mann_whitney(&[1.0, 1.0], &[1.0, 1.0]);
        assert_eq!((p, test), (1.0, RankTest::MannWhitneyNormal));
        // 2 against 3: the 10 arrangements give U = 0..6 in 1, 1, 2, 2, 2, 1, 1 ways.
        let (u, p, _) = mann_whitney(&[1.0, 2.0], &[3.0, 4.0, 5.0]);
        assert_eq!(u, 0.0);
        assert!((p - 0.2).abs() < 1e-15, "{p}");
        // U of the first is 2; the larger U is 4, reached or passed in 4 of 10: p = 0.8.
        let (u, p, _) = mann_whitney(&[1.0, 4.0], &[2.0, 3.0, 5.0]);
        assert_eq!(u, 2.0);
        assert!((p - 0.8).abs() < 1e-15, "{p}");
    }

    #[test]
    fn kruskal_wallis_of_separated_groups() {
        let (h, p) = kruskal_wallis(&[vec![1.0, 2.0, 3.0], vec![4.0, 5.0, 6.0], vec![7.0, 8.0, 9.0]]);
        // H = 12/(9·10)·(36 + 225 + 576)/3 − 30 = 7.2; p = exp(−3.6) for 2 degrees of freedom.
        assert!((h.unwrap() - 7.2).abs() < 1e-12);
        assert!((p.unwrap() - (-3.6f64).exp()).abs() < 1e-12);
        assert_eq!(kruskal_wallis(&[vec![2.0, 2.0], vec![2.0, 2.0]]), (None, None));
        // Balanced rank sums: H is 0 and p is 1 (as SciPy).
        assert_eq!(kruskal_wallis(&[vec![1.0, 6.0], vec![2.0, 5.0], vec![3.0, 4.0]]), (Some(0.0), Some(1.0)));
        assert_eq!(kruskal_wallis(&[vec![1.0, 2.0]]), (None, None));
    }

    #[test]
    fn group_test_leaves_out_what_cannot_be_tested() {
        let values = [Some(1.0), Some(2.0), None, Some(5.0), Some(6.0), Some(9.0)];
        let labels = ["a", "a", "a", "b", "b", "c"].map(|s| Some(s.to_owned()));
        let t = group_test(&values, &labels).unwrap();
        assert_eq!(t.groups, vec![("a".to_owned(), 2), ("b".to_owned(), 2)]);
        assert_eq!(t.test, RankTest::MannWhitneyExact);
        assert!(group_test(&values[..3], &labels[..3]).is_err());
    }
}
