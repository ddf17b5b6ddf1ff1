//! Bayesian probit regression: the Bernoulli family with the normal-CDF link.

use super::Glm;
use super::family::{BoundedCurvature, BoundedThirdDerivative, GlmFamily};
use super::special::{inverse_mills, log_ndtr, log_ndtr_with_mills};

/// The probit family φ_y(η) = log Φ(sη), s = 2y − 1, y ∈ {0, 1} (Φ the standard normal CDF),
/// with λ(z) = ϕ(z)/Φ(z) the inverse Mills ratio and z = sη:
///
/// ```text
/// φ_y′ = s λ(z),   φ_y″ = −λ(z)(λ(z) + z) ∈ (−1, 0),   φ_y‴ = s [λ(λ + z)(2λ + z) − λ]
/// ```
///
/// log Φ is evaluated in the lower tail as −z²/2 − log(2√π f), f = 1/(√π erfcx(−z/√2)) by its
/// continued fraction, so φ stays accurate far beyond where Φ underflows (η = −40: φ ≈ −804.6
/// to 16 digits), and λ + z comes from the same fraction without the cancellation of λ ≈ −z.
///
/// Bounds: the score is unbounded (λ(z) ≈ −z as z → −∞), so there is no term bound; the
/// curvature is: 0 < λ(λ + z) < 1 (c₂ = 1, [`BoundedCurvature`]), and
/// sup |φ‴| = 0.295718… (at z ≈ 1.0024; c₃ = 0.2958, [`BoundedThirdDerivative`]; checked on a
/// dense grid and at random points by `tests/models/glm_families.rs`). Derivations in
/// `docs/methods/glm-probit.md`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProbitFamily;

/// sup_z |λ(z)(λ(z) + z)(2λ(z) + z) − λ(z)| = 0.2957188…, rounded up.
pub(crate) const PROBIT_THIRD_DERIVATIVE_BOUND: f64 = 0.2958;

impl GlmFamily for ProbitFamily {
    #[inline]
    fn value(&self, y: f64, eta: f64) -> f64 {
        log_ndtr(if y > 0.5 { eta } else { -eta })
    }

    #[inline]
    fn derivatives(&self, y: f64, eta: f64) -> (f64, f64, f64) {
        let (s, z) = if y > 0.5 { (1.0, eta) } else { (-1.0, -eta) };
        let (v, lambda, lambda_plus_z) = log_ndtr_with_mills(z);
        (v, s * lambda, -lambda * lambda_plus_z)
    }

    #[inline]
    fn score(&self, y: f64, eta: f64) -> f64 {
        if y > 0.5 { inverse_mills(eta) } else { -inverse_mills(-eta) }
    }

    #[inline]
    fn score_and_curvature(&self, y: f64, eta: f64) -> (f64, f64) {
        let (_, d1, d2) = self.derivatives(y, eta);
        (d1, d2)
    }

    fn accepts_response(&self, y: f64) -> bool {
        y == 0.0 || y == 1.0
    }

    fn response_domain(&self) -> &'static str {
        "0 or 1"
    }
}

impl BoundedCurvature for ProbitFamily {
    /// λ(z)(λ(z) + z) < 1.
    fn curvature_bound(&self) -> f64 {
        1.0
    }
}

impl BoundedThirdDerivative for ProbitFamily {
    /// 0.2958 ≥ sup |φ‴|.
    fn third_derivative_bound(&self) -> f64 {
        PROBIT_THIRD_DERIVATIVE_BOUND
    }
}

/// Bayesian probit regression, P(y_i = 1) = Φ(η_i), η_i = x̃_iᵀθ (+ an offset when the design
/// has one), with an independent N(0, s²) prior on every coefficient: the [`Glm`] of the
/// [`ProbitFamily`].
///
/// ```text
/// ℓ_i(θ)   = log Φ(s_i η_i),   s_i = 2y_i − 1
/// ∇ℓ_i(θ)  = s_i λ(s_i η_i) x̃_i
/// ∇²ℓ_i(θ) = −λ(λ + s_i η_i) x̃_i x̃_iᵀ          (rank one, curvature in (−1, 0))
/// ```
///
/// Capabilities: `TermGradientLipschitz` and `TermCurvatureBound` (c₂ = 1), and
/// `TaylorRemainderBound` (c₃ = 0.2958), so Zig-Zag with control variates and the confidence
/// sampler with Taylor proxies run it; there is no `TermBounds` (the score is unbounded), so
/// the plain confidence sampler does not. **Cost** as for every [`Glm`]: O(d) per term,
/// gradient or Hessian-vector product; φ costs one `erfc` (a continued fraction in the far
/// lower tail).
///
/// ```
/// use tallmc_core::Terms;
/// use tallmc_models::{Dataset, DesignMatrix, DesignOptions, ProbitRegression};
/// use tallmc_models::glm::ProbitFamily;
///
/// let data = Dataset::with_default_names(vec![0.5, -1.0, 2.0], vec![1.0, 0.0, 1.0], 1)?;
/// let design = DesignMatrix::new(data, DesignOptions::default().with_intercept(true))?;
/// let model = ProbitRegression::with_family(ProbitFamily, design, 10.0)?;
/// assert_eq!(model.dim(), 2);
/// # Ok::<(), tallmc_models::Error>(())
/// ```
pub type ProbitRegression = Glm<ProbitFamily>;
