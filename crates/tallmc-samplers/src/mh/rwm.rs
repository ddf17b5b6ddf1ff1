//! Random-walk Metropolis on the full data.
//!
//! Proposal θ′ = θ + s L z with z ~ N(0, I), L the Cholesky factor of a fixed proposal shape Σ
//! (identity unless given) and scale s; accept with probability min{1, π(θ′)/π(θ)} where
//! log π = log p(θ) + Σ_{i<N} ℓ_i(θ). The chain is exactly π-invariant.
//!
//! During warmup the scale s is tuned by dual averaging towards a target acceptance rate
//! (default 0.234, the optimum for d ≥ 2 as d → ∞, Roberts, Gelman & Gilks 1997; 0.44 for d = 1)
//! and then frozen.
//!
//! Cost: N term evaluations per step (none if the proposal's prior density is zero).

use serde::Serialize;
use tallmc_core::Parallelism;

use super::full_data::{FullDataMh, RandomWalkMhConfig};
use super::proposal::{RandomWalkProposal, RandomWalkProposalConfig};

/// Settings of [`RandomWalkMetropolis`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RandomWalkConfig {
    /// Proposal shape Σ (row-major d × d, symmetric positive definite); identity if `None`.
    pub proposal_covariance: Option<Vec<f64>>,
    /// Initial scale s; 2.38/√d if `None`.
    pub initial_scale: Option<f64>,
    /// Tune s during warmup.
    pub adapt_scale: bool,
    /// Target acceptance rate for the tuning; 0.234 (d ≥ 2) or 0.44 (d = 1) if `None`.
    pub target_accept: Option<f64>,
    /// Threads for the full-data sums.
    #[serde(skip)]
    pub parallelism: Parallelism,
}

impl Default for RandomWalkConfig {
    fn default() -> Self {
        Self {
            proposal_covariance: None,
            initial_scale: None,
            adapt_scale: true,
            target_accept: None,
            parallelism: Parallelism::Rayon,
        }
    }
}

/// Random-walk Metropolis (see the module docs): the full-data MH kernel over the Gaussian
/// random walk, made from a [`RandomWalkConfig`] by `RandomWalkMetropolis::new(config)?`. Its
/// chains report a [`RandomWalkTuning`](crate::RandomWalkTuning) (the scale s).
pub type RandomWalkMetropolis = FullDataMh<RandomWalkProposal>;

impl RandomWalkMhConfig for RandomWalkConfig {
    fn into_parts(self) -> (RandomWalkProposalConfig, Parallelism) {
        (
            RandomWalkProposalConfig {
                covariance: self.proposal_covariance,
                initial_scale: self.initial_scale,
                adapt_scale: self.adapt_scale,
                target_accept: self.target_accept,
                ..Default::default()
            },
            self.parallelism,
        )
    }
}
