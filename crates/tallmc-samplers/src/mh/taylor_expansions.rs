//! What SMH and MH-SS share: a chain that starts from the order-k Taylor expansions ℓ̂_i of the
//! log-likelihood terms at a centre θ̂ (a [`ControlVariate`]), and the remainders
//! r_i = ℓ_i − ℓ̂_i of a minibatch at θ and θ′.
//!
//! The start checks the centre's length and the initial position θ₀, readies a copy of the
//! proposal, builds the expansions (one pass over the data on every core, whose evaluations the
//! chain reports with its first step) and computes the cheap part of the log target at θ₀,
//! log p(θ₀) + Σ_i ℓ̂_i(θ₀), which must be finite.

use tallmc_core::{Error, EvalCounts, LogPrior, Result, TermHessians};
use tallmc_estimators::{ControlVariate, CvOrder, DifferenceTerms};

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
