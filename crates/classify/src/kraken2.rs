//! Kraken 2 database folders, read in place.
//!
//! A folder written by `kraken2-build` holds `hash.k2d` (the compact table), `opts.k2d` (the
//! k-mer options, a raw C struct) and `taxo.k2d` (the taxonomy). The table is memory-mapped; the
//! options and taxonomy are small and read. Classification with the folder gives, read for read,
//! Kraken 2's calls. If the folder still holds `library/` and `seqid2taxid.map` (it does until
//! `kraken2-build --clean`), [`Kraken2Database::prepare`] reads the references once to find the
//! genomes (for genome-copy abundance) and the k-mer distribution (for re-estimated
//! abundance); a k-mer distribution written there by Bracken (`database<R>mers.kmer_distrib`)
//! is used as it is.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use mgds_formats::TaxId;
use sha2::{Digest, Sha256};

use crate::atomic::AtomicFile;
use crate::database::{Database, DatabaseKind, OpenOptions};
use crate::distribution::{self, DistributionBuilder, ProfileWriter};
use crate::engine::Hits;
use crate::error::Error;
use crate::genomes::{GenomeCollector, RecordInfo, SpeciesGenomes, group_hint, is_whole_genome, per_species};
use crate::kmer::{Alphabet, Minimizers};
use crate::library::{BuildProgress, BuildStage, ReferenceFiles, record_description};
use crate::table::{CompactTable, Shape, Slots, Storage};
use crate::taxonomy::Taxonomy;

const HASH: &str = "hash.k2d";
const OPTS: &str = "opts.k2d";
const TAXO: &str = "taxo.k2d";
const TAXO_MAGIC: &[u8; 8] = b"K2TAXDAT";
const NODE_BYTES: usize = 56;

/// The options a Kraken 2 database was built with (`opts.k2d`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kraken2Options {
    /// k-mer length.
    pub k: u32,
    /// Minimizer length.
    pub l: u32,
    /// The spaced-seed mask, two bits a base (four a residue); 0 for none.
    pub spaced_seed_mask: u64,
    /// The minimizer order's toggle mask.
    pub toggle_mask: u64,
    /// Nucleotide database (false: protein, translated search).
    pub dna: bool,
    /// Minimizers whose hash is below this were left out (`--max-db-size`); 0 for none.
    pub minimum_acceptable_hash_value: u64,
    /// 1 for databases built by Kraken 2.0.8 and later; 0 before.
    pub revcom_version: i32,
    /// Size of `opts.k2d` (64 since Kraken 2.1.0).
    pub file_size: usize,
    /// Cells of the table.
    pub capacity: u64,
    /// Occupied cells.
    pub size: u64,
    /// Bits of hash kept in a cell.
    pub key_bits: u32,
    /// Bits of taxon in a cell.
    pub value_bits: u32,
}

/// A Kraken 2 database folder, opened in place.
#[derive(Debug)]
pub struct Kraken2Database {
    db: Database,
    options: Kraken2Options,
}

/// How [`Kraken2Database::prepare`] reads the references.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PrepareOptions {
    /// The read length of the k-mer distribution written (default 150).
    pub read_length: u32,
    /// Reference FASTA files; by default every `.fna`, `.fa` and `.fasta` file under the
    /// folder's `library/` (as Bracken finds them).
    pub library: Option<Vec<PathBuf>>,
    /// The sequence-to-taxon map; by default the folder's `seqid2taxid.map`.
    pub seqid2taxid: Option<PathBuf>,
}

impl Default for PrepareOptions {
    fn default() -> Self {
        PrepareOptions { read_length: crate::library::DEFAULT_READ_LENGTH, library: None, seqid2taxid: None }
    }
}

impl PrepareOptions {
    /// The default options with another read length.
    pub fn with_read_length(read_length: u32) -> PrepareOptions {
        PrepareOptions { read_length, ..PrepareOptions::default() }
    }
}

