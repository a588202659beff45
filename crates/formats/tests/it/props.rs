//! Property tests of the readers that take outside input: whatever bytes arrive, they answer
//! records or an error that names the place, and never panic; what a writer makes, they read
//! back exactly.

use std::io::Write;

use mgds_formats::{Reader, Record, validate_reader};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() }
}

/// A FASTQ record's parts: an id, a comment, bases and as many quality characters.
fn fastq_record() -> impl Strategy<Value = (String, String, String)> {
    ("[A-Za-z0-9_.:-]{1,30}", "( [ -~]{0,20})?", "[ACGTNacgtn]{0,200}").prop_flat_map(|(id, comment, seq)| {
        let n = seq.len();
        (Just(format!("{id}{comment}")), Just(seq), proptest::collection::vec(33u8..=126, n))
            .prop_map(|(h, s, q)| (h, s, String::from_utf8(q).unwrap()))
    })
}

fn gzip(bytes: &[u8], members: usize) -> Vec<u8> {
    // Several concatenated members, as sequencers write them.
    let mut out = Vec::new();
    let step = bytes.len().div_ceil(members.max(1)).max(1);
    for piece in bytes.chunks(step) {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(piece).unwrap();
        out.extend(e.finish().unwrap());
    }
    if bytes.is_empty() {
        let e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        out.extend(e.finish().unwrap());
    }
    out
}

proptest! {
    #![proptest_config(config())]

    /// Arbitrary bytes: records, the end, or an error; never a panic or a loop.
    #[test]
    fn any_bytes_read_to_an_answer(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let mut reader = Reader::new(&bytes[..]);
        let mut record = Record::default();
        for _ in 0..bytes.len() + 2 {
            match reader.read_record(&mut record) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        let _ = validate_reader(&bytes[..], std::path::Path::new("input.fq"));
    }

    /// Text-like input (printable, newlines, markers): errors name the file and a line.
    #[test]
    fn text_errors_name_the_file(text in "[@>+ACGTN\\n\\r!-~]{0,400}") {
        if let Err(e) = validate_reader(text.as_bytes(), std::path::Path::new("reads.fastq")) {
            let m = e.to_string();
            prop_assert!(m.contains("reads.fastq"), "{}", m);
        }
    }

    /// FASTQ written with LF or CRLF, plain or in several gzip members, reads back record for
    /// record and counts its reads and bases.
    #[test]
    fn fastq_round_trips(records in proptest::collection::vec(fastq_record(), 1..40), crlf in any::<bool>(), members in 0usize..4) {
        let eol = if crlf { "\r\n" } else { "\n" };
        let mut text = String::new();
        for (h, s, q) in &records {
            text.push_str(&format!("@{h}{eol}{s}{eol}+{eol}{q}{eol}"));
        }
        let bytes = if members == 0 { text.clone().into_bytes() } else { gzip(text.as_bytes(), members) };
        // Records of no bases (reads trimmed away) are records too.
        let summary = validate_reader(&bytes[..], std::path::Path::new("r.fq")).unwrap();
        prop_assert_eq!(summary.records, records.len() as u64);
        prop_assert_eq!(summary.bases, records.iter().map(|(_, s, _)| s.len() as u64).sum::<u64>());
        let mut reader = Reader::new(text.as_bytes());
        let mut record = Record::default();
        for (h, s, q) in &records {
            prop_assert!(reader.read_record(&mut record).unwrap() > 0);
            prop_assert_eq!(record.header(), h.as_bytes());
            prop_assert_eq!(record.sequence(), s.as_bytes());
            prop_assert_eq!(record.quality(), q.as_bytes());
        }
        prop_assert_eq!(reader.read_record(&mut record).unwrap(), 0);
    }

    /// Multi-line FASTA reads back with its lines joined.
    #[test]
    fn multi_line_fasta_round_trips(seqs in proptest::collection::vec("[ACGT]{1,300}", 1..20), width in 10usize..80) {
        let mut text = String::new();
        for (i, s) in seqs.iter().enumerate() {
            text.push_str(&format!(">seq{i} record\n"));
            for line in s.as_bytes().chunks(width) {
                text.push_str(std::str::from_utf8(line).unwrap());
                text.push('\n');
            }
        }
        let mut reader = Reader::new(text.as_bytes());
        let mut record = Record::default();
        for (i, s) in seqs.iter().enumerate() {
            prop_assert!(reader.read_record(&mut record).unwrap() > 0);
            let id = format!("seq{i}");
            prop_assert_eq!(record.id(), id.as_bytes());
            let joined: Vec<u8> = record.sequence().iter().copied().filter(|b| !b.is_ascii_whitespace()).collect();
            prop_assert_eq!(joined, s.as_bytes().to_vec());
        }
    }

    /// A read-level table of any bytes: rows or an error, never a panic.
    #[test]
    fn read_level_tables_of_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        if let Ok(mut r) = mgds_formats::ReadLevelReader::new(&bytes[..], std::path::Path::new("readlevel.tsv")) {
            let mut n = 0;
            let _ = r.for_each_row(|_| { n += 1; Ok(()) });
        }
    }

    /// Read-level rows written by column name read back, whatever the column order.
    #[test]
    fn read_level_rows_round_trip(rows in proptest::collection::vec(("[A-Za-z0-9_.]{1,20}", 0u32..100_000, 0u32..500), 1..50), swap in any::<bool>()) {
        let mut text = if swap { "Tax ID\tHeader\tN Hits\n".to_string() } else { "Header\tTax ID\tN Hits\n".to_string() };
        for (h, t, n) in &rows {
            if swap { text.push_str(&format!("{t}\t{h}\t{n}\n")) } else { text.push_str(&format!("{h}\t{t}\t{n}\n")) }
        }
        let mut r = mgds_formats::ReadLevelReader::new(text.as_bytes(), std::path::Path::new("rl.tsv")).unwrap();
        let mut seen = Vec::new();
        r.for_each_row(|row| {
            seen.push((String::from_utf8_lossy(row.header().unwrap_or_default()).into_owned(), row.tax_id().to_string(), row.n_hits()));
            Ok(())
        }).unwrap();
        let expected: Vec<_> = rows.iter().map(|(h, t, n)| (h.clone(), t.to_string(), Some(u64::from(*n)))).collect();
        prop_assert_eq!(seen, expected);
    }
}
