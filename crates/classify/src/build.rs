//! Building a database from reference FASTA files and an NCBI taxonomy, with the inputs
//! `kraken2-build` takes: taxonomy dumps (`nodes.dmp`, `names.dmp`, and `merged.dmp` when it is
//! beside them), and each sequence's taxon from a sequence-to-taxon map, an NCBI
//! `*.accession2taxid` file, a `kraken:taxid|N|` header, or the assembly its file is named
//! after (with `assembly_summary.txt`).
//!
//! The references are read three times, one sequence at a time, so memory stays at the size of
//! the table plus one sequence: to count the minimizers (a 1-in-128 sample of their hashes sizes
//! the table), to fill the table (each minimizer maps to the lowest common ancestor of the taxa
//! whose references hold it), and to write the k-mer profile and the default k-mer distribution
//! beside the database (for re-estimated abundance).

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::Instant;

use mgds_formats::{Record, TaxId};

use crate::atomic::AtomicFile;
use crate::database::write_database;
use crate::distribution::{DistributionBuilder, ProfileWriter, write_distribution};
use crate::engine::{Engine, Hits};
use crate::error::Error;
use crate::genomes::{
    GenomeCollector, RecordInfo, SpeciesGenomes, accession_of, group_hint, is_whole_genome, per_species, wgs_letters,
};
use crate::kmer::{AMBIGUOUS, DEFAULT_K, DEFAULT_L, DEFAULT_SPACES, Minimizers, max_spaces, mix64};
use crate::library::{BuildProgress, BuildStage, DEFAULT_READ_LENGTH, ReferenceFiles, record_description};
use crate::table::TableBuilder;
use crate::taxonomy::{Taxonomy, read_merged};

/// Table cells per stored minimizer: Kraken 2's load factor of 0.7, so that lookups probe as
/// few cells (and risk as few false matches) as Kraken 2's.
const LOAD_FACTOR: f64 = 0.7;
/// One minimizer hash in this many is kept to estimate how many distinct minimizers there are.
const SAMPLE: u64 = 128;

/// What a database is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildInput {
    /// Reference FASTA files (plain or gzipped), read in this order. An NCBI assembly file
    /// (named `GCF_...`/`GCA_...`) is one genome.
    pub references: Vec<PathBuf>,
    /// Sequence-to-taxon map, or an empty path when the FASTA headers carry `kraken:taxid|N|`
    /// (or the files are assemblies listed in [`BuildOptions::assembly_summary`]).
    ///
    /// Either a TSV `seq_id<TAB>tax_id` per line, optionally with a third column naming the
    /// genome (assembly) the sequence belongs to, which overrides how genomes are otherwise
    /// found ([`crate::genomes`]); blank lines and lines starting with `#` are skipped. Or an
    /// NCBI `*.accession2taxid` file (with its header line). A sequence is looked up by its
    /// identifier, then by the accession in it.
    pub seqid2taxid: PathBuf,
    /// NCBI `nodes.dmp` (`merged.dmp` beside it, if there, maps merged tax ids).
    pub nodes: PathBuf,
    /// NCBI `names.dmp`.
    pub names: PathBuf,
}

/// How a database is built. The parameters are recorded in the file, and classification uses
/// the same ones.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BuildOptions {
    /// Spaced-seed positions ignored in each minimizer (Kraken 2's `--minimizer-spaces`); 0
    /// for exact minimizers. At most `l / 4` (7 for the default `l` = 31).
    pub spaces: u32,
    /// The read length of the k-mer distribution written beside the database (default
    /// [`DEFAULT_READ_LENGTH`]); `None` writes no k-mer profile nor distribution (no
    /// re-estimated abundance).
    pub read_length: Option<u32>,
    /// NCBI `assembly_summary.txt`: the taxon of assemblies whose files are named by their
    /// accession, and the assembly of WGS contigs.
    pub assembly_summary: Option<PathBuf>,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions { spaces: DEFAULT_SPACES, read_length: Some(DEFAULT_READ_LENGTH), assembly_summary: None }
    }
}

