//! Special functions the GLM families need, evaluated stably over the whole real line: the
//! log normal CDF and its inverse Mills ratio (probit), log-gamma differences and their
//! derivatives (negative binomial), log y! (counts). Derivations and accuracy in
//! `docs/methods/glm-probit.md`, `glm-negative-binomial.md` (log-gamma differences).

use std::f64::consts::{FRAC_1_SQRT_2, PI};
use std::sync::LazyLock;

use libm::erfc;
use statrs::function::gamma::{digamma, ln_gamma};

use super::fast_math::{exp_nonpositive, ln_1p_unit};

/// √(2/π).
const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;

/// 1/(√π erfcx(u)) for u ≥ 2.5, erfcx(u) = e^{u²} erfc(u), as the continued fraction
/// `u + (1/2)/(u + 1/(u + (3/2)/(u + …)))`, returned as (f, f − u) with f − u computed without
/// cancellation. Forty levels give 1e-16 relative accuracy from u = 2.5 (twenty from u = 5).
#[inline]
fn mills_fraction(u: f64) -> (f64, f64) {
    let levels = if u < 5.0 { 40 } else { 20 };
    let mut f = u;
    for k in (2..=levels).rev() {
        f = u + f64::from(k) * 0.5 / f;
    }
    let tail = 0.5 / f;
    (u + tail, tail)
}

/// log Φ(z), Φ the standard normal CDF, accurate for every finite z (−z²/2 − log(−z√(2π)) − …
/// in the lower tail, −Φ(−z) in the upper).
#[inline]
pub(crate) fn log_ndtr(z: f64) -> f64 {
    if z >= 0.0 {
        (-0.5 * erfc(z * FRAC_1_SQRT_2)).ln_1p()
    } else {
        let u = -z * FRAC_1_SQRT_2;
        if u < FRACTION_FROM {
            (0.5 * erfc(u)).ln()
        } else {
            // Φ(z) = ½ erfcx(u) e^{−u²} = e^{−u²} / (2√π f).
            let (f, _) = mills_fraction(u);
            -u * u - (2.0 * PI.sqrt() * f).ln()
        }
    }
}

/// Below u = −z/√2 = 2.5 (z > −3.54), λ and log Φ come from `erfc` directly; beyond, from
/// the continued fraction.
const FRACTION_FROM: f64 = 2.5;

/// λ(z) = ϕ(z)/Φ(z) = √(2/π) e^{−z²/2} / erfc(−z/√2) where erfc does not underflow.
#[inline]
fn mills_direct(z: f64) -> f64 {
    SQRT_2_OVER_PI * (-0.5 * z * z).exp() / erfc(-z * FRAC_1_SQRT_2)
}

/// (log Φ(z), λ(z), λ(z) + z) with λ(z) = ϕ(z)/Φ(z) the inverse Mills ratio, λ + z computed
/// without cancellation in the lower tail (where λ ≈ −z). λ equals [`inverse_mills`] bit for
/// bit.
#[inline]
pub(crate) fn log_ndtr_with_mills(z: f64) -> (f64, f64, f64) {
    let u = -z * FRAC_1_SQRT_2;
    if u < FRACTION_FROM {
        let lambda = mills_direct(z);
        return (log_ndtr(z), lambda, lambda + z);
    }
    // λ = √2·f and λ + z = √2·(f − u), with f = 1/(√π erfcx(u)).
    let (f, tail) = mills_fraction(u);
    let log_phi = -u * u - (2.0 * PI.sqrt() * f).ln();
    (log_phi, std::f64::consts::SQRT_2 * f, std::f64::consts::SQRT_2 * tail)
}

/// The inverse Mills ratio λ(z) = ϕ(z)/Φ(z) alone.
#[inline]
pub(crate) fn inverse_mills(z: f64) -> f64 {
    let u = -z * FRAC_1_SQRT_2;
    if u < FRACTION_FROM { mills_direct(z) } else { std::f64::consts::SQRT_2 * mills_fraction(u).0 }
}

/// Below this, log y! comes from a table.
const FACTORIAL_TABLE: usize = 256;

static LN_FACTORIAL: LazyLock<Vec<f64>> = LazyLock::new(|| {
    // 0! = 1! = 1 exactly (statrs' log Γ(1) is −4e-16).
    (0..FACTORIAL_TABLE).map(|k| if k < 2 { 0.0 } else { ln_gamma(k as f64 + 1.0) }).collect()
});

/// log y! = log Γ(y + 1) for a non-negative integer y (a table below 256).
#[inline]
pub(crate) fn ln_factorial(y: f64) -> f64 {
    if y < FACTORIAL_TABLE as f64 { LN_FACTORIAL[y as usize] } else { ln_gamma(y + 1.0) }
}

