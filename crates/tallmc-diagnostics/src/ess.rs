//! Effective sample size (ESS), as ArviZ 0.23 (`arviz.stats.diagnostics`) and Stan's
//! `posterior` package compute it.
//!
//! # The estimator (Vehtari, Gelman, Simpson, Carpenter, Bürkner 2021, *Rank-normalization,
//! folding, and localization: an improved R̂*, Bayesian Analysis 16(2), §3.2 and eqs. 10–11;
//! Geyer 1992 for the truncation)
//!
//! Given M chains of N draws of a scalar (after whatever transform the variant applies):
//!
//! 1. γ̂_m(k): autocovariance of chain m at lag k, divisor N ([`autocov`](crate::autocov()));
//!    W = (1/M) Σ_m γ̂_m(0) · N/(N−1) (mean within-chain variance);
//!    var⁺ = W (N−1)/N + B/N, where B/N is the variance of the chain means (divisor M − 1;
//!    the term is absent for M = 1).
//! 2. ρ̂(k) = 1 − (W − (1/M) Σ_m γ̂_m(k)) / var⁺.
//! 3. Geyer's *initial positive sequence*: keep the pairs P̂_j = ρ̂(2j) + ρ̂(2j+1) while they
//!    stay positive (at lags ≤ N − 2); then the *initial monotone sequence*: whenever a pair
//!    exceeds the (already corrected) pair before it, set both its terms to half that previous
//!    pair, so the P̂_j are non-increasing.
//! 4. τ̂ = −1 + 2 Σ_{k≤K} ρ̂(k) + ρ̂(K+1) (the last, unpaired even lag is kept when positive),
//!    floored at τ̂ ≥ 1/log₁₀(MN) (so ESS ≤ MN log₁₀(MN)), and **ESS = MN/τ̂**.
//!
//! The index bookkeeping (where the loops stop, which lag is kept) mirrors ArviZ's `_ess` line
//! for line, so values agree to rounding (checked to 1e-6 relative against ArviZ 0.23.4 in
//! `tests/diagnostics/arviz.rs`).
//!
//! # Variants (ArviZ `ess(method=…)`)
//!
//! Every variant first splits each chain into halves (first and last ⌊N/2⌋ draws; the middle
//! draw of an odd-length chain is dropped), giving 2M chains of ⌊N/2⌋ draws:
//!
//! * [`ess_bulk`]: on rank-normalized split draws z = Φ⁻¹((r − 3/8)/(S + 1/4)), r the average
//!   rank among all S split draws;
//! * [`ess_mean`] (posterior's `ess_basic`): on the split draws themselves;
//! * [`ess_sd`]: on (x − x̄)², x̄ the mean of all draws;
//! * [`ess_quantile`]: on the indicator 1{x ≤ Q(p)}, Q the type-7 quantile of all draws;
//! * [`ess_tail`]: min(ess_quantile(0.05), ess_quantile(0.95)).
//!
//! # Degenerate input (ArviZ's behaviour, matched)
//!
//! * If the transformed split draws are all equal (max − min < 10⁻¹⁵), ESS is the number of
//!   split draws, 2M⌊N/2⌋: e.g. constant chains give ESS = MN for N even.
//! * Fewer than 4 draws per chain is an error here (ArviZ returns NaN); NaN or infinite draws
//!   are an error (ArviZ returns NaN).
//!
//! # Cost
//!
//! O(MN log N): one FFT pair per split chain, plus an O(S log S) sort for the rank
//! normalization or the quantile. 10⁵ draws take a few milliseconds.

use crate::autocov::mean_autocov;
use crate::chains::{
    CONSTANT_RESOLUTION, Matrix, check_prob, mean_unchecked, mquantile_sorted, py_max, py_min,
    validate, var_unchecked,
};
use crate::error::Result;

/// The fewest draws per chain the ESS, R̂ and MCSE functions accept (ArviZ's `min_draws`).
pub const MIN_DRAWS: usize = 4;

