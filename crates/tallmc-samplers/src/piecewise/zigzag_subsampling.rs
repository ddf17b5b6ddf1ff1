//! Zig-Zag with subsampling (ZZ-SS) and with control variates (ZZ-CV) (Bierkens, Fearnhead &
//! Roberts 2019, *Annals of Statistics* 47(3), §4), exact: one kernel, generic over the
//! estimator of the switching rates.
//!
//! **Process.** The velocity θ ∈ {−1, +1}^d; the particle moves on ξ(t) = ξ + θt and
//! coordinate i flips at rate λ_i. With the potential written as a mean over the data,
//!
//! ```text
//! U(ξ) = (1/N) Σ_{J<N} E^J(ξ),     E^J(ξ) = −log p(ξ) − N ℓ_J(ξ),
//! ```
//!
//! any unbiased estimator ∂_iÊ^J of ∂_iU (J uniform on 0..N) gives switching rates
//! λ_i(ξ, θ) = (1/N) Σ_J (θ_i ∂_iÊ^J(ξ))⁺ that satisfy λ_i(ξ, θ) − λ_i(ξ, F_iθ) = θ_i∂_iU(ξ)
//! (F_i flips coordinate i), which is all Zig-Zag needs to leave π(ξ)·Uniform({±1}^d)
//! invariant (Bierkens et al. 2019, Thm. 2.2 and §4). The rates are larger than the full-data
//! ones (θ_i∂_iU)⁺ by a symmetric excess: the process is still exact, but switches more often,
//! which slows mixing unless the estimator's spread is small. Two estimators
//! ([`SwitchingRateEstimator`]):
//!
//! * **ZZ-SS** ([`BoundedGradients`], [`LipschitzGradients`]): ∂_iÊ^J = ∂_iE^J.
//! * **ZZ-CV** ([`ControlVariates`]): ∂_iÊ^J(ξ) = ∂_iU(ξ*) + ∂_iE^J(ξ) − ∂_iE^J(ξ*) around a
//!   reference ξ* (the mode): the spread shrinks as ξ → ξ*.
//!
//! **Simulation** of each step (a thinning proposal):
//!
//! 1. for every coordinate, an affine bound θ_i∂_iÊ^J(ξ + θt) ≤ a_i + b_i t valid for *every*
//!    J and t ≥ 0 (the estimator's [`SwitchingRateEstimator::bounds`]), plus, if the estimator
//!    has one, a quadratic part c_i(r + st)² ([`SwitchingRateEstimator::quadratic_bounds`]);
//!    draw each affine clock's first arrival from [a_i + b_i t]⁺ and the remainder clock's from
//!    (Σ_i c_i)(r + st)², and take the earliest (i, τ) ([`earliest`](tallmc_integrators::earliest);
//!    a remainder arrival belongs to coordinate i with probability c_i / Σc);
//! 2. move to y = ξ + θτ, draw J (uniform, or as the estimator draws it:
//!    [`SwitchingRateEstimator::draw_datum`]), evaluate ∂_iÊ^J(y) (one datum);
//! 3. flip θ_i with probability (θ_i∂_iÊ^J(y))⁺/((a_i + b_iτ)⁺ + c_i(r + sτ)²) (thinning).
//!    Since the bound dominates the rate of every J, this realises the averaged rate λ_i
//!    exactly.
//!
//! After a rejected proposal the line is the same, so the bounds still hold from the new point
//! (shifted: a_i ← a_i + b_iτ) and, the clocks being independent Poisson processes, the other
//! clocks' arrival times stay valid (memorylessness): only the clock that fired draws again,
//! O(d) work instead of d new bounds and clocks. The remainder clock is redrawn from its
//! quadratic bound rebuilt at the new point (O(d); a clock's future may be redrawn from any
//! valid bound at any time). After a flip every bound is rebuilt.
//!
//! **Coordinates.** An estimator with a frame of its own ([`SwitchingRateEstimator::frame`],
//! θ = θ* + Lz) runs the process in z: ξ, θ ∈ {−1, +1}^d and the flips are in z, the
//! trajectory the chain reports is its image in θ (position θ* + Lz, velocity Lθ), and
//! [`EventKind::Flip`]`(i)` names the coordinate of z.
//!
//! A ratio above 1 means a model constant is wrong: [`Error::BoundViolation`], never a silently
//! biased run. A non-finite estimate is a divergence (zero-length segment, velocity reversed).
//!
//! **Bounds.** With κ the prior's curvature bound ([`LogPriorCurvature`]: row sums, hence also
//! row norms, of ∇²log p), |d/dt ∂_iU₀(ξ + θt)| ≤ κ and |∂_iU₀(y) − ∂_iU₀(z)| ≤ κ‖y − z‖₂
//! (U₀ = −log p):
//!
//! * ZZ-SS, bounded gradients (|∂_iℓ_J| ≤ B_i, [`TermGradientBounds`]):
//!   θ_i∂_iE^J(ξ + θt) = θ_i∂_iU₀(ξ + θt) − Nθ_i∂_iℓ_J(ξ + θt) ≤ θ_i∂_iU₀(ξ) + N B_i + κt,
//!   so a_i = θ_i∂_iU₀(ξ) + N B_i, b_i = κ. (Bierkens et al.'s M_i = N max_J |x_Ji| for
//!   logistic regression, with the prior term added; |·|, not the signed max of SBPS-public.)
//! * ZZ-SS, Lipschitz gradients (|∂_iℓ_J(y) − ∂_iℓ_J(z)| ≤ C_i‖y − z‖₂,
//!   [`TermGradientLipschitz`]), around ξ*: ∂_iE^J is (C^tot_i = N C_i + κ)-Lipschitz and
//!   ‖ξ + θt − ξ*‖ ≤ ‖ξ − ξ*‖ + √d t, so a_i = max_J θ_i∂_iE^J(ξ*) + C^tot_i‖ξ − ξ*‖₂ and
//!   b_i = C^tot_i√d (max_J over the signed values at ξ*, one set-up pass; ≤ max_J |·|).
//! * ZZ-CV: θ_i∂_iÊ^J(ξ + θt) ≤ θ_i∂_iU(ξ*) + C^tot_i‖ξ + θt − ξ*‖₂, so
//!   a_i = θ_i∂_iU(ξ*) + C^tot_i‖ξ − ξ*‖₂, b_i = C^tot_i√d (Bierkens et al. 2019, §4,
//!   with (θ_i∂_iU(ξ*))⁺ there; the signed value is also valid and never larger).
//!
//! **Cost per proposal.** O(d) for the d clocks, plus one datum: ZZ-SS one term and gradient,
//! ZZ-CV one term and gradient at ξ and one at ξ* (from the difference engine, which counts
//! them), plus the set-up passes (ZZ-CV: N terms and gradients at ξ* for Σ_J∇ℓ_J(ξ*); ZZ-SS
//! with Lipschitz gradients: the same pass for max_J). Proposals arrive at total rate
//! Σ_i(a_i + b_i t): for ZZ-SS that is O(N) per unit time, for ZZ-CV near ξ* it is
//! O(N‖ξ − ξ*‖) = O(√N) per unit time while the posterior's width — the time to cross it at
//! unit speed — is O(1/√N): O(1) per-datum evaluations per effective sample, independent of N
//! (super-efficiency, Bierkens et al. 2019, §5; see `docs/methods/zigzag.md`).
//!
//! [`TermGradientBounds`]: tallmc_core::TermGradientBounds
//! [`TermGradientLipschitz`]: tallmc_core::TermGradientLipschitz
//! [`ControlVariates`]: super::ControlVariates

