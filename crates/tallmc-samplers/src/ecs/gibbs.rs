//! The HMC-within-Gibbs sweep and the warmup re-centring shared by perturbed
//! ([`HmcEcs`](crate::HmcEcs), [`HmcEcsWithEstimator`](crate::HmcEcsWithEstimator)) and signed
//! ([`SignedHmcEcs`](crate::SignedHmcEcs)) HMC-ECS.
//!
//! The kernels differ only in the estimator of the log-likelihood (the perturbed difference
//! estimator ℓ̂ − σ̂²/2 on G blocks, or log|L̂_B| of the block-Poisson estimator on λ factors),
//! its subsample u and what an estimate records. [`EcsEstimator`], [`EcsEstimate`] and
//! [`GibbsSubsample`] name those differences (public, so that a user crate can bring its own
//! estimator); [`gibbs_sweep`] (u-step, then θ-step with u fixed) and [`recenter`] are written
//! once over them, and one kernel ([`EcsKernel`](crate::EcsKernel)) runs them.

use rand::{Rng, RngExt};
use tallmc_core::subsample::BlockSubsample;
use tallmc_core::{EvalCounts, LogPrior, LogPriorHessian, Result, TermHessians};
use tallmc_estimators::{
    BlockPoissonEstimate, BlockPoissonEstimator, BlockPoissonSubsample, ControlVariate,
    DifferenceEstimate, DifferenceEstimator, DifferenceTerms,
};
use tallmc_integrators::PhasePoint;

use super::perturbed::laplace_covariance;
use super::theta::Dynamics;

/// The auxiliary random numbers u of HMC-ECS (a subsample of data indices), with the law p(u)
/// they are drawn from and the partial refresh of the u-step.
///
/// HMC-ECS targets π̄(θ, u) ∝ exp(ℓ̃(θ; u)) p(θ) p(u) (ℓ̃ the estimator's log-target, see
/// [`EcsEstimator`]). [`GibbsSubsample::draw`] draws u ~ p(u) afresh (at initialization);
/// the u-step proposes u′ by [`GibbsSubsample::propose`], a move that must leave p(u) invariant
/// and be symmetric (redrawing one of G blocks from its marginal does both; successive
/// estimates then have correlation ≈ 1 − 1/G), and the kernel accepts it with
/// min{1, exp(ℓ̃(θ; u′) − ℓ̃(θ; u))} — the prior and p(u) cancel. A rejected proposal is undone
/// by [`GibbsSubsample::reject`], so that no step allocates.
///
/// Implemented by [`BlockSubsample`] (m indices uniform with replacement in G blocks, perturbed
/// HMC-ECS) and [`BlockPoissonSubsample`] (signed HMC-ECS); a stratified subsample of your own
/// is the `user_estimator` example of the `tallmc` crate.
pub trait GibbsSubsample {
    /// Draws all of u afresh from p(u) (initialization).
    fn draw<R: Rng + ?Sized>(&mut self, rng: &mut R);
    /// Proposes u′ by refreshing part of u (one block, or κ factors).
    fn propose<R: Rng + ?Sized>(&mut self, rng: &mut R);
    /// Keeps u′.
    fn accept(&mut self);
    /// Goes back to u.
    fn reject(&mut self);
    /// Number of data indices in u (the batch size the kernel reports).
    fn batch_size(&self) -> usize;
}

impl GibbsSubsample for BlockSubsample {
    fn draw<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        self.draw_all(rng);
    }
    fn propose<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        self.propose_refresh(rng);
    }
    fn accept(&mut self) {
        BlockSubsample::accept(self);
    }
    fn reject(&mut self) {
        BlockSubsample::reject(self);
    }
    fn batch_size(&self) -> usize {
        self.indices().len()
    }
}

impl GibbsSubsample for BlockPoissonSubsample {
    fn draw<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        self.draw_all(rng);
    }
    fn propose<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        self.propose_refresh(rng);
    }
    fn accept(&mut self) {
        BlockPoissonSubsample::accept(self);
    }
    fn reject(&mut self) {
        BlockPoissonSubsample::reject(self);
    }
    fn batch_size(&self) -> usize {
        self.total_blocks() * self.block_size()
    }
}

