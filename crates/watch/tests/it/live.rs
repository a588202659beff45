//! A live Nanopore run against a service that classifies: batch files appear per barcode over
//! time and each becomes a sample the service classifies; the run dashboard sums each barcode's
//! classified batches as they come, an alert fires once for the barcode that crosses its rule,
//! and all of it is the same after the watcher restarts mid-run.

use std::io::{BufRead, Write};
use std::path::Path;

use mgds_watch::live::LiveRun;
use mgds_watch::{AlertRule, Event, FolderConfig, Layout, NanoporeGrouping, Queue};

use crate::*;

/// The demo reads (`assets/demo`) with the taxon each was simulated from.
fn demo_reads() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo");
    let truth: std::collections::HashMap<String, String> = std::fs::read_to_string(dir.join("truth.tsv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), f[1].to_string())
        })
        .collect();
    let gz = flate2::read::MultiGzDecoder::new(std::fs::File::open(dir.join("reads.fastq.gz")).unwrap());
    let lines: Vec<String> = std::io::BufReader::new(gz).lines().map(Result::unwrap).collect();
    lines
        .chunks(4)
        .map(|r| {
            let name = r[0][1..].split_whitespace().next().unwrap().to_string();
            (truth[&name].clone(), r.join("\n") + "\n")
        })
        .collect()
}

fn gz(records: &[&str]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    for r in records {
        e.write_all(r.as_bytes()).unwrap();
    }
    e.finish().unwrap()
}

async fn runs(data: &Path) -> Vec<LiveRun> {
    let q = Queue::open(data).await.unwrap();
    let runs = q.live_runs("species", 5).await.unwrap();
    q.close().await;
    runs
}