impl BuildOptions {
    /// The default options with `spaces` spaced-seed positions.
    pub fn with_spaces(spaces: u32) -> BuildOptions {
        BuildOptions { spaces, ..BuildOptions::default() }
    }

    /// These options with another distribution read length (`None`: no k-mer profile).
    pub fn read_length(mut self, read_length: Option<u32>) -> BuildOptions {
        self.read_length = read_length;
        self
    }

    /// These options with an NCBI `assembly_summary.txt`.
    pub fn assembly_summary(mut self, path: impl Into<PathBuf>) -> BuildOptions {
        self.assembly_summary = Some(path.into());
        self
    }
}

/// What a build produced.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildReport {
    /// Distinct minimizers stored.
    pub kmers: u64,
    /// Cells of the table (stored minimizers plus free cells).
    pub capacity: u64,
    /// Taxa in the database's taxonomy (the mapped taxa and their ancestors).
    pub taxa: usize,
    /// Size of the database file in bytes.
    pub bytes: u64,
    /// Size of the companion files (k-mer profile and distribution) in bytes.
    pub companion_bytes: u64,
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
    /// The genomes found, per species, with their mean length.
    pub genomes: Vec<SpeciesGenomes>,
    /// The read length of the k-mer distribution written, if any.
    pub read_length: Option<u32>,
    /// Hex SHA-256 of the file (the same as [`crate::Database::digest`]).
    pub digest: String,
    /// Wall-clock build time in seconds.
    pub seconds: f64,
}

/// Builds a database from `input` and writes it to `out` atomically (a temporary file beside
/// `out`, renamed when complete), with the k-mer profile and distribution beside it. The same
/// inputs always give a byte-identical file.
///
/// Each minimizer maps to the lowest common ancestor of all taxa whose references contain it.
/// The taxonomy is reduced to the mapped taxa and their ancestors. The reference genomes are
/// recorded for genome-copy abundance ([`crate::genomes`]).
///
/// Uses the default [`BuildOptions`] (Kraken 2's default spaced seed); see [`build_with`].
pub fn build(input: &BuildInput, out: &Path) -> Result<BuildReport, Error> {
    build_with(input, &BuildOptions::default(), out)
}

/// [`build`] with the given options.
pub fn build_with(input: &BuildInput, options: &BuildOptions, out: &Path) -> Result<BuildReport, Error> {
    build_with_progress(input, options, out, &mut |_| {})
}

