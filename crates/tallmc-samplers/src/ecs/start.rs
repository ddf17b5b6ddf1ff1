//! What an HMC-ECS chain computes before its first iteration: the centre θ* (given, or the
//! Newton mode), the Taylor control variates there, the Laplace covariance Σ at θ* (the mass
//! matrix), and the tuning of the estimator's setting (m, or the block-Poisson a) from the
//! differences' variance at a few draws from N(θ*, Σ). Shared by perturbed and signed HMC-ECS;
//! the Laplace covariance also by re-centring and by HMC-ECS on an estimator of your own.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use tallmc_core::{
    Error, EvalCounts, FullData, LogPriorHessian, Parallelism, Result, TermHessians,
};
use tallmc_estimators::tuning::population_differences;
use tallmc_estimators::{ControlVariate, CvOrder, DifferenceTerms};

use super::settings::EcsDynamics;
use crate::init::{NewtonOptions, laplace_approximation};

/// Number of Laplace draws at which the subsample tuning measures the differences' variance.
pub(crate) const TUNING_DRAWS: usize = 4;

/// Validates an optional θ* (finite; its length is checked when a chain is built).
pub(crate) fn check_center(center: Option<&[f64]>) -> Result<()> {
    if let Some(c) = center
        && let Some((j, v)) = c.iter().enumerate().find(|(_, v)| !v.is_finite())
    {
        return Err(Error::invalid(
            "center θ*",
            format!("{v} (coordinate {j})"),
            "a finite vector of length d",
        ));
    }
    Ok(())
}

/// θ* (given or the Newton mode from `position`), with the evaluations made.
pub(crate) fn find_center<M>(
    model: &M, given: Option<&[f64]>, position: &[f64], dyn_: &EcsDynamics,
) -> Result<(Vec<f64>, EvalCounts)>
where
    M: TermHessians + LogPriorHessian + ?Sized,
{
    let d = model.dim();
    match given {
        Some(c) => {
            if c.len() != d {
                return Err(Error::dimension("center θ*", d, c.len()));
            }
            Ok((c.to_vec(), EvalCounts::ZERO))
        }
        None => {
            let options = NewtonOptions { parallelism: dyn_.parallelism, ..dyn_.newton };
            let lap = laplace_approximation(model, position, options)?;
            Ok((lap.mode, lap.evals))
        }
    }
}

/// θ* (given or the Newton mode from `position`), the control variates of order `order` there
/// and the Laplace covariance at θ*, with the evaluations made.
pub(crate) fn centered_control_variate<M>(
    model: &M, given: Option<&[f64]>, position: &[f64], dyn_: &EcsDynamics, order: CvOrder,
) -> Result<(Vec<f64>, ControlVariate, Vec<f64>, EvalCounts)>
where
    M: TermHessians + LogPriorHessian + ?Sized,
{
    let (center, mut evals) = find_center(model, given, position, dyn_)?;
    let (cv, c) = if dyn_.parallel_control_variates {
        ControlVariate::new_on_all_cores(model, &center, order)?
    } else {
        ControlVariate::new(model, &center, order)?
    };
    evals += c;
    let hessian_sum = (cv.order() == CvOrder::Two).then(|| cv.hessian_sum());
    let (covariance, c) = laplace_covariance(model, &center, hessian_sum, dyn_.parallelism)?;
    evals += c;
    Ok((center, cv, covariance, evals))
}

/// The Laplace covariance Σ = (−∇²log π(θ*))⁻¹ at `center`, reusing `hessian_sum` =
/// Σ_i ∇²ℓ_i(θ*) when the estimator holds it (order-2 control variates), else one Hessian
/// pass (N Hessians, counted).
pub(crate) fn laplace_covariance<M>(
    model: &M, center: &[f64], hessian_sum: Option<&[f64]>, parallelism: Parallelism,
) -> Result<(Vec<f64>, EvalCounts)>
where
    M: TermHessians + LogPriorHessian + ?Sized,
{
    let d = model.dim();
    let mut counts = EvalCounts::ZERO;
    let mut h = match hessian_sum {
        Some(h) => h.to_vec(),
        None => {
            let mut h = vec![0.0; d * d];
            FullData::for_model(model, parallelism).hessian(model, center, &mut h);
            counts += EvalCounts::hessians(model.num_terms());
            h
        }
    };
    model.add_log_prior_hessian(center, &mut h);
    h.iter_mut().for_each(|x| *x = -*x);
    let chol = tallmc_core::linalg::Cholesky::new(&h, d, "negative Hessian of log π at θ*")?;
    Ok((chol.inverse(), counts))
}

