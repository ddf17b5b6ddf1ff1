//! What every Hamiltonian transition is made of, written once for the full-data kernels
//! ([`Hmc`](crate::Hmc), [`Nuts`](crate::Nuts)) and HMC-ECS's θ-step, over any potential (a
//! closure `(θ, grad) -> log π(θ)` overwriting `grad` with ∇log π(θ), as for [`leapfrog`]):
//!
//! * [`PhaseSpace`] — the metric Σ = M⁻¹ with the scratch of a transition: the momentum
//!   refresh p ~ N(0, M), the Hamiltonian H(θ, p) = −log π(θ) + ½ pᵀΣp, and the fixed-length
//!   transition (L leapfrog steps of size ε, then accept the end point with probability
//!   min{1, exp(−ΔH)}; a non-finite trajectory or ΔH > `max_energy_error` is divergent);
//!
//! The step size and its dual averaging during warmup are [`StepSize`](crate::step_size::StepSize).

use rand::{Rng, RngExt};
use tallmc_integrators::{LeapfrogOutcome, Metric, PhasePoint, leapfrog};

/// H(θ, p) = −log π(θ) + ½ pᵀΣp, using `velocity` as scratch.
pub(crate) fn hamiltonian(point: &PhasePoint, metric: &Metric, velocity: &mut [f64]) -> f64 {
    -point.log_density + metric.kinetic_energy(&point.momentum, velocity)
}

/// The metric of a Hamiltonian chain and the scratch its transitions use (allocated once).
#[derive(Debug, Clone)]
pub(crate) struct PhaseSpace {
    /// Inverse mass matrix Σ.
    pub metric: Metric,
    /// Scratch phase point for trajectories.
    pub proposal: PhasePoint,
    /// Scratch: velocity Σp.
    pub velocity: Vec<f64>,
    /// Scratch: standard normals for momentum draws.
    pub z: Vec<f64>,
}

/// How one transition went: fixed-length ([`PhaseSpace::fixed_length`]) or a NUTS tree
/// ([`TreeOutcome::transition`](super::tree::TreeOutcome::transition)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Transition {
    /// min{1, exp(−ΔH)} (0 when divergent); NUTS: its mean over the tree's leapfrog points.
    pub accept_stat: f64,
    /// Whether the chain moved (NUTS: whether the draw is a new point of the tree).
    pub accepted: bool,
    /// Whether the trajectory diverged.
    pub divergent: bool,
    /// Leapfrog steps taken (= gradient evaluations).
    pub n_leapfrog: usize,
    /// H at the chain's new state.
    pub energy: f64,
    /// ΔH of the end point (NaN when the trajectory left the finite numbers); NUTS: H at the
    /// draw − H₀.
    pub energy_error: f64,
    /// Doublings of the NUTS tree (0 for a fixed-length transition).
    pub tree_depth: usize,
    /// The NUTS tree stopped at its depth limit.
    pub hit_max_depth: bool,
}

impl PhaseSpace {
    /// Scratch for transitions with metric `metric` (of the chain's dimension).
    pub fn new(metric: Metric) -> Self {
        let d = metric.dim();
        Self { metric, proposal: PhasePoint::zeros(d), velocity: vec![0.0; d], z: vec![0.0; d] }
    }

    /// H(θ, p) of `point`.
    pub fn hamiltonian(&mut self, point: &PhasePoint) -> f64 {
        hamiltonian(point, &self.metric, &mut self.velocity)
    }

    /// Draws a fresh momentum p ~ N(0, M) into `point` and returns its Hamiltonian.
    pub fn refresh_momentum<R: Rng + ?Sized>(
        &mut self, point: &mut PhasePoint, rng: &mut R,
    ) -> f64 {
        self.metric.sample_momentum(rng, &mut point.momentum, &mut self.z);
        self.hamiltonian(point)
    }

    /// `steps` leapfrog steps of size `step_size` from `point` (momentum drawn, Hamiltonian
    /// `h0`) on the potential `f`, then the Metropolis correction of the end point (one uniform
    /// from `rng`): on acceptance `point` holds the end point.
    #[allow(clippy::too_many_arguments)]
    pub fn fixed_length<R, F>(
        &mut self, point: &mut PhasePoint, h0: f64, step_size: f64, steps: usize,
        max_energy_error: f64, rng: &mut R, f: F,
    ) -> Transition
    where
        R: Rng + ?Sized,
        F: FnMut(&[f64], &mut [f64]) -> f64,
    {
        self.proposal.copy_from(point);
        let outcome =
            leapfrog(&mut self.proposal, &self.metric, step_size, steps, &mut self.velocity, f);
        let (energy_error, divergent) = match outcome {
            LeapfrogOutcome::NonFinite { .. } => (f64::NAN, true),
            LeapfrogOutcome::Completed { .. } => {
                let dh = hamiltonian(&self.proposal, &self.metric, &mut self.velocity) - h0;
                (dh, !dh.is_finite() || dh > max_energy_error)
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
        Transition {
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
}
