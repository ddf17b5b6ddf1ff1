//! The evaluation traits of [`DispersionGlm`], one implementation for every family.

use tallmc_core::{
    DispersionPredictor, LogPrior, LogPriorCurvature, LogPriorHessian, ParameterNames,
    PredictorDerivatives, TermGradients, TermHessians, Terms,
};

use super::{BLOCK, DispersionFamily, DispersionGlm};
use crate::data::{Rows, with_rows};
use crate::glm::wide;

/// The predictors η_k = x̃_kᵀβ (+ offset) and responses of a block of rows (at most [`BLOCK`]),
/// into `eta` and `yb`; returns how many.
#[inline(always)]
fn block_predictors<R: Rows>(
    r: &R, beta: &[f64], y: &[f64], rows: impl Iterator<Item = usize>, eta: &mut [f64; BLOCK],
    yb: &mut [f64; BLOCK],
) -> usize {
    let mut n = 0;
    for (i, (e, v)) in rows.zip(eta.iter_mut().zip(yb.iter_mut())) {
        *e = r.predictor(i, beta);
        *v = y[i];
        n += 1;
    }
    n
}

/// (f, f_η, f_τ) of a block, [`DispersionFamily::value_and_scores_block`] on its predictors.
#[inline(always)]
fn block_values<F: DispersionFamily, R: Rows>(
    f: &F, at: &F::At, r: &R, beta: &[f64], y: &[f64], rows: impl Iterator<Item = usize>,
    out: &mut [(f64, f64, f64); BLOCK],
) -> usize {
    let (mut eta, mut yb) = ([0.0; BLOCK], [0.0; BLOCK]);
    let n = block_predictors(r, beta, y, rows, &mut eta, &mut yb);
    f.value_and_scores_block(at, &yb[..n], &eta[..n], &mut out[..n]);
    n
}

impl<F: DispersionFamily> Terms for DispersionGlm<F> {
    fn dim(&self) -> usize {
        self.design.dim() + 1
    }

    fn num_terms(&self) -> usize {
        self.design.len()
    }

    /// The data set's shards (a Parquet directory's files), when it has them.
    fn shard_layout(&self) -> Option<&tallmc_core::ShardLayout> {
        self.design.data().shard_layout()
    }

    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        let y = self.design.y();
        let (beta, at) = self.split(theta);
        let f = &self.family;
        let mut vals = [(0.0, 0.0, 0.0); BLOCK];
        with_rows!(self.design, r => {
            for (o, idx) in out.chunks_mut(BLOCK).zip(indices.chunks(BLOCK)) {
                let rows = idx.iter().map(|&i| i as usize);
                let n = block_values(f, &at, &r, beta, y, rows, &mut vals);
                for (o, v) in o[..n].iter_mut().zip(&vals) {
                    *o = v.0;
                }
            }
        })
    }

    fn sum_log_terms(&self, theta: &[f64], indices: &[u32]) -> f64 {
        let y = self.design.y();
        let (beta, at) = self.split(theta);
        let f = &self.family;
        let mut vals = [(0.0, 0.0, 0.0); BLOCK];
        with_rows!(self.design, r => {
            let mut acc = 0.0;
            for idx in indices.chunks(BLOCK) {
                let rows = idx.iter().map(|&i| i as usize);
                let n = block_values(f, &at, &r, beta, y, rows, &mut vals);
                for v in &vals[..n] {
                    acc += v.0;
                }
            }
            acc
        })
    }

    fn sum_log_terms_range(&self, theta: &[f64], start: u32, end: u32) -> f64 {
        let y = self.design.y();
        let (beta, at) = self.split(theta);
        let f = &self.family;
        let mut vals = [(0.0, 0.0, 0.0); BLOCK];
        with_rows!(self.design, r => {
            let mut acc = 0.0;
            for first in (start as usize..end as usize).step_by(BLOCK) {
                let rows = first..(first + BLOCK).min(end as usize);
                let n = block_values(f, &at, &r, beta, y, rows, &mut vals);
                for v in &vals[..n] {
                    acc += v.0;
                }
            }
            acc
        })
    }
}

