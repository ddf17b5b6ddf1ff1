//! The preconditioned Crank–Nicolson (pCN) proposal around a Gaussian reference N(c, Σ):
//!
//! ```text
//! θ′ = c + ρ (θ − c) + √(1 − ρ²) L z,     z ~ N(0, I),  Σ = L Lᵀ,  ρ ∈ [0, 1).
//! ```
//!
//! **Correction.** q(θ′|θ) = N(θ′; c + ρ(θ − c), (1 − ρ²)Σ) is reversible with respect to
//! N(c, Σ): N(θ; c, Σ) q(θ′|θ) = N(θ′; c, Σ) q(θ|θ′) (both sides are the density of a pair whose
//! marginals are N(c, Σ) and whose correlation is ρ). So the MH correction is
//!
//! ```text
//! log q(θ|θ′) − log q(θ′|θ) = log N(θ; c, Σ) − log N(θ′; c, Σ) = ½ (‖w′‖² − ‖w‖²),
//! ```
//!
//! with w = L⁻¹(θ − c) and w′ = L⁻¹(θ′ − c) = ρ w + √(1 − ρ²) z: O(d²) per proposal (one
//! triangular solve), no data.
//!
//! **Why it suits tall data** (Cornish et al. 2019, §4–5). With c the posterior mode and Σ the
//! Laplace covariance, N(c, Σ) is the order-2 Taylor expansion of the log posterior at the mode up
//! to its O(n^{−1/2}) skewness (Bernstein–von Mises). An MH kernel whose target is that expansion
//! accepts every pCN proposal, whatever ρ, so the acceptance of the true target stays near 1
//! even at ρ = 0 (an independence sampler), and successive draws are correlated about ρ, not
//! 1 − O(1/d) as a random walk's. SMH's cost per iteration stays O(1) (order 1) or O(n^{−1/2})
//! (order 2): its bounds depend on ‖θ − c‖ and ‖θ′ − c‖, which pCN keeps at posterior size.
//! Far from Gaussian (few data, a boundary, heavy tails), a small ρ makes large jumps that are
//! rarely accepted: the acceptance rate shows it, and a larger ρ moves more locally.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;
use tallmc_core::linalg::Cholesky;
use tallmc_core::{Error, EvalCounts, Result, Terms, Tuning};

use super::proposal::Proposal;

/// Settings of [`CrankNicolsonProposal`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CrankNicolsonConfig {
    /// The reference's mean c (d values): usually the posterior mode.
    pub center: Vec<f64>,
    /// The reference's covariance Σ (row-major d × d, symmetric positive definite): usually the
    /// Laplace covariance.
    pub covariance: Vec<f64>,
    /// The autocorrelation ρ ∈ [0, 1) of the proposal (0: independent draws from N(c, Σ)).
    pub rho: f64,
}

impl CrankNicolsonConfig {
    /// Checks ρ and that c and Σ are finite (their sizes are checked against the model in
    /// `init`).
    pub fn validate(&self) -> Result<()> {
        if !(self.rho.is_finite() && (0.0..1.0).contains(&self.rho)) {
            return Err(Error::invalid("pCN rho", self.rho, "a number in [0, 1)"));
        }
        tallmc_core::error::check_finite("pCN center", &self.center)?;
        tallmc_core::error::check_finite("pCN covariance", &self.covariance)
    }
}

/// The tuning of a [`CrankNicolsonProposal`] (fixed: it adapts nothing).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CrankNicolsonTuning {
    /// ρ.
    pub rho: f64,
    /// The innovation scale √(1 − ρ²) (the `stepsize__` column).
    pub innovation: f64,
}

impl Tuning for CrankNicolsonTuning {
    /// `Step size = √(1 − ρ²)` and what it is.
    fn comment_lines(&self) -> Vec<String> {
        vec![
            format!("Step size = {}", self.innovation),
            format!(
                "(pCN proposal around the mode, rho = {}: the step size is sqrt(1 - rho^2))",
                self.rho
            ),
        ]
    }
}

/// The pCN proposal (see the module docs).
#[derive(Debug, Clone)]
pub struct CrankNicolsonProposal {
    config: CrankNicolsonConfig,
    factor: Cholesky,
    innovation: f64,
    /// w = L⁻¹(θ − c) of the last θ seen.
    w: Vec<f64>,
    z: Vec<f64>,
}

impl CrankNicolsonProposal {
    /// A proposal with validated settings.
    pub fn new(config: CrankNicolsonConfig) -> Result<Self> {
        config.validate()?;
        let innovation = (1.0 - config.rho * config.rho).sqrt();
        Ok(Self { config, factor: Cholesky::identity(0), innovation, w: Vec::new(), z: Vec::new() })
    }

    /// Sizes the proposal for dimension `dim` and factors Σ.
    pub fn setup(&mut self, dim: usize) -> Result<()> {
        if self.config.center.len() != dim {
            return Err(Error::dimension("pCN center", dim, self.config.center.len()));
        }
        if self.config.covariance.len() != dim * dim {
            return Err(Error::dimension(
                "pCN covariance (d × d entries)",
                dim * dim,
                self.config.covariance.len(),
            ));
        }
        self.factor = Cholesky::new(&self.config.covariance, dim, "pCN covariance")?;
        self.w = vec![0.0; dim];
        self.z = vec![0.0; dim];
        Ok(())
    }

