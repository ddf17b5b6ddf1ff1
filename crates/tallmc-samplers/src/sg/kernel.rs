//! The stochastic-gradient kernel: one driver ([`StochasticGradient`] settings building
//! [`SgChain`]s) over its dynamics ([`SgDynamics`]: SGLD, SG-HMC, SGNHT), generic over the
//! gradient estimator. [`Sgld`](crate::Sgld), [`SgHmc`](crate::SgHmc) and
//! [`Sgnht`](crate::Sgnht) are this kernel with the dynamics of their configs.
//!
//! Every stochastic-gradient kernel estimates
//!
//! ```text
//! ∇log π̂(θ) = ∇log p(θ) + ĝ(θ),   ĝ(θ) an unbiased estimate of Σ_{i<N} ∇ℓ_i(θ),
//! ```
//!
//! from a minibatch S of n indices, fresh at every gradient evaluation (or once per kernel step:
//! [`MinibatchScope`]). ĝ comes from a
//! [`GradientEstimator`]: the plain [`MinibatchGradient`]
//! (N/n) Σ_{i∈S} ∇ℓ_i(θ) (cost n terms + n gradients), or a control-variate estimator (Baker et
//! al. 2017) plugged in as a different type parameter — "SGLD-CV", "SG-HMC-CV" and "SGNHT-CV"
//! are the same kernels with a different `G`. The potential of the papers is U = −log π, so
//! ∇Û = −∇log π̂.
//!
//! The kernel draws a fresh minibatch for every gradient (or per step), hands the estimate to the dynamics'
//! update, and reports the dynamics' stats. A step that leaves the finite numbers is flagged
//! divergent and the chain keeps the non-finite values (no rollback): its position is what the
//! dynamics computed, so a run stops there with [`SamplerError::NonFiniteDraw`] (the driver's
//! check) instead of carrying on from garbage.
//!
//! [`SamplerError::NonFiniteDraw`]: crate::SamplerError::NonFiniteDraw

use std::fmt::Debug;

use rand::Rng;
use serde::Serialize;
use tallmc_core::subsample::{WithReplacement, WithoutReplacement};
use tallmc_core::{
    Chain, Error, EvalCounts, Kernel, LogPrior, Result, StepStats, TermGradients, Tuning,
};
use tallmc_estimators::{GradientEstimator, MinibatchGradient};
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

/// When a stochastic-gradient kernel draws a new minibatch.
///
/// Either way each gradient estimate is unbiased. With [`MinibatchScope::PerStep`] the
/// gradient noise of one kernel step is the same minibatch's at every gradient of the step,
/// so its errors add up coherently along an SG-HMC trajectory instead of averaging out (the
/// stationary variance is larger; `tests/samplers/sg_mcmc.rs` checks both against their exact linear
/// theory), and the rows of the minibatch stay in cache: the cost per gradient drops (the
/// control-variate engine evaluates the centre θ* once per step).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum MinibatchScope {
    /// A fresh minibatch for every gradient (Chen, Fox & Guestrin 2014, and the HMC-ECS
    /// paper's baselines).
    #[default]
    PerGradient,
    /// One minibatch per kernel step, used by every gradient of the step: for SG-HMC, one per
    /// trajectory (what BlackJAX's `sghmc` does). For dynamics with one gradient per step (SGLD)
    /// the two scopes are the same.
    PerStep,
}

/// The minibatch sampler of one chain, built with the chain.
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

/// The per-step update of a stochastic-gradient kernel, given the gradient estimate: what
/// SGLD, SG-HMC and SGNHT differ in. Implemented by their configs ([`SgldConfig`](crate::SgldConfig),
/// [`SgHmcConfig`](crate::SgHmcConfig), [`SgnhtConfig`](crate::SgnhtConfig)).
pub trait SgDynamics: Clone + Debug + Send + Sync {
    /// What a chain carries besides θ: momentum, thermostat and scratch buffers.
    type State: Clone + Debug + Send;
    /// The typed stats of one step.
    type Stats: StepStats;
    /// The tuning a chain reports (the settings it ran with).
    type Tuning: Tuning;

    /// Checks the settings' ranges.
    fn validate(&self) -> Result<()>;

