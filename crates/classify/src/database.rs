//! The reference database: building it from FASTA + taxonomy, and its binary file.
//!
//! File layout (all integers little-endian):
//!
//! ```text
//! magic "MGDSKDB\0" | version u32 | k u32 | l u32 | spaces u32 (spaced-seed positions, see kmer)
//! taxa u32, then per taxon (flat order, parents first):
//!     tax_id u64 | parent index u32 | genome length u64 | rank (u16 length + UTF-8) | name (u16 length + UTF-8)
//! slots u64 | minimizers u64 | keys [u64; slots] | values [u32; slots]
//! end marker "MGDSEND\0"
//! ```

use std::collections::HashMap;
use std::fs::File;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use mgds_formats::{Reader, Record, TaxId};
use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::index::{EMPTY, KmerTable};
use crate::kmer::{DEFAULT_K, DEFAULT_L, DEFAULT_SPACES, MAX_WINDOW, Minimizers, max_spaces};
use crate::taxonomy::Taxonomy;

const MAGIC: &[u8; 8] = b"MGDSKDB\0";
const END: &[u8; 8] = b"MGDSEND\0";
/// The database file format version this crate writes and reads.
///
/// 2: the header records the spaced seed (its number of spaces), and the stored keys are masked
/// minimizers. 3: minimizers are chosen in Kraken 2's order ([`crate::kmer::ORDER_TOGGLE`])
/// instead of by a hash, so a version 2 file holds other minimizers than the reads would look
/// up. Older files are refused with a request to rebuild.
pub const FORMAT_VERSION: u32 = 3;

/// What a database is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildInput {
    /// Reference FASTA files (plain or gzipped), read in this order.
    pub references: Vec<PathBuf>,
    /// Sequence-to-taxon map: a TSV with `seq_id<TAB>tax_id` per line, and optionally a third
    /// column naming the genome (assembly) the sequence belongs to; without it each sequence is
    /// its own genome. Blank lines and lines starting with `#` are skipped.
    pub seqid2taxid: PathBuf,
    /// NCBI `nodes.dmp`.
    pub nodes: PathBuf,
    /// NCBI `names.dmp`.
    pub names: PathBuf,
}

/// How a database is built. The parameters are recorded in the file, and classification uses
/// the same ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BuildOptions {
    /// Spaced-seed positions ignored in each minimizer (Kraken 2's `--minimizer-spaces`); 0
    /// for exact minimizers. At most `l / 4` (7 for the default `l` = 31).
    pub spaces: u32,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions { spaces: DEFAULT_SPACES }
    }
}

impl BuildOptions {
    /// The default options with `spaces` spaced-seed positions.
    pub fn with_spaces(spaces: u32) -> BuildOptions {
        BuildOptions { spaces }
    }
}

/// What a build produced.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildReport {
    /// Distinct minimizers stored.
    pub kmers: u64,
    /// Taxa in the database's taxonomy (the mapped taxa and their ancestors).
    pub taxa: usize,
    /// Size of the database file in bytes.
    pub bytes: u64,
    /// Reference sequences read.
    pub sequences: u64,
    /// Reference bases read.
    pub bases: u64,
    /// Window length.
    pub k: u32,
    /// Minimizer length.
    pub l: u32,
    /// Spaced-seed positions ignored in each minimizer.
    pub spaces: u32,
    /// Hex SHA-256 of the file (the same as [`Database::digest`]).
    pub digest: String,
    /// Wall-clock build time in seconds.
    pub seconds: f64,
}

/// Builds a database from `input` and writes it to `out` atomically (a temporary file beside
/// `out`, renamed when complete). The same inputs always give a byte-identical file.
///
/// Each minimizer maps to the lowest common ancestor of all taxa whose references contain it.
/// The taxonomy is reduced to the mapped taxa and their ancestors. The genome length stored for
/// a taxon is the mean length of the reference genomes in its subtree (used for abundance).
///
/// Uses the default [`BuildOptions`] (Kraken 2's default spaced seed); see [`build_with`].
pub fn build(input: &BuildInput, out: &Path) -> Result<BuildReport, Error> {
    build_with(input, &BuildOptions::default(), out)
}

