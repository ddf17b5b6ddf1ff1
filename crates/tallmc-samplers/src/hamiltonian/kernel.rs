//! The full-data Hamiltonian kernels as one generic: [`Hamiltonian`]`<C>` settings build a
//! [`HamiltonianChain`]`<C>`, where `C` is [`HmcConfig`](crate::HmcConfig) (a jittered
//! fixed-length trajectory: [`Hmc`](crate::Hmc)) or [`NutsConfig`](crate::NutsConfig) (the
//! No-U-Turn tree: [`Nuts`](crate::Nuts)). Everything but the transition is shared: the
//! phase-space state with its cached full-data gradient, the step-size heuristic, and Stan's
//! warmup (dual averaging of ε, metric estimated in doubling windows), so that a difference
//! between HMC and NUTS runs is a difference of the transitions alone.

use std::fmt;

use rand::Rng;
use serde::Serialize;
use tallmc_core::{
    Chain, Error, EvalCounts, FullData, Kernel, LogPrior, Parallelism, Result, StepStats,
    TermGradients, Tuning,
};
use tallmc_integrators::{Metric, MetricEstimator, PhasePoint, WarmupSchedule, leapfrog};

use super::settings::{HamiltonianWarmup, MetricSetting};
use super::transition::PhaseSpace;
use crate::step_size::StepSize;

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
    fn warmup(&self) -> &HamiltonianWarmup;

    /// Threads for the full-data gradient.
    fn parallelism(&self) -> Parallelism;

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

/// The adapted tuning of a full-data Hamiltonian chain (HMC or NUTS): step size ε and metric Σ.
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

/// A running full-data Hamiltonian chain: θ with log π(θ) and ∇log π(θ) cached, the metric,
/// step size, warmup adaptation and the transition's scratch.
#[derive(Debug, Clone)]
pub struct HamiltonianChain<C: HamiltonianSettings> {
    config: C,
    phase: Phase,
    step_size: StepSize,
    warmup: MetricWarmup,
    unreported: EvalCounts,
    trajectory: C::Trajectory,
}

impl<C: HamiltonianSettings> HamiltonianChain<C> {
    /// The current step size (after warmup: the adapted one).
    pub fn step_size(&self) -> f64 {
        self.step_size.get()
    }

    /// The current metric.
    pub fn metric(&self) -> &Metric {
        &self.phase.space.metric
    }

