//! Writes the demo gene catalogue's genes (`assets/functions/demo/genes.fa`) from the demo
//! genomes, deterministically: `cargo run -p mgds-align --example demo-catalogue`.
//!
//! Gene `demo_gene_NNN` (N = 1 to 30) is a segment of demo reference sequence `(N - 1) % 9` (the
//! eight chromosome fragments and phage lambda; not the plasmid fragment), 600 to 1,500 bp long, at
//! a position that differs for every gene, so that reads of the demo sample map to the catalogue
//! and every gene is its own locus.

#![allow(missing_docs)]

use std::io::{Read, Write};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(root.join("assets/demo/genomes.fa.gz"))?)
        .read_to_string(&mut text)?;
    let chromosomes: Vec<(String, String)> = text
        .split('>')
        .skip(1)
        .filter_map(|record| {
            let (header, seq) = record.split_once('\n')?;
            let id = header.split_whitespace().next()?.to_string();
            (!id.ends_with(".p1")).then(|| (id, seq.lines().collect::<String>()))
        })
        .collect();
    assert_eq!(chromosomes.len(), 9, "the demo has 9 reference sequences besides the plasmid");
    let mut out = std::io::BufWriter::new(std::fs::File::create(root.join("assets/functions/demo/genes.fa"))?);
    for n in 1..=30usize {
        let genome = (n - 1) % 9;
        let (id, seq) = &chromosomes[genome];
        let len = 600 + (n * 379) % 901;
        let start = 3_000 + genome * 500 + ((n - 1) / 9) * 11_000;
        let gene = &seq[start..start + len];
        writeln!(out, ">demo_gene_{n:03} segment {}-{} of demo sequence {id}, {len} bp", start + 1, start + len)?;
        for line in gene.as_bytes().chunks(70) {
            out.write_all(line)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(())
}
