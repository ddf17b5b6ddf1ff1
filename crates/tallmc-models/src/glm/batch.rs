//! The batch kernels of [`Glm`](super::Glm): gathers, linear predictors, the family's values
//! and scores over chunks of rows, and the row sums, in the order the reproducibility contract
//! pins (see `terms.rs`). `wide.rs` compiles some of them a second time with wider vector
//! instructions; `terms.rs` implements the evaluation traits with them.

use super::family::GlmFamily;
use crate::data::{Rows, prefetch_line};

/// Indices per stack-allocated chunk of the two-pass batch loops.
pub(super) const LANE: usize = 64;

/// How many indices ahead a gather loop prefetches rows ([`Rows::prefetch`]): enough rows in
/// flight to cover a memory latency with the two dot products of each row (measured on the
/// `term_throughput` random-row benchmark; 4–16 are within a few per cent).
const PREFETCH_AHEAD: usize = 8;

/// Prefetches the row of `indices[k + PREFETCH_AHEAD]`, if there is one.
#[inline(always)]
pub(super) fn prefetch_ahead<R: Rows>(rows: &R, indices: &[u32], k: usize) {
    if let Some(&i) = indices.get(k + PREFETCH_AHEAD) {
        rows.prefetch(i as usize);
    }
}

/// Prefetches the rows of the contiguous chunk after the one starting at `first` (up to `end`),
/// so that their loads overlap the family's arithmetic on this chunk (which issues none): the
/// hardware prefetcher alone stops a few lines ahead of the last demand load.
#[inline(always)]
fn prefetch_next_chunk<R: Rows>(rows: &R, first: usize, end: usize) {
    for i in (first + LANE).min(end)..(first + 2 * LANE).min(end) {
        rows.prefetch(i);
    }
}

/// out += Σ_k a_k x̃_{i_k} for the rows `index(k)`, k < `a.len()`, four rows per pass over
/// `out` ([`Rows::add_rows4`]): the bits of one [`Rows::add_row`] per row, in order.
#[inline(always)]
pub(super) fn add_weighted<R: Rows>(
    rows: &R, index: impl Fn(usize) -> usize, a: &[f64], out: &mut [f64],
) {
    let mut k = 0;
    while k + 4 <= a.len() {
        let at = [index(k), index(k + 1), index(k + 2), index(k + 3)];
        rows.add_rows4(at, [a[k], a[k + 1], a[k + 2], a[k + 3]], out);
        k += 4;
    }
    for (j, &w) in a.iter().enumerate().skip(k) {
        rows.add_row(index(j), w, out);
    }
}

/// η_k = x̃_{first+k}ᵀθ (+ the design's offset) for every slot k of `etas` (the gathers of a contiguous range chunk),
/// four rows per [`Rows::dots4`].
#[inline(always)]
fn consecutive_etas<R: Rows>(rows: &R, theta: &[f64], first: usize, etas: &mut [f64]) {
    let done = etas.len() - etas.len() % 4;
    let mut quads = etas.chunks_exact_mut(4);
    for (q, e) in (&mut quads).enumerate() {
        let i = first + 4 * q;
        e.copy_from_slice(&rows.predictors4([i, i + 1, i + 2, i + 3], theta));
    }
    for (k, e) in quads.into_remainder().iter_mut().enumerate() {
        *e = rows.predictor(first + done + k, theta);
    }
}

