//! Samples for the benchmarks: `n` small FASTQ files (one read each, named as an Illumina run
//! names them, tagged by plate) uploaded through the real API, sixteen at a time.

use std::path::Path;

use anyhow::Result;
use futures::StreamExt;

/// Uploads `n` samples with `client`, writing each file into `files` first.
pub async fn samples(client: &mgds_client::Client, files: &Path, n: usize) -> Result<()> {
    std::fs::create_dir_all(files)?;
    let results = futures::stream::iter(0..n)
        .map(|i| {
            let (client, files) = (client.clone(), files.to_path_buf());
            async move {
                let path = files.join(format!("isolate-{i:05}_S{}_L001_R1_001.fastq", i % 96 + 1));
                let seq: String = (0..60).map(|j| b"ACGT"[(i * 7 + j * 3 + j / 5) % 4] as char).collect();
                std::fs::write(&path, format!("@read{i}\n{seq}\n+\n{}\n", "I".repeat(seq.len())))?;
                client.samples().upload(&path).tag(format!("plate-{}", i % 20 + 1)).send().await?;
                std::fs::remove_file(&path)?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    results.into_iter().collect::<Result<Vec<_>>>()?;
    Ok(())
}
