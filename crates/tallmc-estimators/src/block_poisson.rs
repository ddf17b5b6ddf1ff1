//! The block-Poisson (signed) estimator of the likelihood, in log space (Quiroz, Tran, Villani,
//! Kohn & Dang 2021; used by signed HMC-ECS, Dang et al. 2019 §4; REFERENCES §3).
//!
//! With λ factors, each with χ_l ~ Poisson(1) independent subsample estimates
//! d̂^{(h,l)} = (n/m) Σ_{i≤m} d_{u_i} (m indices with replacement, d_k = ℓ_k − q_k) and a lower
//! bound a:
//!
//! ```text
//! L̂_B = exp(Σ_k q_k(θ)) Π_{l≤λ} ξ_l,    ξ_l = exp((a + λ)/λ) Π_{h≤χ_l} (d̂^{(h,l)} − a)/λ
//! log|L̂_B| = Σ_k q_k(θ) + a + λ + Σ_{l,h} log|(d̂^{(h,l)} − a)/λ|,   sign = Π_{l,h} sign(d̂^{(h,l)} − a)
//! ∇log|L̂_B| = ∇Σ_k q_k(θ) + Σ_{l,h} ∇d̂^{(h,l)} / (d̂^{(h,l)} − a)
//! ```
//!
//! **Properties.** Unbiased: E[Π_{h≤χ}(d̂ − a)/λ] = e^{−1} Σ_j ((d − a)/λ)^j / j! = e^{(d−a)/λ − 1}
//! (d = Σ_k d_k = E d̂), so E ξ_l = e^{d/λ} and E L̂_B = exp(Σq + d) = L(θ). L̂_B can be negative
//! (whenever an odd number of d̂ fall below a): signed HMC-ECS runs on |L̂_B| and corrects by
//! the sign. Working in log space, nothing overflows for any λ, n.
//!
//! **Cost** per call: Σ_l χ_l · m terms at θ (mean λm; + as many gradients with
//! [`BlockPoissonEstimator::estimate_grad`]), plus the control variates of the slots whose index
//! changed (each factor is its own engine lane, so refreshing κ factors re-evaluates only
//! those).

use rand::{Rng, RngExt};
use tallmc_core::{EvalCounts, TermHessians, Terms};

use crate::control_variate::ControlVariate;
use crate::differences::DifferenceTerms;
use crate::error::{Error, Result};
use crate::traits::{EcsEstimate, EcsEstimator, GibbsSubsample, centre_of_control_variate};

/// χ values up to which factor buffers are reserved up front (P(Poisson(1) > 8) ≈ 1.0·10⁻⁶),
/// so refreshes almost never allocate.
const RESERVED_CHI: usize = 8;

/// A Poisson(1) draw by inversion (exact; at most a few uniform comparisons on average).
fn poisson_one<R: Rng + ?Sized>(rng: &mut R) -> u32 {
    let u: f64 = rng.random();
    let mut k = 0u32;
    let mut p = (-1.0f64).exp();
    let mut cdf = p;
    while u > cdf && k < 64 {
        k += 1;
        p /= f64::from(k);
        cdf += p;
    }
    k
}

/// The random numbers u of the block-Poisson estimator: λ factors, factor l holding χ_l ~
/// Poisson(1) blocks of m indices drawn uniformly with replacement; κ factors are refreshed per
/// iteration (correlation of log|L̂_B| between iterations ≈ 1 − κ/λ), with propose / accept /
/// reject so that a rejected pseudo-marginal u-step is undone without allocation.
#[derive(Debug, Clone)]
pub struct BlockPoissonSubsample {
    n: u32,
    m: usize,
    chi: Vec<u32>,
    indices: Vec<Vec<u32>>,
    perm: Vec<usize>,
    kappa: usize,
    refreshed: Vec<usize>,
    saved_chi: Vec<u32>,
    saved: Vec<Vec<u32>>,
    pending: bool,
}