/// What one evaluation of an [`EcsEstimator`] records.
pub trait EcsEstimate: Copy {
    /// The log-likelihood part ℓ̃(θ; u) of the extended target: ℓ̂ − σ̂²/2 for perturbed
    /// HMC-ECS ([`DifferenceEstimate::perturbed`]), log|L̂_B| for signed HMC-ECS.
    fn log_target(&self) -> f64;
    /// The per-datum evaluations (terms, gradients, Hessians) this evaluation made.
    fn counts(&self) -> EvalCounts;
}

impl EcsEstimate for DifferenceEstimate {
    fn log_target(&self) -> f64 {
        self.perturbed()
    }
    fn counts(&self) -> EvalCounts {
        self.counts
    }
}

impl EcsEstimate for BlockPoissonEstimate {
    fn log_target(&self) -> f64 {
        self.log_abs_likelihood
    }
    fn counts(&self) -> EvalCounts {
        self.counts
    }
}

/// The log-likelihood estimator of an HMC-ECS kernel, with its subsample and estimate types.
///
/// **Contract.** For the model's log-likelihood ℓ(θ) = Σ_{i<N} ℓ_i(θ) and a subsample u drawn
/// by [`Self::Subsample`](EcsEstimator::Subsample) (see [`GibbsSubsample`]),
/// [`EcsEstimator::estimate_log_target`] returns an estimate whose
/// [`log_target`](EcsEstimate::log_target) ℓ̃(θ; u) defines the extended target
///
/// ```text
/// π̄(θ, u) ∝ exp(ℓ̃(θ; u)) p(θ) p(u),
/// ```
///
/// and **overwrites** `grad` with ∇_θ ℓ̃(θ; u), the exact gradient at the fixed u (the θ-step
/// is HMC on U(θ) = −ℓ̃(θ; u) − log p(θ); the kernel adds the prior). For perturbed HMC-ECS
/// ([`HmcEcs`](crate::HmcEcs), [`HmcEcsWithEstimator`](crate::HmcEcsWithEstimator)) the
/// estimate is a [`DifferenceEstimate`] and
///
/// * ℓ̂(θ; u) (`log_likelihood`) must be an unbiased estimator of ℓ(θ) over u ~ p(u);
/// * σ̂²(θ; u) (`variance`) an estimate of V_u[ℓ̂(θ; u)];
/// * ℓ̃ = ℓ̂ − σ̂²/2, so exp(ℓ̃) is the bias-corrected likelihood estimator of Dang et al.
///   (2019, eq. 3.4), approximately unbiased for L(θ) when ℓ̂ is near Gaussian; the chain's
///   θ-marginal is the perturbed posterior ∝ E_u[exp(ℓ̂ − σ̂²/2)] p(θ), close to π when σ̂² is
///   O(1) (the smaller V[ℓ̂], the closer);
/// * the gradient is ∇ℓ̂ − ½∇σ̂² at the fixed u.
///
/// The u-step and the θ-step both leave π̄ invariant exactly, whatever the estimator; how
/// close the θ-marginal is to π is the estimator's business.
///
/// **Counting.** [`EcsEstimate::counts`] must report every per-datum evaluation the call made
/// (ℓ_i, ∇ℓ_i, ∇²ℓ_i, including control variates q_i evaluated at θ*), so that the kernels'
/// stats and the driver's cost figures are measured, not guessed.
///
/// **Control variate.** The estimator owns a Taylor [`ControlVariate`] around θ*; during warmup
/// the kernel re-centres it ([`ControlVariate::recenter`] through
/// [`EcsEstimator::control_variate_mut`]) and reads θ* and the Hessian sum (for the mass
/// matrix) through [`EcsEstimator::control_variate`]. An estimator that caches per-datum
/// quantities at θ* must notice a re-centring ([`ControlVariate::id`] changes).
///
/// **Errors.** A non-finite estimate or gradient is a recoverable `Err`
/// ([`NonFiniteEstimate`](tallmc_core::Error::NonFiniteEstimate), see
/// [`is_recoverable`](tallmc_core::Error::is_recoverable)): the kernel treats it as a rejected
/// u-step or a divergent trajectory. Any other error is fatal and stops the chain.
///
/// Implemented by [`DifferenceEstimator`] (perturbed) and [`BlockPoissonEstimator`] (signed).
/// The `tallmc` crate's example `user_estimator` implements a stratified difference estimator
/// outside the library and runs [`HmcEcsWithEstimator`](crate::HmcEcsWithEstimator) with it:
/// `cargo run --release -p tallmc --example user_estimator`.
pub trait EcsEstimator<M: ?Sized> {
    /// The subsample u.
    type Subsample: GibbsSubsample;
    /// What one estimate records (value, variance or sign, counts).
    type Estimate: EcsEstimate;

