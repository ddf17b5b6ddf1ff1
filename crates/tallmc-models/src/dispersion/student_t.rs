//! Robust linear regression: Student-t noise with a fixed number of degrees of freedom.

use super::{DispersionFamily, DispersionGlm, PredictorDerivatives};
use crate::error::{Error, Result};
use statrs::function::gamma::ln_gamma;

/// The Student-t family of robust regression: y = η + σε, ε ~ t_ν, σ = e^τ, ν > 0 fixed. With
/// r = y − η, w = e^{−2τ}, s = r²w and u = ν + s:
///
/// ```text
/// f    = c_ν − τ − ((ν + 1)/2) log1p(s/ν),   c_ν = log Γ((ν+1)/2) − log Γ(ν/2) − ½ log(νπ)
/// f_η  = (ν + 1) r w / u                    f_ηη = (ν + 1) w (s − ν) / u²
/// f_τ  = −1 + (ν + 1) s / u                 f_ητ = −2ν(ν + 1) r w / u²
///                                           f_ττ = −2ν(ν + 1) s / u²
/// ```
///
/// As ν → ∞ these become the Gaussian linear regression's. No bound (τ is unbounded).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StudentTFamily {
    nu: f64,
    /// (ν + 1)/2.
    half_nu_plus_one: f64,
    /// c_ν.
    log_norm: f64,
}

impl StudentTFamily {
    /// The default degrees of freedom, ν = 4: heavy tails with a finite variance.
    pub const DEFAULT_NU: f64 = 4.0;

    /// The family with ν degrees of freedom. Errors unless ν is finite and > 0.
    pub fn new(nu: f64) -> Result<Self> {
        if !(nu.is_finite() && nu > 0.0) {
            return Err(Error::invalid("nu", nu, "degrees of freedom ν, a finite number > 0"));
        }
        let half = 0.5 * (nu + 1.0);
        let log_norm = ln_gamma(half) - ln_gamma(0.5 * nu) - 0.5 * (nu * std::f64::consts::PI).ln();
        Ok(Self { nu, half_nu_plus_one: half, log_norm })
    }

    /// The degrees of freedom ν.
    pub fn nu(&self) -> f64 {
        self.nu
    }
}

/// τ and w = e^{−2τ}, shared by a batch's terms.
#[derive(Debug, Clone, Copy)]
pub struct StudentTAt {
    tau: f64,
    w: f64,
}

impl DispersionFamily for StudentTFamily {
    type At = StudentTAt;

    #[inline]
    fn at(&self, tau: f64) -> StudentTAt {
        StudentTAt { tau, w: (-2.0 * tau).exp() }
    }

    #[inline]
    fn value(&self, at: &StudentTAt, y: f64, eta: f64) -> f64 {
        let r = y - eta;
        let s = r * r * at.w;
        self.log_norm - at.tau - self.half_nu_plus_one * (s / self.nu).ln_1p()
    }

    #[inline]
    fn value_and_scores(&self, at: &StudentTAt, y: f64, eta: f64) -> (f64, f64, f64) {
        let r = y - eta;
        let s = r * r * at.w;
        let value = self.log_norm - at.tau - self.half_nu_plus_one * (s / self.nu).ln_1p();
        let k = self.nu + 1.0;
        let u = self.nu + s;
        (value, k * r * at.w / u, -1.0 + k * s / u)
    }

    #[inline]
    fn derivatives(&self, at: &StudentTAt, y: f64, eta: f64) -> PredictorDerivatives {
        let (value, f_eta, f_tau) = self.value_and_scores(at, y, eta);
        let r = y - eta;
        let s = r * r * at.w;
        let (nu, k) = (self.nu, self.nu + 1.0);
        let u = nu + s;
        let u2 = u * u;
        PredictorDerivatives {
            value,
            eta: f_eta,
            tau: f_tau,
            eta_eta: k * at.w * (s - nu) / u2,
            eta_tau: -2.0 * nu * k * r * at.w / u2,
            tau_tau: -2.0 * nu * k * s / u2,
        }
    }

    fn accepts_response(&self, y: f64) -> bool {
        y.is_finite()
    }

    fn response_domain(&self) -> &'static str {
        "a finite number"
    }

    fn parameter_name(&self) -> &'static str {
        "log_sigma"
    }

    fn parameter_meaning(&self) -> &'static str {
        "the robust regression's log noise scale log σ"
    }
}

/// Robust linear regression: y_i = η_i + σε_i, ε_i ~ t_ν (ν fixed, default 4), η_i = x̃_iᵀβ,
/// θ = (β, log σ), independent N(0, s²) priors on every coordinate, log σ included: the
/// [`DispersionGlm`] of the [`StudentTFamily`]. Outliers pull the fit far less than under
/// Gaussian noise. Parameter names: the design's columns, then `log_sigma`.
pub type RobustRegression = DispersionGlm<StudentTFamily>;
