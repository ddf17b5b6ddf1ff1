//! Σ_i w_i x̃_i x̃_iᵀ, the Hessian sum of a GLM (w_i = φ″(η_i) or the family's constant
//! curvature), blocked over rows so the d × d accumulator is read and written once per
//! [`BLOCK`] rows instead of once per row.
//!
//! **Same bits as the row-by-row loop.** Entry (j, k) still accumulates
//! `h ← h + (w_i·x̃_ij)·x̃_ik` row after row in index order, with the same products and the same
//! rounding (Rust never fuses a multiply and an add): blocking only keeps `h` in a register
//! across the rows of a block, and the k-loop runs over the lanes of a SIMD register. The full
//! matrix is accumulated, not one triangle mirrored, because (w·a)·b and (w·b)·a can differ in
//! the last bit and the reproduction snapshots pin today's bits.
//!
//! Up to [`MAX_DIM`] columns the rows of a block are copied into stack arrays; wider designs
//! use the row-by-row loop.
//!
//! **Wider registers when the CPU has them.** [`add`] runs the same loop compiled for AVX2
//! (4 lanes instead of SSE2's 2) when the CPU reports AVX2 at run time. Only AVX2 is enabled,
//! not FMA, so every lane still rounds the product and then the sum: the bits are those of the
//! SSE2 build (the property test below runs whichever path the machine takes, against the row
//! loop).

use crate::data::Rows;

/// Rows per block: the accumulator is loaded and stored once per `BLOCK` rows.
pub(super) const BLOCK: usize = 4;

/// Widest design the blocked loop handles (its stack arrays hold `BLOCK` rows of this width).
pub(super) const MAX_DIM: usize = 64;

/// hess += Σ_{i ∈ indices} w(i)·x̃_i x̃_iᵀ (d × d, row-major), row by row: the reference order.
#[inline(always)]
pub(super) fn add_rowwise<R: Rows>(
    rows: &R, indices: &[u32], weight: impl Fn(usize) -> f64, hess: &mut [f64],
) {
    let d = rows.dim();
    for &i in indices {
        let i = i as usize;
        let w = weight(i);
        for j in 0..d {
            let a = w * rows.get(i, j);
            rows.add_row(i, a, &mut hess[j * d..(j + 1) * d]);
        }
    }
}

/// hess += Σ_{i ∈ indices} w(i)·x̃_i x̃_iᵀ: [`add_blocked`] compiled for AVX2 if the CPU has
/// it, else for the build's baseline. Bit-identical to [`add_rowwise`] either way.
#[inline(always)]
pub(super) fn add<R: Rows>(
    rows: &R, indices: &[u32], weight: impl Fn(usize) -> f64, hess: &mut [f64],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `add_blocked_avx2` only needs AVX2, which the CPU has just reported.
        #[allow(unsafe_code)]
        unsafe {
            return add_blocked_avx2(rows, indices, weight, hess);
        }
    }
    add_blocked(rows, indices, weight, hess)
}

/// [`add_blocked`] with AVX2 enabled (the loop inlined and vectorized 4 lanes wide).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn add_blocked_avx2<R: Rows>(
    rows: &R, indices: &[u32], weight: impl Fn(usize) -> f64, hess: &mut [f64],
) {
    add_blocked(rows, indices, weight, hess);
}

