//! The reads' quality control of one sample as one SVG ([`qc_chart`]): four panels, read
//! lengths, base quality by position (median, quartiles and 10th–90th percentiles), reads by
//! mean quality, and reads by GC content, then the figures and the verdict written under them.
//! Every bar and position carries a `<title>` with its numbers, which browsers show on hover.
//! FASTA samples have no qualities: their two quality panels say so.

use mgds_api::{ReadQc, thousands};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::Error;
use crate::diversity_chart::{
    AXIS, GRID, LABEL_SIZE, MARGIN, MAX_SIDE, MIN_SIDE, MUTED_TEXT, NOTE_LINE, NOTE_SIZE, TEXT_COLOUR, TICK_SIZE,
    TITLE_SIZE, check_width, draw_error, draw_text, note_lines, tick_label, ticks,
};
use crate::font::truncate_to_width;
use crate::svg::escape_xml;

const BAR: RGBColor = RGBColor(0x00, 0x72, 0xB2);
const BAND_OUTER: RGBColor = RGBColor(0xC6, 0xDB, 0xEF);
const BAND_INNER: RGBColor = RGBColor(0x6B, 0xAE, 0xD6);
const MEDIAN: RGBColor = RGBColor(0x08, 0x30, 0x6B);
const FAIL: RGBColor = RGBColor(0xB0, 0x00, 0x20);
const PASS: RGBColor = RGBColor(0x1B, 0x7A, 0x3D);
const PANEL_H: i32 = 220;

/// A titled hover area over plotters' picture (plotters cannot attach a `<title>`).
struct Hover {
    x: i32,
    y: i32,
    w: i32,
    h: i32,
    title: String,
}

/// The figures of `qc` written out, one line each, for the chart's foot and for exports.
pub fn qc_lines(qc: &ReadQc) -> Vec<String> {
    let mut lines = vec![
        format!(
            "{} reads{}, {} bases; length {}–{} (median {}, mean {:.0}, N50 {})",
            thousands(qc.reads),
            if qc.pairs > 0 { format!(" ({} pairs)", thousands(qc.pairs)) } else { String::new() },
            thousands(qc.bases),
            thousands(qc.min_length),
            thousands(qc.max_length),
            thousands(qc.median_length),
            qc.mean_length,
            thousands(qc.n50)
        ),
        format!("GC {:.1}%, N or ambiguous {:.2}% of bases", qc.gc * 100.0, qc.n_share * 100.0),
    ];
    match (qc.mean_quality, qc.q30_share) {
        (Some(q), Some(q30)) => {
            lines.push(format!("Mean base quality Q{q:.1}; {:.1}% of bases at Q30 or above", q30 * 100.0))
        }
        _ => lines.push("No base qualities (FASTA)".to_string()),
    }
    if qc.failures.is_empty() {
        lines.push("Passed every threshold.".to_string());
    } else {
        for f in &qc.failures {
            lines.push(format!("Failed: {f}"));
        }
    }
    lines
}

