//! The audit trail: who changed what, when, from where and with which client, before and
//! after; and who downloaded what. Append-only and tamper-evident.
//!
//! - **Appending.** A change appends its entry in its own transaction ([`record`]), so an entry
//!   exists exactly when its change does; it takes no lock beyond its own new row. An entry
//!   belongs to the organisation whose record it is about (the owner's), or, for people, keys
//!   and sessions, the person's.
//! - **Chaining.** The chainer ([`chain`], one host at a time by lease, every few seconds, and
//!   chainers take turns by a lock of their own)
//!   numbers each organisation's new entries in the order they were made and chains them: each
//!   entry's `hash` is the SHA-256 of the previous entry's hash and the entry's own fields
//!   ([`entry_hash`]). Changing, removing or reordering a chained entry breaks every hash after
//!   it; `mgds admin audit verify` ([`verify`]) walks the chains and says where.
//! - **Retention.** With a retention set, entries older than it are removed by the janitor
//!   ([`expire`]), after a checkpoint of where the chain stood (its last removed entry's number
//!   and hash) is written, signed with an HMAC key kept outside the database (the data folder's
//!   `audit.key`): verifying starts from the last checkpoint, whose signature someone with only
//!   the database cannot make.
//! - **Reading.** An organisation's admins and owners list and filter it ([`list`], with the
//!   spec's list rules).

use chrono::Utc;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::caller::{Caller, User};
use super::db::{self, Pool, Tx, new_id};
use super::handle::Store;
use super::records::{self, Found, ListQuery, ListSpec};
use crate::error::{ApiError, ApiResult};
use crate::listing::{Bind, Compiled, Field, FieldKind};

pub use super::change::{Entry, changed};

pub use super::change::MAX_CHANGES_BYTES;

fn bounded(changes: Value) -> String {
    super::change::bounded(&changes).to_string()
}

const INSERT: &str = "INSERT INTO audit_entries (id, organization_id, at, actor_id, actor_email, address, client, \
     action, target_kind, target_id, changes) \
     VALUES ($1, COALESCE((SELECT organization_id FROM users WHERE id = $2), $3), $4, $5, \
     (SELECT email FROM users WHERE id = $5), $6, $7, $8, $9, $10, $11)";

/// How long appending an entry (with its webhooks' events) took inside its change's
/// transaction, in this process: `/metrics` reports it as `mgds_audit_write_seconds`, so what
/// the audit trail adds to a change can be read beside the change's own latency.
pub static WRITE_SECONDS: std::sync::LazyLock<prometheus_client::metrics::histogram::Histogram> =
    std::sync::LazyLock::new(|| {
        // 50 µs to about 1.6 s, each bucket √2 wider than the one before, so that a quantile
        // read from them is within a factor of 1.41.
        prometheus_client::metrics::histogram::Histogram::new(
            prometheus_client::metrics::histogram::exponential_buckets(0.000_05, std::f64::consts::SQRT_2, 31),
        )
    });

/// Appends `entry`, made by `actor` (`None`: the operator or the service itself), in `tx`.
pub async fn record(tx: &mut Tx, actor: Option<&User>, entry: Entry<'_>) -> ApiResult<()> {
    let started = std::time::Instant::now();
    // The webhooks' events of the change, in the same transaction.
    super::events::from_audit(tx, actor, &entry).await?;
    sqlx::query(INSERT)
        .bind(new_id())
        .bind(entry.owner)
        .bind(actor.map(|a| a.organization_id.clone()).unwrap_or_default())
        .bind(db::now())
        .bind(actor.map(|a| a.id.clone()))
        .bind(actor.and_then(|a| a.origin.address.clone()))
        .bind(actor.and_then(|a| a.origin.client.clone()).or_else(|| actor.is_none().then(|| "operator".to_string())))
        .bind(entry.action)
        .bind(entry.kind)
        .bind(entry.target)
        .bind(bounded(entry.changes))
        .execute(&mut **tx)
        .await?;
    WRITE_SECONDS.observe(started.elapsed().as_secs_f64());
    Ok(())
}

