//! What a status view reads from the queue while a watcher writes it (the app's "Watched
//! folders" screen, `mgds watch status`): counts from the index and bounded lists, so that a
//! folder of hundreds of thousands of files shows at once.

use std::path::{Path, PathBuf};

use sqlx::Row;

use crate::Error;

use super::{FileRecord, Queue, RunRecord, SampleRecord, State, file_row, sample_row, text};

impl Queue {
    /// Every file recorded.
    pub async fn all_files(&self) -> Result<Vec<FileRecord>, Error> {
        let rows =
            sqlx::query("SELECT path, folder, size, mtime_ns, sha256, state, sample_key FROM files ORDER BY path")
                .fetch_all(&self.pool)
                .await
                .map_err(|e| self.err(e))?;
        Ok(rows.iter().map(file_row).collect())
    }

    /// How many files of each watched folder are in each state (read from the index, without
    /// loading the files: a share watched for years holds hundreds of thousands).
    pub async fn file_counts(&self) -> Result<Vec<(PathBuf, State, u64)>, Error> {
        let rows = sqlx::query("SELECT folder, state, COUNT(*) FROM files GROUP BY folder, state")
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.err(e))?;
        Ok(rows
            .iter()
            .map(|r| {
                let n = u64::try_from(r.get::<i64, _>(2)).unwrap_or(0);
                (PathBuf::from(r.get::<String, _>(0)), State::parse(&r.get::<String, _>(1)), n)
            })
            .collect())
    }

    /// At most `limit` files of `folder` to show a person: those not uploaded yet (or failed)
    /// first, then the uploaded ones, each group by path.
    pub async fn files_to_show(&self, folder: &Path, limit: usize) -> Result<Vec<FileRecord>, Error> {
        const UNFINISHED: &str = "SELECT path, folder, size, mtime_ns, sha256, state, sample_key FROM files \
             WHERE folder = ? AND state <> 'confirmed' ORDER BY path LIMIT ?";
        const UPLOADED: &str = "SELECT path, folder, size, mtime_ns, sha256, state, sample_key FROM files \
             WHERE folder = ? AND state = 'confirmed' ORDER BY path LIMIT ?";
        let mut out = Vec::new();
        for sql in [UNFINISHED, UPLOADED] {
            if out.len() >= limit {
                break;
            }
            let rows = sqlx::query(sql)
                .bind(text(folder))
                .bind(i64::try_from(limit - out.len()).unwrap_or(i64::MAX))
                .fetch_all(&self.pool)
                .await
                .map_err(|e| self.err(e))?;
            out.extend(rows.iter().map(file_row));
        }
        Ok(out)
    }

    /// The newest `limit` samples of the watched folders, newest first, and how many there are
    /// in all.
    pub async fn recent_samples(&self, limit: usize) -> Result<(Vec<SampleRecord>, u64), Error> {
        let rows = sqlx::query(
            "SELECT key, folder, run, run_id, name, external_id, recipe, state, sample_id, attempts, error, jobs_pending \
             FROM samples WHERE folder != '' ORDER BY created_at DESC, rowid DESC LIMIT ?",
        )
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.err(e))?;
        let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM samples WHERE folder != ''")
            .fetch_one(&self.pool)
            .await
            .map_err(|e| self.err(e))?;
        Ok((rows.iter().filter_map(sample_row).collect(), u64::try_from(total).unwrap_or(0)))
    }

    /// Every sample of the watched folders, oldest first.
    pub async fn samples(&self) -> Result<Vec<SampleRecord>, Error> {
        let rows = sqlx::query(
            "SELECT key, folder, run, run_id, name, external_id, recipe, state, sample_id, attempts, error, jobs_pending \
             FROM samples WHERE folder != '' ORDER BY created_at, rowid",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.err(e))?;
        Ok(rows.iter().filter_map(sample_row).collect())
    }

    /// Every run recorded.
    pub async fn runs(&self) -> Result<Vec<RunRecord>, Error> {
        let rows = sqlx::query("SELECT path, folder, kind, run_id, state, detail FROM runs ORDER BY path")
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.err(e))?;
        Ok(rows
            .iter()
            .map(|r| RunRecord {
                path: PathBuf::from(r.get::<String, _>(0)),
                folder: PathBuf::from(r.get::<String, _>(1)),
                kind: r.get(2),
                run_id: r.get(3),
                state: r.get(4),
                detail: r.get(5),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use mgds_upload::Source;

    use super::*;

    fn file(folder: &str, name: &str, state: State) -> FileRecord {
        FileRecord {
            path: Path::new(folder).join(name),
            folder: PathBuf::from(folder),
            size: 10,
            mtime_ns: 1,
            sha256: None,
            state,
            sample_key: None,
        }
    }

    #[tokio::test]
    async fn the_screen_reads_counts_and_a_bounded_list() {
        let dir = tempfile::tempdir().unwrap();
        let q = Queue::open(dir.path()).await.unwrap();
        let mut files: Vec<FileRecord> =
            (0..50).map(|i| file("/runs", &format!("done{i:02}.fq"), State::Seen)).collect();
        files.push(file("/runs", "zz-writing.fq", State::Seen));
        files.push(file("/runs", "aa-ready.fq", State::Settled));
        files.push(file("/other", "x.fq", State::Seen));
        q.put_files(&files).await.unwrap();
        sqlx::query("UPDATE files SET state = 'confirmed' WHERE path LIKE '/runs/done%'")
            .execute(&q.pool)
            .await
            .unwrap();

        let mut counts = q.file_counts().await.unwrap();
        counts.sort_by(|a, b| (&a.0, a.1.as_str()).cmp(&(&b.0, b.1.as_str())));
        let runs = PathBuf::from("/runs");
        assert_eq!(
            counts,
            [
                (PathBuf::from("/other"), State::Seen, 1),
                (runs.clone(), State::Confirmed, 50),
                (runs.clone(), State::Seen, 1),
                (runs.clone(), State::Settled, 1)
            ]
        );
        // Unfinished first (by path), then the uploaded ones, up to the limit.
        let shown = q.files_to_show(&runs, 4).await.unwrap();
        let names: Vec<_> = shown.iter().map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["aa-ready.fq", "zz-writing.fq", "done00.fq", "done01.fq"]);
        assert_eq!(q.files_to_show(&runs, 1).await.unwrap().len(), 1);
        assert_eq!(q.files_to_show(&runs, 500).await.unwrap().len(), 52);

        for (i, at) in
            ["2026-01-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z"].iter().enumerate()
        {
            sqlx::query(
                "INSERT INTO samples (key, folder, name, external_id, recipe, state, created_at, updated_at) \
                 VALUES (?, '/runs', ?, 'x', ?, 'confirmed', ?, ?)",
            )
            .bind(format!("k{i}"))
            .bind(format!("S{i}"))
            .bind(serde_json::to_string(&Source::Single(PathBuf::from(format!("/runs/done{i:02}.fq")))).unwrap())
            .bind(at)
            .bind(at)
            .execute(&q.pool)
            .await
            .unwrap();
        }
        let (recent, total) = q.recent_samples(2).await.unwrap();
        assert_eq!(total, 3);
        let names: Vec<_> = recent.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["S1", "S2"], "newest first");
        q.close().await;
    }
}
