//! HMC-ECS on a log-likelihood estimator of your own ([`HmcEcsWithEstimator`]): the kernel of
//! perturbed HMC-ECS ([`HmcEcs`](crate::HmcEcs)) on any
//! [`EcsEstimator`] whose estimate is a
//! [`DifferenceEstimate`].

use rand::Rng;
use tallmc_core::{Error, LogPriorHessian, Result, TermHessians};
use tallmc_estimators::{DifferenceEstimate, EcsEstimator, GibbsSubsample};

use super::kernel::{EcsKernel, EcsSetup, EcsStart};
use super::perturbed::PerturbedTuning;
use super::settings::EcsDynamics;
use super::start::laplace_covariance;

/// The setup of HMC-ECS on an estimator of your own: θ-step settings, the estimator `T` and
/// the subsample layout `S`.
#[derive(Debug, Clone)]
pub struct UserEcs<T, S> {
    dynamics: EcsDynamics,
    estimator: T,
    subsample: S,
}

impl<T, S> UserEcs<T, S> {
    /// The estimator given to [`HmcEcsWithEstimator::new`] (each chain runs a copy).
    pub fn estimator(&self) -> &T {
        &self.estimator
    }
}

/// Perturbed HMC-ECS with a log-likelihood estimator of your own: the kernel of
/// [`HmcEcs`](crate::HmcEcs) (same u-step, θ-step, step-size adaptation and re-centring of θ*
/// during warmup; see [`crate::ecs::perturbed`]) on any [`EcsEstimator`] whose estimate is a
/// [`DifferenceEstimate`] (ℓ̂ and σ̂², target exp(ℓ̂ − σ̂²/2) p(θ) p(u)), with any
/// [`GibbsSubsample`] `S`.
///
/// You build the estimator around its centre θ* (e.g. with a
/// [`ControlVariate`](tallmc_estimators::ControlVariate) at the posterior mode of
/// [`laplace_approximation`](crate::laplace_approximation)), and a subsample `S` whose contents
/// each chain redraws from its RNG ([`GibbsSubsample::draw`]) when it is built
/// ([`Kernel::build_chain`]). Every chain runs its own copy of both (so one settings value
/// starts several chains), sets the mass matrix from the Laplace covariance at θ* (or
/// `dynamics.initial_metric`) and evaluates the estimator at the start. The evaluations you
/// made building the estimator are yours to count; everything from the chain's start on (the
/// Hessian pass for M unless the estimator gives [`EcsEstimator::hessian_sum`], every
/// estimate, every re-centring pass) is in the chain's stats.
///
/// The runnable example is `user_estimator` of the `tallmc` crate (a stratified difference
/// estimator written outside the library):
/// `cargo run --release -p tallmc --example user_estimator`.
///
/// [`Kernel::build_chain`]: tallmc_core::Kernel::build_chain
pub type HmcEcsWithEstimator<T, S> = EcsKernel<UserEcs<T, S>>;

impl<T, S> EcsKernel<UserEcs<T, S>> {
    /// Settings with validated θ-step settings, the estimator `estimator` and the subsample
    /// layout `subsample` (its contents are redrawn for every chain).
    pub fn new(dynamics: EcsDynamics, estimator: T, subsample: S) -> Result<Self> {
        dynamics.validate()?;
        Ok(Self::from_setup(UserEcs { dynamics, estimator, subsample }))
    }
}

impl<M, T, S> EcsSetup<M> for UserEcs<T, S>
where
    M: TermHessians + LogPriorHessian + ?Sized,
    T: EcsEstimator<M, Subsample = S, Estimate = DifferenceEstimate> + Clone + Sync,
    S: GibbsSubsample + Clone + Sync,
{
    type Estimator = T;
    type Report = PerturbedTuning;
    const ESTIMATE: &'static str = "user estimate";

    fn dynamics(&self) -> &EcsDynamics {
        &self.dynamics
    }

    fn start<R: Rng + ?Sized>(
        &self, model: &M, _position: &[f64], rng: &mut R,
    ) -> Result<EcsStart<T, S, PerturbedTuning>> {
        let d = model.dim();
        let estimator = self.estimator.clone();
        let center = estimator.center();
        if center.len() != d {
            return Err(Error::dimension("centre θ* of the estimator", d, center.len()));
        }
        let hessian_sum = estimator.hessian_sum();
        let (covariance, evals) =
            laplace_covariance(model, center, hessian_sum, self.dynamics.parallelism)?;
        let mut subsample = self.subsample.clone();
        subsample.draw(rng);
        let report = PerturbedTuning { subsample_size: subsample.batch_size(), blocks: None };
        Ok(EcsStart { estimator, subsample, covariance, evals, report })
    }
}
