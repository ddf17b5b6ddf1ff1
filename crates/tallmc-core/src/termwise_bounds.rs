//! Per-datum bounds: the constants the exact minibatch Metropolis–Hastings kernels (SMH, TunaMH,
//! MH-SS; REFERENCES §7) draw their Poisson minibatches with. Unlike the bounds of
//! [`gradient_bounds`](crate::gradient_bounds), which bound the worst datum, these bound each
//! datum i on its own, so that an index can be drawn with probability proportional to its
//! constant ([`AliasTable`](crate::AliasTable)) and the expected minibatch is the sum of the
//! constants, not N times the largest.
//!
//! | trait | bound | used by |
//! |---|---|---|
//! | [`TermLipschitz`] | \|ℓ_i(θ′) − ℓ_i(θ)\| ≤ c_i ‖θ′ − θ‖₂ | TunaMH |
//! | [`TermCurvatureConstants`] | the second derivatives of ℓ_i: per entry (a₂,i) and as the gradient's Lipschitz constant (L_i) | SMH of order 1, MH-SS |
//! | [`TermThirdDerivativeConstants`] | the third derivatives of ℓ_i: per entry (a₃,i) and as the Hessian's Lipschitz constant (L₂,i) | SMH of order 2, MH-SS of order 2 |
//!
//! **Taylor remainders.** With h = θ − θ̂ and T_k ℓ_i(θ; θ̂) the order-k Taylor polynomial of ℓ_i
//! at θ̂, Taylor's theorem with the Lagrange remainder gives, for some ξ on [θ̂, θ],
//!
//! ```text
//! |ℓ_i(θ) − T_k ℓ_i(θ; θ̂)| = (1/(k+1)!) |Σ_{j₁…j_{k+1}} ∂^{k+1}ℓ_i(ξ)/∂θ_{j₁}…∂θ_{j_{k+1}} h_{j₁}…h_{j_{k+1}}|
//!                          ≤ a_{k+1,i} ‖h‖₁^{k+1} / (k+1)!,
//! ```
//!
//! with a_{k+1,i} ≥ sup_θ max over index tuples of |∂^{k+1}ℓ_i(θ)|. For a generalized linear
//! model ℓ_i = φ(x̃_iᵀθ + o_i), ∂^{k+1}ℓ_i = φ^{(k+1)}(η_i) x̃_{ij₁}…x̃_{ij_{k+1}}, so
//! a_{k+1,i} = c_{k+1} max_j |x̃_ij|^{k+1} with c_{k+1} ≥ sup |φ^{(k+1)}| (logistic: c₂ = ¼,
//! c₃ = 1/(6√3) = √3/18: REFERENCES §7's ψ_i of SMH). The derivations are in
//! `docs/methods/gradient-bounds.md`.

use serde::{Deserialize, Serialize};

use crate::Terms;

/// One of the per-datum constants of this module, by name: what a pass over a shard returns
/// one of per row ([`PassKind::TermConstants`](crate::PassKind::TermConstants)), so that a model
/// whose rows live elsewhere can give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TermConstant {
    /// c_i of [`TermLipschitz`].
    Lipschitz,
    /// a₂,i of [`TermCurvatureConstants`].
    SecondDerivativeBound,
    /// L_i of [`TermCurvatureConstants`].
    GradientLipschitz,
    /// a₃,i of [`TermThirdDerivativeConstants`].
    ThirdDerivativeBound,
    /// L₂,i of [`TermThirdDerivativeConstants`].
    HessianLipschitz,
}

impl TermConstant {
    /// Every constant, in declaration order (`ALL[c.index()] == c`).
    pub const ALL: [Self; 5] = [
        Self::Lipschitz,
        Self::SecondDerivativeBound,
        Self::GradientLipschitz,
        Self::ThirdDerivativeBound,
        Self::HessianLipschitz,
    ];

    /// The position of the constant in [`TermConstant::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// What the constant bounds, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Lipschitz => "per-datum Lipschitz constant",
            Self::SecondDerivativeBound => "per-datum bound on the second derivatives",
            Self::GradientLipschitz => "per-datum gradient Lipschitz constant",
            Self::ThirdDerivativeBound => "per-datum bound on the third derivatives",
            Self::HessianLipschitz => "per-datum Hessian Lipschitz constant",
        }
    }
}

/// Every datum's Lipschitz constant c_i ([`TermLipschitz`]).
pub fn lipschitz_constants<M: TermLipschitz + ?Sized>(model: &M) -> Vec<f64> {
    (0..model.num_terms()).map(|i| model.term_lipschitz(i)).collect()
}

