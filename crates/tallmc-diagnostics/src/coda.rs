//! ESS as R's coda package computes it (`effectiveSize`), which is what the HMC-ECS paper
//! (Dang et al. 2019) used for its inefficiency factors. Reference: Plummer, Best, Cowles &
//! Vines (2006), *CODA: convergence diagnosis and output analysis for MCMC*, R News 6(1);
//! the R functions `coda::effectiveSize`, `coda::spectrum0.ar`, `stats::ar.yw`.
//!
//! # What is computed (per chain of n draws)
//!
//! 1. **Trend check** (`spectrum0.ar`): regress x on t = 1, …, n by least squares; if the
//!    residual standard deviation (divisor n − 1) is ≤ 1.5·10⁻⁸ (R's `all.equal(sd, 0)`, an
//!    *absolute* tolerance there), the spectral density is 0 and the chain's ESS is 0.
//! 2. **AR fit** (`ar(x, aic = TRUE)`, Yule–Walker): order.max = min(n − 1, ⌊10 log₁₀ n⌋);
//!    autocovariances of the demeaned chain with divisor n (R's `acf`); the Levinson–Durbin
//!    recursion (R's Fortran `eureka`) gives, for p = 1, …, order.max, the AR(p) coefficients
//!    φ₁…φ_p and innovation variances v_p = v_{p−1}(1 − φ_pp²), v₀ = γ̂(0).
//! 3. **Order by AIC:** p̂ = argmin_p n ln v_p + 2p (the first minimum; R adds a constant).
//! 4. **Prediction variance** σ² = v_p̂ · n/(n − (p̂ + 1)) (R's "Splus compatibility fix").
//! 5. **Spectral density at frequency 0:** S(0) = σ² / (1 − Σ φ_j)².
//! 6. **ESS** = n · var(x) / S(0), var with divisor n − 1; for several chains (an `mcmc.list`)
//!    coda **sums** the per-chain ESS.
//!
//! For an AR(1) chain, S(0)/var(x) → (1 + ρ)/(1 − ρ), the integrated autocorrelation time.
//!
//! # How it was checked
//!
//! R is not available to the project, so the reference values in
//! `tests/fixtures/arviz/diagnostics.json` come from an independent numpy re-implementation of
//! the same R code path in `tests/fixtures/arviz/make_fixture.py`, whose Yule–Walker step is
//! itself cross-checked there against statsmodels' `yule_walker(method="mle")`; plus AR(1)
//! theory in this crate's tests. Not compared with R's own output.
//!
//! # Deviations
//!
//! R stops with an error when the Levinson recursion produces a non-positive innovation
//! variance (a perfectly predictable series that is not a straight line); here the recursion
//! stops at the last order with v_p > 0 and AIC chooses among the orders reached.

use crate::chains::{mean_unchecked, validate, var_unchecked};
use crate::error::Result;
use crate::ess::MIN_DRAWS;

/// coda's tolerance for "the detrended chain is constant" (R's `all.equal` tolerance).
const TREND_TOLERANCE: f64 = 1.5e-8;

/// The spectral density at frequency 0 of one chain from an AIC-selected AR fit, and the
/// order chosen (coda `spectrum0.ar`; see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Spectrum0 {
    /// S(0) = σ²/(1 − Σφ)²; 0 when the chain is a straight line (or constant).
    pub spec: f64,
    /// The AR order p̂ selected by AIC.
    pub order: usize,
}

/// coda's `spectrum0.ar` for one chain: AR(p) by Yule–Walker with AIC order selection, then
/// S(0) = σ²/(1 − Σφ)². See the [module docs](self) for every step.
///
/// Cost: O(n · order.max) for the autocovariances, with order.max ≤ 10 log₁₀ n.
///
/// # Errors
/// Fewer than [`MIN_DRAWS`] draws, or a non-finite draw.
///
/// # Example
/// ```
/// // Alternating draws: strongly negative lag-1 autocorrelation, S(0) far below the variance.
/// let x: Vec<f64> =
///     (0..200).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 } * (1.0 + 0.1 * (i % 3) as f64)).collect();
/// let s = tallmc_diagnostics::spectrum0_ar(&x).unwrap();
/// assert!(s.order >= 1 && s.spec < 0.1);
/// ```
pub fn spectrum0_ar(x: &[f64]) -> Result<Spectrum0> {
    validate(&[x], "spectrum0_ar", MIN_DRAWS)?;
    Ok(spectrum0_unchecked(x))
}

