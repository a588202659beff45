//! SAM text: a header naming the reference sequences, then one line per alignment.

use std::io::{self, Write};

use minimap2::{Mapping, Strand};

use crate::mapper::Read;

/// minimap2's version, as bundled by the `minimap2` crate.
pub(crate) const MINIMAP2_VERSION: &str = "2.30";

/// Writes `@HD`, one `@SQ` per reference sequence and `@PG` lines for this engine and minimap2.
pub(crate) fn write_header<'a>(
    out: &mut dyn Write,
    seqs: impl IntoIterator<Item = (&'a str, usize)>,
    preset: &str,
) -> io::Result<()> {
    out.write_all(b"@HD\tVN:1.6\tSO:unsorted\tGO:query\n")?;
    for (name, len) in seqs {
        writeln!(out, "@SQ\tSN:{name}\tLN:{len}")?;
    }
    writeln!(out, "@PG\tID:minimap2\tPN:minimap2\tVN:{MINIMAP2_VERSION}\tCL:minimap2 -x {preset} -a --secondary=no")?;
    writeln!(
        out,
        "@PG\tID:{}\tPN:{}\tPP:minimap2\tVN:{}",
        crate::ENGINE_NAME,
        crate::ENGINE_NAME,
        crate::ENGINE_VERSION
    )
}

/// Writes the lines of one read: each of its alignments, or one unmapped line. `line` is a
/// buffer reused across calls.
pub(crate) fn write_read(out: &mut dyn Write, read: &Read, hits: &[Mapping], line: &mut Vec<u8>) -> io::Result<()> {
    if hits.is_empty() {
        line.clear();
        push_name(line, &read.name);
        line.extend_from_slice(b"\t4\t*\t0\t0\t*\t*\t0\t0\t");
        push_seq(line, read, false);
        line.push(b'\n');
        return out.write_all(line);
    }
    for hit in hits {
        line.clear();
        let reverse = hit.strand == Strand::Reverse;
        let mut flag = 0u16;
        if reverse {
            flag |= 0x10;
        }
        if hit.is_supplementary {
            flag |= 0x800;
        }
        push_name(line, &read.name);
        let rname = hit.target_name.as_deref().map_or("*", String::as_str);
        let cigar = hit.alignment.as_ref().and_then(|a| a.cigar_str.as_deref()).unwrap_or("*");
        write!(line, "\t{flag}\t{rname}\t{}\t{}\t{cigar}\t*\t0\t0\t", hit.target_start + 1, hit.mapq.min(255))?;
        push_seq(line, read, reverse);
        if let Some(a) = &hit.alignment {
            write!(line, "\tNM:i:{}", a.nm)?;
            if let Some(score) = a.alignment_score {
                write!(line, "\tAS:i:{score}")?;
            }
        }
        line.extend_from_slice(if hit.is_primary { b"\ttp:A:P" } else { b"\ttp:A:S" });
        line.push(b'\n');
        out.write_all(line)?;
    }
    Ok(())
}

// A SAM QNAME is printable ASCII without spaces or `@` first; read identifiers already stop at
// the first space, so only odd bytes need replacing.
fn push_name(line: &mut Vec<u8>, name: &[u8]) {
    if name.is_empty() {
        line.push(b'*');
        return;
    }
    line.extend(name.iter().map(|&b| if (b'!'..=b'~').contains(&b) { b } else { b'_' }));
}

// SEQ and QUAL, reverse-complemented for reverse-strand alignments as SAM wants them.
fn push_seq(line: &mut Vec<u8>, read: &Read, reverse: bool) {
    if reverse {
        line.extend(read.seq.iter().rev().map(|&b| complement(b)));
    } else {
        line.extend_from_slice(&read.seq);
    }
    line.push(b'\t');
    if read.qual.is_empty() {
        line.push(b'*');
    } else if reverse {
        line.extend(read.qual.iter().rev());
    } else {
        line.extend_from_slice(&read.qual);
    }
}

fn complement(b: u8) -> u8 {
    match b {
        b'A' => b'T',
        b'C' => b'G',
        b'G' => b'C',
        b'T' | b'U' => b'A',
        b'a' => b't',
        b'c' => b'g',
        b'g' => b'c',
        b't' | b'u' => b'a',
        b'R' => b'Y',
        b'Y' => b'R',
        b'K' => b'M',
        b'M' => b'K',
        b'B' => b'V',
        b'V' => b'B',
        b'D' => b'H',
        b'H' => b'D',
        _ => b'N',
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use minimap2::Alignment;

    use super::*;

    fn read(seq: &[u8], qual: &[u8]) -> Read {
        Read { name: b"r1".to_vec(), seq: seq.to_vec(), qual: qual.to_vec() }
    }

    #[test]
    fn unmapped_read_has_flag_4_and_its_sequence() {
        let mut out = Vec::new();
        write_read(&mut out, &read(b"ACGT", b"IIII"), &[], &mut Vec::new()).unwrap();
        assert_eq!(out, b"r1\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\tIIII\n");
    }

    #[test]
    fn reverse_hit_is_reverse_complemented_with_one_based_position() {
        let hit = Mapping {
            target_name: Some(Arc::new("chr".to_owned())),
            target_start: 9,
            strand: Strand::Reverse,
            mapq: 60,
            is_primary: true,
            alignment: Some(Alignment {
                nm: 1,
                cigar: Some(vec![(4, 0)]),
                cigar_str: Some("1S3M".to_owned()),
                md: None,
                cs: None,
                alignment_score: Some(6),
            }),
            ..Mapping::default()
        };
        let mut out = Vec::new();
        write_read(&mut out, &read(b"AACG", b"ABCD"), &[hit], &mut Vec::new()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "r1\t16\tchr\t10\t60\t1S3M\t*\t0\t0\tCGTT\tDCBA\tNM:i:1\tAS:i:6\ttp:A:P\n"
        );
    }

    #[test]
    fn header_lists_every_sequence() {
        let mut out = Vec::new();
        write_header(&mut out, [("a", 10), ("b", 20)], "sr").unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("@HD\tVN:1.6"));
        assert!(text.contains("@SQ\tSN:a\tLN:10\n@SQ\tSN:b\tLN:20\n"));
        assert!(text.contains("@PG\tID:mgds-align"));
    }
}
