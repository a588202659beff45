//! A gene catalogue: nucleotide gene sequences and the functions each gene carries.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::mapper::{Mapper, Preset};
use crate::seqfile::{self, NamedSeq};

/// The gene sequences' file name in a catalogue folder.
pub const GENES_FILE: &str = "genes.fa";
/// The annotations' file name in a catalogue folder.
pub const ANNOTATIONS_FILE: &str = "annotations.tsv";

/// A function a gene can carry (a KEGG orthology group, an enzyme, a protein family).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// The function's identifier, such as `K00001` or `EC:1.1.1.1`.
    pub id: String,
    /// Its name in words.
    pub name: String,
}

/// A gene catalogue loaded from a folder holding `genes.fa` and `annotations.tsv`.
///
/// - `genes.fa`: FASTA (or FASTQ, plain or gzip) nucleotide sequences of the genes; the
///   identifier (header up to the first space) is the gene id.
/// - `annotations.tsv`: tab-separated `gene_id`, `function_id`, `function_name`, one line per
///   gene and function (a gene with several functions has several lines). Blank lines and lines
///   starting with `#` are skipped, and so is a first line `gene_id<TAB>function_id<TAB>function_name`.
///   Genes without a line are aligned to but carry no function.
///
/// The aligner's index is built the first time [`crate::profile`] needs it and then kept, so a
/// service can load a catalogue once and profile many samples against it.
pub struct Catalogue {
    dir: PathBuf,
    genes: Vec<NamedSeq>,
    functions: Vec<Function>,
    // For each gene (in `genes` order), the indexes of its functions in `functions`.
    gene_functions: Vec<Vec<usize>>,
    digest: String,
    mapper: OnceLock<Mapper>,
}

impl std::fmt::Debug for Catalogue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalogue")
            .field("dir", &self.dir)
            .field("genes", &self.genes.len())
            .field("functions", &self.functions.len())
            .field("digest", &self.digest)
            .finish_non_exhaustive()
    }
}

impl Catalogue {
    /// Loads the catalogue in `dir`. Errors name the file and the line.
    pub fn load(dir: &Path) -> Result<Catalogue, Error> {
        let genes_path = dir.join(GENES_FILE);
        let genes = seqfile::read_all(&genes_path)?;
        if genes.is_empty() {
            return Err(Error::NoSequences { path: genes_path });
        }
        let annotations_path = dir.join(ANNOTATIONS_FILE);
        let text =
            fs::read(&annotations_path).map_err(|source| Error::Io { path: annotations_path.clone(), source })?;
        let (functions, gene_functions) = parse_annotations(&text, &genes, &annotations_path)?;
        let digest = digest(&genes, &functions, &gene_functions);
        Ok(Catalogue { dir: dir.to_owned(), genes, functions, gene_functions, digest, mapper: OnceLock::new() })
    }

    /// A SHA-256 (hex) of the catalogue's content: gene ids and sequences (upper-cased, in file
    /// order) and the gene-function pairs with their names. It does not change with line
    /// wrapping, compression or the order of annotation lines, so it versions a profiling job.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The folder the catalogue was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Number of genes.
    pub fn n_genes(&self) -> usize {
        self.genes.len()
    }

    /// The functions, in the order they first appear in `annotations.tsv`.
    pub fn functions(&self) -> &[Function] {
        &self.functions
    }

    pub(crate) fn gene_len(&self, gene: usize) -> usize {
        self.genes[gene].seq.len()
    }

    pub(crate) fn gene_functions(&self, gene: usize) -> &[usize] {
        &self.gene_functions[gene]
    }

    pub(crate) fn mapper(&self) -> Result<&Mapper, Error> {
        if let Some(mapper) = self.mapper.get() {
            return Ok(mapper);
        }
        // Built outside the lock so a failure (a full temporary folder) is not remembered; if
        // two threads race, one index is kept and the other dropped.
        let mapper = Mapper::new(&self.genes, Preset::ShortReads)?;
        Ok(self.mapper.get_or_init(|| mapper))
    }
}

type Annotations = (Vec<Function>, Vec<Vec<usize>>);

