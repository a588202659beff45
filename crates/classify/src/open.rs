//! Opening a database of either kind, told apart by the path: a file of our own format or a
//! Kraken 2 folder ([`Kraken2Database`]).

use std::path::Path;

use crate::database::{Database, OpenOptions};
use crate::error::Error;
use crate::kraken2::Kraken2Database;

impl Database {
    /// Opens a database: a file written by [`crate::build`], or a Kraken 2 database folder
    /// (see [`crate::Kraken2Database::open`]). Checks the header, version and sizes; the table
    /// is mapped, not read.
    pub fn open(path: impl AsRef<Path>) -> Result<Database, Error> {
        Database::open_with(path, &OpenOptions::default())
    }

    /// [`Database::open`] with options.
    pub fn open_with(path: impl AsRef<Path>, options: &OpenOptions) -> Result<Database, Error> {
        let path = path.as_ref();
        if path.is_dir() {
            return Kraken2Database::open_with(path, options).map(Kraken2Database::into_database);
        }
        Database::open_file(path, options)
    }
}
