//! Reports typeset and read back as their readers get them: the PDF's pages drawn by
//! `pdftoppm` and its text read by `pdftotext` (Debian's poppler-utils, which the test command
//! installs), and the HTML as a page.

use std::path::Path;
use std::process::Command;

use mgds_report::{Block, Column, Lab, Logo, Report};

fn chart() -> String {
    concat!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"400\" height=\"120\" viewBox=\"0 0 400 120\">",
        "<rect x=\"10\" y=\"20\" width=\"300\" height=\"30\" fill=\"#0072b2\"/>",
        "<text x=\"10\" y=\"80\" font-family=\"DejaVu Sans\" font-size=\"14\">Klebsiella pneumoniae 57.3%</text>",
        "</svg>"
    )
    .to_string()
}

fn report(rows: usize) -> Report {
    let logo = concat!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"40\" height=\"40\">",
        "<circle cx=\"20\" cy=\"20\" r=\"18\" fill=\"#0b6e69\"/></svg>"
    );
    Report {
        title: "swab #3 *ward* [a]".into(),
        subtitle: Some("Sample report".into()),
        lab: Lab { name: "Microbiology Lab <North>".into(), logo: Some(Logo { bytes: logo.as_bytes().to_vec() }) },
        made: "28 Nov 2026, 19:40 UTC".into(),
        blocks: vec![
            Block::Heading { text: "Sample".into(), level: 1 },
            Block::Facts(vec![("Site".into(), "#panic(\"no\")".into()), ("Collected".into(), "2026-11-20".into())]),
            Block::Paragraph("Reads were classified against the demo database $x$ = 1.".into()),
            Block::Figure { svg: chart(), caption: "Re-estimated abundance by species".into(), width: 0.8 },
            Block::PageBreak,
            Block::Heading { text: "Taxa".into(), level: 1 },
            Block::Table {
                columns: vec![Column::text("Taxon"), Column::number("Reads")],
                rows: (0..rows).map(|i| vec![format!("Taxon {i}"), format!("{}", 1000 - i)]).collect(),
                caption: Some("Species by reads".into()),
            },
        ],
    }
}

fn tool(name: &str) -> Command {
    let found = Command::new(name).arg("-v").output();
    assert!(found.is_ok(), "{name} is needed (Debian: apt-get install poppler-utils)");
    Command::new(name)
}

#[test]
fn a_report_is_typeset_with_its_text_as_written_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let pdf = mgds_report::pdf(&report(120)).expect("typeset");
    assert!(pdf.starts_with(b"%PDF-"));
    let path = dir.path().join("report.pdf");
    std::fs::write(&path, &pdf).unwrap();
    let text = tool("pdftotext").args(["-layout"]).arg(&path).arg("-").output().unwrap();
    assert!(text.status.success());
    let text = String::from_utf8_lossy(&text.stdout);
    // Text that looks like typst markup is printed as written.
    for shown in ["swab #3 *ward* [a]", "Microbiology Lab <North>", "#panic(\"no\")", "$x$ = 1", "Taxon 119"] {
        assert!(text.contains(shown), "{shown:?} is not in the PDF's text:\n{text}");
    }
    assert!(text.contains("Table 1: Species by reads") || text.contains("Species by reads"), "{text}");
    // 120 rows after a page break: more than one page, each with its number in the footer.
    let info = tool("pdfinfo").arg(&path).output().unwrap();
    let info = String::from_utf8_lossy(&info.stdout);
    let pages: usize = info
        .lines()
        .find_map(|l| l.strip_prefix("Pages:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{info}"));
    assert!(pages >= 3, "{pages} pages");
    assert!(text.contains(&format!("1 of {pages}")) && text.contains(&format!("{pages} of {pages}")), "{text}");
    // The pages draw.
    let png = dir.path().join("page");
    let drawn =
        tool("pdftoppm").args(["-png", "-r", "60", "-f", "1", "-l", "1"]).arg(&path).arg(&png).status().unwrap();
    assert!(drawn.success());
    let first = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .find(|e| e.file_name().to_string_lossy().starts_with("page"));
    let first = first.expect("a page drawn").path();
    assert!(std::fs::read(&first).unwrap().starts_with(b"\x89PNG"));
    if let Some(shots) = std::env::var_os("MGDS_SCREENSHOT_DIR") {
        std::fs::copy(&first, Path::new(&shots).join("report-page-1.png")).unwrap();
    }
}

#[test]
fn the_html_shows_the_same_text_escaped() {
    let html = mgds_report::html(&report(3)).unwrap();
    assert!(html.contains("<h1 class=\"title\">swab #3 *ward* [a]</h1>"), "{html}");
    assert!(html.contains("Microbiology Lab &lt;North&gt;"));
    assert!(html.contains("<td class=\"num\">998</td>"));
    assert!(html.contains("src=\"data:image/svg+xml;base64,"));
    assert!(!html.contains("<script"));
}

