//! Full-data Metropolis–Hastings over any [`Proposal`]: settings [`FullDataMh`] that build
//! [`MhChain`]s.
//!
//! Each step draws θ′ ~ q(·|θ) and accepts it with probability
//!
//! ```text
//! min{1, π(θ′) q(θ|θ′) / (π(θ) q(θ′|θ))},   log π = log p(θ) + Σ_{i<N} ℓ_i(θ),
//! ```
//!
//! so the chain is exactly π-invariant (for a fixed proposal). The proposal is cloned into
//! every chain, where it adapts during warmup (the random walk tunes its scale and may learn its
//! shape). With the Gaussian random walk this is [`RandomWalkMetropolis`](crate::RandomWalkMetropolis)
//! or [`AdaptiveMetropolis`](crate::AdaptiveMetropolis), depending on the config it is built from.
//!
//! Cost: N term evaluations per step (none if the proposal's prior density is zero), plus the
//! proposal's (none for the random walk). The initial log density (N terms) is reported with the
//! first step.
//!
//! ```
//! use tallmc_core::Tuning;
//! use tallmc_models::GaussianMean;
//! use tallmc_samplers::{RandomWalkConfig, RandomWalkMetropolis, RunConfig, sample_in_memory};
//!
//! let y: Vec<f64> = (0..1_000).map(|i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0).collect();
//! let model = GaussianMean::from_observations(y, 1.0, 0.0, 10.0)?;
//! let (mean, sd) = model.posterior_mean_sd();
//! let config = RunConfig { num_warmup: 500, num_draws: 2000, num_chains: 1, seed: 5, save_warmup: false };
//! let kernel = RandomWalkMetropolis::new(RandomWalkConfig::default())?;
//! let chains = sample_in_memory(&model, config, &[vec![mean]], &kernel)?;
//! let draws = chains[0].sink.coordinate(0);
//! let m = draws.iter().sum::<f64>() / draws.len() as f64;
//! assert!((m - mean).abs() < 0.5 * sd);
//! // The adapted scale, typed; the CSV comments say `Step size = s`.
//! let s = chains[0].report.tuning.scale;
//! assert!(s > 0.0 && chains[0].report.tuning.comment_lines()[0] == format!("Step size = {s}"));
//! // Every step evaluated all N terms (and the first one also the initial point).
//! assert_eq!(chains[0].report.sampling_evals.terms, 2000 * 1000);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use rand::{Rng, RngExt};
use serde::Serialize;

use super::proposal::{Proposal, RandomWalkProposal, RandomWalkProposalConfig};
use tallmc_core::{
    Chain, Error, EvalCounts, FullData, Kernel, LogPrior, Parallelism, Result, Terms,
};

/// Stats of one full-data MH step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct MhStats {
    /// min(1, π(θ′)/π(θ)) (0 when the proposal's density is not finite).
    pub accept_stat: f64,
    /// Whether θ′ was accepted.
    pub accepted: bool,
    /// Whether the proposal's log density was NaN or +∞ (numerical trouble; rejected).
    pub divergent: bool,
    /// Proposal step size used (the random walk's scale s in θ′ = θ + s L z).
    #[serde(rename = "stepsize")]
    pub scale: f64,
    /// Per-datum evaluations (N terms per proposal whose prior density is positive, plus the proposal's).
    #[serde(rename = "n")]
    pub evals: EvalCounts,
    /// Data points looked at.
    pub batch_size: u64,
}

step_stats_from_fields!(MhStats);

/// Full-data Metropolis–Hastings settings over the proposal `P` (see the module docs): the
/// proposal is a prototype cloned into each [`MhChain`].
#[derive(Debug, Clone)]
pub struct FullDataMh<P> {
    proposal: P,
    parallelism: Parallelism,
}

impl<P> FullDataMh<P> {
    /// MH with `proposal` (validated when it was made; checked against the model when a chain
    /// is built) and the full-data sums on `parallelism`.
    pub fn with_proposal(proposal: P, parallelism: Parallelism) -> Self {
        Self { proposal, parallelism }
    }

    /// The prototype proposal (before any adaptation).
    pub fn proposal(&self) -> &P {
        &self.proposal
    }

    /// Threads for the full-data sums.
    pub fn parallelism(&self) -> Parallelism {
        self.parallelism
    }
}

/// A config that makes a full-data random-walk MH kernel:
/// [`RandomWalkConfig`](crate::RandomWalkConfig) (random-walk Metropolis) or
/// [`AdaptiveMetropolisConfig`](crate::AdaptiveMetropolisConfig) (adaptive Metropolis).
pub trait RandomWalkMhConfig {
    /// The random walk's settings and the threads for the full-data sums.
    fn into_parts(self) -> (RandomWalkProposalConfig, Parallelism);
}

