//! Concentration bounds for the mean of a sample drawn without replacement.
//!
//! Setting: a finite population x_1, …, x_N with mean μ and range R ≥ max x − min x; t values
//! drawn uniformly without replacement, with mean x̄_t and standard deviation
//! σ̂_t = √((1/t) Σ (x_i − x̄_t)²) (divisor t). Each bound gives a half-width c_t such that
//!
//! > P(|x̄_t − μ| > c_t) ≤ δ   (two-sided, for a fixed t).
//!
//! | bound | c_t | reference |
//! |---|---|---|
//! | Hoeffding–Serfling | R √(ρ_t log(2/δ) / (2t)) | Bardenet & Maillard (2015), Cor. 2.5 (improving Serfling 1974) |
//! | empirical Bernstein | σ̂_t √(2 log(3/δ) / t) + 3 R log(3/δ) / t | Audibert, Munos & Szepesvári (2009), Thm. 1; BDH (2014), eq. (9) |
//! | empirical Bernstein–Serfling | σ̂_t √(2 ρ_t log(10/δ) / t) + κ R log(10/δ) / t | Bardenet & Maillard (2015), Thm. 4.3 (arXiv v1: Thm. 3), two-sided |
//!
//! with Bardenet & Maillard's finite-population factor
//! ρ_t = 1 − (t − 1)/N for t ≤ N/2 and ρ_t = (1 − t/N)(1 + 1/t) for t > N/2, and
//! κ = 7/3 + 3/√2. See `docs/methods/mean-tests.md` for how the constants were checked.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::Error;

/// κ = 7/3 + 3/√2 of the empirical Bernstein–Serfling bound (Bardenet & Maillard 2015,
/// Thm. 4.3).
pub const KAPPA_BERNSTEIN_SERFLING: f64 = 7.0 / 3.0 + 3.0 / std::f64::consts::SQRT_2;

/// Which concentration inequality the confidence test uses.
///
/// All three are exact (non-asymptotic) for sampling without replacement from a finite
/// population with a known range bound R; they differ in tightness:
///
/// * [`BoundKind::HoeffdingSerfling`] depends only on R: tight when the values spread over their
///   whole range, loose when most values are concentrated (its c_t is ≥ R √(log(2/δ)/(2t)) · √ρ_t
///   whatever the data).
/// * [`BoundKind::EmpiricalBernstein`] leads with the sample standard deviation σ̂_t, so it is
///   far tighter than Hoeffding when σ̂ ≪ R; it ignores the finite population (no ρ_t) and is
///   valid without replacement by Hoeffding's (1963, Thm. 4) reduction.
/// * [`BoundKind::EmpiricalBernsteinSerfling`] has both the σ̂ lead and the factor ρ_t → 0 as t
///   → N; its range term has a larger constant (κ ≈ 4.45 vs 3) and log(10/δ) vs log(3/δ). This is
///   the bound of all experiments of Bardenet, Doucet & Holmes (2014, §4) and the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BoundKind {
    /// Hoeffding–Serfling: c_t = R √(ρ_t log(2/δ) / (2t)).
    HoeffdingSerfling,
    /// Empirical Bernstein: c_t = σ̂_t √(2 log(3/δ) / t) + 3 R log(3/δ) / t.
    EmpiricalBernstein,
    /// Empirical Bernstein–Serfling: c_t = σ̂_t √(2 ρ_t log(10/δ) / t) + κ R log(10/δ) / t.
    #[default]
    EmpiricalBernsteinSerfling,
}

impl BoundKind {
    /// Every bound, in a fixed order.
    pub const ALL: [BoundKind; 3] = [
        BoundKind::HoeffdingSerfling,
        BoundKind::EmpiricalBernstein,
        BoundKind::EmpiricalBernsteinSerfling,
    ];

    /// The kebab-case name used in output files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            BoundKind::HoeffdingSerfling => "hoeffding-serfling",
            BoundKind::EmpiricalBernstein => "empirical-bernstein",
            BoundKind::EmpiricalBernsteinSerfling => "empirical-bernstein-serfling",
        }
    }

    /// Whether the bound uses the sample standard deviation σ̂_t.
    pub fn uses_sd(self) -> bool {
        !matches!(self, BoundKind::HoeffdingSerfling)
    }

    /// The two-sided half-width c_t for t values out of N with sample sd σ̂_t (divisor t), range
    /// bound R, at error level δ: see [`half_width`].
    pub fn half_width(self, t: usize, n: usize, sd: f64, range: f64, delta: f64) -> f64 {
        half_width(self, t, n, sd, range, delta)
    }
}

