//! `mgds org`: the caller's organisation and, for its admins and owners, its users (invite,
//! change roles, disable and enable, reset passwords, revoke keys and sessions; named by e-mail
//! address or id), its audit trail, and its webhooks and their events.

use anyhow::{Context, Result, bail};
use mgds_api::{Member, MemberUpdate, PasswordLink, Role, WebhookCreate, WebhookUpdate, WebhookWithSecret};
use mgds_client::Filter;

use crate::connect::Ctx;
use crate::output::{Column, OutputArgs, print_list, print_one};
use crate::resources::{ListArgs, fetch};

/// `mgds org ...`.
#[derive(clap::Subcommand, Debug)]
pub enum OrgCommand {
    /// Show your organisation and your role in it.
    Show {
        #[command(flatten)]
        out: OutputArgs,
    },
    /// The lab's name on the organisation's reports' covers (admins and owners); the
    /// organisation keeps its own name, by which users are placed in it.
    LabName {
        /// The name; "" for the organisation's own name again.
        name: String,
    },
    /// The logo on the organisation's reports' covers: set (a PNG, JPEG or SVG picture of at
    /// most 2 MiB), save a copy, or remove it (setting and removing: admins and owners).
    Logo {
        #[command(subcommand)]
        command: LogoCommand,
    },
    /// List the organisation's users with their roles and state (admins and owners).
    Users {
        /// Only users with this role.
        #[arg(long, value_parser = parse_role)]
        role: Option<Role>,
        /// Only disabled users.
        #[arg(long, conflicts_with = "enabled")]
        disabled: bool,
        /// Only enabled users.
        #[arg(long)]
        enabled: bool,
        #[command(flatten)]
        list: ListArgs,
    },
    /// Add someone to the organisation and print the invitation link to give them (they choose
    /// a password there; the link works for 7 days).
    Invite {
        /// Their e-mail address.
        email: String,
        /// member, admin or owner (admins invite members; owners any role).
        #[arg(long, default_value = "member", value_parser = parse_role)]
        role: Role,
    },
    /// Give a user another role (owners only, but for an admin making someone a member).
    Role {
        /// E-mail address or user id.
        user: String,
        /// member, admin or owner.
        #[arg(value_parser = parse_role)]
        role: Role,
    },
    /// Disable an account: its API key, browser sessions and download links stop at once; its
    /// samples, documents and projects stay.
    Disable {
        /// E-mail address or user id.
        user: String,
    },
    /// Enable a disabled account again (its API key works again).
    Enable {
        /// E-mail address or user id.
        user: String,
    },
    /// Print a password reset link for a user (it works for 24 hours; their password stays
    /// until it is used).
    ResetPassword {
        /// E-mail address or user id.
        user: String,
    },
    /// End a user's API key and browser sessions (a lost laptop, a leaked key); they sign in
    /// with their password and make a new key.
    Revoke {
        /// E-mail address or user id.
        user: String,
    },
    /// The organisation's audit trail, newest first (admins and owners): who changed what,
    /// when, from where, before and after; who downloaded what. `--csv` for a spreadsheet.
    Audit {
        /// Only this action (e.g. sample.deleted), or a kind of action ending in a dot
        /// (e.g. `user.`).
        #[arg(long)]
        action: Option<String>,
        /// Only what this user (e-mail address) did.
        #[arg(long)]
        by: Option<String>,
        /// Only about this record (its id).
        #[arg(long)]
        target: Option<String>,
        /// From this time on (RFC 3339, or a date: 2026-11-01).
        #[arg(long)]
        since: Option<String>,
        /// Before this time (RFC 3339, or a date).
        #[arg(long)]
        until: Option<String>,
        #[command(flatten)]
        list: ListArgs,
    },
    /// List the organisation's webhooks (admins and owners), with how many events wait.
    Webhooks {
        #[command(flatten)]
        list: ListArgs,
    },
    /// Register, change, check or remove a webhook.
    #[command(subcommand)]
    Webhook(WebhookCommand),
    /// The organisation's webhook events, newest first, with where each delivery stands.
    Events {
        /// Only the events of this webhook (its id).
        #[arg(long)]
        webhook: Option<String>,
        /// Only events with this status: pending, retryable, success or failed.
        #[arg(long, value_parser = ["pending", "retryable", "success", "failed"])]
        status: Option<String>,
        /// Only events of this type (e.g. analysis.completed).
        #[arg(long = "type", value_name = "TYPE")]
        event_type: Option<String>,
        #[command(flatten)]
        list: ListArgs,
    },
    /// Deliver an event again now (and retry it for a day if its receiver is away).
    Redeliver {
        /// The event's id.
        event: String,
    },
}

