//! What SMH and MH-SS share: a chain that starts from the order-k Taylor expansions ℓ̂_i of the
//! log-likelihood terms at a centre θ̂ (a [`ControlVariate`]), and the remainders
//! r_i = ℓ_i − ℓ̂_i of a minibatch at θ and θ′.
//!
//! The start checks the centre's length and the initial position θ₀, readies a copy of the
//! proposal, builds the expansions (one pass over the data on every core, whose evaluations the
//! chain reports with its first step) and computes the cheap part of the log target at θ₀,
//! log p(θ₀) + Σ_i ℓ̂_i(θ₀), which must be finite. The running chains hold the same state, an
//! [`ExpansionChain`]: θ, the proposal, the expansions, the cheap part of the log target and the
//! stream of minibatch indices; SMH and MH-SS differ only in how the minibatch decides.

use rand::Rng;
use tallmc_core::{Error, EvalCounts, LogPrior, Result, TermHessians, Terms};
use tallmc_estimators::{ControlVariate, CvOrder, DifferenceTerms};

use super::index_stream::IndexStream;
use super::proposal::Proposal;

/// A chain's start from the expansions at θ̂.
pub(crate) struct ExpansionStart<P> {
    /// The kernel's proposal, cloned and initialised on the model.
    pub(crate) proposal: P,
    /// The expansions ℓ̂_i at θ̂.
    pub(crate) cv: ControlVariate,
    /// The evaluations the expansions cost (to report with the first step).
    pub(crate) evals: EvalCounts,
    /// log p(θ₀) + Σ_i ℓ̂_i(θ₀), finite.
    pub(crate) log_approximation: f64,
}

/// The start of a chain at `position` from the expansions of `order` at `center`, for the kernel
/// named `kernel` in errors ("SMH", "MH-SS").
///
/// # Errors
/// A centre whose length is not the model's dimension, a NaN or infinite θ₀, a proposal that
/// cannot be readied for the model, sums at θ̂ that are not finite, or a log p(θ₀) + Σ ℓ̂_i(θ₀)
/// that is not finite.
pub(crate) fn start_from_expansions<M, P>(
    kernel: &'static str, model: &M, proposal: &P, center: &[f64], position: &[f64], order: CvOrder,
) -> Result<ExpansionStart<P>>
where
    M: TermHessians + LogPrior + ?Sized,
    P: Proposal<M> + Clone,
{
    let d = model.dim();
    if center.len() != d {
        return Err(Error::dimension(format!("{kernel} centre θ̂"), d, center.len()));
    }
    tallmc_core::error::check_finite_vector("initial position", position, d)?;
    let mut proposal = proposal.clone();
    proposal.init(model)?;
    let (cv, evals) = ControlVariate::new_on_all_cores(model, center, order).map_err(|e| {
        Error::invalid("the expansions at θ̂", e, "finite sums at the centre").context(kernel)
    })?;
    let log_approximation = model.log_prior(position) + cv.sum(position);
    if !log_approximation.is_finite() {
        return Err(Error::NonFiniteLogDensity {
            what: format!("log p(θ₀) + Σ ℓ̂_i(θ₀) at the initial position {position:?}"),
            value: log_approximation,
        });
    }
    Ok(ExpansionStart { proposal, cv, evals, log_approximation })
}

/// The remainders r_i = ℓ_i − ℓ̂_i at θ and at θ′ of `indices` (the control variate `cv`'s
/// expansions), into `at_theta` and `at_candidate` (resized), in engine calls of at most 4,096
/// indices on lane 0; returns the evaluations made.
#[allow(clippy::too_many_arguments)]
pub(crate) fn remainders<M: ?Sized, E: DifferenceTerms<M>>(
    engine: &mut E, model: &M, cv: &ControlVariate, theta: &[f64], candidate: &[f64],
    indices: &[u32], at_theta: &mut Vec<f64>, at_candidate: &mut Vec<f64>,
) -> EvalCounts {
    const CHUNK: usize = 4096;
    let k = indices.len();
    at_theta.resize(k, 0.0);
    at_candidate.resize(k, 0.0);
    let mut evals = EvalCounts::ZERO;
    for start in (0..k).step_by(CHUNK) {
        let end = (start + CHUNK).min(k);
        let idx = &indices[start..end];
        evals += engine.differences(model, cv, theta, 0, idx, &mut at_theta[start..end], false);
        evals +=
            engine.differences(model, cv, candidate, 0, idx, &mut at_candidate[start..end], false);
    }
    evals
}