    /// The estimate at (θ, u), **overwriting** `grad` (length d) with ∇_θ of its
    /// [`log_target`](EcsEstimate::log_target) at the fixed u.
    fn estimate_log_target(
        &mut self, model: &M, theta: &[f64], u: &Self::Subsample, grad: &mut [f64],
    ) -> Result<Self::Estimate>;

    /// The control variate.
    fn control_variate(&self) -> &ControlVariate;

    /// The control variate, to re-centre it.
    fn control_variate_mut(&mut self) -> &mut ControlVariate;
}

impl<M, E> EcsEstimator<M> for DifferenceEstimator<E>
where
    M: LogPriorHessian + ?Sized,
    E: DifferenceTerms<M>,
{
    type Subsample = BlockSubsample;
    type Estimate = DifferenceEstimate;

    /// ℓ̂ − σ̂²/2 (the perturbed estimate) and its gradient.
    fn estimate_log_target(
        &mut self, model: &M, theta: &[f64], u: &BlockSubsample, grad: &mut [f64],
    ) -> Result<DifferenceEstimate> {
        self.perturbed_grad(model, theta, u.indices(), grad)
    }

    fn control_variate(&self) -> &ControlVariate {
        DifferenceEstimator::control_variate(self)
    }

    fn control_variate_mut(&mut self) -> &mut ControlVariate {
        DifferenceEstimator::control_variate_mut(self)
    }
}

impl<M, E> EcsEstimator<M> for BlockPoissonEstimator<E>
where
    M: LogPriorHessian + ?Sized,
    E: DifferenceTerms<M>,
{
    type Subsample = BlockPoissonSubsample;
    type Estimate = BlockPoissonEstimate;

    /// log|L̂_B| and its gradient.
    fn estimate_log_target(
        &mut self, model: &M, theta: &[f64], u: &BlockPoissonSubsample, grad: &mut [f64],
    ) -> Result<BlockPoissonEstimate> {
        self.estimate_grad(model, theta, u, grad)
    }

    fn control_variate(&self) -> &ControlVariate {
        BlockPoissonEstimator::control_variate(self)
    }

    fn control_variate_mut(&mut self) -> &mut ControlVariate {
        BlockPoissonEstimator::control_variate_mut(self)
    }
}

/// log p(θ) + ℓ̃(θ; u), with its gradient written into `grad`; adds the evaluations to
/// `counts` and leaves the estimate in `last`. A [recoverable](Error::is_recoverable) estimator
/// error (a non-finite estimate) gives NaN and `Ok(None)`: the caller treats it as a divergence
/// or a rejection. A fatal one gives NaN and leaves the error in `last`, which the caller
/// returns once the trajectory has stopped at the NaN.
pub(crate) fn log_density<M, T>(
    estimator: &mut T, model: &M, theta: &[f64], u: &T::Subsample, grad: &mut [f64],
    counts: &mut EvalCounts, last: &mut Result<Option<T::Estimate>>,
) -> f64
where
    M: LogPrior + ?Sized,
    T: EcsEstimator<M>,
{
    match estimator.estimate_log_target(model, theta, u, grad) {
        Ok(e) => {
            *counts += e.counts();
            *last = Ok(Some(e));
            e.log_target() + model.log_prior_grad(theta, grad)
        }
        Err(e) => {
            *last = if e.is_recoverable() { Ok(None) } else { Err(e) };
            f64::NAN
        }
    }
}

