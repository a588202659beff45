//! The classification database: our own file format, and the [`Database`] type through which
//! both kinds of database (ours, or a Kraken 2 folder read in place) are used.
//!
//! File layout (all integers little-endian), built so that the k-mer table is used in place
//! through a memory map:
//!
//! ```text
//! magic "MGDSKDB\0" | version u32 | k u32 | l u32 | spaces u32 | metadata length u64
//! metadata:
//!     taxa u32, then per taxon (flat order, parents first):
//!         tax_id u64 | parent index u32 | rank (u16 length + UTF-8) | name (u16 length + UTF-8)
//!     genomes u32, then per genome: tax_id u64 | length u64 | records u32 | name (u16 + UTF-8)
//! zero padding to a multiple of 8 bytes
//! table: capacity u64 | size u64 | key_bits u32 | value_bits u32 | cells [u32; capacity]
//! end marker "MGDSEND\0" | SHA-256 of every byte before the end marker (32 bytes)
//! ```
//!
//! A cell holds a taxon as its flat index + 1 (0 marks an empty cell), see [`crate::table`].

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use crate::distribution::{self, KmerDistribution};
use crate::engine::Engine;
use crate::error::Error;
use crate::genomes::{Genome, SpeciesGenomes, per_species, subtree_mean_lengths};
use crate::kmer::{MAX_WINDOW, Minimizers, max_spaces};
use crate::table::{CompactTable, Shape, Slots, Storage, TableBuilder};
use crate::taxonomy::Taxonomy;

const MAGIC: &[u8; 8] = b"MGDSKDB\0";
const END: &[u8; 8] = b"MGDSEND\0";
/// The database file format version this crate writes and reads.
///
/// 3: minimizers in Kraken 2's order. 4: a compact table of 32-bit cells (Kraken 2's layout)
/// used in place through a memory map, the reference genomes recorded for genome-copy abundance,
/// and the content digest stored at the end. Older files are refused with a request to rebuild.
pub const FORMAT_VERSION: u32 = 4;

/// Which kind of database a [`Database`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatabaseKind {
    /// A database file written by [`crate::build`].
    Mgds,
    /// A Kraken 2 database folder (`hash.k2d`, `opts.k2d`, `taxo.k2d`) read in place.
    Kraken2,
}

/// Where the files kept beside a database are looked for and written: the k-mer profile of its
/// references and the k-mer distributions for abundance re-estimation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// The folder of the companion files; by default the database file's folder, or the
    /// Kraken 2 database folder itself.
    pub companion_dir: Option<PathBuf>,
}

/// A classification database, opened: our own file ([`crate::build`]) or a Kraken 2 folder
/// ([`crate::Kraken2Database`]). The k-mer table is memory-mapped, not read onto the heap.
///
/// Everything that classifies, reports or estimates abundance takes a `&Database`, whichever
/// kind it is.
#[derive(Debug)]
pub struct Database {
    pub(crate) path: PathBuf,
    pub(crate) kind: DatabaseKind,
    pub(crate) digest: String,
    pub(crate) scanner: Minimizers,
    pub(crate) min_hash: u64,
    pub(crate) table: CompactTable,
    pub(crate) taxonomy: Taxonomy,
    pub(crate) genomes: Option<Vec<Genome>>,
    pub(crate) genome_len: Vec<u64>,
    pub(crate) companion_dir: PathBuf,
    pub(crate) distributions: Mutex<HashMap<u32, Arc<KmerDistribution>>>,
}

/// The format version written in a database file's header, read without loading the file (to
/// tell a database an older engine built from one that is damaged).
pub fn format_version(path: impl AsRef<Path>) -> Result<u32, Error> {
    let path = path.as_ref();
    let mut head = [0u8; MAGIC.len() + 4];
    let mut f = File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    match f.read_exact(&mut head) {
        Ok(()) if &head[..MAGIC.len()] == MAGIC => {
            Ok(u32::from_le_bytes(head[MAGIC.len()..].try_into().expect("4 bytes")))
        }
        Ok(()) => Err(Error::NotDatabase { path: path.to_owned() }),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Err(Error::NotDatabase { path: path.to_owned() }),
        Err(source) => Err(Error::Io { path: path.to_owned(), source }),
    }
}

