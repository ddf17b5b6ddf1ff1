//! Bayesian logistic regression.

use std::sync::Arc;

use rayon::prelude::*;
use tallmc_core::{
    LinearPredictor, LogPrior, LogPriorHessian, ParameterNames, TaylorRemainderBound, TermBounds,
    TermGradients, TermHessians, Terms,
};

use crate::data::{Dataset, DesignMatrix, DesignOptions, PASS_CHUNK_ROWS, Rows, with_rows};
use crate::error::{Error, Result};
use crate::prior::NormalPrior;

/// Bayesian logistic regression with an independent N(0, s²) prior on every coefficient.
///
/// With x̃_i the i-th row of the design ([`DesignMatrix`]: covariates, optional intercept,
/// optional standardization), η_i = x̃_iᵀθ and σ(η) = 1/(1 + e^{−η}):
///
/// ```text
/// ℓ_i(θ)   = y_i η_i − log(1 + e^{η_i})          y_i ∈ {0, 1}
/// ∇ℓ_i(θ)  = (y_i − σ(η_i)) x̃_i
/// ∇²ℓ_i(θ) = −σ(η_i)(1 − σ(η_i)) x̃_i x̃_iᵀ        (rank one: H_i v costs O(d))
/// log p(θ) = −‖θ‖²/(2s²) − (d/2) log(2πs²)
/// ```
///
/// ℓ_i is evaluated as `(y_i η_i − max(η_i, 0)) − log1p(e^{−|η_i|})` (the bracket is exactly 0 or
/// −|η_i| for y_i ∈ {0, 1}, so even tiny log-probabilities such as ℓ = −e^{−40} keep full
/// relative accuracy), and σ, 1 − σ come from the same e^{−|η|}: terms are finite with the right
/// limits for any finite η (at η = ±800: ℓ = 0 or −800).
///
/// **Term bound** ([`TermBounds`]): ∂ℓ_i/∂η = y_i − σ(η) ∈ (−1, 1), so ℓ_i is 1-Lipschitz in η
/// and, by Cauchy–Schwarz,
///
/// ```text
/// |ℓ_i(θ′) − ℓ_i(θ)| ≤ |x̃_iᵀ(θ′ − θ)| ≤ ‖x̃_i‖₂ ‖θ′ − θ‖₂ ≤ L ‖θ′ − θ‖₂,   L = max_i ‖x̃_i‖₂,
/// ```
///
/// the bound of Bardenet, Doucet & Holmes (2014, §4.2). The per-datum constant ‖x̃_i‖₂ is
/// [`LogisticRegression::lipschitz_constant`]; L is precomputed once (one pass over the data).
///
/// **Third-derivative bound** ([`TaylorRemainderBound`], for the confidence sampler's Taylor
/// proxies, Bardenet, Doucet & Holmes 2017, §7.2). With φ_i(η) = y_i η − log(1 + e^η),
///
/// ```text
/// φ_i′ = y_i − σ,   φ_i″ = −σ(1 − σ),   φ_i‴ = −σ(1 − σ)(1 − 2σ)          (σ = σ(η), y_i drops out)
/// ∂³ℓ_i/∂θ_j∂θ_k∂θ_l = φ_i‴(η_i) x̃_ij x̃_ik x̃_il.
/// ```
///
/// On s = σ ∈ (0, 1), f(s) = s(1 − s)(1 − 2s) has f′(s) = 1 − 6s + 6s², zero at
/// s = (3 ± √3)/6, where s(1 − s) = 1/6 and |1 − 2s| = 1/√3: so |φ_i‴| ≤ 1/(6√3) ≈ 0.0962 and
///
/// ```text
/// M₃ = max_{i,j} |x̃_ij|³ / (6√3),
/// ```
///
/// with max_{i,j} |x̃_ij| = max_i ‖x̃_i‖_∞ computed in the same construction pass as L.
///
/// **Cost**: one term, gradient or Hessian-vector product is O(d) (one dot product, plus one
/// row update for gradients); `sum_hessian` is O(d²) per datum. Parameter names: `theta.1`, …,
/// `theta.d`.
///
/// ```
/// use tallmc_core::{Terms, TermGradients};
/// use tallmc_models::{Dataset, DesignOptions, LogisticRegression};
///
/// let x = vec![0.5, -1.0, 2.0, 0.1, -0.3, 0.7];
/// let data = Dataset::with_default_names(x, vec![1.0, 0.0, 1.0], 2)?;
/// let model = LogisticRegression::new(data, DesignOptions::default().with_intercept(true), 10.0)?;
/// assert_eq!(model.dim(), 3);
/// let theta = [0.1, 0.2, -0.3];
/// let mut grad = [0.0; 3];
/// let ll = model.sum_log_terms_grad_range(&theta, 0, 3, &mut grad);
/// assert!(ll < 0.0);
/// # Ok::<(), tallmc_models::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct LogisticRegression {
    design: DesignMatrix,
    prior: NormalPrior,
    max_row_norm: f64,
    max_abs_entry: f64,
}

