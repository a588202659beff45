//! Detection on simulated reads: statuses, counts, strands, determinism, inputs and errors.

use std::fs;
use std::io::Write;
use std::path::Path;

use mgds_api::{MarkerStatus, PanelResults};
use mgds_panel::simulate::{ReadSimulator, write_fastq};
use mgds_panel::{DetectOptions, Detector, ENGINE_NAME, ENGINE_VERSION, Error, demo, detect};

use crate::{demo_marker, marker, reads_file, run_demo};

#[test]
fn long_marker_at_depth_10_with_read_errors_is_present() {
    let mut sim = ReadSimulator::new(1);
    let tet = demo_marker("tetA_syn");
    let planted = sim.plant(&tet.sequence, 10.0);
    let results = run_demo(&mut sim, planted);
    let m = marker(&results, "tetA_syn");
    assert_eq!(m.status, MarkerStatus::Present, "{m:?}");
    assert!(m.identity.unwrap() >= 99.9, "{m:?}");
    assert!(m.coverage.unwrap() >= 99.5, "{m:?}");
    let depth = m.depth.unwrap();
    assert!((8.0..=12.0).contains(&depth), "{m:?}");
    assert_eq!(m.length, 1200);
    assert_eq!((m.n_reads_exact_match, m.n_reads_partial_match), (None, None));
    // Nothing else is found in random background.
    for other in ["blaTEM-1_syn", "blaOXA-48_syn", "mecA_syn"] {
        let o = marker(&results, other);
        assert_eq!(o.status, MarkerStatus::Absent);
        assert_eq!((o.identity, o.coverage, o.depth), (Some(0.0), Some(0.0), Some(0.0)));
    }
    let s = marker(&results, "gyrA_S83L_syn");
    assert_eq!(s.status, MarkerStatus::Absent);
    assert_eq!((s.n_reads_exact_match, s.n_reads_partial_match), (Some(0), Some(0)));
    assert_eq!((s.identity, s.coverage, s.depth), (None, None, None));
}

#[test]
fn variant_at_97_percent_is_probable() {
    let mut sim = ReadSimulator::new(2);
    let van = demo_marker("vanA_syn");
    let variant = sim.diverged(&van.sequence, 97.0);
    let planted = sim.plant(&variant, 10.0);
    let m = marker(&run_demo(&mut sim, planted), "vanA_syn");
    assert_eq!(m.status, MarkerStatus::Probable, "{m:?}");
    // 31 SNPs in 1032 bases: 96.99%; read errors do not move the consensus.
    let identity = m.identity.unwrap();
    assert!((96.5..=97.5).contains(&identity), "{m:?}");
    assert!(m.coverage.unwrap() >= 99.0, "{m:?}");
}

#[test]
fn variant_at_90_percent_is_absent_and_says_how_far() {
    let mut sim = ReadSimulator::new(3);
    let mec = demo_marker("mecA_syn");
    let variant = sim.diverged(&mec.sequence, 90.0);
    let planted = sim.plant(&variant, 10.0);
    let m = marker(&run_demo(&mut sim, planted), "mecA_syn");
    assert_eq!(m.status, MarkerStatus::Absent, "{m:?}");
    let identity = m.identity.unwrap();
    assert!((88.0..=92.0).contains(&identity), "{m:?}");
}

#[test]
fn half_covered_marker_is_not_present() {
    let mut sim = ReadSimulator::new(4);
    let sul = demo_marker("sul1_syn");
    let planted = sim.plant(&sul.sequence[..sul.len() / 2], 10.0);
    let m = marker(&run_demo(&mut sim, planted), "sul1_syn");
    assert_eq!(m.status, MarkerStatus::Absent, "{m:?}");
    let coverage = m.coverage.unwrap();
    assert!((45.0..=52.0).contains(&coverage), "{m:?}");
    assert!(m.identity.unwrap() >= 99.0, "{m:?}");
}

#[test]
fn close_allele_of_a_present_gene_is_probable() {
    let mut sim = ReadSimulator::new(5);
    let tem1 = demo_marker("blaTEM-1_syn");
    let planted = sim.plant(&tem1.sequence, 15.0);
    let results = run_demo(&mut sim, planted);
    assert_eq!(marker(&results, "blaTEM-1_syn").status, MarkerStatus::Present);
    // blaTEM-2_syn is 13 SNPs from blaTEM-1_syn: 848 of 861 bases agree.
    let tem2 = marker(&results, "blaTEM-2_syn");
    assert_eq!(tem2.status, MarkerStatus::Probable, "{tem2:?}");
    assert_eq!(tem2.identity, Some(98.49));
}

#[test]
fn short_marker_exact_matches_are_counted() {
    let mut sim = ReadSimulator::new(6).error_rate(0.0);
    let gyr = demo_marker("gyrA_S83L_syn");
    let planted = sim.embed(&gyr.sequence, 7);
    let m = marker(&run_demo(&mut sim, planted), "gyrA_S83L_syn");
    assert_eq!(m.status, MarkerStatus::Present);
    assert_eq!((m.n_reads_exact_match, m.n_reads_partial_match), (Some(7), Some(0)));
    assert_eq!(m.length, 31);
}

