//! Potential scale reduction factor R̂, split and rank-normalized, as ArviZ 0.23
//! (`arviz.stats.diagnostics.rhat`) and Stan's `posterior` package compute it.
//!
//! # Split R̂ (Gelman & Rubin 1992; Gelman et al., *BDA3* §11.4)
//!
//! Split each of the M chains into halves (first and last ⌊N/2⌋ draws), giving M' = 2M chains
//! of n = ⌊N/2⌋ draws. With chain means x̄_m, chain variances s²_m (divisor n − 1),
//!
//! ```text
//! B = n · Var(x̄_1, …, x̄_M')   (divisor M' − 1)      W = (1/M') Σ s²_m
//! R̂ = √( (B/W + n − 1) / n )  = √( var⁺ / W ),   var⁺ = (n − 1)/n · W + B/n
//! ```
//!
//! # Rank-normalized R̂ (Vehtari et al. 2021, *Bayesian Analysis* 16(2), §4.2, eq. 14)
//!
//! Bulk R̂ is split R̂ of the rank-normalized split draws z = Φ⁻¹((r − 3/8)/(S + 1/4)); tail
//! R̂ is split R̂ of the rank-normalized *folded* split draws |x − median(x)| (the median of all
//! split draws); **R̂ = max(bulk, tail)**. Vehtari et al. recommend R̂ < 1.01.
//!
//! # Degenerate input (ArviZ's behaviour, matched)
//!
//! * **One chain:** ArviZ requires two chains for R̂ and returns NaN; so do these functions.
//! * **Constant chains:** W = B = 0 and R̂ = √(0/0 …) is NaN. Chains that are each constant
//!   but at different values give W = 0 < B and R̂ = +∞.
//! * Fewer than 4 draws per chain or a non-finite draw is an error (ArviZ returns NaN).

use crate::chains::{Matrix, mean_unchecked, py_max, validate, var_unchecked};
use crate::error::Result;
use crate::ess::MIN_DRAWS;

/// Rank-normalized split R̂ = max(bulk R̂, tail R̂) (ArviZ `rhat(method="rank")`, posterior
/// `rhat`). See the [module docs](self).
///
/// Returns NaN for a single chain, as ArviZ does.
///
/// # Errors
/// No chains, unequal lengths, fewer than [`MIN_DRAWS`] draws per chain, a non-finite draw.
///
/// # Example
/// ```
/// use tallmc_diagnostics::rhat;
/// let a = [0.1, 0.5, -0.3, 0.8, -0.6, 0.2, 0.4, -0.1];
/// let b = [10.1, 10.5, 9.7, 10.8, 9.4, 10.2, 10.4, 9.9]; // a chain stuck elsewhere
/// assert!(rhat(&[&a[..], &b[..]]).unwrap() > 1.5);
/// assert!(rhat(&[&a[..]]).unwrap().is_nan()); // one chain
/// ```
pub fn rhat<C: AsRef<[f64]>>(chains: &[C]) -> Result<f64> {
    let (m, _) = validate(chains, "rhat", MIN_DRAWS)?;
    if m < 2 {
        return Ok(f64::NAN);
    }
    let split = Matrix::stack(chains).split();
    Ok(rank_rhat_of_split(&split))
}

/// Rank-normalized R̂ of chains already split.
pub(crate) fn rank_rhat_of_split(split: &Matrix) -> f64 {
    let bulk = rhat_core(&split.z_scale());
    let tail = rhat_core(&split.fold().z_scale());
    py_max(bulk, tail)
}

/// Basic split R̂ on the draws themselves, without rank normalization
/// (ArviZ `rhat(method="split")`). See the [module docs](self).
///
/// Returns NaN for a single chain, as ArviZ does.
///
/// # Errors
/// As [`rhat`].
pub fn rhat_split<C: AsRef<[f64]>>(chains: &[C]) -> Result<f64> {
    let (m, _) = validate(chains, "rhat_split", MIN_DRAWS)?;
    if m < 2 {
        return Ok(f64::NAN);
    }
    Ok(rhat_core(&Matrix::stack(chains).split()))
}

/// ArviZ's `_rhat`: R̂ = √((B/W + n − 1)/n) of the chains as given (no splitting).
pub(crate) fn rhat_core(x: &Matrix) -> f64 {
    let n = x.draws as f64;
    let means: Vec<f64> = x.rows().map(mean_unchecked).collect();
    let within = mean_unchecked(&x.rows().map(|r| var_unchecked(r, 1)).collect::<Vec<_>>());
    let between = n * var_unchecked(&means, 1);
    ((between / within + n - 1.0) / n).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degenerate_cases_follow_arviz() {
        assert!(rhat(&[[1.0; 8], [1.0; 8]]).unwrap().is_nan());
        assert_eq!(rhat_split(&[[1.0; 8], [2.0; 8]]).unwrap(), f64::INFINITY);
        assert!(rhat_split(&[[1.0, 2.0, 3.0, 4.0]]).unwrap().is_nan());
        assert!(rhat(&[[1.0, 2.0, 3.0]]).is_err());
    }
}
