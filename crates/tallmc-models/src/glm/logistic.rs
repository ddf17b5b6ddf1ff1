//! Bayesian logistic regression: the logistic (Bernoulli, logit link) family.

use std::sync::Arc;

use super::Glm;
use super::family::{BoundedCurvature, BoundedScore, BoundedThirdDerivative, GlmFamily};
use super::fast_math::{exp_nonpositive, ln_1p_unit};
use crate::data::{Dataset, DesignMatrix, DesignOptions};
use crate::error::Result;

/// The logistic family φ_y(η) = y η − log(1 + e^η), y ∈ {0, 1}, with σ(η) = 1/(1 + e^{−η}):
///
/// ```text
/// φ_y′ = y − σ(η) ∈ (−1, 1),   φ_y″ = −σ(η)(1 − σ(η)) ∈ [−¼, 0),   φ_y‴ = −σ(1 − σ)(1 − 2σ)
/// ```
///
/// Bounds: c₁ = 1 ([`BoundedScore`]), c₂ = ¼ ([`BoundedCurvature`]: σ(1 − σ) ≤ ¼ with equality
/// at η = 0), c₃ = 1/(6√3) ([`BoundedThirdDerivative`], see [`LogisticRegression`]).
///
/// φ is evaluated as `(yη − max(η, 0)) − log1p(e^{−|η|})` (the bracket is exactly 0 or −|η| for
/// y ∈ {0, 1}, so tiny log-probabilities such as −e^{−40} keep full relative accuracy), and
/// σ, 1 − σ come from the same e^{−|η|}: finite with the right limits for every finite η.
///
/// `exp` and `log1p` are std's (libm): the reference, and what the reproduction suites' pinned
/// draws were made with. [`FastLogisticFamily`] is the same family with branch-free polynomials
/// the compiler vectorizes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogisticFamily;

/// The [`LogisticFamily`] with `exp` and `log1p` from `glm/fast_math.rs`: branch-free
/// polynomials within 2⁻⁵² relative of libm over the ranges the family uses (e^x for x ≤ 0,
/// log(1 + x) for x ∈ [0, 1]), which LLVM vectorizes across the rows of a chunk. Every value,
/// score and curvature agrees with [`LogisticFamily`]'s to 1e-12 relative (property test
/// `tests/models/logistic_fast_math.rs`), but not bit for bit, so a chain's path differs from the
/// libm family's after enough steps. `tallmc sample --model logistic` uses it
/// ([`FastLogisticRegression`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FastLogisticFamily;

/// e^x for x ≤ 0 and log(1 + x) for x ∈ [0, 1]: the special functions of the logistic family.
trait LogisticMath {
    fn exp_nonpositive(x: f64) -> f64;
    fn ln_1p_unit(x: f64) -> f64;
}

/// std's (libm's) `exp` and `ln_1p`.
struct Libm;

impl LogisticMath for Libm {
    #[inline(always)]
    fn exp_nonpositive(x: f64) -> f64 {
        x.exp()
    }
    #[inline(always)]
    fn ln_1p_unit(x: f64) -> f64 {
        x.ln_1p()
    }
}

/// [`super::fast_math`]'s polynomials.
struct Fast;

impl LogisticMath for Fast {
    #[inline(always)]
    fn exp_nonpositive(x: f64) -> f64 {
        exp_nonpositive(x)
    }
    #[inline(always)]
    fn ln_1p_unit(x: f64) -> f64 {
        ln_1p_unit(x)
    }
}

/// max_η |d³/dη³ log σ(η)| = max_{s∈(0,1)} s(1 − s)|1 − 2s| = 1/(6√3) (see
/// [`LogisticRegression`]).
const LOGISTIC_THIRD_DERIVATIVE_MAX: f64 = 1.0 / (6.0 * 1.732_050_807_568_877_2);

/// (ℓ, y − σ(η), σ(η)(1 − σ(η))) for a response y ∈ {0, 1}, stable for any finite η.
#[inline(always)]
fn logistic_parts<E: LogisticMath>(y: f64, eta: f64) -> (f64, f64, f64) {
    let e = E::exp_nonpositive(-eta.abs());
    let q = 1.0 / (1.0 + e);
    let (sigma, one_minus) = if eta >= 0.0 { (q, e * q) } else { (e * q, q) };
    let ll = (y * eta - eta.max(0.0)) - E::ln_1p_unit(e);
    (ll, y * one_minus - (1.0 - y) * sigma, e * q * q)
}

