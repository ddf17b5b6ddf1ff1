//! lipSBPS: the Bouncy Particle Sampler with one factor per datum, thinned against an exact
//! per-datum bound (Pakman, Gilboa, Carlson & Paninski 2017, §7.1 and Supp. F; the same process
//! as Local BPS on this factor graph, Bouchard-Côté, Vollmer & Doucet 2018, §3). Exact.
//!
//! **Process.** The potential is split into factors,
//!
//! ```text
//! U(x) = U₀(x) + Σ_{J<N} U_J(x),     U₀ = −log p (the prior),  U_J = −ℓ_J,
//! ```
//!
//! and each factor f has its own bounce clock of rate λ_f(t) = ⟨∇U_f(x + vt), v⟩⁺; when it
//! fires the velocity is reflected off that factor's gradient, v ← v − 2⟨∇U_f, v⟩∇U_f/‖∇U_f‖².
//! Each factor's reflection preserves a rotation-invariant velocity law and reverses ⟨∇U_f, v⟩,
//! so the factor process leaves π(x)ψ(v) invariant (Bouchard-Côté et al. 2018, Prop. 1 applied
//! factor by factor); refreshment at rate λ_ref makes it ergodic. Unlike the authors' code, the
//! prior is a factor of its own (REFERENCES §5): without it the sampler targets the likelihood.
//!
//! **Clocks**, superposed with [`earliest`](tallmc_integrators::earliest) (independent Poisson
//! processes; the one that fired first is the event):
//!
//! * *data*: the N datum clocks together. With a per-datum bound
//!   sup_J |⟨∇U_J(x + vt), v⟩| ≤ a + bt from a [`DatumRateBound`], the superposition is
//!   dominated by N(a + bt): propose from that rate, pick J uniform on 0..N (which of the N
//!   dominating clocks fired), and keep the proposal with probability ⟨∇U_J(y), v⟩⁺/(a + bτ) —
//!   thinning of each factor's clock, one per-datum gradient per proposal. Accepted: reflect off
//!   ∇U_J(y). The bound comes from
//!   - [`BoundedGradients`]: a = B(v) ([`TermGradientBounds::directional_gradient_bound`]),
//!     b = 0 — the constant rate N·B(v) of the paper (logistic: B(v) ≤ ‖v‖₂ max_i ‖x_i‖₂);
//!   - [`LipschitzGradients`] around x* (for models with unbounded, Lipschitz gradients):
//!     |⟨∇U_J(x + vt), v⟩| ≤ ‖v‖(G* + C(‖x − x*‖ + ‖v‖t)), G* = max_J ‖∇ℓ_J(x*)‖, C from
//!     [`TermGradientLipschitz::gradient_lipschitz`]: a = ‖v‖(G* + C‖x − x*‖), b = C‖v‖².
//! * *prior*: d/dt⟨∇U₀(x + vt), v⟩ = vᵀ∇²U₀v ≤ κ‖v‖² ([`LogPriorCurvature`]), so
//!   λ₀(t) ≤ [⟨∇U₀(x), v⟩ + κ‖v‖²t]⁺: thinning with an O(d) prior gradient. When the prior
//!   Hessian is constant (Gaussian or flat priors) λ₀(t) = [⟨∇U₀(x), v⟩ + t vᵀ(−∇²log p)v]⁺
//!   *exactly*, and its first arrival is the bounce (no thinning).
//! * *refreshment* at rate λ_ref: v is redrawn from [`VelocityDistribution`].
//!
//! Every step redraws all three clocks from the current point (memorylessness: a proposal that
//! was rejected leaves the process at a new point from which fresh dominating rates are valid).
//!
//! **Exactness.** The bounds hold for every datum and every t ≥ 0 by construction, so thinning
//! is exact (Lewis & Shedler 1979). A ratio rate/bound above 1 means the model's constant is
//! wrong: the step returns [`Error::BoundViolation`], never a silently biased trajectory.
//!
//! **Cost per event.** One per-datum term and gradient per data proposal (proposals arrive at
//! rate N(a + bt)); prior proposals and refreshments touch no datum; O(d) arithmetic per step,
//! plus the O(d²) prior slope vᵀ(−∇²log p)v and data rate when the velocity has changed.
//! [`LipschitzGradients`] adds one set-up pass (N terms and gradients at x*). The acceptance rate
//! of data proposals is ⟨∇U_J, v⟩⁺/B(v) — typically small, which is why lipSBPS mixes slowly
//! (Pakman et al. 2017, Fig. 4): each datum's bounce randomizes the velocity as if by a noisy
//! gradient of size N·|⟨∇U_J, v⟩|, and the trajectory becomes diffusive.
//!
//! **Divergences.** A non-finite per-datum or prior gradient at a proposal ends a zero-length
//! segment as [`EventKind::Divergence`] (velocity reversed), as in [`Bps`](super::Bps).
//!
//! [`TermGradientBounds::directional_gradient_bound`]: tallmc_core::TermGradientBounds::directional_gradient_bound
//! [`TermGradientLipschitz::gradient_lipschitz`]: tallmc_core::TermGradientLipschitz::gradient_lipschitz

