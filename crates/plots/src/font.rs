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

/// `name` cut to fit `max_px` at `size`, ending in an ellipsis when cut.
pub(crate) fn truncate_to_width(name: &str, size: f64, max_px: u32) -> String {
    if text_width(name, size) <= max_px {
        return name.to_owned();
    }
    let mut chars: Vec<char> = name.chars().collect();
    while !chars.is_empty() {
        chars.pop();
        let head: String = chars.iter().collect();
        let candidate = format!("{}…", head.trim_end());
        if text_width(&candidate, size) <= max_px {
            return candidate;
        }
    }
    "…".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_and_truncates_with_the_embedded_font() {
        ensure_registered().unwrap();
        let w = text_width("Escherichia coli", 13.0);
        assert!((60..200).contains(&w), "width {w}");
        assert_eq!(truncate_to_width("Escherichia coli", 13.0, 1000), "Escherichia coli");
        let cut = truncate_to_width("Bifidobacterium bifidum ATCC 29521 = JCM 1255 = DSM 20456", 13.0, 150);
        assert!(cut.ends_with('…') && cut.starts_with("Bifidobacterium"), "{cut}");
        assert!(text_width(&cut, 13.0) <= 150);
    }
}
