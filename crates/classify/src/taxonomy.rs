//! The taxonomy as a flat array, parents before children, read from NCBI dump files.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use mgds_formats::TaxId;

use crate::error::Error;

/// The NCBI tax id of the root of the taxonomy.
pub const ROOT_TAX_ID: TaxId = 1;

/// A taxonomy: taxa in one flat array where every parent comes before its children (index 0 is
/// the root), with their tax ids, names and ranks.
///
/// Because a parent's index is always smaller than its children's, the lowest common ancestor
/// of two taxa is found by repeatedly moving the larger index to its parent, with no depth table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taxonomy {
    tax_ids: Vec<TaxId>,
    // parents[0] == 0: the root is its own parent.
    parents: Vec<u32>,
    ranks: Vec<String>,
    names: Vec<String>,
    index: HashMap<TaxId, u32>,
}

impl Taxonomy {
    /// Reads `nodes.dmp` and `names.dmp` (NCBI taxdump format, fields separated by `\t|\t`).
    ///
    /// Every taxon must reach the root (tax id 1) and have a `scientific name`.
    pub fn from_dmp(nodes: &Path, names: &Path) -> Result<Taxonomy, Error> {
        let open = |path: &Path| {
            File::open(path)
                .map(|f| BufReader::with_capacity(1 << 16, f))
                .map_err(|source| Error::Io { path: path.to_owned(), source })
        };
        Taxonomy::parse_dmp(open(nodes)?, nodes, open(names)?, names)
    }

    /// Reads the two dump files from readers; the paths are used in messages.
    pub fn parse_dmp(
        nodes: impl BufRead,
        nodes_path: &Path,
        names: impl BufRead,
        names_path: &Path,
    ) -> Result<Taxonomy, Error> {
        // BTreeMap: children are later visited in tax id order, so the flat order is
        // deterministic whatever the order of the lines.
        let mut parent_of: BTreeMap<TaxId, (TaxId, String)> = BTreeMap::new();
        for_each_row(nodes, nodes_path, |line, fields| {
            if fields.len() < 3 {
                return Err(Error::table(
                    nodes_path,
                    line,
                    "expected at least 3 fields (tax_id | parent tax_id | rank) separated by `\\t|\\t`; is this a nodes.dmp file?",
                ));
            }
            let id = parse_id(fields[0], nodes_path, line, "tax id")?;
            let parent = parse_id(fields[1], nodes_path, line, "parent tax id")?;
            if parent_of.insert(id, (parent, fields[2].to_owned())).is_some() {
                return Err(Error::table(nodes_path, line, format!("tax id {id} appears twice")));
            }
            Ok(())
        })?;
        let mut name_of: HashMap<TaxId, String> = HashMap::new();
        for_each_row(names, names_path, |line, fields| {
            if fields.len() < 4 {
                return Err(Error::table(
                    names_path,
                    line,
                    "expected 4 fields (tax_id | name | unique name | name class) separated by `\\t|\\t`; is this a names.dmp file?",
                ));
            }
            if fields[3] == "scientific name" {
                let id = parse_id(fields[0], names_path, line, "tax id")?;
                name_of.insert(id, fields[1].to_owned());
            }
            Ok(())
        })?;

        let problem = |message: String| Error::Taxonomy { path: nodes_path.to_owned(), message };
        if !parent_of.contains_key(&ROOT_TAX_ID) {
            return Err(problem(format!("there is no root (tax id {ROOT_TAX_ID})")));
        }
        let mut children: BTreeMap<TaxId, Vec<TaxId>> = BTreeMap::new();
        for (&id, (parent, _)) in &parent_of {
            if id == ROOT_TAX_ID {
                continue;
            }
            if !parent_of.contains_key(parent) {
                return Err(problem(format!("tax id {id} has parent {parent}, which is not in the file")));
            }
            children.entry(*parent).or_default().push(id);
        }
        // Breadth-first from the root: parents before children.
        let mut order = Vec::with_capacity(parent_of.len());
        order.push(ROOT_TAX_ID);
        let mut i = 0;
        while i < order.len() {
            if let Some(kids) = children.get(&order[i]) {
                order.extend_from_slice(kids);
            }
            i += 1;
        }
        if order.len() != parent_of.len() {
            let reached: std::collections::HashSet<TaxId> = order.iter().copied().collect();
            let stray = parent_of.keys().find(|id| !reached.contains(id)).copied().unwrap_or_default();
            return Err(problem(format!("tax id {stray} never reaches the root (its parents form a cycle)")));
        }
        let mut tax = Taxonomy::with_capacity(order.len());
        for id in order {
            let (parent, rank) = &parent_of[&id];
            let parent = if id == ROOT_TAX_ID { 0 } else { tax.index[parent] };
            let Some(name) = name_of.remove(&id) else {
                return Err(problem(format!("tax id {id} has no scientific name in {}", names_path.display())));
            };
            tax.push(id, parent, rank.clone(), name);
        }
        Ok(tax)
    }

