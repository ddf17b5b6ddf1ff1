//! The evaluation traits of [`Glm`]: terms, gradients, Hessians and the linear-predictor form,
//! one generic implementation for every family.
//!
//! **Loop shape.** Index batches run in chunks of [`LANE`] indices with two passes: first the
//! gathers (η_k = x̃_{i_k}ᵀθ and y_{i_k}, independent loads, so many rows are in flight at once),
//! then the family's scalar functions and the row updates (rows now in cache). Contiguous ranges
//! compute a chunk's η first too. The family runs over a whole chunk in a loop of its own
//! ([`family_values`], [`family_values_and_scores`]) so that LLVM vectorizes it (the logistic
//! family is branch-free, see `fast_math.rs`); sums then accumulate term by term in index order; quadratic families ([`GlmFamily::quadratic_form`]) accumulate
//! Σ(y − η)² instead and finish with n·log_norm − ½·w·Σ(y − η)². The operation order is part of
//! the reproducibility contract: the reproduction suites' snapshots pin it.

use tallmc_core::{LinearPredictor, RowBatch, TermGradients, TermHessians, Terms};

use super::Glm;
use super::family::GlmFamily;
use super::hessian;
use super::wide;
use crate::data::{Rows, prefetch_line, with_rows};

/// Indices per stack-allocated chunk of the two-pass batch loops.
const LANE: usize = 64;

/// How many indices ahead a gather loop prefetches rows ([`Rows::prefetch`]): enough rows in
/// flight to cover a memory latency with the two dot products of each row (measured on the
/// `term_throughput` random-row benchmark; 4–16 are within a few per cent).
const PREFETCH_AHEAD: usize = 8;