/// η_k = x̃_{i}ᵀθ (+ the design's offset) for i = `indices[start + k]` and every slot k of `eta` (the gathers of an
/// index batch), four rows per [`Rows::dots4`], prefetching [`PREFETCH_AHEAD`] indices ahead
/// in `indices`. With `other = Some((θ′, η′))` also η′_k = x̃_iᵀθ′ from the same read of the row.
#[inline(always)]
pub(super) fn gathered_etas<R: Rows>(
    rows: &R, theta: &[f64], indices: &[u32], start: usize, eta: &mut [f64],
    mut other: Option<(&[f64], &mut [f64])>,
) {
    let idx = &indices[start..start + eta.len()];
    let mut k = 0;
    while k + 4 <= idx.len() {
        for j in k..k + 4 {
            prefetch_ahead(rows, indices, start + j);
        }
        let at = [idx[k], idx[k + 1], idx[k + 2], idx[k + 3]].map(|i| i as usize);
        eta[k..k + 4].copy_from_slice(&rows.predictors4(at, theta));
        if let Some((theta_other, eta_other)) = other.as_mut() {
            eta_other[k..k + 4].copy_from_slice(&rows.predictors4(at, theta_other));
        }
        k += 4;
    }
    for j in k..idx.len() {
        prefetch_ahead(rows, indices, start + j);
        let i = idx[j] as usize;
        eta[j] = rows.predictor(i, theta);
        if let Some((theta_other, eta_other)) = other.as_mut() {
            eta_other[j] = rows.predictor(i, theta_other);
        }
    }
}

/// [`gathered_etas`] over a whole index batch (what [`wide::gathered_etas`] compiles twice).
#[inline(always)]
pub(super) fn batch_etas<R: Rows>(
    rows: &R, theta: &[f64], indices: &[u32], eta: &mut [f64], other: Option<(&[f64], &mut [f64])>,
) {
    gathered_etas(rows, theta, indices, 0, eta, other);
}

/// φ′_{y_i}(η_k) (and φ″ with `d2`) for i = `indices[k]`: chunks of [`LANE`] whose responses
/// are gathered first, so that the family's loop over a chunk has no indexing in it and
/// vectorizes.
#[inline(always)]
pub(super) fn family_scores<F: GlmFamily>(
    f: &F, y: &[f64], indices: &[u32], eta: &[f64], d1: &mut [f64], d2: Option<&mut [f64]>,
) {
    let mut ys = [0.0; LANE];
    let chunks = indices.chunks(LANE).zip(eta.chunks(LANE)).zip(d1.chunks_mut(LANE));
    match d2 {
        None => {
            for ((idx, eta), d1) in chunks {
                gathered_responses(y, idx, &mut ys);
                for ((g, &e), &yk) in d1.iter_mut().zip(eta).zip(&ys) {
                    *g = f.score(yk, e);
                }
            }
        }
        Some(d2) => {
            for (((idx, eta), d1), d2) in chunks.zip(d2.chunks_mut(LANE)) {
                gathered_responses(y, idx, &mut ys);
                for (((g, h), &e), &yk) in d1.iter_mut().zip(d2.iter_mut()).zip(eta).zip(&ys) {
                    (*g, *h) = f.score_and_curvature(yk, e);
                }
            }
        }
    }
}

/// out += Σ_k a_k x̃_{indices[k]} ([`add_weighted`] over an index batch).
#[inline(always)]
pub(super) fn add_indexed_rows<R: Rows>(rows: &R, indices: &[u32], a: &[f64], out: &mut [f64]) {
    add_weighted(rows, |k| indices[k] as usize, a, out);
}

/// What [`LinearPredictor::add_score_differences`] works with besides the rows and indices.
pub(super) struct ScoreDifferences<'a, F> {
    pub(super) f: &'a F,
    pub(super) y: &'a [f64],
    pub(super) theta: &'a [f64],
    pub(super) offsets: &'a [f64],
    pub(super) weight: f64,
}

