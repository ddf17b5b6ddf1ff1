//! Taylor control variates around a centre θ*.
//!
//! For each datum k the control variate is the Taylor expansion of ℓ_k at θ*, truncated at
//! order 0, 1 or 2 (h = θ − θ*):
//!
//! ```text
//! q_k(θ) = ℓ_k(θ*) + ∇ℓ_k(θ*)ᵀh + ½ hᵀ ∇²ℓ_k(θ*) h          (order 2; order 1 drops the last
//!                                                           term, order 0 keeps ℓ_k(θ*) only)
//! Σ_k q_k(θ) = s + gᵀh + ½ hᵀHh,   s = Σ_k ℓ_k(θ*),  g = Σ_k ∇ℓ_k(θ*),  H = Σ_k ∇²ℓ_k(θ*)
//! ```
//!
//! (Dang et al. 2019, §3.1 and eq. (3.3); Bardenet, Doucet & Holmes 2017, §7.2.) The sums s, g,
//! H are computed in one pass over the data; afterwards Σ_k q_k(θ) and its gradient g + Hh cost
//! O(d²) and no per-datum evaluation. The per-datum q_k of a subsample are evaluated by a
//! [`DifferenceTerms`](crate::DifferenceTerms) engine.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use tallmc_core::{
    EvalCounts, Parallelism, PassKind, ShardLayout, TermGradients, TermHessians, Terms,
    reduce_on_shards, reduce_sharded,
};

use crate::error::{Error, Result};

/// Rows per chunk of the one-pass construction (fixed, so sums do not depend on anything else).
const BUILD_CHUNK: u32 = 4096;

/// Rows per chunk of [`ControlVariate::new_on_all_cores`]'s pass (its partial sums are added in
/// chunk order, so the chunking, not the thread count, fixes the bits).
pub const PARALLEL_CHUNK: u32 = 65_536;

/// Source of distinct identities for control variates: engines cache per-datum quantities at θ*
/// and must notice when θ* (or the control variate) changes.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Σℓ_k(θ*), Σ∇ℓ_k(θ*) (orders ≥ 1) and, with `hessians` (which adds Σ∇²ℓ over a row range),
/// Σ∇²ℓ_k(θ*): chunks of [`PARALLEL_CHUNK`] rows of each of the model's shards on the rayon
/// pool, each evaluated while it is in cache, their partial sums added in chunk order within a
/// shard and the shards' in shard order ([`reduce_sharded`]: the bits depend on neither the
/// threads nor where a shard is reduced).
fn chunked_sums<M, H>(
    model: &M, center: &[f64], order: CvOrder, hessians: Option<H>,
) -> (f64, Vec<f64>, Vec<f64>)
where
    M: TermGradients + ?Sized,
    H: Fn(u32, u32, &mut [f64]) + Sync,
{
    let d = model.dim();
    let hess_len = if hessians.is_some() { d * d } else { 0 };
    let layout =
        model.shard_layout().cloned().unwrap_or_else(|| ShardLayout::single(model.num_terms()));
    let partial = |lo: u32, hi: u32, slot: &mut [f64]| {
        slot.fill(0.0);
        let (total, rest) = slot.split_first_mut().expect("1 + d + d² entries");
        let (grad, hess) = rest.split_at_mut(d);
        *total = match order {
            CvOrder::Zero => model.sum_log_terms_range(center, lo, hi),
            _ => model.sum_log_terms_grad_range(center, lo, hi, grad),
        };
        if let Some(h) = &hessians {
            h(lo, hi, hess);
        }
        tallmc_core::full_data::count_rows_evaluated(u64::from(hi - lo));
    };
    let mut out = vec![0.0; 1 + d + hess_len];
    let chunk = PARALLEL_CHUNK as usize;
    reduce_sharded(&layout, chunk, Parallelism::Rayon, partial, &mut out, &mut Vec::new());
    let hess = out.split_off(1 + d);
    let grad = out.split_off(1);
    (out[0], grad, hess)
}

fn fresh_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// The order of a Taylor control variate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum CvOrder {
    /// q_k(θ) = ℓ_k(θ*).
    Zero,
    /// q_k(θ) = ℓ_k(θ*) + ∇ℓ_k(θ*)ᵀh.
    One,
    /// q_k(θ) = ℓ_k(θ*) + ∇ℓ_k(θ*)ᵀh + ½hᵀ∇²ℓ_k(θ*)h.
    Two,
}

impl CvOrder {
    /// The order from its number; errors unless `k` is 0, 1 or 2.
    pub fn from_number(k: u32) -> Result<Self> {
        match k {
            0 => Ok(Self::Zero),
            1 => Ok(Self::One),
            2 => Ok(Self::Two),
            _ => Err(Error::invalid("control-variate order", k, "0, 1 or 2")),
        }
    }

