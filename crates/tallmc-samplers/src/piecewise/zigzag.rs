//! The Zig-Zag process on the full data (Bierkens, Fearnhead & Roberts 2019), exact.
//!
//! The velocity θ ∈ {−1, +1}^d; the particle moves on ξ(t) = ξ + θt and coordinate j flips,
//! θ_j ← −θ_j, at rate λ_j(t) = (θ_j ∂_jU(ξ(t)))⁺, U = −log π. The d clocks run in parallel
//! (their superposition is simulated by drawing each clock's first arrival and taking the
//! earliest, [`earliest`]). The process leaves π(ξ)·Uniform({±1}^d) invariant; no refreshment
//! is needed for ergodicity on the targets considered here.
//!
//! As for [`Bps`](super::Bps), the clocks come from one of:
//!
//! * [`ModelBound`] — along the line, |d/dt ∂_jU(ξ + θt)| ≤ Σ_k |∂²U/∂ξ_j∂ξ_k| ≤ r_j (the row
//!   sums of the model's K^abs plus the prior's κ), so λ_j(t) ≤ [a_j + r_j t]⁺ with
//!   a_j = θ_j∂_jU(ξ): each coordinate proposes from an affine rate, the earliest proposal is
//!   examined with one full-data gradient and kept with probability λ_j/(a_j + r_jτ); a ratio
//!   above 1 is an error ([`Error::BoundViolation`]). For quadratic potentials the rates are
//!   exactly affine, λ_j(t) = [θ_j(∂_jU(ξ) + t(∇²U θ)_j)]⁺: the earliest arrival *is* the flip,
//!   and the gradient and ∇²Uθ are updated in O(d) per event without touching the data.
//! * [`AutomaticBound`] — one grid of full-data gradients and Hessian-vector products per
//!   horizon gives a piecewise-linear envelope per coordinate
//!   ([`envelope`](super::envelope)); violations are counted.
//!
//! **Cost.** Model bound: one pass of N Hessians at set-up, then N terms and N gradients per
//! proposal (none when exact). Automatic bound: per band, G gradients and G Hessian-vector
//! products (G = 1 by default), plus N gradients per proposal; a band serves all d clocks
//! until a flip or its horizon (a rejected proposal keeps it). Divergences as in
//! [`Bps`](super::Bps).

use rand::{Rng, RngExt};
use serde::Serialize;
use tallmc_core::{
    Error, EvalCounts, EventKind, LogPrior, LogPriorCurvature, LogPriorHessian, Parallelism,
    PdmpChain, PdmpKernel, Result, SegmentStats, TermCurvatureBound, TermGradients, TermHessians,
    Trajectory, Tuning,
};
use tallmc_integrators::{AffineRate, PiecewiseLinearRate, Rate, earliest, thin};

use super::bps::{AutomaticBound, BOUND_SLACK, CurvatureClock, ModelBound};
use super::common::{
    ClockTuning, FullPotential, ParticleState, PotentialCurvature, all_finite, diverge,
    first_event, segment_with,
};
use super::envelope::{AutoBoundConfig, EnvelopeWindow, envelope, gradient_at};

/// Settings of [`ZigZag`].
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ZigZagConfig {
    /// Threads for the full-data gradient.
    #[serde(skip)]
    pub parallelism: Parallelism,
}

/// State of a Zig-Zag chain: the particle (velocity in {−1, +1}^d) and ∇U at its position.
pub type ZigZagState = ParticleState;

/// Scratch of a running chain, built once.
#[derive(Debug, Clone)]
struct Running {
    potential: FullPotential,
    y: Vec<f64>,
    g_new: Vec<f64>,
    times: Vec<f64>,
    pending: EvalCounts,
    /// ∇²U θ for the exact path (kept up to date across flips).
    h_theta: Vec<f64>,
}

/// The flip clocks of a [`ZigZag`] chain built with [`AutomaticBound`]: one envelope band per
/// coordinate along the current line and their adaptive horizon. Opaque.
#[derive(Debug, Clone)]
pub struct EnvelopeClocks {
    window: EnvelopeWindow,
    bands: Vec<PiecewiseLinearRate>,
}

/// The tuning of a [`ZigZagChain`]: how its flip clocks are simulated.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ZigZagTuning {
    /// The flip clocks.
    pub clock: ClockTuning,
}

impl Tuning for ZigZagTuning {
    /// `Zig-Zag clocks = …`.
    fn comment_lines(&self) -> Vec<String> {
        vec![format!("Zig-Zag clocks = {}", self.clock.describe())]
    }
}

/// The full-data Zig-Zag sampler's settings (module docs): they build one [`ZigZagChain`] per
/// chain. `B` is [`ModelBound`] or [`AutomaticBound`].
#[derive(Debug, Clone)]
pub struct ZigZag<B = ModelBound> {
    config: ZigZagConfig,
    bound: B,
}

