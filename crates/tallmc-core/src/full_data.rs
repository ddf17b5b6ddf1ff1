//! Deterministic full-data passes: Σ_{i<N} ℓ_i(θ), its gradient and Hessian, on all cores.
//!
//! The index range 0..N is cut into fixed chunks of [`FullData::CHUNK`] rows (the chunking
//! depends only on N, never on the number of threads). Each chunk's partial sum is computed —
//! in parallel with rayon, or sequentially — into its own slot of a buffer owned by the
//! evaluator, and the partial sums are then added in chunk order. The result is therefore
//! bit-identical whatever the thread count, so the same seed gives the same draws on a laptop
//! and on a server.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::shard_passes::{PassKind, ShardPasses, reduce_on_shards};
pub use crate::shards::Parallelism;
use crate::shards::{ShardLayout, reduce_chunks, reduce_sharded};
use crate::{LogPrior, TermGradients, TermHessians, Terms};

/// Rows evaluated by full-data passes in this process (every [`FullData`] pass adds its rows,
/// chunk by chunk, whichever model or thread). Nothing reads it to compute: it is there so a
/// front end can show progress through a setup made of passes over the data.
static ROWS_EVALUATED: AtomicU64 = AtomicU64::new(0);

/// Rows evaluated so far by full-data passes in this process (a monotone progress counter:
/// the difference between two readings, divided by N, is the number of passes in between).
pub fn rows_evaluated() -> u64 {
    ROWS_EVALUATED.load(Ordering::Relaxed)
}

/// Counts `hi − lo` rows as evaluated.
#[inline]
fn count_rows(lo: impl Into<u64>, hi: impl Into<u64>) {
    count_rows_evaluated(hi.into() - lo.into());
}

/// Adds `rows` to [`rows_evaluated`]: for passes over the data made outside [`FullData`] (the
/// control variates' construction pass).
#[inline]
pub fn count_rows_evaluated(rows: u64) {
    ROWS_EVALUATED.fetch_add(rows, Ordering::Relaxed);
}

/// A reusable evaluator of full-data sums with its own scratch space.
///
/// The rows are reduced per shard of the model's [`ShardLayout`] (one shard unless the model
/// says otherwise, [`Terms::shard_layout`]) in chunks of [`FullData::CHUNK`] rows, chunk sums
/// added in order within a shard and shard partials in shard order ([`reduce_sharded`]).
///
/// Cost: every call evaluates all N terms (and gradients / Hessians when asked).
#[derive(Debug, Clone)]
pub struct FullData {
    layout: ShardLayout,
    /// The reduction's chunks of [`FullData::CHUNK`] rows, made once.
    chunks: Vec<(usize, u32, u32)>,
    dim: usize,
    parallelism: Parallelism,
    partials: Vec<f64>,
    /// One partial result (1 + d numbers).
    total: Vec<f64>,
}

impl FullData {
    /// Rows per chunk of the deterministic reduction.
    pub const CHUNK: usize = 4096;

    /// An evaluator for a model with `n` terms (one shard) and dimension `dim`.
    pub fn new(n: usize, dim: usize, parallelism: Parallelism) -> Self {
        Self::with_layout(ShardLayout::single(n), dim, parallelism)
    }

    /// An evaluator over the shards of `layout`, for dimension `dim`.
    pub fn with_layout(layout: ShardLayout, dim: usize, parallelism: Parallelism) -> Self {
        let chunks = layout.chunks(Self::CHUNK);
        let partials = vec![0.0; (chunks.len() + 1) * (dim + 1)];
        Self { layout, chunks, dim, parallelism, partials, total: vec![0.0; dim + 1] }
    }

    /// An evaluator sized for `model`, over its shards.
    pub fn for_model<M: Terms + ?Sized>(model: &M, parallelism: Parallelism) -> Self {
        let layout =
            model.shard_layout().cloned().unwrap_or_else(|| ShardLayout::single(model.num_terms()));
        Self::with_layout(layout, model.dim(), parallelism)
    }

    /// Number of terms N one pass evaluates.
    pub fn len(&self) -> usize {
        self.layout.num_rows()
    }

    /// Whether N = 0.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The shards the passes reduce over.
    pub fn layout(&self) -> &ShardLayout {
        &self.layout
    }

    /// Rows per chunk of [`FullData::hessian`]: at least [`FullData::CHUNK`], and at most 64
    /// chunks' worth of N (each chunk holds a d × d partial), fixed by N alone.
    pub fn hessian_chunk(n: usize) -> usize {
        Self::CHUNK.max(n.div_ceil(64))
    }

    /// A pass whose shards are elsewhere: their partials added in shard order (NaN, and the
    /// failure kept by `passes`, if it fails). Counts N rows as evaluated.
    fn on_shards(&self, passes: &dyn ShardPasses, theta: &[f64], kind: PassKind, out: &mut [f64]) {
        // A failure leaves NaN in `out` and is kept by `passes` for the caller to report.
        let _ = reduce_on_shards(passes, theta, kind, out);
        count_rows(0u32, self.len() as u32);
    }

