//! Minibatch Metropolis–Hastings: the accept/reject step as a sequential mean test on a
//! subsample of the data (Korattikara, Chen & Welling 2014; Bardenet, Doucet & Holmes 2014).
//!
//! MH accepts θ′ ~ q(·|θ) iff log u < log π(θ′) − log π(θ) + log q(θ|θ′) − log q(θ′|θ), that is
//! iff the mean over the N data points of l_i = ℓ_i(θ′) − ℓ_i(θ) exceeds
//!
//! ```text
//! μ₀ = (1/N) log[ u p(θ) q(θ′|θ) / (p(θ′) q(θ|θ′)) ].
//! ```
//!
//! [`MinibatchMh`] hands that question to any [`MeanTest`]: the population is the l_i, revealed
//! in batches drawn without replacement. With [`ExactTest`](tallmc_bounds::ExactTest) this is
//! exact MH; with Austerity's t-test it is approximate (error controlled by ε, bias not bounded
//! in general); with the confidence sampler's bounds each decision is wrong with probability at
//! most δ. The proposal is any [`Proposal`]: a random walk (scale tuned and covariance learned
//! during warmup, as adaptive Metropolis) or an SGLD step. A test defined outside the library
//! plugs in the same way (`crates/tallmc/examples/user_mean_test.rs` defines one and runs it
//! here and in the proxy kernel).
//!
//! **Random streams.** Proposals and u come from the chain's RNG; the subsample indices come
//! from a second ChaCha8 stream seeded from the chain's RNG when the chain is built. So the test used does not
//! shift the proposals or the u's: runs with different tests (or batch sizes) see the same
//! proposals and uniforms, and a test that ends up using all N values (Austerity with ε = 0, the
//! confidence test with δ → 0) reproduces the exact run decision for decision.
//!
//! **Range.** Concentration-bound tests need a bound on max l_i − min l_i. Build the kernel with
//! [`MinibatchMh::with_term_bounds`] on a model implementing [`TermBounds`](tallmc_core::TermBounds); the range is then
//! 2·C(θ, θ′). A test that needs a range on a kernel without one is an error when a chain is
//! built.
//!
//! **Settings and chains.** [`MinibatchMh`] holds the test and the proposal as prototypes; each
//! [`MinibatchMhChain`] it builds owns clones of both (the proposal adapts in the chain), and
//! reports a [`MinibatchMhTuning`]: the proposal's tuning and the test's settings.
//!
//! **Cost.** Two term evaluations per value used (ℓ_i at θ and at θ′), plus the proposal's (SGLD:
//! 2n gradients). The full likelihood is never evaluated, so `lp__` is reported as NaN.

use std::marker::PhantomData;

use rand::{Rng, RngExt, SeedableRng};
use serde::Serialize;
use tallmc_bounds::{MeanTest, Population};
use tallmc_core::rng::ChainRng;
use tallmc_core::subsample::WithoutReplacement;
use tallmc_core::{Chain, Error, EvalCounts, Kernel, LogPrior, Result, StepStats, Terms, Tuning};
use tallmc_estimators::{NoRange, RangeSource, TermBoundRange};

use super::proposal::Proposal;

/// Values evaluated per model call when filling a batch (scratch size, not a statistical
/// setting).
pub(crate) const CHUNK: usize = 1024;

/// Stats of one minibatch MH step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct MinibatchMhStats {
    /// Whether θ′ was accepted (the test's decision).
    #[serde(rename = "accept_stat")]
    pub accepted: bool,
    /// Values l_i the test used.
    #[serde(rename = "data_used")]
    pub used: usize,
    /// `used / N`.
    pub data_fraction: f64,
    /// Batches (looks) the test took.
    pub looks: usize,
    /// The test's final uncertainty (c_t for bounds, the standard error for the t-test, 0 when
    /// every value was used).
    pub half_width: f64,
    /// The threshold μ₀.
    pub threshold: f64,
    /// Proposal step size (random-walk scale or SGLD α).
    #[serde(rename = "stepsize")]
    pub step_size: f64,
    /// Numerical trouble (a non-finite l_i, correction or threshold): rejected.
    pub divergent: bool,
    /// Per-datum evaluations: 2 terms per value used, plus the proposal's.
    #[serde(rename = "n")]
    pub evals: EvalCounts,
}