impl ZigZag<ModelBound> {
    /// Zig-Zag thinned against the model's curvature bound (exact inversion when quadratic).
    pub fn new(config: ZigZagConfig) -> Self {
        Self { config, bound: ModelBound }
    }
}

impl ZigZag<AutomaticBound> {
    /// Zig-Zag with the automatic piecewise bound.
    pub fn automatic(config: ZigZagConfig, bound: AutoBoundConfig) -> Result<Self> {
        bound.validate()?;
        Ok(Self { config, bound: AutomaticBound(bound) })
    }
}

/// A velocity uniform on {−1, +1}^d.
pub(crate) fn draw_signs<R: Rng + ?Sized>(rng: &mut R, v: &mut [f64]) {
    for x in v.iter_mut() {
        *x = if rng.random::<bool>() { 1.0 } else { -1.0 };
    }
}

impl<B> ZigZag<B> {
    /// Builds a chain at `position` with a fresh velocity, the gradient there and `clock`.
    fn start<M, R, C>(
        &self, model: &M, position: &[f64], rng: &mut R, clock: C,
    ) -> Result<ZigZagChain<C>>
    where
        M: TermGradients + LogPrior + ?Sized,
        R: Rng + ?Sized,
    {
        let d = model.dim();
        let mut potential = FullPotential::new(model, self.config.parallelism);
        let (state, pending) =
            ParticleState::start(model, position, &mut potential, rng, |rng, v| {
                draw_signs(rng, v);
            })?;
        Ok(ZigZagChain {
            state,
            running: Running {
                potential,
                y: vec![0.0; d],
                g_new: vec![0.0; d],
                times: vec![0.0; d],
                pending,
                h_theta: vec![0.0; d],
            },
            clock,
        })
    }
}

/// A running Zig-Zag chain: the particle with ∇U cached, the flip clocks `C`
/// ([`CurvatureClock`] or [`EnvelopeClocks`]) and scratch.
#[derive(Debug, Clone)]
pub struct ZigZagChain<C = CurvatureClock> {
    state: ZigZagState,
    running: Running,
    clock: C,
}

impl<C> ZigZagChain<C> {
    /// The particle: position, velocity, time and last segment.
    pub fn trajectory(&self) -> &Trajectory {
        &self.state.trajectory
    }

    /// The chain's state: the particle and ∇U there.
    pub fn state(&self) -> &ZigZagState {
        &self.state
    }
}

/// What makes one of a Zig-Zag clocks fire (in the error when none can).
const FIRES_WHEN: &str = "a potential that rises along every line (is the target proper?)";

impl<M> PdmpKernel<M> for ZigZag<ModelBound>
where
    M: TermGradients + LogPrior + TermCurvatureBound + LogPriorCurvature + LogPriorHessian + ?Sized,
{
    type Chain = ZigZagChain<CurvatureClock>;

    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<Self::Chain> {
        let ZigZagChain { state, mut running, .. } = self.start(model, position, rng, ())?;
        let curvature = PotentialCurvature::new(model)?;
        running.pending += curvature.evals;
        if curvature.exact {
            curvature.apply(state.trajectory.velocity(), &mut running.h_theta);
        }
        Ok(ZigZagChain { state, running, clock: CurvatureClock(curvature) })
    }
}

