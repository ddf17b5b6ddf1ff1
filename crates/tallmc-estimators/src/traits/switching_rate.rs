//! [`SwitchingRateEstimator`]: what Zig-Zag with subsampling (ZZ-SS, ZZ-CV; Bierkens, Fearnhead
//! & Roberts 2019, §4) needs from an estimator of the potential's partial derivatives.

use tallmc_core::{EvalCounts, Result};

/// An estimator ∂_iÊ^J of ∂_iU from one datum J (uniform on 0..N), with affine bounds on the
/// switching rates it gives.
///
/// With U(ξ) = (1/N) Σ_J E^J(ξ), E^J = −log p − N ℓ_J, any unbiased ∂_iÊ^J of ∂_iU gives
/// switching rates λ_i(ξ, θ) = (1/N) Σ_J (θ_i ∂_iÊ^J(ξ))⁺ under which Zig-Zag is exact
/// (Bierkens et al. 2019, Thm. 2.2); the kernel realizes them by thinning a proposal clock of
/// rate a_i + b_i t, which must dominate θ_i∂_iÊ^J(ξ + θt) for **every** J and t ≥ 0 (a ratio
/// above 1 is reported as a bound violation, never a silently biased run).
///
/// **Required:** [`bounds`](Self::bounds) and [`estimate`](Self::estimate). Provided:
/// [`prepare`](Self::prepare) (nothing to prepare, no evaluation) and
/// [`describe`](Self::describe) (the type's name).
///
/// Implemented in `tallmc-samplers` by `BoundedGradients` and `LipschitzGradients` (ZZ-SS) and
/// `ControlVariates` (ZZ-CV).
pub trait SwitchingRateEstimator<M: ?Sized> {
    /// Writes a_i and b_i with θ_i∂_iÊ^J(ξ + θt) ≤ a_i + b_i t for every datum J, coordinate i
    /// and t ≥ 0. O(d), no per-datum evaluation.
    fn bounds(&mut self, model: &M, xi: &[f64], theta: &[f64], a: &mut [f64], b: &mut [f64]);

    /// ∂_iÊ^J(y) for `datum` J and `coordinate` i, with the per-datum evaluations made.
    fn estimate(
        &mut self, model: &M, y: &[f64], datum: u32, coordinate: usize,
    ) -> (f64, EvalCounts);

    /// Reads and checks the model's constants when a chain starts, allocates scratch, and makes
    /// the set-up pass the estimator needs. Returns the per-datum evaluations made; nothing to
    /// do (and none) by default.
    fn prepare(&mut self, _model: &M) -> Result<EvalCounts> {
        Ok(EvalCounts::ZERO)
    }

    /// A short description for the chain's tuning (the CSV comments) and error messages; the
    /// type's name by default.
    fn describe(&self) -> String {
        std::any::type_name::<Self>().to_string()
    }
}