/// From this argument on, log Γ, ψ and ψ′ differences use their asymptotic series.
const ASYMPTOTIC_FROM: f64 = 10.0;
/// Integer increments up to this many use finite sums and products.
pub(crate) const SMALL_COUNTS: usize = 32;
const SMALL_INCREMENT: f64 = SMALL_COUNTS as f64;

/// `Some(y)` as a count when y is an integer in 1 ..= [`SMALL_INCREMENT`] (the finite sums'
/// range), else `None`. A compare and two conversions: `f64::fract` is a library call (`trunc`)
/// on x86-64 without SSE4.1, and this runs once per datum.
#[inline(always)]
pub(crate) fn small_count(y: f64) -> Option<u32> {
    // On [0, 32] the conversion truncates exactly, so k == y exactly when y is an integer.
    if (0.0..=SMALL_INCREMENT).contains(&y) {
        let k = y as u32;
        if f64::from(k) == y {
            return Some(k);
        }
    }
    None
}

/// S(x) = log Γ(x) − [(x − ½) log x − x + ½ log 2π], by its asymptotic series (x ≥ 10: error
/// below 1e-16).
#[inline]
fn stirling_remainder(x: f64) -> f64 {
    let r = 1.0 / x;
    let r2 = r * r;
    r * (1.0 / 12.0
        + r2 * (-1.0 / 360.0
            + r2 * (1.0 / 1260.0
                + r2 * (-1.0 / 1680.0
                    + r2 * (1.0 / 1188.0 + r2 * (-691.0 / 360_360.0 + r2 / 156.0))))))
}

/// log Γ(a + y) − log Γ(a) for a > 0, y ≥ 0, without the cancellation of two large log-gammas
/// when a is large: (a − ½) log1p(y/a) + y log(a + y) − y + S(a + y) − S(a) from a ≥ 10; a
/// product for small integer y; else the difference of log-gammas (both moderate).
#[inline]
pub(crate) fn ln_gamma_ratio(a: f64, y: f64) -> f64 {
    if y == 0.0 {
        return 0.0;
    }
    if a >= ASYMPTOTIC_FROM {
        let b = a + y;
        return (a - 0.5) * (y / a).ln_1p() + y * b.ln() - y
            + (stirling_remainder(b) - stirling_remainder(a));
    }
    if let Some(count) = small_count(y) {
        let mut prod = 1.0;
        for k in 0..count {
            prod *= a + f64::from(k);
        }
        return prod.ln();
    }
    ln_gamma(a + y) - ln_gamma(a)
}

/// ψ(x) − log x + 1/(2x) by its asymptotic series (x ≥ 10).
#[inline]
fn digamma_remainder(x: f64) -> f64 {
    let r2 = 1.0 / (x * x);
    -r2 * (1.0 / 12.0
        + r2 * (-1.0 / 120.0
            + r2 * (1.0 / 252.0
                + r2 * (-1.0 / 240.0 + r2 * (1.0 / 132.0 - r2 * 691.0 / 32_760.0)))))
}

/// ψ(a + y) − ψ(a) for a > 0, y ≥ 0 (ψ the digamma function): Σ_{k<y} 1/(a + k) for small
/// integer y, the asymptotic series from a ≥ 10, else the difference of digammas.
#[inline]
pub(crate) fn digamma_ratio(a: f64, y: f64) -> f64 {
    if y == 0.0 {
        return 0.0;
    }
    if let Some(count) = small_count(y) {
        let mut s = 0.0;
        for k in 0..count {
            s += 1.0 / (a + f64::from(k));
        }
        return s;
    }
    if a >= ASYMPTOTIC_FROM {
        let b = a + y;
        // log(b/a) − 1/(2b) + 1/(2a) = log1p(y/a) + y/(2ab).
        return (y / a).ln_1p() + y / (2.0 * a * b) + (digamma_remainder(b) - digamma_remainder(a));
    }
    digamma(a + y) - digamma(a)
}

/// ψ′(x) − 1/x − 1/(2x²) by its asymptotic series (x ≥ 10).
#[inline]
fn trigamma_remainder(x: f64) -> f64 {
    let r = 1.0 / x;
    let r2 = r * r;
    r * r2
        * (1.0 / 6.0
            + r2 * (-1.0 / 30.0
                + r2 * (1.0 / 42.0
                    + r2 * (-1.0 / 30.0
                        + r2 * (5.0 / 66.0 + r2 * (-691.0 / 2730.0 + r2 * 7.0 / 6.0))))))
}

/// ψ′(x), the trigamma function, for x > 0: shifted up to x ≥ 10 by ψ′(x) = ψ′(x + 1) + 1/x²,
/// then the asymptotic series.
#[inline]
pub(crate) fn trigamma(x: f64) -> f64 {
    let mut x = x;
    let mut acc = 0.0;
    while x < ASYMPTOTIC_FROM {
        acc += 1.0 / (x * x);
        x += 1.0;
    }
    acc + 1.0 / x + 0.5 / (x * x) + trigamma_remainder(x)
}

