//! `mgds`: the MGDS service and its administration from a terminal.
//!
//! Exit codes: 0 success, 1 an operation failed (the message says why), 2 the command line was
//! wrong.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use mgds_api::BatchStatus;
use mgds_server::{AppState, Config, Tls, admin};

mod account;
mod compare;
mod connect;
mod org;
mod output;
mod references;
mod resources;
mod samples;
mod subset;
mod watch;

use mgds_profiles::{local, profile};

/// MGDS: microbial genomics data service and tools.
#[derive(Parser)]
#[command(name = "mgds", version, about, propagate_version = true)]
struct Cli {
    #[command(flatten)]
    global: connect::Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the MGDS service (API v1) on this machine.
    Serve(ServeArgs),
    /// Run analyses from the job queue of a data folder, as a process of its own.
    Worker(references::WorkerArgs),
    /// Reference data of the local service: install the demo, build a classification database.
    #[command(subcommand)]
    Db(references::DbCommand),
    /// Write the reads assigned to chosen taxa (like `onecodex scripts subset_reads`).
    SubsetReads(subset::SubsetArgs),
    /// Manage users, API keys and sequencing batches of a local service (--data-dir).
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
    /// Sign in to a service (--base-url, --profile) and keep the key in the OS keychain.
    Login(account::LoginArgs),
    /// Forget the stored API key of a profile.
    Logout,
    /// Show the account the current profile signs in as.
    Whoami {
        /// Print the account as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List, choose and remove profiles.
    #[command(subcommand)]
    Profiles(account::ProfilesCommand),
    /// List, show, update and delete samples.
    #[command(subcommand)]
    Samples(samples::SamplesCommand),
    /// Upload FASTQ/FASTA files (or folders of them) as samples.
    Upload(samples::UploadArgs),
    /// Create a sample awaiting data (to upload its file later) and print its id.
    Preupload(resources::PreuploadArgs),
    /// Upload, list, download, share and delete documents (files of any type).
    #[command(subcommand)]
    Documents(resources::DocumentsCommand),
    /// Create, list and show projects, and manage their members.
    #[command(subcommand)]
    Projects(resources::ProjectsCommand),
    /// Tag samples and list tags.
    #[command(subcommand)]
    Tags(resources::TagsCommand),
    /// List and show jobs, and run them on samples.
    #[command(subcommand)]
    Jobs(resources::JobsCommand),
    /// List and show analyses, and print their results.
    #[command(subcommand)]
    Analyses(resources::AnalysesCommand),
    /// Download the read-level results of classifications.
    #[command(subcommand)]
    Readlevel(resources::ReadlevelCommand),
    /// Compare samples by their classifications: stacked bars or a heatmap (SVG, PNG) and the
    /// numbers behind them (CSV, TSV).
    Compare(compare::CompareArgs),
    /// List and show sequencing batches.
    #[command(subcommand)]
    Batches(resources::BatchesCommand),
    /// Your organisation; for its admins and owners, its users: invite, roles, disable,
    /// enable, reset passwords, revoke keys.
    #[command(subcommand)]
    Org(org::OrgCommand),
    /// Watched folders: sequencer runs and FASTQ files become samples by themselves.
    #[command(subcommand)]
    Watch(watch::WatchCommand),
    /// Print the service's JSON schema, or one collection's (e.g. `samples`).
    Schema {
        /// The collection, e.g. samples, documents or sequencing/batches.
        resource: Option<String>,
    },
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Address to listen on. Anything but loopback needs --tls-cert and --tls-key.
    #[arg(long, default_value = "127.0.0.1:8080", env = "MGDS_LISTEN")]
    listen: SocketAddr,
    /// PEM certificate chain for HTTPS.
    #[arg(long, requires = "tls_key", env = "MGDS_TLS_CERT")]
    tls_cert: Option<PathBuf>,
    /// PEM private key for HTTPS.
    #[arg(long, requires = "tls_cert", env = "MGDS_TLS_KEY")]
    tls_key: Option<PathBuf>,
    /// The address clients use, if not the listening one (behind a reverse proxy), e.g.
    /// https://mgds.lab.example.org
    #[arg(long, env = "MGDS_PUBLIC_URL")]
    public_url: Option<String>,
    /// Analyses run at once by the service (0: none; run `mgds worker` processes instead).
    #[arg(long, default_value_t = 1, env = "MGDS_WORKERS")]
    workers: usize,
    /// Threads per analysis (default: every core).
    #[arg(long, env = "MGDS_THREADS")]
    threads: Option<usize>,
    /// Seconds a worker's claim on an analysis holds without renewal; after that (a worker
    /// that died), another worker runs it again.
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    job_lease: u64,
    /// Seconds an analysis waits after a fault that may pass (its engine process killed, the
    /// work folder out of reach) before it is tried again.
    #[arg(long, default_value_t = 30, value_name = "SECS")]
    retry_after: u64,
    /// Do not install the demo references on a data folder that has none.
    #[arg(long)]
    no_demo: bool,
    /// Do not serve the web UI at the service's root (the API and the upload and storage routes
    /// are served either way).
    #[arg(long)]
    no_web: bool,
    /// Seconds between the janitor's rounds (removing deleted records' files, abandoned
    /// uploads and their buckets), run by whichever host of the install looks first.
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    janitor_every: u64,
    /// Days the audit trail is kept; older entries are removed after a checkpoint signed with
    /// the data folder's audit.key (default: kept for ever).
    #[arg(long, value_name = "DAYS", env = "MGDS_AUDIT_RETENTION_DAYS", value_parser = clap::value_parser!(u32).range(1..))]
    audit_retention_days: Option<u32>,
    #[command(flatten)]
    limits: references::LimitArgs,
    /// A reverse proxy (address or network, e.g. 10.0.0.0/8; repeat for several) whose
    /// X-Forwarded-For header names the client's address. Without it, every request counts as
    /// coming from the proxy when failed sign-ins are limited.
    #[arg(long = "trusted-proxy", value_name = "ADDRESS/BITS", value_parser = parse_network, env = "MGDS_TRUSTED_PROXIES", value_delimiter = ',')]
    trusted_proxies: Vec<ipnet::IpNet>,
    /// An internal network webhooks may reach (e.g. the LIMS's 10.1.0.0/16; repeat for
    /// several). Without one, webhooks reach only public addresses: never this machine, its
    /// network, link-local or other private addresses.
    #[arg(long = "webhook-allow-network", value_name = "ADDRESS/BITS", value_parser = parse_network, env = "MGDS_WEBHOOK_ALLOWED_NETWORKS", value_delimiter = ',')]
    webhook_allowed_networks: Vec<ipnet::IpNet>,
    #[command(flatten)]
    sso: SsoArgs,
}

/// Single sign-on with an OpenID Connect provider (Keycloak, Entra ID, Google, ...): register
/// MGDS there as a confidential web client whose redirect address is
/// PUBLIC_URL/api/v1/sso/callback (the README says how, for each).
#[derive(clap::Args)]
#[command(next_help_heading = "Single sign-on (OpenID Connect)")]
struct SsoArgs {
    /// The provider's issuer, exactly as its metadata names it (e.g.
    /// https://keycloak.lab.example/realms/lab).
    #[arg(long = "sso-issuer", value_name = "URL", env = "MGDS_SSO_ISSUER", requires = "sso_client_id")]
    sso_issuer: Option<String>,
    /// MGDS's client id at the provider (a confidential web client).
    #[arg(long = "sso-client-id", value_name = "ID", env = "MGDS_SSO_CLIENT_ID", requires = "sso_issuer")]
    sso_client_id: Option<String>,
    /// A file holding the client's secret (or the MGDS_SSO_CLIENT_SECRET variable; never on the
    /// command line, where other users of the machine can read it).
    #[arg(long = "sso-client-secret-file", value_name = "PATH", env = "MGDS_SSO_CLIENT_SECRET_FILE")]
    sso_client_secret_file: Option<PathBuf>,
    /// What the sign-in button says: "Sign in with NAME" (default: the issuer's host).
    #[arg(long = "sso-name", value_name = "NAME", env = "MGDS_SSO_NAME")]
    sso_name: Option<String>,
    /// The public client MGDS Desktop and `mgds login --sso` sign in as (a native client whose
    /// redirect address is http://127.0.0.1/callback, any port).
    #[arg(long = "sso-native-client-id", value_name = "ID", env = "MGDS_SSO_NATIVE_CLIENT_ID")]
    sso_native_client_id: Option<String>,
    /// An audience the provider's access tokens carry for MGDS's API; with one, the API takes
    /// them as bearer tokens (repeat for several).
    #[arg(long = "sso-audience", value_name = "AUDIENCE", env = "MGDS_SSO_AUDIENCES", value_delimiter = ',')]
    sso_audiences: Vec<String>,
    /// The scopes asked for.
    #[arg(long = "sso-scopes", value_name = "SCOPES", env = "MGDS_SSO_SCOPES", default_value = mgds_server::sso::DEFAULT_SCOPES)]
    sso_scopes: String,
    /// Link an existing MGDS account to a provider's account with the same e-mail address, on
    /// that account's first sign-in, when the provider says the address is verified.
    #[arg(long = "sso-link-verified-email", env = "MGDS_SSO_LINK_VERIFIED_EMAIL")]
    sso_link_verified_email: bool,
    /// Take the provider's e-mail addresses as verified when it does not say (Entra ID, whose
    /// addresses IT sets); otherwise a new user is made only for an address it calls verified.
    #[arg(long = "sso-email-trusted", env = "MGDS_SSO_EMAIL_TRUSTED")]
    sso_email_trusted: bool,
    /// Place users whose claim holds a value in an organisation (by name; made if missing)
    /// with a role (member or admin): CLAIM:VALUE=ORGANISATION:ROLE, e.g.
    /// groups:lab-admins=Microbiology:admin (repeat; the first match names the organisation, the
    /// highest role in it wins; each sign-in sets the role again).
    #[arg(long = "sso-place", value_name = "RULE", env = "MGDS_SSO_PLACEMENTS", value_delimiter = ';')]
    sso_placements: Vec<mgds_server::sso::PlacementRule>,
    /// Where new users no rule places go, as members (without it they are refused where rules
    /// exist, and only linked, never made, where none do). Existing users keep their role.
    #[arg(long = "sso-default-organization", value_name = "NAME", env = "MGDS_SSO_DEFAULT_ORGANIZATION")]
    sso_default_organization: Option<String>,
}

impl SsoArgs {
    /// The service's configuration, if single sign-on is asked for.
    fn config(self) -> Result<Option<mgds_server::sso::SsoConfig>> {
        let (Some(issuer), Some(client_id)) = (self.sso_issuer, self.sso_client_id) else { return Ok(None) };
        let secret = match self.sso_client_secret_file {
            Some(path) => Some(
                std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read the client secret file {}", path.display()))?
                    .trim()
                    .to_string(),
            ),
            None => std::env::var("MGDS_SSO_CLIENT_SECRET").ok().filter(|s| !s.trim().is_empty()),
        };
        let display_name = self.sso_name.unwrap_or_else(|| {
            reqwest::Url::parse(&issuer)
                .ok()
                .and_then(|u| u.host_str().map(str::to_string))
                .unwrap_or_else(|| issuer.clone())
        });
        Ok(Some(mgds_server::sso::SsoConfig {
            issuer,
            display_name,
            client_id,
            client_secret: secret,
            native_client_id: self.sso_native_client_id,
            audiences: self.sso_audiences.into_iter().filter(|a| !a.trim().is_empty()).collect(),
            scopes: self.sso_scopes,
            link_verified_email: self.sso_link_verified_email,
            email_trusted: self.sso_email_trusted,
            placements: self.sso_placements,
            default_organization: self.sso_default_organization,
        }))
    }
}

/// An address (a network of one) or a network in CIDR form.
fn parse_network(s: &str) -> Result<ipnet::IpNet, String> {
    let s = s.trim();
    s.parse::<ipnet::IpNet>()
        .or_else(|_| s.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("{s:?} is not an address or a network such as 10.0.0.0/8 or ::1/128"))
}

#[derive(Subcommand)]
enum AdminCommand {
    /// Users and their API keys.
    #[command(subcommand)]
    User(UserCommand),
    /// Sequencing batches.
    #[command(subcommand)]
    Batch(BatchCommand),
    /// The audit trail.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Copy this install (the data folder's database and files) to PostgreSQL and an S3 store,
    /// check the copy, and say what it did; stop the service first. Run it again after an
    /// interruption: nothing is copied twice. The store's address and credentials come from
    /// the --s3-* options or the AWS variables.
    Migrate {
        /// The PostgreSQL database to copy the records into (its schema is made if needed).
        #[arg(long, value_name = "URL")]
        to_database: String,
        /// The S3 bucket to copy the files into (s3://bucket or s3://bucket/folder).
        #[arg(long, value_name = "s3://BUCKET")]
        to_store: String,
    },
}

#[derive(Subcommand)]
enum UserCommand {
    /// Create a user and print their API key (the only time it is shown).
    Create {
        /// E-mail address of the user.
        email: String,
        /// Organisation to join (created if needed).
        #[arg(long, default_value = admin::DEFAULT_ORGANIZATION)]
        organization: String,
        /// Their role in the organisation: member, admin or owner.
        #[arg(long, default_value = "member", value_parser = org::parse_role)]
        role: mgds_api::Role,
        /// Also give the user a password, for signing in from a browser: typed at a hidden
        /// prompt, twice, or read as one line of standard input when that is not a terminal
        /// (never as an argument, which other users of the machine can see).
        #[arg(long)]
        password: bool,
    },
    /// Set a user's password for signing in from a browser (prompted, or one line of standard
    /// input); every browser session of theirs ends.
    Passwd {
        /// E-mail address of the user.
        email: String,
    },
    /// Give a user a new API key and print it; the old key stops working at once.
    RotateKey {
        /// E-mail address of the user.
        email: String,
    },
    /// List users (tab-separated: id, e-mail, organisation, role, and when disabled).
    List,
    /// Give a user another role in their organisation (member, admin or owner).
    Role {
        /// E-mail address of the user.
        email: String,
        /// member, admin or owner.
        #[arg(value_parser = org::parse_role)]
        role: mgds_api::Role,
    },
    /// Disable an account: its API key, browser sessions and download links stop at once; its
    /// records stay.
    Disable {
        /// E-mail address of the user.
        email: String,
    },
    /// Enable a disabled account again (its API key works again).
    Enable {
        /// E-mail address of the user.
        email: String,
    },
    /// End a user's API key and browser sessions without giving a new key (rotate-key gives
    /// one).
    Revoke {
        /// E-mail address of the user.
        email: String,
    },
    /// Print a one-time link where the user chooses a password: an invitation if they never
    /// had one, else a reset.
    Link {
        /// E-mail address of the user.
        email: String,
        /// The service's address as users reach it, e.g. https://mgds.lab.example.org
        #[arg(long, env = "MGDS_PUBLIC_URL")]
        public_url: String,
    },
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Check every organisation's chain of audit entries (from its last signed checkpoint):
    /// a line per organisation; exits with 1 if any entry was changed, removed or reordered.
    Verify {
        /// Only this organisation (name or id).
        #[arg(long)]
        organization: Option<String>,
    },
}

#[derive(Subcommand)]
enum BatchCommand {
    /// Register a sequencing batch and print it as JSON.
    Create {
        /// The batch number (unique).
        batch_number: String,
        /// E-mail address of the user who owns it.
        #[arg(long)]
        owner: String,
        /// A human-readable name.
        #[arg(long)]
        name: Option<String>,
    },
    /// Move a batch forward to a new status (or to canceled) and print it as JSON.
    Status {
        /// The batch number or id.
        batch: String,
        /// registered, shipped_to_lab, received_at_lab, extracting, preparing_library,
        /// sequencing, quality_control, done or canceled.
        #[arg(value_parser = parse_status)]
        status: BatchStatus,
    },
}

fn parse_status(s: &str) -> Result<BatchStatus, String> {
    BatchStatus::parse(s).ok_or_else(|| {
        let all: Vec<&str> = BatchStatus::ALL.iter().map(|b| b.as_str()).collect();
        format!("unknown status; use one of: {}", all.join(", "))
    })
}

/// Opens the service's state as `config` says, naming the database and the data folder (and
/// the bucket) when it cannot.
pub(crate) async fn open_with(config: Config) -> Result<AppState> {
    let mut place = match &config.database_url {
        Some(url) => {
            format!("the database {} with the data folder {}", mgds_server::db::redact(url), config.data_dir.display())
        }
        None => format!("the MGDS data folder {}", config.data_dir.display()),
    };
    if let Some(s3) = &config.store {
        place.push_str(&format!(" and the bucket s3://{}", s3.bucket));
    }
    AppState::open(&config).await.with_context(|| format!("cannot open {place}"))
}

/// Resolves on Ctrl-C or (on Unix) SIGTERM.
pub(crate) async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(t) => t,
            Err(_) => return std::mem::drop(ctrl_c.await),
        };
        tokio::select! {
            _ = ctrl_c => {},
            _ = term.recv() => {},
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

async fn serve(mut config: Config, args: ServeArgs) -> Result<()> {
    let tls = match (args.tls_cert, args.tls_key) {
        (Some(cert), Some(key)) => Some(Tls { cert, key }),
        _ => None,
    };
    let bound = mgds_server::bind(args.listen, tls.as_ref()).await?;
    let url = args.public_url.unwrap_or_else(|| bound.url());
    let dir = config.data_dir.clone();
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create the data folder {}", dir.display()))?;
    if !args.no_demo {
        local::install_demo_if_new(&dir).await?;
    }
    config.trusted_proxies = args.trusted_proxies;
    config.runner.limits = args.limits.limits();
    config.runner.warm = args.limits.warm();
    config.runner.workers = args.workers;
    config.runner.lease = std::time::Duration::from_secs(args.job_lease.max(1));
    config.runner.retry_after = std::time::Duration::from_secs(args.retry_after);
    config.janitor_every = std::time::Duration::from_secs(args.janitor_every.max(1));
    config.audit_retention_days = args.audit_retention_days;
    config.webhook_allowed_networks = args.webhook_allowed_networks;
    config.sso = args.sso.config()?;
    if let Some(t) = args.threads {
        config.runner.threads = t.max(1);
    }
    let database = config.database_url.as_deref().map(mgds_server::db::redact);
    let mut state = open_with(config).await?.with_public_url(&url);
    if !args.no_web {
        let web = mgds_web::WebUi::for_service(&state);
        state = state.with_web(web);
        if !mgds_web::WebUi::is_built() {
            eprintln!(
                "this mgds was built without its web UI: the service's root says how to build it (cd ui && npm ci && npm run build, then build mgds again)"
            );
        }
    }
    match database {
        Some(db) => eprintln!("MGDS service: records in {db}, data in {}", dir.display()),
        None => eprintln!("MGDS service: data in {}", dir.display()),
    }
    // Two lines on stdout, in one write, once the service accepts connections: scripts wait for
    // them. The second is the S3 endpoint that S3 clients (boto3 in the onecodex client) upload
    // to: the service's own address (without a proxy's path), or the object store's when each
    // upload gets a bucket of its own there.
    let s3_line = match state.storage.upload_buckets() {
        Some((store, _)) => {
            let (s3, region) = (store.public_base_url(), &store.region);
            format!(
                "s3 endpoint: {s3} (the object store, a bucket per upload; set AWS_ENDPOINT_URL_S3={s3} \
                 AWS_DEFAULT_REGION={region} for the onecodex client)"
            )
        }
        None => {
            let s3 = mgds_server::s3::endpoint(&url);
            format!("s3 endpoint: {s3} (bucket mgds-uploads; set AWS_ENDPOINT_URL_S3={s3} for the onecodex client)")
        }
    };
    print!("listening on {}\n{s3_line}\n", bound.url());
    let shutdown = async {
        shutdown_signal().await;
        eprintln!("stopping: finishing requests in flight");
    };
    mgds_server::serve(bound, state, shutdown).await.context("the service stopped")
}

async fn run_admin(g: &connect::Global, config: Config, command: AdminCommand) -> Result<()> {
    let state = open_with(config).await?;
    let db = &state.db;
    match command {
        AdminCommand::User(UserCommand::Create { email, organization, role, password }) => {
            // Read (and checked) before the user exists, so that a mistyped password makes nobody.
            let password = if password { Some(read_new_password(&email)?) } else { None };
            let user = admin::create_user(db, &email, Some(&organization), role).await?;
            eprintln!("created user {} ({email}); keep this API key safe, it is not shown again:", user.id);
            println!("{}", user.api_key);
            if let Some(p) = password {
                mgds_server::store::sessions::set_password(db, None, &user.id, &p).await.with_context(|| {
                    format!("{email} was created, but the password was not set; set it with `mgds admin user passwd {email}`")
                })?;
                eprintln!("{email} can sign in from a browser with the password given");
            }
        }
        AdminCommand::User(UserCommand::Passwd { email }) => {
            let id = admin::user_id(db, &email).await?;
            let password = read_new_password(&email)?;
            mgds_server::store::sessions::set_password(db, None, &id, &password).await?;
            eprintln!("new password set for {email}; their browser sessions have ended");
        }
        AdminCommand::User(UserCommand::RotateKey { email }) => {
            let rotated = admin::rotate_key(&state, &email).await?;
            eprintln!(
                "new API key for {email}; the previous key no longer works, nor do the download addresses, upload \
                 forms and upload credentials it obtained"
            );
            if rotated.canceled_uploads > 0 {
                eprintln!(
                    "canceled {} upload(s) not yet confirmed that were started with the previous key; start them again",
                    rotated.canceled_uploads
                );
            }
            println!("{}", rotated.api_key);
        }
        AdminCommand::User(UserCommand::List) => {
            for u in admin::list_users(db).await? {
                let disabled = u.disabled_at.map(|at| format!("disabled {at}")).unwrap_or_default();
                println!("{}\t{}\t{}\t{}\t{disabled}", u.id, u.email, u.organization, u.role);
            }
        }
        AdminCommand::User(UserCommand::Role { email, role }) => {
            admin::set_role(db, &email, role).await?;
            eprintln!("{email} is now an {role} of their organisation");
        }
        AdminCommand::User(UserCommand::Disable { email }) => {
            let stopped = admin::set_disabled(&state, &email, true).await?;
            eprintln!(
                "disabled {email}: their API key and download links no longer work; ended {} browser session(s) \
                 and canceled {} upload(s) not yet confirmed; their records stay",
                stopped.sessions, stopped.uploads
            );
        }
        AdminCommand::User(UserCommand::Enable { email }) => {
            admin::set_disabled(&state, &email, false).await?;
            eprintln!("enabled {email} again");
        }
        AdminCommand::User(UserCommand::Revoke { email }) => {
            let stopped = admin::revoke(&state, &email).await?;
            eprintln!(
                "revoked the API key of {email}; ended {} browser session(s) and canceled {} upload(s) not yet confirmed",
                stopped.sessions, stopped.uploads
            );
        }
        AdminCommand::User(UserCommand::Link { email, public_url }) => {
            let (url, expires_at) = admin::password_link(db, &email, &public_url).await?;
            eprintln!("give {email} this link; it works once, until {expires_at}:");
            println!("{url}");
        }
        AdminCommand::Audit(AuditCommand::Verify { organization }) => {
            // What the service has written in the last seconds is chained first.
            mgds_server::store::audit::chain(db).await?;
            if state.audit.key.is_empty() {
                bail!("the data folder's audit.key cannot be read (see the warning above); it checks the checkpoints");
            }
            let found = mgds_server::store::audit::verify(db, &state.audit.key, organization.as_deref()).await?;
            if found.is_empty() {
                bail!("there is no organisation {}", organization.as_deref().unwrap_or("at all"));
            }
            let mut broken = 0;
            for v in &found {
                let from = if v.from_seq > 0 {
                    format!(" from the checkpoint at entry {}", v.from_seq)
                } else {
                    String::new()
                };
                match &v.problem {
                    None => println!("{}: {} entries checked{from}; the chain is whole", v.organization, v.entries),
                    Some(p) => {
                        broken += 1;
                        println!("{}: BROKEN after {} good entries{from}: {p}", v.organization, v.entries);
                    }
                }
                if v.unchained > 0 {
                    println!(
                        "{}: {} entries made in the last seconds are not chained yet",
                        v.organization, v.unchained
                    );
                }
            }
            if broken > 0 {
                bail!("the audit trail of {broken} organisation(s) was changed after it was written");
            }
        }
        AdminCommand::Batch(BatchCommand::Create { batch_number, owner, name }) => {
            let b = admin::create_batch(db, &owner, &batch_number, name.as_deref()).await?;
            println!("{}", serde_json::to_string_pretty(&b)?);
        }
        AdminCommand::Batch(BatchCommand::Status { batch, status }) => {
            let b = admin::set_batch_status(db, &batch, status).await?;
            println!("{}", serde_json::to_string_pretty(&b)?);
        }
        AdminCommand::Migrate { to_database, to_store } => {
            let store = g.s3.config(&to_store)?;
            migrate(&state, &to_database, &store).await?;
        }
    }
    state.db.close().await;
    Ok(())
}

/// `mgds admin migrate`: the copy, with a line per table and a count of files on stderr, and
/// the totals on stdout.
async fn migrate(state: &AppState, to_database: &str, store: &mgds_server::storage::S3Config) -> Result<()> {
    use mgds_server::migrate::Step;
    let target = mgds_server::db::redact(to_database);
    eprintln!("copying the records to {target} and the files to s3://{}", store.full_key("").trim_end_matches('/'));
    let (mut files, mut bytes) = (0u64, 0u64);
    let report = mgds_server::migrate::migrate(state, to_database, store, &mut |step| match step {
        Step::Table(t) => eprintln!("  {:<22} {:>9} rows ({} added)", t.table, t.target, t.added),
        Step::Reference { name, published } => {
            eprintln!(
                "  reference {name}: {}",
                if published { "published to the store" } else { "in the store already" }
            )
        }
        Step::File { bytes: b, .. } => {
            files += 1;
            bytes += b;
            if files % 100 == 0 {
                eprintln!("  files: {files} ({:.1} MB)", bytes as f64 / 1e6);
            }
        }
    })
    .await
    .with_context(|| format!("the copy to {target} did not finish; run the same command again to go on"))?;
    let rows: i64 = report.tables.iter().map(|t| t.target).sum();
    println!(
        "{rows} rows in {} tables match; {} files copied ({:.1} MB), {} already there; every file checked by size and \
         SHA-256 read back from the store; {} references in the store",
        report.tables.len(),
        report.files_copied,
        report.bytes_copied as f64 / 1e6,
        report.files_present,
        report.references
    );
    eprintln!(
        "next: start the service with --database {target} --store s3://{} (and the same --s3-* options)",
        store.full_key("").trim_end_matches('/')
    );
    Ok(())
}

fn main() -> ExitCode {
    // Analyses run in engine processes: this same program, started by the service's workers.
    mgds_server::worker::engine_entry();
    // Controls analyses score with the application's contaminants logic.
    mgds_server::controls::provide(
        mgds_app::contamination::score_controls,
        mgds_app::contamination::SCORING_VERSION,
        mgds_app::contamination::controls_args_schema(),
    );
    let cli = Cli::parse();
    // The service logs its work when it is the product; inside a client command (the embedded
    // local service) only its warnings matter.
    let default_filter = match cli.command {
        Command::Serve(_) => "info,sqlx=warn,tower_http=warn",
        _ => "warn",
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("MGDS_LOG").unwrap_or_else(|_| default_filter.into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::env::var_os("NO_COLOR").is_none())
        .init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let g = cli.global;
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => serve(connect::service_config(&g)?, args).await,
            Command::Worker(args) => references::run_worker(connect::service_config(&g)?, args).await,
            Command::Db(cmd) => references::run_db(connect::service_config(&g)?, cmd).await,
            Command::Admin { command } => run_admin(&g, connect::service_config(&g)?, command).await,
            Command::Login(args) => account::login(&g, &args).await,
            Command::Logout => account::logout(&g).await,
            Command::Whoami { json } => account::whoami(&g, json).await,
            Command::Profiles(cmd) => account::profiles(&cmd),
            Command::Samples(cmd) => samples::run(&connect::connect(&g).await?, cmd).await,
            Command::Upload(args) => samples::upload(&connect::connect(&g).await?, args).await,
            Command::SubsetReads(args) => subset::run(&g, args).await,
            Command::Preupload(args) => resources::run_preupload(&connect::connect(&g).await?, args).await,
            Command::Documents(cmd) => resources::run_documents(&connect::connect(&g).await?, cmd).await,
            Command::Projects(cmd) => resources::run_projects(&connect::connect(&g).await?, cmd).await,
            Command::Tags(cmd) => resources::run_tags(&connect::connect(&g).await?, cmd).await,
            Command::Jobs(cmd) => resources::run_jobs(&connect::connect(&g).await?, cmd).await,
            Command::Analyses(cmd) => resources::run_analyses(&connect::connect(&g).await?, cmd).await,
            Command::Readlevel(cmd) => resources::run_readlevel(&connect::connect(&g).await?, cmd).await,
            Command::Compare(args) => compare::run(&connect::connect(&g).await?, args).await,
            Command::Batches(cmd) => resources::run_batches(&connect::connect(&g).await?, cmd).await,
            Command::Org(cmd) => org::run(&connect::connect(&g).await?, cmd).await,
            Command::Watch(cmd) => watch::run(&g, cmd).await,
            Command::Schema { resource } => resources::run_schema(&connect::connect(&g).await?, resource).await,
        }
    });
    runtime.block_on(local::stop());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is::<samples::Interrupted>() => {
            eprintln!("{e}");
            ExitCode::from(130)
        }
        Err(e) => {
            eprintln!("error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::FAILURE
        }
    }
}

/// A new password for `email`: typed twice at a hidden prompt, or one line of standard input
/// when that is not a terminal; checked against the service's rules before anything is stored.
fn read_new_password(email: &str) -> Result<String> {
    let password = if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        let first = rpassword::prompt_password(format!("New password for {email}: "))?;
        let again = rpassword::prompt_password("The same again: ")?;
        if first != again {
            bail!("the two passwords differ; nothing was changed");
        }
        first
    } else {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line)?;
        line.trim_end_matches(['\r', '\n']).to_string()
    };
    mgds_server::store::sessions::check_new_password(&password).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(password)
}
