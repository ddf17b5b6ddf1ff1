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
use super::batch::{
    LANE, RangeValues, ScoreDifferences, add_weighted, family_values, family_values_and_scores,
    gathered_etas, gathered_responses, prefetch_ahead,
};
use super::family::GlmFamily;
use super::hessian;
use super::wide;
use crate::data::{Rows, with_rows};

impl<F: GlmFamily> Terms for Glm<F> {
    fn dim(&self) -> usize {
        self.design.dim()
    }

    fn num_terms(&self) -> usize {
        self.design.len()
    }

    /// The data set's shards (a Parquet directory's files), when it has them.
    fn shard_layout(&self) -> Option<&tallmc_core::ShardLayout> {
        self.design.data().shard_layout()
    }

    fn as_linear_predictor(&self) -> Option<&dyn LinearPredictor> {
        Some(self)
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
                let (ll, score) = f.value_and_score(y[i], r.predictor(i, theta));
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
                        let w = f.curvature(y[i], r.predictor(i, theta));
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
            None => hessian::add(&r, indices, |i| f.curvature(y[i], r.predictor(i, theta)), hess),
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