impl<F: DispersionFamily> TermGradients for DispersionGlm<F> {
    fn log_terms_grad_sum(
        &self, theta: &[f64], indices: &[u32], out: &mut [f64], grad_sum: &mut [f64],
    ) -> f64 {
        let y = self.design.y();
        let p = self.design.dim();
        let (beta, at) = self.split(theta);
        let f = &self.family;
        let (g_beta, g_tau) = grad_sum.split_at_mut(p);
        let mut vals = [(0.0, 0.0, 0.0); BLOCK];
        with_rows!(self.design, r => {
            let (mut total, mut gt) = (0.0, 0.0);
            for (o, idx) in out.chunks_mut(BLOCK).zip(indices.chunks(BLOCK)) {
                let rows = idx.iter().map(|&i| i as usize);
                let n = block_values(f, &at, &r, beta, y, rows, &mut vals);
                for ((o, &i), &(v, fe, ft)) in o[..n].iter_mut().zip(idx).zip(&vals) {
                    *o = v;
                    total += v;
                    r.add_row(i as usize, fe, g_beta);
                    gt += ft;
                }
            }
            g_tau[0] += gt;
            total
        })
    }

    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        let y = self.design.y();
        let p = self.design.dim();
        let (beta, at) = self.split(theta);
        let f = &self.family;
        let mut vals = [(0.0, 0.0, 0.0); BLOCK];
        with_rows!(self.design, r => {
            let blocks = out.chunks_mut(BLOCK).zip(indices.chunks(BLOCK));
            for ((o, idx), gb) in blocks.zip(grads.chunks_mut(BLOCK * (p + 1))) {
                let rows = idx.iter().map(|&i| i as usize);
                let n = block_values(f, &at, &r, beta, y, rows, &mut vals);
                let each = o[..n].iter_mut().zip(idx).zip(gb.chunks_exact_mut(p + 1));
                for (((o, &i), g), &(v, fe, ft)) in each.zip(&vals) {
                    *o = v;
                    r.set_row(i as usize, fe, &mut g[..p]);
                    g[p] = ft;
                }
            }
        })
    }

    fn sum_log_terms_grad_range(
        &self, theta: &[f64], start: u32, end: u32, grad_sum: &mut [f64],
    ) -> f64 {
        let y = self.design.y();
        let p = self.design.dim();
        let (beta, at) = self.split(theta);
        let f = &self.family;
        let (g_beta, g_tau) = grad_sum.split_at_mut(p);
        let mut vals = [(0.0, 0.0, 0.0); BLOCK];
        with_rows!(self.design, r => {
            let (mut total, mut gt) = (0.0, 0.0);
            for first in (start as usize..end as usize).step_by(BLOCK) {
                let rows = first..(first + BLOCK).min(end as usize);
                let n = block_values(f, &at, &r, beta, y, rows.clone(), &mut vals);
                for (i, &(v, fe, ft)) in rows.zip(&vals[..n]) {
                    total += v;
                    r.add_row(i, fe, g_beta);
                    gt += ft;
                }
            }
            g_tau[0] += gt;
            total
        })
    }
}

impl<F: DispersionFamily> TermHessians for DispersionGlm<F> {
    /// (H_i v)_β = (f_ηη x̃_iᵀv_β + f_ητ v_τ) x̃_i, (H_i v)_τ = f_ητ x̃_iᵀv_β + f_ττ v_τ.
    fn hessian_vector_products(&self, theta: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]) {
        let y = self.design.y();
        let p = self.design.dim();
        let (beta, at) = self.split(theta);
        let (v_beta, v_tau) = (&v[..p], v[p]);
        let f = &self.family;
        let mut curv = [(0.0, 0.0, 0.0); BLOCK];
        with_rows!(self.design, r => {
            for (idx, ob) in indices.chunks(BLOCK).zip(out.chunks_mut(BLOCK * (p + 1))) {
                let (mut eta, mut yb) = ([0.0; BLOCK], [0.0; BLOCK]);
                let rows = idx.iter().map(|&i| i as usize);
                let n = block_predictors(&r, beta, y, rows, &mut eta, &mut yb);
                f.curvatures_block(&at, &yb[..n], &eta[..n], &mut curv[..n]);
                let each = idx.iter().zip(ob.chunks_exact_mut(p + 1)).zip(&curv[..n]);
                for ((&i, o), &(eta_eta, eta_tau, tau_tau)) in each {
                    let i = i as usize;
                    let xv = r.dot(i, v_beta);
                    r.set_row(i, eta_eta * xv + eta_tau * v_tau, &mut o[..p]);
                    o[p] = eta_tau * xv + tau_tau * v_tau;
                }
            }
        })
    }

    fn sum_hessian(&self, theta: &[f64], indices: &[u32], hess: &mut [f64]) {
        let y = self.design.y();
        let p = self.design.dim();
        let d = p + 1;
        let (beta, at) = self.split(theta);
        let f = &self.family;
        let mut row = vec![0.0; p];
        with_rows!(self.design, r => {
            for &i in indices {
                let i = i as usize;
                let h = f.derivatives(&at, y[i], r.predictor(i, beta));
                r.set_row(i, 1.0, &mut row);
                for (j, &xj) in row.iter().enumerate() {
                    let line = &mut hess[j * d..(j + 1) * d];
                    let w = h.eta_eta * xj;
                    for (hk, &xk) in line[..p].iter_mut().zip(&row) {
                        *hk += w * xk;
                    }
                    line[p] += h.eta_tau * xj;
                    hess[p * d + j] += h.eta_tau * xj;
                }
                hess[p * d + p] += h.tau_tau;
            }
        })
    }
}