#[test]
fn short_marker_with_2_snps_is_probable_and_with_4_absent() {
    let mut sim = ReadSimulator::new(7).error_rate(0.0);
    let par = demo_marker("parC_S80I_syn");
    let two = sim.with_snps(&par.sequence, 2);
    let rpo = demo_marker("rpoB_S531L_syn");
    let four = sim.with_snps(&rpo.sequence, 4);
    let mut planted = sim.embed(&two, 5);
    planted.extend(sim.embed(&four, 5));
    let results = run_demo(&mut sim, planted);
    let m = marker(&results, "parC_S80I_syn");
    assert_eq!(m.status, MarkerStatus::Probable);
    assert_eq!((m.n_reads_exact_match, m.n_reads_partial_match), (Some(0), Some(5)));
    let m = marker(&results, "rpoB_S531L_syn");
    assert_eq!(m.status, MarkerStatus::Absent);
    assert_eq!((m.n_reads_exact_match, m.n_reads_partial_match), (Some(0), Some(0)));
}

#[test]
fn reverse_strand_reads_are_found() {
    let mut sim = ReadSimulator::new(8).reverse_fraction(1.0);
    let oxa = demo_marker("blaOXA-48_syn");
    let rrl = demo_marker("rrl_A2059G_syn");
    let mut planted = sim.plant(&oxa.sequence, 10.0);
    let mut exact = ReadSimulator::new(9).reverse_fraction(1.0).error_rate(0.0);
    planted.extend(exact.embed(&rrl.sequence, 4));
    let results = run_demo(&mut sim, planted);
    let m = marker(&results, "blaOXA-48_syn");
    assert_eq!(m.status, MarkerStatus::Present, "{m:?}");
    let m = marker(&results, "rrl_A2059G_syn");
    assert_eq!(m.status, MarkerStatus::Present);
    assert_eq!(m.n_reads_exact_match, Some(4));
}

/// A sample with a bit of everything, for the tests of inputs and output.
fn mixed_sample(dir: &Path) -> std::path::PathBuf {
    let mut sim = ReadSimulator::new(10);
    let mut planted = sim.plant(&demo_marker("tetA_syn").sequence, 8.0);
    let van = sim.diverged(&demo_marker("vanA_syn").sequence, 96.0);
    planted.extend(sim.plant(&van, 6.0));
    planted.extend(sim.embed(&demo_marker("gyrA_D87N_syn").sequence, 6));
    reads_file(dir, &mut sim, planted)
}

#[test]
fn results_are_the_same_bytes_whatever_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    let path = mixed_sample(dir.path());
    let panel = crate::synthetic();
    let run = |threads| {
        serde_json::to_vec(&detect(&panel, &path, &DetectOptions { threads, max_record: None }).unwrap()).unwrap()
    };
    let first = run(2);
    assert_eq!(first, run(2));
    assert_eq!(first, run(1));
    assert_eq!(first, run(3));
}

#[test]
fn gzipped_and_fasta_reads_give_the_same_results() {
    let dir = tempfile::tempdir().unwrap();
    let mut sim = ReadSimulator::new(11);
    let planted = sim.plant(&demo_marker("sul1_syn").sequence, 10.0);
    let reads = {
        let mut r = sim.background(500);
        r.extend(planted);
        r
    };
    let (plain, gz, fasta) = (dir.path().join("r.fq"), dir.path().join("r.fq.gz"), dir.path().join("r.fa"));
    write_fastq(&plain, &reads, false).unwrap();
    write_fastq(&gz, &reads, true).unwrap();
    let mut f = fs::File::create(&fasta).unwrap();
    for r in &reads {
        // Sequence wrapped over lines, as FASTA often is.
        writeln!(f, ">{}", r.name).unwrap();
        for line in r.sequence.chunks(60) {
            f.write_all(line).unwrap();
            f.write_all(b"\n").unwrap();
        }
    }
    drop(f);
    let panel = crate::synthetic();
    let opts = DetectOptions::default();
    let expected = detect(&panel, &plain, &opts).unwrap();
    assert_eq!(marker(&expected, "sul1_syn").status, MarkerStatus::Present);
    assert_eq!(detect(&panel, &gz, &opts).unwrap(), expected);
    assert_eq!(detect(&panel, &fasta, &opts).unwrap(), expected);
}