step_stats_from_fields!(decided: MinibatchMhStats);

/// What a minibatch MH decision tests, given (θ, θ′): the per-datum values the test sees, a
/// shift of the threshold, the values' range bound and the evaluations each value costs. The
/// plain kernel tests l_i = ℓ_i(θ′) − ℓ_i(θ) against μ₀; the proxy kernel
/// ([`crate::mh::proxy`]) tests remainders after a Taylor proxy against μ₀ − (1/N)Σ℘_i.
pub(crate) trait DecisionValues<M: ?Sized> {
    /// Prepares the values of the decision between `theta` and `theta_prime`. Called once per
    /// decision that looks at the data, before any [`DecisionValues::values`].
    fn prepare(&mut self, model: &M, theta: &[f64], theta_prime: &[f64]) -> Prepared;

    /// **Overwrites** `out[k]` with the value of datum `indices[k]` (at most [`CHUNK`] indices).
    fn values(
        &mut self, model: &M, theta: &[f64], theta_prime: &[f64], indices: &[u32], out: &mut [f64],
    );
}

/// The per-decision constants of a [`DecisionValues`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Prepared {
    /// Subtracted from μ₀ to give the threshold the test compares the values' mean with.
    pub shift: f64,
    /// The values' range bound, if any.
    pub range: Option<f64>,
    /// Per-datum evaluations per value drawn.
    pub per_value: EvalCounts,
}

/// The plain differences l_i = ℓ_i(θ′) − ℓ_i(θ), with the range of `B`.
struct PlainDifferences<'a, B> {
    scratch: &'a mut [f64],
    range: PhantomData<B>,
}

impl<M: Terms + ?Sized, B: RangeSource<M>> DecisionValues<M> for PlainDifferences<'_, B> {
    fn prepare(&mut self, model: &M, theta: &[f64], theta_prime: &[f64]) -> Prepared {
        Prepared {
            shift: 0.0,
            range: B::range(model, theta, theta_prime),
            per_value: EvalCounts::terms(2),
        }
    }

    fn values(
        &mut self, model: &M, theta: &[f64], theta_prime: &[f64], indices: &[u32], out: &mut [f64],
    ) {
        let at_theta = &mut self.scratch[..indices.len()];
        model.log_terms(theta_prime, indices, out);
        model.log_terms(theta, indices, at_theta);
        for (c, t) in out.iter_mut().zip(at_theta.iter()) {
            *c -= t;
        }
    }
}

/// The population of one MH decision: the values of `V` over a subsample drawn without
/// replacement.
struct MhPopulation<'a, M: ?Sized, V> {
    model: &'a M,
    theta: &'a [f64],
    theta_prime: &'a [f64],
    sampler: &'a mut WithoutReplacement,
    values: &'a mut V,
    range: Option<f64>,
}

impl<M: Terms + ?Sized, V: DecisionValues<M>> Population for MhPopulation<'_, M, V> {
    fn size(&self) -> usize {
        self.model.num_terms()
    }
    fn drawn(&self) -> usize {
        self.sampler.drawn().len()
    }
    fn draw<R: Rng + ?Sized>(&mut self, out: &mut [f64], rng: &mut R) {
        for chunk in out.chunks_mut(CHUNK) {
            let idx = self.sampler.draw(chunk.len(), rng);
            let k = idx.len();
            self.values.values(self.model, self.theta, self.theta_prime, idx, &mut chunk[..k]);
        }
    }
    fn range(&self) -> Option<f64> {
        self.range
    }
}

/// The adapted tuning of a minibatch MH chain: its proposal's tuning (for the random walk, the
/// scale s) and the mean test's settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MinibatchMhTuning<PT> {
    /// The proposal's tuning.
    pub proposal: PT,
    /// The mean test's name and settings ([`MeanTest::describe`]).
    pub test: Vec<(String, String)>,
}

