//! The Stochastic Bouncy Particle Sampler (Pakman, Gilboa, Carlson & Paninski 2017, §3–5 and
//! Supp. C) and its preconditioned variant pSBPS: BPS driven by minibatch gradients, with bounce
//! proposals from a local-regression band instead of a bound.
//!
//! **Process.** The particle moves on x(t) = x + ut with u = A⊙v, v a unit vector (by default;
//! [`VelocityDistribution`]) and A = 1 for SBPS, a frozen diagonal preconditioner for pSBPS
//! ([`precondition`](super::precondition)). A bounce at time t happens at rate \[G(t)\]⁺ with the
//! *noisy* directional derivative G(t) = ⟨∇Û(x(t)), u⟩, where
//!
//! ```text
//! ∇Û(x) = −∇log p(x) − (N/n) Σ_{i∈S} ∇ℓ_i(x)
//! ```
//!
//! uses a fresh minibatch S of n indices drawn without replacement at every point where it is
//! evaluated; at a bounce v ← v − 2⟨A∇Û, v⟩A∇Û/‖A∇Û‖² with the same minibatch. Independently,
//! at rate λ_ref, v is refreshed from its reference distribution.
//!
//! **What is exact.** Theorem 1 (§3.1): π(x)ψ(v) stays invariant under zero-mean gradient noise
//! as long as the noise at distinct points is independent — which a fresh minibatch at every
//! proposed time gives. The bounce process (a Cox process of rate \[G(t)\]⁺) is simulated by
//! thinning: propose from a rate λ(t) and keep a proposal at t* with probability
//! \[G(t*)\]⁺/λ(t*). If λ(t) ≥ \[G(t)\]⁺ held for every realization of the noise, SBPS would be
//! exact; no such λ is available in general (that is the point of SBPS, which needs no bound).
//!
//! **The band (§4).** λ(t) is the upper predictive band of a Bayesian linear regression
//! G_j = β₀ + β₁t_j + N(0, σ_j²) of the observations (t_j, G_j, σ_j) made since the last velocity
//! change, σ_j the minibatch estimate of G_j's sd (finite-population corrected):
//!
//! ```text
//! λ⁺(t) = [β̂₀ + β̂₁t + k √(x(t)ᵀΣx(t) + σ²_last)]⁺,   x(t) = (1, t),
//! ```
//!
//! in closed form ([`regression`](super::regression)). It is convex in t, so its chord
//! interpolation on knots lies above it; the first arrival of the chord rate is drawn exactly
//! ([`PiecewiseLinearRate`]). **Two-stage thinning**: a chord arrival at t* is first kept with
//! probability λ⁺(t*)/γ(t*) using no data (exact: γ ≥ λ⁺); only then is a minibatch drawn and the
//! proposal kept with probability \[G*\]⁺/λ⁺(t*). Rejected proposals add (t*, G*, σ*) to the
//! observations; a bounce resets them to {(0, −G*, σ*′)} (⟨v_new, A∇Û⟩ = −⟨v_old, A∇Û⟩ with the
//! same minibatch; σ*′ recomputed along the new velocity from the same per-datum gradients).
//!
//! **What is biased, and the diagnostic (§4.1).** When \[G*\]⁺ > λ⁺(t*) the proposal is kept with
//! probability 1 instead of \[G*\]⁺/λ(t*) for a λ that would have covered it: the simulated bounce
//! rate is too low there, the bias is controlled by k (larger k, fewer violations, more
//! proposals). Every such **bound violation** is counted in [`SegmentStats::violations`] (with
//! the ratio in [`SegmentStats::ratio`]); a violation rate well above what the regression's
//! Gaussian tails predict (≈ P(Z > k)) says the local linear model does not fit. (Some excess is
//! built in: the reset observation −G* comes from a minibatch selected for a high G*, so the
//! next band starts low.) With a full batch (n = N) on a Gaussian target G(t) is exactly linear,
//! the band covers it and SBPS is exact BPS. Measured on a d = 5 logistic regression (N = 1000,
//! n = 100, `tests/samplers/sbps.rs`): k = 3 gives 0.6 % violations, means within 0.04 sd and sds 0–4 %
//! too large; k = 1 and 0.5 give 18 % and 31 % violations and mean errors of 0.3 and 0.8 sd.
//!
//! **Refreshment.** At a refreshment the observations along the old velocity are useless. A
//! fresh minibatch is drawn at the refresh point and the observations restart as
//! {(0, ⟨∇Û, u_new⟩, σ(u_new))}. (The authors' code computes that value and then negates it — it
//! runs its after-bounce reset — a sign bug not copied here.) The start is handled the same way:
//! [`PdmpKernel::build_chain`] draws v from its reference distribution and one minibatch at x₀. (The
//! authors instead start along the descent direction −ḡ/‖ḡ‖ with slope 1 and a band of 10; any
//! start is fine for a transient, and this one needs no special case.)
//!
//! **Horizon.** The band is built on \[t_last, t_last + H\]; if nothing fires before H the particle
//! moves there ([`EventKind::Horizon`]), observes a fresh minibatch and rebuilds (exact: a Poisson
//! process restricted to disjoint intervals, and the new observation at a fixed time does not
//! bias later decisions, which use their own minibatches). H is [`BandConfig::initial_horizon`],
//! then [`BandConfig::horizon_factor`] × the mean time between velocity changes so far; the
//! observation at the horizon keeps a stale band from sending the particle far away.
//!
//! **pSBPS.** With [`SbpsConfig::preconditioner`], A is learned during warmup
//! ([`PdmpChain::adapt`]: every minibatch updates V; the new A is installed only right after a
//! bounce or refreshment, when the observations restart anyway, and the restarted observation is
//! recomputed for the new u from the same minibatch) and frozen at [`PdmpChain::end_warmup`].
//! The paper adapts A during the whole run; see [`precondition`](super::precondition).
//!
//! **Steps and cost.** A step ends at a second-stage proposal (bounce or [`EventKind::Rejected`]),
//! a refreshment, the horizon or a divergence; stage-one rejections happen inside a step. Every
//! step draws exactly one minibatch: n terms and n gradients (plus O(nd) arithmetic and O(knots)
//! for the band); [`SegmentStats::proposals`] counts second-stage proposals. `build_chain` draws
//! one minibatch (reported with the first step). A non-finite minibatch gradient or band ends a
//! zero-length segment as [`EventKind::Divergence`]: the velocity is reversed and the
//! observations restart from the last one, negated (never a panic). Nothing allocates in `step`.
//!
//! References: Pakman et al. (2017), ICML, eqs. 7–13 and §5; the authors' code
//! (github.com/dargilboa/SBPS-public, read for the defaults and the deviations documented here;
//! REFERENCES §5); `docs/methods/sbps.md`.

