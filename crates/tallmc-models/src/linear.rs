//! Bayesian linear regression with unknown noise scale.

use std::sync::Arc;

use tallmc_core::{
    LogPrior, LogPriorCurvature, LogPriorHessian, ParameterNames, TermGradients, TermHessians,
    Terms,
};

use crate::data::{Dataset, DesignMatrix, DesignOptions, Rows, with_rows};
use crate::error::{Error, Result};

/// The name of the noise parameter τ = log σ.
const LOG_SIGMA_NAME: &str = "log_sigma";
use crate::gaussian::HALF_LN_2PI;
use crate::prior::NormalPrior;

/// y_i = x̃_iᵀβ + σ ε_i, ε_i ~ N(0, 1), with θ = (β, τ), τ = log σ (dimension p + 1 for a design
/// with p columns) and independent N(0, s²) priors on every coordinate, log σ included.
///
/// With r_i = y_i − x̃_iᵀβ and w = e^{−2τ}:
///
/// ```text
/// ℓ_i(θ)      = −½ log 2π − τ − r_i² w / 2
/// ∇_β ℓ_i     = r_i w x̃_i
/// ∂_τ ℓ_i     = r_i² w − 1
/// ∇²_ββ ℓ_i   = −w x̃_i x̃_iᵀ                  (rank one)
/// ∇_β ∂_τ ℓ_i = −2 r_i w x̃_i
/// ∂²_ττ ℓ_i   = −2 r_i² w
/// ```
///
/// so a Hessian-vector product with v = (v_β, v_τ) is
/// `(H_i v)_β = −w (x̃_iᵀv_β + 2 r_i v_τ) x̃_i`, `(H_i v)_τ = −2 r_i w (x̃_iᵀv_β + r_i v_τ)`: O(p).
/// The prior is log p(θ) = −‖θ‖²/(2s²) − ((p+1)/2) log(2πs²).
///
/// No term bound: ℓ_i is unbounded in θ. **Cost**: O(p) per term, gradient or Hessian-vector
/// product. Parameter names: the design's column names (`intercept` when it adds one, then the
/// covariates' names as the data give them), then `log_sigma`.
#[derive(Debug, Clone)]
pub struct LinearRegression {
    design: DesignMatrix,
    prior: NormalPrior,
}

impl LinearRegression {
    /// A linear regression of `data.y()` on the design built from `data` with `options`, with
    /// prior sd `prior_sd` > 0 on every coordinate of θ.
    pub fn new(
        data: impl Into<Arc<Dataset>>, options: DesignOptions, prior_sd: f64,
    ) -> Result<Self> {
        Self::from_design(DesignMatrix::new(data, options)?, prior_sd)
    }

    /// Like [`LinearRegression::new`] from an existing design.
    ///
    /// Errors: `prior_sd` not finite and > 0; more than u32::MAX rows; a design with no
    /// columns; a covariate named `log_sigma` ([`Error::ReservedName`]: the name of the last
    /// parameter).
    pub fn from_design(design: DesignMatrix, prior_sd: f64) -> Result<Self> {
        let prior = NormalPrior::new(prior_sd)?;
        design.check_regression_shape()?;
        if design.data().covariate_names().iter().any(|n| n == LOG_SIGMA_NAME) {
            return Err(Error::ReservedName {
                source_name: design.data().source_name(),
                name: LOG_SIGMA_NAME.to_string(),
                reserved_for: "linear regression's noise parameter log σ",
                remedy: "rename the covariate",
            });
        }
        Ok(Self { design, prior })
    }

    /// The design matrix.
    pub fn design(&self) -> &DesignMatrix {
        &self.design
    }

    /// The prior standard deviation s.
    pub fn prior_sd(&self) -> f64 {
        self.prior.sd()
    }

    /// θ = (β, τ) split into (β, τ, w = e^{−2τ}).
    fn split<'t>(&self, theta: &'t [f64]) -> (&'t [f64], f64, f64) {
        let p = self.design.dim();
        let tau = theta[p];
        (&theta[..p], tau, (-2.0 * tau).exp())
    }

    /// Σ_i (y_i − x̃_iᵀβ)² over `rows`, in their order.
    fn sum_sq_residuals(&self, beta: &[f64], rows: impl Iterator<Item = usize>) -> f64 {
        let y = self.design.y();
        with_rows!(self.design, r => {
            let mut ss = 0.0;
            for i in rows {
                let res = y[i] - r.dot(i, beta);
                ss += res * res;
            }
            ss
        })
    }
}

impl Terms for LinearRegression {
    fn dim(&self) -> usize {
        self.design.dim() + 1
    }

    fn num_terms(&self) -> usize {
        self.design.len()
    }

    /// The data set's shards (a Parquet directory's files), when it has them.
    fn shard_layout(&self) -> Option<&tallmc_core::ShardLayout> {
        self.design.data().shard_layout()
    }

    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        let y = self.design.y();
        let (beta, tau, w) = self.split(theta);
        with_rows!(self.design, r => {
            for (o, &i) in out.iter_mut().zip(indices) {
                let i = i as usize;
                let res = y[i] - r.dot(i, beta);
                *o = -HALF_LN_2PI - tau - 0.5 * res * res * w;
            }
        })
    }

    fn sum_log_terms(&self, theta: &[f64], indices: &[u32]) -> f64 {
        let (beta, tau, w) = self.split(theta);
        let ss = self.sum_sq_residuals(beta, indices.iter().map(|&i| i as usize));
        -(HALF_LN_2PI + tau) * indices.len() as f64 - 0.5 * ss * w
    }

    fn sum_log_terms_range(&self, theta: &[f64], start: u32, end: u32) -> f64 {
        let (beta, tau, w) = self.split(theta);
        let ss = self.sum_sq_residuals(beta, start as usize..end as usize);
        -(HALF_LN_2PI + tau) * f64::from(end.saturating_sub(start)) - 0.5 * ss * w
    }
}

