//! What the full-data Hamiltonian kernels ([`Hmc`](crate::Hmc) and [`Nuts`](crate::Nuts))
//! share: the phase-space state with its cached full-data gradient, the step-size heuristic,
//! and Stan's warmup (dual averaging of ε, metric estimated in doubling windows).
//!
//! Keeping these in one place keeps the two kernels' warmups identical, so that a difference
//! between HMC and NUTS runs is a difference of the transitions alone.

use rand::Rng;
use tallmc_core::{Error, EvalCounts, FullData, LogPrior, Parallelism, Result, TermGradients};
use tallmc_integrators::{
    DualAveraging, DualAveragingConfig, Metric, MetricEstimator, MetricKind, PhasePoint,
    WarmupSchedule, leapfrog,
};

/// The chain's phase point θ (with log π(θ) and ∇log π(θ) cached), the metric, the full-data
/// gradient's workspace and scratch vectors.
#[derive(Debug, Clone)]
pub(crate) struct Phase {
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
pub(crate) fn hamiltonian(point: &PhasePoint, metric: &Metric, velocity: &mut [f64]) -> f64 {
    -point.log_density + metric.kinetic_energy(&point.momentum, velocity)
}

/// Stan's warmup of a Hamiltonian kernel: dual averaging of the step size towards the target
/// acceptance statistic and, in the doubling slow windows of [`WarmupSchedule`], an estimate
/// of the metric from the chain's positions; after each window the metric is replaced, the
/// step size re-found and dual averaging restarted.
#[derive(Debug, Clone, Default)]
pub(crate) struct Warmup {
    tuner: Option<DualAveraging>,
    schedule: Option<WarmupSchedule>,
    estimator: Option<MetricEstimator>,
    iteration: usize,
}

impl Warmup {
    /// Starts a warmup of `num_warmup` iterations from `step_size`: the step size is adapted
    /// if `adapt_step_size`, a metric of `kind` (not the identity) if `adapt_metric`.
    pub fn begin(
        &mut self, num_warmup: usize, step_size: f64, adapt_step_size: bool,
        dual_averaging: DualAveragingConfig, adapt_metric: bool, kind: MetricKind, dim: usize,
    ) {
        self.iteration = 0;
        if adapt_step_size {
            self.tuner = DualAveraging::new(dual_averaging, step_size).ok();
        }
        if adapt_metric && kind != MetricKind::Identity {
            self.schedule = Some(WarmupSchedule::new(num_warmup));
            self.estimator = Some(MetricEstimator::new(kind, dim));
        }
    }

    /// Takes one warmup transition's acceptance statistic and the chain's position after it,
    /// updating `step_size` and, at the end of a slow window, `metric`. Returns `true` when the
    /// metric was replaced and step-size adaptation is on: the caller then re-finds the step
    /// size and passes it to [`Warmup::restart`].
    pub fn observe(
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
    pub fn restart(&mut self, step_size: f64) {
        if let Some(tuner) = self.tuner.as_mut() {
            tuner.restart(step_size);
        }
    }

    /// Ends the warmup: the step size becomes dual averaging's final (averaged) one.
    pub fn finish(&mut self, step_size: &mut f64) {
        if let Some(tuner) = self.tuner.take() {
            *step_size = tuner.final_step_size();
        }
        self.schedule = None;
        self.estimator = None;
    }
}
