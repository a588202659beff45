//! Read-only memory maps of database files: with the table's prefetch hint (`table.rs`), the
//! only places this crate uses `unsafe`.

use std::fs::File;
use std::io;

use memmap2::Mmap;

/// Maps `file` read-only into memory.
///
/// The k-mer table of a database is used in place: its pages are read from the file (or the
/// page cache, shared between processes) when a lookup first touches them, instead of the whole
/// table being copied onto the heap at open.
#[allow(unsafe_code)]
pub(crate) fn map_read_only(file: &File) -> io::Result<Mmap> {
    // SAFETY: a mapping is only unsound if the file changes while it is mapped. Database files
    // are opened read-only and never written in place: a database (ours or a Kraken 2 folder) is
    // written under another name and installed by renaming the finished file or folder into
    // place, so an open mapping keeps the old inode's bytes.
    let map = unsafe { Mmap::map(file)? };
    Ok(map)
}
