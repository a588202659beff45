//! Read-level TSV of arbitrary bytes: rows or an error naming the line, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut r) = mgds_formats::ReadLevelReader::new(data, std::path::Path::new("fuzz.tsv")) {
        let _ = r.for_each_row(|_| Ok(()));
    }
});
