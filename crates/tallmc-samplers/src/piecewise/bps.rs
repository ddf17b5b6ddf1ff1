//! The Bouncy Particle Sampler on the full data (Bouchard-Côté, Vollmer & Doucet 2018; Pakman
//! et al. 2017, Alg. 1), exact.
//!
//! The particle moves on x(t) = x + vt. Bounces arrive at rate λ(t) = ⟨∇U(x(t)), v⟩⁺ with
//! U = −log π; at a bounce the velocity is reflected off the gradient,
//! v ← v − 2⟨∇U, v⟩∇U/‖∇U‖²; independently, at rate λ_ref the velocity is refreshed from its
//! reference distribution ([`VelocityDistribution`]). The process leaves π(x)ψ(v) invariant,
//! and time averages along the trajectory converge to π-expectations (with λ_ref > 0 for
//! ergodicity).
//!
//! The bounce clock is simulated with the Poisson clocks of
//! [`tallmc_integrators::poisson`], in one of two ways chosen by the type parameter:
//!
//! * [`ModelBound`] — thinning against the model's curvature bound
//!   ([`TermCurvatureBound`] + [`LogPriorCurvature`]): along the line
//!   λ(t) ≤ [a + bt]⁺ with a = ⟨∇U(x), v⟩ and b = vᵀK_U v, so a proposal is the first arrival
//!   of an affine rate and is kept with probability λ(τ)/(a + bτ). A ratio above 1 means the
//!   model's bound is wrong: an error ([`Error::BoundViolation`]), never a silently biased run.
//!   When the potential is quadratic (Gaussian targets, Gaussian regression with known σ:
//!   [`CurvatureBound::exact`](tallmc_core::CurvatureBound::exact)) the rate *is* affine and
//!   its arrival is inverted exactly: every proposal is a bounce and the gradient moves
//!   analytically, ∇U(x + vτ) = ∇U(x) + τ∇²U v, with no per-datum evaluation after set-up.
//! * [`AutomaticBound`] — any model with Hessian-vector products, no bound needed: a
//!   piecewise-linear envelope of the rate on a time grid with an adaptive horizon
//!   ([`envelope`](super::envelope)); violations of that heuristic bound are counted.
//!
//! **Cost.** Model bound: set-up one pass of N Hessians (the curvature bound), then N terms and
//! N gradients per proposal and per refreshment (none when exact). Automatic bound: per band,
//! G full-data gradients and G Hessian-vector products (G = 1 by default), plus N gradients per
//! proposal and refreshment; a band lasts until a bounce, a refreshment or its horizon (a
//! rejected proposal keeps it), and its horizon is chosen to hold about
//! [`AutoBoundConfig::events_per_band`] expected events.
//!
//! **Divergences.** A non-finite gradient at a proposed point ends a zero-length segment as
//! [`EventKind::Divergence`]: the particle does not move there and its velocity is reversed.
//! This is not π-invariant; it reports numerical trouble (as HMC's divergences do).

use rand::Rng;
use serde::Serialize;
use tallmc_core::{
    Error, EvalCounts, EventKind, LogPrior, LogPriorCurvature, LogPriorHessian, Parallelism,
    PdmpChain, PdmpKernel, Result, SegmentStats, TermCurvatureBound, TermGradients, TermHessians,
    Trajectory, Tuning,
};
use tallmc_integrators::{AffineRate, ConstantRate, PiecewiseLinearRate, Rate, thin};

use super::common::{
    ClockTuning, FullPotential, ParticleState, PotentialCurvature, VelocityDistribution,
    all_finite, check_refresh_rate, diverge, dot, first_event, reflect, segment_with,
};
use super::envelope::{AutoBoundConfig, EnvelopeWindow, envelope, gradient_at};

/// Rounding slack of an exact bound: a ratio up to 1 + 10⁻⁹ is not a violation.
pub(crate) const BOUND_SLACK: f64 = 1e-9;

/// Settings of [`Bps`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BpsConfig {
    /// Refreshment rate λ_ref ≥ 0 (0 disables refreshment; BPS is then not ergodic in general).
    pub refresh_rate: f64,
    /// Reference distribution of the velocity.
    pub velocity: VelocityDistribution,
    /// Threads for the full-data gradient.
    #[serde(skip)]
    pub parallelism: Parallelism,
}

