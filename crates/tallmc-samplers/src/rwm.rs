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
use tallmc_core::linalg::Cholesky;
use tallmc_core::{Error, FullData, Kernel, LogPrior, Parallelism, Result, Terms};
use tallmc_integrators::{DualAveraging, DualAveragingConfig};

use crate::mh::{MhState, MhStats, RandomWalk, accept_reject, init_state};

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

/// Builds the proposal factor from an optional covariance.
pub(crate) fn proposal_factor(covariance: Option<&[f64]>, dim: usize) -> Result<Cholesky> {
    match covariance {
        None => Ok(Cholesky::identity(dim)),
        Some(c) => {
            tallmc_core::error::check_finite("proposal covariance", c)?;
            Cholesky::new(c, dim, "proposal covariance")
        }
    }
}

/// Random-walk Metropolis (see the module docs).
#[derive(Debug, Clone)]
pub struct RandomWalkMetropolis {
    config: RandomWalkConfig,
    walk: Option<RandomWalk>,
    full: Option<FullData>,
    tuner: Option<DualAveraging>,
    scale: f64,
    proposal: Vec<f64>,
    /// Evaluations made outside `step` (initialization), reported with the next step.
    unreported: tallmc_core::EvalCounts,
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
        Ok(Self {
            config,
            walk: None,
            full: None,
            tuner: None,
            scale: 0.0,
            proposal: Vec::new(),
            unreported: tallmc_core::EvalCounts::ZERO,
        })
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
        let d = model.dim();
        if d == 0 {
            return Err(Error::invalid("model dimension", 0, "at least 1"));
        }
        if let Some(c) = &self.config.proposal_covariance
            && c.len() != d * d
        {
            return Err(Error::dimension("proposal covariance (d × d entries)", d * d, c.len()));
        }
        let factor = proposal_factor(self.config.proposal_covariance.as_deref(), d)?;
        self.walk = Some(RandomWalk::new(factor));
        let mut full = FullData::for_model(model, self.config.parallelism);
        let state = init_state(model, &mut full, position)?;
        self.full = Some(full);
        self.unreported = tallmc_core::EvalCounts::terms(model.num_terms());
        self.scale = self.config.initial_scale.unwrap_or(2.38 / (d as f64).sqrt());
        self.proposal = vec![0.0; d];
        Ok(state)
    }

    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &M,
        state: &mut MhState,
        rng: &mut R,
    ) -> Result<MhStats> {
        let (Some(walk), Some(full)) = (self.walk.as_mut(), self.full.as_mut()) else {
            return Err(Error::Other("RandomWalkMetropolis::step called before init".into()));
        };
        walk.propose(&state.position, self.scale, rng, &mut self.proposal);
        let mut stats = accept_reject(model, full, state, &self.proposal, self.scale, rng);
        stats.evals += std::mem::take(&mut self.unreported);
        Ok(stats)
    }

    fn begin_warmup(&mut self, _num_warmup: usize) {
        if self.config.adapt_scale && self.scale > 0.0 {
            let d = self.proposal.len();
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
