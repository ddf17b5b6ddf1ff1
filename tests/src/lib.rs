//! Shared helpers of tallmc's cross-crate integration tests (`tests/tests/*.rs`).
//!
//! Statistical tests compare estimates with the truth in units of Monte Carlo standard errors;
//! the tolerance is [`Z_MAX`] MCSEs. Their seeds can be shifted with the environment variable
//! `TALLMC_SEED_OFFSET` to check that they pass at other seeds too (snapshot tests, which pin
//! one seed's numbers, are skipped then).

pub use tallmc_testkit::{Z_MAX, seed, seed_offset};
