//! A copy of a sample without its host's reads (`POST /samples/{id}/remove_host`, an MGDS
//! addition), to share a sample taken from a person without the person's reads.
//!
//! The request picks a finished classification of the sample whose database names host taxa
//! (`host_tax_ids` in its results; human by default where the database has it), and makes a
//! new sample of the caller's at once, `importing`, with the source's metadata and a name that
//! says what it is. The copy itself reads every byte of the sample, so it is work for a worker
//! ([`super::imports`]; the engine process writes it, [`crate::engine`]): every read the
//! classification called a host taxon or one below it goes, whether or not the call passed
//! the confidence filter, and everything else stays in order. Once written, the copy becomes
//! `private`, is classified as every new sample is, and says in its custom metadata what was
//! removed (`host_removed_from`, `host_removed_classification`, `host_reads_removed`,
//! `host_reads_removed_percent`). The source is never changed.

use mgds_api::{ClassificationResults, Sample};
use serde_json::json;

use super::audit;
use super::caller::Caller;
use super::db::{self, Scope, begin_write};
use super::files::key_name;
use super::handle::Store;
use super::imports::{self, Import};
use super::{metadata, samples, uploads};
use crate::error::{ApiError, ApiResult};

/// How many of a sample's classifications, newest first, are looked at for one whose database
/// names a host, when the request names none (each is a results file read in this process).
const LOOKED_AT: i64 = 5;

/// The most copies one user has waiting to be written at once: each reads and writes a whole
/// sample on a worker shared by everyone, so more wait for these first.
pub const MAX_PENDING_COPIES: i64 = 4;

/// The classification chosen, and what it says of the host.
struct HostCall {
    classification: String,
    readlevel_key: String,
    /// The host's taxa with everything below them (in the database's taxonomy, as the results
    /// name them, and in the results' table).
    tax_ids: Vec<mgds_formats::TaxId>,
    /// The taxa the results name as host.
    named: Vec<String>,
}

/// Starts a copy of the sample `id` without the reads that `classification` (default: its
/// newest finished classification whose database names a host) called the host's. The caller
/// must be able to download the sample; the copy is theirs. Answers the new sample,
/// `importing` until a worker has written it.
pub async fn remove_host(state: &Store, caller: &Caller, id: &str, classification: Option<&str>) -> ApiResult<Sample> {
    let user = caller.require()?;
    let source = samples::downloadable(state, caller, id).await?;
    let key: Option<String> =
        sqlx::query_scalar("SELECT object_key FROM samples WHERE id = $1").bind(id).fetch_one(&state.db).await?;
    let Some(source_key) = key.filter(|_| matches!(source.visibility.as_str(), "private" | "shared" | "public")) else {
        return Err(ApiError::BadRequest(format!(
            "sample {id} has no file yet ({}); its host reads can be removed once it has",
            source.visibility
        )));
    };
    let pending: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM imports i JOIN samples s ON s.id = i.sample_id \
         WHERE s.owner_id = $1 AND i.host_of IS NOT NULL AND i.error IS NULL",
    )
    .bind(&user.id)
    .fetch_one(&state.db)
    .await?;
    if pending >= MAX_PENDING_COPIES {
        return Err(ApiError::Conflict(format!(
            "{pending} of your copies without host reads are still being written (at most \
             {MAX_PENDING_COPIES} wait at once); ask again when they are done"
        )));
    }
    let call = host_call(state, id, classification).await?;
    let filename = source.filename.clone().unwrap_or_else(|| "sample".into());
    let copy_name = host_free_name(&filename);
    let shown: Option<String> = sqlx::query_scalar("SELECT name FROM metadata WHERE sample_id = $1")
        .bind(id)
        .fetch_optional(&state.db)
        .await?
        .flatten();
    const SUFFIX: &str = " (host reads removed)";
    let base: String = shown.unwrap_or_else(|| filename.clone()).chars().take(255 - SUFFIX.len()).collect();
    let display = format!("{base}{SUFFIX}");
    let new_id = db::new_id();
    let import = Import {
        sample_id: new_id.clone(),
        upload_id: id.to_string(),
        r1_key: source_key,
        r2_key: None,
        r1_name: filename,
        r2_name: None,
        object_key: format!("samples/{new_id}/{}", key_name(&copy_name)),
        filename: copy_name.clone(),
        bucket: None,
        r1_etag: None,
        r2_etag: None,
        host_of: Some(call.classification.clone()),
        host_tax_ids: Some(serde_json::to_string(&call.tax_ids)?),
        host_readlevel_key: Some(call.readlevel_key),
    };
    let mut tx = begin_write(&state.db, Scope::User(&user.id)).await?;
    uploads::insert_sample(&mut tx, &new_id, &user.id, "importing", Some(&copy_name), None, None, None).await?;
    metadata::copy(&mut tx, id, &new_id, &display).await?;
    imports::record(&mut tx, &import).await?;
    let entry = audit::Entry::new("sample.host_removed", "sample", &new_id, &user.id).with(json!({
        "from": id,
        "classification": call.classification,
        "host_tax_ids": call.named,
    }));
    audit::record(&mut tx, Some(user), entry).await?;
    // The source's owner (and their organisation's audit) learns that its reads were copied.
    let entry = audit::Entry::new("sample.copied_without_host", "sample", id, &source.owner_id)
        .with(json!({"copy": new_id, "classification": call.classification}));
    audit::record(&mut tx, Some(user), entry).await?;
    tx.commit().await?;
    samples::get(state, caller, &new_id).await
}

