//! Small dense linear algebra on row-major `d × d` matrices: what mass matrices, Newton steps
//! and Laplace approximations need (d is at most a few hundred; every routine is O(d³) or less
//! and runs outside the per-datum hot loop).

use crate::{Error, Result};

/// `out = A x` for a row-major `d × d` matrix A.
pub fn mat_vec(a: &[f64], x: &[f64], out: &mut [f64]) {
    let d = x.len();
    debug_assert_eq!(a.len(), d * d);
    for (o, row) in out.iter_mut().zip(a.chunks_exact(d)) {
        *o = dot(row, x);
    }
}

/// The dot product xᵀy.
pub fn dot(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(a, b)| a * b).sum()
}

/// The Cholesky factor L (lower triangular, A = L Lᵀ) of a symmetric positive definite matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Cholesky {
    dim: usize,
    /// Row-major `d × d`, zeros above the diagonal.
    lower: Vec<f64>,
}

impl Cholesky {
    /// Factors the row-major `d × d` matrix `a` (only its lower triangle is read). `what` names
    /// the matrix in the error when it is not positive definite.
    pub fn new(a: &[f64], dim: usize, what: &str) -> Result<Self> {
        if a.len() != dim * dim {
            return Err(Error::dimension(format!("{what} (d × d entries)"), dim * dim, a.len()));
        }
        let mut l = vec![0.0; dim * dim];
        for i in 0..dim {
            for j in 0..=i {
                let mut s = a[i * dim + j];
                for k in 0..j {
                    s -= l[i * dim + k] * l[j * dim + k];
                }
                if i == j {
                    if !(s > 0.0 && s.is_finite()) {
                        return Err(Error::NotPositiveDefinite {
                            what: what.to_string(),
                            pivot: i,
                            value: s,
                        });
                    }
                    l[i * dim + i] = s.sqrt();
                } else {
                    l[i * dim + j] = s / l[j * dim + j];
                }
            }
        }
        Ok(Self { dim, lower: l })
    }

    /// Re-factors a new matrix of the same dimension into this factor's storage. On error the
    /// factor is left unchanged.
    pub fn refactor(&mut self, a: &[f64], what: &str) -> Result<()> {
        let fresh = Self::new(a, self.dim, what)?;
        self.lower.copy_from_slice(&fresh.lower);
        Ok(())
    }

    /// The identity factor of dimension d.
    pub fn identity(dim: usize) -> Self {
        let mut lower = vec![0.0; dim * dim];
        for i in 0..dim {
            lower[i * dim + i] = 1.0;
        }
        Self { dim, lower }
    }

    /// Dimension d.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The factor L, row-major with zeros above the diagonal.
    pub fn lower(&self) -> &[f64] {
        &self.lower
    }

    /// Solves L x = b in place.
    pub fn solve_lower_in_place(&self, b: &mut [f64]) {
        let d = self.dim;
        for i in 0..d {
            let row = &self.lower[i * d..i * d + i];
            let s = b[i] - dot(row, &b[..i]);
            b[i] = s / self.lower[i * d + i];
        }
    }

    /// Solves Lᵀ x = b in place.
    pub fn solve_upper_in_place(&self, b: &mut [f64]) {
        let d = self.dim;
        for i in (0..d).rev() {
            let mut s = b[i];
            for k in i + 1..d {
                s -= self.lower[k * d + i] * b[k];
            }
            b[i] = s / self.lower[i * d + i];
        }
    }

    /// Solves A x = b in place (A = L Lᵀ).
    pub fn solve_in_place(&self, b: &mut [f64]) {
        self.solve_lower_in_place(b);
        self.solve_upper_in_place(b);
    }

    /// `out = L x`.
    pub fn mul_lower(&self, x: &[f64], out: &mut [f64]) {
        let d = self.dim;
        for i in 0..d {
            out[i] = dot(&self.lower[i * d..i * d + i + 1], &x[..=i]);
        }
    }

    /// `out = Lᵀ x`.
    pub fn mul_upper(&self, x: &[f64], out: &mut [f64]) {
        let d = self.dim;
        for i in 0..d {
            let mut s = 0.0;
            for k in i..d {
                s += self.lower[k * d + i] * x[k];
            }
            out[i] = s;
        }
    }

    /// A⁻¹, row-major `d × d`.
    pub fn inverse(&self) -> Vec<f64> {
        let d = self.dim;
        let mut inv = vec![0.0; d * d];
        let mut col = vec![0.0; d];
        for j in 0..d {
            col.fill(0.0);
            col[j] = 1.0;
            self.solve_in_place(&mut col);
            for i in 0..d {
                inv[i * d + j] = col[i];
            }
        }
        // Symmetrize away rounding.
        for i in 0..d {
            for j in 0..i {
                let m = 0.5 * (inv[i * d + j] + inv[j * d + i]);
                inv[i * d + j] = m;
                inv[j * d + i] = m;
            }
        }
        inv
    }

    /// log det A = 2 Σ log L_ii.
    pub fn log_det(&self) -> f64 {
        (0..self.dim).map(|i| 2.0 * self.lower[i * self.dim + i].ln()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spd() -> Vec<f64> {
        // B Bᵀ + I for a fixed B.
        let b = [1.0, 2.0, 0.5, -1.0, 0.3, 0.7, 2.0, -0.4, 1.1];
        let mut a = vec![0.0; 9];
        for i in 0..3 {
            for j in 0..3 {
                a[i * 3 + j] = (0..3).map(|k| b[i * 3 + k] * b[j * 3 + k]).sum::<f64>()
                    + if i == j { 1.0 } else { 0.0 };
            }
        }
        a
    }

    #[test]
    fn cholesky_reconstructs_and_solves() {
        let a = spd();
        let c = Cholesky::new(&a, 3, "test matrix").unwrap();
        let x = [0.3, -1.2, 2.0];
        let mut ax = [0.0; 3];
        mat_vec(&a, &x, &mut ax);
        let mut sol = ax;
        c.solve_in_place(&mut sol);
        for (s, t) in sol.iter().zip(&x) {
            assert!((s - t).abs() < 1e-12);
        }
        // L Lᵀ x == A x
        let (mut u, mut v) = ([0.0; 3], [0.0; 3]);
        c.mul_upper(&x, &mut u);
        c.mul_lower(&u, &mut v);
        for (s, t) in v.iter().zip(&ax) {
            assert!((s - t).abs() < 1e-12);
        }
        let inv = c.inverse();
        let mut e = [0.0; 3];
        mat_vec(&inv, &ax, &mut e);
        for (s, t) in e.iter().zip(&x) {
            assert!((s - t).abs() < 1e-12);
        }
        // det of spd() computed by cofactor expansion
        let det = a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6])
            + a[2] * (a[3] * a[7] - a[4] * a[6]);
        assert!((c.log_det() - det.ln()).abs() < 1e-12);
    }

    #[test]
    fn indefinite_matrix_is_a_named_error() {
        let a = [1.0, 2.0, 2.0, 1.0];
        let e = Cholesky::new(&a, 2, "inverse mass matrix").unwrap_err();
        assert!(
            e.to_string().starts_with("inverse mass matrix is not symmetric positive definite")
        );
    }
}
