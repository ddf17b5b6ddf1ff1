//! Negative binomial (NB2) regression with the log link and a log dispersion parameter.

use super::{DispersionFamily, DispersionGlm, TermDerivatives};
use crate::glm::is_count;
use crate::glm::special::{
    digamma_ratio, ln_factorial, ln_gamma_ratio, softplus_pair, trigamma_ratio,
};

/// The NB2 family: y ∈ {0, 1, 2, …} with mean μ = e^η and dispersion φ = e^τ,
/// Var(y) = μ + μ²/φ, and with δ = η − τ, p = σ(δ) = μ/(φ + μ), q = 1 − p,
/// softplus(x) = log(1 + eˣ):
///
/// ```text
/// f     = log Γ(y + φ) − log Γ(φ) − log y! − φ softplus(δ) − y softplus(−δ)
/// f_η   = y q − φ p                       f_ηη = −p q (y + φ)
/// f_τ   = φ D₁ − φ softplus(δ) + φ p − y q        f_ητ = p f_η
/// f_ττ  = f_τ + φ² D₂ + y q² + φ p²
/// D₁ = ψ(y + φ) − ψ(φ),   D₂ = ψ′(y + φ) − ψ′(φ)
/// ```
///
/// The log-gamma and digamma differences are evaluated without cancellation when φ is large
/// (the Poisson limit): finite sums for small counts, the differences of the asymptotic
/// series for φ ≥ 10 (`glm/special.rs`); p, q and both softplus values come from one `exp`
/// and one `log1p`. No bound (τ and η are unbounded). Derivations in
/// `docs/methods/glm-negative-binomial.md`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NegativeBinomialFamily;

/// τ and φ = e^τ, shared by a batch's terms.
#[derive(Debug, Clone, Copy)]
pub struct NegativeBinomialAt {
    tau: f64,
    phi: f64,
}

/// The parts of f shared by its value and derivatives.
struct Parts {
    value: f64,
    softplus: f64,
    p: f64,
    q: f64,
}

impl NegativeBinomialFamily {
    #[inline]
    fn parts(at: &NegativeBinomialAt, y: f64, eta: f64) -> Parts {
        let (sp, sp_neg, p, q) = softplus_pair(eta - at.tau);
        let value = ln_gamma_ratio(at.phi, y) - ln_factorial(y) - at.phi * sp - y * sp_neg;
        Parts { value, softplus: sp, p, q }
    }
}

impl DispersionFamily for NegativeBinomialFamily {
    type At = NegativeBinomialAt;

    #[inline]
    fn at(&self, tau: f64) -> NegativeBinomialAt {
        NegativeBinomialAt { tau, phi: tau.exp() }
    }

    #[inline]
    fn value(&self, at: &NegativeBinomialAt, y: f64, eta: f64) -> f64 {
        Self::parts(at, y, eta).value
    }

    #[inline]
    fn value_and_scores(&self, at: &NegativeBinomialAt, y: f64, eta: f64) -> (f64, f64, f64) {
        let Parts { value, softplus, p, q } = Self::parts(at, y, eta);
        let phi = at.phi;
        let f_eta = y * q - phi * p;
        let f_tau = phi * digamma_ratio(phi, y) - phi * softplus + phi * p - y * q;
        (value, f_eta, f_tau)
    }

    #[inline]
    fn derivatives(&self, at: &NegativeBinomialAt, y: f64, eta: f64) -> TermDerivatives {
        let Parts { value, softplus, p, q } = Self::parts(at, y, eta);
        let phi = at.phi;
        let f_eta = y * q - phi * p;
        let f_tau = phi * digamma_ratio(phi, y) - phi * softplus + phi * p - y * q;
        TermDerivatives {
            value,
            eta: f_eta,
            tau: f_tau,
            eta_eta: -p * q * (y + phi),
            eta_tau: p * f_eta,
            tau_tau: f_tau + phi * phi * trigamma_ratio(phi, y) + y * q * q + phi * p * p,
        }
    }

    fn accepts_response(&self, y: f64) -> bool {
        is_count(y)
    }

    fn response_domain(&self) -> &'static str {
        "a count (a non-negative integer)"
    }

    fn parameter_name(&self) -> &'static str {
        "log_phi"
    }

    fn parameter_meaning(&self) -> &'static str {
        "the negative binomial's log dispersion log φ"
    }
}

/// Negative binomial (NB2) regression: y_i ~ NB(μ_i, φ) with log μ_i = η_i = x̃_iᵀβ + o_i
/// (o_i an offset when the design has one), Var(y_i) = μ_i + μ_i²/φ, θ = (β, log φ), and
/// independent N(0, s²) priors on every coordinate, log φ included: the [`DispersionGlm`] of
/// the [`NegativeBinomialFamily`]. As φ → ∞ it becomes Poisson regression. Parameter names:
/// the design's columns, then `log_phi`.
///
/// ```
/// use tallmc_core::Terms;
/// use tallmc_models::{Dataset, DesignOptions, NegativeBinomialRegression};
/// use tallmc_models::dispersion::NegativeBinomialFamily;
///
/// let data = Dataset::with_default_names(vec![0.5, -1.0, 2.0], vec![3.0, 0.0, 7.0], 1)?;
/// let options = DesignOptions::default().with_intercept(true);
/// let model = NegativeBinomialRegression::new(NegativeBinomialFamily, data, options, 10.0)?;
/// assert_eq!(model.dim(), 3);
/// # Ok::<(), tallmc_models::Error>(())
/// ```
pub type NegativeBinomialRegression = DispersionGlm<NegativeBinomialFamily>;
