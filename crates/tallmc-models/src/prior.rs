//! The independent normal prior N(0, s² I_d) shared by the regression models.

use crate::error::{Result, check_positive};

/// log p(θ) = −‖θ‖²/(2s²) − (d/2) log(2πs²): independent N(0, s²) on every coordinate
/// (normalized, so log p is a proper log density).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct NormalPrior {
    sd: f64,
    precision: f64,
    log_norm_per_coord: f64,
}

impl NormalPrior {
    pub(crate) fn new(sd: f64) -> Result<Self> {
        check_positive("prior_sd", sd)?;
        Ok(Self {
            sd,
            precision: 1.0 / (sd * sd),
            log_norm_per_coord: -0.5 * (2.0 * std::f64::consts::PI * sd * sd).ln(),
        })
    }

    pub(crate) fn sd(&self) -> f64 {
        self.sd
    }

    /// 1/s²: minus the (constant, diagonal) Hessian of log p, and its curvature bound κ.
    pub(crate) fn precision(&self) -> f64 {
        self.precision
    }

    pub(crate) fn log_density(&self, theta: &[f64]) -> f64 {
        let ss: f64 = theta.iter().map(|t| t * t).sum();
        -0.5 * self.precision * ss + theta.len() as f64 * self.log_norm_per_coord
    }

    /// Returns log p(θ) and adds ∇ log p(θ) = −θ/s² into `grad`.
    pub(crate) fn log_density_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        for (g, t) in grad.iter_mut().zip(theta) {
            *g -= self.precision * t;
        }
        self.log_density(theta)
    }

    /// Adds ∇² log p = −I/s² into the row-major d × d `hess`.
    pub(crate) fn add_hessian(&self, dim: usize, hess: &mut [f64]) {
        for j in 0..dim {
            hess[j * dim + j] -= self.precision;
        }
    }
}
