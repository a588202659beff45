//! placeholder module
