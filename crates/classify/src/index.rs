//! The k-mer index: an open-addressing hash table from minimizer to taxon.

use crate::kmer::mix64;

/// Marks an empty slot; minimizers use at most 62 bits, so no key equals it.
pub(crate) const EMPTY: u64 = u64::MAX;

// Slot positions use a hash independent of the minimizer order: minimizers are chosen for
// having small order hashes, so that hash would crowd them into part of the table.
const SLOT_SEED: u64 = 0x2545_f491_4f6c_dd1d;

/// An open-addressing table (linear probing) from a minimizer to a taxon's flat index.
///
/// Each slot is three `u32`s side by side (key low half, key high half, value): 12 bytes, and a
/// lookup touches one cache line for both key and value (with keys and values in two arrays,
/// a lookup took two cache misses, most of the classification time). 80% full: 15 bytes a
/// minimizer; linear probing stays short at that load with a well-mixed slot hash. The slot
/// count need not be a power of two: a key's home slot is its hash scaled to the table size.
/// Built from keys in ascending order, so the layout (and the file) depends only on the content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KmerTable {
    slots: Vec<[u32; 3]>,
    len: usize,
}

const EMPTY_SLOT: [u32; 3] = [u32::MAX, u32::MAX, 0];

#[inline]
fn key_of(slot: &[u32; 3]) -> u64 {
    slot[0] as u64 | (slot[1] as u64) << 32
}

impl KmerTable {
    /// Builds a table from `(minimizer, taxon)` pairs sorted by minimizer, without duplicates.
    pub(crate) fn from_sorted(entries: &[(u64, u32)]) -> KmerTable {
        let capacity = (entries.len() * 5 / 4 + 1).max(16);
        let mut slots = vec![EMPTY_SLOT; capacity];
        for &(key, value) in entries {
            let mut i = slot(key, capacity);
            while key_of(&slots[i]) != EMPTY {
                i += 1;
                if i == capacity {
                    i = 0;
                }
            }
            slots[i] = [key as u32, (key >> 32) as u32, value];
        }
        KmerTable { slots, len: entries.len() }
    }

    /// Rebuilds a table from its stored arrays (little-endian `u64` keys and `u32` values,
    /// slot by slot); `None` if they are inconsistent or a value is not below `max_value`.
    pub(crate) fn from_le_bytes(keys: &[u8], values: &[u8], max_value: u32) -> Option<KmerTable> {
        let capacity = keys.len() / 8;
        if !keys.len().is_multiple_of(8) || values.len() != capacity * 4 {
            return None;
        }
        let mut slots = Vec::with_capacity(capacity);
        let mut len = 0;
        for (k, v) in keys.chunks_exact(8).zip(values.chunks_exact(4)) {
            let key = u64::from_le_bytes(k.try_into().ok()?);
            let value = u32::from_le_bytes(v.try_into().ok()?);
            if key != EMPTY {
                if value >= max_value {
                    return None;
                }
                len += 1;
            }
            slots.push([key as u32, (key >> 32) as u32, value]);
        }
        // A full table would make a lookup of an absent key loop forever.
        if len >= capacity {
            return None;
        }
        Some(KmerTable { slots, len })
    }

    /// The taxon stored for `key`.
    #[inline]
    pub fn get(&self, key: u64) -> Option<u32> {
        let n = self.slots.len();
        let mut i = slot(key, n);
        loop {
            let s = &self.slots[i];
            let k = key_of(s);
            if k == key {
                return Some(s[2]);
            }
            if k == EMPTY {
                return None;
            }
            i += 1;
            if i == n {
                i = 0;
            }
        }
    }

    /// Number of minimizers stored.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Number of slots.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The stored keys, slot by slot (`EMPTY` for a free slot).
    pub(crate) fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots.iter().map(key_of)
    }

    /// The stored values, slot by slot.
    pub(crate) fn values(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.iter().map(|s| s[2])
    }
}

#[inline]
fn slot(key: u64, capacity: usize) -> usize {
    // Lemire's multiply-shift: maps the hash onto 0..capacity without a division.
    ((mix64(key ^ SLOT_SEED) as u128 * capacity as u128) >> 64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_find_what_was_stored() {
        let entries: Vec<(u64, u32)> = (0..1000u64).map(|k| (k * 7, (k % 13) as u32)).collect();
        let t = KmerTable::from_sorted(&entries);
        assert_eq!(t.len(), 1000);
        assert!(t.capacity() >= 1250);
        for &(k, v) in &entries {
            assert_eq!(t.get(k), Some(v));
        }
        assert_eq!(t.get(1), None);
        let keys: Vec<u8> = t.keys().flat_map(u64::to_le_bytes).collect();
        let values: Vec<u8> = t.values().flat_map(u32::to_le_bytes).collect();
        assert_eq!(KmerTable::from_le_bytes(&keys, &values, 13).unwrap(), t);
        // A value out of range, arrays of different lengths, no slot free.
        assert!(KmerTable::from_le_bytes(&keys, &values, 12).is_none());
        assert!(KmerTable::from_le_bytes(&keys, &values[4..], 13).is_none());
        assert!(KmerTable::from_le_bytes(&[], &[], 1).is_none());
        assert!(KmerTable::from_le_bytes(&[1; 32], &[0; 16], 1).is_none());
    }
}
