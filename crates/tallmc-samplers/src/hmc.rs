//! Hamiltonian Monte Carlo on the full data, with dual-averaging step size and windowed
//! mass-matrix adaptation.
//!
//! Each step draws p ~ N(0, M), integrates Hamilton's equations for H(θ, p) = −log π(θ) +
//! ½ pᵀΣp with L leapfrog steps of size ε, and accepts the end point with probability
//! min{1, exp(−ΔH)}, ΔH = H(θ′, p′) − H(θ, p). The chain is exactly π-invariant.
//!
//! * **Trajectory length.** The integration time T = λ·U(1 − j, 1 + j) is jittered around λ and
//!   L = ⌈T/ε⌉ (at most `max_leapfrog_steps`). The default λ = π/2 is a quarter period of the
//!   dynamics of a standard normal, which is what the target looks like in the coordinates of a
//!   well-adapted metric: θ_{t+1} = θ_t cos T + p sin T there, so draws are nearly
//!   uncorrelated; the jitter (default j = 0.2) avoids resonances when the metric is imperfect.
//! * **Step size.** Found by Hoffman & Gelman's heuristic (double or halve ε until the one-step
//!   acceptance crosses 0.8), then tuned during warmup by dual averaging towards the target
//!   acceptance statistic (default 0.8, REFERENCES §3) and fixed at the averaged value.
//! * **Metric.** Identity, diagonal or dense Σ, estimated in Stan's doubling windows
//!   ([`WarmupSchedule`]); after each window the step size is re-initialized and dual averaging
//!   restarts.
//! * **Divergences.** A trajectory whose log density or gradient becomes non-finite, or whose
//!   energy error exceeds `max_energy_error` (default 1000), is rejected and reported as
//!   divergent — never a panic.
//!
//! Cost: N term and N gradient evaluations per leapfrog step (the full-data gradient, computed
//! on all cores with the deterministic reduction of [`FullData`]), plus those of the step-size
//! heuristic during warmup (reported in the next step's counts).
//!
//! Reference: Neal (2011), *MCMC using Hamiltonian dynamics*; Hoffman & Gelman (2014), JMLR 15,
//! Alg. 4–5; Stan Reference Manual, "HMC algorithm parameters".

use rand::{Rng, RngExt};
use serde::Serialize;
use tallmc_core::{
    Chain, Error, EvalCounts, FullData, Kernel, LogPrior, Parallelism, Result, TermGradients,
    Tuning,
};
use tallmc_integrators::{
    DualAveraging, DualAveragingConfig, LeapfrogOutcome, Metric, MetricEstimator, MetricKind,
    PhasePoint, WarmupSchedule, leapfrog,
};

/// Settings of [`Hmc`].
#[derive(Debug, Clone, PartialEq)]
pub struct HmcConfig {
    /// Integration time λ (in the metric's units).
    pub trajectory_length: f64,
    /// Relative jitter j ∈ [0, 1) of the integration time: T = λ·U(1 − j, 1 + j).
    pub trajectory_jitter: f64,
    /// Upper bound on leapfrog steps per iteration.
    pub max_leapfrog_steps: usize,
    /// Initial step size; found by the heuristic if `None`.
    pub initial_step_size: Option<f64>,
    /// Tune the step size by dual averaging during warmup.
    pub adapt_step_size: bool,
    /// Dual-averaging settings (target acceptance statistic 0.8 by default).
    pub dual_averaging: DualAveragingConfig,
    /// Kind of metric to adapt.
    pub metric: MetricKind,
    /// Metric to start from (unit metric of kind `metric` if `None`).
    pub initial_metric: Option<Metric>,
    /// Adapt the metric during warmup.
    pub adapt_metric: bool,
    /// Energy error above which a trajectory is divergent.
    pub max_energy_error: f64,
    /// Threads for the full-data gradient.
    pub parallelism: Parallelism,
}

