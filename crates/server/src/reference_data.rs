//! Reference data installed in the data folder: each installed reference is a folder
//! `databases/<name>/` with a `manifest.json` ([`Manifest`]): its kind (a classification
//! database, a marker panel, reference genomes, a gene catalogue), its display name and the
//! digest of its content, recorded when it was installed.
//!
//! [`install_demo`] builds the small demo references shipped with the engines (fragments of real
//! genomes over their NCBI taxonomy, a panel of real resistance genes, a gene catalogue of real
//! resistance genes with their enzymes' EC numbers),
//! so that a fresh service has working jobs with no download.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use mgds_classify::{
    BuildInput, BuildOptions, BuildProgress, BuildReport, BuildStage, DEFAULT_READ_LENGTH, PrepareOptions,
    PrepareReport, SpeciesGenomes,
};

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
    /// For a classification database: our own file, or a Kraken 2 folder read in place (then
    /// `file` is the folder's absolute path, and this folder keeps only the companion files).
    #[serde(default, skip_serializing_if = "DatabaseFormat::is_mgds")]
    pub format: DatabaseFormat,
    /// For a classification database: the genomes found per species, with their mean length
    /// (what genome-copy abundance divides by). `None` when they are not known (a Kraken 2
    /// folder without its `library/`): results then carry no genome-copy abundance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub genomes: Option<Vec<SpeciesGenomes>>,
    /// For the demo references: the version of the bundled demo data they were made from
    /// ([`DEMO_VERSION`]); a data folder with older demo references gets the current ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demo_version: Option<u32>,
    /// For a classification database: the taxa whose reads are the host's (with everything
    /// below them), which tables and charts leave out unless asked and a copy without the
    /// host's reads removes. `None`: human (9606) where the database's taxonomy has it; an
    /// empty list: no host. Set with `mgds db host`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_tax_ids: Option<Vec<String>>,
}

/// The host a classification database names when its manifest does not say: human.
pub const DEFAULT_HOST_TAX_ID: &str = "9606";

/// Names the host taxa of the installed classification database `folder` (`None`: back to the
/// default rule), keeping the rest of its manifest. Analyses made from now on carry them.
pub fn set_host_taxa(data_dir: &Path, folder: &str, tax_ids: Option<Vec<String>>) -> Result<Manifest, InstallError> {
    let dir = data_dir.join(DATABASES_DIR).join(folder);
    let mut manifest = read_manifest(&dir)?;
    if manifest.kind != ReferenceKind::Classification {
        return Err(InstallError::Engine(format!("{folder} is not a classification database; only those name a host")));
    }
    manifest.host_tax_ids = tax_ids;
    let path = dir.join(MANIFEST);
    let text = serde_json::to_vec_pretty(&manifest).map_err(|e| InstallError::Manifest(path.clone(), e))?;
    // Staged beside the databases' folders and moved in, which dates their folder: a running
    // service's workers see the change there and read the references again.
    let staged = data_dir.join(DATABASES_DIR).join(format!(".{folder}.{MANIFEST}.new"));
    std::fs::write(&staged, text).map_err(|e| InstallError::Io(staged.clone(), e))?;
    std::fs::rename(&staged, &path).map_err(|e| InstallError::Io(path.clone(), e))?;
    Ok(manifest)
}

/// The format of a classification database.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DatabaseFormat {
    /// A file built by `mgds db build`.
    #[default]
    Mgds,
    /// A Kraken 2 database folder (`hash.k2d`, `opts.k2d`, `taxo.k2d`), read where it is.
    Kraken2,
}

impl DatabaseFormat {
    fn is_mgds(&self) -> bool {
        *self == DatabaseFormat::Mgds
    }
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

/// File name of the demo reads ([`write_demo_reads`]).
pub const DEMO_READS_NAME: &str = "mgds-demo-reads.fastq.gz";

/// Writes the demo reads (gzipped FASTQ, simulated from the demo genomes with known truth) to
/// `path`, whole or not at all: a first sample to try the demo references with. A file there
/// already that holds them is kept.
pub fn write_demo_reads(path: &Path) -> std::io::Result<()> {
    let bytes = mgds_classify::demo::READS_FASTQ_GZ;
    if std::fs::read(path).is_ok_and(|b| b == bytes) {
        return Ok(());
    }
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The version of the bundled demo data: 2 is the real-sequence demo (genome fragments and NCBI
/// resistance genes), 3 adds the gene catalogue of NCBI resistance genes (before, its genes were
/// segments of the demo genomes with made-up functions). Demo references made from older data are
/// replaced at start; one whose data did not change is made again with the same digest, so it
/// stays the same job.
pub const DEMO_VERSION: u32 = 3;

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
            let report = mgds_classify::build(&input, &index).map_err(|e| engine(&e))?;
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
                format: DatabaseFormat::Mgds,
                genomes: Some(report.genomes),
                demo_version: Some(DEMO_VERSION),
                host_tax_ids: None,
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
                format: DatabaseFormat::Mgds,
                genomes: None,
                demo_version: Some(DEMO_VERSION),
                host_tax_ids: None,
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
                format: DatabaseFormat::Mgds,
                genomes: None,
                demo_version: Some(DEMO_VERSION),
                host_tax_ids: None,
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
                format: DatabaseFormat::Mgds,
                genomes: None,
                demo_version: Some(DEMO_VERSION),
                host_tax_ids: None,
            })
        })?);
    }
    Ok(done)
}

