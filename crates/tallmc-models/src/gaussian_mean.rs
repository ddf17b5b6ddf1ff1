//! The mean of a Gaussian with known standard deviation, under a normal prior.

use std::sync::Arc;

use tallmc_core::{
    BoundedPredictorThirdDerivative, CurvatureBound, EvalCounts, LinearPredictor, LogPrior,
    LogPriorCurvature, LogPriorHessian, ParameterNames, TaylorRemainderBound, TermBounds,
    TermCurvatureBound, TermCurvatureConstants, TermGradientLipschitz, TermGradients, TermHessians,
    TermThirdDerivativeConstants, Terms,
};

use crate::data::{Dataset, deterministic_sum};
use crate::error::{Result, check_finite_value, check_positive};
use crate::gaussian::HALF_LN_2PI;

/// y_i ~ N(μ, σ²) i.i.d. with σ known, θ = μ, prior μ ~ N(μ₀, τ²): the Gaussian-mean example
/// of Bardenet, Doucet & Holmes (2014, §4.3; there σ = 1 and a flat prior — take τ large).
///
/// ```text
/// ℓ_i(μ)    = −½ log(2πσ²) − (y_i − μ)²/(2σ²)
/// ℓ_i′(μ)   = (y_i − μ)/σ²
/// ℓ_i″(μ)   = −1/σ²
/// log p(μ)  = −½ log(2πτ²) − (μ − μ₀)²/(2τ²)
/// ```
///
/// **Posterior** (conjugate, [`GaussianMean::posterior_mean_sd`]): precision
/// 1/τ² + n/σ², mean (μ₀/τ² + Σ_i y_i/σ²) / precision.
///
/// **Term bound** ([`TermBounds`]): ℓ_i(μ′) − ℓ_i(μ) = (μ′ − μ)(2y_i − μ − μ′)/(2σ²) is linear in
/// y_i, so over y_i ∈ [y_min, y_max]
///
/// ```text
/// C(μ, μ′) = |μ′ − μ| · max(|2y_min − μ − μ′|, |2y_max − μ − μ′|) / (2σ²),
/// ```
///
/// exact (attained at the extreme observation), inflated by a relative 10⁻¹² plus an absolute
/// 10⁻¹³ times the terms' magnitude to cover rounding.
///
/// **Gradient bounds** (`TermGradientLipschitz`, `TermCurvatureBound`, `LogPriorCurvature`;
/// derivations in `docs/methods/gradient-bounds.md`): ℓ_i′ is 1/σ²-Lipschitz (C_0 = C = 1/σ²);
/// the full-data curvature is exactly −N/σ² (K = N/σ², exact); the prior's κ = 1/τ². The
/// gradient itself is unbounded in μ (no `TermGradientBounds`).
///
/// **Cost**: O(1) per term. Name: `mu`.
#[derive(Debug, Clone)]
pub struct GaussianMean {
    data: Arc<Dataset>,
    sigma: f64,
    inv_var: f64,
    log_norm: f64,
    prior_mean: f64,
    prior_sd: f64,
    y_min: f64,
    y_max: f64,
    sum_y: f64,
}

impl GaussianMean {
    /// The model on `data.y()` (covariates, if any, are ignored) with known sd `sigma` > 0 and
    /// prior N(`prior_mean`, `prior_sd`²), `prior_sd` > 0. Cost: one pass over y.
    pub fn new(
        data: impl Into<Arc<Dataset>>, sigma: f64, prior_mean: f64, prior_sd: f64,
    ) -> Result<Self> {
        check_positive("sigma", sigma)?;
        check_finite_value("prior_mean", prior_mean)?;
        check_positive("prior_sd", prior_sd)?;
        let data = data.into();
        crate::data::check_indexable(data.len())?;
        let (y_min, y_max) = data.response_range();
        let sum_y = deterministic_sum(data.y());
        Ok(Self {
            data,
            sigma,
            inv_var: 1.0 / (sigma * sigma),
            log_norm: -HALF_LN_2PI - sigma.ln(),
            prior_mean,
            prior_sd,
            y_min,
            y_max,
            sum_y,
        })
    }

    /// The model on the observations `y`.
    pub fn from_observations(
        y: Vec<f64>, sigma: f64, prior_mean: f64, prior_sd: f64,
    ) -> Result<Self> {
        Self::new(Dataset::from_response(y)?, sigma, prior_mean, prior_sd)
    }

    /// The data set.
    pub fn data(&self) -> &Arc<Dataset> {
        &self.data
    }