use rand::Rng;
use serde::Serialize;
use tallmc_core::{
    Error, EvalCounts, EventKind, LogPrior, LogPriorCurvature, LogPriorHessian, PdmpChain,
    PdmpKernel, Result, SegmentStats, TermGradientBounds, TermGradientLipschitz, TermGradients,
    Trajectory, Tuning,
};
use tallmc_estimators::DatumRateBound;
use tallmc_integrators::{AffineRate, ConstantRate, Rate, thin};

use super::common::diverge;
use super::common::{
    VelocityDistribution, VelocityKey, all_finite, check_position, check_refresh_rate, dot,
    first_event,
};
use super::datum_bounds::{
    BoundedGradients, DatumScratch, LipschitzGradients, ReferenceGradients, checked_constant,
    checked_num_terms, distance, exceeds, point_on_line, prior_kappa,
};

/// Settings of [`LipSbps`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LipSbpsConfig {
    /// Refreshment rate λ_ref ≥ 0.
    pub refresh_rate: f64,
    /// Reference distribution of the velocity.
    pub velocity: VelocityDistribution,
}

impl Default for LipSbpsConfig {
    /// λ_ref = 1, velocities uniform on the unit sphere (as in Pakman et al. 2017).
    fn default() -> Self {
        Self { refresh_rate: 1.0, velocity: VelocityDistribution::Sphere }
    }
}

impl LipSbpsConfig {
    /// Checks λ_ref finite and ≥ 0.
    pub fn validate(&self) -> Result<()> {
        check_refresh_rate(self.refresh_rate)
    }
}

impl<M: TermGradientBounds + ?Sized> DatumRateBound<M> for BoundedGradients {
    /// a = B(v), b = 0.
    fn datum_bound(&self, model: &M, _x: &[f64], v: &[f64]) -> (f64, f64) {
        (model.directional_gradient_bound(v), 0.0)
    }

    fn describe(&self) -> String {
        "bounded per-datum gradients: N·B(v)".into()
    }
}

impl<M: TermGradientLipschitz + TermGradients + LogPrior + ?Sized> DatumRateBound<M>
    for LipschitzGradients
{
    fn prepare(&mut self, model: &M) -> Result<EvalCounts> {
        self.lipschitz =
            checked_constant("gradient Lipschitz constant C", None, model.gradient_lipschitz())?;
        let (at, evals) = ReferenceGradients::compute(model, self.reference())?;
        self.at_reference = at;
        Ok(evals)
    }

    /// a = ‖v‖(G* + C‖x − x*‖), b = C‖v‖².
    fn datum_bound(&self, _model: &M, x: &[f64], v: &[f64]) -> (f64, f64) {
        let speed = dot(v, v).sqrt();
        let c = self.lipschitz;
        let r = distance(x, self.reference());
        (speed * (self.at_reference.max_norm + c * r), c * speed * speed)
    }

    fn describe(&self) -> String {
        format!(
            "Lipschitz per-datum gradients around x*: N·‖v‖(G* + C(‖x − x*‖ + ‖v‖t)), G* = {}, C = {}",
            self.at_reference.max_norm, self.lipschitz
        )
    }
}