use rand::{Rng, RngExt};
use serde::Serialize;
use tallmc_core::{
    Error, EvalCounts, EventKind, LogPriorCurvature, PdmpChain, PdmpKernel, Result, SegmentStats,
    TermGradientBounds, TermGradientLipschitz, TermGradients, Trajectory, Tuning,
};
use tallmc_estimators::SwitchingRateEstimator;
use tallmc_integrators::{AffineRate, Rate, SquaredAffineRate, earliest, thin};

use super::common::diverge;
use super::common::{all_finite, check_position, first_event};
use super::datum_bounds::{
    BoundedGradients, DatumScratch, LipschitzGradients, ReferenceGradients, checked_constant,
    checked_num_terms, distance, exceeds_with, point_on_line, prior_kappa,
};
use super::zigzag::draw_signs;

/// N·B_j for every coordinate, checked.
fn coordinate_constants<F: Fn(usize) -> f64>(
    name: &'static str, d: usize, f: F,
) -> Result<Vec<f64>> {
    (0..d).map(|j| checked_constant(name, Some(j), f(j))).collect()
}

impl<M: TermGradientBounds + TermGradients + LogPriorCurvature + ?Sized> SwitchingRateEstimator<M>
    for BoundedGradients
{
    fn prepare(&mut self, model: &M) -> Result<EvalCounts> {
        let d = model.dim();
        self.coordinate = coordinate_constants("coordinate gradient bound B_j", d, |j| {
            model.coordinate_gradient_bound(j)
        })?;
        self.kappa = prior_kappa(model)?;
        self.scratch = DatumScratch::new(d);
        Ok(EvalCounts::ZERO)
    }

    /// a_i = θ_i∂_iU₀(ξ) + N B_i, b_i = κ.
    fn bounds(&mut self, model: &M, xi: &[f64], theta: &[f64], a: &mut [f64], b: &mut [f64]) {
        let n = model.num_terms() as f64;
        self.scratch.prior_gradient(model, xi);
        for i in 0..theta.len() {
            a[i] = -theta[i] * self.scratch.prior[i] + n * self.coordinate[i];
            b[i] = self.kappa;
        }
    }

    /// ∂_iE^J(y) = −∂_i log p(y) − N ∂_iℓ_J(y): one term and gradient.
    fn estimate(&mut self, model: &M, y: &[f64], datum: u32, i: usize) -> (f64, EvalCounts) {
        subsampled_estimate(&mut self.scratch, model, y, datum, i)
    }

    fn describe(&self) -> String {
        "ZZ-SS with bounded per-datum gradients (a_i = θ_i∂_iU₀(ξ) + N·B_i, b_i = κ)".into()
    }
}

