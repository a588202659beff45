//! Sniffing and validating sequence files on disk, including broken ones.

use std::io::Read;
use std::path::Path;

use mgds_formats::{
    Compression, Error, Format, ParseErrorKind, QualityEncoding, ReadPairing, open, sniff, validate, validate_reader,
};

use crate::{gz, multi_gz, write};

const FQ: &[u8] =
    b"@r1 1:N:0:ACGT\nACGTACGTAC\n+\nIIIIIIIIII\n@r2 1:N:0:ACGT\nACG\n+\n#5I\n@r3 1:N:0:ACGT\nACGTAC\n+\nIIII#I\n";

#[test]
fn plain_and_gzipped_fastq_summaries_agree() {
    let dir = tempfile::tempdir().unwrap();
    for (name, data, compression) in [
        ("a.fastq", FQ.to_vec(), Compression::None),
        // A misleading name: compression comes from the bytes.
        ("b.fastq", gz(FQ), Compression::Gzip),
        ("c.fq.gz", multi_gz(&[&FQ[..38], &FQ[38..]]), Compression::Gzip),
    ] {
        let path = write(dir.path(), name, &data);
        let s = validate(&path).unwrap();
        assert_eq!(s.compression, compression, "{name}");
        assert_eq!(s.format, Format::Fastq);
        assert_eq!((s.records, s.bases, s.min_len, s.max_len), (3, 19, 3, 10), "{name}");
        assert_eq!(s.quality, Some(QualityEncoding::Phred33));
        assert_eq!(s.pairing, ReadPairing::Mate1);
        assert_eq!(sniff(&path).unwrap(), mgds_formats::Sniffed { compression, format: Format::Fastq });
        let (c, mut r) = open(&path).unwrap();
        let mut all = Vec::new();
        r.read_to_end(&mut all).unwrap();
        assert_eq!((c, all.as_slice()), (compression, FQ), "{name}");
    }
}

#[test]
fn multi_member_gzip_is_read_to_the_end() {
    // One member per record: a decoder that stops after the first member would count 1.
    let parts: Vec<&[u8]> = vec![&FQ[..38], &FQ[38..65], &FQ[65..]];
    let s = validate_reader(&multi_gz(&parts)[..], Path::new("m.fq.gz")).unwrap();
    assert_eq!(s.records, 3);
}

#[test]
fn fasta_is_sniffed_and_validated() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "contigs.txt", b">c1 x\nACGT\nACGT\nAC\n>c2\nGGGG\n");
    assert_eq!(sniff(&path).unwrap().format, Format::Fasta);
    let s = validate(&path).unwrap();
    assert_eq!((s.records, s.bases, s.min_len, s.max_len, s.quality), (2, 14, 4, 10, None));
}

#[test]
fn crlf_fastq_is_valid() {
    let crlf = b"@a/1\r\nACGT\r\n+\r\nIIII\r\n@a/2\r\nAC\r\n+\r\nII\r\n";
    let s = validate_reader(&gz(crlf)[..], Path::new("w.fq.gz")).unwrap();
    assert!(s.windows_line_endings);
    assert_eq!((s.records, s.bases, s.max_len), (2, 6, 4));
    assert_eq!(s.pairing, ReadPairing::Interleaved);
}

