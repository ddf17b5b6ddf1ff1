//! The full-data Hamiltonian kernels as one generic: [`Hamiltonian`]`<C>` settings build a
//! [`HamiltonianChain`]`<C>`, where `C` is [`HmcConfig`](crate::HmcConfig) (a jittered
//! fixed-length trajectory: [`Hmc`](crate::Hmc)) or [`NutsConfig`](crate::NutsConfig) (the
//! No-U-Turn tree: [`Nuts`](crate::Nuts)). Everything but the transition is shared: the
//! phase-space state with its cached full-data gradient, the step-size heuristic, and Stan's
//! warmup (dual averaging of ε, metric estimated in doubling windows), so that a difference
//! between HMC and NUTS runs is a difference of the transitions alone.

use std::fmt;

use rand::Rng;
use tallmc_core::{
    Chain, Error, EvalCounts, FullData, Kernel, LogPrior, Parallelism, Result, StepStats,
    TermGradients,
};
use tallmc_integrators::{
    DualAveraging, DualAveragingConfig, Metric, MetricEstimator, MetricKind, PhasePoint,
    WarmupSchedule, leapfrog,
};

use crate::HmcTuning;

/// The settings of the warmup and of the start, which both configs hold under the same names.
#[derive(Debug, Clone, Copy)]
pub struct WarmupSettings<'a> {
    /// Initial step size; found by the heuristic if `None`.
    pub initial_step_size: Option<f64>,
    /// Tune the step size by dual averaging during warmup.
    pub adapt_step_size: bool,
    /// Dual-averaging settings.
    pub dual_averaging: DualAveragingConfig,
    /// Kind of metric to adapt.
    pub metric: MetricKind,
    /// Metric to start from (unit metric of kind `metric` if `None`).
    pub initial_metric: Option<&'a Metric>,
    /// Adapt the metric during warmup.
    pub adapt_metric: bool,
    /// Threads for the full-data gradient.
    pub parallelism: Parallelism,
}

/// Implements [`HamiltonianSettings::warmup_settings`]'s body for configs whose fields carry
/// the names of [`WarmupSettings`].
macro_rules! warmup_settings_from_fields {
    () => {
        fn warmup_settings(&self) -> $crate::hamiltonian::kernel::WarmupSettings<'_> {
            $crate::hamiltonian::kernel::WarmupSettings {
                initial_step_size: self.initial_step_size,
                adapt_step_size: self.adapt_step_size,
                dual_averaging: self.dual_averaging,
                metric: self.metric,
                initial_metric: self.initial_metric.as_ref(),
                adapt_metric: self.adapt_metric,
                parallelism: self.parallelism,
            }
        }
    };
}

/// What makes a full-data Hamiltonian kernel: its validated settings and its transition.
/// Implemented by [`HmcConfig`](crate::HmcConfig) and [`NutsConfig`](crate::NutsConfig).
pub trait HamiltonianSettings: Clone + fmt::Debug + Send + Sync {
    /// Scratch the transition keeps between steps (allocated once per chain).
    type Trajectory: Clone + fmt::Debug + Send;
    /// The transition's stats.
    type Stats: StepStats;

    /// Checks every setting's range.
    fn validate(&self) -> Result<()>;

    /// The warmup's and the start's settings.
    fn warmup_settings(&self) -> WarmupSettings<'_>;

    /// The transition's scratch for dimension `dim`.
    fn new_trajectory(&self, dim: usize) -> Self::Trajectory;

    /// One transition from `phase.point`, whose momentum has just been drawn and whose
    /// Hamiltonian is `h0`, with step size `step_size`; `earlier` are evaluations made since
    /// the last step (the set-up, the step-size heuristic), reported with this one.
    #[allow(clippy::too_many_arguments)]
    fn transition<M, R>(
        &self, trajectory: &mut Self::Trajectory, phase: &mut Phase, h0: f64, step_size: f64,
        model: &M, rng: &mut R, earlier: EvalCounts,
    ) -> Self::Stats
    where
        M: TermGradients + LogPrior + ?Sized,
        R: Rng + ?Sized;
}

/// Full-data Hamiltonian settings `C`, validated when made; they build one
/// [`HamiltonianChain`] per chain.
#[derive(Debug, Clone)]
pub struct Hamiltonian<C> {
    config: C,
}

impl<C: HamiltonianSettings> Hamiltonian<C> {
    /// Settings checked by `C`'s `validate`.
    pub fn new(config: C) -> Result<Self> {
        config.validate()?;
        Ok(Self { config })
    }

    /// The settings.
    pub fn config(&self) -> &C {
        &self.config
    }
}

/// A running full-data Hamiltonian chain: θ with log π(θ) and ∇log π(θ) cached, the metric,
/// step size, warmup adaptation and the transition's scratch.
#[derive(Debug, Clone)]
pub struct HamiltonianChain<C: HamiltonianSettings> {
    config: C,
    phase: Phase,
    step_size: f64,
    warmup: Warmup,
    unreported: EvalCounts,
    trajectory: C::Trajectory,
}

