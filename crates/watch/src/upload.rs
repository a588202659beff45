//! Making one sample on the service, safely repeatable: the sample is first created awaiting
//! data under its `external_sample_id` (the service keeps those unique), then its file is
//! uploaded into it. Whatever happened before (a crash after the upload but before the queue
//! recorded it, a transfer cut short), looking the id up tells which step comes next.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use mgds_api::{MetadataInput, Visibility};
use mgds_client::{Bandwidth, CancellationToken, Client, Filter};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::config::FolderConfig;
use crate::illumina::strip_sequence_ext;
use crate::plan::Recipe;
use crate::queue::SampleRecord;

/// How an attempt ended.
pub(crate) enum Outcome {
    /// The sample is on the service with its file (`true`: it already was).
    Confirmed(String, bool),
    /// Stopped (the watcher stops or pauses); tried again later as it is.
    Stopped,
    /// Failed for a reason that may pass (network, service down): retried with backoff.
    Transient(String),
    /// Failed for a reason that will not pass by itself: given up until the next start.
    Permanent(String),
}

/// Looks the sample up by its external id: its id, and whether it still awaits its file.
async fn find(client: &Client, external_id: &str) -> Result<Option<(String, bool)>, mgds_client::Error> {
    let page = client.metadata().list().filter(Filter::new().eq("external_sample_id", external_id)).send().await?;
    let Some(m) = page.items.into_iter().next() else { return Ok(None) };
    let id = m.sample.id().to_string();
    let sample = client.samples().get(id.as_str()).await?;
    Ok(Some((id, sample.visibility == Visibility::AwaitingData)))
}

fn classify(e: &mgds_client::Error) -> Outcome {
    use mgds_client::Error as E;
    match e {
        E::Cancelled => Outcome::Stopped,
        E::Transport { .. } | E::Server { .. } | E::RateLimited { .. } | E::TransferStalled { .. } => {
            Outcome::Transient(e.to_string())
        }
        _ => Outcome::Permanent(e.to_string()),
    }
}

/// Everything one upload needs.
pub(crate) struct Ctx<'a> {
    pub client: &'a Client,
    pub staging: &'a Path,
    pub bandwidth: &'a Bandwidth,
    pub cancel: CancellationToken,
    pub progress: Box<dyn Fn(u64, u64) + Send + Sync>,
}

/// Makes the sample `s` of folder `cfg`; `record_id` is told the sample's id as soon as it is
/// known.
pub(crate) async fn make(ctx: Ctx<'_>, cfg: &FolderConfig, s: &SampleRecord) -> (Outcome, Option<String>) {
    let client = ctx.client;
    // 1. Where does it stand on the service?
    let mut found = match find(client, &s.external_id).await {
        Ok(f) => f,
        Err(e) => return (classify(&e), None),
    };
    if found.is_none() {
        let mut pre = client.samples().preupload().metadata(metadata(cfg, s));
        for t in &cfg.tags {
            pre = pre.tag(t.clone());
        }
        if let Some(p) = &cfg.project {
            pre = pre.project(p.as_str());
        }
        match pre.send().await {
            Ok(r) => found = Some((r.sample_id, true)),
            // Made by an earlier attempt whose answer was lost: look again.
            Err(mgds_client::Error::Conflict { .. }) => match find(client, &s.external_id).await {
                Ok(f) => found = f,
                Err(e) => return (classify(&e), None),
            },
            Err(e) => return (classify(&e), None),
        }
    }
    let Some((id, awaiting)) = found else {
        return (Outcome::Transient("the pre-uploaded sample is not visible yet".into()), None);
    };
    if !awaiting {
        return (Outcome::Confirmed(id.clone(), true), Some(id));
    }
    // 2. The file.
    let files = s.recipe.files();
    if let Some(missing) = files.iter().find(|p| !p.is_file()) {
        return (Outcome::Permanent(format!("{} is gone", missing.display())), Some(id));
    }
    let (path, filename, built) = match &s.recipe {
        Recipe::Single(p) => (p.clone(), file_name(p), false),
        recipe => {
            let out = staging_path(ctx.staging, s, recipe);
            let recipe = recipe.clone();
            let target = out.clone();
            match tokio::task::spawn_blocking(move || build(&recipe, &target)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return (Outcome::Permanent(e), Some(id)),
                Err(e) => return (Outcome::Transient(format!("preparing the file failed: {e}")), Some(id)),
            }
            let name = format!("{}{}", s.name, ext_of(&out));
            (out, name, true)
        }
    };
    let progress = ctx.progress;
    let sent = client
        .samples()
        .upload(&path)
        .external_sample_id(s.external_id.clone())
        .filename(filename)
        .interleaved(matches!(s.recipe, Recipe::Interleave(_)))
        .bandwidth(ctx.bandwidth.clone())
        .progress(progress)
        .cancel_token(ctx.cancel.clone())
        .send()
        .await;
    if built {
        let _ = fs::remove_file(&path);
    }
    match sent {
        Ok(sample) => {
            let sid = sample.uri.rsplit('/').next().unwrap_or(&id).to_string();
            (Outcome::Confirmed(sid, false), Some(id))
        }
        // Someone (an earlier attempt of ours) gave the sample its file meanwhile.
        Err(mgds_client::Error::InvalidRequest { status: 400, ref message }) if message.contains("awaiting data") => {
            match find(client, &s.external_id).await {
                Ok(Some((sid, false))) => (Outcome::Confirmed(sid, true), Some(id)),
                Ok(_) => (Outcome::Transient(message.clone()), Some(id)),
                Err(e) => (classify(&e), Some(id)),
            }
        }
        Err(e) => (classify(&e), Some(id)),
    }
}

