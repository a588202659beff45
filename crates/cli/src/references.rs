//! `mgds db`: reference data of a local service (build, install the demo, list), and
//! `mgds worker`: a job worker as its own process.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use mgds_server::Config;
use mgds_server::references::{self, ReferenceKind};

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
    ///
    /// Each sequence's taxon comes from `--seqid2taxid`, or from a `kraken:taxid|N|` header (as
    /// in Kraken 2's `library.fna`), or from the assembly its file is named after (`GCF_...`,
    /// `GCA_...`, with `--assembly-summary`).
    ///
    /// Genome-copy abundance divides reads by genome length, so the build works out which
    /// sequences make one genome (a chromosome and its plasmids), in this order:
    ///   1. the map's optional third column names each sequence's genome outright;
    ///   2. a FASTA file named after an NCBI assembly (GCF_..., GCA_...) is one genome;
    ///   3. within one file and one taxon, the contigs of one WGS project are one genome;
    ///   4. within one file and one taxon, records whose descriptions name the same organism
    ///      and strain (chromosome I and II, its plasmids) are one genome;
    ///   5. otherwise all records of one taxon in one file are one genome.
    ///
    /// Where several genomes share a taxon (strains mapped to their species), their mean length
    /// is used. The genomes found are printed per species with their mean length (and kept
    /// for `mgds db list --json`): check them before classifying.
    #[command(verbatim_doc_comment)]
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
        /// Sequence-to-taxon map: TSV `seq_id<TAB>tax_id[<TAB>genome]` (the third column, if
        /// there, names the genome each sequence belongs to, e.g. an assembly accession), or an
        /// NCBI `*.accession2taxid` file. Not needed when the headers carry `kraken:taxid|N|`
        /// or the files are assemblies listed in `--assembly-summary`.
        #[arg(long, value_name = "FILE")]
        seqid2taxid: Option<PathBuf>,
        /// Folder holding the NCBI taxonomy dump (`nodes.dmp`, `names.dmp`, and `merged.dmp`
        /// if there).
        #[arg(long, value_name = "DIR")]
        taxonomy: PathBuf,
        /// NCBI `assembly_summary.txt`: the taxon and assembly of files named by their
        /// assembly accession.
        #[arg(long, value_name = "FILE")]
        assembly_summary: Option<PathBuf>,
        /// Read length of the k-mer distribution stored for re-estimated abundance (others
        /// are computed when first needed).
        #[arg(long, value_name = "BASES", default_value_t = mgds_server::references::DEFAULT_READ_LENGTH)]
        read_length: u32,
        /// Make it the classification that runs by itself on every new sample.
        #[arg(long)]
        default: bool,
    },
    /// Register a Kraken 2 database folder (`hash.k2d`, `opts.k2d`, `taxo.k2d`) as a
    /// classification database, read where it is (nothing is copied; keep the folder in
    /// place). Classification gives Kraken 2's call for every read.
    ///
    /// When the folder still holds the references it was built from (`library/` and
    /// `seqid2taxid.map`; `kraken2-build --clean` removes them), they are read once to find
    /// the genomes (for genome-copy abundance) and the k-mer distribution (for re-estimated
    /// abundance); Bracken's `database<N>mers.kmer_distrib` files in the folder are used as
    /// they are. What is computed is kept in the MGDS data folder, not in the Kraken 2 folder.
    #[command(name = "import-kraken2", verbatim_doc_comment)]
    ImportKraken2 {
        /// The Kraken 2 database folder.
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Folder name of the database in the data folder (letters, digits, '-', '_').
        #[arg(long)]
        name: String,
        /// Display name (default: the folder name).
        #[arg(long)]
        title: Option<String>,
        /// The reference FASTA files the database was built from, when they are not in the
        /// folder's `library/`.
        #[arg(long = "library", value_name = "FASTA", num_args = 1..)]
        library: Vec<PathBuf>,
        /// The sequence-to-taxon map of those references (default: the folder's
        /// `seqid2taxid.map`).
        #[arg(long, value_name = "FILE")]
        seqid2taxid: Option<PathBuf>,
        /// Read length of the k-mer distribution computed now (others are computed when
        /// first needed).
        #[arg(long, value_name = "BASES", default_value_t = mgds_server::references::DEFAULT_READ_LENGTH)]
        read_length: u32,
        /// Do not read the references now: results then carry read counts only (and
        /// re-estimated abundance if Bracken's files are in the folder).
        #[arg(long)]
        skip_references: bool,
        /// Make it the classification that runs by itself on every new sample.
        #[arg(long)]
        default: bool,
    },
    /// Name the host of an installed classification database: reads it classifies as one of
    /// these taxa (or below them) are left out of tables and charts unless asked for, and
    /// `mgds samples remove-host` removes them. Without taxa, shows the host named now. By
    /// default a database's host is human (9606) where its taxonomy has it. Analyses made from
    /// now on carry the change (the install's database keeps it: running services and workers
    /// pick it up, those on other machines with an S3 store within a minute); classify a sample
    /// again to apply it to that sample.
    Host {
        /// The database's folder name (`mgds db list`).
        name: String,
        /// Tax ids of the host, e.g. 9606 (human), 10090 (mouse), 9823 (pig).
        #[arg(value_name = "TAXID")]
        tax_ids: Vec<String>,
        /// The database has no host.
        #[arg(long, conflicts_with_all = ["tax_ids", "default_host"])]
        none: bool,
        /// Back to the default rule: human where the database has it.
        #[arg(long = "default", conflicts_with = "tax_ids")]
        default_host: bool,
    },
    /// List the installed references.
    List {
        /// One JSON array: every reference with its manifest (for classification databases,
        /// the genomes per species and their mean length).
        #[arg(long)]
        json: bool,
    },
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
    /// Also answer `GET /metrics` (Prometheus: the analyses this worker ran and how long they
    /// took, the queue) and `GET /api/v1/health` at this address, plain HTTP with no sign-in:
    /// keep it to the network the monitoring system scrapes from.
    #[arg(long, value_name = "ADDR", env = "MGDS_WORKER_METRICS_LISTEN")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// What one analysis may take, and the engine processes kept warm (`mgds serve` and `mgds
