//! The hierarchy of one sample: a sunburst of its classification (each ring a level of the
//! taxonomy below the centre, each segment a taxon's reads with those below it), and the same
//! tree as Krona's text input.
//!
//! The sunburst is written directly as SVG (annular sectors are paths, which plotters does not
//! draw). Every segment is a `<path class="segment" data-tax-id>` with a `<title>` naming the
//! taxon, its rank, its reads and its shares of the sample and of its parent, so that a page can
//! zoom into the clicked clade (drawing again with it at the centre) and browsers show the
//! numbers on hover. The centre is a `<circle class="centre">` holding the parent's tax id when
//! zoomed in (`data-tax-id`), so clicking it goes up a level.
//!
//! Bounds: at most [`MAX_RINGS`] rings below the centre and [`MAX_SEGMENTS`] segments (laid out
//! ring by ring, the widest first in each clade; a segment narrower than [`MIN_DEGREES`] is left
//! out with its clade, as Krona leaves out what it cannot draw; [`Sunburst::left_out`] counts
//! the clades not drawn); the [`COLOURED`] largest segments take their taxon's own colour
//! ([`mgds_api::palette`], so no two share one), smaller ones are drawn in a light grey.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use mgds_api::ClassificationResults;

use crate::Error;
use crate::chart::thousands;
use crate::font::{self, FAMILY, text_width, truncate_to_width};
use crate::svg::escape_xml;

/// Rings drawn below the centre, at most.
pub const MAX_RINGS: usize = 12;
/// Segments drawn, at most (the largest).
pub const MAX_SEGMENTS: usize = 2000;
/// Segments in their taxon's own colour (the largest); the rest are grey.
pub const COLOURED: usize = 63;
/// The narrowest segment drawn, in degrees.
pub const MIN_DEGREES: f64 = 0.3;

const SMALL_COLOUR: &str = "#D0D0D0";
const UNCLASSIFIED_COLOUR: &str = "#EDEDED";

/// What to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct SunburstOptions {
    /// The taxon at the centre; none (or one not in the results): the root of the taxonomy.
    pub root: Option<String>,
    /// Leave the host's taxa (and their reads) out.
    pub hide_host: bool,
    /// Rings below the centre (1 to [`MAX_RINGS`]).
    pub rings: usize,
    /// The picture's side in pixels (300 to 4000).
    pub size: u32,
    /// A title above the chart (the sample's name), if any.
    pub title: Option<String>,
}

impl Default for SunburstOptions {
    fn default() -> Self {
        SunburstOptions { root: None, hide_host: true, rings: 10, size: 900, title: None }
    }
}

/// A taxon on the way from the root of the taxonomy to the centre.
#[derive(Debug, Clone, PartialEq)]
pub struct Crumb {
    /// Its tax id.
    pub tax_id: String,
    /// Its name.
    pub name: String,
    /// Its rank.
    pub rank: String,
    /// Its reads (with those below it; the host's left out when hidden).
    pub reads: u64,
}

/// A drawn sunburst.
#[derive(Debug, Clone, PartialEq)]
pub struct Sunburst {
    /// The SVG document.
    pub svg: String,
    /// From the root of the taxonomy to the taxon at the centre (the centre last).
    pub path: Vec<Crumb>,
    /// Segments drawn.
    pub segments: usize,
    /// Clades left out, too narrow to draw or past the rings (each counted once, with all that
    /// is below it).
    pub left_out: usize,
}

/// The classification's taxa as a tree: children by parent, values with the host taken out.
struct Tree<'a> {
    /// Reads classified at all, the host's included.
    classified: u64,
    rows: HashMap<&'a str, &'a mgds_api::TaxonRow>,
    children: HashMap<&'a str, Vec<&'a str>>,
    value: HashMap<&'a str, u64>,
    roots: Vec<&'a str>,
}

