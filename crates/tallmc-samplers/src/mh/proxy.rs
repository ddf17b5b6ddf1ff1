//! The confidence sampler with Taylor proxies (Bardenet, Doucet & Holmes 2017, JMLR, §7.2):
//! minibatch MH whose mean test sees the *remainders* of the log-likelihood differences after a
//! second-order Taylor proxy, so that at equilibrium a decision needs a few data points instead
//! of a large fraction of them.
//!
//! **The proxy.** Exact MH accepts θ′ iff Λ_n = (1/n) Σ_i [ℓ_i(θ′) − ℓ_i(θ)] > ψ with
//! ψ = (1/n) log[u p(θ) q(θ′|θ) / (p(θ′) q(θ|θ′))] (see [`crate::mh::minibatch`]). Around a
//! centre θ* (h = θ − θ*, h′ = θ′ − θ*), the second-order Taylor proxy of ℓ_i(θ′) − ℓ_i(θ) is
//!
//! ```text
//! ℘_i = ∇ℓ_i(θ*)ᵀ(h′ − h) + ½ (h′ − h)ᵀ ∇²ℓ_i(θ*) (h′ + h)         (= q_i(θ′) − q_i(θ))
//! ```
//!
//! and its mean over the data costs O(d²), not O(n), from the data sums g = Σ_i ∇ℓ_i(θ*) and
//! H = Σ_i ∇²ℓ_i(θ*) computed once ([`ControlVariate`] of order 2):
//!
//! ```text
//! (1/n) Σ_i ℘_i = (1/n) [ gᵀ(θ′ − θ) + ½ (θ′ − θ)ᵀ H (h′ + h) ].
//! ```
//!
//! With the remainders r_i = ℓ_i(θ′) − ℓ_i(θ) − ℘_i, Λ_n = (1/n)Σ r_i + (1/n)Σ ℘_i exactly, so
//! the MH decision is
//!
//! ```text
//! accept  ⇔  (1/n) Σ_i r_i  >  ψ − (1/n) Σ_i ℘_i,
//! ```
//!
//! a question about the mean of the finite population {r_i}: the sequential mean test of
//! [`MinibatchMh`] is run on the r_i of a subsample drawn without
//! replacement against the shifted threshold (BDH 2017 decide Λ*_t + (1/n)Σ℘_i vs ψ — the same
//! comparison).
//!
//! **The remainder bound.** With M₃ a bound on the third partial derivatives of every ℓ_i
//! ([`TaylorRemainderBound`]), Taylor's theorem gives |ℓ_i(θ*+h) − q_i(θ*+h)| ≤ (M₃/6)‖h‖₁³, so
//!
//! ```text
//! |r_i| ≤ R_p = (1/3) M₃ max(‖h‖₁, ‖h′‖₁)³,     range of the r_i ≤ 2 R_p,
//! ```
//!
//! which is the range handed to the concentration bound. Near θ* (at equilibrium on tall data
//! ‖h‖ = O(n^{−1/2})) the remainders' spread and range are O(n^{−3/2}) while the plain
//! differences' are O(n^{−1/2}); the gap |Λ_n − ψ| is O(1/n), and the half-width c_t reaches it
//! after t ≳ n² σ̂² values: O(n) without proxies, O(1) with them.
//!
//! **Why each decision is still wrong with probability ≤ δ.** The proxy changes the population
//! and the threshold, not the question: "mean of r_i > ψ − (1/n)Σ℘_i" is *the exact MH decision*,
//! the r_i are a fixed finite population given (θ, θ′, u), and 2R_p is a valid range bound for
//! it. The confidence test's guarantee (BDH 2014, Lemma 3.1: for every population with a valid
//! range, the decision differs from the exact one with probability ≤ δ) applies unchanged —
//! whatever θ* is, so re-centring θ* on the chain's past does not affect it either. With
//! [`ExactTest`](tallmc_bounds::ExactTest) the kernel is exact MH.
//!
//! **Rounding.** The computed remainder differs from the true one by rounding in ℓ_i(θ′) − ℓ_i(θ)
//! − ℘_i, of the order of the unit roundoff times |ℓ_i(θ)| + |ℓ_i(θ′)| + |℘_i's terms|, which can
//! exceed R_p when R_p is tiny (a quadratic model has R_p = 0). Since the true remainder lies in
//! [−R_p, R_p], a computed value within R_p + 10⁻⁹ × those magnitudes is clamped into
//! [−R_p, R_p] (a projection onto an interval containing the true value: never less accurate).
//! A value further out is left as it is, so that a wrong M₃ shows up as the test's
//! range-exceeded error instead of being hidden.
//!
//! **Re-centring.** θ* is the caller's (usually the posterior mode, e.g. from
//! [`laplace_approximation`](crate::laplace_approximation)). Optionally
//! ([`ProxyConfig::recenter_every`]) θ* is moved to the current state every k iterations (the
//! authors' code: k = 20), each time with a full pass over the data.
//!
//! **Cost** (per-datum evaluations, in [`ProxyMhStats::evals`]): setup, one full pass at θ*
//! (n terms, n gradients, n Hessians), reported by the first step, and the same again at every
//! re-centring. Per value used: ℓ_i at θ and θ′ (2 terms) and the per-datum proxy ℘_i — ∇ℓ_i(θ*)
//! (the model returns it with ℓ_i(θ*): 1 term, 1 gradient) and ∇²ℓ_i(θ*)(θ′ − θ) (1 Hessian-vector
//! product): 3 terms, 1 gradient, 1 Hessian. Plus the proposal's. The shift costs O(d²) and no
//! per-datum evaluation.
//!
//! **Random streams.** As [`MinibatchMh`]: proposals and u from the chain's
//! RNG, subsample indices from a second stream seeded when the chain is built, so a proxy chain and a plain
//! chain with the same seed see the same proposals and uniforms, and make the same decisions
//! whenever both tests decide exactly (e.g. [`ExactTest`](tallmc_bounds::ExactTest)).
//!
//! ```
//! use tallmc_bounds::{BoundKind, ConfidenceConfig, ConfidenceTest};
//! use tallmc_models::GaussianMean;
//! use tallmc_samplers::{
//!     ProxyConfig, ProxyMinibatchMh, RandomWalkProposal, RandomWalkProposalConfig, RunConfig,
//!     sample_in_memory,
//! };
//!
//! let y: Vec<f64> = (0..20_000).map(|i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0).collect();
//! let model = GaussianMean::from_observations(y, 1.0, 0.0, 10.0)?;
//! let (mode, sd) = model.posterior_mean_sd();
//! let config = RunConfig { num_warmup: 200, num_draws: 500, num_chains: 1, seed: 3, save_warmup: false };
//! let test = ConfidenceTest::new(ConfidenceConfig::new(BoundKind::EmpiricalBernsteinSerfling, 0.01))?;
//! let walk = RandomWalkProposal::new(RandomWalkProposalConfig {
//!     covariance: Some(vec![sd * sd]),
//!     ..Default::default()
//! })?;
//! let kernel = ProxyMinibatchMh::new(test, walk, ProxyConfig::new(vec![mode]))?;
//! let chains = sample_in_memory(&model, config, &[vec![mode]], &kernel)?;
//! // θ* stayed where it was put.
//! assert_eq!(chains[0].report.tuning.center, vec![mode]);
//! // ℓ_i is quadratic in μ (M₃ = 0): every decision is taken on the first batch of 100.
//! let used = chains[0].sink.stat("data_used__").unwrap();
//! assert!(used.iter().all(|&u| u <= 100.0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use rand::Rng;
use serde::{Deserialize, Serialize};
use tallmc_bounds::MeanTest;
use tallmc_core::{
    Chain, Error, EvalCounts, Kernel, LogPrior, Result, TaylorRemainderBound, TermHessians, Tuning,
};
use tallmc_estimators::{ControlVariate, CvOrder, NoRange};

