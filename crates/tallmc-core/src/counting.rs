//! A model wrapper that counts every per-datum evaluation it is asked for: cost accounting a
//! kernel cannot get wrong.
//!
//! Every kernel reports its cost as [`EvalCounts`] in its per-step stats, computed by the kernel
//! from what it believes it evaluated. [`Counting`] measures the same quantity from the other
//! side: it wraps any model, forwards every call to it unchanged, and adds to thread-safe
//! counters the number of per-datum evaluations each call makes, exactly as [`EvalCounts`]
//! defines them. A test runs a kernel on `Counting<M>` and checks that the sum of the kernel's
//! reported evaluations equals [`Counting::counts`], kind by kind (the same idea as the counting
//! wrapper of argmin's `Problem`).
//!
//! # What is counted
//!
//! | call | terms | gradients | Hessians |
//! |---|---|---|---|
//! | [`Terms::log_terms`], [`Terms::sum_log_terms`] on k indices | k | | |
//! | [`Terms::sum_log_terms_range`] on `start..end` | end − start | | |
//! | [`TermGradients::log_terms_grad_sum`], [`TermGradients::log_terms_grads`] on k indices | k | k | |
//! | [`TermGradients::sum_log_terms_grad_range`] on `start..end` | end − start | end − start | |
//! | [`TermHessians::hessian_vector_products`], [`TermHessians::sum_hessian`] on k indices | | | k |
//! | [`TermHessians::sum_hessian_vector_range`], [`TermHessians::sum_hessian_range`] on `start..end` | | | end − start |
//! | [`TermCurvatureBound::curvature_bound`] (one pass over the data) | | | N |
//! | [`BinaryFactors::factor_log_ratios`] on k factors | k | | |
//!
//! A product ∇²ℓ_i(θ)·v counts as one Hessian evaluation per datum, as in [`EvalCounts`]; a
//! range sum Σ_{start ≤ i < end} counts one evaluation per index in the range.
//!
//! Every provided trait method is overridden and forwards to the same method of the inner model,
//! so a provided method that calls another trait method (e.g. [`Terms::sum_log_terms_range`]
//! through [`Terms::sum_log_terms`]) is counted once, by the wrapper's outer call, never twice.
//!
//! # What is not counted in [`EvalCounts`]
//!
//! * The prior ([`LogPrior`], [`LogPriorHessian`], [`LogPriorCurvature`]): it does not touch the
//!   data, and [`EvalCounts`] excludes it. Calls are forwarded and tallied separately in
//!   [`Counting::prior_evaluations`] (value or value-and-gradient calls).
//! * O(1) / O(d) bounds ([`TermBounds`], [`TaylorRemainderBound`], the per-datum constants
//!   ([`TermLipschitz`], [`TermCurvatureConstants`], [`TermThirdDerivativeConstants`]), [`TermGradientBounds`],
//!   [`TermGradientLipschitz`]): they evaluate no ℓ_i, so they are forwarded uncounted.
//! * [`LinearPredictor`]: its calls return the pieces of ℓ_i (η_i, then φ_i, φ_i′, φ_i″ together),
//!   and which of them a caller uses — hence whether a call is a term, a gradient or a Hessian —
//!   is the caller's accounting (see the trait). The wrapper cannot tell, so it forwards the
//!   calls and counts the indices passed to [`LinearPredictor::predictor_derivatives`]
//!   separately, in [`Counting::predictor_derivatives`]. To check a kernel's [`EvalCounts`]
//!   exactly, run it through a path that uses the per-datum traits above.
//!
//! Counters are [`AtomicU64`] with relaxed ordering: [`crate::FullData`] may evaluate ranges on
//! several threads at once, and the totals are read after the work has joined.
//!
//! ```
//! use tallmc_core::{Counting, EvalCounts, TermGradients, Terms};
//!
//! /// ℓ_i(θ) = −(θ − i)²/2.
//! struct Quadratic;
//! impl Terms for Quadratic {
//!     fn dim(&self) -> usize { 1 }
//!     fn num_terms(&self) -> usize { 10 }
//!     fn log_terms(&self, t: &[f64], idx: &[u32], out: &mut [f64]) {
//!         for (o, &i) in out.iter_mut().zip(idx) { *o = -0.5 * (t[0] - f64::from(i)).powi(2); }
//!     }
//! }
//! impl TermGradients for Quadratic {
//!     fn log_terms_grad_sum(&self, t: &[f64], idx: &[u32], out: &mut [f64], g: &mut [f64]) -> f64 {
//!         self.log_terms(t, idx, out);
//!         for &i in idx { g[0] -= t[0] - f64::from(i); }
//!         out.iter().sum()
//!     }
//!     fn log_terms_grads(&self, t: &[f64], idx: &[u32], out: &mut [f64], g: &mut [f64]) {
//!         self.log_terms(t, idx, out);
//!         for (gk, &i) in g.iter_mut().zip(idx) { *gk = -(t[0] - f64::from(i)); }
//!     }
//! }
//!
//! let model = Counting::new(Quadratic);
//! model.sum_log_terms_range(&[1.0], 0, 10); // 10 terms (not 20: the inner chunks are not seen)
//! let mut g = [0.0];
//! model.log_terms_grad_sum(&[1.0], &[2, 5, 7], &mut [0.0; 3], &mut g); // 3 terms and gradients
//! assert_eq!(model.counts(), EvalCounts { terms: 13, gradients: 3, hessians: 0 });
//! model.reset();
//! assert_eq!(model.counts(), EvalCounts::ZERO);
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use crate::{
    BinaryFactors, BoundedPredictorThirdDerivative, CurvatureBound, DispersionPredictor,
    EvalCounts, LinearPredictor, LogPrior, LogPriorCurvature, LogPriorHessian, ParameterNames,
    PredictorDerivatives, TaylorRemainderBound, TermBounds, TermCurvatureBound,
    TermCurvatureConstants, TermGradientBounds, TermGradientLipschitz, TermGradients, TermHessians,
    TermLipschitz, TermThirdDerivativeConstants, Terms,
};

