//! Engines that evaluate per-datum differences d_k(θ) = ℓ_k(θ) − q_k(θ) and their gradients
//! for a subsample.
//!
//! Every estimator of this crate is built from the same two operations on a subsample
//! (i_1, …, i_m):
//!
//! * the differences d_k = ℓ_{i_k}(θ) − q_{i_k}(θ) (and, when asked, the gradients ∇d_k);
//! * weighted sums Σ_k w_k ∇d_k (the gradients of ℓ̂, σ̂², log|L̂_B| are all of this form once the
//!   d_k are known).
//!
//! [`DifferenceTerms`] is that interface; three engines implement it:
//!
//! * [`RankOne`] for models with a [`LinearPredictor`] (logistic regression, Gaussian mean):
//!   with η_k = x_kᵀθ, η*_k = x_kᵀθ* and δ_k = η_k − η*_k,
//!   ```text
//!   q_k = φ_k(η*_k) + φ′_k(η*_k) δ_k + ½ φ″_k(η*_k) δ_k²,    ∇d_k = r_k x_k,
//!   r_k = φ′_k(η_k) − φ′_k(η*_k) − φ″_k(η*_k) δ_k
//!   ```
//!   so it stores four scalars per subsample slot (η*, φ*, φ′*, φ″*) and one (r_k) per slot
//!   for the gradients — never a d-vector or a d×d matrix per datum.
//! * [`RankTwo`] for models with a
//!   [`DispersionPredictor`](tallmc_core::DispersionPredictor) (θ = (β, τ), ℓ_k = f_k(x_kᵀβ, τ):
//!   negative binomial and Student-t regression): η*_k and the six derivatives of f_k at
//!   (η*_k, τ*) per slot, two scalars r_k, s_k per slot for the gradients ∇d_k = (r_k x_k, s_k);
//! * [`HessianProducts`], the generic fallback for any [`TermHessians`] model: it caches
//!   ℓ_k(θ*) and ∇ℓ_k(θ*) per slot (m d-vectors) and evaluates H_k(θ*)h by a Hessian-vector
//!   product at every call (order 2).
//!
//! **Caching and cost accounting.** The quantities at θ* depend only on the index in a slot
//! and on the control variate, so every engine keeps them per slot and recomputes only the
//! slots whose index changed since the last call (or all of them after a re-centring). A
//! pseudo-marginal kernel that keeps its subsample through a whole trajectory therefore pays
//! for the control variates of a subsample once per refresh, not once per leapfrog step.
//! Counts ([`EvalCounts`]), per call:
//!
//! * at θ: m **terms** (ℓ_k(θ); for [`RankOne`], the dot product x_kᵀθ and φ_k(η_k)); plus m
//!   **gradients** when gradients are asked (∇ℓ_k(θ); for [`RankOne`], φ′_k(η_k), whose
//!   contribution r_k x_k is added to the caller's sum);
//! * at θ*, for each slot whose cache missed: one term, plus one gradient from order 1, plus one
//!   Hessian at order 2 ([`CvOrder::counts_per_datum`]; for [`RankOne`], η*_k and φ*, φ′*, φ″*;
//!   for [`RankTwo`], η*_k and the derivatives of f_k at (η*_k, τ*));
//! * [`HessianProducts`] at order 2: m more **Hessians** per call (the products H_k(θ*)h).
//!
//! *Lanes.* An engine keeps independent caches in numbered lanes, so an estimator with several
//! subsamples (block-Poisson: one lane per factor) does not thrash one cache.

mod rank_two;

use tallmc_core::{EvalCounts, LinearPredictor, RowBatch, TermHessians};

pub use rank_two::RankTwo;

use crate::control_variate::{ControlVariate, CvOrder};

/// Evaluates d_k(θ) = ℓ_k(θ) − q_k(θ) for a subsample and weighted sums of ∇d_k (see the
/// module docs). Implementations own their scratch and allocate only when a lane or a
/// subsample is larger than any seen before.
pub trait DifferenceTerms<M: ?Sized> {
    /// **Overwrites** `d[k]` with d_{indices\[k\]}(θ) for the control variate `cv`, using the
    /// cache of `lane`. With `with_gradients`, also prepares ∇d_k for
    /// [`DifferenceTerms::add_weighted_gradients`] on the same lane. Returns the evaluations made.
    #[allow(clippy::too_many_arguments)]
    fn differences(
        &mut self, model: &M, cv: &ControlVariate, theta: &[f64], lane: usize, indices: &[u32],
        d: &mut [f64], with_gradients: bool,
    ) -> EvalCounts;

