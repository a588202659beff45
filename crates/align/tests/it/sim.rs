//! A small deterministic read simulator: random genomes, reads drawn from them with
//! substitution errors on either strand.

use std::fmt::Write as _;

/// SplitMix64: tiny, seedable, and its stream never changes between library versions.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

pub fn random_seq(rng: &mut Rng, len: usize) -> Vec<u8> {
    (0..len).map(|_| b"ACGT"[rng.below(4)]).collect()
}

pub fn revcomp(seq: &[u8]) -> Vec<u8> {
    seq.iter()
        .rev()
        .map(|&b| match b {
            b'A' => b'T',
            b'C' => b'G',
            b'G' => b'C',
            _ => b'A',
        })
        .collect()
}

/// A read of `len` bases from `source[start..]`, with each base changed with probability
/// `error_rate`, reverse-complemented half of the time.
pub fn read_at(rng: &mut Rng, source: &[u8], start: usize, len: usize, error_rate: f64) -> Vec<u8> {
    let mut read: Vec<u8> = source[start..start + len].to_vec();
    for b in &mut read {
        if rng.chance(error_rate) {
            let others: Vec<u8> = b"ACGT".iter().copied().filter(|c| c != b).collect();
            *b = others[rng.below(3)];
        }
    }
    if rng.below(2) == 1 { revcomp(&read) } else { read }
}

/// `n` reads of `len` bases drawn uniformly from `source[from..to]`.
pub fn reads_from(
    rng: &mut Rng,
    source: &[u8],
    from: usize,
    to: usize,
    n: usize,
    len: usize,
    error_rate: f64,
) -> Vec<Vec<u8>> {
    (0..n)
        .map(|_| {
            let start = from + rng.below(to - from - len + 1);
            read_at(rng, source, start, len, error_rate)
        })
        .collect()
}

/// FASTQ text of reads named `{prefix}{i}`.
pub fn fastq(prefix: &str, reads: &[Vec<u8>]) -> String {
    let mut out = String::new();
    for (i, r) in reads.iter().enumerate() {
        let seq = std::str::from_utf8(r).unwrap();
        let _ = write!(out, "@{prefix}{i}\n{seq}\n+\n{}\n", "I".repeat(r.len()));
    }
    out
}

/// FASTA text with 80-column lines.
pub fn fasta(records: &[(&str, &[u8])]) -> String {
    let mut out = String::new();
    for (name, seq) in records {
        let _ = writeln!(out, ">{name}");
        for line in seq.chunks(80) {
            let _ = writeln!(out, "{}", std::str::from_utf8(line).unwrap());
        }
    }
    out
}