impl Database {
    /// Opens a database file written by [`crate::build`] (see [`Database::open`]). Checks the
    /// header, version and sizes; the table is mapped, not read.
    pub(crate) fn open_file(path: &Path, options: &OpenOptions) -> Result<Database, Error> {
        let file = File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
        let map = crate::mmap::map_read_only(&file).map_err(|source| Error::Io { path: path.to_owned(), source })?;
        let parsed = parse(&map, path)?;
        let mut db = parsed.into_database(Storage::Mapped(map), path)?;
        db.companion_dir = companion_dir(path, options);
        Ok(db)
    }

    /// Reads a database from its file's bytes (copied onto the heap); `path` is used in
    /// messages and to find companion files.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Database, Error> {
        let parsed = parse(bytes, path)?;
        let mut db = parsed.into_database(Storage::Owned(bytes.to_vec()), path)?;
        db.companion_dir = companion_dir(path, &OpenOptions::default());
        Ok(db)
    }

    /// Which kind of database this is.
    pub fn kind(&self) -> DatabaseKind {
        self.kind
    }

    /// Hex SHA-256 identifying the database's content (the reference data of a job). For our
    /// files it is the digest of the file, stored in it when it was written; for a Kraken 2
    /// folder, see [`crate::Kraken2Database::open`].
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The file (or Kraken 2 folder) the database was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The database's taxonomy (the referenced taxa and their ancestors).
    pub fn taxonomy(&self) -> &Taxonomy {
        &self.taxonomy
    }

    /// Window length (bases, or residues for a protein database) of the k-mers.
    pub fn k(&self) -> u32 {
        self.scanner.k()
    }

    /// Minimizer length: the length of the stored keys.
    pub fn l(&self) -> u32 {
        self.scanner.l()
    }

    /// Spaced-seed positions ignored in each minimizer (0: exact minimizers).
    pub fn spaces(&self) -> u32 {
        self.scanner.spaces()
    }

    /// Minimizers stored (occupied cells of the table).
    pub fn kmer_count(&self) -> usize {
        self.table.shape().size as usize
    }

    /// Cells of the table (stored minimizers plus free cells).
    pub fn capacity(&self) -> u64 {
        self.table.shape().capacity
    }

    /// Mean reference genome length in the subtree of the taxon at flat index `idx`; 0 when
    /// none of its descendants has a reference genome, or when the genomes are unknown.
    pub fn genome_len(&self, idx: u32) -> u64 {
        self.genome_len.get(idx as usize).copied().unwrap_or(0)
    }

    /// The reference genomes, when known: always for our databases; for a Kraken 2 folder once
    /// [`crate::Kraken2Database::prepare`] has read its library.
    pub fn genomes(&self) -> Option<&[Genome]> {
        self.genomes.as_deref()
    }

    /// The genomes per species with their mean length (empty when the genomes are unknown).
    pub fn species_genomes(&self) -> Vec<SpeciesGenomes> {
        self.genomes.as_deref().map(|g| per_species(&self.taxonomy, g)).unwrap_or_default()
    }

    /// The file holding the k-mer profile of the references.
    pub fn profile_path(&self) -> PathBuf {
        match self.kind {
            DatabaseKind::Mgds => self.companion_dir.join(format!("{}.kmer-profile", file_name(&self.path))),
            DatabaseKind::Kraken2 => self.companion_dir.join("mgds.kmer-profile"),
        }
    }

    /// The file holding the k-mer distribution for reads of `read_length` (Bracken's format;
    /// in a Kraken 2 folder, Bracken's own `database<R>mers.kmer_distrib`).
    pub fn kmer_distribution_path(&self, read_length: u32) -> PathBuf {
        match self.kind {
            DatabaseKind::Mgds => {
                self.companion_dir.join(format!("{}.{read_length}mers.kmer_distrib", file_name(&self.path)))
            }
            DatabaseKind::Kraken2 => self.companion_dir.join(format!("database{read_length}mers.kmer_distrib")),
        }
    }

    /// The read lengths for which a k-mer distribution is stored beside the database.
    pub fn distribution_read_lengths(&self) -> Vec<u32> {
        let Ok(entries) = std::fs::read_dir(&self.companion_dir) else { return Vec::new() };
        let mut out: Vec<u32> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter_map(|name| {
                let stem = match self.kind {
                    DatabaseKind::Mgds => name.strip_prefix(&format!("{}.", file_name(&self.path)))?,
                    DatabaseKind::Kraken2 => name.strip_prefix("database")?,
                };
                stem.strip_suffix("mers.kmer_distrib")?.parse().ok()
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// The k-mer distribution for reads of `read_length`: loaded from beside the database, or
    /// computed from the k-mer profile (and stored beside the database when its folder can be
    /// written). `None` when there is neither (a Kraken 2 folder that was not prepared).
    pub fn kmer_distribution(&self, read_length: u32) -> Result<Option<Arc<KmerDistribution>>, Error> {
        if let Some(d) = self.distributions.lock().ok().and_then(|m| m.get(&read_length).cloned()) {
            return Ok(Some(d));
        }
        let path = self.kmer_distribution_path(read_length);
        let dist = if path.exists() {
            KmerDistribution::read(&path, read_length)?
        } else {
            let Some(d) = self.distribution_from_profile(read_length)? else { return Ok(None) };
            // A folder that cannot be written only costs the computation next time.
            let _ = distribution::write_distribution(&path, &d);
            d
        };
        let dist = Arc::new(dist);
        if let Ok(mut m) = self.distributions.lock() {
            m.insert(read_length, dist.clone());
        }
        Ok(Some(dist))
    }

    fn distribution_from_profile(&self, read_length: u32) -> Result<Option<KmerDistribution>, Error> {
        let path = self.profile_path();
        let Ok(file) = File::open(&path) else { return Ok(None) };
        let corrupt = |e: io::Error| Error::DatabaseCorrupt { path: path.clone(), what: e.to_string() };
        let mut r = io::BufReader::with_capacity(1 << 20, file);
        let header = distribution::read_profile_header(&mut r).map_err(corrupt)?;
        if header.digest != self.digest || header.k != self.k() {
            return Ok(None);
        }
        let Some(mut b) = distribution::DistributionBuilder::new(&self.taxonomy, self.k(), read_length) else {
            return Ok(None);
        };
        let n = self.taxonomy.len() as u32;
        distribution::for_each_profile_record(&mut r, |taxon, runs| {
            if taxon < n {
                b.add(taxon, runs);
            }
        })
        .map_err(corrupt)?;
        Ok(Some(b.finish()))
    }

    /// The engine's lookups against this database.
    pub(crate) fn engine(&self) -> Engine<'_> {
        Engine::with(self.scanner(), self.table.view(), self.min_hash, self.taxonomy().len() as u32)
    }

    pub(crate) fn scanner(&self) -> &Minimizers {
        &self.scanner
    }

    /// Sets the genomes (and the per-taxon mean lengths from them).
    pub(crate) fn set_genomes(&mut self, genomes: Option<Vec<Genome>>) {
        self.genome_len = match &genomes {
            Some(g) => subtree_mean_lengths(&self.taxonomy, g),
            None => vec![0; self.taxonomy.len()],
        };
        self.genomes = genomes;
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(|| "database".to_owned(), |n| n.to_string_lossy().into_owned())
}

fn companion_dir(path: &Path, options: &OpenOptions) -> PathBuf {
    options.companion_dir.clone().unwrap_or_else(|| match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    })
}

/// What the header and metadata of a file say.
struct Parsed {
    scanner: Minimizers,
    taxonomy: Taxonomy,
    genomes: Vec<Genome>,
    shape: Shape,
    cells: usize,
    digest: String,
}

impl Parsed {
    fn into_database(self, storage: Storage, path: &Path) -> Result<Database, Error> {
        let table = CompactTable::new(storage, self.cells, self.shape).ok_or_else(|| Error::DatabaseCorrupt {
            path: path.to_owned(),
            what: "the k-mer table is inconsistent".into(),
        })?;
        let mut db = Database {
            path: path.to_owned(),
            kind: DatabaseKind::Mgds,
            digest: self.digest,
            scanner: self.scanner,
            min_hash: 0,
            table,
            taxonomy: self.taxonomy,
            genomes: None,
            genome_len: Vec::new(),
            companion_dir: PathBuf::new(),
            distributions: Mutex::new(HashMap::new()),
        };
        db.set_genomes(Some(self.genomes));
        Ok(db)
    }
}

fn parse(bytes: &[u8], path: &Path) -> Result<Parsed, Error> {
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
    let meta_len = c.u64().ok_or_else(short)? as usize;
    let meta_start = c.pos;
    let n_taxa = c.u32().ok_or_else(short)? as usize;
    if n_taxa == 0 || n_taxa > bytes.len() {
        return Err(corrupt("the taxon count is out of range"));
    }
    let mut taxonomy = Taxonomy::with_capacity(n_taxa);
    for i in 0..n_taxa {
        let tax_id = c.u64().ok_or_else(short)?;
        let parent = c.u32().ok_or_else(short)?;
        let rank = c.text().ok_or_else(short)?;
        let name = c.text().ok_or_else(short)?;
        if (i > 0 && parent as usize >= i) || (i == 0 && parent != 0) {
            return Err(corrupt("a taxon comes before its parent"));
        }
        taxonomy.push(tax_id, parent, rank, name);
    }
    let n_genomes = c.u32().ok_or_else(short)? as usize;
    if n_genomes > bytes.len() {
        return Err(corrupt("the genome count is out of range"));
    }
    let mut genomes = Vec::with_capacity(n_genomes);
    for _ in 0..n_genomes {
        let tax_id = c.u64().ok_or_else(short)?;
        let length = c.u64().ok_or_else(short)?;
        let sequences = c.u32().ok_or_else(short)?;
        let name = c.text().ok_or_else(short)?;
        if !taxonomy.contains(tax_id) {
            return Err(corrupt("a genome's taxon is not in the taxonomy"));
        }
        genomes.push(Genome { name, tax_id, length, sequences });
    }
    if c.pos - meta_start != meta_len {
        return Err(corrupt("the metadata length is wrong"));
    }
    c.pos = c.pos.div_ceil(8) * 8;
    let capacity = c.u64().ok_or_else(short)?;
    let size = c.u64().ok_or_else(short)?;
    let key_bits = c.u32().ok_or_else(short)?;
    let value_bits = c.u32().ok_or_else(short)?;
    let shape = Shape { capacity, size, key_bits, value_bits, slots: Slots::MultiplyShift };
    if shape.cell_bytes() != Some(4) || (1u64 << value_bits) <= n_taxa as u64 || size >= capacity {
        return Err(corrupt("the k-mer table's shape is inconsistent"));
    }
    let cells = c.pos;
    let end = capacity.checked_mul(4).and_then(|n| n.checked_add(cells as u64)).ok_or_else(short)?;
    if (bytes.len() as u64) < end + (END.len() + 32) as u64 {
        return Err(short());
    }
    let end = end as usize;
    if &bytes[end..end + END.len()] != END || bytes.len() != end + END.len() + 32 {
        return Err(corrupt("the end marker is missing"));
    }
    let digest = hex::encode(&bytes[end + END.len()..]);
    Ok(Parsed { scanner: Minimizers::spaced(k, l, spaces), taxonomy, genomes, shape, cells, digest })
}

/// Writes a database file through `w`; returns the hex digest stored at its end.
pub(crate) fn write_database(
    w: &mut dyn Write,
    scanner: &Minimizers,
    taxonomy: &Taxonomy,
    genomes: &[Genome],
    table: &TableBuilder,
) -> io::Result<String> {
    let mut w = HashingWriter { inner: w, hasher: Sha256::new(), written: 0 };
    w.write_all(MAGIC)?;
    for x in [FORMAT_VERSION, scanner.k(), scanner.l(), scanner.spaces()] {
        w.write_all(&x.to_le_bytes())?;
    }
    let mut meta = Vec::new();
    meta.extend_from_slice(&(taxonomy.len() as u32).to_le_bytes());
    for i in 0..taxonomy.len() as u32 {
        meta.extend_from_slice(&taxonomy.tax_id(i).to_le_bytes());
        meta.extend_from_slice(&taxonomy.parent(i).unwrap_or(0).to_le_bytes());
        for text in [taxonomy.rank(i), taxonomy.name(i)] {
            push_text(&mut meta, text);
        }
    }
    meta.extend_from_slice(&(genomes.len() as u32).to_le_bytes());
    for g in genomes {
        meta.extend_from_slice(&g.tax_id.to_le_bytes());
        meta.extend_from_slice(&g.length.to_le_bytes());
        meta.extend_from_slice(&g.sequences.to_le_bytes());
        push_text(&mut meta, &g.name);
    }
    w.write_all(&(meta.len() as u64).to_le_bytes())?;
    w.write_all(&meta)?;
    let pad = w.written.div_ceil(8) * 8 - w.written;
    w.write_all(&vec![0u8; pad as usize])?;
    let shape = table.shape();
    w.write_all(&shape.capacity.to_le_bytes())?;
    w.write_all(&shape.size.to_le_bytes())?;
    w.write_all(&shape.key_bits.to_le_bytes())?;
    w.write_all(&shape.value_bits.to_le_bytes())?;
    w.write_all(table.bytes())?;
    w.write_all(END)?;
    let digest: [u8; 32] = w.hasher.clone().finalize().into();
    w.inner.write_all(&digest)?;
    Ok(hex::encode(digest))
}

fn push_text(buf: &mut Vec<u8>, text: &str) {
    let mut n = text.len().min(u16::MAX as usize);
    while !text.is_char_boundary(n) {
        n -= 1;
    }
    buf.extend_from_slice(&(n as u16).to_le_bytes());
    buf.extend_from_slice(&text.as_bytes()[..n]);
}

/// Hashes what goes through it, except the final digest (written to `inner` directly); the end
/// marker is hashed so that the digest covers everything before the digest.
struct HashingWriter<'a> {
    inner: &'a mut dyn Write,
    hasher: Sha256,
    written: u64,
}