use rand::{Rng, RngExt};
use serde::Serialize;
use tallmc_core::{
    Error, EvalCounts, EventKind, LogPrior, PdmpChain, PdmpKernel, Result, SegmentStats,
    TermGradients, Trajectory, Tuning,
};
use tallmc_integrators::poisson::unit_exponential;
use tallmc_integrators::{ConstantRate, PiecewiseLinearRate, Rate, earliest, thin};

use super::sbps_config::SbpsConfig;

use super::common::{self, check_position, reflect};
use super::minibatch::Minibatch;
use super::precondition::DiagonalPreconditioner;
use super::regression::{BandConfig, LocalRegression, ProposalBand, SlopePrior};
use crate::sg::check_batch;

/// State of an SBPS chain.
#[derive(Debug, Clone, PartialEq)]
pub struct SbpsState {
    /// Position, velocity u = A⊙v (dx/dt), time and last segment.
    pub trajectory: Trajectory,
    /// The unit (by default) direction v; the trajectory moves at A⊙v.
    pub direction: Vec<f64>,
    /// Observations since the last velocity change; the last one is at the current position.
    pub observations: LocalRegression,
}

/// Scratch and adaptive quantities of a running chain, built once.
#[derive(Debug, Clone)]
struct Running {
    minibatch: Minibatch,
    /// The proposed position.
    y: Vec<f64>,
    /// A⊙∇Û.
    scaled_gradient: Vec<f64>,
    /// The installed A.
    scale: Vec<f64>,
    band: PiecewiseLinearRate,
    preconditioner: Option<DiagonalPreconditioner>,
    adapting: bool,
    /// Whether the last step drew a minibatch (for `adapt`).
    fresh: bool,
    /// Running mean of fitted slopes (sum, count).
    slopes: (f64, u64),
    /// Total time between velocity changes and their number (for the horizon).
    resets: (f64, u64),
    pending: EvalCounts,
}