    /// **Adds** Σ_k `weights[k]` ∇d_{indices\[k\]}(θ) into `out`, for the θ and `indices` of the
    /// last [`DifferenceTerms::differences`] call with gradients on `lane`. No new evaluation.
    fn add_weighted_gradients(
        &mut self, model: &M, lane: usize, indices: &[u32], weights: &[f64], out: &mut [f64],
    );

    /// **Adds** `weight` · Σ_k ∇d_{indices\[k\]}(θ) into `out` and returns the evaluations made:
    /// the gradient-only path of the stochastic-gradient kernels, which never use the values
    /// d_k. Same numbers as [`DifferenceTerms::differences`] with gradients followed by
    /// [`DifferenceTerms::add_weighted_gradients`] with every weight equal to `weight`.
    ///
    /// [`RankOne`] evaluates no term: per index one gradient at θ and, from order 1, when any
    /// index differs from the last call's (or θ* moved), one gradient at θ* (plus a Hessian at
    /// order 2) for every index, read in the same pass over the rows; with the same indices as
    /// the last call (an SG-HMC trajectory on one minibatch) nothing at θ*. [`HessianProducts`] has no gradient-only model call to use; it runs the two calls
    /// above on lane 0 and counts what they evaluate.
    fn add_gradient_differences(
        &mut self, model: &M, cv: &ControlVariate, theta: &[f64], indices: &[u32], weight: f64,
        out: &mut [f64],
    ) -> EvalCounts;
}

/// Grows `v` to at least `n` entries (allocates only when it grows).
fn grow<T: Clone + Default>(v: &mut Vec<T>, n: usize) {
    if v.len() < n {
        v.resize(n, T::default());
    }
}

/// The cache of `lane`, creating default lanes up to it first.
fn lane_mut<L: Default>(lanes: &mut Vec<L>, lane: usize) -> &mut L {
    if lanes.len() <= lane {
        lanes.resize_with(lane + 1, L::default);
    }
    &mut lanes[lane]
}

/// Which subsample slots of a lane hold the control-variate quantities of their current index,
/// for the control variate with id `cv_id`: the bookkeeping the engines share.
#[derive(Debug, Clone, Default)]
struct SlotCache {
    cv_id: u64,
    index: Vec<u32>,
    valid: Vec<bool>,
    /// The slots (and their new indices) that missed in the last [`SlotCache::update`].
    miss_pos: Vec<usize>,
    miss_idx: Vec<u32>,
}

impl SlotCache {
    fn grow(&mut self, m: usize) {
        grow(&mut self.index, m);
        grow(&mut self.valid, m);
        grow(&mut self.miss_pos, m);
        grow(&mut self.miss_idx, m);
    }

    /// Records `indices` as the lane's slots for `cv` and returns how many slots missed (a new
    /// index, or every slot after a re-centring); the caller fills those, listed in
    /// `miss_pos[..misses]` / `miss_idx[..misses]`.
    fn update(&mut self, cv: &ControlVariate, indices: &[u32]) -> usize {
        if self.cv_id != cv.id() {
            self.valid.fill(false);
            self.cv_id = cv.id();
        }
        let mut misses = 0;
        for (k, &i) in indices.iter().enumerate() {
            if !self.valid[k] || self.index[k] != i {
                self.miss_pos[misses] = k;
                self.miss_idx[misses] = i;
                self.index[k] = i;
                self.valid[k] = true;
                misses += 1;
            }
        }
        misses
    }
}

/// The counts of one `differences` call of m indices: m terms (and m gradients when asked) at θ,
/// plus `per_miss` for each slot whose control variate was recomputed.
fn call_counts(m: usize, with_gradients: bool, misses: usize, per_miss: EvalCounts) -> EvalCounts {
    let (m, misses) = (m as u64, misses as u64);
    EvalCounts {
        terms: m + misses * per_miss.terms,
        gradients: if with_gradients { m } else { 0 } + misses * per_miss.gradients,
        hessians: misses * per_miss.hessians,
    }
}