    pub(crate) fn with_capacity(n: usize) -> Taxonomy {
        Taxonomy {
            tax_ids: Vec::with_capacity(n),
            parents: Vec::with_capacity(n),
            ranks: Vec::with_capacity(n),
            names: Vec::with_capacity(n),
            index: HashMap::with_capacity(n),
        }
    }

    /// Appends a taxon; `parent` must be an index already pushed (0 for the root itself).
    pub(crate) fn push(&mut self, tax_id: TaxId, parent: u32, rank: String, name: String) {
        let idx = self.tax_ids.len() as u32;
        self.tax_ids.push(tax_id);
        self.parents.push(parent);
        self.ranks.push(rank);
        self.names.push(name);
        self.index.insert(tax_id, idx);
    }

    /// The taxonomy restricted to `keep` and all their ancestors, in the same relative order
    /// (still parents first). Unknown tax ids are ignored.
    pub fn pruned(&self, keep: impl IntoIterator<Item = TaxId>) -> Taxonomy {
        let mut kept = BTreeSet::new();
        for id in keep {
            let Some(mut i) = self.index_of(id) else {
                continue;
            };
            while kept.insert(i) && i != 0 {
                i = self.parents[i as usize];
            }
        }
        kept.insert(0);
        let mut out = Taxonomy::with_capacity(kept.len());
        for &i in &kept {
            let i = i as usize;
            let parent = if i == 0 { 0 } else { out.index[&self.tax_ids[self.parents[i] as usize]] };
            out.push(self.tax_ids[i], parent, self.ranks[i].clone(), self.names[i].clone());
        }
        out
    }

    /// Number of taxa.
    pub fn len(&self) -> usize {
        self.tax_ids.len()
    }

    /// Whether there are no taxa (never true for a taxonomy read from files).
    pub fn is_empty(&self) -> bool {
        self.tax_ids.is_empty()
    }

    /// The flat index of a tax id.
    pub fn index_of(&self, tax_id: TaxId) -> Option<u32> {
        self.index.get(&tax_id).copied()
    }

    /// Whether the taxonomy holds `tax_id`.
    pub fn contains(&self, tax_id: TaxId) -> bool {
        self.index.contains_key(&tax_id)
    }

    /// The tax id at flat index `idx`.
    pub fn tax_id(&self, idx: u32) -> TaxId {
        self.tax_ids[idx as usize]
    }

    /// The parent's flat index; `None` for the root.
    pub fn parent(&self, idx: u32) -> Option<u32> {
        (idx != 0).then(|| self.parents[idx as usize])
    }

    /// The parent's tax id; `None` for the root or an unknown tax id.
    pub fn parent_tax_id(&self, tax_id: TaxId) -> Option<TaxId> {
        let idx = self.index_of(tax_id)?;
        self.parent(idx).map(|p| self.tax_id(p))
    }

    /// The rank (`species`, `genus`, `no rank`, ...) at flat index `idx`.
    pub fn rank(&self, idx: u32) -> &str {
        &self.ranks[idx as usize]
    }

    /// The scientific name at flat index `idx`.
    pub fn name(&self, idx: u32) -> &str {
        &self.names[idx as usize]
    }