impl Default for BpsConfig {
    /// λ_ref = 1, Gaussian velocities, all cores.
    fn default() -> Self {
        Self {
            refresh_rate: 1.0,
            velocity: VelocityDistribution::Gaussian,
            parallelism: Parallelism::Rayon,
        }
    }
}

impl BpsConfig {
    /// Checks λ_ref finite and ≥ 0.
    pub fn validate(&self) -> Result<()> {
        check_refresh_rate(self.refresh_rate)
    }
}

/// Bounce clocks thinned against the model's curvature bound, or inverted exactly for
/// quadratic potentials (module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ModelBound;

/// Bounce clocks thinned against an automatic piecewise-linear envelope (module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct AutomaticBound(pub AutoBoundConfig);

/// State of a BPS chain: the particle and ∇U at its position.
pub type BpsState = ParticleState;

/// Scratch of a running chain, built once.
#[derive(Debug, Clone)]
struct Running {
    potential: FullPotential,
    y: Vec<f64>,
    g_new: Vec<f64>,
    hv: Vec<f64>,
    /// Set-up evaluations not yet reported (added to the first step's stats).
    pending: EvalCounts,
}

/// The bounce clock of a chain built with [`ModelBound`]: the potential's curvature bound
/// (exact when the potential is quadratic). Opaque.
#[derive(Debug, Clone)]
pub struct CurvatureClock(pub(crate) PotentialCurvature);

/// The bounce clock of a [`Bps`] chain built with [`AutomaticBound`]: the envelope's band
/// along the current line and its adaptive horizon. Opaque.
#[derive(Debug, Clone)]
pub struct EnvelopeClock {
    window: EnvelopeWindow,
    band: PiecewiseLinearRate,
    /// Λ̄ at the particle's band time.
    mass: f64,
}

/// The tuning of a [`BpsChain`]: the refreshment rate and how the bounce clock is simulated.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BpsTuning {
    /// Refreshment rate λ_ref.
    pub refresh_rate: f64,
    /// The bounce clock.
    pub clock: ClockTuning,
}

impl Tuning for BpsTuning {
    /// `BPS refresh rate = …` and `bounce clock = …`.
    fn comment_lines(&self) -> Vec<String> {
        vec![
            format!("BPS refresh rate = {}", self.refresh_rate),
            format!("bounce clock = {}", self.clock.describe()),
        ]
    }
}

/// The full-data Bouncy Particle Sampler's settings (module docs): validated when made, they
/// build one [`BpsChain`] per chain. `B` is [`ModelBound`] or [`AutomaticBound`].
#[derive(Debug, Clone)]
pub struct Bps<B = ModelBound> {
    config: BpsConfig,
    bound: B,
}

impl Bps<ModelBound> {
    /// BPS thinned against the model's curvature bound (exact inversion when quadratic).
    pub fn new(config: BpsConfig) -> Result<Self> {
        config.validate()?;
        Ok(Self { config, bound: ModelBound })
    }
}

impl Bps<AutomaticBound> {
    /// BPS with the automatic piecewise bound.
    pub fn automatic(config: BpsConfig, bound: AutoBoundConfig) -> Result<Self> {
        config.validate()?;
        bound.validate()?;
        Ok(Self { config, bound: AutomaticBound(bound) })
    }
}

impl<B> Bps<B> {
    /// The settings.
    pub fn config(&self) -> &BpsConfig {
        &self.config
    }

    /// Builds a chain at `position` with a fresh velocity and the gradient there.
    fn start<M, R, C>(
        &self, model: &M, position: &[f64], rng: &mut R, clock: C,
    ) -> Result<BpsChain<C>>
    where
        M: TermGradients + LogPrior + ?Sized,
        R: Rng + ?Sized,
    {
        let d = model.dim();
        let mut potential = FullPotential::new(model, self.config.parallelism);
        let velocity = self.config.velocity;
        let (state, evals) =
            ParticleState::start(model, position, &mut potential, rng, |rng, v| {
                velocity.draw(rng, v);
            })?;
        Ok(BpsChain {
            config: self.config,
            state,
            running: Running {
                potential,
                y: vec![0.0; d],
                g_new: vec![0.0; d],
                hv: vec![0.0; d],
                pending: evals,
            },
            clock,
        })
    }
}