/// Scratch of a running chain, built once.
#[derive(Debug, Clone)]
struct Running {
    n: u32,
    kappa: f64,
    /// −∇²log p when it is constant (exact prior clock), d × d.
    prior_hessian: Option<Vec<f64>>,
    y: Vec<f64>,
    datum: DatumScratch,
    hv: Vec<f64>,
    /// The prior clock's slope vᵀ(−∇²log p)v and the velocity it was computed for: the
    /// velocity changes only at bounces and refreshments (a few steps in a hundred), so the
    /// O(d²) product is redone only then, with the same bits.
    slope: f64,
    slope_velocity: VelocityKey,
    pending: EvalCounts,
}

/// lipSBPS settings (module docs): validated when made, they build one [`LipSbpsChain`] per
/// chain. `B` is the per-datum bound: [`BoundedGradients`] (default) or [`LipschitzGradients`].
///
/// ```
/// use tallmc_core::rng::chain_rng;
/// use tallmc_core::{PdmpChain, PdmpKernel};
/// use tallmc_models::{DesignOptions, LogisticRegression, synthetic};
/// use tallmc_samplers::{LipSbps, LipSbpsConfig, NewtonOptions, laplace_approximation};
///
/// // Logistic regression, N = 1000, bounded per-datum gradients.
/// let data = synthetic::two_class_2d(1_000, 1)?.data;
/// let model = LogisticRegression::new(data, DesignOptions::default(), 10.0)?;
/// let laplace = laplace_approximation(&model, &[0.0, 0.0], NewtonOptions::default())?;
/// let kernel = LipSbps::new(LipSbpsConfig::default())?;
/// let mut rng = chain_rng(7, 0);
/// let mut chain = kernel.build_chain(&model, &laplace.mode, &mut rng)?;
/// // Continuous-time average of θ₁ over T = 50, integrating each segment exactly.
/// let (mut integral, mut gradients) = (0.0, 0);
/// while chain.trajectory().time() < 50.0 {
///     let stats = chain.step(&model, &mut rng)?;
///     gradients += stats.evals.gradients;
///     let seg = chain.trajectory().last_segment();
///     integral += seg.duration * (seg.position[0] + 0.5 * seg.duration * seg.velocity[0]);
/// }
/// let mean = integral / chain.trajectory().time();
/// assert!((mean - laplace.mode[0]).abs() < 4.0 * laplace.sds()[0]);
/// // One per-datum gradient per data proposal (none for prior proposals and refreshments).
/// assert!(gradients > 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct LipSbps<B = BoundedGradients> {
    config: LipSbpsConfig,
    bound: B,
}

impl LipSbps<BoundedGradients> {
    /// lipSBPS for models with bounded per-datum gradients.
    pub fn new(config: LipSbpsConfig) -> Result<Self> {
        Self::with_bound(config, BoundedGradients::new())
    }
}

impl LipSbps<LipschitzGradients> {
    /// lipSBPS for models with Lipschitz per-datum gradients, around `reference` (x*, the
    /// mode); errors on a non-finite x* or invalid settings.
    pub fn lipschitz(config: LipSbpsConfig, reference: Vec<f64>) -> Result<Self> {
        Self::with_bound(config, LipschitzGradients::new(reference)?)
    }
}

impl<B> LipSbps<B> {
    /// lipSBPS with the per-datum bound `bound`; errors on invalid settings.
    pub fn with_bound(config: LipSbpsConfig, bound: B) -> Result<Self> {
        config.validate()?;
        Ok(Self { config, bound })
    }

    /// The settings.
    pub fn config(&self) -> &LipSbpsConfig {
        &self.config
    }