    /// The order as a number (0, 1 or 2).
    pub fn number(self) -> u32 {
        match self {
            Self::Zero => 0,
            Self::One => 1,
            Self::Two => 2,
        }
    }

    /// The per-datum evaluations at θ* that one datum's control variate needs: a term, plus a
    /// gradient from order 1, plus a Hessian from order 2.
    pub fn counts_per_datum(self) -> EvalCounts {
        EvalCounts {
            terms: 1,
            gradients: u64::from(self >= Self::One),
            hessians: u64::from(self == Self::Two),
        }
    }
}

/// The full-data sums of a Taylor control variate around θ* (see the module docs).
///
/// Memory: O(d²) (the Hessian sum H; not allocated below order 2). Construction and
/// [`ControlVariate::recenter`]: one pass over the N data — N terms, plus N gradients from
/// order 1, plus N Hessians at order 2. Afterwards [`ControlVariate::sum`] and
/// [`ControlVariate::sum_grad`] cost O(d²) and no per-datum evaluation.
///
/// ```
/// use tallmc_core::Terms;
/// use tallmc_estimators::{ControlVariate, CvOrder};
/// use tallmc_models::GaussianMean;
///
/// let model = GaussianMean::from_observations(vec![0.3, -1.2, 0.8, 2.0], 1.0, 0.0, 10.0)?;
/// let (cv, counts) = ControlVariate::new(&model, &[0.5], CvOrder::Two)?;
/// assert_eq!(counts.terms, 4);
/// // ℓ_i is quadratic in μ, so the second-order expansion is exact everywhere.
/// let all: Vec<u32> = (0..4).collect();
/// let exact = model.sum_log_terms(&[1.7], &all);
/// assert!((cv.sum(&[1.7]) - exact).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ControlVariate {
    order: CvOrder,
    dim: usize,
    num_terms: usize,
    center: Vec<f64>,
    sum_at_center: f64,
    grad: Vec<f64>,
    hess: Vec<f64>,
    id: u64,
}

impl ControlVariate {
    /// A control variate of any order around `center` (θ*), for a model with per-datum
    /// Hessians. Returns it with the evaluations the construction pass made.
    ///
    /// Errors: `center.len() != model.dim()`, a non-finite θ*, a model with no terms, or
    /// non-finite sums (the message names which).
    pub fn new<M: TermHessians + ?Sized>(
        model: &M, center: &[f64], order: CvOrder,
    ) -> Result<(Self, EvalCounts)> {
        let mut cv = Self::empty(model.dim(), model.num_terms(), order)?;
        let counts = cv.recenter(model, center)?;
        Ok((cv, counts))
    }

    /// [`ControlVariate::new`] with the construction pass on all cores of the rayon pool: the
    /// rows are cut into chunks of [`PARALLEL_CHUNK`] (fixed, whatever the thread count), each
    /// chunk's Σℓ, Σ∇ℓ and Σ∇²ℓ are computed while it is in cache, and the chunk sums are added
    /// in chunk order, so the result is the same on any number of threads. It differs from
    /// [`ControlVariate::new`]'s single running sum in the last bits (another summation order),
    /// which is why that one stays the kernels' default.
    ///
    /// Memory: one d² partial Hessian per chunk at order 2 (N/65,536 · d² numbers: 10 MB at
    /// N = 10⁸, d = 29). Errors: as [`ControlVariate::new`].
    pub fn new_on_all_cores<M: TermHessians + ?Sized>(
        model: &M, center: &[f64], order: CvOrder,
    ) -> Result<(Self, EvalCounts)> {
        let hessians = (order == CvOrder::Two)
            .then_some(|lo, hi, h: &mut [f64]| model.sum_hessian_range(center, lo, hi, h));
        Self::built_on_all_cores(model, center, order, hessians)
    }

    /// [`ControlVariate::without_hessians`] with the construction pass on all cores, as
    /// [`ControlVariate::new_on_all_cores`] (order 0 or 1; order 2 is
    /// [`Error::HessiansRequired`]).
    pub fn without_hessians_on_all_cores<M: TermGradients + ?Sized>(
        model: &M, center: &[f64], order: CvOrder,
    ) -> Result<(Self, EvalCounts)> {
        if order == CvOrder::Two {
            return Err(Error::HessiansRequired);
        }
        let none: Option<fn(u32, u32, &mut [f64])> = None;
        Self::built_on_all_cores(model, center, order, none)
    }

