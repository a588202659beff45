//! The jobs that installed reference data provide ([`crate::reference_data`]). At start-up
//! [`References::load`] reads every manifest and registers one job per reference, pinned by
//! engine name, engine version and digest: a new database is a new job, and the analyses of the
//! old one stay tied to what produced them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::ApiResult;
pub use crate::reference_data::*;
use crate::store::Store;
use crate::store::jobs::{JobSpec, register_job};
use crate::store::settings;

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
    /// The controls job, when this process was given the scoring ([`crate::controls`]): it
    /// needs no reference data.
    controls_job: Option<String>,
    /// The job that makes a sample's report ([`crate::reports`]): it needs no reference data.
    report_job: Option<String>,
}

impl References {
    /// Reads every manifest under `data_dir/databases`, registers each reference's job, and
    /// records the default classification job when `sets_default` (a worker on a machine of
    /// its own does not decide it). A folder with a broken manifest is skipped with a warning
    /// naming it, so one bad install does not stop the service.
    pub async fn load(state: &Store, sets_default: bool, data_dir: &Path) -> ApiResult<References> {
        // With an S3 store: the references of jobs registered on other machines first.
        match crate::shared_references::fetch_missing(state, data_dir).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(references = n, "fetched reference data from the store"),
            Err(e) => tracing::warn!(error = %e, "could not fetch reference data from the store"),
        }
        let mut refs = References::default();
        let root = data_dir.join(DATABASES_DIR);
        // No databases folder: no reference data (and the site's default classification is left
        // as it is), but the jobs that need none below.
        let present = root.is_dir();
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
            .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_dir()).collect())
            .unwrap_or_default();
        dirs.sort();
        let mut default = None;
        for dir in dirs {
            let mut manifest = match read_manifest(&dir) {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(folder = %dir.display(), error = %e, "skipping a reference folder without a usable manifest");
                    continue;
                }
            };
            // The host named on this install holds on every machine, whatever the manifest a
            // worker fetched says (`mgds db host`).
            if manifest.kind == ReferenceKind::Classification
                && let Some(host) = settings::host_taxa(&state.db, &manifest.digest).await?
            {
                manifest.host_tax_ids = host;
            }
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
            if let Err(e) = crate::shared_references::publish(&state.storage, &dir, &manifest).await {
                tracing::warn!(reference = %manifest.name, error = %e, "could not publish reference data to the store");
            }
            let installed = Installed { dir, manifest, job_id: job_id.clone() };
            refs.by_job.insert(job_id, Arc::new(installed));
        }
        if sets_default && present {
            settings::set_default_classification(&state.db, default.as_deref()).await?;
        }
        if let Some(scoring) = crate::controls::scoring() {
            let spec = JobSpec {
                name: crate::controls::JOB_NAME.into(),
                analysis_type: "control".into(),
                job_args_schema: scoring.args_schema.clone(),
                public: true,
                draft: false,
                creator_id: None,
                engine: crate::controls::ENGINE.into(),
                engine_version: scoring.version.into(),
                reference: String::new(),
            };
            refs.controls_job = Some(register_job(state, &spec).await?);
        }
        refs.report_job = Some(register_job(state, &crate::reports::job_spec()).await?);
        Ok(refs)
    }

    /// The reference behind a job, if this service can run it.
    pub fn for_job(&self, job_id: &str) -> Option<Arc<Installed>> {
        self.by_job.get(job_id).cloned()
    }

    /// The jobs this service can run.
    pub fn job_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> =
            self.by_job.keys().chain(&self.controls_job).chain(&self.report_job).cloned().collect();
        ids.sort();
        ids
    }

    /// Whether `job_id` is the controls job.
    pub fn is_controls_job(&self, job_id: &str) -> bool {
        self.controls_job.as_deref() == Some(job_id)
    }

    /// Whether `job_id` is the report job.
    pub fn is_report_job(&self, job_id: &str) -> bool {
        self.report_job.as_deref() == Some(job_id)
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