/// The phase point at the initial position θ₀ and the estimate there: log density
/// ℓ̃(θ₀; u) + log p(θ₀) and its gradient, the estimate's evaluations added to `setup`.
///
/// # Errors
/// The estimator fails fatally, or the log density is not finite
/// ([`Error::NonFiniteLogDensity`], naming the position and `what` estimate).
///
/// [`Error::NonFiniteLogDensity`]: tallmc_core::Error::NonFiniteLogDensity
pub(crate) fn initial_point<M, T>(
    estimator: &mut T, model: &M, position: &[f64], u: &T::Subsample, setup: &mut EvalCounts,
    what: &str,
) -> Result<(PhasePoint, T::Estimate)>
where
    M: LogPrior + ?Sized,
    T: EcsEstimator<M>,
{
    let mut point = PhasePoint::zeros(position.len());
    point.position.copy_from_slice(position);
    let mut last = Ok(None);
    point.log_density =
        log_density(estimator, model, position, u, &mut point.grad, setup, &mut last);
    match last?.filter(|_| point.log_density.is_finite()) {
        Some(estimate) => Ok((point, estimate)),
        None => Err(tallmc_core::Error::NonFiniteLogDensity {
            what: format!("the initial position {position:?} ({what})"),
            value: point.log_density,
        }),
    }
}

/// The chain state both kernels carry: the phase point (θ, cached log density and gradient),
/// the subsample u and the estimate at (θ, u).
pub(crate) struct EcsPoint<'a, S, T> {
    pub point: &'a mut PhasePoint,
    pub subsample: &'a mut S,
    pub estimate: &'a mut T,
}

/// What one HMC-within-Gibbs sweep did: the u-step's and the θ-step's outcomes, as an
/// [`EcsReport`](crate::EcsReport) turns them into a chain's stats.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EcsStep {
    /// min{1, exp(−ΔH)} of the θ-step (0 when divergent); NUTS: the mean of
    /// min{1, exp(H₀ − H(z))} over the tree's leapfrog points.
    pub accept_stat: f64,
    /// Whether the θ-step accepted (NUTS: whether the draw is a new point of the tree).
    pub accepted: bool,
    /// Whether the θ-step diverged.
    pub divergent: bool,
    /// min{1, exp(ℓ̃(θ; u′) − ℓ̃(θ; u))} of the u-step.
    pub u_accept_stat: f64,
    /// Whether the u-step accepted.
    pub u_accepted: bool,
    /// Step size ε.
    pub step_size: f64,
    /// Leapfrog steps taken.
    pub n_leapfrog: usize,
    /// Doublings of the NUTS θ-step's tree (0 for the fixed-length θ-step).
    pub tree_depth: usize,
    /// The NUTS θ-step's tree stopped at its depth limit.
    pub hit_max_depth: bool,
    /// Hamiltonian at the new state.
    pub energy: f64,
    /// ΔH of the θ-proposal (NaN when divergent); NUTS: H at the draw − H₀.
    pub energy_error: f64,
    /// Evaluations of the sweep, plus the set-up and re-centring evaluations not yet reported.
    pub evals: EvalCounts,
}