#[test]
fn results_follow_the_spec_shape_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = mixed_sample(dir.path());
    let panel = crate::synthetic();
    let detection = Detector::new(&panel).run(&path, &DetectOptions { threads: 2, max_record: None }).unwrap();
    let results = detection.results;
    assert!(detection.stats.reads > 2000);
    assert!(detection.stats.reads_on_long_markers > 100);
    assert_eq!(detection.stats.reads_on_short_markers, 6);

    let json = serde_json::to_vec_pretty(&results).unwrap();
    let parsed = mgds_formats::parse_panel_results(&json[..], Path::new("results.json")).unwrap();
    assert_eq!(parsed, results);
    assert_eq!(parsed.panel_name, "MGDS demo AMR panel");

    // Sub-panels and markers in definition order, each with its description.
    let subs: Vec<_> = mgds_formats::sub_panels(&parsed).map(Result::unwrap).collect();
    let names: Vec<&str> = subs.iter().map(|s| s.0).collect();
    assert_eq!(names, ["amr_genes", "point_mutations"]);
    for ((_, sub), def) in subs.iter().zip(panel.sub_panels()) {
        assert_eq!(sub.description, def.description);
        let got: Vec<&str> = sub.markers.iter().map(|m| m.name.as_str()).collect();
        let want: Vec<&str> = def.markers.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(got, want);
    }

    // Long markers carry identity, coverage and depth (percents); short markers the counts.
    let value: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let tet = &value["panel_results"]["amr_genes"]["markers"][3];
    assert_eq!(tet["name"], "tetA_syn");
    assert_eq!(tet["status"], "present");
    let keys: Vec<&str> = tet.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["name", "description", "status", "length", "identity", "coverage", "depth"]);
    assert!(tet["coverage"].as_f64().unwrap() > 99.0);
    let van = &value["panel_results"]["amr_genes"]["markers"][5];
    assert_eq!(van["status"], "probable");
    let gyr = &value["panel_results"]["point_mutations"]["markers"][1];
    let keys: Vec<&str> = gyr.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["name", "description", "status", "length", "n_reads_exact_match", "n_reads_partial_match"]);
    // Six reads hold the marker; a read error may have turned an exact match into a partial one.
    let found = gyr["n_reads_exact_match"].as_u64().unwrap() + gyr["n_reads_partial_match"].as_u64().unwrap();
    assert_eq!(found, 6);
}

#[test]
fn empty_and_non_sequence_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let panel = crate::synthetic();
    let opts = DetectOptions::default();

    let empty = dir.path().join("empty.fastq");
    fs::write(&empty, "").unwrap();
    let e = detect(&panel, &empty, &opts).unwrap_err();
    assert!(matches!(&e, Error::Reads(r) if matches!(**r, mgds_formats::Error::Empty { .. })), "{e:?}");
    assert!(e.to_string().contains("empty.fastq is empty"), "{e}");

    let pdf = dir.path().join("report.fastq");
    fs::write(&pdf, b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n").unwrap();
    let e = detect(&panel, &pdf, &opts).unwrap_err();
    assert!(matches!(&e, Error::Reads(r) if matches!(**r, mgds_formats::Error::NotSequence { .. })), "{e:?}");
    assert!(e.to_string().contains("report.fastq is not a FASTA or FASTQ file"), "{e}");

    let cut = dir.path().join("cut.fastq");
    fs::write(&cut, "@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nII\n").unwrap();
    let e = detect(&panel, &cut, &opts).unwrap_err();
    assert!(e.to_string().starts_with(&format!("{}, line 8, record 2 (`r2`)", cut.display())), "{e}");

    let missing = dir.path().join("missing.fastq");
    let e = detect(&panel, &missing, &opts).unwrap_err();
    assert!(matches!(&e, Error::Reads(r) if matches!(**r, mgds_formats::Error::Io { .. })), "{e:?}");
}

#[test]
fn engine_is_named_and_versioned() {
    assert_eq!(ENGINE_NAME, "mgds-panel");
    assert!(!ENGINE_VERSION.is_empty());
}

#[test]
fn results_type_is_the_api_type() {
    // The job runner stores exactly what `detect` returns.
    fn takes(_: fn(&mgds_panel::Panel, &Path, &DetectOptions) -> Result<PanelResults, Error>) {}
    takes(detect);
}

/// The demo panel (real NCBI genes) on the demo reads (simulated from real genomes, one of them
/// with the plasmid that carries four of the genes): those four are found, the six others not.
#[test]
fn the_demo_panel_finds_the_plasmid_genes_in_the_demo_reads_and_nothing_else() {
    let reads = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo/reads.fastq.gz");
    let results = detect(&demo::panel(), &reads, &DetectOptions { threads: 2, max_record: None }).unwrap();
    let carried = ["blaTEM-1", "aph(6)-Id", "aph(3'')-Ib", "sul2"];
    let absent = ["blaCTX-M-15", "blaKPC-2", "blaOXA-48", "tet(A)", "sul1", "vanA"];
    for name in carried {
        let m = marker(&results, name);
        assert_eq!(m.status, MarkerStatus::Present, "{name}: {m:?}");
        assert!(m.depth.unwrap_or(0.0) > 15.0, "{name}: {m:?}");
    }
    for name in absent {
        let m = marker(&results, name);
        assert_eq!(m.status, MarkerStatus::Absent, "{name}: {m:?}");
    }
}