impl Running {
    fn slope_prior_mean(&self, prior: &SlopePrior) -> f64 {
        prior.mean.unwrap_or(if self.slopes.1 == 0 {
            0.0
        } else {
            self.slopes.0 / self.slopes.1 as f64
        })
    }

    fn horizon(&self, band: &BandConfig) -> f64 {
        let h = band.horizon_factor * self.resets.0 / self.resets.1 as f64;
        if self.resets.1 > 0 && h.is_finite() && h > 0.0 { h } else { band.initial_horizon }
    }

    /// Writes u = A⊙v into the trajectory's velocity.
    fn set_velocity(&self, state: &mut SbpsState) {
        let u = state.trajectory.velocity_mut();
        for ((ui, a), v) in u.iter_mut().zip(&self.scale).zip(&state.direction) {
            *ui = a * v;
        }
    }

    /// After a bounce or refreshment `s` into the segment (the new direction v already set):
    /// the velocity u = A⊙v, the observations restarted along it, `s` counted in the mean time
    /// between velocity changes (for the horizon), and the segment ended with `kind`.
    fn change_velocity(&mut self, state: &mut SbpsState, s: f64, kind: EventKind) {
        self.set_velocity(state);
        self.restart_observations(state);
        self.resets.0 += s;
        self.resets.1 += 1;
        state.trajectory.set_end(kind);
    }

    /// Restarts the observations at the current position from the last minibatch along the
    /// current velocity.
    fn restart_observations(&self, state: &mut SbpsState) -> bool {
        let (g, sigma) = self.minibatch.observe(state.trajectory.velocity());
        state.observations.clear();
        state.observations.push(0.0, g, sigma).is_ok()
    }
}

/// The Stochastic Bouncy Particle Sampler's settings, and pSBPS with
/// [`SbpsConfig::preconditioner`] (module docs): validated when made, they build one
/// [`SbpsChain`] per chain.
///
/// ```
/// use tallmc_core::{LogPrior, PdmpChain, PdmpKernel, TermGradients, Terms};
/// use tallmc_samplers::{Sbps, SbpsConfig};
///
/// /// ℓ_i(θ) = −(y_i − θ)²/2 for y_i = i/100 − 1 (i < 200), flat prior: π = N(−0.005, 1/200).
/// struct Toy;
/// fn y(i: u32) -> f64 { i as f64 / 100.0 - 1.0 }
/// impl Terms for Toy {
///     fn dim(&self) -> usize { 1 }
///     fn num_terms(&self) -> usize { 200 }
///     fn log_terms(&self, t: &[f64], idx: &[u32], out: &mut [f64]) {
///         for (o, &i) in out.iter_mut().zip(idx) { *o = -0.5 * (y(i) - t[0]).powi(2); }
///     }
/// }
/// impl TermGradients for Toy {
///     fn log_terms_grad_sum(&self, t: &[f64], idx: &[u32], out: &mut [f64], g: &mut [f64]) -> f64 {
///         self.log_terms(t, idx, out);
///         for &i in idx { g[0] += y(i) - t[0]; }
///         out.iter().sum()
///     }
///     fn log_terms_grads(&self, t: &[f64], idx: &[u32], out: &mut [f64], g: &mut [f64]) {
///         self.log_terms(t, idx, out);
///         for (gk, &i) in g.iter_mut().zip(idx) { *gk = y(i) - t[0]; }
///     }
/// }
/// impl LogPrior for Toy {
///     fn log_prior(&self, _: &[f64]) -> f64 { 0.0 }
///     fn log_prior_grad(&self, _: &[f64], _: &mut [f64]) -> f64 { 0.0 }
/// }
///
/// let kernel = Sbps::new(SbpsConfig { batch: 20, refresh_rate: 1.0, ..SbpsConfig::default() })?;
/// let mut rng = tallmc_core::rng::chain_rng(1, 0);
/// let mut chain = kernel.build_chain(&Toy, &[0.0], &mut rng)?;
/// // Time average of θ along the trajectory (each segment integrated exactly).
/// let (mut integral, mut evals, mut violations) = (0.0, 0, 0);
/// while chain.trajectory().time() < 200.0 {
///     let stats = chain.step(&Toy, &mut rng)?;
///     evals += stats.evals.gradients;
///     violations += stats.violations;
///     let s = chain.trajectory().last_segment();
///     integral += s.duration * (s.position[0] + 0.5 * s.velocity[0] * s.duration);
/// }
/// let mean = integral / chain.trajectory().time();
/// assert!((mean + 0.005).abs() < 0.05, "{mean}"); // posterior sd 0.07
/// assert_eq!(evals % 20, 0); // whole minibatches of n = 20
/// # let _ = violations;
/// # Ok::<(), tallmc_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Sbps {
    config: SbpsConfig,
}

