//! Bayesian linear regression with a known noise standard deviation (the Gaussian regression of
//! Dang et al. 2019, §6.7).

use std::sync::Arc;

use tallmc_core::linalg::Cholesky;
use tallmc_core::{
    LinearPredictor, LogPrior, LogPriorHessian, ParameterNames, TermGradients, TermHessians, Terms,
};

use crate::data::{Dataset, DesignMatrix, DesignOptions, Rows, with_rows};
use crate::error::{Error, Result, check_positive};
use crate::gaussian::HALF_LN_2PI;
use crate::prior::NormalPrior;

/// y_i = x̃_iᵀβ + e_i, e_i ~ N(0, σ²) i.i.d. with σ **known**, θ = β (dimension d = the design's
/// columns), prior β ~ N(0, s² I_d).
///
/// With r_i = y_i − x̃_iᵀβ:
///
/// ```text
/// ℓ_i(β)   = −½ log(2πσ²) − r_i²/(2σ²)
/// ∇ℓ_i(β)  = r_i x̃_i / σ²
/// ∇²ℓ_i(β) = −x̃_i x̃_iᵀ / σ²                 (rank one, constant in β)
/// log p(β) = −‖β‖²/(2s²) − (d/2) log(2πs²)
/// ```
///
/// As a [`LinearPredictor`]: η_i = x̃_iᵀβ, φ_i(η) = −½ log(2πσ²) − (y_i − η)²/(2σ²),
/// φ_i′ = (y_i − η)/σ², φ_i″ = −1/σ².
///
/// **Posterior** (conjugate, [`GaussianRegression::posterior_mean_covariance`]): Gaussian with
///
/// ```text
/// precision  P = X̃ᵀX̃/σ² + I/s²,      mean  μ = P⁻¹ X̃ᵀy/σ²,      covariance P⁻¹.
/// ```
///
/// The log posterior is exactly quadratic in β, so a second-order Taylor control variate
/// reproduces every ℓ_i exactly (Dang et al. 2019, §6.7: the difference estimator's variance is
/// zero). Since the Hessian does not depend on β, the Laplace approximation *is* the posterior.
///
/// No term bound: ℓ_i is unbounded in β. **Cost**: O(d) per term, gradient or Hessian-vector
/// product; O(d²) per datum for `sum_hessian`. Names: `beta.1`, …, `beta.d`.
///
/// ```
/// use tallmc_core::{TermGradients, Terms};
/// use tallmc_models::{DesignOptions, GaussianRegression, synthetic};
///
/// let sim = synthetic::gaussian_regression(500, 3, 7)?;
/// let model = GaussianRegression::new(sim.data, DesignOptions::default(), 1.0, 5.0)?;
/// assert_eq!(model.dim(), 3);
/// let (mean, cov) = model.posterior_mean_covariance()?;
/// // The posterior mean is close to the β that generated the data (posterior sd ≈ 1/√500).
/// for (m, b) in mean.iter().zip(&sim.theta_true) {
///     assert!((m - b).abs() < 0.25);
/// }
/// assert!(cov[0] > 0.0 && cov[0] < 0.01);
/// // At the posterior mean the gradient of the log posterior vanishes.
/// let mut grad = vec![0.0; 3];
/// model.sum_log_terms_grad_range(&mean, 0, 500, &mut grad);
/// for (g, m) in grad.iter().zip(&mean) {
///     assert!((g - m / 25.0).abs() < 1e-8);
/// }
/// # Ok::<(), tallmc_models::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct GaussianRegression {
    design: DesignMatrix,
    prior: NormalPrior,
    sigma: f64,
    inv_var: f64,
    log_norm: f64,
}

impl GaussianRegression {
    /// A Gaussian regression of `data.y()` on the design built from `data` with `options`, with
    /// known noise sd `sigma` and prior sd `prior_sd` on every coefficient.
    ///
    /// Errors: `sigma` or `prior_sd` not finite and > 0 (naming the value), a design with no
    /// columns, a constant column when standardizing, and a NaN or infinite covariate or
    /// response (naming its row, column and value — memory-mapped data may skip the loader's
    /// check). Cost: one pass over the data.
    pub fn new(
        data: impl Into<Arc<Dataset>>,
        options: DesignOptions,
        sigma: f64,
        prior_sd: f64,
    ) -> Result<Self> {
        check_positive("sigma", sigma)?;
        Self::from_design(DesignMatrix::new(data, options)?, sigma, prior_sd)
    }