impl fmt::Display for BoundKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BoundKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        BoundKind::ALL.into_iter().find(|b| b.name() == s).ok_or_else(|| {
            Error::invalid(
                "bound",
                s,
                "one of hoeffding-serfling, empirical-bernstein, empirical-bernstein-serfling",
            )
        })
    }
}

/// Bardenet & Maillard's finite-population factor for t values out of N:
/// ρ_t = 1 − (t − 1)/N if t ≤ N/2, else (1 − t/N)(1 + 1/t). It is 1 at t = 1, decreases to 0 at
/// t = N (clamped at 0 for t > N), and improves on Serfling's 1 − (t − 1)/N for t > N/2.
pub fn serfling_rho(t: usize, n: usize) -> f64 {
    let (tf, nf) = (t.max(1) as f64, n as f64);
    let rho = if 2 * t <= n { 1.0 - (tf - 1.0) / nf } else { (1.0 - tf / nf) * (1.0 + 1.0 / tf) };
    rho.max(0.0)
}

/// The two-sided half-width c_t of `kind` for `t` values drawn without replacement out of `n`,
/// with sample standard deviation `sd` = σ̂_t (divisor t), range bound `range` = R and error
/// level `delta` = δ ∈ (0, 1): P(|x̄_t − μ| > c_t) ≤ δ.
///
/// Formulas (see the [module docs](self) for references):
///
/// * Hoeffding–Serfling: R √(ρ_t log(2/δ) / (2t));
/// * empirical Bernstein: σ̂_t √(2 log(3/δ) / t) + 3 R log(3/δ) / t;
/// * empirical Bernstein–Serfling: σ̂_t √(2 ρ_t log(10/δ) / t) + κ R log(10/δ) / t,
///   κ = 7/3 + 3/√2.
///
/// `t` = 0 gives +∞ (nothing is known). Cost: O(1), no values drawn.
///
/// ```
/// use tallmc_bounds::{half_width, BoundKind};
/// // 100 of 10 000 values in [0, 1], sample sd 0.1, δ = 0.05.
/// let hs = half_width(BoundKind::HoeffdingSerfling, 100, 10_000, 0.1, 1.0, 0.05);
/// let ebs = half_width(BoundKind::EmpiricalBernsteinSerfling, 100, 10_000, 0.1, 1.0, 0.05);
/// assert!((hs - (0.9901f64 * (40f64).ln() / 200.0).sqrt()).abs() < 1e-12);
/// assert!(ebs > 0.0 && ebs.is_finite());
/// ```
pub fn half_width(kind: BoundKind, t: usize, n: usize, sd: f64, range: f64, delta: f64) -> f64 {
    half_width_ln(kind, t, n, sd, range, -delta.ln())
}

/// [`half_width`] with the error level given as `ln_inv_delta` = log(1/δ), so that levels far
/// below the smallest f64 (e.g. the 1e-300 / k^p of a near-exact schedule) stay exact. See
/// [`crate::Schedule::ln_inv_delta_at`].
pub fn half_width_ln(
    kind: BoundKind, t: usize, n: usize, sd: f64, range: f64, ln_inv_delta: f64,
) -> f64 {
    if t == 0 {
        return f64::INFINITY;
    }
    let tf = t as f64;
    match kind {
        BoundKind::HoeffdingSerfling => {
            let l = std::f64::consts::LN_2 + ln_inv_delta;
            range * (serfling_rho(t, n) * l / (2.0 * tf)).sqrt()
        }
        BoundKind::EmpiricalBernstein => {
            let l = 3f64.ln() + ln_inv_delta;
            sd * (2.0 * l / tf).sqrt() + 3.0 * range * l / tf
        }
        BoundKind::EmpiricalBernsteinSerfling => {
            let l = 10f64.ln() + ln_inv_delta;
            sd * (2.0 * serfling_rho(t, n) * l / tf).sqrt()
                + KAPPA_BERNSTEIN_SERFLING * range * l / tf
        }
    }
}
