//! Model traits: per-datum terms ℓ_i(θ), their derivatives and bounds, and the prior.
//!
//! All evaluation is *batched*: a kernel hands a slice of indices and caller-owned buffers, so a
//! model can vectorize and nothing allocates in the hot loop. Implementations may assume the
//! buffers have the documented lengths (θ has [`Terms::dim`] entries, per-term outputs have one
//! entry per index, gradient buffers `dim()` entries, per-term gradient buffers
//! `indices.len() * dim()` entries in row-major order) and panic when they do not: buffer sizes
//! are a contract between a kernel and a model, not user input. User input is validated where it
//! enters (model constructors, kernel `init`).
//!
//! Models take `&self` and are `Sync`, so one model is shared by all chains.

/// Number of indices processed per stack-allocated chunk by the provided methods.
const CHUNK: usize = 256;

/// Calls `f` on the indices start, start + 1, …, end − 1 in order, in consecutive chunks of at
/// most `N` written into a stack buffer: how the provided range methods reuse the index-batch
/// methods.
fn for_index_chunks<const N: usize>(start: u32, end: u32, mut f: impl FnMut(&[u32])) {
    let mut idx = [0u32; N];
    let mut lo = start;
    while lo < end {
        let hi = end.min(lo.saturating_add(N as u32));
        let k = (hi - lo) as usize;
        for (j, slot) in idx[..k].iter_mut().enumerate() {
            *slot = lo + j as u32;
        }
        f(&idx[..k]);
        lo = hi;
    }
}

/// Per-datum log-likelihood terms ℓ_i(θ), i < N.
pub trait Terms: Sync {
    /// Dimension d of θ.
    fn dim(&self) -> usize;

    /// Number N of per-datum terms.
    fn num_terms(&self) -> usize;

    /// Writes `out[k] = ℓ_{indices[k]}(θ)` for every k. Cost: `indices.len()` term evaluations.
    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]);

    /// Returns Σ_k ℓ_{indices\[k\]}(θ). Cost: `indices.len()` term evaluations.
    ///
    /// Provided in terms of [`Terms::log_terms`] with a stack buffer; models override it to
    /// skip storing the terms.
    fn sum_log_terms(&self, theta: &[f64], indices: &[u32]) -> f64 {
        let mut buf = [0.0; CHUNK];
        let mut total = 0.0;
        for chunk in indices.chunks(CHUNK) {
            let out = &mut buf[..chunk.len()];
            self.log_terms(theta, chunk, out);
            total += out.iter().sum::<f64>();
        }
        total
    }

    /// Returns Σ_{start ≤ i < end} ℓ_i(θ): the contiguous form used by full-data passes.
    /// Cost: `end − start` term evaluations.
    fn sum_log_terms_range(&self, theta: &[f64], start: u32, end: u32) -> f64 {
        let mut total = 0.0;
        for_index_chunks::<CHUNK>(start, end, |idx| total += self.sum_log_terms(theta, idx));
        total
    }

    /// How the rows are cut into shards (the files of a Parquet directory): full-data passes
    /// reduce shard by shard and add the shards' partial sums in order
    /// ([`crate::shards::reduce_sharded`]), so a shard reduced where it lives gives the same
    /// bits. `None` (the default): one shard.
    fn shard_layout(&self) -> Option<&crate::shards::ShardLayout> {
        None
    }

    /// Where the full-data passes run when the rows are not in this process (a cluster's
    /// workers hold the shards): [`FullData`](crate::FullData)'s passes and the control
    /// variates' construction then add the shards' partial sums
    /// ([`crate::shard_passes`]) instead of reducing rows here. `None` (the default): the
    /// rows are here.
    fn shard_passes(&self) -> Option<&dyn crate::shard_passes::ShardPasses> {
        None
    }

    /// The rows' service when they live elsewhere and only the rows a kernel declared ahead
    /// are here ([`crate::row_service`]); such a model panics on a row nobody declared.
    /// `None` (the default): every row is here.
    fn row_service(&self) -> Option<&dyn crate::row_service::RowService> {
        None
    }

    /// The model as a [`LinearPredictor`], when its terms have that rank-one form: code that is
    /// generic over [`Terms`] can then use the structure where it pays (the whitened
    /// coordinates of `tallmc-samplers` precompute the rows Lᵀx_i once and take every
    /// per-datum gradient in O(d) instead of O(d²)). `None` (the default) leaves such code on
    /// its general path, which is always correct.
    ///
    /// A model that implements [`LinearPredictor`] overrides it with `Some(self)`. Wrappers
    /// that count evaluations do not: calls through the returned view would bypass their
    /// counters.
    fn as_linear_predictor(&self) -> Option<&dyn LinearPredictor> {
        None
    }
}

