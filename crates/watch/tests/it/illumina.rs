//! Illumina run folders written progressively: a MiSeq run (BaseCalls, v1 sheet) whose
//! RTAComplete.txt comes late, a NextSeq 2000 run beside it (on-board analysis folder, v2
//! sheet, two lanes) and a run that failed.

use std::path::Path;
use std::time::Duration;

use mgds_watch::{Event, FolderConfig, Layout, Queue};

use crate::*;

const CHUNK_PAUSE: Duration = Duration::from_millis(60);

fn run_info(id: &str) -> String {
    format!(
        r#"<?xml version="1.0"?><RunInfo Version="2"><Run Id="{id}" Number="1"><Flowcell>X</Flowcell></Run></RunInfo>"#
    )
}

fn sheet_v1(samples: &[&str]) -> String {
    let mut s =
        "[Header]\r\nIEMFileVersion,4\r\n\r\n[Reads]\r\n151\r\n151\r\n\r\n[Data]\r\nSample_ID,Sample_Name,index\r\n"
            .to_string();
    for id in samples {
        s.push_str(&format!("{id},,ACGT\r\n"));
    }
    s
}

async fn miseq_fastqs(run: &Path, samples: &[&str]) {
    let calls = run.join("Data/Intensities/BaseCalls");
    for (i, id) in samples.iter().enumerate() {
        for read in [1, 2] {
            let name = format!("{id}_S{}_L001_R{read}_001.fastq.gz", i + 1);
            write_slowly(&calls.join(name), &fastq_gz(id, 300), 4, CHUNK_PAUSE).await;
        }
    }
    write_slowly(&calls.join("Undetermined_S0_L001_R1_001.fastq.gz"), &fastq_gz("und", 50), 2, CHUNK_PAUSE).await;
}

async fn scenario(events: bool) {
    let svc = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("runs");
    std::fs::create_dir_all(&root).unwrap();
    let data = tmp.path().join("client");
    let mut cfg = FolderConfig::new(&root);
    cfg.layout = Layout::Illumina;
    cfg.tags = vec!["sequencer".into()];
    let (w, mut ev) = watch(&svc, vec![cfg], quick(events), &data).await;

    // MiSeq: sheet and files first; RTAComplete.txt only at the end.
    let miseq = root.join("230101_M00123_0001_000000000-AAAAA");
    write(&miseq.join("RunInfo.xml"), &run_info("230101_M00123_0001_000000000-AAAAA"));
    write(&miseq.join("RunParameters.xml"), "<RunParameters/>");
    write(&miseq.join("SampleSheet.csv"), &sheet_v1(&["ecoli-1", "kleb-2"]));
    miseq_fastqs(&miseq, &["ecoli-1", "kleb-2"]).await;

    // A failed NovaSeq run beside it: complete files, an error status.
    let failed = root.join("230103_A00123_0003_BHXXXXXX");
    write(&failed.join("RunInfo.xml"), &run_info("230103_A00123_0003_BHXXXXXX"));
    write(&failed.join("SampleSheet.csv"), &sheet_v1(&["bad-1"]));
    write_slowly(
        &failed.join("Data/Intensities/BaseCalls/bad-1_S1_L001_R1_001.fastq.gz"),
        &fastq_gz("bad", 100),
        2,
        CHUNK_PAUSE,
    )
    .await;
    write(
        &failed.join("RunCompletionStatus.xml"),
        "<RunCompletionStatus><CompletionStatus>ExceptionEndedEarly</CompletionStatus><ErrorDescription>Fluidics failure</ErrorDescription></RunCompletionStatus>",
    );

    // Every MiSeq file settles, but without its marker the run is not uploaded.
    let calls = miseq.join("Data/Intensities/BaseCalls");
    for f in ["ecoli-1_S1_L001_R1_001.fastq.gz", "kleb-2_S2_L001_R2_001.fastq.gz"] {
        let p = std::fs::canonicalize(calls.join(f)).unwrap();
        ev.wait(20, "the MiSeq files to settle", |e| matches!(e, Event::FileSettled { path, .. } if *path == p)).await;
    }
    ev.wait(20, "the failed run to be reported", |e| {
        matches!(e, Event::RunFailed { run_id, reason, .. } if run_id == "230103_A00123_0003_BHXXXXXX" && reason.contains("Fluidics"))
    })
    .await;
    assert!(svc.names().await.is_empty(), "nothing is uploaded before a run is complete");

    // A NextSeq 2000 run: sequencing done early, on-board analysis (two lanes, v2 sheet)
    // finishing later.
    let nextseq = root.join("230102_VH00123_2_AAAAAAAA");
    write(&nextseq.join("RunInfo.xml"), &run_info("230102_VH00123_2_AAAAAAAA"));
    write(
        &nextseq.join("SampleSheet.csv"),
        "[Header]\nFileFormatVersion,2\n[BCLConvert_Settings]\nAdapterRead1,CTGT\n[BCLConvert_Data]\nLane,Sample_ID,Index\n1,p-1,AAA\n2,p-1,AAA\n1,p-2,CCC\n2,p-2,CCC\n",
    );
    write(&nextseq.join("RTAComplete.txt"), "");
    write(&nextseq.join("CopyComplete.txt"), "");
    let fastq = nextseq.join("Analysis/1/Data/fastq");
    for (i, id) in ["p-1", "p-2"].iter().enumerate() {
        for lane in [1, 2] {
            for read in [1, 2] {
                let name = format!("{id}_S{}_L00{lane}_R{read}_001.fastq.gz", i + 1);
                write_slowly(&fastq.join(name), &fastq_gz(&format!("{id}.L{lane}"), 200), 3, CHUNK_PAUSE).await;
            }
        }
    }
    // The MiSeq run completes.
    write(&miseq.join("RTAComplete.txt"), "");
    ev.wait(30, "the MiSeq run to be uploaded", |e| {
        matches!(e, Event::RunUploaded { run_id, samples: 2, .. } if run_id == "230101_M00123_0001_000000000-AAAAA")
    })
    .await;
    assert_eq!(svc.names().await, names(&["ecoli-1", "kleb-2"]));
    // The analysis folder's marker comes last.
    write(&nextseq.join("Analysis/1/CopyComplete.txt"), "");
    until(30, "the NextSeq samples", || async { svc.names().await == names(&["ecoli-1", "kleb-2", "p-1", "p-2"]) })
        .await;
    ev.wait(
        20,
        "the NextSeq run to be uploaded",
        |e| matches!(e, Event::RunUploaded { run_id, samples: 2, .. } if run_id == "230102_VH00123_2_AAAAAAAA"),
    )
    .await;
    // R1 and R2 interleaved, both lanes joined.
    assert_eq!(records_of(&svc, "p-1").await, 2 * 2 * 200);
    assert_eq!(records_of(&svc, "ecoli-1").await, 2 * 300);
    w.stop().await.unwrap();

    let q = Queue::open(&data).await.unwrap();
    let runs = q.runs().await.unwrap();
    let state = |id: &str| runs.iter().find(|r| r.run_id == id).map(|r| r.state.clone());
    assert_eq!(state("230101_M00123_0001_000000000-AAAAA").as_deref(), Some("uploaded"));
    assert_eq!(state("230103_A00123_0003_BHXXXXXX").as_deref(), Some("failed"));
    let samples = q.samples().await.unwrap();
    assert_eq!(samples.len(), 4);
    assert!(samples.iter().all(|s| s.state == mgds_watch::State::Confirmed && s.sample_id.is_some()));
    q.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn illumina_runs_with_events() {
    scenario(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn illumina_runs_polling_only() {
    scenario(false).await;
}
