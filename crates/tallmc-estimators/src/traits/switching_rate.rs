//! [`SwitchingRateEstimator`]: what Zig-Zag with subsampling (ZZ-SS, ZZ-CV; Bierkens, Fearnhead
//! & Roberts 2019, §4) needs from an estimator of the potential's partial derivatives.

use rand::{Rng, RngExt};
use tallmc_core::{EvalCounts, Result, WhiteningFrame};

/// An estimator ∂_iÊ^J of ∂_iU from one datum J (uniform on 0..N, or drawn by the estimator),
/// with bounds on the switching rates it gives.
///
/// With U(ξ) = (1/N) Σ_J E^J(ξ), E^J = −log p − N ℓ_J, any unbiased ∂_iÊ^J of ∂_iU gives
/// switching rates λ_i(ξ, θ) = (1/N) Σ_J (θ_i ∂_iÊ^J(ξ))⁺ under which Zig-Zag is exact
/// (Bierkens et al. 2019, Thm. 2.2); the kernel realizes them by thinning a proposal clock of
/// rate a_i + b_i t, which must dominate θ_i∂_iÊ^J(ξ + θt) for **every** J and t ≥ 0 (a ratio
/// above 1 is reported as a bound violation, never a silently biased run).
///
/// **Importance-sampled data.** An estimator may draw J itself, with probability p_iJ for a
/// proposal of coordinate i ([`draw_datum`](Self::draw_datum)); unbiasedness is then
/// E_J[∂_iÊ^J] = Σ_J p_iJ ∂_iÊ^J = ∂_iU, e.g. with a term w_J/p_iJ in place of N w_J, and
/// the rates are λ_i = Σ_J p_iJ (θ_i∂_iÊ^J)⁺ (the same theorem: only unbiasedness is used).
///
/// **Quadratic bounds.** The bound may have a second part ([`quadratic_bounds`](Self::quadratic_bounds)):
/// θ_i∂_iÊ^J(ξ + θt) ≤ (a_i + b_i t) + c_i (r + s t)², which the kernel simulates as a second
/// clock (the superposition of two Poisson processes is one with the summed rate).
///
/// **Coordinates.** The estimator may run the process in coordinates z = L⁻¹(θ − θ*) of its own
/// ([`frame`](Self::frame)); then ξ, θ and y are in z, the kernel maps the trajectory back to θ,
/// and [`estimate_at`](Self::estimate_at) also receives the point in θ.
///
/// **Required:** [`bounds`](Self::bounds) and [`estimate`](Self::estimate). Provided:
/// [`prepare`](Self::prepare) (nothing to prepare, no evaluation),
/// [`describe`](Self::describe) (the type's name), [`draw_datum`](Self::draw_datum) (uniform),
/// [`quadratic_bounds`](Self::quadratic_bounds) (none), [`frame`](Self::frame) (θ itself) and
/// [`estimate_at`](Self::estimate_at) ([`estimate`](Self::estimate)).
///
/// Implemented in `tallmc-samplers` by `BoundedGradients` and `LipschitzGradients` (ZZ-SS) and
/// `ControlVariates` (ZZ-CV), and by `TaylorControlVariates` (ZZ-CV of order two, importance
/// sampled, in whitened coordinates).
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

    /// The datum J of a proposal for `coordinate` i: uniform on 0..`num_terms` by default (one
    /// `random_range` call). An estimator that draws J otherwise weights its estimate by the
    /// probability it drew J with (trait docs).
    fn draw_datum<R: Rng + ?Sized>(
        &mut self, num_terms: u32, coordinate: usize, rng: &mut R,
    ) -> u32 {
        let _ = coordinate;
        rng.random_range(0..num_terms)
    }

    /// The quadratic part of the bound (trait docs): writes c_i ≥ 0 into `c` and returns
    /// (r, s) ≥ 0, or returns `None` (the default) when the bound is affine alone. O(d).
    fn quadratic_bounds(
        &mut self, model: &M, xi: &[f64], theta: &[f64], c: &mut [f64],
    ) -> Option<(f64, f64)> {
        let _ = (model, xi, theta, c);
        None
    }

    /// The frame θ = θ* + L z the process runs in (trait docs); `None` (the default) when it
    /// runs in θ itself. Valid after [`prepare`](Self::prepare).
    fn frame(&self) -> Option<&WhiteningFrame> {
        None
    }

    /// ∂_iÊ^J at the point `y` of the estimator's coordinates, which is `y_theta` in θ (the same
    /// slice when [`frame`](Self::frame) is `None`): [`estimate`](Self::estimate) by default.
    fn estimate_at(
        &mut self, model: &M, y: &[f64], y_theta: &[f64], datum: u32, coordinate: usize,
    ) -> (f64, EvalCounts) {
        let _ = y_theta;
        self.estimate(model, y, datum, coordinate)
    }
}