use super::minibatch::{
    CHUNK, DecisionValues, MinibatchCore, MinibatchMh, MinibatchMhStats, MinibatchMhTuning,
    Prepared,
};
use super::proposal::Proposal;

/// Relative size, in units of the magnitudes of the terms entering a computed remainder, of the
/// rounding allowance within which a remainder just outside [−R_p, R_p] is clamped (see the
/// module docs). Matches the bounds crate's relative range slack.
const ROUNDING_SLACK: f64 = 1e-9;

/// Settings of [`ProxyMinibatchMh`]: the centre θ* of the Taylor proxies and whether it moves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProxyConfig {
    /// The centre θ* (usually the posterior mode): d finite values.
    pub center: Vec<f64>,
    /// Move θ* to the current state before every k-th iteration (k ≥ 1; warmup included), with
    /// a full pass over the data each time; `None` (the default): θ* stays fixed.
    pub recenter_every: Option<usize>,
}

impl ProxyConfig {
    /// A fixed centre θ* = `center`.
    pub fn new(center: Vec<f64>) -> Self {
        Self { center, recenter_every: None }
    }

    /// Re-centres θ* at the current state every `k` iterations (the authors' code: 20).
    pub fn with_recenter_every(mut self, k: usize) -> Self {
        self.recenter_every = Some(k);
        self
    }