#[test]
fn truncated_gzip_says_the_file_is_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let data = gz(&FQ.repeat(50));
    let path = write(dir.path(), "cut.fastq.gz", &data[..data.len() / 2]);
    let e = validate(&path).unwrap_err();
    assert!(matches!(e, Error::Truncated { compression: Compression::Gzip, .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("cut.fastq.gz ends in the middle of its gzip data"), "{msg}");
    assert!(msg.contains("copy it again"), "{msg}");
}

#[test]
fn every_cut_of_a_gzip_file_is_an_error_never_a_panic() {
    let data = gz(FQ);
    for n in 0..data.len() {
        let r = validate_reader(&data[..n], Path::new("x.gz"));
        match (n, &r) {
            (0, Err(Error::Empty { .. })) => {}
            // One byte of magic is not gzip: it is junk.
            (1, Err(Error::NotSequence { .. })) => {}
            (_, Err(Error::Truncated { .. })) => {}
            _ => panic!("cut at {n} of {}: {r:?}", data.len()),
        }
    }
    assert!(validate_reader(&data[..], Path::new("x.gz")).is_ok());
}

#[test]
fn every_cut_of_a_plain_fastq_is_ok_or_names_a_record() {
    for n in 0..FQ.len() {
        match validate_reader(&FQ[..n], Path::new("x.fq")) {
            Ok(s) => assert!(s.records <= 3),
            Err(Error::Empty { .. }) => assert_eq!(n, 0),
            Err(Error::Parse { record, line, .. }) => {
                assert!(record >= 1 && line >= 1, "cut at {n}")
            }
            Err(e) => panic!("cut at {n}: {e:?}"),
        }
    }
}

#[test]
fn damaged_gzip_is_reported() {
    let mut data = gz(&FQ.repeat(20));
    // Flip bits in the trailer's checksum.
    let n = data.len();
    data[n - 6] ^= 0xff;
    let e = validate_reader(&data[..], Path::new("bad.gz")).unwrap_err();
    assert!(matches!(e, Error::Corrupt { .. }), "{e:?}");
    assert!(e.to_string().starts_with("the gzip data of bad.gz is damaged"), "{e}");
}

#[test]
fn wrong_files_are_named_for_what_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(dir.path(), "empty.fastq", b"");
    assert!(matches!(validate(&empty), Err(Error::Empty { .. })));
    assert!(matches!(sniff(&empty), Err(Error::Empty { .. })));
    let empty_gz = write(dir.path(), "empty.fastq.gz", &gz(b""));
    assert!(matches!(validate(&empty_gz), Err(Error::Empty { .. })));

    let pdf = write(dir.path(), "report.fastq", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\n");
    for e in [validate(&pdf).unwrap_err(), sniff(&pdf).unwrap_err()] {
        let msg = e.to_string();
        assert!(msg.contains("report.fastq is not a FASTA or FASTQ file: it looks like a PDF document"), "{msg}");
    }
    let junk: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let junk_path = write(dir.path(), "junk.bin", &junk);
    assert!(matches!(validate(&junk_path), Err(Error::NotSequence { .. })));
    assert!(matches!(sniff(&junk_path), Err(Error::NotSequence { .. })));
    // gzip of junk: not sequence either.
    let gz_junk = write(dir.path(), "junk.gz", &gz(&junk));
    assert!(matches!(validate(&gz_junk), Err(Error::NotSequence { .. })));
    let missing = dir.path().join("missing.fq");
    assert!(matches!(validate(&missing), Err(Error::Io { .. })));
}

#[test]
fn bzip2_and_zstd_are_named_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let bz = write(dir.path(), "r.fastq.bz2", b"BZh91AY&SY\x00\x00");
    let zst = write(dir.path(), "r.fastq.zst", &[0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x00, 0x00]);
    for (path, c) in [(bz, Compression::Bzip2), (zst, Compression::Zstd)] {
        for e in [validate(&path).unwrap_err(), sniff(&path).unwrap_err()] {
            assert!(matches!(e, Error::UnsupportedCompression { compression, .. } if compression == c), "{e:?}");
            assert!(e.to_string().contains(&format!("compressed with {c}, which MGDS cannot read")), "{e}");
        }
    }
}

#[test]
fn missing_quality_line_names_line_and_record() {
    let data = b"@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\n@r3\nACGT\n+\nIIII\n";
    let e = validate_reader(&gz(data)[..], Path::new("reads.fq.gz")).unwrap_err();
    match &e {
        Error::Parse { line, record, id, kind, .. } => {
            assert_eq!((*line, *record, id.as_deref()), (8, 2, Some("r2")));
            assert!(matches!(kind, ParseErrorKind::LengthMismatch { looks_like_header: true, .. }));
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().starts_with("reads.fq.gz, line 8, record 2 (`r2`): "), "{e}");
}

#[test]
fn long_stream_is_read_record_by_record() {
    // A generated stream far larger than any buffer, read without being held in memory.
    struct Gen {
        left: u64,
        pending: Vec<u8>,
    }
    impl Read for Gen {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.pending.is_empty() {
                if self.left == 0 {
                    return Ok(0);
                }
                self.left -= 1;
                let n = self.left;
                self.pending =
                    format!("@read{n} 1:N:0:1\n{}\n+\n{}\n", "ACGT".repeat(25), "F".repeat(100)).into_bytes();
            }
            let k = buf.len().min(self.pending.len());
            buf[..k].copy_from_slice(&self.pending[..k]);
            self.pending.drain(..k);
            Ok(k)
        }
    }
    let s = validate_reader(Gen { left: 50_000, pending: Vec::new() }, Path::new("gen.fq")).unwrap();
    assert_eq!((s.records, s.bases, s.min_len, s.max_len), (50_000, 5_000_000, 100, 100));
    assert_eq!(s.quality, Some(QualityEncoding::Unknown));
}
