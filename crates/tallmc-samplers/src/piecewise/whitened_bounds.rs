//! The per-datum gradient bounds and the prior curvature of a model in whitened coordinates
//! ([`InFrame`]): what the subsampling piecewise-deterministic samplers (lipSBPS and ZZ-SS with
//! [`WeightedGradients`](super::WeightedGradients), SBPS needs none) need to thin exactly in z.
//!
//! With θ = θ* + Lz (L lower triangular, the Cholesky factor of the Laplace covariance), the
//! chain rule gives ∇_zℓ_i(z) = Lᵀ∇_θℓ_i(θ), so for any direction w in z
//!
//! ```text
//! ⟨∇_zℓ_i, w⟩ = ⟨Lᵀ∇_θℓ_i, w⟩ = ⟨∇_θℓ_i, Lw⟩,
//! ```
//!
//! and every bound in z is a bound of the model in θ along a mapped direction, valid for every z
//! because θ ranges over all of R^d as z does:
//!
//! | bound in z | from the model in θ |
//! |---|---|
//! | B^z(v) ≥ sup max_i \|⟨∇_zℓ_i, v⟩\| | B(Lv) |
//! | B^z_j ≥ sup max_i \|∂_{z_j}ℓ_i\| | B(L e_j), e_j the j-th unit vector (L e_j: column j of L) |
//! | B^z_ij ≥ sup \|∂_{z_j}ℓ_i\| | min(B_i(L e_j), B(L e_j)) ([`TermGradientBounds::term_directional_gradient_bound`]) |
//! | B^z_i(w) ≥ sup \|⟨∇_zℓ_i, w⟩\| | min(B_i(Lw), B(Lw)) |
//! | c^z_i ≥ sup ‖∇_zℓ_i‖₂ | (Σ_j (B^z_ij)²)^{1/2}, since each \|∂_{z_j}ℓ_i\| ≤ B^z_ij |
//! | κ_z ≥ sup ‖∇²_z log p‖_∞ | κ ‖L‖₁ ‖L‖_∞ |
//!
//! For a generalized linear model (∇_θℓ_i = φ′(η_i)x̃_i, |φ′| ≤ c₁) B_i(w) = c₁|x̃_iᵀw| is tight,
//! so B^z_ij = c₁|(Lᵀx̃_i)_j| and c^z_i = c₁‖Lᵀx̃_i‖₂ are the exact suprema in z: whitening
//! loses nothing to the bounds. Models with only the default B_i(w) = Σ_k |w_k| B_ik get valid
//! but looser bounds.
//!
//! **Prior.** ∇²_z log p = Lᵀ∇²_θ log p L, and the ∞-norm (max absolute row sum, what κ bounds,
//! [`LogPriorCurvature`]) is sub-multiplicative with ‖Lᵀ‖_∞ = ‖L‖₁ (max absolute column sum), so
//! ‖Lᵀ H L‖_∞ ≤ ‖L‖₁ κ ‖L‖_∞. Since ‖L‖₂² ≤ ‖L‖₁‖L‖_∞, it also bounds the spectral norm
//! κ‖L‖₂² that a BPS-type rate along a line needs.
//!
//! **Cost.** B^z(v) and B^z_i(w): one map Lv (O(d²/2)) and the model's bound. B^z_j and B^z_ij:
//! the model's bound at a column of L (O(d) to copy it). c^z_i: d per-datum bounds, O(d²) for a
//! GLM. κ_z: O(d²). No per-datum evaluations (the bounds read constants and rows, not terms).

use tallmc_core::{LogPriorCurvature, TermGradientBounds, TermLipschitz, Terms, WhiteningFrame};

use super::whitened::{InFrame, with_scratch};

/// Calls `f` with column `j` of L (the image L e_j of the j-th unit vector of z).
fn with_column<T>(frame: &WhiteningFrame, j: usize, f: impl FnOnce(&[f64]) -> T) -> T {
    let (d, l) = (frame.dim(), frame.lower());
    with_scratch(d, |col| {
        for (k, c) in col.iter_mut().enumerate() {
            *c = if k >= j { l[k * d + j] } else { 0.0 };
        }
        f(col)
    })
}

/// Calls `f` with Lw.
fn with_mapped<T>(frame: &WhiteningFrame, w: &[f64], f: impl FnOnce(&[f64]) -> T) -> T {
    with_scratch(frame.dim(), |lw| {
        frame.direction_to_theta(w, lw);
        f(lw)
    })
}

/// ‖L‖₁ ‖L‖_∞ (max absolute column sum × max absolute row sum), an upper bound of ‖L‖₂² and of
/// the factor by which the congruence A ↦ LᵀAL can raise an ∞-norm. O(d²).
pub(super) fn norm_product(frame: &WhiteningFrame) -> f64 {
    let (d, l) = (frame.dim(), frame.lower());
    let row = (0..d).map(|i| l[i * d..=i * d + i].iter().map(|a| a.abs()).sum::<f64>());
    let column = (0..d).map(|j| (j..d).map(|k| l[k * d + j].abs()).sum::<f64>());
    row.fold(0.0, f64::max) * column.fold(0.0, f64::max)
}

