//! The difference estimator of the log-likelihood, its variance estimate, the perturbed
//! (bias-corrected) log-likelihood, and their gradients (Dang et al. 2019, §3.1–3.2).
//!
//! With u_1, …, u_m i.i.d. uniform on {0, …, n−1} (with replacement), d_k = ℓ_k − q_k and
//! d̄ = (1/m) Σ_i d_{u_i}:
//!
//! ```text
//! ℓ̂_m    = Σ_k q_k(θ) + (n/m) Σ_i d_{u_i}
//! σ̂²_m   = (n²/m) s²_d,   s²_d = (1/m) Σ_i (d_{u_i} − d̄)²          (divisor m, as both public codes)
//! ∇ℓ̂_m   = ∇Σ_k q_k(θ) + (n/m) Σ_i ∇d_{u_i}
//! ∇σ̂²_m  = (2n²/m²) Σ_i (d_{u_i} − d̄)(∇d_{u_i} − ∇d̄) = (2n²/m²) Σ_i (d_{u_i} − d̄) ∇d_{u_i}
//! perturbed:  ℓ̂_m − σ̂²_m/2,   gradient Σ_i w_i ∇d_{u_i} + ∇Σq,  w_i = n/m − (n²/m²)(d_{u_i} − d̄)
//! ```
//!
//! **Properties.** ℓ̂_m is unbiased for ℓ(θ) = Σ_k ℓ_k(θ) (E d_{u_i} = (1/n) Σ_k d_k), and so is
//! ∇ℓ̂_m for ∇ℓ(θ). Its variance is n² σ²_d / m with σ²_d the population variance of the d_k;
//! σ̂²_m estimates it with relative bias −1/m (divisor m). exp(ℓ̂_m − σ̂²_m/2) is the perturbed
//! likelihood estimator of Dang et al. (eq. 3.4 there, with Ceperley & Dewing's correction): it
//! is *not* exactly unbiased for L(θ); under normality of ℓ̂_m its bias is of order
//! O(σ⁴/m) relative. HMC-ECS uses −(ℓ̂ − σ̂²/2) − log p(θ) as its potential.
//!
//! **Cost** per call: m terms (+ m gradients for the gradient methods) at θ, plus the control
//! variates of the slots whose index changed (see [`crate::differences`]).

use rand::Rng;
use tallmc_core::subsample::BlockSubsample;
use tallmc_core::{EvalCounts, TermHessians, Terms};

use crate::control_variate::ControlVariate;
use crate::differences::DifferenceTerms;
use crate::error::{Error, Result};
use crate::traits::{EcsEstimate, EcsEstimator, GibbsSubsample, centre_of_control_variate};

/// The result of one difference-estimator evaluation.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DifferenceEstimate {
    /// ℓ̂_m: the unbiased estimate of Σ_k ℓ_k(θ).
    pub log_likelihood: f64,
    /// σ̂²_m = (n²/m) s²_d: the estimate of V[ℓ̂_m].
    pub variance: f64,
    /// Σ_k q_k(θ) (the control-variate part of ℓ̂_m).
    pub control_variate_sum: f64,
    /// Per-datum evaluations made by this call.
    pub counts: EvalCounts,
}

impl DifferenceEstimate {
    /// The perturbed (bias-corrected) log-likelihood ℓ̂_m − σ̂²_m/2.
    pub fn perturbed(&self) -> f64 {
        self.log_likelihood - 0.5 * self.variance
    }
}

/// The difference estimator with a Taylor control variate (see the module docs), generic over
/// the engine `E` that evaluates the per-datum differences: [`RankOne`](crate::RankOne) for
/// [`LinearPredictor`](tallmc_core::LinearPredictor) models,
/// [`HessianProducts`](crate::HessianProducts) for any model with Hessians.
///
/// It owns its control variate (re-centre it with
/// [`DifferenceEstimator::control_variate_mut`]) and its scratch: once it has seen its largest
/// subsample it allocates nothing. The caller owns the subsample (for the correlated
/// pseudo-marginal u-step, a [`tallmc_core::subsample::BlockSubsample`] with G blocks, one
/// refreshed per iteration with propose/accept/reject).
///
/// ```
/// use rand::SeedableRng;
/// use tallmc_core::subsample::BlockSubsample;
/// use tallmc_estimators::{ControlVariate, CvOrder, DifferenceEstimator, RankOne};
/// use tallmc_models::GaussianMean;
///
/// let y: Vec<f64> = (0..1000).map(|i| (i as f64 * 0.37).sin()).collect();
/// let model = GaussianMean::from_observations(y, 1.0, 0.0, 10.0)?;
/// let (cv, _) = ControlVariate::new(&model, &[0.0], CvOrder::One)?;
/// let mut est = DifferenceEstimator::new(&model, cv, RankOne::new(50), 50)?;
/// let mut sub = BlockSubsample::new(1000, 50, 5)?;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
/// sub.draw_all(&mut rng);
/// let mut grad = [0.0];
/// let e = est.perturbed_grad(&model, &[0.1], sub.indices(), &mut grad)?;
/// assert_eq!(e.counts.terms, 50 + 50); // 50 at θ, 50 control variates at θ* (first call)
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct DifferenceEstimator<E> {
    cv: ControlVariate,
    engine: E,
    d: Vec<f64>,
    w: Vec<f64>,
}

