//! The automatic piecewise bound for models without a bound of their own (REFERENCES §5;
//! Andral & Kamatani 2024, whose grid bound pdmp-jax implements), made cheaper per unit of
//! trajectory time.
//!
//! Along the current line x(t) = x + vt a rate λ(t) = f(t)⁺ (BPS: f = ⟨∇U(x(t)), v⟩;
//! Zig-Zag coordinate j: f = θ_j ∂_jU(x(t))) is evaluated at the G + 1 grid times
//! t_k = kH/G of a horizon H (one full-data gradient each; the one at t₀ is the particle's,
//! already known), and its time derivative f′ at the G left ends t₀, …, t_{G−1} (one full-data
//! Hessian-vector product each). On each interval [t_k, t_{k+1}] the bound is the line
//!
//! ```text
//! γ_k(t) = f(t_k) + (t − t_k)·max(f′(t_k), c_k),   c_k = (f(t_{k+1}) − f(t_k))/(t_{k+1} − t_k),
//! ```
//!
//! and λ ≤ γ_k⁺ wherever f is convex on the interval (f lies below its chord, the line of slope
//! c_k) or concave (f lies below its tangent at t_k, the line of slope f′(t_k)). The line is
//! exact for a rate that is linear along the line (a Gaussian target), and on a convex
//! interval it holds the trapezoid under the chord where pdmp-jax's grid bound holds the
//! rectangle at the larger end value. Where f changes curvature inside an interval the line
//! can fall below it, mostly by a few parts per million on near-Gaussian posteriors, so each
//! line's end values γ are raised to γ + 0.01|γ| (`ENVELOPE_MARGIN`: at most 1 % more
//! rejected proposals). Where the rate still exceeds the bound, thinning sees a ratio above
//! 1, which the kernels count and report as bound violations (the price of automation).
//!
//! **Horizon: about `events_per_band` expected events per band.** H is chosen when a band is
//! built, after f and f′ are known at t₀: it is the time at which the tangent lines
//! f(t₀) + f′(t₀)t of the clocks (one for BPS, d for Zig-Zag) would hold `events_per_band`
//! expected arrivals, Σ_clocks ∫₀^H [f + f′t]⁺ = m. When the tangents never reach that mass
//! (every rate negative and falling), H is twice the last horizon. A band ends at an event
//! that changes the line (a bounce, a flip, a refreshment, a divergence) or at its horizon; a
//! rejected proposal keeps it (the line is unchanged, so the bound still holds, and the
//! Poisson process is memoryless).
//!
//! **Cost per band**: G full-data gradients and G Hessian-vector products (G = 1 by default:
//! one gradient at the horizon, one product at the start), against pdmp-jax's grid_size
//! gradients and products (10 by default). Per proposal one more full-data gradient, which
//! becomes the next band's t₀ gradient when the proposal is accepted.

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
    /// First horizon H₀ > 0, in trajectory time: the scale of the horizon's range
    /// [H₀·10⁻⁸, H₀·10⁸] and the horizon used before the tangents have chosen one.
    pub initial_horizon: f64,
    /// Expected arrivals m > 0 of the tangent lines at t₀ over one horizon (module docs).
    pub events_per_band: f64,
}

impl Default for AutoBoundConfig {
    /// G = 1 interval, H₀ = 1, m = 3 expected events per band (measured at n = 10⁵ in
    /// docs/benchmarks.md: more intervals cost more per band than they save in rejections).
    fn default() -> Self {
        Self { intervals: 1, initial_horizon: 1.0, events_per_band: 3.0 }
    }
}

impl AutoBoundConfig {
    /// Checks G ≥ 1, H₀ and m finite and > 0.
    pub fn validate(&self) -> Result<()> {
        if self.intervals == 0 {
            return Err(Error::invalid("automatic bound grid intervals", 0, "at least 1"));
        }
        tallmc_core::error::check_positive(
            "automatic bound initial horizon",
            self.initial_horizon,
        )?;
        tallmc_core::error::check_positive("automatic bound events per band", self.events_per_band)
    }
}

/// Smallest and largest horizon relative to H₀.
const HORIZON_RANGE: f64 = 1e8;

/// Relative margin of the envelope: each line's end values γ become γ + 0.01|γ| (module docs).
pub(crate) const ENVELOPE_MARGIN: f64 = 0.01;

/// Relative precision to which the horizon solves Σ_clocks ∫₀^H [f + f′t]⁺ = m.
const HORIZON_PRECISION: f64 = 1e-2;