impl BlockPoissonSubsample {
    /// λ = `lambda` factors of blocks of `m` indices from a population of `n`, `kappa` factors
    /// refreshed per iteration. Errors: n = 0 or n > 2³² − 1, m = 0, λ = 0, κ outside [1, λ].
    /// Every factor starts with χ_l = 0; call [`BlockPoissonSubsample::draw_all`].
    pub fn new(n: usize, m: usize, lambda: usize, kappa: usize) -> Result<Self> {
        if n == 0 {
            return Err(Error::invalid("population size N", 0, "at least 1"));
        }
        let n32 = u32::try_from(n)
            .map_err(|_| Error::invalid("population size N", n, "at most 2^32 - 1"))?;
        if m == 0 {
            return Err(Error::invalid("block size m", 0, "at least 1"));
        }
        if lambda == 0 {
            return Err(Error::invalid("number of factors λ", 0, "at least 1"));
        }
        if kappa == 0 || kappa > lambda {
            return Err(Error::invalid(
                "factors refreshed per iteration κ",
                kappa,
                format!("an integer in [1, λ = {lambda}]"),
            ));
        }
        let cap = m * RESERVED_CHI;
        Ok(Self {
            n: n32,
            m,
            chi: vec![0; lambda],
            indices: (0..lambda).map(|_| Vec::with_capacity(cap)).collect(),
            perm: (0..lambda).collect(),
            kappa,
            refreshed: Vec::with_capacity(kappa),
            saved_chi: Vec::with_capacity(kappa),
            saved: (0..kappa).map(|_| Vec::with_capacity(cap)).collect(),
            pending: false,
        })
    }

    /// Population size N.
    pub fn population(&self) -> usize {
        self.n as usize
    }

    /// Block size m.
    pub fn block_size(&self) -> usize {
        self.m
    }

    /// Number of factors λ.
    pub fn num_factors(&self) -> usize {
        self.chi.len()
    }

    /// Factors refreshed per iteration κ.
    pub fn kappa(&self) -> usize {
        self.kappa
    }

    /// χ_l, the number of blocks of factor `l`.
    pub fn blocks(&self, l: usize) -> usize {
        self.chi[l] as usize
    }

    /// Σ_l χ_l: the number of blocks (of m indices each) in use.
    pub fn total_blocks(&self) -> usize {
        self.chi.iter().map(|&c| c as usize).sum()
    }

    /// The χ_l · m indices of factor `l` (block h is `[h·m, (h+1)·m)`).
    pub fn factor_indices(&self, l: usize) -> &[u32] {
        &self.indices[l]
    }

    fn redraw<R: Rng + ?Sized>(&mut self, l: usize, rng: &mut R) {
        let chi = poisson_one(rng);
        self.chi[l] = chi;
        let v = &mut self.indices[l];
        v.clear();
        for _ in 0..chi as usize * self.m {
            v.push(rng.random_range(0..self.n));
        }
    }

    /// Redraws every factor (initialization).
    pub fn draw_all<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        for l in 0..self.chi.len() {
            self.redraw(l, rng);
        }
        self.pending = false;
    }

    /// Redraws κ distinct factors chosen uniformly and returns their numbers; the old ones are
    /// kept until [`BlockPoissonSubsample::accept`] or [`BlockPoissonSubsample::reject`].
    pub fn propose_refresh<R: Rng + ?Sized>(&mut self, rng: &mut R) -> &[usize] {
        let lambda = self.chi.len();
        self.refreshed.clear();
        self.saved_chi.clear();
        for j in 0..self.kappa {
            // Partial Fisher–Yates over the kept permutation: κ distinct uniform factors.
            let r = rng.random_range(j..lambda);
            self.perm.swap(j, r);
            let l = self.perm[j];
            self.refreshed.push(l);
            self.saved_chi.push(self.chi[l]);
            self.saved[j].clear();
            self.saved[j].extend_from_slice(&self.indices[l]);
        }
        for j in 0..self.kappa {
            let l = self.refreshed[j];
            self.redraw(l, rng);
        }
        self.pending = true;
        &self.refreshed
    }

    /// Keeps the refreshed factors.
    pub fn accept(&mut self) {
        self.pending = false;
    }

    /// Restores the factors as they were before the last
    /// [`BlockPoissonSubsample::propose_refresh`].
    pub fn reject(&mut self) {
        if !self.pending {
            return;
        }
        // Restore in reverse so that nothing depends on the order of the refreshed list.
        for j in (0..self.refreshed.len()).rev() {
            let l = self.refreshed[j];
            self.chi[l] = self.saved_chi[j];
            self.indices[l].clear();
            self.indices[l].extend_from_slice(&self.saved[j]);
        }
        self.pending = false;
    }
}

