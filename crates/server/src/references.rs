//! Reference data installed in the data folder, and the jobs they provide.
//!
//! Each installed reference is a folder `databases/<name>/` with a `manifest.json`
//! ([`Manifest`]): its kind (a classification database, a marker panel, reference genomes, a
//! gene catalogue), its display name and the digest of its content, recorded when it was
//! installed. At start-up [`References::load`] reads every manifest and registers one job per
//! reference, pinned by engine name, engine version and digest: a new database is a new job, and
//! the analyses of the old one stay tied to what produced them.
//!
//! [`install_demo`] builds the small demo references shipped with the engines (synthetic
//! genomes over a real NCBI taxonomy subset, a demo panel, a demo gene catalogue), so that a
//! fresh service has working jobs with no download.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use mgds_classify::BuildInput;

use crate::AppState;
use crate::error::ApiResult;
use crate::store::jobs::{JobSpec, register_job};
use crate::store::settings;

/// Folder, inside the data folder, of the installed references.
pub const DATABASES_DIR: &str = "databases";
/// The manifest file of an installed reference.
pub const MANIFEST: &str = "manifest.json";
pub use crate::store::settings::DEFAULT_CLASSIFICATION_KEY;

/// What an installed reference is, and so which engine uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReferenceKind {
    /// A k-mer index for `mgds-classify` (file: the index).
    Classification,
    /// A marker panel for `mgds-panel` (file: the panel folder, usually `.`).
    Panel,
    /// Reference genomes for alignments (file: a FASTA; `seqid2taxid` maps records to taxa).
    Genomes,
    /// An annotated gene catalogue for functional profiles (file: the catalogue folder).
    GeneCatalogue,
}

impl ReferenceKind {
    /// The analysis type its job creates.
    pub fn analysis_type(self) -> &'static str {
        match self {
            ReferenceKind::Classification => "classification",
            ReferenceKind::Panel => "panel",
            ReferenceKind::Genomes => "alignment",
            ReferenceKind::GeneCatalogue => "functional_profile",
        }
    }

    /// The engine that runs it, and the engine's version.
    pub fn engine(self) -> (&'static str, &'static str) {
        match self {
            ReferenceKind::Classification => (mgds_classify::ENGINE_NAME, mgds_classify::ENGINE_VERSION),
            ReferenceKind::Panel => (mgds_panel::ENGINE_NAME, mgds_panel::ENGINE_VERSION),
            ReferenceKind::Genomes | ReferenceKind::GeneCatalogue => {
                (mgds_align::ENGINE_NAME, mgds_align::ENGINE_VERSION)
            }
        }
    }

    /// JSON Schema of the job's arguments.
    pub fn job_args_schema(self) -> Value {
        match self {
            ReferenceKind::Classification => json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "confidence": {
                        "type": "number", "minimum": 0, "maximum": 1,
                        "default": mgds_classify::ClassifyOptions::default().confidence,
                        "description": "Fraction of a read's k-mers that must support its call; the call moves towards the root until it does"
                    },
                    "min_hits": {
                        "type": "integer", "minimum": 1, "maximum": 1000,
                        "default": mgds_classify::ClassifyOptions::default().min_hits,
                        "description": "Minimizer hit groups (runs of k-mers sharing a minimizer found in the database, as Kraken 2's --minimum-hit-groups) a read needs to pass the sample-wide filter"
                    }
                }
            }),
            ReferenceKind::Genomes => json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["tax_id"],
                "properties": {
                    "tax_id": {
                        "type": "string", "pattern": "^[0-9]+$",
                        "description": "NCBI tax id (species or sub-species) whose reference genome the reads are aligned to"
                    }
                }
            }),
            ReferenceKind::Panel | ReferenceKind::GeneCatalogue => {
                json!({"type": "object", "additionalProperties": false, "properties": {}})
            }
        }
    }
}

