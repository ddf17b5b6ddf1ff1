//! Bayesian linear regression with a known noise standard deviation (the Gaussian regression of
//! Dang et al. 2019, §6.7): the Gaussian family with known σ.

use std::sync::Arc;

use tallmc_core::linalg::Cholesky;
use tallmc_core::{LogPriorHessian, TermGradients, TermHessians, Terms};

use super::Glm;
use super::family::{BoundedCurvature, BoundedThirdDerivative, GlmFamily, QuadraticForm};
use crate::data::{Dataset, DesignMatrix, DesignOptions};
use crate::error::{Error, Result, check_positive};
use crate::gaussian::HALF_LN_2PI;

/// The Gaussian family with known noise sd σ: φ_y(η) = −½ log(2πσ²) − (y − η)²/(2σ²),
/// φ_y′ = (y − η)/σ², φ_y″ = −1/σ² (constant), φ‴ = 0. Accepts every finite y.
///
/// Bounds: c₂ = 1/σ² ([`BoundedCurvature`], exact: φ″ ≡ −c₂), c₃ = 0
/// ([`BoundedThirdDerivative`]); the score is unbounded (no [`BoundedScore`](super::BoundedScore)).
/// Its sums use the [`QuadraticForm`] n·log_norm − ½ Σ(y − η)²/σ².
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GaussianFamily {
    sigma: f64,
    form: QuadraticForm,
}

impl GaussianFamily {
    /// The family with noise sd `sigma` (finite and > 0, else an error naming `sigma`).
    pub fn new(sigma: f64) -> Result<Self> {
        check_positive("sigma", sigma)?;
        let form =
            QuadraticForm { log_norm: -HALF_LN_2PI - sigma.ln(), precision: 1.0 / (sigma * sigma) };
        Ok(Self { sigma, form })
    }

    /// The noise sd σ.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }
}

impl GlmFamily for GaussianFamily {
    #[inline(always)]
    fn value(&self, y: f64, eta: f64) -> f64 {
        self.form.value(y, eta)
    }

    #[inline(always)]
    fn derivatives(&self, y: f64, eta: f64) -> (f64, f64, f64) {
        (self.form.value(y, eta), self.form.score(y, eta), -self.form.precision)
    }

    #[inline(always)]
    fn value_and_score(&self, y: f64, eta: f64) -> (f64, f64) {
        (self.form.value(y, eta), self.form.score(y, eta))
    }

    #[inline(always)]
    fn score(&self, y: f64, eta: f64) -> f64 {
        self.form.score(y, eta)
    }

    #[inline(always)]
    fn score_and_curvature(&self, y: f64, eta: f64) -> (f64, f64) {
        (self.form.score(y, eta), -self.form.precision)
    }

    #[inline(always)]
    fn curvature(&self, _y: f64, _eta: f64) -> f64 {
        -self.form.precision
    }

    fn accepts_response(&self, y: f64) -> bool {
        y.is_finite()
    }

    fn response_domain(&self) -> &'static str {
        "a finite number"
    }

    #[inline(always)]
    fn constant_curvature(&self) -> Option<f64> {
        Some(-self.form.precision)
    }

    #[inline(always)]
    fn quadratic_form(&self) -> Option<QuadraticForm> {
        Some(self.form)
    }
}

impl BoundedCurvature for GaussianFamily {
    /// |φ″| = 1/σ².
    fn curvature_bound(&self) -> f64 {
        self.form.precision
    }
}

impl BoundedThirdDerivative for GaussianFamily {
    /// φ is quadratic: φ‴ = 0.
    fn third_derivative_bound(&self) -> f64 {
        0.0
    }
}

/// Bayesian linear regression with a known noise sd, the [`Glm`] of the [`GaussianFamily`]:
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
/// As a [`LinearPredictor`](tallmc_core::LinearPredictor): η_i = x̃_iᵀβ, φ_i(η) = −½ log(2πσ²) − (y_i − η)²/(2σ²),
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
/// No term bound and no gradient bounds: ℓ_i and ∇ℓ_i are unbounded in β. **Curvature**
/// (`TermGradientLipschitz`, `TermCurvatureBound`): φ″ ≡ −1/σ², so C_j = max_i |x̃_ij| ‖x̃_i‖₂/σ²,
/// C = max_i ‖x̃_i‖₂²/σ², and K = X̃ᵀX̃/σ² = −∇²ℓ exactly (`exact = true`); M₃ = 0
/// (`TaylorRemainderBound`: second-order proxies are exact); prior curvature κ = 1/s²
/// (`docs/methods/gradient-bounds.md`). **Cost**: O(d) per term, gradient or Hessian-vector
/// product; O(d²) per datum for `sum_hessian`. Parameter names: the design's column names
/// (`intercept`, then the covariates' names as the data give them).
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
pub type GaussianRegression = Glm<GaussianFamily>;

impl GaussianRegression {
    /// A Gaussian regression of `data.y()` on the design built from `data` with `options`, with
    /// known noise sd `sigma` and prior sd `prior_sd` on every coefficient.
    ///
    /// Errors: `sigma` or `prior_sd` not finite and > 0 (naming the value), a design with no
    /// columns, a constant column when standardizing, and a NaN or infinite covariate or
    /// response (naming its row, column and value — memory-mapped data may skip the loader's
    /// check). Cost: one pass over y and one over X̃ (the design's maxima).
    pub fn new(
        data: impl Into<Arc<Dataset>>, options: DesignOptions, sigma: f64, prior_sd: f64,
    ) -> Result<Self> {
        check_positive("sigma", sigma)?;
        Self::from_design(DesignMatrix::new(data, options)?, sigma, prior_sd)
    }

    /// Like [`GaussianRegression::new`] from an existing design.
    pub fn from_design(design: DesignMatrix, sigma: f64, prior_sd: f64) -> Result<Self> {
        Self::with_family(GaussianFamily::new(sigma)?, design, prior_sd)
    }

    /// The known noise standard deviation σ.
    pub fn sigma(&self) -> f64 {
        self.family().sigma()
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use tallmc_core::{LinearPredictor, LogPrior};

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
