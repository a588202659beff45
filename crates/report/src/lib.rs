//! Reports of MGDS analyses: a [`Report`] (a cover with the lab's name and logo, then blocks:
//! headings, paragraphs, facts, tables and figures) as a PDF typeset by typst ([`pdf`]) and as
//! a page of HTML ([`html`]).
//!
//! What a report says is decided by its caller; this crate only lays it out. The PDF comes
//! from one fixed typst template (`report.typ`) that reads the report as JSON: text from a
//! report is always shown as text, never read as typst markup, so a sample named
//! `#panic()` or `*bold*` is printed as written. Figures are SVG (the charts `mgds-plots`
//! draws); the fonts are the DejaVu Sans the charts use, built in, so a report looks the same
//! on every machine and nothing is read from the system.
//!
//! Bounds: at most [`MAX_BLOCKS`] blocks, [`MAX_ROWS`] rows a table, [`MAX_FIGURES`] figures,
//! cells and texts of [`MAX_TEXT`] characters (longer ones are cut, with "…"), a logo of
//! [`MAX_LOGO_BYTES`].

pub mod sample;

use std::collections::HashMap;
use std::sync::OnceLock;

use base64::Engine as _;
use serde::Serialize;
use typst::diag::{FileError, FileResult};
use typst::foundations::{Bytes, Datetime};
use typst::syntax::{FileId, RootedPath, Source, VirtualPath, VirtualRoot};
use typst::text::{Font, FontBook};
use typst::utils::LazyHash;
use typst::{Library, LibraryExt, World};

/// The most blocks a report has.
pub const MAX_BLOCKS: usize = 5_000;
/// The most rows one table has.
pub const MAX_ROWS: usize = 2_000;
/// The most figures a report has.
pub const MAX_FIGURES: usize = 200;
/// The longest text of a cell, fact or paragraph, in characters; longer ones are cut.
pub const MAX_TEXT: usize = 2_000;
/// The largest logo, in bytes.
pub const MAX_LOGO_BYTES: usize = mgds_api::MAX_LOGO_BYTES;
/// The longest side of a logo in pixels (PNG, JPEG): what decoding it may take stays bounded.
pub const MAX_LOGO_SIDE: usize = 4_096;

static DEJAVU_SANS: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
static DEJAVU_SANS_BOLD: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans-Bold.ttf");
static TEMPLATE: &str = include_str!("report.typ");

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The report breaks a bound.
    #[error("the report is too large: {0}")]
    TooLarge(String),
    /// The logo is not a PNG, JPEG or SVG picture.
    #[error("the lab's logo is not a PNG, JPEG or SVG picture")]
    Logo,
    /// Typesetting failed (a figure that is not a picture, for one).
    #[error("the report could not be typeset: {0}")]
    Typeset(String),
}

/// A report.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Its title ("swab-3.fastq.gz").
    pub title: String,
    /// What it is about, under the title ("Sample report").
    pub subtitle: Option<String>,
    /// The lab it is made for.
    pub lab: Lab,
    /// When it was made, as shown on the cover.
    pub made: String,
    /// What it says, in order.
    pub blocks: Vec<Block>,
}

/// The lab on a report's cover and footer.
#[derive(Debug, Clone, Default)]
pub struct Lab {
    /// Its name.
    pub name: String,
    /// Its logo.
    pub logo: Option<Logo>,
}

/// A logo: a PNG, JPEG or SVG picture.
#[derive(Debug, Clone)]
pub struct Logo {
    /// The picture's bytes.
    pub bytes: Vec<u8>,
}

/// A picture's kind by its first bytes: `png`, `jpg` or `svg`.
pub fn picture_kind(b: &[u8]) -> Option<&'static str> {
    if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("png")
    } else if b.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("jpg")
    } else {
        let head = String::from_utf8_lossy(&b[..b.len().min(1024)]).to_ascii_lowercase();
        head.contains("<svg").then_some("svg")
    }
}

