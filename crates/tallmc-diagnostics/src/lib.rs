//! # tallmc-diagnostics
//!
//! MCMC output analysis for tallmc: how many independent draws a chain is worth, whether
//! chains agree, how precise the estimates are, and what each independent draw cost.
//!
//! | quantity | functions | matches |
//! |---|---|---|
//! | autocovariance / ACF | [`autocov()`], [`autocorr`] | ArviZ `autocov`, `autocorr` |
//! | ESS | [`ess_bulk`], [`ess_tail`], [`ess_mean`], [`ess_sd`], [`ess_quantile`] | ArviZ `ess(method=…)`, posterior |
//! | R̂ | [`rhat()`] (rank-normalized), [`rhat_split`] | ArviZ `rhat(method="rank" / "split")` |
//! | MCSE | [`mcse_mean`], [`mcse_sd`], [`mcse_quantile`] | ArviZ `mcse(method=…)` |
//! | coda ESS | [`ess_coda`], [`spectrum0_ar`] | R coda `effectiveSize`, `spectrum0.ar` |
//! | cost | [`inefficiency_factor`], [`computing_time`], [`relative_computing_time`] | HMC-ECS paper (Dang et al. 2019) |
//! | signed chains | [`sign_corrected`] (sign-corrected mean, sd, delta-method MCSE, τ̂) | HMC-ECS paper §5 |
//! | summaries | [`mean`], [`sd`], [`quantile`], [`Summary`], [`summarize`] over [`Draws`] | ArviZ `summary`, `numpy.quantile` |
//! | continuous-time output | [`TimeAverages`], [`TestFunctionAverage`], [`summarize_continuous`] ([`continuous`]) | exact ∫x dt, ∫x² dt of a PDMP trajectory; batch-means MCSE |
//! | quadrature | [`quadrature::GaussLegendre`] | composite Gauss–Legendre |
//!
//! The ArviZ-matching functions reproduce ArviZ 0.23.4 (numpy code paths) to 1e-6 relative on
//! the fixed inputs of `tests/fixtures/arviz/diagnostics.json` (measured: within 2e-14); see
//! `tests/diagnostics/arviz.rs` and `tests/fixtures/arviz/make_fixture.py`.
//!
//! ## Input
//!
//! Every scalar diagnostic takes the chains of one parameter as a slice of equal-length chains,
//! anything that is `AsRef<[f64]>`: `&[&[f64]]`, `&[Vec<f64>]`, `&[[f64; N]]`. Zero chains,
//! unequal lengths, too few draws (ESS, R̂ and MCSE need [`MIN_DRAWS`] = 4 per chain) and NaN
//! or infinite draws are errors ([`Error`]), never panics. Degenerate but valid input gives
//! ArviZ's value: constant chains have ESS = number of (split) draws and NaN R̂; a single chain
//! has NaN R̂.
//!
//! ## Example
//!
//! ```
//! use tallmc_diagnostics::{ess_bulk, inefficiency_factor, rhat};
//!
//! // Two chains of an AR(1)-like sequence (deterministic here for brevity).
//! let chain = |phase: f64| -> Vec<f64> {
//!     let mut x = 0.0;
//!     (0..1000).map(|t| { x = 0.5 * x + ((t as f64 * 0.618 + phase).fract() - 0.5); x }).collect()
//! };
//! let chains = [chain(0.1), chain(0.7)];
//! let ess = ess_bulk(&chains).unwrap();
//! let r#if = inefficiency_factor(2000, ess).unwrap();
//! assert!(ess > 0.0 && r#if > 0.0);
//! assert!(rhat(&chains).unwrap() < 1.1);
//! ```
//!
//! ## References
//!
//! * Vehtari, Gelman, Simpson, Carpenter, Bürkner (2021). Rank-normalization, folding, and
//!   localization: an improved R̂ for assessing convergence of MCMC. *Bayesian Analysis*
//!   16(2), 667–718.
//! * Geyer (1992). Practical Markov chain Monte Carlo. *Statistical Science* 7(4), 473–483.
//! * Gelman, Carlin, Stern, Dunson, Vehtari, Rubin (2013). *Bayesian Data Analysis*, 3rd ed.,
//!   §11.4–11.5.
//! * Plummer, Best, Cowles, Vines (2006). CODA: convergence diagnosis and output analysis for
//!   MCMC. *R News* 6(1), 7–11.
//! * Dang, Quiroz, Kohn, Tran, Villani (2019). Hamiltonian Monte Carlo with energy conserving
//!   subsampling. *JMLR* 20(100), 1–31.

#![warn(missing_docs)]

mod chains;

pub mod autocov;
pub mod coda;
pub mod continuous;
pub mod efficiency;
pub mod error;
pub mod ess;
pub mod mcse;
pub mod quadrature;
pub mod rhat;
pub mod signed;
pub mod stats;
pub mod summary;

pub use autocov::{autocorr, autocov};
pub use coda::{Spectrum0, ess_coda, spectrum0_ar};
pub use continuous::{
    BatchConfig, ContinuousEstimate, ContinuousSummary, QuadratureConfig, TestFunctionAverage,
    TimeAverageConfig, TimeAverages, pooled_covariance, pooled_estimate, summarize_continuous,
};
pub use efficiency::{computing_time, inefficiency_factor, relative_computing_time};
pub use error::{Error, Result};
pub use ess::{MIN_DRAWS, ess_bulk, ess_mean, ess_quantile, ess_sd, ess_tail};
pub use mcse::{mcse_mean, mcse_quantile, mcse_sd};
pub use rhat::{rhat, rhat_split};
pub use signed::{SignCorrected, sign_corrected};
pub use stats::{mean, quantile, sd};
pub use summary::{Draws, Summary, summarize};