    /// Writes θ′ into `out` and returns log q(θ|θ′) − log q(θ′|θ). Draws d standard normals.
    pub fn draw<R: Rng + ?Sized>(&mut self, theta: &[f64], rng: &mut R, out: &mut [f64]) -> f64 {
        let rho = self.config.rho;
        for ((w, t), c) in self.w.iter_mut().zip(theta).zip(&self.config.center) {
            *w = t - c;
        }
        self.factor.solve_lower_in_place(&mut self.w);
        let before: f64 = self.w.iter().map(|v| v * v).sum();
        for (w, z) in self.w.iter_mut().zip(self.z.iter_mut()) {
            *z = StandardNormal.sample(rng);
            *w = rho * *w + self.innovation * *z;
        }
        let after: f64 = self.w.iter().map(|v| v * v).sum();
        self.factor.mul_lower(&self.w, out);
        for (o, c) in out.iter_mut().zip(&self.config.center) {
            *o += c;
        }
        0.5 * (after - before)
    }

    /// The (fixed) tuning.
    pub fn tuning(&self) -> CrankNicolsonTuning {
        CrankNicolsonTuning { rho: self.config.rho, innovation: self.innovation }
    }
}

impl<M: Terms + ?Sized> Proposal<M> for CrankNicolsonProposal {
    type Tuning = CrankNicolsonTuning;

    fn init(&mut self, model: &M) -> Result<()> {
        self.setup(model.dim())
    }
    fn propose<R: Rng + ?Sized>(
        &mut self, _m: &M, theta: &[f64], out: &mut [f64], rng: &mut R,
    ) -> (f64, EvalCounts) {
        (self.draw(theta, rng, out), EvalCounts::ZERO)
    }
    fn tuning(&self) -> CrankNicolsonTuning {
        CrankNicolsonProposal::tuning(self)
    }
    fn step_size(&self) -> f64 {
        self.innovation
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tallmc_core::rng::chain_rng;

    fn proposal(rho: f64) -> CrankNicolsonProposal {
        let cfg = CrankNicolsonConfig {
            center: vec![1.0, -2.0],
            covariance: vec![2.0, 0.6, 0.6, 0.5],
            rho,
        };
        let mut p = CrankNicolsonProposal::new(cfg).unwrap();
        p.setup(2).unwrap();
        p
    }

    /// log N(θ; c, Σ) up to its constant, for the proposal's c and Σ.
    fn log_reference(theta: &[f64]) -> f64 {
        let (a, b) = (theta[0] - 1.0, theta[1] + 2.0);
        let det = 2.0 * 0.5 - 0.36;
        -0.5 * (0.5 * a * a - 2.0 * 0.6 * a * b + 2.0 * b * b) / det
    }

    #[test]
    fn correction_is_the_reference_density_ratio() {
        let mut p = proposal(0.3);
        let mut rng = chain_rng(4, 0);
        let theta = [0.2, -1.1];
        let mut out = [0.0; 2];
        for _ in 0..20 {
            let corr = p.draw(&theta, &mut rng, &mut out);
            let expected = log_reference(&theta) - log_reference(&out);
            assert!((corr - expected).abs() < 1e-12, "{corr} vs {expected}");
        }
    }

    #[test]
    fn draws_have_the_conditional_mean_and_covariance() {
        // θ′ | θ ~ N(c + ρ(θ − c), (1 − ρ²)Σ): means within 5 standard errors, variances within
        // 5 standard errors (sd of a sample variance ≈ σ²√(2/k)).
        let rho = 0.6;
        let mut p = proposal(rho);
        let mut rng = chain_rng(7, 0);
        let theta = [3.0, 0.0];
        let k = 40_000;
        let (mut s, mut ss) = ([0.0; 2], [0.0; 2]);
        let mut out = [0.0; 2];
        for _ in 0..k {
            p.draw(&theta, &mut rng, &mut out);
            for j in 0..2 {
                s[j] += out[j];
                ss[j] += out[j] * out[j];
            }
        }
        let kf = k as f64;
        let mean = [1.0 + rho * 2.0, -2.0 + rho * 2.0];
        let var = [(1.0 - rho * rho) * 2.0, (1.0 - rho * rho) * 0.5];
        for j in 0..2 {
            let m = s[j] / kf;
            let v = ss[j] / kf - m * m;
            assert!((m - mean[j]).abs() < 5.0 * (var[j] / kf).sqrt(), "{j}: mean {m}");
            assert!((v - var[j]).abs() < 5.0 * var[j] * (2.0 / kf).sqrt(), "{j}: var {v}");
        }
    }

    #[test]
    fn bad_settings_are_named() {
        for rho in [-0.1, 1.0, f64::NAN] {
            let cfg = CrankNicolsonConfig { center: vec![0.0], covariance: vec![1.0], rho };
            let err = CrankNicolsonProposal::new(cfg).unwrap_err().to_string();
            assert!(err.contains("rho"), "{err}");
        }
        let cfg = CrankNicolsonConfig { center: vec![0.0], covariance: vec![1.0], rho: 0.5 };
        let mut p = CrankNicolsonProposal::new(cfg).unwrap();
        assert!(p.setup(2).unwrap_err().to_string().contains("pCN center"));
        let cfg = CrankNicolsonConfig { center: vec![0.0], covariance: vec![-1.0], rho: 0.5 };
        let mut p = CrankNicolsonProposal::new(cfg).unwrap();
        assert!(p.setup(1).is_err());
    }
}