impl<'a> Tree<'a> {
    fn new(r: &'a ClassificationResults, hide_host: bool) -> Tree<'a> {
        let all: HashSet<&str> = r.table.iter().map(|t| t.tax_id.as_str()).collect();
        let classified = r
            .table
            .iter()
            .filter(|t| t.parent_tax_id.as_deref().is_none_or(|p| !all.contains(p) || p == t.tax_id))
            .map(|t| t.readcount_w_children)
            .sum();
        let host = if hide_host { crate::host_subtree(r) } else { HashSet::new() };
        let rows: HashMap<&str, &mgds_api::TaxonRow> =
            r.table.iter().filter(|t| !host.contains(&t.tax_id)).map(|t| (t.tax_id.as_str(), t)).collect();
        let mut value: HashMap<&str, u64> = rows.iter().map(|(id, t)| (*id, t.readcount_w_children)).collect();
        // The host's reads come off every taxon above it.
        for t in r.table.iter().filter(|t| host.contains(&t.tax_id)) {
            let top = t.parent_tax_id.as_deref().is_none_or(|p| !host.contains(p));
            if !top {
                continue;
            }
            // Each taxon above once, whatever loops the table's parents make (NCBI's root is
            // its own parent).
            let mut seen = HashSet::new();
            let mut up = t.parent_tax_id.as_deref();
            while let Some(p) = up.filter(|p| seen.insert(*p)) {
                if let Some(v) = value.get_mut(p) {
                    *v = v.saturating_sub(t.readcount_w_children);
                }
                up = rows.get(p).and_then(|row| row.parent_tax_id.as_deref());
            }
        }
        let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut roots = Vec::new();
        for (id, t) in &rows {
            match t.parent_tax_id.as_deref().filter(|p| rows.contains_key(p) && p != id) {
                Some(p) => children.entry(p).or_default().push(id),
                None => roots.push(*id),
            }
        }
        let by_value = |v: &HashMap<&str, u64>, a: &&str, b: &&str| v[b].cmp(&v[a]).then_with(|| a.cmp(b));
        for list in children.values_mut() {
            list.sort_by(|a, b| by_value(&value, a, b));
        }
        roots.sort_by(|a, b| by_value(&value, a, b));
        Tree { classified, rows, children, value, roots }
    }

    fn crumb(&self, id: &str) -> Crumb {
        let t = self.rows[id];
        Crumb { tax_id: t.tax_id.clone(), name: t.name.clone(), rank: t.rank.clone(), reads: self.value[id] }
    }

    /// The taxon above `id` (none for a root, one that is its own parent included).
    fn parent(&self, id: &str) -> Option<&'a str> {
        let p = self.rows.get(id)?.parent_tax_id.as_deref().filter(|p| *p != id)?;
        self.rows.get_key_value(p).map(|(k, _)| *k)
    }

    /// From the root down to `id`, each taxon once.
    fn lineage(&self, id: &'a str) -> Vec<&'a str> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        let mut at = self.rows.get_key_value(id).map(|(k, _)| *k);
        while let Some(t) = at.filter(|t| seen.insert(*t)) {
            out.push(t);
            at = self.parent(t);
        }
        out.reverse();
        out
    }
}

/// One annular sector to draw.
struct Segment<'a> {
    id: Option<&'a str>,
    depth: usize,
    a0: f64,
    a1: f64,
    reads: u64,
}

fn point(cx: f64, cy: f64, r: f64, a: f64) -> (f64, f64) {
    (cx + r * a.sin(), cy - r * a.cos())
}

/// The path of the sector between radii `r0` and `r1`, angles `a0` to `a1` (radians, clockwise
/// from the top).
fn sector(cx: f64, cy: f64, r0: f64, r1: f64, a0: f64, a1: f64) -> String {
    use std::f64::consts::PI;
    if a1 - a0 >= 2.0 * PI - 1e-9 {
        // A whole ring: two halves (an arc cannot end where it starts).
        return format!("{} {}", sector(cx, cy, r0, r1, a0, a0 + PI), sector(cx, cy, r0, r1, a0 + PI, a1));
    }
    let large = if a1 - a0 > PI { 1 } else { 0 };
    let (x0, y0) = point(cx, cy, r1, a0);
    let (x1, y1) = point(cx, cy, r1, a1);
    let (x2, y2) = point(cx, cy, r0, a1);
    let (x3, y3) = point(cx, cy, r0, a0);
    format!(
        "M{x0:.2},{y0:.2} A{r1:.2},{r1:.2} 0 {large} 1 {x1:.2},{y1:.2} L{x2:.2},{y2:.2} A{r0:.2},{r0:.2} 0 {large} 0 {x3:.2},{y3:.2} Z"
    )
}