/// Per-datum gradients ∇ℓ_i(θ).
pub trait TermGradients: Terms {
    /// Writes `out[k] = ℓ_{indices[k]}(θ)` and **adds** Σ_k ∇ℓ_{indices\[k\]}(θ) into `grad_sum`.
    /// Returns Σ_k ℓ_{indices\[k\]}(θ). Cost: `indices.len()` terms and gradients.
    fn log_terms_grad_sum(
        &self, theta: &[f64], indices: &[u32], out: &mut [f64], grad_sum: &mut [f64],
    ) -> f64;

    /// Writes `out[k] = ℓ_{indices[k]}(θ)` and **overwrites** row k of `grads`
    /// (`indices.len() × dim()`, row-major) with ∇ℓ_{indices\[k\]}(θ).
    /// Cost: `indices.len()` terms and gradients.
    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]);

    /// **Adds** Σ_{start ≤ i < end} ∇ℓ_i(θ) into `grad_sum` and returns Σ ℓ_i(θ) over the range.
    /// Cost: `end − start` terms and gradients.
    fn sum_log_terms_grad_range(
        &self, theta: &[f64], start: u32, end: u32, grad_sum: &mut [f64],
    ) -> f64 {
        let mut buf = [0.0; CHUNK];
        let mut total = 0.0;
        for_index_chunks::<CHUNK>(start, end, |idx| {
            total += self.log_terms_grad_sum(theta, idx, &mut buf[..idx.len()], grad_sum);
        });
        total
    }
}

/// Per-datum Hessians ∇²ℓ_i(θ), used to build second-order control variates and Laplace
/// approximations.
///
/// For generalized linear models ∇²ℓ_i = w_i x_i x_iᵀ, so a Hessian-vector product costs O(d);
/// implementations must exploit such structure rather than form d×d matrices per datum.
pub trait TermHessians: TermGradients {
    /// **Overwrites** row k of `out` (`indices.len() × dim()`, row-major) with
    /// ∇²ℓ_{indices\[k\]}(θ) · v. Cost: `indices.len()` Hessian evaluations.
    fn hessian_vector_products(&self, theta: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]);

    /// **Adds** Σ_k ∇²ℓ_{indices\[k\]}(θ) into `hess` (d × d, row-major, symmetric).
    /// Cost: `indices.len()` Hessian evaluations.
    fn sum_hessian(&self, theta: &[f64], indices: &[u32], hess: &mut [f64]);

    /// **Adds** Σ_{start ≤ i < end} ∇²ℓ_i(θ)·v into `out` (length d). Cost: `end − start` Hessian
    /// evaluations.
    ///
    /// Provided through [`TermHessians::hessian_vector_products`] on blocks of rows, with a
    /// per-thread scratch buffer (allocated once per thread and dimension); generalized linear
    /// models override it with Σ φ_i″(η_i)(x_iᵀv) x_i, which needs no scratch.
    fn sum_hessian_vector_range(
        &self, theta: &[f64], start: u32, end: u32, v: &[f64], out: &mut [f64],
    ) {
        const ROWS: usize = 64;
        thread_local! {
            static SCRATCH: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let d = self.dim();
        SCRATCH.with(|cell| {
            let mut scratch = cell.borrow_mut();
            if scratch.len() < ROWS * d {
                scratch.resize(ROWS * d, 0.0);
            }
            for_index_chunks::<ROWS>(start, end, |idx| {
                let rows = &mut scratch[..idx.len() * d];
                self.hessian_vector_products(theta, idx, v, rows);
                for row in rows.chunks_exact(d) {
                    for (o, r) in out.iter_mut().zip(row) {
                        *o += r;
                    }
                }
            });
        });
    }

    /// **Adds** Σ_{start ≤ i < end} ∇²ℓ_i(θ) into `hess`. Cost: `end − start` Hessian evaluations.
    fn sum_hessian_range(&self, theta: &[f64], start: u32, end: u32, hess: &mut [f64]) {
        for_index_chunks::<CHUNK>(start, end, |idx| self.sum_hessian(theta, idx, hess));
    }
}

