//! The janitor: the install's housekeeping, off the request path. On a schedule it removes the
//! files of deleted records that their request could not remove, abandoned uploads a day past
//! their expiry (their files, parts and buckets), files written to `incoming/` for uploads no
//! longer open, audit entries past the retention (after a signed checkpoint), webhook events
//! delivered or given up 30 days ago, and (SQLite)
//! refreshes the planner's statistics. Requests do only their own
//! record's work, so their latency does not grow with what is stale.
//!
//! Every `mgds serve` runs one, and any number of hosts may: a round is taken as a lease in the
//! database ([`take_turn`]), so one host does it at a time and another takes over if it stops.

use std::time::Duration;

use crate::store::Store;
use crate::store::db::{self, Pool};

/// How often a host looks whether a round is due.
pub const DEFAULT_EVERY: Duration = Duration::from_secs(60);

/// The lease's name.
const LEASE: &str = "janitor";

pub use crate::store::leases::{lease, take_turn};

/// Ends a round: the next is due `every` from now, on whichever host looks first.
async fn finish(db: &Pool, holder: &str, every: Duration) -> Result<(), sqlx::Error> {
    let next = db::clock(db).await? + chrono::Duration::from_std(every).unwrap_or(chrono::Duration::minutes(1));
    sqlx::query("UPDATE leases SET until = $1 WHERE name = $2 AND holder = $3")
        .bind(db::ts(next))
        .bind(LEASE)
        .bind(holder)
        .execute(db)
        .await?;
    Ok(())
}

/// One round, if this host gets the turn (no round ran anywhere in the last `every`): answers
/// whether it ran.
pub async fn round(state: &Store, holder: &str, every: Duration) -> bool {
    match take_turn(&state.db, LEASE, holder, Duration::from_secs(600)).await {
        Ok(true) => {}
        Ok(false) => return false,
        Err(e) => {
            tracing::warn!(error = %e, "the janitor could not take its turn; trying again later");
            return false;
        }
    }
    if let Err(e) = crate::store::deletes::purge(state).await {
        tracing::warn!(error = %e, "the janitor could not finish removing files; trying again next round");
    }
    let storage = state.storage.clone();
    let swept =
        tokio::task::spawn_blocking(move || storage.sweep_staging(crate::store::files::STAGING_ABANDONED_AFTER)).await;
    match swept {
        Ok(Ok(0)) => {}
        Ok(Ok(n)) => tracing::info!(files = n, "removed partial uploads left by an interrupted run"),
        Ok(Err(e)) => tracing::warn!(error = %e, "could not sweep partial uploads; trying again next round"),
        Err(e) => tracing::warn!(error = %e, "the sweep of partial uploads stopped"),
    }
    if let Err(e) = crate::store::sessions::sweep(&state.db).await {
        tracing::warn!(error = %e, "the janitor could not remove ended sessions; trying again next round");
    }
    if let Some(days) = state.audit.retention_days
        && !state.audit.key.is_empty()
    {
        match crate::store::audit::expire(&state.db, &state.audit.key, days).await {
            Ok(0) => {}
            Ok(n) => {
                tracing::info!(entries = n, days, "removed audit entries past the retention, after a signed checkpoint")
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not remove audit entries past the retention; trying again next round")
            }
        }
    }
    match crate::store::events::expire(&state.db).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(events = n, "removed delivered and given-up webhook events past their 30 days"),
        Err(e) => tracing::warn!(error = %e, "could not remove old webhook events; trying again next round"),
    }
    if let Err(e) = db::refresh_statistics(&state.db).await {
        tracing::warn!(error = %e, "could not refresh the database's statistics");
    }
    if let Err(e) = finish(&state.db, holder, every).await {
        tracing::warn!(error = %e, "the janitor could not date its next round; its turn lapses by itself");
    }
    true
}

/// Runs rounds every `every` until dropped (the task is aborted when the service stops). The
/// first is `every` after the call: [`crate::AppState::open`] has just run one (or found another
/// host at it), and a round at once would only race it for the turn.
pub async fn run(state: Store, every: Duration) {
    let holder = format!("{}-{}", std::process::id(), db::new_id());
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        round(&state, &holder, every).await;
    }
}