/// ∂_iE^J(y) = −∂_i log p(y) − N ∂_iℓ_J(y).
fn subsampled_estimate<M: TermGradients + LogPriorCurvature + ?Sized>(
    scratch: &mut DatumScratch, model: &M, y: &[f64], datum: u32, i: usize,
) -> (f64, EvalCounts) {
    let counts = scratch.datum_gradient(model, y, datum);
    scratch.prior_gradient(model, y);
    let n = model.num_terms() as f64;
    (-scratch.prior[i] - n * scratch.grad[i], counts)
}

impl<M: TermGradientLipschitz + TermGradients + LogPriorCurvature + ?Sized>
    SwitchingRateEstimator<M> for LipschitzGradients
{
    fn prepare(&mut self, model: &M) -> Result<EvalCounts> {
        let d = model.dim();
        self.kappa = prior_kappa(model)?;
        let n = model.num_terms() as f64;
        let kappa = self.kappa;
        self.coordinate =
            coordinate_constants("coordinate gradient Lipschitz constant C_j", d, |j| {
                model.coordinate_gradient_lipschitz(j)
            })?
            .into_iter()
            .map(|c| n * c + kappa)
            .collect();
        let (at, evals) = ReferenceGradients::compute(model, self.reference())?;
        self.at_reference = at;
        self.scratch = DatumScratch::new(d);
        Ok(evals)
    }

    /// a_i = max_J θ_i∂_iE^J(ξ*) + C^tot_i‖ξ − ξ*‖, b_i = C^tot_i√d.
    fn bounds(&mut self, model: &M, xi: &[f64], theta: &[f64], a: &mut [f64], b: &mut [f64]) {
        let n = model.num_terms() as f64;
        let r = distance(xi, self.reference());
        let root_d = (theta.len() as f64).sqrt();
        let at = &self.at_reference;
        for i in 0..theta.len() {
            // θ_i∂_iE^J(ξ*) = −θ_i∂_i log p(ξ*) − Nθ_i∂_iℓ_J(ξ*), largest at the extreme ∂_iℓ_J.
            let extreme = if theta[i] > 0.0 { at.coord_min[i] } else { at.coord_max[i] };
            let c = self.coordinate[i];
            a[i] = -theta[i] * (at.prior[i] + n * extreme) + c * r;
            b[i] = c * root_d;
        }
    }

    fn estimate(&mut self, model: &M, y: &[f64], datum: u32, i: usize) -> (f64, EvalCounts) {
        subsampled_estimate(&mut self.scratch, model, y, datum, i)
    }

    fn describe(&self) -> String {
        "ZZ-SS with Lipschitz per-datum gradients around ξ* (a_i = max_J θ_i∂_iE^J(ξ*) + \
         C^tot_i‖ξ − ξ*‖, b_i = C^tot_i√d)"
            .into()
    }
}

