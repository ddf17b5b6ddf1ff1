//! The automatic piecewise bound for models without a bound of their own (REFERENCES §5;
//! Andral & Kamatani 2024, as in pdmp-jax).
//!
//! Along the current line x(t) = x + vt a rate λ(t) (BPS: ⟨∇U(x(t)), v⟩; Zig-Zag coordinate j:
//! θ_j ∂_jU(x(t))) is evaluated with its time derivative λ′(t) (from one full-data Hessian-vector
//! product) at the G + 1 grid times t_k = kH/G of a horizon H. On each interval
//! [t_k, t_{k+1}] the bound is the constant
//!
//! ```text
//! λ̄_k = max(λ(t_k), λ(t_{k+1}), λ(t_k) + λ′(t_k)(t* − t_k))⁺,
//! t* = the crossing of the tangents at t_k and t_{k+1} (only when it lies inside the interval),
//! ```
//!
//! which is an upper bound wherever λ is convex on the interval (it lies below its chord, so
//! below the larger end value) or concave (it lies below both tangents, whose minimum peaks at
//! t*). Where λ changes curvature inside an interval the bound can fail; thinning then sees a
//! ratio above 1, which the kernels count and report as bound violations (the price of
//! automation: a finer grid makes them rarer).
//!
//! **Adaptive horizon.** When no event happens before the horizon, the particle moves there and
//! the next horizon doubles; when an event happens in the first quarter of the band, the next
//! horizon halves — so H tracks the typical time between events. Cost per band: G + 1
//! full-data gradients (the one at t₀ is cached) and G + 1 Hessian-vector products.

use serde::Serialize;
use tallmc_core::{
    Error, EvalCounts, EventKind, LogPrior, LogPriorHessian, Result, SegmentStats, TermGradients,
    TermHessians,
};
use tallmc_integrators::PiecewiseLinearRate;

use super::common::{ClockTuning, FullPotential, ParticleState, all_finite};

/// Settings of the automatic piecewise bound (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AutoBoundConfig {
    /// Intervals G ≥ 1 of the time grid over one horizon.
    pub intervals: usize,
    /// First horizon H₀ > 0, in trajectory time.
    pub initial_horizon: f64,
}

impl Default for AutoBoundConfig {
    /// G = 10 intervals (pdmp-jax's default grid size), H₀ = 1.
    fn default() -> Self {
        Self { intervals: 10, initial_horizon: 1.0 }
    }
}

impl AutoBoundConfig {
    /// Checks G ≥ 1 and H₀ finite and > 0.
    pub fn validate(&self) -> Result<()> {
        if self.intervals == 0 {
            return Err(Error::invalid("automatic bound grid intervals", 0, "at least 1"));
        }
        tallmc_core::error::check_positive("automatic bound initial horizon", self.initial_horizon)
    }
}

/// Smallest and largest horizon relative to H₀.
const HORIZON_RANGE: f64 = 1e8;

/// The adaptive horizon (module docs).
#[derive(Debug, Clone)]
pub(crate) struct Horizon {
    pub(crate) current: f64,
    min: f64,
    max: f64,
}

impl Horizon {
    pub(crate) fn new(initial: f64) -> Self {
        Self { current: initial, min: initial / HORIZON_RANGE, max: initial * HORIZON_RANGE }
    }

    /// The band ran out without an event: double.
    pub(crate) fn exhausted(&mut self) {
        self.current = (2.0 * self.current).min(self.max);
    }

    /// An event at band time `s`: halve if it came in the first quarter.
    pub(crate) fn event_at(&mut self, s: f64) {
        if s < 0.25 * self.current {
            self.current = (0.5 * self.current).max(self.min);
        }
    }
}

/// What the automatic clocks of BPS (one band) and Zig-Zag (one band per coordinate) share:
/// the grid probe along the current line, the band time of the particle, where the bands end
/// and ∇U there, and the adaptive horizon. The bands are `valid` until an event, a divergence
/// or the end of the horizon changes the line.
#[derive(Debug, Clone)]
pub(crate) struct EnvelopeWindow {
    pub(crate) intervals: usize,
    pub(crate) probe: GridProbe,
    pub(crate) valid: bool,
    /// Band time of the particle.
    pub(crate) offset: f64,
    pub(crate) horizon: Horizon,
    pub(crate) band_end: f64,
    pub(crate) g_end: Vec<f64>,
}