impl<C: HamiltonianSettings> HamiltonianChain<C> {
    /// The current step size (after warmup: the adapted one).
    pub fn step_size(&self) -> f64 {
        self.step_size
    }

    /// The current metric.
    pub fn metric(&self) -> &Metric {
        &self.phase.metric
    }

    /// Re-finds the step size from the current one (see [`Phase::find_step_size`]); the
    /// evaluations are reported with the next step.
    fn find_step_size<M, R>(&mut self, model: &M, rng: &mut R) -> f64
    where
        M: TermGradients + LogPrior + ?Sized,
        R: Rng + ?Sized,
    {
        let (eps, evals) = self.phase.find_step_size(model, self.step_size, rng);
        self.unreported += evals;
        eps
    }
}

impl<M, C> Kernel<M> for Hamiltonian<C>
where
    M: TermGradients + LogPrior + ?Sized,
    C: HamiltonianSettings,
{
    type Chain = HamiltonianChain<C>;

    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<HamiltonianChain<C>> {
        let w = self.config.warmup_settings();
        let phase = Phase::start(model, position, w.initial_metric, w.metric, w.parallelism)?;
        let mut chain = HamiltonianChain {
            config: self.config.clone(),
            phase,
            step_size: w.initial_step_size.unwrap_or(1.0),
            warmup: Warmup::default(),
            unreported: EvalCounts::terms_and_gradients(model.num_terms()),
            trajectory: self.config.new_trajectory(model.dim()),
        };
        if w.initial_step_size.is_none() {
            chain.step_size = chain.find_step_size(model, rng);
        }
        Ok(chain)
    }
}