    /// Checks what can be checked without the model: θ* non-empty and finite (naming the first
    /// bad entry), a re-centring interval ≥ 1.
    pub fn validate(&self) -> Result<()> {
        if self.center.is_empty() {
            return Err(Error::invalid("proxy centre θ*", "[]", "d ≥ 1 finite values"));
        }
        tallmc_core::error::check_finite("proxy centre θ*", &self.center)?;
        if self.recenter_every == Some(0) {
            return Err(Error::invalid("proxy re-centring interval", 0, "at least 1 iteration"));
        }
        Ok(())
    }
}

/// Stats of one [`ProxyMinibatchMh`] step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ProxyMhStats {
    /// Whether θ′ was accepted (the test's decision).
    #[serde(rename = "accept_stat")]
    pub accepted: bool,
    /// Remainders r_i the test used.
    #[serde(rename = "data_used")]
    pub used: usize,
    /// `used / N`.
    pub data_fraction: f64,
    /// Batches (looks) the test took.
    pub looks: usize,
    /// The test's final uncertainty (c_t for bounds, 0 when every value was used).
    pub half_width: f64,
    /// The MH threshold ψ (= μ₀); the test compared the remainders' mean with
    /// ψ − `proxy_mean`.
    pub threshold: f64,
    /// (1/N) Σ_i ℘_i, the proxies' exact mean (NaN when the data were not looked at).
    pub proxy_mean: f64,
    /// R_p = (1/3) M₃ max(‖h‖₁, ‖h′‖₁)³ (the remainders' range bound is 2R_p; NaN when the data
    /// were not looked at).
    pub remainder_bound: f64,
    /// Proposal step size.
    #[serde(rename = "stepsize")]
    pub step_size: f64,
    /// Numerical trouble (a non-finite value, proxy mean or threshold): rejected.
    pub divergent: bool,
    /// Whether θ* was moved to the current state before this step.
    pub recentred: bool,
    /// Per-datum evaluations: per value used 3 terms, 1 gradient, 1 Hessian-vector product; the
    /// setup pass (first step) and re-centring passes; the proposal's.
    #[serde(rename = "n")]
    pub evals: EvalCounts,
}

step_stats_from_fields!(decided: ProxyMhStats);

