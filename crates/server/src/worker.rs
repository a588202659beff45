//! The job runner: workers that claim pending analyses from the durable queue, run the engine
//! of the analysis's job, and store what it produced. Before analyses, they make the files of
//! samples whose uploads need work on their bytes (a pair to join, a file to copy in from an
//! upload's own bucket; see [`crate::store::imports`]), under the same kind of lease.
//!
//! A claim is one SQL statement: it takes the oldest waiting analysis of a job this runner can
//! run (or one whose previous claim has lapsed), sets a lease, and counts the claim. While the
//! engine works, the worker renews the lease; a worker that dies (a killed process, a power cut)
//! stops renewing, so another worker (or this service after a restart) claims the analysis again
//! once the lease expires. After [`MAX_CLAIMS`] claims ([`MAX_ATTEMPTS`] when engines run inside
//! the worker) the analysis fails with a message instead of being tried forever. How a run that
//! did not finish is handled depends on its [`Failure`]: a refusal (a file that is not sequence
//! data, a missing reference genome, a ceiling broken) fails the analysis at once, since trying
//! again would not change it; a fault that may pass (the engine process killed, the work folder
//! out of reach for a moment) puts it back in the queue for a later attempt, at most
//! [`MAX_ATTEMPTS`] in all.
//!
//! Workers run inside `mgds serve` (and the embedded service), and as separate `mgds worker`
//! processes against the same data folder. A worker only claims, supervises and stores: each
//! analysis runs in an engine process of its own ([`EngineHost::Process`], the same binary
//! started with [`ENGINE_ARG`]), under a memory ceiling and a time limit ([`Limits`]). An input
//! that breaks a ceiling (one enormous record, a decompression bomb) fails its analysis once,
//! with a message that says which ceiling, and takes nothing else down: the service keeps
//! answering and the other analyses run on. An engine process that is killed from outside is a
//! transient fault, tried again.

use serde_json::{Map, Value};

pub use crate::engine::{
    DEFAULT_MAX_RECORD, DEFAULT_TIME_LIMIT, ENGINE_ARG, EngineHost, Failure, Limits, engine_entry, memory_ceiling,
};
use crate::engine::{EngineJob, EngineTask, HostJob, JoinJob, join_memory_ceiling, run_in_process};
pub use crate::runner::{MAX_ATTEMPTS, MAX_CLAIMS, Runner, RunnerConfig, WORK_DIR, sweep_work_dir};
use crate::state::AppState;
pub use crate::warm::WarmConfig;

use crate::store::analyses::{Artifact, Produced, Stored, store_outcome};
use crate::store::imports::{self, Finished, Import};
use crate::store::upload_buckets::{self, Copied};
use crate::store::{db, queue};

pub use crate::store::queue::queue_default_classification;

/// Starts `n` workers (the service starts `config.workers`); they stop when the returned
/// handles are aborted or the runtime ends. On PostgreSQL, one more task listens for analyses
/// queued by other machines and wakes them at once.
pub fn spawn_workers(state: &AppState, n: usize) -> Vec<tokio::task::JoinHandle<()>> {
    let mut tasks: Vec<tokio::task::JoinHandle<()>> = (0..n)
        .map(|i| {
            let state = state.clone();
            let name = format!("{}-{i}", state.runner.instance);
            tokio::spawn(async move { work(state, name).await })
        })
        .collect();
    if n > 0 && state.runner.warm.enabled() {
        let runner = state.runner.clone();
        tasks.push(tokio::spawn(async move {
            loop {
                tokio::time::sleep(runner.warm.reap_every()).await;
                runner.warm.reap();
            }
        }));
    }
    if n > 0 {
        // Work queued by other machines wakes these workers at once (else they look at the
        // queue every `config.poll`).
        let store = state.store.clone();
        tasks.push(tokio::spawn(async move { db::relay_queued(&store.db, || store.wake_workers()).await }));
    }
    tasks
}