/// The result of one block-Poisson evaluation.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BlockPoissonEstimate {
    /// log|L̂_B| (−∞ when some d̂ equals a exactly).
    pub log_abs_likelihood: f64,
    /// sign(L̂_B): +1, −1, or 0 when some d̂ equals a exactly.
    pub sign: f64,
    /// Σ_k q_k(θ).
    pub control_variate_sum: f64,
    /// Number of negative factors d̂ − a < 0.
    pub negative_blocks: usize,
    /// Per-datum evaluations made by this call.
    pub counts: EvalCounts,
}

/// The block-Poisson estimator (see the module docs), generic over the difference engine.
///
/// ```
/// use rand::SeedableRng;
/// use tallmc_estimators::{BlockPoissonEstimator, BlockPoissonSubsample, ControlVariate, CvOrder, RankOne};
/// use tallmc_models::GaussianMean;
///
/// let y: Vec<f64> = (0..500).map(|i| (i as f64 * 0.37).sin()).collect();
/// let model = GaussianMean::from_observations(y, 1.0, 0.0, 10.0)?;
/// let (cv, _) = ControlVariate::new(&model, &[0.0], CvOrder::One)?;
/// let mut est = BlockPoissonEstimator::new(&model, cv, RankOne::new(10), 10, 20, -20.0)?;
/// let mut sub = BlockPoissonSubsample::new(500, 10, 20, 2)?;
/// sub.draw_all(&mut rand_chacha::ChaCha8Rng::seed_from_u64(3));
/// let e = est.estimate(&model, &[0.05], &sub)?;
/// assert!(e.log_abs_likelihood.is_finite());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct BlockPoissonEstimator<E> {
    cv: ControlVariate,
    engine: E,
    m: usize,
    lambda: usize,
    a: f64,
    d: Vec<f64>,
    w: Vec<f64>,
}

impl<E> BlockPoissonEstimator<E> {
    /// An estimator with blocks of `m` indices, `lambda` factors and lower bound `a`.
    ///
    /// Errors: m = 0, λ = 0, a not finite, `cv` built for a model of another dimension or size.
    pub fn new<M: Terms + ?Sized>(
        model: &M, cv: ControlVariate, engine: E, m: usize, lambda: usize, a: f64,
    ) -> Result<Self> {
        if m == 0 {
            return Err(Error::invalid("block size m", 0, "at least 1"));
        }
        if lambda == 0 {
            return Err(Error::invalid("number of factors λ", 0, "at least 1"));
        }
        if !a.is_finite() {
            return Err(Error::invalid("lower bound a", a, "a finite number"));
        }
        Error::check_len("control variate dimension", cv.dim(), model.dim())?;
        Error::check_len("control variate number of terms N", cv.num_terms(), model.num_terms())?;
        let cap = m * RESERVED_CHI;
        Ok(Self { cv, engine, m, lambda, a, d: vec![0.0; cap], w: vec![0.0; cap] })
    }

    /// The control variate.
    pub fn control_variate(&self) -> &ControlVariate {
        &self.cv
    }

    /// The control variate, to re-centre it.
    pub fn control_variate_mut(&mut self) -> &mut ControlVariate {
        &mut self.cv
    }

    /// The lower bound a.
    pub fn lower_bound(&self) -> f64 {
        self.a
    }

    /// Sets the lower bound a (e.g. after re-centring). Errors unless finite.
    pub fn set_lower_bound(&mut self, a: f64) -> Result<()> {
        if !a.is_finite() {
            return Err(Error::invalid("lower bound a", a, "a finite number"));
        }
        self.a = a;
        Ok(())
    }

    fn check(&self, theta: &[f64], sub: &BlockPoissonSubsample) -> Result<()> {
        Error::check_len("θ", theta.len(), self.cv.dim())?;
        Error::check_len("subsample population N", sub.population(), self.cv.num_terms())?;
        Error::check_len("subsample block size m", sub.block_size(), self.m)?;
        Error::check_len("subsample number of factors λ", sub.num_factors(), self.lambda)?;
        Ok(())
    }