/// Per-lane cache of the [`RankOne`] engine.
#[derive(Debug, Clone, Default)]
struct RankOneLane {
    slots: SlotCache,
    eta_star: Vec<f64>,
    phi_star: Vec<f64>,
    d1_star: Vec<f64>,
    d2_star: Vec<f64>,
    /// r_k with ∇d_k = r_k x_k, from the last call with gradients.
    r: Vec<f64>,
    /// The slots' points ([`LinearPredictor::gather_rows`]), kept while calls reuse them.
    batch: RowBatch,
    /// Whether `batch` holds the slots of the last call.
    gathered: bool,
}

/// The rank-one engine for [`LinearPredictor`] models (see the module docs).
///
/// Memory per slot: 6 scalars and an index; scratch: 4 scalars per slot of the largest call.
#[derive(Debug, Clone, Default)]
pub struct RankOne {
    lanes: Vec<RankOneLane>,
    /// How many lanes have had their gathered copy sized for their reserved subsample (at the
    /// first call that sees them, so that no later first gather allocates).
    sized_lanes: usize,
    scratch: PredictorScratch,
    gradient_cache: GradientCache,
}

/// The cache of the [`RankOne`] engine's gradient-only path: η*_k, φ′(η*_k) and φ″(η*_k) per
/// slot. It is all-or-nothing: when any slot's index changed, every slot is recomputed (one
/// read of each row for η_k and η*_k together), which is what a fresh minibatch needs anyway.
#[derive(Debug, Clone, Default)]
struct GradientCache {
    slots: SlotCache,
    eta_star: Vec<f64>,
    d1_star: Vec<f64>,
    d2_star: Vec<f64>,
    /// The slots' points ([`LinearPredictor::gather_rows`]), gathered when a new minibatch
    /// arrives at order 1, and whether it holds the current slots.
    batch: RowBatch,
    gathered: bool,
}

impl GradientCache {
    fn grow(&mut self, m: usize) {
        self.slots.grow(m);
        for v in [&mut self.eta_star, &mut self.d1_star, &mut self.d2_star] {
            grow(v, m);
        }
        self.batch.reserve(m);
    }
}

/// η_k, φ(η_k), φ'(η_k) and φ''(η_k) of the [`RankOne`] engine's last evaluation.
#[derive(Debug, Clone, Default)]
struct PredictorScratch {
    eta: Vec<f64>,
    phi: Vec<f64>,
    d1: Vec<f64>,
    d2: Vec<f64>,
}

impl PredictorScratch {
    fn grow(&mut self, m: usize) {
        for v in [&mut self.eta, &mut self.phi, &mut self.d1, &mut self.d2] {
            grow(v, m);
        }
    }

    /// Fills the first `indices.len()` entries with η_k = x_kᵀθ and the derivatives of ℓ_k in η.
    fn evaluate<M: LinearPredictor + ?Sized>(&mut self, model: &M, theta: &[f64], indices: &[u32]) {
        let n = indices.len();
        model.linear_predictors(theta, indices, &mut self.eta[..n]);
        model.predictor_derivatives(
            indices,
            &self.eta[..n],
            &mut self.phi[..n],
            &mut self.d1[..n],
            &mut self.d2[..n],
        );
    }
}

impl RankOne {
    /// An engine with one lane sized for subsamples of `m` indices (it grows if needed).
    pub fn new(m: usize) -> Self {
        Self::with_lanes(1, m)
    }

    /// An engine with `lanes` lanes each sized for `m` indices.
    pub fn with_lanes(lanes: usize, m: usize) -> Self {
        let mut e = Self::default();
        for l in 0..lanes {
            e.prepare(l, m);
        }
        e
    }

    fn prepare(&mut self, lane: usize, m: usize) {
        let l = lane_mut(&mut self.lanes, lane);
        l.slots.grow(m);
        grow(&mut l.eta_star, m);
        grow(&mut l.phi_star, m);
        grow(&mut l.d1_star, m);
        grow(&mut l.d2_star, m);
        grow(&mut l.r, m);
        l.batch.reserve(m);
        self.scratch.grow(m);
        self.gradient_cache.grow(m);
    }
}