async fn work(state: AppState, name: String) {
    state.runner.references_changed();
    loop {
        let wake = state.queued.notified();
        // References installed by `mgds db` while the service runs become runnable here, and
        // with an S3 store, those published by other machines.
        let from_store = state.storage.s3_config().is_some() && state.runner.store_check_due();
        if (state.runner.references_changed() || from_store)
            && let Err(e) = state.reload_references(&state.runner.data_dir).await
        {
            tracing::warn!(error = %e, "could not register newly installed reference data");
        }
        // A sample waiting for its file (a pair to join, a file to copy in) goes first: its
        // classification waits for it.
        match imports::claim(&state.db, &name, state.runner.config.lease).await {
            Ok(Some((import, claims))) => {
                import_claimed(&state, &name, &import, claims).await;
                continue;
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "could not read the samples waiting for their files"),
        }
        match claim(&state, &name).await {
            Ok(Some((id, claims))) => {
                run_claimed(&state, &name, &id, claims).await;
                continue;
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "could not read the job queue"),
        }
        let _ = tokio::time::timeout(state.runner.config.poll, wake).await;
    }
}

/// Gives back the analyses this process's workers hold, without counting the attempt: for a
/// clean stop (Ctrl-C, the end of a command that ran the embedded service), so that another
/// worker takes them at once instead of after the lease.
pub async fn release(state: &AppState) -> Result<u64, sqlx::Error> {
    queue::release(&state.db, &state.runner.instance).await
}

/// Claims the oldest runnable analysis: waiting, or held by a lapsed lease. Returns its id and
/// how many times it has now been claimed.
pub async fn claim(state: &AppState, worker: &str) -> Result<Option<(String, i64)>, sqlx::Error> {
    let jobs = state.runner.references().job_ids();
    queue::claim(&state.db, &jobs, worker, state.runner.config.lease).await
}

async fn run_claimed(state: &AppState, worker: &str, id: &str, claims: i64) {
    let max_claims = match state.runner.config.engine {
        EngineHost::Process(_) => MAX_CLAIMS,
        EngineHost::InProcess => MAX_ATTEMPTS,
    };
    let started = std::time::Instant::now();
    let outcome = if claims > max_claims {
        tracing::warn!(analysis = %id, claims, "an analysis kept losing its worker; failing it");
        Err(Failure::Refused(format!(
            "the analysis stopped before finishing {max_claims} times (its worker was interrupted each time); \
             run it again, and if it fails again, report it with the sample"
        )))
    } else {
        tracing::info!(analysis = %id, claim = claims, "running analysis");
        let heartbeat = keep_lease(state, Held::Analysis, id, worker);
        let outcome = run(state, id).await;
        heartbeat.abort();
        match &outcome {
            Ok(_) => tracing::info!(analysis = %id, seconds = started.elapsed().as_secs_f64(), "analysis complete"),
            Err(e) => tracing::info!(analysis = %id, error = %e.message(), "analysis failed"),
        }
        outcome
    };
    let (result, workdir) = match outcome {
        Ok(RunOutput { results, artifact, dir, scored }) => {
            // A classification's Kraken-style report is stored with its results.
            let report = Some(dir.path().join(crate::store::analyses::KRAKEN_REPORT)).filter(|r| r.exists());
            (Ok(Produced { results, artifact, report, scored }), Some(dir))
        }
        // Tried again later, unless this was the last attempt.
        Err(Failure::Transient(why)) if queue::failures(&state.db, id).await.unwrap_or(0) + 1 < MAX_ATTEMPTS => {
            if let Err(e) = queue::requeue(&state.db, id, worker, state.runner.config.retry_after).await {
                tracing::warn!(analysis = %id, error = %e, "could not put an analysis back in the queue");
            }
            tracing::info!(analysis = %id, error = %why, "the analysis goes back to the queue");
            return;
        }
        Err(e) => (Err(e.message().to_string()), None),
    };
    let success = result.is_ok();
    match store_outcome(state, id, Some(worker), result).await {
        Ok(Stored::Complete(analysis_type)) => {
            state.metrics.analysis_finished(&analysis_type, success, started.elapsed())
        }
        Ok(Stored::Discarded) => tracing::info!(
            analysis = %id,
            "the outcome was not kept: the analysis was deleted, or another worker took it over after this one's lease lapsed"
        ),
        // The lease lapses and the analysis is tried again.
        Err(e) => tracing::error!(analysis = %id, error = %e, "could not store the results of an analysis"),
    }
    drop(workdir);
}