    /// Re-finds the step size from the current one (see [`Phase::find_step_size`]); the
    /// evaluations are reported with the next step.
    fn find_step_size<M, R>(&mut self, model: &M, rng: &mut R) -> f64
    where
        M: TermGradients + LogPrior + ?Sized,
        R: Rng + ?Sized,
    {
        let (eps, evals) = self.phase.find_step_size(model, self.step_size.get(), rng);
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
        let w = self.config.warmup();
        let phase = Phase::start(model, position, &w.metric, self.config.parallelism())?;
        let mut chain = HamiltonianChain {
            config: self.config.clone(),
            phase,
            step_size: StepSize::new(w.initial_step_size.unwrap_or(1.0)),
            warmup: MetricWarmup::default(),
            unreported: EvalCounts::terms_and_gradients(model.num_terms()),
            trajectory: self.config.new_trajectory(model.dim()),
        };
        if w.initial_step_size.is_none() {
            let eps = chain.find_step_size(model, rng);
            chain.step_size.set(eps);
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
        let Phase { point, space, .. } = &mut self.phase;
        let h0 = space.refresh_momentum(point, rng);
        let earlier = std::mem::take(&mut self.unreported);
        Ok(self.config.transition(
            &mut self.trajectory,
            &mut self.phase,
            h0,
            self.step_size.get(),
            model,
            rng,
            earlier,
        ))
    }

    fn begin_warmup(&mut self, num_warmup: usize) {
        let w = self.config.warmup();
        self.step_size.begin_warmup(w.adapt_step_size, w.dual_averaging);
        self.warmup.begin(num_warmup, &w.metric, self.phase.space.metric.dim());
    }

    fn adapt<R: Rng + ?Sized>(&mut self, model: &M, stats: &C::Stats, rng: &mut R) -> Result<()> {
        self.step_size.update(stats.accept_stat());
        let Phase { point, space, .. } = &mut self.phase;
        if self.warmup.observe(&point.position, &mut space.metric)? && self.step_size.adapting() {
            let eps = self.find_step_size(model, rng);
            self.step_size.restart(eps);
        }
        Ok(())
    }

    fn end_warmup(&mut self) {
        self.step_size.end_warmup();
        self.warmup.finish();
    }

    fn tuning(&self) -> HmcTuning {
        HmcTuning { step_size: self.step_size.get(), metric: self.phase.space.metric.clone() }
    }
}

/// The chain's phase point θ (with log π(θ) and ∇log π(θ) cached), the full-data gradient's
/// workspace, and the metric with the transitions' scratch.
#[derive(Debug, Clone)]
pub struct Phase {
    /// The chain's state; its momentum is redrawn at every transition.
    pub point: PhasePoint,
    /// Workspace of the full-data gradient (chunked, deterministic reduction).
    pub full: FullData,
    /// The metric Σ and the transitions' scratch.
    pub(crate) space: PhaseSpace,
}

impl Phase {
    /// The state at `position`, checked: dimension ≥ 1, finite position, an initial metric of
    /// the model's dimension (see [`MetricSetting::initial`]), finite log density and
    /// gradient there. Costs one full-data gradient (N terms and gradients).
    pub fn start<M: TermGradients + LogPrior + ?Sized>(
        model: &M, position: &[f64], metric: &MetricSetting, parallelism: Parallelism,
    ) -> Result<Self> {
        let d = model.dim();
        if d == 0 {
            return Err(Error::invalid("model dimension", 0, "at least 1"));
        }
        tallmc_core::error::check_finite_vector("initial position", position, d)?;
        let metric = metric.initial(d)?;
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
        Ok(Self { point, full, space: PhaseSpace::new(metric) })
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
        let Self { point, full, space } = self;
        for _ in 0..100 {
            let h0 = space.refresh_momentum(point, rng);
            space.proposal.copy_from(point);
            let out = leapfrog(
                &mut space.proposal,
                &space.metric,
                eps,
                1,
                &mut space.velocity,
                |t, g| full.log_posterior_grad(model, t, g),
            );
            evals += EvalCounts::terms_and_gradients(n * out.gradient_evaluations());
            let proposal = &space.proposal;
            let h1 = super::transition::hamiltonian(proposal, &space.metric, &mut space.velocity);
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

/// Stan's metric adaptation of a Hamiltonian kernel: in the doubling slow windows of
/// [`WarmupSchedule`], an estimate of the metric from the chain's positions, which replaces
/// the metric after each window (the caller then re-finds the step size and restarts dual
/// averaging, [`StepSize::restart`]).
#[derive(Debug, Clone, Default)]
struct MetricWarmup {
    schedule: Option<WarmupSchedule>,
    estimator: Option<MetricEstimator>,
    iteration: usize,
}

impl MetricWarmup {
    /// Starts a warmup of `num_warmup` iterations: a metric of dimension `dim` is estimated if
    /// the setting adapts it.
    fn begin(&mut self, num_warmup: usize, metric: &MetricSetting, dim: usize) {
        self.iteration = 0;
        if let Some(kind) = metric.adapted_kind() {
            self.schedule = Some(WarmupSchedule::new(num_warmup));
            self.estimator = Some(MetricEstimator::new(kind, dim));
        }
    }

    /// Takes the chain's position after one warmup transition; at the end of a slow window
    /// replaces `metric` and returns `true`.
    fn observe(&mut self, position: &[f64], metric: &mut Metric) -> Result<bool> {
        let t = self.iteration;
        self.iteration += 1;
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
            return Ok(true);
        }
        Ok(false)
    }

    /// Ends the warmup.
    fn finish(&mut self) {
        self.schedule = None;
        self.estimator = None;
    }
}