/// The quality control of a sample as SVG, `width` pixels wide: four panels in a grid (two
/// side by side from 700 pixels), the figures and the verdict under them. `title` names the
/// sample on an exported picture; the page names it itself.
pub fn qc_chart(qc: &ReadQc, title: Option<&str>, width: u32) -> Result<String, Error> {
    check_width(width)?;
    let w = width as i32;
    let columns = if w >= 700 { 2 } else { 1 };
    let gap = 36;
    let panel_w = (w - 2 * MARGIN - gap * (columns - 1)) / columns;
    let rows = 4 / columns;
    let title_h = if title.is_some() { 34 } else { 0 };
    let notes = note_lines(&qc_lines(qc), (w - 2 * MARGIN).max(100) as u32);
    let panel_full = 24 + PANEL_H + 44;
    let top = MARGIN + title_h;
    let h = top + rows * panel_full + 10 + NOTE_LINE * notes.len() as i32 + MARGIN;
    if h as u32 > MAX_SIDE {
        return Err(Error::InvalidSize { width, height: h as u32, min: MIN_SIDE, max: MAX_SIDE });
    }
    let mut svg = String::new();
    let mut hovers = Vec::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, h as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        if let Some(t) = title {
            let t = truncate_to_width(t, TITLE_SIZE, (w - 2 * MARGIN) as u32);
            draw_text(&root, &t, (w / 2, MARGIN), TITLE_SIZE, &TEXT_COLOUR, Pos::new(HPos::Center, VPos::Top))?;
        }
        for i in 0..4 {
            let (col, row) = (i % columns, i / columns);
            let x0 = MARGIN + col * (panel_w + gap);
            let y0 = top + row * panel_full;
            let frame = Frame { left: x0 + 48, right: x0 + panel_w - 4, top: y0 + 24, bottom: y0 + 24 + PANEL_H };
            match i {
                0 => lengths_panel(&root, qc, &frame, &mut hovers)?,
                1 => quality_panel(&root, qc, &frame, &mut hovers)?,
                2 => histogram_panel(
                    &root,
                    &frame,
                    "Reads by mean quality",
                    "Mean base quality (Phred)",
                    &qc.read_quality,
                    "Q",
                    "No base qualities: FASTA reads",
                    &mut hovers,
                )?,
                _ => histogram_panel(
                    &root,
                    &frame,
                    "Reads by GC content",
                    "GC content (%)",
                    &qc.gc_content,
                    "% GC",
                    "No reads with A, C, G or T",
                    &mut hovers,
                )?,
            }
        }
        let mut y = top + rows * panel_full + 10;
        let mut colour = TEXT_COLOUR;
        for line in &notes {
            // A wrapped line keeps the colour of the line it continues (the verdict's lines
            // come last).
            if line.starts_with("Failed:") {
                colour = FAIL;
            } else if line.starts_with("Passed") {
                colour = PASS;
            }
            draw_text(&root, line, (MARGIN, y), NOTE_SIZE, &colour, Pos::new(HPos::Left, VPos::Top))?;
            y += NOTE_LINE;
        }
        root.present().map_err(draw_error)?;
    }
    Ok(with_hovers(svg, &hovers))
}

struct Frame {
    left: i32,
    right: i32,
    top: i32,
    bottom: i32,
}

impl Frame {
    fn width(&self) -> i32 {
        (self.right - self.left).max(1)
    }
}

type Root<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// A count on an axis: whole numbers only (a fractional tick of a small count is left
/// unlabelled), millions and thousands shortened to fit the axis's width.
fn count_label(t: f64) -> String {
    if t.fract() != 0.0 {
        String::new()
    } else if t >= 1e6 {
        format!("{}M", (t / 1e5).round() / 10.0)
    } else if t >= 1e4 {
        format!("{}k", (t / 1e2).round() / 10.0)
    } else {
        thousands(t as u64)
    }
}

/// The panel's name above it, the axis name below, the y grid from 0 to `max` at the left.
fn frame(
    root: &Root,
    f: &Frame,
    name: &str,
    x_name: &str,
    max: f64,
    y_label: &dyn Fn(f64) -> String,
) -> Result<(), Error> {
    draw_text(
        root,
        &truncate_to_width(name, LABEL_SIZE, (f.right - f.left + 48) as u32),
        (f.left - 48, f.top - 22),
        LABEL_SIZE,
        &TEXT_COLOUR,
        Pos::new(HPos::Left, VPos::Top),
    )?;
    let (_, values) = ticks(0.0, max, 4);
    for t in values {
        let y = f.bottom - ((t / max) * f64::from(f.bottom - f.top)).round() as i32;
        let colour = if t == 0.0 { AXIS } else { GRID };
        root.draw(&PathElement::new(vec![(f.left, y), (f.right, y)], colour)).map_err(draw_error)?;
        draw_text(root, &y_label(t), (f.left - 6, y), TICK_SIZE, &MUTED_TEXT, Pos::new(HPos::Right, VPos::Center))?;
    }
    draw_text(
        root,
        x_name,
        ((f.left + f.right) / 2, f.bottom + 24),
        TICK_SIZE,
        &MUTED_TEXT,
        Pos::new(HPos::Center, VPos::Top),
    )
}