/// max_η |d³/dη³ log σ(η)| = max_{s∈(0,1)} s(1 − s)|1 − 2s| = 1/(6√3) (see
/// [`LogisticRegression`]).
pub(crate) const LOGISTIC_THIRD_DERIVATIVE_MAX: f64 = 1.0 / (6.0 * 1.732_050_807_568_877_2);

/// Indices per stack-allocated chunk of the two-pass batch loops.
const LANE: usize = 64;

/// (ℓ, y − σ(η), σ(η)(1 − σ(η))) for a response y ∈ {0, 1}, stable for any finite η.
#[inline(always)]
fn logistic_parts(y: f64, eta: f64) -> (f64, f64, f64) {
    let e = (-eta.abs()).exp();
    let q = 1.0 / (1.0 + e);
    let (sigma, one_minus) = if eta >= 0.0 { (q, e * q) } else { (e * q, q) };
    let ll = (y * eta - eta.max(0.0)) - e.ln_1p();
    (ll, y * one_minus - (1.0 - y) * sigma, e * q * q)
}

/// ℓ alone.
#[inline(always)]
fn logistic_ll(y: f64, eta: f64) -> f64 {
    (y * eta - eta.max(0.0)) - (-eta.abs()).exp().ln_1p()
}

impl LogisticRegression {
    /// A logistic regression of `data.y()` (every value 0 or 1) on the design built from
    /// `data` with `options`, with prior sd `prior_sd` > 0 on every coefficient.
    ///
    /// Errors: a response other than 0 or 1 (naming the row), `prior_sd` not finite and > 0, a
    /// design with no columns, a constant column when standardizing. Cost: one pass over y and
    /// one over X (for max_i ‖x̃_i‖), two more when standardizing.
    pub fn new(
        data: impl Into<Arc<Dataset>>,
        options: DesignOptions,
        prior_sd: f64,
    ) -> Result<Self> {
        Self::from_design(DesignMatrix::new(data, options)?, prior_sd)
    }

    /// Like [`LogisticRegression::new`] from an existing design.
    pub fn from_design(design: DesignMatrix, prior_sd: f64) -> Result<Self> {
        let prior = NormalPrior::new(prior_sd)?;
        crate::data::check_indexable(design.len())?;
        if design.dim() == 0 {
            return Err(Error::invalid(
                "design columns",
                0,
                "at least one column (add covariates or an intercept)",
            ));
        }
        check_binary_response(design.y())?;
        let (max_row_norm, max_abs_entry) = design.max_row_norm_and_abs_entry();
        Ok(Self { design, prior, max_row_norm, max_abs_entry })
    }

    /// The design matrix.
    pub fn design(&self) -> &DesignMatrix {
        &self.design
    }

    /// The prior standard deviation s.
    pub fn prior_sd(&self) -> f64 {
        self.prior.sd()
    }

    /// ‖x̃_i‖₂: the Lipschitz constant of ℓ_i in θ (|ℓ_i(θ′) − ℓ_i(θ)| ≤ ‖x̃_i‖ ‖θ′ − θ‖).
    pub fn lipschitz_constant(&self, i: usize) -> f64 {
        self.design.row_norm(i)
    }

