//! Negative binomial (NB2) regression with the log link and a log dispersion parameter.

use super::{BLOCK, DispersionFamily, DispersionGlm, PredictorDerivatives};
use crate::glm::is_count;
use crate::glm::special::{
    SMALL_COUNTS, digamma_ratio, digamma_trigamma_ratios, ln_factorial, ln_gamma_ratio,
    small_count, softplus_exp, softplus_from, softplus_log, softplus_pair,
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
        Self::parts_from(at, y, softplus_pair(eta - at.tau))
    }

    /// [`Self::parts`] from the softplus pair of δ = η − τ.
    #[inline(always)]
    fn parts_from(at: &NegativeBinomialAt, y: f64, pair: (f64, f64, f64, f64)) -> Parts {
        Self::parts_with(at, y, pair, ln_gamma_ratio(at.phi, y))
    }

    /// [`Self::parts_from`] with log Γ(y + φ) − log Γ(φ) given (from a table of the batch).
    #[inline(always)]
    fn parts_with(
        at: &NegativeBinomialAt, y: f64, pair: (f64, f64, f64, f64), ln_gamma_ratio: f64,
    ) -> Parts {
        let (sp, sp_neg, p, q) = pair;
        let value = ln_gamma_ratio - ln_factorial(y) - at.phi * sp - y * sp_neg;
        Parts { value, softplus: sp, p, q }
    }

    /// The softplus pairs of δ_k = η_k − τ for a block: e^{−|δ|} over the block in one loop,
    /// then log1p in another (both vectorize), the bits of [`softplus_pair`].
    #[inline(always)]
    fn softplus_block(
        at: &NegativeBinomialAt, eta: &[f64], pairs: &mut [(f64, f64, f64, f64); BLOCK],
    ) -> usize {
        let n = eta.len().min(BLOCK);
        let mut delta = [0.0; BLOCK];
        for (d, &x) in delta.iter_mut().zip(&eta[..n]) {
            *d = x - at.tau;
        }
        let (e, l) = exp_log_block(&delta);
        for (k, pair) in pairs[..n].iter_mut().enumerate() {
            *pair = softplus_from(delta[k], e[k], l[k]);
        }
        n
    }

    /// f_η and f_τ from the parts: the operations of `value_and_scores`.
    #[inline(always)]
    fn scores(at: &NegativeBinomialAt, y: f64, parts: &Parts) -> (f64, f64) {
        Self::scores_with(at, y, parts, digamma_ratio(at.phi, y))
    }

    /// [`Self::scores`] with ψ(y + φ) − ψ(φ) given (from a table of the batch).
    #[inline(always)]
    fn scores_with(at: &NegativeBinomialAt, y: f64, parts: &Parts, d1: f64) -> (f64, f64) {
        let Parts { softplus, p, q, .. } = *parts;
        let phi = at.phi;
        let f_eta = y * q - phi * p;
        let f_tau = phi * d1 - phi * softplus + phi * p - y * q;
        (f_eta, f_tau)
    }

    /// (f_ηη, f_ητ, f_ττ, f_η, f_τ) from softplus(δ), p and q: the one sequence of operations
    /// both [`DispersionFamily::derivatives`] and [`DispersionFamily::curvatures`] run, so
    /// their bits agree.
    #[inline(always)]
    fn second_order(
        at: &NegativeBinomialAt, y: f64, softplus: f64, p: f64, q: f64,
    ) -> (f64, f64, f64, f64, f64) {
        let phi = at.phi;
        let (d1, d2) = digamma_trigamma_ratios(phi, y);
        let f_eta = y * q - phi * p;
        let f_tau = phi * d1 - phi * softplus + phi * p - y * q;
        let tau_tau = f_tau + phi * phi * d2 + y * q * q + phi * p * p;
        (-p * q * (y + phi), p * f_eta, tau_tau, f_eta, f_tau)
    }
}

