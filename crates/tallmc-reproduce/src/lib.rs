//! Reproduction suites of tallmc.
//!
//! Each suite reruns the experiments of one paper (or, for `baseline`, of the exact kernels every
//! subsampling method is measured against) and writes, under `target/reproduce/<suite>/`, a JSON
//! summary, SVG figures in the paper's form ([`figure`]) and a markdown report that puts each
//! claim beside the measured number. `cargo xtask reproduce` runs them; the quick summaries are
//! insta snapshots in the workspace's `tests/` crate.

#![warn(missing_docs)]

pub mod audit;
pub mod chains;
pub mod context;
pub mod error;
pub mod exact;
pub mod figure;
pub mod part;
pub mod reference;
pub mod report;
pub mod snapshot;
pub mod suites;

pub use context::{Context, Mode, Reporter, Silent, Task};
pub use error::{Error, Result};
