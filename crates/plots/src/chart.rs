//! Drawing the horizontal bar chart, to SVG or PNG.

use mgds_api::{ClassificationResults, Measure};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::data::{AbundanceChartOptions, Bar, Metric, top_taxa};
use crate::font::{self, text, text_width, truncate_to_width};
use crate::svg::{BarAnnotation, PixelRect, annotate_bars};
use crate::{Chart, Error};

/// The Okabe–Ito colour-blind-safe palette (black left out), as RGB: groups' colours start with
/// it, and so does the taxa's palette ([`mgds_api::palette`]).
pub const OKABE_ITO: [[u8; 3]; 7] = mgds_api::palette::OKABE_ITO;

/// The colour of the "Other" bar, a neutral grey.
pub const OTHER_COLOUR: [u8; 3] = [0xA6, 0xA6, 0xA6];

/// Smallest and largest allowed image side in pixels.
const MIN_SIDE: u32 = 200;
const MAX_SIDE: u32 = 8000;

const MARGIN: i32 = 14;
const TITLE_SIZE: f64 = 20.0;
const TICK_SIZE: f64 = 14.0;
const DESC_SIZE: f64 = 15.0;
const TEXT_COLOUR: RGBColor = RGBColor(0x22, 0x22, 0x22);
const MUTED_TEXT: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// The abundance chart of `results` as SVG, with its bars.
///
/// Each bar's `<rect>` carries `class="bar"` (`"bar other"` for the "Other" bucket), a
/// `data-tax-id` attribute (not on "Other") and a `<title>` child with the full name, tax id and
/// value, which browsers show as a tooltip when the SVG is inlined in a page.
pub fn abundance_bars(results: &ClassificationResults, opts: &AbundanceChartOptions) -> Result<Chart, Error> {
    let bars = checked_bars(results, opts)?;
    let mut svg = String::new();
    let rects = {
        let root = SVGBackend::with_string(&mut svg, (opts.width, opts.height)).into_drawing_area();
        let rects = draw(&root, &bars, opts)?;
        root.present().map_err(draw_error)?;
        rects
    };
    let annotations: Vec<BarAnnotation> = bars
        .iter()
        .zip(rects)
        .map(|(bar, rect)| BarAnnotation {
            rect,
            class: if bar.is_other() { "bar other" } else { "bar" },
            tax_id: bar.tax_id.clone(),
            title: hover_title(bar, opts.metric),
        })
        .collect();
    let svg = annotate_bars(&svg, &annotations)?;
    Ok(Chart { svg, bars })
}

/// The abundance chart of `results` as a PNG of `opts.width` x `opts.height` pixels: the SVG of
/// [`abundance_bars`] rasterised by [`svg_to_png`], so the PNG looks exactly like the SVG.
///
/// (plotters' own bitmap backend was not used: with `ab_glyph` it places each glyph at a whole
/// pixel and ignores its side bearing, which leaves visible gaps inside words.)
pub fn abundance_png(results: &ClassificationResults, opts: &AbundanceChartOptions) -> Result<Vec<u8>, Error> {
    svg_to_png(&abundance_bars(results, opts)?.svg, 1.0)
}

/// Rasterises an SVG (such as [`Chart::svg`]) to PNG, `scale` times its own size (use 2.0 for
/// high-density screens). Text is set with the embedded font only; system fonts are never read.
pub fn svg_to_png(svg: &str, scale: f32) -> Result<Vec<u8>, Error> {
    crate::raster::svg_to_png(svg, scale)
}

/// The bars to draw, after checking the size and that there is something to draw.
fn checked_bars(results: &ClassificationResults, opts: &AbundanceChartOptions) -> Result<Vec<Bar>, Error> {
    let ok = |side: u32| (MIN_SIDE..=MAX_SIDE).contains(&side);
    if !ok(opts.width) || !ok(opts.height) {
        return Err(Error::InvalidSize { width: opts.width, height: opts.height, min: MIN_SIDE, max: MAX_SIDE });
    }
    let bars = top_taxa(results, opts);
    if bars.is_empty() {
        return Err(Error::NoData { rank: opts.rank.clone() });
    }
    font::ensure_registered()?;
    Ok(bars)
}

fn draw_error<E: std::fmt::Display>(e: E) -> Error {
    Error::Draw(e.to_string())
}