/// A model that forwards every call to `inner` and counts the per-datum evaluations made (see
/// the [module docs](self) for what is counted).
///
/// It implements each model trait exactly when the inner model does. Owns its model; wrap a
/// model per test (or call [`Counting::reset`]) and read [`Counting::counts`] after the run.
#[derive(Debug, Default)]
pub struct Counting<M> {
    inner: M,
    terms: AtomicU64,
    gradients: AtomicU64,
    hessians: AtomicU64,
    prior: AtomicU64,
    predictor: AtomicU64,
}

impl<M> Counting<M> {
    /// Wraps `inner` with all counters at zero.
    pub fn new(inner: M) -> Self {
        Self {
            inner,
            terms: AtomicU64::new(0),
            gradients: AtomicU64::new(0),
            hessians: AtomicU64::new(0),
            prior: AtomicU64::new(0),
            predictor: AtomicU64::new(0),
        }
    }

    /// The wrapped model.
    pub fn inner(&self) -> &M {
        &self.inner
    }

    /// Unwraps the model, dropping the counts.
    pub fn into_inner(self) -> M {
        self.inner
    }

    /// The per-datum evaluations made through this wrapper since construction or the last
    /// [`Counting::reset`].
    pub fn counts(&self) -> EvalCounts {
        EvalCounts {
            terms: self.terms.load(Ordering::Relaxed),
            gradients: self.gradients.load(Ordering::Relaxed),
            hessians: self.hessians.load(Ordering::Relaxed),
        }
    }

    /// Calls of [`LogPrior::log_prior`] and [`LogPrior::log_prior_grad`] (not per-datum
    /// evaluations; not part of [`Counting::counts`]).
    pub fn prior_evaluations(&self) -> u64 {
        self.prior.load(Ordering::Relaxed)
    }

    /// Indices passed to [`LinearPredictor::predictor_derivatives`] (each returns φ_i, φ_i′ and
    /// φ_i″ at once; the caller decides which kinds it counts, so these are not part of
    /// [`Counting::counts`]), and to the derivative methods of [`DispersionPredictor`].
    pub fn predictor_derivatives(&self) -> u64 {
        self.predictor.load(Ordering::Relaxed)
    }

