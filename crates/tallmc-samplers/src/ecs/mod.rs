//! HMC with energy-conserving subsampling (Dang et al. 2019): HMC-within-Gibbs on an estimated
//! log-likelihood, one kernel ([`EcsKernel`]) over its estimator.
//!
//! * [`perturbed`] — perturbed HMC-ECS on the difference estimator ([`HmcEcs`]);
//! * [`signed`] — signed HMC-ECS on the block-Poisson estimator ([`SignedHmcEcs`]);
//! * [`user`] — HMC-ECS on an estimator of your own ([`HmcEcsWithEstimator`]; the
//!   [`EcsEstimator`] trait lives in `tallmc-estimators` with the other estimator traits);
//! * [`kernel`] — the kernel and chain all three share, over their [`EcsSetup`];
//! * [`settings`] — the θ-step settings they share ([`EcsDynamics`]);
//! * `start` — θ*, control variates, the Laplace covariance and the tuning at a chain's start;
//! * `gibbs`, `theta` — the sweep (u-step, θ-step) and the θ-step's dynamics;
//! * `rows_ahead` — the rows a chain declares ahead when the model's rows live elsewhere.

pub(crate) mod gibbs;
pub mod kernel;
pub mod perturbed;
pub(crate) mod rows_ahead;
pub mod settings;
pub mod signed;
pub(crate) mod start;
pub(crate) mod theta;
pub mod user;

pub use gibbs::EcsStep;
pub use kernel::{EcsChain, EcsHead, EcsKernel, EcsReport, EcsSetup, EcsStart, EcsTuning};
pub use perturbed::{
    HmcEcs, HmcEcsConfig, HmcEcsStats, HmcEcsTuning, PerturbedEcs, PerturbedTuning,
};
pub use settings::{EcsDynamics, RecenterSchedule, ThetaIntegrator};
pub use signed::{
    SignedEcs, SignedHmcEcs, SignedHmcEcsConfig, SignedHmcEcsStats, SignedHmcEcsTuning,
    SignedTuning,
};
pub use tallmc_estimators::{EcsEstimate, EcsEstimator, GibbsSubsample};
pub use user::{HmcEcsWithEstimator, UserEcs};
