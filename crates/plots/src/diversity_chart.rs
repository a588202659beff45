//! Drawing diversity: the principal coordinates of a distance matrix as a scatter of samples
//! ([`ordination_chart`]), and alpha diversity as one strip of points per group for each
//! measure ([`alpha_chart`]), to SVG with plotters; [`crate::svg_to_png`] makes the PNG.
//!
//! Both charts write their notes (the tests with their method, parameters and p-values, then
//! how the numbers were made) under the plot, wrapped to its width, so that a chart saved on
//! its own still says what it shows. Every sample's point is a `<circle class="point">` with
//! `data-sample` (its index in the input) and a `<title>` naming it and its values, which
//! browsers show on hover. Groups are coloured alike in both charts: in the order of their
//! names, Okabe–Ito's colours first, samples without a value in grey.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::Error;
use crate::chart::OTHER_COLOUR;
use crate::compare_chart::palette;
use crate::font::{self, text, text_width, truncate_to_width};
use crate::svg::escape_xml;
use mgds_api::palette::hex;

/// One sample in an ordination.
#[derive(Debug, Clone, PartialEq)]
pub struct OrdinationPoint {
    /// The sample's name.
    pub label: String,
    /// Its value of the grouping field, if samples are grouped and it has one.
    pub group: Option<String>,
    /// Its coordinate on the horizontal axis.
    pub x: f64,
    /// Its coordinate on the vertical axis.
    pub y: f64,
}

/// An ordination to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Ordination {
    /// The chart's title.
    pub title: String,
    /// The horizontal axis ("PC1 (43.1%)").
    pub x_label: String,
    /// The vertical axis.
    pub y_label: String,
    /// The field the points are coloured by, if any.
    pub group_by: Option<String>,
    /// The samples.
    pub points: Vec<OrdinationPoint>,
    /// Lines written under the plot: tests first, then methods.
    pub notes: Vec<String>,
}

/// One alpha diversity measure over the samples.
#[derive(Debug, Clone, PartialEq)]
pub struct AlphaPanel {
    /// Its name ("Shannon diversity").
    pub label: String,
    /// One value per sample, none where undefined.
    pub values: Vec<Option<f64>>,
    /// The test between groups, in words, if one was made.
    pub test: Option<String>,
}

/// Alpha diversity to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct AlphaChart {
    /// The chart's title.
    pub title: String,
    /// The samples' names.
    pub samples: Vec<String>,
    /// Each sample's group, if samples are grouped.
    pub groups: Vec<Option<String>>,
    /// The grouping field, if any.
    pub group_by: Option<String>,
    /// One panel per measure, side by side.
    pub panels: Vec<AlphaPanel>,
    /// Lines written under the panels.
    pub notes: Vec<String>,
}

pub(crate) const MIN_SIDE: u32 = 300;
pub(crate) const MAX_SIDE: u32 = 16000;
pub(crate) const MARGIN: i32 = 14;
pub(crate) const TITLE_SIZE: f64 = 19.0;
pub(crate) const LABEL_SIZE: f64 = 13.0;
pub(crate) const TICK_SIZE: f64 = 12.0;
pub(crate) const NOTE_SIZE: f64 = 12.0;
pub(crate) const NOTE_LINE: i32 = 17;
/// Lines of a panel's test written at most.
const MAX_TEST_LINES: usize = 5;
/// Notes written at most (longer lists end with an ellipsis line).
const MAX_NOTE_LINES: usize = 40;
pub(crate) const TEXT_COLOUR: RGBColor = RGBColor(0x22, 0x22, 0x22);
pub(crate) const MUTED_TEXT: RGBColor = RGBColor(0x55, 0x55, 0x55);
pub(crate) const AXIS: RGBColor = RGBColor(0x80, 0x80, 0x80);
pub(crate) const GRID: RGBColor = RGBColor(0xE4, 0xE4, 0xE4);

pub(crate) fn draw_error<E: std::fmt::Display>(e: E) -> Error {
    Error::Draw(e.to_string())
}