/// One HMC-within-Gibbs iteration: the u-step (propose u′, accept with the ratio of the
/// estimated targets at θ — the prior cancels), then the θ-step (fixed-length HMC or NUTS on
/// the same estimated potential with u fixed). `grad` is scratch of length d.
///
/// # Errors
/// A fatal estimator error ([`Error::is_recoverable`] is false), in either step.
pub(crate) fn gibbs_sweep<M, T, R>(
    estimator: &mut T, dynamics: &mut Dynamics<T::Estimate>, grad: &mut [f64], model: &M,
    s: EcsPoint<'_, T::Subsample, T::Estimate>, rng: &mut R,
) -> Result<EcsStep>
where
    M: LogPrior + ?Sized,
    T: EcsEstimator<M>,
    R: Rng + ?Sized,
{
    let mut evals = std::mem::take(&mut dynamics.unreported);
    s.subsample.propose(rng);
    let mut last = Ok(None);
    let lp =
        log_density(estimator, model, &s.point.position, s.subsample, grad, &mut evals, &mut last);
    let log_ratio = if lp.is_finite() { lp - s.point.log_density } else { f64::NEG_INFINITY };
    let u_accept_stat = log_ratio.min(0.0).exp();
    let u_accepted = rng.random::<f64>() < u_accept_stat;
    match last? {
        Some(e) if u_accepted => {
            s.subsample.accept();
            s.point.log_density = lp;
            s.point.grad.copy_from_slice(grad);
            *s.estimate = e;
        }
        _ => s.subsample.reject(),
    }
    let u = &*s.subsample;
    let mut last = Ok(None);
    let mut trajectory = EvalCounts::ZERO;
    let (theta, drawn) = dynamics.theta_step(s.point, rng, |t, g| {
        let lp = log_density(estimator, model, t, u, g, &mut trajectory, &mut last);
        (lp, last.as_ref().ok().copied().flatten())
    });
    evals += trajectory;
    last?;
    if let Some(e) = drawn {
        *s.estimate = e;
    }
    Ok(EcsStep {
        accept_stat: theta.accept_stat,
        accepted: theta.accepted,
        divergent: theta.divergent,
        u_accept_stat,
        u_accepted,
        step_size: dynamics.step_size.get(),
        n_leapfrog: theta.n_leapfrog,
        tree_depth: theta.tree_depth,
        hit_max_depth: theta.hit_max_depth,
        energy: theta.energy,
        energy_error: theta.energy_error,
        evals,
    })
}

/// Warmup re-centring, when the schedule says so after this iteration: θ* moves to the mean of
/// the window's positions, the control variates are rebuilt there, M is re-set from the
/// Hessian at the new θ*, and the cached potential at (θ, u) is recomputed. If the potential is
/// not finite at the new centre, θ* goes back to the previous one. Evaluations go to
/// `dynamics.unreported` (reported by the next step).
pub(crate) fn recenter<M, T>(
    estimator: &mut T, dynamics: &mut Dynamics<T::Estimate>, model: &M, accept_stat: f64,
    s: EcsPoint<'_, T::Subsample, T::Estimate>,
) -> Result<()>
where
    M: TermHessians + LogPriorHessian + ?Sized,
    T: EcsEstimator<M>,
{
    if !dynamics.adapt(accept_stat, &s.point.position) {
        return Ok(());
    }
    let center = dynamics.window_sum.clone();
    let cv = estimator.control_variate_mut();
    let previous = cv.center().to_vec();
    match cv.recenter(model, &center) {
        Ok(c) => dynamics.unreported += c,
        Err(_) => return Ok(()), // keep the old θ* if the window mean is unusable
    }
    let cov = laplace_covariance(model, estimator.control_variate(), dynamics.config.parallelism)
        .map(|(cov, c)| {
            dynamics.unreported += c;
            cov
        });
    dynamics.recentered(cov);
    // The potential changed: recompute the cached value and gradient at (θ, u).
    let mut last = Ok(None);
    let mut counts = EvalCounts::ZERO;
    let lp = log_density(
        estimator,
        model,
        &s.point.position,
        s.subsample,
        &mut s.point.grad,
        &mut counts,
        &mut last,
    );
    dynamics.unreported += counts;
    match last? {
        Some(e) if lp.is_finite() => {
            s.point.log_density = lp;
            *s.estimate = e;
        }
        _ => {
            // Undo: back to the previous centre, whose potential was finite here.
            let cv = estimator.control_variate_mut();
            dynamics.unreported += cv.recenter(model, &previous)?;
            let mut last = Ok(None);
            s.point.log_density = log_density(
                estimator,
                model,
                &s.point.position,
                s.subsample,
                &mut s.point.grad,
                &mut dynamics.unreported,
                &mut last,
            );
            if let Some(e) = last? {
                *s.estimate = e;
            }
        }
    }
    Ok(())
}
