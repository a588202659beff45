//! Text from a service as a screen, a file or a terminal shows it: names and messages a
//! service sends are untrusted, so control characters (escape sequences, line breaks) become
//! spaces and the length has a ceiling.

/// The most characters of a name a service sends that a chart, table or file shows.
pub const MAX_SHOWN_CHARS: usize = 100;

/// `s` with control characters as spaces, at most `max` characters (an ellipsis marks a cut).
pub fn shown(s: &str, max: usize) -> String {
    let mut out: String = s.chars().take(max).map(|c| if c.is_control() { ' ' } else { c }).collect();
    if s.chars().count() > max {
        out.push('…');
    }
    out
}

/// A name from a service as charts and tables show it: [`shown`] to [`MAX_SHOWN_CHARS`].
pub fn shown_text(s: &str) -> String {
    shown(s, MAX_SHOWN_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_go_and_long_text_is_cut() {
        assert_eq!(shown("a\x1b[31mb\nc", 20), "a [31mb c");
        assert_eq!(shown("abcdef", 3), "abc…");
        assert_eq!(shown_text(&"x".repeat(150)).chars().count(), MAX_SHOWN_CHARS + 1);
    }
}
