/// Why a diversity figure could not be computed, in words a user can act on.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum Error {
    /// The rows of a table are not all as long as its list of taxa.
    #[error("row {row} of the abundance table has {got} values for {expected} taxa")]
    Ragged {
        /// The row.
        row: usize,
        /// Its values.
        got: usize,
        /// The taxa.
        expected: usize,
    },
    /// The table's rows are not one per sample.
    #[error("{rows} rows of abundances for {samples} samples")]
    Samples {
        /// Samples named.
        samples: usize,
        /// Rows given.
        rows: usize,
    },
    /// A value is negative or not a number.
    #[error("sample {sample}: the value of taxon {taxon} is {value}; abundances must be 0 or more")]
    BadValue {
        /// The sample.
        sample: String,
        /// The taxon.
        taxon: String,
        /// The value.
        value: f64,
    },
    /// Aitchison's distance takes logarithms of shares, so every sample needs some abundance.
    #[error(
        "sample {0} has nothing at this rank: the Aitchison distance needs every sample to have some abundance (leave it out, or choose another distance)"
    )]
    EmptyForAitchison(String),
    /// UniFrac needs each taxon's place in the taxonomy.
    #[error("taxon {0} is not in the taxonomy the results came with, so UniFrac cannot place it")]
    UnknownTaxon(String),
    /// UniFrac was asked for without the taxonomy.
    #[error("UniFrac needs the taxonomy of the taxa compared")]
    NoTaxonomy,
    /// UniFrac compares taxa of one rank: none may lie above another.
    #[error(
        "taxon {0} lies above another of the taxa compared: UniFrac compares taxa of one rank (choose a rank every taxon has)"
    )]
    NotATip(String),
    /// A test needs groups.
    #[error("{0}")]
    Groups(String),
}