impl<E> DifferenceEstimator<E> {
    /// An estimator for `model` with control variate `cv` and engine `engine`, with buffers for
    /// subsamples of up to `max_m` indices (larger ones reallocate once).
    ///
    /// Errors: `max_m == 0`, or `cv` built for a model of another dimension or size.
    pub fn new<M: Terms + ?Sized>(
        model: &M, cv: ControlVariate, engine: E, max_m: usize,
    ) -> Result<Self> {
        if max_m == 0 {
            return Err(Error::invalid("subsample size m", 0, "at least 1"));
        }
        Error::check_len("control variate dimension", cv.dim(), model.dim())?;
        Error::check_len("control variate number of terms N", cv.num_terms(), model.num_terms())?;
        Ok(Self { cv, engine, d: vec![0.0; max_m], w: vec![0.0; max_m] })
    }

    /// The control variate.
    pub fn control_variate(&self) -> &ControlVariate {
        &self.cv
    }

    /// The control variate, to re-centre it (the engine notices and refreshes its caches).
    pub fn control_variate_mut(&mut self) -> &mut ControlVariate {
        &mut self.cv
    }

    /// The differences d_k of the last call, one per index.
    pub fn last_differences(&self, m: usize) -> &[f64] {
        &self.d[..m]
    }

    fn check(&mut self, theta: &[f64], indices: &[u32]) -> Result<()> {
        Error::check_len("θ", theta.len(), self.cv.dim())?;
        if indices.is_empty() {
            return Err(Error::invalid("subsample size m", 0, "at least 1"));
        }
        if self.d.len() < indices.len() {
            self.d.resize(indices.len(), 0.0);
            self.w.resize(indices.len(), 0.0);
        }
        Ok(())
    }

    /// (ℓ̂ part from the differences, d̄, s²_d) for the m differences in `self.d`.
    fn moments(&self, m: usize) -> (f64, f64) {
        let d = &self.d[..m];
        let mean = d.iter().sum::<f64>() / m as f64;
        let var = d.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / m as f64;
        (mean, var)
    }

    fn finish(&self, cv_sum: f64, m: usize, counts: EvalCounts) -> Result<DifferenceEstimate> {
        let n = self.cv.num_terms() as f64;
        let (mean, var) = self.moments(m);
        let log_likelihood = cv_sum + n * mean;
        let variance = n * n / m as f64 * var;
        Error::check_finite_estimate_value("difference estimate ℓ̂", log_likelihood)?;
        Error::check_finite_estimate_value("variance estimate σ̂²", variance)?;
        Ok(DifferenceEstimate { log_likelihood, variance, control_variate_sum: cv_sum, counts })
    }

    /// ℓ̂_m and σ̂²_m at θ from the subsample `indices` (each uniform on 0..N, m ≥ 1).
    ///
    /// Errors: wrong θ length, empty subsample, a non-finite result.
    pub fn estimate<M: ?Sized>(
        &mut self, model: &M, theta: &[f64], indices: &[u32],
    ) -> Result<DifferenceEstimate>
    where
        E: DifferenceTerms<M>,
    {
        self.check(theta, indices)?;
        let m = indices.len();
        let counts =
            self.engine.differences(model, &self.cv, theta, 0, indices, &mut self.d[..m], false);
        self.finish(self.cv.sum(theta), m, counts)
    }