impl<M> PdmpChain<M> for ZigZagChain<CurvatureClock>
where
    M: TermGradients + LogPrior + TermCurvatureBound + LogPriorCurvature + LogPriorHessian + ?Sized,
{
    type Tuning = ZigZagTuning;

    fn trajectory(&self) -> &Trajectory {
        &self.state.trajectory
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<SegmentStats> {
        let Self { state, running: r, clock } = self;
        let curvature = &clock.0;
        let mut stats = segment_with(&mut r.pending);
        let (x, theta) = (state.trajectory.position(), state.trajectory.velocity());
        for (j, t) in r.times.iter_mut().enumerate() {
            let a = theta[j] * state.gradient[j];
            let b = if curvature.exact { theta[j] * r.h_theta[j] } else { curvature.rows[j] };
            *t = AffineRate { a, b }.first_arrival(rng);
        }
        let (j, tau) = first_event(r.times.iter().copied(), "Zig-Zag clocks", FIRES_WHEN)?;
        stats.proposals = 1;
        if curvature.exact {
            for ((g, g0), h) in r.g_new.iter_mut().zip(&state.gradient).zip(&r.h_theta) {
                *g = g0 + tau * h;
            }
            if !all_finite(&r.g_new) {
                return Ok(diverge(&mut state.trajectory, stats));
            }
            stats.ratio = 1.0;
            let old = theta[j];
            state.move_to(tau, &r.g_new);
            state.trajectory.velocity_mut()[j] = -old;
            // ∇²U θ changes by −2 θ_j_old · column j (∇²U is symmetric).
            let d = r.h_theta.len();
            for (k, h) in r.h_theta.iter_mut().enumerate() {
                *h -= 2.0 * old * curvature.quadratic[k * d + j];
            }
            state.trajectory.set_end(EventKind::Flip(j as u32));
            stats.bounces = 1;
            return Ok(stats);
        }
        let a = theta[j] * state.gradient[j];
        let bound = a + curvature.rows[j] * tau;
        stats.evals += gradient_at(model, &mut r.potential, x, theta, tau, &mut r.y, &mut r.g_new);
        if !all_finite(&r.g_new) {
            return Ok(diverge(&mut state.trajectory, stats));
        }
        let decision = thin(theta[j] * r.g_new[j], bound, rng);
        stats.ratio = decision.ratio;
        if decision.ratio > 1.0 + BOUND_SLACK {
            return Err(Error::BoundViolation {
                what: format!(
                    "model's curvature bound of the Zig-Zag rate of coordinate {}",
                    j + 1
                ),
                ratio: decision.ratio,
                time: state.trajectory.time() + tau,
            });
        }
        state.move_to(tau, &r.g_new);
        if decision.accept {
            let v = state.trajectory.velocity_mut();
            v[j] = -v[j];
            state.trajectory.set_end(EventKind::Flip(j as u32));
            stats.bounces = 1;
        }
        Ok(stats)
    }

    fn tuning(&self) -> ZigZagTuning {
        ZigZagTuning { clock: ClockTuning::of_curvature(self.clock.0.exact) }
    }
}

impl<M> PdmpKernel<M> for ZigZag<AutomaticBound>
where
    M: TermHessians + LogPrior + LogPriorHessian + ?Sized,
{
    type Chain = ZigZagChain<EnvelopeClocks>;

    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<Self::Chain> {
        let d = model.dim();
        let clock = EnvelopeClocks {
            window: EnvelopeWindow::new(d, self.bound.0),
            bands: vec![PiecewiseLinearRate::new(); d],
        };
        self.start(model, position, rng, clock)
    }
}

impl<M> PdmpChain<M> for ZigZagChain<EnvelopeClocks>
where
    M: TermHessians + LogPrior + LogPriorHessian + ?Sized,
{
    type Tuning = ZigZagTuning;

    fn trajectory(&self) -> &Trajectory {
        &self.state.trajectory
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<SegmentStats> {
        let Self { state, running: r, clock: EnvelopeClocks { window, bands } } = self;
        let mut stats = segment_with(&mut r.pending);
        let theta = state.trajectory.velocity();
        let d = theta.len();
        let tangents = |g0: &[f64], hv0: &[f64], t: f64| {
            let lines = theta.iter().zip(g0).zip(hv0);
            lines.map(|((s, g), h)| AffineRate { a: s * g, b: s * h }.integrated(t)).sum()
        };
        let ready =
            window.ensure_bands(model, &mut r.potential, state, &mut stats, tangents, |p, kept| {
                let times = &p.times[..kept];
                for (j, band) in bands.iter_mut().enumerate() {
                    envelope(
                        times,
                        |k| theta[j] * p.grads[k * d + j],
                        |k| theta[j] * p.hvps[k * d + j],
                        band,
                    );
                }
            });
        if !ready {
            return Ok(diverge(&mut state.trajectory, stats));
        }
        let (x, theta) = (state.trajectory.position(), state.trajectory.velocity());
        let offset = window.offset;
        for (t, band) in r.times.iter_mut().zip(bands.iter()) {
            let e = tallmc_integrators::poisson::unit_exponential(rng);
            *t = band.arrival_for(band.integrated(offset) + e) - offset;
        }
        let tau_h = window.time_left();
        let first = earliest(r.times.iter().copied());
        let (j, tau) = match first {
            Some((j, tau)) if tau < tau_h => (j, tau),
            _ => {
                window.run_out(state, tau_h);
                return Ok(stats);
            }
        };
        stats.evals += gradient_at(model, &mut r.potential, x, theta, tau, &mut r.y, &mut r.g_new);
        if !all_finite(&r.g_new) {
            window.line_changed();
            return Ok(diverge(&mut state.trajectory, stats));
        }
        let band_time = window.offset + tau;
        stats.proposals = 1;
        let decision = thin(theta[j] * r.g_new[j], bands[j].rate(band_time), rng);
        stats.ratio = decision.ratio;
        stats.violations = u64::from(decision.ratio > 1.0 + BOUND_SLACK);
        state.move_to(tau, &r.g_new);
        window.offset = band_time;
        if decision.accept {
            let v = state.trajectory.velocity_mut();
            v[j] = -v[j];
            state.trajectory.set_end(EventKind::Flip(j as u32));
            stats.bounces = 1;
            window.line_changed();
        }
        Ok(stats)
    }

    fn tuning(&self) -> ZigZagTuning {
        ZigZagTuning { clock: self.clock.window.tuning() }
    }
}