    /// The body of both `…_on_all_cores` constructors: checks, [`chunked_sums`], install.
    fn built_on_all_cores<M, H>(
        model: &M, center: &[f64], order: CvOrder, hessians: Option<H>,
    ) -> Result<(Self, EvalCounts)>
    where
        M: TermGradients + ?Sized,
        H: Fn(u32, u32, &mut [f64]) + Sync,
    {
        let mut cv = Self::empty(model.dim(), model.num_terms(), order)?;
        cv.check_center(model.dim(), model.num_terms(), center)?;
        if model.shard_passes().is_some() {
            let counts = cv.install_from_shards(model, center, hessians.is_some())?;
            return Ok((cv, counts));
        }
        let (total, grad, hess) = chunked_sums(model, center, order, hessians);
        let counts = cv.install(center, total, grad, hess)?;
        Ok((cv, counts))
    }

    /// A control variate of order 0 or 1 for a model with gradients only; order 2 is
    /// [`Error::HessiansRequired`] (use [`ControlVariate::new`]).
    pub fn without_hessians<M: TermGradients + ?Sized>(
        model: &M, center: &[f64], order: CvOrder,
    ) -> Result<(Self, EvalCounts)> {
        if order == CvOrder::Two {
            return Err(Error::HessiansRequired);
        }
        let mut cv = Self::empty(model.dim(), model.num_terms(), order)?;
        let counts = cv.recenter_without_hessians(model, center)?;
        Ok((cv, counts))
    }

    fn empty(dim: usize, num_terms: usize, order: CvOrder) -> Result<Self> {
        if num_terms == 0 {
            return Err(Error::invalid("number of terms N", 0, "at least 1"));
        }
        if u32::try_from(num_terms).is_err() {
            return Err(Error::invalid("number of terms N", num_terms, "at most 2^32 - 1"));
        }
        if dim == 0 {
            return Err(Error::invalid("dimension d", 0, "at least 1"));
        }
        let hess = if order == CvOrder::Two { vec![0.0; dim * dim] } else { Vec::new() };
        Ok(Self {
            order,
            dim,
            num_terms,
            center: vec![0.0; dim],
            sum_at_center: 0.0,
            grad: vec![0.0; dim],
            hess,
            id: 0,
        })
    }

    /// Moves the centre to `center` and recomputes the sums (one pass; HMC-ECS re-sets θ*
    /// during warmup). On error the control variate is left unchanged.
    pub fn recenter<M: TermHessians + ?Sized>(
        &mut self, model: &M, center: &[f64],
    ) -> Result<EvalCounts> {
        self.check_center(model.dim(), model.num_terms(), center)?;
        if model.shard_passes().is_some() {
            return self.install_from_shards(model, center, self.order == CvOrder::Two);
        }
        let n = self.num_terms as u32;
        let d = self.dim;
        let mut grad = vec![0.0; d];
        let mut hess = vec![0.0; if self.order == CvOrder::Two { d * d } else { 0 }];
        let mut total = 0.0;
        let mut lo = 0u32;
        // One pass: each chunk's terms, gradients and Hessians are evaluated while it is in cache.
        while lo < n {
            let hi = n.min(lo.saturating_add(BUILD_CHUNK));
            total += match self.order {
                CvOrder::Zero => model.sum_log_terms_range(center, lo, hi),
                _ => model.sum_log_terms_grad_range(center, lo, hi, &mut grad),
            };
            if self.order == CvOrder::Two {
                model.sum_hessian_range(center, lo, hi, &mut hess);
            }
            lo = hi;
        }
        self.install(center, total, grad, hess)
    }

    /// [`ControlVariate::recenter`] for a model without Hessians (order 0 or 1 only; order 2
    /// is [`Error::HessiansRequired`]).
    pub fn recenter_without_hessians<M: TermGradients + ?Sized>(
        &mut self, model: &M, center: &[f64],
    ) -> Result<EvalCounts> {
        if self.order == CvOrder::Two {
            return Err(Error::HessiansRequired);
        }
        self.check_center(model.dim(), model.num_terms(), center)?;
        if model.shard_passes().is_some() {
            return self.install_from_shards(model, center, false);
        }
        let n = self.num_terms as u32;
        let mut grad = vec![0.0; self.dim];
        let total = match self.order {
            CvOrder::Zero => model.sum_log_terms_range(center, 0, n),
            _ => model.sum_log_terms_grad_range(center, 0, n, &mut grad),
        };
        self.install(center, total, grad, Vec::new())
    }

    /// The construction pass of a model whose shards are elsewhere
    /// ([`tallmc_core::shard_passes`]): each shard's Σℓ_i, Σ∇ℓ_i (and Σ∇²ℓ_i with
    /// `hessians`) at θ* computed where it lives, added in shard order — the bits of
    /// [`ControlVariate::new_on_all_cores`] over the same shards here. Center already checked.
    fn install_from_shards<M: Terms + ?Sized>(
        &mut self, model: &M, center: &[f64], hessians: bool,
    ) -> Result<EvalCounts> {
        let passes = model.shard_passes().expect("called for a model with shard passes");
        let d = self.dim;
        let order = if hessians { 2 } else { self.order.number().min(1) };
        let kind = PassKind::ControlVariate { order };
        let mut out = vec![0.0; kind.partial_len(d).unwrap_or_default()];
        reduce_on_shards(passes, center, kind, &mut out).map_err(Error::ShardPass)?;
        tallmc_core::full_data::count_rows_evaluated(self.num_terms as u64);
        let hess = out.split_off(1 + d);
        let grad = out.split_off(1);
        self.install(center, out[0], grad, hess)
    }

