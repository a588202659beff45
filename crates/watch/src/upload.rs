//! Making one sample on the service, safely repeatable: the sample is first created awaiting
//! data under its `external_sample_id` (the service keeps those unique), then its file goes
//! through the upload pipeline into it. Whatever happened before (a crash after the upload but
//! before the queue recorded it, a transfer cut short), looking the id up tells which step comes
//! next.

use std::path::Path;

use mgds_api::{ErrorCode, MetadataInput, Visibility};
use mgds_client::{Bandwidth, CancellationToken, Client, Filter};
use mgds_upload::{Progress, Source, Target, Upload, UploadError};
use serde_json::{Map, Value};

use crate::config::FolderConfig;
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
    match e {
        mgds_client::Error::Cancelled => Outcome::Stopped,
        e if e.is_transient() => Outcome::Transient(e.to_string()),
        e => Outcome::Permanent(e.to_string()),
    }
}

/// Everything one upload needs.
pub(crate) struct Ctx<'a> {
    pub client: &'a Client,
    pub staging: &'a Path,
    pub bandwidth: &'a Bandwidth,
    pub cancel: CancellationToken,
    pub progress: Box<dyn Fn(u64, u64) + Send + Sync>,
    /// The SHA-256 the queue recorded for a single-file sample's file.
    pub sha256: Option<String>,
}

/// Makes the sample `s` of folder `cfg`. Answers how it ended and, once known, the id of the
/// sample on the service (so the queue can record it even when the upload itself failed).
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
    // 2. The file, through the pipeline. Retries are the queue's (with its backoff), not the
    // pipeline's.
    if let Some(missing) = s.recipe.files().iter().find(|p| !p.is_file()) {
        return (Outcome::Permanent(format!("{} is gone", missing.display())), Some(id));
    }
    let progress = ctx.progress;
    let mut upload = Upload::new(client, s.recipe.clone());
    if let Some(h) = ctx.sha256 {
        upload = upload.sha256(h);
    }
    let sent = upload
        .target(Target::ExternalSampleId(s.external_id.clone()))
        .filename(format!("{}{}", s.name, s.recipe.extension()))
        .staging(ctx.staging)
        .bandwidth(ctx.bandwidth.clone())
        .cancel_token(ctx.cancel.clone())
        .attempts(1)
        .progress(move |p| {
            if let Progress::Sending { sent, total } = p {
                progress(sent, total);
            }
        })
        .send()
        .await;
    match sent {
        Ok(sample) => {
            let sid = sample.uri.rsplit('/').next().unwrap_or(&id).to_string();
            (Outcome::Confirmed(sid, false), Some(id))
        }
        // Someone (an earlier attempt of ours) gave the sample its file meanwhile.
        Err(e) if e.code() == Some(ErrorCode::NotAwaitingData) => match find(client, &s.external_id).await {
            Ok(Some((sid, false))) => (Outcome::Confirmed(sid, true), Some(id)),
            Ok(_) => (Outcome::Transient(e.to_string()), Some(id)),
            Err(e) => (classify(&e), Some(id)),
        },
        Err(UploadError::Cancelled) => (Outcome::Stopped, Some(id)),
        Err(e) if e.is_transient() => (Outcome::Transient(e.to_string()), Some(id)),
        Err(e) => (Outcome::Permanent(e.to_string()), Some(id)),
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
    if let Source::Single(p) = &s.recipe {
        custom.insert("source_file".into(), Value::String(p.to_string_lossy().into_owned()));
    }
    MetadataInput {
        name: Some(Some(s.name.clone())),
        external_sample_id: Some(Some(s.external_id.clone())),
        custom: Some(custom),
        ..MetadataInput::default()
    }
}