pub(crate) fn check_width(width: u32) -> Result<(), Error> {
    if !(MIN_SIDE..=MAX_SIDE).contains(&width) {
        return Err(Error::InvalidSize { width, height: width, min: MIN_SIDE, max: MAX_SIDE });
    }
    font::ensure_registered()
}

/// The groups in the order drawn (by name; samples without a value last, as `None`).
fn group_order(groups: &[Option<String>]) -> Vec<Option<String>> {
    let mut named: Vec<String> = groups.iter().flatten().cloned().collect();
    named.sort();
    named.dedup();
    let mut order: Vec<Option<String>> = named.into_iter().map(Some).collect();
    if groups.iter().any(Option::is_none) {
        order.push(None);
    }
    order
}

/// A group's colour: ungrouped samples (`grouped` false) all take the first colour; grouped, a
/// sample without a value is grey.
fn group_colour(order: &[Option<String>], group: &Option<String>, grouped: bool) -> [u8; 3] {
    match group {
        None if !grouped => palette(0),
        None => OTHER_COLOUR,
        Some(_) => palette(order.iter().position(|g| g == group).unwrap_or(0)),
    }
}

fn group_name(group: &Option<String>, field: Option<&str>) -> String {
    match (group, field) {
        (Some(g), _) => g.clone(),
        (None, Some(f)) => format!("no {f}"),
        (None, None) => "all samples".to_string(),
    }
}

/// `s` broken into lines at most `max_px` wide at `size` (a word longer than a line is cut).
pub(crate) fn wrap(s: &str, size: f64, max_px: u32) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in s.split_whitespace() {
        let candidate = if line.is_empty() { word.to_string() } else { format!("{line} {word}") };
        if text_width(&candidate, size) <= max_px || line.is_empty() {
            line = candidate;
        } else {
            lines.push(std::mem::take(&mut line));
            line = word.to_string();
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines.into_iter().map(|l| truncate_to_width(&l, size, max_px)).collect()
}

/// The notes as lines `max_px` wide, at most [`MAX_NOTE_LINES`].
pub(crate) fn note_lines(notes: &[String], max_px: u32) -> Vec<String> {
    let mut lines: Vec<String> = notes.iter().flat_map(|n| wrap(n, NOTE_SIZE, max_px)).collect();
    if lines.len() > MAX_NOTE_LINES {
        lines.truncate(MAX_NOTE_LINES - 1);
        lines.push("…".to_string());
    }
    lines
}

/// About `n` round steps covering `lo..=hi`: the step and the ticks.
pub(crate) fn ticks(lo: f64, hi: f64, n: usize) -> (f64, Vec<f64>) {
    let span = (hi - lo).abs().max(f64::MIN_POSITIVE);
    let raw = span / n.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = magnitude
        * match raw / magnitude {
            r if r < 1.5 => 1.0,
            r if r < 3.0 => 2.0,
            r if r < 7.0 => 5.0,
            _ => 10.0,
        };
    let first = (lo / step - 1e-9).ceil() as i64;
    let out = (first..)
        .map(|i| i as f64 * step)
        .take_while(|t| *t <= hi + step * 1e-9)
        .take(50)
        .map(|t| if t.abs() < step * 1e-9 { 0.0 } else { t })
        .collect();
    (step, out)
}

pub(crate) fn tick_label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 { 0 } else { (-step.log10().floor()) as usize };
    format!("{v:.decimals$}")
}

/// A value for a hover title: 4 significant figures.
fn shown(v: f64) -> String {
    if v == 0.0 {
        "0".to_string()
    } else if (1e-3..1e5).contains(&v.abs()) {
        let decimals = (3 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
        format!("{v:.decimals$}")
    } else {
        format!("{v:.3e}")
    }
}

/// Pads a range so points are not drawn on its edge, and gives a flat one some width.
fn padded(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) {
        return (-1.0, 1.0);
    }
    let span = hi - lo;
    if span <= f64::EPSILON * lo.abs().max(1.0) {
        let d = (lo.abs() * 0.1).max(1.0);
        return (lo - d, hi + d);
    }
    (lo - span * 0.08, hi + span * 0.08)
}

