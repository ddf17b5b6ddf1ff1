//! [`DatumRateBound`]: what lipSBPS (Pakman et al. 2017) needs to thin its data clock.

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
/// **Required:** [`datum_bound`](Self::datum_bound). Provided: [`prepare`](Self::prepare)
/// (nothing to prepare, no evaluation) and [`describe`](Self::describe) (the type's name).
///
/// Implemented in `tallmc-samplers` by `BoundedGradients` and `LipschitzGradients`.
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
}
