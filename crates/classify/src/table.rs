//! The compact k-mer table: Kraken 2's probabilistic hash table of 32-bit cells.
//!
//! Each cell holds a taxon (`value_bits` low bits; 0 marks an empty cell) and a fragment of
//! the minimizer's hash (the `key_bits` high bits of [`mix64`](crate::mix64), `key_bits +
//! value_bits = 32`). A minimizer's home cell is chosen from the same hash; collisions probe
//! the next cells (linear probing). Storing a hash fragment instead of the minimizer takes 4
//! bytes a cell instead of 12, at the price of rare false matches (a different minimizer with
//! the same home region and fragment), which Kraken 2 accepts too.
//!
//! Kraken 2's tables (`hash.k2d`) pick the home cell as `hash % capacity`; tables this crate
//! builds use a multiply-shift of the hash bits below the fragment, which needs no division.
//! The unreleased 40-bit cells of Kraken 2 (5 bytes, `key_bits + value_bits = 40`) are read
//! too.

use memmap2::Mmap;

/// How a hash picks its home cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slots {
    /// `hash % capacity` (Kraken 2).
    Modulo,
    /// The hash bits below the key fragment, scaled to the capacity (this crate's tables).
    MultiplyShift,
}

/// Where the cells live.
#[derive(Debug)]
pub(crate) enum Storage {
    /// A read-only map of the database file.
    Mapped(Mmap),
    /// Bytes on the heap.
    Owned(Vec<u8>),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Mapped(m) => m,
            Storage::Owned(v) => v,
        }
    }
}

/// The table's shape, as stored in a file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub capacity: u64,
    pub size: u64,
    pub key_bits: u32,
    pub value_bits: u32,
    pub slots: Slots,
}

impl Shape {
    /// Bytes a cell (4 or 5), or `None` for an unsupported layout.
    pub fn cell_bytes(&self) -> Option<usize> {
        let ok = |total: u32, min_value: u32| {
            self.value_bits >= min_value && self.key_bits >= 1 && self.key_bits + self.value_bits == total
        };
        if ok(32, 1) && self.value_bits < 32 {
            Some(4)
        } else if ok(40, 8) && self.value_bits < 32 {
            Some(5)
        } else {
            None
        }
    }
}

/// A compact table over its storage.
#[derive(Debug)]
pub(crate) struct CompactTable {
    storage: Storage,
    offset: usize,
    shape: Shape,
    cell_bytes: usize,
}

impl CompactTable {
    /// The table whose cells start at `offset` in `storage`; `None` when the shape is
    /// unsupported or the storage is too short.
    pub fn new(storage: Storage, offset: usize, shape: Shape) -> Option<CompactTable> {
        let cell_bytes = shape.cell_bytes()?;
        let len = usize::try_from(shape.capacity).ok()?.checked_mul(cell_bytes)?;
        if shape.capacity == 0 || storage.bytes().len() < offset.checked_add(len)? || shape.size > shape.capacity {
            return None;
        }
        Some(CompactTable { storage, offset, shape, cell_bytes })
    }

    /// The shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// A view for lookups.
    #[inline]
    pub fn view(&self) -> TableView<'_> {
        let len = self.shape.capacity as usize * self.cell_bytes;
        TableView {
            cells: &self.storage.bytes()[self.offset..self.offset + len],
            capacity: self.shape.capacity,
            key_bits: self.shape.key_bits,
            value_bits: self.shape.value_bits,
            wide: self.cell_bytes == 5,
            slots: self.shape.slots,
        }
    }
}

/// Borrowed cells and what is needed to search them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TableView<'a> {
    cells: &'a [u8],
    capacity: u64,
    key_bits: u32,
    value_bits: u32,
    wide: bool,
    slots: Slots,
}