    /// Σ_{i<N} ℓ_i(θ). Cost: N term evaluations.
    pub fn log_likelihood<M: Terms + ?Sized>(&mut self, model: &M, theta: &[f64]) -> f64 {
        debug_assert_eq!(model.num_terms(), self.len());
        let mut out = [0.0];
        if let Some(passes) = model.shard_passes() {
            self.on_shards(passes, theta, PassKind::Value, &mut out);
            return out[0];
        }
        let partial = |lo: u32, hi: u32, slot: &mut [f64]| {
            slot[0] = model.sum_log_terms_range(theta, lo, hi);
            count_rows(lo, hi);
        };
        reduce_chunks(&self.chunks, self.parallelism, partial, &mut out, &mut self.partials);
        out[0]
    }

    /// Σ_{i<N} ℓ_i(θ), **overwriting** `grad` with Σ_{i<N} ∇ℓ_i(θ).
    /// Cost: N terms and N gradients.
    pub fn log_likelihood_grad<M: TermGradients + ?Sized>(
        &mut self, model: &M, theta: &[f64], grad: &mut [f64],
    ) -> f64 {
        debug_assert_eq!(model.num_terms(), self.len());
        let d = self.dim;
        if let Some(passes) = model.shard_passes() {
            let mut out = std::mem::take(&mut self.total);
            self.on_shards(passes, theta, PassKind::Gradient, &mut out[..d + 1]);
            grad[..d].copy_from_slice(&out[1..d + 1]);
            let value = out[0];
            self.total = out;
            return value;
        }
        let partial = |lo: u32, hi: u32, slot: &mut [f64]| {
            let (v, g) = slot.split_first_mut().expect("slot has d + 1 entries");
            g.fill(0.0);
            *v = model.sum_log_terms_grad_range(theta, lo, hi, g);
            count_rows(lo, hi);
        };
        let out = &mut self.total[..d + 1];
        reduce_chunks(&self.chunks, self.parallelism, partial, out, &mut self.partials);
        grad[..d].copy_from_slice(&out[1..]);
        out[0]
    }

    /// log p(θ) + Σ_{i<N} ℓ_i(θ). Cost: N term evaluations.
    pub fn log_posterior<M: Terms + LogPrior + ?Sized>(&mut self, model: &M, theta: &[f64]) -> f64 {
        let lp = model.log_prior(theta);
        if lp == f64::NEG_INFINITY {
            return lp;
        }
        lp + self.log_likelihood(model, theta)
    }

    /// log p(θ) + Σ ℓ_i(θ), **overwriting** `grad` with its gradient. Cost: N terms and gradients.
    pub fn log_posterior_grad<M: TermGradients + LogPrior + ?Sized>(
        &mut self, model: &M, theta: &[f64], grad: &mut [f64],
    ) -> f64 {
        let ll = self.log_likelihood_grad(model, theta, grad);
        ll + model.log_prior_grad(theta, grad)
    }

    /// **Overwrites** `out` (length d) with Σ_{i<N} ∇²ℓ_i(θ)·v, with the same deterministic
    /// reduction as the gradient. Cost: N Hessian(-vector) evaluations. On a model whose
    /// shards are elsewhere, (Σ∇²ℓ_i)·v from one Hessian pass (the same number up to
    /// rounding: the products are summed after the Hessians, not before).
    pub fn hessian_vector<M: TermHessians + ?Sized>(
        &mut self, model: &M, theta: &[f64], v: &[f64], out: &mut [f64],
    ) {
        debug_assert_eq!(model.num_terms(), self.len());
        let d = self.dim;
        if model.shard_passes().is_some() {
            let mut hess = vec![0.0; d * d];
            self.hessian(model, theta, &mut hess);
            for (o, row) in out[..d].iter_mut().zip(hess.chunks_exact(d)) {
                *o = row.iter().zip(v).map(|(h, v)| h * v).sum();
            }
            return;
        }
        let partial = |lo: u32, hi: u32, slot: &mut [f64]| {
            slot.fill(0.0);
            model.sum_hessian_vector_range(theta, lo, hi, v, slot);
            count_rows(lo, hi);
        };
        reduce_chunks(&self.chunks, self.parallelism, partial, &mut out[..d], &mut self.partials);
    }

