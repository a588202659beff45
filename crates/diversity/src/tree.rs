//! The taxonomy as UniFrac's tree, as the `onecodex` library builds it: every taxon a node with
//! a branch of length 1 to its parent (the root, tax id 1, too), cut back to the taxa at the
//! rank compared and their ancestors. Nodes with one child are kept: each rank between a taxon
//! and the root adds one to its depth.

use std::collections::HashMap;

use crate::Error;

/// The root's tax id.
const ROOT: &str = "1";

/// Taxa and their parents (from classification results: `tax_id`, `parent_tax_id`).
#[derive(Debug, Clone, Default)]
pub struct Taxonomy {
    parents: HashMap<String, Option<String>>,
}

impl Taxonomy {
    /// An empty taxonomy.
    pub fn new() -> Taxonomy {
        Taxonomy::default()
    }

    /// Adds a taxon and its parent (none, or itself, for the root). A taxon added twice keeps
    /// its first parent.
    pub fn add(&mut self, tax_id: &str, parent: Option<&str>) {
        let parent = parent.filter(|p| *p != tax_id).map(str::to_owned);
        self.parents.entry(tax_id.to_owned()).or_insert(parent);
    }

    /// The taxa in it.
    pub fn len(&self) -> usize {
        self.parents.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }

    /// A taxon's lineage, itself first, up to the root (which is always last). A taxon whose
    /// parent is unknown hangs from the root; a loop in the parents ends the walk.
    pub(crate) fn lineage(&self, tax_id: &str) -> Result<Vec<String>, Error> {
        if !self.parents.contains_key(tax_id) {
            return Err(Error::UnknownTaxon(tax_id.to_owned()));
        }
        let mut out = vec![tax_id.to_owned()];
        let mut at = tax_id;
        while at != ROOT {
            match self.parents.get(at).and_then(Option::as_deref) {
                Some(p) if self.parents.contains_key(p) && !out.iter().any(|x| x == p) => {
                    out.push(p.to_owned());
                    at = p;
                }
                _ => break,
            }
        }
        if out.last().map(String::as_str) != Some(ROOT) {
            out.push(ROOT.to_owned());
        }
        Ok(out)
    }
}

/// The tree over a set of taxa (the columns compared): its nodes, each taxon's nodes, and each
/// node's depth where it is a tip.
pub(crate) struct Tree {
    /// Nodes on the way from each taxon (a column) up to the root, as node indices.
    pub paths: Vec<Vec<usize>>,
    /// For each node: the number of nodes from it up to the root, both counted (its distance to
    /// the root's parent, every branch of length 1); meaningful for tips.
    pub depth: Vec<f64>,
    /// Whether a node is a tip (no other node of the tree below it).
    pub tip: Vec<bool>,
}

impl Tree {
    pub(crate) fn new(taxonomy: &Taxonomy, taxa: &[String]) -> Result<Tree, Error> {
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut names: Vec<String> = Vec::new();
        let mut paths = Vec::with_capacity(taxa.len());
        let mut has_child: Vec<bool> = Vec::new();
        for t in taxa {
            let lineage = taxonomy.lineage(t)?;
            let mut path = Vec::with_capacity(lineage.len());
            for (k, node) in lineage.iter().enumerate() {
                let i = *index.entry(node.clone()).or_insert_with(|| {
                    names.push(node.clone());
                    has_child.push(false);
                    names.len() - 1
                });
                if k > 0 {
                    has_child[i] = true;
                }
                path.push(i);
            }
            paths.push(path);
        }
        if let Some(path) = paths.iter().find(|p| has_child[p[0]]) {
            return Err(Error::NotATip(names[path[0]].clone()));
        }
        let mut depth = vec![0.0; names.len()];
        for path in &paths {
            depth[path[0]] = path.len() as f64;
        }
        Ok(Tree { paths, depth, tip: has_child.iter().map(|c| !c).collect() })
    }

    pub(crate) fn nodes(&self) -> usize {
        self.depth.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lineages_reach_the_root_whatever_the_parents_say() {
        let mut t = Taxonomy::new();
        t.add("1", Some("1"));
        t.add("2", Some("1"));
        t.add("562", Some("561"));
        t.add("561", Some("2"));
        t.add("99", Some("404"));
        t.add("7", Some("8"));
        t.add("8", Some("7"));
        assert_eq!(t.lineage("562").unwrap(), ["562", "561", "2", "1"]);
        assert_eq!(t.lineage("99").unwrap(), ["99", "1"]);
        assert_eq!(t.lineage("7").unwrap(), ["7", "8", "1"]);
        assert_eq!(t.lineage("x"), Err(Error::UnknownTaxon("x".into())));
        let tree = Tree::new(&t, &["562".into(), "99".into()]).unwrap();
        assert_eq!(tree.nodes(), 5);
        assert_eq!(tree.depth[tree.paths[0][0]], 4.0);
        assert!(tree.tip[tree.paths[1][0]] && !tree.tip[tree.paths[0][1]]);
        assert_eq!(Tree::new(&t, &["562".into(), "561".into()]).err(), Some(Error::NotATip("561".into())));
    }
}
