//! The inputs `kraken2-build` takes build the same database: merged tax ids (`merged.dmp`), an
//! NCBI `accession2taxid` file, NCBI assembly files with `assembly_summary.txt`; and a build
//! reports its progress.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Read;
use std::path::PathBuf;

use flate2::read::MultiGzDecoder;
use mgds_classify::{
    BuildInput, BuildOptions, BuildStage, ClassifyOptions, Database, build, build_with_progress, classify,
};

use crate::{demo_db, demo_dir, demo_input, demo_reads, scratch};

/// The demo map's lines: (seq id, tax id, genome).
fn demo_map() -> Vec<(String, u64, String)> {
    std::fs::read_to_string(demo_dir().join("seqid2taxid.tsv"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_owned(), f[1].parse().unwrap(), f[2].to_owned())
        })
        .collect()
}

/// The demo genomes' records: id -> (header, sequence).
fn demo_records() -> BTreeMap<String, (String, String)> {
    let mut text = String::new();
    MultiGzDecoder::new(std::fs::File::open(demo_dir().join("genomes.fa.gz")).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let mut out = BTreeMap::new();
    for record in text.split('>').skip(1) {
        let (header, seq) = record.split_once('\n').unwrap();
        let id = header.split(' ').next().unwrap().to_owned();
        out.insert(id, (header.to_owned(), seq.replace('\n', "")));
    }
    out
}

fn results(db: &Database) -> mgds_api::ClassificationResults {
    classify(db, &demo_reads(), &ClassifyOptions::default(), &mut std::io::sink()).unwrap()
}

#[test]
fn merged_tax_ids_are_followed() {
    let dir = scratch("merged");
    let tax = dir.join("taxonomy");
    std::fs::create_dir_all(&tax).unwrap();
    let input = demo_input();
    std::fs::copy(&input.nodes, tax.join("nodes.dmp")).unwrap();
    std::fs::copy(&input.names, tax.join("names.dmp")).unwrap();
    // E. coli's records are mapped to an old id NCBI merged into 562.
    std::fs::write(tax.join("merged.dmp"), "99999\t|\t562\t|\n").unwrap();
    let mut map = String::new();
    for (id, tax_id, genome) in demo_map() {
        let tax_id = if tax_id == 562 { 99999 } else { tax_id };
        writeln!(map, "{id}\t{tax_id}\t{genome}").unwrap();
    }
    std::fs::write(dir.join("map.tsv"), map).unwrap();
    let input = BuildInput {
        seqid2taxid: dir.join("map.tsv"),
        nodes: tax.join("nodes.dmp"),
        names: tax.join("names.dmp"),
        ..demo_input()
    };
    let report = build(&input, &dir.join("db.mgdsdb")).unwrap();
    // The same database, byte for byte.
    assert_eq!(report.digest, demo_db().digest());
}

#[test]
fn an_accession2taxid_file_maps_the_references() {
    let dir = scratch("accession2taxid");
    let mut map = String::from("accession\taccession.version\ttaxid\tgi\n");
    // Lines for accessions not in the references are passed over.
    map += "NZ_UNUSED\tNZ_UNUSED.1\t99999999\t0\n";
    for (id, tax_id, _) in demo_map() {
        let base = id.split('.').next().unwrap();
        writeln!(map, "{base}\t{id}\t{tax_id}\t0").unwrap();
    }
    std::fs::write(dir.join("nucl.accession2taxid"), map).unwrap();
    let input = BuildInput { seqid2taxid: dir.join("nucl.accession2taxid"), ..demo_input() };
    let report = build(&input, &dir.join("db.mgdsdb")).unwrap();
    let db = Database::open(dir.join("db.mgdsdb")).unwrap();
    // The genomes are found from the descriptions as the explicit map column names them: same
    // lengths, same results.
    let summary = |db: &Database| -> Vec<(u64, u32, u64)> {
        db.species_genomes().iter().map(|s| (s.tax_id, s.genomes, s.mean_length)).collect()
    };
    assert_eq!(summary(&db), summary(demo_db()));
    assert_eq!(report.genomes, demo_db().species_genomes());
    assert_eq!(results(&db), results(demo_db()));
}

#[test]
fn assembly_files_and_the_assembly_summary_give_taxa_and_genomes() {
    let dir = scratch("assemblies");
    let records = demo_records();
    let mut references = Vec::new();
    let mut summary = String::from(
        "#   See ftp://ftp.ncbi.nlm.nih.gov/genomes/README_assembly_summary.txt for a description of the columns\n\
         # assembly_accession\tbioproject\tbiosample\twgs_master\trefseq_category\ttaxid\tspecies_taxid\torganism_name\n",
    );
    for (n, (strain, tax_id)) in [
        ("Escherichia_coli_536", 562),
        ("Klebsiella_pneumoniae_HS11286", 573),
        ("Mycobacterium_tuberculosis_H37Rv", 1773),
    ]
    .into_iter()
    .enumerate()
    {
        let accession = format!("GCF_00000000{}.1", n + 1);
        let mut fasta = String::new();
        for (id, (_, seq)) in records.iter().filter(|(id, _)| id.starts_with(strain)) {
            // Plain headers with no description: only the file tells the genome and taxon.
            writeln!(fasta, ">{id}\n{seq}").unwrap();
        }
        let path = dir.join(format!("{accession}_ASM{n}v1_genomic.fna"));
        std::fs::write(&path, fasta).unwrap();
        references.push(path);
        writeln!(summary, "{accession}\tPRJNA1\tSAMN1\t\treference genome\t{tax_id}\t{tax_id}\t{strain}").unwrap();
    }
    std::fs::write(dir.join("assembly_summary.txt"), summary).unwrap();
    let input = BuildInput { references, seqid2taxid: PathBuf::new(), ..demo_input() };
    let options = BuildOptions::default().assembly_summary(dir.join("assembly_summary.txt"));
    let mut stages = Vec::new();
    let report = build_with_progress(&input, &options, &dir.join("db.mgdsdb"), &mut |p| {
        assert!(p.done <= p.total, "{p:?}");
        if stages.last() != Some(&p.stage) {
            stages.push(p.stage);
        }
    })
    .unwrap();
    assert_eq!(
        stages,
        [BuildStage::Taxonomy, BuildStage::Counting, BuildStage::Inserting, BuildStage::Writing, BuildStage::Profiling]
    );
    let db = Database::open(dir.join("db.mgdsdb")).unwrap();
    let genomes: Vec<(&str, u64, u32)> =
        db.genomes().unwrap().iter().map(|g| (g.name.as_str(), g.tax_id, g.sequences)).collect();
    // One genome per assembly file: the Klebsiella chromosome and its plasmid are one.
    assert_eq!(genomes, [("GCF_000000001.1", 562, 1), ("GCF_000000002.1", 573, 2), ("GCF_000000003.1", 1773, 1)]);
    let kp = report.genomes.iter().find(|s| s.tax_id == 573).unwrap();
    assert_eq!((kp.genomes, kp.sequences), (1, 2));
    // Without the summary the files have no taxon.
    let e = build(&input, &dir.join("db2.mgdsdb")).unwrap_err();
    assert!(e.to_string().contains("kraken:taxid"), "{e}");
}