    fn run<M: ?Sized>(
        &mut self, model: &M, theta: &[f64], sub: &BlockPoissonSubsample,
        mut grad: Option<&mut [f64]>,
    ) -> Result<BlockPoissonEstimate>
    where
        E: DifferenceTerms<M>,
    {
        self.check(theta, sub)?;
        let with_gradients = grad.is_some();
        let cv_sum = match grad.as_deref_mut() {
            Some(g) => {
                Error::check_len("gradient buffer", g.len(), self.cv.dim())?;
                self.cv.sum_grad(theta, g)
            }
            None => self.cv.sum(theta),
        };
        let n = self.cv.num_terms() as f64;
        let (m, lambda, a) = (self.m, self.lambda as f64, self.a);
        let scale = n / m as f64;
        let mut log_abs = cv_sum + a + lambda;
        let mut negative = 0usize;
        let mut zero = false;
        let mut counts = EvalCounts::ZERO;
        for l in 0..self.lambda {
            let idx = sub.factor_indices(l);
            let len = idx.len();
            if len == 0 {
                continue;
            }
            if self.d.len() < len {
                self.d.resize(len, 0.0);
                self.w.resize(len, 0.0);
            }
            counts += self.engine.differences(
                model,
                &self.cv,
                theta,
                l,
                idx,
                &mut self.d[..len],
                with_gradients,
            );
            for (db, wb) in self.d[..len].chunks_exact(m).zip(self.w[..len].chunks_exact_mut(m)) {
                let dhat = scale * db.iter().sum::<f64>();
                Error::check_finite_estimate_value("block estimate d̂", dhat)?;
                let gap = dhat - a;
                if gap < 0.0 {
                    negative += 1;
                } else if gap == 0.0 {
                    zero = true;
                }
                log_abs += (gap.abs() / lambda).ln();
                wb.fill(scale / gap);
            }
            if let Some(g) = grad.as_deref_mut() {
                self.engine.add_weighted_gradients(model, l, idx, &self.w[..len], g);
            }
        }
        let sign = if zero {
            0.0
        } else if negative % 2 == 1 {
            -1.0
        } else {
            1.0
        };
        if let Some(g) = grad {
            Error::check_finite_estimate("gradient of log|L̂_B|", g)?;
        }
        if log_abs.is_nan() || log_abs == f64::INFINITY {
            return Err(Error::NonFiniteEstimate { what: "log|L̂_B|", value: log_abs });
        }
        Ok(BlockPoissonEstimate {
            log_abs_likelihood: log_abs,
            sign,
            control_variate_sum: cv_sum,
            negative_blocks: negative,
            counts,
        })
    }

    /// log|L̂_B| and its sign at θ for the subsample state `sub`.
    ///
    /// Errors: wrong θ length, `sub` configured for another N, m or λ, a non-finite d̂ or
    /// log|L̂_B| = +∞/NaN.
    pub fn estimate<M: ?Sized>(
        &mut self, model: &M, theta: &[f64], sub: &BlockPoissonSubsample,
    ) -> Result<BlockPoissonEstimate>
    where
        E: DifferenceTerms<M>,
    {
        self.run(model, theta, sub, None)
    }

    /// [`BlockPoissonEstimator::estimate`], **overwriting** `grad` with ∇log|L̂_B|.
    pub fn estimate_grad<M: ?Sized>(
        &mut self, model: &M, theta: &[f64], sub: &BlockPoissonSubsample, grad: &mut [f64],
    ) -> Result<BlockPoissonEstimate>
    where
        E: DifferenceTerms<M>,
    {
        self.run(model, theta, sub, Some(grad))
    }
}

impl EcsEstimate for BlockPoissonEstimate {
    /// log|L̂_B|.
    fn log_target(&self) -> f64 {
        self.log_abs_likelihood
    }
    fn counts(&self) -> EvalCounts {
        self.counts
    }
}

/// λ factors of χ_l ~ Poisson(1) blocks, κ factors redrawn per u-step.
impl GibbsSubsample for BlockPoissonSubsample {
    fn draw<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        self.draw_all(rng);
    }
    fn propose<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        self.propose_refresh(rng);
    }
    fn reject(&mut self) {
        BlockPoissonSubsample::reject(self);
    }
    fn batch_size(&self) -> usize {
        self.total_blocks() * self.block_size()
    }
    fn accept(&mut self) {
        BlockPoissonSubsample::accept(self);
    }
}

/// Signed HMC-ECS's estimator: log|L̂_B| and its gradient, around the control variate's θ*.
impl<M, E> EcsEstimator<M> for BlockPoissonEstimator<E>
where
    M: TermHessians + ?Sized,
    E: DifferenceTerms<M>,
{
    type Subsample = BlockPoissonSubsample;
    type Estimate = BlockPoissonEstimate;

    fn estimate_log_target(
        &mut self, model: &M, theta: &[f64], u: &BlockPoissonSubsample, grad: &mut [f64],
    ) -> Result<BlockPoissonEstimate> {
        self.estimate_grad(model, theta, u, grad)
    }

    centre_of_control_variate!();
}