/// `mgds org logo ...`.
#[derive(clap::Subcommand, Debug)]
pub enum LogoCommand {
    /// Set the logo from a picture file.
    Set {
        /// A PNG, JPEG or SVG file.
        file: std::path::PathBuf,
    },
    /// Save the logo to a file.
    Save {
        /// Where to write it.
        #[arg(short, long)]
        output: std::path::PathBuf,
    },
    /// Remove the logo (reports show the lab's name alone).
    Remove,
}

/// `mgds org webhook ...`.
#[derive(clap::Subcommand, Debug)]
pub enum WebhookCommand {
    /// Register a webhook and print its signing secret (shown only now).
    Add {
        /// Where to POST events: an http:// or https:// address. Internal addresses are refused
        /// unless the service allows their network (mgds serve --webhook-allow-network).
        url: String,
        /// The event type to send (sample.confirmed, analysis.completed, ...), or * for every
        /// type; `mgds org webhook types` lists them.
        #[arg(long = "event", value_name = "TYPE", default_value = "*")]
        event_type: String,
        /// Register it disabled (no events are made until it is enabled).
        #[arg(long)]
        disabled: bool,
    },
    /// The event types the service sends.
    Types,
    /// Change a webhook's address or event type.
    Set {
        /// The webhook's id.
        id: String,
        /// A new address.
        #[arg(long)]
        url: Option<String>,
        /// A new event type.
        #[arg(long = "event", value_name = "TYPE")]
        event_type: Option<String>,
    },
    /// Enable a webhook (its waiting events are delivered).
    Enable {
        /// The webhook's id.
        id: String,
    },
    /// Disable a webhook: no new events are made for it; those waiting wait (for up to a day).
    Disable {
        /// The webhook's id.
        id: String,
    },
    /// Remove a webhook with its events and delivery log.
    Remove {
        /// The webhook's id.
        id: String,
    },
    /// Give a webhook a new signing secret and print it (shown only now).
    Secret {
        /// The webhook's id.
        id: String,
    },
    /// Send a `ping` event to a webhook to check it.
    Ping {
        /// The webhook's id.
        id: String,
    },
    /// A webhook's delivery log, newest first: each try, its answer and how long it took.
    Deliveries {
        /// The webhook's id.
        id: String,
        /// Only the tries that failed.
        #[arg(long)]
        failed: bool,
        #[command(flatten)]
        list: ListArgs,
    },
}

const WEBHOOK_COLUMNS: &[Column] = &[
    ("id", "id"),
    ("event_type", "event_type"),
    ("post_url", "post_url"),
    ("enabled", "enabled"),
    ("waiting", "waiting"),
    ("created", "created_at"),
];

const EVENT_COLUMNS: &[Column] = &[
    ("id", "id"),
    ("created", "created_at"),
    ("type", "event_type"),
    ("subject", "subject"),
    ("status", "status"),
    ("attempts", "attempts"),
    ("next_try", "next_attempt_at"),
    ("last_error", "last_error"),
];

const DELIVERY_COLUMNS: &[Column] = &[
    ("at", "at"),
    ("event", "event"),
    ("type", "event_type"),
    ("delivered", "delivered"),
    ("status", "status_code"),
    ("ms", "duration_ms"),
    ("by_hand", "by_hand"),
    ("error", "error"),
];

/// Parses a role as typed.
pub fn parse_role(s: &str) -> Result<Role, String> {
    Role::parse(&s.trim().to_ascii_lowercase())
        .ok_or_else(|| format!("{s:?} is not a role; use member, admin or owner"))
}

const MEMBER_COLUMNS: &[Column] = &[
    ("id", "id"),
    ("email", "email"),
    ("role", "role"),
    ("created", "created_at"),
    ("disabled", "disabled_at"),
    ("password", "has_password"),
    ("last_seen", "last_seen_at"),
];

const AUDIT_COLUMNS: &[Column] = &[
    ("at", "at"),
    ("seq", "seq"),
    ("by", "actor_email"),
    ("address", "address"),
    ("client", "client"),
    ("action", "action"),
    ("kind", "target_kind"),
    ("record", "target_id"),
    ("changes", "changes"),
];

/// A time as typed: RFC 3339, or a date (its midnight, UTC).
fn time_of(s: &str) -> Result<String> {
    let s = s.trim();
    if s.len() == 10 && s.as_bytes()[4] == b'-' && s.as_bytes()[7] == b'-' {
        return Ok(format!("{s}T00:00:00Z"));
    }
    if chrono::DateTime::parse_from_rfc3339(s).is_ok() {
        return Ok(s.to_string());
    }
    bail!("{s:?} is not a time: give a date (2026-11-01) or an RFC 3339 time (2026-11-01T09:30:00Z)")
}

/// The user a command names: an e-mail address, looked up in the organisation, or an id.
async fn member(ctx: &Ctx, user: &str) -> Result<Member> {
    let org = ctx.client.organization();
    if user.contains('@') {
        org.find(user)
            .await?
            .with_context(|| format!("there is no user {user} in your organisation (see `mgds org users`)"))
    } else {
        Ok(org.user(user).await?)
    }
}

