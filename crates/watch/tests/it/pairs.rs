//! A read pair of a run folder through the upload pipeline: interleaved into one sample; a pause
//! mid-transfer cancels it and leaves the sample awaiting data and nothing staged; on resume the
//! upload is tried again and the sample arrives once.

use std::io::Write;

use mgds_watch::{Event, FolderConfig, Layout, Options};

use crate::*;

/// `n` FASTQ records of read `mate` with varied bases (gzip cannot shrink them to nothing).
fn mate_gz(n: usize, mate: u8) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15 ^ u64::from(mate);
    for i in 0..n {
        let seq: String = (0..100)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ['A', 'C', 'G', 'T'][(x % 4) as usize]
            })
            .collect();
        writeln!(e, "@pair.{i} {mate}:N:0:1\n{seq}\n+\n{}", "I".repeat(100)).unwrap();
    }
    e.finish().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pair_paused_mid_transfer_arrives_once_after_resume() {
    let svc = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("runs");
    let data = tmp.path().join("client");
    let run = root.join("240101_M00123_0007_000000000-BBBBB");
    write(
        &run.join("RunInfo.xml"),
        r#"<?xml version="1.0"?><RunInfo Version="2"><Run Id="240101_M00123_0007_000000000-BBBBB" Number="7"><Flowcell>X</Flowcell></Run></RunInfo>"#,
    );
    write(&run.join("SampleSheet.csv"), "[Data]\r\nSample_ID,Sample_Name,index\r\ngut-9,,ACGT\r\n");
    let calls = run.join("Data/Intensities/BaseCalls");
    for mate in [1, 2] {
        std::fs::create_dir_all(&calls).unwrap();
        std::fs::write(calls.join(format!("gut-9_S1_L001_R{mate}_001.fastq.gz")), mate_gz(4000, mate)).unwrap();
    }
    write(&run.join("RTAComplete.txt"), "");
    let mut cfg = FolderConfig::new(&root);
    cfg.layout = Layout::Illumina;
    // About 8 s for the pair at this pace: the pause comes mid-way.
    let options = Options { bandwidth: 60_000, ..quick(true) };
    let (w, mut ev) = watch(&svc, vec![cfg], options, &data).await;

    ev.wait(30, "the pair to start uploading", |e| matches!(e, Event::Uploading { sent, .. } if *sent > 0)).await;
    w.pause();
    ev.wait(10, "the pause", |e| matches!(e, Event::Paused)).await;
    // The transfer stopped: the sample waits for its file, and the interleaved file is gone.
    until(10, "the cancelled transfer to leave nothing staged", || async {
        std::fs::read_dir(data.join("watch-staging")).map(|mut d| d.next().is_none()).unwrap_or(true)
    })
    .await;
    assert_eq!(svc.names().await, names(&["gut-9 (awaiting data)"]));

    w.set_bandwidth(0);
    w.resume();
    ev.wait(30, "the sample after resume", |e| matches!(e, Event::SampleConfirmed { name, .. } if name == "gut-9"))
        .await;
    assert_eq!(svc.names().await, names(&["gut-9"]));
    assert_eq!(records_of(&svc, "gut-9").await, 2 * 4000, "both reads, interleaved, in one sample");
    w.stop().await.unwrap();
}
