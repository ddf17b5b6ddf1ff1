//! [`DatumRateBound`]: what lipSBPS (Pakman et al. 2017) needs to thin its data clock.

use rand::{Rng, RngExt};
use tallmc_core::{EvalCounts, Result};

/// A bound on every datum's bounce rate along a line, for lipSBPS:
///
/// ```text
/// sup_{J<N} |⟨∇ℓ_J(x + vt), v⟩| ≤ a + b t     for all t ≥ 0.
/// ```
///
/// The kernel superposes N such clocks (total rate N(a + bt)) and thins each proposal with one
/// datum, so the bound must hold for every datum: a ratio above 1 is reported as a bound
/// violation.
///
/// **Importance-sampled data.** A bound may instead give each datum a clock of its own,
/// |⟨∇ℓ_J(x + vt), v⟩| ≤ a_J + b_J t: the data clock is then their superposition, of rate
/// Σ_J (a_J + b_J t) ([`data_rate`](Self::data_rate)), and a proposal at time τ belongs to datum J
/// with probability (a_J + b_Jτ) / Σ_K (a_K + b_Kτ) ([`draw_datum`](Self::draw_datum)), which
/// then thins against its own a_J + b_Jτ. This is the same exact thinning, datum by datum
/// (Lewis & Shedler 1979); when the constants differ across the data (heavy-tailed
/// covariates) Σ_J a_J is far below N max_J a_J, and so is the number of proposals.
///
/// **Required:** [`datum_bound`](Self::datum_bound). Provided: [`prepare`](Self::prepare)
/// (nothing to prepare, no evaluation), [`describe`](Self::describe) (the type's name),
/// [`data_rate`](Self::data_rate) (N × [`datum_bound`](Self::datum_bound)) and
/// [`draw_datum`](Self::draw_datum) (uniform, with [`datum_bound`](Self::datum_bound)).
///
/// Implemented in `tallmc-samplers` by `BoundedGradients` and `LipschitzGradients` (the paper's
/// uniform scheme) and `WeightedGradients` and `WeightedLipschitzGradients` (importance
/// sampled).
pub trait DatumRateBound<M: ?Sized> {
    /// (a, b) for the line x + vt (see the trait docs). O(d), no per-datum evaluation.
    fn datum_bound(&self, model: &M, x: &[f64], v: &[f64]) -> (f64, f64);

    /// Reads and checks the model's constants when a chain starts (and makes a set-up pass if
    /// the bound needs one). Returns the per-datum evaluations made; nothing to do (and none)
    /// by default.
    fn prepare(&mut self, _model: &M) -> Result<EvalCounts> {
        Ok(EvalCounts::ZERO)
    }

    /// A short description for the chain's tuning (the CSV comments); the type's name by
    /// default.
    fn describe(&self) -> String {
        std::any::type_name::<Self>().to_string()
    }

    /// (A, B) with total data rate A + Bt along x + vt, the sum of every datum's bound (trait
    /// docs): N·[`datum_bound`](Self::datum_bound) by default. `num_terms` is N ≥ 1. O(d).
    fn data_rate(&mut self, model: &M, x: &[f64], v: &[f64], num_terms: u32) -> (f64, f64) {
        let (a, b) = self.datum_bound(model, x, v);
        let n = f64::from(num_terms);
        (n * a, n * b)
    }

    /// The datum J whose clock proposed at time `tau` along x + vt, drawn with probability
    /// (a_J + b_Jτ) / (A + Bτ), and its own bound (a_J, b_J) (trait docs). Called after
    /// [`data_rate`](Self::data_rate) at the same x and v, with the `total` (A, B) it returned.
    /// By default uniform on 0..`num_terms` (one `random_range` call) with (A/N, B/N), the
    /// [`datum_bound`](Self::datum_bound) the default `data_rate` multiplied by N (not
    /// recomputed: O(1)).
    fn draw_datum<R: Rng + ?Sized>(
        &mut self, model: &M, x: &[f64], v: &[f64], tau: f64, num_terms: u32, total: (f64, f64),
        rng: &mut R,
    ) -> (u32, (f64, f64)) {
        let _ = (model, x, v, tau);
        let n = f64::from(num_terms);
        (rng.random_range(0..num_terms), (total.0 / n, total.1 / n))
    }
}