fn print_link(link: &PasswordLink, what: &str) {
    eprintln!(
        "{what} {} ({}); give them this link, which works once, until {}:",
        link.user.email, link.user.role, link.expires_at
    );
    println!("{}", link.url);
}

/// Runs an `org` command.
pub async fn run(ctx: &Ctx, cmd: OrgCommand) -> Result<()> {
    let org = ctx.client.organization();
    match cmd {
        OrgCommand::Show { out } => {
            let o = org.get().await?;
            if out.json {
                print_one(&o)?;
            } else {
                println!("{}\nyour role: {}\nusers: {}\ncreated: {}", o.name, o.role, o.users, o.created_at);
                println!("on reports: {}", o.lab_name.as_deref().unwrap_or(&o.name));
                println!("logo: {}", if o.logo.is_some() { "set (mgds org logo save -o FILE)" } else { "none" });
            }
        }
        OrgCommand::LabName { name } => {
            let o = org.set_lab_name(&name).await.context("cannot set the lab's name")?;
            println!("reports made from now on name the lab {:?}", o.lab_name.as_deref().unwrap_or(&o.name));
        }
        OrgCommand::Logo { command: LogoCommand::Set { file } } => {
            let len = std::fs::metadata(&file).with_context(|| format!("cannot read {}", file.display()))?.len();
            if len > mgds_api::MAX_LOGO_BYTES as u64 {
                bail!(
                    "{} is {len} bytes; a logo is at most {} MiB: give a smaller PNG, JPEG or SVG picture",
                    file.display(),
                    mgds_api::MAX_LOGO_BYTES >> 20
                );
            }
            let bytes = std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
            org.set_logo(bytes.into()).await.with_context(|| format!("cannot set {} as the logo", file.display()))?;
            println!("the logo is set: reports made from now on show it");
        }
        OrgCommand::Logo { command: LogoCommand::Save { output } } => match org.logo().await? {
            Some(bytes) => {
                std::fs::write(&output, &bytes).with_context(|| format!("cannot write {}", output.display()))?;
                println!("saved the logo ({} bytes) to {}", bytes.len(), output.display());
            }
            None => bail!("the organisation has no logo (mgds org logo set FILE sets one)"),
        },
        OrgCommand::Logo { command: LogoCommand::Remove } => {
            org.remove_logo().await.context("cannot remove the logo")?;
            println!("the logo is removed");
        }
        OrgCommand::Users { role, disabled, enabled, list } => {
            let mut filter = Filter::new();
            if let Some(r) = role {
                filter = filter.eq("role", r.as_str());
            }
            if disabled || enabled {
                filter = filter.eq("disabled", disabled);
            }
            let users = fetch(org.users().filter(filter), &list, "users").await?;
            print_list(&list.out, &users, MEMBER_COLUMNS)?;
        }
        OrgCommand::Invite { email, role } => {
            let link = org.invite(&email, role).await.with_context(|| format!("cannot invite {email}"))?;
            print_link(&link, "invited");
        }
        OrgCommand::Role { user, role } => {
            let m = member(ctx, &user).await?;
            let m = org.update(&m, &MemberUpdate { role: Some(role), disabled: None }).await?;
            eprintln!("{} is now an {} of the organisation", m.email, m.role);
        }
        OrgCommand::Disable { user } => {
            let m = member(ctx, &user).await?;
            let m = org.update(&m, &MemberUpdate { role: None, disabled: Some(true) }).await?;
            eprintln!(
                "disabled {}: their API key, browser sessions and download links no longer work; their records stay",
                m.email
            );
        }
        OrgCommand::Enable { user } => {
            let m = member(ctx, &user).await?;
            let m = org.update(&m, &MemberUpdate { role: None, disabled: Some(false) }).await?;
            eprintln!("enabled {} again", m.email);
        }
        OrgCommand::ResetPassword { user } => {
            let m = member(ctx, &user).await?;
            if m.disabled_at.is_some() {
                bail!("{} is disabled; enable the account first (`mgds org enable {}`)", m.email, m.email);
            }
            let link = org.reset_password(&m).await?;
            print_link(&link, "made a password reset link for");
        }
        OrgCommand::Audit { action, by, target, since, until, list } => {
            let mut filter = Filter::new();
            match action.as_deref() {
                Some(a) if a.ends_with('.') => filter = filter.op("action", "$startswith", a),
                Some(a) => filter = filter.eq("action", a),
                None => {}
            }
            if let Some(email) = by {
                filter = filter.eq("actor_email", email.trim().to_ascii_lowercase());
            }
            if let Some(t) = target {
                filter = filter.eq("target_id", t.trim());
            }
            if let Some(t) = since {
                filter = filter.op("at", "$gte", time_of(&t)?);
            }
            if let Some(t) = until {
                filter = filter.op("at", "$lt", time_of(&t)?);
            }
            let entries = fetch(org.audit().filter(filter), &list, "entries").await?;
            print_list(&list.out, &entries, AUDIT_COLUMNS)?;
        }
        OrgCommand::Webhooks { list } => {
            let hooks = fetch(org.webhooks(), &list, "webhooks").await?;
            print_list(&list.out, &hooks, WEBHOOK_COLUMNS)?;
        }
        OrgCommand::Webhook(cmd) => webhook(ctx, cmd).await?,
        OrgCommand::Events { webhook, status, event_type, list } => {
            let mut filter = Filter::new();
            if let Some(w) = webhook {
                filter = filter.eq("webhook", format!("/api/v1/webhooks/{}", w.trim()));
            }
            if let Some(s) = status {
                filter = filter.eq("status", s);
            }
            if let Some(t) = event_type {
                filter = filter.eq("event_type", t.trim());
            }
            let events = fetch(org.events().filter(filter), &list, "events").await?;
            print_list(&list.out, &events, EVENT_COLUMNS)?;
        }
        OrgCommand::Redeliver { event } => {
            let e = org.redeliver(event.trim()).await?;
            eprintln!("event {} ({}) is being delivered again", event.trim(), e.event_type);
        }
        OrgCommand::Revoke { user } => {
            let m = member(ctx, &user).await?;
            let r = org.revoke(&m).await?;
            eprintln!(
                "revoked the API key of {}, ended {} browser session(s) and canceled {} upload(s) not yet confirmed",
                m.email, r.sessions, r.canceled_uploads
            );
        }
    }
    Ok(())
}