/// worker`).
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
    /// Engine processes kept warm between analyses, each with its reference database mapped,
    /// so that the next analysis of that reference starts at once (0: a new engine process for
    /// every analysis). A warm engine still runs one analysis at a time under the ceilings
    /// above; a crash fails only its own analysis.
    #[arg(long, value_name = "N", default_value_t = mgds_server::worker::WarmConfig::default().max, env = "MGDS_WARM_ENGINES")]
    pub warm_engines: usize,
    /// Seconds a warm engine waits for work before it ends.
    #[arg(long, value_name = "SECS", default_value_t = mgds_server::worker::WarmConfig::default().idle.as_secs(), env = "MGDS_ENGINE_IDLE")]
    pub engine_idle: u64,
}

impl LimitArgs {
    /// The warm engines as the runner takes them.
    pub fn warm(&self) -> mgds_server::worker::WarmConfig {
        mgds_server::worker::WarmConfig {
            max: self.warm_engines,
            idle: std::time::Duration::from_secs(self.engine_idle.max(1)),
        }
    }

    /// The limits as the runner takes them.
    pub fn limits(&self) -> mgds_server::worker::Limits {
        mgds_server::worker::Limits {
            max_record: self.max_record_length.max(1),
            memory: self.engine_memory.map(|mb| mb.max(64) * 1_000_000),
            time: std::time::Duration::from_secs(self.engine_time_limit.max(1)),
        }
    }
}

fn kind_name(k: ReferenceKind) -> &'static str {
    match k {
        ReferenceKind::Classification => "classification",
        ReferenceKind::Panel => "panel",
        ReferenceKind::Genomes => "genomes (alignment)",
        ReferenceKind::GeneCatalogue => "gene catalogue (functional profile)",
    }
}

fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
        bail!("--name {name:?}: use letters, digits, '-' and '_' only (it becomes a folder name)");
    }
    Ok(())
}