/// Prefetches the row of `indices[k + PREFETCH_AHEAD]`, if there is one.
#[inline(always)]
fn prefetch_ahead<R: Rows>(rows: &R, indices: &[u32], k: usize) {
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
fn add_weighted<R: Rows>(rows: &R, index: impl Fn(usize) -> usize, a: &[f64], out: &mut [f64]) {
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

/// η_k = x̃_{first+k}ᵀθ for every slot k of `etas` (the gathers of a contiguous range chunk),
/// four rows per [`Rows::dots4`].
#[inline(always)]
fn consecutive_etas<R: Rows>(rows: &R, theta: &[f64], first: usize, etas: &mut [f64]) {
    let done = etas.len() - etas.len() % 4;
    let mut quads = etas.chunks_exact_mut(4);
    for (q, e) in (&mut quads).enumerate() {
        let i = first + 4 * q;
        e.copy_from_slice(&rows.dots4([i, i + 1, i + 2, i + 3], theta));
    }
    for (k, e) in quads.into_remainder().iter_mut().enumerate() {
        *e = rows.dot(first + done + k, theta);
    }
}

/// η_k = x̃_{i}ᵀθ for i = `indices[start + k]` and every slot k of `eta` (the gathers of an
/// index batch), four rows per [`Rows::dots4`], prefetching [`PREFETCH_AHEAD`] indices ahead
/// in `indices`. With `other = Some((θ′, η′))` also η′_k = x̃_iᵀθ′ from the same read of the row.
#[inline(always)]
fn gathered_etas<R: Rows>(
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
        eta[k..k + 4].copy_from_slice(&rows.dots4(at, theta));
        if let Some((theta_other, eta_other)) = other.as_mut() {
            eta_other[k..k + 4].copy_from_slice(&rows.dots4(at, theta_other));
        }
        k += 4;
    }
    for j in k..idx.len() {
        prefetch_ahead(rows, indices, start + j);
        let i = idx[j] as usize;
        eta[j] = rows.dot(i, theta);
        if let Some((theta_other, eta_other)) = other.as_mut() {
            eta_other[j] = rows.dot(i, theta_other);
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
fn gathered_responses(y: &[f64], idx: &[u32], ys: &mut [f64]) {
    for (yk, &i) in ys.iter_mut().zip(idx) {
        *yk = y[i as usize];
    }
}

/// φ_{y_k}(η_k) in place of each η_k in `etas` (`ys` at least as long). A loop of its own, with
/// no sum in it, so that LLVM vectorizes the family's branch-free functions over the block; the
/// caller then adds the values in index order.
#[inline(always)]
fn family_values<F: GlmFamily>(f: &F, etas: &mut [f64], ys: &[f64]) {
    for (e, &yk) in etas.iter_mut().zip(ys) {
        *e = f.value(yk, *e);
    }
}

/// (φ_{y_k}(η_k), φ′_{y_k}(η_k)): the value in place of each η_k in `etas`, the score in
/// `scores` (both loops as in [`family_values`]).
#[inline(always)]
fn family_values_and_scores<F: GlmFamily>(f: &F, etas: &mut [f64], scores: &mut [f64], ys: &[f64]) {
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

impl<F: GlmFamily> Terms for Glm<F> {
    fn dim(&self) -> usize {
        self.design.dim()
    }

    fn num_terms(&self) -> usize {
        self.design.len()
    }

    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        let y = self.design.y();
        let f = &self.family;
        with_rows!(self.design, r => {
            for (c, (idx, out)) in indices.chunks(LANE).zip(out.chunks_mut(LANE)).enumerate() {
                // Pass 1: the gathers (independent loads, so many rows are in flight at once).
                let mut ys = [0.0; LANE];
                let out = &mut out[..idx.len()];
                gathered_etas(&r, theta, indices, c * LANE, out, None);
                gathered_responses(y, idx, &mut ys);
                // Pass 2: the family's function (transcendental for most families; vectorized).
                family_values(f, out, &ys);
            }
        })
    }

    fn sum_log_terms(&self, theta: &[f64], indices: &[u32]) -> f64 {
        let y = self.design.y();
        let f = &self.family;
        let quadratic = f.quadratic_form();
        let acc = with_rows!(self.design, r => {
            let mut acc = 0.0;
            let mut etas = [0.0; LANE];
            let mut ys = [0.0; LANE];
            for (c, idx) in indices.chunks(LANE).enumerate() {
                gathered_etas(&r, theta, indices, c * LANE, &mut etas[..idx.len()], None);
                gathered_responses(y, idx, &mut ys);
                if quadratic.is_some() {
                    for (e, &yk) in etas[..idx.len()].iter().zip(&ys) {
                        let res = yk - *e;
                        acc += res * res;
                    }
                } else {
                    let etas = &mut etas[..idx.len()];
                    family_values(f, etas, &ys);
                    for v in etas.iter() {
                        acc += v;
                    }
                }
            }
            acc
        });
        match quadratic {
            Some(q) => q.total(indices.len() as f64, acc),
            None => acc,
        }
    }

    fn sum_log_terms_range(&self, theta: &[f64], start: u32, end: u32) -> f64 {
        let y = &self.design.y()[start as usize..end as usize];
        let f = &self.family;
        let quadratic = f.quadratic_form();
        let acc = with_rows!(self.design, r => {
            wide::range_values(&RangeValues { f, rows: &r, theta, y, start: start as usize })
        });
        match quadratic {
            Some(q) => q.total(f64::from(end.saturating_sub(start)), acc),
            None => acc,
        }
    }
}

impl<F: GlmFamily> TermGradients for Glm<F> {
    fn log_terms_grad_sum(
        &self, theta: &[f64], indices: &[u32], out: &mut [f64], grad_sum: &mut [f64],
    ) -> f64 {
        let y = self.design.y();
        let f = &self.family;
        with_rows!(self.design, r => {
            let mut total = 0.0;
            for (c, (idx, out)) in indices.chunks(LANE).zip(out.chunks_mut(LANE)).enumerate() {
                // Pass 1: the gathers; pass 2: terms and row updates (rows now in cache).
                let mut ys = [0.0; LANE];
                let out = &mut out[..idx.len()];
                gathered_etas(&r, theta, indices, c * LANE, out, None);
                gathered_responses(y, idx, &mut ys);
                let mut scores = [0.0; LANE];
                family_values_and_scores(f, out, &mut scores, &ys);
                for &ll in out.iter() {
                    total += ll;
                }
                add_weighted(&r, |k| idx[k] as usize, &scores[..idx.len()], grad_sum);
            }
            total
        })
    }

    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        let y = self.design.y();
        let d = self.design.dim();
        let f = &self.family;
        with_rows!(self.design, r => {
            let rows = out.iter_mut().zip(indices).zip(grads.chunks_exact_mut(d));
            for (k, ((o, &i), g)) in rows.enumerate() {
                prefetch_ahead(&r, indices, k);
                let i = i as usize;
                let (ll, score) = f.value_and_score(y[i], r.dot(i, theta));
                *o = ll;
                r.set_row(i, score, g);
            }
        })
    }

    fn sum_log_terms_grad_range(
        &self, theta: &[f64], start: u32, end: u32, grad_sum: &mut [f64],
    ) -> f64 {
        let y = &self.design.y()[start as usize..end as usize];
        let f = &self.family;
        let quadratic = f.quadratic_form();
        let acc = with_rows!(self.design, r => {
            let job = RangeValues { f, rows: &r, theta, y, start: start as usize };
            wide::range_values_and_gradient(&job, grad_sum)
        });
        match quadratic {
            Some(q) => q.total(f64::from(end.saturating_sub(start)), acc),
            None => acc,
        }
    }
}

impl<F: GlmFamily> TermHessians for Glm<F> {
    fn hessian_vector_products(&self, theta: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]) {
        let y = self.design.y();
        let d = self.design.dim();
        let f = &self.family;
        with_rows!(self.design, r => {
            match f.constant_curvature() {
                Some(c) => {
                    for (&i, row) in indices.iter().zip(out.chunks_exact_mut(d)) {
                        let i = i as usize;
                        r.set_row(i, c * r.dot(i, v), row);
                    }
                }
                None => {
                    for (&i, row) in indices.iter().zip(out.chunks_exact_mut(d)) {
                        let i = i as usize;
                        let w = f.curvature(y[i], r.dot(i, theta));
                        r.set_row(i, w * r.dot(i, v), row);
                    }
                }
            }
        })
    }

    fn sum_hessian(&self, theta: &[f64], indices: &[u32], hess: &mut [f64]) {
        let y = self.design.y();
        let d = self.design.dim();
        let f = &self.family;
        debug_assert_eq!(hess.len(), d * d);
        with_rows!(self.design, r => match f.constant_curvature() {
            Some(c) => hessian::add(&r, indices, |_| c, hess),
            None => hessian::add(&r, indices, |i| f.curvature(y[i], r.dot(i, theta)), hess),
        })
    }
}

/// η_i = x̃_iᵀθ and (φ, φ′, φ″) from the family, evaluated as the terms are.
impl<F: GlmFamily> LinearPredictor for Glm<F> {
    fn linear_predictors(&self, theta: &[f64], indices: &[u32], eta: &mut [f64]) {
        let eta = &mut eta[..indices.len()];
        with_rows!(self.design, r => wide::gathered_etas(&r, theta, indices, eta, None))
    }

    fn predictor_derivatives(
        &self, indices: &[u32], eta: &[f64], phi: &mut [f64], d1: &mut [f64], d2: &mut [f64],
    ) {
        let y = self.design.y();
        for (k, &i) in indices.iter().enumerate() {
            let (v, g, h) = self.family.derivatives(y[i as usize], eta[k]);
            phi[k] = v;
            d1[k] = g;
            d2[k] = h;
        }
    }

    /// One read of each row for both predictors (the second dot product finds the row in L1).
    fn linear_predictor_pairs(
        &self, theta: &[f64], theta_other: &[f64], indices: &[u32], eta: &mut [f64],
        eta_other: &mut [f64],
    ) {
        let (eta, eta_other) = (&mut eta[..indices.len()], &mut eta_other[..indices.len()]);
        with_rows!(self.design, r => {
            wide::gathered_etas(&r, theta, indices, eta, Some((theta_other, eta_other)))
        })
    }

    /// φ′ (and φ″) from the family's [`GlmFamily::score`] / [`GlmFamily::score_and_curvature`],
    /// which skip φ.
    fn predictor_scores(
        &self, indices: &[u32], eta: &[f64], d1: &mut [f64], d2: Option<&mut [f64]>,
    ) {
        wide::family_scores(&self.family, self.design.y(), indices, eta, d1, d2);
    }

    /// Four rows at a time: [`Rows::dots4`], the family's scores and [`Rows::add_rows4`] while
    /// the rows are in L1 (the bits of the provided sequence, whose row updates also go four
    /// rows at a time from the first index).
    fn add_score_differences(
        &self, theta: &[f64], indices: &[u32], offsets: &[f64], weight: f64, out: &mut [f64],
    ) {
        let job = ScoreDifferences { f: &self.family, y: self.design.y(), theta, offsets, weight };
        let indices = &indices[..indices.len().min(offsets.len())];
        with_rows!(self.design, r => wide::score_differences(&job, &r, indices, out))
    }

    /// The raw covariate rows and the responses of `indices`, one after the other (no copy
    /// for data without covariate columns: the intercept-only design).
    fn gather_rows(&self, indices: &[u32], batch: &mut RowBatch) {
        batch.set_indices(indices);
        // Room for the batch's reserved size, so that a caller's later, larger batch does not
        // allocate.
        let points = batch.capacity();
        batch.values.clear();
        batch.values.reserve(points * self.design.data().num_covariates());
        if self.design.gather_raw_rows(indices, &mut batch.values) {
            let y = self.design.y();
            batch.responses.clear();
            batch.responses.reserve(points);
            batch.responses.extend(indices.iter().map(|&i| y[i as usize]));
            batch.copied = true;
        }
    }

    /// Copies only the new rows and responses into their positions.
    fn regather_rows(&self, positions: &[usize], indices: &[u32], batch: &mut RowBatch) {
        let y = self.design.y();
        for (&k, &i) in positions.iter().zip(indices) {
            batch.indices[k] = i;
            if batch.copied {
                batch.responses[k] = y[i as usize];
            }
        }
        if batch.copied && !self.design.regather_raw_rows(positions, indices, &mut batch.values) {
            let all = std::mem::take(&mut batch.indices);
            self.gather_rows(&all, batch);
        }
    }

    /// The predictors four rows at a time over the gathered rows.
    fn gathered_predictors(&self, batch: &RowBatch, theta: &[f64], eta: &mut [f64]) {
        if !batch.copied {
            return self.linear_predictors(theta, &batch.indices, eta);
        }
        let eta = &mut eta[..batch.len().min(batch.responses.len())];
        let view = self.design.gathered_rows(&batch.values);
        with_rows!(view view, r => wide::gathered_etas_in_order(&r, theta, eta))
    }

    /// The family's derivatives with the gathered responses.
    fn gathered_derivatives(
        &self, batch: &RowBatch, eta: &[f64], phi: &mut [f64], d1: &mut [f64], d2: &mut [f64],
    ) {
        if !batch.copied {
            return self.predictor_derivatives(&batch.indices, eta, phi, d1, d2);
        }
        let rows = batch.responses.iter().zip(eta).zip(phi.iter_mut().zip(d1).zip(d2));
        for ((&y, &e), ((v, g), h)) in rows {
            (*v, *g, *h) = self.family.derivatives(y, e);
        }
    }

    /// The predictors four rows at a time over the gathered rows, then the scores.
    fn gathered_scores(&self, batch: &RowBatch, theta: &[f64], eta: &mut [f64], d1: &mut [f64]) {
        if !batch.copied {
            self.linear_predictors(theta, &batch.indices, eta);
            return self.predictor_scores(&batch.indices, eta, d1, None);
        }
        let len = batch.len().min(eta.len()).min(d1.len()).min(batch.responses.len());
        let (eta, d1) = (&mut eta[..len], &mut d1[..len]);
        let view = self.design.gathered_rows(&batch.values);
        with_rows!(view view, r => wide::gathered_batch_scores(&self.family, &r, theta, &batch.responses[..len], eta, d1))
    }

    /// [`LinearPredictor::add_score_differences`]'s chunks over the gathered rows, read in
    /// order (the hardware prefetcher streams them; no index, no scattered loads).
    fn add_score_differences_gathered(
        &self, batch: &RowBatch, theta: &[f64], offsets: &[f64], weight: f64, out: &mut [f64],
    ) {
        if !batch.copied {
            return self.add_score_differences(theta, &batch.indices, offsets, weight, out);
        }
        let len = batch.len().min(offsets.len()).min(batch.responses.len());
        let y = &batch.responses[..len];
        let job = ScoreDifferences { f: &self.family, y, theta, offsets, weight };
        let view = self.design.gathered_rows(&batch.values);
        with_rows!(view view, r => wide::score_differences_in_order(&job, &r, out))
    }

    /// The row updates four rows at a time over the gathered rows.
    fn add_weighted_gathered_rows(&self, batch: &RowBatch, weights: &[f64], out: &mut [f64]) {
        if !batch.copied {
            return self.add_weighted_rows(&batch.indices, weights, out);
        }
        let n = weights.len().min(batch.len());
        let view = self.design.gathered_rows(&batch.values);
        with_rows!(view view, r => wide::add_weighted_rows_in_order(&r, &weights[..n], out))
    }

    fn add_weighted_rows(&self, indices: &[u32], weights: &[f64], out: &mut [f64]) {
        let n = weights.len().min(indices.len());
        with_rows!(self.design, r => wide::add_weighted_rows(&r, &indices[..n], &weights[..n], out))
    }
}