    /// **Overwrites** `hess` (d × d, row-major) with Σ_{i<N} ∇²ℓ_i(θ). Cost: N Hessian
    /// evaluations. Not a hot-path method: it allocates its own partial sums, in chunks of
    /// [`FullData::hessian_chunk`] rows (at most 64 chunks per shard's worth of N).
    pub fn hessian<M: TermHessians + ?Sized>(&self, model: &M, theta: &[f64], hess: &mut [f64]) {
        let d = self.dim;
        if let Some(passes) = model.shard_passes() {
            self.on_shards(passes, theta, PassKind::Hessian, &mut hess[..d * d]);
            return;
        }
        let partial = |lo: u32, hi: u32, slot: &mut [f64]| {
            slot.fill(0.0);
            model.sum_hessian_range(theta, lo, hi, slot);
            count_rows(lo, hi);
        };
        let chunk = Self::hessian_chunk(self.len());
        let out = &mut hess[..d * d];
        reduce_sharded(&self.layout, chunk, self.parallelism, partial, out, &mut Vec::new());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ℓ_i(θ) = −(θ₀ − a_i)²/2 − θ₁ a_i with awkward a_i so that summation order matters.
    struct Awkward(Vec<f64>);

    impl Terms for Awkward {
        fn dim(&self) -> usize {
            2
        }
        fn num_terms(&self) -> usize {
            self.0.len()
        }
        fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
            for (o, &i) in out.iter_mut().zip(indices) {
                let a = self.0[i as usize];
                *o = -0.5 * (theta[0] - a).powi(2) - theta[1] * a;
            }
        }
    }

    impl TermGradients for Awkward {
        fn log_terms_grad_sum(
            &self, theta: &[f64], indices: &[u32], out: &mut [f64], g: &mut [f64],
        ) -> f64 {
            self.log_terms(theta, indices, out);
            for &i in indices {
                let a = self.0[i as usize];
                g[0] -= theta[0] - a;
                g[1] -= a;
            }
            out.iter().sum()
        }
        fn log_terms_grads(&self, theta: &[f64], idx: &[u32], out: &mut [f64], g: &mut [f64]) {
            self.log_terms(theta, idx, out);
            for (row, &i) in g.chunks_mut(2).zip(idx) {
                let a = self.0[i as usize];
                row[0] = -(theta[0] - a);
                row[1] = -a;
            }
        }
    }

    /// ∇²ℓ_i = diag(−1, 0).
    impl TermHessians for Awkward {
        fn hessian_vector_products(&self, _t: &[f64], idx: &[u32], v: &[f64], out: &mut [f64]) {
            for row in out.chunks_mut(2).take(idx.len()) {
                row[0] = -v[0];
                row[1] = 0.0;
            }
        }
        fn sum_hessian(&self, _t: &[f64], idx: &[u32], hess: &mut [f64]) {
            hess[0] -= idx.len() as f64;
        }
    }

    #[test]
    fn hessian_vector_pass_matches_the_hessian() {
        let m = awkward(10_001);
        let theta = [0.3, -1.7];
        let v = [2.0, 5.0];
        let mut fd = FullData::for_model(&m, Parallelism::Rayon);
        let mut hv = [9.0; 2];
        fd.hessian_vector(&m, &theta, &v, &mut hv);
        let mut h = [0.0; 4];
        fd.hessian(&m, &theta, &mut h);
        assert_eq!(hv, [h[0] * v[0] + h[1] * v[1], h[2] * v[0] + h[3] * v[1]]);
        assert_eq!(hv, [-20_002.0, 0.0]);
    }

    fn awkward(n: usize) -> Awkward {
        Awkward(
            (0..n).map(|i| ((i * 7919) % 1000) as f64 * 1e-3 + 1e6 * ((i % 3) as f64)).collect(),
        )
    }

    #[test]
    fn parallel_and_sequential_passes_are_bit_identical() {
        let m = awkward(50_001);
        let theta = [0.3, -1.7];
        let mut seq = FullData::for_model(&m, Parallelism::Sequential);
        let mut par = FullData::for_model(&m, Parallelism::Rayon);
        assert_eq!(
            seq.log_likelihood(&m, &theta).to_bits(),
            par.log_likelihood(&m, &theta).to_bits()
        );
        let (mut g1, mut g2) = ([9.0; 2], [9.0; 2]);
        let v1 = seq.log_likelihood_grad(&m, &theta, &mut g1);
        let v2 = par.log_likelihood_grad(&m, &theta, &mut g2);
        assert_eq!(v1.to_bits(), v2.to_bits());
        assert_eq!(g1.map(f64::to_bits), g2.map(f64::to_bits));
        // Different thread counts give the same bits too.
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let v3 = pool.install(|| par.log_likelihood_grad(&m, &theta, &mut g2));
        assert_eq!(v1.to_bits(), v3.to_bits());
    }

    #[test]
    fn full_pass_equals_direct_sum() {
        let m = awkward(10_000);
        let theta = [0.3, -1.7];
        let idx: Vec<u32> = (0..10_000).collect();
        let mut out = vec![0.0; 10_000];
        m.log_terms(&theta, &idx, &mut out);
        let direct: f64 = out.iter().sum();
        let mut fd = FullData::for_model(&m, Parallelism::Rayon);
        let v = fd.log_likelihood(&m, &theta);
        assert!((v - direct).abs() <= 1e-12 * direct.abs(), "{v} vs {direct}");
    }
}
