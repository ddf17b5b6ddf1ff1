//! The Gaussian N(μ, σ²) with both parameters unknown, θ = (μ, log σ), flat priors.

use std::sync::Arc;

use tallmc_core::{
    LogPrior, LogPriorCurvature, LogPriorHessian, ParameterNames, TermBounds, TermGradients,
    TermHessians, Terms,
};

use crate::data::Dataset;
use crate::error::{Error, Result};

/// ½ log(2π).
pub(crate) const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// The model y_i ~ N(μ, σ²) i.i.d. with θ = (μ, τ), τ = log σ, and flat priors on μ and τ
/// (log p(θ) = 0, i.e. p(μ, σ) ∝ 1/σ). This is the toy of Bardenet, Doucet & Holmes (2014, §4.1).
///
/// With r_i = y_i − μ:
///
/// ```text
/// ℓ_i(θ)        = −½ log 2π − τ − r_i² e^{−2τ} / 2
/// ∂ℓ_i/∂μ       = r_i e^{−2τ}
/// ∂ℓ_i/∂τ       = −1 + r_i² e^{−2τ}
/// ∂²ℓ_i/∂μ²     = −e^{−2τ}
/// ∂²ℓ_i/∂μ∂τ    = −2 r_i e^{−2τ}
/// ∂²ℓ_i/∂τ²     = −2 r_i² e^{−2τ}
/// ```
///
/// **Propriety.** With the flat prior, integrating μ out leaves ∝ σ^{−(n−1)} exp(−S/(2σ²)) in σ
/// (S = Σ(y_i − ȳ)²), which is integrable in τ = log σ iff n ≥ 2 and S > 0. The constructor
/// therefore requires n ≥ 2 and at least two distinct values.
///
/// **Term bound** ([`TermBounds`]). For fixed θ = (μ, τ), θ′ = (μ′, τ′) the difference
/// Δ(y) = ℓ(y; θ′) − ℓ(y; θ) is a quadratic in y:
///
/// ```text
/// Δ(y) = −(τ′ − τ) − (y − μ′)² e^{−2τ′}/2 + (y − μ)² e^{−2τ}/2
///      = a y² + b y + c,   a = (e^{−2τ} − e^{−2τ′})/2,  b = μ′e^{−2τ′} − μe^{−2τ},
///                          c = −(τ′ − τ) − μ′² e^{−2τ′}/2 + μ² e^{−2τ}/2.
/// ```
///
/// Every y_i lies in [y_min, y_max], and the maximum of |Δ| over an interval is attained at an
/// endpoint or at the stationary point y* = −b/(2a) (when a ≠ 0 and y* is inside). So
///
/// ```text
/// C(θ, θ′) = max{ |Δ(y_min)|, |Δ(y_max)|, |Δ(y*)| if y* ∈ [y_min, y_max] } ≥ max_i |ℓ_i(θ′) − ℓ_i(θ)|,
/// ```
///
/// exact in real arithmetic (attained when the data reach y_min, y_max and, if inside, y*).
/// Δ is evaluated in the centred form above (not from a, b, c) and the result is inflated by
/// a relative 10⁻¹² plus an absolute 10⁻¹³·(1 + |τ| + |τ′| + max over the endpoints of
/// (r² e^{−2τ} + r′² e^{−2τ′})/2) to cover the rounding of the terms themselves. O(1) per call.
///
/// **Cost**: O(1) per term, gradient or Hessian-vector product. Names: `mu`, `log_sigma`.
#[derive(Debug, Clone)]
pub struct Gaussian {
    data: Arc<Dataset>,
    y_min: f64,
    y_max: f64,
}

impl Gaussian {
    /// The model on the responses `data.y()` (covariates, if any, are ignored). Errors when
    /// n < 2 or when all responses are equal (the flat-prior posterior would be improper).
    pub fn new(data: impl Into<Arc<Dataset>>) -> Result<Self> {
        let data = data.into();
        crate::data::check_indexable(data.len())?;
        if data.len() < 2 {
            return Err(Error::invalid(
                "number of observations",
                data.len(),
                "n ≥ 2 (with flat priors on μ and log σ the posterior is improper for n < 2)",
            ));
        }
        let (y_min, y_max) = data.response_range();
        if y_min == y_max {
            return Err(Error::invalid(
                "responses",
                format!("all equal to {y_min}"),
                "at least two distinct values (the flat-prior posterior is improper otherwise)",
            ));
        }
        Ok(Self { data, y_min, y_max })
    }