/// [`record`] in a transaction of its own, for an action that writes nothing else (a download)
/// or whose writes are single statements.
pub async fn record_now(db: &Pool, actor: Option<&User>, entry: Entry<'_>) -> ApiResult<()> {
    let mut tx = db::begin_write(db, db::Scope::Rows).await?;
    record(&mut tx, actor, entry).await?;
    tx.commit().await?;
    Ok(())
}

/// [`record_now`] for the caller of a request. Anonymous callers reach only public records
/// (a public analysis's output): what they read is not recorded.
pub async fn record_for(db: &Pool, caller: &Caller, entry: Entry<'_>) -> ApiResult<()> {
    match caller.0.as_ref() {
        Some(user) => record_now(db, Some(user), entry).await,
        None => Ok(()),
    }
}

/// Records that the caller was given a download address of analysis `id`'s output `file`.
pub async fn analysis_downloaded(db: &Pool, caller: &Caller, id: &str, file: &str) -> ApiResult<()> {
    let owner: Option<String> =
        sqlx::query_scalar("SELECT s.owner_id FROM analyses a JOIN samples s ON s.id = a.sample_id WHERE a.id = $1")
            .bind(id)
            .fetch_optional(db)
            .await?;
    let Some(owner) = owner else { return Ok(()) };
    record_for(db, caller, Entry::new("analysis.downloaded", "analysis", id, &owner).with(json!({"file": file}))).await
}

/// An entry as it is chained and listed.
#[derive(Debug, Clone, serde::Serialize, sqlx::FromRow)]
pub struct Stored {
    /// Its id.
    pub id: String,
    /// Its organisation.
    pub organization_id: String,
    /// When it was made (RFC 3339).
    pub at: String,
    /// Who made it (`null`: the operator, or the service itself).
    pub actor_id: Option<String>,
    /// Their e-mail address then.
    pub actor_email: Option<String>,
    /// The address the request came from.
    pub address: Option<String>,
    /// The client, and how it signed in.
    pub client: Option<String>,
    /// What happened.
    pub action: String,
    /// The kind of record.
    pub target_kind: String,
    /// The record's id.
    pub target_id: String,
    /// What changed (JSON).
    pub changes: String,
    /// Its number in its organisation's chain (`null` until chained, within seconds).
    pub seq: Option<i64>,
    /// The previous entry's hash.
    pub prev_hash: Option<String>,
    /// Its hash.
    pub hash: Option<String>,
}

/// The hash before an organisation's first entry.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The hash of entry `e` as number `seq` after `prev`: SHA-256 over a JSON array of the previous
/// hash, the number and every field the entry records (JSON keeps each field apart, whatever it
/// holds).
pub fn entry_hash(prev: &str, seq: i64, e: &Stored) -> String {
    let fields = json!([
        prev,
        seq,
        e.id,
        e.organization_id,
        e.at,
        e.actor_id,
        e.actor_email,
        e.address,
        e.client,
        e.action,
        e.target_kind,
        e.target_id,
        e.changes
    ]);
    hex::encode(Sha256::digest(fields.to_string().as_bytes()))
}

const COLUMNS: &str = "id, organization_id, at, actor_id, actor_email, address, client, action, target_kind, \
                       target_id, changes, seq, prev_hash, hash";

/// Most entries chained in one transaction.
const CHAIN_BATCH: i64 = 1000;

/// How often the chainer looks for new entries.
pub const CHAIN_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// The lease of the chainer.
const LEASE: &str = "audit-chain";