/// What [`Kraken2Database::prepare`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct PrepareReport {
    /// Reference sequences read.
    pub sequences: u64,
    /// Reference sequences without a taxon in the map (left out, as `kraken2-build` does).
    pub unmapped: u64,
    /// Reference bases read.
    pub bases: u64,
    /// Genomes found, per species.
    pub genomes: Vec<SpeciesGenomes>,
    /// The k-mer profile written.
    pub profile: PathBuf,
    /// The k-mer distribution written.
    pub distribution: PathBuf,
    /// Wall-clock time in seconds.
    pub seconds: f64,
}

impl Kraken2Database {
    /// Opens a Kraken 2 database folder: checks that `hash.k2d`, `opts.k2d` and `taxo.k2d` are
    /// there and consistent (sizes, header fields), reads the options and the taxonomy, and maps
    /// the table. A missing, cut or foreign file is refused with an error naming it.
    ///
    /// The digest ([`Database::digest`]) is a SHA-256 over `opts.k2d`, `taxo.k2d`, the table's
    /// header and size, and 1,024 blocks of 4 KiB spread evenly over the table: it changes when
    /// the database is rebuilt, without reading gigabytes at every open.
    pub fn open(dir: impl AsRef<Path>) -> Result<Kraken2Database, Error> {
        Kraken2Database::open_with(dir, &OpenOptions::default())
    }