impl EnvelopeWindow {
    /// A window in dimension `dim` with the settings `config`; its bands are not valid yet.
    pub(crate) fn new(dim: usize, config: AutoBoundConfig) -> Self {
        Self {
            intervals: config.intervals,
            probe: GridProbe::new(dim, config.intervals),
            valid: false,
            offset: 0.0,
            horizon: Horizon::new(config.initial_horizon),
            band_end: 0.0,
            g_end: vec![0.0; dim],
        }
    }

    /// When the bands are stale, probes the grid of the current horizon along (`state`'s
    /// position, velocity), adds its evaluations to `stats` and hands the probe and the
    /// number of grid points kept to `build`, which writes the bands; the window then starts
    /// at band time 0. Returns false (after shrinking the horizon) when not even one interval
    /// has finite values: the caller ends the segment in a divergence.
    pub(crate) fn ensure_bands<M>(
        &mut self, model: &M, potential: &mut FullPotential, state: &ParticleState,
        stats: &mut SegmentStats, build: impl FnOnce(&GridProbe, usize),
    ) -> bool
    where
        M: TermHessians + LogPrior + LogPriorHessian + ?Sized,
    {
        if self.valid {
            return true;
        }
        let (x, v) = (state.trajectory.position(), state.trajectory.velocity());
        let (evals, kept) =
            self.probe.probe(model, potential, x, v, &state.gradient, self.horizon.current);
        stats.evals += evals;
        if kept < 2 {
            self.horizon.event_at(0.0);
            return false;
        }
        build(&self.probe, kept);
        let d = v.len();
        self.g_end.copy_from_slice(&self.probe.grads[(kept - 1) * d..kept * d]);
        self.band_end = self.probe.times[kept - 1];
        self.offset = 0.0;
        self.valid = true;
        true
    }

    /// Band time left before the bands end.
    pub(crate) fn time_left(&self) -> f64 {
        self.band_end - self.offset
    }

    /// No event before the bands end: moves the particle there (by `tau`, the time left),
    /// installs the cached ∇U and doubles the horizon.
    pub(crate) fn run_out(&mut self, state: &mut ParticleState, tau: f64) {
        state.move_to(tau, &self.g_end);
        state.trajectory.set_end(EventKind::Horizon);
        self.valid = false;
        self.horizon.exhausted();
    }

    /// An event (or a divergence, at 0) at band time `band_time` changed the line: the bands
    /// are stale and the horizon may shrink.
    pub(crate) fn event_at(&mut self, band_time: f64) {
        self.valid = false;
        self.horizon.event_at(band_time);
    }

    /// The clock's tuning.
    pub(crate) fn tuning(&self) -> ClockTuning {
        ClockTuning::Automatic { intervals: self.intervals, horizon: self.horizon.current }
    }
}

/// Gradients and Hessian-vector products of U at the grid times of one horizon, along (x, v).
#[derive(Debug, Clone)]
pub(crate) struct GridProbe {
    pub(crate) times: Vec<f64>,
    /// (G + 1) × d gradients ∇U(x + v t_k).
    pub(crate) grads: Vec<f64>,
    /// (G + 1) × d products ∇²U(x + v t_k)·v.
    pub(crate) hvps: Vec<f64>,
    y: Vec<f64>,
    prior_hessian: Vec<f64>,
}

impl GridProbe {
    pub(crate) fn new(dim: usize, intervals: usize) -> Self {
        let k = intervals + 1;
        Self {
            times: vec![0.0; k],
            grads: vec![0.0; k * dim],
            hvps: vec![0.0; k * dim],
            y: vec![0.0; dim],
            prior_hessian: vec![0.0; dim * dim],
        }
    }

