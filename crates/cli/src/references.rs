//! `mgds db`: reference data of a local service (build, install the demo, list), and
//! `mgds worker`: a job worker as its own process.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use mgds_server::references::{self, ReferenceKind};
use mgds_server::{AppState, Config};

/// `mgds db ...`.
#[derive(clap::Subcommand, Debug)]
pub enum DbCommand {
    /// Install the demo references (classification database, panel, genomes, gene catalogue)
    /// that are not installed yet.
    Install {
        /// The demo references shipped with mgds (the only source this command installs from;
        /// build your own database with `mgds db build`).
        #[arg(long, required = true)]
        demo: bool,
    },
    /// Build a classification database from reference genomes and an NCBI taxonomy, and
    /// install it. A new database is a new job; analyses of older ones keep theirs.
    Build {
        /// Folder name of the database in the data folder (letters, digits, '-', '_').
        #[arg(long)]
        name: String,
        /// Display name (default: the folder name).
        #[arg(long)]
        title: Option<String>,
        /// Reference FASTA files (gzipped or not).
        #[arg(long = "fasta", required = true, num_args = 1..)]
        fasta: Vec<PathBuf>,
        /// TSV mapping each FASTA record id to its NCBI tax id (`seq_id<TAB>tax_id`).
        #[arg(long)]
        seqid2taxid: PathBuf,
        /// Folder holding the NCBI taxonomy dump (`nodes.dmp`, `names.dmp`).
        #[arg(long)]
        taxonomy: PathBuf,
        /// Make it the classification that runs by itself on every new sample.
        #[arg(long)]
        default: bool,
    },
    /// List the installed references.
    List,
}

/// Options of `mgds worker`.
#[derive(clap::Args, Debug)]
pub struct WorkerArgs {
    /// Analyses to run at once.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Threads per analysis (default: every core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Seconds a claim on an analysis holds without renewal; after that (a worker that died),
    /// another worker runs it again.
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    pub job_lease: u64,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// What one analysis may take (`mgds serve` and `mgds worker`).
#[derive(clap::Args, Debug, Clone)]
pub struct LimitArgs {
    /// Longest read or record an analysis reads, in bases; a longer one fails the analysis with
    /// a message naming it.
    #[arg(long, value_name = "BASES", default_value_t = mgds_server::worker::DEFAULT_MAX_RECORD, env = "MGDS_MAX_RECORD_LENGTH")]
    pub max_record_length: usize,
    /// Memory ceiling of one analysis's engine process, in MB (heap and other private memory;
    /// the memory-mapped reference is not counted). Default: 1 GiB above twice the reference's
    /// size on disk, at least 2 GiB.
    #[arg(long, value_name = "MB", env = "MGDS_ENGINE_MEMORY")]
    pub engine_memory: Option<u64>,
    /// Longest one analysis may run, in seconds; then it is stopped and fails.
    #[arg(long, value_name = "SECS", default_value_t = mgds_server::worker::DEFAULT_TIME_LIMIT.as_secs(), env = "MGDS_ENGINE_TIME_LIMIT")]
    pub engine_time_limit: u64,
}

impl LimitArgs {
    /// The limits as the runner takes them.
    pub fn limits(&self) -> mgds_server::worker::Limits {
        mgds_server::worker::Limits {
            max_record: self.max_record_length.max(1),
            memory: self.engine_memory.map(|mb| mb.max(64) * 1_000_000),
            time: std::time::Duration::from_secs(self.engine_time_limit.max(1)),
        }
    }
}

async fn open(dir: &Path, config: Config) -> Result<AppState> {
    AppState::open(&config).await.with_context(|| format!("cannot open the MGDS data folder {}", dir.display()))
}

fn kind_name(k: ReferenceKind) -> &'static str {
    match k {
        ReferenceKind::Classification => "classification",
        ReferenceKind::Panel => "panel",
        ReferenceKind::Genomes => "genomes (alignment)",
        ReferenceKind::GeneCatalogue => "gene catalogue (functional profile)",
    }
}

/// Runs `mgds db ...` on the data folder `dir`.
pub async fn run_db(dir: PathBuf, cmd: DbCommand) -> Result<()> {
    match cmd {
        DbCommand::Install { .. } => {
            eprintln!("building the demo references in {}...", dir.display());
            let d = dir.clone();
            let done = tokio::task::spawn_blocking(move || references::install_demo(&d)).await??;
            if done.is_empty() {
                eprintln!("the demo references are installed already");
            }
            for m in &done {
                eprintln!("installed {} ({})", m.name, kind_name(m.kind));
            }
        }
        DbCommand::Build { name, title, fasta, seqid2taxid, taxonomy, default } => {
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
                bail!("--name {name:?}: use letters, digits, '-' and '_' only (it becomes a folder name)");
            }
            let input = references::BuildInput {
                references: fasta,
                seqid2taxid,
                nodes: taxonomy.join("nodes.dmp"),
                names: taxonomy.join("names.dmp"),
            };
            let (d, n, t) = (dir.clone(), name.clone(), title.unwrap_or_else(|| name.clone()));
            eprintln!("building {n} in {}...", dir.display());
            let started = std::time::Instant::now();
            let m =
                tokio::task::spawn_blocking(move || references::install_classification(&d, &n, &t, &input, default))
                    .await??;
            eprintln!("installed {} in {:.1} s; digest {}", m.name, started.elapsed().as_secs_f64(), m.digest);
        }
        DbCommand::List => {
            let installed = references::list_installed(&dir);
            if installed.is_empty() {
                eprintln!("no references installed in {}; `mgds db install --demo` adds the demo ones", dir.display());
            }
            for (folder, m) in installed {
                match m {
                    Ok(m) => println!(
                        "{folder}\t{}\t{}\t{}{}",
                        kind_name(m.kind),
                        m.name,
                        &m.digest[..m.digest.len().min(12)],
                        if m.default { "\tdefault" } else { "" }
                    ),
                    Err(e) => println!("{folder}\tunusable: {e}"),
                }
            }
            return Ok(());
        }
    }
    // A running service picks the new jobs up at its next start; registering them now makes
    // them visible to `mgds jobs list` at once.
    let state = open(&dir, Config::new(&dir)).await?;
    state.db.close().await;
    Ok(())
}

/// `mgds worker`: runs analyses from the queue of the data folder `dir` until Ctrl-C/SIGTERM.
pub async fn run_worker(dir: PathBuf, args: WorkerArgs) -> Result<()> {
    if args.workers == 0 {
        bail!("--workers must be at least 1");
    }
    let mut config = Config::new(&dir);
    config.runner.workers = args.workers;
    config.runner.limits = args.limits.limits();
    config.runner.lease = std::time::Duration::from_secs(args.job_lease.max(1));
    if let Some(t) = args.threads {
        config.runner.threads = t.max(1);
    }
    let state = open(&dir, config).await?;
    if state.runner.references().is_empty() {
        eprintln!("hint: no reference data is installed in {}; `mgds db install --demo` adds the demo", dir.display());
    }
    let workers = mgds_server::worker::spawn_workers(&state, args.workers);
    eprintln!("worker: running analyses from {} ({} at once); Ctrl-C stops", dir.display(), workers.len());
    crate::shutdown_signal().await;
    for w in workers {
        w.abort();
    }
    let n = mgds_server::worker::release(&state).await?;
    if n > 0 {
        eprintln!("gave {n} unfinished analyses back to the queue");
    }
    state.db.close().await;
    Ok(())
}
