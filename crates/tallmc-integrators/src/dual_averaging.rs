//! Dual-averaging step-size adaptation (Hoffman & Gelman 2014, Algorithm 5; Nesterov 2009).
//!
//! After iteration t with acceptance statistic α_t:
//!
//! ```text
//! H̄_t = (1 − 1/(t + t₀)) H̄_{t−1} + (δ − α_t)/(t + t₀)
//! log ε_t = μ − (√t / γ) H̄_t
//! log ε̄_t = t^{−κ} log ε_t + (1 − t^{−κ}) log ε̄_{t−1}
//! ```
//!
//! with μ = log(10 ε₀). The iterates ε_t are used during warmup; ε̄ is used afterwards. The
//! defaults are Stan's and REFERENCES §3: δ = 0.8, γ = 0.05, t₀ = 10, κ = 0.75.

use serde::Serialize;
use tallmc_core::{Error, Result};

/// Settings of dual averaging.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DualAveragingConfig {
    /// Target mean acceptance statistic δ ∈ (0, 1).
    pub target_accept: f64,
    /// Shrinkage γ > 0.
    pub gamma: f64,
    /// Stabilization offset t₀ ≥ 0.
    pub t0: f64,
    /// Averaging exponent κ ∈ (0.5, 1].
    pub kappa: f64,
}

impl Default for DualAveragingConfig {
    fn default() -> Self {
        Self { target_accept: 0.8, gamma: 0.05, t0: 10.0, kappa: 0.75 }
    }
}

impl DualAveragingConfig {
    /// Checks every field's range.
    pub fn validate(&self) -> Result<()> {
        tallmc_core::error::check_unit_open("target_accept", self.target_accept)?;
        tallmc_core::error::check_positive("dual averaging gamma", self.gamma)?;
        if !(self.t0.is_finite() && self.t0 >= 0.0) {
            return Err(Error::invalid("dual averaging t0", self.t0, "a finite number ≥ 0"));
        }
        if !(self.kappa > 0.5 && self.kappa <= 1.0) {
            return Err(Error::invalid("dual averaging kappa", self.kappa, "a number in (0.5, 1]"));
        }
        Ok(())
    }
}

/// The state of dual averaging.
#[derive(Debug, Clone, PartialEq)]
pub struct DualAveraging {
    config: DualAveragingConfig,
    mu: f64,
    h_bar: f64,
    log_step: f64,
    log_step_bar: f64,
    t: u64,
}

impl DualAveraging {
    /// Starts dual averaging from step size ε₀ (μ = log 10ε₀). The configuration is validated.
    pub fn new(config: DualAveragingConfig, initial_step_size: f64) -> Result<Self> {
        config.validate()?;
        tallmc_core::error::check_positive("initial step size", initial_step_size)?;
        let mut da = Self { config, mu: 0.0, h_bar: 0.0, log_step: 0.0, log_step_bar: 0.0, t: 0 };
        da.restart(initial_step_size);
        Ok(da)
    }

    /// Restarts from step size ε₀ (used after each metric update during warmup).
    pub fn restart(&mut self, initial_step_size: f64) {
        self.mu = (10.0 * initial_step_size).ln();
        self.h_bar = 0.0;
        self.log_step = initial_step_size.ln();
        self.log_step_bar = 0.0;
        self.t = 0;
    }

    /// Records the acceptance statistic of one iteration (non-finite counts as 0).
    pub fn update(&mut self, accept_stat: f64) {
        let alpha = if accept_stat.is_finite() { accept_stat.clamp(0.0, 1.0) } else { 0.0 };
        self.t += 1;
        let t = self.t as f64;
        let c = self.config;
        let eta = 1.0 / (t + c.t0);
        self.h_bar = (1.0 - eta) * self.h_bar + eta * (c.target_accept - alpha);
        self.log_step = self.mu - t.sqrt() / c.gamma * self.h_bar;
        let w = t.powf(-c.kappa);
        self.log_step_bar = w * self.log_step + (1.0 - w) * self.log_step_bar;
    }

    /// The current (warmup) step size ε_t.
    pub fn step_size(&self) -> f64 {
        self.log_step.exp()
    }

    /// The averaged step size ε̄_t, to use after warmup (ε_t if no update has been made).
    pub fn final_step_size(&self) -> f64 {
        if self.t == 0 { self.step_size() } else { self.log_step_bar.exp() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converges_to_the_step_size_that_hits_the_target() {
        // Synthetic acceptance curve α(ε) = exp(−ε²): the target 0.8 is hit at ε* = √(−ln 0.8).
        let target = (-(0.8f64).ln()).sqrt();
        let mut da = DualAveraging::new(DualAveragingConfig::default(), 1.0).unwrap();
        for _ in 0..2000 {
            let e = da.step_size();
            da.update((-e * e).exp());
        }
        let rel = (da.final_step_size() - target).abs() / target;
        assert!(rel < 0.02, "final {} vs {target}", da.final_step_size());
    }

    #[test]
    fn bad_settings_are_errors() {
        let c = DualAveragingConfig { target_accept: 1.0, ..Default::default() };
        assert!(DualAveraging::new(c, 1.0).is_err());
        let c = DualAveragingConfig { kappa: 0.4, ..Default::default() };
        assert!(c.validate().is_err());
        assert!(DualAveraging::new(DualAveragingConfig::default(), -1.0).is_err());
    }
}
