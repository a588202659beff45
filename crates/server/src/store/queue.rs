//! The durable job queue: analyses waiting to run, claimed by workers under a lease that they
//! renew, give back or let lapse, and removed once their outcome is stored (by
//! [`store_outcome`](super::analyses::store_outcome), only for the worker that holds the claim).
//!
//! A claim is one statement: it takes the oldest waiting analysis of the given jobs (or one whose
//! lease has lapsed), sets a lease, and counts the attempt, so two workers never hold the same
//! analysis. Leases are dated by the database's clock ([`db::clock`]), not by the workers'.

use std::time::Duration;

use crate::store::db::Pool;

use super::db::{self, Backend, Tx};
use super::settings;

/// A lease deadline `d` from now by the database's clock ([`db::clock`]), as the queue stores
/// it.
async fn from_now(pool: &Pool, d: Duration) -> Result<String, sqlx::Error> {
    Ok(db::ts(db::clock(pool).await? + chrono::Duration::from_std(d).unwrap_or_default()))
}

/// Puts the analysis `analysis_id` in the queue. Workers on other machines hear of it when the
/// transaction commits ([`db::notify_queued`]; in this process, the caller wakes its own).
pub async fn enqueue(tx: &mut Tx, analysis_id: &str, now: &str) -> Result<(), sqlx::Error> {
    // The analysis's owner (its sample's) decides its turn (see `claim`).
    sqlx::query(
        "INSERT INTO job_queue (analysis_id, enqueued_at, owner_id) \
         SELECT a.id, $1, s.owner_id FROM analyses a JOIN samples s ON s.id = a.sample_id WHERE a.id = $2",
    )
    .bind(now)
    .bind(analysis_id)
    .execute(&mut **tx)
    .await?;
    db::notify_queued(tx).await?;
    Ok(())
}

/// Queues the default classification of a newly confirmed sample inside the confirming
/// transaction, and makes it the sample's primary classification. Does nothing when no
/// classification database is installed.
pub async fn queue_default_classification(tx: &mut Tx, sample_id: &str) -> Result<Option<String>, sqlx::Error> {
    let Some(job) = settings::default_classification(tx).await? else { return Ok(None) };
    let id = db::new_id();
    let now = db::now();
    sqlx::query(
        "INSERT INTO analyses (id, sample_id, job_id, analysis_type, job_args, created_at, updated_at) \
         VALUES ($1, $2, $3, 'classification', '{}', $4, $5)",
    )
    .bind(&id)
    .bind(sample_id)
    .bind(&job)
    .bind(&now)
    .bind(&now)
    .execute(&mut **tx)
    .await?;
    enqueue(tx, &id, &now).await?;
    sqlx::query("UPDATE samples SET primary_classification_id = $1 WHERE id = $2")
        .bind(&id)
        .bind(sample_id)
        .execute(&mut **tx)
        .await?;
    Ok(Some(id))
}

/// Claims for `worker`, under a lease of `lease`, an analysis of one of `jobs` that is waiting
/// or held by a lapsed lease. Owners take turns: among the analyses claimed the fewest times
/// (one whose worker keeps dying does not hold up the ones behind it), the next is the oldest
/// of the owner whose analysis was claimed longest ago (or never), so one owner's burst of
/// analyses does not hold every other owner's behind it. Returns its id and how many times it
/// has now been claimed (failed attempts are counted apart, by [`requeue`]).
pub async fn claim(
    db: &Pool,
    jobs: &[String],
    worker: &str,
    lease: Duration,
) -> Result<Option<(String, i64)>, sqlx::Error> {
    if jobs.is_empty() {
        return Ok(None);
    }
    let now = db::clock(db).await?;
    let until = db::ts(now + chrono::Duration::from_std(lease).unwrap_or_default());
    let marks = vec!["?"; jobs.len()].join(", ");
    let sql = format!(
        "UPDATE job_queue SET lease_until = ?, worker = ?, claims = claims + 1 \
         WHERE analysis_id = (SELECT q.analysis_id FROM job_queue q JOIN analyses a ON a.id = q.analysis_id \
           LEFT JOIN queue_turns t ON t.owner_id = q.owner_id \
           WHERE a.job_id IN ({marks}) AND (q.lease_until IS NULL OR q.lease_until < ?) \
           ORDER BY q.claims, COALESCE(t.last_claimed_at, ''), q.enqueued_at, q.analysis_id LIMIT 1{}) \
         RETURNING analysis_id, claims, owner_id",
        Backend::of(db).skip_locked_of("q")
    );
    // Only placeholders are formatted into the statement; every value is bound.
    let mut q = sqlx::query_as::<_, (String, i64, Option<String>)>(db::numbered(sql)).bind(until).bind(worker);
    for j in jobs {
        q = q.bind(j);
    }
    let Some((id, claims, owner)) = q.bind(db::ts(now)).fetch_optional(db).await? else { return Ok(None) };
    if let Some(owner) = owner {
        sqlx::query(
            "INSERT INTO queue_turns (owner_id, last_claimed_at) VALUES ($1, $2) \
             ON CONFLICT (owner_id) DO UPDATE SET last_claimed_at = excluded.last_claimed_at",
        )
        .bind(owner)
        .bind(db::ts(now))
        .execute(db)
        .await?;
    }
    Ok(Some((id, claims)))
}