impl<PT: Tuning> Tuning for MinibatchMhTuning<PT> {
    /// The proposal's lines (`Step size = …` first), then `key = value` per test setting.
    fn comment_lines(&self) -> Vec<String> {
        let mut lines = self.proposal.comment_lines();
        lines.extend(self.test.iter().map(|(k, v)| format!("{k} = {v}")));
        lines
    }
}

/// Minibatch MH settings with mean test `T`, proposal `P` and range source `B` (see the module
/// docs): the test and the proposal are prototypes cloned into each [`MinibatchMhChain`].
#[derive(Debug, Clone)]
pub struct MinibatchMh<T, P, B = NoRange> {
    test: T,
    proposal: P,
    range: PhantomData<fn() -> B>,
}

impl<T: MeanTest, P> MinibatchMh<T, P, NoRange> {
    /// A kernel deciding with `test` on proposals from `proposal`, without a range bound.
    pub fn new(test: T, proposal: P) -> Self {
        Self { test, proposal, range: PhantomData }
    }
}

impl<T: MeanTest, P, B> MinibatchMh<T, P, B> {
    /// The same kernel, taking the range bound from the model's [`TermBounds`](tallmc_core::TermBounds) (needed by the
    /// concentration-bound tests).
    pub fn with_term_bounds(self) -> MinibatchMh<T, P, TermBoundRange> {
        MinibatchMh { test: self.test, proposal: self.proposal, range: PhantomData }
    }

    /// The mean test.
    pub fn test(&self) -> &T {
        &self.test
    }

    /// The prototype proposal (before any adaptation).
    pub fn proposal(&self) -> &P {
        &self.proposal
    }
}

/// What a running minibatch MH chain owns, shared with the proxy chain: θ, the chain's copies
/// of the test and the proposal, the index sampler, the subsampling stream and scratch.
#[derive(Debug, Clone)]
pub(crate) struct MinibatchCore<T, P> {
    test: T,
    proposal: P,
    position: Vec<f64>,
    sampler: WithoutReplacement,
    subsample_rng: ChainRng,
    candidate: Vec<f64>,
    scratch: Vec<f64>,
    n: usize,
}

impl<T: MeanTest + Clone, P> MinibatchCore<T, P> {
    /// Checks θ₀ and the test against the model, prepares a copy of `proposal` and seeds the
    /// subsampling stream from one u64 of `rng`; `range_available` tells whether the decisions'
    /// values will come with a range bound.
    pub(crate) fn build<M, R>(
        test: &T, proposal: &P, model: &M, position: &[f64], rng: &mut R, range_available: bool,
    ) -> Result<Self>
    where
        M: Terms + LogPrior + ?Sized,
        P: Proposal<M> + Clone,
        R: Rng + ?Sized,
    {
        let (d, n) = (model.dim(), model.num_terms());
        if d == 0 {
            return Err(Error::invalid("model dimension", 0, "at least 1"));
        }
        tallmc_core::error::check_finite_vector("initial position", position, d)?;
        let lp = model.log_prior(position);
        if !lp.is_finite() {
            return Err(Error::NonFiniteLogDensity {
                what: format!("the prior at {position:?}"),
                value: lp,
            });
        }
        test.check_population_size(n).map_err(|e| e.context("mean test"))?;
        if test.needs_range() && !range_available {
            let name = test.describe().first().map_or("test".to_string(), |(_, v)| v.clone());
            return Err(Error::TermBoundsRequired { test: name });
        }
        let mut proposal = proposal.clone();
        proposal.init(model)?;
        let subsample_rng = ChainRng::seed_from_u64(rng.random::<u64>());
        Ok(Self {
            test: test.clone(),
            proposal,
            position: position.to_vec(),
            sampler: WithoutReplacement::new(n)?,
            subsample_rng,
            candidate: vec![0.0; d],
            scratch: vec![0.0; CHUNK],
            n,
        })
    }
}

impl<T: MeanTest, P> MinibatchCore<T, P> {
    /// θ.
    pub(crate) fn position(&self) -> &[f64] {
        &self.position
    }

    /// The chain's proposal.
    pub(crate) fn proposal(&self) -> &P {
        &self.proposal
    }