/// The media type of a picture's `bytes` (SVG when neither PNG nor JPEG).
pub fn picture_mime(bytes: &[u8]) -> &'static str {
    match picture_kind(bytes) {
        Some("png") => "image/png",
        Some("jpg") => "image/jpeg",
        _ => "image/svg+xml",
    }
}

impl Logo {
    /// The picture's kind by its first bytes: `png`, `jpg` or `svg`.
    pub fn kind(&self) -> Option<&'static str> {
        picture_kind(&self.bytes)
    }

    /// Its media type by its kind.
    pub fn mime(&self) -> &'static str {
        picture_mime(&self.bytes)
    }
}

/// A column of a table.
#[derive(Debug, Clone, Serialize)]
pub struct Column {
    /// Its heading.
    pub title: String,
    /// Right-aligned (numbers).
    pub numeric: bool,
}

impl Column {
    /// A column of text.
    pub fn text(title: &str) -> Column {
        Column { title: title.into(), numeric: false }
    }

    /// A column of numbers.
    pub fn number(title: &str) -> Column {
        Column { title: title.into(), numeric: true }
    }
}

/// A part of a report.
#[derive(Debug, Clone)]
pub enum Block {
    /// A heading of level 1 or 2.
    Heading {
        /// Its text.
        text: String,
        /// 1 or 2.
        level: u8,
    },
    /// A paragraph.
    Paragraph(String),
    /// Names and values, two columns.
    Facts(Vec<(String, String)>),
    /// A table.
    Table {
        /// Its columns.
        columns: Vec<Column>,
        /// Its rows, each as many cells as columns.
        rows: Vec<Vec<String>>,
        /// Its caption.
        caption: Option<String>,
    },
    /// A picture (SVG) with its caption.
    Figure {
        /// The SVG document.
        svg: String,
        /// Its caption.
        caption: String,
        /// Its width as a share of the text's width (0.1 to 1).
        width: f64,
    },
    /// The next block starts a page.
    PageBreak,
}

/// `s` cut to [`MAX_TEXT`] characters.
fn cut(s: &str) -> String {
    if s.chars().count() <= MAX_TEXT {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX_TEXT - 1).collect();
    out.push('…');
    out
}

/// Checks the report's bounds.
fn check(report: &Report) -> Result<(), Error> {
    if report.blocks.len() > MAX_BLOCKS {
        return Err(Error::TooLarge(format!("{} blocks (at most {MAX_BLOCKS})", report.blocks.len())));
    }
    let figures = report.blocks.iter().filter(|b| matches!(b, Block::Figure { .. })).count();
    if figures > MAX_FIGURES {
        return Err(Error::TooLarge(format!("{figures} figures (at most {MAX_FIGURES})")));
    }
    for b in &report.blocks {
        if let Block::Table { columns, rows, .. } = b {
            if rows.len() > MAX_ROWS {
                return Err(Error::TooLarge(format!("a table of {} rows (at most {MAX_ROWS})", rows.len())));
            }
            if columns.is_empty() || rows.iter().any(|r| r.len() != columns.len()) {
                return Err(Error::Typeset("a table's rows do not have a cell for each column".into()));
            }
        }
    }
    if let Some(logo) = &report.lab.logo {
        if logo.bytes.len() > MAX_LOGO_BYTES {
            return Err(Error::TooLarge(format!("a logo of {} bytes (at most {MAX_LOGO_BYTES})", logo.bytes.len())));
        }
        logo.kind().ok_or(Error::Logo)?;
    }
    Ok(())
}