fn metadata(cfg: &FolderConfig, s: &SampleRecord) -> MetadataInput {
    let mut custom: Map<String, Value> = cfg.metadata.clone();
    if let Some(r) = &s.run_id {
        custom.insert("run_id".into(), Value::String(r.clone()));
    }
    if let Some(r) = &s.run {
        custom.insert("run_folder".into(), Value::String(r.to_string_lossy().into_owned()));
    }
    if let Recipe::Single(p) = &s.recipe {
        custom.insert("source_file".into(), Value::String(p.to_string_lossy().into_owned()));
    }
    MetadataInput {
        name: Some(Some(s.name.clone())),
        external_sample_id: Some(Some(s.external_id.clone())),
        custom: Some(custom),
        ..MetadataInput::default()
    }
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "reads.fastq".into())
}

/// `.fastq.gz`, `.fa`, ...: the extension of the file's name.
fn ext_of(p: &Path) -> String {
    let name = file_name(p);
    let stem = strip_sequence_ext(&name).unwrap_or(&name);
    name[stem.len()..].to_string()
}

fn staging_path(staging: &Path, s: &SampleRecord, recipe: &Recipe) -> PathBuf {
    let tag = hex::encode(&Sha256::digest(s.key.as_bytes())[..8]);
    let ext = match recipe {
        Recipe::Interleave(_) => ".fastq.gz".to_string(),
        r => r.files().first().map(|p| ext_of(p)).unwrap_or_else(|| ".fastq".into()),
    };
    staging.join(format!("{tag}{ext}"))
}

fn is_gzip(p: &Path) -> io::Result<bool> {
    let mut m = [0u8; 2];
    let mut f = fs::File::open(p)?;
    let n = f.read(&mut m)?;
    Ok(n == 2 && m == [0x1f, 0x8b])
}

/// Writes the sample's file: gzip members and plain text both join end to end; pairs are
/// interleaved (gzip, fast level) and joined. Written beside its final name and renamed when
/// whole.
fn build(recipe: &Recipe, out: &Path) -> Result<(), String> {
    let dir = out.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let part = out.with_extension("part");
    let result = (|| -> Result<(), String> {
        let parts: Vec<PathBuf> = match recipe {
            Recipe::Single(p) => vec![p.clone()],
            Recipe::Concat(v) => {
                let gz: Vec<bool> = v.iter().map(|p| is_gzip(p).unwrap_or(false)).collect();
                if gz.iter().any(|g| *g) && !gz.iter().all(|g| *g) {
                    return Err("the files to join mix gzip and uncompressed files; compress them alike".into());
                }
                v.clone()
            }
            Recipe::Interleave(pairs) => {
                let mut made = Vec::new();
                for (i, (r1, r2)) in pairs.iter().enumerate() {
                    let piece = out.with_extension(format!("pair{i}.gz"));
                    mgds_formats::interleave(r1, r2, &piece, mgds_formats::OutputCompression::Gzip { level: 1 })
                        .map_err(|e| e.to_string())?;
                    made.push(piece);
                }
                made
            }
        };
        let mut w = fs::File::create(&part).map_err(|e| format!("cannot write {}: {e}", part.display()))?;
        for p in &parts {
            let mut r = fs::File::open(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
            io::copy(&mut r, &mut w).map_err(|e| format!("cannot write {}: {e}", part.display()))?;
        }
        w.flush().and_then(|()| w.sync_all()).map_err(|e| format!("cannot write {}: {e}", part.display()))?;
        if matches!(recipe, Recipe::Interleave(_)) {
            for p in &parts {
                let _ = fs::remove_file(p);
            }
        }
        fs::rename(&part, out).map_err(|e| format!("cannot write {}: {e}", out.display()))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&part);
    }
    result
}