/// A bar for the stages of a build, on a terminal only.
fn stage_bar() -> indicatif::ProgressBar {
    let target = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        indicatif::ProgressDrawTarget::stderr()
    } else {
        indicatif::ProgressDrawTarget::hidden()
    };
    let style = indicatif::ProgressStyle::with_template("{msg:32} {bar:30} {bytes:>10}/{total_bytes:10} {eta:>4}")
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    indicatif::ProgressBar::with_draw_target(Some(0), target).with_style(style)
}

fn show_stage(bar: &indicatif::ProgressBar, p: &references::BuildProgress) {
    let what = match p.stage {
        references::BuildStage::Taxonomy => "reading the taxonomy and map",
        references::BuildStage::Counting => "reading the references (1/3)",
        references::BuildStage::Inserting => "filling the k-mer table (2/3)",
        references::BuildStage::Writing => "writing the database",
        references::BuildStage::Profiling => "k-mer distribution (3/3)",
        _ => "building",
    };
    bar.set_message(what);
    bar.set_length(p.total);
    bar.set_position(p.done);
}

/// The genomes found per species, on stdout: what genome-copy abundance divides by.
fn print_genomes(genomes: Option<&[references::SpeciesGenomes]>) {
    let Some(genomes) = genomes.filter(|g| !g.is_empty()) else {
        println!("genomes: none known, so results carry no genome-copy abundance");
        return;
    };
    let mut rows: Vec<&references::SpeciesGenomes> = genomes.iter().collect();
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::NOTHING).set_header([
        "species",
        "tax_id",
        "rank",
        "genomes",
        "sequences",
        "mean_length_bp",
    ]);
    for g in rows {
        table.add_row([
            g.name.clone(),
            g.tax_id.to_string(),
            g.rank.clone(),
            g.genomes.to_string(),
            g.sequences.to_string(),
            g.mean_length.to_string(),
        ]);
    }
    println!("genomes found ({} species; genome-copy abundance divides reads by the mean length):", genomes.len());
    println!("{table}");
    let above: Vec<&str> = genomes.iter().filter(|g| g.rank != "species").map(|g| g.name.as_str()).collect();
    if !above.is_empty() {
        println!("note: mapped above species, so not counted as species genomes: {}", above.join(", "));
    }
}