/// Scratch of a running chain, built once.
#[derive(Debug, Clone)]
struct Running {
    n: u32,
    y: Vec<f64>,
    a: Vec<f64>,
    b: Vec<f64>,
    /// c_i of a quadratic bound part (unused when the estimator has none).
    c: Vec<f64>,
    /// Σ_i c_i (0 without a quadratic part).
    c_total: f64,
    /// (r, s) of the quadratic part at the current point, `None` without one.
    quadratic: Option<(f64, f64)>,
    /// Time to each coordinate's next affine proposal, from the current point.
    times: Vec<f64>,
    /// Time to the next remainder proposal (∞ without one), from the current point.
    remainder_time: f64,
    /// Whether `a`, `b`, `quadratic` and the clock times hold at the current point: true after
    /// a rejected proposal (the line is the same), false after a flip or a divergence.
    clocks_valid: bool,
    /// The process in the estimator's coordinates, when it has a frame of its own.
    framed: Option<Framed>,
    pending: EvalCounts,
}

/// The particle in an estimator's frame z (θ = θ* + Lz): the trajectory in θ moves with
/// velocity Lv, this copy in z with v ∈ {−1, +1}^d.
#[derive(Debug, Clone)]
struct Framed {
    z: Vec<f64>,
    v: Vec<f64>,
    /// The proposal point in θ (y in z is `Running::y`).
    y_theta: Vec<f64>,
    /// Flips since the θ-velocity L v was last computed in full (between, each flip updates
    /// it by one column of L, O(d)).
    flips_since_full: u32,
}

/// Flips between two full computations of the θ-velocity L v in a frame (each O(d) update
/// in between adds a rounding error of order 10⁻¹⁶‖L‖).
const FULL_VELOCITY_EVERY: u32 = 32;

/// Zig-Zag with subsampling or control variates (module docs), as settings that build one
/// [`ZigZagSubsamplingChain`] per chain; generic over the switching-rate estimator `G`:
/// [`BoundedGradients`] (ZZ-SS, the default), [`LipschitzGradients`] (ZZ-SS around a reference
/// point) or [`ControlVariates`](super::ControlVariates) (ZZ-CV). Each chain prepares its own
/// copy of the estimator.
///
/// The chain's particle is a [`Trajectory`] (velocity in {−1, +1}^d).
///
/// ```
/// use tallmc_core::rng::chain_rng;
/// use tallmc_core::{PdmpChain, PdmpKernel};
/// use tallmc_models::{DesignOptions, LogisticRegression, synthetic};
/// use tallmc_samplers::{
///     ControlVariates, NewtonOptions, ZigZagSubsampling, laplace_approximation,
/// };
///
/// let data = synthetic::two_class_2d(10_000, 1)?.data;
/// let model = LogisticRegression::new(data, DesignOptions::default(), 10.0)?;
/// let laplace = laplace_approximation(&model, &[0.0, 0.0], NewtonOptions::default())?;
/// // ZZ-CV around the mode, started there (ZZ-SS would be `ZigZagSubsampling::new()`).
/// let cv = ControlVariates::rank_one(laplace.mode.clone())?;
/// let kernel = ZigZagSubsampling::with_estimator(cv);
/// let mut rng = chain_rng(7, 0);
/// let mut chain = kernel.build_chain(&model, &laplace.mode, &mut rng)?;
/// let (mut integral, mut evals, mut steps) = (0.0, 0, 0);
/// let horizon = 400.0 * laplace.sds()[0]; // a few hundred posterior sds of travel
/// while chain.trajectory().time() < horizon {
///     let stats = chain.step(&model, &mut rng)?;
///     evals += stats.evals.gradients;
///     steps += 1;
///     let seg = chain.trajectory().last_segment();
///     integral += seg.duration * (seg.position[0] + 0.5 * seg.duration * seg.velocity[0]);
/// }
/// assert!((integral / chain.trajectory().time() - laplace.mode[0]).abs() < 4.0 * laplace.sds()[0]);
/// // Set-up: N gradients at ξ*; then about two per proposal (at ξ and at ξ*).
/// assert!(evals <= 10_002 + 2 * steps);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ZigZagSubsampling<G = BoundedGradients> {
    estimator: G,
}

