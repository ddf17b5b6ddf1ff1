//! The prior and bound capabilities of [`Glm`], each implemented once for every family that
//! has the bound it needs (derivations in `docs/methods/gradient-bounds.md`):
//!
//! | capability | where-clause | constant |
//! |---|---|---|
//! | `TermBounds` | [`BoundedScore`] (c₁ ≥ \|φ′\|) | C(θ, θ′) = c₁ ‖θ′ − θ‖₂ max_i ‖x̃_i‖₂ |
//! | `TermGradientBounds` | [`BoundedScore`] | B_j = c₁ max_i \|x̃_ij\|, B(v) = c₁ min(‖v‖₂ max_i ‖x̃_i‖₂, ‖v‖₁ max_{i,j} \|x̃_ij\|) |
//! | `TaylorRemainderBound` | [`BoundedThirdDerivative`] (c₃ ≥ \|φ‴\|) | M₃ = c₃ max_{i,j} \|x̃_ij\|³ |
//! | `TermGradientLipschitz` | [`BoundedCurvature`] (c₂ ≥ \|φ″\|) | C_j = c₂ max_i \|x̃_ij\| ‖x̃_i‖₂, C = c₂ max_i ‖x̃_i‖₂² |
//! | `TermCurvatureBound` | [`BoundedCurvature`] | K = c₂ X̃ᵀX̃, K^abs = c₂ \|X̃\|ᵀ\|X̃\| |
//! | `TermLipschitz` (per datum) | [`BoundedScore`] | c_i = c₁ ‖x̃_i‖₂ |
//! | `TermCurvatureConstants` (per datum) | [`BoundedCurvature`] | a₂,i = c₂ max_j x̃_ij², L_i = c₂ ‖x̃_i‖₂² |
//! | `TermThirdDerivativeConstants` (per datum) | [`BoundedThirdDerivative`] | a₃,i = c₃ max_j \|x̃_ij\|³, L₂,i = c₃ ‖x̃_i‖₂³ |
//! | `BoundedPredictorThirdDerivative` | [`BoundedThirdDerivative`] | c₃ itself (Zig-Zag with Taylor control variates) |
//! | `LogPrior`, `LogPriorHessian`, `LogPriorCurvature` | every family | N(0, s² I): κ = 1/s² |
//!
//! The constants are exact bounds in real arithmetic; the floating-point gradients they bound
//! may exceed them by a few ulps when a bound is attained (e.g. a saturated logistic score
//! |y − σ(η)| = 1 along v ∥ x̃_i).

use rayon::prelude::*;
use tallmc_core::{
    BoundedPredictorThirdDerivative, CurvatureBound, EvalCounts, LogPrior, LogPriorCurvature,
    LogPriorHessian, ParameterNames, TaylorRemainderBound, TermBounds, TermCurvatureBound,
    TermCurvatureConstants, TermGradientBounds, TermGradientLipschitz, TermLipschitz,
    TermThirdDerivativeConstants, Terms,
};

use super::Glm;
use super::family::{BoundedCurvature, BoundedScore, BoundedThirdDerivative, GlmFamily};
use crate::data::{PASS_CHUNK_ROWS, Rows, with_rows};

impl<F: BoundedScore> TermBounds for Glm<F> {
    /// C(θ, θ′) = ‖θ′ − θ‖₂ · max_i ‖x̃_i‖₂ · c₁: φ is c₁-Lipschitz, and
    /// |x̃_iᵀ(θ′ − θ)| ≤ ‖x̃_i‖₂ ‖θ′ − θ‖₂ (Cauchy–Schwarz). O(d).
    fn term_difference_bound(&self, theta: &[f64], theta_prime: &[f64]) -> f64 {
        let dist: f64 = theta.iter().zip(theta_prime).map(|(a, b)| (b - a) * (b - a)).sum();
        dist.sqrt() * self.bounds.max_row_norm * self.family.score_bound()
    }
}

impl<F: BoundedThirdDerivative> TaylorRemainderBound for Glm<F> {
    /// M₃ = max_{i,j} |x̃_ij|³ · c₃: ∂³ℓ_i/∂θ_j∂θ_k∂θ_l = φ‴(η_i) x̃_ij x̃_ik x̃_il.
    fn third_derivative_bound(&self) -> f64 {
        self.bounds.max_abs_entry.powi(3) * self.family.third_derivative_bound()
    }
}

/// max_j |x̃_ij|: the largest entry of row i, in absolute value.
fn row_max_abs<F: GlmFamily>(model: &Glm<F>, i: usize) -> f64 {
    (0..model.design.dim()).map(|j| model.design.get(i, j).abs()).fold(0.0, f64::max)
}

impl<F: BoundedScore> TermLipschitz for Glm<F> {
    /// c_i = c₁ ‖x̃_i‖₂: |φ(η′) − φ(η)| ≤ c₁|η′ − η| and |x̃_iᵀ(θ′ − θ)| ≤ ‖x̃_i‖₂‖θ′ − θ‖₂. O(d).
    fn term_lipschitz(&self, i: usize) -> f64 {
        self.family.score_bound() * self.design.row_norm(i)
    }
}