/// Runs `mgds db ...` on the data folder of `config`.
pub async fn run_db(config: Config, cmd: DbCommand) -> Result<()> {
    let dir = config.data_dir.clone();
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
        DbCommand::Build { name, title, fasta, seqid2taxid, taxonomy, assembly_summary, read_length, default } => {
            check_name(&name)?;
            let input = references::BuildInput {
                references: fasta,
                seqid2taxid: seqid2taxid.unwrap_or_default(),
                nodes: taxonomy.join("nodes.dmp"),
                names: taxonomy.join("names.dmp"),
            };
            let mut options = references::BuildOptions::default().read_length(Some(read_length));
            if let Some(a) = assembly_summary {
                options = options.assembly_summary(a);
            }
            let (d, n, t) = (dir.clone(), name.clone(), title.unwrap_or_else(|| name.clone()));
            eprintln!("building {n} in {}", dir.display());
            let bar = stage_bar();
            let b = bar.clone();
            let (m, report) = tokio::task::spawn_blocking(move || {
                references::install_classification(&d, &n, &t, &input, &options, default, &mut |p| show_stage(&b, p))
            })
            .await??;
            bar.finish_and_clear();
            eprintln!(
                "installed {} in {:.1} s: {} sequences, {:.1} Mbp, {} taxa; {:.1} MB on disk; digest {}",
                m.name,
                report.seconds,
                report.sequences,
                report.bases as f64 / 1e6,
                report.taxa,
                (report.bytes + report.companion_bytes) as f64 / 1e6,
                &m.digest[..12]
            );
            print_genomes(Some(&report.genomes));
        }
        DbCommand::ImportKraken2 {
            dir: source,
            name,
            title,
            library,
            seqid2taxid,
            read_length,
            skip_references,
            default,
        } => {
            check_name(&name)?;
            let prepare = (!skip_references).then(|| {
                let mut p = references::PrepareOptions::with_read_length(read_length);
                if !library.is_empty() {
                    p.library = Some(library);
                }
                p.seqid2taxid = seqid2taxid;
                p
            });
            let (d, n, t, src) = (dir.clone(), name.clone(), title.unwrap_or_else(|| name.clone()), source.clone());
            eprintln!("registering the Kraken 2 database {} as {n}", source.display());
            let bar = stage_bar();
            let b = bar.clone();
            let import = tokio::task::spawn_blocking(move || {
                references::import_kraken2(&d, &n, &t, &src, prepare.as_ref(), default, &mut |p| show_stage(&b, p))
            })
            .await??;
            bar.finish_and_clear();
            let o = &import.options;
            eprintln!(
                "installed {}: Kraken 2 database read in place from {} (k = {}, l = {}, {:.1} MB table, {}); digest {}",
                import.manifest.name,
                import.manifest.file,
                o.k,
                o.l,
                import.table_bytes as f64 / 1e6,
                if o.dna { "nucleotide" } else { "protein" },
                &import.manifest.digest[..12]
            );
            match &import.prepared {
                Some(p) => eprintln!(
                    "read its references in {:.1} s: {} sequences ({} without a taxon, left out as kraken2-build does), {:.1} Mbp",
                    p.seconds,
                    p.sequences,
                    p.unmapped,
                    p.bases as f64 / 1e6
                ),
                None if skip_references => eprintln!(
                    "its references were not read (--skip-references): results carry read counts, and no genome-copy abundance"
                ),
                None => eprintln!(
                    "the folder has no library/ (removed by kraken2-build --clean?): results carry read counts and no \
                     genome-copy abundance; pass the reference FASTA files with --library (and --seqid2taxid) to add it"
                ),
            }
            if !import.bracken.is_empty() {
                let lens: Vec<String> = import.bracken.iter().map(u32::to_string).collect();
                eprintln!("using Bracken's k-mer distributions for reads of {} bases", lens.join(", "));
            } else if import.prepared.is_none() {
                eprintln!("no k-mer distribution: results carry no re-estimated abundance");
            }
            print_genomes(import.manifest.genomes.as_deref());
        }
        DbCommand::Host { name, tax_ids, none, default_host } => {
            check_name(&name)?;
            for t in &tax_ids {
                if mgds_formats::parse_tax_id(t).is_none() {
                    bail!("{t:?} is not a tax id: give NCBI taxonomy ids such as 9606 (human)");
                }
            }
            let mut manifest = references::read_manifest(&dir.join(references::DATABASES_DIR).join(&name))
                .with_context(|| format!("reading the database {name}"))?;
            if manifest.kind != ReferenceKind::Classification {
                bail!("{name} is a {} reference; only classification databases name a host", kind_name(manifest.kind));
            }
            // The install's database keeps the host too, so that workers on other machines
            // (which read the manifest they fetched) classify with the same host.
            let state = crate::open_with(config).await?;
            if none || default_host || !tax_ids.is_empty() {
                let set = if default_host { None } else { Some(tax_ids) };
                mgds_server::store::settings::set_host_taxa(&state.db, &manifest.digest, set.as_deref())
                    .await
                    .with_context(|| format!("naming the host of {name} in the service's database"))?;
                manifest = references::set_host_taxa(&dir, &name, set)
                    .with_context(|| format!("naming the host of {name}"))?;
            } else if let Some(host) = mgds_server::store::settings::host_taxa(&state.db, &manifest.digest).await? {
                manifest.host_tax_ids = host;
            }
            match &manifest.host_tax_ids {
                None => println!(
                    "{name}: host is human ({}) where the database has it (the default)",
                    references::DEFAULT_HOST_TAX_ID
                ),
                Some(t) if t.is_empty() => println!("{name}: no host"),
                Some(t) => println!("{name}: host tax ids {}", t.join(", ")),
            }
            state.db.close().await;
            return Ok(());
        }
        DbCommand::List { json } => {
            let installed = references::list_installed(&dir);
            if json {
                let items: Vec<serde_json::Value> = installed
                    .into_iter()
                    .map(|(folder, m)| match m {
                        Ok(m) => {
                            let mut v = serde_json::to_value(&m).unwrap_or_default();
                            v["folder"] = folder.into();
                            v["format"] = serde_json::to_value(m.format).unwrap_or_default();
                            v
                        }
                        Err(e) => serde_json::json!({"folder": folder, "error": e.to_string()}),
                    })
                    .collect();
                println!("{}", serde_json::to_string_pretty(&items)?);
                return Ok(());
            }
            if installed.is_empty() {
                eprintln!("no references installed in {}; `mgds db install --demo` adds the demo ones", dir.display());
            }
            for (folder, m) in installed {
                match m {
                    Ok(m) => {
                        let kind = match (m.kind, m.format) {
                            (ReferenceKind::Classification, references::DatabaseFormat::Kraken2) => {
                                format!("classification (Kraken 2 folder {}, read in place)", m.file)
                            }
                            (k, _) => kind_name(k).to_string(),
                        };
                        let genomes = match (&m.genomes, m.kind) {
                            (Some(g), _) => {
                                format!("\t{} genomes of {} species", g.iter().map(|s| s.genomes).sum::<u32>(), g.len())
                            }
                            (None, ReferenceKind::Classification) => "\tgenomes unknown".to_string(),
                            (None, _) => String::new(),
                        };
                        println!(
                            "{folder}\t{kind}\t{}\t{}{genomes}{}",
                            m.name,
                            &m.digest[..m.digest.len().min(12)],
                            if m.default { "\tdefault" } else { "" }
                        )
                    }
                    Err(e) => println!("{folder}\tunusable: {e}"),
                }
            }
            return Ok(());
        }
    }
    // A running service picks the new jobs up at its next start; registering them now makes
    // them visible to `mgds jobs list` at once.
    let state = crate::open_with(config).await?;
    state.db.close().await;
    Ok(())
}