/// `TUNING_DRAWS` draws from N(θ*, Σ), row-major.
pub(crate) fn laplace_draws<R: Rng + ?Sized>(
    center: &[f64], cov: &[f64], rng: &mut R,
) -> Result<Vec<f64>> {
    let d = center.len();
    let chol = tallmc_core::linalg::Cholesky::new(cov, d, "Laplace covariance")?;
    let mut z = vec![0.0; d];
    let mut x = vec![0.0; d];
    let mut out = Vec::with_capacity(TUNING_DRAWS * d);
    for _ in 0..TUNING_DRAWS {
        for zj in &mut z {
            *zj = StandardNormal.sample(rng);
        }
        chol.mul_lower(&z, &mut x);
        out.extend(center.iter().zip(&x).map(|(c, v)| c + v));
    }
    Ok(out)
}

/// Mean over Laplace draws of the population mean and variance of d_k (one pass each).
pub(crate) fn tuning_differences<M: ?Sized, E: DifferenceTerms<M>>(
    model: &M, cv: &ControlVariate, engine: &mut E, draws: &[f64],
) -> Result<(f64, f64, EvalCounts)> {
    let d = cv.dim();
    let (mut mean, mut var, mut counts) = (0.0, 0.0, EvalCounts::ZERO);
    for theta in draws.chunks_exact(d) {
        let (mu, v, c) = population_differences(model, cv, engine, theta)?;
        mean += mu;
        var += v;
        counts += c;
    }
    let k = (draws.len() / d) as f64;
    Ok((mean / k, var / k, counts))
}

/// What the difference-estimator ECS kernels compute before their first iteration.
pub(crate) struct TunedStart<E, T> {
    /// The control variates at θ*.
    pub cv: ControlVariate,
    /// The Laplace covariance Σ at θ*.
    pub covariance: Vec<f64>,
    /// Every evaluation made (centre, control variates, covariance, tuning).
    pub evals: EvalCounts,
    /// The difference engine, after the tuning passes.
    pub engine: E,
    /// The tuned (or given) setting.
    pub tuned: T,
}

/// The start-up shared by the difference-estimator ECS kernels: θ*, the control variates and Σ
/// from [`centered_control_variate`], then the kernel's setting: `fixed` if given, else
/// `tune(mean, var)` of the population mean and variance of d_k averaged over `TUNING_DRAWS`
/// draws from N(θ*, Σ) (the only use of `rng` and of `engine` here).
#[allow(clippy::too_many_arguments)]
pub(crate) fn tuned_start<M, E, T, R>(
    model: &M, given: Option<&[f64]>, position: &[f64], dyn_: &EcsDynamics, order: CvOrder,
    engine: &E, fixed: Option<T>, tune: impl FnOnce(f64, f64) -> Result<T>, rng: &mut R,
) -> Result<TunedStart<E, T>>
where
    M: TermHessians + LogPriorHessian + ?Sized,
    E: DifferenceTerms<M> + Clone,
    R: Rng + ?Sized,
{
    let (center, cv, covariance, mut evals) =
        centered_control_variate(model, given, position, dyn_, order)?;
    let mut engine = engine.clone();
    let tuned = match fixed {
        Some(t) => t,
        None => {
            let draws = laplace_draws(&center, &covariance, rng)?;
            let (mean, var, c) = tuning_differences(model, &cv, &mut engine, &draws)?;
            evals += c;
            tune(mean, var)?
        }
    };
    Ok(TunedStart { cv, covariance, evals, engine, tuned })
}