/// A running BPS chain: the particle with ∇U cached, the bounce clock `C` ([`CurvatureClock`]
/// or [`EnvelopeClock`]) and scratch.
#[derive(Debug, Clone)]
pub struct BpsChain<C = CurvatureClock> {
    config: BpsConfig,
    state: BpsState,
    running: Running,
    clock: C,
}

impl<C> BpsChain<C> {
    /// The particle: position, velocity, time and last segment.
    pub fn trajectory(&self) -> &Trajectory {
        &self.state.trajectory
    }

    /// The chain's state: the particle and ∇U there.
    pub fn state(&self) -> &BpsState {
        &self.state
    }
}

/// The refreshment clock's next arrival.
fn refresh_time<R: Rng + ?Sized>(config: &BpsConfig, rng: &mut R) -> f64 {
    ConstantRate(config.refresh_rate).first_arrival(rng)
}

/// Moves by `tau`, installs the gradient there, and refreshes the velocity.
fn refresh<R: Rng + ?Sized>(
    state: &mut BpsState, g_new: &[f64], tau: f64, velocity: VelocityDistribution, rng: &mut R,
    mut stats: SegmentStats,
) -> SegmentStats {
    state.move_to(tau, g_new);
    velocity.draw(rng, state.trajectory.velocity_mut());
    state.trajectory.set_end(EventKind::Refresh);
    stats.refreshes = 1;
    stats
}

/// What makes one of the BPS clocks fire (in the error when none can).
const FIRES_WHEN: &str =
    "a potential that rises along every line or a refresh rate > 0 (is the target proper?)";

impl<M> PdmpKernel<M> for Bps<ModelBound>
where
    M: TermGradients + LogPrior + TermCurvatureBound + LogPriorCurvature + LogPriorHessian + ?Sized,
{
    type Chain = BpsChain<CurvatureClock>;

    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<Self::Chain> {
        let mut chain = self.start(model, position, rng, ())?;
        let curvature = PotentialCurvature::new(model)?;
        chain.running.pending += curvature.evals;
        let BpsChain { config, state, running, .. } = chain;
        Ok(BpsChain { config, state, running, clock: CurvatureClock(curvature) })
    }
}

