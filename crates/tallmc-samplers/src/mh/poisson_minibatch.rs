//! The Poisson minibatch of TunaMH (Zhang, Cooper & De Sa 2020), shared by [`TunaMh`] and
//! [`MhSs`]: per-datum energies U_i whose changes are bounded, |U_i(θ′) − U_i(θ)| ≤ c_i M(θ, θ′)
//! with M symmetric in (θ, θ′), and C = Σ_i c_i.
//!
//! ```text
//! λ = χ C² M²,   B ~ Poisson(λ + C M),   i₁…i_B ~ c_i / C (an alias table)
//! keep i_b with probability (λ c_i M + C φ_i) / (λ c_i M + C c_i M),   φ_i = ½ (ΔU_i + c_i M)
//! log factor = Σ_{kept} [log(λ c_i M + C (c_i M − φ_i)) − log(λ c_i M + C φ_i)]
//! ```
//!
//! Added to the log of the cheap part of the MH ratio (prior, proposal, and for MH-SS the
//! expansions' sums), this gives an exactly π-reversible kernel (Zhang et al. 2020, Theorem 1).
//! A drawn datum whose |ΔU_i| exceeds c_i M beyond rounding is counted: its bound is wrong.
//!
//! [`TunaMh`]: super::TunaMh
//! [`MhSs`]: super::MhSs

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Poisson};
use tallmc_core::{AliasTable, Error, Result, Terms};

use super::index_stream::IndexStream;

/// The alias table of the per-datum constants c_i, and the constants.
#[derive(Debug, Clone)]
pub(crate) struct PoissonMinibatch {
    alias: AliasTable,
    constants: Vec<f64>,
}

/// What one draw gave: λ = χC²M² and the Poisson mean λ + CM.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Drawn {
    pub(crate) lambda: f64,
    pub(crate) mean: f64,
}

impl PoissonMinibatch {
    /// The minibatch over `constants` (`what` names them in errors); `None` when every one is
    /// 0 (the energies never change: no data factor).
    pub(crate) fn new(constants: Vec<f64>, what: &'static str) -> Result<Option<Self>> {
        if let Some(i) = constants.iter().position(|c| !(c.is_finite() && *c >= 0.0)) {
            return Err(Error::invalid(
                what,
                format!("{} for datum {i}", constants[i]),
                "a finite number ≥ 0",
            ));
        }
        if constants.iter().all(|&c| c == 0.0) {
            return Ok(None);
        }
        Ok(Some(Self { alias: AliasTable::new(&constants)?, constants }))
    }

    /// C = Σ_i c_i.
    pub(crate) fn total(&self) -> f64 {
        self.alias.total()
    }

    /// B ~ Poisson(χC²M² + CM) (from `rng`) and the next B indices of `stream`, drawn ∝ c_i,
    /// into `indices` (their rows present in `model`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn draw<M: Terms + ?Sized, R: Rng + ?Sized>(
        &self, model: &M, chi: f64, m: f64, indices: &mut Vec<u32>, rng: &mut R,
        stream: &mut IndexStream,
    ) -> Result<Drawn> {
        let c = self.total();
        let lambda = chi * c * c * m * m;
        let mean = lambda + c * m;
        if !mean.is_finite() {
            return Err(Error::invalid(
                "Poisson minibatch mean χC²M² + CM",
                mean,
                "a finite number (a proposal at a finite distance)",
            ));
        }
        let b = if mean > 0.0 {
            let poisson = Poisson::new(mean)
                .map_err(|e| Error::invalid("Poisson minibatch mean", mean, e.to_string()))?;
            poisson.sample(rng) as usize
        } else {
            0
        };
        indices.clear();
        stream.extend(model, &self.alias, b, indices)?;
        Ok(Drawn { lambda, mean })
    }

    /// The log factor of the kept indices, given each index's energy at θ and θ′ through
    /// `at_theta[k]` − `at_candidate[k]` = ΔU (log-likelihood terms or remainders at θ and
    /// θ′); counts bound violations into `exceeded`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn log_factor<R: Rng + ?Sized>(
        &self, drawn: Drawn, m: f64, indices: &[u32], at_theta: &[f64], at_candidate: &[f64],
        exceeded: &mut u64, rng: &mut R,
    ) -> f64 {
        let c = self.total();
        let mut log_factor = 0.0;
        for (k, &i) in indices.iter().enumerate() {
            let cm = self.constants[i as usize] * m;
            let delta = at_theta[k] - at_candidate[k];
            let slack = 1e-9 * (at_theta[k].abs() + at_candidate[k].abs()) + 1e-300;
            *exceeded += u64::from(delta.abs() > cm + slack);
            let forward = (0.5 * (delta + cm)).clamp(0.0, cm);
            let backward = cm - forward;
            let base = drawn.lambda * cm;
            let v: f64 = rng.random();
            if v * (base + c * cm) < base + c * forward {
                log_factor += (base + c * backward).ln() - (base + c * forward).ln();
            }
        }
        log_factor
    }
}