/// [`build`] with the given options.
pub fn build_with(input: &BuildInput, options: &BuildOptions, out: &Path) -> Result<BuildReport, Error> {
    let started = Instant::now();
    if options.spaces > max_spaces(DEFAULT_L) {
        return Err(Error::Options(format!(
            "a spaced seed of {} spaces is more than minimizers of {DEFAULT_L} bases allow (at most {})",
            options.spaces,
            max_spaces(DEFAULT_L)
        )));
    }
    let full = Taxonomy::from_dmp(&input.nodes, &input.names)?;
    let map = read_seqid_map(&input.seqid2taxid, &full)?;
    let mut mapped: Vec<TaxId> = map.values().map(|e| e.0).collect();
    mapped.sort_unstable();
    mapped.dedup();
    let taxonomy = full.pruned(mapped);
    drop(full);

    let scanner = Minimizers::spaced(DEFAULT_K, DEFAULT_L, options.spaces);
    let mut kmers: HashMap<u64, u32, BuildHasherDefault<MixHasher>> = HashMap::default();
    // Genome id -> (taxon index, total length). Iteration order does not matter: only sums
    // and LCAs (both order-free) are taken from it.
    let mut genomes: HashMap<String, (u32, u64)> = HashMap::new();
    let mut record = Record::default();
    let (mut sequences, mut bases) = (0u64, 0u64);
    for path in &input.references {
        let (compression, decoded) = mgds_formats::open(path)?;
        let mut reader = Reader::new(decoded);
        loop {
            match reader.read_record(&mut record) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    return Err(Error::reading(path, compression, reader.line_number(), e));
                }
            }
            let id = String::from_utf8_lossy(record.id());
            let Some((tax_id, genome)) = map.get(id.as_ref()) else {
                return Err(Error::UnmappedSequence {
                    path: path.clone(),
                    record: reader.record_count(),
                    seq_id: id.into_owned(),
                    map: input.seqid2taxid.clone(),
                });
            };
            let taxon = taxonomy.index_of(*tax_id).expect("mapped taxa are kept by pruning");
            let seq = record.sequence();
            sequences += 1;
            bases += seq.len() as u64;
            let g = genomes.entry(genome.clone()).or_insert((taxon, 0));
            g.1 += seq.len() as u64;
            // A genome split across taxa (unusual) counts towards their common ancestor.
            g.0 = taxonomy.lca_index(g.0, taxon);
            let mut last = EMPTY;
            scanner.scan(seq, |key| {
                if key != last {
                    last = key;
                    kmers.entry(key).and_modify(|t| *t = taxonomy.lca_index(*t, taxon)).or_insert(taxon);
                }
            });
        }
    }
    if kmers.is_empty() {
        return Err(Error::NoKmers { k: DEFAULT_K });
    }
    let mut entries: Vec<(u64, u32)> = kmers.into_iter().collect();
    entries.sort_unstable();
    let table = KmerTable::from_sorted(&entries);
    drop(entries);
    let genome_len = genome_lengths(&taxonomy, genomes.values().copied());

    let bytes = write_atomically(out, |w| write_database(w, &scanner, &taxonomy, &genome_len, &table))?;
    let digest = file_digest(out)?;
    Ok(BuildReport {
        kmers: table.len() as u64,
        taxa: taxonomy.len(),
        bytes,
        sequences,
        bases,
        k: DEFAULT_K,
        l: DEFAULT_L,
        spaces: options.spaces,
        digest,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Mean genome length over the genomes in each taxon's subtree (0 where there is none).
fn genome_lengths(taxonomy: &Taxonomy, genomes: impl Iterator<Item = (u32, u64)>) -> Vec<u64> {
    let n = taxonomy.len();
    let (mut total, mut count) = (vec![0u64; n], vec![0u64; n]);
    for (taxon, len) in genomes {
        total[taxon as usize] += len;
        count[taxon as usize] += 1;
    }
    let parents = taxonomy.parents_slice();
    for i in (1..n).rev() {
        let p = parents[i] as usize;
        total[p] += total[i];
        count[p] += count[i];
    }
    total.iter().zip(&count).map(|(&t, &c)| (t + c / 2).checked_div(c).unwrap_or(0)).collect()
}

/// Reads the sequence-to-taxon map: seq id -> (tax id, genome id).
fn read_seqid_map(path: &Path, taxonomy: &Taxonomy) -> Result<HashMap<String, (TaxId, String)>, Error> {
    let file = File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    let mut map = HashMap::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line_no = i as u64 + 1;
        let line = line.map_err(|source| Error::Io { path: path.to_owned(), source })?;
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split('\t');
        let (Some(seq_id), Some(tax)) = (fields.next(), fields.next()) else {
            return Err(Error::table(path, line_no, "expected `seq_id<TAB>tax_id` (and optionally `<TAB>genome`)"));
        };
        let seq_id = seq_id.trim();
        let Some(tax_id) = mgds_formats::parse_tax_id(tax) else {
            return Err(Error::table(path, line_no, format!("the tax id `{}` is not a whole number", tax.trim())));
        };
        if !taxonomy.contains(tax_id) {
            return Err(Error::table(
                path,
                line_no,
                format!("tax id {tax_id} (for `{seq_id}`) is not in the taxonomy (nodes.dmp)"),
            ));
        }
        let genome = fields.next().map(str::trim).filter(|g| !g.is_empty()).unwrap_or(seq_id).to_owned();
        if let Some((old, _)) = map.insert(seq_id.to_owned(), (tax_id, genome))
            && old != tax_id
        {
            return Err(Error::table(path, line_no, format!("`{seq_id}` is mapped to both {old} and {tax_id}")));
        }
    }
    Ok(map)
}

fn write_database(
    w: &mut dyn Write,
    scanner: &Minimizers,
    taxonomy: &Taxonomy,
    genome_len: &[u64],
    table: &KmerTable,
) -> io::Result<()> {
    w.write_all(MAGIC)?;
    let header = [FORMAT_VERSION, scanner.k(), scanner.l(), scanner.spaces(), taxonomy.len() as u32];
    for x in header {
        w.write_all(&x.to_le_bytes())?;
    }
    for i in 0..taxonomy.len() as u32 {
        w.write_all(&taxonomy.tax_id(i).to_le_bytes())?;
        w.write_all(&taxonomy.parent(i).unwrap_or(0).to_le_bytes())?;
        w.write_all(&genome_len[i as usize].to_le_bytes())?;
        for text in [taxonomy.rank(i), taxonomy.name(i)] {
            let bytes = &text.as_bytes()[..text.len().min(u16::MAX as usize)];
            w.write_all(&(bytes.len() as u16).to_le_bytes())?;
            w.write_all(bytes)?;
        }
    }
    w.write_all(&(table.capacity() as u64).to_le_bytes())?;
    w.write_all(&(table.len() as u64).to_le_bytes())?;
    let mut buf = Vec::with_capacity(1 << 16);
    for k in table.keys() {
        buf.extend_from_slice(&k.to_le_bytes());
        if buf.len() >= 1 << 16 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    for v in table.values() {
        buf.extend_from_slice(&v.to_le_bytes());
        if buf.len() >= 1 << 16 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)?;
    w.write_all(END)
}

/// Writes a file through `f` into a temporary file beside `out`, then renames it into place.
fn write_atomically(out: &Path, f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<u64, Error> {
    let write_err = |source| Error::Write { path: out.to_owned(), source };
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let tmp = tempfile::Builder::new().prefix(".mgdsdb-").tempfile_in(dir).map_err(write_err)?;
    let mut w = BufWriter::with_capacity(1 << 20, tmp);
    f(&mut w).map_err(write_err)?;
    let tmp = w.into_inner().map_err(|e| write_err(e.into_error()))?;
    // A temporary file is private to its owner; the database is ordinary data that other
    // accounts (a service, a colleague) may read.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644)).map_err(write_err)?;
    }
    tmp.as_file().sync_all().map_err(write_err)?;
    let bytes = tmp.as_file().metadata().map_err(write_err)?.len();
    tmp.persist(out).map_err(|e| write_err(e.error))?;
    Ok(bytes)
}

fn file_digest(path: &Path) -> Result<String, Error> {
    let mut file = File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(|source| Error::Io { path: path.to_owned(), source })?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// A classification database loaded into memory.
#[derive(Debug, Clone)]
pub struct Database {
    path: PathBuf,
    digest: String,
    scanner: Minimizers,
    taxonomy: Taxonomy,
    genome_len: Vec<u64>,
    table: KmerTable,
}

/// The format version written in a database file's header, read without loading the file (to
/// tell a database an older engine built from one that is damaged).
pub fn format_version(path: impl AsRef<Path>) -> Result<u32, Error> {
    use std::io::Read;
    let path = path.as_ref();
    let mut head = [0u8; MAGIC.len() + 4];
    let mut f = std::fs::File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    match f.read_exact(&mut head) {
        Ok(()) if &head[..MAGIC.len()] == MAGIC => {
            Ok(u32::from_le_bytes(head[MAGIC.len()..].try_into().expect("4 bytes")))
        }
        Ok(()) => Err(Error::NotDatabase { path: path.to_owned() }),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(Error::NotDatabase { path: path.to_owned() }),
        Err(source) => Err(Error::Io { path: path.to_owned(), source }),
    }
}

impl Database {
    /// Reads a database file (in one read) and checks its header, version and size.
    pub fn open(path: impl AsRef<Path>) -> Result<Database, Error> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
        Database::from_bytes(&bytes, path)
    }

    /// Reads a database from its file's bytes; `path` is used in messages.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Database, Error> {
        let digest = hex::encode(Sha256::digest(bytes));
        let corrupt = |what: &str| Error::DatabaseCorrupt { path: path.to_owned(), what: what.to_owned() };
        if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
            return Err(Error::NotDatabase { path: path.to_owned() });
        }
        let mut c = Cursor { bytes, pos: MAGIC.len() };
        let version = c.u32().ok_or_else(|| corrupt("the header is cut short"))?;
        if version != FORMAT_VERSION {
            return Err(Error::DatabaseVersion { path: path.to_owned(), found: version, expected: FORMAT_VERSION });
        }
        let short = || corrupt("the file ends early");
        let k = c.u32().ok_or_else(short)?;
        let l = c.u32().ok_or_else(short)?;
        let spaces = c.u32().ok_or_else(short)?;
        if !((1..=31).contains(&l) && k >= l && (k - l + 1) as usize <= MAX_WINDOW && spaces <= max_spaces(l)) {
            return Err(corrupt("the k-mer parameters are out of range"));
        }
        let n_taxa = c.u32().ok_or_else(short)? as usize;
        if n_taxa == 0 || n_taxa > bytes.len() {
            return Err(corrupt("the taxon count is out of range"));
        }
        let mut taxonomy = Taxonomy::with_capacity(n_taxa);
        let mut genome_len = Vec::with_capacity(n_taxa);
        for i in 0..n_taxa {
            let tax_id = c.u64().ok_or_else(short)?;
            let parent = c.u32().ok_or_else(short)?;
            genome_len.push(c.u64().ok_or_else(short)?);
            let rank = c.text().ok_or_else(short)?;
            let name = c.text().ok_or_else(short)?;
            if (i > 0 && parent as usize >= i) || (i == 0 && parent != 0) {
                return Err(corrupt("a taxon comes before its parent"));
            }
            taxonomy.push(tax_id, parent, rank, name);
        }
        let slots = c.u64().ok_or_else(short)? as usize;
        let stored = c.u64().ok_or_else(short)? as usize;
        let need = slots.checked_mul(12).ok_or_else(short)?;
        if c.remaining() < need + END.len() {
            return Err(short());
        }
        let keys = c.take(slots * 8).ok_or_else(short)?;
        let values = c.take(slots * 4).ok_or_else(short)?;
        if c.take(END.len()) != Some(END.as_slice()) || c.remaining() != 0 {
            return Err(corrupt("the end marker is missing"));
        }
        let table = KmerTable::from_le_bytes(keys, values, n_taxa as u32)
            .filter(|t| t.len() == stored)
            .ok_or_else(|| corrupt("the k-mer table is inconsistent"))?;
        Ok(Database {
            path: path.to_owned(),
            digest,
            scanner: Minimizers::spaced(k, l, spaces),
            taxonomy,
            genome_len,
            table,
        })
    }

    /// Hex SHA-256 of the database file: identifies the reference data of a job.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The file the database was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The database's taxonomy (the referenced taxa and their ancestors).
    pub fn taxonomy(&self) -> &Taxonomy {
        &self.taxonomy
    }

    /// Window length (bases) of the k-mers.
    pub fn k(&self) -> u32 {
        self.scanner.k()
    }

    /// Minimizer length (bases): the length of the stored keys.
    pub fn l(&self) -> u32 {
        self.scanner.l()
    }

    /// Spaced-seed positions ignored in each minimizer (0: exact minimizers).
    pub fn spaces(&self) -> u32 {
        self.scanner.spaces()
    }

    /// Distinct minimizers stored.
    pub fn kmer_count(&self) -> usize {
        self.table.len()
    }

    /// Mean reference genome length in the subtree of the taxon at flat index `idx` (0 when
    /// none of its descendants has a reference).
    pub fn genome_len(&self, idx: u32) -> u64 {
        self.genome_len[idx as usize]
    }

    pub(crate) fn scanner(&self) -> &Minimizers {
        &self.scanner
    }

    pub(crate) fn table(&self) -> &KmerTable {
        &self.table
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }
    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn text(&mut self) -> Option<String> {
        let n = self.u16()? as usize;
        Some(String::from_utf8_lossy(self.take(n)?).into_owned())
    }
}

