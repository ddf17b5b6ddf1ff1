//! Terms with one linear predictor per datum and one parameter shared by every datum: the
//! structure of GLMs with a dispersion or scale parameter (negative binomial, Student-t
//! regression), which lets a control-variate engine keep six scalars per datum instead of a
//! d-vector (see [`DispersionPredictor`]).

use crate::model::Terms;

/// f_i(η, τ) and its derivatives up to order two at one datum (see [`DispersionPredictor`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PredictorDerivatives {
    /// f.
    pub value: f64,
    /// ∂f/∂η.
    pub eta: f64,
    /// ∂f/∂τ.
    pub tau: f64,
    /// ∂²f/∂η².
    pub eta_eta: f64,
    /// ∂²f/∂η∂τ.
    pub eta_tau: f64,
    /// ∂²f/∂τ².
    pub tau_tau: f64,
}

/// Terms that depend on θ = (β, τ) ∈ ℝ^{p+1} (d = p + 1 = [`Terms::dim`]) through one linear
/// predictor per datum and one scalar τ = θ_p shared by every datum:
///
/// ```text
/// ℓ_i(θ) = f_i(η_i, τ),   η_i = x_iᵀβ (+ a fixed offset o_i),   x_i ∈ ℝ^p,
/// ∇ℓ_i(θ) = (f_η x_i, f_τ),
/// ∇²ℓ_i(θ) = [ f_ηη x_i x_iᵀ   f_ητ x_i ]
///            [ f_ητ x_iᵀ       f_ττ     ].
/// ```
///
/// The rank-two structure lets a Taylor control variate around θ* = (β*, τ*) keep per datum
/// only η*_i and the six numbers of [`PredictorDerivatives`] at (η*_i, τ*): the second-order
/// expansion in (δη, δτ) = (η_i − η*_i, τ − τ*) is exact in those, and the gradient of a
/// difference d_i = ℓ_i − q_i is (r_i x_i, s_i) with two scalars r_i, s_i (the `RankTwo`
/// engine of `tallmc-estimators`). Every method is O(p) per index (the derivative methods
/// O(1)). Cost accounting belongs to the caller.
pub trait DispersionPredictor: Terms {
    /// **Overwrites** `eta[k]` with η = x_iᵀβ (+ o_i) at i = `indices[k]`, β = θ[..p].
    fn dispersion_predictors(&self, theta: &[f64], indices: &[u32], eta: &mut [f64]);

    /// **Overwrites** `out[k]` with (f, ∂f/∂η, ∂f/∂τ) of datum i = `indices[k]` at
    /// (η = `eta[k]`, τ = `tau`): what a value and gradient at θ need.
    fn predictor_scores_at(
        &self, tau: f64, indices: &[u32], eta: &[f64], out: &mut [(f64, f64, f64)],
    );

    /// **Overwrites** `out[k]` with every derivative up to order two of datum i = `indices[k]`
    /// at (η = `eta[k]`, τ = `tau`): what a second-order control variate needs at its centre.
    /// The value and scores must equal those of [`DispersionPredictor::predictor_scores_at`]
    /// bit for bit.
    fn predictor_derivatives_at(
        &self, tau: f64, indices: &[u32], eta: &[f64], out: &mut [PredictorDerivatives],
    );

    /// **Adds** Σ_k `weights[k]` · x_{indices\[k\]} into `out` (length p = d − 1).
    fn add_weighted_predictor_rows(&self, indices: &[u32], weights: &[f64], out: &mut [f64]);
}
