//! Principal coordinates analysis of a distance matrix, as scikit-bio's `pcoa` (method `eigh`).

use nalgebra::{DMatrix, SymmetricEigen};
use serde::{Deserialize, Serialize};

use crate::DistanceMatrix;

/// Eigenvalues this close to 0 count as 0 (scikit-bio's `np.isclose(λ, 0)`).
const ZERO: f64 = 1e-8;

/// The samples placed on principal axes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ordination {
    /// The samples, in order.
    pub ids: Vec<String>,
    /// Each axis's eigenvalue, largest first; negative ones (a distance that is not Euclidean)
    /// are set to 0 with their axes.
    pub eigenvalues: Vec<f64>,
    /// Each axis's share of the variance: its eigenvalue over the sum of the positive ones.
    pub proportion_explained: Vec<f64>,
    /// `coordinates[sample][axis]`. Each axis's sign is chosen so that its coordinate of
    /// largest magnitude is positive (an axis's sign is otherwise arbitrary).
    pub coordinates: Vec<Vec<f64>>,
}

/// PCoA: the matrix of −d²/2, double-centred (Gower), its eigenvectors scaled by the square
/// roots of their eigenvalues. Every axis is returned (as many as samples).
pub fn pcoa(dm: &DistanceMatrix) -> Ordination {
    let n = dm.len();
    if n == 0 {
        return Ordination {
            ids: Vec::new(),
            eigenvalues: Vec::new(),
            proportion_explained: Vec::new(),
            coordinates: Vec::new(),
        };
    }
    let mut e = DMatrix::<f64>::from_fn(n, n, |i, j| -0.5 * dm.d[i][j] * dm.d[i][j]);
    let row_means: Vec<f64> = (0..n).map(|i| e.row(i).sum() / n as f64).collect();
    let col_means: Vec<f64> = (0..n).map(|j| e.column(j).sum() / n as f64).collect();
    let grand = if n == 0 { 0.0 } else { e.sum() / (n * n) as f64 };
    for i in 0..n {
        for j in 0..n {
            e[(i, j)] = e[(i, j)] - row_means[i] - col_means[j] + grand;
        }
    }
    let eigen = SymmetricEigen::new(e);
    let mut axes: Vec<(f64, usize)> =
        eigen.eigenvalues.iter().enumerate().map(|(k, &l)| (if l.abs() <= ZERO { 0.0 } else { l }, k)).collect();
    axes.sort_by(|a, b| b.0.total_cmp(&a.0));
    let positive: f64 = axes.iter().map(|(l, _)| l.max(0.0)).sum();
    let mut coordinates = vec![vec![0.0; n]; n];
    let mut eigenvalues = Vec::with_capacity(n);
    let mut proportion_explained = Vec::with_capacity(n);
    for (axis, &(l, k)) in axes.iter().enumerate() {
        let l = l.max(0.0);
        eigenvalues.push(l);
        proportion_explained.push(if positive > 0.0 { l / positive } else { f64::NAN });
        if l == 0.0 {
            continue;
        }
        let v = eigen.eigenvectors.column(k);
        // The entry of largest magnitude (the first such) is made positive.
        let mut big = 0;
        for i in 1..n {
            if v[i].abs() > v[big].abs() {
                big = i;
            }
        }
        let sign = if v[big] < 0.0 { -1.0 } else { 1.0 };
        let scale = l.sqrt() * sign;
        for i in 0..n {
            coordinates[i][axis] = v[i] * scale;
        }
    }
    Ordination { ids: dm.ids.clone(), eigenvalues, proportion_explained, coordinates }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_on_a_line_keep_their_distances_on_the_first_axis() {
        let x = [0.0, 1.0, 3.0, 7.0];
        let d = x.iter().map(|a| x.iter().map(|b| f64::abs(a - b)).collect()).collect();
        let o = pcoa(&DistanceMatrix { ids: (0..4).map(|i| i.to_string()).collect(), d });
        assert!((o.proportion_explained[0] - 1.0).abs() < 1e-12);
        for i in 0..4 {
            for j in 0..4 {
                let got = (o.coordinates[i][0] - o.coordinates[j][0]).abs();
                assert!((got - (x[i] - x[j]).abs()).abs() < 1e-9);
            }
        }
        // The point furthest from the centre (7) is on the positive side.
        assert!(o.coordinates[3][0] > 0.0);
        assert!(o.eigenvalues[1..].iter().all(|&l| l == 0.0));
    }
}
