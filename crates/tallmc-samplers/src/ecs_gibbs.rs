//! The HMC-within-Gibbs sweep and the warmup re-centring shared by perturbed
//! ([`HmcEcs`](crate::HmcEcs)) and signed ([`SignedHmcEcs`](crate::SignedHmcEcs)) HMC-ECS.
//!
//! The two kernels differ only in the estimator of the log-likelihood (the perturbed difference
//! estimator ℓ̂ − σ̂²/2 on G blocks, or log|L̂_B| of the block-Poisson estimator on λ factors),
//! its subsample u and what an estimate records. [`EcsEstimator`] names those differences;
//! [`gibbs_sweep`] (u-step, then θ-step with u fixed) and [`recenter`] are written once over it.

use rand::{Rng, RngExt};
use tallmc_core::subsample::BlockSubsample;
use tallmc_core::{EvalCounts, LogPriorHessian, Result, TermHessians};
use tallmc_estimators::{
    BlockPoissonEstimate, BlockPoissonEstimator, BlockPoissonSubsample, ControlVariate,
    DifferenceEstimate, DifferenceEstimator, DifferenceTerms,
};
use tallmc_integrators::PhasePoint;

use crate::hmc_ecs::{Dynamics, ThetaStep, est_err, laplace_covariance};

/// A subsample u whose u-step proposal (refresh one block or κ factors) can be accepted or
/// undone without allocating.
pub(crate) trait GibbsSubsample {
    /// Proposes u′ by refreshing part of u.
    fn propose<R: Rng + ?Sized>(&mut self, rng: &mut R);
    /// Keeps u′.
    fn accept(&mut self);
    /// Goes back to u.
    fn reject(&mut self);
}

impl GibbsSubsample for BlockSubsample {
    fn propose<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        self.propose_refresh(rng);
    }
    fn accept(&mut self) {
        BlockSubsample::accept(self);
    }
    fn reject(&mut self) {
        BlockSubsample::reject(self);
    }
}

impl GibbsSubsample for BlockPoissonSubsample {
    fn propose<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        self.propose_refresh(rng);
    }
    fn accept(&mut self) {
        BlockPoissonSubsample::accept(self);
    }
    fn reject(&mut self) {
        BlockPoissonSubsample::reject(self);
    }
}

/// The log-likelihood estimator of an HMC-ECS kernel, with its subsample and estimate types.
pub(crate) trait EcsEstimator<M: ?Sized> {
    /// The subsample u.
    type Subsample: GibbsSubsample;
    /// What one estimate records (value, variance or sign, counts).
    type Estimate: Copy;

    /// log p(θ) + the estimated log-likelihood at (θ, u), with its gradient written into
    /// `grad`; adds the evaluations to `counts` and leaves the estimate in `last`. An estimator
    /// error gives NaN and `None` (the caller treats it as a divergence or a rejection).
    fn log_density(
        &mut self,
        model: &M,
        theta: &[f64],
        u: &Self::Subsample,
        grad: &mut [f64],
        counts: &mut EvalCounts,
        last: &mut Option<Self::Estimate>,
    ) -> f64;

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

    /// log p(θ) + ℓ̂ − σ̂²/2 (the perturbed estimate).
    fn log_density(
        &mut self,
        model: &M,
        theta: &[f64],
        u: &BlockSubsample,
        grad: &mut [f64],
        counts: &mut EvalCounts,
        last: &mut Option<DifferenceEstimate>,
    ) -> f64 {
        match self.perturbed_grad(model, theta, u.indices(), grad) {
            Ok(e) => {
                *counts += e.counts;
                *last = Some(e);
                e.perturbed() + model.log_prior_grad(theta, grad)
            }
            Err(_) => {
                *last = None;
                f64::NAN
            }
        }
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

    /// log p(θ) + log|L̂_B|.
    fn log_density(
        &mut self,
        model: &M,
        theta: &[f64],
        u: &BlockPoissonSubsample,
        grad: &mut [f64],
        counts: &mut EvalCounts,
        last: &mut Option<BlockPoissonEstimate>,
    ) -> f64 {
        match self.estimate_grad(model, theta, u, grad) {
            Ok(e) => {
                *counts += e.counts;
                *last = Some(e);
                e.log_abs_likelihood + model.log_prior_grad(theta, grad)
            }
            Err(_) => {
                *last = None;
                f64::NAN
            }
        }
    }

    fn control_variate(&self) -> &ControlVariate {
        BlockPoissonEstimator::control_variate(self)
    }

    fn control_variate_mut(&mut self) -> &mut ControlVariate {
        BlockPoissonEstimator::control_variate_mut(self)
    }
}

/// The chain state both kernels carry: the phase point (θ, cached log density and gradient),
/// the subsample u and the estimate at (θ, u).
pub(crate) struct EcsPoint<'a, S, T> {
    pub point: &'a mut PhasePoint,
    pub subsample: &'a mut S,
    pub estimate: &'a mut T,
}

