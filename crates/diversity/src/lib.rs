//! Diversity of samples from their abundance tables: alpha diversity (observed taxa, Shannon,
//! Simpson, Chao1), beta diversity (Bray–Curtis, Jaccard, weighted and unweighted UniFrac over
//! the taxonomy, Aitchison), principal coordinates (PCoA) and group tests (PERMANOVA,
//! Kruskal–Wallis, Mann–Whitney U), and contaminants told apart by negative controls as decontam
//! scores them ([`decontam`]).
//!
//! Each is computed as scikit-bio 0.7 computes it when the `onecodex` library calls it: on the
//! same table, a figure here and one from scikit-bio (or from `onecodex`, given the same table:
//! the same measure and rank) are the same number. Where the two differ, the `onecodex`
//! library's choice is taken and said where it applies: Bray–Curtis of two empty samples is 0,
//! UniFrac counts are shares at a resolution of 1e-10, Aitchison replaces zeros
//! multiplicatively. The test suite checks every function against scikit-bio itself.
//!
//! Nothing here reads files or talks to a service: the caller (the application crate) makes the
//! table from classification results at a rank and in a measure, and names both on its charts.

mod alpha;
mod beta;
mod decontam;
mod error;
mod numpy_rng;
mod pcoa;
mod permanova;
mod rank_tests;
mod tree;

pub use alpha::{AlphaMetric, alpha};
pub use beta::{BetaMetric, DistanceMatrix, beta};
pub use decontam::{
    ContaminantScore, DecontamMethod, THRESHOLD as DECONTAM_THRESHOLD, decontam, frequency_score, prevalence_score,
};
pub use error::Error;
pub use pcoa::{Ordination, pcoa};
pub use permanova::{Permanova, permanova};
pub use rank_tests::{GroupTest, RankTest, group_test, kruskal_wallis, mann_whitney};
pub use tree::Taxonomy;