    /// Minibatch size n, with the name of the setting for errors (n ≤ N is checked when a
    /// chain is built).
    fn batch(&self) -> (&'static str, usize);

    /// How minibatches are drawn.
    fn subsampling(&self) -> Subsampling;

    /// When a new minibatch is drawn (default: for every gradient).
    fn minibatch_scope(&self) -> MinibatchScope {
        MinibatchScope::PerGradient
    }

    /// The state at a chain's start at `position` (checks dimensions of the settings against
    /// it; may draw, e.g. an initial momentum).
    fn init_state<R: Rng + ?Sized>(&self, position: &[f64], rng: &mut R) -> Result<Self::State>;

    /// One kernel step from θ = `theta` (updated in place, left non-finite when the step
    /// diverged). `gradient(θ, out, rng)` writes ∇log π̂(θ) into `out` from a fresh minibatch
    /// (or, with [`MinibatchScope::PerStep`], the step's minibatch) and returns what it
    /// evaluated.
    fn update<R, F>(
        &self, state: &mut Self::State, theta: &mut [f64], gradient: F, rng: &mut R,
    ) -> Self::Stats
    where
        R: Rng + ?Sized,
        F: FnMut(&[f64], &mut [f64], &mut R) -> EvalCounts;

    /// The tuning a chain in `state` reports.
    fn tuning(&self, state: &Self::State) -> Self::Tuning;
}

/// Stochastic-gradient settings: the dynamics `D` (SGLD, SG-HMC, SGNHT) and the gradient
/// estimator `G` (plain minibatch by default, or control variates), validated when made. Each
/// chain gets its own copy of the estimator.
#[derive(Debug, Clone)]
pub struct StochasticGradient<D, G = MinibatchGradient> {
    dynamics: D,
    estimator: G,
}

impl<D: SgDynamics> StochasticGradient<D> {
    /// The plain minibatch gradient (N/n) Σ_{i∈S} ∇ℓ_i with validated settings (n ≤ N is
    /// checked when a chain is built).
    pub fn new(config: D) -> Result<Self> {
        let estimator = MinibatchGradient::new(config.batch().1);
        Self::with_estimator(config, estimator)
    }
}

impl<D: SgDynamics, G> StochasticGradient<D, G> {
    /// The gradient estimator `estimator` (e.g. control variates), with validated settings.
    pub fn with_estimator(config: D, estimator: G) -> Result<Self> {
        config.validate()?;
        Ok(Self { dynamics: config, estimator })
    }

    /// The settings.
    pub fn config(&self) -> &D {
        &self.dynamics
    }

    /// The gradient estimator.
    pub fn estimator(&self) -> &G {
        &self.estimator
    }
}

/// A running stochastic-gradient chain: θ, the dynamics' state, the minibatch sampler and the
/// chain's gradient estimator.
#[derive(Debug, Clone)]
pub struct SgChain<D: SgDynamics, G> {
    dynamics: D,
    estimator: G,
    sampler: BatchSampler,
    position: Vec<f64>,
    state: D::State,
}

impl<D: SgDynamics, G> SgChain<D, G> {
    /// The dynamics' state (momentum, thermostat, ...).
    pub fn state(&self) -> &D::State {
        &self.state
    }

    /// The chain's gradient estimator.
    pub fn estimator(&self) -> &G {
        &self.estimator
    }
}

impl<M, D, G> Kernel<M> for StochasticGradient<D, G>
where
    M: TermGradients + LogPrior + ?Sized,
    D: SgDynamics,
    G: GradientEstimator<M> + Clone + Send + Sync,
{
    type Chain = SgChain<D, G>;

    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<SgChain<D, G>> {
        let (d, n) = (model.dim(), model.num_terms());
        tallmc_core::error::check_finite_vector("initial position", position, d)?;
        let (name, batch) = self.dynamics.batch();
        check_batch(name, batch, Some(n))?;
        let state = self.dynamics.init_state(position, rng)?;
        Ok(SgChain {
            dynamics: self.dynamics.clone(),
            estimator: self.estimator.clone(),
            sampler: BatchSampler::new(self.dynamics.subsampling(), n, batch)?,
            position: position.to_vec(),
            state,
        })
    }
}

impl<M, D, G> Chain<M> for SgChain<D, G>
where
    M: TermGradients + LogPrior + ?Sized,
    D: SgDynamics,
    G: GradientEstimator<M> + Send,
{
    type Stats = D::Stats;
    type Tuning = D::Tuning;

    fn position(&self) -> &[f64] {
        &self.position
    }

    /// Not computed (the full likelihood is never evaluated): NaN.
    fn log_density(&self) -> f64 {
        f64::NAN
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<D::Stats> {
        let batch = self.dynamics.batch().1;
        let (estimator, sampler) = (&mut self.estimator, &mut self.sampler);
        let (state, position) = (&mut self.state, &mut self.position);
        Ok(match self.dynamics.minibatch_scope() {
            MinibatchScope::PerGradient => {
                let gradient = |theta: &[f64], grad: &mut [f64], rng: &mut R| {
                    log_posterior_gradient(estimator, sampler, batch, model, theta, grad, rng)
                };
                self.dynamics.update(state, position, gradient, rng)
            }
            MinibatchScope::PerStep => {
                let idx = sampler.draw(batch, rng);
                let gradient = |theta: &[f64], grad: &mut [f64], _: &mut R| {
                    let evals = estimator.estimate_gradient(model, theta, idx, grad);
                    model.log_prior_grad(theta, grad);
                    evals
                };
                self.dynamics.update(state, position, gradient, rng)
            }
        })
    }

    fn tuning(&self) -> D::Tuning {
        self.dynamics.tuning(&self.state)
    }
}

/// Writes ∇log π̂(θ) = ∇log p(θ) + ĝ(θ) into `grad` from a fresh minibatch and returns the
/// per-datum evaluations the estimator made.
pub(crate) fn log_posterior_gradient<M, G, R>(
    estimator: &mut G, sampler: &mut BatchSampler, batch: usize, model: &M, theta: &[f64],
    grad: &mut [f64], rng: &mut R,
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
