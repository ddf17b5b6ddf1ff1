//! Extreme values of a design matrix, computed in one deterministic parallel pass: the constants
//! of the generalized linear models' term and gradient bounds (see
//! `docs/methods/gradient-bounds.md`).

use rayon::prelude::*;

use super::PASS_CHUNK_ROWS;
use super::design::{DesignMatrix, RowView, Rows};

/// Maxima over the rows of a design X̃ (n × d), all computed in one pass by
/// [`DesignMatrix::bound_statistics`]:
///
/// ```text
/// max_row_norm_sq            = max_i ‖x̃_i‖₂²
/// max_row_norm               = max_i ‖x̃_i‖₂        (= √max_row_norm_sq)
/// max_abs_entry              = max_{i,j} |x̃_ij|    (= max_j column_max_abs[j])
/// column_max_abs[j]          = max_i |x̃_ij|
/// column_max_abs_row_norm[j] = max_i |x̃_ij| ‖x̃_i‖₂
/// ```
///
/// Maxima are exact in any order, so the values do not depend on the number of threads. They
/// are the constants of the generalized linear models' bounds: the term bound L = max_i ‖x̃_i‖₂,
/// Zig-Zag with subsampling's B_j = max_i |x̃_ij|, and Zig-Zag with control variates'
/// C_j ∝ max_i |x̃_ij| ‖x̃_i‖₂.
#[derive(Debug, Clone, PartialEq)]
pub struct DesignBounds {
    /// max_i ‖x̃_i‖₂².
    pub max_row_norm_sq: f64,
    /// max_i ‖x̃_i‖₂.
    pub max_row_norm: f64,
    /// max_{i,j} |x̃_ij|.
    pub max_abs_entry: f64,
    /// max_i |x̃_ij| for every column j (d values).
    pub column_max_abs: Vec<f64>,
    /// max_i |x̃_ij| ‖x̃_i‖₂ for every column j (d values).
    pub column_max_abs_row_norm: Vec<f64>,
    /// Whether every entry x̃_ij and every ‖x̃_i‖₂² is finite (when `false`, the maxima above
    /// ignore NaNs and may be infinite).
    pub finite: bool,
}

/// Per-chunk partial maxima.
struct Partial {
    sq: f64,
    col_abs: Vec<f64>,
    col_abs_norm: Vec<f64>,
    finite: bool,
}

impl Partial {
    fn empty(d: usize) -> Self {
        Self { sq: 0.0, col_abs: vec![0.0; d], col_abs_norm: vec![0.0; d], finite: true }
    }

    fn merge(mut self, other: Self) -> Self {
        self.sq = self.sq.max(other.sq);
        for (a, b) in self.col_abs.iter_mut().zip(&other.col_abs) {
            *a = a.max(*b);
        }
        for (a, b) in self.col_abs_norm.iter_mut().zip(&other.col_abs_norm) {
            *a = a.max(*b);
        }
        self.finite &= other.finite;
        self
    }
}

impl DesignMatrix {
    /// The maxima of [`DesignBounds`] in one parallel pass over the data (chunks of rows fixed
    /// by n; maxima are exact in any order, so the result is bit-identical for any thread
    /// count). Cost: O(n d), plus one small vector per chunk of 8192 rows.
    pub fn bound_statistics(&self) -> DesignBounds {
        fn pass<R: Rows>(r: &R) -> DesignBounds {
            let (n, d) = (r.len(), r.dim());
            let p = (0..n.div_ceil(PASS_CHUNK_ROWS))
                .into_par_iter()
                .map(|c| {
                    let lo = c * PASS_CHUNK_ROWS;
                    let hi = (lo + PASS_CHUNK_ROWS).min(n);
                    let mut acc = Partial::empty(d);
                    for i in lo..hi {
                        let sq = r.row_norm_sq(i);
                        let norm = sq.sqrt();
                        acc.finite &= sq.is_finite();
                        acc.sq = acc.sq.max(sq);
                        for j in 0..d {
                            let a = r.get(i, j).abs();
                            acc.finite &= a.is_finite();
                            acc.col_abs[j] = acc.col_abs[j].max(a);
                            acc.col_abs_norm[j] = acc.col_abs_norm[j].max(a * norm);
                        }
                    }
                    acc
                })
                .reduce(|| Partial::empty(d), Partial::merge);
            DesignBounds {
                max_row_norm_sq: p.sq,
                max_row_norm: p.sq.sqrt(),
                max_abs_entry: p.col_abs.iter().copied().fold(0.0, f64::max),
                column_max_abs: p.col_abs,
                column_max_abs_row_norm: p.col_abs_norm,
                finite: p.finite,
            }
        }
        match self.rows() {
            RowView::Plain(r) => pass(&r),
            RowView::Affine(r) => pass(&r),
        }
    }

    /// (max_i ‖x̃_i‖₂, max_{i,j} |x̃_ij|): the first two maxima of
    /// [`DesignMatrix::bound_statistics`] (the same pass; the first is bit-identical to
    /// [`DesignMatrix::max_row_norm`]).
    pub fn max_row_norm_and_abs_entry(&self) -> (f64, f64) {
        let b = self.bound_statistics();
        (b.max_row_norm, b.max_abs_entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Dataset, DesignOptions};

    #[test]
    fn maxima_match_a_direct_computation() {
        let x = vec![1.0, -2.0, 3.0, 0.5, 4.0, -1.0, -2.5, 0.5, 7.0, 0.0, 0.1, -0.2];
        let data = std::sync::Arc::new(Dataset::with_default_names(x, vec![0.0; 4], 3).unwrap());
        for (intercept, standardize) in [(false, false), (true, false), (false, true), (true, true)]
        {
            let d =
                DesignMatrix::new(data.clone(), DesignOptions { intercept, standardize }).unwrap();
            let b = d.bound_statistics();
            let dim = d.dim();
            let rows: Vec<Vec<f64>> =
                (0..4).map(|i| (0..dim).map(|j| d.get(i, j)).collect()).collect();
            let norms: Vec<f64> = (0..4).map(|i| d.row_norm(i)).collect();
            for j in 0..dim {
                let m = rows.iter().map(|r| r[j].abs()).fold(0.0, f64::max);
                assert_eq!(b.column_max_abs[j], m);
                let mn = (0..4).map(|i| rows[i][j].abs() * norms[i]).fold(0.0, f64::max);
                assert_eq!(b.column_max_abs_row_norm[j], mn);
            }
            assert_eq!(b.max_row_norm, d.max_row_norm());
            let max_abs = rows.iter().flatten().map(|v| v.abs()).fold(0.0, f64::max);
            assert_eq!(b.max_abs_entry, max_abs);
            assert!(b.finite);
            assert_eq!(d.max_row_norm_and_abs_entry(), (b.max_row_norm, b.max_abs_entry));
        }
    }
}
