//! Reference data shared through an S3 store, for workers on other machines.
//!
//! Jobs are pinned by their reference's digest, so a worker anywhere runs an analysis with the
//! very data its job names. When the service's files are in an S3 store, each installed
//! reference is published there once, under `references/<digest>/` (its folder as installed,
//! with a Kraken 2 folder that is read in place copied in as `kraken2/`), its manifest last, so a
//! manifest in the store means the rest is whole. A worker whose data folder lacks the
//! reference of a registered job fetches it from there into `databases/<digest>/` before it
//! claims analyses of that job.

use std::path::{Path, PathBuf};

use crate::error::{ApiError, ApiResult};
use crate::reference_data::{DATABASES_DIR, DatabaseFormat, MANIFEST, Manifest, list_installed};
use crate::store::Store;
use crate::store::files::Storage;

/// The folder of the store that holds the reference with this digest.
fn prefix(digest: &str) -> String {
    format!("references/{digest}")
}

/// The files the engines read of a Kraken 2 folder.
const KRAKEN2_FILES: [&str; 3] = ["hash.k2d", "opts.k2d", "taxo.k2d"];

/// Publishes the reference installed in `dir` (its manifest `m`) to the S3 store `storage` unless it is there already (answers whether
/// it published it). Does nothing when the files are kept in the data folder.
pub async fn publish(storage: &Storage, dir: &Path, m: &Manifest) -> ApiResult<bool> {
    if storage.s3_config().is_none() {
        return Ok(false);
    }
    let base = prefix(&m.digest);
    if storage.size(&format!("{base}/{MANIFEST}")).await?.is_some() {
        return Ok(false);
    }
    tracing::info!(reference = %m.name, digest = %m.digest, "publishing reference data to the store for other workers");
    let mut manifest = m.clone();
    for (file, relative) in files_under(dir)? {
        if relative == MANIFEST {
            continue;
        }
        storage.put_file(&format!("{base}/{relative}"), &file).await.map_err(ApiError::internal)?;
    }
    if m.format == DatabaseFormat::Kraken2 {
        let folder = PathBuf::from(&m.file);
        for name in KRAKEN2_FILES {
            storage
                .put_file(&format!("{base}/kraken2/{name}"), &folder.join(name))
                .await
                .map_err(ApiError::internal)?;
        }
        manifest.file = "kraken2".into();
    }
    let text = serde_json::to_vec_pretty(&manifest)?;
    storage.put(&format!("{base}/{MANIFEST}"), text.into()).await?;
    Ok(true)
}

/// Fetches from the S3 store the references of the registered jobs that `data_dir` lacks.
/// Returns how many it fetched. Does nothing when the files are kept in the data folder.
pub async fn fetch_missing(state: &Store, data_dir: &Path) -> ApiResult<usize> {
    if state.storage.s3_config().is_none() {
        return Ok(0);
    }
    let wanted: Vec<String> =
        sqlx::query_scalar("SELECT DISTINCT reference FROM jobs WHERE reference <> '' ORDER BY reference")
            .fetch_all(&state.db)
            .await?;
    let have: Vec<String> =
        list_installed(data_dir).into_iter().filter_map(|(_, m)| m.ok()).map(|m| m.digest).collect();
    let mut fetched = 0;
    for digest in wanted.iter().filter(|d| !have.contains(d)) {
        let base = prefix(digest);
        let Some(text) = state.storage.read(&format!("{base}/{MANIFEST}")).await? else {
            // Not published (yet): the jobs of this reference are left to workers that have it.
            continue;
        };
        let manifest: Manifest = serde_json::from_slice(&text)?;
        if manifest.digest != *digest {
            tracing::warn!(digest = %digest, "the store holds another reference under this digest; not fetched");
            continue;
        }
        tracing::info!(reference = %manifest.name, digest = %digest, "fetching reference data from the store");
        let root = data_dir.join(DATABASES_DIR);
        std::fs::create_dir_all(&root).map_err(ApiError::internal)?;
        // Whole or not at all: a staging folder beside, renamed once every file arrived.
        let staging = tempfile::Builder::new()
            .prefix(&format!(".{digest}-fetching-"))
            .tempdir_in(&root)
            .map_err(ApiError::internal)?;
        for key in state.storage.keys(Some(&base)).await? {
            let Some(relative) = key.strip_prefix(&format!("{base}/")) else { continue };
            let dest = staging.path().join(relative);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(ApiError::internal)?;
            }
            state.storage.download_to(&key, &dest).await.map_err(ApiError::internal)?;
        }
        let target = root.join(digest);
        std::fs::rename(staging.keep(), &target).map_err(ApiError::internal)?;
        fetched += 1;
    }
    Ok(fetched)
}

/// Every file under `dir`, with its path relative to `dir` (`/`-separated).
fn files_under(dir: &Path) -> ApiResult<Vec<(PathBuf, String)>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).map_err(ApiError::internal)? {
            let entry = entry.map_err(ApiError::internal)?;
            let path = entry.path();
            if entry.file_type().map_err(ApiError::internal)?.is_dir() {
                stack.push(path);
            } else {
                let relative = path.strip_prefix(dir).map_err(ApiError::internal)?;
                let relative =
                    relative.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
                out.push((path, relative));
            }
        }
    }
    out.sort();
    Ok(out)
}
