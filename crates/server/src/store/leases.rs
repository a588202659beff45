//! Leases in the database: a named turn that one host holds at a time, for the work every host
//! runs but only one should do at once (the janitor's rounds, chaining the audit trail,
//! delivering webhooks). A lease is dated by the database's clock, so hosts whose clocks
//! differ agree on when it lapses.

use std::time::Duration;

use super::db::{self, Pool};

/// Takes the turn of the lease `name` for `holder` if no other host holds it: it lasts `hold`
/// by the database's clock. Answers whether this host has it.
pub async fn take_turn(db: &Pool, name: &str, holder: &str, hold: Duration) -> Result<bool, sqlx::Error> {
    lease(db, name, holder, hold, false).await
}

/// Takes the lease `name` for `holder` for `hold`, if it lapsed or (with `renew`) `holder`
/// holds it already: a task that runs often keeps its turn while it runs, and another host
/// takes over once it stops. Answers whether this host has it.
pub async fn lease(db: &Pool, name: &str, holder: &str, hold: Duration, renew: bool) -> Result<bool, sqlx::Error> {
    let now = db::clock(db).await?;
    let until = now + chrono::Duration::from_std(hold).unwrap_or(chrono::Duration::minutes(10));
    let taken = sqlx::query(
        "INSERT INTO leases (name, holder, until) VALUES ($1, $2, $3) \
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until \
         WHERE leases.until < $4 OR ($5 AND leases.holder = $2)",
    )
    .bind(name)
    .bind(holder)
    .bind(db::ts(until))
    .bind(db::ts(now))
    .bind(renew)
    .execute(db)
    .await?
    .rows_affected();
    Ok(taken == 1)
}