/// Chains the entries not yet chained, oldest first, each organisation's after its last.
/// Chainers take turns (a lock of their own): one that comes second finds only what the first
/// left. Answers how many it chained.
pub async fn chain(db: &Pool) -> ApiResult<u64> {
    let mut chained = 0;
    loop {
        // A look without the lock first: most of the time there is nothing to chain.
        let waiting: Option<String> =
            sqlx::query_scalar("SELECT id FROM audit_entries WHERE seq IS NULL LIMIT 1").fetch_optional(db).await?;
        if waiting.is_none() {
            break;
        }
        let mut tx = db::begin_write(db, db::Scope::Named("audit_chain")).await?;
        let sql = format!("SELECT {COLUMNS} FROM audit_entries WHERE seq IS NULL ORDER BY at, id LIMIT $1");
        let batch: Vec<Stored> = sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(CHAIN_BATCH).fetch_all(&mut *tx).await?;
        if batch.is_empty() {
            // Another chainer took them meanwhile; the lock is let go at once.
            tx.rollback().await?;
            break;
        }
        let mut heads: std::collections::HashMap<String, (i64, String)> = std::collections::HashMap::new();
        for e in &batch {
            if !heads.contains_key(&e.organization_id) {
                heads.insert(e.organization_id.clone(), head(&mut tx, &e.organization_id).await?);
            }
            let (seq, prev) = heads.get(&e.organization_id).cloned().unwrap_or((0, GENESIS.to_string()));
            let seq = seq + 1;
            let hash = entry_hash(&prev, seq, e);
            sqlx::query("UPDATE audit_entries SET seq = $1, prev_hash = $2, hash = $3 WHERE id = $4 AND seq IS NULL")
                .bind(seq)
                .bind(&prev)
                .bind(&hash)
                .bind(&e.id)
                .execute(&mut *tx)
                .await?;
            heads.insert(e.organization_id.clone(), (seq, hash));
        }
        tx.commit().await?;
        chained += batch.len() as u64;
        if (batch.len() as i64) < CHAIN_BATCH {
            break;
        }
    }
    Ok(chained)
}

/// The number and hash of an organisation's last chained entry (or of its last checkpoint, if
/// every entry after it expired).
async fn head(tx: &mut Tx, org: &str) -> ApiResult<(i64, String)> {
    let last: Option<(i64, String)> = sqlx::query_as(
        "SELECT seq, hash FROM audit_entries WHERE organization_id = $1 AND seq IS NOT NULL ORDER BY seq DESC LIMIT 1",
    )
    .bind(org)
    .fetch_optional(&mut **tx)
    .await?;
    let checkpoint: Option<(i64, String)> =
        sqlx::query_as("SELECT seq, hash FROM audit_checkpoints WHERE organization_id = $1 ORDER BY seq DESC LIMIT 1")
            .bind(org)
            .fetch_optional(&mut **tx)
            .await?;
    Ok(match (last, checkpoint) {
        (Some(l), Some(c)) => {
            if l.0 >= c.0 {
                l
            } else {
                c
            }
        }
        (Some(l), None) => l,
        (None, Some(c)) => c,
        (None, None) => (0, GENESIS.to_string()),
    })
}

/// Chains every few seconds until dropped.
pub async fn run_chainer(db: Pool, every: std::time::Duration) {
    let holder = format!("{}-{}", std::process::id(), new_id());
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        // One host at a time looks (the others would find nothing left).
        match super::leases::lease(&db, LEASE, &holder, std::time::Duration::from_secs(60), true).await {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => {
                tracing::warn!(error = %e, "the audit trail's chainer could not take its turn; trying again");
                continue;
            }
        }
        if let Err(e) = chain(&db).await {
            tracing::warn!(error = %e, "the audit trail could not be chained; trying again");
        }
    }
}

type HmacSha256 = Hmac<Sha256>;