impl Default for HmcConfig {
    fn default() -> Self {
        Self {
            trajectory_length: std::f64::consts::FRAC_PI_2,
            trajectory_jitter: 0.2,
            max_leapfrog_steps: 1024,
            initial_step_size: None,
            adapt_step_size: true,
            dual_averaging: DualAveragingConfig::default(),
            metric: MetricKind::Diagonal,
            initial_metric: None,
            adapt_metric: true,
            max_energy_error: 1000.0,
            parallelism: Parallelism::Rayon,
        }
    }
}

impl HmcConfig {
    /// The default settings with the metric held at `metric` throughout (only the step size is
    /// adapted), e.g. the Laplace covariance from [`Laplace::dense_metric`](crate::Laplace::dense_metric).
    pub fn with_fixed_metric(metric: Metric) -> Self {
        Self {
            metric: metric.kind(),
            initial_metric: Some(metric),
            adapt_metric: false,
            ..Self::default()
        }
    }

    /// Checks every setting's range.
    pub fn validate(&self) -> Result<()> {
        tallmc_core::error::check_positive("trajectory_length", self.trajectory_length)?;
        if !(0.0..1.0).contains(&self.trajectory_jitter) {
            return Err(Error::invalid(
                "trajectory_jitter",
                self.trajectory_jitter,
                "a number in [0, 1)",
            ));
        }
        if self.max_leapfrog_steps == 0 {
            return Err(Error::invalid("max_leapfrog_steps", 0, "at least 1"));
        }
        if let Some(e) = self.initial_step_size {
            tallmc_core::error::check_positive("step_size", e)?;
        }
        self.dual_averaging.validate()?;
        tallmc_core::error::check_positive("max_energy_error", self.max_energy_error)
    }
}

/// Stats of one HMC step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct HmcStats {
    /// min{1, exp(−ΔH)} (0 for a divergent trajectory).
    pub accept_stat: f64,
    /// Whether the end point was accepted.
    pub accepted: bool,
    /// Whether the trajectory diverged.
    pub divergent: bool,
    /// Step size ε used.
    #[serde(rename = "stepsize")]
    pub step_size: f64,
    /// Leapfrog steps taken.
    pub n_leapfrog: usize,
    /// Hamiltonian at the chain's new state.
    pub energy: f64,
    /// ΔH of the proposal (NaN or +∞ when divergent).
    pub energy_error: f64,
    /// Per-datum evaluations.
    #[serde(rename = "n")]
    pub evals: EvalCounts,
    /// Data points looked at per gradient (N).
    pub batch_size: u64,
}

step_stats_from_fields!(HmcStats);

/// The adapted tuning of an HMC chain: step size ε and metric Σ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HmcTuning {
    /// Step size ε (after warmup: the dual-averaged one).
    pub step_size: f64,
    /// Inverse mass matrix Σ.
    pub metric: Metric,
}

impl Tuning for HmcTuning {
    /// CmdStan's lines: `Step size = ε` then the metric.
    fn comment_lines(&self) -> Vec<String> {
        let mut lines = vec![format!("Step size = {}", self.step_size)];
        lines.extend(self.metric.describe());
        lines
    }
}

/// Full-data HMC settings (see the module docs): validated when made, they build one
/// [`HmcChain`] per chain.
#[derive(Debug, Clone)]
pub struct Hmc {
    config: HmcConfig,
}

impl Hmc {
    /// Settings checked by [`HmcConfig::validate`].
    pub fn new(config: HmcConfig) -> Result<Self> {
        config.validate()?;
        Ok(Self { config })
    }

    /// The settings.
    pub fn config(&self) -> &HmcConfig {
        &self.config
    }
}

/// A running HMC chain: θ with log π(θ) and ∇log π(θ) cached, the metric, step size,
/// warmup adaptation and scratch.
#[derive(Debug, Clone)]
pub struct HmcChain {
    config: HmcConfig,
    point: PhasePoint,
    full: FullData,
    metric: Metric,
    proposal: PhasePoint,
    velocity: Vec<f64>,
    z: Vec<f64>,
    step_size: f64,
    tuner: Option<DualAveraging>,
    schedule: Option<WarmupSchedule>,
    estimator: Option<MetricEstimator>,
    warmup_iteration: usize,
    unreported: EvalCounts,
}

