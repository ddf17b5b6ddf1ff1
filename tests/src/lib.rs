//! Shared helpers of tallmc's cross-crate integration tests (`tests/tests/*.rs`).
//!
//! Statistical tests compare estimates with the truth in units of Monte Carlo standard errors;
//! the tolerance is [`Z_MAX`] MCSEs. Their seeds can be shifted with the environment variable
//! `TALLMC_SEED_OFFSET` to check that they pass at other seeds too (snapshot tests, which pin
//! one seed's numbers, are skipped then).

/// Tolerance of statistical tests, in Monte Carlo standard errors.
pub const Z_MAX: f64 = 4.0;

/// `TALLMC_SEED_OFFSET`, or 0.
pub fn seed_offset() -> u64 {
    std::env::var("TALLMC_SEED_OFFSET").ok().and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// `seed` shifted by [`seed_offset`].
pub fn seed(seed: u64) -> u64 {
    seed + seed_offset()
}