fn x_ticks(root: &Root, f: &Frame, lo: f64, hi: f64, px: &dyn Fn(f64) -> i32) -> Result<(), Error> {
    let (step, values) = ticks(lo, hi, ((f.width() / 70).max(2)) as usize);
    for t in values {
        let x = px(t);
        root.draw(&PathElement::new(vec![(x, f.bottom), (x, f.bottom + 4)], AXIS)).map_err(draw_error)?;
        let label = if step >= 1000.0 { thousands(t as u64) } else { tick_label(t, step) };
        draw_text(root, &label, (x, f.bottom + 6), TICK_SIZE, &MUTED_TEXT, Pos::new(HPos::Center, VPos::Top))?;
    }
    Ok(())
}

fn empty(root: &Root, f: &Frame, name: &str, why: &str) -> Result<(), Error> {
    frame(root, f, name, "", 1.0, &|_| String::new())?;
    draw_text(
        root,
        why,
        ((f.left + f.right) / 2, (f.top + f.bottom) / 2),
        LABEL_SIZE,
        &MUTED_TEXT,
        Pos::new(HPos::Center, VPos::Center),
    )
}

/// Reads by length, one bar per bin, on a length axis (logarithmic for long reads).
fn lengths_panel(root: &Root, qc: &ReadQc, f: &Frame, hovers: &mut Vec<Hover>) -> Result<(), Error> {
    let name = "Read lengths";
    if qc.lengths.is_empty() {
        return empty(root, f, name, "No reads");
    }
    let max = qc.lengths.iter().map(|b| b.reads).max().unwrap_or(1).max(1) as f64;
    frame(
        root,
        f,
        name,
        if qc.long_reads { "Read length (bases, log scale)" } else { "Read length (bases)" },
        max,
        &|t| thousands(t as u64),
    )?;
    let n = qc.lengths.len() as i32;
    let bar_w = f.width() / n.max(1);
    for (i, b) in qc.lengths.iter().enumerate() {
        let x = f.left + i as i32 * f.width() / n;
        let hgt = ((b.reads as f64 / max) * f64::from(f.bottom - f.top)).round() as i32;
        if hgt > 0 {
            root.draw(&Rectangle::new([(x, f.bottom - hgt), (x + (bar_w - 1).max(1), f.bottom)], BAR.filled()))
                .map_err(draw_error)?;
        }
        let range = if b.from == b.to {
            format!("{} bases", thousands(b.from))
        } else {
            format!("{}–{} bases", thousands(b.from), thousands(b.to))
        };
        hovers.push(Hover {
            x,
            y: f.top,
            w: bar_w.max(1),
            h: f.bottom - f.top,
            title: format!("{range}: {} reads", thousands(b.reads)),
        });
    }
    // Bins are drawn side by side; label the first, the middle and the last.
    let last = qc.lengths.len() - 1;
    for i in [0, last / 2, last] {
        let b = &qc.lengths[i];
        let x = f.left + i as i32 * f.width() / n + bar_w / 2;
        draw_text(
            root,
            &thousands(b.from),
            (x, f.bottom + 6),
            TICK_SIZE,
            &MUTED_TEXT,
            Pos::new(HPos::Center, VPos::Top),
        )?;
        if last == 0 {
            break;
        }
    }
    Ok(())
}

