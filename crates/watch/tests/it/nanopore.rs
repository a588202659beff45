//! MinKNOW output written progressively: batch files per barcode appearing over time, failed
//! reads and temporary files to skip, the final summary arriving before its last file, and a
//! second run (no barcodes) beside the first.

use std::time::Duration;

use mgds_watch::{Event, FolderConfig, Layout, NanoporeGrouping};

use crate::*;

const PAUSE: Duration = Duration::from_millis(40);

fn summary(sample: &str, run: &str, files: usize) -> String {
    format!(
        "instrument=MN12345\nsample_id={sample}\nprotocol_run_id={run}\nfastq_files_in_final_dest={files}\nfast5_files_in_final_dest=0\n"
    )
}

async fn scenario(events: bool) {
    let svc = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("minknow");
    std::fs::create_dir_all(&root).unwrap();
    let data = tmp.path().join("client");
    let mut cfg = FolderConfig::new(&root);
    cfg.layout = Layout::Nanopore;
    cfg.nanopore = NanoporeGrouping::PerBarcode;
    let (w, mut ev) = watch(&svc, vec![cfg], quick(events), &data).await;

    let run = root.join("exp1/iso7/20240101_1200_MN12345_FAB12345_0a1b2c3d");
    let batch = |bc: &str, i: usize| run.join(format!("fastq_pass/{bc}/FAB12345_pass_{bc}_0a1b2c3d_{i}.fastq.gz"));
    for i in 0..3 {
        write_slowly(&batch("barcode01", i), &fastq_gz(&format!("bc01.{i}"), 100), 3, PAUSE).await;
        if i < 2 {
            write_slowly(&batch("barcode02", i), &fastq_gz(&format!("bc02.{i}"), 100), 3, PAUSE).await;
        }
    }
    write_slowly(&batch("unclassified", 0), &fastq_gz("uncl", 20), 1, PAUSE).await;
    write_slowly(
        &run.join("fastq_fail/barcode01/FAB12345_fail_barcode01_0a1b2c3d_0.fastq.gz"),
        &fastq_gz("fail", 20),
        1,
        PAUSE,
    )
    .await;
    write(&run.join("fastq_pass/barcode01/tmp/partial.fastq"), "@x\nAC");
    write(&run.join("queued_reads/q.fastq"), "@q\nAC\n+\nII\n");
    // The summary counts one more file than is there yet (8: 6 pass + 1 fail + 1 to come).
    write(&run.join("final_summary_FAB12345_0a1b2c3d.txt"), &summary("iso7", "0a1b2c3d-run", 8));
    ev.wait(
        20,
        "the run to wait for its last file",
        |e| matches!(e, Event::RunWaiting { reason, .. } if reason.contains("8 FASTQ files; 7 found")),
    )
    .await;
    assert!(svc.names().await.is_empty(), "nothing before the run is done");
    write_slowly(&batch("barcode02", 2), &fastq_gz("bc02.2", 100), 3, PAUSE).await;
    until(30, "the barcode samples", || async { svc.names().await == names(&["iso7_barcode01", "iso7_barcode02"]) })
        .await;
    assert_eq!(records_of(&svc, "iso7_barcode01").await, 300);

    // A second run beside the first, without barcodes.
    let run2 = root.join("exp1/iso8/20240102_0900_MN12345_FAB67890_99887766");
    for i in 0..2 {
        write_slowly(
            &run2.join(format!("fastq_pass/FAB67890_pass_99887766_{i}.fastq.gz")),
            &fastq_gz("r2", 50),
            2,
            PAUSE,
        )
        .await;
    }
    write(&run2.join("final_summary_FAB67890_99887766.txt"), &summary("iso8", "99887766-run", 2));
    until(30, "the second run's sample", || async {
        svc.names().await == names(&["iso7_barcode01", "iso7_barcode02", "iso8"])
    })
    .await;
    ev.wait(
        20,
        "the second run to be uploaded",
        |e| matches!(e, Event::RunUploaded { run_id, samples: 1, .. } if run_id == "99887766-run"),
    )
    .await;
    assert_eq!(records_of(&svc, "iso8").await, 100);
    w.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nanopore_runs_with_events() {
    scenario(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nanopore_runs_polling_only() {
    scenario(false).await;
}

/// One sample per batch file, as each settles; plain files in `files` layout too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_file_samples_and_plain_files() {
    let svc = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("in");
    let data = tmp.path().join("client");
    let run = root.join("20240101_1200_MN1_FAB1_aa");
    write_slowly(&run.join("fastq_pass/barcode05/b05_0.fastq.gz"), &fastq_gz("b", 10), 2, PAUSE).await;
    write_slowly(&root.join("loose/isolate_12.fastq.gz"), &fastq_gz("l", 10), 2, PAUSE).await;
    write(&root.join("notes.txt"), "not a sequence file");
    let mut cfg = FolderConfig::new(&root);
    cfg.nanopore = NanoporeGrouping::PerFile;
    cfg.exclude = vec!["**/skip_*".into()];
    write_slowly(&root.join("loose/skip_me.fastq.gz"), &fastq_gz("s", 10), 1, PAUSE).await;
    let (w, _ev) = watch(&svc, vec![cfg], quick(true), &data).await;
    until(30, "the per-file samples", || async { svc.names().await == names(&["b05_0", "isolate_12"]) }).await;
    write_slowly(&run.join("fastq_pass/barcode05/b05_1.fastq.gz"), &fastq_gz("b", 10), 2, PAUSE).await;
    until(30, "the new batch file", || async { svc.names().await == names(&["b05_0", "b05_1", "isolate_12"]) }).await;
    w.stop().await.unwrap();
    // Each file went with the SHA-256 the watcher took when it settled, which the service's
    // store checked as the bytes arrived.
    let mut declared: Vec<(i64, Option<String>)> =
        sqlx::query_as("SELECT size, sha256 FROM uploads WHERE confirmed_id IS NOT NULL ORDER BY size")
            .fetch_all(&svc.state.db)
            .await
            .unwrap();
    declared.sort();
    let mut want: Vec<(i64, Option<String>)> = ["b", "b", "l"]
        .iter()
        .map(|p| {
            use sha2::Digest;
            let gz = fastq_gz(p, 10);
            (gz.len() as i64, Some(hex::encode(sha2::Sha256::digest(&gz))))
        })
        .collect();
    want.sort();
    assert_eq!(declared, want);
}

/// A batch file that stays empty for a while (a tool that opens its output first and writes it
/// all at the end) is not taken for a finished empty file: it becomes a sample once it has its
/// content, whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_file_waits_for_its_content() {
    let svc = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("minknow");
    let data = tmp.path().join("client");
    let run = root.join("20240101_1200_MN1_FAB1_aa");
    let file = run.join("fastq_pass/barcode03/b03_0.fastq.gz");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, b"").unwrap();
    let mut cfg = FolderConfig::new(&root);
    cfg.nanopore = NanoporeGrouping::PerFile;
    let (w, mut ev) = watch(&svc, vec![cfg], quick(true), &data).await;
    ev.wait(10, "the empty file to be seen", |e| matches!(e, Event::FileSeen { path } if *path == file)).await;
    // A file that does not settle shows only over time: many polling passes and minimum ages.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        !ev.drain().iter().any(|e| matches!(e, Event::FileSettled { .. } | Event::SampleQueued { .. })),
        "an empty file does not settle: {:?}",
        ev.seen
    );
    std::fs::write(&file, fastq_gz("b03", 25)).unwrap();
    until(30, "the batch's sample", || async { svc.names().await == names(&["b03_0"]) }).await;
    assert_eq!(records_of(&svc, "b03_0").await, 25);
    w.stop().await.unwrap();
}