impl<M, C> Chain<M> for HamiltonianChain<C>
where
    M: TermGradients + LogPrior + ?Sized,
    C: HamiltonianSettings,
{
    type Stats = C::Stats;
    type Tuning = HmcTuning;

    fn position(&self) -> &[f64] {
        &self.phase.point.position
    }

    fn log_density(&self) -> f64 {
        self.phase.point.log_density
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<C::Stats> {
        let h0 = self.phase.refresh_momentum(rng);
        let earlier = std::mem::take(&mut self.unreported);
        Ok(self.config.transition(
            &mut self.trajectory,
            &mut self.phase,
            h0,
            self.step_size,
            model,
            rng,
            earlier,
        ))
    }

    fn begin_warmup(&mut self, num_warmup: usize) {
        let w = self.config.warmup_settings();
        let d = self.phase.metric.dim();
        self.warmup.begin(num_warmup, self.step_size, &w, d);
    }

    fn adapt<R: Rng + ?Sized>(&mut self, model: &M, stats: &C::Stats, rng: &mut R) -> Result<()> {
        let Phase { point, metric, .. } = &mut self.phase;
        if self.warmup.observe(stats.accept_stat(), &point.position, &mut self.step_size, metric)? {
            self.step_size = self.find_step_size(model, rng);
            self.warmup.restart(self.step_size);
        }
        Ok(())
    }

    fn end_warmup(&mut self) {
        self.warmup.finish(&mut self.step_size);
    }

    fn tuning(&self) -> HmcTuning {
        HmcTuning { step_size: self.step_size, metric: self.phase.metric.clone() }
    }
}

/// The chain's phase point θ (with log π(θ) and ∇log π(θ) cached), the metric, the full-data
/// gradient's workspace and scratch vectors.
#[derive(Debug, Clone)]
pub struct Phase {
    /// The chain's state; its momentum is redrawn at every transition.
    pub point: PhasePoint,
    /// Scratch phase point for trajectories.
    pub proposal: PhasePoint,
    /// Workspace of the full-data gradient (chunked, deterministic reduction).
    pub full: FullData,
    /// Inverse mass matrix Σ.
    pub metric: Metric,
    /// Scratch: velocity Σp.
    pub velocity: Vec<f64>,
    /// Scratch: standard normals for momentum draws.
    pub z: Vec<f64>,
}

impl Phase {
    /// The state at `position`, checked: dimension ≥ 1, finite position, an initial metric of
    /// the model's dimension (the unit metric of `kind` if none), finite log density and
    /// gradient there. Costs one full-data gradient (N terms and gradients).
    pub fn start<M: TermGradients + LogPrior + ?Sized>(
        model: &M, position: &[f64], initial_metric: Option<&Metric>, kind: MetricKind,
        parallelism: Parallelism,
    ) -> Result<Self> {
        let d = model.dim();
        if d == 0 {
            return Err(Error::invalid("model dimension", 0, "at least 1"));
        }
        tallmc_core::error::check_finite_vector("initial position", position, d)?;
        let metric = match initial_metric {
            Some(m) if m.dim() != d => return Err(Error::dimension("initial metric", d, m.dim())),
            Some(m) => m.clone(),
            None => Metric::unit(kind, d),
        };
        let mut full = FullData::for_model(model, parallelism);
        let mut point = PhasePoint::zeros(d);
        point.position.copy_from_slice(position);
        point.log_density = full.log_posterior_grad(model, position, &mut point.grad);
        if !point.log_density.is_finite() || point.grad.iter().any(|g| !g.is_finite()) {
            return Err(Error::NonFiniteLogDensity {
                what: format!("the initial position {position:?} (or its gradient)"),
                value: point.log_density,
            });
        }
        Ok(Self {
            point,
            full,
            metric,
            proposal: PhasePoint::zeros(d),
            velocity: vec![0.0; d],
            z: vec![0.0; d],
        })
    }

    /// Draws a fresh momentum p ~ N(0, M) for the chain's point and returns its Hamiltonian.
    pub fn refresh_momentum<R: Rng + ?Sized>(&mut self, rng: &mut R) -> f64 {
        self.metric.sample_momentum(rng, &mut self.point.momentum, &mut self.z);
        hamiltonian(&self.point, &self.metric, &mut self.velocity)
    }

    /// Hoffman & Gelman (2014) Alg. 4 as in Stan: starting from `step_size`, double (or halve)
    /// it until the acceptance ratio of one leapfrog step from a fresh momentum crosses 0.8.
    /// Returns the new step size and the evaluations made (N terms and gradients per trial).
    pub fn find_step_size<M, R>(
        &mut self, model: &M, step_size: f64, rng: &mut R,
    ) -> (f64, EvalCounts)
    where
        M: TermGradients + LogPrior + ?Sized,
        R: Rng + ?Sized,
    {
        let n = model.num_terms();
        let threshold = 0.8f64.ln();
        let mut evals = EvalCounts::ZERO;
        let mut eps = step_size;
        let mut direction = 0i32;
        for _ in 0..100 {
            let h0 = self.refresh_momentum(rng);
            self.proposal.copy_from(&self.point);
            let full = &mut self.full;
            let out =
                leapfrog(&mut self.proposal, &self.metric, eps, 1, &mut self.velocity, |t, g| {
                    full.log_posterior_grad(model, t, g)
                });
            evals += EvalCounts::terms_and_gradients(n * out.gradient_evaluations());
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
        (eps, evals)
    }
}

/// H(θ, p) = −log π(θ) + ½ pᵀΣp, using `velocity` as scratch.
pub fn hamiltonian(point: &PhasePoint, metric: &Metric, velocity: &mut [f64]) -> f64 {
    -point.log_density + metric.kinetic_energy(&point.momentum, velocity)
}

/// Stan's warmup of a Hamiltonian kernel: dual averaging of the step size towards the target
/// acceptance statistic and, in the doubling slow windows of [`WarmupSchedule`], an estimate
/// of the metric from the chain's positions; after each window the metric is replaced, the
/// step size re-found and dual averaging restarted.
#[derive(Debug, Clone, Default)]
struct Warmup {
    tuner: Option<DualAveraging>,
    schedule: Option<WarmupSchedule>,
    estimator: Option<MetricEstimator>,
    iteration: usize,
}

impl Warmup {
    /// Starts a warmup of `num_warmup` iterations from `step_size`: the step size is adapted
    /// if `adapt_step_size`, a metric of kind `metric` (not the identity) and dimension `dim`
    /// if `adapt_metric`.
    fn begin(&mut self, num_warmup: usize, step_size: f64, w: &WarmupSettings<'_>, dim: usize) {
        self.iteration = 0;
        if w.adapt_step_size {
            self.tuner = DualAveraging::new(w.dual_averaging, step_size).ok();
        }
        if w.adapt_metric && w.metric != MetricKind::Identity {
            self.schedule = Some(WarmupSchedule::new(num_warmup));
            self.estimator = Some(MetricEstimator::new(w.metric, dim));
        }
    }

    /// Takes one warmup transition's acceptance statistic and the chain's position after it,
    /// updating `step_size` and, at the end of a slow window, `metric`. Returns `true` when the
    /// metric was replaced and step-size adaptation is on: the caller then re-finds the step
    /// size and passes it to [`Warmup::restart`].
    fn observe(
        &mut self, accept_stat: f64, position: &[f64], step_size: &mut f64, metric: &mut Metric,
    ) -> Result<bool> {
        let t = self.iteration;
        self.iteration += 1;
        if let Some(tuner) = self.tuner.as_mut() {
            tuner.update(accept_stat);
            *step_size = tuner.step_size();
        }
        let (Some(schedule), Some(estimator)) = (self.schedule.as_ref(), self.estimator.as_mut())
        else {
            return Ok(false);
        };
        if schedule.in_slow_window(t) {
            estimator.add(position);
        }
        if schedule.ends_slow_window(t) {
            *metric = estimator.estimate()?;
            estimator.reset();
            return Ok(self.tuner.is_some());
        }
        Ok(false)
    }

    /// Restarts dual averaging from a re-found step size.
    fn restart(&mut self, step_size: f64) {
        if let Some(tuner) = self.tuner.as_mut() {
            tuner.restart(step_size);
        }
    }

    /// Ends the warmup: the step size becomes dual averaging's final (averaged) one.
    fn finish(&mut self, step_size: &mut f64) {
        if let Some(tuner) = self.tuner.take() {
            *step_size = tuner.final_step_size();
        }
        self.schedule = None;
        self.estimator = None;
    }
}