/// Base quality by position: the 10th–90th percentile band, the quartiles, the median line.
fn quality_panel(root: &Root, qc: &ReadQc, f: &Frame, hovers: &mut Vec<Hover>) -> Result<(), Error> {
    let name = "Base quality by position";
    if qc.quality_by_position.is_empty() {
        return empty(root, f, name, "No base qualities: FASTA reads");
    }
    let top_q = qc.quality_by_position.iter().map(|p| p.p90).max().unwrap_or(40).max(40);
    let max = f64::from(top_q);
    frame(root, f, name, "Position in read (bases)", max, &|t| format!("Q{t:.0}"))?;
    let (first, last) = (qc.quality_by_position[0].from, qc.quality_by_position[qc.quality_by_position.len() - 1].to);
    let log = qc.long_reads && last > 1_000;
    let scale = |v: f64| if log { v.max(1.0).ln() } else { v };
    let (lo, hi) =
        (scale(first as f64 - if log { 0.0 } else { 0.5 }), scale(last as f64 + if log { 0.0 } else { 0.5 }));
    let span = (hi - lo).max(1e-9);
    let px = |v: f64| f.left + (((scale(v) - lo) / span) * f64::from(f.width())).round() as i32;
    let py = |q: f64| f.bottom - ((q / max) * f64::from(f.bottom - f.top)).round() as i32;
    // Q30 and Q20 as guides.
    for (q, label) in [(20.0, "Q20"), (30.0, "Q30")] {
        if q < max {
            let y = py(q);
            root.draw(&PathElement::new(vec![(f.left, y), (f.right, y)], RGBColor(0xB0, 0xB0, 0xB0)))
                .map_err(draw_error)?;
            draw_text(root, label, (f.right - 2, y - 2), TICK_SIZE, &MUTED_TEXT, Pos::new(HPos::Right, VPos::Bottom))?;
        }
    }
    let mut median = Vec::new();
    for p in &qc.quality_by_position {
        let (x0, x1) = if log {
            (px(p.from as f64), px(p.to as f64 + 1.0))
        } else {
            (px(p.from as f64 - 0.5), px(p.to as f64 + 0.5))
        };
        let x1 = x1.max(x0 + 1);
        // A band whose ends are one score is no band: the median line shows it.
        for (hi, lo, colour) in [(p.p90, p.p10, BAND_OUTER), (p.q3, p.q1, BAND_INNER)] {
            let (top, bottom) = (py(f64::from(hi)), py(f64::from(lo)));
            if bottom > top {
                root.draw(&Rectangle::new([(x0, top), (x1, bottom)], colour.filled())).map_err(draw_error)?;
            }
        }
        median.push(((x0 + x1) / 2, py(f64::from(p.median))));
        let at = if p.from == p.to {
            format!("Position {}", thousands(p.from))
        } else {
            format!("Positions {}–{}", thousands(p.from), thousands(p.to))
        };
        hovers.push(Hover {
            x: x0,
            y: f.top,
            w: x1 - x0,
            h: f.bottom - f.top,
            title: format!(
                "{at}: median Q{}, quartiles Q{}–Q{}, 10th–90th percentile Q{}–Q{}, mean Q{:.1} ({} bases)",
                p.median,
                p.q1,
                p.q3,
                p.p10,
                p.p90,
                p.mean,
                thousands(p.bases)
            ),
        });
    }
    root.draw(&PathElement::new(median, ShapeStyle::from(&MEDIAN).stroke_width(2))).map_err(draw_error)?;
    if log {
        let mut t = 1u64;
        while t <= last {
            if t >= first {
                let x = px(t as f64);
                draw_text(
                    root,
                    &thousands(t),
                    (x, f.bottom + 6),
                    TICK_SIZE,
                    &MUTED_TEXT,
                    Pos::new(HPos::Center, VPos::Top),
                )?;
            }
            t *= 10;
        }
        Ok(())
    } else {
        x_ticks(root, f, first as f64, last as f64, &px)
    }
}

/// Reads per value (`counts[i]` reads at value `i`), as bars from the first to the last value
/// with reads.
#[allow(clippy::too_many_arguments)]
fn histogram_panel(
    root: &Root,
    f: &Frame,
    name: &str,
    x_name: &str,
    counts: &[u64],
    unit: &str,
    none: &str,
    hovers: &mut Vec<Hover>,
) -> Result<(), Error> {
    let (Some(first), Some(last)) = (counts.iter().position(|&c| c > 0), counts.iter().rposition(|&c| c > 0)) else {
        return empty(root, f, name, none);
    };
    // At least ten values wide, so that one value is not one wide bar.
    let first = first.min(last.saturating_sub(9));
    let last = last.max(first + 9).min(counts.len() - 1);
    let max = counts[first..=last].iter().copied().max().unwrap_or(1).max(1) as f64;
    frame(root, f, name, x_name, max, &count_label)?;
    let n = (last - first + 1) as i32;
    let px = |v: f64| f.left + (((v - first as f64 + 0.5) / f64::from(n)) * f64::from(f.width())).round() as i32;
    let total: u64 = counts.iter().sum();
    for (i, &c) in counts.iter().enumerate().take(last + 1).skip(first) {
        let x0 = f.left + (i - first) as i32 * f.width() / n;
        let x1 = f.left + (i - first + 1) as i32 * f.width() / n;
        let hgt = ((c as f64 / max) * f64::from(f.bottom - f.top)).round() as i32;
        if hgt > 0 {
            root.draw(&Rectangle::new([(x0, f.bottom - hgt), (x1 - 1, f.bottom)], BAR.filled())).map_err(draw_error)?;
        }
        let value = match unit {
            "Q" if i + 1 == counts.len() => format!("Q{i} or above"),
            "Q" => format!("Q{i}"),
            _ => format!("{i}{unit}"),
        };
        hovers.push(Hover {
            x: x0,
            y: f.top,
            w: (x1 - x0).max(1),
            h: f.bottom - f.top,
            title: format!("{value}: {} reads ({:.1}%)", thousands(c), c as f64 * 100.0 / total.max(1) as f64),
        });
    }
    x_ticks(root, f, first as f64, last as f64, &px)
}

