//! `profile` over a catalogue: planted proportions come back, bad catalogues name the line,
//! the demo catalogue installs and loads, and the demo reads give its plasmid genes' functions.

use std::path::Path;

use mgds_align::{Catalogue, ProfileOptions, demo, profile, write_demo_catalogue};

use crate::sim::{self, Rng};

fn write_catalogue(dir: &Path, genes: &str, annotations: &str) {
    std::fs::write(dir.join("genes.fa"), genes).unwrap();
    std::fs::write(dir.join("annotations.tsv"), annotations).unwrap();
}

#[test]
fn counts_match_planted_proportions() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(10);
    let genes: Vec<Vec<u8>> =
        [1_000, 1_200, 900, 1_500, 800].iter().map(|&len| sim::random_seq(&mut rng, len)).collect();
    let names = ["g1", "g2", "g3", "g4", "g5"];
    let records: Vec<(&str, &[u8])> = names.iter().copied().zip(genes.iter().map(Vec::as_slice)).collect();
    write_catalogue(
        dir.path(),
        &sim::fasta(&records),
        "gene_id\tfunction_id\tfunction_name\n\
         g1\tK00001\tfirst\n\
         g2\tK00002\tsecond\n\
         g3\tK00001\tfirst\n\
         g3\tK00003\tthird\n\
         g4\tK00004\tfourth\n",
    );
    // g5 carries no function; 50 reads come from no gene.
    let planted = [400, 300, 200, 100, 50];
    let mut reads = Vec::new();
    for (gene, &n) in genes.iter().zip(&planted) {
        reads.extend(sim::reads_from(&mut rng, gene, 0, gene.len(), n, 150, 0.01));
    }
    let other = sim::random_seq(&mut rng, 5_000);
    reads.extend(sim::reads_from(&mut rng, &other, 0, other.len(), 50, 150, 0.01));
    let reads_path = dir.path().join("reads.fq");
    std::fs::write(&reads_path, sim::fastq("r", &reads)).unwrap();

    let catalogue = Catalogue::load(dir.path()).unwrap();
    let p = profile(&catalogue, &reads_path, &ProfileOptions { threads: 2, ..Default::default() }).unwrap();

    assert_eq!(p.n_reads, 1_100);
    assert_eq!(p.catalogue_digest, catalogue.digest());
    assert!(p.n_mapped_reads >= 1_040 && p.n_mapped_reads <= 1_050, "{p:?}");
    assert!(p.n_assigned_reads >= 990 && p.n_assigned_reads <= 1_000, "{p:?}");
    let rows: Vec<(&str, u64)> = p.functions.iter().map(|f| (f.function_id.as_str(), f.read_count)).collect();
    let expected = [("K00001", 600), ("K00002", 300), ("K00003", 200), ("K00004", 100)];
    assert_eq!(rows.len(), expected.len(), "{rows:?}");
    for ((id, count), (want_id, want)) in rows.iter().zip(expected) {
        assert_eq!(*id, want_id, "{rows:?}");
        assert!(count.abs_diff(want) <= want / 100, "{rows:?}");
    }
    // rpk and cpm follow from the counts as documented.
    let k2 = &p.functions[1];
    assert!((k2.rpk - k2.read_count as f64 / 1.2).abs() < 1e-9);
    assert!((k2.cpm - k2.read_count as f64 * 1e6 / p.n_mapped_reads as f64).abs() < 1e-6);

    let tsv = p.to_tsv();
    assert!(tsv.starts_with("function_id\tname\tread_count\trpk\tcpm\nK00001\tfirst\t"), "{tsv}");
    assert_eq!(tsv.lines().count(), 5);
}

#[test]
fn bad_catalogue_files_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    write_catalogue(
        dir.path(),
        ">g1\nACGTACGTAC\n>g2\nACGTTTGA\n",
        "gene_id\tfunction_id\tfunction_name\ng1\tK00001\tone\ng2 K00002 two\n",
    );
    let err = Catalogue::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("annotations.tsv, line 3: expected 3 tab-separated fields"), "{err}");

    write_catalogue(dir.path(), ">g1\nACGT\n>g2\nAC GT\n", "g1\tK1\tone\n");
    let err = Catalogue::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("genes.fa, line 4"), "{err}");

    std::fs::remove_file(dir.path().join("annotations.tsv")).unwrap();
    write_catalogue(dir.path(), ">g1\nACGT\n", "");
    std::fs::remove_file(dir.path().join("annotations.tsv")).unwrap();
    let err = Catalogue::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("annotations.tsv"), "{err}");
}