/// What a worker holds a lease on.
#[derive(Clone, Copy)]
enum Held {
    /// An analysis, by its id.
    Analysis,
    /// The work that makes a sample's file, by the sample's id.
    Import,
}

/// Renews, four times per lease, the lease `worker` holds on `id`, until the task is aborted.
fn keep_lease(state: &AppState, held: Held, id: &str, worker: &str) -> tokio::task::JoinHandle<()> {
    let (state, id, worker) = (state.clone(), id.to_string(), worker.to_string());
    tokio::spawn(async move {
        let lease = state.runner.config.lease;
        let mut every = tokio::time::interval(lease / 4);
        every.tick().await;
        loop {
            every.tick().await;
            let _ = match held {
                Held::Analysis => queue::renew(&state.db, &id, &worker, lease).await,
                Held::Import => imports::renew(&state.db, &id, &worker, lease).await,
            };
        }
    })
}

/// What a run leaves.
struct RunOutput {
    /// The results JSON.
    results: Value,
    /// An optional file.
    artifact: Option<Artifact>,
    /// The folder holding it.
    dir: tempfile::TempDir,
    /// For a controls analysis, the samples it scored.
    scored: Vec<String>,
}

async fn run(state: &AppState, id: &str) -> Result<RunOutput, Failure> {
    let row = queue::input(&state.db, id)
        .await
        .map_err(|e| Failure::Transient(format!("the service could not read the analysis: {e}")))?;
    let Some((job_id, job_args, object_key, filename)) = row else {
        return Err(Failure::Refused("the analysis or its sample was deleted".into()));
    };
    if state.runner.references().is_controls_job(&job_id) {
        return run_controls(state, id).await;
    }
    if state.runner.references().is_report_job(&job_id) {
        return run_report(state, id).await;
    }
    let reference = state.runner.references().for_job(&job_id).ok_or_else(|| {
        Failure::Refused(
            "this service no longer has the reference data of this job; run the job's newest version".into(),
        )
    })?;
    let key =
        object_key.ok_or_else(|| Failure::Refused("the sample has no file yet; upload its reads first".into()))?;
    let args: Map<String, Value> = job_args.and_then(|a| serde_json::from_str(&a).ok()).unwrap_or_default();
    let work_root = state.runner.data_dir.join(WORK_DIR);
    let unwritable = |e: std::io::Error| Failure::Transient(format!("the service cannot write its work folder: {e}"));
    std::fs::create_dir_all(&work_root).map_err(unwritable)?;
    let workdir = tempfile::tempdir_in(&work_root).map_err(unwritable)?;
    // The sample's file where the store keeps it on this machine; from an S3 store, a copy in
    // the work folder, removed with it.
    let reads = match state.storage.local_path(&key) {
        Some(path) => path,
        None => {
            let copy = workdir.path().join("reads");
            state
                .storage
                .download_to(&key, &copy)
                .await
                .map_err(|e| Failure::Transient(format!("the worker could not fetch the sample's file: {e}")))?;
            copy
        }
    };
    let config = &state.runner.config;
    let job = EngineJob {
        memory: memory_ceiling(&config.limits, &reference),
        reference: (*reference).clone(),
        reads,
        name: filename.unwrap_or_else(|| "the sample".into()),
        args,
        threads: config.threads,
        dir: workdir.path().to_path_buf(),
        max_record: config.limits.max_record,
    };
    let (results, artifact) = run_task(state, EngineTask::Analysis(job)).await?;
    Ok(RunOutput { results, artifact, dir: workdir, scored: Vec::new() })
}

/// Scores a control's batch ([`crate::controls`]): reads the batch's stored classifications and
/// scores them on a blocking thread of the worker (no sample's reads are read). The scores go
/// with the results; the table of scores is the analysis's file.
async fn run_controls(state: &AppState, id: &str) -> Result<RunOutput, Failure> {
    use crate::store::controls::{Unreadable, gather};
    let scoring = crate::controls::scoring()
        .ok_or_else(|| Failure::Refused("this service cannot score negative controls".into()))?;
    let input = gather(&state.store, id).await.map_err(|e| match e {
        Unreadable::Refused(why) => Failure::Refused(why),
        Unreadable::Transient(why) => Failure::Transient(why),
    })?;
    let score = scoring.score;
    let out = tokio::task::spawn_blocking(move || score(input))
        .await
        .map_err(|e| Failure::Transient(format!("the scoring stopped unexpectedly: {e}")))?
        .map_err(Failure::Refused)?;
    let (dir, table) = work_file(state, "contaminants.csv", &out.table_csv)?;
    Ok(RunOutput { results: out.results, artifact: Some(Artifact::File(table)), dir, scored: out.scored })
}