/// [`build_with`], calling `progress` as the references are read.
pub fn build_with_progress(
    input: &BuildInput,
    options: &BuildOptions,
    out: &Path,
    progress: &mut dyn FnMut(&BuildProgress),
) -> Result<BuildReport, Error> {
    let started = Instant::now();
    if options.spaces > max_spaces(DEFAULT_L) {
        return Err(Error::Options(format!(
            "a spaced seed of {} spaces is more than minimizers of {DEFAULT_L} bases allow (at most {})",
            options.spaces,
            max_spaces(DEFAULT_L)
        )));
    }
    if let Some(r) = options.read_length
        && r < DEFAULT_K
    {
        return Err(Error::Options(format!("a read length of {r} is shorter than k = {DEFAULT_K}")));
    }
    progress(&BuildProgress { stage: BuildStage::Taxonomy, done: 0, total: 0 });
    let files = ReferenceFiles::new(&input.references)?;
    let full = Taxonomy::from_dmp(&input.nodes, &input.names)?;
    let merged_path = input.nodes.with_file_name("merged.dmp");
    let merged = if merged_path.is_file() { read_merged(&merged_path)? } else { HashMap::new() };
    let current = |t: TaxId| merged.get(&t).copied().unwrap_or(t);
    let assemblies = match &options.assembly_summary {
        Some(p) => AssemblySummary::read(p)?,
        None => AssemblySummary::default(),
    };

    // Pass 1: identifiers, lengths and a sample of the minimizers.
    let scanner = Minimizers::spaced(DEFAULT_K, DEFAULT_L, options.spaces);
    let mut records: Vec<RefRecord> = Vec::new();
    let mut sample: HashSet<u64, BuildHasherDefault<MixHasher>> = HashSet::default();
    files.for_each(BuildStage::Counting, progress, |file, record| {
        let id = String::from_utf8_lossy(record.id()).into_owned();
        let description = record_description(record);
        let hint = group_hint(&id, &description);
        let mut last = AMBIGUOUS;
        scanner.scan(record.sequence(), |m| {
            if m != AMBIGUOUS && m != last {
                last = m;
                let h = mix64(m);
                if h.rotate_left(20).is_multiple_of(SAMPLE) {
                    sample.insert(h);
                }
            }
        });
        let whole_genome = is_whole_genome(&description);
        records.push(RefRecord { file, id, hint, whole_genome, length: record.sequence().len() as u64, taxon: 0 });
        Ok(())
    })?;

    // Each record's taxon.
    let map = if input.seqid2taxid.as_os_str().is_empty() {
        SeqMap::default()
    } else {
        let needed: HashSet<&str> = records.iter().flat_map(|r| lookup_keys(&r.id)).collect();
        SeqMap::read(&input.seqid2taxid, &full, &current, &needed)?
    };
    let mut explicit: Vec<Option<String>> = Vec::with_capacity(records.len());
    let mut mapped = Vec::with_capacity(records.len());
    let mut record_in_file = vec![0u64; input.references.len()];
    for r in &records {
        record_in_file[r.file as usize] += 1;
        let from_map = lookup_keys(&r.id).find_map(|k| map.entries.get(k));
        let tax_id = match from_map {
            Some((t, _)) => Some(*t),
            None => header_tax_id(&r.id)
                .or_else(|| files.assembly(r.file).and_then(|a| assemblies.taxa.get(a)).copied())
                .or_else(|| assemblies.of_wgs(&r.id).and_then(|a| assemblies.taxa.get(a)).copied())
                .map(current),
        };
        let Some(tax_id) = tax_id else {
            return Err(Error::UnmappedSequence {
                path: input.references[r.file as usize].clone(),
                record: record_in_file[r.file as usize],
                seq_id: r.id.clone(),
                map: input.seqid2taxid.clone(),
            });
        };
        if !full.contains(tax_id) {
            return Err(Error::UnknownTaxon {
                path: input.references[r.file as usize].clone(),
                seq_id: r.id.clone(),
                tax_id,
                nodes: input.nodes.clone(),
            });
        }
        explicit.push(from_map.and_then(|(_, g)| g.clone()));
        mapped.push(tax_id);
    }
    let mut keep = mapped.clone();
    keep.sort_unstable();
    keep.dedup();
    let taxonomy = full.pruned(keep);
    drop(full);
    let lca = |a: u32, b: u32| taxonomy.lca_index(a, b);
    let mut collector = GenomeCollector::default();
    let (mut sequences, mut bases) = (0u64, 0u64);
    for ((r, tax_id), explicit) in records.iter_mut().zip(&mapped).zip(&explicit) {
        r.taxon = taxonomy.index_of(*tax_id).expect("mapped taxa are kept by pruning");
        sequences += 1;
        bases += r.length;
        let assembly = files.assembly(r.file).or_else(|| assemblies.of_wgs(&r.id));
        collector.add(
            &RecordInfo {
                file: r.file,
                seq_id: &r.id,
                explicit: explicit.as_deref(),
                assembly,
                hint: &r.hint,
                whole_genome: r.whole_genome,
                taxon: r.taxon,
                length: r.length,
            },
            lca,
        );
    }
    drop(explicit);
    drop(map);
    let genomes = collector.finish(&taxonomy);
    for r in &mut records {
        r.hint = String::new();
    }

    // Pass 2: the table.
    if sample.is_empty() && records.iter().all(|r| r.length < DEFAULT_K as u64) {
        return Err(Error::NoKmers { k: DEFAULT_K });
    }
    let estimate = (sample.len() as u64 + 1) * SAMPLE;
    drop(sample);
    let capacity = ((estimate as f64 * 1.01 / LOAD_FACTOR) as u64).max(1024);
    let value_bits = (u32::BITS - (taxonomy.len() as u32).leading_zeros()).max(1);
    let mut table = TableBuilder::new(capacity, value_bits);
    let mut index = 0usize;
    let mut full_table = false;
    files.for_each(BuildStage::Inserting, progress, |file, record| {
        let r = next_record(&records, &mut index, file, record, &input.references)?;
        let value = r.taxon + 1;
        let mut last = AMBIGUOUS;
        scanner.scan(record.sequence(), |m| {
            if m != AMBIGUOUS && m != last {
                last = m;
                full_table |= !table.insert(mix64(m), value, |old, new| lca(old - 1, new - 1) + 1);
            }
        });
        Ok(())
    })?;
    if full_table {
        return Err(Error::Options(
            "the references changed while the database was built (more k-mers than counted); build again".into(),
        ));
    }
    if table.shape().size == 0 {
        return Err(Error::NoKmers { k: DEFAULT_K });
    }

    progress(&BuildProgress { stage: BuildStage::Writing, done: 0, total: files.total });
    let mut db_file = AtomicFile::create(out)?;
    let digest =
        write_database(db_file.writer(), &scanner, &taxonomy, &genomes, &table).map_err(|e| db_file.error(e))?;
    let bytes = db_file.commit()?;

    // Pass 3: the k-mer profile and the default distribution.
    let mut companion_bytes = 0;
    if let Some(read_length) = options.read_length {
        let name = out.file_name().map_or_else(|| "database".into(), |n| n.to_string_lossy().into_owned());
        let dir = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        remove_stale_distributions(dir, &name);
        let profile_path = dir.join(format!("{name}.kmer-profile"));
        let dist_path = dir.join(format!("{name}.{read_length}mers.kmer_distrib"));
        let engine = Engine::with(&scanner, table.view(), 0, taxonomy.len() as u32);
        let mut builder = DistributionBuilder::new(&taxonomy, DEFAULT_K, read_length).expect("read length checked");
        let (mut hits, mut runs) = (Hits::new(), Vec::new());
        let mut profile_file = AtomicFile::create(&profile_path)?;
        let write_err = |source| Error::Write { path: profile_path.clone(), source };
        let mut profile = ProfileWriter::new(profile_file.writer(), DEFAULT_K, &digest, &genomes).map_err(write_err)?;
        let mut index = 0usize;
        files.for_each(BuildStage::Profiling, progress, |file, record| {
            let r = next_record(&records, &mut index, file, record, &input.references)?;
            engine.kmer_taxa(record.sequence(), &mut hits, &mut runs);
            builder.add(r.taxon, &runs);
            profile.add(r.taxon, &runs).map_err(write_err)
        })?;
        profile.finish().map_err(write_err)?;
        companion_bytes += profile_file.commit()?;
        write_distribution(&dist_path, &builder.finish())?;
        companion_bytes += std::fs::metadata(&dist_path).map(|m| m.len()).unwrap_or(0);
    }

    Ok(BuildReport {
        kmers: table.shape().size,
        capacity: table.shape().capacity,
        taxa: taxonomy.len(),
        bytes,
        companion_bytes,
        sequences,
        bases,
        k: DEFAULT_K,
        l: DEFAULT_L,
        spaces: options.spaces,
        genomes: per_species(&taxonomy, &genomes),
        read_length: options.read_length,
        digest,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Distributions of an earlier database of the same name would not match the new one.
fn remove_stale_distributions(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let prefix = format!("{name}.");
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        if file.starts_with(&prefix) && file.ends_with("mers.kmer_distrib") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// A reference record as the first pass saw it.
struct RefRecord {
    file: u32,
    id: String,
    hint: String,
    whole_genome: bool,
    length: u64,
    taxon: u32,
}

/// The record the second and third passes expect next, checked against the one read.
fn next_record<'a>(
    records: &'a [RefRecord],
    index: &mut usize,
    file: u32,
    record: &Record,
    paths: &[PathBuf],
) -> Result<&'a RefRecord, Error> {
    let r = records.get(*index).filter(|r| r.file == file && r.id.as_bytes() == record.id());
    *index += 1;
    r.ok_or_else(|| {
        Error::Options(format!(
            "{} changed while the database was built (record `{}`); build again",
            paths[file as usize].display(),
            String::from_utf8_lossy(record.id())
        ))
    })
}

/// The tax id in a `kraken:taxid|N` identifier, or an identifier made of digits only (as
/// `kraken2-build` reads them).
fn header_tax_id(id: &str) -> Option<TaxId> {
    if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
        return id.parse().ok();
    }
    let at = id.match_indices("kraken:taxid|").find(|&(i, _)| i == 0 || id.as_bytes()[i - 1] == b'|')?.0;
    let rest = &id[at + "kraken:taxid|".len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    rest[..digits].parse().ok()
}

/// The keys a record is looked up by in a map: its identifier, the accession in it, and that
/// accession without its version.
fn lookup_keys(id: &str) -> impl Iterator<Item = &str> {
    let acc = accession_of(id);
    let unversioned = acc.split('.').next().unwrap_or(acc);
    [id, acc, unversioned]
        .into_iter()
        .enumerate()
        .filter(move |&(i, k)| match i {
            0 => true,
            1 => k != id,
            _ => k != acc,
        })
        .map(|(_, k)| k)
}

/// The sequence-to-taxon map.
#[derive(Default)]
struct SeqMap {
    // key -> (tax id, explicit genome)
    entries: HashMap<String, (TaxId, Option<String>)>,
}

impl SeqMap {
    /// Reads a 2- or 3-column map (every line checked) or an NCBI accession2taxid file (only the
    /// `needed` accessions kept).
    fn read(
        path: &Path,
        taxonomy: &Taxonomy,
        current: &dyn Fn(TaxId) -> TaxId,
        needed: &HashSet<&str>,
    ) -> Result<SeqMap, Error> {
        let io_err = |source| Error::Io { path: path.to_owned(), source };
        let file = File::open(path).map_err(io_err)?;
        let mut map = SeqMap::default();
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut line = String::new();
        let mut line_no = 0u64;
        let mut accession2taxid = false;
        loop {
            line.clear();
            if reader.read_line(&mut line).map_err(io_err)? == 0 {
                break;
            }
            line_no += 1;
            let text = line.trim_end_matches(['\n', '\r']);
            if line_no == 1 && text.starts_with("accession\taccession.version\ttaxid") {
                accession2taxid = true;
                continue;
            }
            if accession2taxid {
                let mut f = text.split('\t');
                let (Some(acc), Some(version), Some(tax)) = (f.next(), f.next(), f.next()) else { continue };
                for key in [acc, version] {
                    if needed.contains(key)
                        && let Some(t) = mgds_formats::parse_tax_id(tax)
                    {
                        map.entries.insert(key.to_owned(), (current(t), None));
                    }
                }
                continue;
            }
            if text.trim().is_empty() || text.starts_with('#') {
                continue;
            }
            let mut fields = text.split('\t');
            let (Some(seq_id), Some(tax)) = (fields.next(), fields.next()) else {
                return Err(Error::table(path, line_no, "expected `seq_id<TAB>tax_id` (and optionally `<TAB>genome`)"));
            };
            let seq_id = seq_id.trim();
            let Some(tax_id) = mgds_formats::parse_tax_id(tax) else {
                return Err(Error::table(path, line_no, format!("the tax id `{}` is not a whole number", tax.trim())));
            };
            let tax_id = current(tax_id);
            if !taxonomy.contains(tax_id) {
                return Err(Error::table(
                    path,
                    line_no,
                    format!("tax id {tax_id} (for `{seq_id}`) is not in the taxonomy (nodes.dmp)"),
                ));
            }
            let genome = fields.next().map(str::trim).filter(|g| !g.is_empty()).map(str::to_owned);
            if let Some((old, _)) = map.entries.insert(seq_id.to_owned(), (tax_id, genome))
                && old != tax_id
            {
                return Err(Error::table(path, line_no, format!("`{seq_id}` is mapped to both {old} and {tax_id}")));
            }
        }
        Ok(map)
    }
}

/// NCBI `assembly_summary.txt`: the taxon of each assembly, and the assembly of each WGS
/// project.
#[derive(Default)]
struct AssemblySummary {
    taxa: HashMap<String, TaxId>,
    wgs: HashMap<String, String>,
}

impl AssemblySummary {
    fn read(path: &Path) -> Result<AssemblySummary, Error> {
        let io_err = |source| Error::Io { path: path.to_owned(), source };
        let file = File::open(path).map_err(io_err)?;
        let mut out = AssemblySummary::default();
        let (mut col_acc, mut col_tax, mut col_wgs) = (0usize, 5usize, 3usize);
        for (i, line) in BufReader::new(file).lines().enumerate() {
            let line = line.map_err(io_err)?;
            if let Some(header) = line.strip_prefix('#') {
                let cols: Vec<&str> = header.trim_start().split('\t').collect();
                if cols.first() == Some(&"assembly_accession") {
                    let find = |name: &str, default: usize| cols.iter().position(|c| *c == name).unwrap_or(default);
                    (col_acc, col_tax, col_wgs) =
                        (find("assembly_accession", 0), find("taxid", 5), find("wgs_master", 3));
                }
                continue;
            }
            if line.trim().is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split('\t').collect();
            let (Some(acc), Some(tax)) = (f.get(col_acc), f.get(col_tax)) else {
                return Err(Error::table(path, i as u64 + 1, "expected NCBI assembly_summary.txt columns"));
            };
            let Some(tax) = mgds_formats::parse_tax_id(tax) else {
                return Err(Error::table(path, i as u64 + 1, format!("the taxid `{tax}` is not a whole number")));
            };
            out.taxa.insert((*acc).to_owned(), tax);
            if let Some(letters) = f.get(col_wgs).and_then(|w| wgs_letters(w)) {
                out.wgs.insert(letters.to_owned(), (*acc).to_owned());
            }
        }
        Ok(out)
    }

    /// The assembly whose WGS project a record belongs to.
    fn of_wgs(&self, id: &str) -> Option<&str> {
        if self.wgs.is_empty() {
            return None;
        }
        let project = crate::genomes::wgs_project(accession_of(id))?;
        self.wgs.get(&project[..project.len() - 2]).map(String::as_str)
    }
}

/// FxHash-style hasher for the minimizer sample: its keys are already murmur hashes.
#[derive(Default)]
struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix64(self.0 ^ b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tax_ids_in_headers() {
        assert_eq!(header_tax_id("kraken:taxid|562|NC_000913.3"), Some(562));
        assert_eq!(header_tax_id("NC_1|kraken:taxid|573"), Some(573));
        assert_eq!(header_tax_id("x_kraken:taxid|573"), None);
        assert_eq!(header_tax_id("9606"), Some(9606));
        assert_eq!(header_tax_id("NC_000913.3"), None);
        let keys: Vec<&str> = lookup_keys("gi|1|gb|CP001235.1|").collect();
        assert_eq!(keys, ["gi|1|gb|CP001235.1|", "CP001235.1", "CP001235"]);
        let keys: Vec<&str> = lookup_keys("chr1").collect();
        assert_eq!(keys, ["chr1"]);
    }

    #[test]
    fn out_of_range_options_are_refused() {
        let input = BuildInput {
            references: vec![],
            seqid2taxid: PathBuf::from("missing.tsv"),
            nodes: PathBuf::from("missing-nodes.dmp"),
            names: PathBuf::from("missing-names.dmp"),
        };
        let e = build_with(&input, &BuildOptions::with_spaces(8), Path::new("x.mgdsdb")).unwrap_err();
        assert!(matches!(e, Error::Options(_)), "{e}");
        let e = build_with(&input, &BuildOptions::default().read_length(Some(20)), Path::new("x.mgdsdb")).unwrap_err();
        assert!(e.to_string().contains("shorter than k"), "{e}");
    }
}