/// (φ′, φ″) without ℓ: the same operations as [`logistic_parts`] minus the `log1p`, so the
/// same bits.
#[inline(always)]
fn logistic_score_parts<E: LogisticMath>(y: f64, eta: f64) -> (f64, f64) {
    let e = E::exp_nonpositive(-eta.abs());
    let q = 1.0 / (1.0 + e);
    let (sigma, one_minus) = if eta >= 0.0 { (q, e * q) } else { (e * q, q) };
    (y * one_minus - (1.0 - y) * sigma, e * q * q)
}

/// ℓ alone.
#[inline(always)]
fn logistic_ll<E: LogisticMath>(y: f64, eta: f64) -> f64 {
    (y * eta - eta.max(0.0)) - E::ln_1p_unit(E::exp_nonpositive(-eta.abs()))
}

/// The family traits of a logistic family whose `exp` and `log1p` come from `$math`.
macro_rules! logistic_family {
    ($family:ty, $math:ty) => {
        impl GlmFamily for $family {
            #[inline(always)]
            fn value(&self, y: f64, eta: f64) -> f64 {
                logistic_ll::<$math>(y, eta)
            }

            #[inline(always)]
            fn derivatives(&self, y: f64, eta: f64) -> (f64, f64, f64) {
                let (ll, resid, w) = logistic_parts::<$math>(y, eta);
                (ll, resid, -w)
            }

            #[inline(always)]
            fn score(&self, y: f64, eta: f64) -> f64 {
                logistic_score_parts::<$math>(y, eta).0
            }

            #[inline(always)]
            fn score_and_curvature(&self, y: f64, eta: f64) -> (f64, f64) {
                let (d1, w) = logistic_score_parts::<$math>(y, eta);
                (d1, -w)
            }

            fn accepts_response(&self, y: f64) -> bool {
                y == 0.0 || y == 1.0
            }

            fn response_domain(&self) -> &'static str {
                "0 or 1"
            }
        }

        impl BoundedScore for $family {
            /// |y − σ(η)| < 1.
            fn score_bound(&self) -> f64 {
                1.0
            }
        }

        impl BoundedCurvature for $family {
            /// σ(η)(1 − σ(η)) ≤ ¼.
            fn curvature_bound(&self) -> f64 {
                0.25
            }
        }

        impl BoundedThirdDerivative for $family {
            /// 1/(6√3) (see [`LogisticRegression`]).
            fn third_derivative_bound(&self) -> f64 {
                LOGISTIC_THIRD_DERIVATIVE_MAX
            }
        }
    };
}

logistic_family!(LogisticFamily, Libm);
logistic_family!(FastLogisticFamily, Fast);

