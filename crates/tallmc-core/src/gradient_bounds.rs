//! Bounds on per-datum gradients and on curvature: what exact thinning of the
//! piecewise-deterministic samplers (BPS, lipSBPS, Zig-Zag with subsampling or control variates)
//! needs from a model.
//!
//! A piecewise-deterministic sampler moves on a line x(t) = x + vt and changes velocity at the
//! first arrival of a Poisson process whose rate depends on the gradient along the line. The
//! exact samplers simulate that arrival by *thinning*: they propose from a simpler rate that is
//! provably above the true one and accept with the ratio. The bounds that make this exact are
//! properties of the model, so they are capabilities a model may or may not have:
//!
//! | trait | what it bounds | used by |
//! |---|---|---|
//! | [`TermGradientBounds`] | sup_θ of one datum's gradient, per coordinate and along a direction | lipSBPS, Zig-Zag with subsampling (bounded-gradient models: logistic regression) |
//! | [`TermGradientLipschitz`] | the Lipschitz constant of one datum's gradient | Zig-Zag with control variates; lipSBPS and ZZ-SS on models with unbounded gradients (Gaussian) |
//! | [`TermCurvatureBound`] | the curvature of the full-data log-likelihood Σ_i ℓ_i | full-data BPS and Zig-Zag; exact inversion when the terms are quadratic |
//! | [`LogPriorCurvature`] | the curvature of the log prior | every exact sampler (the prior is part of the potential) |
//!
//! Every method here is O(1) or O(d) per call, except [`TermCurvatureBound::curvature_bound`],
//! one pass over the data at set-up. The derivations for the library's models are in
//! `docs/methods/gradient-bounds.md`.

use crate::{EvalCounts, LogPrior, Terms};

/// Per-datum gradients bounded uniformly in θ:
///
/// ```text
/// B_j  ≥ sup_θ max_i |∂ℓ_i(θ)/∂θ_j|            (per coordinate)
/// B(v) ≥ sup_θ max_i |⟨∇ℓ_i(θ), v⟩|             (along a direction v)
/// ```
///
/// For logistic regression ∇ℓ_i = (y_i − σ(x̃_iᵀθ)) x̃_i with |y_i − σ| < 1, so B_j = max_i |x̃_ij|
/// (Zig-Zag with subsampling's M_j = N·B_j, Bierkens, Fearnhead & Roberts 2019, §4) and
/// B(v) = min(‖v‖₂ max_i ‖x̃_i‖₂, Σ_j |v_j| max_i |x̃_ij|) (lipSBPS, Pakman et al. 2017, Supp. F).
/// Models whose gradients are unbounded in θ (Gaussian likelihoods) do not implement it.
pub trait TermGradientBounds: Terms {
    /// B_j ≥ sup_θ max_i |∂ℓ_i(θ)/∂θ_j|, finite and ≥ 0, for `j < dim()`. O(1).
    fn coordinate_gradient_bound(&self, j: usize) -> f64;

    /// B(v) ≥ sup_θ max_i |⟨∇ℓ_i(θ), v⟩|, finite and ≥ 0, for `v` of length `dim()`. O(d).
    fn directional_gradient_bound(&self, v: &[f64]) -> f64;

    /// B_ij ≥ sup_θ |∂ℓ_i(θ)/∂θ_j| for datum `i` alone, finite, ≥ 0 and ≤ B_j: the weights of
    /// Zig-Zag with importance-sampled subsampling (datum i drawn for coordinate j with
    /// probability B_ij / Σ_k B_kj; Bierkens, Fearnhead & Roberts 2019, §4). For a generalized
    /// linear model B_ij = c₁|x̃_ij|. By default B_j, the same for every datum (then importance
    /// sampling is uniform sampling). O(1).
    fn term_coordinate_gradient_bound(&self, i: usize, j: usize) -> f64 {
        let _ = i;
        self.coordinate_gradient_bound(j)
    }

    /// B_i(w) ≥ sup_θ |⟨∇ℓ_i(θ), w⟩| for datum `i` alone and a direction `w` of length `dim()`,
    /// finite and ≥ 0: what a linear change of coordinates θ = θ* + Lz needs, since
    /// ∂ℓ_i/∂z_j = ⟨∇ℓ_i, L e_j⟩ (the per-datum bounds of a model in whitened coordinates).
    ///
    /// By default Σ_j |w_j| B_ij, valid for every model by the triangle inequality:
    /// |⟨∇ℓ_i, w⟩| ≤ Σ_j |w_j| |∂_jℓ_i| ≤ Σ_j |w_j| B_ij. A generalized linear model, whose
    /// ∇ℓ_i = φ′(η_i) x̃_i with |φ′| ≤ c₁, overrides it with the tight c₁|⟨x̃_i, w⟩| (attained
    /// as a supremum where the score saturates). O(d).
    fn term_directional_gradient_bound(&self, i: usize, w: &[f64]) -> f64 {
        w.iter()
            .enumerate()
            .map(|(j, wj)| wj.abs() * self.term_coordinate_gradient_bound(i, j))
            .sum()
    }
}

