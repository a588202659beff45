//! Diversity figures against scikit-bio: the same abundance tables give the same alpha values,
//! distance matrices, principal coordinates (up to each axis's sign, on axes whose eigenvalues
//! are distinct), PERMANOVA (the same p-value for the same seed) and rank tests, to 1e-9. The
//! reference is scikit-bio as the pinned `onecodex` 1.2.0 pins it (with SciPy and scikit-learn),
//! in the Python environment of the `onecodex` tests (`tests/onecodex/skbio_diversity.py`).

use std::process::Command;

use mgds_diversity::{AlphaMetric, BetaMetric, Taxonomy, alpha, beta, group_test, pcoa, permanova};
use serde_json::{Value, json};

use crate::python_env::{python, python_tests};

const TOLERANCE: f64 = 1e-9;

/// A table of `samples` × `taxa` read counts under a taxonomy of genera, families and a "no
/// rank" node, drawn from `seed`; some counts are 0, 1 and 2 (for Chao1).
struct Case {
    ids: Vec<String>,
    taxa: Vec<String>,
    rows: Vec<Vec<f64>>,
    parents: Vec<(String, Option<String>)>,
    groups: Vec<String>,
}

fn case(samples: usize, taxa: usize, groups: usize, seed: u64) -> Case {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut parents: Vec<(String, Option<String>)> =
        vec![("1".into(), None), ("131567".into(), Some("1".into())), ("2".into(), Some("131567".into()))];
    for f in 0..3 {
        parents.push((format!("90{f}"), Some("2".into())));
    }
    for g in 0..6 {
        parents.push((format!("80{g}"), Some(format!("90{}", g % 3))));
    }
    let taxa: Vec<String> = (0..taxa).map(|t| format!("{}", 1000 + t)).collect();
    for t in &taxa {
        let g = next() % 6;
        parents.push((t.clone(), Some(format!("80{g}"))));
    }
    let rows = (0..samples)
        .map(|s| {
            (0..taxa.len())
                .map(|t| match next() % 10 {
                    0..=2 => 0.0,
                    3 => 1.0,
                    4 => 2.0,
                    _ => ((next() % 500) + (s * 7 + t) as u64 % 50) as f64,
                })
                .collect()
        })
        .collect();
    Case {
        ids: (0..samples).map(|s| format!("sample{s}")).collect(),
        taxa,
        rows,
        parents,
        groups: (0..samples).map(|s| format!("group{}", (s * 7 + 3) % groups)).collect(),
    }
}

const PERMUTATIONS: usize = 999;
const SEED: u64 = 42;

fn reference(c: &Case) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("case.json");
    let parents: serde_json::Map<String, Value> = c.parents.iter().map(|(t, p)| (t.clone(), json!(p))).collect();
    let body = json!({
        "samples": c.ids, "taxa": c.taxa, "rows": c.rows, "parents": parents,
        "groups": c.groups, "permutations": PERMUTATIONS, "seed": SEED,
    });
    std::fs::write(&input, body.to_string()).unwrap();
    let out = Command::new(python()).arg(python_tests().join("skbio_diversity.py")).arg(&input).output().unwrap();
    assert!(out.status.success(), "skbio_diversity.py failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn close(what: &str, ours: f64, theirs: &Value) {
    let theirs = theirs.as_f64().unwrap_or_else(|| panic!("{what}: scikit-bio gave {theirs}, MGDS {ours}"));
    assert!((ours - theirs).abs() <= TOLERANCE * theirs.abs().max(1.0), "{what}: MGDS {ours}, scikit-bio {theirs}");
}

