//! Read lengths in a bounded histogram ([`LengthHistogram`]): exact below 256 bases, then 128
//! buckets per doubling (each within 1% of its lengths), 7,424 buckets whatever the number of
//! reads or their lengths. The classifier takes its median read length from it, and the quality
//! control its median, N50 and length distribution.

/// Lengths counted exactly below this.
const EXACT: u64 = 256;
/// Buckets per doubling above [`EXACT`].
const PER_DOUBLING: u64 = 128;
/// Buckets in all: the exact ones, then 128 for each doubling from 2^8 to 2^63.
pub const LENGTH_BUCKETS: usize = (EXACT + PER_DOUBLING * 56) as usize;

/// How many reads have each length, to a bucket, with the shortest and longest exactly.
#[derive(Debug, Clone)]
pub struct LengthHistogram {
    counts: Vec<u64>,
    reads: u64,
    min: u64,
    max: u64,
}

impl Default for LengthHistogram {
    fn default() -> Self {
        LengthHistogram { counts: vec![0; LENGTH_BUCKETS], reads: 0, min: u64::MAX, max: 0 }
    }
}

impl LengthHistogram {
    /// The bucket of a length.
    #[inline]
    pub fn bucket(len: u64) -> usize {
        if len < EXACT {
            return len as usize;
        }
        let e = 63 - u64::from(len.leading_zeros());
        let m = (len >> (e - 7)) & (PER_DOUBLING - 1);
        (EXACT + (e - 8) * PER_DOUBLING + m) as usize
    }

    /// The shortest and longest length of bucket `b`.
    pub fn range(b: usize) -> (u64, u64) {
        let b = b as u64;
        if b < EXACT {
            return (b, b);
        }
        let (e, m) = ((b - EXACT) / PER_DOUBLING + 8, (b - EXACT) % PER_DOUBLING);
        let low = (PER_DOUBLING + m) << (e - 7);
        (low, low + (1u64 << (e - 7)) - 1)
    }

    /// The middle of bucket `b`'s lengths (the length itself below 256 bases).
    pub fn middle(b: usize) -> u64 {
        let (lo, hi) = Self::range(b);
        lo + (hi - lo).div_ceil(2)
    }

    /// Counts one read of `len` bases.
    #[inline]
    pub fn add(&mut self, len: u64) {
        self.counts[Self::bucket(len)] += 1;
        self.reads += 1;
        self.min = self.min.min(len);
        self.max = self.max.max(len);
    }

    /// Reads counted.
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// The shortest length counted (0 without reads).
    pub fn min(&self) -> u64 {
        if self.reads == 0 { 0 } else { self.min }
    }

    /// The longest length counted (0 without reads).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Reads per bucket ([`LengthHistogram::range`] gives each bucket's lengths).
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// The median length (the middle of its bucket, within the lengths counted), or `None`
    /// without reads.
    pub fn median(&self) -> Option<u64> {
        if self.reads == 0 {
            return None;
        }
        let half = self.reads.div_ceil(2);
        let mut seen = 0;
        let b = self.counts.iter().position(|&c| {
            seen += c;
            seen >= half
        })?;
        Some(Self::middle(b).clamp(self.min, self.max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lengths_are_exact_and_long_ones_within_one_percent() {
        let mut r = LengthHistogram::default();
        for len in [150, 150, 151, 149, 10] {
            r.add(len);
        }
        assert_eq!(r.median(), Some(150));
        assert_eq!((r.min(), r.max(), r.reads()), (10, 151, 5));
        for len in [257u64, 1_000, 1_001, 9_137, 23_212, 393_431, 32_000_000, u64::MAX / 3] {
            let b = LengthHistogram::bucket(len);
            let (lo, hi) = LengthHistogram::range(b);
            assert!(lo <= len && len <= hi, "{len} in {lo}..={hi}");
            let m = LengthHistogram::middle(b);
            assert!((m as f64 - len as f64).abs() <= len as f64 / 128.0, "{len} -> {m}");
            assert!(b < LENGTH_BUCKETS);
        }
        assert_eq!(LengthHistogram::default().median(), None);
        assert_eq!(LengthHistogram::default().min(), 0);
    }

    #[test]
    fn the_median_is_the_middle_read() {
        let mut r = LengthHistogram::default();
        // Three short reads and three long ones: the median (third of six) is short; one more
        // long one and the middle (fourth of seven) is long.
        for len in [150, 150, 150, 20_000, 30_000, 40_000] {
            r.add(len);
        }
        assert_eq!(r.median(), Some(150));
        r.add(25_000);
        let m = r.median().unwrap();
        assert!((m as f64 - 20_000.0).abs() < 200.0, "{m}");
    }

    #[test]
    fn a_median_stays_within_the_lengths_counted() {
        let mut r = LengthHistogram::default();
        r.add(1_000);
        assert_eq!(r.median(), Some(1_000), "one read's median is its length, not its bucket's middle");
    }
}
