//! Classification results from the real service's fixtures.

use std::path::PathBuf;

use mgds_api::ClassificationResults;
use mgds_formats::{TaxTree, species_abundances};

fn fixture(id: &str) -> ClassificationResults {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/reference/fixtures/api/v1/classifications_results")
        .join(format!("{id}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn fixture_becomes_a_species_abundance_table() {
    let results = fixture("b50c176668234fe7");
    let species = species_abundances(&results);
    assert_eq!(species.len(), 717);
    assert!(species.iter().all(|r| r.rank == "species"));
    let ids: Vec<&str> = species.iter().take(4).map(|r| r.tax_id.as_str()).collect();
    assert_eq!(ids, ["562", "239935", "218538", "1263072"]);
    assert_eq!(species[0].name, "Escherichia coli");
    // Rows with an abundance first, in decreasing order; they add up to 1.
    let with: Vec<f64> = species.iter().map_while(|r| r.abundance).collect();
    assert_eq!(with.len(), 576);
    assert!(with.windows(2).all(|w| w[0] >= w[1]));
    assert!((with.iter().sum::<f64>() - 1.0).abs() < 1e-6);
    // Then the rest by reads, most first.
    let rest = &species[576..];
    assert!(rest.iter().all(|r| r.abundance.is_none()));
    assert_eq!(rest[0].tax_id, "712469");
    assert!(rest.windows(2).all(|w| w[0].readcount_w_children >= w[1].readcount_w_children));

    let small = fixture("0f4ee4ecb3a3412f");
    let names: Vec<&str> = species_abundances(&small).iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["Bacteroides uniformis", "Roseburia faecis", "Clostridium sp. AT4"]);
}

#[test]
fn fixture_tax_tree() {
    let results = fixture("b50c176668234fe7");
    let tree = TaxTree::from_results(&results).unwrap();
    assert_eq!(tree.lineage(562), [562, 561, 543, 91347, 1236, 1224, 2, 131567, 1]);
    let e_coli = tree.descendants([562]);
    assert_eq!(e_coli.len(), 266);
    assert!(e_coli.contains(&1455601) && !e_coli.contains(&561));
    assert_eq!(tree.descendants([561]).len(), 288);
    assert_eq!(tree.descendants([1]).len(), results.table.len());
    assert_eq!(tree.children(561).len(), 14);
}
