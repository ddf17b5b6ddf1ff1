//! # tallmc-estimators
//!
//! Estimators of the full-data log-likelihood ℓ(θ) = Σ_{i<N} ℓ_i(θ), its gradient and the
//! likelihood itself from a subsample of the terms — the pieces HMC-ECS, the stochastic-gradient
//! samplers and the confidence sampler with proxies are built from (DESIGN.md, *Control
//! variates*).
//!
//! * [`GradientEstimator`] — an unbiased estimate of Σ_i ∇ℓ_i(θ) from the terms of a subsample;
//!   [`MinibatchGradient`] is the plain (N/n) Σ_{i∈S} ∇ℓ_i(θ). Stochastic-gradient kernels are
//!   generic over it, so a control-variate estimator plugs into every one of them.
//!
//! The mathematics of every estimator is in `docs/methods/estimators.md`.

#![warn(missing_docs)]

pub mod gradient;

pub use gradient::{GradientEstimator, MinibatchGradient};