/// The remainders r_i = ℓ_i(θ′) − ℓ_i(θ) − ℘_i of one decision (see the module docs), with the
/// data sums at θ* and the scratch to evaluate them.
#[derive(Debug, Clone)]
struct Remainders {
    cv: ControlVariate,
    /// θ′ − θ.
    step: Vec<f64>,
    /// h′ + h = θ′ + θ − 2θ*.
    sum: Vec<f64>,
    /// R_p of the current decision.
    bound: f64,
    at_theta: Vec<f64>,
    at_center: Vec<f64>,
    /// ∇ℓ_i(θ*), CHUNK × d.
    grads: Vec<f64>,
    /// ∇²ℓ_i(θ*)(θ′ − θ), CHUNK × d.
    hv: Vec<f64>,
}

impl Remainders {
    fn new(cv: ControlVariate) -> Self {
        let d = cv.dim();
        Self {
            cv,
            step: vec![0.0; d],
            sum: vec![0.0; d],
            bound: 0.0,
            at_theta: vec![0.0; CHUNK],
            at_center: vec![0.0; CHUNK],
            grads: vec![0.0; CHUNK * d],
            hv: vec![0.0; CHUNK * d],
        }
    }
}

impl<M: TaylorRemainderBound + TermHessians + ?Sized> DecisionValues<M> for Remainders {
    fn prepare(&mut self, model: &M, theta: &[f64], theta_prime: &[f64]) -> Prepared {
        let center = self.cv.center();
        for j in 0..theta.len() {
            self.step[j] = theta_prime[j] - theta[j];
            self.sum[j] = (theta_prime[j] - center[j]) + (theta[j] - center[j]);
        }
        // Σ_i ℘_i = gᵀ(θ′ − θ) + ½ (θ′ − θ)ᵀ H (h′ + h), O(d²).
        let d = self.step.len();
        let (g, hess) = (self.cv.gradient_sum(), self.cv.hessian_sum());
        let mut total = 0.0;
        let mut quad = 0.0;
        for j in 0..d {
            total += g[j] * self.step[j];
            let row = &hess[j * d..(j + 1) * d];
            quad += self.step[j] * row.iter().zip(&self.sum).map(|(a, b)| a * b).sum::<f64>();
        }
        total += 0.5 * quad;
        self.bound = model.proxy_remainder_bound(center, theta, theta_prime);
        Prepared {
            shift: total / self.cv.num_terms() as f64,
            range: Some(2.0 * self.bound),
            per_value: EvalCounts { terms: 3, gradients: 1, hessians: 1 },
        }
    }

    fn values(
        &mut self, model: &M, theta: &[f64], theta_prime: &[f64], indices: &[u32], out: &mut [f64],
    ) {
        let (k, d) = (indices.len(), self.step.len());
        let center = self.cv.center();
        model.log_terms(theta_prime, indices, out);
        model.log_terms(theta, indices, &mut self.at_theta[..k]);
        model.log_terms_grads(center, indices, &mut self.at_center[..k], &mut self.grads[..k * d]);
        model.hessian_vector_products(center, indices, &self.step, &mut self.hv[..k * d]);
        let bound = self.bound;
        for (m, r) in out.iter_mut().enumerate() {
            let g = &self.grads[m * d..(m + 1) * d];
            let hv = &self.hv[m * d..(m + 1) * d];
            let (mut lin, mut quad, mut magnitude) = (0.0, 0.0, 0.0);
            for j in 0..d {
                let a = g[j] * self.step[j];
                let b = hv[j] * self.sum[j];
                lin += a;
                quad += b;
                magnitude += a.abs() + 0.5 * b.abs();
            }
            let (l_prime, l) = (*r, self.at_theta[m]);
            let remainder = (l_prime - l) - (lin + 0.5 * quad);
            magnitude += l_prime.abs() + l.abs();
            // Rounding allowance: the true remainder is in [−R_p, R_p] (module docs).
            if remainder.abs() <= bound + ROUNDING_SLACK * magnitude {
                *r = remainder.clamp(-bound, bound);
            } else {
                *r = remainder;
            }
        }
    }
}