impl FullDataMh<RandomWalkProposal> {
    /// Random-walk or adaptive Metropolis (by the config's type) with validated settings; the
    /// covariance is checked against the model when a chain is built.
    pub fn new<C: RandomWalkMhConfig>(config: C) -> Result<Self> {
        let (walk, parallelism) = config.into_parts();
        Ok(Self::with_proposal(RandomWalkProposal::new(walk)?, parallelism))
    }
}

/// A running full-data MH chain: θ with log π(θ) cached, the chain's copy of the proposal, the
/// full-data evaluator and the candidate buffer.
#[derive(Debug, Clone)]
pub struct MhChain<P> {
    proposal: P,
    full: FullData,
    position: Vec<f64>,
    log_density: f64,
    candidate: Vec<f64>,
    /// Evaluations not yet reported (the initial log density, reported with the first step).
    unreported: EvalCounts,
}

impl<P> MhChain<P> {
    /// θ.
    pub fn position(&self) -> &[f64] {
        &self.position
    }

    /// log π(θ).
    pub fn log_density(&self) -> f64 {
        self.log_density
    }

    /// The chain's proposal (with its adapted state).
    pub fn proposal(&self) -> &P {
        &self.proposal
    }
}

impl<M, P> Kernel<M> for FullDataMh<P>
where
    M: Terms + LogPrior + ?Sized,
    P: Proposal<M> + Clone + Send + Sync,
{
    type Chain = MhChain<P>;

    /// Prepares the chain's copy of the proposal, then checks θ₀ (d finite values with a
    /// finite log density). Draws no random numbers.
    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], _rng: &mut R,
    ) -> Result<MhChain<P>> {
        let mut proposal = self.proposal.clone();
        proposal.init(model)?;
        let d = model.dim();
        tallmc_core::error::check_finite_vector("initial position", position, d)?;
        let mut full = FullData::for_model(model, self.parallelism);
        let log_density = full.log_posterior(model, position);
        if !log_density.is_finite() {
            return Err(Error::NonFiniteLogDensity {
                what: format!("the initial position {position:?}"),
                value: log_density,
            });
        }
        Ok(MhChain {
            proposal,
            full,
            position: position.to_vec(),
            log_density,
            candidate: vec![0.0; d],
            unreported: EvalCounts::terms(model.num_terms()),
        })
    }
}

impl<M, P> Chain<M> for MhChain<P>
where
    M: Terms + LogPrior + ?Sized,
    P: Proposal<M> + Send,
{
    type Stats = MhStats;
    type Tuning = P::Tuning;

    fn position(&self) -> &[f64] {
        &self.position
    }

    fn log_density(&self) -> f64 {
        self.log_density
    }

    /// Propose, then accept with probability min{1, π(θ′)q(θ|θ′)/(π(θ)q(θ′|θ))}. Cost: N term
    /// evaluations, unless the prior density of θ′ is zero, plus the proposal's.
    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<MhStats> {
        let (log_correction, proposal_evals) =
            self.proposal.propose(model, &self.position, &mut self.candidate, rng);
        let n = model.num_terms();
        let log_prior = model.log_prior(&self.candidate);
        let (log_density, evals) = if log_prior == f64::NEG_INFINITY {
            (f64::NEG_INFINITY, EvalCounts::ZERO)
        } else {
            (log_prior + self.full.log_likelihood(model, &self.candidate), EvalCounts::terms(n))
        };
        let divergent =
            log_density.is_nan() || log_density == f64::INFINITY || log_correction.is_nan();
        let log_ratio = if divergent || log_density == f64::NEG_INFINITY {
            f64::NEG_INFINITY
        } else {
            (log_density - self.log_density) + log_correction
        };
        let accept_stat = log_ratio.min(0.0).exp();
        let u: f64 = rng.random();
        let accepted = !divergent && u.ln() < log_ratio;
        if accepted {
            self.position.copy_from_slice(&self.candidate);
            self.log_density = log_density;
        }
        self.proposal.observe(&self.position);
        Ok(MhStats {
            accept_stat,
            accepted,
            divergent,
            scale: self.proposal.step_size(),
            evals: evals + proposal_evals + std::mem::take(&mut self.unreported),
            batch_size: evals.terms,
        })
    }

    fn begin_warmup(&mut self, _num_warmup: usize) {
        self.proposal.begin_warmup();
    }

    fn adapt<R: Rng + ?Sized>(&mut self, _model: &M, stats: &MhStats, _rng: &mut R) -> Result<()> {
        self.proposal.adapt(stats.accept_stat, &self.position);
        Ok(())
    }

    fn end_warmup(&mut self) {
        self.proposal.end_warmup();
    }

    fn tuning(&self) -> P::Tuning {
        self.proposal.tuning()
    }
}