/// Makes the demo references again when they are out of date: the classification database when
/// an older version of the engine built it (its format is no longer read), and every demo
/// reference made from older bundled data ([`DEMO_VERSION`]). The demo is made from data bundled
/// with MGDS, so it can always be made again. A new database is a new job; analyses made with
/// the old one keep their results. Answers whether it rebuilt anything.
pub fn refresh_outdated_demo(data_dir: &Path) -> Result<bool, InstallError> {
    let root = data_dir.join(DATABASES_DIR);
    let mut outdated = Vec::new();
    for name in DEMO_FOLDERS {
        let folder = root.join(name);
        let Ok(manifest) = read_manifest(&folder) else { continue };
        let old_data = manifest.demo_version.unwrap_or(1) < DEMO_VERSION;
        let old_format = manifest.kind == ReferenceKind::Classification
            && matches!(mgds_classify::format_version(folder.join(&manifest.file)), Ok(v) if v != mgds_classify::FORMAT_VERSION);
        if old_data || old_format {
            tracing::warn!(
                "the demo reference {} is out of date ({}): making it again",
                folder.display(),
                if old_format { "an older classifier built it" } else { "older demo data" }
            );
            outdated.push(folder);
        }
    }
    if outdated.is_empty() {
        return Ok(false);
    }
    for folder in &outdated {
        std::fs::remove_dir_all(folder).map_err(|e| InstallError::Io(folder.clone(), e))?;
    }
    install_demo(data_dir)?;
    Ok(true)
}

/// Builds a classification database from reference FASTA files, a sequence-to-taxon map and an
/// NCBI taxonomy dump folder, and installs it as `folder`. `progress` is called as the
/// references are read. The report says what was found (genomes per species, sizes).
pub fn install_classification(
    data_dir: &Path,
    folder: &str,
    name: &str,
    input: &BuildInput,
    options: &BuildOptions,
    default: bool,
    progress: &mut dyn FnMut(&BuildProgress),
) -> Result<(Manifest, BuildReport), InstallError> {
    let mut report = None;
    let manifest = install_with(data_dir, folder, |dir| {
        let index = dir.join("index.mgdb");
        let r = mgds_classify::build_with_progress(input, options, &index, progress)
            .map_err(|e| InstallError::Engine(e.to_string()))?;
        let manifest = Manifest {
            name: name.into(),
            kind: ReferenceKind::Classification,
            file: "index.mgdb".into(),
            seqid2taxid: None,
            digest: r.digest.clone(),
            default,
            format: DatabaseFormat::Mgds,
            genomes: Some(r.genomes.clone()),
            demo_version: None,
            host_tax_ids: None,
        };
        report = Some(r);
        Ok(manifest)
    })?;
    Ok((manifest, report.expect("set by a successful install")))
}

/// What [`import_kraken2`] found.
#[derive(Debug)]
pub struct Kraken2Import {
    /// The manifest installed.
    pub manifest: Manifest,
    /// The options the database was built with.
    pub options: mgds_classify::Kraken2Options,
    /// Size of `hash.k2d` in bytes.
    pub table_bytes: u64,
    /// What reading the folder's references found, when it has them (`library/` and
    /// `seqid2taxid.map`, or the files given).
    pub prepared: Option<PrepareReport>,
    /// Read lengths of the k-mer distributions Bracken left in the folder (copied beside).
    pub bracken: Vec<u32>,
}

