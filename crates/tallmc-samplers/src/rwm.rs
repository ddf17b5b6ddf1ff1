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

use rand::Rng;
use serde::Serialize;
use tallmc_core::{Error, LogPrior, Parallelism, Result, StatefulKernel, Terms};

use crate::mh::{FullDataMh, MhState, MhStats};
use crate::proposal::{RandomWalkProposal, RandomWalkProposalConfig};

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

/// Random-walk Metropolis (see the module docs).
#[derive(Debug, Clone)]
pub struct RandomWalkMetropolis {
    config: RandomWalkConfig,
    core: Option<FullDataMh>,
    walk: RandomWalkProposal,
}

impl RandomWalkMetropolis {
    /// A kernel with validated settings (the covariance is checked against the model in `init`).
    pub fn new(config: RandomWalkConfig) -> Result<Self> {
        let walk = RandomWalkProposal::new(RandomWalkProposalConfig {
            covariance: config.proposal_covariance.clone(),
            initial_scale: config.initial_scale,
            adapt_scale: config.adapt_scale,
            target_accept: config.target_accept,
            ..Default::default()
        })?;
        Ok(Self { config, core: None, walk })
    }

    /// The current proposal scale s.
    pub fn scale(&self) -> f64 {
        self.walk.scale()
    }
}

impl<M: Terms + LogPrior + ?Sized> StatefulKernel<M> for RandomWalkMetropolis {
    type State = MhState;
    type Stats = MhStats;

    fn init<R: Rng + ?Sized>(
        &mut self,
        model: &M,
        position: &[f64],
        _rng: &mut R,
    ) -> Result<MhState> {
        self.walk.setup(model.dim())?;
        let (core, state) = FullDataMh::init(model, self.config.parallelism, position)?;
        self.core = Some(core);
        Ok(state)
    }

    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &M,
        state: &mut MhState,
        rng: &mut R,
    ) -> Result<MhStats> {
        let Some(core) = self.core.as_mut() else {
            return Err(Error::Other("RandomWalkMetropolis::step called before init".into()));
        };
        Ok(core.step(model, state, &mut self.walk, rng))
    }

    fn begin_warmup(&mut self, _num_warmup: usize) {
        self.walk.begin_warmup();
    }

    fn adapt<R: Rng + ?Sized>(
        &mut self,
        _m: &M,
        state: &mut MhState,
        stats: &MhStats,
        _r: &mut R,
    ) -> Result<()> {
        self.walk.adapt(stats.accept_stat, &state.position);
        Ok(())
    }

    fn end_warmup(&mut self) {
        self.walk.end_warmup();
    }

    fn adaptation_report(&self) -> Vec<String> {
        self.walk.describe()
    }
}