impl<F: BoundedCurvature> TermCurvatureConstants for Glm<F> {
    /// a₂,i = c₂ max_j x̃_ij²: ∂²ℓ_i/∂θ_j∂θ_k = φ″(η_i) x̃_ij x̃_ik. O(d).
    fn term_second_derivative_bound(&self, i: usize) -> f64 {
        let m = row_max_abs(self, i);
        self.family.curvature_bound() * m * m
    }

    /// L_i = c₂ ‖x̃_i‖₂²: ∇²ℓ_i = φ″(η_i) x̃_i x̃_iᵀ. O(d).
    fn term_gradient_lipschitz(&self, i: usize) -> f64 {
        let r = self.design.row_norm(i);
        self.family.curvature_bound() * r * r
    }
}

impl<F: BoundedThirdDerivative> TermThirdDerivativeConstants for Glm<F> {
    /// a₃,i = c₃ max_j |x̃_ij|³: ∂³ℓ_i/∂θ_j∂θ_k∂θ_l = φ‴(η_i) x̃_ij x̃_ik x̃_il. O(d).
    fn term_third_derivative_bound(&self, i: usize) -> f64 {
        self.family.third_derivative_bound() * row_max_abs(self, i).powi(3)
    }

    /// L₂,i = c₃ ‖x̃_i‖₂³: ∇²ℓ_i(θ′) − ∇²ℓ_i(θ) = (φ″(η′) − φ″(η)) x̃_i x̃_iᵀ, whose norm is
    /// |φ″(η′) − φ″(η)| ‖x̃_i‖₂² ≤ c₃ |x̃_iᵀ(θ′ − θ)| ‖x̃_i‖₂² ≤ c₃ ‖x̃_i‖₂³ ‖θ′ − θ‖₂. O(d).
    fn term_hessian_lipschitz(&self, i: usize) -> f64 {
        self.family.third_derivative_bound() * self.design.row_norm(i).powi(3)
    }
}

impl<F: BoundedThirdDerivative> BoundedPredictorThirdDerivative for Glm<F> {
    /// c₃ of the family (logistic 1/(6√3), Gaussian 0).
    fn predictor_third_derivative_bound(&self) -> f64 {
        self.family.third_derivative_bound()
    }
}

impl<F: BoundedScore> TermGradientBounds for Glm<F> {
    /// B_j = c₁ max_i |x̃_ij|: ∂_jℓ_i = φ′(η_i) x̃_ij with |φ′| ≤ c₁. Attained (as a supremum)
    /// when the score saturates at the row that maximizes |x̃_ij|.
    fn coordinate_gradient_bound(&self, j: usize) -> f64 {
        self.family.score_bound() * self.bounds.column_max_abs[j]
    }

    /// B(v) = c₁ min(‖v‖₂ max_i ‖x̃_i‖₂, Σ_j |v_j| max_i |x̃_ij|): ⟨∇ℓ_i, v⟩ = φ′(η_i) x̃_iᵀv
    /// and |x̃_iᵀv| is at most ‖x̃_i‖₂‖v‖₂ (Cauchy–Schwarz) and at most Σ_j |x̃_ij||v_j| ≤
    /// Σ_j |v_j| max_i |x̃_ij| (the triangle inequality, column by column; never looser than
    /// Hölder's ‖v‖₁ max_{i,j} |x̃_ij|). O(d).
    fn directional_gradient_bound(&self, v: &[f64]) -> f64 {
        let l2 = v.iter().map(|a| a * a).sum::<f64>().sqrt();
        let b = &self.bounds;
        let columns: f64 = v.iter().zip(&b.column_max_abs).map(|(a, m)| a.abs() * m).sum();
        self.family.score_bound() * (l2 * b.max_row_norm).min(columns)
    }

    /// B_ij = c₁|x̃_ij|. O(1).
    fn term_coordinate_gradient_bound(&self, i: usize, j: usize) -> f64 {
        self.family.score_bound() * self.design.get(i, j).abs()
    }

    /// B_i(w) = c₁|⟨x̃_i, w⟩|: ⟨∇ℓ_i, w⟩ = φ′(η_i) x̃_iᵀw with |φ′| ≤ c₁ (tight: attained as a
    /// supremum where the score saturates, so never looser than the default Σ_j |w_j| B_ij).
    /// O(d).
    fn term_directional_gradient_bound(&self, i: usize, w: &[f64]) -> f64 {
        self.family.score_bound() * self.design.dot(i, w).abs()
    }
}

impl<F: BoundedCurvature> TermGradientLipschitz for Glm<F> {
    /// C_j = c₂ max_i |x̃_ij| ‖x̃_i‖₂: |∂_jℓ_i(θ) − ∂_jℓ_i(θ′)| = |φ′(η_i) − φ′(η_i′)| |x̃_ij| ≤
    /// c₂ |x̃_iᵀ(θ − θ′)| |x̃_ij| ≤ c₂ ‖x̃_i‖₂ |x̃_ij| ‖θ − θ′‖₂.
    fn coordinate_gradient_lipschitz(&self, j: usize) -> f64 {
        self.family.curvature_bound() * self.bounds.column_max_abs_row_norm[j]
    }

