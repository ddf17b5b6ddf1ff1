//! # tallmc-estimators
//!
//! Estimators of the full-data log-likelihood ℓ(θ) = Σ_{i<N} ℓ_i(θ), its gradient and the
//! likelihood itself from a subsample of the terms — the pieces HMC-ECS, the stochastic-gradient
//! samplers and the confidence sampler with proxies are built from (DESIGN.md, *Control
//! variates*).
//!
//! * [`ControlVariate`] — Taylor control variates q_k of order 0, 1, 2 around θ* ([`CvOrder`]),
//!   with the full-data sums built in one pass and Σ_k q_k(θ) in O(d²).
//! * [`DifferenceTerms`] — the engines that evaluate d_k = ℓ_k − q_k and ∇d_k for a subsample:
//!   [`RankOne`] for [`LinearPredictor`](tallmc_core::LinearPredictor) models (scalars per datum
//!   only), [`RankTwo`] for [`DispersionPredictor`](tallmc_core::DispersionPredictor) models
//!   (the same with a shared dispersion parameter), [`HessianProducts`] for any model with
//!   Hessians.
//! * [`DifferenceEstimator`] — ℓ̂_m, σ̂²_m, the perturbed ℓ̂ − σ̂²/2 and their gradients.
//! * [`BlockPoissonEstimator`] with [`BlockPoissonSubsample`] — the signed block-Poisson
//!   estimator of L(θ) in log space, its sign and ∇log|L̂_B|.
//! * [`GradientEstimator`] — an unbiased estimate of Σ_i ∇ℓ_i(θ) from the terms of a subsample;
//!   [`MinibatchGradient`] is the plain (N/n) Σ_{i∈S} ∇ℓ_i(θ), [`ControlVariateGradient`] the
//!   control-variate one (SGLD-CV). Stochastic-gradient kernels are generic over it.
//! * [`tuning`] — the subsample size m for a target V[ℓ̂], and the block-Poisson λ, a.
//! * [`traits`] — the traits users implement to bring their own estimator to a kernel
//!   ([`EcsEstimator`] for HMC-ECS, [`GradientEstimator`] for the stochastic-gradient kernels,
//!   [`SwitchingRateEstimator`] for Zig-Zag, [`DatumRateBound`] for lipSBPS, [`RangeSource`]
//!   for minibatch MH), each with the fewest required methods.
//!
//! The mathematics of every estimator, and what was verified by simulation, is in
//! `docs/methods/estimators.md`.

#![warn(missing_docs)]

pub mod block_poisson;
pub mod control_variate;
pub mod cv_gradient;
pub mod difference;
pub mod differences;
pub mod error;
pub mod gradient;
pub mod traits;
pub mod tuning;

pub use block_poisson::{BlockPoissonEstimate, BlockPoissonEstimator, BlockPoissonSubsample};
pub use control_variate::{ControlVariate, CvOrder};
pub use cv_gradient::ControlVariateGradient;
pub use difference::{DifferenceEstimate, DifferenceEstimator};
pub use differences::{DifferenceTerms, HessianProducts, RankOne, RankTwo};
pub use error::{Error, Result};
pub use gradient::MinibatchGradient;
pub use traits::{
    DatumRateBound, EcsEstimate, EcsEstimator, GibbsSubsample, GradientEstimator, NoRange,
    RangeSource, SwitchingRateEstimator, TermBoundRange,
};