    /// Like [`GaussianRegression::new`] from an existing design.
    pub fn from_design(design: DesignMatrix, sigma: f64, prior_sd: f64) -> Result<Self> {
        check_positive("sigma", sigma)?;
        let prior = NormalPrior::new(prior_sd)?;
        crate::data::check_indexable(design.len())?;
        if design.dim() == 0 {
            return Err(Error::invalid(
                "design columns",
                0,
                "at least one column (add covariates or an intercept)",
            ));
        }
        design.data().check_finite()?;
        Ok(Self {
            design,
            prior,
            sigma,
            inv_var: 1.0 / (sigma * sigma),
            log_norm: -HALF_LN_2PI - sigma.ln(),
        })
    }

    /// The design matrix.
    pub fn design(&self) -> &DesignMatrix {
        &self.design
    }

    /// The known noise standard deviation σ.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The prior standard deviation s.
    pub fn prior_sd(&self) -> f64 {
        self.prior.sd()
    }

    /// The exact posterior: mean μ = P⁻¹X̃ᵀy/σ² and covariance P⁻¹ (d × d, row-major), with
    /// P = X̃ᵀX̃/σ² + I/s². Cost: one pass of n Hessians and n gradients (O(n d²)), then a
    /// Cholesky factorization (O(d³)).
    pub fn posterior_mean_covariance(&self) -> Result<(Vec<f64>, Vec<f64>)> {
        let d = self.dim();
        let n = self.num_terms() as u32;
        let zero = vec![0.0; d];
        // −P (the Hessian of the log posterior, constant in β) and X̃ᵀy/σ² (the gradient of the
        // log likelihood at β = 0).
        let mut neg_precision = vec![0.0; d * d];
        self.sum_hessian_range(&zero, 0, n, &mut neg_precision);
        self.add_log_prior_hessian(&zero, &mut neg_precision);
        let precision: Vec<f64> = neg_precision.iter().map(|v| -v).collect();
        let mut mean = vec![0.0; d];
        self.sum_log_terms_grad_range(&zero, 0, n, &mut mean);
        let chol = Cholesky::new(&precision, d, "posterior precision X'X/sigma^2 + I/s^2")
            .map_err(|e| Error::invalid("posterior precision", e, "a positive definite matrix"))?;
        chol.solve_in_place(&mut mean);
        Ok((mean, chol.inverse()))
    }

    #[inline(always)]
    fn ll(&self, y: f64, eta: f64) -> f64 {
        let r = y - eta;
        self.log_norm - 0.5 * r * r * self.inv_var
    }
}

impl Terms for GaussianRegression {
    fn dim(&self) -> usize {
        self.design.dim()
    }

    fn num_terms(&self) -> usize {
        self.design.len()
    }

    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        let y = self.design.y();
        with_rows!(self.design, r => {
            for (o, &i) in out.iter_mut().zip(indices) {
                let i = i as usize;
                *o = self.ll(y[i], r.dot(i, theta));
            }
        })
    }

    fn sum_log_terms(&self, theta: &[f64], indices: &[u32]) -> f64 {
        let y = self.design.y();
        let ss = with_rows!(self.design, r => {
            let mut ss = 0.0;
            for &i in indices {
                let i = i as usize;
                let res = y[i] - r.dot(i, theta);
                ss += res * res;
            }
            ss
        });
        self.log_norm * indices.len() as f64 - 0.5 * ss * self.inv_var
    }

    fn sum_log_terms_range(&self, theta: &[f64], start: u32, end: u32) -> f64 {
        let y = self.design.y();
        let ss = with_rows!(self.design, r => {
            let mut ss = 0.0;
            for i in start as usize..end as usize {
                let res = y[i] - r.dot(i, theta);
                ss += res * res;
            }
            ss
        });
        self.log_norm * f64::from(end.saturating_sub(start)) - 0.5 * ss * self.inv_var
    }
}