/// The signature of a checkpoint with `key`.
pub fn sign_checkpoint(key: &[u8], org: &str, seq: i64, hash: &str, at: &str) -> String {
    let mut mac =
        <HmacSha256 as KeyInit>::new_from_slice(key).unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
    mac.update(json!(["mgds-audit-checkpoint", org, seq, hash, at]).to_string().as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// The audit key in `data_dir` (`audit.key`: 32 random bytes, hex), made on first use, readable
/// by the service's user only. Several API hosts of one install share one copy.
pub fn key(data_dir: &std::path::Path) -> std::io::Result<Vec<u8>> {
    let path = data_dir.join("audit.key");
    match std::fs::read_to_string(&path) {
        Ok(text) => hex::decode(text.trim())
            .map_err(|e| std::io::Error::other(format!("{} is not a hex key: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(data_dir)?;
            let key: [u8; 32] = rand::random();
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            match options.open(&path) {
                Ok(mut f) => {
                    std::io::Write::write_all(&mut f, hex::encode(key).as_bytes())?;
                    f.sync_all()?;
                    Ok(key.to_vec())
                }
                // Another process made it at the same moment: read theirs.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => key_again(&path),
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

fn key_again(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    let text = std::fs::read_to_string(path)?;
    hex::decode(text.trim()).map_err(|e| std::io::Error::other(format!("{} is not a hex key: {e}", path.display())))
}

/// Removes the chained entries older than `keep_days`, each organisation's after a signed
/// checkpoint of its last removed entry. Answers how many it removed.
pub async fn expire(db: &Pool, key: &[u8], keep_days: u32) -> ApiResult<u64> {
    let before = db::ts(Utc::now() - chrono::Duration::days(i64::from(keep_days)));
    let lasts: Vec<(String, i64)> = sqlx::query_as(
        "SELECT organization_id, MAX(seq) FROM audit_entries WHERE seq IS NOT NULL AND at < $1 GROUP BY organization_id",
    )
    .bind(&before)
    .fetch_all(db)
    .await?;
    let mut removed = 0;
    for (org, seq) in lasts {
        let mut tx = db::begin_write(db, db::Scope::Named("audit_chain")).await?;
        let hash: String = sqlx::query_scalar("SELECT hash FROM audit_entries WHERE organization_id = $1 AND seq = $2")
            .bind(&org)
            .bind(seq)
            .fetch_one(&mut *tx)
            .await?;
        let at = db::now();
        sqlx::query(
            "INSERT INTO audit_checkpoints (organization_id, seq, hash, at, signature) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT DO NOTHING",
        )
        .bind(&org)
        .bind(seq)
        .bind(&hash)
        .bind(&at)
        .bind(sign_checkpoint(key, &org, seq, &hash, &at))
        .execute(&mut *tx)
        .await?;
        removed +=
            sqlx::query("DELETE FROM audit_entries WHERE organization_id = $1 AND seq IS NOT NULL AND seq <= $2")
                .bind(&org)
                .bind(seq)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        tx.commit().await?;
    }
    Ok(removed)
}

/// What checking one organisation's chain found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Verified {
    /// The organisation's id.
    pub organization_id: String,
    /// Its name.
    pub organization: String,
    /// The checkpoint the check started from (`0`: the first entry).
    pub from_seq: i64,
    /// Chained entries checked.
    pub entries: i64,
    /// Entries not yet chained (made in the last seconds).
    pub unchained: i64,
    /// What is wrong, if anything: the first broken entry and why.
    pub problem: Option<String>,
}

/// Checks every organisation's chain (or the one named) from its last checkpoint (whose
/// signature is checked with `key`): every number follows the one before, every entry's
/// `prev_hash` is the hash before it and its `hash` is what its fields give.
pub async fn verify(db: &Pool, key: &[u8], only: Option<&str>) -> ApiResult<Vec<Verified>> {
    let orgs: Vec<(String, String)> =
        sqlx::query_as("SELECT id, name FROM organizations ORDER BY name").fetch_all(db).await?;
    let mut out = Vec::new();
    for (org, name) in orgs.into_iter().filter(|(id, name)| only.is_none_or(|o| o == id || o == name)) {
        out.push(verify_one(db, key, &org, &name).await?);
    }
    Ok(out)
}

async fn verify_one(db: &Pool, key: &[u8], org: &str, name: &str) -> ApiResult<Verified> {
    let checkpoint: Option<(i64, String, String, String)> = sqlx::query_as(
        "SELECT seq, hash, at, signature FROM audit_checkpoints WHERE organization_id = $1 ORDER BY seq DESC LIMIT 1",
    )
    .bind(org)
    .fetch_optional(db)
    .await?;
    let mut v = Verified {
        organization_id: org.to_string(),
        organization: name.to_string(),
        from_seq: 0,
        entries: 0,
        unchained: 0,
        problem: None,
    };
    let (mut seq, mut prev) = (0, GENESIS.to_string());
    if let Some((cseq, chash, cat, sig)) = checkpoint {
        let want = sign_checkpoint(key, org, cseq, &chash, &cat);
        if !bool::from(subtle::ConstantTimeEq::ct_eq(want.as_bytes(), sig.as_bytes())) {
            v.problem = Some(format!(
                "the checkpoint at entry {cseq} does not carry a valid signature: it was changed, or was signed with \
                 another audit.key"
            ));
            return Ok(v);
        }
        (seq, prev) = (cseq, chash);
        v.from_seq = cseq;
    }
    v.unchained = sqlx::query_scalar("SELECT COUNT(*) FROM audit_entries WHERE organization_id = $1 AND seq IS NULL")
        .bind(org)
        .fetch_one(db)
        .await?;
    loop {
        let sql = format!(
            "SELECT {COLUMNS} FROM audit_entries WHERE organization_id = $1 AND seq > $2 ORDER BY seq LIMIT $3"
        );
        let batch: Vec<Stored> =
            sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org).bind(seq).bind(CHAIN_BATCH).fetch_all(db).await?;
        for e in &batch {
            let n = e.seq.unwrap_or_default();
            let problem = if n != seq + 1 {
                Some(format!("entry {} is missing (the next one is {n})", seq + 1))
            } else if e.prev_hash.as_deref() != Some(prev.as_str()) {
                Some(format!("entry {n} does not follow entry {seq}: its previous hash is not that entry's hash"))
            } else if e.hash.as_deref() != Some(entry_hash(&prev, n, e).as_str()) {
                Some(format!("entry {n} ({} at {}) was changed after it was written", e.action, e.at))
            } else {
                None
            };
            if problem.is_some() {
                v.problem = problem;
                return Ok(v);
            }
            seq = n;
            prev = e.hash.clone().unwrap_or_default();
            v.entries += 1;
        }
        if (batch.len() as i64) < CHAIN_BATCH {
            break;
        }
    }
    Ok(v)
}

/// The fields of `where` and `sort` in the audit trail.
pub(crate) const AUDIT_FIELDS: &[Field] = &[
    Field { name: "at", column: "e.at", kind: FieldKind::DateTime, sortable: true },
    Field { name: "seq", column: "e.seq", kind: FieldKind::Integer, sortable: true },
    Field { name: "action", column: "e.action", kind: FieldKind::Text, sortable: true },
    Field { name: "actor", column: "e.actor_id", kind: FieldKind::Ref { collection: "users" }, sortable: true },
    Field { name: "actor_email", column: "e.actor_email", kind: FieldKind::Text, sortable: true },
    Field { name: "address", column: "e.address", kind: FieldKind::Text, sortable: true },
    Field { name: "target_kind", column: "e.target_kind", kind: FieldKind::Text, sortable: true },
    Field { name: "target_id", column: "e.target_id", kind: FieldKind::Text, sortable: true },
];

const ENTRIES: ListSpec = ListSpec {
    from: "audit_entries e",
    columns: "e.id, e.organization_id, e.at, e.actor_id, e.actor_email, e.address, e.client, e.action, \
              e.target_kind, e.target_id, e.changes, e.seq, e.prev_hash, e.hash",
    fields: AUDIT_FIELDS,
    default_order: "e.at DESC",
    tiebreak: "e.id DESC",
};

/// One page of the caller's organisation's audit trail (admins and owners), newest first.
pub async fn list(state: &Store, caller: &Caller, q: &ListQuery<'_>) -> ApiResult<Found<mgds_api::AuditEntry>> {
    let user = caller.require()?;
    if !user.manages_org() {
        return Err(ApiError::Forbidden("only an admin or owner of your organisation reads its audit trail".into()));
    }
    let of_org =
        Compiled { sql: "e.organization_id = ?".into(), binds: vec![Bind::Text(user.organization_id.clone())] };
    let rows: Found<Stored> = records::list(&state.db, &ENTRIES, q, of_org, None).await?;
    Ok(rows.map(Stored::into_api))
}

impl Stored {
    fn into_api(self) -> mgds_api::AuditEntry {
        mgds_api::AuditEntry {
            uri: format!("/api/v1/audit/{}", self.id),
            at: self.at,
            actor: self.actor_id.map(|id| mgds_api::Ref::new("users", &id)),
            actor_email: self.actor_email,
            address: self.address,
            client: self.client,
            action: self.action,
            target_kind: self.target_kind,
            target_id: self.target_id,
            changes: serde_json::from_str(&self.changes).unwrap_or(Value::Null),
            seq: self.seq,
            hash: self.hash,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(changes: &str) -> Stored {
        Stored {
            id: "e1".into(),
            organization_id: "o".into(),
            at: "2026-01-01T00:00:00Z".into(),
            actor_id: Some("u".into()),
            actor_email: Some("a@lab.org".into()),
            address: Some("10.0.0.1".into()),
            client: Some("key: test".into()),
            action: "sample.updated".into(),
            target_kind: "sample".into(),
            target_id: "s".into(),
            changes: changes.into(),
            seq: None,
            prev_hash: None,
            hash: None,
        }
    }

    #[test]
    fn every_field_and_the_previous_hash_go_into_an_entrys_hash() {
        let a = entry(r#"{"visibility":["private","shared"]}"#);
        let h = entry_hash(GENESIS, 1, &a);
        assert_eq!(h.len(), 64);
        assert_eq!(h, entry_hash(GENESIS, 1, &a), "the same entry hashes the same");
        assert_ne!(h, entry_hash(GENESIS, 2, &a));
        assert_ne!(h, entry_hash(&h, 1, &a));
        assert_ne!(h, entry_hash(GENESIS, 1, &entry(r#"{"visibility":["private","public"]}"#)));
        let mut moved = a.clone();
        moved.address = Some("10.0.0.2".into());
        assert_ne!(h, entry_hash(GENESIS, 1, &moved));
        // Fields are kept apart: text moved from one field to the next changes the hash.
        let (mut x, mut y) = (a.clone(), a.clone());
        x.action = "ab".into();
        x.target_kind = "c".into();
        y.action = "a".into();
        y.target_kind = "bc".into();
        assert_ne!(entry_hash(GENESIS, 1, &x), entry_hash(GENESIS, 1, &y));
    }

    #[test]
    fn changes_name_each_field_changed_before_and_after() {
        let before = json!({"name": "a", "description": "d", "starred": false});
        let asked = json!({"name": "b", "description": "d", "platform": null, "starred": false});
        assert_eq!(changed(&before, &asked), json!({"name": ["a", "b"]}));
        assert_eq!(changed(&before, &json!({"description": null})), json!({"description": ["d", null]}));
    }

    #[test]
    fn checkpoints_are_signed_with_the_key() {
        let s = sign_checkpoint(b"key one", "o", 5, "abc", "2026");
        assert_eq!(s, sign_checkpoint(b"key one", "o", 5, "abc", "2026"));
        assert_ne!(s, sign_checkpoint(b"key two", "o", 5, "abc", "2026"));
        assert_ne!(s, sign_checkpoint(b"key one", "o", 6, "abc", "2026"));
    }

    #[test]
    fn long_changes_are_cut_saying_so() {
        let long = json!({"description": ["a".repeat(40_000), "b"]});
        let kept: Value = serde_json::from_str(&bounded(long)).unwrap();
        assert_eq!(kept["truncated"], json!(true));
        assert!(bounded(json!({"a": 1})).len() < 20);
    }
}