/// Points drawn over plotters' picture, each with its title (plotters cannot attach one).
fn with_points(svg: String, points: &[(i32, i32, [u8; 3], usize, String)]) -> String {
    let mut circles = String::from("<g class=\"points\">\n");
    for (x, y, colour, sample, title) in points {
        circles.push_str(&format!(
            "<circle class=\"point\" data-sample=\"{sample}\" cx=\"{x}\" cy=\"{y}\" r=\"5\" fill=\"{}\" \
             stroke=\"#FFFFFF\" stroke-width=\"1\"><title>{}</title></circle>\n",
            hex(*colour),
            escape_xml(title)
        ));
    }
    circles.push_str("</g>\n");
    match svg.rfind("</svg>") {
        Some(end) => format!("{}{circles}{}", &svg[..end], &svg[end..]),
        None => svg,
    }
}

pub(crate) fn draw_text<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    s: &str,
    at: (i32, i32),
    size: f64,
    colour: &RGBColor,
    pos: Pos,
) -> Result<(), Error> {
    root.draw(&Text::new(s.to_string(), at, text(size).color(colour).pos(pos))).map_err(draw_error)
}

/// The horizontal grid lines at `ticks` (step, values) from `left` to `right`, each labelled
/// at the left; with `zero_axis`, the line at 0 drawn as an axis.
pub(crate) fn y_grid<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    (step, values): (f64, Vec<f64>),
    (left, right): (i32, i32),
    py: &dyn Fn(f64) -> i32,
    zero_axis: bool,
) -> Result<(), Error> {
    for t in values {
        let y = py(t);
        let colour = if zero_axis && t == 0.0 { AXIS } else { GRID };
        root.draw(&PathElement::new(vec![(left, y), (right, y)], colour)).map_err(draw_error)?;
        let at = (left - 6, y);
        draw_text(root, &tick_label(t, step), at, TICK_SIZE, &MUTED_TEXT, Pos::new(HPos::Right, VPos::Center))?;
    }
    Ok(())
}

/// Groups named in a legend at most; the rest are counted on one line.
const MAX_LEGEND: usize = 24;

/// The legend's height for `groups` groups.
fn legend_height(groups: usize) -> i32 {
    20 + 18 * groups.min(MAX_LEGEND) as i32 + if groups > MAX_LEGEND { 18 } else { 0 }
}

/// Draws the legend of the groups from `(x, y)` down, at most `max_w` wide.
fn legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    order: &[Option<String>],
    counts: &[usize],
    field: Option<&str>,
    (x, y): (i32, i32),
    max_w: u32,
) -> Result<(), Error> {
    let mut at = y;
    if let Some(f) = field {
        draw_text(
            root,
            &truncate_to_width(f, LABEL_SIZE, max_w),
            (x, at),
            LABEL_SIZE,
            &TEXT_COLOUR,
            Pos::new(HPos::Left, VPos::Top),
        )?;
        at += 20;
    }
    for (g, n) in order.iter().zip(counts).take(MAX_LEGEND) {
        let [r, gr, b] = group_colour(order, g, true);
        root.draw(&Circle::new((x + 6, at + 7), 5, RGBColor(r, gr, b).filled())).map_err(draw_error)?;
        let name = truncate_to_width(&format!("{} ({n})", group_name(g, field)), LABEL_SIZE, max_w.saturating_sub(18));
        draw_text(root, &name, (x + 16, at), LABEL_SIZE, &TEXT_COLOUR, Pos::new(HPos::Left, VPos::Top))?;
        at += 18;
    }
    if order.len() > MAX_LEGEND {
        let more = format!("and {} more groups", order.len() - MAX_LEGEND);
        draw_text(root, &more, (x, at), LABEL_SIZE, &MUTED_TEXT, Pos::new(HPos::Left, VPos::Top))?;
    }
    Ok(())
}