impl<M: LinearPredictor + ?Sized> DifferenceTerms<M> for RankOne {
    fn differences(
        &mut self, model: &M, cv: &ControlVariate, theta: &[f64], lane: usize, indices: &[u32],
        d: &mut [f64], with_gradients: bool,
    ) -> EvalCounts {
        let m = indices.len();
        self.prepare(lane, m);
        // An empty gather sizes a lane's copy for the subsample size it was prepared for.
        for l in &mut self.lanes[self.sized_lanes..] {
            model.gather_rows(&[], &mut l.batch);
        }
        self.sized_lanes = self.lanes.len();
        let order = cv.order();
        let l = &mut self.lanes[lane];
        // Cache misses: the slots whose index changed.
        let misses = l.slots.update(cv, indices);
        // A subsample that this call reuses (in part: HMC-ECS refreshes one block of u per
        // iteration and keeps u through a trajectory) is read from the model's gathered copy,
        // updated at the missed slots only; an all-new one is read in place, as a fresh
        // subsample drawn for one call would gain nothing from a copy.
        if misses == m {
            l.gathered = false;
        } else if !l.gathered || l.batch.len() != m {
            model.gather_rows(indices, &mut l.batch);
            l.gathered = true;
        } else if misses > 0 {
            let (pos, idx) = (&l.slots.miss_pos[..misses], &l.slots.miss_idx[..misses]);
            model.regather_rows(pos, idx, &mut l.batch);
        }
        debug_assert!(!l.gathered || l.batch.indices == indices, "the batch mirrors the slots");
        let s = &mut self.scratch;
        if misses > 0 {
            s.evaluate(model, cv.center(), &l.slots.miss_idx[..misses]);
            for (j, &k) in l.slots.miss_pos[..misses].iter().enumerate() {
                l.eta_star[k] = s.eta[j];
                l.phi_star[k] = s.phi[j];
                l.d1_star[k] = s.d1[j];
                l.d2_star[k] = s.d2[j];
            }
        }
        // At θ.
        if l.gathered {
            model.gathered_predictors(&l.batch, theta, &mut s.eta[..m]);
            let (phi, d1, d2) = (&mut s.phi[..m], &mut s.d1[..m], &mut s.d2[..m]);
            model.gathered_derivatives(&l.batch, &s.eta[..m], phi, d1, d2);
        } else {
            s.evaluate(model, theta, indices);
        }
        let (c1, c2) = match order {
            CvOrder::Zero => (0.0, 0.0),
            CvOrder::One => (1.0, 0.0),
            CvOrder::Two => (1.0, 1.0),
        };
        for k in 0..m {
            let delta = s.eta[k] - l.eta_star[k];
            let slope = c1 * l.d1_star[k] + c2 * l.d2_star[k] * delta;
            let q = l.phi_star[k] + (c1 * l.d1_star[k] + 0.5 * c2 * l.d2_star[k] * delta) * delta;
            d[k] = s.phi[k] - q;
            if with_gradients {
                l.r[k] = s.d1[k] - slope;
            }
        }
        call_counts(m, with_gradients, misses, order.counts_per_datum())
    }

    fn add_weighted_gradients(
        &mut self, model: &M, lane: usize, indices: &[u32], weights: &[f64], out: &mut [f64],
    ) {
        let m = indices.len();
        let l = &self.lanes[lane];
        let phi = &mut self.scratch.phi;
        for k in 0..m {
            phi[k] = weights[k] * l.r[k];
        }
        if l.gathered {
            model.add_weighted_gathered_rows(&l.batch, &phi[..m], out);
        } else {
            model.add_weighted_rows(indices, &phi[..m], out);
        }
    }