impl TableView<'_> {
    /// The home cell of a hash.
    #[inline]
    pub fn home(&self, hash: u64) -> usize {
        home(hash, self.capacity, self.key_bits, self.slots)
    }

    /// The value stored for `hash` (a minimizer's [`mix64`](crate::mix64)); 0 when absent.
    #[cfg(test)]
    pub fn get(&self, hash: u64) -> u32 {
        self.get_from(hash, self.home(hash))
    }

    /// Asks the processor to bring cell `home` (and the one eight on) into the cache, without
    /// waiting for it.
    #[inline(always)]
    pub fn prefetch(&self, home: usize) {
        let cell = if self.wide { 5 } else { 4 };
        let i = home.min(self.capacity as usize - 1) * cell;
        let j = (i + 8 * cell).min(self.cells.len() - 1);
        prefetch(&self.cells[i]);
        prefetch(&self.cells[j]);
    }

    /// [`TableView::get`] with the home cell already computed.
    #[inline]
    pub fn get_from(&self, hash: u64, home: usize) -> u32 {
        let fragment = (hash >> (64 - self.key_bits)) as u32;
        let vmask = ((1u64 << self.value_bits) - 1) as u32;
        let capacity = self.capacity as usize;
        let mut i = home;
        loop {
            let (value, key) = if self.wide {
                let c = &self.cells[i * 5..i * 5 + 5];
                let a = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                // As Kraken 2: the key's high part comes from the fifth byte, in 32-bit arithmetic.
                let key = (a >> self.value_bits) | ((c[4] as u32) << (32 - self.value_bits));
                (a & vmask, key)
            } else {
                let c = u32::from_le_bytes(self.cells[i * 4..i * 4 + 4].try_into().expect("4 bytes"));
                (c & vmask, c >> self.value_bits)
            };
            if value == 0 {
                return 0;
            }
            if key == fragment {
                return value;
            }
            i += 1;
            if i == capacity {
                i = 0;
            }
            if i == home {
                return 0;
            }
        }
    }
}