impl<M: TermGradientBounds + ?Sized> TermGradientBounds for InFrame<'_, M> {
    /// B^z_j = B(L e_j): ∂_{z_j}ℓ_i = ⟨∇_θℓ_i, L e_j⟩ (module docs). O(d) plus the model's
    /// directional bound.
    fn coordinate_gradient_bound(&self, j: usize) -> f64 {
        with_column(self.frame, j, |col| self.model.directional_gradient_bound(col))
    }

    /// B^z(v) = B(Lv): ⟨∇_zℓ_i, v⟩ = ⟨∇_θℓ_i, Lv⟩. O(d²/2) plus the model's bound.
    fn directional_gradient_bound(&self, v: &[f64]) -> f64 {
        with_mapped(self.frame, v, |lv| self.model.directional_gradient_bound(lv))
    }

    /// B^z_ij = min(B_i(L e_j), B(L e_j)) (GLM: c₁|(Lᵀx̃_i)_j|, exact): both are bounds on
    /// |∂_{z_j}ℓ_i|, and the second keeps B^z_ij ≤ B^z_j as the trait asks even for a model
    /// whose per-datum bound is the looser default. O(d) plus the model's two bounds.
    fn term_coordinate_gradient_bound(&self, i: usize, j: usize) -> f64 {
        with_column(self.frame, j, |col| {
            let uniform = self.model.directional_gradient_bound(col);
            self.model.term_directional_gradient_bound(i, col).min(uniform)
        })
    }

    /// B^z_i(w) = min(B_i(Lw), B(Lw)) (both bound |⟨∇_zℓ_i, w⟩|). O(d²/2) plus the model's
    /// bounds.
    fn term_directional_gradient_bound(&self, i: usize, w: &[f64]) -> f64 {
        with_mapped(self.frame, w, |lw| {
            let uniform = self.model.directional_gradient_bound(lw);
            self.model.term_directional_gradient_bound(i, lw).min(uniform)
        })
    }
}

impl<M: TermGradientBounds + ?Sized> TermLipschitz for InFrame<'_, M> {
    /// c^z_i = (Σ_j (B^z_ij)²)^{1/2} ≥ ‖∇_zℓ_i‖₂ for every z, because each coordinate of ∇_zℓ_i
    /// is bounded by its B^z_ij (GLM: c₁‖Lᵀx̃_i‖₂, the exact supremum). O(d²).
    fn term_lipschitz(&self, i: usize) -> f64 {
        (0..self.dim())
            .map(|j| self.term_coordinate_gradient_bound(i, j).powi(2))
            .sum::<f64>()
            .sqrt()
    }
}

impl<M: LogPriorCurvature + ?Sized> LogPriorCurvature for InFrame<'_, M> {
    /// κ_z = κ ‖L‖₁ ‖L‖_∞ ≥ sup_z ‖Lᵀ∇²_θ log p L‖_∞ (module docs). O(d²).
    fn prior_curvature_bound(&self) -> f64 {
        self.model.prior_curvature_bound() * norm_product(self.frame)
    }

    /// The model's: LᵀHL is constant exactly when H is.
    fn prior_hessian_is_constant(&self) -> bool {
        self.model.prior_hessian_is_constant()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ‖L‖₁‖L‖_∞ bounds ‖LᵀHL‖_∞ for a dense symmetric H (here ‖H‖_∞ = 1 in every sign pattern
    /// tried) and the largest eigenvalue of LᵀL (power iteration).
    #[test]
    fn norm_product_bounds_the_congruence() {
        let cov = [4.0, 1.8, -0.5, 1.8, 1.0, 0.2, -0.5, 0.2, 2.5];
        let f = WhiteningFrame::new(vec![0.0; 3], &cov).unwrap();
        let bound = norm_product(&f);
        for signs in 0..8u32 {
            let s = |k: u32| if signs >> k & 1 == 1 { -1.0 } else { 1.0 };
            let h = [
                0.4,
                0.3 * s(0),
                0.3 * s(1),
                0.3 * s(0),
                0.4,
                0.3 * s(2),
                0.3 * s(1),
                0.3 * s(2),
                0.4,
            ];
            let mut c = [0.0; 9];
            f.congruence(&h, &mut c);
            let inf = (0..3).map(|i| (0..3).map(|k| c[i * 3 + k].abs()).sum::<f64>());
            assert!(inf.fold(0.0, f64::max) <= bound + 1e-12);
        }
        let mut llt = [0.0; 9];
        f.congruence(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], &mut llt);
        let mut v = [1.0, 1.0, 1.0];
        let mut lambda = 0.0;
        for _ in 0..200 {
            let w: Vec<f64> = (0..3).map(|i| (0..3).map(|k| llt[i * 3 + k] * v[k]).sum()).collect();
            lambda = w.iter().map(|a| a * a).sum::<f64>().sqrt();
            v.iter_mut().zip(&w).for_each(|(a, b)| *a = b / lambda);
        }
        assert!(lambda <= bound, "{lambda} > {bound}");
    }
}