    /// ℓ̂_m and σ̂²_m, **overwriting** `grad_log_lik` with ∇ℓ̂_m and `grad_variance` with ∇σ̂²_m.
    pub fn estimate_grad<M: ?Sized>(
        &mut self, model: &M, theta: &[f64], indices: &[u32], grad_log_lik: &mut [f64],
        grad_variance: &mut [f64],
    ) -> Result<DifferenceEstimate>
    where
        E: DifferenceTerms<M>,
    {
        self.check(theta, indices)?;
        Error::check_len("gradient of ℓ̂", grad_log_lik.len(), self.cv.dim())?;
        Error::check_len("gradient of σ̂²", grad_variance.len(), self.cv.dim())?;
        let m = indices.len();
        let counts =
            self.engine.differences(model, &self.cv, theta, 0, indices, &mut self.d[..m], true);
        let cv_sum = self.cv.sum_grad(theta, grad_log_lik);
        let n = self.cv.num_terms() as f64;
        let mf = m as f64;
        self.w[..m].fill(n / mf);
        self.engine.add_weighted_gradients(model, 0, indices, &self.w[..m], grad_log_lik);
        let (mean, _) = self.moments(m);
        for (w, d) in self.w[..m].iter_mut().zip(&self.d[..m]) {
            *w = 2.0 * n * n / (mf * mf) * (d - mean);
        }
        grad_variance.fill(0.0);
        self.engine.add_weighted_gradients(model, 0, indices, &self.w[..m], grad_variance);
        Error::check_finite_estimate("gradient of ℓ̂", grad_log_lik)?;
        Error::check_finite_estimate("gradient of σ̂²", grad_variance)?;
        self.finish(cv_sum, m, counts)
    }

    /// The perturbed log-likelihood ℓ̂_m − σ̂²_m/2 (returned via
    /// [`DifferenceEstimate::perturbed`]), **overwriting** `grad` with ∇ℓ̂_m − ½∇σ̂²_m: the
    /// negative potential gradient of HMC-ECS (without the prior). One weighted pass.
    pub fn perturbed_grad<M: ?Sized>(
        &mut self, model: &M, theta: &[f64], indices: &[u32], grad: &mut [f64],
    ) -> Result<DifferenceEstimate>
    where
        E: DifferenceTerms<M>,
    {
        self.check(theta, indices)?;
        Error::check_len("gradient buffer", grad.len(), self.cv.dim())?;
        let m = indices.len();
        let counts =
            self.engine.differences(model, &self.cv, theta, 0, indices, &mut self.d[..m], true);
        let cv_sum = self.cv.sum_grad(theta, grad);
        let n = self.cv.num_terms() as f64;
        let mf = m as f64;
        let (mean, _) = self.moments(m);
        for (w, d) in self.w[..m].iter_mut().zip(&self.d[..m]) {
            *w = n / mf - n * n / (mf * mf) * (d - mean);
        }
        self.engine.add_weighted_gradients(model, 0, indices, &self.w[..m], grad);
        Error::check_finite_estimate("gradient of ℓ̂ − σ̂²/2", grad)?;
        self.finish(cv_sum, m, counts)
    }
}

impl EcsEstimate for DifferenceEstimate {
    /// ℓ̂ − σ̂²/2.
    fn log_target(&self) -> f64 {
        self.perturbed()
    }
    fn counts(&self) -> EvalCounts {
        self.counts
    }
}

/// m indices uniform with replacement in G blocks, one block redrawn per u-step.
impl GibbsSubsample for BlockSubsample {
    fn draw<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        self.draw_all(rng);
    }
    fn propose<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        self.propose_refresh(rng);
    }
    fn reject(&mut self) {
        BlockSubsample::reject(self);
    }
    fn batch_size(&self) -> usize {
        self.indices().len()
    }
    fn accept(&mut self) {
        BlockSubsample::accept(self);
    }
    fn current_indices(&self, out: &mut Vec<u32>) -> bool {
        out.extend_from_slice(self.indices());
        true
    }
    fn upcoming_indices(&self, skip: usize, refreshes: usize, out: &mut Vec<u32>) -> bool {
        self.upcoming(skip, refreshes, out);
        true
    }
}

/// Perturbed HMC-ECS's estimator: ℓ̂ − σ̂²/2 and its gradient, around the control variate's θ*.
impl<M, E> EcsEstimator<M> for DifferenceEstimator<E>
where
    M: TermHessians + ?Sized,
    E: DifferenceTerms<M>,
{
    type Subsample = BlockSubsample;
    type Estimate = DifferenceEstimate;

    fn estimate_log_target(
        &mut self, model: &M, theta: &[f64], u: &BlockSubsample, grad: &mut [f64],
    ) -> Result<DifferenceEstimate> {
        self.perturbed_grad(model, theta, u.indices(), grad)
    }

    centre_of_control_variate!();
}