#[test]
fn bounds_and_bad_logos_are_refused_with_the_reason() {
    let mut r = report(3);
    r.blocks.push(Block::Table {
        columns: vec![Column::text("a")],
        rows: vec![vec![]; mgds_report::MAX_ROWS + 1],
        caption: None,
    });
    let e = mgds_report::pdf(&r).unwrap_err().to_string();
    assert!(e.contains("a table of 2001 rows (at most 2000)"), "{e}");
    let mut r = report(3);
    r.lab.logo = Some(Logo { bytes: b"GIF89a".to_vec() });
    assert_eq!(mgds_report::pdf(&r).unwrap_err().to_string(), "the lab's logo is not a PNG, JPEG or SVG picture");
    let mut r = report(3);
    r.blocks.push(Block::Figure { svg: "not a picture".into(), caption: "x".into(), width: 1.0 });
    assert!(mgds_report::pdf(&r).unwrap_err().to_string().starts_with("the report could not be typeset"));
}

/// A sample's report from a real classification (the demo database and reads, with the
/// reads' quality counted): its sections and numbers, read back from the PDF.
#[test]
fn a_samples_report_has_its_quality_abundances_diversity_and_methods() {
    use mgds_report::sample::{MadeBy, SampleInput, sample_report};
    let dir = tempfile::tempdir().unwrap();
    let sources = mgds_classify::demo::write_demo_sources(&dir.path().join("src")).unwrap();
    let db_path = dir.path().join("demo.mgdsdb");
    mgds_classify::build(&sources, &db_path).unwrap();
    let db = mgds_classify::Database::open(&db_path).unwrap();
    let reads = dir.path().join("reads.fastq.gz");
    std::fs::write(&reads, mgds_classify::demo::READS_FASTQ_GZ).unwrap();
    let results =
        mgds_classify::classify(&db, &reads, &mgds_classify::ClassifyOptions::default(), &mut std::io::sink()).unwrap();
    let qc = results.qc.clone().expect("the reads' quality");
    let mut metadata: mgds_api::Metadata = serde_json::from_value(serde_json::json!({
        "$uri": "/api/v1/metadata/m", "sample": {"$ref": "/api/v1/samples/s"},
        "name": "Ward 3 swab", "platform": "Illumina", "custom": {"site": "ward 3", "run_id": "R-7"}
    }))
    .unwrap();
    metadata.date_collected = Some("2026-11-20".into());
    let made = MadeBy {
        analysis_id: "c0ffee0000000001".into(),
        job_name: "Classification (demo-bacteria)".into(),
        engine: "mgds-classify".into(),
        engine_version: "0.4.0".into(),
        reference_digest: "sha256:1234abcd".into(),
        args: serde_json::Map::new(),
        finished_at: "28 Nov 2026, 19:41 UTC".into(),
    };
    let input = SampleInput {
        lab: Lab { name: "Microbiology Lab".into(), logo: None },
        made: "28 Nov 2026, 19:45 UTC".into(),
        sample_id: "5a5a5a5a5a5a5a5a".into(),
        filename: Some("swab.fastq.gz".into()),
        size: Some(927_000),
        uploaded: "28 Nov 2026, 19:40 UTC".into(),
        metadata: Some(&metadata),
        classification: Some((&results, made)),
        panel: None,
        made_with: "0.1.0".into(),
    };
    let report = sample_report(&input);
    let pdf = mgds_report::pdf(&report).expect("typeset");
    let path = dir.path().join("sample.pdf");
    std::fs::write(&path, &pdf).unwrap();
    let text = tool("pdftotext").arg(&path).arg("-").output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout).replace('\n', " ");
    let reads_shown = mgds_report::sample::thousands(qc.reads);
    for shown in [
        "Ward 3 swab",
        "Sample report",
        "Read quality",
        reads_shown.as_str(),
        "Abundance",
        "Klebsiella pneumoniae",
        "Diversity",
        "Shannon (ln)",
        "Methods",
        "mgds-classify 0.4.0",
        "sha256:1234abcd",
        "run_id",
        "R-7",
    ] {
        assert!(text.contains(shown), "{shown:?} is not in the report:\n{text}");
    }
    let shannon = mgds_diversity::alpha(
        mgds_diversity::AlphaMetric::Shannon,
        &results
            .table
            .iter()
            .filter(|r| r.rank == "species" && !results.host_tax_ids.contains(&r.tax_id))
            .map(|r| r.readcount_w_children as f64)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    assert!(text.contains(&format!("{shannon:.4}")), "Shannon {shannon:.4} is not in the report:\n{text}");
    let png = dir.path().join("sample-page");
    assert!(tool("pdftoppm").args(["-png", "-r", "70"]).arg(&path).arg(&png).status().unwrap().success());
    if let Some(shots) = std::env::var_os("MGDS_SCREENSHOT_DIR") {
        for e in std::fs::read_dir(dir.path()).unwrap().filter_map(|e| e.ok()) {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with("sample-page") {
                std::fs::copy(e.path(), Path::new(&shots).join(format!("report-{name}"))).unwrap();
            }
        }
    }
}
