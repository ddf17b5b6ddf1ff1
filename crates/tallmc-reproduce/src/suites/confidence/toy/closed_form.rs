//! The closed-form posterior of the toy: σ² is inverse-gamma, μ a scaled Student t (see the
//! parent module's docs), with the moments of σ by quadrature.

use serde::Serialize;

use crate::{Error, Result};

/// Neumaier-compensated sum.
fn compensated_sum(values: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut c) = (0.0f64, 0.0f64);
    for v in values {
        let t = sum + v;
        c += if sum.abs() >= v.abs() { (sum - t) + v } else { (v - t) + sum };
        sum = t;
    }
    sum + c
}

/// Half-width of the quadrature grid in posterior sds of τ.
const GRID_SDS: f64 = 12.0;
/// Grid intervals of the quadrature.
const GRID_INTERVALS: usize = 4000;

/// The closed-form posterior of the toy (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClosedForm {
    /// Rows.
    pub n: usize,
    /// Sample mean ȳ.
    pub y_mean: f64,
    /// S = Σ(y_i − ȳ)².
    pub sum_sq: f64,
    /// Sample sd s = √(S/(n − 1)) (the paper's "empirical" value, red triangle in Fig. 4).
    pub sample_sd: f64,
    /// Posterior mean of μ (= ȳ).
    pub mu_mean: f64,
    /// Posterior sd of μ.
    pub mu_sd: f64,
    /// Posterior mean of σ.
    pub sigma_mean: f64,
    /// Posterior sd of σ.
    pub sigma_sd: f64,
    /// Mode of π(τ), τ* = ½ log(S/(n − 1)).
    tau_star: f64,
    /// log of the normalizing constant of exp(g), g(τ) = log π(τ) − log π(τ*).
    log_norm: f64,
}

impl ClosedForm {
    /// The posterior for the observations `y` (n ≥ 4, not all equal).
    pub fn from_data(y: &[f64]) -> Result<Self> {
        let n = y.len();
        if n < 4 {
            return Err(Error::Core(tallmc_core::Error::invalid("n", n, "at least 4")));
        }
        let nf = n as f64;
        let y_mean = compensated_sum(y.iter().copied()) / nf;
        let sum_sq = compensated_sum(y.iter().map(|v| (v - y_mean) * (v - y_mean)));
        if !(sum_sq > 0.0 && sum_sq.is_finite()) {
            return Err(Error::Core(tallmc_core::Error::invalid(
                "sum of squares",
                sum_sq,
                "finite and > 0",
            )));
        }
        let k = nf - 1.0;
        let s2 = sum_sq / k;
        let tau_star = 0.5 * s2.ln();
        let mut cf = Self {
            n,
            y_mean,
            sum_sq,
            sample_sd: s2.sqrt(),
            mu_mean: y_mean,
            mu_sd: (s2 / nf * k / (k - 2.0)).sqrt(),
            sigma_mean: 0.0,
            sigma_sd: 0.0,
            tau_star,
            log_norm: 0.0,
        };
        // Quadrature in Δ = τ − τ*: weights w(Δ) = exp(g(Δ)), σ = e^{τ*} e^Δ.
        let h = GRID_SDS / (2.0 * k).sqrt() * 2.0 / GRID_INTERVALS as f64;
        let grid: Vec<(f64, f64)> = (0..=GRID_INTERVALS)
            .map(|j| {
                let d = (j as f64 - GRID_INTERVALS as f64 / 2.0) * h;
                let trap = if j == 0 || j == GRID_INTERVALS { 0.5 } else { 1.0 };
                (d, trap * cf.g(d))
            })
            .collect();
        let z = compensated_sum(grid.iter().map(|&(_, w)| w)) * h;
        let mean_factor = compensated_sum(grid.iter().map(|&(d, w)| w * d.exp())) * h / z;
        let var_factor =
            compensated_sum(grid.iter().map(|&(d, w)| w * (d.exp() - mean_factor).powi(2))) * h / z;
        cf.log_norm = z.ln();
        cf.sigma_mean = tau_star.exp() * mean_factor;
        cf.sigma_sd = tau_star.exp() * var_factor.sqrt();
        Ok(cf)
    }

    /// exp(log π(τ* + Δ) − log π(τ*)) = exp(−kΔ − (k/2)(e^{−2Δ} − 1)), k = n − 1.
    fn g(&self, delta: f64) -> f64 {
        let k = self.n as f64 - 1.0;
        (-k * delta - 0.5 * k * ((-2.0 * delta).exp() - 1.0)).exp()
    }

