//! Bayesian Poisson regression: the Poisson family with the log link.

use super::Glm;
use super::family::GlmFamily;
use super::special::ln_factorial;

/// Counts beyond this are refused: above 2⁵³ not every integer is a double.
const MAX_COUNT: f64 = 9_007_199_254_740_992.0;

/// Whether `y` is a count: a non-negative integer below 2⁵³.
pub(crate) fn is_count(y: f64) -> bool {
    (0.0..MAX_COUNT).contains(&y) && y.fract() == 0.0
}

/// The Poisson family with the log link, φ_y(η) = yη − e^η − log y!, y ∈ {0, 1, 2, …}:
///
/// ```text
/// φ_y′ = y − e^η,   φ_y″ = −e^η
/// ```
///
/// No bound: score and curvature grow with e^η, so the bound-based samplers (confidence,
/// Zig-Zag with control variates) refuse this family. log y! comes from a table below 256
/// (log Γ(y + 1) above). For η > 709, e^η overflows and the term is −∞: a chain that gets
/// there has diverged, and is reported as such.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoissonFamily;

impl GlmFamily for PoissonFamily {
    #[inline]
    fn value(&self, y: f64, eta: f64) -> f64 {
        y * eta - eta.exp() - ln_factorial(y)
    }

    #[inline]
    fn derivatives(&self, y: f64, eta: f64) -> (f64, f64, f64) {
        let mu = eta.exp();
        (y * eta - mu - ln_factorial(y), y - mu, -mu)
    }

    #[inline]
    fn value_and_score(&self, y: f64, eta: f64) -> (f64, f64) {
        let mu = eta.exp();
        (y * eta - mu - ln_factorial(y), y - mu)
    }

    #[inline]
    fn score(&self, y: f64, eta: f64) -> f64 {
        y - eta.exp()
    }

    #[inline]
    fn score_and_curvature(&self, y: f64, eta: f64) -> (f64, f64) {
        let mu = eta.exp();
        (y - mu, -mu)
    }

    #[inline]
    fn curvature(&self, _y: f64, eta: f64) -> f64 {
        -eta.exp()
    }

    fn accepts_response(&self, y: f64) -> bool {
        is_count(y)
    }

    fn response_domain(&self) -> &'static str {
        "a count (a non-negative integer)"
    }
}

/// Bayesian Poisson regression with the log link, y_i ~ Poisson(μ_i), log μ_i = η_i =
/// x̃_iᵀθ + o_i (o_i an offset, e.g. log exposure, when the design has one;
/// [`DesignMatrix::with_offset`](crate::DesignMatrix::with_offset)), with an independent
/// N(0, s²) prior on every coefficient: the [`Glm`] of the [`PoissonFamily`].
///
/// ```text
/// ℓ_i(θ)   = y_i η_i − e^{η_i} − log y_i!
/// ∇ℓ_i(θ)  = (y_i − e^{η_i}) x̃_i
/// ∇²ℓ_i(θ) = −e^{η_i} x̃_i x̃_iᵀ                   (rank one: H_i v costs O(d))
/// ```
///
/// No bound capability (see [`PoissonFamily`]). **Cost**: O(d) per term, gradient or
/// Hessian-vector product, one `exp` each.
pub type PoissonRegression = Glm<PoissonFamily>;
