//! Gradient estimators: an unbiased estimate of the data part of the log-posterior gradient,
//!
//! ```text
//! ∇ℓ(θ) = Σ_{i<N} ∇ℓ_i(θ),
//! ```
//!
//! from the terms of a subsample S = (i_1, …, i_n) of indices drawn uniformly (with or without
//! replacement: every estimator here is unbiased under both, because each i_k is marginally
//! uniform on 0..N).
//!
//! The caller (a kernel) draws the indices and adds the prior's gradient; the estimator only
//! turns evaluated terms into the estimate and reports what it evaluated. The trait is
//! [`GradientEstimator`] (in [`crate::traits`], with the other estimator traits).

use tallmc_core::{EvalCounts, TermGradients};

use crate::traits::GradientEstimator;

/// The plain minibatch estimator
///
/// ```text
/// ∇ℓ̂(θ) = (N/n) Σ_{k≤n} ∇ℓ_{i_k}(θ),
/// ```
///
/// unbiased because E ∇ℓ_{i_k}(θ) = (1/N) Σ_i ∇ℓ_i(θ). Its variance grows like N²/n times the
/// spread of the per-datum gradients, which does not shrink near the mode — the reason for
/// control variates. Cost: n terms and n gradients.
#[derive(Debug, Clone, Default)]
pub struct MinibatchGradient {
    values: Vec<f64>,
}

impl MinibatchGradient {
    /// An estimator whose buffers hold subsamples of up to `max_batch` indices without
    /// reallocating.
    pub fn new(max_batch: usize) -> Self {
        Self { values: vec![0.0; max_batch] }
    }
}

impl<M: TermGradients + ?Sized> GradientEstimator<M> for MinibatchGradient {
    fn estimate_gradient(
        &mut self, model: &M, theta: &[f64], indices: &[u32], grad: &mut [f64],
    ) -> EvalCounts {
        let n = indices.len();
        if self.values.len() < n {
            self.values.resize(n, 0.0);
        }
        grad.fill(0.0);
        model.log_terms_grad_sum(theta, indices, &mut self.values[..n], grad);
        let scale = model.num_terms() as f64 / n as f64;
        for g in grad.iter_mut() {
            *g *= scale;
        }
        EvalCounts::terms_and_gradients(n)
    }
}
