//! PERMANOVA: whether samples of different groups are further apart than samples of one group
//! (Anderson 2001), as scikit-bio's `permanova`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::numpy_rng::NumpyRng;
use crate::{DistanceMatrix, Error};

/// The most permutations run.
pub const MAX_PERMUTATIONS: usize = 100_000;

/// A PERMANOVA's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Permanova {
    /// The pseudo-F statistic (infinite when the groups have no spread within them; `None`
    /// when no sample differs from any other).
    pub pseudo_f: Option<f64>,
    /// (permuted F ≥ F, plus 1) over (permutations + 1); `None` with no permutation or no F.
    pub p_value: Option<f64>,
    /// Permutations run.
    pub permutations: usize,
    /// The seed of the permutations: numpy's `default_rng(seed)`, so scikit-bio's
    /// `permanova(…, permutations, seed=seed)` draws the same permutations and gives the same
    /// p-value.
    pub seed: u64,
    /// The groups, sorted, with their sizes.
    pub groups: Vec<(String, usize)>,
    /// Samples tested.
    pub samples: usize,
}

/// Tests the grouping `labels` (one per sample of `dm`) with `permutations` permutations of the
/// labels drawn from `seed`.
pub fn permanova(dm: &DistanceMatrix, labels: &[String], permutations: usize, seed: u64) -> Result<Permanova, Error> {
    let n = dm.len();
    if labels.len() != n {
        return Err(Error::Groups(format!("{} group labels for {n} samples", labels.len())));
    }
    if permutations > MAX_PERMUTATIONS {
        return Err(Error::Groups(format!("at most {MAX_PERMUTATIONS} permutations, not {permutations}")));
    }
    let mut sizes: BTreeMap<&str, usize> = BTreeMap::new();
    for l in labels {
        *sizes.entry(l.as_str()).or_default() += 1;
    }
    let g = sizes.len();
    if g < 2 {
        return Err(Error::Groups("PERMANOVA needs samples in at least two groups".into()));
    }
    if g == n {
        return Err(Error::Groups(
            "every sample is in a group of its own: PERMANOVA needs a group with two samples or more".into(),
        ));
    }
    let code_of: BTreeMap<&str, u32> = sizes.keys().enumerate().map(|(i, k)| (*k, i as u32)).collect();
    let codes: Vec<u32> = labels.iter().map(|l| code_of[l.as_str()]).collect();
    let group_sizes: Vec<f64> = sizes.values().map(|&s| s as f64).collect();
    // Squared distances of the upper triangle, row by row.
    let mut d2 = Vec::with_capacity(n * n.saturating_sub(1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            d2.push(dm.d[i][j] * dm.d[i][j]);
        }
    }
    let s_t = d2.iter().sum::<f64>() / n as f64;
    // s_W summed row by row, as scikit-bio sums it: a permutation that only swaps the groups'
    // names then gives the very same F (summed group by group, it could differ in the last bit
    // and miss a tie).
    let f_of = |codes: &[u32]| -> f64 {
        let mut s_w = 0.0;
        let mut k = 0;
        for (i, &ci) in codes.iter().enumerate() {
            let mut row = 0.0;
            for &cj in &codes[i + 1..] {
                if ci == cj {
                    row += d2[k];
                }
                k += 1;
            }
            s_w += row / group_sizes[ci as usize];
        }
        ((s_t - s_w) / (g - 1) as f64) / (s_w / (n - g) as f64)
    };
    let f = f_of(&codes);
    let mut rng = NumpyRng::new(seed);
    let mut at_least = 0usize;
    for _ in 0..permutations {
        // NaN ≥ NaN is false, as in scikit-bio.
        if f_of(&rng.permutation(&codes)) >= f {
            at_least += 1;
        }
    }
    Ok(Permanova {
        pseudo_f: (!f.is_nan()).then_some(f),
        // No F (no sample differs from any other): nothing to test, where scikit-bio would say
        // 1/(permutations + 1).
        p_value: (permutations > 0 && !f.is_nan()).then(|| (at_least + 1) as f64 / (permutations + 1) as f64),
        permutations,
        seed,
        groups: sizes.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        samples: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(points: &[f64]) -> DistanceMatrix {
        DistanceMatrix {
            ids: (0..points.len()).map(|i| i.to_string()).collect(),
            d: points.iter().map(|a| points.iter().map(|b| f64::abs(a - b)).collect()).collect(),
        }
    }

    #[test]
    fn separated_groups_are_significant_and_mixed_ones_are_not() {
        let labels: Vec<String> = ["a", "a", "a", "a", "b", "b", "b", "b"].map(String::from).to_vec();
        let apart = permanova(&matrix(&[0.0, 0.1, 0.2, 0.3, 5.0, 5.1, 5.2, 5.3]), &labels, 999, 42).unwrap();
        assert!(apart.pseudo_f.unwrap() > 100.0);
        // 2 of the 70 ways to split 8 samples into two fours separate them this well.
        assert!(apart.p_value.unwrap() < 0.05, "{apart:?}");
        let mixed = permanova(&matrix(&[0.0, 5.0, 0.1, 5.1, 0.2, 5.2, 0.3, 5.3]), &labels, 999, 42).unwrap();
        assert!(mixed.p_value.unwrap() > 0.3, "{mixed:?}");
        assert_eq!(apart.groups, vec![("a".to_owned(), 4), ("b".to_owned(), 4)]);
    }

    #[test]
    fn groups_must_allow_a_test() {
        let one: Vec<String> = vec!["a".into(); 3];
        assert!(permanova(&matrix(&[0.0, 1.0, 2.0]), &one, 9, 1).is_err());
        let unique: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        assert!(permanova(&matrix(&[0.0, 1.0, 2.0]), &unique, 9, 1).is_err());
    }
}
