//! A deterministic read simulator for tests and benchmarks: random background reads, and reads
//! drawn from chosen sequences (markers, or copies of them with SNPs) at a chosen depth, with
//! sequencing errors, on both strands.
//!
//! The same seed gives the same reads on every machine and every run (a fixed, portable
//! generator, not the platform's "standard" one).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use flate2::Compression;
use flate2::write::GzEncoder;
use rand::rngs::Xoshiro256PlusPlus;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};

use crate::dna::reverse_complement;

const BASES: [u8; 4] = *b"ACGT";

/// One simulated read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimRead {
    /// The read's name (unique within one simulator).
    pub name: String,
    /// The bases.
    pub sequence: Vec<u8>,
}

/// Makes random sequences and reads from a fixed seed.
pub struct ReadSimulator {
    rng: Xoshiro256PlusPlus,
    read_len: usize,
    error_rate: f64,
    reverse_fraction: f64,
    next_id: u64,
}

impl ReadSimulator {
    /// A simulator of 150 bp reads with 0.5% substitution errors, half of them from the reverse
    /// strand.
    pub fn new(seed: u64) -> ReadSimulator {
        ReadSimulator {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            read_len: 150,
            error_rate: 0.005,
            reverse_fraction: 0.5,
            next_id: 0,
        }
    }

    /// Sets the read length.
    pub fn read_len(mut self, len: usize) -> ReadSimulator {
        self.read_len = len.max(1);
        self
    }

    /// Sets the chance of a substitution error at each base of a read.
    pub fn error_rate(mut self, rate: f64) -> ReadSimulator {
        self.error_rate = rate.clamp(0.0, 1.0);
        self
    }

    /// Sets the share of reads taken from the reverse strand (0: all forward, 1: all reverse).
    pub fn reverse_fraction(mut self, fraction: f64) -> ReadSimulator {
        self.reverse_fraction = fraction.clamp(0.0, 1.0);
        self
    }

    /// A random sequence of `len` bases.
    pub fn random_sequence(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| BASES[self.rng.random_range(0..4)]).collect()
    }

    /// A copy of `seq` with exactly `n` substitutions at distinct random positions (at most one
    /// per base).
    pub fn with_snps(&mut self, seq: &[u8], n: usize) -> Vec<u8> {
        let mut out = seq.to_vec();
        let mut positions: Vec<usize> = (0..seq.len()).collect();
        positions.shuffle(&mut self.rng);
        for &p in positions.iter().take(n) {
            out[p] = self.other_base(out[p]);
        }
        out
    }

    /// A copy of `seq` at `identity` percent: `round(len * (100 - identity) / 100)` SNPs.
    pub fn diverged(&mut self, seq: &[u8], identity: f64) -> Vec<u8> {
        let n = (seq.len() as f64 * (100.0 - identity) / 100.0).round().max(0.0) as usize;
        self.with_snps(seq, n)
    }

    /// `n` reads of random sequence.
    pub fn background(&mut self, n: usize) -> Vec<SimRead> {
        (0..n)
            .map(|_| {
                let seq = self.random_sequence(self.read_len);
                self.read(seq)
            })
            .collect()
    }

    /// Reads from `target` placed between random flanks, starting uniformly so that every base
    /// of `target` is covered `depth` times on average (reads overhanging its ends carry flank
    /// sequence, as reads of a gene in a genome do).
    pub fn plant(&mut self, target: &[u8], depth: f64) -> Vec<SimRead> {
        let flank = self.read_len - 1;
        let mut template = self.random_sequence(flank);
        template.extend_from_slice(target);
        let right = self.random_sequence(flank);
        template.extend_from_slice(&right);
        let starts = template.len() - self.read_len + 1;
        let n = (depth * starts as f64 / self.read_len as f64).round() as usize;
        (0..n)
            .map(|_| {
                let at = self.rng.random_range(0..starts);
                let seq = template[at..at + self.read_len].to_vec();
                self.read(seq)
            })
            .collect()
    }

    /// `n` reads that each hold the whole of `target` (at most the read length) at a random
    /// place in random sequence.
    pub fn embed(&mut self, target: &[u8], n: usize) -> Vec<SimRead> {
        let room = self.read_len.saturating_sub(target.len());
        (0..n)
            .map(|_| {
                let at = self.rng.random_range(0..=room);
                let mut seq = self.random_sequence(at);
                seq.extend_from_slice(target);
                let rest = self.random_sequence(room - at);
                seq.extend_from_slice(&rest);
                self.read(seq)
            })
            .collect()
    }

    /// Shuffles reads into a random order, as a sequencer's output is.
    pub fn shuffle(&mut self, reads: &mut [SimRead]) {
        reads.shuffle(&mut self.rng);
    }

    fn other_base(&mut self, base: u8) -> u8 {
        let others: Vec<u8> = BASES.iter().copied().filter(|&b| b != base).collect();
        others[self.rng.random_range(0..others.len())]
    }

    /// Turns a fragment into a read: strand, then sequencing errors.
    fn read(&mut self, fragment: Vec<u8>) -> SimRead {
        let mut seq =
            if self.rng.random_bool(self.reverse_fraction) { reverse_complement(&fragment) } else { fragment };
        for base in seq.iter_mut() {
            if self.rng.random_bool(self.error_rate) {
                *base = self.other_base(*base);
            }
        }
        self.next_id += 1;
        SimRead { name: format!("sim{}", self.next_id), sequence: seq }
    }
}

