//! A thinned view of a tall model, for warm-starting Newton's method: every k-th term, each
//! weighted by N/m so the view's log-likelihood has the full one's scale.
//!
//! With the m = ⌈N/k⌉ terms i = 0, k, 2k, … the view's log-likelihood is
//! (N/m)·Σ_{j<m} ℓ_{jk}(θ), an unbiased-in-spirit stand-in for Σ_{i<N} ℓ_i(θ) whose mode lies
//! within O(√(N/m)) posterior standard deviations of the full mode. Newton's method converges
//! quadratically, so starting the full-data iterations there saves most of their passes over
//! the data; the answer is still the full-data mode (the full iterations decide when to stop).
//! Evenly spaced terms, not the first m, so a file sorted by some column still gives a
//! representative start.

use tallmc_core::{LogPrior, LogPriorHessian, TermGradients, TermHessians, Terms};

/// Indices mapped per stack buffer.
const MAP: usize = 256;

/// Every `stride`-th term of `model`, scaled by `scale` = N/m.
pub(crate) struct Thinned<'a, M: ?Sized> {
    model: &'a M,
    stride: u32,
    len: usize,
    scale: f64,
}

impl<'a, M: Terms + ?Sized> Thinned<'a, M> {
    /// About `rows` evenly spaced terms of `model` (all of them if `rows ≥ N`).
    pub(crate) fn new(model: &'a M, rows: usize) -> Self {
        let n = model.num_terms();
        let (stride, len) = Self::stride_and_len(n, rows);
        Self { model, stride, len, scale: n as f64 / len.max(1) as f64 }
    }

    /// The view's stride and number of terms for a model of `n` terms and about `rows` rows:
    /// the rows are 0, stride, 2·stride, … below n.
    pub(crate) fn stride_and_len(n: usize, rows: usize) -> (u32, usize) {
        let stride = (n / rows.max(1)).clamp(1, u32::MAX as usize);
        let len = if n == 0 { 0 } else { (n - 1) / stride + 1 };
        (stride as u32, len)
    }

    /// Calls `f(mapped, k0)` for consecutive pieces of `indices`, mapped to the model's
    /// indices, where `k0` is the position of the piece's first index.
    fn mapped(&self, indices: &[u32], mut f: impl FnMut(&[u32], usize)) {
        let mut buf = [0u32; MAP];
        for (c, piece) in indices.chunks(MAP).enumerate() {
            for (b, &i) in buf.iter_mut().zip(piece) {
                *b = i * self.stride;
            }
            f(&buf[..piece.len()], c * MAP);
        }
    }
}

impl<M: Terms + ?Sized> Terms for Thinned<'_, M> {
    fn dim(&self) -> usize {
        self.model.dim()
    }

    fn num_terms(&self) -> usize {
        self.len
    }

    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        self.mapped(indices, |idx, k0| {
            let out = &mut out[k0..k0 + idx.len()];
            self.model.log_terms(theta, idx, out);
            out.iter_mut().for_each(|v| *v *= self.scale);
        });
    }
}

impl<M: TermGradients + ?Sized> TermGradients for Thinned<'_, M> {
    fn log_terms_grad_sum(
        &self, theta: &[f64], indices: &[u32], out: &mut [f64], grad_sum: &mut [f64],
    ) -> f64 {
        let mut grad = vec![0.0; self.dim()];
        let mut total = 0.0;
        self.mapped(indices, |idx, k0| {
            let out = &mut out[k0..k0 + idx.len()];
            total += self.model.log_terms_grad_sum(theta, idx, out, &mut grad);
            out.iter_mut().for_each(|v| *v *= self.scale);
        });
        for (s, g) in grad_sum.iter_mut().zip(&grad) {
            *s += self.scale * g;
        }
        self.scale * total
    }

    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        let d = self.dim();
        self.mapped(indices, |idx, k0| {
            let out = &mut out[k0..k0 + idx.len()];
            let grads = &mut grads[k0 * d..(k0 + idx.len()) * d];
            self.model.log_terms_grads(theta, idx, out, grads);
            out.iter_mut().chain(grads.iter_mut()).for_each(|v| *v *= self.scale);
        });
    }
}

impl<M: TermHessians + ?Sized> TermHessians for Thinned<'_, M> {
    fn hessian_vector_products(&self, theta: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]) {
        let d = self.dim();
        self.mapped(indices, |idx, k0| {
            let out = &mut out[k0 * d..(k0 + idx.len()) * d];
            self.model.hessian_vector_products(theta, idx, v, out);
            out.iter_mut().for_each(|v| *v *= self.scale);
        });
    }

    fn sum_hessian(&self, theta: &[f64], indices: &[u32], hess: &mut [f64]) {
        let mut sum = vec![0.0; hess.len()];
        self.mapped(indices, |idx, _| self.model.sum_hessian(theta, idx, &mut sum));
        for (h, s) in hess.iter_mut().zip(&sum) {
            *h += self.scale * s;
        }
    }
}

impl<M: LogPrior + ?Sized> LogPrior for Thinned<'_, M> {
    fn log_prior(&self, theta: &[f64]) -> f64 {
        self.model.log_prior(theta)
    }

    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.model.log_prior_grad(theta, grad)
    }
}

impl<M: LogPriorHessian + ?Sized> LogPriorHessian for Thinned<'_, M> {
    fn add_log_prior_hessian(&self, theta: &[f64], hess: &mut [f64]) {
        self.model.add_log_prior_hessian(theta, hess);
    }
}
