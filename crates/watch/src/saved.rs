//! The saved watched folders (`watch.toml` in the configuration folder), shared by
//! `mgds watch add|list|remove|run` and the desktop app's "Watched folders" screen.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::config::FolderConfig;

/// The file the folders are saved in.
pub const SAVED_FILE: &str = "watch.toml";

/// The file (in the watcher's data folder) whose presence pauses uploads: `mgds watch pause`
/// and the app's pause switch write it, so a pause holds across restarts and for every watcher
/// on that data folder.
pub const PAUSE_FILE: &str = "watch.paused";

/// The saved folders.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedFolders {
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
    pub fn add(&mut self, mut cfg: FolderConfig) -> Result<PathBuf, Error> {
        let path = std::fs::canonicalize(&cfg.path).map_err(|e| Error::io("open the folder", &cfg.path, e))?;
        if !path.is_dir() {
            return Err(Error::NotAFolder { path });
        }
        if self.folders.iter().any(|f| f.path == path) {
            return Err(Error::AlreadySaved { path });
        }
        // The patterns are checked now rather than when the watcher starts.
        crate::scan::Filter::new(&cfg, &path)?;
        cfg.path = path.clone();
        self.folders.push(cfg);
        Ok(path)
    }

    /// Removes a folder (given as saved, or by a path that leads to it); false if it was not
    /// saved.
    pub fn remove(&mut self, folder: &Path) -> bool {
        let canonical = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
        let before = self.folders.len();
        self.folders.retain(|f| f.path != canonical && f.path != folder);
        self.folders.len() != before
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
    fn a_damaged_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(SAVED_FILE), "[[folder]\npath = 3").unwrap();
        let e = SavedFolders::load(dir.path()).unwrap_err();
        assert!(e.to_string().contains("watch.toml"), "{e}");
    }
}
