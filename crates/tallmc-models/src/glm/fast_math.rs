//! Branch-free `exp` on x ≤ 0 and `log1p` on [0, 1], written so that LLVM vectorizes a loop
//! over a block of them (default x86-64: SSE2, two lanes): no branches (selects only), no
//! table lookups, 2^k built from the bits of the magic-number rounding. They are what the
//! logistic family needs: e = e^{−|η|} ∈ [0, 1] and log1p(e).
//!
//! **Accuracy** (measured against the platform libm by the tests below, 10⁶ points each plus
//! the ends): [`exp_nonpositive`] within 2⁻⁵² relative (one ulp; measured maximum 2.218·10⁻¹⁶)
//! for results ≥ 2⁻¹⁰²² and within one subnormal unit 2⁻¹⁰⁷⁴ below; [`ln_1p_unit`] within 2⁻⁵²
//! relative (measured maximum 2.2204·10⁻¹⁶) over all of [0, 1], subnormals included. The
//! difference from libm is one rounding here or there, never a systematic bias.
//!
//! **exp** (x ≤ 0). Range reduction x = k ln 2 + r with k = round(x/ln 2) from the magic
//! number 1.5·2⁵² (adding it rounds to an integer and leaves k in the low mantissa bits), and
//! r = (x − k·ln2_hi) − k·ln2_lo (Cody–Waite: ln2_hi has 32 significant bits, so k·ln2_hi is
//! exact for |k| < 2²¹ and the subtraction is exact by Sterbenz), |r| ≤ ln2/2 + tiny. Then
//! e^r = 1 + (r + r²·Q(r)) with Q the Taylor polynomial Σ_{j=2}^{13} r^{j−2}/j!: degree 13
//! because the remainder (ln2/2)^14/14! · e^{ln2/2} ≈ 5·10⁻¹⁸ is below a twentieth of 2⁻⁵³,
//! while degree 12 leaves ≈ 2·10⁻¹⁶ (a full ulp). Adding the 1 last keeps the rounding error
//! of the polynomial below the final rounding. The result is e^r · 2^{k₁} · 2^{k₂} with
//! k₁ + k₂ = k, each factor a normal power of two built from bits: the first product is exact
//! and the second rounds once, so results in the subnormal range are rounded once, as libm's
//! are. Arguments below −1400 are clamped to −1400 (the result is 0 from −745.2 on); NaN
//! propagates.
//!
//! **log1p** (0 ≤ x ≤ 1). With 1 + x = 2^k (1 + f), k ∈ {0, 1} chosen so that
//! 1 + f ∈ [√2/2, √2): f = x exactly when x < √2 − 1, else f = (x − 1)/2, whose rounding error
//! is recovered exactly (Fast2Sum) and added back as a first-order correction c. Then, as in
//! fdlibm's `log1p` (Sun Microsystems, 1993), with s = f/(2 + f) and z = s²,
//! log(1 + f) = f − (f²/2 − s(f²/2 + R(z))), where R(z) = Σ_{j=1}^{7} Lg_j z^j is fdlibm's
//! minimax polynomial for 2·atanh(s)/s − 2 − … on |s| ≤ 0.1716 (error < 2^−58.45): degree 7 in
//! z because that is the smallest fdlibm found under 2^−58, i.e. well below the final rounding.
//! The result is k·ln2_hi − ((f²/2 − (s(f²/2 + R) + (k·ln2_lo + c))) − f): the leading f is
//! exact, so the error is about half an ulp plus the small correction terms.

/// 1.5·2⁵²: adding it to |v| < 2⁵¹ rounds v to the nearest integer (ties to even), which is
/// then the low bits of the sum's representation.
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;
/// ln 2 split (fdlibm): the high part has 32 significant bits (0x3fe62e42_fee00000).
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000); // 6.93147180369123816490e-1
/// The rest of ln 2 (0x3dea39ef_35793c76).
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76); // 1.90821492927058770002e-10
/// Below this, [`exp_nonpositive`] clamps its argument (e^x is 0 in f64 from −745.2 on; the
/// clamp keeps k₁ and k₂ in the normal exponent range).
const EXP_CLAMP: f64 = -1400.0;
/// √2 − 1: from here on log1p uses 1 + x = 2(1 + f).
const SQRT2_MINUS_1: f64 = std::f64::consts::SQRT_2 - 1.0;

