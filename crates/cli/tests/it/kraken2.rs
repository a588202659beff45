//! A Kraken 2 database a lab already has, registered with `mgds db import-kraken2` and used by
//! `mgds serve`: the folder is built here with Debian's `kraken2-build` (one library file per
//! genome, as labs add assemblies), and every read of a sample classified through the service
//! gets the taxon `kraken2 --db` gives it. The abundances come labelled with what they measure,
//! and a folder without its references gives read counts, not a wrong genome-copy abundance.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::engines::{demo_reads, finished_primary};
use crate::{Http, MGDS, Serve, create_user, ok};

fn demo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo")
}

fn gunzip(bytes: &[u8]) -> String {
    let mut s = String::new();
    flate2::read::MultiGzDecoder::new(bytes).read_to_string(&mut s).unwrap();
    s
}

/// Builds a Kraken 2 database of the demo genomes in `db` with `kraken2-build`: one library
/// file per genome, headers carrying `kraken:taxid`.
fn build_kraken2(work: &Path, db: &Path) {
    let genomes = gunzip(&std::fs::read(demo().join("genomes.fa.gz")).unwrap());
    let map = std::fs::read_to_string(demo().join("seqid2taxid.tsv")).unwrap();
    let taxid_genome: std::collections::HashMap<&str, (&str, &str)> = map
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0], (f[1], f[2]))
        })
        .collect();
    let mut files: std::collections::BTreeMap<String, String> = Default::default();
    for record in genomes.split('>').filter(|r| !r.is_empty()) {
        let (header, seq) = record.split_once('\n').unwrap();
        let id = header.split_whitespace().next().unwrap();
        let (taxid, genome) = taxid_genome[id];
        let f = files.entry(genome.to_string()).or_default();
        f.push_str(&format!(">{id}|kraken:taxid|{taxid}\n{seq}"));
    }
    std::fs::create_dir_all(db.join("taxonomy")).unwrap();
    for f in ["nodes.dmp", "names.dmp"] {
        std::fs::copy(demo().join("taxonomy").join(f), db.join("taxonomy").join(f)).unwrap();
    }
    for (genome, text) in &files {
        let path = work.join(format!("{genome}.fa"));
        std::fs::write(&path, text).unwrap();
        ok(&Command::new("kraken2-build")
            .args(["--db"])
            .arg(db)
            .args(["--add-to-library"])
            .arg(&path)
            .arg("--no-masking")
            .output()
            .expect("kraken2-build is installed (the test script installs Debian's kraken2)"));
    }
    ok(&Command::new("kraken2-build").args(["--db"]).arg(db).args(["--build", "--threads", "2"]).output().unwrap());
}

/// Kraken 2's call for each read, in order (0: unclassified); its report goes to `out`.report.
fn kraken2_calls(db: &Path, reads: &Path, out: &Path) -> Vec<u64> {
    ok(&Command::new("kraken2")
        .args(["--db"])
        .arg(db)
        .args(["--threads", "2", "--gzip-compressed", "--output"])
        .arg(out)
        .arg("--report")
        .arg(out.with_extension("report"))
        .arg(reads)
        .output()
        .unwrap());
    std::fs::read_to_string(out).unwrap().lines().map(|l| l.split('\t').nth(2).unwrap().parse().unwrap()).collect()
}

/// The service's call for each read of classification `id`, from its read-level TSV. A call
/// that failed the minimum hit groups (`Passed Filter` F) keeps its taxon in the TSV; Kraken 2
/// voids it, so it counts as unclassified here.
fn service_calls(c: &Http, url: &str, key: &str, id: &str) -> Vec<u64> {
    let (s, rl) = c.json("GET", &format!("{url}/api/v1/classifications/{id}/readlevel"), key, None);
    assert_eq!(s, 200, "{rl}");
    let body =
        c.rt.block_on(async { c.client.get(rl["url"].as_str().unwrap()).send().await.unwrap().bytes().await.unwrap() });
    gunzip(&body)
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            if f[3] == "F" { 0 } else { f[0].parse().unwrap() }
        })
        .collect()
}

fn mgds_db(data: &Path, args: &[&str]) -> std::process::Output {
    Command::new(MGDS).arg("--data-dir").arg(data).arg("db").args(args).env("NO_COLOR", "1").output().unwrap()
}