fn check(c: &Case) {
    let sk = reference(c);
    let mut taxonomy = Taxonomy::new();
    for (t, p) in &c.parents {
        taxonomy.add(t, p.as_deref());
    }
    for m in AlphaMetric::ALL {
        for (s, row) in c.rows.iter().enumerate() {
            let theirs = &sk["alpha"][m.key()][s];
            match alpha(m, row) {
                Some(v) => close(&format!("{} of {}", m.key(), c.ids[s]), v, theirs),
                None => assert!(theirs.is_null(), "{} of {}: MGDS none, scikit-bio {theirs}", m.key(), c.ids[s]),
            }
        }
    }
    let mut compared = 0;
    for m in BetaMetric::ALL {
        let theirs = &sk["beta"][m.key()];
        let dm = match beta(m, &c.ids, &c.taxa, &c.rows, Some(&taxonomy)) {
            Ok(dm) => dm,
            Err(e) => {
                assert!(theirs.is_null(), "{}: MGDS refused ({e}) where scikit-bio answered", m.key());
                continue;
            }
        };
        compared += 1;
        for (i, row) in dm.d.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                close(&format!("{} {i},{j}", m.key()), *v, &theirs[i][j]);
            }
        }
        let o = pcoa(&dm);
        let them = &sk["pcoa"][m.key()];
        for (k, l) in o.eigenvalues.iter().enumerate() {
            close(&format!("PCoA of {}: eigenvalue {k}", m.key()), *l, &them["eigenvalues"][k]);
            close(
                &format!("PCoA of {}: share of variance {k}", m.key()),
                o.proportion_explained[k],
                &them["proportion_explained"][k],
            );
        }
        // Coordinates on the axes whose eigenvalue is positive and apart from its neighbours',
        // each axis's sign matched first.
        for k in 0..o.eigenvalues.len() {
            let l = o.eigenvalues[k];
            let distinct = l > 1e-6
                && (k == 0 || (o.eigenvalues[k - 1] - l).abs() > 1e-6)
                && (k + 1 == o.eigenvalues.len() || (o.eigenvalues[k + 1] - l).abs() > 1e-6);
            if !distinct {
                continue;
            }
            let theirs: Vec<f64> =
                (0..dm.len()).map(|i| them["coordinates"][i][k].as_f64().expect("a coordinate")).collect();
            let dot: f64 = (0..dm.len()).map(|i| o.coordinates[i][k] * theirs[i]).sum();
            let sign = if dot < 0.0 { -1.0 } else { 1.0 };
            for (i, t) in theirs.iter().enumerate() {
                close(&format!("PCoA of {}: sample {i} on axis {k}", m.key()), o.coordinates[i][k], &json!(sign * t));
            }
        }
    }
    assert!(compared >= 4, "at least four distances compared");
    let bc = beta(BetaMetric::BrayCurtis, &c.ids, &c.taxa, &c.rows, None).unwrap();
    let p = permanova(&bc, &c.groups, PERMUTATIONS, SEED).unwrap();
    close("PERMANOVA pseudo-F", p.pseudo_f.unwrap(), &sk["permanova"]["pseudo_f"]);
    assert_eq!(
        p.p_value.unwrap(),
        sk["permanova"]["p_value"].as_f64().unwrap(),
        "PERMANOVA p-value of the same permutations (seed {SEED})"
    );
    let shannon: Vec<Option<f64>> = c.rows.iter().map(|r| alpha(AlphaMetric::Shannon, r)).collect();
    let labels: Vec<Option<String>> = c.groups.iter().cloned().map(Some).collect();
    let t = group_test(&shannon, &labels).unwrap();
    close("group test statistic", t.statistic.unwrap(), &sk["group_test"]["statistic"]);
    close("group test p-value", t.p_value.unwrap(), &sk["group_test"]["p_value"]);
}

#[test]
fn diversity_agrees_with_scikit_bio_on_two_groups() {
    check(&case(8, 12, 2, 1));
}

#[test]
fn diversity_agrees_with_scikit_bio_on_three_groups_and_many_taxa() {
    check(&case(30, 60, 3, 2));
}

/// Three groups of three: a permutation often only renames the groups, and must then tie with
/// the observed F exactly, as in scikit-bio, for the p-values to be equal.
#[test]
fn diversity_agrees_with_scikit_bio_on_three_groups_of_three() {
    check(&case(9, 15, 3, 4));
}

#[test]
fn diversity_agrees_with_scikit_bio_with_an_empty_sample_and_a_duplicate() {
    let mut c = case(12, 20, 2, 3);
    c.rows[4] = vec![0.0; c.taxa.len()];
    c.rows[7] = c.rows[2].clone();
    c.rows[9] = c.rows[2].iter().map(|v| v * 3.0).collect();
    check(&c);
}