/// A minibatch of data points gathered for repeated use: its indices, in order, and — when the
/// model makes one ([`LinearPredictor::gather_rows`]) — the model's own copy of the points,
/// laid out as the model likes. A kernel that reuses one minibatch for many calls (an SG-HMC
/// trajectory on one minibatch, an HMC-ECS trajectory on one subsample u) gathers it once, so
/// that the calls read `len` contiguous rows instead of scattered ones; when only a few points
/// change (HMC-ECS refreshes one block of u per iteration),
/// [`LinearPredictor::regather_rows`] replaces just those. Reused across gathers (it only
/// grows).
///
/// The gathered methods of [`LinearPredictor`] read a batch; their provided versions read
/// only `indices` (through the index methods), so a model that gathers nothing is still
/// correct, only not faster.
#[derive(Debug, Default)]
pub struct RowBatch {
    /// The data points' indices, in order (always filled).
    pub indices: Vec<u32>,
    /// The points' covariate values when `copied` (for a GLM: the rows of the raw covariates,
    /// one after the other).
    pub values: Vec<f64>,
    /// The points' responses, in order, when `copied`.
    pub responses: Vec<f64>,
    /// Whether `values` and `responses` hold the model's copy of the points at `indices`.
    pub copied: bool,
}

/// A clone keeps the reserved room of each buffer (a derived clone would keep only the lengths),
/// so that a cloned engine's batches do not allocate at their first gather.
impl Clone for RowBatch {
    fn clone(&self) -> Self {
        fn with_room<T: Clone>(v: &[T], room: usize) -> Vec<T> {
            let mut copy = Vec::with_capacity(room.max(v.len()));
            copy.extend_from_slice(v);
            copy
        }
        Self {
            indices: with_room(&self.indices, self.indices.capacity()),
            values: with_room(&self.values, self.values.capacity()),
            responses: with_room(&self.responses, self.responses.capacity()),
            copied: self.copied,
        }
    }
}

impl RowBatch {
    /// How many points the batch holds.
    pub fn len(&self) -> usize {
        self.indices.len()
    }

    /// Whether the batch holds no point.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// Makes room for batches of up to `points` points without allocating: the indices here,
    /// and the copy of a model that sizes its buffers by [`RowBatch::capacity`] (as the GLMs
    /// do), at its next gather.
    pub fn reserve(&mut self, points: usize) {
        self.indices.reserve(points.saturating_sub(self.indices.len()));
    }

    /// How many points the batch holds without allocating its indices.
    pub fn capacity(&self) -> usize {
        self.indices.capacity()
    }

    /// Sets the batch's indices to `indices` and marks it as holding no copy (what the
    /// provided [`LinearPredictor::gather_rows`] does; a model that copies sets
    /// [`RowBatch::copied`] after filling its copy).
    pub fn set_indices(&mut self, indices: &[u32]) {
        self.indices.clear();
        self.indices.extend_from_slice(indices);
        self.copied = false;
    }
}

/// Terms that depend on θ through one linear predictor per datum (a generalized linear form):
///
/// ```text
/// ℓ_i(θ) = φ_i(η_i),   η_i = x_iᵀθ,   x_i ∈ ℝ^d (d = [`Terms::dim`]),
/// ∇ℓ_i(θ) = φ_i′(η_i) x_i,   ∇²ℓ_i(θ) = φ_i″(η_i) x_i x_iᵀ.
/// ```
///
/// The rank-one structure lets an estimator keep per-datum *scalars* (η, φ, φ′, φ″) instead of
/// d-vectors or d×d matrices: a Taylor control variate around θ* for datum i needs only
/// η*_i = x_iᵀθ*, and a weighted sum of per-datum gradients Σ_k w_k ∇(·)_k is one call of
/// [`LinearPredictor::add_weighted_rows`]. Every method is O(d) per index (the derivative method
/// O(1)). Cost accounting belongs to the caller, who knows which of φ, φ′, φ″ it uses (see
/// `tallmc-estimators`).
pub trait LinearPredictor: Terms {
    /// **Overwrites** `eta[k]` with x_{indices\[k\]}ᵀθ.
    fn linear_predictors(&self, theta: &[f64], indices: &[u32], eta: &mut [f64]);