/// `databases/<name>/manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Display name, used in the job's name.
    pub name: String,
    /// What it is.
    pub kind: ReferenceKind,
    /// The data, relative to the manifest's folder.
    pub file: String,
    /// For genomes: the sequence-to-taxon map (TSV `seq_id<TAB>tax_id`), relative to the folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seqid2taxid: Option<String>,
    /// Hex SHA-256 of the content, as the engine computes it; pins the job.
    pub digest: String,
    /// Whether this classification database runs by itself on every new sample.
    #[serde(default)]
    pub default: bool,
}

/// One installed reference with the job it provides.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Installed {
    /// Its folder.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
    /// The job registered for it.
    pub job_id: String,
}

impl Installed {
    /// The data file or folder.
    pub fn path(&self) -> PathBuf {
        self.dir.join(&self.manifest.file)
    }
}

/// The installed references of a data folder, by job.
#[derive(Debug, Default)]
pub struct References {
    by_job: HashMap<String, Arc<Installed>>,
}

impl References {
    /// Reads every manifest under `data_dir/databases`, registers each reference's job, and
    /// records the default classification job. A folder with a broken manifest is skipped with
    /// a warning naming it, so one bad install does not stop the service.
    pub async fn load(state: &AppState, data_dir: &Path) -> ApiResult<References> {
        let mut refs = References::default();
        let root = data_dir.join(DATABASES_DIR);
        let Ok(entries) = std::fs::read_dir(&root) else { return Ok(refs) };
        let mut dirs: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_dir()).collect();
        dirs.sort();
        let mut default = None;
        for dir in dirs {
            let manifest = match read_manifest(&dir) {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(folder = %dir.display(), error = %e, "skipping a reference folder without a usable manifest");
                    continue;
                }
            };
            let (engine, version) = manifest.kind.engine();
            let job_id = register_job(
                state,
                &JobSpec {
                    name: job_name(&manifest),
                    analysis_type: manifest.kind.analysis_type().into(),
                    job_args_schema: manifest.kind.job_args_schema(),
                    public: true,
                    draft: false,
                    creator_id: None,
                    engine: engine.into(),
                    engine_version: version.into(),
                    reference: manifest.digest.clone(),
                },
            )
            .await?;
            if manifest.kind == ReferenceKind::Classification && (manifest.default || default.is_none()) {
                default = Some(job_id.clone());
            }
            refs.by_job.insert(job_id.clone(), Arc::new(Installed { dir, manifest, job_id }));
        }
        settings::set_default_classification(&state.db, default.as_deref()).await?;
        Ok(refs)
    }

    /// The reference behind a job, if this service can run it.
    pub fn for_job(&self, job_id: &str) -> Option<Arc<Installed>> {
        self.by_job.get(job_id).cloned()
    }

    /// The jobs this service can run.
    pub fn job_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.by_job.keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Whether nothing is installed.
    pub fn is_empty(&self) -> bool {
        self.by_job.is_empty()
    }
}

fn job_name(m: &Manifest) -> String {
    let what = match m.kind {
        ReferenceKind::Classification => "Classification",
        ReferenceKind::Panel => "Panel",
        ReferenceKind::Genomes => "Alignment",
        ReferenceKind::GeneCatalogue => "Functional profile",
    };
    format!("{what} ({})", m.name)
}

/// Reads and checks `dir/manifest.json`.
pub fn read_manifest(dir: &Path) -> Result<Manifest, InstallError> {
    let path = dir.join(MANIFEST);
    let text = std::fs::read_to_string(&path).map_err(|e| InstallError::Io(path.clone(), e))?;
    let m: Manifest = serde_json::from_str(&text).map_err(|e| InstallError::Manifest(path.clone(), e))?;
    if !dir.join(&m.file).exists() {
        return Err(InstallError::Missing(dir.join(&m.file)));
    }
    Ok(m)
}

