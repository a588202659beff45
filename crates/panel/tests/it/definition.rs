//! Panel folders on disk: the demo panel, and errors that name the file and field or line.

use std::fs;

use mgds_panel::{Error, Panel, demo};

use crate::{demo_on_disk, synthetic_on_disk};

#[test]
fn installed_demo_panel_matches_the_built_in_one_and_the_assets() {
    let dir = tempfile::tempdir().unwrap();
    let on_disk = demo_on_disk(dir.path());
    let built_in = demo::panel();
    assert_eq!(on_disk.digest(), built_in.digest());
    assert_eq!(on_disk.sub_panels(), built_in.sub_panels());
    let assets = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/panels/demo");
    assert_eq!(Panel::load(assets).unwrap().digest(), built_in.digest());
    for (name, bytes) in demo::FILES {
        assert_eq!(&fs::read(dir.path().join(name)).unwrap(), bytes, "{name}");
    }
}

#[test]
fn digest_is_stable_and_follows_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let a = synthetic_on_disk(dir.path());
    assert_eq!(a.digest(), Panel::load(dir.path()).unwrap().digest());
    let fasta = dir.path().join("point_mutations.fasta");
    let text = fs::read_to_string(&fasta).unwrap().replace("GCACTTTATACG", "GCACTTTATACC");
    fs::write(&fasta, text).unwrap();
    assert_ne!(a.digest(), Panel::load(dir.path()).unwrap().digest());
}

#[test]
fn bad_panel_json_names_the_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    demo_on_disk(dir.path());
    let json_path = dir.path().join("panel.json");
    let json = fs::read_to_string(&json_path).unwrap();
    fs::write(&json_path, json.replace("\"long_present_identity\": 99.0", "\"long_present_identity\": \"99%\""))
        .unwrap();
    let e = Panel::load(dir.path()).unwrap_err();
    assert!(matches!(&e, Error::Json { field, .. } if field == "thresholds.long_present_identity"));
    let msg = e.to_string();
    assert!(msg.contains("panel.json: field `thresholds.long_present_identity`"), "{msg}");

    fs::write(&json_path, json.replace("\"markers\": \"amr_genes.fasta\"", "\"markers\": 3")).unwrap();
    let e = Panel::load(dir.path()).unwrap_err();
    assert!(e.to_string().contains("`sub_panels[0].markers`"), "{e}");

    fs::write(&json_path, "{\"name\": ").unwrap();
    let e = Panel::load(dir.path()).unwrap_err();
    assert!(e.to_string().ends_with("panel.json: ends too early: the JSON is cut short"), "{e}");
    fs::write(&json_path, "name = demo").unwrap();
    let e = Panel::load(dir.path()).unwrap_err();
    assert!(e.to_string().ends_with("panel.json: is not a valid panel definition (JSON)"), "{e}");
}

#[test]
fn bad_marker_file_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    synthetic_on_disk(dir.path());
    let fasta = dir.path().join("point_mutations.fasta");
    let text = fs::read_to_string(&fasta).unwrap().replace("GGTTGAAGTTGG", "GGTTGAAGTTGX");
    fs::write(&fasta, text).unwrap();
    let e = Panel::load(dir.path()).unwrap_err();
    assert!(matches!(e, Error::Marker { line: 7, .. }), "{e:?}");
    assert!(
        e.to_string().contains("point_mutations.fasta, line 7: marker `rpoB_S531L_syn` has `X` at position 12"),
        "{e}"
    );
}

#[test]
fn missing_folder_names_panel_json() {
    let dir = tempfile::tempdir().unwrap();
    let e = Panel::load(dir.path().join("nope")).unwrap_err();
    assert!(matches!(e, Error::Io { .. }));
    assert!(e.to_string().contains("nope/panel.json"), "{e}");
}