    fn add_gradient_differences(
        &mut self, model: &M, cv: &ControlVariate, theta: &[f64], indices: &[u32], weight: f64,
        out: &mut [f64],
    ) -> EvalCounts {
        let m = indices.len();
        self.scratch.grow(m);
        self.gradient_cache.grow(m);
        let order = cv.order();
        let (s, c) = (&mut self.scratch, &mut self.gradient_cache);
        let eta = &mut s.eta[..m];
        // At θ* only when a slot's index changed (or θ* moved); then all slots, in one row read
        // with the predictors at θ.
        let refresh = order != CvOrder::Zero && c.slots.update(cv, indices) > 0;
        if refresh && order == CvOrder::One {
            // A new minibatch: the model copies its rows into one contiguous buffer (when it
            // can), then η*, φ′(η*) and the gradient stream from the copy, as every later call
            // on the same minibatch (an SG-HMC trajectory) does. The bits of the index path.
            model.gather_rows(indices, &mut c.batch);
            c.gathered = true;
            let (eta_star, d1_star) = (&mut c.eta_star[..m], &mut c.d1_star[..m]);
            model.gathered_scores(&c.batch, cv.center(), eta_star, d1_star);
            model.add_score_differences_gathered(&c.batch, theta, d1_star, weight, out);
            let m = m as u64;
            return EvalCounts { terms: 0, gradients: 2 * m, hessians: 0 };
        }
        if refresh {
            model.linear_predictor_pairs(theta, cv.center(), indices, eta, &mut c.eta_star[..m]);
            let d2_star = (order == CvOrder::Two).then(|| &mut c.d2_star[..m]);
            model.predictor_scores(indices, &c.eta_star[..m], &mut c.d1_star[..m], d2_star);
            c.gathered = false;
        } else if order == CvOrder::One {
            // The same minibatch as the last call (an SG-HMC trajectory): one pass over the rows
            // with the cached φ′(η*) as the offsets, the same bits as the steps below, on the
            // batch gathered at the refresh.
            let offsets = &c.d1_star[..m];
            if c.gathered {
                model.add_score_differences_gathered(&c.batch, theta, offsets, weight, out);
            } else {
                model.add_score_differences(theta, indices, offsets, weight, out);
            }
            return EvalCounts { terms: 0, gradients: m as u64, hessians: 0 };
        } else {
            model.linear_predictors(theta, indices, eta);
        }
        model.predictor_scores(indices, &s.eta[..m], &mut s.d1[..m], None);
        // The coefficient of x_k: weight · r_k, r_k = φ′(η_k) − φ′(η*_k) − φ″(η*_k) δ_k (the
        // operations of `differences`, so the same bits).
        for k in 0..m {
            let slope = match order {
                CvOrder::Zero => 0.0,
                CvOrder::One => c.d1_star[k],
                CvOrder::Two => c.d1_star[k] + c.d2_star[k] * (s.eta[k] - c.eta_star[k]),
            };
            s.d1[k] = weight * (s.d1[k] - slope);
        }
        model.add_weighted_rows(indices, &s.d1[..m], out);
        let at_star = if refresh { order.counts_per_datum() } else { EvalCounts::ZERO };
        let m = m as u64;
        EvalCounts {
            terms: 0,
            gradients: m + m * at_star.gradients,
            hessians: m * at_star.hessians,
        }
    }
}

/// Per-lane cache of the [`HessianProducts`] engine.
#[derive(Debug, Clone, Default)]
struct HessianLane {
    slots: SlotCache,
    l_star: Vec<f64>,
    /// ∇ℓ_k(θ*), m × d.
    g_star: Vec<f64>,
    /// ∇d_k(θ), m × d, from the last call with gradients.
    grad_d: Vec<f64>,
}

/// The generic engine for any [`TermHessians`] model (see the module docs): per slot it caches
/// ℓ_k(θ*) and ∇ℓ_k(θ*) (m d-vectors), and at order 2 computes H_k(θ*)h with a
/// Hessian-vector product at every call (m Hessians counted per call).
#[derive(Debug, Clone, Default)]
pub struct HessianProducts {
    lanes: Vec<HessianLane>,
    dim: usize,
    h: Vec<f64>,
    vals: Vec<f64>,
    hv: Vec<f64>,
    tmp_vals: Vec<f64>,
    tmp_grads: Vec<f64>,
    /// d_k and the weights of the gradient-only path.
    diffs: Vec<f64>,
    weights: Vec<f64>,
}

impl HessianProducts {
    /// An engine for dimension `dim` with one lane sized for `m` indices.
    pub fn new(dim: usize, m: usize) -> Self {
        Self::with_lanes(dim, 1, m)
    }

    /// An engine for dimension `dim` with `lanes` lanes each sized for `m` indices.
    pub fn with_lanes(dim: usize, lanes: usize, m: usize) -> Self {
        let mut e = Self { dim, ..Self::default() };
        for l in 0..lanes {
            e.prepare(l, m);
        }
        e
    }

    fn prepare(&mut self, lane: usize, m: usize) {
        let d = self.dim;
        let l = lane_mut(&mut self.lanes, lane);
        l.slots.grow(m);
        grow(&mut l.l_star, m);
        grow(&mut l.g_star, m * d);
        grow(&mut l.grad_d, m * d);
        grow(&mut self.h, d);
        grow(&mut self.vals, m);
        grow(&mut self.hv, m * d);
        grow(&mut self.tmp_vals, m);
        grow(&mut self.tmp_grads, m * d);
    }
}