impl ZigZagSubsampling<BoundedGradients> {
    /// ZZ-SS for models with bounded per-datum gradients.
    pub fn new() -> Self {
        Self::with_estimator(BoundedGradients::new())
    }
}

impl Default for ZigZagSubsampling<BoundedGradients> {
    fn default() -> Self {
        Self::new()
    }
}

impl ZigZagSubsampling<LipschitzGradients> {
    /// ZZ-SS for models with Lipschitz per-datum gradients, bounded around `reference` (ξ*,
    /// the mode); errors on a non-finite ξ*.
    pub fn lipschitz(reference: Vec<f64>) -> Result<Self> {
        Ok(Self::with_estimator(LipschitzGradients::new(reference)?))
    }
}

impl<G> ZigZagSubsampling<G> {
    /// The kernel with the switching-rate estimator `estimator`.
    pub fn with_estimator(estimator: G) -> Self {
        Self { estimator }
    }

    /// The estimator as given (each chain prepares its own copy).
    pub fn estimator(&self) -> &G {
        &self.estimator
    }
}

/// A running ZZ-SS or ZZ-CV chain: the particle, the prepared estimator and scratch.
#[derive(Debug, Clone)]
pub struct ZigZagSubsamplingChain<G = BoundedGradients> {
    estimator: G,
    state: Trajectory,
    running: Running,
}

impl<G> ZigZagSubsamplingChain<G> {
    /// The particle: position, velocity, time and last segment.
    pub fn trajectory(&self) -> &Trajectory {
        &self.state
    }

    /// The estimator, with its constants (and, for ZZ-CV, the sums at ξ*).
    pub fn estimator(&self) -> &G {
        &self.estimator
    }
}

/// The tuning of a [`ZigZagSubsamplingChain`]: its switching-rate estimator.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ZigZagSubsamplingTuning {
    /// The estimator and its bounds ([`SwitchingRateEstimator::describe`]).
    pub switching_rates: String,
}

impl Tuning for ZigZagSubsamplingTuning {
    /// `Zig-Zag switching rates = …`.
    fn comment_lines(&self) -> Vec<String> {
        vec![format!("Zig-Zag switching rates = {}", self.switching_rates)]
    }
}

/// [`diverge`], with the velocity in the estimator's frame reversed too (−Lv = L(−v)).
fn diverge_framed(
    state: &mut Trajectory, framed: Option<&mut Framed>, stats: SegmentStats,
) -> SegmentStats {
    if let Some(f) = framed {
        f.v.iter_mut().for_each(|v| *v = -*v);
    }
    diverge(state, stats)
}

/// The first arrival of the remainder clocks c_i (r + s t)² together: one clock of rate
/// C(r + st)², C = Σ_i c_i (∞ when C = 0 or there is no quadratic part).
fn remainder_arrival<R: Rng + ?Sized>(
    total: f64, quadratic: Option<(f64, f64)>, rng: &mut R,
) -> f64 {
    match quadratic {
        Some((r, s)) if total > 0.0 => SquaredAffineRate { c: total, r, s }.first_arrival(rng),
        _ => f64::INFINITY,
    }
}

/// The coordinate a remainder proposal belongs to: i with probability c_i / C (Poisson
/// splitting of the summed clock). O(d).
fn remainder_coordinate<R: Rng + ?Sized>(c: &[f64], total: f64, rng: &mut R) -> usize {
    let mut u = rng.random::<f64>() * total;
    let last = c.iter().rposition(|&ci| ci > 0.0).unwrap_or(0);
    for (i, &ci) in c.iter().enumerate().take(last) {
        if u < ci {
            return i;
        }
        u -= ci;
    }
    last
}