    /// The known standard deviation σ.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The exact posterior mean and standard deviation of μ.
    pub fn posterior_mean_sd(&self) -> (f64, f64) {
        let prior_prec = 1.0 / (self.prior_sd * self.prior_sd);
        let prec = prior_prec + self.data.len() as f64 * self.inv_var;
        let mean = (self.prior_mean * prior_prec + self.sum_y * self.inv_var) / prec;
        (mean, prec.sqrt().recip())
    }

    /// (min_i y_i, max_i y_i).
    pub fn response_range(&self) -> (f64, f64) {
        (self.y_min, self.y_max)
    }

    #[inline(always)]
    fn ll(&self, y: f64, mu: f64) -> f64 {
        let r = y - mu;
        self.log_norm - 0.5 * r * r * self.inv_var
    }
}

impl Terms for GaussianMean {
    fn dim(&self) -> usize {
        1
    }

    fn num_terms(&self) -> usize {
        self.data.len()
    }

    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        let y = self.data.y();
        for (o, &i) in out.iter_mut().zip(indices) {
            *o = self.ll(y[i as usize], theta[0]);
        }
    }

    fn sum_log_terms(&self, theta: &[f64], indices: &[u32]) -> f64 {
        let y = self.data.y();
        indices.iter().map(|&i| self.ll(y[i as usize], theta[0])).sum()
    }

    fn sum_log_terms_range(&self, theta: &[f64], start: u32, end: u32) -> f64 {
        self.data.y()[start as usize..end as usize].iter().map(|&v| self.ll(v, theta[0])).sum()
    }

    fn as_linear_predictor(&self) -> Option<&dyn LinearPredictor> {
        Some(self)
    }
}

impl TermGradients for GaussianMean {
    fn log_terms_grad_sum(
        &self, theta: &[f64], indices: &[u32], out: &mut [f64], grad_sum: &mut [f64],
    ) -> f64 {
        let y = self.data.y();
        let (mut total, mut g) = (0.0, 0.0);
        for (o, &i) in out.iter_mut().zip(indices) {
            let v = y[i as usize];
            let ll = self.ll(v, theta[0]);
            *o = ll;
            total += ll;
            g += (v - theta[0]) * self.inv_var;
        }
        grad_sum[0] += g;
        total
    }

    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        let y = self.data.y();
        for ((o, &i), g) in out.iter_mut().zip(indices).zip(grads.iter_mut()) {
            let v = y[i as usize];
            *o = self.ll(v, theta[0]);
            *g = (v - theta[0]) * self.inv_var;
        }
    }

    fn sum_log_terms_grad_range(
        &self, theta: &[f64], start: u32, end: u32, grad_sum: &mut [f64],
    ) -> f64 {
        let (mut total, mut g) = (0.0, 0.0);
        for &v in &self.data.y()[start as usize..end as usize] {
            total += self.ll(v, theta[0]);
            g += (v - theta[0]) * self.inv_var;
        }
        grad_sum[0] += g;
        total
    }
}

impl TermHessians for GaussianMean {
    fn hessian_vector_products(&self, _theta: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]) {
        out[..indices.len()].fill(-self.inv_var * v[0]);
    }

    fn sum_hessian(&self, _theta: &[f64], indices: &[u32], hess: &mut [f64]) {
        hess[0] -= indices.len() as f64 * self.inv_var;
    }
}

/// x_i = 1 and η_i = μ: φ_i(η) = −½ log(2πσ²) − (y_i − η)²/(2σ²), φ_i′ = (y_i − η)/σ²,
/// φ_i″ = −1/σ².
impl LinearPredictor for GaussianMean {
    fn linear_predictors(&self, theta: &[f64], indices: &[u32], eta: &mut [f64]) {
        eta[..indices.len()].fill(theta[0]);
    }

    fn predictor_derivatives(
        &self, indices: &[u32], eta: &[f64], phi: &mut [f64], d1: &mut [f64], d2: &mut [f64],
    ) {
        let y = self.data.y();
        for (k, &i) in indices.iter().enumerate() {
            let v = y[i as usize];
            phi[k] = self.ll(v, eta[k]);
            d1[k] = (v - eta[k]) * self.inv_var;
            d2[k] = -self.inv_var;
        }
    }

    fn add_weighted_rows(&self, indices: &[u32], weights: &[f64], out: &mut [f64]) {
        out[0] += weights[..indices.len()].iter().sum::<f64>();
    }
}