    /// max_i ‖x̃_i‖₂ (precomputed).
    pub fn max_row_norm(&self) -> f64 {
        self.max_row_norm
    }

    /// max_{i,j} |x̃_ij| = max_i ‖x̃_i‖_∞ (precomputed).
    pub fn max_abs_entry(&self) -> f64 {
        self.max_abs_entry
    }

    /// ℓ_i(θ) for one datum.
    pub fn log_term(&self, theta: &[f64], i: usize) -> f64 {
        logistic_ll(self.design.y()[i], self.design.dot(i, theta))
    }
}

/// Errors on the first response that is not exactly 0 or 1.
pub(crate) fn check_binary_response(y: &[f64]) -> Result<()> {
    let bad = y.par_chunks(PASS_CHUNK_ROWS).enumerate().find_map_first(|(c, chunk)| {
        chunk
            .iter()
            .position(|&v| v != 0.0 && v != 1.0)
            .map(|k| (c * PASS_CHUNK_ROWS + k, chunk[k]))
    });
    match bad {
        Some((row, value)) => Err(Error::InvalidResponse { row, value, expected: "0 or 1" }),
        None => Ok(()),
    }
}

impl Terms for LogisticRegression {
    fn dim(&self) -> usize {
        self.design.dim()
    }

    fn num_terms(&self) -> usize {
        self.design.len()
    }

    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        let y = self.design.y();
        with_rows!(self.design, r => {
            for (idx, out) in indices.chunks(LANE).zip(out.chunks_mut(LANE)) {
                // Pass 1: the gathers (independent loads, so many rows are in flight at once).
                let mut ys = [0.0; LANE];
                for ((o, yk), &i) in out.iter_mut().zip(ys.iter_mut()).zip(idx) {
                    *o = r.dot(i as usize, theta);
                    *yk = y[i as usize];
                }
                // Pass 2: the transcendental functions.
                for (o, &yk) in out.iter_mut().zip(&ys) {
                    *o = logistic_ll(yk, *o);
                }
            }
        })
    }

    fn sum_log_terms(&self, theta: &[f64], indices: &[u32]) -> f64 {
        let y = self.design.y();
        with_rows!(self.design, r => {
            let mut total = 0.0;
            let mut etas = [0.0; LANE];
            let mut ys = [0.0; LANE];
            for idx in indices.chunks(LANE) {
                for ((e, yk), &i) in etas.iter_mut().zip(ys.iter_mut()).zip(idx) {
                    *e = r.dot(i as usize, theta);
                    *yk = y[i as usize];
                }
                for (e, &yk) in etas[..idx.len()].iter().zip(&ys) {
                    total += logistic_ll(yk, *e);
                }
            }
            total
        })
    }

    fn sum_log_terms_range(&self, theta: &[f64], start: u32, end: u32) -> f64 {
        let y = &self.design.y()[start as usize..end as usize];
        with_rows!(self.design, r => {
            let mut total = 0.0;
            let mut etas = [0.0; LANE];
            for (c, ys) in y.chunks(LANE).enumerate() {
                let base = start as usize + c * LANE;
                for (k, e) in etas[..ys.len()].iter_mut().enumerate() {
                    *e = r.dot(base + k, theta);
                }
                for (e, &yk) in etas.iter().zip(ys) {
                    total += logistic_ll(yk, *e);
                }
            }
            total
        })
    }
}

