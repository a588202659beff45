//! The colour of each taxon, the same in every chart of every sample and run (the abundance
//! chart, the comparison's bars, the run dashboard), with no two taxa of one chart alike.
//!
//! The rule, stated once and used by every chart:
//! - [`PALETTE`] holds 64 colours: Okabe–Ito's seven (colour-blind safe) first, then 57 more at
//!   golden-angle steps round the hue circle in three lightnesses; none is grey (grey is for
//!   "Other" and the unclassified reads).
//! - A taxon's own colour is `PALETTE[fnv1a(tax id) % 64]`: the same taxon, the same colour,
//!   whatever else is drawn with it.
//! - Where two taxa of one chart would share a colour, the one with the smaller tax id keeps it
//!   and the other takes the next free colour of the palette (in palette order). So a taxon
//!   moves only in a chart that holds another taxon of its colour, and a chart of up to 64 taxa
//!   never repeats a colour (a comparison draws at most 50 taxa, a sunburst colours its 63
//!   largest segments).

use std::sync::OnceLock;

/// How many colours the palette holds.
pub const PALETTE_SIZE: usize = 64;

/// The Okabe–Ito colour-blind-safe palette without black, as RGB.
pub const OKABE_ITO: [[u8; 3]; 7] = [
    [0x00, 0x72, 0xB2], // blue
    [0xE6, 0x9F, 0x00], // orange
    [0x00, 0x9E, 0x73], // bluish green
    [0xCC, 0x79, 0xA7], // reddish purple
    [0x56, 0xB4, 0xE9], // sky blue
    [0xD5, 0x5E, 0x00], // vermillion
    [0xF0, 0xE4, 0x42], // yellow
];

/// The palette (see the module's notes).
pub fn palette() -> &'static [[u8; 3]; PALETTE_SIZE] {
    static PALETTE: OnceLock<[[u8; 3]; PALETTE_SIZE]> = OnceLock::new();
    PALETTE.get_or_init(|| {
        let mut p = [[0u8; 3]; PALETTE_SIZE];
        p[..OKABE_ITO.len()].copy_from_slice(&OKABE_ITO);
        for (k, c) in p.iter_mut().enumerate().skip(OKABE_ITO.len()) {
            let k = k - OKABE_ITO.len();
            let hue = (20.0 + k as f64 * 137.507_764) % 360.0;
            let saturation = [0.70, 0.55][k % 2];
            let lightness = [0.45, 0.62, 0.33][k % 3];
            *c = hsl(hue, saturation, lightness);
        }
        p
    })
}

fn hsl(h: f64, s: f64, l: f64) -> [u8; 3] {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let x = c * (1.0 - ((h / 60.0) % 2.0 - 1.0).abs());
    let m = l - c / 2.0;
    let (r, g, b) = match (h / 60.0) as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    [byte(r), byte(g), byte(b)]
}

/// FNV-1a, 64 bits: a hash that is the same on every machine and in every version.
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The index in [`palette`] of a taxon's own colour.
pub fn own_colour(tax_id: &str) -> usize {
    (fnv1a(tax_id) % PALETTE_SIZE as u64) as usize
}

/// The colours of the taxa of one chart, in the order given (see the module's notes); a tax id
/// given twice gets the same colour.
pub fn taxon_colours(tax_ids: &[&str]) -> Vec<[u8; 3]> {
    // Who keeps a contested colour: the smaller tax id (numerically, where it is a number).
    let mut order: Vec<usize> = (0..tax_ids.len()).collect();
    let key = |i: &usize| (tax_ids[*i].parse::<u64>().unwrap_or(u64::MAX), tax_ids[*i]);
    order.sort_by(|a, b| key(a).cmp(&key(b)));
    let mut taken = [false; PALETTE_SIZE];
    let mut given: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut index = vec![0usize; tax_ids.len()];
    for i in order {
        let id = tax_ids[i];
        if let Some(&c) = given.get(id) {
            index[i] = c;
            continue;
        }
        let own = own_colour(id);
        let c = (0..PALETTE_SIZE).map(|step| (own + step) % PALETTE_SIZE).find(|&c| !taken[c]).unwrap_or(own);
        taken[c] = true;
        given.insert(id, c);
        index[i] = c;
    }
    index.into_iter().map(|c| palette()[c]).collect()
}

/// A colour as `#RRGGBB`.
pub fn hex([r, g, b]: [u8; 3]) -> String {
    format!("#{r:02X}{g:02X}{b:02X}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_palette_has_no_repeats_and_no_grey() {
        let p = palette();
        for (i, a) in p.iter().enumerate() {
            let spread = a.iter().max().unwrap() - a.iter().min().unwrap();
            assert!(spread >= 40, "colour {i} {a:?} is nearly grey");
            for b in &p[..i] {
                assert_ne!(a, b, "colour {i} repeats");
            }
        }
        assert_eq!(p[0], [0x00, 0x72, 0xB2]);
    }

    #[test]
    fn a_taxon_keeps_its_colour_and_one_chart_never_repeats_one() {
        // The two taxa the old rule drew alike (the 1st and the 8th bar were both blue).
        let klebsiella = "573";
        let suis = "1307";
        let alone = taxon_colours(&[klebsiella])[0];
        let with_others = taxon_colours(&["562", "1280", klebsiella, "1773", suis]);
        assert_eq!(with_others[2], alone, "the same taxon, the same colour");
        assert_ne!(with_others[2], with_others[4]);
        // 50 taxa: 50 colours.
        let ids: Vec<String> = (1..=50).map(|i| (i * 7919).to_string()).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let colours = taxon_colours(&refs);
        let distinct: std::collections::HashSet<_> = colours.iter().collect();
        assert_eq!(distinct.len(), 50);
        // The order drawn does not matter, only which taxa are drawn.
        let mut reversed = refs.clone();
        reversed.reverse();
        let mut again = taxon_colours(&reversed);
        again.reverse();
        assert_eq!(again, colours);
        // A contested colour stays with the smaller tax id.
        let (a, b) = (0..10_000u32)
            .map(|i| i.to_string())
            .find_map(|x| {
                (x.parse::<u32>().unwrap() + 1..20_000)
                    .map(|j| j.to_string())
                    .find(|y| own_colour(y) == own_colour(&x))
                    .map(|y| (x.clone(), y))
            })
            .unwrap();
        let c = taxon_colours(&[&b, &a]);
        assert_eq!(c[1], palette()[own_colour(&a)]);
        assert_ne!(c[0], c[1]);
        assert_eq!(taxon_colours(&["562", "562"])[0], taxon_colours(&["562", "562"])[1]);
    }
}
