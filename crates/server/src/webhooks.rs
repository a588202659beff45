//! The deliverer: POSTs webhook events as they are made (see [`crate::store::events`]).
//!
//! Every `mgds serve` runs one, and one host at a time delivers (a lease in the database, which
//! another host takes over within half a minute if this one stops). It looks whenever events
//! are made (in this process, or on any host through PostgreSQL's `NOTIFY`) and every second.
//! Each webhook with events due is drained by a task of its own, [`PER_WEBHOOK`] deliveries at
//! a time and one per subject at a time, so a slow or failing receiver holds up only its own
//! queue; at most [`IN_FLIGHT`] deliveries are in flight from one host. A try that was sent but not recorded (the host stopped) is sent again: delivery is at
//! least once, and receivers drop what they saw by the `X-MGDS-Delivery` header.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;

use crate::store::Store;
use crate::store::db::new_id;
use crate::store::events::{self, Due};

/// Deliveries to one webhook at once.
pub const PER_WEBHOOK: usize = 8;
/// Deliveries in flight from this host at once, over every webhook.
pub const IN_FLIGHT: usize = 256;
/// How often the deliverer looks without being told.
pub const EVERY: Duration = Duration::from_secs(1);
/// Events read at a time for one webhook.
const BATCH: i64 = 256;
/// Webhooks looked at in one round.
const WEBHOOKS_AT_ONCE: i64 = 1000;
/// The lease's name, and how long a holder keeps it without renewing.
const LEASE: &str = "webhooks";
const HOLD: Duration = Duration::from_secs(30);
/// How soon after being told of new events the deliverer looks a second time.
const LOOK_AGAIN: Duration = Duration::from_millis(100);
/// How often the lease is taken or renewed.
const RENEW: Duration = Duration::from_secs(5);

/// The webhooks being drained, and whether this host holds the lease.
struct Running {
    draining: Mutex<HashSet<String>>,
    holding: AtomicBool,
    /// Permits for [`IN_FLIGHT`] deliveries.
    in_flight: tokio::sync::Semaphore,
}

/// Delivers until dropped (the task is aborted when the service stops).
pub async fn run(store: Store) {
    if store.webhooks.sender.is_none() {
        return;
    }
    let holder = format!("{}-{}", std::process::id(), new_id());
    let running = Arc::new(Running {
        draining: Mutex::default(),
        holding: AtomicBool::new(false),
        in_flight: tokio::sync::Semaphore::new(IN_FLIGHT),
    });
    let db = store.db.clone();
    let relay =
        tokio::spawn(async move { crate::store::db::relay(&db, events::CHANNEL, || events::MADE.notify_one()).await });
    let _stop_relay = AbortOnDrop(relay);
    let mut tick = tokio::time::interval(EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_renewed = None::<tokio::time::Instant>;
    // The drains end with the deliverer.
    let mut drains = tokio::task::JoinSet::new();
    // Told of new events, the deliverer looks at once and again a moment later: the telling
    // comes from inside the transaction that makes them, which may not have committed yet.
    let mut again: Option<tokio::time::Instant> = None;
    loop {
        let later = again.unwrap_or_else(|| tokio::time::Instant::now() + EVERY);
        tokio::select! {
            _ = tick.tick() => {}
            () = events::MADE.notified() => again = Some(tokio::time::Instant::now() + LOOK_AGAIN),
            () = tokio::time::sleep_until(later), if again.is_some() => again = None,
        }
        // Taking or renewing the lease is a write: every few seconds, well within its hold.
        if last_renewed.is_none_or(|t| t.elapsed() >= RENEW) {
            let held = crate::store::leases::lease(&store.db, LEASE, &holder, HOLD, true).await;
            last_renewed = Some(tokio::time::Instant::now());
            match held {
                Ok(h) => running.holding.store(h, Ordering::Relaxed),
                Err(e) => {
                    tracing::warn!(error = %e, "the webhook deliverer could not take its turn; trying again");
                    running.holding.store(false, Ordering::Relaxed);
                }
            }
        }
        while drains.try_join_next().is_some() {}
        if !running.holding.load(Ordering::Relaxed) {
            // Another host delivers now: this one's tries stop at once.
            drains.abort_all();
            continue;
        }
        if let Err(e) = events::give_up_overdue(&store.db, &store.webhooks).await {
            tracing::warn!(error = %e, "could not give up overdue webhook events; trying again");
        }
        let due = match events::due_webhooks(&store.db, WEBHOOKS_AT_ONCE).await {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(error = %e, "could not look for webhook events to deliver; trying again");
                continue;
            }
        };
        for hook in due {
            let fresh = running.draining.lock().map(|mut d| d.insert(hook.clone())).unwrap_or(false);
            if fresh {
                drains.spawn(drain(store.clone(), running.clone(), hook));
            }
        }
    }
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Takes `hook` off the set of drained webhooks when its drain ends, however it ends.
struct Draining(Arc<Running>, String);

impl Drop for Draining {
    fn drop(&mut self) {
        if let Ok(mut d) = self.0.draining.lock() {
            d.remove(&self.1);
        }
    }
}

/// Delivers webhook `hook`'s due events until none is due (or the lease is lost).
async fn drain(store: Store, running: Arc<Running>, hook: String) {
    let _done = Draining(running.clone(), hook.clone());
    let Some(sender) = store.webhooks.sender.clone() else { return };
    while running.holding.load(Ordering::Relaxed) {
        let target = match events::target(&store.db, &hook).await {
            Ok(Some(t)) if crate::store::db::flag(t.enabled) => t,
            Ok(_) => return,
            Err(e) => {
                tracing::warn!(error = %e, webhook = %hook, "could not read a webhook; trying again later");
                return;
            }
        };
        let Ok(url) = url::Url::parse(&target.post_url) else {
            tracing::warn!(webhook = %hook, "a webhook's address does not parse; its events wait");
            return;
        };
        let heads = match events::heads(&store.db, &hook, BATCH).await {
            Ok(h) if h.is_empty() => return,
            Ok(h) => h,
            Err(e) => {
                tracing::warn!(error = %e, webhook = %hook, "could not read webhook events; trying again later");
                return;
            }
        };
        let url = &url;
        let secret = target.secret.as_bytes();
        let sender = &sender;
        let hook = hook.as_str();
        let in_flight = &running.in_flight;
        // Sent `PER_WEBHOOK` at a time; recorded together (one write for the lot).
        let holding = &running.holding;
        let tries: Vec<(Due, mgds_webhook::Attempt)> = futures::stream::iter(heads)
            .map(|e: Due| async move {
                // The semaphore is never closed.
                let _permit = in_flight.acquire().await.ok();
                // Not sent once another host has taken over.
                if !holding.load(Ordering::Relaxed) {
                    return None;
                }
                let attempt = sender
                    .send(&mgds_webhook::Delivery {
                        url,
                        event_type: &e.event_type,
                        id: &e.id,
                        body: e.payload.as_bytes(),
                        secret: Some(secret),
                    })
                    .await;
                Some((e, attempt))
            })
            .buffer_unordered(PER_WEBHOOK)
            .filter_map(|tried| async move { tried })
            .collect()
            .await;
        if let Err(err) = events::record_attempts(&store.db, &store.webhooks, hook, &tries).await {
            tracing::warn!(error = %err, webhook = %hook, "could not record webhook deliveries; they are sent again");
            return;
        }
    }
}