impl<M> PdmpChain<M> for BpsChain<CurvatureClock>
where
    M: TermGradients + LogPrior + TermCurvatureBound + LogPriorCurvature + LogPriorHessian + ?Sized,
{
    type Tuning = BpsTuning;

    fn trajectory(&self) -> &Trajectory {
        &self.state.trajectory
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<SegmentStats> {
        let Self { config, state, running: r, clock } = self;
        let tau_r = refresh_time(config, rng);
        let velocity_kind = config.velocity;
        let curvature = &clock.0;
        let (x, v) = (state.trajectory.position(), state.trajectory.velocity());
        let a = dot(&state.gradient, v);
        let b = curvature.apply(v, &mut r.hv);
        let tau_b = AffineRate { a, b }.first_arrival(rng);
        let (which, tau) = first_event([tau_b, tau_r], "BPS clocks", FIRES_WHEN)?;
        let mut stats = segment_with(&mut r.pending);
        // ∇U at the end of the segment: analytic when the potential is quadratic.
        if curvature.exact {
            for ((g, g0), hv) in r.g_new.iter_mut().zip(&state.gradient).zip(&r.hv) {
                *g = g0 + tau * hv;
            }
        } else {
            stats.evals += gradient_at(model, &mut r.potential, x, v, tau, &mut r.y, &mut r.g_new);
        }
        if !all_finite(&r.g_new) {
            return Ok(diverge(&mut state.trajectory, stats));
        }
        if which == 1 {
            return Ok(refresh(state, &r.g_new, tau, velocity_kind, rng, stats));
        }
        stats.proposals = 1;
        let accept = if curvature.exact {
            stats.ratio = 1.0;
            true
        } else {
            let rate = dot(&r.g_new, v);
            let decision = thin(rate, a + b * tau, rng);
            stats.ratio = decision.ratio;
            if decision.ratio > 1.0 + BOUND_SLACK {
                return Err(Error::BoundViolation {
                    what: "model's curvature bound of the BPS rate".into(),
                    ratio: decision.ratio,
                    time: state.trajectory.time() + tau,
                });
            }
            decision.accept
        };
        state.move_to(tau, &r.g_new);
        if accept {
            reflect(state.trajectory.velocity_mut(), &state.gradient);
            state.trajectory.set_end(EventKind::Bounce);
            stats.bounces = 1;
        }
        Ok(stats)
    }

    fn tuning(&self) -> BpsTuning {
        BpsTuning {
            refresh_rate: self.config.refresh_rate,
            clock: ClockTuning::of_curvature(self.clock.0.exact),
        }
    }
}

impl<M> PdmpKernel<M> for Bps<AutomaticBound>
where
    M: TermHessians + LogPrior + LogPriorHessian + ?Sized,
{
    type Chain = BpsChain<EnvelopeClock>;

    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<Self::Chain> {
        let clock = EnvelopeClock {
            window: EnvelopeWindow::new(model.dim(), self.bound.0),
            band: PiecewiseLinearRate::new(),
            mass: 0.0,
        };
        self.start(model, position, rng, clock)
    }
}

impl<M> PdmpChain<M> for BpsChain<EnvelopeClock>
where
    M: TermHessians + LogPrior + LogPriorHessian + ?Sized,
{
    type Tuning = BpsTuning;

    fn trajectory(&self) -> &Trajectory {
        &self.state.trajectory
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<SegmentStats> {
        let Self { config, state, running: r, clock: auto } = self;
        let tau_r = refresh_time(config, rng);
        let velocity_kind = config.velocity;
        let mut stats = segment_with(&mut r.pending);
        let EnvelopeClock { window, band, mass } = auto;
        let v = state.trajectory.velocity();
        let d = v.len();
        let tangent = |g0: &[f64], hv0: &[f64], t: f64| {
            AffineRate { a: dot(g0, v), b: dot(hv0, v) }.integrated(t)
        };
        let ready =
            window.ensure_bands(model, &mut r.potential, state, &mut stats, tangent, |p, kept| {
                envelope(
                    &p.times[..kept],
                    |k| dot(&p.grads[k * d..(k + 1) * d], v),
                    |k| dot(&p.hvps[k * d..(k + 1) * d], v),
                    band,
                );
                *mass = 0.0;
            });
        if !ready {
            // Not even one interval with finite values: shrink and report.
            return Ok(diverge(&mut state.trajectory, stats));
        }
        let (x, v) = (state.trajectory.position(), state.trajectory.velocity());
        let e = tallmc_integrators::poisson::unit_exponential(rng);
        let tau_b = band.arrival_for(*mass + e) - window.offset;
        let tau_h = window.time_left();
        let (which, tau) = first_event([tau_b, tau_r, tau_h], "BPS clocks", FIRES_WHEN)?;
        if which == 2 {
            window.run_out(state, tau);
            return Ok(stats);
        }
        stats.evals += gradient_at(model, &mut r.potential, x, v, tau, &mut r.y, &mut r.g_new);
        if !all_finite(&r.g_new) {
            window.line_changed();
            return Ok(diverge(&mut state.trajectory, stats));
        }
        let band_time = window.offset + tau;
        if which == 1 {
            window.line_changed();
            return Ok(refresh(state, &r.g_new, tau, velocity_kind, rng, stats));
        }
        stats.proposals = 1;
        let decision = thin(dot(&r.g_new, v), band.rate(band_time), rng);
        stats.ratio = decision.ratio;
        stats.violations = u64::from(decision.ratio > 1.0 + BOUND_SLACK);
        state.move_to(tau, &r.g_new);
        window.offset = band_time;
        *mass += e;
        if decision.accept {
            reflect(state.trajectory.velocity_mut(), &state.gradient);
            state.trajectory.set_end(EventKind::Bounce);
            stats.bounces = 1;
            window.line_changed();
        }
        Ok(stats)
    }

    fn tuning(&self) -> BpsTuning {
        BpsTuning { refresh_rate: self.config.refresh_rate, clock: self.clock.window.tuning() }
    }
}
