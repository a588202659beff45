//! Per-read output: the rows of the read-level TSV and the lines of Kraken 2's per-read output
//! (`--output`).

use std::io::Write;

use mgds_formats::TaxId;

use crate::engine::{TOKEN_AMBIGUOUS, TOKEN_FRAME, TOKEN_MATE};
use crate::taxonomy::Taxonomy;

/// The read-level TSV's header line.
pub const READLEVEL_HEADER: &str = "Tax ID\tN Hits\tSeq Len\tPassed Filter\n";

/// Appends one row of the read-level TSV: the call's `Tax ID` (0 unclassified), the record's
/// `N Hits` and `Seq Len`, and `Passed Filter` (`T` or `F`).
pub(crate) fn readlevel_row(rows: &mut Vec<u8>, tax_id: TaxId, hits: u32, len: u32, passed: bool) {
    let flag = if passed { 'T' } else { 'F' };
    writeln!(rows, "{tax_id}\t{hits}\t{len}\t{flag}").expect("writing to a Vec");
}

/// One line of Kraken 2's per-read output.
pub(crate) fn kraken_line(
    out: &mut Vec<u8>,
    taxonomy: &Taxonomy,
    id: &[u8],
    paired: bool,
    call: Option<u32>,
    lens: &[u32],
    tokens: &[(u32, u32)],
) {
    let id = match id {
        [rest @ .., b'/', b'1' | b'2'] if paired && id.len() > 2 => rest,
        _ => id,
    };
    out.extend_from_slice(if call.is_some() { b"C\t" } else { b"U\t" });
    out.extend_from_slice(id);
    let tax_id = call.map_or(0, |t| taxonomy.tax_id(t));
    let _ = write!(out, "\t{tax_id}\t");
    for (i, len) in lens.iter().enumerate() {
        if i > 0 {
            out.push(b'|');
        }
        let _ = write!(out, "{len}");
    }
    out.push(b'\t');
    if tokens.is_empty() {
        out.extend_from_slice(b"0:0");
    }
    for (i, &(token, count)) in tokens.iter().enumerate() {
        let last = i + 1 == tokens.len();
        let _ = match token {
            TOKEN_MATE => write!(out, "|:|{}", if last { "" } else { " " }),
            TOKEN_FRAME => write!(out, "-:-{}", if last { "" } else { " " }),
            // Kraken 2 ends an ambiguous run with a space even when it is the last token.
            TOKEN_AMBIGUOUS => write!(out, "A:{count} "),
            v => {
                let ext = if v == 0 { 0 } else { taxonomy.tax_id(v - 1) };
                write!(out, "{ext}:{count}{}", if last { "" } else { " " })
            }
        };
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::taxonomy::tests::small;

    #[test]
    fn kraken_lines_are_formatted_as_kraken2_writes_them() {
        let t = small();
        let coli = t.index_of(562).unwrap() + 1;
        let mut out = Vec::new();
        let tokens = [(coli, 5), (0, 3), (TOKEN_AMBIGUOUS, 2), (TOKEN_MATE, 1), (coli, 4), (TOKEN_AMBIGUOUS, 7)];
        kraken_line(&mut out, &t, b"r1/1", true, Some(coli - 1), &[40, 45], &tokens);
        kraken_line(&mut out, &t, b"r2/1", false, None, &[20], &[]);
        kraken_line(&mut out, &t, b"r3", true, None, &[20, 50], &[(TOKEN_MATE, 1)]);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "C\tr1\t562\t40|45\t562:5 0:3 A:2 |:| 562:4 A:7 \nU\tr2/1\t0\t20\t0:0\nU\tr3\t0\t20|50\t|:|\n"
        );
    }
}