/// `mgds worker`: runs analyses from the job queue of the service `config` opens until
/// Ctrl-C/SIGTERM.
pub async fn run_worker(mut config: Config, args: WorkerArgs) -> Result<()> {
    let dir = config.data_dir.clone();
    if args.workers == 0 {
        bail!("--workers must be at least 1");
    }
    config.runner.workers = args.workers;
    config.runner.limits = args.limits.limits();
    config.runner.warm = args.limits.warm();
    // The site's default classification is the service's to decide, from its own references.
    config.runner.sets_default_classification = false;
    config.runner.lease = std::time::Duration::from_secs(args.job_lease.max(1));
    if let Some(t) = args.threads {
        config.runner.threads = t.max(1);
    }
    // Workers start no uploads: they need no store admin API even where the site's settings,
    // shared with the API host, name one.
    if let Some(store) = config.store.as_mut() {
        store.garage_admin = None;
    }
    let state = crate::open_with(config).await?;
    if state.runner.references().is_empty() {
        eprintln!("hint: no reference data is installed in {}; `mgds db install --demo` adds the demo", dir.display());
    }
    let operations = match args.metrics_listen {
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on {addr} for metrics"))?;
            let addr = listener.local_addr()?;
            // Printed on stdout, as `mgds serve` prints its address, for scripts and supervisors.
            println!("metrics on http://{addr}/metrics");
            Some(tokio::spawn(mgds_server::routes::operations::serve_operations(listener, state.clone())))
        }
        None => None,
    };
    let workers = mgds_server::worker::spawn_workers(&state, args.workers);
    eprintln!("worker: running analyses from {} ({} at once); Ctrl-C stops", dir.display(), workers.len());
    crate::shutdown_signal().await;
    for w in workers {
        w.abort();
    }
    if let Some(o) = operations {
        o.abort();
    }
    let n = mgds_server::worker::release(&state).await?;
    if n > 0 {
        eprintln!("gave {n} unfinished {} back to the queue", if n == 1 { "analysis" } else { "analyses" });
    }
    state.db.close().await;
    Ok(())
}