/// Extends the lease `worker` holds on `id` to `lease` from now.
pub async fn renew(db: &Pool, id: &str, worker: &str, lease: Duration) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE job_queue SET lease_until = $1 WHERE analysis_id = $2 AND worker = $3")
        .bind(from_now(db, lease).await?)
        .bind(id)
        .bind(worker)
        .execute(db)
        .await?;
    Ok(())
}

/// How many times the engine of analysis `id` failed in a way that may pass.
pub async fn failures(db: &Pool, id: &str) -> Result<i64, sqlx::Error> {
    let n: Option<i64> =
        sqlx::query_scalar("SELECT attempts FROM job_queue WHERE analysis_id = $1").bind(id).fetch_optional(db).await?;
    Ok(n.unwrap_or(0))
}

/// Gives the analysis `id` that `worker` holds back to the queue after a failure that may pass,
/// counting it, to be claimed again once `after` has passed.
pub async fn requeue(db: &Pool, id: &str, worker: &str, after: Duration) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE job_queue SET lease_until = $1, worker = NULL, attempts = attempts + 1 WHERE analysis_id = $2 AND worker = $3",
    )
        .bind(from_now(db, after).await?)
        .bind(id)
        .bind(worker)
        .execute(db)
        .await?;
    Ok(())
}

/// Gives back every analysis held by the workers named `<instance>-<n>`, without counting the
/// claim. Returns how many.
pub async fn release(db: &Pool, instance: &str) -> Result<u64, sqlx::Error> {
    let r = sqlx::query(
        "UPDATE job_queue SET lease_until = NULL, worker = NULL, \
         claims = CASE WHEN claims > 0 THEN claims - 1 ELSE 0 END \
         WHERE worker LIKE $1 || '-%'",
    )
    .bind(instance)
    .execute(db)
    .await?;
    Ok(r.rows_affected())
}

/// How many analyses wait in the queue (no worker holds them, or a failed run waits to be tried
/// again) and how many run (a worker's lease holds them).
pub async fn depth(db: &Pool) -> Result<(i64, i64), sqlx::Error> {
    let (total, running): (i64, i64) = sqlx::query_as(
        "SELECT COUNT(*), COUNT(CASE WHEN worker IS NOT NULL AND lease_until >= $1 THEN 1 END) FROM job_queue",
    )
    .bind(db::ts(db::clock(db).await?))
    .fetch_one(db)
    .await?;
    Ok((total - running, running))
}

/// What a claimed analysis runs on: its job id, its job arguments, and its sample's object key
/// and file name.
pub type Input = (String, Option<String>, Option<String>, Option<String>);

/// The input of analysis `id`; `None` if it or its sample was deleted.
pub async fn input(db: &Pool, id: &str) -> Result<Option<Input>, sqlx::Error> {
    sqlx::query_as(
        "SELECT a.job_id, a.job_args, s.object_key, s.filename FROM analyses a JOIN samples s ON s.id = a.sample_id WHERE a.id = $1",
    )
    .bind(id)
    .fetch_optional(db)
    .await
}
