//! Posterior summaries of the pooled draws: mean, standard deviation, quantiles.
//!
//! All three pool every draw of every chain, as ArviZ's `summary` does (`mean` and
//! `std(ddof=1)` over the chain and draw dimensions) and as `numpy.quantile` does with its
//! default method.

use crate::chains::{check_prob, validate};
use crate::error::{Error, Result};

/// Mean of all draws of all chains, x̄ = (1/S) Σ x.
///
/// # Errors
/// No chains, unequal lengths, an empty chain or a non-finite draw.
///
/// # Example
/// ```
/// let m = tallmc_diagnostics::mean(&[[1.0, 2.0], [3.0, 6.0]]).unwrap();
/// assert_eq!(m, 3.0);
/// ```
pub fn mean<C: AsRef<[f64]>>(chains: &[C]) -> Result<f64> {
    validate(chains, "mean", 1)?;
    // One running sum over the draws in chain order, the same order as `Summary`'s mean, so
    // both give the same bits (per-chain partial sums round differently when x̄ ≈ 0).
    let s: f64 = chains.iter().flat_map(|c| c.as_ref().iter()).sum();
    Ok(s / total(chains) as f64)
}

/// Sample standard deviation of all draws, divisor S − 1:
/// sd = √(Σ (x − x̄)² / (S − 1)), as ArviZ `summary` (`ddof=1`).
///
/// # Errors
/// As [`mean`]; fewer than two draws in total gives [`TooFewDraws`](crate::Error::TooFewDraws).
///
/// # Example
/// ```
/// let s = tallmc_diagnostics::sd(&[[1.0, 2.0, 3.0, 4.0]]).unwrap();
/// assert!((s - (5.0f64 / 3.0).sqrt()).abs() < 1e-15);
/// ```
pub fn sd<C: AsRef<[f64]>>(chains: &[C]) -> Result<f64> {
    let (m, n) = validate(chains, "sd", 1)?;
    if m * n < 2 {
        return Err(Error::TooFewDraws { what: "sd", found: n, min: 2 });
    }
    let xbar = mean(chains)?;
    let ss: f64 =
        chains.iter().flat_map(|c| c.as_ref().iter()).map(|&v| (v - xbar) * (v - xbar)).sum();
    Ok((ss / (m * n - 1) as f64).sqrt())
}

/// The `prob` quantile of all draws by linear interpolation between order statistics
/// (R's type 7, `numpy.quantile`'s default `method="linear"`).
///
/// With the S pooled draws sorted, x₍₀₎ ≤ … ≤ x₍S−1₎, h = (S − 1)·prob, j = ⌊h⌋, γ = h − j:
/// Q = x₍ⱼ₎ + γ (x₍ⱼ₊₁₎ − x₍ⱼ₎) (computed as numpy does, from the nearer end when γ ≥ ½).
///
/// # Errors
/// As [`mean`], and `prob` outside [0, 1].
///
/// # Example
/// ```
/// let q = tallmc_diagnostics::quantile(&[[1.0, 2.0, 3.0, 4.0, 5.0]], 0.3).unwrap();
/// assert!((q - 2.2).abs() < 1e-12);
/// ```
pub fn quantile<C: AsRef<[f64]>>(chains: &[C], prob: f64) -> Result<f64> {
    validate(chains, "quantile", 1)?;
    check_prob(prob)?;
    let mut sorted: Vec<f64> = chains.iter().flat_map(|c| c.as_ref().iter().copied()).collect();
    sorted.sort_by(f64::total_cmp);
    Ok(quantile_sorted(&sorted, prob))
}

/// Type-7 quantile of non-empty sorted values, as `numpy.quantile` (`_lerp`) computes it.
pub(crate) fn quantile_sorted(sorted: &[f64], prob: f64) -> f64 {
    let n = sorted.len();
    let h = (n - 1) as f64 * prob;
    if h >= (n - 1) as f64 {
        return sorted[n - 1];
    }
    let j = h.floor();
    let gamma = h - j;
    let j = j as usize;
    let (a, b) = (sorted[j], sorted[j + 1]);
    let diff = b - a;
    if gamma >= 0.5 { b - diff * (1.0 - gamma) } else { a + diff * gamma }
}

fn total<C: AsRef<[f64]>>(chains: &[C]) -> usize {
    chains.iter().map(|c| c.as_ref().len()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_end_points_and_interpolation() {
        let x = [[3.0, 1.0, 2.0, 4.0]];
        assert_eq!(quantile(&x, 0.0).unwrap(), 1.0);
        assert_eq!(quantile(&x, 1.0).unwrap(), 4.0);
        assert_eq!(quantile(&x, 0.5).unwrap(), 2.5);
        assert!((quantile(&x, 0.05).unwrap() - 1.15).abs() < 1e-12);
        assert_eq!(quantile(&[[7.0]], 0.3).unwrap(), 7.0);
        assert!(quantile(&x, 1.5).is_err());
        assert!(quantile(&x, f64::NAN).is_err());
    }

    #[test]
    fn sd_needs_two_draws() {
        assert!(sd(&[[1.0]]).is_err());
        assert_eq!(sd(&[[1.0], [3.0]]).unwrap(), 2.0f64.sqrt());
    }
}
