//! Integration tests: detection on simulated reads against the demo panel, panel loading from
//! disk, and the results' JSON.

mod definition;
mod detect;

use std::path::{Path, PathBuf};

use mgds_api::{Marker, PanelResults};
use mgds_panel::simulate::{ReadSimulator, SimRead, write_fastq};
use mgds_panel::{DetectOptions, MarkerDef, Panel, demo, detect};

/// The demo panel's marker `name`.
pub fn demo_marker(name: &str) -> MarkerDef {
    demo::panel()
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

/// Runs the demo panel over `planted` reads (in background) with two threads.
pub fn run_demo(sim: &mut ReadSimulator, planted: Vec<SimRead>) -> PanelResults {
    let dir = tempfile::tempdir().unwrap();
    let path = reads_file(dir.path(), sim, planted);
    detect(&demo::panel(), &path, &DetectOptions { threads: 2, max_record: None }).unwrap()
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