    /// C = c₂ max_i ‖x̃_i‖₂²: ‖∇ℓ_i(θ) − ∇ℓ_i(θ′)‖₂ = |φ′(η_i) − φ′(η_i′)| ‖x̃_i‖₂.
    fn gradient_lipschitz(&self) -> f64 {
        self.family.curvature_bound() * self.bounds.max_row_norm_sq
    }
}

/// Chunks of rows per parallel group of the Gram pass: bounds the memory of the per-chunk
/// partial matrices (2 · GRAM_GROUP · d² values) while keeping the sum order fixed.
const GRAM_GROUP: usize = 16;

/// (X̃ᵀX̃, |X̃|ᵀ|X̃|), upper triangles filled (row-major d × d): partial sums per chunk of
/// [`PASS_CHUNK_ROWS`] rows, added in chunk order, so the result is the same for any number of
/// threads.
fn gram<R: Rows>(r: &R) -> (Vec<f64>, Vec<f64>) {
    let (n, d) = (r.len(), r.dim());
    let chunks = n.div_ceil(PASS_CHUNK_ROWS);
    let mut g = vec![0.0; d * d];
    let mut ga = vec![0.0; d * d];
    for first in (0..chunks).step_by(GRAM_GROUP) {
        let partials: Vec<(Vec<f64>, Vec<f64>)> = (first..(first + GRAM_GROUP).min(chunks))
            .into_par_iter()
            .map(|c| {
                let lo = c * PASS_CHUNK_ROWS;
                let hi = (lo + PASS_CHUNK_ROWS).min(n);
                let (mut pg, mut pa, mut row) = (vec![0.0; d * d], vec![0.0; d * d], vec![0.0; d]);
                for i in lo..hi {
                    for (j, x) in row.iter_mut().enumerate() {
                        *x = r.get(i, j);
                    }
                    for j in 0..d {
                        let a = row[j];
                        for k in j..d {
                            let p = a * row[k];
                            pg[j * d + k] += p;
                            pa[j * d + k] += p.abs();
                        }
                    }
                }
                (pg, pa)
            })
            .collect();
        for (pg, pa) in partials {
            for (t, (a, b)) in pg.iter().zip(&pa).enumerate() {
                g[t] += a;
                ga[t] += b;
            }
        }
    }
    (g, ga)
}

impl<F: BoundedCurvature> TermCurvatureBound for Glm<F> {
    /// K = c₂ X̃ᵀX̃ and K^abs = c₂ |X̃|ᵀ|X̃|: ∇²ℓ(θ) = Σ_i φ″(η_i) x̃_i x̃_iᵀ with |φ″| ≤ c₂, so
    /// |vᵀ∇²ℓ v| ≤ c₂ Σ_i (x̃_iᵀv)² = vᵀKv and |∂²ℓ/∂θ_j∂θ_k| ≤ c₂ Σ_i |x̃_ij x̃_ik|. Exact when
    /// φ″ ≡ −c₂. One deterministic parallel pass, O(N d²), counted as N Hessians.
    fn curvature_bound(&self) -> CurvatureBound {
        let d = self.dim();
        let c = self.family.curvature_bound();
        let (g, ga) = with_rows!(self.design, r => gram(&r));
        let mut quadratic = vec![0.0; d * d];
        let mut absolute = vec![0.0; d * d];
        for j in 0..d {
            for k in j..d {
                let (q, a) = (c * g[j * d + k], c * ga[j * d + k]);
                quadratic[j * d + k] = q;
                quadratic[k * d + j] = q;
                absolute[j * d + k] = a;
                absolute[k * d + j] = a;
            }
        }
        CurvatureBound {
            dim: d,
            quadratic,
            absolute,
            exact: self.family.constant_curvature() == Some(-c),
            evals: EvalCounts::hessians(self.num_terms()),
        }
    }
}

impl<F: GlmFamily> LogPrior for Glm<F> {
    fn log_prior(&self, theta: &[f64]) -> f64 {
        self.prior.log_density(theta)
    }

    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.prior.log_density_grad(theta, grad)
    }
}

impl<F: GlmFamily> LogPriorHessian for Glm<F> {
    fn add_log_prior_hessian(&self, _theta: &[f64], hess: &mut [f64]) {
        self.prior.add_hessian(self.design.dim(), hess);
    }
}

/// ∇² log p = −I/s²: κ = 1/s², constant.
impl<F: GlmFamily> LogPriorCurvature for Glm<F> {
    fn prior_curvature_bound(&self) -> f64 {
        self.prior.precision()
    }

    fn prior_hessian_is_constant(&self) -> bool {
        true
    }
}

/// The design's column names ([`DesignMatrix::column_names`](crate::DesignMatrix::column_names)):
/// `intercept` first when the design adds one, then the covariate names as the data name them.
impl<F: GlmFamily> ParameterNames for Glm<F> {
    fn parameter_names(&self) -> Vec<String> {
        self.design.column_names()
    }
}