/// Bayesian logistic regression with an independent N(0, s²) prior on every coefficient: the
/// [`Glm`] of the [`LogisticFamily`].
///
/// With x̃_i the i-th row of the design ([`DesignMatrix`]: covariates, optional intercept,
/// optional standardization), η_i = x̃_iᵀθ and σ(η) = 1/(1 + e^{−η}):
///
/// ```text
/// ℓ_i(θ)   = y_i η_i − log(1 + e^{η_i})          y_i ∈ {0, 1}
/// ∇ℓ_i(θ)  = (y_i − σ(η_i)) x̃_i
/// ∇²ℓ_i(θ) = −σ(η_i)(1 − σ(η_i)) x̃_i x̃_iᵀ        (rank one: H_i v costs O(d))
/// log p(θ) = −‖θ‖²/(2s²) − (d/2) log(2πs²)
/// ```
///
/// Terms are finite with the right limits for any finite η (at η = ±800: ℓ = 0 or −800; see
/// [`LogisticFamily`]).
///
/// **Term bound** (`TermBounds`): ∂ℓ_i/∂η = y_i − σ(η) ∈ (−1, 1), so ℓ_i is 1-Lipschitz in η
/// and, by Cauchy–Schwarz,
///
/// ```text
/// |ℓ_i(θ′) − ℓ_i(θ)| ≤ |x̃_iᵀ(θ′ − θ)| ≤ ‖x̃_i‖₂ ‖θ′ − θ‖₂ ≤ L ‖θ′ − θ‖₂,   L = max_i ‖x̃_i‖₂,
/// ```
///
/// the bound of Bardenet, Doucet & Holmes (2014, §4.2). The per-datum constant ‖x̃_i‖₂ is
/// [`LogisticRegression::lipschitz_constant`]; L is precomputed once (one pass over the data).
///
/// **Third-derivative bound** (`TaylorRemainderBound`, for the confidence sampler's Taylor
/// proxies, Bardenet, Doucet & Holmes 2017, §7.2). With φ_i(η) = y_i η − log(1 + e^η),
///
/// ```text
/// φ_i′ = y_i − σ,   φ_i″ = −σ(1 − σ),   φ_i‴ = −σ(1 − σ)(1 − 2σ)          (σ = σ(η), y_i drops out)
/// ∂³ℓ_i/∂θ_j∂θ_k∂θ_l = φ_i‴(η_i) x̃_ij x̃_ik x̃_il.
/// ```
///
/// On s = σ ∈ (0, 1), f(s) = s(1 − s)(1 − 2s) has f′(s) = 1 − 6s + 6s², zero at
/// s = (3 ± √3)/6, where s(1 − s) = 1/6 and |1 − 2s| = 1/√3: so |φ_i‴| ≤ 1/(6√3) ≈ 0.0962 and
///
/// ```text
/// M₃ = max_{i,j} |x̃_ij|³ / (6√3),
/// ```
///
/// with max_{i,j} |x̃_ij| = max_i ‖x̃_i‖_∞ computed in the same construction pass as L.
///
/// **Gradient bounds** (`TermGradientBounds`, `TermGradientLipschitz`, `TermCurvatureBound`):
/// B_j = max_i |x̃_ij|, B(v) = min(‖v‖₂ max_i ‖x̃_i‖₂, ‖v‖₁ max_{i,j} |x̃_ij|),
/// C_j = ¼ max_i |x̃_ij| ‖x̃_i‖₂, C = ¼ max_i ‖x̃_i‖₂², K = ¼ X̃ᵀX̃, K^abs = ¼ |X̃|ᵀ|X̃|
/// (not exact); prior curvature κ = 1/s² (`docs/methods/gradient-bounds.md`).
///
/// **Cost**: one term, gradient or Hessian-vector product is O(d) (one dot product, plus one
/// row update for gradients); `sum_hessian` is O(d²) per datum. Parameter names: the design's
/// column names (`intercept`, then the covariates' names as the data give them).
///
/// ```
/// use tallmc_core::{Terms, TermGradients};
/// use tallmc_models::{Dataset, DesignOptions, LogisticRegression};
///
/// let x = vec![0.5, -1.0, 2.0, 0.1, -0.3, 0.7];
/// let data = Dataset::with_default_names(x, vec![1.0, 0.0, 1.0], 2)?;
/// let model = LogisticRegression::new(data, DesignOptions::default().with_intercept(true), 10.0)?;
/// assert_eq!(model.dim(), 3);
/// let theta = [0.1, 0.2, -0.3];
/// let mut grad = [0.0; 3];
/// let ll = model.sum_log_terms_grad_range(&theta, 0, 3, &mut grad);
/// assert!(ll < 0.0);
/// # Ok::<(), tallmc_models::Error>(())
/// ```
pub type LogisticRegression = Glm<LogisticFamily>;

/// [`LogisticRegression`] with the [`FastLogisticFamily`] (vectorized `exp`/`log1p`, within
/// 1e-12 relative of the libm family's terms, scores and curvatures): the same model, the same
/// constructors, faster full-data passes and subsample batches.
pub type FastLogisticRegression = Glm<FastLogisticFamily>;

/// `new` and `from_design` of a logistic regression with family `$family`.
macro_rules! logistic_constructors {
    ($model:ty, $family:expr) => {
        impl $model {
            /// A logistic regression of `data.y()` (every value 0 or 1) on the design built
            /// from `data` with `options`, with prior sd `prior_sd` > 0 on every coefficient.
            ///
            /// Errors: a response other than 0 or 1 (naming the row), `prior_sd` not finite
            /// and > 0, a design with no columns, a constant column when standardizing, a
            /// non-finite covariate. Cost: one pass over y and one over X (for the design's
            /// maxima), two more when standardizing.
            pub fn new(
                data: impl Into<Arc<Dataset>>, options: DesignOptions, prior_sd: f64,
            ) -> Result<Self> {
                Self::from_design(DesignMatrix::new(data, options)?, prior_sd)
            }

            /// Like `new` from an existing design.
            pub fn from_design(design: DesignMatrix, prior_sd: f64) -> Result<Self> {
                Self::with_family($family, design, prior_sd)
            }
        }
    };
}

logistic_constructors!(LogisticRegression, LogisticFamily);
logistic_constructors!(FastLogisticRegression, FastLogisticFamily);

#[cfg(test)]
mod tests {
    use super::*;

