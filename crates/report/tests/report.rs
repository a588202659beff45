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