/// What a running SMH or MH-SS chain holds: θ and the cheap part of its log target, the
/// proposal's copy, the expansions at θ̂, the stream of minibatch indices and scratch.
#[derive(Debug, Clone)]
pub(crate) struct ExpansionChain<P, E> {
    pub(crate) proposal: P,
    pub(crate) engine: E,
    pub(crate) cv: ControlVariate,
    pub(crate) position: Vec<f64>,
    /// log p(θ) + Σ_i ℓ̂_i(θ).
    pub(crate) log_approximation: f64,
    pub(crate) candidate: Vec<f64>,
    /// The minibatch's indices, from `stream`.
    pub(crate) indices: Vec<u32>,
    pub(crate) stream: IndexStream,
    at_theta: Vec<f64>,
    at_candidate: Vec<f64>,
    /// Evaluations not reported yet (the expansions', reported with the first step).
    unreported: EvalCounts,
}

/// A proposal θ′ and the cheap part of its log acceptance ratio.
pub(crate) struct Proposed {
    /// log p(θ′) + Σ_i ℓ̂_i(θ′).
    pub(crate) candidate_approximation: f64,
    /// log p(θ′) + Σ ℓ̂_i(θ′) − log p(θ) − Σ ℓ̂_i(θ) + log q(θ|θ′) − log q(θ′|θ).
    pub(crate) log_ratio: f64,
    /// Whether the ratio is NaN or θ′'s approximation +∞ (to be rejected).
    pub(crate) divergent: bool,
    /// The proposal's evaluations, and the expansions' on the first step.
    pub(crate) evals: EvalCounts,
}

impl<P, E> ExpansionChain<P, E> {
    /// The chain at `position` from `start`, with its own copy of `engine` and an index stream
    /// seeded from `rng` (one `u64`) for `model`.
    pub(crate) fn new<M: Terms + ?Sized, R: Rng + ?Sized>(
        model: &M, start: ExpansionStart<P>, engine: E, position: &[f64], rng: &mut R,
    ) -> Self {
        Self {
            proposal: start.proposal,
            engine,
            cv: start.cv,
            position: position.to_vec(),
            log_approximation: start.log_approximation,
            candidate: vec![0.0; position.len()],
            indices: Vec::new(),
            stream: IndexStream::seeded_from(model, rng),
            at_theta: Vec::new(),
            at_candidate: Vec::new(),
            unreported: start.evals,
        }
    }

    /// Proposes θ′ into `candidate` and computes the cheap part of the ratio.
    pub(crate) fn propose<M, R>(&mut self, model: &M, rng: &mut R) -> Proposed
    where
        M: LogPrior + ?Sized,
        P: Proposal<M>,
        R: Rng + ?Sized,
    {
        let (log_correction, proposal_evals) =
            self.proposal.propose(model, &self.position, &mut self.candidate, rng);
        let candidate_approximation =
            model.log_prior(&self.candidate) + self.cv.sum(&self.candidate);
        let log_ratio = candidate_approximation - self.log_approximation + log_correction;
        Proposed {
            candidate_approximation,
            log_ratio,
            divergent: log_ratio.is_nan() || candidate_approximation == f64::INFINITY,
            evals: proposal_evals + std::mem::take(&mut self.unreported),
        }
    }

    /// The remainders r_i at θ and θ′ of `indices` (see [`ExpansionChain::drawn`]), with the
    /// evaluations made.
    pub(crate) fn remainders<M: ?Sized>(&mut self, model: &M) -> EvalCounts
    where
        E: DifferenceTerms<M>,
    {
        remainders(
            &mut self.engine,
            model,
            &self.cv,
            &self.position,
            &self.candidate,
            &self.indices,
            &mut self.at_theta,
            &mut self.at_candidate,
        )
    }

    /// The minibatch's indices and their remainders at θ and at θ′, position by position.
    pub(crate) fn drawn(&self) -> (&[u32], &[f64], &[f64]) {
        (&self.indices, &self.at_theta, &self.at_candidate)
    }

    /// Moves to θ′ if `accepted`, then shows the proposal the chain's position.
    pub(crate) fn finish<M: ?Sized>(&mut self, _model: &M, accepted: bool, proposed: &Proposed)
    where
        P: Proposal<M>,
    {
        if accepted {
            self.position.copy_from_slice(&self.candidate);
            self.log_approximation = proposed.candidate_approximation;
        }
        self.proposal.observe(&self.position);
    }
}