/// coda's `effectiveSize`: the sum over chains of n·var(x)/S(0) (see the [module docs](self)).
///
/// # Errors
/// No chains, unequal lengths, fewer than [`MIN_DRAWS`] draws per chain, a non-finite draw.
///
/// # Example
/// ```
/// let x: Vec<f64> = (0..400).map(|i| ((i * 7919) % 101) as f64).collect();
/// let ess = tallmc_diagnostics::ess_coda(&[&x[..]]).unwrap();
/// assert!(ess > 100.0);
/// ```
pub fn ess_coda<C: AsRef<[f64]>>(chains: &[C]) -> Result<f64> {
    validate(chains, "ess_coda", MIN_DRAWS)?;
    Ok(chains
        .iter()
        .map(|c| {
            let x = c.as_ref();
            let s = spectrum0_unchecked(x);
            if s.spec == 0.0 { 0.0 } else { x.len() as f64 * var_unchecked(x, 1) / s.spec }
        })
        .sum())
}

fn spectrum0_unchecked(x: &[f64]) -> Spectrum0 {
    let n = x.len();
    let nf = n as f64;
    let xbar = mean_unchecked(x);

    // Residual sd of lm(x ~ t), t = 1..n.
    let tbar = (nf + 1.0) / 2.0;
    let (mut sxt, mut stt) = (0.0, 0.0);
    for (i, &v) in x.iter().enumerate() {
        let dt = (i + 1) as f64 - tbar;
        sxt += (v - xbar) * dt;
        stt += dt * dt;
    }
    let slope = sxt / stt;
    let rss: f64 = x
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let r = (v - xbar) - slope * ((i + 1) as f64 - tbar);
            r * r
        })
        .sum();
    if (rss / (nf - 1.0)).sqrt() <= TREND_TOLERANCE {
        return Spectrum0 { spec: 0.0, order: 0 };
    }

    // Autocovariances with divisor n, lags 0..=order_max.
    let order_max = (n - 1).min((10.0 * nf.log10()).floor() as usize);
    let centred: Vec<f64> = x.iter().map(|v| v - xbar).collect();
    let r: Vec<f64> = (0..=order_max)
        .map(|k| centred[..n - k].iter().zip(&centred[k..]).map(|(a, b)| a * b).sum::<f64>() / nf)
        .collect();

    // Levinson–Durbin with AIC = n ln v_p + 2p, keeping the first minimum.
    let mut best_order = 0;
    let mut best_aic = nf * r[0].ln();
    let mut best_var = r[0];
    let mut best_coefs: Vec<f64> = Vec::new();
    let mut phi: Vec<f64> = Vec::with_capacity(order_max);
    let mut v = r[0];
    for p in 1..=order_max {
        let acc: f64 = phi.iter().enumerate().map(|(j, f)| f * r[p - 1 - j]).sum();
        let k = (r[p] - acc) / v;
        let v_next = v * (1.0 - k * k);
        if v_next.is_nan() || v_next <= 0.0 {
            break;
        }
        let prev = phi.clone();
        for j in 0..prev.len() {
            phi[j] = prev[j] - k * prev[prev.len() - 1 - j];
        }
        phi.push(k);
        v = v_next;
        let aic = nf * v.ln() + 2.0 * p as f64;
        if aic < best_aic {
            best_aic = aic;
            best_order = p;
            best_var = v;
            best_coefs.clone_from(&phi);
        }
    }

    let var_pred = best_var * nf / (nf - (best_order + 1) as f64);
    let denom = 1.0 - best_coefs.iter().sum::<f64>();
    Spectrum0 { spec: var_pred / (denom * denom), order: best_order }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn straight_lines_have_zero_spectrum_and_ess() {
        let line: Vec<f64> = (0..50).map(|i| 3.0 + 0.5 * i as f64).collect();
        assert_eq!(spectrum0_ar(&line).unwrap(), Spectrum0 { spec: 0.0, order: 0 });
        assert_eq!(ess_coda(&[&line[..], &[1.25; 50][..]]).unwrap(), 0.0);
    }

    #[test]
    fn white_noise_like_input_picks_order_zero() {
        // A fixed permutation-like sequence with no serial structure to speak of.
        let x: Vec<f64> = (0..500).map(|i| ((i * 7919 + 13) % 503) as f64).collect();
        let s = spectrum0_ar(&x).unwrap();
        let ess = ess_coda(&[&x[..]]).unwrap();
        assert!(ess > 250.0, "ess {ess}, order {}", s.order);
    }
}
