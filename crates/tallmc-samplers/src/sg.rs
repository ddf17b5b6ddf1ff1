//! Pieces shared by the stochastic-gradient kernels ([`Sgld`](crate::Sgld),
//! [`SgHmc`](crate::SgHmc), [`Sgnht`](crate::Sgnht)): how the minibatch is drawn, the estimate
//! of the log-posterior gradient, and the checks of their settings.
//!
//! Every stochastic-gradient kernel estimates
//!
//! ```text
//! ∇log π̂(θ) = ∇log p(θ) + ĝ(θ),   ĝ(θ) an unbiased estimate of Σ_{i<N} ∇ℓ_i(θ),
//! ```
//!
//! from a fresh minibatch S of n indices at every gradient evaluation. ĝ comes from a
//! [`GradientEstimator`]: the plain [`MinibatchGradient`](tallmc_estimators::MinibatchGradient)
//! (N/n) Σ_{i∈S} ∇ℓ_i(θ) (cost n terms + n gradients), or a control-variate estimator (Baker et
//! al. 2017) plugged in as a different type parameter — "SGLD-CV", "SG-HMC-CV" and "SGNHT-CV"
//! are the same kernels with a different `G`. The potential of the papers is U = −log π, so
//! ∇Û = −∇log π̂.

use rand::Rng;
use serde::Serialize;
use tallmc_core::subsample::{WithReplacement, WithoutReplacement};
use tallmc_core::{Error, EvalCounts, LogPrior, Result};
use tallmc_estimators::GradientEstimator;
use tallmc_integrators::Metric;

/// How a stochastic-gradient kernel draws the n indices of each minibatch.
///
/// Both give an unbiased gradient (each index is marginally uniform on 0..N). Without
/// replacement the estimate's variance carries the finite-population factor (N − n)/(N − 1), so
/// a full batch n = N gives the exact gradient; with replacement it does not (the scheme of
/// HMC-ECS's estimators). The default is without replacement, as in SBPS (Pakman et al. 2017,
/// eq. 7) and in the austerity suite's SGLD baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum Subsampling {
    /// n distinct indices (partial Fisher–Yates, O(n) per draw, 4N bytes of memory).
    #[default]
    WithoutReplacement,
    /// n i.i.d. uniform indices (O(n) per draw).
    WithReplacement,
}

/// The minibatch sampler of one chain, built at `init`.
#[derive(Debug, Clone)]
pub(crate) enum BatchSampler {
    Without(WithoutReplacement),
    With(WithReplacement),
}

impl BatchSampler {
    pub(crate) fn new(kind: Subsampling, n: usize, batch: usize) -> Result<Self> {
        Ok(match kind {
            Subsampling::WithoutReplacement => Self::Without(WithoutReplacement::new(n)?),
            Subsampling::WithReplacement => Self::With(WithReplacement::new(n, batch)?),
        })
    }

    /// A fresh minibatch of `batch` indices.
    pub(crate) fn draw<R: Rng + ?Sized>(&mut self, batch: usize, rng: &mut R) -> &[u32] {
        match self {
            Self::Without(s) => {
                s.reset();
                s.draw(batch, rng)
            }
            Self::With(s) => s.draw(rng),
        }
    }
}

/// Writes ∇log π̂(θ) = ∇log p(θ) + ĝ(θ) into `grad` from a fresh minibatch and returns the
/// per-datum evaluations the estimator made.
pub(crate) fn log_posterior_gradient<M, G, R>(
    estimator: &mut G,
    sampler: &mut BatchSampler,
    batch: usize,
    model: &M,
    theta: &[f64],
    grad: &mut [f64],
    rng: &mut R,
) -> EvalCounts
where
    M: LogPrior + ?Sized,
    G: GradientEstimator<M>,
    R: Rng + ?Sized,
{
    let idx = sampler.draw(batch, rng);
    let evals = estimator.estimate_gradient(model, theta, idx, grad);
    model.log_prior_grad(theta, grad);
    evals
}

/// Checks 1 ≤ batch ≤ N.
pub(crate) fn check_batch(name: &'static str, batch: usize, n: Option<usize>) -> Result<()> {
    if batch == 0 {
        return Err(Error::invalid(name, 0, "at least 1"));
    }
    if let Some(n) = n
        && batch > n
    {
        return Err(Error::invalid(
            name,
            batch,
            format!("at most the number of data points N = {n}"),
        ));
    }
    Ok(())
}

/// Checks a step size: finite and > 0.
pub(crate) fn check_step_size(name: &'static str, h: f64) -> Result<()> {
    tallmc_core::error::check_positive(name, h)
}

/// Checks a number of steps L ≥ 1.
pub(crate) fn check_steps(name: &'static str, steps: usize) -> Result<()> {
    if steps == 0 { Err(Error::invalid(name, 0, "at least 1")) } else { Ok(()) }
}

/// Checks that an optional metric has the model's dimension.
pub(crate) fn check_metric(metric: Option<&Metric>, d: usize) -> Result<()> {
    match metric {
        Some(m) if m.dim() != d => {
            Err(Error::dimension("metric (inverse mass matrix)", d, m.dim()))
        }
        _ => Ok(()),
    }
}

/// Whether every entry is finite.
pub(crate) fn all_finite(xs: &[f64]) -> bool {
    xs.iter().all(|x| x.is_finite())
}
