//! Read lengths in a bounded histogram: exact below 256 bases, then 128 buckets per doubling
//! (each within 1% of its lengths), whatever the number of reads or their lengths.

/// Lengths counted exactly below this.
const EXACT: u64 = 256;
/// Buckets per doubling above [`EXACT`].
const PER_DOUBLING: u64 = 128;
/// Buckets in all: the exact ones, then 128 for each doubling from 2^8 to 2^63.
const BUCKETS: usize = (EXACT + PER_DOUBLING * 56) as usize;

/// How many reads have each length, to a bucket.
#[derive(Debug, Clone)]
pub(crate) struct ReadLengths {
    counts: Vec<u64>,
    n: u64,
}

impl Default for ReadLengths {
    fn default() -> Self {
        ReadLengths { counts: vec![0; BUCKETS], n: 0 }
    }
}

/// The bucket of a length.
fn bucket(len: u64) -> usize {
    if len < EXACT {
        return len as usize;
    }
    let e = 63 - u64::from(len.leading_zeros());
    let m = (len >> (e - 7)) & (PER_DOUBLING - 1);
    (EXACT + (e - 8) * PER_DOUBLING + m) as usize
}

/// The middle of a bucket's lengths.
fn middle(b: usize) -> u64 {
    let b = b as u64;
    if b < EXACT {
        return b;
    }
    let (e, m) = ((b - EXACT) / PER_DOUBLING + 8, (b - EXACT) % PER_DOUBLING);
    let low = (PER_DOUBLING + m) << (e - 7);
    low + (1u64 << (e - 7)) / 2
}

impl ReadLengths {
    /// Counts one read of `len` bases.
    pub fn add(&mut self, len: u64) {
        self.counts[bucket(len)] += 1;
        self.n += 1;
    }

    /// The median length (the middle of its bucket), or `None` without reads.
    pub fn median(&self) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        let half = self.n.div_ceil(2);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= half {
                return Some(middle(b));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lengths_are_exact_and_long_ones_within_one_percent() {
        let mut r = ReadLengths::default();
        for len in [150, 150, 151, 149, 10] {
            r.add(len);
        }
        assert_eq!(r.median(), Some(150));
        for len in [257u64, 1_000, 1_001, 9_137, 23_212, 393_431, 32_000_000, u64::MAX / 3] {
            let m = middle(bucket(len));
            assert!((m as f64 - len as f64).abs() <= len as f64 / 128.0, "{len} -> {m}");
            assert!(bucket(len) < BUCKETS);
        }
        assert_eq!(ReadLengths::default().median(), None);
    }

    #[test]
    fn the_median_is_the_middle_read() {
        let mut r = ReadLengths::default();
        // Three short reads and two long ones: the median is short; one more long one and the
        // middle (third of six) is still short.
        for len in [150, 150, 150, 20_000, 30_000, 40_000] {
            r.add(len);
        }
        assert_eq!(r.median(), Some(150));
        r.add(25_000);
        let m = r.median().unwrap();
        assert!((m as f64 - 20_000.0).abs() < 200.0, "{m}");
    }
}