    /// The model on the observations `y`.
    pub fn from_observations(y: Vec<f64>) -> Result<Self> {
        Self::new(Dataset::from_response(y)?)
    }

    /// The data set.
    pub fn data(&self) -> &Arc<Dataset> {
        &self.data
    }

    /// (min_i y_i, max_i y_i).
    pub fn response_range(&self) -> (f64, f64) {
        (self.y_min, self.y_max)
    }
}

#[inline(always)]
fn gaussian_ll(y: f64, mu: f64, tau: f64, inv_var: f64) -> f64 {
    let r = y - mu;
    -HALF_LN_2PI - tau - 0.5 * r * r * inv_var
}

/// The variable part of Δ(y) = ℓ(y; θ′) − ℓ(y; θ), in centred form.
#[inline]
fn gaussian_delta(y: f64, theta: &[f64], theta_prime: &[f64]) -> f64 {
    let (mu, tau) = (theta[0], theta[1]);
    let (mu2, tau2) = (theta_prime[0], theta_prime[1]);
    let (r, r2) = (y - mu, y - mu2);
    -(tau2 - tau) - 0.5 * r2 * r2 * (-2.0 * tau2).exp() + 0.5 * r * r * (-2.0 * tau).exp()
}

impl Terms for Gaussian {
    fn dim(&self) -> usize {
        2
    }

    fn num_terms(&self) -> usize {
        self.data.len()
    }

    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        let y = self.data.y();
        let (mu, tau) = (theta[0], theta[1]);
        let inv_var = (-2.0 * tau).exp();
        for (o, &i) in out.iter_mut().zip(indices) {
            *o = gaussian_ll(y[i as usize], mu, tau, inv_var);
        }
    }

    fn sum_log_terms(&self, theta: &[f64], indices: &[u32]) -> f64 {
        let y = self.data.y();
        let (mu, tau) = (theta[0], theta[1]);
        let inv_var = (-2.0 * tau).exp();
        indices.iter().map(|&i| gaussian_ll(y[i as usize], mu, tau, inv_var)).sum()
    }

    fn sum_log_terms_range(&self, theta: &[f64], start: u32, end: u32) -> f64 {
        let y = &self.data.y()[start as usize..end as usize];
        let (mu, tau) = (theta[0], theta[1]);
        let inv_var = (-2.0 * tau).exp();
        y.iter().map(|&v| gaussian_ll(v, mu, tau, inv_var)).sum()
    }
}

impl TermGradients for Gaussian {
    fn log_terms_grad_sum(
        &self, theta: &[f64], indices: &[u32], out: &mut [f64], grad_sum: &mut [f64],
    ) -> f64 {
        let y = self.data.y();
        let (mu, tau) = (theta[0], theta[1]);
        let inv_var = (-2.0 * tau).exp();
        let (mut total, mut g_mu, mut g_tau) = (0.0, 0.0, 0.0);
        for (o, &i) in out.iter_mut().zip(indices) {
            let r = y[i as usize] - mu;
            let q = r * r * inv_var;
            let ll = -HALF_LN_2PI - tau - 0.5 * q;
            *o = ll;
            total += ll;
            g_mu += r * inv_var;
            g_tau += q - 1.0;
        }
        grad_sum[0] += g_mu;
        grad_sum[1] += g_tau;
        total
    }

    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        let y = self.data.y();
        let (mu, tau) = (theta[0], theta[1]);
        let inv_var = (-2.0 * tau).exp();
        for ((o, &i), g) in out.iter_mut().zip(indices).zip(grads.chunks_exact_mut(2)) {
            let r = y[i as usize] - mu;
            let q = r * r * inv_var;
            *o = -HALF_LN_2PI - tau - 0.5 * q;
            g[0] = r * inv_var;
            g[1] = q - 1.0;
        }
    }

    fn sum_log_terms_grad_range(
        &self, theta: &[f64], start: u32, end: u32, grad_sum: &mut [f64],
    ) -> f64 {
        let y = &self.data.y()[start as usize..end as usize];
        let (mu, tau) = (theta[0], theta[1]);
        let inv_var = (-2.0 * tau).exp();
        let (mut total, mut g_mu, mut g_tau) = (0.0, 0.0, 0.0);
        for &v in y {
            let r = v - mu;
            let q = r * r * inv_var;
            total += -HALF_LN_2PI - tau - 0.5 * q;
            g_mu += r * inv_var;
            g_tau += q - 1.0;
        }
        grad_sum[0] += g_mu;
        grad_sum[1] += g_tau;
        total
    }
}

