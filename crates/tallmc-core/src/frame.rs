//! Whitened coordinates for the piecewise-deterministic samplers: an affine frame
//!
//! ```text
//! θ = θ* + L z,        z = L⁻¹ (θ − θ*),
//! ```
//!
//! with θ* a centre (the posterior mode) and L the lower-triangular Cholesky factor of a
//! covariance Σ = L Lᵀ (the Laplace approximation's). When Σ is the posterior's covariance, the
//! posterior of z is close to N(0, I): every coordinate has the same scale, so a Zig-Zag or
//! bouncy particle moving at unit speed in z crosses the posterior in the same time along every
//! direction, and per-datum bounds written in z are not dominated by the widest direction.
//!
//! A sampler that runs in z keeps its output in θ: the trajectory θ(t) = θ* + L z(t) is again
//! piecewise linear, with velocity L v where v is the velocity in z. The log density of z
//! differs from that of θ by the constant log |det L|, so nothing else changes.
//!
//! Cost: O(d²) to map a point or a velocity (L is triangular: d(d + 1)/2 products), O(d³) once
//! to factor Σ.

use crate::linalg::Cholesky;
use crate::{Error, Result};

/// The affine frame θ = θ* + L z (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct WhiteningFrame {
    center: Vec<f64>,
    factor: Cholesky,
}

impl WhiteningFrame {
    /// The frame centred at `center` (θ*) whose L is the Cholesky factor of `covariance`
    /// (row-major d × d, d = `center.len()`, symmetric positive definite; only its lower
    /// triangle is read).
    ///
    /// # Errors
    /// An empty or non-finite centre, a covariance of the wrong size, with a non-finite entry,
    /// or not positive definite.
    pub fn new(center: Vec<f64>, covariance: &[f64]) -> Result<Self> {
        let d = checked_center(&center)?;
        if covariance.len() != d * d {
            return Err(Error::dimension(
                "whitening covariance (d × d entries)",
                d * d,
                covariance.len(),
            ));
        }
        crate::error::check_finite("whitening covariance", covariance)?;
        let factor = Cholesky::new(covariance, d, "whitening covariance")?;
        Ok(Self { center, factor })
    }

    /// The frame z = θ − θ* (L = I): the centre moves, the scales stay.
    ///
    /// # Errors
    /// An empty or non-finite centre.
    pub fn centered(center: Vec<f64>) -> Result<Self> {
        let d = checked_center(&center)?;
        Ok(Self { center, factor: Cholesky::identity(d) })
    }

    /// Dimension d.
    pub fn dim(&self) -> usize {
        self.center.len()
    }

    /// The centre θ* (z = 0).
    pub fn center(&self) -> &[f64] {
        &self.center
    }

    /// L, row-major d × d with zeros above the diagonal.
    pub fn lower(&self) -> &[f64] {
        self.factor.lower()
    }

    /// `theta` = θ* + L `z`. O(d²).
    pub fn to_theta(&self, z: &[f64], theta: &mut [f64]) {
        self.factor.mul_lower(z, theta);
        for (t, c) in theta.iter_mut().zip(&self.center) {
            *t += c;
        }
    }

    /// `z` = L⁻¹(`theta` − θ*). O(d²).
    pub fn to_coordinates(&self, theta: &[f64], z: &mut [f64]) {
        for ((zi, t), c) in z.iter_mut().zip(theta).zip(&self.center) {
            *zi = t - c;
        }
        self.factor.solve_lower_in_place(z);
    }

    /// `out` = L `v`: a velocity (or any direction) in z as a direction in θ. O(d²).
    pub fn direction_to_theta(&self, v: &[f64], out: &mut [f64]) {
        self.factor.mul_lower(v, out);
    }

    /// `out` += `scale`·L e_k (column k of L): keeps `out` = L v when v_k changes by `scale`
    /// (a Zig-Zag flip) in O(d) instead of [`direction_to_theta`](Self::direction_to_theta)'s
    /// O(d²), up to rounding (recompute in full now and then).
    ///
    /// # Panics
    /// If `k` ≥ d or `out` is not of length d.
    pub fn add_column_to_direction(&self, k: usize, scale: f64, out: &mut [f64]) {
        let d = self.dim();
        assert!(
            k < d && out.len() == d,
            "column {k} of a {d} × {d} factor into {} entries",
            out.len()
        );
        let l = self.lower();
        for (j, o) in out.iter_mut().enumerate().skip(k) {
            *o += scale * l[j * d + k];
        }
    }