    /// **Overwrites** `phi[k]`, `d1[k]`, `d2[k]` with φ_i(η), φ_i′(η), φ_i″(η) at
    /// i = `indices[k]`, η = `eta[k]`.
    fn predictor_derivatives(
        &self, indices: &[u32], eta: &[f64], phi: &mut [f64], d1: &mut [f64], d2: &mut [f64],
    );

    /// **Adds** Σ_k `weights[k]` · x_{indices\[k\]} into `out` (length d).
    fn add_weighted_rows(&self, indices: &[u32], weights: &[f64], out: &mut [f64]);

    /// **Overwrites** `eta[k]` with x_{indices\[k\]}ᵀθ and `eta_other[k]` with
    /// x_{indices\[k\]}ᵀθ′ (`theta_other` = θ′): the two predictors a control-variate gradient
    /// needs (at θ and at the centre θ*). The values must equal two
    /// [`LinearPredictor::linear_predictors`] calls bit for bit; models override it to read each
    /// row once instead of twice.
    fn linear_predictor_pairs(
        &self, theta: &[f64], theta_other: &[f64], indices: &[u32], eta: &mut [f64],
        eta_other: &mut [f64],
    ) {
        self.linear_predictors(theta, indices, eta);
        self.linear_predictors(theta_other, indices, eta_other);
    }

    /// **Overwrites** `d1[k]` with φ_i′(η) and, when `d2` is given, `d2[k]` with φ_i″(η), at
    /// i = `indices[k]`, η = `eta[k]`: the derivatives a gradient needs, without the values
    /// φ_i(η) (for logistic regression φ needs a `log1p` that φ′ and φ″ do not). The numbers
    /// must equal those of [`LinearPredictor::predictor_derivatives`] bit for bit.
    ///
    /// Provided through [`LinearPredictor::predictor_derivatives`] on stack chunks; models
    /// override it to skip φ.
    fn predictor_scores(
        &self, indices: &[u32], eta: &[f64], d1: &mut [f64], mut d2: Option<&mut [f64]>,
    ) {
        const ROWS: usize = 64;
        let (mut phi, mut g, mut h) = ([0.0; ROWS], [0.0; ROWS], [0.0; ROWS]);
        for (c, idx) in indices.chunks(ROWS).enumerate() {
            let (lo, k) = (c * ROWS, idx.len());
            let e = &eta[lo..lo + k];
            self.predictor_derivatives(idx, e, &mut phi[..k], &mut g[..k], &mut h[..k]);
            d1[lo..lo + k].copy_from_slice(&g[..k]);
            if let Some(d2) = d2.as_deref_mut() {
                d2[lo..lo + k].copy_from_slice(&h[..k]);
            }
        }
    }

    /// **Adds** w · Σ_k (φ_i′(x_iᵀθ) − c_k) · x_i into `out`, at i = `indices[k]`, with
    /// w = `weight` and c = `offsets`: the minibatch gradient of a first-order control
    /// variate's differences, φ_i′(η*) being the offsets (see `tallmc_estimators`).
    ///
    /// Provided, on stack chunks of 64 indices, as [`LinearPredictor::linear_predictors`],
    /// [`LinearPredictor::predictor_scores`], the coefficients a_k = w·(φ_i′ − c_k) and
    /// [`LinearPredictor::add_weighted_rows`]. Models override it to read each row once (the
    /// dot product, the score and the row update while the row is in L1); an override must give
    /// the bits of that sequence run over the whole batch at once.
    fn add_score_differences(
        &self, theta: &[f64], indices: &[u32], offsets: &[f64], weight: f64, out: &mut [f64],
    ) {
        const ROWS: usize = 64;
        let (mut eta, mut a) = ([0.0; ROWS], [0.0; ROWS]);
        for (idx, c) in indices.chunks(ROWS).zip(offsets.chunks(ROWS)) {
            let k = idx.len();
            self.linear_predictors(theta, idx, &mut eta[..k]);
            self.predictor_scores(idx, &eta[..k], &mut a[..k], None);
            for (a, &c) in a[..k].iter_mut().zip(c) {
                *a = weight * (*a - c);
            }
            self.add_weighted_rows(idx, &a[..k], out);
        }
    }