#[test]
fn a_kraken2_folder_is_used_in_place_and_gives_kraken2s_call_for_every_read() {
    let dir = tempfile::tempdir().unwrap();
    let k2 = dir.path().join("k2db");
    build_kraken2(dir.path(), &k2);
    let reads = dir.path().join("reads.fastq.gz");
    std::fs::write(&reads, demo_reads()).unwrap();
    let expected = kraken2_calls(&k2, &reads, &dir.path().join("kraken2.out"));

    // A wrong folder is refused, naming what is missing; nothing is installed.
    let data = dir.path().join("data");
    let bad = dir.path().join("not-a-db");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::copy(k2.join("opts.k2d"), bad.join("opts.k2d")).unwrap();
    let out = mgds_db(&data, &["import-kraken2", bad.to_str().unwrap(), "--name", "bad"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("hash.k2d") && err.contains("not a Kraken 2 database"), "{err}");
    assert!(!data.join("databases/bad").exists());

    // Registered in place: the genomes are found from its library (one file per genome).
    let stdout = ok(&mgds_db(&data, &["import-kraken2", k2.to_str().unwrap(), "--name", "lab-k2", "--default"]));
    assert!(stdout.contains("Escherichia coli") && stdout.contains("mean_length_bp"), "{stdout}");
    let list: Value = serde_json::from_str(&ok(&mgds_db(&data, &["list", "--json"]))).unwrap();
    let entry = list.as_array().unwrap().iter().find(|e| e["folder"] == json!("lab-k2")).expect("listed");
    assert_eq!(entry["format"], json!("kraken2"));
    assert_eq!(entry["file"].as_str().unwrap(), std::fs::canonicalize(&k2).unwrap().to_str().unwrap());
    // The Klebsiella chromosome and its plasmid, in one library file, are one genome.
    let kp = entry["genomes"].as_array().unwrap().iter().find(|g| g["tax_id"] == json!(573)).unwrap();
    assert_eq!((kp["genomes"].as_u64(), kp["sequences"].as_u64()), (Some(1), Some(2)), "{kp}");
    // Its mean length is the genome's, chromosome and plasmid together.
    let genomes = gunzip(&std::fs::read(demo().join("genomes.fa.gz")).unwrap());
    let kp_bases: usize = genomes
        .split('>')
        .filter(|r| r.starts_with("Klebsiella_pneumoniae_HS11286."))
        .map(|r| r.split_once('\n').unwrap().1.bytes().filter(u8::is_ascii_alphabetic).count())
        .sum();
    assert_eq!(kp["mean_length"].as_u64(), Some(kp_bases as u64), "{kp}");
    // The same folder twice would be one job under two names: refused, naming the first.
    let again = mgds_db(&data, &["import-kraken2", k2.to_str().unwrap(), "--name", "lab-k2-again"]);
    assert!(!again.status.success());
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("installed already") && err.contains("lab-k2"), "{err}");
    assert!(!data.join("databases/lab-k2-again").exists());
    // Nothing was written into the Kraken 2 folder.
    let names: Vec<String> =
        std::fs::read_dir(&k2).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.contains("kmer")), "{names:?}");

    let serve = Serve::start(&data, &["--no-demo"]);
    let key = create_user(&data, "lab@example.org");
    ok(&Command::new(MGDS).args(["--base-url", &serve.url, "--api-key", &key, "upload"]).arg(&reads).output().unwrap());
    let c = Http::new();
    let (id, a) = finished_primary(&c, &serve.url, &key);
    assert_eq!(a["success"], json!(true), "{a}");
    let got = service_calls(&c, &serve.url, &key, &id);
    assert_eq!(got.len(), expected.len());
    let differ: Vec<usize> = (0..got.len()).filter(|&i| got[i] != expected[i]).collect();
    if !differ.is_empty() {
        let out = std::fs::read_to_string(dir.path().join("kraken2.out")).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        let shown: Vec<String> =
            differ.iter().take(5).map(|&i| format!("read {i}: ours {}, kraken2: {}", got[i], lines[i])).collect();
        panic!("{} reads differ from kraken2:\n{}", differ.len(), shown.join("\n"));
    }
    assert!(expected.iter().filter(|&&t| t != 0).count() > 9000, "most demo reads are classified");

    // The report, line for line as Kraken 2's: every column, and the rank codes as upstream
    // writes them. Debian 12's 2.1.2 drops the letter of the top levels' codes (`1` for `R1`),
    // and predates upstream's reading of NCBI's `domain` rank as `D` (it counts Bacteria as an
    // unranked taxon below the root: `2`).
    let report = ok(&Command::new(MGDS)
        .args(["--base-url", &serve.url, "--api-key", &key, "analyses", "results", &id, "--kraken-report"])
        .output()
        .unwrap());
    let theirs = std::fs::read_to_string(dir.path().join("kraken2.report")).unwrap();
    let (ours, theirs): (Vec<&str>, Vec<&str>) = (report.lines().collect(), theirs.lines().collect());
    assert_eq!(ours.len(), theirs.len(), "ours:\n{report}\nKraken 2:\n{}", theirs.join("\n"));
    for (o, t) in ours.iter().zip(&theirs) {
        let (of, tf): (Vec<&str>, Vec<&str>) = (o.split('\t').collect(), t.split('\t').collect());
        for i in [0, 1, 2, 4, 5] {
            assert_eq!(of[i], tf[i], "column {} differs:\nours:     {o}\nKraken 2: {t}", i + 1);
        }
        let debian_domain = of[3].starts_with('D') && tf[3].bytes().all(|b| b.is_ascii_digit());
        assert!(of[3] == tf[3] || of[3].get(1..) == Some(tf[3]) || debian_domain, "rank codes: ours {o}, Kraken 2 {t}");
    }

    // Every measure is there, named, and the table is sorted by re-estimated abundance.
    let (_, results) = c.json("GET", &format!("{}/api/v1/classifications/{id}/results", serve.url), &key, None);
    let species: Vec<&Value> = results["table"].as_array().unwrap().iter().filter(|r| r["rank"] == "species").collect();
    assert!(species.iter().all(|r| r["abundance"].is_number() && r["reestimated_abundance"].is_number()), "{results}");
    let out = Command::new(MGDS)
        .args(["--base-url", &serve.url, "--api-key", &key, "analyses", "results", &id])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let table = ok(&out);
    let header = table.lines().next().unwrap();
    for column in ["reestimated_%", "genome_copies_%", "read_share_%"] {
        assert!(header.contains(column), "{header}");
    }
    assert!(String::from_utf8_lossy(&out.stderr).contains("sorted by re-estimated abundance"));
}

