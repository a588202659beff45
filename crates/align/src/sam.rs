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

/// The longest fragment (outer ends of the two reads) of a proper pair.
pub(crate) const MAX_FRAGMENT: i64 = 1_000;

/// The other read of a pair, for the pair's SAM fields.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mate<'a> {
    /// This read is read 1 (else read 2).
    pub(crate) first: bool,
    /// The mate's alignments, primary first.
    pub(crate) hits: &'a [Mapping],
    /// The two primary alignments make a proper pair (see [`proper_pair`]).
    pub(crate) proper: bool,
    /// The name both reads are written under (the read name without `/1` or `/2`).
    pub(crate) name: &'a [u8],
}

/// Whether two primary alignments make a proper pair: the same sequence, opposite strands,
/// facing each other (forward read before the reverse one), at most [`MAX_FRAGMENT`] bases
/// from one outer end to the other.
pub(crate) fn proper_pair(a: Option<&Mapping>, b: Option<&Mapping>) -> bool {
    let (Some(a), Some(b)) = (a, b) else { return false };
    if a.target_id != b.target_id || a.strand == b.strand {
        return false;
    }
    let (fwd, rev) = if a.strand == Strand::Forward { (a, b) } else { (b, a) };
    fwd.target_start <= rev.target_end && fragment(a, b) <= MAX_FRAGMENT
}

fn fragment(a: &Mapping, b: &Mapping) -> i64 {
    i64::from(a.target_end.max(b.target_end)) - i64::from(a.target_start.min(b.target_start))
}

/// The primary alignment among `hits`.
pub(crate) fn primary(hits: &[Mapping]) -> Option<&Mapping> {
    hits.iter().find(|h| h.is_primary)
}

/// Writes the lines of one read: each of its alignments, or one unmapped line; with `mate`, as
/// one read of a pair (flags, mate position and template length filled in). `line` is a buffer
/// reused across calls.
pub(crate) fn write_read(
    out: &mut dyn Write,
    read: &Read,
    hits: &[Mapping],
    mate: Option<Mate<'_>>,
    line: &mut Vec<u8>,
) -> io::Result<()> {
    let name = mate.map_or(read.name.as_slice(), |m| m.name);
    let mate_primary = mate.and_then(|m| primary(m.hits));
    // The flags a pair sets on every line of the read.
    let mut pair_flags = 0u16;
    if let Some(m) = mate {
        pair_flags |= 0x1 | if m.first { 0x40 } else { 0x80 };
        if m.proper {
            pair_flags |= 0x2;
        }
        match mate_primary {
            None => pair_flags |= 0x8,
            Some(p) if p.strand == Strand::Reverse => pair_flags |= 0x20,
            Some(_) => {}
        }
    }
    if hits.is_empty() {
        line.clear();
        push_name(line, name);
        match mate_primary {
            // An unmapped read whose mate mapped is placed at its mate, as SAM recommends.
            Some(p) => {
                let rname = p.target_name.as_deref().map_or("*", String::as_str);
                write!(line, "\t{}\t{rname}\t{pos}\t0\t*\t=\t{pos}\t0\t", 0x4 | pair_flags, pos = p.target_start + 1)?;
            }
            None => write!(line, "\t{}\t*\t0\t0\t*\t*\t0\t0\t", 0x4 | pair_flags)?,
        }
        push_seq(line, read, false);
        line.push(b'\n');
        return out.write_all(line);
    }
    for hit in hits {
        line.clear();
        let reverse = hit.strand == Strand::Reverse;
        let mut flag = pair_flags;
        if reverse {
            flag |= 0x10;
        }
        if hit.is_supplementary {
            flag |= 0x800;
        }
        push_name(line, name);
        let rname = hit.target_name.as_deref().map_or("*", String::as_str);
        let cigar = hit.alignment.as_ref().and_then(|a| a.cigar_str.as_deref()).unwrap_or("*");
        let (rnext, pnext, tlen) = match mate_primary {
            Some(p) if p.target_id == hit.target_id => {
                // Template length: from the leftmost to the rightmost base of the two reads,
                // positive for the leftmost read (read 1 when both start together).
                let tlen = if hit.is_primary {
                    let left = hit.target_start < p.target_start
                        || (hit.target_start == p.target_start && mate.is_some_and(|m| m.first));
                    if left { fragment(hit, p) } else { -fragment(hit, p) }
                } else {
                    0
                };
                ("=", p.target_start + 1, tlen)
            }
            Some(p) => (p.target_name.as_deref().map_or("*", String::as_str), p.target_start + 1, 0),
            None if mate.is_some() => ("=", hit.target_start + 1, 0),
            None => ("*", 0, 0),
        };
        write!(
            line,
            "\t{flag}\t{rname}\t{}\t{}\t{cigar}\t{rnext}\t{pnext}\t{tlen}\t",
            hit.target_start + 1,
            hit.mapq.min(255)
        )?;
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
        write_read(&mut out, &read(b"ACGT", b"IIII"), &[], None, &mut Vec::new()).unwrap();
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
        write_read(&mut out, &read(b"AACG", b"ABCD"), &[hit], None, &mut Vec::new()).unwrap();
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
