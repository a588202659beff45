//! Per-base depth of a reference sequence, accumulated from alignments' CIGARs.

/// Depth along one reference sequence, kept as differences (+1 where an aligned block starts,
/// -1 after it ends) so adding an alignment costs its number of CIGAR operations, not its length.
#[derive(Debug, Clone)]
pub(crate) struct Depth {
    diff: Vec<i32>,
}

/// What [`Depth::summarise`] finds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct DepthSummary {
    /// Bases with depth >= 1.
    pub(crate) covered: u64,
    /// Aligned bases (sum of depths).
    pub(crate) aligned: u64,
}

impl Depth {
    /// Zero depth over `len` bases.
    pub(crate) fn new(len: usize) -> Depth {
        Depth { diff: vec![0; len + 1] }
    }

    /// Adds one alignment starting at `start` (0-based) with minimap2's CIGAR (length, op):
    /// matches and mismatches (`M`, `=`, `X`) count; deletions and skips move along the
    /// reference without covering it; insertions and clips do not touch it.
    pub(crate) fn add(&mut self, start: usize, cigar: &[(u32, u8)]) {
        let len = self.diff.len() - 1;
        let mut pos = start;
        for &(n, op) in cigar {
            let n = n as usize;
            match op {
                // M, =, X
                0 | 7 | 8 => {
                    let from = pos.min(len);
                    let to = (pos + n).min(len);
                    if from < to {
                        self.diff[from] += 1;
                        self.diff[to] -= 1;
                    }
                    pos += n;
                }
                // D, N
                2 | 3 => pos += n,
                _ => {}
            }
        }
    }

    /// Covered and aligned bases.
    pub(crate) fn summarise(&self) -> DepthSummary {
        let mut depth: i64 = 0;
        let mut covered = 0u64;
        let mut aligned = 0u64;
        for &d in &self.diff[..self.diff.len() - 1] {
            depth += i64::from(d);
            if depth > 0 {
                covered += 1;
                aligned += depth as u64;
            }
        }
        DepthSummary { covered, aligned }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_count_deletions_skip_insertions_ignored() {
        let mut d = Depth::new(20);
        // 3M 2D 3M 4I 2M from position 2: covers 2..5, 7..10, 10..12.
        d.add(2, &[(3, 0), (2, 2), (3, 0), (4, 1), (2, 0)]);
        assert_eq!(d.summarise(), DepthSummary { covered: 8, aligned: 8 });
        // Overlapping read doubles depth over 4..6.
        d.add(4, &[(2, 7)]);
        assert_eq!(d.summarise(), DepthSummary { covered: 9, aligned: 10 });
    }

    #[test]
    fn alignment_past_the_end_is_clipped() {
        let mut d = Depth::new(10);
        d.add(8, &[(5, 0)]);
        assert_eq!(d.summarise(), DepthSummary { covered: 2, aligned: 2 });
    }
}