fn print_secret(w: &WebhookWithSecret, what: &str) {
    let id = w.webhook.uri.rsplit('/').next().unwrap_or_default();
    eprintln!(
        "{what} webhook {id}: {} events to {}; deliveries are signed with this secret (X-MGDS-Signature), shown only now:",
        w.webhook.event_type, w.webhook.post_url
    );
    println!("{}", w.secret);
}

/// Runs an `org webhook` command.
async fn webhook(ctx: &Ctx, cmd: WebhookCommand) -> Result<()> {
    let org = ctx.client.organization();
    match cmd {
        WebhookCommand::Add { url, event_type, disabled } => {
            let req = WebhookCreate { post_url: url.clone(), event_type, enabled: Some(!disabled) };
            let w = org.add_webhook(&req).await.with_context(|| format!("cannot register a webhook for {url}"))?;
            print_secret(&w, "registered");
        }
        WebhookCommand::Types => {
            println!("*\tevery type below");
            for (t, what) in mgds_api::EVENT_TYPES {
                println!("{t}\t{what}");
            }
        }
        WebhookCommand::Set { id, url, event_type } => {
            if url.is_none() && event_type.is_none() {
                bail!("give --url or --event (or both)");
            }
            let w = org.update_webhook(id.trim(), &WebhookUpdate { post_url: url, event_type, enabled: None }).await?;
            eprintln!("webhook {}: {} events to {}", id.trim(), w.event_type, w.post_url);
        }
        WebhookCommand::Enable { id } => {
            org.update_webhook(id.trim(), &WebhookUpdate { enabled: Some(true), ..Default::default() }).await?;
            eprintln!("enabled webhook {}; its waiting events are delivered", id.trim());
        }
        WebhookCommand::Disable { id } => {
            let w =
                org.update_webhook(id.trim(), &WebhookUpdate { enabled: Some(false), ..Default::default() }).await?;
            eprintln!(
                "disabled webhook {}; no new events are made for it, and {} waiting event(s) wait (for up to a day from their making)",
                id.trim(),
                w.waiting
            );
        }
        WebhookCommand::Remove { id } => {
            org.delete_webhook(id.trim()).await?;
            eprintln!("removed webhook {} with its events and delivery log", id.trim());
        }
        WebhookCommand::Secret { id } => {
            let w = org.replace_webhook_secret(id.trim()).await?;
            print_secret(&w, "replaced the secret of");
        }
        WebhookCommand::Ping { id } => {
            let e = org.ping_webhook(id.trim()).await?;
            let event = e.uri.rsplit('/').next().unwrap_or_default();
            eprintln!("sent ping event {event}; `mgds org webhook deliveries {}` shows how it went", id.trim());
        }
        WebhookCommand::Deliveries { id, failed, list } => {
            let mut filter = Filter::new();
            if failed {
                filter = filter.eq("delivered", false);
            }
            let log = fetch(org.deliveries(id.trim()).filter(filter), &list, "deliveries").await?;
            print_list(&list.out, &log, DELIVERY_COLUMNS)?;
        }
    }
    Ok(())
}
