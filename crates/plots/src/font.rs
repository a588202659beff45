//! The embedded font and its registration with plotters.

use std::sync::OnceLock;

use plotters::style::{FontStyle, IntoFont, TextStyle, register_font};

use crate::Error;

/// The family name used both to look the font up in plotters and in the SVG's `font-family`
/// attribute, where the generic fallback applies if a viewer lacks DejaVu Sans.
pub(crate) const FAMILY: &str = "DejaVu Sans, sans-serif";

/// DejaVu Sans (Bitstream Vera licence, see `assets/fonts/LICENSE-DejaVu.txt`).
pub(crate) static DEJAVU_SANS: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// Registers the embedded font once per process; every drawing call goes through this first.
pub(crate) fn ensure_registered() -> Result<(), Error> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS).is_ok());
    if ok { Ok(()) } else { Err(Error::Draw("the embedded font could not be loaded".to_owned())) }
}

/// Text in the embedded family at `size` pixels (plotters' size; the SVG gets `size / 1.24`).
pub(crate) fn text(size: f64) -> TextStyle<'static> {
    (FAMILY, size).into_font().into()
}

/// Width in pixels of `s` set at `size`; 0 if the font cannot measure it.
pub(crate) fn text_width(s: &str, size: f64) -> u32 {
    (FAMILY, size).into_font().box_size(s).map(|(w, _)| w).unwrap_or(0)
}

/// `name` cut to fit `max_px` at `size`, ending in an ellipsis when cut. Names are measured at
/// most [`MEASURED_CHARS`] characters long (no line of a chart holds more), and the cut is found
/// by halving, so a long name costs a few measurements.
pub(crate) fn truncate_to_width(name: &str, size: f64, max_px: u32) -> String {
    let chars: Vec<char> = name.chars().take(MEASURED_CHARS).collect();
    if chars.len() == name.chars().count() && text_width(name, size) <= max_px {
        return name.to_owned();
    }
    let candidate = |n: usize| {
        let head: String = chars[..n].iter().collect();
        format!("{}…", head.trim_end())
    };
    // The longest head that fits with its ellipsis (widths grow with the head).
    let (mut lo, mut hi) = (0usize, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if text_width(&candidate(mid), size) <= max_px { lo = mid } else { hi = mid - 1 }
    }
    if lo == 0 { "…".to_owned() } else { candidate(lo) }
}

/// The most characters of a name measured (see [`truncate_to_width`]).
const MEASURED_CHARS: usize = 400;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_and_truncates_with_the_embedded_font() {
        ensure_registered().unwrap();
        let w = text_width("Escherichia coli", 13.0);
        assert!((60..200).contains(&w), "width {w}");
        assert_eq!(truncate_to_width("Escherichia coli", 13.0, 1000), "Escherichia coli");
        // A 16 KB name (a metadata value) is cut after a few measurements.
        let long = "x".repeat(16_000);
        let cut = truncate_to_width(&long, 13.0, 100);
        assert!(cut.ends_with('…') && text_width(&cut, 13.0) <= 100 && cut.len() > 5, "{cut}");
        assert_eq!(truncate_to_width("abc", 13.0, 1), "…");
        let cut = truncate_to_width("Bifidobacterium bifidum ATCC 29521 = JCM 1255 = DSM 20456", 13.0, 150);
        assert!(cut.ends_with('…') && cut.starts_with("Bifidobacterium"), "{cut}");
        assert!(text_width(&cut, 13.0) <= 150);
    }
}