/// Makes a sample's report ([`crate::reports`]) from its stored results, typeset on a blocking
/// thread of the worker (no sample's reads are read): the PDF is the analysis's file.
async fn run_report(state: &AppState, id: &str) -> Result<RunOutput, Failure> {
    use crate::store::controls::Unreadable;
    let input = crate::store::reports::gather(&state.store, id).await.map_err(|e| match e {
        Unreadable::Refused(why) => Failure::Refused(why),
        Unreadable::Transient(why) => Failure::Transient(why),
    })?;
    let (results, pdf) = tokio::task::spawn_blocking(move || crate::reports::make(&input))
        .await
        .map_err(|e| Failure::Transient(format!("the report stopped unexpectedly: {e}")))?
        .map_err(Failure::Refused)?;
    let (dir, file) = work_file(state, "report.pdf", &pdf)?;
    Ok(RunOutput { results, artifact: Some(Artifact::File(file)), dir, scored: Vec::new() })
}

/// `bytes` written as `name` in a new folder of the work folder (removed with the returned
/// folder), for a run whose output is made in the worker.
fn work_file(state: &AppState, name: &str, bytes: &[u8]) -> Result<(tempfile::TempDir, std::path::PathBuf), Failure> {
    let work_root = state.runner.data_dir.join(WORK_DIR);
    let unwritable = |e: std::io::Error| Failure::Transient(format!("the service cannot write its work folder: {e}"));
    std::fs::create_dir_all(&work_root).map_err(unwritable)?;
    let dir = tempfile::tempdir_in(&work_root).map_err(unwritable)?;
    let file = dir.path().join(name);
    std::fs::write(&file, bytes).map_err(unwritable)?;
    Ok((dir, file))
}

/// Runs `task` where this runner's engines run: an engine process of its own, or a thread.
async fn run_task(state: &AppState, task: EngineTask) -> Result<(Value, Option<Artifact>), Failure> {
    let config = &state.runner.config;
    match &config.engine {
        // An analysis goes to a warm engine of its reference: the database stays mapped from one
        // analysis to the next.
        EngineHost::Process(program) if state.runner.warm.enabled() && matches!(task, EngineTask::Analysis(_)) => {
            let EngineTask::Analysis(job) = &task else { unreachable!("an analysis") };
            let key = format!("{} {} {}", job.reference.job_id, job.reference.dir.display(), job.memory);
            state.runner.warm.run(program, key, &task, config.limits.time).await
        }
        EngineHost::Process(program) => run_in_process(program, &task, config.limits.time).await,
        EngineHost::InProcess => {
            let runner = state.runner.clone();
            tokio::task::spawn_blocking(move || task.run(&runner.loaded))
                .await
                .map_err(|e| Failure::Transient(format!("the engine stopped unexpectedly: {e}")))?
        }
    }
}

/// Makes a claimed sample's file ([`make_file`]) and gives the sample the file; work that
/// cannot be done keeps the reason, a fault that may pass puts the work back.
async fn import_claimed(state: &AppState, worker: &str, import: &Import, claims: i64) {
    let id = import.sample_id.as_str();
    let outcome = if claims > MAX_CLAIMS {
        let again = if import.host_of.is_some() { "ask for the copy again" } else { "upload it again" };
        Err(Failure::Refused(format!(
            "making the sample's file stopped before finishing {MAX_CLAIMS} times (its worker was interrupted \
             each time); {again}"
        )))
    } else {
        let heartbeat = keep_lease(state, Held::Import, id, worker);
        let outcome = make_file(state, worker, import).await;
        heartbeat.abort();
        outcome
    };
    let failed = match outcome {
        Ok(Finished::Done(queued)) => {
            tracing::info!(sample = %id, "made a sample's file");
            if queued {
                state.wake_workers();
            }
            return;
        }
        Ok(Finished::Discarded) => {
            tracing::info!(sample = %id, "a sample's file was not kept: the sample was deleted, or another worker took the work over");
            return;
        }
        Err(Failure::Transient(why)) if imports::failures(&state.db, id).await.unwrap_or(0) + 1 < MAX_ATTEMPTS => {
            if let Err(e) = imports::requeue(&state.db, id, worker, state.runner.config.retry_after).await {
                tracing::warn!(sample = %id, error = %e, "could not put the work on a sample's file back");
            }
            tracing::info!(sample = %id, error = %why, "the work on a sample's file goes back to the queue");
            return;
        }
        Err(e) => e,
    };
    tracing::info!(sample = %id, error = %failed.message(), "a sample's file could not be made");
    if let Err(e) = imports::fail(&state.db, id, worker, failed.message()).await {
        tracing::error!(sample = %id, error = %e, "could not record why a sample's file could not be made");
    }
}

