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
use tallmc_core::{Error, Kernel, LogPrior, Parallelism, Result, Terms};
use tallmc_integrators::{DualAveraging, DualAveragingConfig};

use crate::mh::{MhState, MhStats, RandomWalkCore};

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

/// Optimal-scaling acceptance target for a random walk in dimension `dim`.
pub(crate) fn default_target(dim: usize) -> f64 {
    if dim == 1 { 0.44 } else { 0.234 }
}

/// Random-walk Metropolis (see the module docs).
#[derive(Debug, Clone)]
pub struct RandomWalkMetropolis {
    config: RandomWalkConfig,
    core: Option<RandomWalkCore>,
    tuner: Option<DualAveraging>,
    scale: f64,
}

impl RandomWalkMetropolis {
    /// A kernel with validated settings (the covariance is checked against the model in `init`).
    pub fn new(config: RandomWalkConfig) -> Result<Self> {
        if let Some(s) = config.initial_scale {
            tallmc_core::error::check_positive("initial_scale", s)?;
        }
        if let Some(t) = config.target_accept {
            tallmc_core::error::check_unit_open("target_accept", t)?;
        }
        Ok(Self { config, core: None, tuner: None, scale: 0.0 })
    }

    /// The current proposal scale s.
    pub fn scale(&self) -> f64 {
        self.scale
    }
}

impl<M: Terms + LogPrior + ?Sized> Kernel<M> for RandomWalkMetropolis {
    type State = MhState;
    type Stats = MhStats;

    fn init<R: Rng + ?Sized>(
        &mut self,
        model: &M,
        position: &[f64],
        _rng: &mut R,
    ) -> Result<MhState> {
        let (core, state) = RandomWalkCore::init(
            model,
            self.config.proposal_covariance.as_deref(),
            "proposal covariance",
            self.config.parallelism,
            position,
        )?;
        self.core = Some(core);
        self.scale = self.config.initial_scale.unwrap_or(2.38 / (model.dim() as f64).sqrt());
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
        Ok(core.step(model, state, self.scale, rng))
    }

    fn begin_warmup(&mut self, _num_warmup: usize) {
        if self.config.adapt_scale && self.scale > 0.0 {
            let d = self.core.as_ref().map_or(1, |c| c.factor.dim());
            let target = self.config.target_accept.unwrap_or(default_target(d));
            let cfg = DualAveragingConfig { target_accept: target, ..Default::default() };
            self.tuner = DualAveraging::new(cfg, self.scale).ok();
        }
    }

    fn adapt<R: Rng + ?Sized>(
        &mut self,
        _m: &M,
        _s: &mut MhState,
        stats: &MhStats,
        _r: &mut R,
    ) -> Result<()> {
        if let Some(t) = self.tuner.as_mut() {
            t.update(stats.accept_stat);
            self.scale = t.step_size();
        }
        Ok(())
    }

    fn end_warmup(&mut self) {
        if let Some(t) = self.tuner.take() {
            self.scale = t.final_step_size();
        }
    }

    fn adaptation_report(&self) -> Vec<String> {
        vec![
            format!("Step size = {}", self.scale),
            "(the step size is the random-walk scale s)".into(),
        ]
    }
}
