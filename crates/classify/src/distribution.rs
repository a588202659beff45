//! The k-mer profile of a database's references and the k-mer distributions computed from it,
//! for abundance re-estimation ([`crate::abundance`]), with their file formats: the profile is
//! ours (the taxon of every k-mer of every reference sequence, run-length encoded); a
//! distribution is written in Bracken's own `database<R>mers.kmer_distrib` format.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;

use mgds_formats::TaxId;

use crate::error::Error;
use crate::genomes::Genome;
use crate::taxonomy::Taxonomy;

const PROFILE_MAGIC: &[u8; 8] = b"MGDSKPR\0";
const PROFILE_VERSION: u32 = 1;
const DISTRIB_HEADER: &str = "mapped_taxid\tgenome_taxids:kmers_mapped:total_genome_kmers";

/// The classification of every read of one length along the reference genomes: for each taxon
/// `j`, the genomes with reads placed at `j`, how many, and out of how many reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KmerDistribution {
    pub(crate) read_length: u32,
    // mapped tax id -> (genome tax id -> (reads mapped there, all reads of the genome))
    pub(crate) lines: BTreeMap<TaxId, BTreeMap<TaxId, (u64, u64)>>,
}

impl KmerDistribution {
    /// The read length it describes.
    pub fn read_length(&self) -> u32 {
        self.read_length
    }

    /// `(genome tax id, reads of that genome placed at mapped, reads of that genome)` for
    /// every genome with reads placed at `mapped`.
    pub fn line(&self, mapped: TaxId) -> impl Iterator<Item = (TaxId, u64, u64)> + '_ {
        self.lines.get(&mapped).into_iter().flat_map(|m| m.iter().map(|(&g, &(n, t))| (g, n, t)))
    }

    /// `P(mapped | genome)`; `None` when the genome has no reads placed there.
    pub fn probability(&self, mapped: TaxId, genome: TaxId) -> Option<f64> {
        let &(n, t) = self.lines.get(&mapped)?.get(&genome)?;
        (t > 0).then(|| n as f64 / t as f64)
    }

    /// Reads Bracken's `database<R>mers.kmer_distrib` format.
    pub fn read(path: &Path, read_length: u32) -> Result<KmerDistribution, Error> {
        let io_err = |source| Error::Io { path: path.to_owned(), source };
        let file = std::fs::File::open(path).map_err(io_err)?;
        let mut lines = BTreeMap::new();
        for (i, line) in BufReader::new(file).lines().enumerate() {
            let line = line.map_err(io_err)?;
            let line_no = i as u64 + 1;
            if i == 0 && line.starts_with("mapped_taxid") || line.trim().is_empty() {
                continue;
            }
            let bad = || Error::table(path, line_no, "expected `mapped_taxid<TAB>genome:mapped:total ...`");
            let (mapped, rest) = line.split_once('\t').ok_or_else(bad)?;
            let mapped: TaxId = mapped.trim().parse().map_err(|_| bad())?;
            let entry: &mut BTreeMap<TaxId, (u64, u64)> = lines.entry(mapped).or_default();
            for item in rest.split_whitespace() {
                let mut f = item.split(':');
                let (Some(g), Some(n), Some(t)) = (f.next(), f.next(), f.next()) else { return Err(bad()) };
                let parse = |s: &str| s.parse::<u64>().map_err(|_| bad());
                entry.insert(parse(g)?, (parse(n)?, parse(t)?));
            }
        }
        Ok(KmerDistribution { read_length, lines })
    }

    /// Writes Bracken's format (lines in tax id order).
    pub fn write(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(w, "{DISTRIB_HEADER}")?;
        for (mapped, genomes) in &self.lines {
            write!(w, "{mapped}\t")?;
            for (g, (n, t)) in genomes {
                write!(w, "{g}:{n}:{t} ")?;
            }
            writeln!(w)?;
        }
        Ok(())
    }
}

/// Counts, genome by genome, where the reads of one length along its sequences are placed.
pub(crate) struct DistributionBuilder<'a> {
    taxonomy: &'a Taxonomy,
    read_length: u32,
    window: usize,
    // (genome flat, mapped value) -> reads
    counts: HashMap<(u32, u32), u64>,
    totals: HashMap<u32, u64>,
    scratch: Vec<(u32, u32)>,
}