impl TermGradients for GaussianRegression {
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
            for (o, &i) in out.iter_mut().zip(indices) {
                let i = i as usize;
                let eta = r.dot(i, theta);
                let ll = self.ll(y[i], eta);
                *o = ll;
                total += ll;
                r.add_row(i, (y[i] - eta) * self.inv_var, grad_sum);
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
                let eta = r.dot(i, theta);
                *o = self.ll(y[i], eta);
                r.set_row(i, (y[i] - eta) * self.inv_var, g);
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
        let y = self.design.y();
        with_rows!(self.design, r => {
            let mut ss = 0.0;
            for i in start as usize..end as usize {
                let res = y[i] - r.dot(i, theta);
                ss += res * res;
                r.add_row(i, res * self.inv_var, grad_sum);
            }
            self.log_norm * f64::from(end.saturating_sub(start)) - 0.5 * ss * self.inv_var
        })
    }
}

impl TermHessians for GaussianRegression {
    fn hessian_vector_products(&self, _theta: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]) {
        let d = self.design.dim();
        with_rows!(self.design, r => {
            for (&i, row) in indices.iter().zip(out.chunks_exact_mut(d)) {
                let i = i as usize;
                r.set_row(i, -self.inv_var * r.dot(i, v), row);
            }
        })
    }

    fn sum_hessian(&self, _theta: &[f64], indices: &[u32], hess: &mut [f64]) {
        let d = self.design.dim();
        with_rows!(self.design, r => {
            for &i in indices {
                let i = i as usize;
                for j in 0..d {
                    let a = -self.inv_var * r.get(i, j);
                    r.add_row(i, a, &mut hess[j * d..(j + 1) * d]);
                }
            }
        })
    }
}

impl LinearPredictor for GaussianRegression {
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
            let v = y[i as usize];
            phi[k] = self.ll(v, eta[k]);
            d1[k] = (v - eta[k]) * self.inv_var;
            d2[k] = -self.inv_var;
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

impl LogPrior for GaussianRegression {
    fn log_prior(&self, theta: &[f64]) -> f64 {
        self.prior.log_density(theta)
    }

    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.prior.log_density_grad(theta, grad)
    }
}

impl LogPriorHessian for GaussianRegression {
    fn add_log_prior_hessian(&self, _theta: &[f64], hess: &mut [f64]) {
        self.prior.add_hessian(self.design.dim(), hess);
    }
}