/// Whether text on `#RRGGBB` reads better in white (its relative luminance is low).
fn dark(hex: &str) -> bool {
    let channel = |i: usize| {
        let v = f64::from(u8::from_str_radix(hex.get(i..i + 2).unwrap_or("ff"), 16).unwrap_or(255)) / 255.0;
        if v <= 0.03928 { v / 12.92 } else { ((v + 0.055) / 1.055).powf(2.4) }
    };
    0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5) < 0.2
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 { "0%".into() } else { format!("{:.2}%", part as f64 * 100.0 / whole as f64) }
}

/// The sunburst of `results` (see the module's notes).
pub fn sunburst(results: &ClassificationResults, opts: &SunburstOptions) -> Result<Sunburst, Error> {
    use std::f64::consts::PI;
    if !(300..=4000).contains(&opts.size) {
        return Err(Error::InvalidSize { width: opts.size, height: opts.size, min: 300, max: 4000 });
    }
    font::ensure_registered()?;
    let tree = Tree::new(results, opts.hide_host);
    let total_reads = results.n_reads;
    let centre: Option<&str> = opts
        .root
        .as_deref()
        .and_then(|r| tree.rows.get_key_value(r).map(|(k, _)| *k))
        .or_else(|| (tree.roots.len() == 1).then(|| tree.roots[0]));
    // From the root of the taxonomy down to the centre.
    let path: Vec<Crumb> =
        centre.map(|c| tree.lineage(c)).unwrap_or_default().into_iter().map(|id| tree.crumb(id)).collect();
    let top_level: Vec<&str> = match centre {
        Some(c) => tree.children.get(c).cloned().unwrap_or_default(),
        None => tree.roots.clone(),
    };
    let centre_reads: u64 = match centre {
        Some(c) => tree.value[c],
        None => top_level.iter().map(|id| tree.value[id]).sum(),
    };
    let at_root = centre.is_none_or(|c| tree.parent(c).is_none());
    let unclassified = if at_root { total_reads.saturating_sub(tree.classified) } else { 0 };
    let whole = centre_reads + unclassified;
    if whole == 0 {
        return Err(Error::NoData { rank: "any".into() });
    }
    let rings = opts.rings.clamp(1, MAX_RINGS);
    let min_angle = MIN_DEGREES.to_radians();
    // Lay out breadth-first, widest first, within the bounds.
    let mut segments: Vec<Segment> = Vec::new();
    let mut left_out = 0usize;
    let mut level: Vec<(&str, f64, f64)> = Vec::new();
    let mut a = 0.0;
    for id in &top_level {
        let span = 2.0 * PI * tree.value[id] as f64 / whole as f64;
        level.push((id, a, a + span));
        a += span;
    }
    if unclassified > 0 {
        let span = 2.0 * PI * unclassified as f64 / whole as f64;
        segments.push(Segment { id: None, depth: 1, a0: a, a1: a + span, reads: unclassified });
    }
    for depth in 1..=rings {
        let mut next = Vec::new();
        for (id, a0, a1) in level {
            if a1 - a0 < min_angle || segments.len() >= MAX_SEGMENTS {
                left_out += 1;
                continue;
            }
            segments.push(Segment { id: Some(id), depth, a0, a1, reads: tree.value[id] });
            let mut b = a0;
            let own = tree.value[id].max(1) as f64;
            for c in tree.children.get(id).map(Vec::as_slice).unwrap_or_default() {
                let span = (a1 - a0) * tree.value[c] as f64 / own;
                next.push((*c, b, b + span));
                b += span;
            }
        }
        level = next;
    }
    left_out += level.len();

    // Colours: the largest segments their taxon's own, distinct; the others grey.
    let mut by_size: Vec<usize> = (0..segments.len()).filter(|&i| segments[i].id.is_some()).collect();
    by_size.sort_by(|&a, &b| segments[b].reads.cmp(&segments[a].reads).then(segments[a].depth.cmp(&segments[b].depth)));
    by_size.truncate(COLOURED);
    let ids: Vec<&str> = by_size.iter().filter_map(|&i| segments[i].id).collect();
    let mut colour: HashMap<usize, String> = HashMap::new();
    for (&i, c) in by_size.iter().zip(mgds_api::palette::taxon_colours(&ids)) {
        colour.insert(i, mgds_api::palette::hex(c));
    }

    let size = f64::from(opts.size);
    let title_h = if opts.title.is_some() { 34.0 } else { 0.0 };
    let (w, h) = (size, size + title_h);
    let (cx, cy) = (w / 2.0, title_h + size / 2.0);
    let outer = size / 2.0 - 12.0;
    let inner = outer * 0.2;
    let ring = (outer - inner) / rings as f64;
    let mut svg = String::with_capacity(256 * segments.len() + 1024);
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"{FAMILY}\">"
    );
    let _ = writeln!(svg, "<rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#FFFFFF\"/>");
    if let Some(t) = &opts.title {
        let t = truncate_to_width(t, 19.0, (w - 24.0) as u32);
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"24\" text-anchor=\"middle\" font-size=\"15.3\" fill=\"#222222\">{}</text>",
            w / 2.0,
            escape_xml(&t)
        );
    }
    let centre_name = path.last().map(|c| c.name.clone()).unwrap_or_else(|| "All reads".into());
    let mut labels = String::new();
    for (i, s) in segments.iter().enumerate() {
        let r0 = inner + ring * (s.depth - 1) as f64;
        let r1 = r0 + ring;
        let d = sector(cx, cy, r0, r1, s.a0, s.a1);
        let (fill, title, data) = match s.id {
            None => (
                UNCLASSIFIED_COLOUR.to_string(),
                format!(
                    "Unclassified · {} reads · {} of the sample",
                    thousands(s.reads),
                    percent(s.reads, total_reads)
                ),
                String::new(),
            ),
            Some(id) => {
                let t = tree.rows[id];
                let parent = tree.parent(id).map(|p| (tree.rows[p].name.as_str(), tree.value[p]));
                let of_parent =
                    parent.map(|(name, v)| format!(" · {} of {name}", percent(s.reads, v))).unwrap_or_default();
                (
                    colour.get(&i).cloned().unwrap_or_else(|| SMALL_COLOUR.to_string()),
                    format!(
                        "{} ({}) · {} reads · {} of the sample{of_parent}",
                        t.name,
                        t.rank,
                        thousands(s.reads),
                        percent(s.reads, total_reads)
                    ),
                    format!(" data-tax-id=\"{}\"", escape_xml(id)),
                )
            }
        };
        let _ = writeln!(
            svg,
            "<path class=\"segment\"{data} d=\"{d}\" fill=\"{fill}\" stroke=\"#FFFFFF\" stroke-width=\"1\"><title>{}</title></path>",
            escape_xml(&title)
        );
        // A name where it fits: along the arc where the segment is wider than its ring is
        // deep, else along the radius; upright either way.
        let mid = (r0 + r1) / 2.0;
        let arc = (s.a1 - s.a0) * mid;
        if arc >= 13.0 {
            let name = match s.id {
                Some(id) => tree.rows[id].name.as_str(),
                None => "Unclassified",
            };
            let along = arc > ring && ring >= 16.0;
            let room = if along { arc.min(2.0 * mid) * 0.9 } else { ring - 8.0 };
            let shown = truncate_to_width(name, 13.0, room.max(0.0) as u32);
            if shown != "…" && text_width(&shown, 13.0) > 0 {
                let am = (s.a0 + s.a1) / 2.0;
                let (x, y) = point(cx, cy, mid, am);
                let mut deg = am.to_degrees() - if along { 0.0 } else { 90.0 };
                if (along && am > PI / 2.0 && am < 1.5 * PI) || (!along && am > PI) {
                    deg += 180.0;
                }
                let ink = if dark(&fill) { "#FFFFFF" } else { "#222222" };
                let _ = writeln!(
                    labels,
                    "<text x=\"{x:.2}\" y=\"{y:.2}\" transform=\"rotate({deg:.2} {x:.2} {y:.2})\" text-anchor=\"middle\" \
                     dominant-baseline=\"central\" font-size=\"10.5\" fill=\"{ink}\" pointer-events=\"none\">{}</text>",
                    escape_xml(&shown)
                );
            }
        }
    }
    svg.push_str(&labels);
    // The centre: the taxon zoomed into (a click there goes up).
    let up = centre.and_then(|c| tree.parent(c));
    let data = up.map(|p| format!(" data-tax-id=\"{}\"", escape_xml(p))).unwrap_or_default();
    let hint = if up.is_some() { " · click to go up a level" } else { "" };
    let _ = writeln!(
        svg,
        "<circle class=\"centre\"{data} cx=\"{cx:.2}\" cy=\"{cy:.2}\" r=\"{:.2}\" fill=\"#F5F5F5\" stroke=\"#FFFFFF\"><title>{}</title></circle>",
        inner - 1.0,
        escape_xml(&format!("{centre_name} · {} reads{hint}", thousands(centre_reads)))
    );
    let name = truncate_to_width(&centre_name, 13.0, (inner * 1.8) as u32);
    let _ = writeln!(
        svg,
        "<text x=\"{cx:.2}\" y=\"{:.2}\" text-anchor=\"middle\" font-size=\"10.5\" fill=\"#222222\" pointer-events=\"none\">{}</text>",
        cy - 4.0,
        escape_xml(&name)
    );
    let _ = writeln!(
        svg,
        "<text x=\"{cx:.2}\" y=\"{:.2}\" text-anchor=\"middle\" font-size=\"9.7\" fill=\"#555555\" pointer-events=\"none\">{} reads</text>",
        cy + 12.0,
        thousands(centre_reads)
    );
    svg.push_str("</svg>\n");
    Ok(Sunburst { svg, path, segments: segments.len(), left_out })
}