    /// Fills `batch` with the data points `indices`: their indices and, in models that
    /// override this, the model's own copy of the points (contiguous, so that the gathered
    /// methods below stream it). The provided method records the indices only, and the
    /// provided gathered methods read the points through the index methods.
    ///
    /// An override must set `batch.indices` (e.g. by [`RowBatch::set_indices`]) and
    /// `batch.copied`, and override every gathered method that reads its copy, each with the
    /// bits of its index counterpart on `batch.indices`. It should size its buffers for
    /// [`RowBatch::capacity`] points: callers gather no index to allocate a batch up front.
    fn gather_rows(&self, indices: &[u32], batch: &mut RowBatch) {
        batch.set_indices(indices);
    }

    /// Replaces point `positions[j]` of `batch` (a [`LinearPredictor::gather_rows`] result)
    /// with data point `indices[j]`, for every j: a few new points in a batch that is
    /// otherwise reused. Positions must be below `batch.len()`.
    ///
    /// Provided: the indices in place when the batch holds no copy, else a whole
    /// [`LinearPredictor::gather_rows`] of the new indices (correct for any model; models that
    /// copy override it to copy only the new points).
    fn regather_rows(&self, positions: &[usize], indices: &[u32], batch: &mut RowBatch) {
        for (&k, &i) in positions.iter().zip(indices) {
            batch.indices[k] = i;
        }
        if batch.copied {
            let all = std::mem::take(&mut batch.indices);
            self.gather_rows(&all, batch);
        }
    }

    /// **Overwrites** `eta[k]` with x_kᵀθ for the k-th point of `batch`: the bits of
    /// [`LinearPredictor::linear_predictors`] on `batch.indices`.
    fn gathered_predictors(&self, batch: &RowBatch, theta: &[f64], eta: &mut [f64]) {
        self.linear_predictors(theta, &batch.indices, eta);
    }

    /// **Overwrites** `phi[k]`, `d1[k]`, `d2[k]` with φ_k(η), φ_k′(η), φ_k″(η) at η = `eta[k]`
    /// for the k-th point of `batch`: the bits of
    /// [`LinearPredictor::predictor_derivatives`] on `batch.indices`.
    fn gathered_derivatives(
        &self, batch: &RowBatch, eta: &[f64], phi: &mut [f64], d1: &mut [f64], d2: &mut [f64],
    ) {
        self.predictor_derivatives(&batch.indices, eta, phi, d1, d2);
    }

    /// **Overwrites** `eta[k]` with x_kᵀθ and `d1[k]` with φ_k′(x_kᵀθ) for the k-th point of
    /// `batch`: the bits of [`LinearPredictor::linear_predictors`] and
    /// [`LinearPredictor::predictor_scores`] on `batch.indices`.
    fn gathered_scores(&self, batch: &RowBatch, theta: &[f64], eta: &mut [f64], d1: &mut [f64]) {
        self.linear_predictors(theta, &batch.indices, eta);
        self.predictor_scores(&batch.indices, eta, d1, None);
    }

    /// [`LinearPredictor::add_score_differences`] for the points of `batch`, in their order,
    /// with the bits of that call on `batch.indices`.
    fn add_score_differences_gathered(
        &self, batch: &RowBatch, theta: &[f64], offsets: &[f64], weight: f64, out: &mut [f64],
    ) {
        self.add_score_differences(theta, &batch.indices, offsets, weight, out);
    }

    /// **Adds** Σ_k `weights[k]` · x_k over the points of `batch` into `out`: the bits of
    /// [`LinearPredictor::add_weighted_rows`] on `batch.indices`.
    fn add_weighted_gathered_rows(&self, batch: &RowBatch, weights: &[f64], out: &mut [f64]) {
        self.add_weighted_rows(&batch.indices, weights, out);
    }
}

