//! Drawing a [`Comparison`]: stacked bars (one per sample) and a heatmap (samples by taxa), to
//! SVG with plotters; [`crate::svg_to_png`] makes the PNG.
//!
//! Every bar segment and heatmap cell is a `<rect>` with a `<title>` naming the sample, the
//! taxon and the value (browsers show it on hover), `data-sample` (the row) and, for a taxon,
//! `data-tax-id`, so a page can tell which taxon was clicked.

use plotters::prelude::*;
use plotters::style::FontTransform;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::Error;
use crate::chart::{OKABE_ITO, OTHER_COLOUR, format_tick, format_value};
use crate::compare::{CLUSTERING, Column, Comparison};
use crate::data::Metric;
use crate::font::{self, text, text_width, truncate_to_width};
use crate::svg::{Annotation, PixelRect, annotate_rects};

/// The size of a comparison chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChartSize {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels; `None` fits the samples (a row each, 6 to 22 pixels).
    pub height: Option<u32>,
}

impl Default for ChartSize {
    fn default() -> Self {
        ChartSize { width: 1100, height: None }
    }
}

const MIN_SIDE: u32 = 200;
const MAX_SIDE: u32 = 16000;
const MARGIN: i32 = 14;
const TITLE_SIZE: f64 = 19.0;
const NOTE_SIZE: f64 = 13.0;
const TEXT_COLOUR: RGBColor = RGBColor(0x22, 0x22, 0x22);
const MUTED_TEXT: RGBColor = RGBColor(0x55, 0x55, 0x55);
/// The colour of the "Unclassified" column, lighter than "Other".
const UNCLASSIFIED_COLOUR: [u8; 3] = [0xD9, 0xD9, 0xD9];

/// Colours for groups of samples: Okabe–Ito's seven, then the same in lighter tints, then
/// darker shades, so that up to 21 groups stay apart; past that, they repeat. (Taxa take their
/// own colours: [`mgds_api::palette`].)
pub(crate) fn palette(i: usize) -> [u8; 3] {
    let [r, g, b] = OKABE_ITO[i % OKABE_ITO.len()];
    let mix = |c: u8, towards: u8, t: f64| (f64::from(c) + (f64::from(towards) - f64::from(c)) * t).round() as u8;
    match (i / OKABE_ITO.len()) % 3 {
        0 => [r, g, b],
        1 => [mix(r, 255, 0.45), mix(g, 255, 0.45), mix(b, 255, 0.45)],
        _ => [mix(r, 0, 0.35), mix(g, 0, 0.35), mix(b, 0, 0.35)],
    }
}

/// Each column's colour: a taxon its own ([`mgds_api::palette`]), "Other" and the unclassified
/// reads their greys.
fn column_colours(c: &Comparison) -> Vec<RGBColor> {
    let ids: Vec<&str> = c.columns.iter().filter_map(Column::tax_id).collect();
    let mut taxa = mgds_api::palette::taxon_colours(&ids).into_iter();
    c.columns
        .iter()
        .map(|column| {
            let [r, g, b] = match column {
                Column::Taxon { .. } => taxa.next().unwrap_or(OTHER_COLOUR),
                Column::Other { .. } => OTHER_COLOUR,
                Column::Unclassified => UNCLASSIFIED_COLOUR,
            };
            RGBColor(r, g, b)
        })
        .collect()
}

fn draw_error<E: std::fmt::Display>(e: E) -> Error {
    Error::Draw(e.to_string())
}

fn what(metric: Metric) -> &'static str {
    match metric {
        Metric::Share(m) => m.label(),
        Metric::Readcount => "Reads",
    }
}

fn title_of(c: &Comparison) -> String {
    let taxa = c.columns.iter().filter(|x| matches!(x, Column::Taxon { .. })).count();
    let (what, rank, n) = (what(c.metric), c.rank.trim(), c.samples.len());
    if c.columns.iter().any(|x| matches!(x, Column::Other { .. })) {
        format!("{what} by {rank}: the top {taxa} taxa in {n} samples")
    } else {
        format!("{what} by {rank} in {n} samples")
    }
}

/// The hover title of one value.
fn hover(c: &Comparison, sample: usize, column: usize) -> String {
    let value = c.values[sample][column];
    let shown = match c.metric {
        Metric::Share(m) => format!("{value:.3}% ({})", m.label().to_lowercase()),
        Metric::Readcount => format!("{} reads", value.round() as u64),
    };
    let col = &c.columns[column];
    match col.tax_id() {
        Some(id) => format!("{}\n{} (tax id {id})\n{shown}", c.samples[sample], col.label()),
        None => format!("{}\n{}\n{shown}", c.samples[sample], col.label()),
    }
}