/// Writes `reads` as FASTQ (all qualities `I`), gzipped when `gzip` is set.
pub fn write_fastq(path: &Path, reads: &[SimRead], gzip: bool) -> io::Result<()> {
    let file = File::create(path)?;
    if gzip {
        // Buffered in front of the encoder too: it is slow on many small writes.
        let mut out = BufWriter::new(GzEncoder::new(BufWriter::new(file), Compression::fast()));
        write_records(&mut out, reads)?;
        out.into_inner().map_err(|e| e.into_error())?.finish()?.flush()
    } else {
        let mut out = BufWriter::new(file);
        write_records(&mut out, reads)?;
        out.flush()
    }
}

fn write_records(out: &mut impl Write, reads: &[SimRead]) -> io::Result<()> {
    for r in reads {
        out.write_all(b"@")?;
        out.write_all(r.name.as_bytes())?;
        out.write_all(b"\n")?;
        out.write_all(&r.sequence)?;
        out.write_all(b"\n+\n")?;
        out.write_all(&vec![b'I'; r.sequence.len()])?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_reads() {
        let make = || {
            let mut sim = ReadSimulator::new(7);
            let target = sim.random_sequence(500);
            let mut reads = sim.plant(&target, 5.0);
            reads.extend(sim.background(10));
            sim.shuffle(&mut reads);
            reads
        };
        assert_eq!(make(), make());
    }

    #[test]
    fn snps_are_exact_in_number() {
        let mut sim = ReadSimulator::new(1);
        let seq = sim.random_sequence(1000);
        let var = sim.diverged(&seq, 97.0);
        assert_eq!(seq.iter().zip(&var).filter(|(a, b)| a != b).count(), 30);
    }

    #[test]
    fn planted_depth_is_close_to_asked() {
        let mut sim = ReadSimulator::new(2).read_len(100);
        let target = sim.random_sequence(1000);
        let reads = sim.plant(&target, 10.0);
        // (1000 + 99) starts, 10 x over 100 bp reads.
        assert_eq!(reads.len(), 110);
        assert!(reads.iter().all(|r| r.sequence.len() == 100));
    }

    #[test]
    fn embedded_targets_are_whole() {
        let mut sim = ReadSimulator::new(3).error_rate(0.0).reverse_fraction(0.0);
        let target = b"ACGTACGTTTGACCA";
        for r in sim.embed(target, 20) {
            assert!(r.sequence.windows(target.len()).any(|w| w == target));
        }
    }
}
