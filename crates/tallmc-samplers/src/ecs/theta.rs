//! The θ-step of HMC-ECS (fixed-length HMC or NUTS on the estimated potential with u fixed)
//! with its warmup adaptation: dual-averaged step size and the window of positions whose mean
//! becomes the new θ* at a re-centring. Shared by every HMC-ECS chain
//! ([`EcsChain`](crate::EcsChain)).

use rand::{Rng, RngExt};
use tallmc_core::{Error, EvalCounts, Result};
use tallmc_integrators::{DualAveraging, LeapfrogOutcome, Metric, PhasePoint, leapfrog};

use super::perturbed::EcsDynamics;
use crate::hamiltonian::tree::Tree;

/// The outcome of one θ-step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ThetaStep {
    pub accept_stat: f64,
    pub accepted: bool,
    pub divergent: bool,
    pub n_leapfrog: usize,
    pub energy: f64,
    pub energy_error: f64,
    /// Doublings of the NUTS tree (0 for fixed-length HMC).
    pub tree_depth: usize,
    /// The NUTS tree stopped at its depth limit.
    pub hit_max_depth: bool,
}

/// Scratch and adaptation state of the θ-step, shared by both kernels; `E` is the estimate the
/// potential's evaluations record (the NUTS tree carries it with each point it may draw).
#[derive(Debug, Clone)]
pub(crate) struct Dynamics<E> {
    pub config: EcsDynamics,
    pub metric: Metric,
    pub metric_fixed: bool,
    pub proposal: PhasePoint,
    pub velocity: Vec<f64>,
    pub z: Vec<f64>,
    pub step_size: f64,
    pub tuner: Option<DualAveraging>,
    pub num_warmup: usize,
    pub warmup_done: usize,
    pub window_sum: Vec<f64>,
    pub window_count: usize,
    pub unreported: EvalCounts,
    pub recenterings: usize,
    /// The NUTS θ-step's scratch (`None`: fixed-length HMC).
    pub tree: Option<Tree<E>>,
}

impl<E: Copy> Dynamics<E> {
    pub fn new(config: &EcsDynamics, cov: Vec<f64>, setup: EvalCounts) -> Result<Self> {
        let d = (cov.len() as f64).sqrt() as usize;
        let (metric, metric_fixed) = match &config.initial_metric {
            Some(m) if m.dim() != d => return Err(Error::dimension("initial metric", d, m.dim())),
            Some(m) => (m.clone(), true),
            None => (Metric::dense(cov, d)?, false),
        };
        let step_size = config.initial_step_size.unwrap_or_else(|| 0.5 * (d as f64).powf(-0.25));
        Ok(Self {
            config: config.clone(),
            metric,
            metric_fixed,
            proposal: PhasePoint::zeros(d),
            velocity: vec![0.0; d],
            z: vec![0.0; d],
            step_size,
            tuner: None,
            num_warmup: 0,
            warmup_done: 0,
            window_sum: vec![0.0; d],
            window_count: 0,
            unreported: setup,
            recenterings: 0,
            tree: config.integrator.max_depth().map(|depth| Tree::new(d, depth)),
        })
    }

    /// One θ-step from `point` with the potential `f` (u fixed), which returns the log density
    /// and the estimate it made (`None` if the estimator failed): fixed-length HMC or NUTS as
    /// configured. `point` ends at the new θ; the estimate there is returned unless θ stayed.
    pub fn theta_step<R, F>(
        &mut self, point: &mut PhasePoint, rng: &mut R, mut f: F,
    ) -> (ThetaStep, Option<E>)
    where
        R: Rng + ?Sized,
        F: FnMut(&[f64], &mut [f64]) -> (f64, Option<E>),
    {
        self.metric.sample_momentum(rng, &mut point.momentum, &mut self.z);
        let h0 =
            -point.log_density + self.metric.kinetic_energy(&point.momentum, &mut self.velocity);
        if let Some(tree) = self.tree.as_mut() {
            let (out, drawn) = tree.transition_tagged(
                point,
                h0,
                &self.metric,
                &mut self.velocity,
                self.step_size,
                self.config.max_energy_error,
                rng,
                f,
            );
            let step = ThetaStep {
                accept_stat: out.accept_stat,
                accepted: drawn.is_some(),
                divergent: out.divergent,
                n_leapfrog: out.n_leapfrog,
                energy: out.energy,
                energy_error: out.energy - h0,
                tree_depth: out.tree_depth,
                hit_max_depth: out.hit_max_depth,
            };
            return (step, drawn);
        }
        let mut last = None;
        let step = self.fixed_length(point, h0, rng, |t, g| {
            let (log_density, estimate) = f(t, g);
            last = estimate;
            log_density
        });
        (step, if step.accepted { last } else { None })
    }

