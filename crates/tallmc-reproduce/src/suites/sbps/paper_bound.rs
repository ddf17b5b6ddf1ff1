//! lipSBPS with the bound of Pakman et al. (2017), Supp. F: the logistic regression of Fig. 4
//! with its directional per-datum gradient bound replaced by the paper's constant,
//!
//! ```text
//! |⟨∇ℓ_i(w), v⟩| ≤ ‖x_i‖ ‖v‖ ≤ L ‖v‖,    L = √D max_{i,d} |x_id|,
//! ```
//!
//! so that [`LipSbps`](tallmc_samplers::LipSbps) proposes at rate N·L‖v‖, as in the paper
//! (REFERENCES §5, read in SBPS-public). The library's own bound for logistic regression,
//! B(v) = min(‖v‖ max_i ‖x_i‖, Σ_j |v_j| max_i |x_ij|), is never larger and here about 5×
//! smaller (max_i ‖x_i‖ ≈ 8 against L ≈ 40), which makes the library's lipSBPS about 5× cheaper
//! per unit of trajectory time than the paper's; Fig. 4 runs both.
//!
//! Everything else is the wrapped model's (delegated).

use tallmc_core::{
    LogPrior, LogPriorCurvature, LogPriorHessian, TermGradientBounds, TermGradients, Terms,
};
use tallmc_models::LogisticRegression;

/// A logistic regression whose directional gradient bound is the paper's L‖v‖ (module docs).
#[derive(Debug, Clone, Copy)]
pub struct PaperBound<'a> {
    model: &'a LogisticRegression,
    l: f64,
}

impl<'a> PaperBound<'a> {
    /// Wraps `model`: L = √D max_{i,d} |x_id|.
    pub fn new(model: &'a LogisticRegression) -> Self {
        let l = (model.dim() as f64).sqrt() * model.max_abs_entry();
        Self { model, l }
    }

    /// The paper's constant L.
    pub fn constant(&self) -> f64 {
        self.l
    }
}

impl Terms for PaperBound<'_> {
    fn dim(&self) -> usize {
        self.model.dim()
    }
    fn num_terms(&self) -> usize {
        self.model.num_terms()
    }
    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        self.model.log_terms(theta, indices, out);
    }
}

impl TermGradients for PaperBound<'_> {
    fn log_terms_grad_sum(
        &self, theta: &[f64], indices: &[u32], out: &mut [f64], grad: &mut [f64],
    ) -> f64 {
        self.model.log_terms_grad_sum(theta, indices, out, grad)
    }
    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        self.model.log_terms_grads(theta, indices, out, grads);
    }
}

impl LogPrior for PaperBound<'_> {
    fn log_prior(&self, theta: &[f64]) -> f64 {
        self.model.log_prior(theta)
    }
    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.model.log_prior_grad(theta, grad)
    }
}

impl LogPriorHessian for PaperBound<'_> {
    fn add_log_prior_hessian(&self, theta: &[f64], hess: &mut [f64]) {
        self.model.add_log_prior_hessian(theta, hess);
    }
}

impl LogPriorCurvature for PaperBound<'_> {
    fn prior_curvature_bound(&self) -> f64 {
        self.model.prior_curvature_bound()
    }
    fn prior_hessian_is_constant(&self) -> bool {
        self.model.prior_hessian_is_constant()
    }
}

impl TermGradientBounds for PaperBound<'_> {
    fn coordinate_gradient_bound(&self, j: usize) -> f64 {
        self.model.coordinate_gradient_bound(j)
    }
    /// L‖v‖₂ (the paper's; ≥ the wrapped model's bound).
    fn directional_gradient_bound(&self, v: &[f64]) -> f64 {
        self.l * v.iter().map(|a| a * a).sum::<f64>().sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::sbps::problem::logistic_model;

    #[test]
    fn the_paper_bound_dominates_the_library_bound_and_every_datum() {
        let model = logistic_model(200, 5).unwrap();
        let p = PaperBound::new(&model);
        let v = [0.3, -0.5, 0.1, 0.7, -0.2];
        assert!(p.directional_gradient_bound(&v) >= model.directional_gradient_bound(&v));
        let theta = [1.0, -2.0, 0.5, 3.0, -1.0];
        let idx: Vec<u32> = (0..200).collect();
        let mut out = vec![0.0; 200];
        let mut grads = vec![0.0; 200 * 5];
        model.log_terms_grads(&theta, &idx, &mut out, &mut grads);
        for g in grads.chunks_exact(5) {
            let dot: f64 = g.iter().zip(&v).map(|(a, b)| a * b).sum();
            assert!(dot.abs() <= p.directional_gradient_bound(&v));
        }
    }
}
