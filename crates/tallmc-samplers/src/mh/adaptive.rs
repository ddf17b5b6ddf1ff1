//! Adaptive Metropolis (Haario, Saksman & Tamminen 2001, *Bernoulli* 7(2)).
//!
//! A Gaussian random walk whose covariance is learned from the chain's own history:
//!
//! ```text
//! C_t = s_d Σ₀                        for t ≤ t₀,
//! C_t = s_d (Cov(θ_0, …, θ_{t−1}) + ε I)   for t > t₀,     s_d = 2.4²/d,
//! ```
//!
//! θ′ ~ N(θ_t, C_t), accepted with probability min{1, π(θ′)/π(θ_t)}. Σ₀ is a guess of the target
//! covariance (identity unless given — a Laplace approximation is a good choice). s_d = 2.4²/d is
//! the optimal scale for Gaussian targets (Gelman, Roberts & Gilks 1996).
//!
//! tallmc adapts during warmup and then freezes C, so the draws come from an exact, fixed
//! MH kernel; set `adapt_after_warmup` for Haario's original chain, which keeps adapting (it is
//! ergodic for π under the paper's conditions, but not a time-homogeneous Markov chain).
//! Two deviations from the paper, both documented choices:
//!
//! * the ridge ε is relative, ε = `ridge` × mean(diag Cov), so that it does not depend on the
//!   units of θ;
//! * with `adapt_scale` (the default) the global scale s (initially s_d) is also tuned during
//!   warmup towards acceptance rate 0.234, by dual averaging on log s — the "AM with global
//!   adaptive scaling" of Andrieu & Thoms (2008, *Statistics and Computing* 18, Alg. 4). A
//!   slowly mixing chain's history *under*-estimates the target's spread, so Haario's fixed s_d
//!   can shrink the proposals and slow the chain further (measured on the higgs-like posterior,
//!   d = 29: acceptance 0.45 and 8× fewer effective draws than the initial Laplace covariance
//!   gives); the scale adaptation corrects that. `adapt_scale = false` is Haario's algorithm.
//!
//! Cost: N term evaluations per step; the O(d³) re-factorization of C_t every
//! `update_every` iterations does not touch the data.

use serde::Serialize;
use tallmc_core::Parallelism;

use super::full_data::{FullDataMh, RandomWalkMhConfig};
use super::proposal::{RandomWalkProposal, RandomWalkProposalConfig};

/// Settings of [`AdaptiveMetropolis`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdaptiveMetropolisConfig {
    /// Σ₀, a guess of the target covariance (row-major d × d); identity if `None`.
    pub initial_covariance: Option<Vec<f64>>,
    /// Iterations t₀ with the initial covariance; max(100, 2d) if `None`.
    pub initial_iterations: Option<usize>,
    /// Relative ridge ε (see module docs).
    pub ridge: f64,
    /// Re-factor the proposal covariance every this many iterations.
    pub update_every: usize,
    /// Keep adapting the covariance after warmup (Haario's original algorithm).
    pub adapt_after_warmup: bool,
    /// Tune the global scale s towards acceptance 0.234 during warmup (see module docs).
    pub adapt_scale: bool,
    /// Threads for the full-data sums.
    #[serde(skip)]
    pub parallelism: Parallelism,
}

impl Default for AdaptiveMetropolisConfig {
    fn default() -> Self {
        Self {
            initial_covariance: None,
            initial_iterations: None,
            ridge: 1e-6,
            update_every: 1,
            adapt_after_warmup: false,
            adapt_scale: true,
            parallelism: Parallelism::Rayon,
        }
    }
}

/// Adaptive Metropolis (see the module docs): the full-data MH kernel over the Gaussian random
/// walk with covariance learning, made from an [`AdaptiveMetropolisConfig`] by
/// `AdaptiveMetropolis::new(config)?`. Its chains report a
/// [`RandomWalkTuning`](crate::RandomWalkTuning): the scale s and the learned covariance C_t / s².
pub type AdaptiveMetropolis = FullDataMh<RandomWalkProposal>;

impl RandomWalkMhConfig for AdaptiveMetropolisConfig {
    fn into_parts(self) -> (RandomWalkProposalConfig, Parallelism) {
        (
            RandomWalkProposalConfig {
                covariance: self.initial_covariance,
                initial_scale: None,
                adapt_scale: self.adapt_scale,
                target_accept: Some(0.234),
                adapt_covariance: true,
                initial_iterations: self.initial_iterations,
                ridge: self.ridge,
                update_every: self.update_every,
                adapt_after_warmup: self.adapt_after_warmup,
            },
            self.parallelism,
        )
    }
}