/// Why a reference could not be installed or read.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// A file could not be read or written.
    #[error("cannot read or write {0}")]
    Io(PathBuf, #[source] std::io::Error),
    /// A manifest is not valid.
    #[error("{0} is not a valid reference manifest")]
    Manifest(PathBuf, #[source] serde_json::Error),
    /// The data a manifest names is missing.
    #[error("{0} is missing; install the reference again")]
    Missing(PathBuf),
    /// A reference of this name is installed already.
    #[error("a reference named {0:?} is installed already in {1}; remove that folder first or choose another name")]
    Exists(String, PathBuf),
    /// The engine refused the input.
    #[error("{0}")]
    Engine(String),
}

/// Lists the installed manifests of a data folder, by folder name.
pub fn list_installed(data_dir: &Path) -> Vec<(String, Result<Manifest, InstallError>)> {
    let Ok(entries) = std::fs::read_dir(data_dir.join(DATABASES_DIR)) else { return Vec::new() };
    let mut out: Vec<(String, Result<Manifest, InstallError>)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| (e.file_name().to_string_lossy().to_string(), read_manifest(&e.path())))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Installs into `data_dir/databases/<folder>` atomically: `fill` writes the content into a
/// staging folder and returns the manifest; the folder appears under its name only when whole.
pub fn install_with(
    data_dir: &Path,
    folder: &str,
    fill: impl FnOnce(&Path) -> Result<Manifest, InstallError>,
) -> Result<Manifest, InstallError> {
    let root = data_dir.join(DATABASES_DIR);
    std::fs::create_dir_all(&root).map_err(|e| InstallError::Io(root.clone(), e))?;
    let target = root.join(folder);
    if target.exists() {
        return Err(InstallError::Exists(folder.to_string(), target));
    }
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{folder}-installing-"))
        .tempdir_in(&root)
        .map_err(|e| InstallError::Io(root.clone(), e))?;
    let manifest = fill(staging.path())?;
    let text =
        serde_json::to_vec_pretty(&manifest).map_err(|e| InstallError::Manifest(staging.path().join(MANIFEST), e))?;
    std::fs::write(staging.path().join(MANIFEST), text)
        .map_err(|e| InstallError::Io(staging.path().join(MANIFEST), e))?;
    let staged = staging.keep();
    std::fs::rename(&staged, &target).map_err(|e| InstallError::Io(target.clone(), e))?;
    Ok(manifest)
}

/// Names of the demo references' folders.
pub const DEMO_FOLDERS: [&str; 4] = ["demo-bacteria", "demo-panel", "demo-genomes", "demo-functions"];

/// Builds and installs the demo references that are not installed yet: the classification
/// database (the default), the panel, the genomes for alignments and the gene catalogue.
/// Returns what it installed.
pub fn install_demo(data_dir: &Path) -> Result<Vec<Manifest>, InstallError> {
    let engine = |e: &dyn std::fmt::Display| InstallError::Engine(e.to_string());
    let root = data_dir.join(DATABASES_DIR);
    let mut done = Vec::new();
    if !root.join(DEMO_FOLDERS[0]).exists() {
        done.push(install_with(data_dir, DEMO_FOLDERS[0], |dir| {
            let src = dir.join("sources");
            let input = mgds_classify::demo::write_demo_sources(&src).map_err(|e| engine(&e))?;
            let index = dir.join("index.mgdb");
            mgds_classify::build(&input, &index).map_err(|e| engine(&e))?;
            let db = mgds_classify::Database::open(&index).map_err(|e| engine(&e))?;
            let digest = db.digest().to_string();
            drop(db);
            std::fs::remove_dir_all(&src).map_err(|e| InstallError::Io(src.clone(), e))?;
            Ok(Manifest {
                name: "MGDS demo bacteria".into(),
                kind: ReferenceKind::Classification,
                file: "index.mgdb".into(),
                seqid2taxid: None,
                digest,
                default: true,
            })
        })?);
    }
    if !root.join(DEMO_FOLDERS[1]).exists() {
        done.push(install_with(data_dir, DEMO_FOLDERS[1], |dir| {
            let panel_dir = dir.join("panel");
            mgds_panel::demo::write_demo_panel(&panel_dir).map_err(|e| engine(&e))?;
            let panel = mgds_panel::Panel::load(&panel_dir).map_err(|e| engine(&e))?;
            Ok(Manifest {
                name: "MGDS demo panel".into(),
                kind: ReferenceKind::Panel,
                file: "panel".into(),
                seqid2taxid: None,
                digest: panel.digest().to_string(),
                default: false,
            })
        })?);
    }
    if !root.join(DEMO_FOLDERS[2]).exists() {
        done.push(install_with(data_dir, DEMO_FOLDERS[2], |dir| {
            let input = mgds_classify::demo::write_demo_sources(dir).map_err(|e| engine(&e))?;
            let fasta =
                input.references.first().ok_or_else(|| InstallError::Engine("the demo has no genomes".into()))?;
            let file = fasta.strip_prefix(dir).unwrap_or(fasta).to_string_lossy().to_string();
            let map = input.seqid2taxid.strip_prefix(dir).unwrap_or(&input.seqid2taxid).to_string_lossy().to_string();
            Ok(Manifest {
                name: "MGDS demo genomes".into(),
                kind: ReferenceKind::Genomes,
                digest: digest_files(&[fasta.as_path(), input.seqid2taxid.as_path()])?,
                file,
                seqid2taxid: Some(map),
                default: false,
            })
        })?);
    }
    if !root.join(DEMO_FOLDERS[3]).exists() {
        done.push(install_with(data_dir, DEMO_FOLDERS[3], |dir| {
            let cat_dir = dir.join("catalogue");
            mgds_align::demo::write_demo_catalogue(&cat_dir).map_err(|e| engine(&e))?;
            let cat = mgds_align::Catalogue::load(&cat_dir).map_err(|e| engine(&e))?;
            Ok(Manifest {
                name: "MGDS demo gene catalogue".into(),
                kind: ReferenceKind::GeneCatalogue,
                file: "catalogue".into(),
                seqid2taxid: None,
                digest: cat.digest().to_string(),
                default: false,
            })
        })?);
    }
    Ok(done)
}

/// Rebuilds the demo classification database when an older version of the engine built it (its
/// format is no longer read): the demo is made from data bundled with MGDS, so it can always be
/// made again. The new database is a new job; analyses made with the old one keep their
/// results. Answers whether it rebuilt.
pub fn refresh_outdated_demo(data_dir: &Path) -> Result<bool, InstallError> {
    let folder = data_dir.join(DATABASES_DIR).join(DEMO_FOLDERS[0]);
    let Ok(manifest) = read_manifest(&folder) else { return Ok(false) };
    match mgds_classify::format_version(folder.join(&manifest.file)) {
        Ok(v) if v != mgds_classify::FORMAT_VERSION => {
            tracing::warn!(
                "the demo classification database in {} has format {v}; this engine reads format {}: rebuilding it",
                folder.display(),
                mgds_classify::FORMAT_VERSION
            );
            std::fs::remove_dir_all(&folder).map_err(|e| InstallError::Io(folder.clone(), e))?;
            install_demo(data_dir)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// Builds a classification database from reference FASTA files, a sequence-to-taxon map and an
/// NCBI taxonomy dump folder, and installs it as `folder`.
pub fn install_classification(
    data_dir: &Path,
    folder: &str,
    name: &str,
    input: &BuildInput,
    default: bool,
) -> Result<Manifest, InstallError> {
    install_with(data_dir, folder, |dir| {
        let index = dir.join("index.mgdb");
        mgds_classify::build(input, &index).map_err(|e| InstallError::Engine(e.to_string()))?;
        let db = mgds_classify::Database::open(&index).map_err(|e| InstallError::Engine(e.to_string()))?;
        Ok(Manifest {
            name: name.into(),
            kind: ReferenceKind::Classification,
            file: "index.mgdb".into(),
            seqid2taxid: None,
            digest: db.digest().to_string(),
            default,
        })
    })
}

/// Hex SHA-256 over files in order (each prefixed by its length, so boundaries count).
fn digest_files(files: &[&Path]) -> Result<String, InstallError> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for f in files {
        let bytes = std::fs::read(f).map_err(|e| InstallError::Io(f.to_path_buf(), e))?;
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    Ok(hex::encode(h.finalize()))
}