/// The chart's height: as given, or a row per sample (8 to 22 pixels) around `fixed` pixels,
/// and at least `beside` pixels (a legend or scale drawn beside the rows).
fn height_for(size: &ChartSize, rows: usize, fixed: i32, beside: i32) -> u32 {
    size.height.unwrap_or_else(|| {
        let row = if rows > 300 {
            8
        } else if rows > 100 {
            12
        } else {
            22
        };
        (fixed + (row * rows as i32).max(beside)).clamp(MIN_SIDE as i32, MAX_SIDE as i32) as u32
    })
}

fn check(width: u32, height: u32) -> Result<(), Error> {
    let ok = |s: u32| (MIN_SIDE..=MAX_SIDE).contains(&s);
    if !ok(width) || !ok(height) {
        return Err(Error::InvalidSize { width, height, min: MIN_SIDE, max: MAX_SIDE });
    }
    font::ensure_registered()
}

/// Draws the title and the notes line; returns the height they take.
fn heading<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    w: i32,
    title: &str,
    note: &str,
) -> Result<i32, Error> {
    let title = truncate_to_width(title, TITLE_SIZE, (w - 2 * MARGIN).max(0) as u32);
    root.draw(&Text::new(
        title,
        (w / 2, MARGIN),
        text(TITLE_SIZE).color(&TEXT_COLOUR).pos(Pos::new(HPos::Center, VPos::Top)),
    ))
    .map_err(draw_error)?;
    let note = truncate_to_width(note, NOTE_SIZE, (w - 2 * MARGIN).max(0) as u32);
    root.draw(&Text::new(
        note,
        (w / 2, MARGIN + 26),
        text(NOTE_SIZE).color(&MUTED_TEXT).pos(Pos::new(HPos::Center, VPos::Top)),
    ))
    .map_err(draw_error)?;
    Ok(MARGIN + 50)
}