/// A bound on the third derivative of every datum's function of its linear predictor:
///
/// ```text
/// c₃ ≥ sup_{i, η} |φ_i‴(η)|        (logistic: 1/(6√3); quadratic families: 0)
/// ```
///
/// With it, the gradient of a datum's second-order Taylor remainder around θ* is bounded
/// coordinate by coordinate, in any linear coordinates of θ (the rows x_i are then those of the
/// coordinates): with η = x_iᵀθ, η* = x_iᵀθ*,
///
/// ```text
/// ∂_j[ℓ_i − T₂ℓ_i](θ) = x_ij (φ_i′(η) − φ_i′(η*) − φ_i″(η*)(η − η*)),
/// |φ_i′(η) − φ_i′(η*) − φ_i″(η*)(η − η*)| ≤ (c₃/2)(η − η*)² ≤ (c₃/2)‖x_i‖₂² ‖θ − θ*‖₂²
/// ```
///
/// (Taylor's theorem with the Lagrange remainder, then Cauchy–Schwarz). Zig-Zag with Taylor
/// control variates draws datum i for coordinate j with probability ∝ |x_ij|‖x_i‖₂² from this.
pub trait BoundedPredictorThirdDerivative: LinearPredictor {
    /// c₃ (see the trait docs), finite and ≥ 0. O(1).
    fn predictor_third_derivative_bound(&self) -> f64;
}

/// A bound on how much any single term can change between two parameter values:
///
/// ```text
/// C(θ, θ′) ≥ max_i |ℓ_i(θ′) − ℓ_i(θ)|.
/// ```
///
/// The range R = 2C is what the concentration bounds of the confidence sampler need; exact
/// thinning samplers use the same constants. Not every model has one (a kernel that needs it
/// says so in its where-clause).
pub trait TermBounds: Terms {
    /// Returns C(θ, θ′) ≥ max_i |ℓ_i(θ′) − ℓ_i(θ)|, computed in O(d) (never O(N)).
    fn term_difference_bound(&self, theta: &[f64], theta_prime: &[f64]) -> f64;
}

/// A bound on the third derivatives of every term, which bounds the error of second-order Taylor
/// expansions (the proxies of the confidence sampler, Bardenet, Doucet & Holmes 2017, §7.2):
///
/// ```text
/// M₃ ≥ sup_θ max_i max_{j,k,l} |∂³ℓ_i(θ) / ∂θ_j ∂θ_k ∂θ_l|.
/// ```
///
/// **What it bounds.** With h = θ − θ* and the second-order expansion
/// q_i(θ) = ℓ_i(θ*) + ∇ℓ_i(θ*)ᵀh + ½ hᵀ∇²ℓ_i(θ*)h, Taylor's theorem with the Lagrange remainder
/// gives, for some ξ on the segment [θ*, θ],
///
/// ```text
/// |ℓ_i(θ) − q_i(θ)| = (1/6) |Σ_{j,k,l} ∂³ℓ_i(ξ)/∂θ_j∂θ_k∂θ_l · h_j h_k h_l| ≤ (M₃/6) ‖h‖₁³.
/// ```
///
/// For the difference of two points θ, θ′ (h′ = θ′ − θ*), the proxy
/// ℘_i = q_i(θ′) − q_i(θ) = ∇ℓ_i(θ*)ᵀ(h′ − h) + ½(h′ − h)ᵀ∇²ℓ_i(θ*)(h′ + h) leaves the remainder
///
/// ```text
/// |ℓ_i(θ′) − ℓ_i(θ) − ℘_i| ≤ (M₃/6)(‖h‖₁³ + ‖h′‖₁³) ≤ R_p = (1/3) M₃ max(‖h‖₁, ‖h′‖₁)³,
/// ```
///
/// [`TaylorRemainderBound::proxy_remainder_bound`] (BDH 2017, §7.2). A model whose terms are
/// quadratic in θ has M₃ = 0: its proxies are exact.
pub trait TaylorRemainderBound: Terms {
    /// M₃ (see the trait docs): finite and ≥ 0, computed once (never O(N) per call).
    fn third_derivative_bound(&self) -> f64;

