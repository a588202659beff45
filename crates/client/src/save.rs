//! Where a download is saved. A name a service sends (a document's or sample's `filename`) is
//! untrusted: it becomes a local file name only through [`safe_file_name`], and a file under
//! such a name never replaces one already there unless the caller asks ([`Destination`]).

use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// Longest file name [`safe_file_name`] gives, in bytes. Below the 255 of common file systems,
/// leaving room for the temporary name a download is written under first and for suffixes
/// such as `.filtered.fastq.gz` that are added to a name later.
pub const MAX_FILE_NAME_BYTES: usize = 200;

/// The last resort when neither the name nor the fallback gives a usable file name.
const LAST_RESORT: &str = "download";

/// An extension longer than this is not kept when a long name is shortened (it is more likely
/// part of the name than a file type).
const MAX_KEPT_EXTENSION_BYTES: usize = 20;

/// Names Windows reserves for devices, with or without an extension (`CON`, `con.txt`, `COM1.tar.gz`).
const RESERVED_WINDOWS_NAMES: [&str; 32] = [
    "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "COM0", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7",
    "COM8", "COM9", "COM¹", "COM²", "COM³", "LPT0", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8",
    "LPT9", "LPT¹", "LPT²", "LPT³",
];

/// A file name, in one folder, made from a name that came from outside (a service's `filename`).
///
/// Only the last component counts (the last non-empty part between `/` or `\`). Control characters (NUL
/// included), the characters Windows forbids (`<>:"|?*`) and the characters that reorder text
/// on screen become `_`; a leading `.` becomes `_`, so a service cannot make a hidden file
/// such as `.bashrc`; leading and trailing spaces, and trailing dots, are dropped (Windows drops
/// them itself). A name longer than [`MAX_FILE_NAME_BYTES`] is shortened, keeping its
/// extension. When nothing usable is left (empty, `.`, `..`, a device name Windows reserves such
/// as `CON` or `lpt1.txt`), the answer is `fallback` made safe the same way (callers pass
/// something made from the record's id, such as `document-<id>`), or else `download`.
pub fn safe_file_name(untrusted: &str, fallback: &str) -> String {
    [untrusted, fallback].into_iter().map(clean).find(|n| is_safe_file_name(n)).unwrap_or_else(|| LAST_RESORT.into())
}

/// Whether `name` is a file name [`safe_file_name`] could give: one plain component, not
/// empty, not `.` or `..`, no control or forbidden characters, not hidden, not a reserved
/// Windows name, at most [`MAX_FILE_NAME_BYTES`] bytes.
pub fn is_safe_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_FILE_NAME_BYTES
        && !name.starts_with('.')
        && !name.ends_with(['.', ' '])
        && !name.starts_with(' ')
        && !name.chars().any(replaced)
        && !is_reserved_windows_name(name)
}

/// Whether Windows reserves `name` for a device: its part before the first `.` (without
/// trailing spaces) is one of the device names, in any case.
fn is_reserved_windows_name(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or_default().trim_end_matches(' ');
    let stem = stem.to_lowercase();
    RESERVED_WINDOWS_NAMES.iter().any(|r| r.to_lowercase() == stem)
}

/// Characters that never stay in a file name.
fn replaced(c: char) -> bool {
    c.is_control()
        || matches!(c, '/' | '\\' | '<' | '>' | ':' | '"' | '|' | '?' | '*')
        // Bidirectional controls and marks: they can make `txt.exe` show as `exe.txt`.
        || matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// The cleaning of [`safe_file_name`] without its checks.
fn clean(name: &str) -> String {
    // `reports/` names `reports`, as a path would.
    let last = name.rsplit(['/', '\\']).find(|s| !s.is_empty()).unwrap_or_default();
    let mut s: String = last.chars().map(|c| if replaced(c) { '_' } else { c }).collect();
    s = s.trim_matches(' ').trim_end_matches(['.', ' ']).to_string();
    if s.is_empty() || s == "." || s == ".." {
        return String::new();
    }
    if s.starts_with('.') {
        s.replace_range(..1, "_");
    }
    shorten(s)
}

/// `name` cut to [`MAX_FILE_NAME_BYTES`] on a character boundary, keeping a short extension.
fn shorten(name: String) -> String {
    if name.len() <= MAX_FILE_NAME_BYTES {
        return name;
    }
    let ext = match name.rfind('.') {
        Some(i) if i > 0 && name.len() - i <= MAX_KEPT_EXTENSION_BYTES => &name[i..],
        _ => "",
    };
    let stem = &name[..name.len() - ext.len()];
    let mut cut = MAX_FILE_NAME_BYTES - ext.len();
    while !stem.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{ext}", stem[..cut].trim_end_matches(['.', ' ']))
}

/// Where a download is written, and whether it may replace a file already there.
///
/// Made from a path the user chose ([`Destination::chosen`], or any path through `From`), a
/// download replaces what is there, as a save dialog or `-o FILE` means. Made from a name a
/// service sent ([`Destination::new_file`]), it never replaces a file unless asked to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    path: PathBuf,
    replace: bool,
}

impl Destination {
    /// A path the user chose: written there, replacing a file already there.
    pub fn chosen(path: impl Into<PathBuf>) -> Destination {
        Destination { path: path.into(), replace: true }
    }

    /// A file in `folder` named by [`safe_file_name`]`(untrusted_name, fallback)`. Unless
    /// `replace`, answers [`Error::FileExists`] when something is already there (and the download
    /// checks again as it puts the file in place, so one that appears meanwhile is kept too).
    pub fn new_file(
        folder: impl AsRef<Path>,
        untrusted_name: &str,
        fallback: &str,
        replace: bool,
    ) -> Result<Destination> {
        let path = folder.as_ref().join(safe_file_name(untrusted_name, fallback));
        // `symlink_metadata`: a link, even one pointing nowhere, is something already there.
        if !replace && path.symlink_metadata().is_ok() {
            return Err(Error::FileExists { path });
        }
        Ok(Destination { path, replace })
    }