impl Sbps {
    /// Settings checked by [`SbpsConfig::validate`].
    pub fn new(config: SbpsConfig) -> Result<Self> {
        config.validate()?;
        Ok(Self { config })
    }

    /// The settings.
    pub fn config(&self) -> &SbpsConfig {
        &self.config
    }
}

/// A running SBPS (or pSBPS) chain: the particle, its direction and observations, the
/// minibatch, the band and the preconditioner.
#[derive(Debug, Clone)]
pub struct SbpsChain {
    config: SbpsConfig,
    state: SbpsState,
    running: Running,
}

impl SbpsChain {
    /// The particle: position, velocity, time and last segment.
    pub fn trajectory(&self) -> &Trajectory {
        &self.state.trajectory
    }

    /// The chain's state: particle, direction and observations.
    pub fn state(&self) -> &SbpsState {
        &self.state
    }

    /// The installed preconditioner A (all ones for SBPS).
    pub fn scale(&self) -> &[f64] {
        &self.running.scale
    }

    /// The chord band γ of the last step (`None` before the first step): the piecewise-linear
    /// proposal rate, in the time τ since the step's start, on [0, H] with H the band's horizon
    /// (knots from [`ProposalBand::chords`]). The step started at the time of the last
    /// observation before it, so the band in time since the last velocity change is γ(t − t_last)
    /// for t ≥ t_last. Read-only, for figures and diagnostics (Pakman et al. 2017, Fig. 2).
    pub fn band(&self) -> Option<&PiecewiseLinearRate> {
        Some(&self.running.band).filter(|b| !b.knots().is_empty())
    }
}

/// The tuning of an [`SbpsChain`]: the settings the CSV comments repeat, and what adapted (the
/// preconditioner, the band horizon, the slope prior's mean).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SbpsTuning {
    /// Whether the chain is pSBPS (preconditioned).
    pub preconditioned: bool,
    /// Minibatch size n.
    pub batch: usize,
    /// Band multiple k.
    pub k: f64,
    /// Refreshment rate λ_ref.
    pub refresh_rate: f64,
    /// Prior variance of the regression slope.
    pub slope_prior_variance: f64,
    /// Fixed prior mean of the slope (`None`: the running mean of fitted slopes).
    pub slope_prior_fixed_mean: Option<f64>,
    /// The installed preconditioner A (pSBPS only).
    pub preconditioner: Option<Vec<f64>>,
    /// The band horizon H.
    pub band_horizon: f64,
    /// The slope prior's current mean.
    pub slope_prior_mean: f64,
}