/// Every datum's `constant` of a model with the curvature and third-derivative constants;
/// `None` for [`TermConstant::Lipschitz`].
pub fn derivative_constants<M>(model: &M, constant: TermConstant) -> Option<Vec<f64>>
where
    M: TermCurvatureConstants + TermThirdDerivativeConstants + ?Sized,
{
    let of = |f: &dyn Fn(usize) -> f64| (0..model.num_terms()).map(f).collect();
    Some(match constant {
        TermConstant::Lipschitz => return None,
        TermConstant::SecondDerivativeBound => of(&|i| model.term_second_derivative_bound(i)),
        TermConstant::GradientLipschitz => of(&|i| model.term_gradient_lipschitz(i)),
        TermConstant::ThirdDerivativeBound => of(&|i| model.term_third_derivative_bound(i)),
        TermConstant::HessianLipschitz => of(&|i| model.term_hessian_lipschitz(i)),
    })
}

/// Per-datum Lipschitz constants of the terms (in the Euclidean norm):
///
/// ```text
/// c_i ≥ sup_{θ ≠ θ′} |ℓ_i(θ′) − ℓ_i(θ)| / ‖θ′ − θ‖₂.
/// ```
///
/// For a generalized linear model with a bounded score |φ′| ≤ c₁: c_i = c₁ ‖x̃_i‖₂ (logistic:
/// c₁ = 1). TunaMH's c_i with M(θ, θ′) = ‖θ′ − θ‖₂ (Zhang et al. 2020).
pub trait TermLipschitz: Terms {
    /// c_i (see the trait docs), finite and ≥ 0, for `i < num_terms()`. O(d).
    fn term_lipschitz(&self, i: usize) -> f64;
}

/// Per-datum bounds on the second derivatives of the terms:
///
/// ```text
/// a₂,i ≥ sup_θ max_{j,k} |∂²ℓ_i(θ)/∂θ_j∂θ_k|       (per entry: |ℓ_i − T₁ℓ_i| ≤ a₂,i ‖h‖₁²/2)
/// L_i  ≥ sup_θ ‖∇²ℓ_i(θ)‖₂                          (the Lipschitz constant of ∇ℓ_i)
/// ```
///
/// For a generalized linear model with |φ″| ≤ c₂: a₂,i = c₂ max_j x̃_ij² and L_i = c₂ ‖x̃_i‖₂²
/// (∇²ℓ_i = φ″ x̃_i x̃_iᵀ has the one nonzero eigenvalue φ″‖x̃_i‖₂²).
pub trait TermCurvatureConstants: Terms {
    /// a₂,i (see the trait docs), finite and ≥ 0. O(d).
    fn term_second_derivative_bound(&self, i: usize) -> f64;

    /// L_i (see the trait docs), finite and ≥ 0. O(d).
    fn term_gradient_lipschitz(&self, i: usize) -> f64;
}

/// Per-datum bounds on the third derivatives of the terms:
///
/// ```text
/// a₃,i ≥ sup_θ max_{j,k,l} |∂³ℓ_i(θ)/∂θ_j∂θ_k∂θ_l|     (|ℓ_i − T₂ℓ_i| ≤ a₃,i ‖h‖₁³/6)
/// L₂,i ≥ sup_{θ ≠ θ′} ‖∇²ℓ_i(θ′) − ∇²ℓ_i(θ)‖₂ / ‖θ′ − θ‖₂   (the Lipschitz constant of ∇²ℓ_i)
/// ```
///
/// For a generalized linear model with |φ‴| ≤ c₃: a₃,i = c₃ max_j |x̃_ij|³ and L₂,i = c₃ ‖x̃_i‖₂³
/// (∇²ℓ_i(θ′) − ∇²ℓ_i(θ) = (φ″(η′) − φ″(η)) x̃_i x̃_iᵀ, |φ″(η′) − φ″(η)| ≤ c₃ |x̃_iᵀ(θ′ − θ)|).
/// Terms quadratic in θ have a₃,i = L₂,i = 0: their second-order Taylor expansions are exact.
pub trait TermThirdDerivativeConstants: Terms {
    /// a₃,i (see the trait docs), finite and ≥ 0. O(d).
    fn term_third_derivative_bound(&self, i: usize) -> f64;

    /// L₂,i (see the trait docs), finite and ≥ 0. O(d).
    fn term_hessian_lipschitz(&self, i: usize) -> f64;
}