    /// The file to write.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a file already at [`Destination::path`] may be replaced.
    pub fn replaces(&self) -> bool {
        self.replace
    }
}

impl<P: AsRef<Path>> From<P> for Destination {
    fn from(path: P) -> Destination {
        Destination::chosen(path.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use std::path::Component;

    use proptest::prelude::*;

    use super::*;

    #[test]
    fn names_from_a_service() {
        let cases = [
            ("protocol_v2.bin", "protocol_v2.bin"),
            ("../../escape.txt", "escape.txt"),
            ("/etc/passwd", "passwd"),
            ("C:\\Users\\me\\.ssh\\authorized_keys", "authorized_keys"),
            ("dir/", "dir"),
            (".bashrc", "_bashrc"),
            ("..", "document-1a2b"),
            (".", "document-1a2b"),
            ("", "document-1a2b"),
            ("   ", "document-1a2b"),
            ("a\0b\nc\x7f.txt", "a_b_c_.txt"),
            ("report.pdf. . ", "report.pdf"),
            ("CON", "document-1a2b"),
            ("con.txt", "document-1a2b"),
            ("Lpt1.tar.gz", "document-1a2b"),
            ("COM¹", "document-1a2b"),
            ("CONSOLE.txt", "CONSOLE.txt"),
            ("a<b>c:d\"e|f?g*h", "a_b_c_d_e_f_g_h"),
            ("harmless\u{202E}txt.exe", "harmless_txt.exe"),
            ("plate map v2.csv", "plate map v2.csv"),
        ];
        for (sent, want) in cases {
            assert_eq!(safe_file_name(sent, "document-1a2b"), want, "{sent:?}");
        }
        // A fallback that is itself unusable gives way to the last resort.
        assert_eq!(safe_file_name("..", "../.."), "download");
        assert_eq!(safe_file_name("", "x/NUL"), "download");
    }

    #[test]
    fn long_names_keep_their_extension_and_whole_characters() {
        let long = format!("{}.fastq.gz", "é".repeat(5000));
        let name = safe_file_name(&long, "x");
        assert!(name.len() <= MAX_FILE_NAME_BYTES && name.ends_with("é.gz"), "{name}");
        assert_eq!(safe_file_name(&"a".repeat(10_000), "x"), "a".repeat(MAX_FILE_NAME_BYTES));
        // An "extension" too long to be one is cut with the rest.
        let odd = format!("a.{}", "b".repeat(300));
        assert_eq!(safe_file_name(&odd, "x").len(), MAX_FILE_NAME_BYTES);
    }

    #[test]
    fn a_new_file_never_replaces_one_unless_asked() {
        let dir = tempfile::tempdir().unwrap();
        let first = Destination::new_file(dir.path(), "../a.txt", "doc-1", false).unwrap();
        assert_eq!((first.path(), first.replaces()), (dir.path().join("a.txt").as_path(), false));
        std::fs::write(first.path(), "mine").unwrap();
        let err = Destination::new_file(dir.path(), "a.txt", "doc-1", false).unwrap_err();
        assert!(matches!(&err, Error::FileExists { path } if path == first.path()), "{err:?}");
        assert!(err.to_string().contains(&first.path().display().to_string()), "{err}");
        assert!(Destination::new_file(dir.path(), "a.txt", "doc-1", true).unwrap().replaces());
        let chosen: Destination = first.path().into();
        assert!(chosen.replaces());
    }

    proptest! {
        /// Whatever a service sends, the file lands directly in the chosen folder under a name
        /// that is safe on every platform.
        #[test]
        fn any_name_stays_in_its_folder(sent in any::<String>(), fallback in any::<String>()) {
            let folder = Path::new("/some/folder");
            let name = safe_file_name(&sent, &fallback);
            let path = folder.join(&name);
            prop_assert_eq!(path.parent(), Some(folder));
            let last: Vec<_> = path.strip_prefix(folder).unwrap().components().collect();
            prop_assert!(matches!(last.as_slice(), [Component::Normal(n)] if *n == name.as_str()), "{:?}", last);
            prop_assert!(!name.is_empty() && name != "." && name != "..");
            prop_assert!(!name.chars().any(|c| c.is_control() || c == '\0'), "{:?}", name);
            prop_assert!(name.len() <= MAX_FILE_NAME_BYTES, "{} bytes", name.len());
            prop_assert!(!is_reserved_windows_name(&name), "{:?}", name);
            prop_assert!(is_safe_file_name(&name), "{:?}", name);
        }

        /// Names built from the pieces an attacker would use, which random strings rarely hit.
        #[test]
        fn hostile_names_stay_in_their_folder(
            parts in prop::collection::vec(
                prop::sample::select(vec![
                    "..", ".", "/", "\\", "CON", "nul", "COM1", "lpt9", ".txt", " ", "\0", "\n", "\u{202E}",
                    "a", "é", "C:", "~", "*", "",
                ]),
                0..12,
            ),
            repeat in 1usize..400,
        ) {
            let sent = parts.concat().repeat(if parts.len() < 3 { repeat } else { 1 });
            let name = safe_file_name(&sent, "document-1a2b");
            let folder = Path::new("out");
            let path = folder.join(&name);
            prop_assert_eq!(path.parent(), Some(folder));
            prop_assert!(is_safe_file_name(&name), "{:?} -> {:?}", sent, name);
        }
    }
}