/// The ordination as SVG, `width` pixels wide at 96 dpi: the samples on the two axes, coloured
/// by group with a legend, the notes below.
pub fn ordination_chart(o: &Ordination, width: u32) -> Result<String, Error> {
    check_width(width)?;
    let w = width as i32;
    let order = group_order(&o.points.iter().map(|p| p.group.clone()).collect::<Vec<_>>());
    let counts: Vec<usize> = order.iter().map(|g| o.points.iter().filter(|p| &p.group == g).count()).collect();
    let legend_w = if o.group_by.is_some() { (w / 4).min(240) } else { 0 };
    let plot_left = MARGIN + 70;
    let plot_right = w - MARGIN - legend_w - if legend_w > 0 { 20 } else { 10 };
    let plot_side = (plot_right - plot_left).max(100);
    let plot_h = (f64::from(plot_side) * 0.7).clamp(200.0, 640.0) as i32;
    let plot_h = if legend_w > 0 { plot_h.max(legend_height(order.len())) } else { plot_h };
    let notes = note_lines(&o.notes, (w - 2 * MARGIN).max(100) as u32);
    let top = MARGIN + 34;
    let bottom = top + plot_h;
    let h = bottom + 48 + NOTE_LINE * notes.len() as i32 + MARGIN;
    if h as u32 > MAX_SIDE {
        return Err(Error::InvalidSize { width, height: h as u32, min: MIN_SIDE, max: MAX_SIDE });
    }
    let finite = |f: fn(&OrdinationPoint) -> f64| o.points.iter().map(f).filter(|v| v.is_finite());
    let (x_lo, x_hi) =
        padded(finite(|p| p.x).fold(f64::INFINITY, f64::min), finite(|p| p.x).fold(f64::NEG_INFINITY, f64::max));
    let (y_lo, y_hi) =
        padded(finite(|p| p.y).fold(f64::INFINITY, f64::min), finite(|p| p.y).fold(f64::NEG_INFINITY, f64::max));
    let px = |v: f64| plot_left + ((v - x_lo) / (x_hi - x_lo) * f64::from(plot_right - plot_left)).round() as i32;
    let py = |v: f64| bottom - ((v - y_lo) / (y_hi - y_lo) * f64::from(plot_h)).round() as i32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, h as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let title = truncate_to_width(&o.title, TITLE_SIZE, (w - 2 * MARGIN) as u32);
        draw_text(&root, &title, (w / 2, MARGIN), TITLE_SIZE, &TEXT_COLOUR, Pos::new(HPos::Center, VPos::Top))?;
        // Grid and ticks.
        let (xs, x_ticks) = ticks(x_lo, x_hi, 6);
        for t in &x_ticks {
            let x = px(*t);
            let colour = if *t == 0.0 { AXIS } else { GRID };
            root.draw(&PathElement::new(vec![(x, top), (x, bottom)], colour)).map_err(draw_error)?;
            draw_text(
                &root,
                &tick_label(*t, xs),
                (x, bottom + 6),
                TICK_SIZE,
                &MUTED_TEXT,
                Pos::new(HPos::Center, VPos::Top),
            )?;
        }
        y_grid(&root, ticks(y_lo, y_hi, 6), (plot_left, plot_right), &py, true)?;
        root.draw(&Rectangle::new([(plot_left, top), (plot_right, bottom)], AXIS.stroke_width(1)))
            .map_err(draw_error)?;
        draw_text(
            &root,
            &o.x_label,
            ((plot_left + plot_right) / 2, bottom + 24),
            LABEL_SIZE,
            &TEXT_COLOUR,
            Pos::new(HPos::Center, VPos::Top),
        )?;
        root.draw(&Text::new(
            o.y_label.clone(),
            (MARGIN, (top + bottom) / 2),
            text(LABEL_SIZE)
                .color(&TEXT_COLOUR)
                .transform(plotters::style::FontTransform::Rotate270)
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(draw_error)?;
        if legend_w > 0 {
            legend(&root, &order, &counts, o.group_by.as_deref(), (plot_right + 20, top), legend_w as u32)?;
        }
        for (k, line) in notes.iter().enumerate() {
            let y = bottom + 48 + NOTE_LINE * k as i32;
            draw_text(&root, line, (MARGIN, y), NOTE_SIZE, &MUTED_TEXT, Pos::new(HPos::Left, VPos::Top))?;
        }
        root.present().map_err(draw_error)?;
    }
    let points: Vec<(i32, i32, [u8; 3], usize, String)> = o
        .points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.x.is_finite() && p.y.is_finite())
        .map(|(i, p)| {
            let group = p.group.as_ref().map(|g| format!(" · {g}")).unwrap_or_default();
            let title = format!(
                "{}{group} · {} {}, {} {}",
                p.label,
                axis_name(&o.x_label),
                shown(p.x),
                axis_name(&o.y_label),
                shown(p.y)
            );
            (px(p.x), py(p.y), group_colour(&order, &p.group, o.group_by.is_some()), i, title)
        })
        .collect();
    Ok(with_points(svg, &points))
}