/// Per-datum gradients that are Lipschitz in θ (in the Euclidean norm):
///
/// ```text
/// C_j ≥ max_i sup_{θ ≠ θ′} |∂_jℓ_i(θ) − ∂_jℓ_i(θ′)| / ‖θ − θ′‖₂      (per coordinate)
/// C   ≥ max_i sup_{θ ≠ θ′} ‖∇ℓ_i(θ) − ∇ℓ_i(θ′)‖₂ / ‖θ − θ′‖₂          (whole gradient)
/// ```
///
/// For a generalized linear model ℓ_i = φ_i(x̃_iᵀθ) with |φ_i″| ≤ c: ∂_jℓ_i = φ_i′(η_i) x̃_ij, so
/// C_j = c max_i |x̃_ij| ‖x̃_i‖₂ and C = c max_i ‖x̃_i‖₂² (logistic: c = 1/4; Gaussian with known
/// σ: c = 1/σ²). These are Zig-Zag with control variates' C_j (Bierkens, Fearnhead & Roberts
/// 2019, §4).
pub trait TermGradientLipschitz: Terms {
    /// C_j (see the trait docs), finite and ≥ 0, for `j < dim()`. O(1).
    fn coordinate_gradient_lipschitz(&self, j: usize) -> f64;

    /// C (see the trait docs), finite and ≥ 0. O(1).
    fn gradient_lipschitz(&self) -> f64;
}

/// Bounds on the curvature of the full-data log-likelihood ℓ(θ) = Σ_{i<N} ℓ_i(θ), valid for
/// every θ (see [`TermCurvatureBound::curvature_bound`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CurvatureBound {
    /// Dimension d.
    pub dim: usize,
    /// K (d × d, row-major, symmetric positive semi-definite) with |vᵀ∇²ℓ(θ)v| ≤ vᵀKv for all
    /// θ and v: the slope bound of BPS's rate along a line, b = vᵀKv.
    pub quadratic: Vec<f64>,
    /// K^abs (d × d, row-major) with |∂²ℓ(θ)/∂θ_j∂θ_k| ≤ K^abs_jk for all θ: Zig-Zag's slope
    /// bound for coordinate j with velocity in {−1, +1}^d is Σ_k K^abs_jk.
    pub absolute: Vec<f64>,
    /// Whether ∇²ℓ(θ) = −K for every θ (quadratic, concave terms, e.g. Gaussian likelihoods
    /// with known variance): then the rates along a line are exactly affine and the samplers
    /// invert them instead of thinning.
    pub exact: bool,
    /// The per-datum evaluations the pass made (counted as Hessians).
    pub evals: EvalCounts,
}

/// A bound on the curvature of the full-data log-likelihood, for the exact full-data
/// piecewise-deterministic samplers.
///
/// For a generalized linear model with |φ_i″| ≤ c, ∇²ℓ(θ) = Σ_i φ_i″(η_i) x̃_i x̃_iᵀ, so
/// K = c X̃ᵀX̃ and K^abs = c |X̃|ᵀ|X̃| (entry-wise absolute values), both computed in one pass
/// (O(N d²)); for Gaussian likelihoods φ_i″ = −1/σ² is constant and the bound is exact.
pub trait TermCurvatureBound: Terms {
    /// Computes the bound (see [`CurvatureBound`]) in one pass over the data.
    fn curvature_bound(&self) -> CurvatureBound;
}

/// The curvature of the log prior, which is part of every sampler's potential
/// U(θ) = −log p(θ) − Σ_i ℓ_i(θ):
///
/// ```text
/// κ ≥ sup_θ max_j Σ_k |∂² log p(θ) / ∂θ_j ∂θ_k|
/// ```
///
/// (the ∞-norm of the prior Hessian, which also bounds its spectral norm and the Euclidean norm of
/// every row, so one constant serves BPS, Zig-Zag and the control-variate bounds). An
/// independent N(0, s²) prior has κ = 1/s², a flat prior κ = 0.
pub trait LogPriorCurvature: LogPrior {
    /// κ (see the trait docs), finite and ≥ 0.
    fn prior_curvature_bound(&self) -> f64;

    /// Whether ∇² log p is the same at every θ (Gaussian and flat priors). Exact inversion of
    /// the full-data samplers' rates needs a constant Hessian of the whole potential.
    fn prior_hessian_is_constant(&self) -> bool;
}