impl Running {
    /// After a rejected proposal at time τ of clock `i` (or of the remainder clock): the line
    /// and its bounds are unchanged, so the other clocks' arrival times still hold — every
    /// Poisson clock's remaining time is shifted by τ (memorylessness), the bounds are moved to
    /// the new point (a_j ← a_j + b_jτ, r ← r + sτ, which still bound every rate ahead), and
    /// only the affine clock that fired draws its next arrival (the remainder clock is redrawn
    /// by the caller, from its rebuilt bound). O(d) with one random draw, instead of rebuilding
    /// d bounds and d clocks.
    fn after_rejection<R: Rng + ?Sized>(
        &mut self, i: usize, tau: f64, from_remainder: bool, rng: &mut R,
    ) {
        for ((t, a), &b) in self.times.iter_mut().zip(&mut self.a).zip(&self.b) {
            *t -= tau;
            *a += b * tau;
        }
        self.remainder_time -= tau;
        if let Some((r, s)) = &mut self.quadratic {
            *r += *s * tau;
        }
        if !from_remainder {
            self.times[i] = AffineRate { a: self.a[i], b: self.b[i] }.first_arrival(rng);
        }
    }
}

/// What makes one of a subsampling Zig-Zag clocks fire (in the error when none can).
const FIRES_WHEN: &str = "switching-rate bounds that rise along the line (is the target proper?)";

impl<M, G> PdmpKernel<M> for ZigZagSubsampling<G>
where
    M: TermGradients + ?Sized,
    G: SwitchingRateEstimator<M> + Clone + Send + Sync,
{
    type Chain = ZigZagSubsamplingChain<G>;

    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<ZigZagSubsamplingChain<G>> {
        let d = model.dim();
        check_position(position, d)?;
        let n = checked_num_terms(model)?;
        let mut estimator = self.estimator.clone();
        let pending = estimator.prepare(model)?;
        let mut velocity = vec![0.0; d];
        draw_signs(rng, &mut velocity);
        let (state, framed) = match estimator.frame() {
            None => (Trajectory::new(position.to_vec(), velocity), None),
            Some(frame) => {
                if frame.dim() != d {
                    return Err(Error::dimension("estimator's frame θ* + Lz", d, frame.dim()));
                }
                let mut z = vec![0.0; d];
                frame.to_coordinates(position, &mut z);
                let mut theta_velocity = vec![0.0; d];
                frame.direction_to_theta(&velocity, &mut theta_velocity);
                let framed = Framed { z, v: velocity, y_theta: vec![0.0; d], flips_since_full: 0 };
                (Trajectory::new(position.to_vec(), theta_velocity), Some(framed))
            }
        };
        Ok(ZigZagSubsamplingChain {
            estimator,
            state,
            running: Running {
                n,
                y: vec![0.0; d],
                a: vec![0.0; d],
                b: vec![0.0; d],
                c: vec![0.0; d],
                c_total: 0.0,
                quadratic: None,
                times: vec![0.0; d],
                remainder_time: f64::INFINITY,
                clocks_valid: false,
                framed,
                pending,
            },
        })
    }
}