impl<'a> DistributionBuilder<'a> {
    /// For reads of `read_length` bases and k-mers of `k`; `None` when reads are shorter than k.
    pub fn new(taxonomy: &'a Taxonomy, k: u32, read_length: u32) -> Option<DistributionBuilder<'a>> {
        (read_length >= k).then(|| DistributionBuilder {
            taxonomy,
            read_length,
            window: (read_length - k + 1) as usize,
            counts: HashMap::new(),
            totals: HashMap::new(),
            scratch: Vec::new(),
        })
    }

    /// Adds every read along one reference sequence mapped to `genome` (flat index), given the
    /// run-length encoded taxon values of its k-mers (flat index + 1; 0 for none).
    pub fn add(&mut self, genome: u32, runs: &[(u32, u32)]) {
        let n = self.window;
        let total: usize = runs.iter().map(|r| r.1 as usize).sum();
        if total < n {
            return;
        }
        *self.totals.entry(genome).or_default() += (total - n + 1) as u64;
        // The window's taxa and counts, the leaving and entering k-mers' runs and offsets.
        let window = &mut self.scratch;
        window.clear();
        let add = |w: &mut Vec<(u32, u32)>, v: u32, c: u32| {
            if v == 0 {
                return;
            }
            match w.iter_mut().find(|e| e.0 == v) {
                Some(e) => e.1 += c,
                None => w.push((v, c)),
            }
        };
        // Fill the first window.
        let (mut ei, mut eoff) = (0usize, 0u32);
        let mut filled = 0usize;
        while filled < n {
            let (v, c) = runs[ei];
            let take = (c - eoff).min((n - filled) as u32);
            add(window, v, take);
            filled += take as usize;
            eoff += take;
            if eoff == c {
                ei += 1;
                eoff = 0;
            }
        }
        let taxonomy = self.taxonomy;
        let mut result = window_call(taxonomy, window);
        let mut counted = 1u64;
        let (mut li, mut loff) = (0usize, 0u32);
        let mut left = total - n;
        while left > 0 {
            let (ev, ec) = runs[ei];
            let (lv, lc) = runs[li];
            if ev == lv {
                // Same taxon enters and leaves: nothing changes for as long as both runs last.
                let s = ((ec - eoff).min(lc - loff) as usize).min(left) as u32;
                counted += s as u64;
                left -= s as usize;
                eoff += s;
                loff += s;
            } else {
                add(window, ev, 1);
                if lv != 0 {
                    let e = window.iter_mut().find(|e| e.0 == lv).expect("the leaving taxon is in the window");
                    e.1 -= 1;
                    if e.1 == 0 {
                        window.retain(|e| e.1 > 0);
                    }
                }
                *self.counts.entry((genome, result)).or_default() += counted;
                counted = 0;
                result = window_call(taxonomy, window);
                counted += 1;
                left -= 1;
                eoff += 1;
                loff += 1;
            }
            if eoff == ec {
                ei += 1;
                eoff = 0;
            }
            if loff == lc {
                li += 1;
                loff = 0;
            }
        }
        *self.counts.entry((genome, result)).or_default() += counted;
    }

    /// The distribution, by tax id.
    pub fn finish(self) -> KmerDistribution {
        let t = self.taxonomy;
        let ext = |v: u32| if v == 0 { 0 } else { t.tax_id(v - 1) };
        let mut lines: BTreeMap<TaxId, BTreeMap<TaxId, (u64, u64)>> = BTreeMap::new();
        for ((genome, mapped), n) in self.counts {
            if n == 0 {
                continue;
            }
            let total = self.totals[&genome];
            lines.entry(ext(mapped)).or_default().insert(t.tax_id(genome), (n, total));
        }
        KmerDistribution { read_length: self.read_length, lines }
    }
}

/// The call for a window of k-mers (flat index + 1 per taxon, with counts): Kraken's best
/// root-to-leaf path without confidence or hit groups, as Bracken classifies its simulated reads.
fn window_call(taxonomy: &Taxonomy, window: &[(u32, u32)]) -> u32 {
    let mut best: Option<(u32, u64)> = None;
    for &(v, _) in window {
        let t = v - 1;
        let score: u64 =
            window.iter().filter(|&&(a, _)| taxonomy.is_ancestor_index(a - 1, t)).map(|&(_, c)| c as u64).sum();
        best = match best {
            Some((b, s)) if s > score => Some((b, s)),
            Some((b, s)) if s == score => Some((taxonomy.lca_index(b, t), s)),
            _ => Some((t, score)),
        };
    }
    best.map_or(0, |(t, _)| t + 1)
}

/// A k-mer profile being written: the genomes, then each reference sequence's genome taxon and
/// run-length encoded k-mer taxa.
pub(crate) struct ProfileWriter<W: Write> {
    w: W,
    records: u64,
    buf: Vec<u8>,
}

impl<W: Write> ProfileWriter<W> {
    /// Starts a profile for the database with `digest`.
    pub fn new(mut w: W, k: u32, digest: &str, genomes: &[Genome]) -> io::Result<ProfileWriter<W>> {
        w.write_all(PROFILE_MAGIC)?;
        w.write_all(&PROFILE_VERSION.to_le_bytes())?;
        w.write_all(&k.to_le_bytes())?;
        let mut d = [0u8; 64];
        let n = digest.len().min(64);
        d[..n].copy_from_slice(&digest.as_bytes()[..n]);
        w.write_all(&d)?;
        write_genomes(&mut w, genomes)?;
        Ok(ProfileWriter { w, records: 0, buf: Vec::new() })
    }