impl ParameterNames for GaussianRegression {
    fn parameter_names(&self) -> Vec<String> {
        (1..=self.design.dim()).map(|j| format!("beta.{j}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Relative tolerance of central finite differences (h ≈ 1e-5).
    const FD_TOL: f64 = 1e-6;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
    }

    /// A small deterministic data set: 40 rows, 3 covariates with unequal scales and means.
    fn data() -> Dataset {
        let n = 40;
        let p = 3;
        let mut x = Vec::with_capacity(n * p);
        let mut y = Vec::with_capacity(n);
        for i in 0..n {
            let t = i as f64;
            let row = [(0.7 * t).sin() + 0.5, 2.0 * (1.3 * t + 0.2).cos(), (0.11 * t) - 2.0];
            x.extend_from_slice(&row);
            y.push(0.4 * row[0] - 1.1 * row[1] + 0.2 * row[2] + 0.3 * (2.9 * t).sin());
        }
        Dataset::with_default_names(x, y, p).unwrap()
    }

    fn models() -> Vec<GaussianRegression> {
        let data = Arc::new(data());
        [(false, false), (true, false), (true, true)]
            .into_iter()
            .map(|(intercept, standardize)| {
                let opts = DesignOptions::default()
                    .with_intercept(intercept)
                    .with_standardize(standardize);
                GaussianRegression::new(data.clone(), opts, 0.7, 5.0).unwrap()
            })
            .collect()
    }

    #[test]
    fn gradients_and_hessians_match_finite_differences() {
        let idx: Vec<u32> = vec![0, 3, 3, 17, 39, 22];
        let k = idx.len();
        for m in models() {
            let d = m.dim();
            let theta: Vec<f64> = (0..d).map(|j| 0.3 - 0.4 * j as f64).collect();
            let v: Vec<f64> = (0..d).map(|j| 1.0 + 0.5 * j as f64).collect();
            let (mut vals, mut grads) = (vec![0.0; k], vec![0.0; k * d]);
            m.log_terms_grads(&theta, &idx, &mut vals, &mut grads);
            // ∇ℓ_i by central differences of ℓ_i.
            let (mut lp, mut lm) = (vec![0.0; k], vec![0.0; k]);
            for j in 0..d {
                let h = 1e-5 * (1.0 + theta[j].abs());
                let mut tp = theta.clone();
                let mut tm = theta.clone();
                tp[j] += h;
                tm[j] -= h;
                m.log_terms(&tp, &idx, &mut lp);
                m.log_terms(&tm, &idx, &mut lm);
                for t in 0..k {
                    let fd = (lp[t] - lm[t]) / (2.0 * h);
                    assert!(close(grads[t * d + j], fd, FD_TOL), "grad {t},{j}");
                }
            }
            // H_i v by central differences of ∇ℓ_i along v.
            let mut hv = vec![0.0; k * d];
            m.hessian_vector_products(&theta, &idx, &v, &mut hv);
            let h = 1e-5;
            let tp: Vec<f64> = theta.iter().zip(&v).map(|(a, b)| a + h * b).collect();
            let tm: Vec<f64> = theta.iter().zip(&v).map(|(a, b)| a - h * b).collect();
            let (mut gp, mut gm) = (vec![0.0; k * d], vec![0.0; k * d]);
            m.log_terms_grads(&tp, &idx, &mut lp, &mut gp);
            m.log_terms_grads(&tm, &idx, &mut lm, &mut gm);
            for t in 0..k * d {
                assert!(close(hv[t], (gp[t] - gm[t]) / (2.0 * h), 1e-5), "Hv entry {t}");
            }
            // sum_hessian accumulates Σ H_i, consistent with H_i e_j.
            let mut hess: Vec<f64> = (0..d * d).map(|t| t as f64).collect();
            m.sum_hessian(&theta, &idx, &mut hess);
            let mut col = vec![0.0; k * d];
            for j in 0..d {
                let e: Vec<f64> = (0..d).map(|i| f64::from(u8::from(i == j))).collect();
                m.hessian_vector_products(&theta, &idx, &e, &mut col);
                for i in 0..d {
                    let want: f64 = (0..k).map(|t| col[t * d + i]).sum();
                    assert!(close(hess[i * d + j] - (i * d + j) as f64, want, 1e-12));
                }
            }
            // The prior gradient by finite differences.
            let mut g = vec![0.0; d];
            m.log_prior_grad(&theta, &mut g);
            for j in 0..d {
                let mut tp = theta.clone();
                let mut tm = theta.clone();
                tp[j] += 1e-5;
                tm[j] -= 1e-5;
                let fd = (m.log_prior(&tp) - m.log_prior(&tm)) / 2e-5;
                assert!(close(g[j], fd, FD_TOL));
            }
        }
    }

    #[test]
    fn batch_forms_agree_and_linear_predictor_matches() {
        let idx: Vec<u32> = (0..40).collect();
        for m in models() {
            let d = m.dim();
            let theta: Vec<f64> = (0..d).map(|j| 0.2 * j as f64 - 0.1).collect();
            let mut vals = vec![0.0; 40];
            m.log_terms(&theta, &idx, &mut vals);
            let total: f64 = vals.iter().sum();
            assert!(close(m.sum_log_terms(&theta, &idx), total, 1e-12));
            assert!(close(m.sum_log_terms_range(&theta, 0, 40), total, 1e-12));
            let (mut g1, mut g2) = (vec![0.0; d], vec![0.0; d]);
            let mut out = vec![0.0; 40];
            let t1 = m.log_terms_grad_sum(&theta, &idx, &mut out, &mut g1);
            let t2 = m.sum_log_terms_grad_range(&theta, 0, 40, &mut g2);
            assert!(close(t1, total, 1e-12) && close(t2, total, 1e-12));
            for (a, b) in g1.iter().zip(&g2) {
                assert!(close(*a, *b, 1e-12));
            }
            let (mut eta, mut phi, mut d1, mut d2) =
                (vec![0.0; 40], vec![0.0; 40], vec![0.0; 40], vec![0.0; 40]);
            m.linear_predictors(&theta, &idx, &mut eta);
            m.predictor_derivatives(&idx, &eta, &mut phi, &mut d1, &mut d2);
            let mut grad = vec![0.0; d];
            m.add_weighted_rows(&idx, &d1, &mut grad);
            for k in 0..40 {
                assert!(close(phi[k], vals[k], 1e-12));
                assert_eq!(d2[k], -1.0 / (0.7 * 0.7));
            }
            for (a, b) in grad.iter().zip(&g1) {
                assert!(close(*a, *b, 1e-12));
            }
        }
    }

    #[test]
    fn closed_form_posterior_is_the_stationary_point_with_the_right_curvature() {
        for m in models() {
            let d = m.dim();
            let (mean, cov) = m.posterior_mean_covariance().unwrap();
            // ∇ log π(μ) = 0.
            let mut g = vec![0.0; d];
            m.sum_log_terms_grad_range(&mean, 0, 40, &mut g);
            m.log_prior_grad(&mean, &mut g);
            let scale: f64 = mean.iter().map(|v| v.abs()).sum::<f64>() + 1.0;
            for gj in &g {
                assert!(gj.abs() < 1e-9 * scale * 40.0, "gradient at the mean {gj}");
            }
            // cov · (−∇² log π) = I.
            let mut h = vec![0.0; d * d];
            m.sum_hessian_range(&mean, 0, 40, &mut h);
            m.add_log_prior_hessian(&mean, &mut h);
            for i in 0..d {
                for j in 0..d {
                    let v: f64 = (0..d).map(|k| -cov[i * d + k] * h[k * d + j]).sum();
                    let want = f64::from(u8::from(i == j));
                    assert!((v - want).abs() < 1e-9, "Σ P entry ({i}, {j}) = {v}");
                }
            }
            // The log posterior is exactly quadratic: log π(μ + δ) − log π(μ) = −½ δᵀPδ.
            let delta: Vec<f64> = (0..d).map(|j| 0.05 * (j as f64 + 1.0)).collect();
            let shifted: Vec<f64> = mean.iter().zip(&delta).map(|(a, b)| a + b).collect();
            let lp = |t: &[f64]| m.sum_log_terms_range(t, 0, 40) + m.log_prior(t);
            let mut hd = vec![0.0; d];
            tallmc_core::linalg::mat_vec(&h, &delta, &mut hd);
            let quad: f64 = 0.5 * delta.iter().zip(&hd).map(|(a, b)| a * b).sum::<f64>();
            assert!(close(lp(&shifted) - lp(&mean), quad, 1e-9));
        }
    }

    #[test]
    fn bad_settings_and_data_are_named() {
        let data = Arc::new(data());
        for (sigma, s) in [(0.0, 1.0), (-1.0, 1.0), (f64::NAN, 1.0), (f64::INFINITY, 1.0)] {
            let e = GaussianRegression::new(data.clone(), DesignOptions::default(), sigma, s)
                .unwrap_err()
                .to_string();
            assert!(e.contains("sigma") && e.contains(&sigma.to_string()), "{e}");
        }
        for s in [0.0, -2.0, f64::NAN] {
            let e = GaussianRegression::new(data.clone(), DesignOptions::default(), 1.0, s)
                .unwrap_err()
                .to_string();
            assert!(e.contains("prior_sd"), "{e}");
        }
        let empty = Dataset::from_response(vec![1.0, 2.0]).unwrap();
        assert!(GaussianRegression::new(empty, DesignOptions::default(), 1.0, 1.0).is_err());
    }
}
