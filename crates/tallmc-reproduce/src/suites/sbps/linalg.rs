//! Small dense linear algebra for the figures: symmetric eigendecomposition (directions of
//! largest and smallest variance), Gaussian contour ellipses, projections.

/// Eigenvalues (descending) and eigenvectors of a symmetric d × d matrix (row-major), by the
/// cyclic Jacobi method: sweeps of plane rotations until every off-diagonal entry is below
/// 10⁻¹⁵ √(a_pp a_qq) (at most 100 sweeps), which keeps small eigenvalues of a positive
/// semi-definite matrix accurate relative to themselves. `vectors[k]` is the unit eigenvector of `values[k]`.
///
/// Cost O(d³) per sweep; a few sweeps suffice (d = 192: about 0.1 s).
#[derive(Debug, Clone, PartialEq)]
pub struct SymmetricEigen {
    /// Eigenvalues, largest first.
    pub values: Vec<f64>,
    /// Unit eigenvectors, in the order of `values`.
    pub vectors: Vec<Vec<f64>>,
}

impl SymmetricEigen {
    /// Decomposes `a` (d × d, row-major, symmetric; only its symmetric part is used).
    pub fn new(a: &[f64], d: usize) -> Self {
        assert_eq!(a.len(), d * d, "matrix of {} entries is not {d} × {d}", a.len());
        let mut m: Vec<f64> = (0..d * d).map(|k| 0.5 * (a[k] + a[(k % d) * d + k / d])).collect();
        let mut v = vec![0.0; d * d];
        for i in 0..d {
            v[i * d + i] = 1.0;
        }
        for _ in 0..100 {
            let mut rotated = false;
            for p in 0..d {
                for q in p + 1..d {
                    let apq = m[p * d + q];
                    // Rotate unless a_pq is negligible against the diagonal (relative
                    // criterion: small eigenvalues keep their relative accuracy for positive
                    // semi-definite matrices, Demmel & Veselić 1992).
                    let scale = (m[p * d + p] * m[q * d + q]).abs().sqrt();
                    if apq == 0.0 || apq.abs() <= 1e-15 * scale {
                        continue;
                    }
                    rotated = true;
                    // The rotation that zeroes m[p][q] (Golub & Van Loan, Alg. 8.5.2).
                    let tau = (m[q * d + q] - m[p * d + p]) / (2.0 * apq);
                    let t = tau.signum() / (tau.abs() + (1.0 + tau * tau).sqrt());
                    let t = if tau == 0.0 { 1.0 } else { t };
                    let c = 1.0 / (1.0 + t * t).sqrt();
                    let s = t * c;
                    for k in 0..d {
                        let (mkp, mkq) = (m[k * d + p], m[k * d + q]);
                        m[k * d + p] = c * mkp - s * mkq;
                        m[k * d + q] = s * mkp + c * mkq;
                    }
                    for k in 0..d {
                        let (mpk, mqk) = (m[p * d + k], m[q * d + k]);
                        m[p * d + k] = c * mpk - s * mqk;
                        m[q * d + k] = s * mpk + c * mqk;
                    }
                    for k in 0..d {
                        let (vkp, vkq) = (v[k * d + p], v[k * d + q]);
                        v[k * d + p] = c * vkp - s * vkq;
                        v[k * d + q] = s * vkp + c * vkq;
                    }
                }
            }
            if !rotated {
                break;
            }
        }
        let mut order: Vec<usize> = (0..d).collect();
        order.sort_by(|&i, &j| m[j * d + j].total_cmp(&m[i * d + i]));
        let values = order.iter().map(|&i| m[i * d + i]).collect();
        let vectors = order.iter().map(|&i| (0..d).map(|k| v[k * d + i]).collect()).collect();
        Self { values, vectors }
    }
}