/// Taylor coefficients 1/j! of e^r, j = 2, …, 13.
const EXP_Q: [f64; 12] = [
    1.0 / 2.0,
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5_040.0,
    1.0 / 40_320.0,
    1.0 / 362_880.0,
    1.0 / 3_628_800.0,
    1.0 / 39_916_800.0,
    1.0 / 479_001_600.0,
    1.0 / 6_227_020_800.0,
];

/// fdlibm's Lg1 … Lg7 (`e_log.c` / `s_log1p.c`), by their bits (decimal in the comments).
const LG1: f64 = f64::from_bits(0x3fe5_5555_5555_5593); // 6.666666666666735130e-1
const LG2: f64 = f64::from_bits(0x3fd9_9999_9997_fa04); // 3.999999999940941908e-1
const LG3: f64 = f64::from_bits(0x3fd2_4924_9422_9359); // 2.857142874366239149e-1
const LG4: f64 = f64::from_bits(0x3fcc_71c5_1d8e_78af); // 2.222219843214978396e-1
const LG5: f64 = f64::from_bits(0x3fc7_4664_96cb_03de); // 1.818357216161805012e-1
const LG6: f64 = f64::from_bits(0x3fc3_9a09_d078_c69f); // 1.531383769920937332e-1
const LG7: f64 = f64::from_bits(0x3fc2_f112_df3e_5244); // 1.479819860511658591e-1

/// 2^k for an integer-valued k with −1022 ≤ k ≤ 1023, from the bits of `k + ROUND_MAGIC`.
#[inline(always)]
fn pow2_from_magic(k_plus_magic: f64) -> f64 {
    // The low 12 bits of the representation of 1.5·2⁵² + k are k mod 2¹², so
    // (bits + 1023) << 52 is the biased exponent k + 1023 with a zero sign and mantissa.
    f64::from_bits(k_plus_magic.to_bits().wrapping_add(1023) << 52)
}

/// e^x for x ≤ 0 (see the [module docs](self)): branch-free, about one ulp from libm, 0 below
/// −745.2, subnormal results rounded once; NaN gives NaN. Not for x > 0 (the result would be
/// wrong from x > 709 on and the error analysis assumes k ≤ 0).
#[inline(always)]
pub(crate) fn exp_nonpositive(x: f64) -> f64 {
    // A select, not `max`: NaN must propagate.
    let x = if x < EXP_CLAMP { EXP_CLAMP } else { x };
    let k = (x * std::f64::consts::LOG2_E + ROUND_MAGIC) - ROUND_MAGIC;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut q = EXP_Q[11];
    for &c in EXP_Q[..11].iter().rev() {
        q = q * r + c;
    }
    let p = 1.0 + (r + (r * r) * q);
    // k = k₁ + k₂ with k₁ = round(k/2): both in [−1010, 0] after the clamp.
    let k1_magic = k * 0.5 + ROUND_MAGIC;
    let k2_magic = (k - (k1_magic - ROUND_MAGIC)) + ROUND_MAGIC;
    p * pow2_from_magic(k1_magic) * pow2_from_magic(k2_magic)
}

/// log(1 + x) for 0 ≤ x ≤ 1 (see the [module docs](self)): branch-free, about one ulp from
/// libm, exact at 0, ln 2 rounded correctly at 1.
#[inline(always)]
pub(crate) fn ln_1p_unit(x: f64) -> f64 {
    let big = x >= SQRT2_MINUS_1;
    // x − 1 rounded, and its exact rounding error (Fast2Sum: |−1| ≥ |x|).
    let t = x - 1.0;
    let t_err = x - (t + 1.0);
    let f = if big { 0.5 * t } else { x };
    // log(1 + f + t_err/2) ≈ log(1 + f) + (t_err/2)/(1 + f); 1/(1 + f) ≈ 1 − f + f² to
    // within |f|³ < 3 % on f ∈ [−0.293, 0], plenty for a term below 2⁻⁵⁵.
    let c = if big { (0.5 * t_err) * ((1.0 - f) + f * f) } else { 0.0 };
    let k = if big { 1.0 } else { 0.0 };
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG2 + w * (LG4 + w * LG6));
    let t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
    let r = t2 + t1;
    k * LN2_HI - ((hfsq - (s * (hfsq + r) + (k * LN2_LO + c))) - f)
}