/// Registers the Kraken 2 database folder `source` as the classification database `folder`,
/// without copying it: its table stays where it is and is memory-mapped when used. The folder
/// is checked first (a missing, cut or foreign file is refused, naming it). When the references
/// it was built from are there (`library/` and `seqid2taxid.map`, as `kraken2-build` leaves them
/// unless `--clean` was run, or the files in `prepare`), they are read once to find the genomes
/// (genome-copy abundance) and the k-mer distribution (re-estimated abundance); without them,
/// results carry read counts, and re-estimated abundance only if Bracken's distribution files
/// are in the folder. What is computed is kept in `databases/<folder>/`, never in `source`, so
/// a read-only or shared folder works.
pub fn import_kraken2(
    data_dir: &Path,
    folder: &str,
    name: &str,
    source: &Path,
    prepare: Option<&PrepareOptions>,
    default: bool,
    progress: &mut dyn FnMut(&BuildProgress),
) -> Result<Kraken2Import, InstallError> {
    let engine = |e: &dyn std::fmt::Display| InstallError::Engine(e.to_string());
    let source = std::fs::canonicalize(source).map_err(|e| InstallError::Io(source.to_path_buf(), e))?;
    // Refuse a bad folder, or one registered already, before creating anything.
    let checked = mgds_classify::Kraken2Database::open(&source).map_err(|e| engine(&e))?;
    let digest = checked.database().digest().to_string();
    drop(checked);
    if let Some((other, _)) =
        list_installed(data_dir).into_iter().find(|(_, m)| m.as_ref().is_ok_and(|m| m.digest == digest))
    {
        return Err(InstallError::Engine(format!(
            "this database is installed already, as {other:?}; remove the folder {} first to register it again",
            data_dir.join(DATABASES_DIR).join(&other).display()
        )));
    }
    let mut result = None;
    let manifest = install_with(data_dir, folder, |dir| {
        let open = mgds_classify::OpenOptions { companion_dir: Some(dir.to_owned()) };
        let mut k2 = mgds_classify::Kraken2Database::open_with(&source, &open).map_err(|e| engine(&e))?;
        let prepared = match prepare {
            None => None,
            Some(opts) => match k2.prepare(opts, progress) {
                Ok(r) => Some(r),
                Err(mgds_classify::Error::NoLibrary { .. }) if opts.library.is_none() => None,
                Err(e) => return Err(engine(&e)),
            },
        };
        // Bracken's k-mer distributions, made for this folder, are used as they are: copied
        // after the references were read, so they take the place of a computed one.
        let mut bracken = Vec::new();
        if let Ok(entries) = std::fs::read_dir(&source) {
            for e in entries.filter_map(Result::ok) {
                let file_name = e.file_name().to_string_lossy().into_owned();
                let Some(len) = file_name
                    .strip_prefix("database")
                    .and_then(|r| r.strip_suffix("mers.kmer_distrib"))
                    .and_then(|n| n.parse::<u32>().ok())
                else {
                    continue;
                };
                std::fs::copy(e.path(), dir.join(&file_name)).map_err(|err| InstallError::Io(e.path(), err))?;
                bracken.push(len);
            }
        }
        bracken.sort_unstable();
        let db = k2.database();
        let genomes = prepared.as_ref().map(|r| r.genomes.clone()).filter(|g| !g.is_empty());
        let table_bytes = std::fs::metadata(source.join("hash.k2d")).map(|m| m.len()).unwrap_or(0);
        let manifest = Manifest {
            name: name.into(),
            kind: ReferenceKind::Classification,
            file: source.to_string_lossy().into_owned(),
            seqid2taxid: None,
            digest: db.digest().to_string(),
            default,
            format: DatabaseFormat::Kraken2,
            genomes,
            demo_version: None,
            host_tax_ids: None,
        };
        result =
            Some(Kraken2Import { manifest: manifest.clone(), options: *k2.options(), table_bytes, prepared, bracken });
        Ok(manifest)
    })?;
    let mut result = result.expect("set by a successful install");
    result.manifest = manifest;
    Ok(result)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A demo gene catalogue installed from version 2's data (genome segments with made-up
    /// functions) is replaced by the bundled one; the other demo references are left alone.
    #[test]
    fn a_demo_catalogue_from_older_data_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join(DATABASES_DIR);
        // Stand-ins for the other demo references, so that only the catalogue is built.
        for name in &DEMO_FOLDERS[..3] {
            std::fs::create_dir_all(root.join(name)).unwrap();
        }
        let installed = install_demo(dir.path()).unwrap();
        assert_eq!(installed.len(), 1);
        let current = installed[0].clone();
        assert_eq!(current.kind, ReferenceKind::GeneCatalogue);

        let folder = root.join(DEMO_FOLDERS[3]);
        let catalogue = folder.join(&current.file);
        std::fs::write(catalogue.join(mgds_align::GENES_FILE), ">demo_gene_001\nACGTACGTACGT\n").unwrap();
        std::fs::write(
            catalogue.join(mgds_align::ANNOTATIONS_FILE),
            "demo_gene_001\tEC:1.1.1.1\talcohol dehydrogenase\n",
        )
        .unwrap();
        let mut old = serde_json::to_value(&current).unwrap();
        old["demo_version"] = json!(2);
        old["digest"] = json!(mgds_align::Catalogue::load(&catalogue).unwrap().digest());
        std::fs::write(folder.join(MANIFEST), old.to_string()).unwrap();

        assert!(refresh_outdated_demo(dir.path()).unwrap(), "the older catalogue is replaced");
        let now = read_manifest(&folder).unwrap();
        assert_eq!(now.demo_version, Some(DEMO_VERSION));
        assert_eq!(now.digest, current.digest);
        assert_eq!(std::fs::read(catalogue.join(mgds_align::GENES_FILE)).unwrap(), mgds_align::demo::GENES_FA);
        for name in &DEMO_FOLDERS[..3] {
            assert_eq!(std::fs::read_dir(root.join(name)).unwrap().count(), 0, "{name} was left alone");
        }
        assert!(!refresh_outdated_demo(dir.path()).unwrap(), "and then kept");
    }
}
