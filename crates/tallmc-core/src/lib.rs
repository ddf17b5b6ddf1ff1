//! # tallmc-core
//!
//! The few traits and small value types every other tallmc crate composes through.
//!
//! A posterior over θ ∈ ℝ^d is a prior plus a **sum of N per-datum terms**:
//!
//! ```text
//! log π(θ) = log p(θ) + Σ_{i<N} ℓ_i(θ)
//! ```
//!
//! Every method in tallmc touches the data only through ℓ_i (and ∇ℓ_i, ∇²ℓ_i, or bounds on
//! them) for indices it chose, so:
//!
//! * a **model** evaluates terms for a batch of indices: [`Terms`], [`TermGradients`],
//!   [`TermHessians`], optional [`TermBounds`] and [`TaylorRemainderBound`], and its prior [`LogPrior`];
//!   models with one linear predictor per datum say so ([`LinearPredictor`], or
//!   [`DispersionPredictor`] with a shared dispersion parameter), for the control-variate engines;
//! * a **subsampler** chooses indices: [`subsample`];
//! * a **kernel** moves a chain: [`Kernel`], reporting typed [`StepStats`]; a
//!   piecewise-deterministic kernel ([`PdmpKernel`]) moves a particle along a continuous
//!   trajectory and reports [`Segment`]s instead of draws;
//! * exact thinning needs bounds on per-datum gradients and curvature: [`gradient_bounds`];
//! * the **cost** of every step is the number of per-datum evaluations it made: [`EvalCounts`];
//!   [`Counting`] wraps any model and counts the evaluations actually made, to check a kernel's
//!   report.
//!
//! Besides the traits, this crate holds the one piece of shared infrastructure every full-data
//! method needs: [`full_data`], a deterministic parallel sum over all N terms (same result for
//! any thread count), plus the small dense linear algebra of [`linalg`] and the seeding rules of
//! [`rng`].

#![warn(missing_docs)]

pub mod alias;
pub mod columns;
pub mod counting;
pub mod counts;
pub mod dispersion_predictor;
pub mod error;
pub mod frame;
pub mod full_data;
pub mod gradient_bounds;
pub mod kernel;
pub mod linalg;
pub mod model;
pub mod parallel;
pub mod pdmp;
pub mod rng;
pub mod row_service;
pub mod shard_passes;
pub mod shards;
pub mod subsample;
pub mod termwise_bounds;
#[cfg(test)]
mod test_quadratic;

pub use alias::{AliasTable, ShardedAlias};
pub use columns::{ColumnError, StatColumns};
pub use counting::Counting;
pub use counts::EvalCounts;
pub use dispersion_predictor::{DispersionPredictor, PredictorDerivatives};
pub use error::{Error, Result};
pub use frame::WhiteningFrame;
pub use full_data::{FullData, Parallelism};
pub use gradient_bounds::{
    CurvatureBound, LogPriorCurvature, TermCurvatureBound, TermGradientBounds,
    TermGradientLipschitz,
};
pub use kernel::{Chain, Kernel, NoTuning, StepStats, Tuning};
pub use model::{
    BinaryFactors, BoundedPredictorThirdDerivative, LinearPredictor, LogPrior, LogPriorHessian,
    ParameterNames, RowBatch, TaylorRemainderBound, TermBounds, TermGradients, TermHessians, Terms,
};
pub use pdmp::{EventKind, EventTotals, PdmpChain, PdmpKernel, Segment, SegmentStats, Trajectory};
pub use row_service::RowService;
pub use shard_passes::{FirstFailure, PassKind, ShardPasses, reduce_on_shards};
pub use shards::{ShardLayout, add_shard_partials, fold_sharded, reduce_chunks, reduce_sharded};
pub use termwise_bounds::{
    TermConstant, TermCurvatureConstants, TermLipschitz, TermThirdDerivativeConstants,
};