impl<M: TermHessians + ?Sized> DifferenceTerms<M> for HessianProducts {
    fn differences(
        &mut self, model: &M, cv: &ControlVariate, theta: &[f64], lane: usize, indices: &[u32],
        d: &mut [f64], with_gradients: bool,
    ) -> EvalCounts {
        if self.dim != cv.dim() {
            // Built for another dimension: resize every buffer (allocates once).
            *self = Self::with_lanes(cv.dim(), self.lanes.len().max(lane + 1), indices.len());
        }
        let m = indices.len();
        let dim = self.dim;
        self.prepare(lane, m);
        let order = cv.order();
        let l = &mut self.lanes[lane];
        let misses = l.slots.update(cv, indices);
        if misses > 0 {
            let idx = &l.slots.miss_idx[..misses];
            if order == CvOrder::Zero {
                model.log_terms(cv.center(), idx, &mut self.tmp_vals[..misses]);
            } else {
                model.log_terms_grads(
                    cv.center(),
                    idx,
                    &mut self.tmp_vals[..misses],
                    &mut self.tmp_grads[..misses * dim],
                );
            }
            for (j, &k) in l.slots.miss_pos[..misses].iter().enumerate() {
                l.l_star[k] = self.tmp_vals[j];
                if order != CvOrder::Zero {
                    l.g_star[k * dim..(k + 1) * dim]
                        .copy_from_slice(&self.tmp_grads[j * dim..(j + 1) * dim]);
                }
            }
        }
        for ((h, t), c) in self.h[..dim].iter_mut().zip(theta).zip(cv.center()) {
            *h = t - c;
        }
        if order == CvOrder::Two {
            model.hessian_vector_products(
                cv.center(),
                indices,
                &self.h[..dim],
                &mut self.hv[..m * dim],
            );
        }
        if with_gradients {
            model.log_terms_grads(theta, indices, &mut self.vals[..m], &mut l.grad_d[..m * dim]);
        } else {
            model.log_terms(theta, indices, &mut self.vals[..m]);
        }
        let h = &self.h[..dim];
        for k in 0..m {
            let mut q = l.l_star[k];
            let gs = &l.g_star[k * dim..(k + 1) * dim];
            let hv = &self.hv[k * dim..(k + 1) * dim];
            if order >= CvOrder::One {
                q += gs.iter().zip(h).map(|(a, b)| a * b).sum::<f64>();
            }
            if order == CvOrder::Two {
                q += 0.5 * hv.iter().zip(h).map(|(a, b)| a * b).sum::<f64>();
            }
            d[k] = self.vals[k] - q;
            if with_gradients && order >= CvOrder::One {
                let row = &mut l.grad_d[k * dim..(k + 1) * dim];
                for (j, r) in row.iter_mut().enumerate() {
                    *r -= gs[j] + if order == CvOrder::Two { hv[j] } else { 0.0 };
                }
            }
        }
        // A miss evaluates ℓ_k and ∇ℓ_k at θ* (no Hessian: order 2 uses the products H_k(θ*)h,
        // m per call).
        let per_miss = EvalCounts { hessians: 0, ..order.counts_per_datum() };
        let mut counts = call_counts(m, with_gradients, misses, per_miss);
        if order == CvOrder::Two {
            counts.hessians += m as u64;
        }
        counts
    }

    fn add_weighted_gradients(
        &mut self, _model: &M, lane: usize, indices: &[u32], weights: &[f64], out: &mut [f64],
    ) {
        let dim = self.dim;
        let l = &self.lanes[lane];
        for (k, &w) in weights[..indices.len()].iter().enumerate() {
            for (o, g) in out.iter_mut().zip(&l.grad_d[k * dim..(k + 1) * dim]) {
                *o += w * g;
            }
        }
    }

    fn add_gradient_differences(
        &mut self, model: &M, cv: &ControlVariate, theta: &[f64], indices: &[u32], weight: f64,
        out: &mut [f64],
    ) -> EvalCounts {
        let m = indices.len();
        let (mut d, mut w) = (std::mem::take(&mut self.diffs), std::mem::take(&mut self.weights));
        grow(&mut d, m);
        grow(&mut w, m);
        w[..m].fill(weight);
        let counts = self.differences(model, cv, theta, 0, indices, &mut d[..m], true);
        self.add_weighted_gradients(model, 0, indices, &w[..m], out);
        (self.diffs, self.weights) = (d, w);
        counts
    }
}