/// A hint to the processor to start loading the cache line of `byte`.
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch(byte: &u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only reads, and never faults: it is a hint; `byte` is a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((byte as *const u8).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = byte;
}

#[inline]
fn home(hash: u64, capacity: u64, key_bits: u32, slots: Slots) -> usize {
    match slots {
        Slots::Modulo => (hash % capacity) as usize,
        // The bits below the fragment: with the fragment's own bits, neighbouring cells would
        // hold keys with the same fragment and a false match would be likely.
        Slots::MultiplyShift => (((hash << key_bits) as u128 * capacity as u128) >> 64) as usize,
    }
}

/// A table being built (32-bit cells, multiply-shift slots), in the bytes it is written as,
/// so that it can be searched and written without a copy.
#[derive(Debug, Clone)]
pub(crate) struct TableBuilder {
    cells: Vec<u8>,
    shape: Shape,
}

impl TableBuilder {
    /// An empty table of `capacity` cells for values below `2^value_bits`.
    pub fn new(capacity: u64, value_bits: u32) -> TableBuilder {
        assert!((1..32).contains(&value_bits) && capacity > 0);
        TableBuilder {
            cells: vec![0; capacity as usize * 4],
            shape: Shape { capacity, size: 0, key_bits: 32 - value_bits, value_bits, slots: Slots::MultiplyShift },
        }
    }

    /// Stores `value` for `hash`, or `merge(old, value)` where the hash is present already.
    /// Returns false when the table is full.
    #[inline]
    pub fn insert(&mut self, hash: u64, value: u32, merge: impl Fn(u32, u32) -> u32) -> bool {
        let s = &mut self.shape;
        let fragment = (hash >> (64 - s.key_bits)) as u32;
        let vmask = (1u32 << s.value_bits) - 1;
        let start = home(hash, s.capacity, s.key_bits, s.slots);
        let mut i = start;
        loop {
            let cell = &mut self.cells[i * 4..i * 4 + 4];
            let c = u32::from_le_bytes((&*cell).try_into().expect("4 bytes"));
            if c & vmask == 0 {
                // One cell always stays free, so that a lookup of an absent key ends.
                if s.size + 1 >= s.capacity {
                    return false;
                }
                cell.copy_from_slice(&((fragment << s.value_bits) | value).to_le_bytes());
                s.size += 1;
                return true;
            }
            if c >> s.value_bits == fragment {
                let merged = merge(c & vmask, value);
                cell.copy_from_slice(&((fragment << s.value_bits) | merged).to_le_bytes());
                return true;
            }
            i += 1;
            if i as u64 == s.capacity {
                i = 0;
            }
            if i == start {
                return false;
            }
        }
    }

    /// The shape so far.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The cells, as written to a file (little-endian `u32`s).
    pub fn bytes(&self) -> &[u8] {
        &self.cells
    }

    /// A view for lookups.
    pub fn view(&self) -> TableView<'_> {
        TableView {
            cells: &self.cells,
            capacity: self.shape.capacity,
            key_bits: self.shape.key_bits,
            value_bits: self.shape.value_bits,
            wide: false,
            slots: self.shape.slots,
        }
    }

    /// A table over a copy of the cells on the heap.
    #[cfg(test)]
    pub fn to_table(&self) -> CompactTable {
        CompactTable::new(Storage::Owned(self.cells.clone()), 0, self.shape).expect("a built table is consistent")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kmer::mix64;

    #[test]
    fn lookups_find_what_was_stored() {
        let mut b = TableBuilder::new(1500, 5);
        for k in 0..1000u64 {
            assert!(b.insert(mix64(k * 7), (k % 13) as u32 + 1, |_, new| new));
        }
        // The same key again merges.
        assert!(b.insert(mix64(7), 20, |old, new| old.max(new)));
        assert_eq!(b.shape().size, 1000);
        let t = b.to_table();
        let v = t.view();
        assert_eq!(v.get(mix64(7)), 20);
        for k in 2..1000u64 {
            assert_eq!(v.get(mix64(k * 7)), (k % 13) as u32 + 1);
        }
        let misses = (0..10_000u64).filter(|k| k % 7 != 0 && v.get(mix64(*k)) != 0).count();
        // 27-bit fragments: a false match is very rare.
        assert!(misses <= 1, "{misses}");
    }

    #[test]
    fn kraken2_cells_and_wide_cells_are_read() {
        // One 32-bit Kraken 2 cell at hash % capacity, and one 40-bit cell.
        let hash = mix64(12345);
        let capacity = 11u64;
        let home = (hash % capacity) as usize;
        let (key_bits, value_bits) = (26, 6);
        let mut bytes = vec![0u8; 44];
        let cell = ((hash >> (64 - key_bits)) as u32) << value_bits | 9;
        bytes[home * 4..home * 4 + 4].copy_from_slice(&cell.to_le_bytes());
        let shape = Shape { capacity, size: 1, key_bits, value_bits, slots: Slots::Modulo };
        let t = CompactTable::new(Storage::Owned(bytes), 0, shape).unwrap();
        assert_eq!(t.view().get(hash), 9);
        assert_eq!(t.view().get(mix64(1)), 0);

        let (key_bits, value_bits) = (30u32, 10u32);
        let key = (hash >> (64 - key_bits)) as u32;
        let a = (key << value_bits) | 700;
        let b = (key >> (32 - value_bits)) as u8;
        let mut bytes = vec![0u8; 55];
        bytes[home * 5..home * 5 + 4].copy_from_slice(&a.to_le_bytes());
        bytes[home * 5 + 4] = b;
        let shape = Shape { capacity, size: 1, key_bits, value_bits, slots: Slots::Modulo };
        let t = CompactTable::new(Storage::Owned(bytes), 0, shape).unwrap();
        assert_eq!(t.view().get(hash), 700);
        // Bad shapes and short storage are refused.
        let bad = Shape { key_bits: 20, ..shape };
        assert!(CompactTable::new(Storage::Owned(vec![0; 55]), 0, bad).is_none());
        assert!(CompactTable::new(Storage::Owned(vec![0; 54]), 0, shape).is_none());
    }
}