    /// The lowest common ancestor of two flat indexes.
    pub fn lca_index(&self, mut a: u32, mut b: u32) -> u32 {
        // Parents have smaller indexes than children, so the larger one can never be an
        // ancestor of the smaller one; move it up until the two meet.
        while a != b {
            if a > b {
                a = self.parents[a as usize];
            } else {
                b = self.parents[b as usize];
            }
        }
        a
    }

    /// The lowest common ancestor of two tax ids; `None` when either is unknown.
    pub fn lca(&self, a: TaxId, b: TaxId) -> Option<TaxId> {
        let (a, b) = (self.index_of(a)?, self.index_of(b)?);
        Some(self.tax_id(self.lca_index(a, b)))
    }

    /// Whether `ancestor` is `node` or one of its ancestors (flat indexes).
    pub fn is_ancestor_index(&self, ancestor: u32, mut node: u32) -> bool {
        while node > ancestor {
            node = self.parents[node as usize];
        }
        node == ancestor
    }

    /// Flat indexes from `idx` up to the root, `idx` first.
    pub fn path_to_root_index(&self, mut idx: u32) -> Vec<u32> {
        let mut path = vec![idx];
        while idx != 0 {
            idx = self.parents[idx as usize];
            path.push(idx);
        }
        path
    }

    /// Tax ids from `tax_id` up to the root (1), `tax_id` first; empty for an unknown tax id.
    pub fn path_to_root(&self, tax_id: TaxId) -> Vec<TaxId> {
        match self.index_of(tax_id) {
            Some(i) => self.path_to_root_index(i).into_iter().map(|i| self.tax_id(i)).collect(),
            None => Vec::new(),
        }
    }

    /// The nearest ancestor-or-self of `idx` with rank `rank` (for example `species`).
    pub fn ancestor_at_rank(&self, mut idx: u32, rank: &str) -> Option<u32> {
        loop {
            if self.ranks[idx as usize] == rank {
                return Some(idx);
            }
            if idx == 0 {
                return None;
            }
            idx = self.parents[idx as usize];
        }
    }

    pub(crate) fn parents_slice(&self) -> &[u32] {
        &self.parents
    }

    /// The children of every taxon, in index order (ascending tax id under one parent): the
    /// children of `i` are `list[offsets[i]..offsets[i + 1]]`.
    pub(crate) fn children(&self) -> (Vec<u32>, Vec<u32>) {
        let n = self.len();
        let mut offsets = vec![0u32; n + 1];
        for i in 1..n {
            offsets[self.parents[i] as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut next = offsets.clone();
        let mut list = vec![0u32; n.saturating_sub(1)];
        for i in 1..n {
            let p = self.parents[i] as usize;
            list[next[p] as usize] = i as u32;
            next[p] += 1;
        }
        (offsets, list)
    }

    /// Kraken 2's rank code of every taxon, as its reports print them: `D` (superkingdom or
    /// domain), `K`, `P`, `C`, `O`, `F`, `G`, `S` for those ranks; any other rank takes the code
    /// of the nearest such ancestor plus its distance (`S1` for a strain under a species, `G1`,
    /// `R1`...); the root is `R`.
    pub fn rank_codes(&self) -> Vec<String> {
        let n = self.len();
        let mut letter = vec![b'R'; n];
        let mut depth = vec![0u32; n];
        let mut codes = Vec::with_capacity(n);
        for i in 0..n {
            let standard = match self.ranks[i].as_str() {
                "superkingdom" | "domain" => Some(b'D'),
                "kingdom" => Some(b'K'),
                "phylum" => Some(b'P'),
                "class" => Some(b'C'),
                "order" => Some(b'O'),
                "family" => Some(b'F'),
                "genus" => Some(b'G'),
                "species" => Some(b'S'),
                _ => None,
            };
            match (standard, i) {
                (Some(l), _) => (letter[i], depth[i]) = (l, 0),
                (None, 0) => (letter[i], depth[i]) = (b'R', 0),
                (None, _) => {
                    let p = self.parents[i] as usize;
                    (letter[i], depth[i]) = (letter[p], depth[p] + 1);
                }
            }
            let mut code = (letter[i] as char).to_string();
            if depth[i] > 0 {
                code += &depth[i].to_string();
            }
            codes.push(code);
        }
        codes
    }
}

/// Reads NCBI's `merged.dmp` (`old_tax_id | new_tax_id |`): tax ids merged into others.
pub(crate) fn read_merged(path: &Path) -> Result<HashMap<TaxId, TaxId>, Error> {
    let file = File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    let mut merged = HashMap::new();
    for_each_row(BufReader::new(file), path, |line, fields| {
        if fields.len() < 2 {
            return Err(Error::table(path, line, "expected `old_tax_id | new_tax_id |`; is this a merged.dmp file?"));
        }
        let old = parse_id(fields[0], path, line, "old tax id")?;
        let new = parse_id(fields[1], path, line, "new tax id")?;
        merged.insert(old, new);
        Ok(())
    })?;
    Ok(merged)
}

/// Calls `f(line_number, fields)` for each non-blank line of a dump file, fields split on `|`
/// and trimmed (the trailing `\t|` leaves one empty last field, which is dropped).
fn for_each_row(
    mut reader: impl BufRead,
    path: &Path,
    mut f: impl FnMut(u64, &[&str]) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut buf = Vec::new();
    let mut line = 0u64;
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf).map_err(|source| Error::Io { path: path.to_owned(), source })?;
        if n == 0 {
            return Ok(());
        }
        line += 1;
        let Ok(text) = std::str::from_utf8(&buf) else {
            return Err(Error::table(path, line, "the line is not UTF-8 text"));
        };
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        let mut fields: Vec<&str> = text.split('|').map(str::trim).collect();
        if fields.len() > 1 && fields.last() == Some(&"") {
            fields.pop();
        }
        f(line, &fields)?;
    }
}