    /// R_p = (1/3) M₃ max(‖θ − θ*‖₁, ‖θ′ − θ*‖₁)³ ≥ max_i |ℓ_i(θ′) − ℓ_i(θ) − ℘_i| for the
    /// second-order proxy ℘_i around `center` = θ* (see the trait docs). O(d).
    fn proxy_remainder_bound(&self, center: &[f64], theta: &[f64], theta_prime: &[f64]) -> f64 {
        let l1 = |x: &[f64]| x.iter().zip(center).map(|(a, c)| (a - c).abs()).sum::<f64>();
        let r = l1(theta).max(l1(theta_prime));
        let m3 = self.third_derivative_bound();
        if m3 == 0.0 { 0.0 } else { m3 * r * r * r / 3.0 }
    }
}

/// The log prior density log p(θ) (up to an additive constant).
pub trait LogPrior: Sync {
    /// Returns log p(θ); `-inf` outside the support.
    fn log_prior(&self, theta: &[f64]) -> f64;

    /// Returns log p(θ) and **adds** ∇ log p(θ) into `grad`.
    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64;
}

/// The Hessian of the log prior, for Newton's method and Laplace approximations.
pub trait LogPriorHessian: LogPrior {
    /// **Adds** ∇² log p(θ) into `hess` (d × d, row-major).
    fn add_log_prior_hessian(&self, theta: &[f64], hess: &mut [f64]);
}

/// A distribution over binary vectors x ∈ {0, 1}^D written as a product of factors,
/// P(x) ∝ Π_n f_n(x), seen through its Gibbs conditionals.
///
/// Updating variable i needs the log-odds
///
/// ```text
/// log P(x_i = 1 | x_−i) / P(x_i = 0 | x_−i) = Σ_{n ∋ i} [log f_n(x_i = 1, x_−i) − log f_n(x_i = 0, x_−i)],
/// ```
///
/// a sum over the factors touching i — a finite population a mean test can subsample (Austerity
/// §5). Positions are f64 vectors of 0.0 / 1.0 so that binary chains use the same sinks as
/// continuous ones.
pub trait BinaryFactors: Sync {
    /// Number of variables D.
    fn num_variables(&self) -> usize;

    /// Number of factors touching variable i (the population size of i's Gibbs test).
    fn num_factors(&self, i: usize) -> usize;

    /// Writes `out[k] = log f(x_i = 1, x_−i) − log f(x_i = 0, x_−i)` for the factor numbered
    /// `factors[k]` among those touching i (numbers in `0..num_factors(i)`). Cost:
    /// `factors.len()` factor evaluations (each reads two entries of a factor).
    fn factor_log_ratios(&self, i: usize, x: &[f64], factors: &[u32], out: &mut [f64]);

    /// A bound B_i ≥ max |log-ratio| over the factors touching i and all x, so that the
    /// population's range is at most 2 B_i.
    fn log_ratio_bound(&self, i: usize) -> f64;
}

/// Names of the parameters, for output files and summaries (e.g. `theta.1`, …, `theta.d`, or
/// `mu`, `log_sigma`).
pub trait ParameterNames {
    /// One name per coordinate of θ, in order.
    fn parameter_names(&self) -> Vec<String>;
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_quadratic::Quadratic;

    #[test]
    fn provided_range_sums_match_explicit_sums() {
        let m = Quadratic(1000);
        let theta = [3.5];
        let all: Vec<u32> = (0..1000).collect();
        let mut out = vec![0.0; 1000];
        m.log_terms(&theta, &all, &mut out);
        let direct: f64 = out.iter().sum();
        assert!((m.sum_log_terms(&theta, &all) - direct).abs() < 1e-9 * direct.abs());
        assert!((m.sum_log_terms_range(&theta, 0, 1000) - direct).abs() < 1e-9 * direct.abs());
        let partial: f64 = out[17..600].iter().sum();
        assert!((m.sum_log_terms_range(&theta, 17, 600) - partial).abs() < 1e-9 * partial.abs());
        let mut g = [1.0];
        let v = m.sum_log_terms_grad_range(&theta, 0, 1000, &mut g);
        assert!((v - direct).abs() < 1e-9 * direct.abs());
        let expected: f64 = 1.0 - all.iter().map(|&i| theta[0] - f64::from(i)).sum::<f64>();
        assert!((g[0] - expected).abs() < 1e-9 * expected.abs());
        assert_eq!(m.sum_log_terms_range(&theta, 5, 5), 0.0);
    }
}