    /// The posterior density of σ.
    pub fn sigma_density(&self, sigma: f64) -> f64 {
        if !(sigma > 0.0 && sigma.is_finite()) {
            return 0.0;
        }
        self.g(sigma.ln() - self.tau_star) / self.log_norm.exp() / sigma
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ln Γ(z): recursion up to z ≥ 15, then Stirling's series (error < 1e-16 there).
    fn ln_gamma(mut z: f64) -> f64 {
        let mut shift = 0.0;
        while z < 15.0 {
            shift -= z.ln();
            z += 1.0;
        }
        let z2 = z * z;
        shift + (z - 0.5) * z.ln() - z + 0.5 * (2.0 * std::f64::consts::PI).ln() + 1.0 / (12.0 * z)
            - 1.0 / (360.0 * z * z2)
            + 1.0 / (1260.0 * z2 * z2 * z)
            - 1.0 / (1680.0 * z2 * z2 * z2 * z)
    }

    /// E[σ] = √S Γ((k−1)/2)/(√2 Γ(k/2)) and Var σ = S/(k − 2) − E[σ]² for S/σ² ~ χ²_k.
    fn exact_sigma_moments(sum_sq: f64, n: usize) -> (f64, f64) {
        let k = n as f64 - 1.0;
        let mean = (sum_sq / 2.0).sqrt() * (ln_gamma((k - 1.0) / 2.0) - ln_gamma(k / 2.0)).exp();
        (mean, (sum_sq / (k - 2.0) - mean * mean).sqrt())
    }

    #[test]
    fn quadrature_matches_the_chi_square_moments() {
        for n in [11usize, 101, 5000] {
            let y: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1009) as f64 / 100.0 - 3.0).collect();
            let cf = ClosedForm::from_data(&y).unwrap();
            let (mean, sd) = exact_sigma_moments(cf.sum_sq, n);
            // At n = 11 the ±12-sd window cuts a right tail of weight ≈ e^{−22}; from n ≈ 100 on
            // π(τ) is close enough to Gaussian that the window loses nothing; the reference itself
            // is then the limit (ln Γ ≈ 2·10⁴ at n = 5000: ~1e-12 absolute rounding). Checked
            // offline with 40-digit arithmetic (mpmath) at the suite's n = 10⁵: agreement to 1e-15.
            let tol = if n < 100 { 1e-8 } else { 1e-10 };
            let rel = cf.sigma_mean / mean - 1.0;
            assert!(rel.abs() < tol, "n = {n}: {} vs {mean}", cf.sigma_mean);
            // The sd is a difference of nearly equal moments in the Γ form: fewer digits.
            let rel = cf.sigma_sd / sd - 1.0;
            assert!(rel.abs() < 1e3 * tol, "n = {n}: {} vs {sd}", cf.sigma_sd);
            // μ: ȳ + (s/√n) T_{n−1}.
            let k = n as f64 - 1.0;
            let mu_sd = (cf.sum_sq / k / n as f64 * k / (k - 2.0)).sqrt();
            assert!((cf.mu_sd / mu_sd - 1.0).abs() < 1e-12);
            // The density integrates to 1.
            let (lo, hi) = (cf.sigma_mean - 12.0 * cf.sigma_sd, cf.sigma_mean + 40.0 * cf.sigma_sd);
            let m = 20_000;
            let h = (hi - lo.max(1e-9)) / m as f64;
            let area: f64 =
                (0..m).map(|j| cf.sigma_density(lo.max(1e-9) + (j as f64 + 0.5) * h) * h).sum();
            assert!((area - 1.0).abs() < 1e-4, "n = {n}: ∫ density = {area}");
        }
    }

    #[test]
    fn closed_form_refuses_degenerate_data() {
        assert!(ClosedForm::from_data(&[1.0, 2.0, 3.0]).is_err());
        assert!(ClosedForm::from_data(&[2.0; 10]).is_err());
        assert!(ClosedForm::from_data(&[1.0, f64::NAN, 2.0, 3.0, 4.0]).is_err());
        assert_eq!(ClosedForm::from_data(&[1.0, 2.0, 3.0, 5.0]).unwrap().sigma_density(-1.0), 0.0);
    }
}