impl TermHessians for Gaussian {
    fn hessian_vector_products(&self, theta: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]) {
        let y = self.data.y();
        let inv_var = (-2.0 * theta[1]).exp();
        for (&i, o) in indices.iter().zip(out.chunks_exact_mut(2)) {
            let r = y[i as usize] - theta[0];
            let h_mm = -inv_var;
            let h_mt = -2.0 * r * inv_var;
            let h_tt = -2.0 * r * r * inv_var;
            o[0] = h_mm * v[0] + h_mt * v[1];
            o[1] = h_mt * v[0] + h_tt * v[1];
        }
    }

    fn sum_hessian(&self, theta: &[f64], indices: &[u32], hess: &mut [f64]) {
        let y = self.data.y();
        let inv_var = (-2.0 * theta[1]).exp();
        let (mut s_r, mut s_rr) = (0.0, 0.0);
        for &i in indices {
            let r = y[i as usize] - theta[0];
            s_r += r;
            s_rr += r * r;
        }
        let k = indices.len() as f64;
        hess[0] -= k * inv_var;
        hess[1] -= 2.0 * s_r * inv_var;
        hess[2] -= 2.0 * s_r * inv_var;
        hess[3] -= 2.0 * s_rr * inv_var;
    }
}

impl TermBounds for Gaussian {
    /// The exact maximum of |Δ(y)| over [y_min, y_max] (see the type's docs).
    fn term_difference_bound(&self, theta: &[f64], theta_prime: &[f64]) -> f64 {
        let (lo, hi) = (self.y_min, self.y_max);
        let mut best = gaussian_delta(lo, theta, theta_prime)
            .abs()
            .max(gaussian_delta(hi, theta, theta_prime).abs());
        let (w, w2) = ((-2.0 * theta[1]).exp(), (-2.0 * theta_prime[1]).exp());
        let a = 0.5 * (w - w2);
        let b = theta_prime[0] * w2 - theta[0] * w;
        if a != 0.0 {
            let y_star = -b / (2.0 * a);
            if y_star > lo && y_star < hi {
                best = best.max(gaussian_delta(y_star, theta, theta_prime).abs());
            }
        }
        // Rounding slack: the terms themselves are computed with an absolute error of a few
        // ulps of their magnitude, which is largest at an endpoint (r² is convex in y).
        let magnitude = |y: f64| {
            let (r, r2) = (y - theta[0], y - theta_prime[0]);
            0.5 * (r * r * w + r2 * r2 * w2)
        };
        let scale = 1.0 + theta[1].abs() + theta_prime[1].abs() + magnitude(lo).max(magnitude(hi));
        best * (1.0 + 1e-12) + 1e-13 * scale
    }
}

impl LogPrior for Gaussian {
    /// Flat: log p(θ) = 0.
    fn log_prior(&self, _theta: &[f64]) -> f64 {
        0.0
    }

    fn log_prior_grad(&self, _theta: &[f64], _grad: &mut [f64]) -> f64 {
        0.0
    }
}

impl LogPriorHessian for Gaussian {
    fn add_log_prior_hessian(&self, _theta: &[f64], _hess: &mut [f64]) {}
}

/// The flat prior has zero curvature: κ = 0, constant.
impl LogPriorCurvature for Gaussian {
    fn prior_curvature_bound(&self) -> f64 {
        0.0
    }

    fn prior_hessian_is_constant(&self) -> bool {
        true
    }
}

impl ParameterNames for Gaussian {
    fn parameter_names(&self) -> Vec<String> {
        vec!["mu".to_string(), "log_sigma".to_string()]
    }
}
