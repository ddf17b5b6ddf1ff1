//! The θ-step of HMC-ECS (fixed-length HMC or NUTS on the estimated potential with u fixed)
//! with its warmup adaptation: dual-averaged step size and the window of positions whose mean
//! becomes the new θ* at a re-centring. Shared by every HMC-ECS chain
//! ([`EcsChain`](crate::EcsChain)).

use rand::Rng;
use tallmc_core::{Error, EvalCounts, Result};
use tallmc_integrators::{Metric, PhasePoint};

use super::settings::EcsDynamics;
use crate::hamiltonian::transition::{PhaseSpace, Transition};
use crate::hamiltonian::tree::Tree;
use crate::step_size::StepSize;

/// Scratch and adaptation state of the θ-step, shared by both kernels; `E` is the estimate the
/// potential's evaluations record (the NUTS tree carries it with each point it may draw).
#[derive(Debug, Clone)]
pub(crate) struct Dynamics<E> {
    pub config: EcsDynamics,
    /// The metric M⁻¹ and the transitions' scratch.
    pub space: PhaseSpace,
    pub metric_fixed: bool,
    pub step_size: StepSize,
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
            space: PhaseSpace::new(metric),
            metric_fixed,
            step_size: StepSize::new(step_size),
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
    ) -> (Transition, Option<E>)
    where
        R: Rng + ?Sized,
        F: FnMut(&[f64], &mut [f64]) -> (f64, Option<E>),
    {
        let h0 = self.space.refresh_momentum(point, rng);
        let eps = self.step_size.get();
        let max_energy_error = self.config.max_energy_error;
        if let Some(tree) = self.tree.as_mut() {
            let space = &mut self.space;
            let (out, drawn) = tree.transition_tagged(
                point,
                h0,
                &space.metric,
                &mut space.velocity,
                eps,
                max_energy_error,
                rng,
                f,
            );
            return (out.transition(h0, drawn.is_some()), drawn);
        }
        let steps = ((self.config.trajectory_length / eps).ceil() as usize)
            .clamp(1, self.config.max_leapfrog_steps);
        let mut last = None;
        let step = self.space.fixed_length(point, h0, eps, steps, max_energy_error, rng, |t, g| {
            let (log_density, estimate) = f(t, g);
            last = estimate;
            log_density
        });
        (step, if step.accepted { last } else { None })
    }

    pub fn begin_warmup(&mut self, num_warmup: usize) {
        self.num_warmup = num_warmup;
        self.warmup_done = 0;
        self.window_sum.fill(0.0);
        self.window_count = 0;
        self.step_size.begin_warmup(self.config.adapt_step_size, self.config.dual_averaging);
    }

    /// Records one warmup iteration; returns whether θ* should be re-set now (at the window
    /// mean, left in `window_sum`).
    pub fn adapt(&mut self, accept_stat: f64, position: &[f64]) -> bool {
        self.warmup_done += 1;
        self.step_size.update(accept_stat);
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
            && let Ok(m) = Metric::dense(cov, self.space.metric.dim())
        {
            self.space.metric = m;
        }
        self.step_size.restart(self.step_size.get());
    }

    pub fn end_warmup(&mut self) {
        self.step_size.end_warmup();
    }
}