/// Probabilities whose quantile indicators define the tail ESS.
pub const TAIL_PROBS: (f64, f64) = (0.05, 0.95);

/// Bulk ESS: ESS of the rank-normalized split chains (ArviZ `ess(method="bulk")`, posterior
/// `ess_bulk`). See the [module docs](self) for the estimator.
///
/// Robust to heavy tails and invariant to monotone transforms; the default ESS to report.
///
/// # Errors
/// No chains, unequal lengths, fewer than [`MIN_DRAWS`] draws per chain, a non-finite draw.
///
/// # Example
/// ```
/// use tallmc_diagnostics::ess_bulk;
/// // Two anti-correlated chains: ESS above the number of draws, capped by the τ̂ floor.
/// let a = [0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8];
/// let b = [-0.15, 0.25, -0.35, 0.45, -0.55, 0.65, -0.75, 0.85];
/// let ess = ess_bulk(&[&a[..], &b[..]]).unwrap();
/// assert!(ess > 16.0 && ess <= 16.0 * 16f64.log10());
/// ```
pub fn ess_bulk<C: AsRef<[f64]>>(chains: &[C]) -> Result<f64> {
    validate(chains, "ess_bulk", MIN_DRAWS)?;
    Ok(ess_core(&Matrix::stack(chains).split().z_scale()))
}

/// Basic split ESS, for the mean: ESS of the split chains without rank normalization
/// (ArviZ `ess(method="mean")`, posterior `ess_basic`). Used by [`mcse_mean`](crate::mcse_mean).
///
/// # Errors
/// As [`ess_bulk`].
#[doc(alias = "ess_basic")]
pub fn ess_mean<C: AsRef<[f64]>>(chains: &[C]) -> Result<f64> {
    validate(chains, "ess_mean", MIN_DRAWS)?;
    Ok(ess_core(&Matrix::stack(chains).split()))
}

/// ESS of the squared deviations (x − x̄)², x̄ the mean of all draws, split
/// (ArviZ `ess(method="sd")`, posterior `ess_sd`).
///
/// # Errors
/// As [`ess_bulk`].
pub fn ess_sd<C: AsRef<[f64]>>(chains: &[C]) -> Result<f64> {
    validate(chains, "ess_sd", MIN_DRAWS)?;
    let x = Matrix::stack(chains);
    let xbar = x.mean();
    Ok(ess_core(&x.map(|v| (v - xbar) * (v - xbar)).split()))
}

/// ESS for the `prob` quantile: ESS of the split indicator 1{x ≤ Q(prob)}, Q the type-7
/// quantile of all draws (ArviZ `ess(method="quantile", prob=…)`, posterior `ess_quantile`).
///
/// # Errors
/// As [`ess_bulk`], and `prob` outside [0, 1].
pub fn ess_quantile<C: AsRef<[f64]>>(chains: &[C], prob: f64) -> Result<f64> {
    validate(chains, "ess_quantile", MIN_DRAWS)?;
    check_prob(prob)?;
    let x = Matrix::stack(chains);
    let sorted = x.sorted();
    Ok(quantile_ess(&x, &sorted, prob))
}

/// Tail ESS: min(ESS of 1{x ≤ Q(0.05)}, ESS of 1{x ≤ Q(0.95)}) (ArviZ `ess(method="tail")`,
/// posterior `ess_tail`): how well the 5 % and 95 % quantiles are estimated.
///
/// # Errors
/// As [`ess_bulk`].
pub fn ess_tail<C: AsRef<[f64]>>(chains: &[C]) -> Result<f64> {
    validate(chains, "ess_tail", MIN_DRAWS)?;
    let x = Matrix::stack(chains);
    Ok(tail_ess(&x, &x.sorted()))
}