impl<M, G> PdmpChain<M> for ZigZagSubsamplingChain<G>
where
    M: TermGradients + ?Sized,
    G: SwitchingRateEstimator<M> + Send,
{
    type Tuning = ZigZagSubsamplingTuning;

    fn trajectory(&self) -> &Trajectory {
        &self.state
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<SegmentStats> {
        let Self { estimator, state, running: r } = self;
        if !r.clocks_valid {
            let (xi, theta) = match &r.framed {
                Some(f) => (&f.z[..], &f.v[..]),
                None => (state.position(), state.velocity()),
            };
            estimator.bounds(model, xi, theta, &mut r.a, &mut r.b);
            r.quadratic = estimator.quadratic_bounds(model, xi, theta, &mut r.c);
            let quadratic_finite = r
                .quadratic
                .is_none_or(|(qr, qs)| all_finite(&r.c) && qr.is_finite() && qs.is_finite());
            if !(all_finite(&r.a) && all_finite(&r.b) && quadratic_finite) {
                // Numerical trouble at the current point (e.g. a non-finite prior gradient).
                let stats =
                    SegmentStats { evals: std::mem::take(&mut r.pending), ..SegmentStats::NONE };
                return Ok(diverge_framed(state, r.framed.as_mut(), stats));
            }
            for ((t, &a), &b) in r.times.iter_mut().zip(&r.a).zip(&r.b) {
                *t = AffineRate { a, b }.first_arrival(rng);
            }
            r.c_total = r.quadratic.map_or(0.0, |_| r.c.iter().sum());
            r.remainder_time = remainder_arrival(r.c_total, r.quadratic, rng);
            r.clocks_valid = true;
        }
        let affine = earliest(r.times.iter().copied());
        let (i, tau, from_remainder) = match affine {
            Some((i, t)) if t <= r.remainder_time => (i, t, false),
            _ if r.remainder_time.is_finite() => {
                (remainder_coordinate(&r.c, r.c_total, rng), r.remainder_time, true)
            }
            _ => {
                let (i, t) = first_event(std::iter::empty(), "Zig-Zag clocks", FIRES_WHEN)?;
                (i, t, false)
            }
        };
        let mut stats = SegmentStats {
            evals: std::mem::take(&mut r.pending),
            proposals: 1,
            ..SegmentStats::NONE
        };
        let extra = r.quadratic.map_or(0.0, |(qr, qs)| {
            let u = qr + qs * tau;
            r.c[i] * u * u
        });
        match &r.framed {
            Some(f) => point_on_line(&f.z, &f.v, tau, &mut r.y),
            None => point_on_line(state.position(), state.velocity(), tau, &mut r.y),
        }
        let datum = estimator.draw_datum(r.n, i, rng);
        let (g, evals) = match &mut r.framed {
            Some(f) => {
                point_on_line(state.position(), state.velocity(), tau, &mut f.y_theta);
                estimator.estimate_at(model, &r.y, &f.y_theta, datum, i)
            }
            None => estimator.estimate_at(model, &r.y, &r.y, datum, i),
        };
        stats.evals += evals;
        if !g.is_finite() {
            r.clocks_valid = false;
            return Ok(diverge_framed(state, r.framed.as_mut(), stats));
        }
        let sign = match &r.framed {
            Some(f) => f.v[i],
            None => state.velocity()[i],
        };
        let rate = sign * g;
        let (a, b) = (r.a[i], r.b[i]);
        let decision = thin(rate, (a + b * tau).max(0.0) + extra, rng);
        stats.ratio = decision.ratio;
        if exceeds_with(rate, a, b, tau, extra) {
            return Err(Error::BoundViolation {
                what: format!(
                    "switching-rate bound of coordinate {} ({})",
                    i + 1,
                    estimator.describe()
                ),
                ratio: decision.ratio,
                time: state.time() + tau,
            });
        }
        state.advance(tau);
        if let Some(f) = &mut r.framed {
            f.z.copy_from_slice(&r.y);
        }
        if decision.accept {
            match (&mut r.framed, estimator.frame()) {
                (Some(f), Some(frame)) => {
                    let before = f.v[i];
                    f.v[i] = -before;
                    if f.flips_since_full < FULL_VELOCITY_EVERY {
                        frame.add_column_to_direction(i, -2.0 * before, state.velocity_mut());
                        f.flips_since_full += 1;
                    } else {
                        frame.direction_to_theta(&f.v, state.velocity_mut());
                        f.flips_since_full = 0;
                    }
                }
                _ => {
                    let v = state.velocity_mut();
                    v[i] = -v[i];
                }
            }
            state.set_end(EventKind::Flip(i as u32));
            stats.bounces = 1;
            // The line changed: every bound is rebuilt at the next step.
            r.clocks_valid = false;
        } else {
            r.after_rejection(i, tau, from_remainder, rng);
            if r.quadratic.is_some() {
                // The remainder's bound is rebuilt at the new point (r is ‖ξ − ξ*‖-like, tighter
                // than the shifted r + sτ) and its clock redrawn: a clock's future may be
                // redrawn from any valid bound at any time.
                let (xi, theta) = match &r.framed {
                    Some(f) => (&f.z[..], &f.v[..]),
                    None => (state.position(), state.velocity()),
                };
                r.quadratic = estimator.quadratic_bounds(model, xi, theta, &mut r.c);
                r.c_total = r.quadratic.map_or(0.0, |_| r.c.iter().sum());
                r.remainder_time = remainder_arrival(r.c_total, r.quadratic, rng);
            }
        }
        Ok(stats)
    }

    fn tuning(&self) -> ZigZagSubsamplingTuning {
        ZigZagSubsamplingTuning { switching_rates: self.estimator.describe() }
    }
}