impl<F: GlmFamily> ScoreDifferences<'_, F> {
    /// out += w Σ_k (φ′(x̃_{i_k}ᵀθ) − c_k) x̃_{i_k}, in chunks of [`LANE`] indices whose rows
    /// stay in L1 from the dot products to the row updates: the gathers, the family's scores
    /// in a loop of their own (vectorized), the coefficients, then [`add_weighted`] (four rows
    /// at a time from the chunk's first index; chunks hold a multiple of four, so the grouping
    /// is that of one call over the whole batch).
    #[inline(always)]
    pub(super) fn add<R: Rows>(&self, rows: &R, indices: &[u32], out: &mut [f64]) {
        let (f, w) = (self.f, self.weight);
        let (mut eta, mut ys) = ([0.0; LANE], [0.0; LANE]);
        for (c, (idx, offsets)) in indices.chunks(LANE).zip(self.offsets.chunks(LANE)).enumerate() {
            // The responses of this chunk, whose loads then overlap the dot products.
            for &i in idx {
                prefetch_line(&self.y[i as usize]);
            }
            let eta = &mut eta[..idx.len()];
            gathered_etas(rows, self.theta, indices, c * LANE, eta, None);
            gathered_responses(self.y, idx, &mut ys);
            for ((e, &yk), &c) in eta.iter_mut().zip(&ys).zip(offsets) {
                *e = w * (f.score(yk, *e) - c);
            }
            add_weighted(rows, |k| idx[k] as usize, eta, out);
        }
    }

    /// [`ScoreDifferences::add`] for rows 0, 1, …, `y.len()` − 1 of `rows` (a gathered batch,
    /// whose responses are `y`): the same chunks and operations, contiguous loads.
    #[inline(always)]
    pub(super) fn add_in_order<R: Rows>(&self, rows: &R, out: &mut [f64]) {
        let (f, w) = (self.f, self.weight);
        let n = self.y.len().min(self.offsets.len()).min(rows.len());
        let mut eta = [0.0; LANE];
        for (c, (ys, offsets)) in
            self.y[..n].chunks(LANE).zip(self.offsets.chunks(LANE)).enumerate()
        {
            let base = c * LANE;
            let eta = &mut eta[..ys.len()];
            consecutive_etas(rows, self.theta, base, eta);
            for ((e, &yk), &c) in eta.iter_mut().zip(ys).zip(offsets) {
                *e = w * (f.score(yk, *e) - c);
            }
            add_weighted(rows, |k| base + k, eta, out);
        }
    }
}

/// η_k = x̃_kᵀθ for the rows 0..`eta.len()` of `rows` and φ′_{y_k}(η_k) into `d1` (the family's
/// loop on its own, vectorized).
#[inline(always)]
pub(super) fn batch_scores<F: GlmFamily, R: Rows>(
    f: &F, rows: &R, theta: &[f64], y: &[f64], eta: &mut [f64], d1: &mut [f64],
) {
    consecutive_etas(rows, theta, 0, eta);
    for ((g, &e), &yk) in d1.iter_mut().zip(eta.iter()).zip(y) {
        *g = f.score(yk, e);
    }
}

/// η_k = x̃_kᵀθ for the rows 0..`eta.len()` of `rows` (a gathered batch): the grouping of
/// [`batch_etas`] over an index batch, contiguous loads.
#[inline(always)]
pub(super) fn batch_etas_in_order<R: Rows>(rows: &R, theta: &[f64], eta: &mut [f64]) {
    consecutive_etas(rows, theta, 0, eta);
}

/// out += Σ_k a_k x̃_k over the rows 0..`a.len()` of `rows` (a gathered batch): the grouping of
/// [`add_indexed_rows`], contiguous loads.
#[inline(always)]
pub(super) fn add_rows_in_order<R: Rows>(rows: &R, a: &[f64], out: &mut [f64]) {
    add_weighted(rows, |k| k, a, out);
}

/// `ys[k] = y[idx[k]]` for every k of `idx`.
#[inline(always)]
pub(super) fn gathered_responses(y: &[f64], idx: &[u32], ys: &mut [f64]) {
    for (yk, &i) in ys.iter_mut().zip(idx) {
        *yk = y[i as usize];
    }
}

