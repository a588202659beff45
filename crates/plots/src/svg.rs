//! Post-processing of plotters' SVG: hover titles on the bars.
//!
//! plotters' SVG backend writes every filled rectangle as one self-closing element,
//! `<rect x=".." y=".." width=".." height=".." opacity=".." fill=".." stroke="none"/>`, and has no
//! way to attach a `<title>`. The chart knows the pixel rectangle of each bar (from the chart's
//! coordinate mapping), so each bar's element is found by its exact `x`, `y`, `width` and `height`
//! (which must match exactly one element) and rewritten as
//! `<rect class="bar" data-tax-id=".." x=..><title>..</title></rect>`. The rewrite depends only on
//! the input, so the output stays deterministic.

use crate::Error;

/// A bar's rectangle in SVG pixels, as plotters writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PixelRect {
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
}

/// What to attach to one bar.
pub(crate) struct BarAnnotation {
    pub rect: PixelRect,
    /// Class of the element: `bar`, or `bar other` for the "Other" bucket.
    pub class: &'static str,
    pub tax_id: Option<String>,
    /// Plain text (escaped here).
    pub title: String,
}

/// Escapes text for XML character data and attribute values.
pub(crate) fn escape_xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters other than tab and newline are not allowed in XML 1.0.
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// `<rect>` elements by their pixel rectangle (x, y, width, height): where each starts and where
/// its `/>` ends in the text.
type RectIndex = std::collections::HashMap<(i32, i32, i32, i32), Vec<(usize, usize)>>;

/// Where each `<rect>` that plotters wrote is, by its pixel rectangle: the element's start and
/// the end of its `/>`, for every element with those exact coordinates.
fn rect_index(svg: &str) -> RectIndex {
    let mut index = RectIndex::default();
    for (start, _) in svg.match_indices("<rect x=\"") {
        let rest = &svg[start..];
        let Some(close) = rest.find("/>") else { continue };
        let element = &rest[..close];
        let attr = |name: &str| -> Option<i32> {
            let at = element.find(&format!(" {name}=\""))? + name.len() + 3;
            element[at..].split('"').next()?.parse().ok()
        };
        if let (Some(x), Some(y), Some(w), Some(h)) = (attr("x"), attr("y"), attr("width"), attr("height")) {
            index.entry((x, y, w, h)).or_default().push((start, start + close + 2));
        }
    }
    index
}

/// Rewrites the `<rect>` elements found at `edits` (start, end, what to put before the
/// original attributes, the title), in any order.
fn rewrite(svg: &str, mut edits: Vec<(usize, usize, String, &str)>) -> String {
    edits.sort_by_key(|e| e.0);
    let mut out = String::with_capacity(svg.len() + edits.len() * 160);
    let mut at = 0;
    for (start, end, attributes, title) in edits {
        out.push_str(&svg[at..start]);
        out.push_str("<rect");
        out.push_str(&attributes);
        // The original attributes, without "<rect" and "/>".
        out.push_str(svg[start + "<rect".len()..end - 2].trim_end());
        out.push_str("><title>");
        out.push_str(&escape_xml(title));
        out.push_str("</title></rect>");
        at = end;
    }
    out.push_str(&svg[at..]);
    out
}

/// The one `<rect>` of `index` at `r`.
fn find(index: &RectIndex, r: PixelRect) -> Result<(usize, usize), Error> {
    match index.get(&(r.x, r.y, r.width, r.height)).map(Vec::as_slice) {
        Some([one]) => Ok(*one),
        _ => Err(Error::Draw(format!("rectangle {r:?} not found exactly once in the SVG"))),
    }
}

/// Gives each annotated bar's `<rect>` its class, tax id and `<title>`.
pub(crate) fn annotate_bars(svg: &str, bars: &[BarAnnotation]) -> Result<String, Error> {
    let index = rect_index(svg);
    let mut edits = Vec::with_capacity(bars.len());
    for bar in bars {
        let (start, end) = find(&index, bar.rect)?;
        let mut attributes = format!(" class=\"{}\"", bar.class);
        if let Some(id) = &bar.tax_id {
            attributes.push_str(&format!(" data-tax-id=\"{}\"", escape_xml(id)));
        }
        edits.push((start, end, attributes, bar.title.as_str()));
    }
    Ok(rewrite(svg, edits))
}

/// One value's rectangle in a comparison chart.
pub(crate) struct Annotation {
    pub rect: PixelRect,
    /// The sample's row.
    pub sample: usize,
    /// The taxon, for a taxon's value.
    pub tax_id: Option<String>,
    /// Plain text (escaped here).
    pub title: String,
}

/// Gives each value's `<rect>` `class="cell"`, `data-sample`, `data-tax-id` (for a taxon) and a
/// `<title>`; one pass over the SVG whatever the number of values.
pub(crate) fn annotate_rects(svg: &str, cells: &[Annotation]) -> Result<String, Error> {
    let index = rect_index(svg);
    let mut edits = Vec::with_capacity(cells.len());
    for cell in cells {
        let (start, end) = find(&index, cell.rect)?;
        let mut attributes = format!(" class=\"cell\" data-sample=\"{}\"", cell.sample);
        if let Some(id) = &cell.tax_id {
            attributes.push_str(&format!(" data-tax-id=\"{}\"", escape_xml(id)));
        }
        edits.push((start, end, attributes, cell.title.as_str()));
    }
    Ok(rewrite(svg, edits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(escape_xml(r#"A & B <c> "d" 'e'"#), "A &amp; B &lt;c&gt; &quot;d&quot; &apos;e&apos;");
        assert_eq!(escape_xml("a\u{1}b"), "a\u{FFFD}b");
    }

    #[test]
    fn annotates_the_matching_rect_only() {
        let svg = "<svg>\n<rect x=\"0\" y=\"0\" width=\"10\" height=\"10\" fill=\"#fff\"/>\n\
                   <rect x=\"1\" y=\"2\" width=\"3\" height=\"4\" fill=\"#000\" stroke=\"none\"/>\n</svg>";
        let bar = BarAnnotation {
            rect: PixelRect { x: 1, y: 2, width: 3, height: 4 },
            class: "bar",
            tax_id: Some("562".into()),
            title: "E. coli & co".into(),
        };
        let out = annotate_bars(svg, &[bar]).unwrap();
        assert_eq!(
            out,
            "<svg>\n<rect x=\"0\" y=\"0\" width=\"10\" height=\"10\" fill=\"#fff\"/>\n\
             <rect class=\"bar\" data-tax-id=\"562\" x=\"1\" y=\"2\" width=\"3\" height=\"4\" fill=\"#000\" \
             stroke=\"none\"><title>E. coli &amp; co</title></rect>\n</svg>"
        );
        let missing = BarAnnotation {
            rect: PixelRect { x: 9, y: 9, width: 9, height: 9 },
            class: "bar",
            tax_id: None,
            title: String::new(),
        };
        assert!(matches!(annotate_bars(svg, &[missing]), Err(Error::Draw(_))));
    }
}