/// The adapted tuning of a proxy chain: the minibatch MH tuning (proposal and test) and the
/// centre θ* of the proxies with its re-centring record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProxyMhTuning<PT> {
    /// The proposal's tuning and the test's settings.
    pub minibatch: MinibatchMhTuning<PT>,
    /// The current centre θ*.
    pub center: Vec<f64>,
    /// The re-centring interval k, if θ* moves.
    pub recenter_every: Option<usize>,
    /// Re-centrings made so far.
    pub recenterings: usize,
}

impl<PT: Tuning> Tuning for ProxyMhTuning<PT> {
    /// The minibatch MH lines, then the proxies and the re-centring.
    fn comment_lines(&self) -> Vec<String> {
        let mut lines = self.minibatch.comment_lines();
        lines.push("proxies = second-order Taylor around theta* (BDH 2017)".into());
        match self.recenter_every {
            Some(k) => lines.push(format!(
                "proxy re-centring every {k} iterations ({} so far)",
                self.recenterings
            )),
            None => lines.push("proxy centre theta* fixed".into()),
        }
        lines
    }
}

/// The confidence sampler with Taylor proxies (BDH 2017): minibatch MH with mean test `T` and
/// proposal `P`, deciding on the remainders after a second-order Taylor proxy around θ* (see the
/// module docs). Needs a model with per-datum Hessians and a third-derivative bound
/// ([`TaylorRemainderBound`]); any [`MeanTest`] works (the concentration-bound tests get the
/// range 2R_p). These are the settings; each [`ProxyMinibatchMhChain`] they build owns copies of
/// the test and the proposal and the data sums at its θ*.
#[derive(Debug, Clone)]
pub struct ProxyMinibatchMh<T, P> {
    inner: MinibatchMh<T, P, NoRange>,
    config: ProxyConfig,
}

impl<T: MeanTest, P> ProxyMinibatchMh<T, P> {
    /// A kernel deciding with `test` on proposals from `proposal`, with proxies around
    /// `config.center`. Errors: a bad config ([`ProxyConfig::validate`]); θ*'s length is checked
    /// against the model when a chain is built.
    pub fn new(test: T, proposal: P, config: ProxyConfig) -> Result<Self> {
        config.validate()?;
        Ok(Self { inner: MinibatchMh::new(test, proposal), config })
    }

    /// The mean test.
    pub fn test(&self) -> &T {
        self.inner.test()
    }

    /// The prototype proposal (before any adaptation).
    pub fn proposal(&self) -> &P {
        self.inner.proposal()
    }

    /// The settings.
    pub fn config(&self) -> &ProxyConfig {
        &self.config
    }
}

/// A running proxy chain: the minibatch MH chain's state, the remainders with the data sums at
/// the current θ*, and the re-centring record.
#[derive(Debug, Clone)]
pub struct ProxyMinibatchMhChain<T, P> {
    core: MinibatchCore<T, P>,
    remainders: Remainders,
    recenter_every: Option<usize>,
    /// Evaluations not reported yet (the setup pass, reported by the first step).
    unreported: EvalCounts,
    /// Steps made so far.
    steps: usize,
    /// Re-centrings made so far.
    recenterings: usize,
}

impl<T: MeanTest, P> ProxyMinibatchMhChain<T, P> {
    /// θ.
    pub fn position(&self) -> &[f64] {
        self.core.position()
    }

    /// The current centre θ*.
    pub fn center(&self) -> &[f64] {
        self.remainders.cv.center()
    }

    /// Re-centrings made so far.
    pub fn recenterings(&self) -> usize {
        self.recenterings
    }

    /// The chain's proposal (with its adapted state).
    pub fn proposal(&self) -> &P {
        self.core.proposal()
    }
}