fn parse_annotations(text: &[u8], genes: &[NamedSeq], path: &Path) -> Result<Annotations, Error> {
    let gene_index: HashMap<&str, usize> = genes.iter().enumerate().map(|(i, g)| (g.name.as_str(), i)).collect();
    let mut functions: Vec<Function> = Vec::new();
    // Function id -> (index in `functions`, line where its name was first given).
    let mut function_index: HashMap<String, (usize, u64)> = HashMap::new();
    let mut gene_functions = vec![Vec::new(); genes.len()];
    let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
    let error = |line: u64, message: String| Error::Annotation { path: path.to_owned(), line, message };
    let mut first_row = true;
    for (i, raw) in text.split(|&b| b == b'\n').enumerate() {
        let line = i as u64 + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let Ok(row) = std::str::from_utf8(raw) else {
            return Err(error(line, "the line is not UTF-8 text; save the file as UTF-8".to_owned()));
        };
        if row.trim().is_empty() || row.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = row.split('\t').map(str::trim).collect();
        if std::mem::take(&mut first_row) && fields.first().is_some_and(|f| f.eq_ignore_ascii_case("gene_id")) {
            continue;
        }
        let [gene, function, name] = fields[..] else {
            return Err(error(
                line,
                format!(
                    "expected 3 tab-separated fields (gene_id, function_id, function_name) but found {}",
                    fields.len()
                ),
            ));
        };
        if gene.is_empty() || function.is_empty() {
            return Err(error(line, "the gene_id and function_id fields must not be empty".to_owned()));
        }
        let Some(&g) = gene_index.get(gene) else {
            return Err(error(
                line,
                format!("gene `{gene}` is not in {GENES_FILE}; add its sequence or remove the line"),
            ));
        };
        let f = match function_index.get(function) {
            Some(&(f, first_line)) => {
                if functions[f].name != name {
                    return Err(error(
                        line,
                        format!(
                            "function `{function}` is named `{name}` here but `{}` at line {first_line}; give it one name",
                            functions[f].name
                        ),
                    ));
                }
                f
            }
            None => {
                functions.push(Function { id: function.to_owned(), name: name.to_owned() });
                function_index.insert(function.to_owned(), (functions.len() - 1, line));
                functions.len() - 1
            }
        };
        // A repeated gene-function line adds nothing.
        if !gene_functions[g].contains(&f) {
            gene_functions[g].push(f);
        }
    }
    Ok((functions, gene_functions))
}

fn digest(genes: &[NamedSeq], functions: &[Function], gene_functions: &[Vec<usize>]) -> String {
    let mut h = Sha256::new();
    h.update(b"mgds-align gene catalogue v1\n");
    for g in genes {
        h.update(g.name.as_bytes());
        h.update(b"\t");
        h.update(g.seq.to_ascii_uppercase());
        h.update(b"\n");
    }
    let mut pairs: Vec<(&str, &str, &str)> = gene_functions
        .iter()
        .enumerate()
        .flat_map(|(g, fs)| {
            fs.iter().map(move |&f| (genes[g].name.as_str(), functions[f].id.as_str(), functions[f].name.as_str()))
        })
        .collect();
    pairs.sort_unstable();
    h.update(b"\n");
    for (g, f, n) in pairs {
        h.update(format!("{g}\t{f}\t{n}\n").as_bytes());
    }
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn genes(names: &[&str]) -> Vec<NamedSeq> {
        names
            .iter()
            .map(|n| NamedSeq { name: (*n).to_owned(), header: (*n).to_owned(), seq: b"ACGT".to_vec() })
            .collect()
    }

    #[test]
    fn parses_header_comments_and_several_functions_per_gene() {
        let text =
            b"gene_id\tfunction_id\tfunction_name\n# comment\ng1\tK1\tone\ng1\tK2\ttwo\r\n\ng2\tK1\tone\ng2\tK1\tone\n";
        let (functions, gf) = parse_annotations(text, &genes(&["g1", "g2", "g3"]), Path::new("a.tsv")).unwrap();
        assert_eq!(functions.len(), 2);
        assert_eq!(functions[1].name, "two");
        assert_eq!(gf, vec![vec![0, 1], vec![0], vec![]]);
    }

    #[test]
    fn errors_name_the_line() {
        let g = genes(&["g1"]);
        let p = Path::new("annotations.tsv");
        let e = parse_annotations(b"g1\tK1\tone\n\ng1\tK2\n", &g, p).unwrap_err();
        assert_eq!(
            e.to_string(),
            "annotations.tsv, line 3: expected 3 tab-separated fields (gene_id, function_id, function_name) but found 2"
        );
        let e = parse_annotations(b"g1\tK1\tone\ngX\tK1\tone\n", &g, p).unwrap_err();
        assert!(e.to_string().starts_with("annotations.tsv, line 2: gene `gX` is not in genes.fa"), "{e}");
        let e = parse_annotations(b"g1\tK1\tone\ng1\tK1\tuno\n", &g, p).unwrap_err();
        assert!(e.to_string().contains("line 2: function `K1` is named `uno` here but `one` at line 1"), "{e}");
    }

    #[test]
    fn digest_ignores_annotation_order_and_case() {
        let g = genes(&["g1", "g2"]);
        let p = Path::new("a.tsv");
        let (f1, gf1) = parse_annotations(b"g1\tK1\tone\ng2\tK2\ttwo\n", &g, p).unwrap();
        let (f2, gf2) = parse_annotations(b"g2\tK2\ttwo\ng1\tK1\tone\n", &g, p).unwrap();
        assert_eq!(digest(&g, &f1, &gf1), digest(&g, &f2, &gf2));
        let mut lower = g.clone();
        lower[0].seq = b"acgt".to_vec();
        assert_eq!(digest(&g, &f1, &gf1), digest(&lower, &f1, &gf1));
        let (f3, gf3) = parse_annotations(b"g1\tK1\tone\n", &g, p).unwrap();
        assert_ne!(digest(&g, &f1, &gf1), digest(&g, &f3, &gf3));
    }
}