/// The classification to remove the host's reads by: the one named (it must be of the sample,
/// finished, with read-level results and a host), else the newest that has them.
async fn host_call(state: &Store, sample: &str, named: Option<&str>) -> ApiResult<HostCall> {
    let rows: Vec<(String, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT id, readlevel_key, results_key FROM analyses WHERE sample_id = $1 AND analysis_type = 'classification' \
         AND complete = 1 AND success = 1 AND ($2 IS NULL OR id = $3) ORDER BY created_at DESC, id DESC LIMIT $4",
    )
    .bind(sample)
    .bind(named)
    .bind(named)
    .bind(LOOKED_AT)
    .fetch_all(&state.db)
    .await?;
    if rows.is_empty() {
        let running: Option<String> = sqlx::query_scalar(
            "SELECT id FROM analyses WHERE sample_id = $1 AND analysis_type = 'classification' AND complete = 0 \
             AND ($2 IS NULL OR id = $3) ORDER BY created_at DESC, id DESC LIMIT 1",
        )
        .bind(sample)
        .bind(named)
        .bind(named)
        .fetch_optional(&state.db)
        .await?;
        if let Some(c) = running {
            return Err(ApiError::Conflict(format!(
                "classification {c} of sample {sample} has not finished yet; the host's reads are found by it, \
                 so ask again once it has"
            )));
        }
        return Err(ApiError::BadRequest(match named {
            Some(c) => format!(
                "classification {c} is not a finished, successful classification of sample {sample}; \
                 name one of its own, or leave the classification out"
            ),
            None => format!(
                "sample {sample} has no finished classification yet; the host's reads are found by one, so \
                 classify it first"
            ),
        }));
    }
    let mut without_host = None;
    for (classification, readlevel_key, results_key) in rows {
        let (Some(readlevel_key), Some(results_key)) = (readlevel_key, results_key) else { continue };
        let Some(bytes) = state.storage.read(&results_key).await? else { continue };
        let Ok(results) = serde_json::from_slice::<ClassificationResults>(&bytes) else { continue };
        if results.host_tax_ids.is_empty() {
            without_host.get_or_insert(classification);
            continue;
        }
        let tree = mgds_formats::TaxTree::from_results(&results).map_err(|e| {
            ApiError::BadRequest(format!("classification {classification}'s results are unreadable: {e}"))
        })?;
        let host: Vec<mgds_formats::TaxId> =
            results.host_tax_ids.iter().filter_map(|t| mgds_formats::parse_tax_id(t)).collect();
        // A sample whose passing reads hold none of the host's is still copied: reads that did
        // not pass the confidence filter may have been called the host's, and they go too.
        let tax_ids: Vec<mgds_formats::TaxId> = tree.descendants(host).into_iter().collect();
        return Ok(HostCall { classification, readlevel_key, tax_ids, named: results.host_tax_ids });
    }
    Err(ApiError::BadRequest(match without_host {
        Some(c) => format!(
            "classification {c} of sample {sample} was made with a database that names no host taxa; an \
             administrator names them with `mgds db host NAME TAXID`, and the sample is classified again"
        ),
        None => format!("sample {sample}'s classifications have no read-level results to find the host's reads by"),
    }))
}

/// `S1.fastq.gz` → `S1.host_removed.fastq.gz`: the copy's file name (always gzipped), keeping
/// the sequence extension where the name has one.
pub fn host_free_name(filename: &str) -> String {
    const SEQUENCE: [&str; 6] = [".fa", ".fna", ".fasta", ".fq", ".fastq", ".fas"];
    let mut stem = filename;
    for ext in [".gz", ".gzip", ".bz2", ".xz", ".zst"] {
        if stem.len() > ext.len() && stem.to_ascii_lowercase().ends_with(ext) {
            stem = &stem[..stem.len() - ext.len()];
            break;
        }
    }
    let lower = stem.to_ascii_lowercase();
    match SEQUENCE.iter().find(|e| lower.ends_with(*e) && stem.len() > e.len()) {
        Some(e) => {
            let (name, ext) = stem.split_at(stem.len() - e.len());
            format!("{name}.host_removed{ext}.gz")
        }
        None => format!("{stem}.host_removed.gz"),
    }
}

#[cfg(test)]
mod tests {
    use super::host_free_name;

    #[test]
    fn the_copy_is_named_after_its_source() {
        assert_eq!(host_free_name("S1.fastq.gz"), "S1.host_removed.fastq.gz");
        assert_eq!(host_free_name("S1_R1.FQ"), "S1_R1.host_removed.FQ.gz");
        assert_eq!(host_free_name("contigs.fasta.xz"), "contigs.host_removed.fasta.gz");
        assert_eq!(host_free_name("reads"), "reads.host_removed.gz");
        assert_eq!(host_free_name(".fastq"), ".fastq.host_removed.gz");
    }
}