/// A MinKNOW output folder watched with one sample per batch file, under `tmp`: the folder,
/// the watcher's data folder, and its configuration.
fn per_file_run_folder(tmp: &Path) -> (std::path::PathBuf, std::path::PathBuf, FolderConfig) {
    let root = tmp.join("minknow");
    std::fs::create_dir_all(&root).unwrap();
    let mut cfg = FolderConfig::new(&root);
    cfg.layout = Layout::Nanopore;
    cfg.nanopore = NanoporeGrouping::PerFile;
    (root, tmp.join("client"), cfg)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_run_grows_on_the_dashboard_and_raises_one_alert() {
    let svc = Service::start_classifying().await;
    let tmp = tempfile::tempdir().unwrap();
    let (root, data, cfg) = per_file_run_folder(tmp.path());
    let mut options = quick(true);
    options.alerts = vec![
        "Escherichia coli >= 5%".parse::<AlertRule>().unwrap(),
        "Vibrio cholerae >= 100000 reads".parse().unwrap(),
    ];
    let (w, mut ev) = watch(&svc, vec![cfg.clone()], options.clone(), &data).await;

    // barcode01 gets every demo read over three batches; barcode02 all but E. coli over two.
    let reads = demo_reads();
    let all: Vec<&str> = reads.iter().map(|(_, r)| r.as_str()).collect();
    let no_coli: Vec<&str> = reads.iter().filter(|(t, _)| t != "562").map(|(_, r)| r.as_str()).collect();
    let batch = |records: &[&str], of: usize, i: usize| -> Vec<u8> {
        let mine: Vec<&str> = records.iter().enumerate().filter(|(k, _)| k % of == i).map(|(_, r)| *r).collect();
        gz(&mine)
    };
    let run = root.join("20240301_1000_MN1_FAQ1_abcd1234");
    let file = |bc: &str, i: usize| run.join(format!("fastq_pass/{bc}/FAQ1_pass_{bc}_abcd1234_{i}.fastq.gz"));
    let barcode =
        |runs: &[LiveRun], name: &str| runs.first().and_then(|r| r.groups.iter().find(|g| g.name == name).cloned());

    write_slowly(&file("barcode01", 0), &batch(&all, 3, 0), 2, Duration::from_millis(30)).await;
    until(120, "the first batch on the dashboard, classified", || async {
        barcode(&runs(&data).await, "barcode01").is_some_and(|g| g.classified == 1)
    })
    .await;
    let first = barcode(&runs(&data).await, "barcode01").unwrap();
    assert_eq!((first.batches, first.uploaded, first.series.len()), (1, 1, 1), "{first:?}");

    for i in 1..3 {
        write_slowly(&file("barcode01", i), &batch(&all, 3, i), 2, Duration::from_millis(30)).await;
    }
    for i in 0..2 {
        write_slowly(&file("barcode02", i), &batch(&no_coli, 2, i), 2, Duration::from_millis(30)).await;
    }
    until(180, "every batch classified", || async {
        let r = runs(&data).await;
        barcode(&r, "barcode01").is_some_and(|g| g.classified == 3)
            && barcode(&r, "barcode02").is_some_and(|g| g.classified == 2)
    })
    .await;
    let r = runs(&data).await;
    assert_eq!(r.len(), 1);
    assert!(!r[0].finished, "no final summary yet");
    let b1 = barcode(&r, "barcode01").unwrap();
    let b2 = barcode(&r, "barcode02").unwrap();
    // The cumulative chart: a point per classified batch, the reads growing to the whole.
    assert_eq!(b1.reads, all.len() as u64);
    assert_eq!(b2.reads, no_coli.len() as u64);
    assert_eq!(b1.series.len(), 3);
    assert!(b1.series.windows(2).all(|w| w[0].reads < w[1].reads && w[0].batches + 1 == w[1].batches));
    assert_eq!(b1.series.last().unwrap().reads, b1.reads);
    let coli = b1.taxa.iter().position(|t| t.name == "Escherichia coli").expect("E. coli among the top taxa");
    // Each taxon in its own colour, as every chart draws it.
    let ids: Vec<&str> = b1.taxa.iter().map(|t| t.tax_id.as_str()).collect();
    let want: Vec<String> = mgds_api::palette::taxon_colours(&ids).into_iter().map(mgds_api::palette::hex).collect();
    assert_eq!(b1.colours, want);
    let share = b1.series.last().unwrap().percent[coli];
    assert!((share - b1.taxa[coli].reads as f64 * 100.0 / b1.reads as f64).abs() < 1e-9);
    assert!(share > 5.0, "{share}");
    assert!(b2.taxa.iter().all(|t| t.name != "Escherichia coli" || t.reads * 100 < b2.reads), "{b2:?}");

    // One alert, for the barcode whose batches together crossed the rule.
    ev.wait(30, "the alert", |e| matches!(e, Event::Alert(_))).await;
    let alerts: Vec<_> =
        ev.drain().iter().filter_map(|e| if let Event::Alert(a) = e { Some(a.clone()) } else { None }).collect();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert_eq!(
        (alerts[0].taxon.as_str(), alerts[0].label.as_str()),
        ("Escherichia coli", "run 20240301_1000_MN1_FAQ1_abcd1234, barcode01")
    );
    assert_eq!(b1.alerts.len(), 1);
    assert!(b2.alerts.is_empty());

    // The watcher restarts mid-run: the dashboard is the same, and the alert does not fire again.
    w.stop().await.unwrap();
    let before = runs(&data).await;
    let (w, mut ev) = watch(&svc, vec![cfg], options, &data).await;
    assert_eq!(runs(&data).await[0].groups, before[0].groups);
    write(
        &run.join("final_summary_FAQ1_abcd1234.txt"),
        "instrument=MN1\nsample_id=live\nprotocol_run_id=abcd1234\nfastq_files_in_final_dest=5\n",
    );
    until(30, "the run to finish", || async { runs(&data).await.first().is_some_and(|r| r.finished) }).await;
    let after = runs(&data).await;
    assert_eq!(after[0].groups, before[0].groups);
    assert_eq!(after[0].run_id, "abcd1234", "the final summary names the run");
    // A batch classified after the final summary (the run's id changed meanwhile) counts to its
    // barcode, and the barcode's alert is not raised again.
    write_slowly(&file("barcode01", 3), &batch(&all, 3, 0), 2, Duration::from_millis(30)).await;
    until(180, "the late batch classified", || async {
        barcode(&runs(&data).await, "barcode01").is_some_and(|g| g.classified == 4)
    })
    .await;
    assert_eq!(barcode(&runs(&data).await, "barcode01").unwrap().alerts.len(), 1);
    assert!(!ev.drain().iter().any(|e| matches!(e, Event::Alert(_))), "an alert fires once");
    w.stop().await.unwrap();
}

/// A sample made elsewhere (uploaded from the app's window) and handed to a watcher that
/// watches no folder: its classification is followed and the rules for every folder checked,
/// one alert per rule it crosses, once, even after a restart; it stays out of the watched
/// folders' lists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sample_uploaded_elsewhere_is_checked_against_the_rules_for_every_folder() {
    let svc = Service::start_classifying().await;
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("client");
    let mut options = quick(false);
    options.alerts = vec![
        "Escherichia coli >= 5%".parse::<AlertRule>().unwrap(),
        "Vibrio cholerae >= 100000 reads".parse().unwrap(),
    ];
    let (w, mut ev) = watch(&svc, Vec::new(), options.clone(), &data).await;

    let reads = demo_reads();
    let all: Vec<&str> = reads.iter().map(|(_, r)| r.as_str()).collect();
    let file = tmp.path().join("dropped.fastq.gz");
    std::fs::write(&file, gz(&all)).unwrap();
    let source = mgds_upload::Source::Single(file.clone());
    let sample = mgds_upload::Upload::new(&svc.client(), source.clone()).send().await.expect("the upload");
    let id = sample.uri.rsplit('/').next().unwrap().to_string();
    w.follow(&id, "dropped.fastq.gz", &source).await.unwrap();

    ev.wait(180, "the alert", |e| matches!(e, Event::Alert(_))).await;
    let alerts: Vec<_> =
        ev.drain().iter().filter_map(|e| if let Event::Alert(a) = e { Some(a.clone()) } else { None }).collect();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert_eq!(
        (alerts[0].taxon.as_str(), alerts[0].label.as_str(), alerts[0].sample_id.as_deref()),
        ("Escherichia coli", "dropped.fastq.gz", Some(id.as_str()))
    );

    // Handed over again after a restart: it is the same sample, already classified, so it is
    // not followed again and its alert stays the one.
    w.stop().await.unwrap();
    let (w, _) = watch(&svc, Vec::new(), options, &data).await;
    w.follow(&id, "dropped.fastq.gz", &source).await.unwrap();
    w.stop().await.unwrap();
    let q = Queue::open(&data).await.unwrap();
    let followed = q.classifications(None).await.unwrap();
    assert_eq!(followed.len(), 1, "{followed:?}");
    assert_eq!(followed[0].1.as_ref().map(|c| c.state.as_str()), Some("done"), "{followed:?}");
    assert_eq!(q.alerts(10).await.unwrap().len(), 1);
    let (listed, total) = q.recent_samples(10).await.unwrap();
    assert!(listed.is_empty() && total == 0, "a sample of no folder is not a watched folder's: {listed:?}");
    q.close().await;
}