#[test]
fn demo_catalogue_installs_loads_and_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("functions").join("demo");
    write_demo_catalogue(&target).unwrap();
    assert_eq!(std::fs::read(target.join("genes.fa")).unwrap(), demo::GENES_FA);
    let catalogue = Catalogue::load(&target).unwrap();
    assert_eq!(catalogue.n_genes(), 29);
    assert_eq!(catalogue.functions().len(), 17);
    assert_eq!(catalogue.digest().len(), 64);
    assert_eq!(Catalogue::load(&target).unwrap().digest(), catalogue.digest());

    // 100 reads from each gene: every function gets its genes' reads.
    let text = String::from_utf8(demo::GENES_FA.to_vec()).unwrap();
    let mut rng = Rng::new(11);
    let mut reads = Vec::new();
    for record in text.split('>').skip(1) {
        let seq: String = record.lines().skip(1).collect();
        reads.extend(sim::reads_from(&mut rng, seq.as_bytes(), 0, seq.len(), 100, 150, 0.01));
    }
    let reads_path = dir.path().join("reads.fq");
    std::fs::write(&reads_path, sim::fastq("r", &reads)).unwrap();
    let p = profile(&catalogue, &reads_path, &ProfileOptions { threads: 1, ..Default::default() }).unwrap();
    assert_eq!(p.n_reads, 2_900);
    assert!(p.n_mapped_reads >= 2_870, "{p:?}");
    // Four genes carry no function (tet(A), tet(M), floR, qnrS1): their reads are mapped but
    // assigned to nothing.
    let unassigned = p.n_mapped_reads - p.n_assigned_reads;
    assert!((390..=400).contains(&unassigned), "{p:?}");
    let reads_of = |id: &str| p.functions.iter().find(|f| f.function_id == id).map_or(0, |f| f.read_count);
    // Beta-lactamase is on seven genes, dihydropteroate synthase on three (sul1, sul2, sul3).
    assert_eq!(p.functions[0].function_id, "EC:3.5.2.6");
    assert!(reads_of("EC:3.5.2.6") >= 690, "{p:?}");
    assert!((295..=300).contains(&reads_of("EC:2.5.1.15")), "{p:?}");
    // vanXY-C's product has two activities: each counts the gene's reads.
    assert!(reads_of("EC:3.4.13.22") >= 98, "{p:?}");
    assert_eq!(reads_of("EC:3.4.13.22"), reads_of("EC:3.4.17.14"));
    assert_eq!(p.functions.len(), 17);
}

/// The demo reads carry four of the catalogue's genes (blaTEM-1, aph(6)-Id, aph(3'')-Ib and sul2,
/// on K. pneumoniae HS11286's plasmid pKPHS3): their functions have reads, the others none.
#[test]
fn demo_reads_profile_finds_the_plasmid_genes_functions() {
    let dir = tempfile::tempdir().unwrap();
    write_demo_catalogue(dir.path()).unwrap();
    let catalogue = Catalogue::load(dir.path()).unwrap();
    let reads = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo/reads.fastq.gz");
    let p = profile(&catalogue, &reads, &ProfileOptions { threads: 2, ..Default::default() }).unwrap();
    assert_eq!(p.n_reads, 10_019);
    // About 150 reads on each gene (23-27x over 816-861 bp), all on genes with a function.
    assert!((560..=640).contains(&p.n_mapped_reads), "{p:?}");
    assert_eq!(p.n_assigned_reads, p.n_mapped_reads);
    let rows: Vec<(&str, u64)> = p.functions.iter().map(|f| (f.function_id.as_str(), f.read_count)).collect();
    let mut ids: Vec<&str> = rows.iter().map(|r| r.0).collect();
    ids.sort_unstable();
    assert_eq!(ids, ["EC:2.5.1.15", "EC:2.7.1.72", "EC:2.7.1.87", "EC:3.5.2.6"], "{rows:?}");
    assert!(rows.iter().all(|&(_, n)| (120..=180).contains(&n)), "{rows:?}");
    assert_eq!(rows.iter().map(|r| r.1).sum::<u64>(), p.n_mapped_reads);
    // No read on the absent genes' functions, VanA's among them.
    assert!(!ids.contains(&"EC:6.1.2.1"));
}