#[test]
fn a_kraken2_folder_without_its_references_gives_no_genome_copy_abundance() {
    let dir = tempfile::tempdir().unwrap();
    let k2 = dir.path().join("k2db");
    build_kraken2(dir.path(), &k2);
    // As `kraken2-build --clean` leaves it.
    std::fs::remove_dir_all(k2.join("library")).unwrap();
    std::fs::remove_file(k2.join("seqid2taxid.map")).unwrap();
    let data = dir.path().join("data");
    let out = mgds_db(&data, &["import-kraken2", k2.to_str().unwrap(), "--name", "cleaned", "--default"]);
    let stdout = ok(&out);
    assert!(stdout.contains("no genome-copy abundance"), "{stdout}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no library/") && err.contains("--library"), "{err}");
    let list = ok(&mgds_db(&data, &["list"]));
    assert!(list.contains("read in place") && list.contains("genomes unknown"), "{list}");

    let serve = Serve::start(&data, &["--no-demo"]);
    let key = create_user(&data, "lab@example.org");
    let reads = dir.path().join("reads.fastq.gz");
    std::fs::write(&reads, demo_reads()).unwrap();
    ok(&Command::new(MGDS).args(["--base-url", &serve.url, "--api-key", &key, "upload"]).arg(&reads).output().unwrap());
    let c = Http::new();
    let (id, a) = finished_primary(&c, &serve.url, &key);
    assert_eq!(a["success"], json!(true), "{a}");
    let (_, results) = c.json("GET", &format!("{}/api/v1/classifications/{id}/results", serve.url), &key, None);
    let table = results["table"].as_array().unwrap();
    assert!(table.iter().any(|r| r["rank"] == "species" && r["readcount"].as_u64() > Some(0)), "{results}");
    assert!(
        table.iter().all(|r| r["abundance"].is_null() && r.get("reestimated_abundance").is_none_or(Value::is_null))
    );
    let out = Command::new(MGDS)
        .args(["--base-url", &serve.url, "--api-key", &key, "analyses", "results", &id])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sorted by share of reads"), "{err}");
    assert!(err.contains("no share of genome copies in these results"), "{err}");
}