/// (e^{−|δ_k|}, log1p(e^{−|δ_k|})) over a block: two branch-free loops (the functions of
/// `glm::fast_math`) that LLVM vectorizes. (A copy compiled for AVX2 was tried: no faster at
/// blocks of 8 in the HMC-ECS benchmark.)
#[inline(always)]
fn exp_log_block(delta: &[f64; BLOCK]) -> ([f64; BLOCK], [f64; BLOCK]) {
    let (mut e, mut l) = ([0.0; BLOCK], [0.0; BLOCK]);
    for (e, &d) in e.iter_mut().zip(delta) {
        *e = softplus_exp(d);
    }
    for (l, &e) in l.iter_mut().zip(&e) {
        *l = softplus_log(e);
    }
    (e, l)
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
        let parts = Self::parts(at, y, eta);
        let (f_eta, f_tau) = Self::scores(at, y, &parts);
        (parts.value, f_eta, f_tau)
    }

    #[inline(always)]
    fn value_and_scores_block(
        &self, at: &NegativeBinomialAt, y: &[f64], eta: &[f64], out: &mut [(f64, f64, f64)],
    ) {
        let mut pairs = [(0.0, 0.0, 0.0, 0.0); BLOCK];
        let n = Self::softplus_block(at, eta, &mut pairs);
        for ((o, &y), &pair) in out[..n].iter_mut().zip(y).zip(&pairs) {
            let parts = Self::parts_from(at, y, pair);
            let (f_eta, f_tau) = Self::scores(at, y, &parts);
            *o = (parts.value, f_eta, f_tau);
        }
    }

    /// The log-gamma and digamma differences depend on y and φ only, and a batch's counts are
    /// mostly small: for the integers 0 ..= K (K the batch's largest count up to 32) they are
    /// computed once, by the same functions (so the same bits), and looked up per datum.
    fn value_and_scores_batch(
        &self, at: &NegativeBinomialAt, y: &[f64], eta: &[f64], out: &mut [(f64, f64, f64)],
    ) {
        let largest = y.iter().filter_map(|&v| small_count(v)).max().unwrap_or(0) as usize;
        let (mut lg, mut dg) = ([0.0; SMALL_COUNTS + 1], [0.0; SMALL_COUNTS + 1]);
        for k in 0..=largest {
            lg[k] = ln_gamma_ratio(at.phi, k as f64);
            dg[k] = digamma_ratio(at.phi, k as f64);
        }
        let mut pairs = [(0.0, 0.0, 0.0, 0.0); BLOCK];
        let blocks = y.chunks(BLOCK).zip(eta.chunks(BLOCK)).zip(out.chunks_mut(BLOCK));
        for ((yb, eb), ob) in blocks {
            let n = Self::softplus_block(at, eb, &mut pairs);
            for ((o, &y), &pair) in ob[..n].iter_mut().zip(yb).zip(&pairs) {
                let (l, d) = match small_count(y) {
                    Some(k) => (lg[k as usize], dg[k as usize]),
                    None => (ln_gamma_ratio(at.phi, y), digamma_ratio(at.phi, y)),
                };
                let parts = Self::parts_with(at, y, pair, l);
                let (f_eta, f_tau) = Self::scores_with(at, y, &parts, d);
                *o = (parts.value, f_eta, f_tau);
            }
        }
    }

    #[inline(always)]
    fn curvatures_block(
        &self, at: &NegativeBinomialAt, y: &[f64], eta: &[f64], out: &mut [(f64, f64, f64)],
    ) {
        let mut pairs = [(0.0, 0.0, 0.0, 0.0); BLOCK];
        let n = Self::softplus_block(at, eta, &mut pairs);
        for ((o, &y), &(softplus, _, p, q)) in out[..n].iter_mut().zip(y).zip(&pairs) {
            let (eta_eta, eta_tau, tau_tau, _, _) = Self::second_order(at, y, softplus, p, q);
            *o = (eta_eta, eta_tau, tau_tau);
        }
    }

    #[inline]
    fn derivatives(&self, at: &NegativeBinomialAt, y: f64, eta: f64) -> PredictorDerivatives {
        let Parts { value, softplus, p, q } = Self::parts(at, y, eta);
        let (eta_eta, eta_tau, tau_tau, f_eta, f_tau) = Self::second_order(at, y, softplus, p, q);
        PredictorDerivatives { value, eta: f_eta, tau: f_tau, eta_eta, eta_tau, tau_tau }
    }

    /// The curvatures without the value (no log-gamma difference, no log y!): one `exp`, one
    /// `log1p` and the finite sums of ψ and ψ′ in one loop per datum.
    #[inline]
    fn curvatures(&self, at: &NegativeBinomialAt, y: f64, eta: f64) -> (f64, f64, f64) {
        let (softplus, _, p, q) = softplus_pair(eta - at.tau);
        let (eta_eta, eta_tau, tau_tau, _, _) = Self::second_order(at, y, softplus, p, q);
        (eta_eta, eta_tau, tau_tau)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The block paths and the curvatures-only path give the bits of the per-datum functions.
    #[test]
    fn blocks_and_curvatures_give_the_bits_of_the_per_datum_functions() {
        let f = NegativeBinomialFamily;
        for &tau in &[-3.0, 0.0, 0.7, 2.5, 12.0] {
            let at = f.at(tau);
            let y: Vec<f64> =
                (0..BLOCK).map(|k| [0.0, 1.0, 3.0, 7.0, 32.0, 33.0, 250.0, 4e3][k]).collect();
            let eta: Vec<f64> = (0..BLOCK).map(|k| -40.0 + 11.3 * k as f64).collect();
            for n in [1, 5, BLOCK] {
                let mut vs = [(0.0, 0.0, 0.0); BLOCK];
                let mut cs = [(0.0, 0.0, 0.0); BLOCK];
                f.value_and_scores_block(&at, &y[..n], &eta[..n], &mut vs[..n]);
                f.curvatures_block(&at, &y[..n], &eta[..n], &mut cs[..n]);
                for k in 0..n {
                    let bits = |t: (f64, f64, f64)| (t.0.to_bits(), t.1.to_bits(), t.2.to_bits());
                    let one = f.value_and_scores(&at, y[k], eta[k]);
                    assert_eq!(bits(vs[k]), bits(one), "τ = {tau}, k = {k}");
                    let h = f.derivatives(&at, y[k], eta[k]);
                    assert_eq!(bits(cs[k]), bits((h.eta_eta, h.eta_tau, h.tau_tau)));
                    assert_eq!(bits(f.curvatures(&at, y[k], eta[k])), bits(cs[k]));
                    assert_eq!(f.value(&at, y[k], eta[k]).to_bits(), one.0.to_bits());
                    assert_eq!(h.value.to_bits(), one.0.to_bits());
                    assert_eq!(
                        (h.eta.to_bits(), h.tau.to_bits()),
                        (one.1.to_bits(), one.2.to_bits())
                    );
                }
            }
        }
    }
}