    /// Evaluates the grid over `horizon` from `x` with velocity `v`, the gradient at x being
    /// `g0`. Returns the evaluations and the number of grid points kept: the grid stops before
    /// the first point with a non-finite gradient or product (0 means the start itself failed).
    pub(crate) fn probe<M>(
        &mut self, model: &M, potential: &mut FullPotential, x: &[f64], v: &[f64], g0: &[f64],
        horizon: f64,
    ) -> (EvalCounts, usize)
    where
        M: TermHessians + LogPrior + LogPriorHessian + ?Sized,
    {
        let d = x.len();
        let intervals = self.times.len() - 1;
        let mut evals = EvalCounts::ZERO;
        for k in 0..=intervals {
            let t = horizon * k as f64 / intervals as f64;
            self.times[k] = t;
            for ((y, xi), vi) in self.y.iter_mut().zip(x).zip(v) {
                *y = xi + t * vi;
            }
            let (grad, hvp) =
                (&mut self.grads[k * d..(k + 1) * d], &mut self.hvps[k * d..(k + 1) * d]);
            if k == 0 {
                grad.copy_from_slice(g0);
            } else {
                evals += potential.gradient(model, &self.y, grad);
            }
            evals += potential.hessian_vector(model, &self.y, v, hvp, &mut self.prior_hessian);
            if !(all_finite(grad) && all_finite(hvp)) {
                return (evals, k);
            }
        }
        (evals, intervals + 1)
    }
}

/// Writes into `band` the piecewise-constant envelope (module docs) of a rate with `values`
/// and `slopes` at the increasing `times` (at least two).
pub(crate) fn envelope(
    times: &[f64], values: impl Fn(usize) -> f64, slopes: impl Fn(usize) -> f64,
    band: &mut PiecewiseLinearRate,
) {
    band.clear();
    for k in 0..times.len() - 1 {
        let (t0, t1) = (times[k], times[k + 1]);
        let (f0, f1, s0, s1) = (values(k), values(k + 1), slopes(k), slopes(k + 1));
        let mut level = f0.max(f1);
        if s0 > s1 {
            let cross = (f1 - f0 + s0 * t0 - s1 * t1) / (s0 - s1);
            if cross > t0 && cross < t1 {
                level = level.max(f0 + s0 * (cross - t0));
            }
        }
        let level = if level.is_finite() { level.max(0.0) } else { 0.0 };
        // Knots are non-decreasing by construction; a push can only fail on non-finite input,
        // which the guard above excludes.
        let _ = band.push(t0, level);
        let _ = band.push(t1, level);
    }
}

/// Gradient-only evaluation at a point, shared by the automatic kernels' proposals.
pub(crate) fn gradient_at<M: TermGradients + LogPrior + ?Sized>(
    model: &M, potential: &mut FullPotential, x: &[f64], v: &[f64], tau: f64, y: &mut [f64],
    out: &mut [f64],
) -> EvalCounts {
    for ((yi, xi), vi) in y.iter_mut().zip(x).zip(v) {
        *yi = xi + tau * vi;
    }
    potential.gradient(model, y, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tallmc_integrators::Rate;

    /// The envelope bounds convex and concave functions on a grid.
    #[test]
    fn envelope_bounds_convex_and_concave_rates() {
        let times: Vec<f64> = (0..=10).map(|k| f64::from(k) * 0.3).collect();
        type Curve = fn(f64) -> f64;
        let cases: [(Curve, Curve); 3] = [
            (|t| t * t - 1.0, |t| 2.0 * t),
            (|t| 2.0 - (t - 1.3).powi(2), |t| -2.0 * (t - 1.3)),
            (|t| (3.0 * t).sin() + 0.5, |t| 3.0 * (3.0 * t).cos()),
        ];
        let mut band = PiecewiseLinearRate::new();
        for (f, fp) in cases {
            envelope(&times, |k| f(times[k]), |k| fp(times[k]), &mut band);
            let fine = 3000;
            for i in 0..fine {
                let t = 3.0 * f64::from(i) / f64::from(fine);
                // sin changes curvature inside intervals; the bound may fail only there.
                let excess = f(t).max(0.0) - band.rate(t);
                assert!(excess <= 0.05, "t = {t}: rate {} above band {}", f(t), band.rate(t));
            }
        }
    }

    #[test]
    fn horizon_doubles_and_halves_within_range() {
        let mut h = Horizon::new(1.0);
        h.exhausted();
        assert_eq!(h.current, 2.0);
        h.event_at(0.1);
        assert_eq!(h.current, 1.0);
        h.event_at(0.9);
        assert_eq!(h.current, 1.0);
        for _ in 0..100 {
            h.exhausted();
        }
        assert_eq!(h.current, 1e8);
        assert!(AutoBoundConfig { intervals: 0, ..Default::default() }.validate().is_err());
    }
}