/// Makes `import`'s sample file: copies its files in from the upload's own bucket (exactly the
/// versions checked at the callback), then, for a pair, joins the two in an engine process and
/// stores the joined file; gives the sample its file.
async fn make_file(state: &AppState, worker: &str, import: &Import) -> Result<Finished, Failure> {
    if import.host_of.is_some() {
        return remove_host(state, worker, import).await;
    }
    if let Some(bucket) = &import.bucket {
        let files = [(&import.r1_key, &import.r1_name, &import.r1_etag)]
            .into_iter()
            .chain(import.r2_key.as_ref().zip(import.r2_name.as_ref()).map(|(k, n)| (k, n, &import.r2_etag)));
        for (key, name, e_tag) in files {
            let copied = upload_buckets::copy_in(state, bucket, key, e_tag.as_deref())
                .await
                .map_err(|e| Failure::Transient(format!("the store could not copy {name} in: {e}")))?;
            if copied == Copied::Changed {
                return Err(Failure::Refused(format!(
                    "{name} changed after the upload was confirmed (a write was still under way); upload it again"
                )));
            }
        }
    }
    let (Some(r2_key), Some(r2_name)) = (&import.r2_key, &import.r2_name) else {
        let size = state
            .storage
            .size(&import.object_key)
            .await
            .map_err(|e| Failure::Transient(format!("the sample's file could not be read: {e}")))?
            .ok_or_else(|| Failure::Refused(format!("{} is not in the store", import.r1_name)))?;
        return settle(state, worker, import, size, &Map::new()).await;
    };
    let work_root = state.runner.data_dir.join(WORK_DIR);
    let unwritable = |e: std::io::Error| Failure::Transient(format!("the service cannot write its work folder: {e}"));
    std::fs::create_dir_all(&work_root).map_err(unwritable)?;
    let workdir = tempfile::tempdir_in(&work_root).map_err(unwritable)?;
    let mut files = Vec::with_capacity(2);
    for (key, name, copy) in [(&import.r1_key, &import.r1_name, "r1"), (r2_key, r2_name, "r2")] {
        let path = match state.storage.local_path(key) {
            Some(p) => p,
            None => {
                let dest = workdir.path().join(copy);
                state
                    .storage
                    .download_to(key, &dest)
                    .await
                    .map_err(|e| Failure::Transient(format!("the worker could not fetch {name}: {e}")))?;
                dest
            }
        };
        files.push((path, name.clone()));
    }
    let r2 = files.pop().ok_or_else(|| Failure::Transient("the pair has no read 2".into()))?;
    let r1 = files.pop().ok_or_else(|| Failure::Transient("the pair has no read 1".into()))?;
    let limits = &state.runner.config.limits;
    let out = workdir.path().join("joined.fastq.gz");
    let task = EngineTask::Join(JoinJob {
        r1,
        r2,
        out: out.clone(),
        max_record: limits.max_record,
        memory: join_memory_ceiling(limits),
    });
    run_task(state, task).await?;
    let written = state
        .storage
        .put_file(&import.object_key, &out)
        .await
        .map_err(|e| Failure::Transient(format!("the joined file could not be stored: {e}")))?;
    settle(state, worker, import, written.bytes, &Map::new()).await
}