/// −log π + kinetic energy.
fn hamiltonian(point: &PhasePoint, metric: &Metric, velocity: &mut [f64]) -> f64 {
    -point.log_density + metric.kinetic_energy(&point.momentum, velocity)
}

impl HmcChain {
    /// The current step size (after warmup: the adapted one).
    pub fn step_size(&self) -> f64 {
        self.step_size
    }

    /// The current metric.
    pub fn metric(&self) -> &Metric {
        &self.metric
    }

    /// Hoffman & Gelman (2014) Alg. 4 as in Stan: starting from the current ε, double (or
    /// halve) it until the acceptance ratio of one leapfrog step from a fresh momentum crosses
    /// 0.8. Returns the new step size; evaluations are added to `unreported`.
    fn find_step_size<M, R>(&mut self, model: &M, rng: &mut R) -> f64
    where
        M: TermGradients + LogPrior + ?Sized,
        R: Rng + ?Sized,
    {
        let n = model.num_terms();
        let threshold = 0.8f64.ln();
        let mut eps = self.step_size;
        let mut direction = 0i32;
        for _ in 0..100 {
            self.metric.sample_momentum(rng, &mut self.point.momentum, &mut self.z);
            let h0 = hamiltonian(&self.point, &self.metric, &mut self.velocity);
            self.proposal.copy_from(&self.point);
            let full = &mut self.full;
            let out =
                leapfrog(&mut self.proposal, &self.metric, eps, 1, &mut self.velocity, |t, g| {
                    full.log_posterior_grad(model, t, g)
                });
            self.unreported += EvalCounts::terms_and_gradients(n * out.gradient_evaluations());
            let h1 = hamiltonian(&self.proposal, &self.metric, &mut self.velocity);
            let log_ratio = if h1.is_finite() { h0 - h1 } else { f64::NEG_INFINITY };
            if direction == 0 {
                direction = if log_ratio > threshold { 1 } else { -1 };
            }
            if (direction == 1 && log_ratio <= threshold)
                || (direction == -1 && log_ratio >= threshold)
            {
                break;
            }
            eps = if direction == 1 { 2.0 * eps } else { 0.5 * eps };
            if !(1e-12..=1e7).contains(&eps) {
                eps = eps.clamp(1e-12, 1e7);
                break;
            }
        }
        eps
    }
}

impl<M: TermGradients + LogPrior + ?Sized> Kernel<M> for Hmc {
    type Chain = HmcChain;

    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<HmcChain> {
        let d = model.dim();
        if d == 0 {
            return Err(Error::invalid("model dimension", 0, "at least 1"));
        }
        tallmc_core::error::check_finite_vector("initial position", position, d)?;
        let metric = match &self.config.initial_metric {
            Some(m) if m.dim() != d => return Err(Error::dimension("initial metric", d, m.dim())),
            Some(m) => m.clone(),
            None => Metric::unit(self.config.metric, d),
        };
        let mut full = FullData::for_model(model, self.config.parallelism);
        let mut point = PhasePoint::zeros(d);
        point.position.copy_from_slice(position);
        point.log_density = full.log_posterior_grad(model, position, &mut point.grad);
        if !point.log_density.is_finite() || point.grad.iter().any(|g| !g.is_finite()) {
            return Err(Error::NonFiniteLogDensity {
                what: format!("the initial position {position:?} (or its gradient)"),
                value: point.log_density,
            });
        }
        let mut chain = HmcChain {
            config: self.config.clone(),
            point,
            full,
            metric,
            proposal: PhasePoint::zeros(d),
            velocity: vec![0.0; d],
            z: vec![0.0; d],
            step_size: self.config.initial_step_size.unwrap_or(1.0),
            tuner: None,
            schedule: None,
            estimator: None,
            warmup_iteration: 0,
            unreported: EvalCounts::terms_and_gradients(model.num_terms()),
        };
        if self.config.initial_step_size.is_none() {
            chain.step_size = chain.find_step_size(model, rng);
        }
        Ok(chain)
    }
}

