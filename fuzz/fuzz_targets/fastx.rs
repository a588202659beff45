//! FASTA/FASTQ sniffing, reading and validation of arbitrary bytes (plain or any compression):
//! an answer, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mgds_formats::{Reader, Record, validate_reader};

fuzz_target!(|data: &[u8]| {
    let mut reader = Reader::new(data);
    let mut record = Record::default();
    while let Ok(n) = reader.read_record(&mut record) {
        if n == 0 {
            break;
        }
    }
    let _ = validate_reader(data, std::path::Path::new("fuzz.fq"));
});