/// φ_{y_k}(η_k) in place of each η_k in `etas` (`ys` at least as long). A loop of its own, with
/// no sum in it, so that LLVM vectorizes the family's branch-free functions over the block; the
/// caller then adds the values in index order.
#[inline(always)]
pub(super) fn family_values<F: GlmFamily>(f: &F, etas: &mut [f64], ys: &[f64]) {
    for (e, &yk) in etas.iter_mut().zip(ys) {
        *e = f.value(yk, *e);
    }
}

/// (φ_{y_k}(η_k), φ′_{y_k}(η_k)): the value in place of each η_k in `etas`, the score in
/// `scores` (both loops as in [`family_values`]).
#[inline(always)]
pub(super) fn family_values_and_scores<F: GlmFamily>(
    f: &F, etas: &mut [f64], scores: &mut [f64], ys: &[f64],
) {
    for ((e, s), &yk) in etas.iter_mut().zip(scores.iter_mut()).zip(ys) {
        (*e, *s) = f.value_and_score(yk, *e);
    }
}

/// A contiguous range of rows `start..start + y.len()` of a design, the family and θ: what the
/// full-data range loops work on.
pub(super) struct RangeValues<'a, F, R> {
    pub(super) f: &'a F,
    pub(super) rows: &'a R,
    pub(super) theta: &'a [f64],
    /// The responses of the range.
    pub(super) y: &'a [f64],
    pub(super) start: usize,
}

impl<F: GlmFamily, R: Rows> RangeValues<'_, F, R> {
    /// Σφ over the range (or Σ(y − η)² for quadratic families): 64-row chunks, the gathers,
    /// then the family's values in a loop of their own, added in index order.
    #[inline(always)]
    pub(super) fn sum(&self) -> f64 {
        let (f, r, theta, y) = (self.f, self.rows, self.theta, self.y);
        let end = self.start + y.len();
        let quadratic = f.quadratic_form().is_some();
        let mut acc = 0.0;
        let mut etas = [0.0; LANE];
        for (c, ys) in y.chunks(LANE).enumerate() {
            let base = self.start + c * LANE;
            consecutive_etas(r, theta, base, &mut etas[..ys.len()]);
            if quadratic {
                for (e, &yk) in etas.iter().zip(ys) {
                    let res = yk - *e;
                    acc += res * res;
                }
            } else {
                prefetch_next_chunk(r, base, end);
                let etas = &mut etas[..ys.len()];
                family_values(f, etas, ys);
                for v in etas.iter() {
                    acc += v;
                }
            }
        }
        acc
    }

    /// [`RangeValues::sum`], also adding Σφ′ x̃ (quadratic families: Σ w(y − η) x̃) into
    /// `grad_sum`.
    #[inline(always)]
    pub(super) fn sum_and_gradient(&self, grad_sum: &mut [f64]) -> f64 {
        let (f, r, theta, y) = (self.f, self.rows, self.theta, self.y);
        let end = self.start + y.len();
        let quadratic = f.quadratic_form();
        let mut acc = 0.0;
        let mut etas = [0.0; LANE];
        let mut scores = [0.0; LANE];
        for (c, ys) in y.chunks(LANE).enumerate() {
            let base = self.start + c * LANE;
            consecutive_etas(r, theta, base, &mut etas[..ys.len()]);
            match quadratic {
                Some(q) => {
                    for (k, (e, &yk)) in etas.iter().zip(ys).enumerate() {
                        let res = yk - *e;
                        acc += res * res;
                        r.add_row(base + k, res * q.precision, grad_sum);
                    }
                }
                None => {
                    prefetch_next_chunk(r, base, end);
                    let etas = &mut etas[..ys.len()];
                    family_values_and_scores(f, etas, &mut scores, ys);
                    for &ll in etas.iter() {
                        acc += ll;
                    }
                    add_weighted(r, |k| base + k, &scores[..etas.len()], grad_sum);
                }
            }
        }
        acc
    }
}