/// The index paths of `Glm`'s rank-one engine (four rows interleaved, prefetched, AVX2 when the
/// CPU has it) for the predictors and the row sums; the family's batch function for the scores
/// ([`DispersionFamily::value_and_scores_batch`]), datum by datum for the second derivatives
/// (only the control variates' cache misses ask for those).
impl<F: DispersionFamily> DispersionPredictor for DispersionGlm<F> {
    fn dispersion_predictors(&self, theta: &[f64], indices: &[u32], eta: &mut [f64]) {
        let beta = &theta[..self.design.dim()];
        let eta = &mut eta[..indices.len()];
        with_rows!(self.design, r => wide::gathered_etas(&r, beta, indices, eta, None))
    }

    fn predictor_scores_at(
        &self, tau: f64, indices: &[u32], eta: &[f64], out: &mut [(f64, f64, f64)],
    ) {
        /// Responses gathered per chunk (on the stack).
        const CHUNK: usize = 256;
        let (y, at, f) = (self.design.y(), self.family.at(tau), &self.family);
        let mut yb = [0.0; CHUNK];
        let chunks = indices.chunks(CHUNK).zip(eta.chunks(CHUNK)).zip(out.chunks_mut(CHUNK));
        for ((idx, e), o) in chunks {
            for (v, &i) in yb.iter_mut().zip(idx) {
                *v = y[i as usize];
            }
            let n = idx.len();
            f.value_and_scores_batch(&at, &yb[..n], &e[..n], &mut o[..n]);
        }
    }

    fn predictor_derivatives_at(
        &self, tau: f64, indices: &[u32], eta: &[f64], out: &mut [PredictorDerivatives],
    ) {
        let (y, at, f) = (self.design.y(), self.family.at(tau), &self.family);
        for ((o, &i), &e) in out.iter_mut().zip(indices).zip(eta) {
            *o = f.derivatives(&at, y[i as usize], e);
        }
    }

    fn add_weighted_predictor_rows(&self, indices: &[u32], weights: &[f64], out: &mut [f64]) {
        let n = weights.len().min(indices.len());
        let out = &mut out[..self.design.dim()];
        with_rows!(self.design, r => wide::add_weighted_rows(&r, &indices[..n], &weights[..n], out))
    }
}

impl<F: DispersionFamily> LogPrior for DispersionGlm<F> {
    fn log_prior(&self, theta: &[f64]) -> f64 {
        self.prior.log_density(theta)
    }

    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.prior.log_density_grad(theta, grad)
    }
}

impl<F: DispersionFamily> LogPriorHessian for DispersionGlm<F> {
    fn add_log_prior_hessian(&self, _theta: &[f64], hess: &mut [f64]) {
        self.prior.add_hessian(self.design.dim() + 1, hess);
    }
}

/// ∇² log p = −I/s²: κ = 1/s², constant.
impl<F: DispersionFamily> LogPriorCurvature for DispersionGlm<F> {
    fn prior_curvature_bound(&self) -> f64 {
        self.prior.precision()
    }

    fn prior_hessian_is_constant(&self) -> bool {
        true
    }
}

/// The design's column names, then the family's name of τ.
impl<F: DispersionFamily> ParameterNames for DispersionGlm<F> {
    fn parameter_names(&self) -> Vec<String> {
        let mut names = self.design.column_names();
        names.push(self.family.parameter_name().to_string());
        names
    }
}
