//! # tallmc-integrators
//!
//! The numerical pieces of Hamiltonian samplers, shared by full-data HMC and its subsampling
//! variants:
//!
//! * [`Metric`] — the Euclidean metric (inverse mass matrix Σ = M⁻¹): identity, diagonal or
//!   dense; momentum draws p ~ N(0, M), velocities Σp, kinetic energy ½pᵀΣp;
//! * [`leapfrog()`] — the leapfrog (Störmer–Verlet) integrator for H(θ, p) = U(θ) + ½pᵀΣp over any
//!   potential given as a closure, with divergence detection;
//! * [`DualAveraging`] — Nesterov dual averaging of the step size (Hoffman & Gelman 2014, Alg. 5);
//! * [`WarmupSchedule`] and [`MetricEstimator`] — Stan's windowed warmup: a fast initial buffer,
//!   doubling slow windows in which the metric is estimated from the chain, a fast terminal buffer.
//!
//! * [`poisson`] — Poisson clocks for piecewise-deterministic samplers: exact first arrivals of
//!   constant, affine [a + bt]⁺ and piecewise-linear rates, thinning against an upper bound with
//!   violation counts, and superposition of independent clocks.

#![warn(missing_docs)]

pub mod adaptation;
pub mod dual_averaging;
pub mod leapfrog;
pub mod metric;
pub mod poisson;

pub use adaptation::{MetricEstimator, WarmupSchedule};
pub use dual_averaging::{DualAveraging, DualAveragingConfig};
pub use leapfrog::{LeapfrogOutcome, PhasePoint, leapfrog};
pub use metric::{Metric, MetricKind};
pub use poisson::{
    AffineRate, ConstantRate, PiecewiseLinearRate, Rate, SquaredAffineRate, ThinningCounts,
    ThinningDecision, earliest, thin,
};