impl TermBounds for GaussianMean {
    /// |μ′ − μ| · max(|2y_min − μ − μ′|, |2y_max − μ − μ′|) / (2σ²) (see the type's docs).
    fn term_difference_bound(&self, theta: &[f64], theta_prime: &[f64]) -> f64 {
        let (mu, mu2) = (theta[0], theta_prime[0]);
        let s = mu + mu2;
        let spread = (2.0 * self.y_min - s).abs().max((2.0 * self.y_max - s).abs());
        let exact = (mu2 - mu).abs() * spread * 0.5 * self.inv_var;
        let r = (self.y_min - mu).abs().max((self.y_max - mu).abs());
        let r2 = (self.y_min - mu2).abs().max((self.y_max - mu2).abs());
        let magnitude = self.log_norm.abs() + 0.5 * (r * r + r2 * r2) * self.inv_var;
        exact * (1.0 + 1e-12) + 1e-13 * (1.0 + magnitude)
    }
}

/// ℓ_i is quadratic in μ: M₃ = 0, so the second-order Taylor proxies of the confidence sampler
/// are exact (their remainders vanish).
impl TaylorRemainderBound for GaussianMean {
    fn third_derivative_bound(&self) -> f64 {
        0.0
    }
}

impl LogPrior for GaussianMean {
    fn log_prior(&self, theta: &[f64]) -> f64 {
        let z = (theta[0] - self.prior_mean) / self.prior_sd;
        -HALF_LN_2PI - self.prior_sd.ln() - 0.5 * z * z
    }

    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        grad[0] -= (theta[0] - self.prior_mean) / (self.prior_sd * self.prior_sd);
        self.log_prior(theta)
    }
}

impl LogPriorHessian for GaussianMean {
    fn add_log_prior_hessian(&self, _theta: &[f64], hess: &mut [f64]) {
        hess[0] -= 1.0 / (self.prior_sd * self.prior_sd);
    }
}

/// ℓ_i″(μ) = −1/σ² for every datum and every μ: a₂,i = L_i = 1/σ² (exact).
impl TermCurvatureConstants for GaussianMean {
    fn term_second_derivative_bound(&self, _i: usize) -> f64 {
        self.inv_var
    }

    fn term_gradient_lipschitz(&self, _i: usize) -> f64 {
        self.inv_var
    }
}

/// ℓ_i is quadratic in its predictor μ: c₃ = 0.
impl BoundedPredictorThirdDerivative for GaussianMean {
    fn predictor_third_derivative_bound(&self) -> f64 {
        0.0
    }
}

/// ℓ_i is quadratic in μ: a₃,i = 0 (second-order Taylor expansions are exact).
impl TermThirdDerivativeConstants for GaussianMean {
    fn term_third_derivative_bound(&self, _i: usize) -> f64 {
        0.0
    }

    fn term_hessian_lipschitz(&self, _i: usize) -> f64 {
        0.0
    }
}

/// ℓ_i′(μ) = (y_i − μ)/σ² changes by exactly |μ − μ′|/σ² (x_i = 1, ‖x_i‖ = 1): C_0 = C = 1/σ².
impl TermGradientLipschitz for GaussianMean {
    fn coordinate_gradient_lipschitz(&self, _j: usize) -> f64 {
        self.inv_var
    }

    fn gradient_lipschitz(&self) -> f64 {
        self.inv_var
    }
}

/// ℓ″(μ) = Σ_i ℓ_i″ = −N/σ² at every μ: K = K^abs = N/σ², exact. O(1), counted as the N
/// Hessians a pass over the data would evaluate (the convention of every curvature pass).
impl TermCurvatureBound for GaussianMean {
    fn curvature_bound(&self) -> CurvatureBound {
        let n = self.data.len();
        let k = n as f64 * self.inv_var;
        CurvatureBound {
            dim: 1,
            quadratic: vec![k],
            absolute: vec![k],
            exact: true,
            evals: EvalCounts::hessians(n),
        }
    }
}

/// The N(μ₀, τ²) prior: ∇² log p = −1/τ², κ = 1/τ², constant.
impl LogPriorCurvature for GaussianMean {
    fn prior_curvature_bound(&self) -> f64 {
        1.0 / (self.prior_sd * self.prior_sd)
    }

    fn prior_hessian_is_constant(&self) -> bool {
        true
    }
}

impl ParameterNames for GaussianMean {
    fn parameter_names(&self) -> Vec<String> {
        vec!["mu".to_string()]
    }
}
