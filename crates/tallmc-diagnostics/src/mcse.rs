//! Monte Carlo standard errors (MCSE) of posterior mean, standard deviation and quantiles, as
//! ArviZ 0.23 (`arviz.stats.diagnostics.mcse`) computes them.
//!
//! All three pool the M chains of N draws (S = MN draws in all).
//!
//! * **Mean** (`method="mean"`): MCSE(x̄) = sd / √ESS_mean, sd with divisor S − 1 and
//!   ESS_mean = [`ess_mean`](crate::ess_mean) (split, not rank-normalized).
//! * **Standard deviation** (`method="sd"`; the delta-method formula ArviZ ≥ 0.19 shares with
//!   posterior ≥ 1.5, *not* the older one based on `ess_sd` of x and x²): with
//!   c = (x − x̄)² over all draws, σ̂² = mean(c) (divisor S),
//!   Var(σ̂²) ≈ (mean(c²) − σ̂⁴) / ESS_mean(c), and
//!   MCSE(σ̂) = √(Var(σ̂²) / (4 σ̂²)).
//! * **Quantile** (`method="quantile"`; Vehtari et al. 2021 §4.3): with E = ESS of the
//!   indicator 1{x ≤ Q(p)} ([`ess_quantile`](crate::ess_quantile)), take the 15.87 % and
//!   84.13 % quantiles (±1 sd of a normal) a, b of Beta(Ep + 1, E(1 − p) + 1); with the draws
//!   sorted, x₍₀₎ ≤ … ≤ x₍S−1₎, MCSE = (x₍⌈bS − 1⌉₎ − x₍⌊aS − 1⌋₎)/2, the indices clamped to
//!   [0, S − 1].
//!
//! # Degenerate input (ArviZ's behaviour, matched)
//!
//! Constant chains: MCSE of the mean and of quantiles is 0, MCSE of the sd is NaN (0/0).

use crate::chains::{Matrix, check_prob, validate, var_unchecked};
use crate::error::Result;
use crate::ess::{MIN_DRAWS, ess_core, quantile_ess};

/// Beta probabilities at ±1 standard deviation of a normal (ArviZ's constants).
const ONE_SIGMA_PROBS: (f64, f64) = (0.158_655_3, 0.841_344_7);

/// MCSE of the posterior mean: sd/√ESS_mean (ArviZ `mcse(method="mean")`). See the
/// [module docs](self).
///
/// # Errors
/// No chains, unequal lengths, fewer than [`MIN_DRAWS`] draws per chain, a non-finite draw.
///
/// # Example
/// ```
/// let x = [[0.3, -1.2, 0.8, 0.1, -0.4, 1.5, -0.7, 0.2]];
/// let se = tallmc_diagnostics::mcse_mean(&x).unwrap();
/// assert!(se > 0.0 && se < 1.0);
/// ```
pub fn mcse_mean<C: AsRef<[f64]>>(chains: &[C]) -> Result<f64> {
    validate(chains, "mcse_mean", MIN_DRAWS)?;
    Ok(mean_mcse(&Matrix::stack(chains)))
}

/// MCSE of the mean of validated, stacked draws.
pub(crate) fn mean_mcse(x: &Matrix) -> f64 {
    let sd = var_unchecked(&x.data, 1).sqrt();
    sd / ess_core(&x.split()).sqrt()
}

/// MCSE of the posterior standard deviation, by the delta method on the ESS of the squared
/// deviations (ArviZ `mcse(method="sd")`). See the [module docs](self).
///
/// # Errors
/// As [`mcse_mean`].
pub fn mcse_sd<C: AsRef<[f64]>>(chains: &[C]) -> Result<f64> {
    validate(chains, "mcse_sd", MIN_DRAWS)?;
    Ok(sd_mcse(&Matrix::stack(chains)))
}

/// MCSE of the sd of validated, stacked draws.
pub(crate) fn sd_mcse(x: &Matrix) -> f64 {
    let xbar = x.mean();
    let c = x.map(|v| (v - xbar) * (v - xbar));
    let ess = ess_core(&c.split());
    let evar = c.mean();
    let mean_c2 = c.data.iter().map(|v| v * v).sum::<f64>() / c.data.len() as f64;
    let varvar = (mean_c2 - evar * evar) / ess;
    (varvar / evar / 4.0).sqrt()
}

/// MCSE of the `prob` quantile, from the Beta posterior of the quantile's coverage given its
/// ESS (ArviZ `mcse(method="quantile", prob=…)`). See the [module docs](self).
///
/// # Errors
/// As [`mcse_mean`], and `prob` outside [0, 1].
pub fn mcse_quantile<C: AsRef<[f64]>>(chains: &[C], prob: f64) -> Result<f64> {
    validate(chains, "mcse_quantile", MIN_DRAWS)?;
    check_prob(prob)?;
    let x = Matrix::stack(chains);
    let sorted = x.sorted();
    let ess = quantile_ess(&x, &sorted, prob);
    let size = sorted.len();
    let (lo, hi) = if ess.is_finite() && ess > 0.0 {
        let a = ess * prob + 1.0;
        let b = ess * (1.0 - prob) + 1.0;
        let inv = |p: f64| statrs::function::beta::inv_beta_reg(a, b, p);
        (inv(ONE_SIGMA_PROBS.0), inv(ONE_SIGMA_PROBS.1))
    } else {
        (f64::NAN, f64::NAN)
    };
    // NaN bounds fall back to the extremes, as numpy's nanmax / nanmin do in ArviZ.
    let lo_index = nan_to(lo * size as f64 - 1.0, 0.0).max(0.0).floor() as usize;
    let hi_index = nan_to(hi * size as f64 - 1.0, (size - 1) as f64).min((size - 1) as f64).ceil();
    let hi_index = hi_index.max(0.0) as usize;
    Ok((sorted[hi_index] - sorted[lo_index.min(size - 1)]) / 2.0)
}

fn nan_to(v: f64, fallback: f64) -> f64 {
    if v.is_nan() { fallback } else { v }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_chains_follow_arviz() {
        let c = [[1.5; 10], [1.5; 10]];
        assert_eq!(mcse_mean(&c).unwrap(), 0.0);
        assert!(mcse_sd(&c).unwrap().is_nan());
        assert_eq!(mcse_quantile(&c, 0.05).unwrap(), 0.0);
    }

    #[test]
    fn bad_input() {
        assert!(mcse_quantile(&[[1.0, 2.0, 3.0, 4.0]], 2.0).is_err());
        assert!(mcse_sd(&[[1.0, 2.0, 3.0]]).is_err());
    }
}
