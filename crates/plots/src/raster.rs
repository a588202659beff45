//! SVG to PNG with resvg, using the embedded font only.

use std::sync::{Arc, OnceLock};

use resvg::tiny_skia::{Pixmap, Transform};
use resvg::usvg::{self, fontdb};

use crate::Error;

/// Largest output side in pixels, against runaway `scale` values.
const MAX_SIDE: f32 = 16_000.0;

/// A font database with DejaVu Sans only, which also stands in for the generic families.
fn fonts() -> Arc<fontdb::Database> {
    static DB: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = fontdb::Database::new();
        db.load_font_data(crate::font::DEJAVU_SANS.to_vec());
        db.set_sans_serif_family("DejaVu Sans");
        db.set_serif_family("DejaVu Sans");
        db.set_monospace_family("DejaVu Sans");
        Arc::new(db)
    })
    .clone()
}

pub(crate) fn svg_to_png(svg: &str, scale: f32) -> Result<Vec<u8>, Error> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(Error::Png(format!("invalid scale {scale}")));
    }
    let opts = usvg::Options { font_family: "DejaVu Sans".to_owned(), fontdb: fonts(), ..usvg::Options::default() };
    let tree = usvg::Tree::from_str(svg, &opts).map_err(|e| Error::Png(format!("invalid SVG: {e}")))?;
    let size = tree.size();
    let (w, h) = ((size.width() * scale).ceil(), (size.height() * scale).ceil());
    if w > MAX_SIDE || h > MAX_SIDE {
        return Err(Error::Png(format!("{w}x{h} pixels is too large")));
    }
    let mut pixmap =
        Pixmap::new(w as u32, h as u32).ok_or_else(|| Error::Png(format!("cannot make a {w}x{h} image")))?;
    resvg::render(&tree, Transform::from_scale(scale, scale), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| Error::Png(e.to_string()))
}