/// Makes the file of a copy of a sample without its host's reads: fetches the source sample's
/// file and its classification's read-level results, writes the copy in an engine process
/// (with the memory ceiling of a join), stores it, and gives the copy its file, with what was
/// removed in its custom metadata (`host_removed_from`, `host_removed_classification`,
/// `host_reads_removed`, `host_reads_removed_percent`).
async fn remove_host(state: &AppState, worker: &str, import: &Import) -> Result<Finished, Failure> {
    let (Some(classification), Some(tax_ids), Some(readlevel_key)) =
        (&import.host_of, &import.host_tax_ids, &import.host_readlevel_key)
    else {
        return Err(Failure::Refused("the request named no classification to remove the host's reads by".into()));
    };
    let tax_ids: Vec<mgds_formats::TaxId> = serde_json::from_str(tax_ids)
        .map_err(|e| Failure::Refused(format!("the host's taxa kept with the request are unreadable: {e}")))?;
    let work_root = state.runner.data_dir.join(WORK_DIR);
    let unwritable = |e: std::io::Error| Failure::Transient(format!("the service cannot write its work folder: {e}"));
    std::fs::create_dir_all(&work_root).map_err(unwritable)?;
    let workdir = tempfile::tempdir_in(&work_root).map_err(unwritable)?;
    let gone = [
        format!("the sample {} was deleted before its host reads were removed", import.r1_name),
        format!("classification {classification} was deleted before the host reads it found were removed"),
    ];
    let mut local = Vec::with_capacity(2);
    for ((key, copy), gone) in [(&import.r1_key, "reads"), (readlevel_key, "readlevel.tsv.gz")].into_iter().zip(gone) {
        let fetch_failed =
            |e: &dyn std::fmt::Display| Failure::Transient(format!("the worker could not fetch {key}: {e}"));
        if state.storage.size(key).await.map_err(|e| fetch_failed(&e))?.is_none() {
            return Err(Failure::Refused(gone));
        }
        let path = match state.storage.local_path(key) {
            Some(p) => p,
            None => {
                let dest = workdir.path().join(copy);
                state.storage.download_to(key, &dest).await.map_err(|e| fetch_failed(&e))?;
                dest
            }
        };
        local.push(path);
    }
    let (reads, readlevel) = (local.swap_remove(0), local.swap_remove(0));
    let task = EngineTask::RemoveHost(HostJob {
        reads: (reads, import.r1_name.clone()),
        readlevel,
        tax_ids,
        out: workdir.path().join("out"),
        memory: join_memory_ceiling(&state.runner.config.limits),
    });
    let (results, artifact) = run_task(state, task).await?;
    let Some(Artifact::File(out)) = artifact else {
        return Err(Failure::Transient("removing the host's reads wrote no file".into()));
    };
    let written = state
        .storage
        .put_file(&import.object_key, &out)
        .await
        .map_err(|e| Failure::Transient(format!("the copy without the host's reads could not be stored: {e}")))?;
    let count = |k: &str| results.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (reads, removed) = (count("reads"), count("removed"));
    let percent = if reads == 0 { 0.0 } else { (removed as f64 * 10_000.0 / reads as f64).round() / 100.0 };
    let mut custom = Map::new();
    custom.insert("host_removed_from".into(), Value::from(import.upload_id.as_str()));
    custom.insert("host_removed_classification".into(), Value::from(classification.as_str()));
    custom.insert("host_reads_removed".into(), Value::from(removed));
    custom.insert("host_reads_removed_percent".into(), Value::from(percent));
    settle(state, worker, import, written.bytes, &custom).await
}

/// Gives `import`'s sample its file of `size` bytes (removed again if the sample went
/// meanwhile), and the upload's own bucket, whose files are in, goes.
async fn settle(
    state: &AppState,
    worker: &str,
    import: &Import,
    size: u64,
    custom: &Map<String, Value>,
) -> Result<Finished, Failure> {
    let finished = imports::finish(&state.db, import, worker, size, custom)
        .await
        .map_err(|e| Failure::Transient(format!("the sample could not be given its file: {e}")))?;
    if finished == Finished::Discarded {
        let _ = state.storage.delete(&import.object_key).await;
    }
    if import.bucket.is_some()
        && let Err(e) = upload_buckets::sweep_one(state, &import.upload_id).await
    {
        tracing::warn!(error = %e, "could not remove an upload's bucket; the next sweep will");
    }
    Ok(finished)
}
