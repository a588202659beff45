//! The saved watched folders (`watch.toml` in the configuration folder), shared by
//! `mgds watch add|list|remove|run` and the desktop app's "Watched folders" screen.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::alerts::AlertRule;
use crate::config::FolderConfig;

/// The file the folders are saved in.
pub const SAVED_FILE: &str = "watch.toml";

/// The file (in the watcher's data folder) whose presence pauses uploads: `mgds watch pause`
/// and the app's pause switch write it, so a pause holds across restarts and for every watcher
/// on that data folder.
pub const PAUSE_FILE: &str = "watch.paused";

/// The saved folders, and the upload speed limit that goes with them.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedFolders {
    /// Upload speed limit in bytes per second for the watcher of these folders (none: as fast
    /// as the link allows). A sequencer's PC often shares its link with the instrument, so the
    /// limit is kept with the folders: the app and `mgds watch run` both apply it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload_limit: Option<u64>,
    /// Alert rules for every folder (`["Salmonella enterica >= 0.1%"]`); a folder may add its
    /// own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alerts: Vec<AlertRule>,
    /// The folders, in the order they were added.
    #[serde(default, rename = "folder")]
    pub folders: Vec<FolderConfig>,
}

impl SavedFolders {
    /// Reads the saved folders in `dir` (none if nothing was saved yet).
    pub fn load(dir: &Path) -> Result<SavedFolders, Error> {
        let path = dir.join(SAVED_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => toml::from_str(&text).map_err(|e| Error::Saved { path, message: e.message().to_string() }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(SavedFolders::default()),
            Err(e) => Err(Error::io("read", &path, e)),
        }
    }

    /// Writes them to `dir` (atomically: a crash leaves the old file or the new one).
    pub fn save(&self, dir: &Path) -> Result<(), Error> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
        let path = dir.join(SAVED_FILE);
        let tmp = dir.join(format!(".{SAVED_FILE}.tmp"));
        let text =
            toml::to_string_pretty(self).map_err(|e| Error::Saved { path: path.clone(), message: e.to_string() })?;
        std::fs::write(&tmp, text).map_err(|e| Error::io("write", &tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| Error::io("write", &path, e))
    }

    /// Adds a folder, its path made absolute; a folder already saved is refused.
    pub fn add(&mut self, cfg: FolderConfig) -> Result<PathBuf, Error> {
        let cfg = self.checked(cfg, None)?;
        let path = cfg.path.clone();
        self.folders.push(cfg);
        Ok(path)
    }

    /// Changes the settings of the saved folder `folder` (given as saved, or by a path that
    /// leads to it), in its place in the list. The new settings may name another folder, as
    /// long as that one is not saved already. What was uploaded from it stays uploaded: the
    /// queue knows its files by path, whatever the settings.
    pub fn replace(&mut self, folder: &Path, cfg: FolderConfig) -> Result<PathBuf, Error> {
        let index = self.position(folder).ok_or_else(|| Error::NotSaved { path: folder.to_path_buf() })?;
        let cfg = self.checked(cfg, Some(index))?;
        let path = cfg.path.clone();
        self.folders[index] = cfg;
        Ok(path)
    }

    /// The settings made ready to save: the path made absolute and checked to be a folder not
    /// saved already (other than at `except`), the patterns checked now rather than when the
    /// watcher starts.
    fn checked(&self, mut cfg: FolderConfig, except: Option<usize>) -> Result<FolderConfig, Error> {
        let path = std::fs::canonicalize(&cfg.path).map_err(|e| Error::io("open the folder", &cfg.path, e))?;
        if !path.is_dir() {
            return Err(Error::NotAFolder { path });
        }
        if self.folders.iter().enumerate().any(|(i, f)| f.path == path && Some(i) != except) {
            return Err(Error::AlreadySaved { path });
        }
        crate::scan::Filter::new(&cfg, &path)?;
        cfg.path = path;
        Ok(cfg)
    }

    fn position(&self, folder: &Path) -> Option<usize> {
        let canonical = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
        self.folders.iter().position(|f| f.path == canonical || f.path == folder)
    }

    /// Removes a folder (given as saved, or by a path that leads to it); false if it was not
    /// saved.
    pub fn remove(&mut self, folder: &Path) -> bool {
        match self.position(folder) {
            Some(i) => {
                self.folders.remove(i);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_folders_round_trip_and_refuse_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let watched = dir.path().join("runs");
        std::fs::create_dir(&watched).unwrap();
        assert_eq!(SavedFolders::load(dir.path()).unwrap(), SavedFolders::default());

        let mut saved = SavedFolders::default();
        let mut cfg = FolderConfig::new(&watched);
        cfg.tags = vec!["miseq".into()];
        let path = saved.add(cfg).unwrap();
        assert!(path.is_absolute());
        assert!(matches!(saved.add(FolderConfig::new(&watched)), Err(Error::AlreadySaved { .. })));
        saved.save(dir.path()).unwrap();
        let back = SavedFolders::load(dir.path()).unwrap();
        assert_eq!(back, saved);
        assert_eq!(back.folders[0].tags, ["miseq"]);

        let mut bad = FolderConfig::new(&watched);
        bad.include = vec!["[".into()];
        assert!(matches!(SavedFolders::default().add(bad), Err(Error::Pattern { .. })));
        assert!(matches!(
            SavedFolders::default().add(FolderConfig::new(dir.path().join("missing"))),
            Err(Error::Io { .. })
        ));

        let mut back = back;
        assert!(back.remove(&watched));
        assert!(!back.remove(&watched));
    }

    #[test]
    fn settings_are_changed_in_place_and_the_limit_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("c"));
        for d in [&a, &b, &c] {
            std::fs::create_dir(d).unwrap();
        }
        let mut saved = SavedFolders { upload_limit: Some(5_000_000), ..SavedFolders::default() };
        saved.add(FolderConfig::new(&a)).unwrap();
        saved.add(FolderConfig::new(&b)).unwrap();

        let mut changed = FolderConfig::new(&a);
        changed.tags = vec!["miseq".into()];
        changed.recursive = false;
        saved.replace(&a, changed).unwrap();
        assert_eq!(saved.folders.len(), 2);
        assert_eq!(saved.folders[0].tags, ["miseq"]);
        assert!(!saved.folders[0].recursive);

        // Moved to a folder of its own: fine, in the same place; onto another saved one: refused.
        saved.replace(&a, FolderConfig::new(&c)).unwrap();
        assert_eq!(saved.folders[0].path, std::fs::canonicalize(&c).unwrap());
        assert!(matches!(saved.replace(&c, FolderConfig::new(&b)), Err(Error::AlreadySaved { .. })));
        assert!(matches!(saved.replace(&a, FolderConfig::new(&a)), Err(Error::NotSaved { .. })));
        let mut bad = FolderConfig::new(&c);
        bad.exclude = vec!["[".into()];
        assert!(matches!(saved.replace(&c, bad), Err(Error::Pattern { .. })));
        assert_eq!(saved.folders[0].exclude, Vec::<String>::new(), "a refused change changes nothing");

        saved.save(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(SAVED_FILE)).unwrap();
        assert!(text.starts_with("upload_limit = 5000000"), "{text}");
        assert_eq!(SavedFolders::load(dir.path()).unwrap(), saved);
    }

    #[test]
    fn a_damaged_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(SAVED_FILE), "[[folder]\npath = 3").unwrap();
        let e = SavedFolders::load(dir.path()).unwrap_err();
        assert!(e.to_string().contains("watch.toml"), "{e}");
    }
}