    /// φ‴(η) = −σ(1 − σ)(1 − 2σ) by central differences of φ″ = −σ(1 − σ), and its maximum on a
    /// fine grid equals the closed form 1/(6√3) (attained at σ = (3 ± √3)/6).
    #[test]
    fn third_derivative_constant_matches_finite_differences() {
        let d2 = |eta: f64| -logistic_parts::<Libm>(1.0, eta).2;
        let d3 = |eta: f64| {
            let s = 1.0 / (1.0 + (-eta).exp());
            -s * (1.0 - s) * (1.0 - 2.0 * s)
        };
        let mut max_abs: f64 = 0.0;
        for k in -4000..=4000 {
            let eta = f64::from(k) * 0.002;
            let h = 1e-4;
            let fd = (d2(eta + h) - d2(eta - h)) / (2.0 * h);
            assert!((fd - d3(eta)).abs() < 1e-8, "η = {eta}: {fd} vs {}", d3(eta));
            max_abs = max_abs.max(d3(eta).abs());
        }
        assert!(max_abs <= LOGISTIC_THIRD_DERIVATIVE_MAX);
        assert!(max_abs > LOGISTIC_THIRD_DERIVATIVE_MAX * (1.0 - 1e-6), "{max_abs}");
        assert!((LOGISTIC_THIRD_DERIVATIVE_MAX - 1.0 / (6.0 * 3f64.sqrt())).abs() < 1e-16);
        let s: f64 = (3.0 - 3f64.sqrt()) / 6.0;
        assert!((s * (1.0 - s) * (1.0 - 2.0 * s) - LOGISTIC_THIRD_DERIVATIVE_MAX).abs() < 1e-15);
    }

    /// The score and curvature bounds are suprema: |y − σ| → 1 and σ(1 − σ) = ¼ at η = 0.
    #[test]
    fn score_and_curvature_bounds_are_attained() {
        let f = LogisticFamily;
        let fast = FastLogisticFamily;
        let mut max_d1: f64 = 0.0;
        let mut max_d2: f64 = 0.0;
        for k in -4000..=4000 {
            let eta = f64::from(k) * 0.01;
            for y in [0.0, 1.0] {
                let (v, d1, d2) = f.derivatives(y, eta);
                assert_eq!(v.to_bits(), f.value(y, eta).to_bits());
                assert_eq!(d1.to_bits(), f.score(y, eta).to_bits());
                let (s1, s2) = f.score_and_curvature(y, eta);
                assert_eq!((s1.to_bits(), s2.to_bits()), (d1.to_bits(), d2.to_bits()));
                // The fast family: its own functions consistent bit for bit, and within 1e-12
                // relative (1e-300 absolute, for underflowing tails) of libm's.
                let (fv, f1, f2) = fast.derivatives(y, eta);
                assert_eq!(fv.to_bits(), fast.value(y, eta).to_bits());
                assert_eq!(f1.to_bits(), fast.score(y, eta).to_bits());
                let (g1, g2) = fast.score_and_curvature(y, eta);
                assert_eq!((g1.to_bits(), g2.to_bits()), (f1.to_bits(), f2.to_bits()));
                for (a, b) in [(fv, v), (f1, d1), (f2, d2)] {
                    assert!((a - b).abs() <= 1e-12 * b.abs() + 1e-300, "η = {eta}: {a} vs {b}");
                }
                max_d1 = max_d1.max(d1.abs());
                max_d2 = max_d2.max(d2.abs());
            }
        }
        assert!(max_d1 <= f.score_bound() && max_d1 > 1.0 - 1e-15);
        assert_eq!(max_d2, f.curvature_bound());
    }

    /// Both families' `exp`/`log1p` give the limits and tail accuracy.
    fn extremes_are_finite_with_correct_limits<E: LogisticMath>() {
        for (y, eta, want_ll, want_resid) in [
            (1.0, 800.0, 0.0, 0.0),
            (0.0, 800.0, -800.0, -1.0),
            (1.0, -800.0, -800.0, 1.0),
            (0.0, -800.0, 0.0, 0.0),
        ] {
            let (ll, resid, w) = logistic_parts::<E>(y, eta);
            assert_eq!(ll, want_ll);
            assert_eq!(resid, want_resid);
            assert_eq!(w, 0.0);
            assert_eq!(logistic_ll::<E>(y, eta), want_ll);
        }
        let (ll, resid, w) = logistic_parts::<E>(1.0, 0.0);
        assert!((ll + std::f64::consts::LN_2).abs() < 1e-15);
        assert_eq!(resid, 0.5);
        assert_eq!(w, 0.25);
        // Tiny tail probabilities keep their relative accuracy.
        let (ll, resid, _) = logistic_parts::<E>(1.0, 40.0);
        assert!((ll + (-40.0f64).exp()).abs() < 1e-30);
        assert!((resid - (-40.0f64).exp()).abs() < 1e-30);
    }

    #[test]
    fn extreme_linear_predictors_are_finite_with_correct_limits() {
        extremes_are_finite_with_correct_limits::<Libm>();
        extremes_are_finite_with_correct_limits::<Fast>();
    }
}