/// What one sweep did.
pub(crate) struct Sweep {
    /// Evaluations of the sweep, plus the set-up and re-centring evaluations not yet reported.
    pub evals: EvalCounts,
    pub u_accept_stat: f64,
    pub u_accepted: bool,
    pub theta: ThetaStep,
}

/// One HMC-within-Gibbs iteration: the u-step (propose u′, accept with the ratio of the
/// estimated targets at θ — the prior cancels), then the θ-step (HMC on the same estimated
/// potential with u fixed). `grad` is scratch of length d.
pub(crate) fn gibbs_sweep<M, T, R>(
    estimator: &mut T,
    dynamics: &mut Dynamics,
    grad: &mut [f64],
    model: &M,
    s: EcsPoint<'_, T::Subsample, T::Estimate>,
    rng: &mut R,
) -> Sweep
where
    M: ?Sized,
    T: EcsEstimator<M>,
    R: Rng + ?Sized,
{
    let mut evals = std::mem::take(&mut dynamics.unreported);
    s.subsample.propose(rng);
    let mut last = None;
    let lp =
        estimator.log_density(model, &s.point.position, s.subsample, grad, &mut evals, &mut last);
    let log_ratio = if lp.is_finite() { lp - s.point.log_density } else { f64::NEG_INFINITY };
    let u_accept_stat = log_ratio.min(0.0).exp();
    let u_accepted = rng.random::<f64>() < u_accept_stat;
    match last {
        Some(e) if u_accepted => {
            s.subsample.accept();
            s.point.log_density = lp;
            s.point.grad.copy_from_slice(grad);
            *s.estimate = e;
        }
        _ => s.subsample.reject(),
    }
    let u = &*s.subsample;
    let mut last = None;
    let mut trajectory = EvalCounts::ZERO;
    let theta = dynamics.theta_step(s.point, rng, |t, g| {
        estimator.log_density(model, t, u, g, &mut trajectory, &mut last)
    });
    evals += trajectory;
    if theta.accepted
        && let Some(e) = last
    {
        *s.estimate = e;
    }
    Sweep { evals, u_accept_stat, u_accepted, theta }
}

/// Warmup re-centring, when the schedule says so after this iteration: θ* moves to the mean of
/// the window's positions, the control variates are rebuilt there, M is re-set from the
/// Hessian at the new θ*, and the cached potential at (θ, u) is recomputed. If the potential is
/// not finite at the new centre, θ* goes back to the previous one. Evaluations go to
/// `dynamics.unreported` (reported by the next step).
pub(crate) fn recenter<M, T>(
    estimator: &mut T,
    dynamics: &mut Dynamics,
    model: &M,
    accept_stat: f64,
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
    let mut last = None;
    let mut counts = EvalCounts::ZERO;
    let lp = estimator.log_density(
        model,
        &s.point.position,
        s.subsample,
        &mut s.point.grad,
        &mut counts,
        &mut last,
    );
    dynamics.unreported += counts;
    match last {
        Some(e) if lp.is_finite() => {
            s.point.log_density = lp;
            *s.estimate = e;
        }
        _ => {
            // Undo: back to the previous centre, whose potential was finite here.
            let cv = estimator.control_variate_mut();
            dynamics.unreported += cv.recenter(model, &previous).map_err(est_err)?;
            let mut last = None;
            s.point.log_density = estimator.log_density(
                model,
                &s.point.position,
                s.subsample,
                &mut s.point.grad,
                &mut dynamics.unreported,
                &mut last,
            );
            if let Some(e) = last {
                *s.estimate = e;
            }
        }
    }
    Ok(())
}