/// The report as the template reads it, with the files it names.
fn data(report: &Report) -> (serde_json::Value, Vec<(String, Vec<u8>)>) {
    use serde_json::json;
    let mut files = Vec::new();
    let logo = report.lab.logo.as_ref().map(|l| {
        let path = format!("/logo.{}", l.kind().unwrap_or("png"));
        files.push((path.clone(), l.bytes.clone()));
        path
    });
    let mut figure = 0;
    let blocks: Vec<serde_json::Value> = report
        .blocks
        .iter()
        .map(|b| match b {
            Block::Heading { text, level } => json!({"kind": "heading", "text": cut(text), "level": (*level).clamp(1, 2)}),
            Block::Paragraph(text) => json!({"kind": "paragraph", "text": cut(text)}),
            Block::Facts(rows) => {
                json!({"kind": "facts", "rows": rows.iter().map(|(k, v)| [cut(k), cut(v)]).collect::<Vec<_>>()})
            }
            Block::Table { columns, rows, caption } => json!({
                "kind": "table",
                "columns": columns.iter().map(|c| json!({"title": cut(&c.title), "numeric": c.numeric})).collect::<Vec<_>>(),
                "rows": rows.iter().map(|r| r.iter().map(|c| cut(c)).collect::<Vec<_>>()).collect::<Vec<_>>(),
                "caption": caption.as_deref().map(cut),
            }),
            Block::Figure { svg, caption, width } => {
                // The same virtual names for every report (typst keeps each file id it has seen).
                let path = format!("/figure-{figure}.svg");
                figure += 1;
                files.push((path.clone(), svg.as_bytes().to_vec()));
                json!({"kind": "figure", "path": path, "caption": cut(caption), "width": width.clamp(0.1, 1.0)})
            }
            Block::PageBreak => json!({"kind": "pagebreak"}),
        })
        .collect();
    let value = json!({
        "title": cut(&report.title),
        "subtitle": report.subtitle.as_deref().map(cut),
        "made": cut(&report.made),
        "lab": {"name": cut(&report.lab.name), "logo": logo},
        "blocks": blocks,
    });
    (value, files)
}

/// What every report shares: the library, the fonts and the template.
struct Fixed {
    library: LazyHash<Library>,
    book: LazyHash<FontBook>,
    fonts: Vec<Font>,
    main: FileId,
}

fn fixed() -> &'static Fixed {
    static FIXED: OnceLock<Fixed> = OnceLock::new();
    FIXED.get_or_init(|| {
        let fonts: Vec<Font> =
            [DEJAVU_SANS, DEJAVU_SANS_BOLD].into_iter().flat_map(|b| Font::iter(Bytes::new(b))).collect();
        Fixed {
            library: LazyHash::new(Library::default()),
            book: LazyHash::new(FontBook::from_fonts(&fonts)),
            fonts,
            main: file_id("/report.typ"),
        }
    })
}

fn file_id(path: &str) -> FileId {
    let vpath = VirtualPath::new(path).expect("a fixed, valid path");
    RootedPath::new(VirtualRoot::Project, vpath).intern()
}

/// One report's files, for typst.
struct ReportWorld {
    fixed: &'static Fixed,
    source: Source,
    files: HashMap<FileId, Bytes>,
}

impl World for ReportWorld {
    fn library(&self) -> &LazyHash<Library> {
        &self.fixed.library
    }

    fn book(&self) -> &LazyHash<FontBook> {
        &self.fixed.book
    }

    fn main(&self) -> FileId {
        self.fixed.main
    }

    fn source(&self, id: FileId) -> FileResult<Source> {
        if id == self.fixed.main { Ok(self.source.clone()) } else { Err(FileError::AccessDenied) }
    }

    fn file(&self, id: FileId) -> FileResult<Bytes> {
        self.files.get(&id).cloned().ok_or(FileError::AccessDenied)
    }

    fn font(&self, index: usize) -> Option<Font> {
        self.fixed.fonts.get(index).cloned()
    }

    fn today(&self, _offset: Option<typst::foundations::Duration>) -> Option<Datetime> {
        // Reports show the time they were made as their caller gives it.
        None
    }
}