    /// One step deciding on the values of `values` (`None`: the plain differences with the range
    /// of `B`).
    pub(crate) fn step<M, B, V, R>(
        &mut self, model: &M, rng: &mut R, values: Option<&mut V>,
    ) -> Result<(MinibatchMhStats, Option<Prepared>)>
    where
        M: Terms + LogPrior + ?Sized,
        P: Proposal<M>,
        B: RangeSource<M>,
        V: DecisionValues<M>,
        R: Rng + ?Sized,
    {
        let (log_correction, proposal_evals) =
            self.proposal.propose(model, &self.position, &mut self.candidate, rng);
        let u: f64 = rng.random();
        let lp = model.log_prior(&self.position);
        let lp_prime = model.log_prior(&self.candidate);
        let threshold = (u.ln() + lp - lp_prime - log_correction) / self.n as f64;
        let mut stats = MinibatchMhStats {
            accepted: false,
            used: 0,
            data_fraction: 0.0,
            looks: 0,
            half_width: f64::NAN,
            threshold,
            step_size: self.proposal.step_size(),
            divergent: false,
            evals: proposal_evals,
        };
        let mut prepared_out = None;
        if lp_prime == f64::NEG_INFINITY || threshold == f64::INFINITY {
            // Zero prior (or proposal) density at θ′: rejected without looking at the data.
        } else if threshold.is_nan() || log_correction.is_nan() {
            stats.divergent = true;
        } else {
            let mut plain =
                PlainDifferences::<B> { scratch: &mut self.scratch, range: PhantomData };
            let mut look = Look {
                test: &mut self.test,
                model,
                theta: &self.position,
                theta_prime: &self.candidate,
                sampler: &mut self.sampler,
                subsample_rng: &mut self.subsample_rng,
                threshold,
            };
            let decision = match values {
                Some(v) => look.decide(v),
                None => look.decide(&mut plain),
            };
            let (decision, prepared) = decision;
            prepared_out = Some(prepared);
            // The values the test reports using (an auditing wrapper may draw more, for
            // diagnostics only); on an error, everything drawn.
            let used = match &decision {
                Some(Ok(d)) => d.used,
                Some(Err(_)) => self.sampler.drawn().len(),
                None => 0,
            };
            stats.used = used;
            stats.data_fraction = used as f64 / self.n as f64;
            let per = prepared.per_value;
            let used64 = used as u64;
            stats.evals += EvalCounts {
                terms: per.terms * used64,
                gradients: per.gradients * used64,
                hessians: per.hessians * used64,
            };
            match decision {
                Some(Ok(d)) => {
                    stats.accepted = d.above;
                    stats.looks = d.looks;
                    stats.half_width = d.half_width;
                }
                None => stats.divergent = true,
                Some(Err(e)) if e.is_recoverable() => stats.divergent = true,
                Some(Err(e)) => return Err(e.context("mean test")),
            }
        }
        if stats.accepted {
            self.position.copy_from_slice(&self.candidate);
        }
        self.proposal.observe(&self.position);
        Ok((stats, prepared_out))
    }

    /// Starts the proposal's warmup.
    pub(crate) fn begin_warmup<M: ?Sized>(&mut self)
    where
        P: Proposal<M>,
    {
        self.proposal.begin_warmup();
    }

    /// One warmup update of the proposal with the step's hard decision (1 or 0).
    pub(crate) fn adapt<M: ?Sized>(&mut self, accept_stat: f64)
    where
        P: Proposal<M>,
    {
        self.proposal.adapt(accept_stat, &self.position);
    }

    /// Ends the proposal's warmup.
    pub(crate) fn end_warmup<M: ?Sized>(&mut self)
    where
        P: Proposal<M>,
    {
        self.proposal.end_warmup();
    }

    /// The proposal's tuning and the test's settings.
    pub(crate) fn tuning<M: ?Sized>(&self) -> MinibatchMhTuning<P::Tuning>
    where
        P: Proposal<M>,
    {
        MinibatchMhTuning { proposal: self.proposal.tuning(), test: self.test.describe() }
    }
}