    /// Adds one reference sequence.
    pub fn add(&mut self, taxon: u32, runs: &[(u32, u32)]) -> io::Result<()> {
        self.buf.clear();
        varint(&mut self.buf, taxon as u64);
        varint(&mut self.buf, runs.len() as u64);
        for &(v, c) in runs {
            varint(&mut self.buf, v as u64);
            varint(&mut self.buf, c as u64);
        }
        self.w.write_all(&self.buf)?;
        self.records += 1;
        Ok(())
    }

    /// Ends the profile: an end marker with the number of records.
    pub fn finish(mut self) -> io::Result<W> {
        self.w.write_all(&[0xff])?;
        self.w.write_all(&self.records.to_le_bytes())?;
        Ok(self.w)
    }
}

pub(crate) fn write_genomes(w: &mut dyn Write, genomes: &[Genome]) -> io::Result<()> {
    w.write_all(&(genomes.len() as u32).to_le_bytes())?;
    for g in genomes {
        w.write_all(&g.tax_id.to_le_bytes())?;
        w.write_all(&g.length.to_le_bytes())?;
        w.write_all(&g.sequences.to_le_bytes())?;
        let name = &g.name.as_bytes()[..g.name.len().min(u16::MAX as usize)];
        w.write_all(&(name.len() as u16).to_le_bytes())?;
        w.write_all(name)?;
    }
    Ok(())
}

pub(crate) fn read_genomes(r: &mut dyn Read) -> io::Result<Vec<Genome>> {
    let n = read_u32(r)? as usize;
    let mut out = Vec::with_capacity(n.min(1 << 20));
    for _ in 0..n {
        let tax_id = read_u64(r)?;
        let length = read_u64(r)?;
        let sequences = read_u32(r)?;
        let mut len = [0u8; 2];
        r.read_exact(&mut len)?;
        let mut name = vec![0u8; u16::from_le_bytes(len) as usize];
        r.read_exact(&mut name)?;
        out.push(Genome { name: String::from_utf8_lossy(&name).into_owned(), tax_id, length, sequences });
    }
    Ok(out)
}

/// The header of a k-mer profile: its k, the digest of its database and its genomes.
pub(crate) struct ProfileHeader {
    pub k: u32,
    pub digest: String,
    pub genomes: Vec<Genome>,
}

/// Reads a profile's header; `r` is left at the first record.
pub(crate) fn read_profile_header(r: &mut dyn Read) -> io::Result<ProfileHeader> {
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic)?;
    if &magic != PROFILE_MAGIC || read_u32(r)? != PROFILE_VERSION {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "not a k-mer profile of this version"));
    }
    let k = read_u32(r)?;
    let mut d = [0u8; 64];
    r.read_exact(&mut d)?;
    let digest = String::from_utf8_lossy(&d).trim_end_matches('\0').to_owned();
    let genomes = read_genomes(r)?;
    Ok(ProfileHeader { k, digest, genomes })
}