impl Tuning for SbpsTuning {
    /// The settings line, the slope prior line, the preconditioner (pSBPS, 4 decimals) and the
    /// horizon with the slope prior's current mean.
    fn comment_lines(&self) -> Vec<String> {
        let mut lines = vec![
            format!(
                "{} batch n = {}, band multiple k = {}, refresh rate = {}",
                if self.preconditioned { "pSBPS" } else { "SBPS" },
                self.batch,
                self.k,
                self.refresh_rate
            ),
            format!(
                "slope prior variance = {}, mean = {}",
                self.slope_prior_variance,
                self.slope_prior_fixed_mean
                    .map_or("running mean of fitted slopes".into(), |m| m.to_string())
            ),
        ];
        if let Some(scale) = &self.preconditioner {
            let a: Vec<String> = scale.iter().map(|a| format!("{a:.4}")).collect();
            lines.push(format!("preconditioner A = [{}]", a.join(", ")));
        }
        lines.push(format!(
            "band horizon = {}, slope prior mean = {}",
            self.band_horizon, self.slope_prior_mean
        ));
        lines
    }
}

/// A zero-length segment ending in a divergence: the velocity is reversed and the observations
/// restart from the last one (at the current position), negated.
fn diverge(state: &mut SbpsState, stats: SegmentStats) -> SegmentStats {
    let stats = common::diverge(&mut state.trajectory, stats);
    state.direction.iter_mut().for_each(|v| *v = -*v);
    if let Some((_, g, sigma)) = state.observations.last() {
        state.observations.clear();
        // (−g, σ) is finite with σ > 0 because (g, σ) was accepted before.
        let _ = state.observations.push(0.0, -g, sigma);
    }
    stats
}

impl<M> PdmpKernel<M> for Sbps
where
    M: TermGradients + LogPrior + ?Sized,
{
    type Chain = SbpsChain;

    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<SbpsChain> {
        let (d, n) = (model.dim(), model.num_terms());
        check_position(position, d)?;
        check_batch("SBPS batch size n", self.config.batch, Some(n))?;
        let mut minibatch = Minibatch::new(n, self.config.batch, d)?;
        let pending = minibatch.evaluate(model, position, rng);
        if !minibatch.is_finite() {
            tallmc_core::error::check_finite(
                "minibatch gradient at the initial position",
                minibatch.gradient(),
            )?;
            return Err(Error::NonFiniteAtStart { what: "a per-datum gradient" });
        }
        let mut direction = vec![0.0; d];
        self.config.velocity.draw(rng, &mut direction);
        let preconditioner = match self.config.preconditioner {
            Some(cfg) => Some(DiagonalPreconditioner::new(cfg, d)?),
            None => None,
        };
        let mut running = Running {
            minibatch,
            y: vec![0.0; d],
            scaled_gradient: vec![0.0; d],
            scale: vec![1.0; d],
            band: PiecewiseLinearRate::new(),
            preconditioner,
            adapting: false,
            fresh: false,
            slopes: (0.0, 0),
            resets: (0.0, 0),
            pending,
        };
        let mut state = SbpsState {
            trajectory: Trajectory::new(position.to_vec(), direction.clone()),
            direction,
            observations: LocalRegression::new(),
        };
        running.set_velocity(&mut state);
        if !running.restart_observations(&mut state) {
            return Err(Error::NonFiniteAtStart { what: "the minibatch estimate of the rate" });
        }
        // Reserve the band's buffers now, so that `step` never allocates.
        for j in 0..=self.config.band.max_pieces {
            running.band.push(j as f64, 0.0)?;
        }
        running.band.clear();
        Ok(SbpsChain { config: self.config, state, running })
    }
}