/// Tail ESS of validated, stacked draws with their sorted copy.
pub(crate) fn tail_ess(x: &Matrix, sorted: &[f64]) -> f64 {
    py_min(quantile_ess(x, sorted, TAIL_PROBS.0), quantile_ess(x, sorted, TAIL_PROBS.1))
}

/// Quantile ESS of validated, stacked draws with their sorted copy.
pub(crate) fn quantile_ess(x: &Matrix, sorted: &[f64], prob: f64) -> f64 {
    let q = mquantile_sorted(sorted, prob);
    ess_core(&x.indicator_le(q).split())
}

/// ArviZ's `_ess` on chains already split and transformed (≥ 2 draws each): see the
/// [module docs](self).
pub(crate) fn ess_core(x: &Matrix) -> f64 {
    let (m, n) = (x.chains, x.draws);
    debug_assert!(m >= 1 && n >= 2);
    let size = (m * n) as f64;
    let (lo, hi) = x
        .data
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    if hi - lo < CONSTANT_RESOLUTION {
        return size;
    }

    // Mean autocovariance over chains, lags 0..n.
    let acov = mean_autocov(x.rows(), n);
    let nf = n as f64;
    let mean_var = acov[0] * nf / (nf - 1.0);
    let mut var_plus = mean_var * (nf - 1.0) / nf;
    if m > 1 {
        let chain_means: Vec<f64> = x.rows().map(mean_unchecked).collect();
        var_plus += var_unchecked(&chain_means, 1);
    }
    let rho_at = |k: usize| 1.0 - (mean_var - acov[k]) / var_plus;

    let mut rho = vec![0.0; n];
    let mut even = 1.0;
    rho[0] = even;
    let mut odd = rho_at(1);
    rho[1] = odd;

    // Geyer's initial positive sequence.
    let mut t = 1usize;
    while t + 3 < n && even + odd > 0.0 {
        even = rho_at(t + 1);
        odd = rho_at(t + 2);
        if even + odd >= 0.0 {
            rho[t + 1] = even;
            rho[t + 2] = odd;
        }
        t += 2;
    }
    // Pairs up to lag max_t = t − 2 are summed; the even lag max_t + 1 is kept if positive.
    let last = t - 1; // = max_t + 1 ≥ 0
    if even > 0.0 {
        rho[last] = even;
    }

    // Geyer's initial monotone sequence.
    // ArviZ: `while t <= max_t - 2`, i.e. t + 3 <= last.
    let mut t = 1usize;
    while t + 3 <= last {
        let prev = rho[t - 1] + rho[t];
        if rho[t + 1] + rho[t + 2] > prev {
            rho[t + 1] = prev / 2.0;
            rho[t + 2] = rho[t + 1];
        }
        t += 2;
    }

    let tau = -1.0 + 2.0 * rho[..last].iter().sum::<f64>() + rho[last];
    let tau = py_max(tau, 1.0 / size.log10());
    if rho.iter().any(|r| r.is_nan()) { f64::NAN } else { size / tau }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_chains_give_the_split_size() {
        let c = [[2.5; 10], [2.5; 10]];
        assert_eq!(ess_bulk(&c).unwrap(), 20.0);
        assert_eq!(ess_mean(&c).unwrap(), 20.0);
        assert_eq!(ess_tail(&c).unwrap(), 20.0);
        // Odd length: the middle draw of each chain is dropped.
        let c = [[2.5; 11], [2.5; 11]];
        assert_eq!(ess_mean(&c).unwrap(), 20.0);
    }

    #[test]
    fn bad_input() {
        let none: [&[f64]; 0] = [];
        assert!(ess_bulk(&none).is_err());
        assert!(ess_bulk(&[[1.0, 2.0, 3.0]]).is_err());
        assert!(ess_tail(&[[1.0, 2.0, f64::NAN, 4.0]]).is_err());
        assert!(ess_quantile(&[[1.0, 2.0, 3.0, 4.0]], -0.1).is_err());
    }
}