    /// The per-datum bound as given (each chain prepares its own copy).
    pub fn bound(&self) -> &B {
        &self.bound
    }
}

/// A running lipSBPS chain: the particle, the per-datum bound with the model's constants, and
/// scratch.
#[derive(Debug, Clone)]
pub struct LipSbpsChain<B = BoundedGradients> {
    config: LipSbpsConfig,
    bound: B,
    state: Trajectory,
    running: Running,
}

impl<B> LipSbpsChain<B> {
    /// The particle: position, velocity, time and last segment.
    pub fn trajectory(&self) -> &Trajectory {
        &self.state
    }

    /// The per-datum bound, with the model's constants.
    pub fn bound(&self) -> &B {
        &self.bound
    }
}

/// The tuning of a [`LipSbpsChain`]: its clocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LipSbpsTuning {
    /// Refreshment rate λ_ref.
    pub refresh_rate: f64,
    /// The data clock's bound ([`DatumRateBound::describe`]).
    pub data_clock: String,
    /// Whether the prior clock is inverted exactly (constant prior Hessian) rather than thinned
    /// against κ‖v‖².
    pub exact_prior_clock: bool,
}

impl Tuning for LipSbpsTuning {
    /// `lipSBPS refresh rate = …`, `data clock = …`, `prior clock = …`.
    fn comment_lines(&self) -> Vec<String> {
        let prior = if self.exact_prior_clock {
            "exact inversion (constant prior Hessian)"
        } else {
            "thinning against κ‖v‖²"
        };
        vec![
            format!("lipSBPS refresh rate = {}", self.refresh_rate),
            format!("data clock = {}", self.data_clock),
            format!("prior clock = {prior}"),
        ]
    }
}

/// What makes one of the lipSBPS clocks fire (in the error when none can).
const FIRES_WHEN: &str =
    "a per-datum bound or prior that rises along the line, or a refresh rate > 0";

impl<M, B> PdmpKernel<M> for LipSbps<B>
where
    M: TermGradients + LogPriorCurvature + LogPriorHessian + ?Sized,
    B: DatumRateBound<M> + Clone + Send + Sync,
{
    type Chain = LipSbpsChain<B>;

    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<LipSbpsChain<B>> {
        let d = model.dim();
        check_position(position, d)?;
        let n = checked_num_terms(model)?;
        let kappa = prior_kappa(model)?;
        let mut bound = self.bound.clone();
        let pending = bound.prepare(model)?;
        let prior_hessian = if model.prior_hessian_is_constant() {
            let mut h = vec![0.0; d * d];
            model.add_log_prior_hessian(position, &mut h);
            h.iter_mut().for_each(|x| *x = -*x);
            tallmc_core::error::check_finite("prior Hessian", &h)?;
            Some(h)
        } else {
            None
        };
        let mut datum = DatumScratch::new(d);
        datum.prior_gradient(model, position);
        tallmc_core::error::check_finite("prior gradient at the initial position", &datum.prior)?;
        let mut velocity = vec![0.0; d];
        self.config.velocity.draw(rng, &mut velocity);
        Ok(LipSbpsChain {
            config: self.config,
            bound,
            state: Trajectory::new(position.to_vec(), velocity),
            running: Running {
                n,
                kappa,
                prior_hessian,
                y: vec![0.0; d],
                datum,
                hv: vec![0.0; d],
                slope: 0.0,
                slope_velocity: VelocityKey::default(),
                pending,
            },
        })
    }
}