impl Write for HashingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
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
    fn older_versions_ask_for_a_rebuild() {
        for version in [1u32, 3] {
            let mut v = MAGIC.to_vec();
            for x in [version, 35, 31, 1] {
                v.extend_from_slice(&x.to_le_bytes());
            }
            let p = Path::new("/data/old.mgdsdb");
            let e = Database::from_bytes(&v, p).unwrap_err();
            assert!(matches!(e, Error::DatabaseVersion { expected: FORMAT_VERSION, .. }), "{e}");
            let message = e.to_string();
            for part in ["/data/old.mgdsdb", &format!("version {version}"), "older", "rebuild", "mgds db build"] {
                assert!(message.contains(part), "{part:?} missing in: {message}");
            }
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
    }

    #[test]
    fn a_written_database_reads_back() {
        let t = crate::taxonomy::tests::small();
        let scanner = Minimizers::spaced(35, 31, 7);
        let mut table = TableBuilder::new(100, 4);
        for k in 0..50u64 {
            table.insert(crate::mix64(k), (k % 8) as u32 + 1, |a, _| a);
        }
        let genomes = vec![Genome { name: "g".into(), tax_id: 562, length: 1000, sequences: 2 }];
        let mut bytes = Vec::new();
        let digest = write_database(&mut bytes, &scanner, &t, &genomes, &table).unwrap();
        let db = Database::from_bytes(&bytes, Path::new("/tmp/x.mgdsdb")).unwrap();
        assert_eq!(db.digest(), digest);
        assert_eq!(hex::encode(Sha256::digest(&bytes[..bytes.len() - 32])), digest);
        assert_eq!(db.taxonomy(), &t);
        assert_eq!(db.genomes().unwrap(), &genomes[..]);
        assert_eq!(db.genome_len(t.index_of(561).unwrap()), 1000);
        assert_eq!(db.kmer_count(), 50);
        assert_eq!(db.spaces(), 7);
        for k in 0..50u64 {
            assert_eq!(db.table.view().get(crate::mix64(k)), (k % 8) as u32 + 1);
        }
        // Any cut is refused.
        for cut in [bytes.len() - 1, bytes.len() - 33, bytes.len() / 2, 40] {
            let e = Database::from_bytes(&bytes[..cut], Path::new("/tmp/x.mgdsdb")).unwrap_err();
            assert!(matches!(e, Error::DatabaseCorrupt { .. }), "{cut}: {e}");
        }
    }
}