/// The dashboard learns of a batch's classification when the service stores it, not at the
/// follower's next look: with looks 10 s apart, the batch shows classified within a few seconds
/// of its upload's confirmation (the follower waits on the classification with `?wait=`).
#[tokio::test]
async fn a_classified_batch_reaches_the_dashboard_before_the_next_look() {
    let svc = Service::start_classifying().await;
    let tmp = tempfile::tempdir().unwrap();
    let (root, data, cfg) = per_file_run_folder(tmp.path());
    let mut options = quick(true);
    options.poll_interval = Duration::from_secs(10);
    let (w, mut ev) = watch(&svc, vec![cfg], options, &data).await;
    let reads = demo_reads();
    let all: Vec<&str> = reads.iter().map(|(_, r)| r.as_str()).collect();
    let file =
        root.join("20240301_1000_MN1_FAQ1_abcd1234/fastq_pass/barcode01/FAQ1_pass_barcode01_abcd1234_0.fastq.gz");
    write_slowly(&file, &gz(&all), 2, Duration::from_millis(30)).await;
    ev.wait(60, "the batch's upload confirmed", |e| matches!(e, Event::SampleConfirmed { .. })).await;
    let confirmed = Instant::now();
    until(60, "the batch on the dashboard, classified", || async {
        runs(&data).await.first().is_some_and(|r| r.groups.iter().any(|g| g.name == "barcode01" && g.classified == 1))
    })
    .await;
    let took = confirmed.elapsed();
    eprintln!("classified on the dashboard {took:?} after the upload was confirmed");
    assert!(took < Duration::from_secs(5), "{took:?}: the follower waited for its next look");
    w.stop().await.unwrap();
}