impl<M, B> PdmpChain<M> for LipSbpsChain<B>
where
    M: TermGradients + LogPriorCurvature + LogPriorHessian + ?Sized,
    B: DatumRateBound<M> + Send,
{
    type Tuning = LipSbpsTuning;

    fn trajectory(&self) -> &Trajectory {
        &self.state
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<SegmentStats> {
        let Self { config, bound, state, running: r } = self;
        let (x, v) = (state.position(), state.velocity());
        // Data clock: Σ_J (a_J + b_J t), N·(a + bt) for a uniform bound.
        let (a, b) = bound.data_rate(model, x, v, r.n);
        if !(a.is_finite() && a >= 0.0 && b.is_finite() && b >= 0.0) {
            return Err(Error::invalid(
                "data rate bound (A, B) of lipSBPS",
                format!("({a}, {b}) for the velocity {v:?}"),
                "finite numbers >= 0 (check the model's gradient bounds)",
            ));
        }
        let tau_d = AffineRate { a, b }.first_arrival(rng);
        // Prior clock: [⟨∇U₀(x), v⟩ + b₀t]⁺.
        r.datum.prior_gradient(model, x);
        let a0 = -dot(&r.datum.prior, v);
        if !a0.is_finite() {
            let stats =
                SegmentStats { evals: std::mem::take(&mut r.pending), ..SegmentStats::NONE };
            return Ok(diverge(state, stats));
        }
        let b0 = match &r.prior_hessian {
            Some(h) => {
                if r.slope_velocity.changed(v) {
                    let d = v.len();
                    for (j, o) in r.hv.iter_mut().enumerate() {
                        *o = dot(&h[j * d..(j + 1) * d], v);
                    }
                    r.slope = dot(v, &r.hv);
                }
                r.slope
            }
            None => r.kappa * dot(v, v),
        };
        let tau_p = AffineRate { a: a0, b: b0 }.first_arrival(rng);
        let tau_r = ConstantRate(config.refresh_rate).first_arrival(rng);
        let (which, tau) = first_event([tau_d, tau_p, tau_r], "lipSBPS clocks", FIRES_WHEN)?;
        let mut stats =
            SegmentStats { evals: std::mem::take(&mut r.pending), ..SegmentStats::NONE };
        if which == 2 {
            state.advance(tau);
            config.velocity.draw(rng, state.velocity_mut());
            state.set_end(EventKind::Refresh);
            stats.refreshes = 1;
            return Ok(stats);
        }
        point_on_line(x, v, tau, &mut r.y);
        stats.proposals = 1;
        let (rate, bound_a, bound_b, exact, what) = if which == 0 {
            let (datum, (a, b)) = bound.draw_datum(model, x, v, tau, r.n, (a, b), rng);
            stats.evals += r.datum.datum_gradient(model, &r.y, datum);
            if !all_finite(&r.datum.grad) {
                return Ok(diverge(state, stats));
            }
            // U_J = −ℓ_J: reflect off ∇ℓ_J (the sign does not matter for a reflection).
            (-dot(&r.datum.grad, v), a, b, false, "per-datum gradient bound of lipSBPS")
        } else {
            r.datum.prior_gradient(model, &r.y);
            if !all_finite(&r.datum.prior) {
                return Ok(diverge(state, stats));
            }
            r.datum.grad.copy_from_slice(&r.datum.prior);
            let exact = r.prior_hessian.is_some();
            (-dot(&r.datum.prior, v), a0, b0, exact, "prior curvature bound of lipSBPS")
        };
        let accept = if exact {
            // The prior rate is exactly affine: its first arrival is the bounce.
            stats.ratio = 1.0;
            true
        } else {
            let bound = bound_a + bound_b * tau;
            let decision = thin(rate, bound.max(0.0), rng);
            stats.ratio = decision.ratio;
            if exceeds(rate, bound_a, bound_b, tau) {
                return Err(Error::BoundViolation {
                    what: what.into(),
                    ratio: decision.ratio,
                    time: state.time() + tau,
                });
            }
            decision.accept
        };
        state.advance(tau);
        if accept {
            super::common::reflect(state.velocity_mut(), &r.datum.grad);
            state.set_end(EventKind::Bounce);
            stats.bounces = 1;
        }
        Ok(stats)
    }

    fn tuning(&self) -> LipSbpsTuning {
        LipSbpsTuning {
            refresh_rate: self.config.refresh_rate,
            data_clock: self.bound.describe(),
            exact_prior_clock: self.running.prior_hessian.is_some(),
        }
    }
}