/// ψ′(a + y) − ψ′(a) (≤ 0) for a > 0, y ≥ 0: −Σ_{k<y} 1/(a + k)² for small integer y, the
/// asymptotic series from a ≥ 10 (its leading term −y/(a(a + y)) exact), else the difference.
#[inline]
pub(crate) fn trigamma_ratio(a: f64, y: f64) -> f64 {
    if y == 0.0 {
        return 0.0;
    }
    if let Some(count) = small_count(y) {
        let mut s = 0.0;
        for k in 0..count {
            let t = a + f64::from(k);
            s -= 1.0 / (t * t);
        }
        return s;
    }
    if a >= ASYMPTOTIC_FROM {
        let b = a + y;
        return -y / (a * b)
            + 0.5 * (1.0 / (b * b) - 1.0 / (a * a))
            + (trigamma_remainder(b) - trigamma_remainder(a));
    }
    trigamma(a + y) - trigamma(a)
}

/// (ψ(a + y) − ψ(a), ψ′(a + y) − ψ′(a)) for a > 0, y ≥ 0: [`digamma_ratio`] and
/// [`trigamma_ratio`] bit for bit, the finite sums of a small integer y in one loop (the
/// negative binomial's curvature in log φ needs both at every datum).
#[inline]
pub(crate) fn digamma_trigamma_ratios(a: f64, y: f64) -> (f64, f64) {
    if y == 0.0 {
        return (0.0, 0.0);
    }
    if let Some(count) = small_count(y) {
        let (mut s1, mut s2) = (0.0, 0.0);
        for k in 0..count {
            let t = a + f64::from(k);
            s1 += 1.0 / t;
            s2 -= 1.0 / (t * t);
        }
        return (s1, s2);
    }
    (digamma_ratio(a, y), trigamma_ratio(a, y))
}

/// (softplus(x), softplus(−x), σ(x), σ(−x)) with softplus(x) = log(1 + eˣ) and σ the logistic
/// function: one exp and one log1p, no overflow, and σ from one division. e = e^{−|x|} ∈ [0, 1]
/// and log1p(e) come from the branch-free functions of `glm::fast_math` (within an ulp of
/// libm): [`softplus_exp`] and [`softplus_log`] are the two halves, which a loop over a block of
/// data runs one after the other so that LLVM vectorizes them, with these bits.
#[inline(always)]
pub(crate) fn softplus_pair(x: f64) -> (f64, f64, f64, f64) {
    let e = softplus_exp(x);
    softplus_from(x, e, softplus_log(e))
}

/// e^{−|x|}, the first half of [`softplus_pair`].
#[inline(always)]
pub(crate) fn softplus_exp(x: f64) -> f64 {
    exp_nonpositive(-x.abs())
}

/// log1p(e) for e ∈ [0, 1], the second half of [`softplus_pair`].
#[inline(always)]
pub(crate) fn softplus_log(e: f64) -> f64 {
    ln_1p_unit(e)
}

