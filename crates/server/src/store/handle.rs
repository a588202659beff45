//! The handle the data layer works on.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use super::{db, files};

/// What the data layer works on: the database and the files, and the signal it gives when it
/// queues work (an analysis, a file to import) for idle workers to look at the queue at once.
#[derive(Debug, Clone)]
pub struct Store {
    /// The database.
    pub db: db::Pool,
    /// Files.
    pub storage: files::Storage,
    /// Notified when work is queued.
    pub queued: Arc<Notify>,
    /// Notified when this process stores an analysis's outcome (for `?wait=` on an analysis).
    pub finished: Arc<Notify>,
    /// The waits that may be held open at once ([`MAX_WAITS`]).
    pub waits: Arc<tokio::sync::Semaphore>,
    /// How long the audit trail is kept, and the key its checkpoints are signed with.
    pub audit: Arc<AuditPolicy>,
    /// How webhooks are delivered.
    pub webhooks: Arc<DeliveryPolicy>,
}

/// `?wait=` requests on analyses held open at once across the service; a wait beyond them is
/// answered at once (see [`super::analyses::get_when_complete`]).
pub const MAX_WAITS: usize = 256;

/// How long the audit trail is kept (see [`super::audit`]).
#[derive(Debug, Clone, Default)]
pub struct AuditPolicy {
    /// Days an entry is kept (`None`: for ever).
    pub retention_days: Option<u32>,
    /// The key that signs checkpoints (empty: none could be read, and nothing expires).
    pub key: Vec<u8>,
}

impl Store {
    /// A store over a database and files.
    pub fn new(db: db::Pool, storage: files::Storage) -> Store {
        Store {
            db,
            storage,
            queued: Arc::new(Notify::new()),
            finished: Arc::new(Notify::new()),
            waits: Arc::new(tokio::sync::Semaphore::new(MAX_WAITS)),
            audit: Arc::default(),
            webhooks: Arc::default(),
        }
    }

    /// Tells idle workers that work was queued.
    pub fn wake_workers(&self) {
        self.queued.notify_waiters();
    }
}

/// How the service's deliveries are made.
#[derive(Debug, Clone)]
pub struct DeliveryPolicy {
    /// Sends them, to public addresses and the networks the configuration allows (`None`:
    /// this process does not deliver, as `mgds admin`; registering a webhook then fails).
    pub sender: Option<mgds_webhook::Sender>,
    /// The wait between tries.
    pub backoff: mgds_webhook::Backoff,
    /// How long an event is tried.
    pub deliver_for: Duration,
}

impl Default for DeliveryPolicy {
    fn default() -> Self {
        DeliveryPolicy { sender: None, backoff: mgds_webhook::Backoff::SERVICE, deliver_for: DELIVER_FOR }
    }
}

/// How long a webhook event is tried, from its making or a redelivery.
pub const DELIVER_FOR: Duration = Duration::from_secs(24 * 3600);