    /// Sets every counter to zero.
    pub fn reset(&self) {
        for c in [&self.terms, &self.gradients, &self.hessians, &self.prior, &self.predictor] {
            c.store(0, Ordering::Relaxed);
        }
    }

    fn add_terms(&self, k: u64) {
        self.terms.fetch_add(k, Ordering::Relaxed);
    }

    fn add_terms_and_gradients(&self, k: u64) {
        self.terms.fetch_add(k, Ordering::Relaxed);
        self.gradients.fetch_add(k, Ordering::Relaxed);
    }

    fn add_hessians(&self, k: u64) {
        self.hessians.fetch_add(k, Ordering::Relaxed);
    }
}

/// Number of indices in `start..end` (none when `end ≤ start`).
fn range_len(start: u32, end: u32) -> u64 {
    u64::from(end.saturating_sub(start))
}

impl<M: Terms> Terms for Counting<M> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn num_terms(&self) -> usize {
        self.inner.num_terms()
    }

    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        self.add_terms(indices.len() as u64);
        self.inner.log_terms(theta, indices, out);
    }

    fn sum_log_terms(&self, theta: &[f64], indices: &[u32]) -> f64 {
        self.add_terms(indices.len() as u64);
        self.inner.sum_log_terms(theta, indices)
    }

    fn sum_log_terms_range(&self, theta: &[f64], start: u32, end: u32) -> f64 {
        self.add_terms(range_len(start, end));
        self.inner.sum_log_terms_range(theta, start, end)
    }

    fn shard_layout(&self) -> Option<&crate::shards::ShardLayout> {
        self.inner.shard_layout()
    }

    /// The inner model's (its remote passes are not counted here: their rows are elsewhere).
    fn shard_passes(&self) -> Option<&dyn crate::shard_passes::ShardPasses> {
        self.inner.shard_passes()
    }

    fn row_service(&self) -> Option<&dyn crate::row_service::RowService> {
        self.inner.row_service()
    }
}

impl<M: TermGradients> TermGradients for Counting<M> {
    fn log_terms_grad_sum(
        &self, theta: &[f64], indices: &[u32], out: &mut [f64], grad_sum: &mut [f64],
    ) -> f64 {
        self.add_terms_and_gradients(indices.len() as u64);
        self.inner.log_terms_grad_sum(theta, indices, out, grad_sum)
    }

    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        self.add_terms_and_gradients(indices.len() as u64);
        self.inner.log_terms_grads(theta, indices, out, grads);
    }

    fn sum_log_terms_grad_range(
        &self, theta: &[f64], start: u32, end: u32, grad_sum: &mut [f64],
    ) -> f64 {
        self.add_terms_and_gradients(range_len(start, end));
        self.inner.sum_log_terms_grad_range(theta, start, end, grad_sum)
    }
}

impl<M: TermHessians> TermHessians for Counting<M> {
    fn hessian_vector_products(&self, theta: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]) {
        self.add_hessians(indices.len() as u64);
        self.inner.hessian_vector_products(theta, indices, v, out);
    }

    fn sum_hessian(&self, theta: &[f64], indices: &[u32], hess: &mut [f64]) {
        self.add_hessians(indices.len() as u64);
        self.inner.sum_hessian(theta, indices, hess);
    }

    fn sum_hessian_vector_range(
        &self, theta: &[f64], start: u32, end: u32, v: &[f64], out: &mut [f64],
    ) {
        self.add_hessians(range_len(start, end));
        self.inner.sum_hessian_vector_range(theta, start, end, v, out);
    }

    fn sum_hessian_range(&self, theta: &[f64], start: u32, end: u32, hess: &mut [f64]) {
        self.add_hessians(range_len(start, end));
        self.inner.sum_hessian_range(theta, start, end, hess);
    }
}

impl<M: LinearPredictor> LinearPredictor for Counting<M> {
    fn linear_predictors(&self, theta: &[f64], indices: &[u32], eta: &mut [f64]) {
        self.inner.linear_predictors(theta, indices, eta);
    }

    fn predictor_derivatives(
        &self, indices: &[u32], eta: &[f64], phi: &mut [f64], d1: &mut [f64], d2: &mut [f64],
    ) {
        self.predictor.fetch_add(indices.len() as u64, Ordering::Relaxed);
        self.inner.predictor_derivatives(indices, eta, phi, d1, d2);
    }