/// Draws the legend (a swatch and a name per column) from `(x, y)` down; returns its width.
fn legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    c: &Comparison,
    x: i32,
    y: i32,
    max_w: u32,
) -> Result<(), Error> {
    let size = 12.0;
    let colours = column_colours(c);
    for (j, col) in c.columns.iter().enumerate() {
        let top = y + j as i32 * 18;
        root.draw(&Rectangle::new([(x, top), (x + 12, top + 12)], colours[j].filled())).map_err(draw_error)?;
        let label = truncate_to_width(&col.label(), size, max_w.saturating_sub(18));
        root.draw(&Text::new(
            label,
            (x + 18, top + 6),
            text(size).color(&TEXT_COLOUR).pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(draw_error)?;
    }
    Ok(())
}

/// The samples' labels, right-aligned in a column ending at `right`, a row each from `top`.
fn row_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    labels: &[String],
    right: i32,
    top: f64,
    row: f64,
    size: f64,
) -> Result<(), Error> {
    if row < 6.0 {
        // Too many rows to name each: the hover titles name them.
        return Ok(());
    }
    for (i, l) in labels.iter().enumerate() {
        let y = (top + row * (i as f64 + 0.5)).round() as i32;
        root.draw(&Text::new(
            l.clone(),
            (right, y),
            text(size).color(&TEXT_COLOUR).pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(draw_error)?;
    }
    Ok(())
}

/// One horizontal bar per sample, a segment per column in the legend's colours; for a measure,
/// each bar reaches the share its columns cover (100% with every taxon shown), for reads the
/// sample's reads in the columns.
pub fn stacked_bars(c: &Comparison, size: &ChartSize) -> Result<String, Error> {
    let n = c.samples.len();
    let h = height_for(size, n, 50 + 60 + MARGIN, c.columns.len() as i32 * 18);
    check(size.width, h)?;
    let w = size.width as i32;
    let mut svg = String::new();
    let mut cells: Vec<Annotation> = Vec::new();
    {
        let root = SVGBackend::with_string(&mut svg, (size.width, h)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let top = heading(&root, w, &title_of(c), &c.notes.join("; "))?;
        let bottom = h as i32 - MARGIN - 44;
        let row = f64::from((bottom - top).max(1)) / n.max(1) as f64;
        let label_size = (row * 0.6).clamp(8.0, 13.0);
        let labels: Vec<String> =
            c.samples.iter().map(|s| truncate_to_width(s, label_size, (size.width as f64 * 0.2) as u32)).collect();
        let label_w =
            if row < 6.0 { 0 } else { labels.iter().map(|l| text_width(l, label_size)).max().unwrap_or(0) as i32 + 10 };
        let legend_w = (w / 4).min(260);
        let x0 = MARGIN + label_w;
        let x1 = w - MARGIN - legend_w - 16;
        let colours = column_colours(c);
        let totals: Vec<f64> = c.values.iter().map(|r| r.iter().sum()).collect();
        let max = match c.metric {
            Metric::Share(_) => totals.iter().copied().fold(100.0_f64, f64::max),
            Metric::Readcount => totals.iter().copied().fold(1.0_f64, f64::max),
        };
        let px = |v: f64| x0 + ((v / max) * f64::from(x1 - x0)).round() as i32;
        row_labels(&root, &labels, x0 - 6, f64::from(top), row, label_size)?;
        let inset = if row > 4.0 { (row * 0.15).min(4.0) } else { 0.0 };
        for (i, values) in c.values.iter().enumerate() {
            let y0 = (f64::from(top) + row * i as f64 + inset).round() as i32;
            let y1 = ((f64::from(top) + row * (i + 1) as f64 - inset).round() as i32).max(y0 + 1);
            let mut at = 0.0;
            for (j, v) in values.iter().enumerate() {
                let (a, b) = (px(at), px(at + v));
                at += v;
                if b <= a {
                    continue;
                }
                let rect = PixelRect { x: a, y: y0, width: b - a, height: y1 - y0 };
                root.draw(&Rectangle::new([(a, y0), (b, y1)], colours[j].filled())).map_err(draw_error)?;
                cells.push(Annotation {
                    rect,
                    sample: i,
                    tax_id: c.columns[j].tax_id().map(str::to_string),
                    title: hover(c, i, j),
                });
            }
        }
        // The value axis.
        let axis = RGBColor(0x80, 0x80, 0x80);
        root.draw(&PathElement::new(vec![(x0, bottom), (x1, bottom)], axis)).map_err(draw_error)?;
        for k in 0..=5 {
            let v = max * f64::from(k) / 5.0;
            let x = px(v);
            root.draw(&PathElement::new(vec![(x, bottom), (x, bottom + 4)], axis)).map_err(draw_error)?;
            root.draw(&Text::new(
                format_tick(v, c.metric),
                (x, bottom + 6),
                text(12.0).color(&MUTED_TEXT).pos(Pos::new(HPos::Center, VPos::Top)),
            ))
            .map_err(draw_error)?;
        }
        let desc = match c.metric {
            Metric::Share(m) => format!("{} (%)", m.label()),
            Metric::Readcount => "Reads (taxon and descendants)".into(),
        };
        root.draw(&Text::new(
            desc,
            ((x0 + x1) / 2, bottom + 24),
            text(13.0).color(&TEXT_COLOUR).pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(draw_error)?;
        legend(&root, c, x1 + 16, top, legend_w as u32)?;
        root.present().map_err(draw_error)?;
    }
    annotate_rects(&svg, &cells)
}

/// A heatmap: a row per sample, a column per taxon (and "Other", "Unclassified"), each cell's
/// colour its value on a square-root scale (so that small values still show), with the scale
/// drawn beside. With `clustered`, the order of rows and columns is taken to come from
/// [`Comparison::clustered_samples`] and [`Comparison::clustered_columns`], and the chart says
/// how they were clustered.
pub fn heatmap(c: &Comparison, size: &ChartSize, clustered: bool) -> Result<String, Error> {
    let n = c.samples.len();
    let m = c.columns.len();
    // The names are measured before the size is known, so the font must be in place first.
    font::ensure_registered()?;
    // Column names stand upright above the cells.
    let label_size = 12.0;
    let names: Vec<String> = c.columns.iter().map(|col| truncate_to_width(&col.label(), label_size, 180)).collect();
    let names_h = names.iter().map(|l| text_width(l, label_size)).max().unwrap_or(0) as i32 + 10;
    let h = height_for(size, n, 50 + names_h + MARGIN + 10, 200);
    check(size.width, h)?;
    let w = size.width as i32;
    let mut svg = String::new();
    let mut cells: Vec<Annotation> = Vec::new();
    {
        let root = SVGBackend::with_string(&mut svg, (size.width, h)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let mut note = c.notes.join("; ");
        if clustered {
            note = format!("rows and columns clustered: {CLUSTERING}; {note}");
        }
        let top = heading(&root, w, &title_of(c), &note)? + names_h;
        let bottom = h as i32 - MARGIN;
        let row = f64::from((bottom - top).max(1)) / n.max(1) as f64;
        let row_size = (row * 0.6).clamp(8.0, 13.0);
        let labels: Vec<String> =
            c.samples.iter().map(|s| truncate_to_width(s, row_size, (size.width as f64 * 0.2) as u32)).collect();
        let label_w =
            if row < 6.0 { 0 } else { labels.iter().map(|l| text_width(l, row_size)).max().unwrap_or(0) as i32 + 10 };
        let scale_w = 70;
        let x0 = MARGIN + label_w;
        let cell_w = (f64::from(w - x0 - MARGIN - scale_w) / m.max(1) as f64).min(48.0);
        let x1 = x0 + (cell_w * m as f64).round() as i32;
        row_labels(&root, &labels, x0 - 6, f64::from(top), row, row_size)?;
        for (j, name) in names.iter().enumerate() {
            let x = (f64::from(x0) + cell_w * (j as f64 + 0.5)).round() as i32;
            root.draw(&Text::new(
                name.clone(),
                (x, top - 6),
                text(label_size)
                    .color(&TEXT_COLOUR)
                    .transform(FontTransform::Rotate270)
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(draw_error)?;
        }
        let max = c.values.iter().flatten().copied().fold(0.0_f64, f64::max).max(f64::MIN_POSITIVE);
        for (i, values) in c.values.iter().enumerate() {
            let y0 = (f64::from(top) + row * i as f64).round() as i32;
            let y1 = ((f64::from(top) + row * (i + 1) as f64).round() as i32).max(y0 + 1);
            for (j, v) in values.iter().enumerate() {
                let a = (f64::from(x0) + cell_w * j as f64).round() as i32;
                let b = ((f64::from(x0) + cell_w * (j + 1) as f64).round() as i32).max(a + 1);
                let rect = PixelRect { x: a, y: y0, width: b - a, height: y1 - y0 };
                root.draw(&Rectangle::new([(a, y0), (b, y1)], viridis((v / max).sqrt()).filled()))
                    .map_err(draw_error)?;
                cells.push(Annotation {
                    rect,
                    sample: i,
                    tax_id: c.columns[j].tax_id().map(str::to_string),
                    title: hover(c, i, j),
                });
            }
        }
        // The colour scale, with its ends and middle named.
        let (sx, sy0, sy1) = (x1 + 20, top, (top + 200).min(bottom));
        for k in 0..100 {
            let y = sy1 - (f64::from(sy1 - sy0) * f64::from(k + 1) / 100.0).round() as i32;
            let y_next = sy1 - (f64::from(sy1 - sy0) * f64::from(k) / 100.0).round() as i32;
            root.draw(&Rectangle::new([(sx, y), (sx + 14, y_next)], viridis(f64::from(k) / 99.0).filled()))
                .map_err(draw_error)?;
        }
        for (t, y) in [(1.0, sy0), (0.25, (sy0 + sy1) / 2), (0.0, sy1)] {
            root.draw(&Text::new(
                format_value(max * t, c.metric),
                (sx + 18, y),
                text(11.0).color(&MUTED_TEXT).pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(draw_error)?;
        }
        root.present().map_err(draw_error)?;
    }
    annotate_rects(&svg, &cells)
}

/// Viridis, from dark purple (0) to yellow (1), interpolated between nine of its colours.
fn viridis(t: f64) -> RGBColor {
    const STOPS: [[u8; 3]; 9] = [
        [0x44, 0x01, 0x54],
        [0x47, 0x2c, 0x7a],
        [0x3b, 0x51, 0x8b],
        [0x2c, 0x71, 0x8e],
        [0x21, 0x90, 0x8d],
        [0x27, 0xad, 0x81],
        [0x5c, 0xc8, 0x63],
        [0xaa, 0xdc, 0x32],
        [0xfd, 0xe7, 0x25],
    ];
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    let pos = t * (STOPS.len() - 1) as f64;
    let (i, f) = (pos.floor() as usize, pos.fract());
    let (a, b) = (STOPS[i.min(STOPS.len() - 1)], STOPS[(i + 1).min(STOPS.len() - 1)]);
    let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * f).round() as u8;
    RGBColor(mix(a[0], b[0]), mix(a[1], b[1]), mix(a[2], b[2]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{CompareOptions, Compared, compare};
    use mgds_api::{ClassificationResults, Measure, TaxonRow};

    fn results(counts: &[(&str, &str, u64)]) -> ClassificationResults {
        let total: u64 = counts.iter().map(|c| c.2).sum();
        let mut table = vec![TaxonRow {
            tax_id: "1".into(),
            name: "root".into(),
            rank: "no rank".into(),
            parent_tax_id: None,
            readcount: 0,
            readcount_w_children: total,
            abundance: None,
            abundance_w_children: None,
            filtered_readcount: None,
            filtered_readcount_w_children: None,
            reestimated_abundance: None,
            bases_abundance: None,
        }];
        for (id, name, n) in counts {
            table.push(TaxonRow {
                tax_id: (*id).into(),
                name: (*name).into(),
                rank: "species".into(),
                parent_tax_id: Some("1".into()),
                readcount: *n,
                readcount_w_children: *n,
                abundance: Some(*n as f64 / total as f64),
                ..table[0].clone()
            });
        }
        ClassificationResults { table, n_reads: total + 10, host_tax_ids: vec![], median_read_length: None, qc: None }
    }

    fn comparison() -> Comparison {
        let a = results(&[("562", "Escherichia coli", 70), ("1280", "Staphylococcus aureus", 30)]);
        let b = results(&[("562", "Escherichia coli", 10), ("573", "Klebsiella pneumoniae", 90)]);
        let samples = [Compared { label: "gut & co", results: &a }, Compared { label: "soil", results: &b }];
        compare(&samples, &CompareOptions { metric: Metric::Share(Measure::GenomeCopies), ..Default::default() })
            .unwrap()
    }

    #[test]
    fn stacked_bars_name_everything_and_title_each_segment() {
        let c = comparison();
        let svg = stacked_bars(&c, &ChartSize::default()).unwrap();
        for text in [
            "Share of genome copies by species",
            "Escherichia coli",
            "Klebsiella pneumoniae",
            "gut &amp; co",
            "soil",
            "unclassified reads hidden",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        // Four non-empty segments (E. coli and S. aureus in one, E. coli and K. pneumoniae in the
        // other), each with its sample, taxon and value.
        assert_eq!(svg.matches("class=\"cell\"").count(), 4);
        assert!(
            svg.contains(
                "<title>gut &amp; co\nEscherichia coli (tax id 562)\n70.000% (share of genome copies)</title>"
            ),
            "{svg}"
        );
        assert!(svg.contains("data-tax-id=\"573\""));
    }

    #[test]
    fn a_heatmap_has_a_cell_per_sample_and_taxon_and_says_how_it_was_clustered() {
        let c = comparison();
        let svg = heatmap(&c, &ChartSize::default(), false).unwrap();
        assert_eq!(svg.matches("class=\"cell\"").count(), 2 * 3);
        assert!(!svg.contains("clustered"));
        let order = c.clustered_samples();
        let clustered = c.clone().with_sample_order(&order);
        let svg = heatmap(&clustered, &ChartSize::default(), true).unwrap();
        assert!(svg.contains("clustered: Bray–Curtis dissimilarity, average linkage (UPGMA)"));
        assert!(svg.contains("Staphylococcus aureus"));
    }

    #[test]
    fn five_hundred_samples_and_fifty_taxa_draw() {
        let names: Vec<String> = (0..60).map(|i| format!("Species {i}")).collect();
        let ids: Vec<String> = (0..60).map(|i| format!("{}", 1000 + i)).collect();
        let all: Vec<ClassificationResults> = (0..500u64)
            .map(|s| {
                let counts: Vec<(&str, &str, u64)> =
                    (0..60).map(|t| (ids[t].as_str(), names[t].as_str(), 1 + (s * 7 + t as u64 * 13) % 97)).collect();
                results(&counts)
            })
            .collect();
        let labels: Vec<String> = (0..500).map(|i| format!("sample {i}")).collect();
        let samples: Vec<Compared> = all.iter().zip(&labels).map(|(r, l)| Compared { label: l, results: r }).collect();
        let c = compare(&samples, &CompareOptions { top_n: 50, ..Default::default() }).unwrap();
        assert_eq!(c.columns.len(), 51);
        let c = c.clone().with_sample_order(&c.clustered_samples());
        let heat = heatmap(&c, &ChartSize::default(), true).unwrap();
        assert_eq!(heat.matches("class=\"cell\"").count(), 500 * 51);
        let bars = stacked_bars(&c, &ChartSize::default()).unwrap();
        assert!(bars.matches("class=\"cell\"").count() > 500 * 40);
    }
}
