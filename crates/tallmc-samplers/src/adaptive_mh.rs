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

use rand::Rng;
use serde::Serialize;
use tallmc_core::{Error, Kernel, LogPrior, Parallelism, Result, Terms};
use tallmc_integrators::{DualAveraging, DualAveragingConfig, MetricEstimator, MetricKind};

use crate::mh::{MhState, MhStats, RandomWalkCore};

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

/// Adaptive Metropolis (see the module docs).
#[derive(Debug, Clone)]
pub struct AdaptiveMetropolis {
    config: AdaptiveMetropolisConfig,
    core: Option<RandomWalkCore>,
    history: Option<MetricEstimator>,
    covariance: Vec<f64>,
    scale: f64,
    tuner: Option<DualAveraging>,
    adapting: bool,
    iteration: usize,
}

impl AdaptiveMetropolis {
    /// A kernel with validated settings.
    pub fn new(config: AdaptiveMetropolisConfig) -> Result<Self> {
        if !(config.ridge.is_finite() && config.ridge >= 0.0) {
            return Err(Error::invalid("ridge", config.ridge, "a finite number ≥ 0"));
        }
        if config.update_every == 0 {
            return Err(Error::invalid("update_every", 0, "at least 1"));
        }
        Ok(Self {
            config,
            core: None,
            history: None,
            covariance: Vec::new(),
            scale: 0.0,
            tuner: None,
            adapting: false,
            iteration: 0,
        })
    }

    /// The current proposal covariance C_t divided by the squared scale s² (row-major d × d).
    pub fn learned_covariance(&self) -> &[f64] {
        &self.covariance
    }

    fn learn(&mut self, position: &[f64]) -> Result<()> {
        let Some(history) = self.history.as_mut() else { return Ok(()) };
        history.add(position);
        self.iteration += 1;
        let d = position.len();
        let t0 = self.config.initial_iterations.unwrap_or(100.max(2 * d));
        if self.iteration <= t0 || !self.iteration.is_multiple_of(self.config.update_every) {
            return Ok(());
        }
        history.sample_covariance(&mut self.covariance);
        let mean_var = (0..d).map(|j| self.covariance[j * d + j]).sum::<f64>() / d as f64;
        for j in 0..d {
            self.covariance[j * d + j] += self.config.ridge * mean_var;
        }
        // A degenerate history (e.g. nothing accepted yet) keeps the previous factor.
        if let Some(core) = self.core.as_mut() {
            let _ = core.factor.refactor(&self.covariance, "adaptive Metropolis covariance");
        }
        Ok(())
    }
}

impl<M: Terms + LogPrior + ?Sized> Kernel<M> for AdaptiveMetropolis {
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
            self.config.initial_covariance.as_deref(),
            "initial covariance",
            self.config.parallelism,
            position,
        )?;
        let d = model.dim();
        // Σ₀ (validated by the core), kept as the learned covariance until t₀.
        self.covariance = self.config.initial_covariance.clone().unwrap_or_else(|| {
            let mut identity = vec![0.0; d * d];
            (0..d).for_each(|j| identity[j * d + j] = 1.0);
            identity
        });
        self.core = Some(core);
        self.history = Some(MetricEstimator::new(MetricKind::Dense, d));
        self.scale = 2.4 / (d as f64).sqrt();
        self.iteration = 0;
        Ok(state)
    }

    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &M,
        state: &mut MhState,
        rng: &mut R,
    ) -> Result<MhStats> {
        let Some(core) = self.core.as_mut() else {
            return Err(Error::Other("AdaptiveMetropolis::step called before init".into()));
        };
        let stats = core.step(model, state, self.scale, rng);
        if self.adapting && self.config.adapt_after_warmup {
            self.learn(&state.position)?;
        }
        Ok(stats)
    }

    fn begin_warmup(&mut self, _num_warmup: usize) {
        self.adapting = true;
        if self.config.adapt_scale && self.scale > 0.0 {
            let cfg = DualAveragingConfig { target_accept: 0.234, ..Default::default() };
            self.tuner = DualAveraging::new(cfg, self.scale).ok();
        }
    }

    fn adapt<R: Rng + ?Sized>(
        &mut self,
        _m: &M,
        state: &mut MhState,
        stats: &MhStats,
        _r: &mut R,
    ) -> Result<()> {
        if let Some(t) = self.tuner.as_mut() {
            t.update(stats.accept_stat);
            self.scale = t.step_size();
        }
        if self.config.adapt_after_warmup {
            // `step` already learns from every iteration.
            return Ok(());
        }
        self.learn(&state.position)
    }

    fn end_warmup(&mut self) {
        if let Some(t) = self.tuner.take() {
            self.scale = t.final_step_size();
        }
        if !self.config.adapt_after_warmup {
            self.adapting = false;
        }
    }

    fn adaptation_report(&self) -> Vec<String> {
        let d = self.core.as_ref().map_or(1, |c| c.factor.dim());
        let mut lines = vec![
            format!("Step size = {}", self.scale),
            "Proposal covariance divided by the squared scale (row-major):".to_string(),
        ];
        lines.extend(
            self.covariance
                .chunks(d.max(1))
                .map(|row| row.iter().map(|x| format!("{x:.6e}")).collect::<Vec<_>>().join(", ")),
        );
        lines
    }
}