fn parse_id(field: &str, path: &Path, line: u64, what: &str) -> Result<TaxId, Error> {
    mgds_formats::parse_tax_id(field)
        .ok_or_else(|| Error::table(path, line, format!("the {what} `{field}` is not a whole number")))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    const NODES: &str = "1\t|\t1\t|\tno rank\t|\n\
        2\t|\t1\t|\tsuperkingdom\t|\n\
        561\t|\t543\t|\tgenus\t|\n\
        543\t|\t2\t|\tfamily\t|\n\
        562\t|\t561\t|\tspecies\t|\n\
        620\t|\t543\t|\tgenus\t|\n\
        623\t|\t620\t|\tspecies\t|\n\
        564\t|\t561\t|\tspecies\t|\n";
    const NAMES: &str = "1\t|\troot\t|\t\t|\tscientific name\t|\n\
        2\t|\tBacteria\t|\tBacteria <bacteria>\t|\tscientific name\t|\n\
        2\t|\teubacteria\t|\t\t|\tgenbank common name\t|\n\
        543\t|\tEnterobacteriaceae\t|\t\t|\tscientific name\t|\n\
        561\t|\tEscherichia\t|\t\t|\tscientific name\t|\n\
        562\t|\tEscherichia coli\t|\t\t|\tscientific name\t|\n\
        564\t|\tEscherichia fergusonii\t|\t\t|\tscientific name\t|\n\
        620\t|\tShigella\t|\t\t|\tscientific name\t|\n\
        623\t|\tShigella flexneri\t|\t\t|\tscientific name\t|\n";

    pub(crate) fn small() -> Taxonomy {
        parse(NODES, NAMES).unwrap()
    }

    fn parse(nodes: &str, names: &str) -> Result<Taxonomy, Error> {
        Taxonomy::parse_dmp(nodes.as_bytes(), Path::new("nodes.dmp"), names.as_bytes(), Path::new("names.dmp"))
    }

    #[test]
    fn parents_come_before_children() {
        let t = small();
        assert_eq!(t.len(), 8);
        assert_eq!(t.tax_id(0), 1);
        for i in 1..t.len() as u32 {
            assert!(t.parent(i).unwrap() < i);
        }
        let coli = t.index_of(562).unwrap();
        assert_eq!(t.name(coli), "Escherichia coli");
        assert_eq!(t.rank(coli), "species");
        assert_eq!(t.name(t.index_of(2).unwrap()), "Bacteria");
        assert_eq!(t.parent_tax_id(562), Some(561));
        assert_eq!(t.parent_tax_id(1), None);
    }

    #[test]
    fn lca_and_paths() {
        let t = small();
        assert_eq!(t.lca(562, 564), Some(561));
        assert_eq!(t.lca(562, 623), Some(543));
        assert_eq!(t.lca(562, 562), Some(562));
        assert_eq!(t.lca(562, 561), Some(561));
        assert_eq!(t.lca(623, 1), Some(1));
        assert_eq!(t.lca(562, 999), None);
        assert_eq!(t.path_to_root(623), vec![623, 620, 543, 2, 1]);
        assert_eq!(t.path_to_root(1), vec![1]);
        assert!(t.path_to_root(999).is_empty());
        let (g, s) = (t.index_of(561).unwrap(), t.index_of(562).unwrap());
        assert!(t.is_ancestor_index(g, s));
        assert!(!t.is_ancestor_index(s, g));
        assert!(t.is_ancestor_index(s, s));
        assert!(!t.is_ancestor_index(g, t.index_of(623).unwrap()));
        assert_eq!(t.ancestor_at_rank(s, "genus"), Some(g));
        assert_eq!(t.ancestor_at_rank(g, "species"), None);
    }

    #[test]
    fn rank_codes_follow_kraken2() {
        let t = small();
        let codes = t.rank_codes();
        let code = |id| codes[t.index_of(id).unwrap() as usize].as_str();
        assert_eq!((code(1), code(2), code(543), code(561), code(562)), ("R", "D", "F", "G", "S"));
        let (offsets, list) = t.children();
        let kids = |id| {
            let i = t.index_of(id).unwrap() as usize;
            list[offsets[i] as usize..offsets[i + 1] as usize].iter().map(|&c| t.tax_id(c)).collect::<Vec<_>>()
        };
        assert_eq!(kids(561), vec![562, 564]);
        assert_eq!(kids(543), vec![561, 620]);
        assert!(kids(562).is_empty());
        // A strain under a species, a clade under the root.
        let mut t2 = small();
        t2.push(99, t2.index_of(562).unwrap(), "strain".into(), "E. coli K-12".into());
        t2.push(98, 0, "clade".into(), "a clade".into());
        let codes = t2.rank_codes();
        assert_eq!((codes[8].as_str(), codes[9].as_str()), ("S1", "R1"));
    }

    #[test]
    fn pruning_keeps_ancestors_in_order() {
        let t = small().pruned([562, 4242]);
        let ids: Vec<TaxId> = (0..t.len() as u32).map(|i| t.tax_id(i)).collect();
        assert_eq!(ids, vec![1, 2, 543, 561, 562]);
        assert_eq!(t.lca(562, 543), Some(543));
    }

    #[test]
    fn dmp_errors_name_file_and_line() {
        let bad = NODES.replace("620\t|\t543", "620\t|\tx543");
        let e = parse(&bad, NAMES).unwrap_err().to_string();
        assert!(e.starts_with("nodes.dmp, line 6:"), "{e}");
        assert!(e.contains("`x543`"), "{e}");

        let e = parse("1\t|\t1\t|\tno rank\t|\n\n2 1 superkingdom\n", NAMES).unwrap_err().to_string();
        assert!(e.starts_with("nodes.dmp, line 3:"), "{e}");

        let e = parse(NODES, "1\t|\troot\n").unwrap_err().to_string();
        assert!(e.starts_with("names.dmp, line 1:"), "{e}");

        let dup = format!("{NODES}562\t|\t561\t|\tspecies\t|\n");
        let e = parse(&dup, NAMES).unwrap_err().to_string();
        assert!(e.contains("line 9") && e.contains("twice"), "{e}");

        let orphan = NODES.replace("623\t|\t620", "623\t|\t9999");
        let e = parse(&orphan, NAMES).unwrap_err().to_string();
        assert!(e.contains("9999"), "{e}");

        let unnamed =
            NAMES.replace("623\t|\tShigella flexneri\t|\t\t|\tscientific name", "623\t|\tS. flexneri\t|\t\t|\tsynonym");
        let e = parse(NODES, &unnamed).unwrap_err().to_string();
        assert!(e.contains("623") && e.contains("scientific name"), "{e}");
    }
}