/// [`softplus_pair`] from e = [`softplus_exp`]`(x)` and l = [`softplus_log`]`(e)`.
#[inline(always)]
pub(crate) fn softplus_from(x: f64, e: f64, l: f64) -> (f64, f64, f64, f64) {
    let large = 1.0 / (1.0 + e);
    let small = e * large;
    if x >= 0.0 { (x + l, l, large, small) } else { (l, l - x, small, large) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs().max(1e-300)
    }

    #[test]
    fn log_ndtr_matches_erfc_where_erfc_is_accurate_and_the_tail_series_beyond() {
        // 20-digit values of log Φ(z) (mpmath, 40 digits).
        let exact = [
            (-3.0, -6.607_726_221_510_35),
            (-2.0, -3.783_184_333_682_032),
            (-1.5, -2.705_944_400_823_889_8),
            (-0.3, -0.962_102_818_168_850_7),
            (0.0, -std::f64::consts::LN_2),
            (0.7, -0.277_023_942_277_131_3),
            (3.0, -0.001_350_809_964_748_193_8),
            (8.0, -6.220_960_574_271_786e-16),
        ];
        for (z, want) in exact {
            assert!(rel(log_ndtr(z), want) < 1e-14, "z = {z}: {} vs {want}", log_ndtr(z));
        }
        // Far tail: log Φ(z) = −z²/2 − log(−z) − ½ log 2π − a + 5a²/2 − 37a³/3 + …, a = 1/z².
        for &z in &[-1e3_f64, -1e6] {
            let a = 1.0 / (z * z);
            let series = -0.5 * z * z - (-z).ln() - 0.5 * (2.0 * PI).ln() - a + 2.5 * a * a
                - 37.0 / 3.0 * a * a * a;
            assert!(rel(log_ndtr(z), series) < 1e-14, "z = {z}");
        }
    }

    #[test]
    fn mills_ratio_and_its_complement_are_continuous_and_match_the_tail_series() {
        for &z in &[-1.0, -3.5355, -7.0710] {
            let (lo, hi) = (z - 1e-9, z + 1e-9);
            let (a, b) = (log_ndtr_with_mills(lo), log_ndtr_with_mills(hi));
            assert!(rel(a.1, b.1) < 1e-7 && rel(a.2, b.2) < 1e-6, "z = {z}: {a:?} {b:?}");
        }
        for &w in &[200.0_f64, 1e3, 1e5] {
            let (_, lambda, sum) = log_ndtr_with_mills(-w);
            let series = 1.0 / w - 2.0 / w.powi(3) + 10.0 / w.powi(5) - 74.0 / w.powi(7);
            assert!(rel(sum, series) < 1e-12, "w = {w}: {sum} vs {series}");
            assert!(rel(lambda, w + series) < 1e-15);
        }
        assert!(rel(inverse_mills(0.0), SQRT_2_OVER_PI) < 1e-15);
    }

    #[test]
    fn gamma_differences_agree_with_their_definitions() {
        for &(a, y) in
            &[(0.5, 3.0), (2.0, 40.5), (12.0, 5.0), (1e4, 7.0), (3.0, 100.0), (50.0, 1e3)]
        {
            let want = ln_gamma(a + y) - ln_gamma(a);
            assert!(rel(ln_gamma_ratio(a, y), want) < 1e-12, "lnΓ ratio a={a} y={y}");
            let want = digamma(a + y) - digamma(a);
            assert!(rel(digamma_ratio(a, y), want) < 1e-10, "ψ ratio a={a} y={y}");
            let want = trigamma(a + y) - trigamma(a);
            assert!(rel(trigamma_ratio(a, y), want) < 1e-9, "ψ′ ratio a={a} y={y}");
        }
        // Large a: the increments are y/a-small and keep their relative accuracy.
        let (a, y) = (1e12, 3.5);
        assert!(rel(digamma_ratio(a, y), y / a) < 1e-10);
        assert!(rel(trigamma_ratio(a, y), -y / (a * a)) < 1e-10);
        assert!(rel(ln_gamma_ratio(a, y), y * a.ln()) < 1e-12);
        // ψ′(1) = π²/6.
        assert!(rel(trigamma(1.0), PI * PI / 6.0) < 1e-14);
        assert_eq!(ln_factorial(0.0), 0.0);
        assert!(rel(ln_factorial(300.0), ln_gamma(301.0)) < 1e-15);
    }

    #[test]
    fn the_fused_digamma_trigamma_sums_give_the_bits_of_the_separate_ones() {
        for &a in &[1e-3, 0.5, 2.0, 9.99, 10.0, 37.5, 1e6] {
            for y in [0.0, 1.0, 2.0, 5.0, 31.0, 32.0, 33.0, 40.5, 1e3] {
                let (d1, d2) = digamma_trigamma_ratios(a, y);
                assert_eq!(d1.to_bits(), digamma_ratio(a, y).to_bits(), "ψ a={a} y={y}");
                assert_eq!(d2.to_bits(), trigamma_ratio(a, y).to_bits(), "ψ′ a={a} y={y}");
            }
        }
        assert_eq!(small_count(32.0), Some(32));
        assert_eq!(small_count(0.5), None);
        assert_eq!(small_count(33.0), None);
        assert_eq!(small_count(-1.0), None);
        assert_eq!(small_count(f64::NAN), None);
    }

    #[test]
    fn softplus_pair_is_consistent() {
        for &x in &[-800.0, -30.0, -1.0, 0.0, 2.0, 40.0, 800.0] {
            let (sp, spm, s, sm) = softplus_pair(x);
            assert!(sp.is_finite() && spm.is_finite());
            assert!((s + sm - 1.0).abs() < 1e-15);
            if x.abs() < 30.0 {
                assert!(rel(sp, (1.0 + x.exp()).ln()) < 1e-14);
                assert!((sp - spm - x).abs() < 1e-13);
            }
            // The libm formulas it replaced, to within the fast functions' ulp.
            let e = (-x.abs()).exp();
            let l = e.ln_1p();
            let libm = if x >= 0.0 { (x + l, l) } else { (l, l - x) };
            assert!(rel(sp, libm.0) < 6e-16 && rel(spm, libm.1) < 6e-16, "x = {x}");
            let sigma = if x >= 0.0 { 1.0 / (1.0 + e) } else { e / (1.0 + e) };
            assert!(rel(s, sigma) < 6e-16, "x = {x}");
        }
    }
}