/// Calls `f(taxon, runs)` for every record of a profile after its header.
pub(crate) fn for_each_profile_record(r: &mut dyn BufRead, mut f: impl FnMut(u32, &[(u32, u32)])) -> io::Result<u64> {
    let mut runs = Vec::new();
    let mut n = 0u64;
    loop {
        let first = {
            let buf = r.fill_buf()?;
            *buf.first().ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "the profile is cut short"))?
        };
        if first == 0xff {
            r.consume(1);
            let records = read_u64(r)?;
            if records != n {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "the profile's record count is wrong"));
            }
            return Ok(n);
        }
        let taxon = read_varint(r)? as u32;
        let len = read_varint(r)? as usize;
        runs.clear();
        for _ in 0..len {
            let v = read_varint(r)? as u32;
            let c = read_varint(r)? as u32;
            runs.push((v, c));
        }
        f(taxon, &runs);
        n += 1;
    }
}

fn varint(buf: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        buf.push((x as u8) | 0x80);
        x >>= 7;
    }
    buf.push(x as u8);
}

fn read_varint(r: &mut dyn Read) -> io::Result<u64> {
    let mut x = 0u64;
    for shift in (0..64).step_by(7) {
        let mut b = [0u8; 1];
        r.read_exact(&mut b)?;
        // 0xff starts the end marker, never a varint's first byte (taxa and counts < 2^63).
        x |= ((b[0] & 0x7f) as u64) << shift;
        if b[0] < 0x80 {
            return Ok(x);
        }
    }
    Err(io::Error::new(io::ErrorKind::InvalidData, "a number in the profile is too long"))
}

fn read_u32(r: &mut dyn Read) -> io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn read_u64(r: &mut dyn Read) -> io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// Writes a distribution to `path` atomically.
pub(crate) fn write_distribution(path: &Path, d: &KmerDistribution) -> Result<(), Error> {
    crate::atomic::write_atomically(path, |w| d.write(w)).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::taxonomy::tests::small;

    /// Bracken's per-window classification, written out in full for a check.
    fn naive(taxonomy: &Taxonomy, values: &[u32], n: usize) -> HashMap<u32, u64> {
        let mut out = HashMap::new();
        for w in values.windows(n) {
            let mut counts: Vec<(u32, u32)> = Vec::new();
            for &v in w.iter().filter(|&&v| v != 0) {
                match counts.iter_mut().find(|e| e.0 == v) {
                    Some(e) => e.1 += 1,
                    None => counts.push((v, 1)),
                }
            }
            *out.entry(window_call(taxonomy, &counts)).or_default() += 1;
        }
        out
    }

    #[test]
    fn sliding_windows_match_a_full_recount() {
        let t = small();
        let (coli, genus, fam, shig) = (
            t.index_of(562).unwrap() + 1,
            t.index_of(561).unwrap() + 1,
            t.index_of(543).unwrap() + 1,
            t.index_of(623).unwrap() + 1,
        );
        let mut state = 5u64;
        let mut values = Vec::new();
        for _ in 0..400 {
            state = crate::kmer::mix64(state + 1);
            let v = [coli, coli, coli, genus, fam, shig, 0][(state % 7) as usize];
            let len = 1 + (state >> 8) % 9;
            values.extend(std::iter::repeat_n(v, len as usize));
        }
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for &v in &values {
            match runs.last_mut() {
                Some(r) if r.0 == v => r.1 += 1,
                _ => runs.push((v, 1)),
            }
        }
        for read_length in [35u32, 36, 50, 100] {
            let mut b = DistributionBuilder::new(&t, 35, read_length).unwrap();
            b.add(coli - 1, &runs);
            let n = (read_length - 35 + 1) as usize;
            let expected = naive(&t, &values, n);
            let total = (values.len() - n + 1) as u64;
            for (&(g, m), &c) in &b.counts {
                assert_eq!(g, coli - 1);
                assert_eq!(Some(&c), expected.get(&m), "read length {read_length}, mapped {m}");
            }
            assert_eq!(b.counts.len(), expected.len());
            assert_eq!(b.totals[&(coli - 1)], total);
            let d = b.finish();
            let mut text = Vec::new();
            d.write(&mut text).unwrap();
            let path = std::env::temp_dir().join(format!("mgds-distrib-{}-{read_length}", std::process::id()));
            std::fs::write(&path, &text).unwrap();
            assert_eq!(KmerDistribution::read(&path, read_length).unwrap(), d);
            std::fs::remove_file(&path).unwrap();
        }
        assert!(DistributionBuilder::new(&t, 35, 34).is_none());
    }
}