impl TermGradients for LogisticRegression {
    fn log_terms_grad_sum(
        &self,
        theta: &[f64],
        indices: &[u32],
        out: &mut [f64],
        grad_sum: &mut [f64],
    ) -> f64 {
        let y = self.design.y();
        with_rows!(self.design, r => {
            let mut total = 0.0;
            for (idx, out) in indices.chunks(LANE).zip(out.chunks_mut(LANE)) {
                // Pass 1: the gathers; pass 2: terms and row updates (rows now in cache).
                let mut ys = [0.0; LANE];
                for ((o, yk), &i) in out.iter_mut().zip(ys.iter_mut()).zip(idx) {
                    *o = r.dot(i as usize, theta);
                    *yk = y[i as usize];
                }
                for ((o, &yk), &i) in out.iter_mut().zip(&ys).zip(idx) {
                    let (ll, resid, _) = logistic_parts(yk, *o);
                    *o = ll;
                    total += ll;
                    r.add_row(i as usize, resid, grad_sum);
                }
            }
            total
        })
    }

    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        let y = self.design.y();
        let d = self.design.dim();
        with_rows!(self.design, r => {
            for ((o, &i), g) in out.iter_mut().zip(indices).zip(grads.chunks_exact_mut(d)) {
                let i = i as usize;
                let (ll, resid, _) = logistic_parts(y[i], r.dot(i, theta));
                *o = ll;
                r.set_row(i, resid, g);
            }
        })
    }

    fn sum_log_terms_grad_range(
        &self,
        theta: &[f64],
        start: u32,
        end: u32,
        grad_sum: &mut [f64],
    ) -> f64 {
        let y = &self.design.y()[start as usize..end as usize];
        with_rows!(self.design, r => {
            let mut total = 0.0;
            let mut etas = [0.0; LANE];
            for (c, ys) in y.chunks(LANE).enumerate() {
                let base = start as usize + c * LANE;
                for (k, e) in etas[..ys.len()].iter_mut().enumerate() {
                    *e = r.dot(base + k, theta);
                }
                for (k, (e, &yk)) in etas.iter().zip(ys).enumerate() {
                    let (ll, resid, _) = logistic_parts(yk, *e);
                    total += ll;
                    r.add_row(base + k, resid, grad_sum);
                }
            }
            total
        })
    }
}

impl TermHessians for LogisticRegression {
    fn hessian_vector_products(&self, theta: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]) {
        let y = self.design.y();
        let d = self.design.dim();
        with_rows!(self.design, r => {
            for (&i, row) in indices.iter().zip(out.chunks_exact_mut(d)) {
                let i = i as usize;
                let (_, _, w) = logistic_parts(y[i], r.dot(i, theta));
                r.set_row(i, -w * r.dot(i, v), row);
            }
        })
    }

    fn sum_hessian(&self, theta: &[f64], indices: &[u32], hess: &mut [f64]) {
        let y = self.design.y();
        let d = self.design.dim();
        with_rows!(self.design, r => {
            for &i in indices {
                let i = i as usize;
                let (_, _, w) = logistic_parts(y[i], r.dot(i, theta));
                for j in 0..d {
                    let a = -w * r.get(i, j);
                    r.add_row(i, a, &mut hess[j * d..(j + 1) * d]);
                }
            }
        })
    }
}

/// η_i = x̃_iᵀθ and φ_i(η) = y_i η − log(1 + e^η), φ_i′ = y_i − σ(η), φ_i″ = −σ(η)(1 − σ(η)),
/// evaluated stably for any finite η (as the terms are).
impl LinearPredictor for LogisticRegression {
    fn linear_predictors(&self, theta: &[f64], indices: &[u32], eta: &mut [f64]) {
        with_rows!(self.design, r => {
            for (e, &i) in eta.iter_mut().zip(indices) {
                *e = r.dot(i as usize, theta);
            }
        })
    }

    fn predictor_derivatives(
        &self,
        indices: &[u32],
        eta: &[f64],
        phi: &mut [f64],
        d1: &mut [f64],
        d2: &mut [f64],
    ) {
        let y = self.design.y();
        for (k, &i) in indices.iter().enumerate() {
            let (ll, resid, w) = logistic_parts(y[i as usize], eta[k]);
            phi[k] = ll;
            d1[k] = resid;
            d2[k] = -w;
        }
    }

    fn add_weighted_rows(&self, indices: &[u32], weights: &[f64], out: &mut [f64]) {
        with_rows!(self.design, r => {
            for (&w, &i) in weights.iter().zip(indices) {
                r.add_row(i as usize, w, out);
            }
        })
    }
}

