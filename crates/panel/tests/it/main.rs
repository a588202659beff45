//! Integration tests: detection on simulated reads against a synthetic panel (`tests/data/
//! synthetic`: random markers, long and short, so every case can be planted), the real demo panel
//! on the demo reads, panel loading from disk, and the results' JSON.

mod definition;
mod detect;

use std::path::{Path, PathBuf};

use mgds_api::{Marker, PanelResults};
use mgds_panel::simulate::{ReadSimulator, SimRead, write_fastq};
use mgds_panel::{DetectOptions, MarkerDef, Panel, detect};

/// The synthetic test panel: random long markers and short point-mutation markers.
pub const SYNTHETIC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/synthetic");

/// The synthetic test panel.
pub fn synthetic() -> Panel {
    Panel::load(SYNTHETIC).unwrap()
}

/// The synthetic panel copied into `dir` and loaded from there.
pub fn synthetic_on_disk(dir: &Path) -> Panel {
    for f in ["panel.json", "amr_genes.fasta", "point_mutations.fasta"] {
        std::fs::copy(Path::new(SYNTHETIC).join(f), dir.join(f)).unwrap();
    }
    Panel::load(dir).unwrap()
}

/// The synthetic panel's marker `name`.
pub fn demo_marker(name: &str) -> MarkerDef {
    synthetic()
        .markers()
        .find(|(_, m)| m.name == name)
        .map(|(_, m)| m.clone())
        .unwrap_or_else(|| panic!("no demo marker {name}"))
}

/// Background reads of random sequence plus `planted`, shuffled, written as FASTQ.
pub fn reads_file(dir: &Path, sim: &mut ReadSimulator, planted: Vec<SimRead>) -> PathBuf {
    let mut reads = sim.background(2000);
    reads.extend(planted);
    sim.shuffle(&mut reads);
    let path = dir.join("reads.fastq");
    write_fastq(&path, &reads, false).unwrap();
    path
}

/// Runs the synthetic panel over `planted` reads (in background) with two threads.
pub fn run_demo(sim: &mut ReadSimulator, planted: Vec<SimRead>) -> PanelResults {
    let dir = tempfile::tempdir().unwrap();
    let path = reads_file(dir.path(), sim, planted);
    detect(&synthetic(), &path, &DetectOptions { threads: 2, max_record: None }).unwrap()
}

/// The result of marker `name`, wherever its sub-panel.
pub fn marker(results: &PanelResults, name: &str) -> Marker {
    mgds_formats::sub_panels(results)
        .flat_map(|s| s.unwrap().1.markers)
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no marker {name} in the results"))
}

/// The demo panel, as loaded from a folder written by `write_demo_panel`.
pub fn demo_on_disk(dir: &Path) -> Panel {
    mgds_panel::write_demo_panel(dir).unwrap();
    Panel::load(dir).unwrap()
}
