//! HMC with energy-conserving subsampling (Dang et al. 2019): HMC-within-Gibbs on an estimated
//! log-likelihood, one kernel ([`EcsKernel`]) over its estimator.
//!
//! * [`perturbed`] — perturbed HMC-ECS on the difference estimator ([`HmcEcs`]), and on an
//!   estimator of your own ([`HmcEcsWithEstimator`]);
//! * [`signed`] — signed HMC-ECS on the block-Poisson estimator ([`SignedHmcEcs`]);
//! * [`kernel`] — the kernel and chain all three share;
//! * `gibbs`, `theta` — the sweep (u-step, θ-step) and the θ-step's dynamics.

pub(crate) mod gibbs;
pub mod kernel;
pub mod perturbed;
pub mod signed;
pub(crate) mod theta;

pub use gibbs::{EcsEstimate, EcsEstimator, EcsStep, GibbsSubsample};
pub use kernel::{EcsChain, EcsHead, EcsKernel, EcsReport, EcsSetup, EcsStart, EcsTuning};
pub use perturbed::{
    EcsDynamics, HmcEcs, HmcEcsConfig, HmcEcsStats, HmcEcsTuning, HmcEcsWithEstimator,
    PerturbedEcs, PerturbedTuning, RecenterSchedule, ThetaIntegrator, UserEcs,
};
pub use signed::{
    SignedEcs, SignedHmcEcs, SignedHmcEcsConfig, SignedHmcEcsStats, SignedHmcEcsTuning,
    SignedTuning,
};
