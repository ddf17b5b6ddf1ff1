//! The leapfrog integrator.
//!
//! For H(θ, p) = U(θ) + ½ pᵀΣp with U = −log π, one leapfrog step of size ε is
//!
//! ```text
//! p ← p + (ε/2) ∇log π(θ);   θ ← θ + ε Σ p;   p ← p + (ε/2) ∇log π(θ)
//! ```
//!
//! and L steps fuse the inner half-steps of momentum. The map is volume preserving and
//! reversible, with energy error O(ε²) over a trajectory, which is what makes the Metropolis
//! correction of HMC exact. Cost: one evaluation of the potential's gradient per step — for a
//! full-data potential that is N per-datum gradient evaluations per step.
//!
//! The potential is any closure `(θ, grad) -> log π(θ)` that overwrites `grad` with ∇log π(θ), so
//! the same integrator serves full-data HMC and subsampled (energy-conserving) HMC.

use crate::Metric;

/// A point in phase space together with the cached log density and its gradient at `position`.
#[derive(Debug, Clone, PartialEq)]
pub struct PhasePoint {
    /// θ.
    pub position: Vec<f64>,
    /// p.
    pub momentum: Vec<f64>,
    /// ∇log π(θ).
    pub grad: Vec<f64>,
    /// log π(θ).
    pub log_density: f64,
}

impl PhasePoint {
    /// A point of dimension `dim` with zeros everywhere and log density −∞.
    pub fn zeros(dim: usize) -> Self {
        Self {
            position: vec![0.0; dim],
            momentum: vec![0.0; dim],
            grad: vec![0.0; dim],
            log_density: f64::NEG_INFINITY,
        }
    }

    /// Copies `other` into `self` without allocating.
    pub fn copy_from(&mut self, other: &Self) {
        self.position.copy_from_slice(&other.position);
        self.momentum.copy_from_slice(&other.momentum);
        self.grad.copy_from_slice(&other.grad);
        self.log_density = other.log_density;
    }
}

/// How a trajectory ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeapfrogOutcome {
    /// All steps were taken; the log density and gradient are finite at the end.
    Completed {
        /// Gradient evaluations made (= steps).
        gradient_evaluations: usize,
    },
    /// The log density or its gradient became non-finite after `gradient_evaluations`
    /// evaluations; the trajectory stopped there (a divergence).
    NonFinite {
        /// Gradient evaluations made before stopping.
        gradient_evaluations: usize,
    },
}

impl LeapfrogOutcome {
    /// Gradient evaluations made.
    pub fn gradient_evaluations(&self) -> usize {
        match *self {
            Self::Completed { gradient_evaluations } | Self::NonFinite { gradient_evaluations } => {
                gradient_evaluations
            }
        }
    }
}

/// Integrates `n_steps` leapfrog steps of size `step_size` from `point` in place.
///
/// `point.grad` and `point.log_density` must hold the values at `point.position` on entry; they
/// hold the values at the final position on exit. `velocity` (length d) is scratch.
/// `log_density_grad(θ, grad)` returns log π(θ) and overwrites `grad` with ∇log π(θ).
pub fn leapfrog<F>(
    point: &mut PhasePoint, metric: &Metric, step_size: f64, n_steps: usize, velocity: &mut [f64],
    mut log_density_grad: F,
) -> LeapfrogOutcome
where
    F: FnMut(&[f64], &mut [f64]) -> f64,
{
    let half = 0.5 * step_size;
    for (p, g) in point.momentum.iter_mut().zip(&point.grad) {
        *p += half * g;
    }
    for step in 0..n_steps {
        metric.velocity(&point.momentum, velocity);
        for (x, v) in point.position.iter_mut().zip(velocity.iter()) {
            *x += step_size * v;
        }
        point.log_density = log_density_grad(&point.position, &mut point.grad);
        if !point.log_density.is_finite() || point.grad.iter().any(|g| !g.is_finite()) {
            return LeapfrogOutcome::NonFinite { gradient_evaluations: step + 1 };
        }
        let kick = if step + 1 == n_steps { half } else { step_size };
        for (p, g) in point.momentum.iter_mut().zip(&point.grad) {
            *p += kick * g;
        }
    }
    LeapfrogOutcome::Completed { gradient_evaluations: n_steps }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gaussian(theta: &[f64], grad: &mut [f64]) -> f64 {
        // log π = −½ θᵀθ / s², s = (1, 2)
        let s2 = [1.0, 4.0];
        let mut lp = 0.0;
        for j in 0..2 {
            grad[j] = -theta[j] / s2[j];
            lp -= 0.5 * theta[j] * theta[j] / s2[j];
        }
        lp
    }

    fn start() -> PhasePoint {
        let mut pt = PhasePoint::zeros(2);
        pt.position.copy_from_slice(&[1.0, -0.5]);
        pt.momentum.copy_from_slice(&[0.3, 0.8]);
        pt.log_density = gaussian(&pt.position.clone(), &mut pt.grad);
        pt
    }

    fn energy(pt: &PhasePoint, m: &Metric) -> f64 {
        -pt.log_density + m.kinetic_energy(&pt.momentum, &mut [0.0; 2])
    }

    #[test]
    fn energy_error_is_second_order_in_step_size() {
        let m = Metric::unit(crate::MetricKind::Diagonal, 2);
        let mut errs = Vec::new();
        for eps in [0.2, 0.1, 0.05] {
            let mut pt = start();
            let h0 = energy(&pt, &m);
            let steps = (1.0_f64 / eps).round() as usize;
            leapfrog(&mut pt, &m, eps, steps, &mut [0.0; 2], gaussian);
            errs.push((energy(&pt, &m) - h0).abs());
        }
        // Halving ε divides the error by about 4.
        for w in errs.windows(2) {
            let ratio = w[0] / w[1];
            assert!((3.0..5.5).contains(&ratio), "errors {errs:?}");
        }
    }

    #[test]
    fn trajectory_is_reversible() {
        let m = Metric::diagonal(vec![0.5, 3.0]).unwrap();
        let mut pt = start();
        let orig = pt.clone();
        leapfrog(&mut pt, &m, 0.13, 17, &mut [0.0; 2], gaussian);
        pt.momentum.iter_mut().for_each(|p| *p = -*p);
        leapfrog(&mut pt, &m, 0.13, 17, &mut [0.0; 2], gaussian);
        for j in 0..2 {
            assert!((pt.position[j] - orig.position[j]).abs() < 1e-12);
            assert!((pt.momentum[j] + orig.momentum[j]).abs() < 1e-12);
        }
    }

    #[test]
    fn non_finite_density_stops_the_trajectory() {
        let m = Metric::Identity(1);
        let mut pt = PhasePoint::zeros(1);
        pt.log_density = 0.0;
        pt.momentum[0] = 1.0;
        let out = leapfrog(&mut pt, &m, 0.1, 50, &mut [0.0], |th, g| {
            g[0] = 0.0;
            if th[0] > 0.25 { f64::NAN } else { 0.0 }
        });
        assert_eq!(out, LeapfrogOutcome::NonFinite { gradient_evaluations: 3 });
    }
}