fn with_hovers(svg: String, hovers: &[Hover]) -> String {
    let mut g = String::from("<g class=\"hover\">\n");
    for h in hovers {
        g.push_str(&format!(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#000000\" fill-opacity=\"0\"><title>{}</title></rect>\n",
            h.x,
            h.y,
            h.w.max(1),
            h.h.max(1),
            escape_xml(&h.title)
        ));
    }
    g.push_str("</g>\n");
    match svg.rfind("</svg>") {
        Some(end) => format!("{}{g}{}", &svg[..end], &svg[end..]),
        None => svg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mgds_api::{LengthBin, PositionQuality};

    fn qc(fasta: bool) -> ReadQc {
        let mut gc = vec![0; 101];
        gc[50] = 700;
        gc[52] = 300;
        ReadQc {
            reads: 1_000,
            pairs: 500,
            bases: 150_000,
            min_length: 150,
            max_length: 150,
            mean_length: 150.0,
            median_length: 150,
            n50: 150,
            long_reads: false,
            gc: 0.51,
            n_share: 0.001,
            mean_quality: (!fasta).then_some(35.2),
            q30_share: (!fasta).then_some(0.91),
            lengths: vec![LengthBin { from: 150, to: 150, reads: 1_000 }],
            lengths_log_scale: false,
            quality_by_position: if fasta {
                vec![]
            } else {
                (1..=150)
                    .map(|p| PositionQuality {
                        from: p,
                        to: p,
                        bases: 1_000,
                        mean: 35.0,
                        p10: 25,
                        q1: 32,
                        median: 36,
                        q3: 38,
                        p90: 40,
                    })
                    .collect()
            },
            read_quality: if fasta { vec![] } else { (0..=60).map(|q| if q == 35 { 1_000 } else { 0 }).collect() },
            gc_content: gc,
            failures: if fasta { vec!["only 3 reads".into()] } else { vec![] },
        }
    }

    #[test]
    fn four_panels_with_titles_and_the_verdict() {
        let svg = qc_chart(&qc(false), Some("sample <A>"), 900).unwrap();
        for text in ["Read lengths", "Base quality by position", "Reads by mean quality", "Reads by GC content"] {
            assert!(svg.contains(text), "{text}");
        }
        assert!(svg.contains("sample &lt;A&gt;"));
        assert!(svg.contains("Passed every threshold."));
        assert!(svg.contains("<title>Position 1: median Q36, quartiles Q32–Q38"), "position hover");
        assert!(svg.contains("<title>50% GC: 700 reads (70.0%)</title>"));
        assert!(svg.contains("1,000 reads (500 pairs), 150,000 bases"));
        // One column when narrow.
        let narrow = qc_chart(&qc(false), None, 500).unwrap();
        assert!(narrow.contains("Read lengths"));
    }

    #[test]
    fn fasta_says_it_has_no_qualities_and_failures_are_written() {
        let svg = qc_chart(&qc(true), None, 900).unwrap();
        assert!(svg.contains("No base qualities: FASTA reads"));
        assert!(svg.contains("No base qualities (FASTA)"));
        assert!(svg.contains("Failed: only 3 reads"));
        assert!(qc_chart(&qc(true), None, 10).is_err());
    }
}