/// The classification as Krona's text input (`ktImportText`): one line per taxon with reads of
/// its own, its reads then its lineage's names from the top of the taxonomy, tab-separated;
/// the unclassified reads on a line of their own. Host taxa are left out when `hide_host`, so
/// the lines add up to the sample's reads less the host's.
pub fn krona_text(results: &ClassificationResults, hide_host: bool) -> String {
    let tree = Tree::new(results, hide_host);
    let clean = |s: &str| s.replace(['\t', '\n', '\r'], " ");
    let mut out = String::new();
    let mut rows: Vec<&mgds_api::TaxonRow> = tree.rows.values().copied().filter(|t| t.readcount > 0).collect();
    rows.sort_by(|a, b| b.readcount.cmp(&a.readcount).then_with(|| a.tax_id.cmp(&b.tax_id)));
    let mut classified = 0u64;
    for t in rows {
        let mut lineage: Vec<String> =
            tree.lineage(t.tax_id.as_str()).into_iter().map(|id| clean(&tree.rows[id].name)).collect();
        // Krona draws its own root: the taxonomy's ("root") is left out, and reads at the root
        // itself are a line with no lineage.
        if lineage.first().is_some_and(|n| n == "root") {
            lineage.remove(0);
        }
        classified += t.readcount;
        if lineage.is_empty() {
            let _ = writeln!(out, "{}", t.readcount);
        } else {
            let _ = writeln!(out, "{}\t{}", t.readcount, lineage.join("\t"));
        }
    }
    let unclassified = results.n_reads.saturating_sub(tree.classified.max(classified));
    if unclassified > 0 {
        let _ = writeln!(out, "{unclassified}\tUnclassified");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mgds_api::TaxonRow;

    fn row(id: &str, parent: Option<&str>, name: &str, rank: &str, own: u64, all: u64) -> TaxonRow {
        serde_json::from_value(serde_json::json!({
            "tax_id": id, "parent_tax_id": parent, "name": name, "rank": rank,
            "readcount": own, "readcount_w_children": all
        }))
        .unwrap()
    }

    fn results() -> ClassificationResults {
        serde_json::from_value(serde_json::json!({
            "n_reads": 1000,
            "host_tax_ids": ["9606"],
            "table": [
                row("1", None, "root", "no rank", 0, 900),
                row("2", Some("1"), "Bacteria", "superkingdom", 10, 700),
                row("562", Some("2"), "Escherichia coli", "species", 500, 500),
                row("1280", Some("2"), "Staphylococcus aureus", "species", 190, 190),
                row("9606", Some("1"), "Homo sapiens", "species", 200, 200),
            ]
        }))
        .unwrap()
    }

    #[test]
    fn rings_hold_each_clade_with_its_reads_and_the_host_left_out() {
        let s = sunburst(&results(), &SunburstOptions::default()).unwrap();
        assert_eq!(s.path.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["root"]);
        // The host's 200 reads come off the root: 700 classified, 100 unclassified.
        assert_eq!(s.path[0].reads, 700);
        assert!(!s.svg.contains("Homo sapiens"), "the host is left out");
        assert!(
            s.svg.contains(
                "<title>Escherichia coli (species) · 500 reads · 50.00% of the sample · 71.43% of Bacteria</title>"
            ),
            "{}",
            s.svg
        );
        assert!(s.svg.contains("Unclassified · 100 reads"), "{}", s.svg);
        // Bacteria, two species, unclassified.
        assert_eq!(s.segments, 4);
        assert!(crate::svg_to_png(&s.svg, 1.0).is_ok());
        let with_host = sunburst(&results(), &SunburstOptions { hide_host: false, ..Default::default() }).unwrap();
        assert!(with_host.svg.contains("Homo sapiens"));
        assert_eq!(with_host.path[0].reads, 900);
    }

    #[test]
    fn zooming_puts_a_clade_at_the_centre_with_the_way_back() {
        let s = sunburst(&results(), &SunburstOptions { root: Some("2".into()), ..Default::default() }).unwrap();
        let names: Vec<&str> = s.path.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["root", "Bacteria"]);
        assert!(s.svg.contains("<circle class=\"centre\" data-tax-id=\"1\""), "the centre leads up to the root");
        assert!(!s.svg.contains("Unclassified"), "only the clade is drawn");
        assert_eq!(s.segments, 2);
        // Colours are the taxa's own, and differ.
        let coli = mgds_api::palette::hex(mgds_api::palette::taxon_colours(&["562", "1280"])[0]);
        assert!(s.svg.contains(&format!("fill=\"{coli}\"")));
        // A taxon that is not there: the whole tree.
        let all = sunburst(&results(), &SunburstOptions { root: Some("424242".into()), ..Default::default() }).unwrap();
        assert_eq!(all.path.len(), 1);
        assert!(matches!(
            sunburst(&results(), &SunburstOptions { size: 10, ..Default::default() }),
            Err(Error::InvalidSize { .. })
        ));
    }

    #[test]
    fn a_root_that_is_its_own_parent_is_the_root() {
        let mut r = results();
        r.table[0].parent_tax_id = Some("1".into());
        let s = sunburst(&r, &SunburstOptions::default()).unwrap();
        assert_eq!(s.path.len(), 1, "one crumb, not a loop");
        assert_eq!(s.path[0].reads, 700, "the host's reads come off once");
        assert!(s.svg.contains("Unclassified · 100 reads") && !s.svg.contains("<circle class=\"centre\" data-tax-id"));
        let text = krona_text(&r, true);
        assert!(text.starts_with("500\tBacteria\tEscherichia coli\n"), "{text}");
        r.table[0].readcount = 5;
        assert!(krona_text(&r, true).contains("\n5\n"), "reads at the root: a line with no lineage");
    }

    #[test]
    fn names_are_white_on_dark_colours() {
        assert!(dark("#0072B2") && dark("#222222"));
        assert!(!dark("#F0E442") && !dark("#EDEDED") && !dark("#56B4E9"));
    }

    #[test]
    fn krona_text_has_each_taxon_s_own_reads_under_its_lineage() {
        let text = krona_text(&results(), true);
        assert_eq!(
            text,
            "500\tBacteria\tEscherichia coli\n190\tBacteria\tStaphylococcus aureus\n10\tBacteria\n100\tUnclassified\n"
        );
        let with_host = krona_text(&results(), false);
        assert!(with_host.contains("200\tHomo sapiens\n"), "{with_host}");
    }
}
