//! A one-dimensional test model shared by the crate's unit tests.

use crate::{TermGradients, TermHessians, Terms};

/// ℓ_i(θ) = −(θ − i)²/2 in one dimension, i < n (the tuple field): every required method of
/// the per-datum traits, for unit tests of their provided methods and of wrappers.
pub(crate) struct Quadratic(pub(crate) usize);

impl Terms for Quadratic {
    fn dim(&self) -> usize {
        1
    }
    fn num_terms(&self) -> usize {
        self.0
    }
    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        for (o, &i) in out.iter_mut().zip(indices) {
            *o = -0.5 * (theta[0] - f64::from(i)).powi(2);
        }
    }
}

impl TermGradients for Quadratic {
    fn log_terms_grad_sum(
        &self, theta: &[f64], indices: &[u32], out: &mut [f64], grad_sum: &mut [f64],
    ) -> f64 {
        self.log_terms(theta, indices, out);
        for &i in indices {
            grad_sum[0] -= theta[0] - f64::from(i);
        }
        out.iter().sum()
    }
    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        self.log_terms(theta, indices, out);
        for (g, &i) in grads.iter_mut().zip(indices) {
            *g = -(theta[0] - f64::from(i));
        }
    }
}

impl TermHessians for Quadratic {
    fn hessian_vector_products(&self, _theta: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]) {
        for o in &mut out[..indices.len()] {
            *o = -v[0];
        }
    }
    fn sum_hessian(&self, _theta: &[f64], indices: &[u32], hess: &mut [f64]) {
        hess[0] -= indices.len() as f64;
    }
}