impl<M: TermGradients + LogPrior + ?Sized> Chain<M> for HmcChain {
    type Stats = HmcStats;
    type Tuning = HmcTuning;

    fn position(&self) -> &[f64] {
        &self.point.position
    }

    fn log_density(&self) -> f64 {
        self.point.log_density
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<HmcStats> {
        let n = model.num_terms();
        self.metric.sample_momentum(rng, &mut self.point.momentum, &mut self.z);
        let h0 = hamiltonian(&self.point, &self.metric, &mut self.velocity);
        self.proposal.copy_from(&self.point);
        let eps = self.step_size;
        let j = self.config.trajectory_jitter;
        let time = self.config.trajectory_length * (1.0 + j * (2.0 * rng.random::<f64>() - 1.0));
        let steps = ((time / eps).ceil() as usize).clamp(1, self.config.max_leapfrog_steps);
        let full = &mut self.full;
        let outcome =
            leapfrog(&mut self.proposal, &self.metric, eps, steps, &mut self.velocity, |t, g| {
                full.log_posterior_grad(model, t, g)
            });
        let evals = EvalCounts::terms_and_gradients(n * outcome.gradient_evaluations())
            + std::mem::take(&mut self.unreported);
        let (energy_error, divergent) = match outcome {
            LeapfrogOutcome::NonFinite { .. } => (f64::NAN, true),
            LeapfrogOutcome::Completed { .. } => {
                let h1 = hamiltonian(&self.proposal, &self.metric, &mut self.velocity);
                let dh = h1 - h0;
                (dh, !dh.is_finite() || dh > self.config.max_energy_error)
            }
        };
        let accept_stat = if divergent { 0.0 } else { (-energy_error).min(0.0).exp() };
        let accepted = !divergent && rng.random::<f64>() < accept_stat;
        let energy = if accepted {
            self.point.copy_from(&self.proposal);
            h0 + energy_error
        } else {
            h0
        };
        Ok(HmcStats {
            accept_stat,
            accepted,
            divergent,
            step_size: eps,
            n_leapfrog: outcome.gradient_evaluations(),
            energy,
            energy_error,
            evals,
            batch_size: n as u64,
        })
    }

    fn begin_warmup(&mut self, num_warmup: usize) {
        self.warmup_iteration = 0;
        if self.config.adapt_step_size {
            self.tuner = DualAveraging::new(self.config.dual_averaging, self.step_size).ok();
        }
        if self.config.adapt_metric && self.config.metric != MetricKind::Identity {
            self.schedule = Some(WarmupSchedule::new(num_warmup));
            self.estimator = Some(MetricEstimator::new(self.config.metric, self.metric.dim()));
        }
    }

    fn adapt<R: Rng + ?Sized>(&mut self, model: &M, stats: &HmcStats, rng: &mut R) -> Result<()> {
        let t = self.warmup_iteration;
        self.warmup_iteration += 1;
        if let Some(tuner) = self.tuner.as_mut() {
            tuner.update(stats.accept_stat);
            self.step_size = tuner.step_size();
        }
        let (Some(schedule), Some(estimator)) = (self.schedule.as_ref(), self.estimator.as_mut())
        else {
            return Ok(());
        };
        if schedule.in_slow_window(t) {
            estimator.add(&self.point.position);
        }
        if schedule.ends_slow_window(t) {
            self.metric = estimator.estimate()?;
            estimator.reset();
            if self.tuner.is_some() {
                self.step_size = self.find_step_size(model, rng);
                if let Some(tuner) = self.tuner.as_mut() {
                    tuner.restart(self.step_size);
                }
            }
        }
        Ok(())
    }

    fn end_warmup(&mut self) {
        if let Some(tuner) = self.tuner.take() {
            self.step_size = tuner.final_step_size();
        }
        self.schedule = None;
        self.estimator = None;
    }

    fn tuning(&self) -> HmcTuning {
        HmcTuning { step_size: self.step_size, metric: self.metric.clone() }
    }
}
