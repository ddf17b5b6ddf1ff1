//! Settings of [`Sbps`](super::Sbps): SBPS, or pSBPS with a preconditioner.

use serde::Serialize;
use tallmc_core::Result;

use super::common::{VelocityDistribution, check_refresh_rate};
use super::precondition::PreconditionerConfig;
use super::regression::{BandConfig, SlopePrior};
use crate::sg::check_batch;

/// Settings of [`Sbps`](super::Sbps) (SBPS, or pSBPS with a preconditioner).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SbpsConfig {
    /// Minibatch size n, 1 ≤ n ≤ N (checked against N by `build_chain`; default 100).
    /// n ≥ 2 is needed to estimate the noise σ_j.
    pub batch: usize,
    /// Band multiple k > 0 (default 3, the paper's; §7.1 recommends k ∈ \[3, 5\]).
    pub k: f64,
    /// Refreshment rate λ_ref ≥ 0 (default 0.05, the authors' `ref_const`).
    pub refresh_rate: f64,
    /// Reference distribution of v (default the unit sphere, as in the paper).
    pub velocity: VelocityDistribution,
    /// Knots and horizon of the band.
    pub band: BandConfig,
    /// Prior on the regression slope.
    pub slope_prior: SlopePrior,
    /// `Some` for pSBPS (diagonal preconditioner adapted during warmup), `None` for SBPS.
    pub preconditioner: Option<PreconditionerConfig>,
}

impl Default for SbpsConfig {
    /// SBPS with n = 100, k = 3, λ_ref = 0.05, sphere velocities, default band and slope prior.
    fn default() -> Self {
        Self {
            batch: 100,
            k: 3.0,
            refresh_rate: 0.05,
            velocity: VelocityDistribution::Sphere,
            band: BandConfig::default(),
            slope_prior: SlopePrior::default(),
            preconditioner: None,
        }
    }
}

impl SbpsConfig {
    /// SBPS with minibatch size `batch` and the other defaults.
    pub fn with_batch(batch: usize) -> Self {
        Self { batch, ..Self::default() }
    }

    /// The same settings with the default pSBPS preconditioner (β = 0.99, ε = 10⁻⁴).
    pub fn preconditioned(self) -> Self {
        Self { preconditioner: Some(PreconditionerConfig::default()), ..self }
    }

    /// Checks every range that does not depend on the model (errors name the value); n ≤ N is
    /// checked when a chain is built.
    pub fn validate(&self) -> Result<()> {
        check_batch("SBPS batch size n", self.batch, None)?;
        tallmc_core::error::check_positive("SBPS band multiple k", self.k)?;
        check_refresh_rate(self.refresh_rate)?;
        self.band.validate()?;
        self.slope_prior.validate()?;
        self.preconditioner.as_ref().map_or(Ok(()), PreconditionerConfig::validate)
    }
}