#[cfg(test)]
#[allow(clippy::print_stderr)] // the tests print the measured errors (`--nocapture`)
mod tests {
    use super::*;

    /// The measured maximum relative error of [`exp_nonpositive`] against libm over
    /// [−708.39, 0] (normal results), test `exp_matches_libm`.
    const EXP_MAX_REL_ERR: f64 = f64::EPSILON;
    /// The measured maximum relative error of [`ln_1p_unit`] against libm over [0, 1], test
    /// `ln_1p_matches_libm`.
    const LN_1P_MAX_REL_ERR: f64 = f64::EPSILON;

    /// Relative difference |a − b|/|b| (0 when both are 0).
    fn rel(a: f64, b: f64) -> f64 {
        if a == b { 0.0 } else { ((a - b) / b).abs() }
    }

    /// 10⁶ evenly spaced points over [−708.39, 0] (normal results) plus the ends, 10⁵ over
    /// [−1, 0] (the range of most η) and the subnormal range [−745.2, −708.4] compared in
    /// units of the smallest subnormal.
    #[test]
    fn exp_matches_libm() {
        let lo_normal = -708.39;
        let n = 1_000_000;
        let mut max_rel: f64 = 0.0;
        let mut worst = 0.0;
        let points = (0..=n)
            .map(|i| lo_normal * f64::from(i) / f64::from(n))
            .chain((0..=100_000).map(|i| -f64::from(i) / 100_000.0))
            .chain([0.0, -0.0, -f64::MIN_POSITIVE, -1e-300, -1e-17, -0.5 * std::f64::consts::LN_2]);
        for x in points {
            let e = rel(exp_nonpositive(x), x.exp());
            if e > max_rel {
                (max_rel, worst) = (e, x);
            }
        }
        eprintln!("exp: max relative error {max_rel:e} at x = {worst}");
        assert!(max_rel <= EXP_MAX_REL_ERR, "{max_rel:e} at {worst}");
        let tiny = f64::from_bits(1); // the smallest subnormal
        let mut max_units: f64 = 0.0;
        for i in 0..=100_000 {
            let x = -708.4 - 36.8 * f64::from(i) / 100_000.0;
            max_units = max_units.max((exp_nonpositive(x) - x.exp()).abs() / tiny);
        }
        eprintln!("exp: max subnormal difference {max_units} units of 2^-1074");
        assert!(max_units <= 1.0);
        for x in [-745.2, -746.0, -800.0, -1e4, -1e300, f64::NEG_INFINITY] {
            assert_eq!(exp_nonpositive(x), 0.0, "{x}");
        }
        assert_eq!(exp_nonpositive(0.0), 1.0);
        assert!(exp_nonpositive(f64::NAN).is_nan());
    }

    /// 10⁶ evenly spaced points over [0, 1] plus the ends, the branch point √2 − 1 and its
    /// neighbours, and 10⁵ log-spaced points from 10⁻³⁰⁰ to 1 (tiny e = e^{−|η|}), subnormals.
    #[test]
    fn ln_1p_matches_libm() {
        let n = 1_000_000;
        let mut max_rel: f64 = 0.0;
        let mut worst = 0.0;
        let b = SQRT2_MINUS_1;
        let points = (0..=n)
            .map(|i| f64::from(i) / f64::from(n))
            .chain((0..=100_000).map(|i| 10f64.powf(-300.0 * f64::from(i) / 100_000.0)))
            .chain([0.0, 1.0, b, b.next_up(), b.next_down(), f64::from_bits(1), 1e-310]);
        for x in points {
            let e = rel(ln_1p_unit(x), x.ln_1p());
            if e > max_rel {
                (max_rel, worst) = (e, x);
            }
        }
        eprintln!("log1p: max relative error {max_rel:e} at x = {worst}");
        assert!(max_rel <= LN_1P_MAX_REL_ERR, "{max_rel:e} at {worst}");
        assert_eq!(ln_1p_unit(0.0), 0.0);
        assert_eq!(ln_1p_unit(1.0), std::f64::consts::LN_2);
    }
}
