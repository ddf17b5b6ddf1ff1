//! The HMC-within-Gibbs sweep and the warmup re-centring shared by perturbed
//! ([`HmcEcs`](crate::HmcEcs), [`HmcEcsWithEstimator`](crate::HmcEcsWithEstimator)) and signed
//! ([`SignedHmcEcs`](crate::SignedHmcEcs)) HMC-ECS.
//!
//! The kernels differ only in the estimator of the log-likelihood (the perturbed difference
//! estimator ℓ̂ − σ̂²/2 on G blocks, or log|L̂_B| of the block-Poisson estimator on λ factors),
//! its subsample u and what an estimate records. [`EcsEstimator`], [`EcsEstimate`] and
//! [`GibbsSubsample`] (in `tallmc-estimators`, with the other estimator traits) name those
//! differences; [`gibbs_sweep`] (u-step, then θ-step with u fixed) and [`recenter`] are written
//! once over them, and one kernel ([`EcsKernel`](crate::EcsKernel)) runs them.

use rand::{Rng, RngExt};
use tallmc_core::{EvalCounts, LogPrior, LogPriorHessian, Result, TermHessians};
use tallmc_estimators::{EcsEstimate, EcsEstimator, GibbsSubsample};
use tallmc_integrators::PhasePoint;

use super::start::laplace_covariance;
use super::theta::Dynamics;

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
    let previous = estimator.center().to_vec();
    match estimator.recenter(model, &center) {
        Ok(Some(c)) => dynamics.unreported += c,
        // Keep the old θ* if the estimator does not move or the window mean is unusable.
        Ok(None) | Err(_) => return Ok(()),
    }
    let parallelism = dynamics.config.parallelism;
    let cov = laplace_covariance(model, estimator.center(), estimator.hessian_sum(), parallelism)
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
            if let Some(c) = estimator.recenter(model, &previous)? {
                dynamics.unreported += c;
            }
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