    fn add_weighted_rows(&self, indices: &[u32], weights: &[f64], out: &mut [f64]) {
        self.inner.add_weighted_rows(indices, weights, out);
    }
}

/// The derivative methods add their indices to [`Counting::predictor_derivatives`].
impl<M: DispersionPredictor> DispersionPredictor for Counting<M> {
    fn dispersion_predictors(&self, theta: &[f64], indices: &[u32], eta: &mut [f64]) {
        self.inner.dispersion_predictors(theta, indices, eta);
    }

    fn predictor_scores_at(
        &self, tau: f64, indices: &[u32], eta: &[f64], out: &mut [(f64, f64, f64)],
    ) {
        self.predictor.fetch_add(indices.len() as u64, Ordering::Relaxed);
        self.inner.predictor_scores_at(tau, indices, eta, out);
    }

    fn predictor_derivatives_at(
        &self, tau: f64, indices: &[u32], eta: &[f64], out: &mut [PredictorDerivatives],
    ) {
        self.predictor.fetch_add(indices.len() as u64, Ordering::Relaxed);
        self.inner.predictor_derivatives_at(tau, indices, eta, out);
    }

    fn add_weighted_predictor_rows(&self, indices: &[u32], weights: &[f64], out: &mut [f64]) {
        self.inner.add_weighted_predictor_rows(indices, weights, out);
    }
}

impl<M: TermBounds> TermBounds for Counting<M> {
    fn term_difference_bound(&self, theta: &[f64], theta_prime: &[f64]) -> f64 {
        self.inner.term_difference_bound(theta, theta_prime)
    }
}

impl<M: TaylorRemainderBound> TaylorRemainderBound for Counting<M> {
    fn third_derivative_bound(&self) -> f64 {
        self.inner.third_derivative_bound()
    }

    fn proxy_remainder_bound(&self, center: &[f64], theta: &[f64], theta_prime: &[f64]) -> f64 {
        self.inner.proxy_remainder_bound(center, theta, theta_prime)
    }
}

impl<M: TermLipschitz> TermLipschitz for Counting<M> {
    fn term_lipschitz(&self, i: usize) -> f64 {
        self.inner.term_lipschitz(i)
    }
}

impl<M: TermCurvatureConstants> TermCurvatureConstants for Counting<M> {
    fn term_second_derivative_bound(&self, i: usize) -> f64 {
        self.inner.term_second_derivative_bound(i)
    }

    fn term_gradient_lipschitz(&self, i: usize) -> f64 {
        self.inner.term_gradient_lipschitz(i)
    }
}

impl<M: BoundedPredictorThirdDerivative> BoundedPredictorThirdDerivative for Counting<M> {
    fn predictor_third_derivative_bound(&self) -> f64 {
        self.inner.predictor_third_derivative_bound()
    }
}

impl<M: TermThirdDerivativeConstants> TermThirdDerivativeConstants for Counting<M> {
    fn term_third_derivative_bound(&self, i: usize) -> f64 {
        self.inner.term_third_derivative_bound(i)
    }

    fn term_hessian_lipschitz(&self, i: usize) -> f64 {
        self.inner.term_hessian_lipschitz(i)
    }
}

impl<M: TermGradientBounds> TermGradientBounds for Counting<M> {
    fn coordinate_gradient_bound(&self, j: usize) -> f64 {
        self.inner.coordinate_gradient_bound(j)
    }

    fn directional_gradient_bound(&self, v: &[f64]) -> f64 {
        self.inner.directional_gradient_bound(v)
    }

    fn term_coordinate_gradient_bound(&self, i: usize, j: usize) -> f64 {
        self.inner.term_coordinate_gradient_bound(i, j)
    }

    fn term_directional_gradient_bound(&self, i: usize, w: &[f64]) -> f64 {
        self.inner.term_directional_gradient_bound(i, w)
    }
}

impl<M: TermGradientLipschitz> TermGradientLipschitz for Counting<M> {
    fn coordinate_gradient_lipschitz(&self, j: usize) -> f64 {
        self.inner.coordinate_gradient_lipschitz(j)
    }