/// "PC1" of "PC1 (43.1%)".
fn axis_name(label: &str) -> &str {
    label.split(" (").next().unwrap_or(label)
}

/// Alpha diversity as SVG, `width` pixels wide at 96 dpi: a panel per measure, side by side,
/// each with a strip of points per group (spread sideways so they do not hide each other), a
/// bar at each group's median, and the panel's test written above it.
pub fn alpha_chart(a: &AlphaChart, width: u32) -> Result<String, Error> {
    check_width(width)?;
    let w = width as i32;
    let order = group_order(&a.groups);
    let k = a.panels.len().max(1) as i32;
    let gap = 40;
    let panel_w = ((w - 2 * MARGIN - gap * (k - 1)) / k).max(60);
    let notes = note_lines(&a.notes, (w - 2 * MARGIN).max(100) as u32);
    let tests: Vec<Vec<String>> = a
        .panels
        .iter()
        .map(|p| {
            p.test
                .as_deref()
                .map(|t| wrap(t, TICK_SIZE, panel_w as u32).into_iter().take(MAX_TEST_LINES).collect())
                .unwrap_or_default()
        })
        .collect();
    let test_lines = tests.iter().map(Vec::len).max().unwrap_or(0) as i32;
    let top = MARGIN + 34 + 22 + test_lines * 16 + 8;
    let plot_h = 320;
    let bottom = top + plot_h;
    let h = bottom + 30 + 10 + NOTE_LINE * notes.len() as i32 + MARGIN;
    if h as u32 > MAX_SIDE {
        return Err(Error::InvalidSize { width, height: h as u32, min: MIN_SIDE, max: MAX_SIDE });
    }
    let mut svg = String::new();
    let mut points = Vec::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, h as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let title = truncate_to_width(&a.title, TITLE_SIZE, (w - 2 * MARGIN) as u32);
        draw_text(&root, &title, (w / 2, MARGIN), TITLE_SIZE, &TEXT_COLOUR, Pos::new(HPos::Center, VPos::Top))?;
        for (pi, panel) in a.panels.iter().enumerate() {
            let left = MARGIN + pi as i32 * (panel_w + gap) + 44;
            let right = MARGIN + pi as i32 * (panel_w + gap) + panel_w;
            let name = truncate_to_width(&panel.label, LABEL_SIZE, (right - left + 44) as u32);
            draw_text(
                &root,
                &name,
                ((left + right) / 2, MARGIN + 34),
                LABEL_SIZE,
                &TEXT_COLOUR,
                Pos::new(HPos::Center, VPos::Top),
            )?;
            for (li, line) in tests[pi].iter().enumerate() {
                let at = (MARGIN + pi as i32 * (panel_w + gap), MARGIN + 34 + 20 + li as i32 * 16);
                draw_text(&root, line, at, TICK_SIZE, &MUTED_TEXT, Pos::new(HPos::Left, VPos::Top))?;
            }
            let values: Vec<f64> = panel.values.iter().flatten().copied().filter(|v| v.is_finite()).collect();
            // The values' own range (not from zero), so that differences between groups show.
            let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            // At least 2% of the largest value high, so that rounding-sized differences do
            // not fill the panel.
            let floor = 0.02 * hi.abs();
            let (lo, hi) = if hi - lo < floor { ((lo + hi - floor) / 2.0, (lo + hi + floor) / 2.0) } else { (lo, hi) };
            let (lo, hi) = if values.is_empty() { (0.0, 1.0) } else { padded(lo, hi) };
            let py = |v: f64| bottom - ((v - lo) / (hi - lo) * f64::from(plot_h)).round() as i32;
            y_grid(&root, ticks(lo, hi, 5), (left, right), &py, false)?;
            root.draw(&Rectangle::new([(left, top), (right, bottom)], AXIS.stroke_width(1))).map_err(draw_error)?;
            let slot = f64::from(right - left) / order.len().max(1) as f64;
            for (gi, g) in order.iter().enumerate() {
                let centre = left as f64 + slot * (gi as f64 + 0.5);
                let label =
                    truncate_to_width(&group_name(g, a.group_by.as_deref()), TICK_SIZE, (slot - 4.0).max(8.0) as u32);
                draw_text(
                    &root,
                    &label,
                    (centre.round() as i32, bottom + 6),
                    TICK_SIZE,
                    &MUTED_TEXT,
                    Pos::new(HPos::Center, VPos::Top),
                )?;
                let members: Vec<(usize, f64)> = a
                    .groups
                    .iter()
                    .enumerate()
                    .filter(|(_, x)| *x == g)
                    .filter_map(|(i, _)| {
                        panel.values.get(i).copied().flatten().filter(|v| v.is_finite()).map(|v| (i, v))
                    })
                    .collect();
                let spread = (slot * 0.6).min(80.0);
                for (j, (i, v)) in members.iter().enumerate() {
                    // Golden-ratio offsets: spread evenly, the same for the same input.
                    let offset = ((j as f64 * 0.618_033_988_75).fract() - 0.5) * spread;
                    let name = a.samples.get(*i).cloned().unwrap_or_default();
                    let group = g.as_ref().map(|g| format!(" · {g}")).unwrap_or_default();
                    let title = format!("{name}{group} · {} {}", panel.label, shown(*v));
                    let colour = group_colour(&order, g, a.group_by.is_some());
                    points.push(((centre + offset).round() as i32, py(*v), colour, *i, title));
                }
                if !members.is_empty() {
                    let mut sorted: Vec<f64> = members.iter().map(|m| m.1).collect();
                    sorted.sort_by(f64::total_cmp);
                    let n = sorted.len();
                    let median = if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 };
                    let half = (spread / 2.0 + 6.0).round() as i32;
                    let y = py(median);
                    let c = centre.round() as i32;
                    root.draw(&PathElement::new(vec![(c - half, y), (c + half, y)], TEXT_COLOUR.stroke_width(2)))
                        .map_err(draw_error)?;
                }
            }
        }
        for (k, line) in notes.iter().enumerate() {
            let y = bottom + 40 + NOTE_LINE * k as i32;
            draw_text(&root, line, (MARGIN, y), NOTE_SIZE, &MUTED_TEXT, Pos::new(HPos::Left, VPos::Top))?;
        }
        root.present().map_err(draw_error)?;
    }
    Ok(with_points(svg, &points))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ordination() -> Ordination {
        Ordination {
            title: "PCoA of Bray–Curtis distances".into(),
            x_label: "PC1 (61.2%)".into(),
            y_label: "PC2 (20.0%)".into(),
            group_by: Some("site".into()),
            points: vec![
                OrdinationPoint { label: "a & b".into(), group: Some("river".into()), x: -0.3, y: 0.1 },
                OrdinationPoint { label: "c".into(), group: Some("lake".into()), x: 0.2, y: -0.05 },
                OrdinationPoint { label: "d".into(), group: None, x: 0.2, y: -0.05 },
            ],
            notes: vec!["PERMANOVA by site: pseudo-F 2.1, p = 0.3".into(), "Methods. ".repeat(80)],
        }
    }

    #[test]
    fn an_ordination_has_a_titled_point_per_sample_coloured_by_group() {
        let svg = ordination_chart(&ordination(), 900).unwrap();
        assert_eq!(svg.matches("<circle class=\"point\"").count(), 3, "{svg}");
        // Two samples on one spot are both there, each with its own title.
        assert!(svg.contains("<title>a &amp; b · river · PC1 -0.3000, PC2 0.1000</title>"), "{svg}");
        assert!(svg.contains("data-sample=\"2\""));
        // Groups by name: lake is the first colour, river the second, no value grey.
        let lake = hex(palette(0));
        let river = hex(palette(1));
        assert!(svg.contains("data-sample=\"1\" cx") && svg.contains(&format!("fill=\"{lake}\"")));
        assert!(svg.contains(&format!("fill=\"{river}\"")) && svg.contains(&format!("fill=\"{}\"", hex(OTHER_COLOUR))));
        assert!(svg.contains("PERMANOVA by site"), "the test is written on the chart");
        assert!(svg.contains("no site (1)"), "the legend names samples without a value");
        // The long note is wrapped, not cut to one line.
        assert!(svg.matches("Methods.").count() >= 70, "{}", svg.matches("Methods.").count());
        assert!(crate::svg_to_png(&svg, 1.0).is_ok());
    }

    #[test]
    fn flat_or_missing_coordinates_and_bad_sizes_are_handled() {
        let mut o = ordination();
        for p in &mut o.points {
            p.y = 0.0;
        }
        o.points[0].x = f64::NAN;
        let svg = ordination_chart(&o, 700).unwrap();
        assert_eq!(svg.matches("<circle class=\"point\"").count(), 2);
        assert!(matches!(ordination_chart(&o, 10), Err(Error::InvalidSize { .. })));
    }

    #[test]
    fn alpha_panels_have_a_strip_per_group_and_their_tests() {
        let a = AlphaChart {
            title: "Alpha diversity at species".into(),
            samples: vec!["s1".into(), "s2".into(), "s3".into(), "s4".into()],
            groups: vec![Some("A".into()), Some("A".into()), Some("B".into()), None],
            group_by: Some("site".into()),
            panels: vec![
                AlphaPanel {
                    label: "Observed taxa".into(),
                    values: vec![Some(3.0), Some(5.0), Some(4.0), None],
                    test: Some("Mann–Whitney U, two-sided: p = 0.67".into()),
                },
                AlphaPanel {
                    label: "Shannon".into(),
                    values: vec![Some(0.5), Some(1.0), Some(0.9), Some(0.1)],
                    test: None,
                },
            ],
            notes: vec!["Alpha diversity from the reads of each taxon at rank species.".into()],
        };
        let svg = alpha_chart(&a, 1000).unwrap();
        // One undefined value is left out: 3 + 4 points.
        assert_eq!(svg.matches("<circle class=\"point\"").count(), 7, "{svg}");
        assert!(svg.contains("<title>s3 · B · Shannon 0.9000</title>"), "{svg}");
        assert!(svg.contains("Mann–Whitney U"));
        assert!(svg.contains("no site"));
        assert!(crate::svg_to_png(&svg, 1.0).is_ok());
    }

    #[test]
    fn ticks_are_round() {
        let (step, t) = ticks(0.0, 1.0, 5);
        let labels: Vec<String> = t.iter().map(|t| tick_label(*t, step)).collect();
        assert_eq!(labels, ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
        let (step, t) = ticks(-0.37, 0.52, 4);
        assert_eq!(step, 0.2);
        assert_eq!(tick_label(t[0], step), "-0.2");
        assert_eq!(shown(1234.5678), "1235");
        assert_eq!(shown(0.000012), "1.200e-5");
    }
}
