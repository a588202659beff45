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

/// Gives each annotated bar's `<rect>` its class, tax id and `<title>`.
pub(crate) fn annotate_bars(svg: &str, bars: &[BarAnnotation]) -> Result<String, Error> {
    // (start of the element, end of "/>" exclusive, annotation)
    let mut edits: Vec<(usize, usize, &BarAnnotation)> = Vec::with_capacity(bars.len());
    for bar in bars {
        let r = bar.rect;
        let needle = format!("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" ", r.x, r.y, r.width, r.height);
        let mut hits = svg.match_indices(&needle).map(|(i, _)| i);
        let (Some(start), None) = (hits.next(), hits.next()) else {
            return Err(Error::Draw(format!("bar rectangle {r:?} not found exactly once in the SVG")));
        };
        let close = svg[start..].find("/>").ok_or_else(|| Error::Draw("unterminated <rect> in the SVG".to_owned()))?;
        edits.push((start, start + close + 2, bar));
    }
    edits.sort_by_key(|e| e.0);

    let mut out = String::with_capacity(svg.len() + bars.len() * 160);
    let mut at = 0;
    for (start, end, bar) in edits {
        out.push_str(&svg[at..start]);
        out.push_str("<rect class=\"");
        out.push_str(bar.class);
        out.push('"');
        if let Some(id) = &bar.tax_id {
            out.push_str(" data-tax-id=\"");
            out.push_str(&escape_xml(id));
            out.push('"');
        }
        // The original attributes, without "<rect" and "/>".
        out.push_str(svg[start + "<rect".len()..end - 2].trim_end());
        out.push_str("><title>");
        out.push_str(&escape_xml(&bar.title));
        out.push_str("</title></rect>");
        at = end;
    }
    out.push_str(&svg[at..]);
    Ok(out)
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