    fn gradient_lipschitz(&self) -> f64 {
        self.inner.gradient_lipschitz()
    }
}

impl<M: TermCurvatureBound> TermCurvatureBound for Counting<M> {
    /// Forwards, counting the pass over the data as N Hessian evaluations (the cost the trait
    /// documents, [`CurvatureBound::evals`]).
    fn curvature_bound(&self) -> CurvatureBound {
        self.add_hessians(self.inner.num_terms() as u64);
        self.inner.curvature_bound()
    }
}

impl<M: LogPrior> LogPrior for Counting<M> {
    fn log_prior(&self, theta: &[f64]) -> f64 {
        self.prior.fetch_add(1, Ordering::Relaxed);
        self.inner.log_prior(theta)
    }

    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.prior.fetch_add(1, Ordering::Relaxed);
        self.inner.log_prior_grad(theta, grad)
    }
}

impl<M: LogPriorHessian> LogPriorHessian for Counting<M> {
    fn add_log_prior_hessian(&self, theta: &[f64], hess: &mut [f64]) {
        self.inner.add_log_prior_hessian(theta, hess);
    }
}

impl<M: LogPriorCurvature> LogPriorCurvature for Counting<M> {
    fn prior_curvature_bound(&self) -> f64 {
        self.inner.prior_curvature_bound()
    }

    fn prior_hessian_is_constant(&self) -> bool {
        self.inner.prior_hessian_is_constant()
    }
}

impl<M: BinaryFactors> BinaryFactors for Counting<M> {
    fn num_variables(&self) -> usize {
        self.inner.num_variables()
    }

    fn num_factors(&self, i: usize) -> usize {
        self.inner.num_factors(i)
    }

    /// Forwards, counting `factors.len()` factor evaluations as terms (the unit the Gibbs
    /// kernels report).
    fn factor_log_ratios(&self, i: usize, x: &[f64], factors: &[u32], out: &mut [f64]) {
        self.add_terms(factors.len() as u64);
        self.inner.factor_log_ratios(i, x, factors, out);
    }

    fn log_ratio_bound(&self, i: usize) -> f64 {
        self.inner.log_ratio_bound(i)
    }
}

impl<M: ParameterNames> ParameterNames for Counting<M> {
    fn parameter_names(&self) -> Vec<String> {
        self.inner.parameter_names()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_quadratic::Quadratic;

    #[test]
    fn provided_methods_count_once_and_forward_values() {
        let (plain, m) = (Quadratic(1000), Counting::new(Quadratic(1000)));
        let theta = [2.5];
        assert_eq!(
            m.sum_log_terms_range(&theta, 10, 700),
            plain.sum_log_terms_range(&theta, 10, 700)
        );
        assert_eq!(m.counts(), EvalCounts::terms(690));
        m.reset();
        let (mut g, mut g_plain) = ([0.0], [0.0]);
        let v = m.sum_log_terms_grad_range(&theta, 0, 1000, &mut g);
        assert_eq!(v, plain.sum_log_terms_grad_range(&theta, 0, 1000, &mut g_plain));
        assert_eq!(g, g_plain);
        let mut hv = [0.0];
        m.sum_hessian_vector_range(&theta, 0, 300, &[2.0], &mut hv);
        assert_eq!(hv, [-600.0]);
        let mut h = [0.0];
        m.sum_hessian_range(&theta, 300, 1000, &mut h);
        assert_eq!(h, [-700.0]);
        assert_eq!(m.sum_log_terms_range(&theta, 5, 5), 0.0);
        assert_eq!(m.sum_log_terms_range(&theta, 6, 5), 0.0);
        assert_eq!(m.counts(), EvalCounts { terms: 1000, gradients: 1000, hessians: 1000 });
    }

    #[test]
    fn counters_are_exact_under_parallel_calls() {
        let m = Counting::new(Quadratic(100));
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..250 {
                        m.log_terms(&[0.0], &[1, 2, 3], &mut [0.0; 3]);
                    }
                });
            }
        });
        assert_eq!(m.counts(), EvalCounts::terms(3000));
    }
}