    /// [`Kraken2Database::open`] with options (where companion files are kept).
    pub fn open_with(dir: impl AsRef<Path>, open: &OpenOptions) -> Result<Kraken2Database, Error> {
        let dir = dir.as_ref();
        for name in [HASH, OPTS, TAXO] {
            if !dir.join(name).is_file() {
                return Err(Error::NotKraken2 { dir: dir.to_owned(), missing: dir.join(name) });
            }
        }
        let corrupt = |file: &str, what: String| Error::DatabaseCorrupt { path: dir.join(file), what };
        let opts_bytes = read_file(&dir.join(OPTS))?;
        let taxo_bytes = read_file(&dir.join(TAXO))?;
        let taxonomy = parse_taxonomy(&taxo_bytes).map_err(|what| corrupt(TAXO, what))?;

        let hash_path = dir.join(HASH);
        let file = File::open(&hash_path).map_err(|source| Error::Io { path: hash_path.clone(), source })?;
        let map = crate::mmap::map_read_only(&file).map_err(|source| Error::Io { path: hash_path.clone(), source })?;
        if map.len() < 32 {
            return Err(corrupt(HASH, format!("{} bytes, shorter than its 32-byte header", map.len())));
        }
        let field = |i: usize| u64::from_le_bytes(map[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        let (capacity, size, key_bits, value_bits) = (field(0), field(1), field(2), field(3));
        let cell_bytes = match key_bits.checked_add(value_bits) {
            Some(32) => 4u64,
            Some(40) => 5,
            _ => {
                return Err(corrupt(
                    HASH,
                    format!(
                        "{key_bits} key bits and {value_bits} value bits make no cell Kraken 2 writes (32 or 40 bits)"
                    ),
                ));
            }
        };
        let expected = capacity.checked_mul(cell_bytes).and_then(|n| n.checked_add(32));
        if expected != Some(map.len() as u64) {
            return Err(corrupt(
                HASH,
                format!(
                    "{} bytes where its header announces {capacity} cells ({} bytes): the file is cut or damaged",
                    map.len(),
                    expected.map_or_else(|| "too many".to_owned(), |e| e.to_string())
                ),
            ));
        }
        let shape =
            Shape { capacity, size, key_bits: key_bits as u32, value_bits: value_bits as u32, slots: Slots::Modulo };
        if size > capacity || shape.cell_bytes().is_none() {
            return Err(corrupt(HASH, "the table's header is inconsistent".into()));
        }
        let digest = fingerprint(&opts_bytes, &taxo_bytes, &map);
        // Classification reads most of the table anyway: where it fits in the memory free now,
        // ask for it in the background. A table larger than that (a standard database on a lab
        // desktop) is left to be read page by page as lookups reach it, rather than pushing
        // everything else out of the page cache first.
        if fits_in_free_memory(map.len() as u64) {
            let _ = map.advise(memmap2::Advice::WillNeed);
        }
        let table = CompactTable::new(Storage::Mapped(map), 32, shape)
            .ok_or_else(|| corrupt(HASH, "the table's header is inconsistent".into()))?;

        let options = parse_options(&opts_bytes, shape).map_err(|what| corrupt(OPTS, what))?;
        let alphabet = if options.dna {
            Alphabet::Dna { old_reverse_complement: options.revcom_version == 0 }
        } else {
            Alphabet::Protein
        };
        let scanner = Minimizers::kraken2(
            options.k as u64,
            options.l as u64,
            options.spaced_seed_mask,
            options.toggle_mask,
            alphabet,
        )
        .ok_or_else(|| Error::Unsupported {
            path: dir.join(OPTS),
            what: format!(
                "k = {}, l = {} ({}): this engine reads minimizers of at most 31 bases (15 residues) in windows of at most {} of them",
                options.k,
                options.l,
                if options.dna { "nucleotides" } else { "protein" },
                crate::kmer::MAX_WINDOW
            ),
        })?;
        let mut db = Database {
            path: dir.to_owned(),
            kind: DatabaseKind::Kraken2,
            digest,
            scanner,
            min_hash: options.minimum_acceptable_hash_value,
            table,
            taxonomy,
            genomes: None,
            genome_len: Vec::new(),
            companion_dir: open.companion_dir.clone().unwrap_or_else(|| dir.to_owned()),
            distributions: Mutex::new(HashMap::new()),
        };
        let genomes = read_profile_genomes(&db);
        db.set_genomes(genomes);
        Ok(Kraken2Database { db, options })
    }

    /// The options the database was built with.
    pub fn options(&self) -> &Kraken2Options {
        &self.options
    }

    /// The database, to classify with.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// The database, to classify with.
    pub fn into_database(self) -> Database {
        self.db
    }

    /// Reads the references the database was built from (by default `library/` and
    /// `seqid2taxid.map` in the folder) to find the genomes and write the k-mer profile and the
    /// k-mer distribution for `options.read_length` beside the database (see [`OpenOptions`]).
    /// Afterwards (and at every later open) results carry genome-copy and re-estimated
    /// abundance. `progress` is called as the files are read.
    pub fn prepare(
        &mut self,
        options: &PrepareOptions,
        progress: &mut dyn FnMut(&BuildProgress),
    ) -> Result<PrepareReport, Error> {
        let started = Instant::now();
        let dir = self.db.path.clone();
        let library = match &options.library {
            Some(files) => files.clone(),
            None => {
                let lib = dir.join("library");
                if !lib.is_dir() {
                    return Err(Error::NoLibrary { dir: dir.clone() });
                }
                let mut files = Vec::new();
                find_fasta(&lib, &mut files).map_err(|source| Error::Io { path: lib.clone(), source })?;
                files.sort();
                if files.is_empty() {
                    return Err(Error::NoLibrary { dir: dir.clone() });
                }
                files
            }
        };
        let map_path = options.seqid2taxid.clone().unwrap_or_else(|| dir.join("seqid2taxid.map"));
        let map = read_kraken_map(&map_path)?;
        let db = &self.db;
        let taxonomy = &db.taxonomy;
        let lca = |a: u32, b: u32| taxonomy.lca_index(a, b);
        let files = ReferenceFiles::new(&library)?;

        // First the genomes (their lengths come from whole files), then the profile.
        let mut collector = GenomeCollector::default();
        let (mut sequences, mut unmapped, mut bases) = (0u64, 0u64, 0u64);
        let mut taxa: Vec<Option<u32>> = Vec::new();
        files.for_each(BuildStage::Counting, progress, |file, record| {
            let id = String::from_utf8_lossy(record.id()).into_owned();
            let taxon = map.get(&id).and_then(|&t| taxonomy.index_of(t));
            taxa.push(taxon);
            let Some(taxon) = taxon else {
                unmapped += 1;
                return Ok(());
            };
            sequences += 1;
            bases += record.sequence().len() as u64;
            let description = record_description(record);
            let hint = group_hint(&id, &description);
            let assembly = files.assembly(file);
            collector.add(
                &RecordInfo {
                    file,
                    seq_id: &id,
                    explicit: None,
                    assembly,
                    hint: &hint,
                    whole_genome: is_whole_genome(&description),
                    taxon,
                    length: record.sequence().len() as u64,
                },
                lca,
            );
            Ok(())
        })?;
        let genomes = collector.finish(taxonomy);

        let profile_path = db.profile_path();
        let dist_path = db.kmer_distribution_path(options.read_length);
        let engine = db.engine();
        let mut builder = DistributionBuilder::new(taxonomy, db.k(), options.read_length).ok_or_else(|| {
            Error::Options(format!("a read length of {} is shorter than k = {}", options.read_length, db.k()))
        })?;
        let (mut hits, mut runs) = (Hits::new(), Vec::new());
        let mut next = taxa.iter();
        let mut profile_file = AtomicFile::create(&profile_path)?;
        let mut profile = ProfileWriter::new(profile_file.writer(), db.k(), db.digest(), &genomes)
            .map_err(|e| Error::Write { path: profile_path.clone(), source: e })?;
        files.for_each(BuildStage::Profiling, progress, |_, record| {
            let Some(&Some(taxon)) = next.next() else { return Ok(()) };
            engine.kmer_taxa(record.sequence(), &mut hits, &mut runs);
            builder.add(taxon, &runs);
            profile.add(taxon, &runs).map_err(|source| Error::Write { path: profile_path.clone(), source })
        })?;
        profile.finish().map_err(|source| Error::Write { path: profile_path.clone(), source })?;
        profile_file.commit()?;
        let dist = builder.finish();
        distribution::write_distribution(&dist_path, &dist)?;
        if let Ok(mut m) = db.distributions.lock() {
            m.insert(options.read_length, std::sync::Arc::new(dist));
        }
        let summary = per_species(taxonomy, &genomes);
        self.db.set_genomes(Some(genomes));
        Ok(PrepareReport {
            sequences,
            unmapped,
            bases,
            genomes: summary,
            profile: profile_path,
            distribution: dist_path,
            seconds: started.elapsed().as_secs_f64(),
        })
    }
}

impl From<Kraken2Database> for Database {
    fn from(k: Kraken2Database) -> Database {
        k.into_database()
    }
}

impl AsRef<Database> for Kraken2Database {
    fn as_ref(&self) -> &Database {
        &self.db
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| Error::Io { path: path.to_owned(), source })
}

/// The genomes recorded in the folder's k-mer profile, when it was written for this database.
fn read_profile_genomes(db: &Database) -> Option<Vec<crate::genomes::Genome>> {
    let file = File::open(db.profile_path()).ok()?;
    let header = distribution::read_profile_header(&mut BufReader::new(file)).ok()?;
    (header.digest == db.digest() && header.genomes.iter().all(|g| db.taxonomy.contains(g.tax_id)))
        .then_some(header.genomes)
}

/// `opts.k2d`: Kraken 2 zeroes the struct and reads the file into it, so older, shorter files
/// leave the later fields 0.
fn parse_options(bytes: &[u8], shape: Shape) -> Result<Kraken2Options, String> {
    if bytes.len() < 33 {
        return Err(format!("{} bytes, shorter than any Kraken 2 options file (40 to 64 bytes)", bytes.len()));
    }
    if bytes.len() > 64 {
        return Err(format!("{} bytes, longer than Kraken 2's options (64 bytes)", bytes.len()));
    }
    let mut b = [0u8; 64];
    b[..bytes.len()].copy_from_slice(bytes);
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    let i32_at = |i: usize| i32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
    let (k, l) = (u64_at(0), u64_at(8));
    if k == 0 || l == 0 || k > 256 || l > k {
        return Err(format!("k = {k} and l = {l} are not options Kraken 2 writes"));
    }
    Ok(Kraken2Options {
        k: k as u32,
        l: l as u32,
        spaced_seed_mask: u64_at(16),
        toggle_mask: u64_at(24),
        dna: b[32] != 0,
        minimum_acceptable_hash_value: u64_at(40),
        revcom_version: i32_at(48),
        file_size: bytes.len(),
        capacity: shape.capacity,
        size: shape.size,
        key_bits: shape.key_bits,
        value_bits: shape.value_bits,
    })
}

/// `taxo.k2d`: a header, 56-byte nodes (node 0 unused; a parent before its children), then the
/// names and ranks as NUL-terminated strings. Node `i` becomes flat index `i - 1`.
fn parse_taxonomy(bytes: &[u8]) -> Result<Taxonomy, String> {
    if bytes.len() < 32 || &bytes[..8] != TAXO_MAGIC {
        return Err("it does not start with Kraken 2's taxonomy header (K2TAXDAT)".into());
    }
    let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
    let (nodes, names_len, ranks_len) = (u64_at(8), u64_at(16), u64_at(24));
    let expected = nodes
        .checked_mul(NODE_BYTES as u64)
        .and_then(|n| n.checked_add(32))
        .and_then(|n| n.checked_add(names_len))
        .and_then(|n| n.checked_add(ranks_len));
    if expected != Some(bytes.len() as u64) {
        return Err(format!(
            "{} bytes where its header announces {nodes} taxa and {} bytes of names and ranks: the file is cut or damaged",
            bytes.len(),
            names_len.saturating_add(ranks_len)
        ));
    }
    if nodes < 2 {
        return Err("it holds no taxon".into());
    }
    let nodes = nodes as usize;
    let names = &bytes[32 + nodes * NODE_BYTES..32 + nodes * NODE_BYTES + names_len as usize];
    let ranks = &bytes[32 + nodes * NODE_BYTES + names_len as usize..];
    let text = |data: &[u8], off: u64| -> Option<String> {
        let rest = data.get(off as usize..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        Some(String::from_utf8_lossy(&rest[..end]).into_owned())
    };
    let mut t = Taxonomy::with_capacity(nodes - 1);
    for i in 1..nodes {
        let o = 32 + i * NODE_BYTES;
        let parent = u64_at(o);
        let (name_off, rank_off, external) = (u64_at(o + 24), u64_at(o + 32), u64_at(o + 40));
        let parent_flat = match (i, parent) {
            (1, _) => 0,
            (_, p) if p >= 1 && (p as usize) < i => p as u32 - 1,
            _ => return Err(format!("taxon {i} has parent {parent}, not an earlier taxon")),
        };
        let name = text(names, name_off).ok_or_else(|| format!("taxon {i}'s name is outside the names"))?;
        let rank = text(ranks, rank_off).ok_or_else(|| format!("taxon {i}'s rank is outside the ranks"))?;
        t.push(external as TaxId, parent_flat, rank, name);
    }
    Ok(t)
}

/// A fingerprint of a Kraken 2 folder's content (see [`Kraken2Database::open`]).
/// Whether `bytes` are at most half the memory the system says is available now
/// (`MemAvailable` in `/proc/meminfo`); `false` where that cannot be read.
fn fits_in_free_memory(bytes: u64) -> bool {
    let Ok(info) = std::fs::read_to_string("/proc/meminfo") else { return false };
    let available_kb = info
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    available_kb.is_some_and(|kb| bytes <= kb.saturating_mul(1024) / 2)
}

fn fingerprint(opts: &[u8], taxo: &[u8], hash: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(b"kraken2\0");
    for part in [opts, taxo] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    h.update((hash.len() as u64).to_le_bytes());
    h.update(&hash[..32]);
    let body = &hash[32..];
    const BLOCKS: usize = 1024;
    const BLOCK: usize = 4096;
    if body.len() <= BLOCKS * BLOCK {
        h.update(body);
    } else {
        let step = (body.len() - BLOCK) / (BLOCKS - 1);
        for b in 0..BLOCKS {
            h.update(&body[b * step..b * step + BLOCK]);
        }
    }
    hex::encode(h.finalize())
}

/// Every `.fna`, `.fa`, `.fasta` file under `dir` (following links, as Bracken's `find -L`).
fn find_fasta(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            find_fasta(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "fna" || e == "fa" || e == "fasta") {
            out.push(path);
        }
    }
    Ok(())
}

/// `seqid2taxid.map` as `kraken2-build` writes it: `seqid<TAB>taxid`, whitespace-separated;
/// taxid 0 means none.
fn read_kraken_map(path: &Path) -> Result<HashMap<String, TaxId>, Error> {
    let file = File::open(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    let mut map = HashMap::new();
    let mut line = String::new();
    let mut r = BufReader::with_capacity(1 << 16, file);
    loop {
        line.clear();
        if r.read_line(&mut line).map_err(|source| Error::Io { path: path.to_owned(), source })? == 0 {
            break;
        }
        let mut f = line.split_whitespace();
        if let (Some(id), Some(tax)) = (f.next(), f.next())
            && let Ok(tax) = tax.parse::<TaxId>()
            && tax != 0
        {
            map.entry(id.to_owned()).or_insert(tax);
        }
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_table_that_fits_is_asked_for_ahead() {
        assert!(fits_in_free_memory(1 << 20), "a megabyte fits on any machine that runs the tests");
        assert!(!fits_in_free_memory(u64::MAX / 2), "no machine has this much");
    }

    #[test]
    fn options_of_every_kraken2_version_are_read() {
        let shape = Shape { capacity: 10, size: 1, key_bits: 26, value_bits: 6, slots: Slots::Modulo };
        let mut full = Vec::new();
        full.extend_from_slice(&35u64.to_le_bytes());
        full.extend_from_slice(&31u64.to_le_bytes());
        full.extend_from_slice(&0x3FFF_FFFF_F333_3333u64.to_le_bytes());
        full.extend_from_slice(&0xe37e_28c4_271b_5a2du64.to_le_bytes());
        full.extend_from_slice(&[1, 0x13, 0xe1, 0xf6, 0xe7, 0x7f, 0, 0]);
        full.extend_from_slice(&0u64.to_le_bytes());
        full.extend_from_slice(&1i32.to_le_bytes());
        full.extend_from_slice(&[0; 12]);
        assert_eq!(full.len(), 64);
        let o = parse_options(&full, shape).unwrap();
        assert_eq!((o.k, o.l, o.dna, o.revcom_version), (35, 31, true, 1));
        // Kraken 2.0.7 wrote 48 bytes: no reverse-complement version, so the old one.
        let o = parse_options(&full[..48], shape).unwrap();
        assert_eq!(o.revcom_version, 0);
        assert!(parse_options(&full[..20], shape).unwrap_err().contains("20 bytes"));
        assert!(parse_options(&[full.clone(), vec![0]].concat(), shape).is_err());
    }

    #[test]
    fn taxonomy_files_are_checked() {
        assert!(parse_taxonomy(b"K2TAXDAT").is_err());
        assert!(parse_taxonomy(b"NOTTAXO!0000000000000000000000000000").unwrap_err().contains("K2TAXDAT"));
    }
}