/// FxHash-style hasher for the build's minimizer map: keys are already well spread 62-bit
/// k-mers, so one multiply-and-mix is enough (SipHash would dominate the build time).
#[derive(Default)]
struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = crate::kmer::mix64(self.0 ^ b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = crate::kmer::mix64(x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_and_cut_files_are_refused_with_the_path() {
        let p = Path::new("/data/x.mgdsdb");
        let e = Database::from_bytes(b"hello world", p).unwrap_err();
        assert!(matches!(e, Error::NotDatabase { .. }));
        assert!(e.to_string().contains("/data/x.mgdsdb"));
        let mut v = MAGIC.to_vec();
        v.extend_from_slice(&9u32.to_le_bytes());
        let e = Database::from_bytes(&v, p).unwrap_err();
        assert!(matches!(e, Error::DatabaseVersion { found: 9, .. }), "{e}");
        assert!(e.to_string().contains("newer"), "{e}");
        let mut v = MAGIC.to_vec();
        v.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        v.extend_from_slice(&35u32.to_le_bytes());
        let e = Database::from_bytes(&v, p).unwrap_err();
        assert!(e.to_string().contains("ends early"), "{e}");
    }

    #[test]
    fn a_version_1_file_asks_for_a_rebuild() {
        // The version 1 header: magic, version, k, l, then the taxa (no spaced seed).
        let mut v = MAGIC.to_vec();
        for x in [1u32, 35, 31, 1] {
            v.extend_from_slice(&x.to_le_bytes());
        }
        let p = Path::new("/data/old.mgdsdb");
        let e = Database::from_bytes(&v, p).unwrap_err();
        assert!(matches!(e, Error::DatabaseVersion { found: 1, expected: FORMAT_VERSION, .. }), "{e}");
        let message = e.to_string();
        for part in ["/data/old.mgdsdb", "version 1", "older", "rebuild", "mgds db build", "mgds db install --demo"] {
            assert!(message.contains(part), "{part:?} missing in: {message}");
        }
    }

    #[test]
    fn out_of_range_spaces_are_refused() {
        let mut v = MAGIC.to_vec();
        for x in [FORMAT_VERSION, 35, 31, 8, 1] {
            v.extend_from_slice(&x.to_le_bytes());
        }
        let e = Database::from_bytes(&v, Path::new("x.mgdsdb")).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        let input = BuildInput {
            references: vec![],
            seqid2taxid: PathBuf::from("missing.tsv"),
            nodes: PathBuf::from("missing-nodes.dmp"),
            names: PathBuf::from("missing-names.dmp"),
        };
        let e = build_with(&input, &BuildOptions::with_spaces(8), Path::new("x.mgdsdb")).unwrap_err();
        assert!(matches!(e, Error::Options(_)), "{e}");
    }

    #[test]
    fn genome_lengths_are_subtree_means() {
        let t = crate::taxonomy::tests::small();
        let coli = t.index_of(562).unwrap();
        let ferg = t.index_of(564).unwrap();
        let g = genome_lengths(&t, [(coli, 100), (coli, 200), (ferg, 600)].into_iter());
        assert_eq!(g[coli as usize], 150);
        assert_eq!(g[t.index_of(561).unwrap() as usize], 300);
        assert_eq!(g[t.index_of(623).unwrap() as usize], 0);
    }
}