/// A running minibatch MH chain (see the module docs): θ, the chain's copies of the test and the
/// proposal, the subsampling stream and scratch.
#[derive(Debug, Clone)]
pub struct MinibatchMhChain<T, P, B = NoRange> {
    core: MinibatchCore<T, P>,
    range: PhantomData<fn() -> B>,
}

impl<T: MeanTest, P, B> MinibatchMhChain<T, P, B> {
    /// θ.
    pub fn position(&self) -> &[f64] {
        self.core.position()
    }

    /// The chain's proposal (with its adapted state).
    pub fn proposal(&self) -> &P {
        self.core.proposal()
    }
}

/// One MH decision's test at (θ, θ′) against μ₀ = `threshold`, whatever values it runs on.
struct Look<'a, M: ?Sized, T> {
    test: &'a mut T,
    model: &'a M,
    theta: &'a [f64],
    theta_prime: &'a [f64],
    sampler: &'a mut WithoutReplacement,
    subsample_rng: &'a mut ChainRng,
    threshold: f64,
}

impl<M: Terms + ?Sized, T: MeanTest> Look<'_, M, T> {
    /// Prepares `values` for (θ, θ′) and runs the test on them against μ₀ − shift. `None` when
    /// the shift is not finite (numerical trouble: the step is divergent).
    fn decide<V: DecisionValues<M>>(
        &mut self, values: &mut V,
    ) -> (Option<Result<tallmc_bounds::Decision>>, Prepared) {
        let (model, theta, theta_prime) = (self.model, self.theta, self.theta_prime);
        let prepared = values.prepare(model, theta, theta_prime);
        if !prepared.shift.is_finite() {
            return (None, prepared);
        }
        self.sampler.reset();
        let mut population = MhPopulation {
            model,
            theta,
            theta_prime,
            sampler: &mut *self.sampler,
            values,
            range: prepared.range,
        };
        // For the plain differences the shift is 0.0 and μ₀ − 0.0 is μ₀ bit for bit.
        let decision = self.test.decide(
            &mut population,
            self.threshold - prepared.shift,
            &mut *self.subsample_rng,
        );
        (Some(decision), prepared)
    }
}

impl<M, T, P, B> Kernel<M> for MinibatchMh<T, P, B>
where
    M: Terms + LogPrior + ?Sized,
    T: MeanTest + Clone + Send + Sync,
    P: Proposal<M> + Clone + Send + Sync,
    B: RangeSource<M>,
{
    type Chain = MinibatchMhChain<T, P, B>;

    /// Checks θ₀ (d finite values, finite prior density) and the test against N (and its range
    /// needs against `B`), prepares the chain's proposal, and seeds the subsampling stream from
    /// one u64 of `rng`.
    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<Self::Chain> {
        let core =
            MinibatchCore::build(&self.test, &self.proposal, model, position, rng, B::AVAILABLE)?;
        Ok(MinibatchMhChain { core, range: PhantomData })
    }
}

impl<M, T, P, B> Chain<M> for MinibatchMhChain<T, P, B>
where
    M: Terms + LogPrior + ?Sized,
    T: MeanTest + Send,
    P: Proposal<M> + Send,
    B: RangeSource<M>,
{
    type Stats = MinibatchMhStats;
    type Tuning = MinibatchMhTuning<P::Tuning>;

    fn position(&self) -> &[f64] {
        self.core.position()
    }

    /// Not computed (the full likelihood is never evaluated): NaN.
    fn log_density(&self) -> f64 {
        f64::NAN
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<MinibatchMhStats> {
        let plain: Option<&mut PlainDifferences<'_, B>> = None;
        self.core.step::<M, B, _, R>(model, rng, plain).map(|(stats, _)| stats)
    }

    fn begin_warmup(&mut self, _num_warmup: usize) {
        self.core.begin_warmup::<M>();
    }

    fn adapt<R: Rng + ?Sized>(
        &mut self, _model: &M, stats: &MinibatchMhStats, _rng: &mut R,
    ) -> Result<()> {
        self.core.adapt::<M>(stats.accept_stat());
        Ok(())
    }

    fn end_warmup(&mut self) {
        self.core.end_warmup::<M>();
    }

    fn tuning(&self) -> Self::Tuning {
        self.core.tuning::<M>()
    }
}