impl<M> PdmpChain<M> for SbpsChain
where
    M: TermGradients + LogPrior + ?Sized,
{
    type Tuning = SbpsTuning;

    fn trajectory(&self) -> &Trajectory {
        &self.state.trajectory
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<SegmentStats> {
        let Self { config: cfg, state, running: r } = self;
        let cfg = *cfg;
        r.fresh = false;
        let mut stats =
            SegmentStats { evals: std::mem::take(&mut r.pending), ..SegmentStats::NONE };
        let Some((s0, _, sigma_last)) = state.observations.last() else {
            return Err(Error::Internal("SBPS state has no observation"));
        };
        // The band on [s0, s0 + H], from the regression of the observations.
        let mu = r.slope_prior_mean(&cfg.slope_prior);
        let posterior = state
            .observations
            .posterior(mu, cfg.slope_prior.variance)
            .ok_or(Error::Internal("SBPS state has no observation"))?;
        r.slopes.0 += posterior.slope;
        r.slopes.1 += 1;
        let band = ProposalBand::new(posterior, cfg.k, sigma_last);
        let horizon = r.horizon(&cfg.band);
        if band.chords(s0, horizon, &cfg.band, &mut r.band).is_err() {
            return Ok(diverge(state, stats));
        }
        // Earliest of: a chord arrival kept by stage one, the refreshment, the horizon.
        let tau_r = ConstantRate(cfg.refresh_rate).first_arrival(rng);
        let mut mass = 0.0;
        let (which, tau) = loop {
            mass += unit_exponential(rng);
            let tau_b = r.band.arrival_for(mass);
            let (which, tau) = earliest([tau_b, tau_r, horizon]).unwrap_or((2, horizon));
            if which != 0 {
                break (which, tau);
            }
            let u: f64 = rng.random();
            if u * r.band.rate(tau) < band.rate(s0 + tau) {
                break (0, tau);
            }
        };
        // One fresh minibatch at the end of the segment.
        {
            let t = &state.trajectory;
            for ((y, x), u) in r.y.iter_mut().zip(t.position()).zip(t.velocity()) {
                *y = x + tau * u;
            }
        }
        stats.evals += r.minibatch.evaluate(model, &r.y, rng);
        r.fresh = true;
        if !r.minibatch.is_finite() {
            return Ok(diverge(state, stats));
        }
        let (g, sigma) = r.minibatch.observe(state.trajectory.velocity());
        if !(g.is_finite() && sigma.is_finite()) {
            return Ok(diverge(state, stats));
        }
        state.trajectory.advance(tau);
        let s = s0 + tau;
        match which {
            0 => {
                stats.proposals = 1;
                let decision = thin(g, band.rate(s), rng);
                stats.ratio = decision.ratio;
                stats.violations = u64::from(decision.violation);
                if decision.accept {
                    for ((sg, a), gi) in
                        r.scaled_gradient.iter_mut().zip(&r.scale).zip(r.minibatch.gradient())
                    {
                        *sg = a * gi;
                    }
                    reflect(&mut state.direction, &r.scaled_gradient);
                    r.change_velocity(state, s, EventKind::Bounce);
                    stats.bounces = 1;
                } else {
                    // (g, σ) are finite and σ > 0 (floored): the push cannot fail.
                    let _ = state.observations.push(s, g, sigma);
                }
            }
            1 => {
                cfg.velocity.draw(rng, &mut state.direction);
                r.change_velocity(state, s, EventKind::Refresh);
                stats.refreshes = 1;
            }
            _ => {
                let _ = state.observations.push(s, g, sigma);
                state.trajectory.set_end(EventKind::Horizon);
            }
        }
        Ok(stats)
    }

    fn begin_warmup(&mut self) {
        self.running.adapting = self.running.preconditioner.is_some();
    }

    fn adapt<R: Rng + ?Sized>(
        &mut self, model: &M, stats: &SegmentStats, rng: &mut R,
    ) -> Result<()> {
        let _ = (model, rng);
        let Self { state, running: r, .. } = self;
        if !r.adapting || !r.fresh || stats.divergences > 0 {
            return Ok(());
        }
        let n = r.minibatch.population() as f64;
        if let Some(p) = r.preconditioner.as_mut() {
            p.update(r.minibatch.gradient(), 1.0 / n);
            if stats.bounces + stats.refreshes > 0 {
                p.write_scale(&mut r.scale);
                r.set_velocity(state);
                r.restart_observations(state);
            }
        }
        Ok(())
    }

    fn end_warmup(&mut self) {
        self.running.adapting = false;
    }

    fn tuning(&self) -> SbpsTuning {
        let (c, r) = (&self.config, &self.running);
        SbpsTuning {
            preconditioned: c.preconditioner.is_some(),
            batch: c.batch,
            k: c.k,
            refresh_rate: c.refresh_rate,
            slope_prior_variance: c.slope_prior.variance,
            slope_prior_fixed_mean: c.slope_prior.mean,
            preconditioner: c.preconditioner.map(|_| r.scale.clone()),
            band_horizon: r.horizon(&c.band),
            slope_prior_mean: r.slope_prior_mean(&c.slope_prior),
        }
    }
}