/// Checks that `bytes` make a logo a report can show: a PNG, JPEG or SVG picture of at most
/// [`MAX_LOGO_BYTES`], a PNG or JPEG at most [`MAX_LOGO_SIDE`] pixels a side, that typesets (a
/// one-page report with it is made and dropped). Gives its kind (`png`, `jpg`, `svg`).
pub fn check_logo(bytes: &[u8]) -> Result<&'static str, Error> {
    if bytes.len() > MAX_LOGO_BYTES {
        return Err(Error::TooLarge(format!(
            "a logo of {} bytes (at most {} bytes, 2 MiB)",
            bytes.len(),
            MAX_LOGO_BYTES
        )));
    }
    let logo = Logo { bytes: bytes.to_vec() };
    let kind = logo.kind().ok_or(Error::Logo)?;
    if kind == "svg" {
        check_svg(bytes)?;
    } else {
        let size = imagesize::blob_size(bytes).map_err(|e| Error::Typeset(format!("the logo cannot be read: {e}")))?;
        if size.width > MAX_LOGO_SIDE || size.height > MAX_LOGO_SIDE {
            return Err(Error::TooLarge(format!(
                "a logo of {}×{} pixels (at most {MAX_LOGO_SIDE} a side)",
                size.width, size.height
            )));
        }
    }
    let trial =
        Report { title: "Logo".into(), lab: Lab { name: String::new(), logo: Some(logo) }, ..Default::default() };
    pdf(&trial).map_err(|e| match e {
        Error::Typeset(why) => Error::Typeset(format!("the logo cannot be shown: {why}")),
        other => other,
    })?;
    Ok(kind)
}

/// An SVG logo is drawn as vectors; one that holds pictures or filters (which become pixels of
/// any size when drawn) or a document type (entities) is refused, so that what showing it takes
/// stays bounded by its bytes.
fn check_svg(bytes: &[u8]) -> Result<(), Error> {
    let text = std::str::from_utf8(bytes).map_err(|_| Error::Typeset("the SVG logo is not UTF-8 text".into()))?;
    let options = roxmltree::ParsingOptions { allow_dtd: false, ..Default::default() };
    let doc = roxmltree::Document::parse_with_options(text, options)
        .map_err(|e| Error::Typeset(format!("the SVG logo cannot be read ({e})")))?;
    let refused = ["image", "feImage", "filter", "foreignObject"];
    if let Some(n) = doc.descendants().find(|n| n.is_element() && refused.contains(&n.tag_name().name())) {
        return Err(Error::Typeset(format!(
            "the SVG logo holds <{}>: a logo is drawn with shapes and text, without pictures or filters inside",
            n.tag_name().name()
        )));
    }
    Ok(())
}