impl TermBounds for LogisticRegression {
    /// C(θ, θ′) = ‖θ′ − θ‖₂ · max_i ‖x̃_i‖₂ (see the type's docs).
    fn term_difference_bound(&self, theta: &[f64], theta_prime: &[f64]) -> f64 {
        let dist: f64 = theta.iter().zip(theta_prime).map(|(a, b)| (b - a) * (b - a)).sum();
        dist.sqrt() * self.max_row_norm
    }
}

impl TaylorRemainderBound for LogisticRegression {
    /// M₃ = max_{i,j} |x̃_ij|³ / (6√3) (see the type's docs).
    fn third_derivative_bound(&self) -> f64 {
        self.max_abs_entry.powi(3) * LOGISTIC_THIRD_DERIVATIVE_MAX
    }
}

impl LogPrior for LogisticRegression {
    fn log_prior(&self, theta: &[f64]) -> f64 {
        self.prior.log_density(theta)
    }

    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.prior.log_density_grad(theta, grad)
    }
}

impl LogPriorHessian for LogisticRegression {
    fn add_log_prior_hessian(&self, _theta: &[f64], hess: &mut [f64]) {
        self.prior.add_hessian(self.design.dim(), hess);
    }
}

impl ParameterNames for LogisticRegression {
    fn parameter_names(&self) -> Vec<String> {
        (1..=self.design.dim()).map(|j| format!("theta.{j}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// φ‴(η) = −σ(1 − σ)(1 − 2σ) by central differences of φ″ = −σ(1 − σ), and its maximum on a
    /// fine grid equals the closed form 1/(6√3) (attained at σ = (3 ± √3)/6).
    #[test]
    fn third_derivative_constant_matches_finite_differences() {
        let d2 = |eta: f64| -logistic_parts(1.0, eta).2;
        let d3 = |eta: f64| {
            let s = 1.0 / (1.0 + (-eta).exp());
            -s * (1.0 - s) * (1.0 - 2.0 * s)
        };
        let mut max_abs: f64 = 0.0;
        for k in -4000..=4000 {
            let eta = f64::from(k) * 0.002;
            let h = 1e-4;
            let fd = (d2(eta + h) - d2(eta - h)) / (2.0 * h);
            assert!((fd - d3(eta)).abs() < 1e-8, "η = {eta}: {fd} vs {}", d3(eta));
            max_abs = max_abs.max(d3(eta).abs());
        }
        assert!(max_abs <= LOGISTIC_THIRD_DERIVATIVE_MAX);
        assert!(max_abs > LOGISTIC_THIRD_DERIVATIVE_MAX * (1.0 - 1e-6), "{max_abs}");
        assert!((LOGISTIC_THIRD_DERIVATIVE_MAX - 1.0 / (6.0 * 3f64.sqrt())).abs() < 1e-16);
        let s: f64 = (3.0 - 3f64.sqrt()) / 6.0;
        assert!((s * (1.0 - s) * (1.0 - 2.0 * s) - LOGISTIC_THIRD_DERIVATIVE_MAX).abs() < 1e-15);
    }

    #[test]
    fn extreme_linear_predictors_are_finite_with_correct_limits() {
        for (y, eta, want_ll, want_resid) in [
            (1.0, 800.0, 0.0, 0.0),
            (0.0, 800.0, -800.0, -1.0),
            (1.0, -800.0, -800.0, 1.0),
            (0.0, -800.0, 0.0, 0.0),
        ] {
            let (ll, resid, w) = logistic_parts(y, eta);
            assert_eq!(ll, want_ll);
            assert_eq!(resid, want_resid);
            assert_eq!(w, 0.0);
            assert_eq!(logistic_ll(y, eta), want_ll);
        }
        let (ll, resid, w) = logistic_parts(1.0, 0.0);
        assert!((ll + std::f64::consts::LN_2).abs() < 1e-15);
        assert_eq!(resid, 0.5);
        assert_eq!(w, 0.25);
        // Tiny tail probabilities keep their relative accuracy.
        let (ll, resid, _) = logistic_parts(1.0, 40.0);
        assert!((ll + (-40.0f64).exp()).abs() < 1e-30);
        assert!((resid - (-40.0f64).exp()).abs() < 1e-30);
    }
}
