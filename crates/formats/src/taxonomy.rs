//! Helpers over classification results: the tax tree and the species abundance table.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};

use mgds_api::{ClassificationResults, TaxonRow};

use crate::error::Error;

/// An NCBI taxonomy id.
pub type TaxId = u64;

/// Reads a tax id as the API writes it (a decimal string).
pub fn parse_tax_id(s: &str) -> Option<TaxId> {
    let s = s.trim();
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The taxonomy tree spanned by a classification table: each row's `parent_tax_id` link.
///
/// Only taxa in the table are known (as in the results themselves).
#[derive(Debug, Clone, Default)]
pub struct TaxTree {
    parents: HashMap<TaxId, TaxId>,
    children: HashMap<TaxId, Vec<TaxId>>,
}

impl TaxTree {
    /// Builds the tree from a results table. Fails with [`Error::BadTaxId`] on a tax id that is
    /// not a whole number.
    pub fn from_results(results: &ClassificationResults) -> Result<TaxTree, Error> {
        let mut tree = TaxTree::default();
        for row in &results.table {
            let id = row_tax_id(row, &row.tax_id)?;
            let Some(parent) = &row.parent_tax_id else {
                continue;
            };
            let parent = row_tax_id(row, parent)?;
            // The root is sometimes its own parent in NCBI dumps; it has no parent here.
            if parent != id {
                tree.parents.insert(id, parent);
                tree.children.entry(parent).or_default().push(id);
            }
        }
        for kids in tree.children.values_mut() {
            kids.sort_unstable();
            kids.dedup();
        }
        Ok(tree)
    }

    /// The parent of `id`, if the table gives one.
    pub fn parent(&self, id: TaxId) -> Option<TaxId> {
        self.parents.get(&id).copied()
    }

    /// Every child → parent link.
    pub fn parents(&self) -> &HashMap<TaxId, TaxId> {
        &self.parents
    }

    /// The direct children of `id` in the table, in ascending order.
    pub fn children(&self, id: TaxId) -> &[TaxId] {
        self.children.get(&id).map_or(&[], Vec::as_slice)
    }

    /// `ids` and all their descendants in the table (what `--with-children` selects). An id not
    /// in the table is kept as given.
    pub fn descendants(&self, ids: impl IntoIterator<Item = TaxId>) -> BTreeSet<TaxId> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<TaxId> = ids.into_iter().collect();
        while let Some(id) = stack.pop() {
            // `seen` also guards against a cycle in a damaged table.
            if seen.insert(id) {
                stack.extend_from_slice(self.children(id));
            }
        }
        seen
    }

    /// `id` and its ancestors up to the root, nearest first.
    pub fn lineage(&self, id: TaxId) -> Vec<TaxId> {
        let mut out = vec![id];
        let mut current = id;
        while let Some(parent) = self.parent(current) {
            if out.contains(&parent) {
                break;
            }
            out.push(parent);
            current = parent;
        }
        out
    }
}

fn row_tax_id(row: &TaxonRow, value: &str) -> Result<TaxId, Error> {
    parse_tax_id(value).ok_or_else(|| Error::BadTaxId { tax_id: value.to_owned(), name: row.name.clone() })
}

/// The species rows of a results table (rank `species`), most abundant first.
///
/// Rows are ordered by `abundance` (rows without one after all rows with one), then by
/// `readcount_w_children` (the species' reads including its strains, which is what a species'
/// count means; `readcount` alone misses reads placed on strains), then by tax id so the order is
/// stable.
pub fn species_abundances(results: &ClassificationResults) -> Vec<&TaxonRow> {
    let mut rows: Vec<&TaxonRow> = results.table.iter().filter(|r| r.rank == "species").collect();
    rows.sort_by(|a, b| {
        let by_abundance = match (a.abundance, b.abundance) {
            (Some(x), Some(y)) => y.total_cmp(&x),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        };
        by_abundance
            .then(b.readcount_w_children.cmp(&a.readcount_w_children))
            .then_with(|| numeric_id_order(&a.tax_id, &b.tax_id))
    });
    rows
}

fn numeric_id_order(a: &str, b: &str) -> Ordering {
    match (parse_tax_id(a), parse_tax_id(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, parent: Option<&str>, rank: &str, rc: u64, ab: Option<f64>) -> TaxonRow {
        TaxonRow {
            tax_id: id.into(),
            name: format!("taxon {id}"),
            rank: rank.into(),
            parent_tax_id: parent.map(Into::into),
            readcount: rc,
            readcount_w_children: rc,
            abundance: ab,
            abundance_w_children: None,
            filtered_readcount: None,
            filtered_readcount_w_children: None,
            reestimated_abundance: None,
            bases_abundance: None,
        }
    }

    fn results(table: Vec<TaxonRow>) -> ClassificationResults {
        ClassificationResults { table, n_reads: 100, host_tax_ids: vec![], median_read_length: None, qc: None }
    }

    #[test]
    fn tree_descendants_and_lineage() {
        let r = results(vec![
            row("1", None, "no rank", 0, None),
            row("2", Some("1"), "superkingdom", 0, None),
            row("561", Some("2"), "genus", 0, None),
            row("562", Some("561"), "species", 5, None),
            row("83333", Some("562"), "strain", 3, None),
            row("1280", Some("2"), "species", 2, None),
        ]);
        let t = TaxTree::from_results(&r).unwrap();
        assert_eq!(t.descendants([561]), BTreeSet::from([561, 562, 83333]));
        assert_eq!(t.descendants([562, 1280]), BTreeSet::from([562, 1280, 83333]));
        // Not in the table: kept as given, as `onecodex subset_reads --with-children` does.
        assert_eq!(t.descendants([9999]), BTreeSet::from([9999]));
        assert_eq!(t.children(2), &[561, 1280]);
        assert_eq!(t.lineage(83333), vec![83333, 562, 561, 2, 1]);
        assert_eq!(t.parent(1), None);
    }

    #[test]
    fn cycles_do_not_hang() {
        let r = results(vec![row("5", Some("6"), "x", 0, None), row("6", Some("5"), "x", 0, None)]);
        let t = TaxTree::from_results(&r).unwrap();
        assert_eq!(t.descendants([5]), BTreeSet::from([5, 6]));
        assert_eq!(t.lineage(5), vec![5, 6]);
    }

    #[test]
    fn bad_tax_id_is_an_error() {
        let r = results(vec![row("abc", Some("1"), "species", 0, None)]);
        let e = TaxTree::from_results(&r).unwrap_err();
        assert!(e.to_string().contains("tax id `abc` (taxon `taxon abc`)"), "{e}");
    }

    #[test]
    fn species_sorted_by_abundance_then_reads() {
        let r = results(vec![
            row("10", Some("1"), "species", 50, None),
            row("11", Some("1"), "species", 5, Some(0.2)),
            row("12", Some("1"), "genus", 500, Some(0.9)),
            row("13", Some("1"), "species", 7, Some(0.7)),
            row("14", Some("1"), "species", 60, None),
            row("9", Some("1"), "species", 50, None),
        ]);
        let ids: Vec<&str> = species_abundances(&r).iter().map(|r| r.tax_id.as_str()).collect();
        assert_eq!(ids, ["13", "11", "14", "9", "10"]);
    }
}