/// Draws the chart on `root` and returns each bar's rectangle in pixels, in the order of `bars`.
///
/// Layout (all in pixels): the title on top; names right-aligned in a column on the left whose
/// width fits the longest (truncated) name; bars from the value axis at the bottom; each bar's
/// value just right of its end, with the axis extended so that the longest bar's value fits.
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    bars: &[Bar],
    opts: &AbundanceChartOptions,
) -> Result<Vec<PixelRect>, Error> {
    root.fill(&WHITE).map_err(draw_error)?;
    let (w, h) = (opts.width as i32, opts.height as i32);
    let n = bars.len();

    let title = opts.title.clone().unwrap_or_else(|| default_title(opts, bars));
    let title_h = if title.trim().is_empty() { 0 } else { 34 };
    if title_h > 0 {
        let title = truncate_to_width(&title, TITLE_SIZE, (w - 2 * MARGIN).max(0) as u32);
        root.draw(&Text::new(
            title,
            (w / 2, MARGIN),
            text(TITLE_SIZE).color(&TEXT_COLOUR).pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(draw_error)?;
    }

    // Room below the plot for tick labels and the axis description.
    let x_area = 48;
    let plot_top = MARGIN + title_h;
    let plot_bottom = h - MARGIN - x_area;
    let band = f64::from((plot_bottom - plot_top).max(1)) / n as f64;
    let label_size = (band * 0.55).clamp(9.0, 15.0);
    let value_size = (label_size - 1.0).max(9.0);

    let max_label_px = (f64::from(w) * 0.38) as u32;
    let labels: Vec<String> = bars.iter().map(|b| truncate_to_width(&b.label, label_size, max_label_px)).collect();
    let label_w = labels.iter().map(|l| text_width(l, label_size)).max().unwrap_or(0) as i32 + 12;
    let values: Vec<String> = bars.iter().map(|b| format_value(b.value, opts.metric)).collect();
    let value_w = values.iter().map(|v| text_width(v, value_size)).max().unwrap_or(0) as i32 + 10;

    // The last tick label is centred on the right end of the axis: leave room for half of it.
    let right_margin = MARGIN + 18;
    let plot_w = f64::from((w - MARGIN - label_w - right_margin).max(1));
    let max_value = bars.iter().map(|b| b.value).fold(0.0_f64, f64::max);
    let x_max = max_value * plot_w / (plot_w - f64::from(value_w)).max(plot_w / 3.0);

    let metric = opts.metric;
    let mut chart = ChartBuilder::on(root)
        .margin_top(plot_top)
        .margin_left(MARGIN)
        .margin_right(right_margin)
        .margin_bottom(MARGIN)
        .x_label_area_size(x_area)
        .y_label_area_size(label_w)
        .build_cartesian_2d(0f64..x_max, 0f64..n as f64)
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(7)
        .x_label_formatter(&|v| format_tick(*v, metric))
        .x_desc(axis_description(metric))
        .label_style(text(TICK_SIZE).color(&MUTED_TEXT))
        .axis_desc_style(text(DESC_SIZE).color(&TEXT_COLOUR))
        .bold_line_style(RGBColor(0xE3, 0xE3, 0xE3))
        .light_line_style(TRANSPARENT)
        .axis_style(RGBColor(0x80, 0x80, 0x80))
        .draw()
        .map_err(draw_error)?;

    // Bar i (0 = top) fills the middle 70% of its band, but no more than MAX_BAR pixels, so that
    // a chart of two or three taxa does not turn into slabs.
    const MAX_BAR: f64 = 32.0;
    let inset = 0.15_f64.max(0.5 - MAX_BAR / band / 2.0);
    let mut rects = Vec::with_capacity(n);
    let ids: Vec<&str> =
        bars.iter().filter(|b| !b.is_other()).map(|b| b.tax_id.as_deref().unwrap_or_default()).collect();
    let mut colours = mgds_api::palette::taxon_colours(&ids).into_iter();
    for (i, bar) in bars.iter().enumerate() {
        let slot_top = (n - i) as f64;
        let (x0, y0) = chart.backend_coord(&(0.0, slot_top - inset));
        let (x1, y1) = chart.backend_coord(&(bar.value, slot_top - 1.0 + inset));
        // At least one pixel wide, so that tiny values still show (and can be hovered).
        let rect =
            PixelRect { x: x0.min(x1), y: y0.min(y1), width: (x1 - x0).abs().max(1), height: (y1 - y0).abs().max(1) };
        let [r, g, b] = if bar.is_other() { OTHER_COLOUR } else { colours.next().unwrap_or(OTHER_COLOUR) };
        root.draw(&Rectangle::new(
            [(rect.x, rect.y), (rect.x + rect.width, rect.y + rect.height)],
            RGBColor(r, g, b).filled(),
        ))
        .map_err(draw_error)?;

        let mid_y = rect.y + rect.height / 2;
        let label_colour = if bar.is_other() { MUTED_TEXT } else { TEXT_COLOUR };
        root.draw(&Text::new(
            labels[i].clone(),
            (rect.x - 8, mid_y),
            text(label_size).color(&label_colour).pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(draw_error)?;
        root.draw(&Text::new(
            values[i].clone(),
            (rect.x + rect.width + 5, mid_y),
            text(value_size).color(&MUTED_TEXT).pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(draw_error)?;
        rects.push(rect);
    }
    Ok(rects)
}

fn default_title(opts: &AbundanceChartOptions, bars: &[Bar]) -> String {
    let what = match opts.metric {
        Metric::Share(m) => m.label(),
        Metric::Readcount => "Reads",
    };
    let rank = opts.rank.trim();
    if bars.iter().any(Bar::is_other) {
        format!("{what} by {rank} (top {})", opts.top_n.max(1))
    } else {
        format!("{what} by {rank}")
    }
}

fn axis_description(metric: Metric) -> &'static str {
    match metric {
        Metric::Share(Measure::Reestimated) => "Re-estimated abundance (% of reads, Bracken's method)",
        Metric::Share(Measure::GenomeCopies) => "Share of genome copies (%, reads over genome length)",
        Metric::Share(Measure::BasesGenomeCopies) => "Share of genome copies (%, bases over genome length)",
        Metric::Share(Measure::ReadShare) => "Share of all reads in the sample (%)",
        Metric::Readcount => "Reads (taxon and descendants)",
    }
}

/// The value printed at the end of a bar.
pub(crate) fn format_value(v: f64, metric: Metric) -> String {
    match metric {
        Metric::Share(_) if v >= 10.0 => format!("{v:.1}%"),
        Metric::Share(_) if v >= 0.01 => format!("{v:.2}%"),
        Metric::Share(_) => "<0.01%".to_owned(),
        Metric::Readcount => thousands(v.round() as u64),
    }
}

/// The value in a bar's hover title, more precise than on the chart.
fn hover_title(bar: &Bar, metric: Metric) -> String {
    let value = match metric {
        Metric::Share(m) => format!("{:.3}% ({})", bar.value, m.label().to_lowercase()),
        Metric::Readcount => format!("{} reads", thousands(bar.value.round() as u64)),
    };
    match &bar.tax_id {
        Some(id) => format!("{}\ntax id {id}\n{value}", bar.label),
        None => format!("{}\n{value}", bar.label),
    }
}

/// An axis tick: `12.5%`, or a compact count (`750`, `12.5k`, `3M`).
pub(crate) fn format_tick(v: f64, metric: Metric) -> String {
    fn trim(v: f64) -> String {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
    match metric {
        Metric::Share(_) => format!("{}%", trim(v)),
        Metric::Readcount if v.abs() >= 1e6 => format!("{}M", trim(v / 1e6)),
        Metric::Readcount if v.abs() >= 1e3 => format!("{}k", trim(v / 1e3)),
        Metric::Readcount => trim(v),
    }
}

pub(crate) use mgds_api::thousands;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_values_and_ticks() {
        assert_eq!(format_value(19.3127, Metric::Share(Measure::GenomeCopies)), "19.3%");
        assert_eq!(format_value(2.621, Metric::Share(Measure::GenomeCopies)), "2.62%");
        assert_eq!(format_value(0.004, Metric::Share(Measure::GenomeCopies)), "<0.01%");
        assert_eq!(format_value(3_475_466.0, Metric::Readcount), "3,475,466");
        assert_eq!(format_value(999.0, Metric::Readcount), "999");
        assert_eq!(format_tick(12.5, Metric::Share(Measure::GenomeCopies)), "12.5%");
        assert_eq!(format_tick(0.0, Metric::Share(Measure::GenomeCopies)), "0%");
        assert_eq!(format_tick(1_500_000.0, Metric::Readcount), "1.5M");
        assert_eq!(format_tick(20_000.0, Metric::Readcount), "20k");
        assert_eq!(format_tick(250.0, Metric::Readcount), "250");
    }
}