    /// The fixed-length HMC θ-step from `point` (momentum drawn, Hamiltonian `h0`); on
    /// acceptance `point` holds the end point.
    fn fixed_length<R, F>(
        &mut self, point: &mut PhasePoint, h0: f64, rng: &mut R, f: F,
    ) -> ThetaStep
    where
        R: Rng + ?Sized,
        F: FnMut(&[f64], &mut [f64]) -> f64,
    {
        self.proposal.copy_from(point);
        let eps = self.step_size;
        let steps = ((self.config.trajectory_length / eps).ceil() as usize)
            .clamp(1, self.config.max_leapfrog_steps);
        let outcome = leapfrog(&mut self.proposal, &self.metric, eps, steps, &mut self.velocity, f);
        let (energy_error, divergent) = match outcome {
            LeapfrogOutcome::NonFinite { .. } => (f64::NAN, true),
            LeapfrogOutcome::Completed { .. } => {
                let h1 = -self.proposal.log_density
                    + self.metric.kinetic_energy(&self.proposal.momentum, &mut self.velocity);
                let dh = h1 - h0;
                (dh, !dh.is_finite() || dh > self.config.max_energy_error)
            }
        };
        let accept_stat = if divergent { 0.0 } else { (-energy_error).min(0.0).exp() };
        let accepted = !divergent && rng.random::<f64>() < accept_stat;
        let energy = if accepted {
            point.copy_from(&self.proposal);
            h0 + energy_error
        } else {
            h0
        };
        ThetaStep {
            accept_stat,
            accepted,
            divergent,
            n_leapfrog: outcome.gradient_evaluations(),
            energy,
            energy_error,
            tree_depth: 0,
            hit_max_depth: false,
        }
    }

    pub fn begin_warmup(&mut self, num_warmup: usize) {
        self.num_warmup = num_warmup;
        self.warmup_done = 0;
        self.window_sum.fill(0.0);
        self.window_count = 0;
        if self.config.adapt_step_size {
            self.tuner = DualAveraging::new(self.config.dual_averaging, self.step_size).ok();
        }
    }

    /// Records one warmup iteration; returns whether θ* should be re-set now (at the window
    /// mean, left in `window_sum`).
    pub fn adapt(&mut self, accept_stat: f64, position: &[f64]) -> bool {
        self.warmup_done += 1;
        if let Some(t) = self.tuner.as_mut() {
            t.update(accept_stat);
            self.step_size = t.step_size();
        }
        for (s, x) in self.window_sum.iter_mut().zip(position) {
            *s += x;
        }
        self.window_count += 1;
        let due = self.config.recenter.is_some_and(|s| s.due(self.warmup_done, self.num_warmup));
        if due {
            let k = self.window_count as f64;
            self.window_sum.iter_mut().for_each(|s| *s /= k);
            self.window_count = 0;
        }
        due
    }

    /// After a re-centring: new metric (unless fixed or not positive definite) and a dual
    /// averaging restart from the current ε.
    pub fn recentered(&mut self, cov: Result<Vec<f64>>) {
        self.recenterings += 1;
        self.window_sum.fill(0.0);
        if !self.metric_fixed
            && let Ok(cov) = cov
            && let Ok(m) = Metric::dense(cov, self.metric.dim())
        {
            self.metric = m;
        }
        if let Some(t) = self.tuner.as_mut() {
            t.restart(self.step_size);
        }
    }

    pub fn end_warmup(&mut self) {
        if let Some(t) = self.tuner.take() {
            self.step_size = t.final_step_size();
        }
    }
}
