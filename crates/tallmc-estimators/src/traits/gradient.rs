//! [`GradientEstimator`]: an unbiased estimate of the data part of the log-posterior gradient,
//! ∇ℓ(θ) = Σ_{i<N} ∇ℓ_i(θ), from the terms of a subsample of uniformly drawn indices (see
//! [`crate::gradient`] for the plain estimator, [`crate::cv_gradient`] for control variates).

use tallmc_core::EvalCounts;

/// An unbiased estimator of Σ_{i<N} ∇ℓ_i(θ) from a subsample (see [`crate::gradient`]).
///
/// Implementations own their scratch buffers, so that estimating allocates nothing once the
/// estimator has seen its largest subsample.
pub trait GradientEstimator<M: ?Sized> {
    /// Overwrites `grad` (length `model.dim()`) with the estimate of Σ_{i<N} ∇ℓ_i(θ) computed
    /// from the terms at `indices` (each uniform on `0..N`; length ≥ 1), and returns the
    /// per-datum evaluations made.
    fn estimate_gradient(
        &mut self, model: &M, theta: &[f64], indices: &[u32], grad: &mut [f64],
    ) -> EvalCounts;
}