/// hess += Σ_{i ∈ indices} w(i)·x̃_i x̃_iᵀ, bit-identical to [`add_rowwise`], [`BLOCK`] rows at
/// a time (the last `len % BLOCK` rows, and designs wider than [`MAX_DIM`], row by row).
#[inline(always)]
pub(super) fn add_blocked<R: Rows>(
    rows: &R, indices: &[u32], weight: impl Fn(usize) -> f64, hess: &mut [f64],
) {
    let d = rows.dim();
    if d > MAX_DIM {
        return add_rowwise(rows, indices, weight, hess);
    }
    let blocks = indices.chunks_exact(BLOCK);
    let rest = blocks.remainder();
    let mut x = [[0.0; MAX_DIM]; BLOCK];
    let mut a = [[0.0; MAX_DIM]; BLOCK];
    for block in blocks {
        for ((&i, xb), ab) in block.iter().zip(&mut x).zip(&mut a) {
            let i = i as usize;
            // x̃_i exactly as `get` gives it (1·v = v), then a_j = w·x̃_ij as in the row loop.
            rows.set_row(i, 1.0, &mut xb[..d]);
            let w = weight(i);
            for (aj, xj) in ab[..d].iter_mut().zip(&xb[..d]) {
                *aj = w * xj;
            }
        }
        let [x0, x1, x2, x3] = &x;
        let (x0, x1, x2, x3) = (&x0[..d], &x1[..d], &x2[..d], &x3[..d]);
        for (j, row) in hess.chunks_exact_mut(d).enumerate().take(d) {
            let (a0, a1, a2, a3) = (a[0][j], a[1][j], a[2][j], a[3][j]);
            for ((((h, v0), v1), v2), v3) in row.iter_mut().zip(x0).zip(x1).zip(x2).zip(x3) {
                let mut acc = *h;
                acc += a0 * v0;
                acc += a1 * v1;
                acc += a2 * v2;
                acc += a3 * v3;
                *h = acc;
            }
        }
    }
    add_rowwise(rows, rest, weight, hess);
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::data::{Dataset, DesignMatrix, DesignOptions, Rows, with_rows};

    /// The row loop, the baseline blocked loop and the dispatched one on the same rows and
    /// weights, from the same non-zero start.
    fn all_three(design: &DesignMatrix, indices: &[u32]) -> [Vec<f64>; 3] {
        let d = design.dim();
        let start: Vec<f64> = (0..d * d).map(|k| (k as f64 * 0.37).sin()).collect();
        let weight = |i: usize| 0.25 / (1.0 + (i as f64 * 0.61).cos().abs());
        let (mut rowwise, mut blocked, mut dispatched) = (start.clone(), start.clone(), start);
        with_rows!(design, r => {
            add_rowwise(&r, indices, weight, &mut rowwise);
            add_blocked(&r, indices, weight, &mut blocked);
            add(&r, indices, weight, &mut dispatched);
        });
        [rowwise, blocked, dispatched]
    }

    /// `rows` × `p` covariates uniform on [−4, 4) from an xorshift stream of `seed`.
    fn random_design(
        p: usize, rows: usize, intercept: bool, standardize: bool, seed: u64,
    ) -> DesignMatrix {
        let mut state = seed | 1;
        let x: Vec<f64> = (0..rows * p)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 11) as f64 / (1u64 << 53) as f64 * 8.0 - 4.0
            })
            .collect();
        let data = Dataset::with_default_names(x, vec![0.0; rows], p).unwrap();
        DesignMatrix::new(data, DesignOptions { intercept, standardize }).unwrap()
    }

    proptest! {
        /// The blocked loop gives the row loop's bits for every width (including wider than
        /// `MAX_DIM`), every remainder of the index count, repeated indices, with and without
        /// an intercept and on-the-fly standardization.
        #[test]
        fn blocked_hessian_sum_has_the_row_loops_bits(
            p in prop_oneof![1usize..10, Just(28usize), Just(MAX_DIM + 3)],
            rows in 2usize..12,
            intercept in any::<bool>(),
            standardize in any::<bool>(),
            seed in any::<u64>(),
            picks in proptest::collection::vec(any::<u32>(), 0..23),
        ) {
            let design = random_design(p, rows, intercept, standardize, seed);
            let indices: Vec<u32> = picks.iter().map(|&k| k % rows as u32).collect();
            let [rowwise, blocked, dispatched] = all_three(&design, &indices);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&rowwise), bits(&blocked));
            prop_assert_eq!(bits(&rowwise), bits(&dispatched));
        }

        /// `Rows::add_rows4` (the blocked gradient update) gives four `add_row` calls' bits.
        #[test]
        fn four_row_update_has_four_row_updates_bits(
            p in prop_oneof![1usize..10, Just(28usize)],
            rows in 2usize..12,
            intercept in any::<bool>(),
            standardize in any::<bool>(),
            seed in any::<u64>(),
            picks in proptest::array::uniform4(any::<u32>()),
            weights in proptest::array::uniform4(-3.0f64..3.0),
        ) {
            let design = random_design(p, rows, intercept, standardize, seed);
            let d = design.dim();
            let at = picks.map(|k| (k % rows as u32) as usize);
            let start: Vec<f64> = (0..d).map(|k| (k as f64 * 0.73).cos()).collect();
            let (mut one_by_one, mut blocked) = (start.clone(), start);
            with_rows!(design, r => {
                for (i, a) in at.into_iter().zip(weights) {
                    r.add_row(i, a, &mut one_by_one);
                }
                r.add_rows4(at, weights, &mut blocked);
            });
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&one_by_one), bits(&blocked));
        }
    }
}
