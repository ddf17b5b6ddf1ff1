//! What the full-data Metropolis–Hastings kernels share: their state, their stats, the Gaussian
//! random-walk proposal and the accept/reject step.

use rand::{Rng, RngExt};
use serde::Serialize;

use crate::proposal::RandomWalkProposal;
use tallmc_core::{
    ChainState, Error, EvalCounts, FullData, LogPrior, Parallelism, StepStats, Terms,
};

/// State of a full-data MH chain: θ and log π(θ).
#[derive(Debug, Clone, PartialEq)]
pub struct MhState {
    /// θ.
    pub position: Vec<f64>,
    /// log π(θ) = log p(θ) + Σ ℓ_i(θ).
    pub log_density: f64,
}

impl ChainState for MhState {
    fn position(&self) -> &[f64] {
        &self.position
    }
    fn log_density(&self) -> f64 {
        self.log_density
    }
}

/// Stats of one random-walk MH step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct MhStats {
    /// min(1, π(θ′)/π(θ)) (0 when the proposal's density is not finite).
    pub accept_stat: f64,
    /// Whether θ′ was accepted.
    pub accepted: bool,
    /// Whether the proposal's log density was NaN or +∞ (numerical trouble; rejected).
    pub divergent: bool,
    /// Proposal scale s used (θ′ = θ + s L z).
    #[serde(rename = "stepsize")]
    pub scale: f64,
    /// Per-datum evaluations (N terms per proposal whose prior density is positive).
    #[serde(rename = "n")]
    pub evals: EvalCounts,
    /// Data points looked at.
    pub batch_size: u64,
}

impl StepStats for MhStats {
    fn evals(&self) -> EvalCounts {
        self.evals
    }
    fn accept_stat(&self) -> f64 {
        self.accept_stat
    }
    fn divergent(&self) -> bool {
        self.divergent
    }
    fn batch_size(&self) -> u64 {
        self.batch_size
    }
}

/// What the full-data MH kernels share: the full-data evaluator, the proposal buffer, and
/// evaluations not yet reported (the initial log density, reported with the first step).
#[derive(Debug, Clone)]
pub(crate) struct FullDataMh {
    full: FullData,
    proposal: Vec<f64>,
    unreported: EvalCounts,
}

impl FullDataMh {
    /// Validates θ₀ and returns the core with the initial state.
    pub(crate) fn init<M: Terms + LogPrior + ?Sized>(
        model: &M,
        parallelism: Parallelism,
        position: &[f64],
    ) -> tallmc_core::Result<(Self, MhState)> {
        let d = model.dim();
        tallmc_core::error::check_finite_vector("initial position", position, d)?;
        let mut full = FullData::for_model(model, parallelism);
        let log_density = full.log_posterior(model, position);
        if !log_density.is_finite() {
            return Err(Error::NonFiniteLogDensity {
                what: format!("the initial position {position:?}"),
                value: log_density,
            });
        }
        let core =
            Self { full, proposal: vec![0.0; d], unreported: EvalCounts::terms(model.num_terms()) };
        Ok((core, MhState { position: position.to_vec(), log_density }))
    }

    /// One MH step with a random-walk proposal: propose, then accept with probability
    /// min{1, π(θ′)/π(θ)}. Cost: N term evaluations, unless the prior density of θ′ is zero.
    pub(crate) fn step<M: Terms + LogPrior + ?Sized, R: Rng + ?Sized>(
        &mut self,
        model: &M,
        state: &mut MhState,
        walk: &mut RandomWalkProposal,
        rng: &mut R,
    ) -> MhStats {
        walk.draw(&state.position, rng, &mut self.proposal);
        let n = model.num_terms();
        let log_prior = model.log_prior(&self.proposal);
        let (log_density, evals) = if log_prior == f64::NEG_INFINITY {
            (f64::NEG_INFINITY, EvalCounts::ZERO)
        } else {
            (log_prior + self.full.log_likelihood(model, &self.proposal), EvalCounts::terms(n))
        };
        let divergent = log_density.is_nan() || log_density == f64::INFINITY;
        let log_ratio = if divergent { f64::NEG_INFINITY } else { log_density - state.log_density };
        let accept_stat = log_ratio.min(0.0).exp();
        let u: f64 = rng.random();
        let accepted = !divergent && u.ln() < log_ratio;
        if accepted {
            state.position.copy_from_slice(&self.proposal);
            state.log_density = log_density;
        }
        walk.observe(&state.position);
        MhStats {
            accept_stat,
            accepted,
            divergent,
            scale: walk.scale(),
            evals: evals + std::mem::take(&mut self.unreported),
            batch_size: evals.terms,
        }
    }
}
