//! Stopping the watcher at random points (mid-transfer, mid-settle) and starting it again:
//! every sample ends up on the service exactly once. The hard kill of a process is tested
//! with the `mgds` command (crates/cli); this is the in-process part, many times over.

use std::time::Duration;

use mgds_watch::{FolderConfig, Queue, State};
use rand::{RngExt, SeedableRng};

use crate::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopped_at_random_points_every_file_arrives_once() {
    let svc = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("drop");
    let data = tmp.path().join("client");
    let mut expected = Vec::new();
    for i in 0..10 {
        let name = format!("iso_{i:02}");
        write(&root.join(format!("{name}.fastq")), &String::from_utf8(fastq_plain(&name, 2000)).unwrap());
        expected.push(name);
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(6);
    let mut options = quick(true);
    // Slow enough that stops land inside transfers.
    options.bandwidth = 2_000_000;
    let mut rounds = 0;
    loop {
        rounds += 1;
        let (w, _ev) = watch(&svc, vec![FolderConfig::new(&root)], options.clone(), &data).await;
        if rounds > 12 {
            until(40, "every sample", || async {
                svc.names().await == names(&expected.iter().map(String::as_str).collect::<Vec<_>>())
            })
            .await;
            w.stop().await.unwrap();
            break;
        }
        tokio::time::sleep(Duration::from_millis(rng.random_range(20..500))).await;
        w.stop().await.unwrap();
    }
    let want: Vec<&str> = expected.iter().map(String::as_str).collect();
    assert_eq!(svc.names().await, names(&want));
    let q = Queue::open(&data).await.unwrap();
    assert!(q.all_files().await.unwrap().iter().all(|f| f.state == State::Confirmed));
    q.close().await;
}

fn fastq_plain(prefix: &str, n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        out.extend_from_slice(format!("@{prefix}.{i}\n{}\n+\n{}\n", "ACGT".repeat(25), "I".repeat(100)).as_bytes());
    }
    out
}