/// The report as a PDF.
pub fn pdf(report: &Report) -> Result<Vec<u8>, Error> {
    check(report)?;
    let fixed = fixed();
    let (value, named) = data(report);
    let mut files: HashMap<FileId, Bytes> = named.into_iter().map(|(p, b)| (file_id(&p), Bytes::new(b))).collect();
    let json = serde_json::to_vec(&value).map_err(|e| Error::Typeset(e.to_string()))?;
    files.insert(file_id("/data.json"), Bytes::new(json));
    let world = ReportWorld { fixed, source: Source::new(fixed.main, TEMPLATE.to_string()), files };
    let compiled = typst::compile::<typst_layout::PagedDocument>(&world).output;
    let out = compiled.and_then(|doc| typst_pdf::pdf(&doc, &typst_pdf::PdfOptions::default()));
    // Nothing is kept from one report to the next.
    typst::comemo::evict(0);
    out.map_err(|diags| {
        let said: Vec<String> = diags.iter().take(3).map(|d| d.message.to_string()).collect();
        Error::Typeset(said.join("; "))
    })
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn data_uri(mime: &str, bytes: &[u8]) -> String {
    format!("data:{mime};base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// The report as one page of HTML, whole in itself: styles in the page, pictures as `data:`
/// addresses (shown as pictures, so nothing in them runs), no script.
pub fn html(report: &Report) -> Result<String, Error> {
    check(report)?;
    let t = |s: &str| escape(&cut(s));
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(&format!("<title>{}</title>\n", t(&report.title)));
    out.push_str(concat!(
        "<style>\n",
        "body { font-family: 'DejaVu Sans', system-ui, sans-serif; font-size: 14px; color: #1d2327; max-width: 980px; margin: 24px auto; padding: 0 16px; }\n",
        "header { border-bottom: 1px solid #c8cdd1; padding-bottom: 12px; margin-bottom: 8px; }\n",
        "header img { height: 60px; }\n",
        ".lab { color: #555; font-size: 16px; margin: 8px 0 0; }\n",
        "h1.title { font-size: 26px; margin: 2px 0; }\n",
        ".made { color: #6b7378; font-size: 12px; }\n",
        "h2 { font-size: 19px; margin: 28px 0 8px; } h3 { font-size: 15px; margin: 18px 0 6px; }\n",
        "dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px; }\n",
        "dt { color: #5b6267; } dd { margin: 0; }\n",
        "table { border-collapse: collapse; margin: 6px 0; font-size: 13px; }\n",
        "th { background: #eceef0; text-align: left; } th, td { padding: 3px 8px; }\n",
        "tr:nth-child(even) td { background: #f8f9f9; } .num { text-align: right; font-variant-numeric: tabular-nums; }\n",
        "figure { margin: 12px 0; } figure img { max-width: 100%; } figcaption, caption { color: #5b6267; font-size: 12px; caption-side: bottom; text-align: left; padding-top: 4px; }\n",
        "@media print { .page-break { break-before: page; } }\n",
        "</style>\n</head>\n<body>\n<header>\n"
    ));
    if let Some(logo) = &report.lab.logo {
        out.push_str(&format!(
            "<img src=\"{}\" alt=\"{} logo\">\n",
            data_uri(logo.mime(), &logo.bytes),
            t(&report.lab.name)
        ));
    }
    out.push_str(&format!(
        "<p class=\"lab\">{}</p>\n<h1 class=\"title\">{}</h1>\n",
        t(&report.lab.name),
        t(&report.title)
    ));
    if let Some(s) = &report.subtitle {
        out.push_str(&format!("<p>{}</p>\n", t(s)));
    }
    out.push_str(&format!("<p class=\"made\">{}</p>\n</header>\n<main>\n", t(&report.made)));
    let mut page_break = false;
    for b in &report.blocks {
        let class = if std::mem::take(&mut page_break) { " class=\"page-break\"" } else { "" };
        match b {
            Block::Heading { text, level } => {
                let h = if *level <= 1 { "h2" } else { "h3" };
                out.push_str(&format!("<{h}{class}>{}</{h}>\n", t(text)));
            }
            Block::Paragraph(text) => out.push_str(&format!("<p{class}>{}</p>\n", t(text))),
            Block::Facts(rows) => {
                out.push_str(&format!("<dl{class}>\n"));
                for (k, v) in rows {
                    out.push_str(&format!("<dt>{}</dt><dd>{}</dd>\n", t(k), t(v)));
                }
                out.push_str("</dl>\n");
            }
            Block::Table { columns, rows, caption } => {
                out.push_str(&format!("<table{class}>\n"));
                if let Some(c) = caption {
                    out.push_str(&format!("<caption>{}</caption>\n", t(c)));
                }
                out.push_str("<thead><tr>");
                for c in columns {
                    let num = if c.numeric { " class=\"num\"" } else { "" };
                    out.push_str(&format!("<th{num}>{}</th>", t(&c.title)));
                }
                out.push_str("</tr></thead>\n<tbody>\n");
                for r in rows {
                    out.push_str("<tr>");
                    for (cell, c) in r.iter().zip(columns) {
                        let num = if c.numeric { " class=\"num\"" } else { "" };
                        out.push_str(&format!("<td{num}>{}</td>", t(cell)));
                    }
                    out.push_str("</tr>\n");
                }
                out.push_str("</tbody>\n</table>\n");
            }
            Block::Figure { svg, caption, width } => {
                let pct = (width.clamp(0.1, 1.0) * 100.0).round();
                out.push_str(&format!(
                    "<figure{class}><img src=\"{}\" alt=\"{}\" style=\"width: {pct}%\"><figcaption>{}</figcaption></figure>\n",
                    data_uri("image/svg+xml", svg.as_bytes()),
                    t(caption),
                    t(caption)
                ));
            }
            Block::PageBreak => page_break = true,
        }
    }
    out.push_str("</main>\n</body>\n</html>\n");
    Ok(out)
}