impl TermGradients for LinearRegression {
    fn log_terms_grad_sum(
        &self, theta: &[f64], indices: &[u32], out: &mut [f64], grad_sum: &mut [f64],
    ) -> f64 {
        let y = self.design.y();
        let p = self.design.dim();
        let (beta, tau, w) = self.split(theta);
        let (g_beta, g_tau) = grad_sum.split_at_mut(p);
        with_rows!(self.design, r => {
            let (mut total, mut gt) = (0.0, 0.0);
            for (o, &i) in out.iter_mut().zip(indices) {
                let i = i as usize;
                let res = y[i] - r.dot(i, beta);
                let q = res * res * w;
                let ll = -HALF_LN_2PI - tau - 0.5 * q;
                *o = ll;
                total += ll;
                gt += q - 1.0;
                r.add_row(i, res * w, g_beta);
            }
            g_tau[0] += gt;
            total
        })
    }

    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        let y = self.design.y();
        let p = self.design.dim();
        let (beta, tau, w) = self.split(theta);
        with_rows!(self.design, r => {
            for ((o, &i), g) in out.iter_mut().zip(indices).zip(grads.chunks_exact_mut(p + 1)) {
                let i = i as usize;
                let res = y[i] - r.dot(i, beta);
                let q = res * res * w;
                *o = -HALF_LN_2PI - tau - 0.5 * q;
                r.set_row(i, res * w, &mut g[..p]);
                g[p] = q - 1.0;
            }
        })
    }

    fn sum_log_terms_grad_range(
        &self, theta: &[f64], start: u32, end: u32, grad_sum: &mut [f64],
    ) -> f64 {
        let y = self.design.y();
        let p = self.design.dim();
        let (beta, tau, w) = self.split(theta);
        let (g_beta, g_tau) = grad_sum.split_at_mut(p);
        with_rows!(self.design, r => {
            let mut ss = 0.0;
            for i in start as usize..end as usize {
                let res = y[i] - r.dot(i, beta);
                ss += res * res;
                r.add_row(i, res * w, g_beta);
            }
            let k = f64::from(end.saturating_sub(start));
            g_tau[0] += ss * w - k;
            -(HALF_LN_2PI + tau) * k - 0.5 * ss * w
        })
    }
}

impl TermHessians for LinearRegression {
    fn hessian_vector_products(&self, theta: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]) {
        let y = self.design.y();
        let p = self.design.dim();
        let (beta, _, w) = self.split(theta);
        let (v_beta, v_tau) = (&v[..p], v[p]);
        with_rows!(self.design, r => {
            for (&i, o) in indices.iter().zip(out.chunks_exact_mut(p + 1)) {
                let i = i as usize;
                let res = y[i] - r.dot(i, beta);
                let xv = r.dot(i, v_beta);
                r.set_row(i, -w * (xv + 2.0 * res * v_tau), &mut o[..p]);
                o[p] = -2.0 * res * w * (xv + res * v_tau);
            }
        })
    }

    fn sum_hessian(&self, theta: &[f64], indices: &[u32], hess: &mut [f64]) {
        let y = self.design.y();
        let p = self.design.dim();
        let d = p + 1;
        let (beta, _, w) = self.split(theta);
        with_rows!(self.design, r => {
            for &i in indices {
                let i = i as usize;
                let res = y[i] - r.dot(i, beta);
                for j in 0..p {
                    let xj = r.get(i, j);
                    r.add_row(i, -w * xj, &mut hess[j * d..j * d + p]);
                    hess[j * d + p] -= 2.0 * res * w * xj;
                    hess[p * d + j] -= 2.0 * res * w * xj;
                }
                hess[p * d + p] -= 2.0 * res * res * w;
            }
        })
    }
}

impl LogPrior for LinearRegression {
    fn log_prior(&self, theta: &[f64]) -> f64 {
        self.prior.log_density(theta)
    }

    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.prior.log_density_grad(theta, grad)
    }
}

impl LogPriorHessian for LinearRegression {
    fn add_log_prior_hessian(&self, _theta: &[f64], hess: &mut [f64]) {
        self.prior.add_hessian(self.design.dim() + 1, hess);
    }
}

/// ∇² log p = −I/s²: κ = 1/s², constant.
impl LogPriorCurvature for LinearRegression {
    fn prior_curvature_bound(&self) -> f64 {
        self.prior.precision()
    }

    fn prior_hessian_is_constant(&self) -> bool {
        true
    }
}

/// The design's column names, then `log_sigma`.
impl ParameterNames for LinearRegression {
    fn parameter_names(&self) -> Vec<String> {
        let mut names = self.design.column_names();
        names.push(LOG_SIGMA_NAME.to_string());
        names
    }
}