impl<M, T, P> Kernel<M> for ProxyMinibatchMh<T, P>
where
    M: TaylorRemainderBound + TermHessians + LogPrior + ?Sized,
    T: MeanTest + Clone + Send + Sync,
    P: Proposal<M> + Clone + Send + Sync,
{
    type Chain = ProxyMinibatchMhChain<T, P>;

    /// Checks θ* against the model's dimension and M₃, builds the minibatch MH chain (as
    /// [`MinibatchMh`] does; one u64 of `rng` seeds the subsampling stream), then makes the
    /// setup pass at θ* (reported by the first step).
    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<Self::Chain> {
        let d = model.dim();
        if d > 0 {
            tallmc_core::error::check_finite_vector("proxy centre θ*", &self.config.center, d)?;
        }
        let m3 = model.third_derivative_bound();
        if !(m3.is_finite() && m3 >= 0.0) {
            return Err(Error::invalid(
                "the model's third-derivative bound M₃",
                m3,
                "a finite value ≥ 0",
            ));
        }
        let core = MinibatchCore::build(
            self.inner.test(),
            self.inner.proposal(),
            model,
            position,
            rng,
            true,
        )?;
        let (cv, setup) = ControlVariate::new(model, &self.config.center, CvOrder::Two)
            .map_err(|e| e.context("proxy sums at θ*"))?;
        Ok(ProxyMinibatchMhChain {
            core,
            remainders: Remainders::new(cv),
            recenter_every: self.config.recenter_every,
            unreported: setup,
            steps: 0,
            recenterings: 0,
        })
    }
}

impl<M, T, P> Chain<M> for ProxyMinibatchMhChain<T, P>
where
    M: TaylorRemainderBound + TermHessians + LogPrior + ?Sized,
    T: MeanTest + Send,
    P: Proposal<M> + Send,
{
    type Stats = ProxyMhStats;
    type Tuning = ProxyMhTuning<P::Tuning>;

    fn position(&self) -> &[f64] {
        self.core.position()
    }

    /// Not computed (the full likelihood is never evaluated): NaN.
    fn log_density(&self) -> f64 {
        f64::NAN
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<ProxyMhStats> {
        let recentred =
            self.recenter_every.is_some_and(|k| self.steps > 0 && self.steps.is_multiple_of(k));
        if recentred {
            self.unreported += self
                .remainders
                .cv
                .recenter(model, self.core.position())
                .map_err(|e| e.context("proxy sums at θ*"))?;
            self.recenterings += 1;
        }
        self.steps += 1;
        let (s, prepared): (MinibatchMhStats, _) =
            self.core.step::<M, NoRange, _, R>(model, rng, Some(&mut self.remainders))?;
        let (proxy_mean, remainder_bound) =
            prepared.map_or((f64::NAN, f64::NAN), |q| (q.shift, self.remainders.bound));
        Ok(ProxyMhStats {
            accepted: s.accepted,
            used: s.used,
            data_fraction: s.data_fraction,
            looks: s.looks,
            half_width: s.half_width,
            threshold: s.threshold,
            proxy_mean,
            remainder_bound,
            step_size: s.step_size,
            divergent: s.divergent,
            recentred,
            evals: s.evals + std::mem::take(&mut self.unreported),
        })
    }

    fn begin_warmup(&mut self, _num_warmup: usize) {
        self.core.begin_warmup::<M>();
    }

    fn adapt<R: Rng + ?Sized>(
        &mut self, _model: &M, stats: &ProxyMhStats, _rng: &mut R,
    ) -> Result<()> {
        self.core.adapt::<M>(f64::from(u8::from(stats.accepted)));
        Ok(())
    }

    fn end_warmup(&mut self) {
        self.core.end_warmup::<M>();
    }

    fn tuning(&self) -> Self::Tuning {
        ProxyMhTuning {
            minibatch: self.core.tuning::<M>(),
            center: self.center().to_vec(),
            recenter_every: self.recenter_every,
            recenterings: self.recenterings,
        }
    }
}