/// ⟨x − c, u⟩: the coordinate of `x` along the unit direction `u` through `c`.
pub fn project(x: &[f64], c: &[f64], u: &[f64]) -> f64 {
    x.iter().zip(c).zip(u).map(|((x, c), u)| (x - c) * u).sum()
}

/// The ellipse {c + L z : ‖z‖ = r} of a 2-D Gaussian N(c, S) (L the Cholesky factor of S):
/// the contour of Mahalanobis radius r, as `points` + 1 closed (x, y) points.
pub fn ellipse(c: [f64; 2], s: [[f64; 2]; 2], r: f64, points: usize) -> (Vec<f64>, Vec<f64>) {
    let l11 = s[0][0].sqrt();
    let l21 = s[1][0] / l11;
    let l22 = (s[1][1] - l21 * l21).max(0.0).sqrt();
    (0..=points)
        .map(|k| {
            let a = std::f64::consts::TAU * k as f64 / points as f64;
            let (z1, z2) = (r * a.cos(), r * a.sin());
            (c[0] + l11 * z1, c[1] + l21 * z1 + l22 * z2)
        })
        .unzip()
}

/// The 2 × 2 covariance of the projections on the unit directions `u`, `w` of a d × d
/// covariance `s` (row-major).
pub fn project_covariance(s: &[f64], u: &[f64], w: &[f64]) -> [[f64; 2]; 2] {
    let d = u.len();
    let q = |a: &[f64], b: &[f64]| -> f64 {
        (0..d).map(|i| a[i] * (0..d).map(|j| s[i * d + j] * b[j]).sum::<f64>()).sum()
    };
    let uw = q(u, w);
    [[q(u, u), uw], [uw, q(w, w)]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eigen_of_a_known_matrix_and_a_random_one() {
        let e = SymmetricEigen::new(&[2.0, 1.0, 1.0, 2.0], 2);
        assert!((e.values[0] - 3.0).abs() < 1e-12 && (e.values[1] - 1.0).abs() < 1e-12);
        let u = &e.vectors[0];
        assert!((u[0].abs() - 0.5f64.sqrt()).abs() < 1e-12 && (u[0] - u[1]).abs() < 1e-12);
        // A = B Bᵀ: A v = λ v for every pair, vectors orthonormal.
        let d = 7;
        let b: Vec<f64> = (0..d * d).map(|k| ((k * 37 % 11) as f64 - 5.0) / 3.0).collect();
        let a: Vec<f64> = (0..d * d)
            .map(|k| (0..d).map(|m| b[(k / d) * d + m] * b[(k % d) * d + m]).sum())
            .collect();
        let e = SymmetricEigen::new(&a, d);
        for (lam, v) in e.values.iter().zip(&e.vectors) {
            for i in 0..d {
                let av: f64 = (0..d).map(|j| a[i * d + j] * v[j]).sum();
                assert!((av - lam * v[i]).abs() < 1e-9 * e.values[0], "{av} vs {}", lam * v[i]);
            }
            assert!((v.iter().map(|x| x * x).sum::<f64>() - 1.0).abs() < 1e-12);
        }
        assert!(e.values.windows(2).all(|w| w[0] >= w[1]));
    }

    #[test]
    fn ellipse_has_the_right_mahalanobis_radius() {
        let s = [[1.0, 0.8], [0.8, 1.0]];
        let (x, y) = ellipse([1.0, -1.0], s, 2.0, 12);
        let det = 1.0 - 0.64;
        for (a, b) in x.iter().zip(&y) {
            let (dx, dy) = (a - 1.0, b + 1.0);
            let m = (dx * dx - 1.6 * dx * dy + dy * dy) / det;
            assert!((m - 4.0).abs() < 1e-9, "{m}");
        }
        let p = project_covariance(&[1.0, 0.8, 0.8, 1.0], &[1.0, 0.0], &[0.0, 1.0]);
        assert_eq!(p, [[1.0, 0.8], [0.8, 1.0]]);
    }
}