    /// `out` = Lᵀ `g`: a gradient in θ as a gradient in z (∇_z f = Lᵀ ∇_θ f). O(d²).
    pub fn gradient_to_coordinates(&self, g: &[f64], out: &mut [f64]) {
        self.factor.mul_upper(g, out);
    }

    /// `out` = Lᵀ A L for a row-major d × d matrix A (a Hessian in θ as one in z). O(d³).
    pub fn congruence(&self, a: &[f64], out: &mut [f64]) {
        let d = self.dim();
        let l = self.lower();
        // t = A L (row-major), then out = Lᵀ t.
        let mut t = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                t[i * d + j] = (j..d).map(|k| a[i * d + k] * l[k * d + j]).sum();
            }
        }
        for i in 0..d {
            for j in 0..d {
                out[i * d + j] = (i..d).map(|k| l[k * d + i] * t[k * d + j]).sum();
            }
        }
    }
}

/// The centre's dimension d, checked: at least one coordinate, every one finite.
fn checked_center(center: &[f64]) -> Result<usize> {
    if center.is_empty() {
        return Err(Error::invalid("whitening frame centre", "empty", "at least one coordinate"));
    }
    crate::error::check_finite("whitening frame centre θ*", center)?;
    Ok(center.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_are_inverse_and_congruence_whitens_the_precision() {
        // Σ = [[4, 1], [1, 2]]; its precision P = Σ⁻¹ becomes I under Lᵀ P L.
        let sigma = [4.0, 1.0, 1.0, 2.0];
        let f = WhiteningFrame::new(vec![1.0, -1.0], &sigma).unwrap();
        let (mut th, mut z) = ([0.0; 2], [0.0; 2]);
        f.to_theta(&[0.5, -2.0], &mut th);
        f.to_coordinates(&th, &mut z);
        assert!((z[0] - 0.5).abs() < 1e-14 && (z[1] + 2.0).abs() < 1e-14);
        let det = 4.0 * 2.0 - 1.0;
        let p = [2.0 / det, -1.0 / det, -1.0 / det, 4.0 / det];
        let mut w = [0.0; 4];
        f.congruence(&p, &mut w);
        for (k, want) in [1.0, 0.0, 0.0, 1.0].iter().enumerate() {
            assert!((w[k] - want).abs() < 1e-14, "{w:?}");
        }
        // ∇_z f = Lᵀ ∇_θ f for f(θ) = aᵀθ: f(θ* + Lz) = aᵀθ* + (Lᵀa)ᵀz.
        let mut g = [0.0; 2];
        f.gradient_to_coordinates(&[1.0, 3.0], &mut g);
        let l = f.lower();
        assert_eq!(g, [l[0] * 1.0 + l[2] * 3.0, l[3] * 3.0]);
    }

    #[test]
    fn a_flip_updates_the_direction_by_one_column() {
        let sigma = [4.0, 1.0, 0.5, 1.0, 2.0, 0.3, 0.5, 0.3, 1.5];
        let f = WhiteningFrame::new(vec![0.0; 3], &sigma).unwrap();
        let mut v = [1.0, -1.0, 1.0];
        let mut lv = [0.0; 3];
        f.direction_to_theta(&v, &mut lv);
        for k in [1, 0, 2, 1] {
            f.add_column_to_direction(k, -2.0 * v[k], &mut lv);
            v[k] = -v[k];
            let mut full = [0.0; 3];
            f.direction_to_theta(&v, &mut full);
            for (a, b) in lv.iter().zip(&full) {
                assert!((a - b).abs() <= 1e-14, "{lv:?} vs {full:?} after flipping {k}");
            }
        }
    }

    #[test]
    fn bad_frames_are_refused_with_their_values() {
        assert!(WhiteningFrame::new(vec![], &[]).is_err());
        assert!(WhiteningFrame::new(vec![0.0, f64::NAN], &[1.0, 0.0, 0.0, 1.0]).is_err());
        let e = WhiteningFrame::new(vec![0.0, 0.0], &[1.0, 0.0, 0.0]).unwrap_err();
        assert!(e.to_string().contains('4'), "{e}");
        assert!(WhiteningFrame::new(vec![0.0, 0.0], &[1.0, 2.0, 2.0, 1.0]).is_err());
        let c = WhiteningFrame::centered(vec![2.0]).unwrap();
        let mut z = [0.0];
        c.to_coordinates(&[5.0], &mut z);
        assert_eq!(z, [3.0]);
    }
}
