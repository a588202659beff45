//! What the queue keeps of the classifications of the samples the watcher made (each sample's
//! taxa once its classification finished, so the run dashboard draws without asking the
//! service again) and of the alerts that fired (each once per sample, or run barcode, and
//! taxon).

use std::path::Path;

use sqlx::Row;

use crate::Error;
use crate::alerts::{Alert, Taxa};

use super::{Queue, SampleRecord, now, sample_row, text};

const SAMPLE_COLUMNS: &str = "s.key, s.folder, s.run, s.run_id, s.name, s.external_id, s.recipe, s.state, s.sample_id, \
     s.attempts, s.error, s.jobs_pending";

/// Where a sample's classification stands, as the watcher last saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    /// `waiting` (not finished yet), `done`, `failed`, or `none` (the sample has no
    /// classification).
    pub state: String,
    /// The analysis, once known.
    pub analysis_id: Option<String>,
    /// What it found (when done).
    pub taxa: Option<Taxa>,
    /// Why it failed.
    pub error: Option<String>,
    /// When the watcher saw it finish (RFC 3339).
    pub finished_at: Option<String>,
}

/// A sample whose classification is still to be looked at, and how often it was already.
#[derive(Debug, Clone)]
pub(crate) struct ToFollow {
    pub sample: SampleRecord,
    pub checks: u32,
}

impl Queue {
    /// Up to `limit` samples on the service whose classification has not been seen to finish,
    /// those looked at longest ago first.
    pub(crate) async fn to_follow(&self, limit: usize) -> Result<Vec<ToFollow>, Error> {
        let sql = format!(
            "SELECT {SAMPLE_COLUMNS}, COALESCE(c.checks, 0) FROM samples s LEFT JOIN classified c ON c.sample_key = s.key \
             WHERE s.state = 'confirmed' AND s.sample_id IS NOT NULL AND (c.state IS NULL OR c.state = 'waiting') \
             ORDER BY COALESCE(c.updated_at, ''), s.created_at LIMIT ?"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.err(e))?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                Some(ToFollow { sample: sample_row(r)?, checks: u32::try_from(r.get::<i64, _>(12)).unwrap_or(0) })
            })
            .collect())
    }

    /// Records where a sample's classification stands: `waiting` (counting the look), or
    /// finished (`done` with its taxa, `failed` with why, `none`).
    pub(crate) async fn set_classification(
        &self,
        sample: &SampleRecord,
        state: &str,
        analysis_id: Option<&str>,
        taxa: Option<&Taxa>,
        error: Option<&str>,
    ) -> Result<(), Error> {
        let at = now();
        let finished = (state != "waiting").then_some(at.as_str());
        let taxa = taxa.map(|t| serde_json::to_string(t).unwrap_or_default());
        sqlx::query(
            "INSERT INTO classified (sample_key, sample_id, analysis_id, state, taxa, error, checks, finished_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?) \
             ON CONFLICT (sample_key) DO UPDATE SET sample_id = excluded.sample_id, \
             analysis_id = COALESCE(excluded.analysis_id, classified.analysis_id), state = excluded.state, \
             taxa = excluded.taxa, error = excluded.error, checks = classified.checks + 1, \
             finished_at = excluded.finished_at, updated_at = excluded.updated_at",
        )
        .bind(&sample.key)
        .bind(sample.sample_id.as_deref().unwrap_or_default())
        .bind(analysis_id)
        .bind(state)
        .bind(taxa)
        .bind(error)
        .bind(finished)
        .bind(&at)
        .execute(&self.pool)
        .await
        .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The samples of the run folder `run` (every sample made, when `None`), oldest first,
    /// each with its classification as last seen.
    pub async fn classifications(
        &self,
        run: Option<&Path>,
    ) -> Result<Vec<(SampleRecord, Option<Classification>)>, Error> {
        let sql = format!(
            "SELECT {SAMPLE_COLUMNS}, c.state, c.analysis_id, c.taxa, c.error, c.finished_at \
             FROM samples s LEFT JOIN classified c ON c.sample_key = s.key \
             WHERE (? IS NULL OR s.run = ?) ORDER BY s.created_at, s.rowid"
        );
        let run = run.map(text);
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(&run)
            .bind(&run)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.err(e))?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                let sample = sample_row(r)?;
                let c = r.get::<Option<String>, _>(12).map(|state| Classification {
                    state,
                    analysis_id: r.get(13),
                    taxa: r.get::<Option<String>, _>(14).and_then(|t| serde_json::from_str(&t).ok()),
                    error: r.get(15),
                    finished_at: r.get(16),
                });
                Some((sample, c))
            })
            .collect())
    }

    /// Records an alert unless one for the same subject and taxon is there already; answers
    /// whether it is new.
    pub(crate) async fn record_alert(&self, alert: &Alert) -> Result<bool, Error> {
        let done = sqlx::query("INSERT OR IGNORE INTO alerts (subject, tax_id, alert, at) VALUES (?, ?, ?, ?)")
            .bind(&alert.subject)
            .bind(&alert.tax_id)
            .bind(serde_json::to_string(alert).unwrap_or_default())
            .bind(&alert.at)
            .execute(&self.pool)
            .await
            .map_err(|e| self.err(e))?;
        Ok(done.rows_affected() == 1)
    }

    /// The alerts that fired, newest first, at most `limit`.
    pub async fn alerts(&self, limit: usize) -> Result<Vec<Alert>, Error> {
        let rows: Vec<String> = sqlx::query_scalar("SELECT alert FROM alerts ORDER BY at DESC, rowid DESC LIMIT ?")
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.err(e))?;
        Ok(rows.iter().filter_map(|a| serde_json::from_str(a).ok()).collect())
    }
}