/// The adaptive horizon (module docs): the last one chosen and the range of all.
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

    /// The next band's horizon: the time at which the nondecreasing `mass` (the tangents'
    /// integrated rate, 0 at 0) reaches `target`, to within [`HORIZON_PRECISION`]; twice the
    /// last horizon when it never does; within the range either way.
    pub(crate) fn choose(&mut self, mass: impl Fn(f64) -> f64, target: f64) -> f64 {
        let h = match self.solve(&mass, target) {
            Some(h) => h,
            None => 2.0 * self.current,
        };
        self.current = h.clamp(self.min, self.max);
        self.current
    }

    /// The time at which `mass` reaches `target`, bracketed by doubling or halving from the last
    /// horizon and refined by bisection; None when it stays below `target` up to the largest
    /// horizon (or is NaN).
    fn solve(&self, mass: &impl Fn(f64) -> f64, target: f64) -> Option<f64> {
        let reaches = |t: f64| mass(t) >= target;
        let mut hi = self.current.clamp(self.min, self.max);
        let mut lo;
        if reaches(hi) {
            lo = 0.5 * hi;
            while lo > self.min && reaches(lo) {
                hi = lo;
                lo *= 0.5;
            }
        } else {
            loop {
                if hi >= self.max {
                    return None;
                }
                lo = hi;
                hi = (2.0 * hi).min(self.max);
                if reaches(hi) {
                    break;
                }
            }
        }
        while hi - lo > HORIZON_PRECISION * hi {
            let mid = 0.5 * (lo + hi);
            if reaches(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(hi)
    }

    /// A divergence at the probe: halve the last horizon (the fallback of the next choice).
    pub(crate) fn shrink(&mut self) {
        self.current = (0.5 * self.current).max(self.min);
    }
}

/// What the automatic clocks of BPS (one band) and Zig-Zag (one band per coordinate) share:
/// the grid probe along the current line, the band time of the particle, where the bands end
/// and ∇U there, and the adaptive horizon. The bands are `valid` until an event, a divergence
/// or the end of the horizon changes the line; a rejected proposal keeps them.
#[derive(Debug, Clone)]
pub(crate) struct EnvelopeWindow {
    pub(crate) intervals: usize,
    events_per_band: f64,
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
            events_per_band: config.events_per_band,
            probe: GridProbe::new(dim, config.intervals),
            valid: false,
            offset: 0.0,
            horizon: Horizon::new(config.initial_horizon),
            band_end: 0.0,
            g_end: vec![0.0; dim],
        }
    }

    /// When the bands are stale, builds them along (`state`'s position, velocity): one
    /// Hessian-vector product at t₀ (∇U there is `state`'s), the horizon from the clocks'
    /// tangents — `tangent_mass(g₀, ∇²U₀v, t)` is their summed ∫₀^t [f(t₀) + f′(t₀)s]⁺ ds — then
    /// the rest of the grid; adds the evaluations to `stats` and hands the probe and the number
    /// of grid points kept to `build`, which writes the bands; the window then starts at band
    /// time 0. Returns false (after shrinking the horizon) when not even one interval has
    /// finite values: the caller ends the segment in a divergence.
    pub(crate) fn ensure_bands<M>(
        &mut self, model: &M, potential: &mut FullPotential, state: &ParticleState,
        stats: &mut SegmentStats, tangent_mass: impl Fn(&[f64], &[f64], f64) -> f64,
        build: impl FnOnce(&GridProbe, usize),
    ) -> bool
    where
        M: TermHessians + LogPrior + LogPriorHessian + ?Sized,
    {
        if self.valid {
            return true;
        }
        let (x, v) = (state.trajectory.position(), state.trajectory.velocity());
        let (evals, finite) = self.probe.start(model, potential, x, v, &state.gradient);
        stats.evals += evals;
        let kept = if finite {
            let d = v.len();
            let (g0, hv0) = (&self.probe.grads[..d], &self.probe.hvps[..d]);
            let h = self.horizon.choose(|t| tangent_mass(g0, hv0, t), self.events_per_band);
            let (evals, kept) = self.probe.extend(model, potential, x, v, h);
            stats.evals += evals;
            kept
        } else {
            0
        };
        if kept < 2 {
            self.horizon.shrink();
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

    /// No event before the bands end: moves the particle there (by `tau`, the time left) and
    /// installs the cached ∇U; the next band starts there.
    pub(crate) fn run_out(&mut self, state: &mut ParticleState, tau: f64) {
        state.move_to(tau, &self.g_end);
        state.trajectory.set_end(EventKind::Horizon);
        self.valid = false;
    }

    /// An event (or a divergence) changed the line: the bands are stale.
    pub(crate) fn line_changed(&mut self) {
        self.valid = false;
    }

    /// The clock's tuning.
    pub(crate) fn tuning(&self) -> ClockTuning {
        ClockTuning::Automatic { intervals: self.intervals, horizon: self.horizon.current }
    }
}

/// Gradients of U at the G + 1 grid times of one horizon along (x, v), and Hessian-vector
/// products at the G left ends.
#[derive(Debug, Clone)]
pub(crate) struct GridProbe {
    pub(crate) times: Vec<f64>,
    /// (G + 1) × d gradients ∇U(x + v t_k).
    pub(crate) grads: Vec<f64>,
    /// G × d products ∇²U(x + v t_k)·v, k < G.
    pub(crate) hvps: Vec<f64>,
    y: Vec<f64>,
    prior_hessian: Vec<f64>,
}

impl GridProbe {
    pub(crate) fn new(dim: usize, intervals: usize) -> Self {
        Self {
            times: vec![0.0; intervals + 1],
            grads: vec![0.0; (intervals + 1) * dim],
            hvps: vec![0.0; intervals * dim],
            y: vec![0.0; dim],
            prior_hessian: vec![0.0; dim * dim],
        }
    }

    /// The grid's first point, at `x` where ∇U is `g0`: copies g0 and evaluates ∇²U(x)·v.
    /// Returns the evaluations and whether the product is finite.
    pub(crate) fn start<M>(
        &mut self, model: &M, potential: &mut FullPotential, x: &[f64], v: &[f64], g0: &[f64],
    ) -> (EvalCounts, bool)
    where
        M: TermHessians + LogPrior + LogPriorHessian + ?Sized,
    {
        let d = x.len();
        self.times[0] = 0.0;
        self.grads[..d].copy_from_slice(g0);
        let hvp = &mut self.hvps[..d];
        let evals = potential.hessian_vector(model, x, v, hvp, &mut self.prior_hessian);
        (evals, all_finite(hvp))
    }

    /// The rest of the grid over `horizon` from `x` with velocity `v` (after
    /// [`GridProbe::start`]). Returns the evaluations and the number of grid points kept: the
    /// grid stops before the first point with a non-finite gradient or product.
    pub(crate) fn extend<M>(
        &mut self, model: &M, potential: &mut FullPotential, x: &[f64], v: &[f64], horizon: f64,
    ) -> (EvalCounts, usize)
    where
        M: TermHessians + LogPrior + LogPriorHessian + ?Sized,
    {
        let d = x.len();
        let intervals = self.times.len() - 1;
        let mut evals = EvalCounts::ZERO;
        for k in 1..=intervals {
            let t = horizon * k as f64 / intervals as f64;
            self.times[k] = t;
            for ((y, xi), vi) in self.y.iter_mut().zip(x).zip(v) {
                *y = xi + t * vi;
            }
            let grad = &mut self.grads[k * d..(k + 1) * d];
            evals += potential.gradient(model, &self.y, grad);
            if !all_finite(grad) {
                return (evals, k);
            }
            if k < intervals {
                let hvp = &mut self.hvps[k * d..(k + 1) * d];
                evals += potential.hessian_vector(model, &self.y, v, hvp, &mut self.prior_hessian);
                if !all_finite(hvp) {
                    return (evals, k);
                }
            }
        }
        (evals, intervals + 1)
    }
}

/// Writes into `band` the piecewise-linear envelope (module docs) of a rate with `values` at
/// the increasing `times` (at least two) and `slopes` at all but the last: on each interval
/// the line from the left value with slope max(left slope, chord slope), its end values
/// raised by [`ENVELOPE_MARGIN`] of their size, then a jump to the next left value. A
/// non-finite line is written as 0.
pub(crate) fn envelope(
    times: &[f64], values: impl Fn(usize) -> f64, slopes: impl Fn(usize) -> f64,
    band: &mut PiecewiseLinearRate,
) {
    band.clear();
    for k in 0..times.len() - 1 {
        let (t0, t1) = (times[k], times[k + 1]);
        let (f0, f1) = (values(k), values(k + 1));
        let slope = slopes(k).max((f1 - f0) / (t1 - t0));
        let end = f0 + slope * (t1 - t0);
        let (start, end) = if f0.is_finite() && end.is_finite() { (f0, end) } else { (0.0, 0.0) };
        let (start, end) =
            (start + ENVELOPE_MARGIN * start.abs(), end + ENVELOPE_MARGIN * end.abs());
        // Knots are non-decreasing by construction; a push can only fail on non-finite input,
        // which the guard above excludes.
        let _ = band.push(t0, start);
        let _ = band.push(t1, end);
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
    use tallmc_integrators::{AffineRate, Rate};

    type Curve = fn(f64) -> f64;

    /// Fine-grid check that the band is above f⁺ on [0, end], up to `slack`.
    fn assert_above(f: Curve, band: &PiecewiseLinearRate, end: f64, slack: f64) {
        let fine = 3000;
        for i in 0..fine {
            let t = end * f64::from(i) / f64::from(fine);
            let excess = f(t).max(0.0) - band.rate(t);
            assert!(excess <= slack, "t = {t}: rate {} above band {}", f(t), band.rate(t));
        }
    }

    /// The envelope bounds convex and concave functions on a grid (and sin, which changes
    /// curvature inside intervals, up to a small excess there), and is exact for a line.
    #[test]
    fn envelope_bounds_convex_and_concave_rates() {
        let times: Vec<f64> = (0..=10).map(|k| f64::from(k) * 0.3).collect();
        let cases: [(Curve, Curve, f64); 4] = [
            (|t| t * t - 1.0, |t| 2.0 * t, 1e-12),
            (|t| 2.0 - (t - 1.3).powi(2), |t| -2.0 * (t - 1.3), 1e-12),
            (|t| (-t).exp() * 3.0 - 0.5, |t| -3.0 * (-t).exp(), 1e-12),
            (|t| (3.0 * t).sin() + 0.5, |t| 3.0 * (3.0 * t).cos(), 0.05),
        ];
        let mut band = PiecewiseLinearRate::new();
        for (f, fp, slack) in cases {
            envelope(&times, |k| f(times[k]), |k| fp(times[k]), &mut band);
            assert_above(f, &band, 3.0, slack);
        }
        // One interval: convex or concave over the whole horizon is enough.
        let (f, fp): (Curve, Curve) = (|t| 1.0 - (t - 0.5).powi(2), |t| -2.0 * (t - 0.5));
        envelope(&[0.0, 2.0], |k| f(2.0 * k as f64), |k| fp(2.0 * k as f64), &mut band);
        assert_above(f, &band, 2.0, 1e-12);
        // A line is its own envelope, up to the margin (1 % of the larger end value).
        envelope(&[0.0, 0.5, 1.0], |k| 2.0 * k as f64 - 0.5, |_| 4.0, &mut band);
        for t in [0.1, 0.3, 0.6, 0.99] {
            let excess = band.rate(t) - (4.0 * t - 0.5).max(0.0);
            assert!((0.0..=ENVELOPE_MARGIN * 3.5).contains(&excess), "t = {t}: {excess}");
        }
    }

    /// On convex rates the linear pieces hold no more mass than pdmp-jax's constant pieces
    /// (the larger end value, or the tangents' crossing) on the same grid.
    #[test]
    fn envelope_is_at_least_as_tight_as_the_constant_grid_bound_when_convex() {
        let times: Vec<f64> = (0..=4).map(|k| f64::from(k) * 0.5).collect();
        let (f, fp): (Curve, Curve) = (|t| (t - 0.7).powi(2) + 0.2, |t| 2.0 * (t - 0.7));
        let mut band = PiecewiseLinearRate::new();
        envelope(&times, |k| f(times[k]), |k| fp(times[k]), &mut band);
        let constant: f64 = times.windows(2).map(|w| 0.5 * f(w[0]).max(f(w[1]))).sum();
        let linear = band.integrated(2.0);
        assert!(linear < constant, "linear {linear} vs constant {constant}");
    }

    #[test]
    fn horizon_holds_the_target_mass_of_the_tangents() {
        let mut h = Horizon::new(1.0);
        // One tangent 1 + 2t: mass t + t² = 2 at t = 1.
        let line = AffineRate { a: 1.0, b: 2.0 };
        let chosen = h.choose(|t| line.integrated(t), 2.0);
        assert!((chosen - 1.0).abs() < 0.02, "{chosen}");
        // A rate starting negative: 0 until t = 3, then (t − 3): mass 2 at t = 5.
        let line = AffineRate { a: -3.0, b: 1.0 };
        let chosen = h.choose(|t| line.integrated(t), 2.0);
        assert!((chosen - 5.0).abs() < 0.06, "{chosen}");
        assert_eq!(h.current, chosen);
        // Far below the last horizon: found by halving.
        let line = AffineRate { a: 1e6, b: 0.0 };
        let chosen = h.choose(|t| line.integrated(t), 2.0);
        assert!((chosen - 2e-6).abs() < 3e-8, "{chosen}");
        // Tangents that never reach the mass: twice the last horizon, within the range.
        let falling = AffineRate { a: -1.0, b: -1.0 };
        let last = h.current;
        assert_eq!(h.choose(|t| falling.integrated(t), 2.0), 2.0 * last);
        for _ in 0..200 {
            h.choose(|t| falling.integrated(t), 2.0);
        }
        assert_eq!(h.current, 1e8);
        h.shrink();
        assert_eq!(h.current, 5e7);
    }

    #[test]
    fn invalid_settings_are_errors() {
        assert!(AutoBoundConfig::default().validate().is_ok());
        assert!(AutoBoundConfig { intervals: 0, ..Default::default() }.validate().is_err());
        let bad = AutoBoundConfig { events_per_band: 0.0, ..Default::default() };
        assert!(bad.validate().unwrap_err().to_string().contains("events per band"));
        let bad = AutoBoundConfig { initial_horizon: f64::NAN, ..Default::default() };
        assert!(bad.validate().is_err());
    }
}