    fn check_center(&self, dim: usize, num_terms: usize, center: &[f64]) -> Result<()> {
        Error::check_len("model dimension", dim, self.dim)?;
        Error::check_len("model number of terms N", num_terms, self.num_terms)?;
        Error::check_len("centre θ*", center.len(), self.dim)?;
        Error::check_finite_estimate("centre θ*", center)
    }

    fn install(
        &mut self, center: &[f64], total: f64, grad: Vec<f64>, hess: Vec<f64>,
    ) -> Result<EvalCounts> {
        Error::check_finite_estimate_value("control-variate sum Σℓ_k(θ*)", total)?;
        Error::check_finite_estimate("control-variate gradient sum Σ∇ℓ_k(θ*)", &grad)?;
        Error::check_finite_estimate("control-variate Hessian sum Σ∇²ℓ_k(θ*)", &hess)?;
        self.center.copy_from_slice(center);
        self.sum_at_center = total;
        if self.order == CvOrder::Zero {
            self.grad.fill(0.0);
        } else {
            self.grad = grad;
        }
        self.hess = hess;
        self.id = fresh_id();
        let per = self.order.counts_per_datum();
        let n = self.num_terms as u64;
        Ok(EvalCounts {
            terms: per.terms * n,
            gradients: per.gradients * n,
            hessians: per.hessians * n,
        })
    }

    /// The order.
    pub fn order(&self) -> CvOrder {
        self.order
    }

    /// Dimension d.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of terms N.
    pub fn num_terms(&self) -> usize {
        self.num_terms
    }

    /// The centre θ*.
    pub fn center(&self) -> &[f64] {
        &self.center
    }

    /// s = Σ_k ℓ_k(θ*).
    pub fn sum_at_center(&self) -> f64 {
        self.sum_at_center
    }

    /// g = Σ_k ∇ℓ_k(θ*) (zeros at order 0).
    pub fn gradient_sum(&self) -> &[f64] {
        &self.grad
    }

    /// H = Σ_k ∇²ℓ_k(θ*) (d × d row-major; empty below order 2).
    pub fn hessian_sum(&self) -> &[f64] {
        &self.hess
    }

    /// H = Σ_k ∇²ℓ_k(θ*) if this control variate holds it (order 2).
    pub(crate) fn known_hessian_sum(&self) -> Option<&[f64]> {
        (self.order == CvOrder::Two).then_some(&self.hess[..])
    }

    /// An identity that changes whenever the centre or sums change (engines key their caches
    /// of per-datum quantities at θ* on it).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Σ_k q_k(θ) = s + gᵀh + ½hᵀHh, h = θ − θ*. O(d²), no per-datum evaluation.
    /// `theta` must have length d (panics otherwise: a kernel contract).
    pub fn sum(&self, theta: &[f64]) -> f64 {
        assert_eq!(theta.len(), self.dim, "θ has the wrong length");
        let mut total = self.sum_at_center;
        if self.order >= CvOrder::One {
            for ((t, c), g) in theta.iter().zip(&self.center).zip(&self.grad) {
                total += g * (t - c);
            }
        }
        if self.order == CvOrder::Two {
            let d = self.dim;
            let mut quad = 0.0;
            for j in 0..d {
                let hj = theta[j] - self.center[j];
                let row = &self.hess[j * d..(j + 1) * d];
                let mut acc = 0.0;
                for ((t, c), h) in theta.iter().zip(&self.center).zip(row) {
                    acc += h * (t - c);
                }
                quad += hj * acc;
            }
            total += 0.5 * quad;
        }
        total
    }

    /// Returns Σ_k q_k(θ) and **overwrites** `grad` with ∇Σ_k q_k(θ) = g + Hh. O(d²).
    pub fn sum_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        assert_eq!(grad.len(), self.dim, "gradient buffer has the wrong length");
        grad.copy_from_slice(&self.grad);
        if self.order == CvOrder::Two {
            let d = self.dim;
            for (j, g) in grad.iter_mut().enumerate() {
                let row = &self.hess[j * d..(j + 1) * d];
                for ((t, c), h) in theta.iter().zip(&self.center).zip(row) {
                    *g += h * (t - c);
                }
            }
        }
        self.sum(theta)
    }
}
