//! One HMC-ECS kernel over its estimator: [`EcsKernel`] settings build [`EcsChain`]s that run
//! the HMC-within-Gibbs sweep of `ecs::gibbs` on any [`EcsEstimator`].
//!
//! Perturbed HMC-ECS ([`HmcEcs`](crate::HmcEcs)), signed HMC-ECS
//! ([`SignedHmcEcs`](crate::SignedHmcEcs)) and HMC-ECS on an estimator of your own
//! ([`HmcEcsWithEstimator`](crate::HmcEcsWithEstimator)) are this kernel with a different
//! [`EcsSetup`]: how a chain's estimator and subsample are made at its start (θ*, control
//! variates, tuning of m or a) and what the chain reports ([`EcsReport`]: the typed stats and
//! the estimator's part of the tuning). Everything else (checks of the start, the estimate at
//! θ₀, the θ-step's metric and step size, the sweep, warmup re-centring, the tuning) is
//! written once here.

use std::fmt::Debug;
use std::marker::PhantomData;

use rand::Rng;
use serde::Serialize;
use tallmc_core::{
    Chain, Error, EvalCounts, Kernel, LogPriorHessian, Result, StepStats, TermHessians, Tuning,
};
use tallmc_integrators::{Metric, PhasePoint};

use tallmc_estimators::{EcsEstimator, GibbsSubsample};

use super::gibbs::{EcsPoint, EcsStep, gibbs_sweep, initial_point, recenter};
use super::rows_ahead::RowsAhead;
use super::settings::{EcsDynamics, ThetaIntegrator};
use super::theta::Dynamics;

/// What a chain of an [`EcsSetup`] starts from: the estimator (with its control variate at
/// θ*), the subsample u already drawn, the Laplace covariance at θ* (the metric unless
/// `initial_metric` is given), the evaluations the setup made, and the estimator's part of the
/// report.
#[derive(Debug, Clone)]
pub struct EcsStart<T, S, H> {
    /// The chain's estimator.
    pub estimator: T,
    /// The subsample u, drawn from p(u).
    pub subsample: S,
    /// Laplace covariance Σ = (−∇²log π(θ*))⁻¹, d × d row-major.
    pub covariance: Vec<f64>,
    /// Per-datum evaluations of the setup (reported with the first step).
    pub evals: EvalCounts,
    /// The estimator's settings as the chain reports them.
    pub report: H,
}

/// The estimator's part of an HMC-ECS chain's tuning (m and G, or the block-Poisson λ, κ, a),
/// with its CSV comment lines.
pub trait EcsHead: Clone + Debug + Send + Serialize {
    /// The comment lines that start the tuning report.
    fn lines(&self) -> Vec<String>;
}

/// What an HMC-ECS chain reports for estimates of type `E`: its typed step stats.
pub trait EcsReport<E>: EcsHead {
    /// The stats of one iteration.
    type Stats: StepStats;

    /// The stats of a sweep `step` that left the chain at estimate `estimate`, with `batch`
    /// data indices in its subsample.
    fn stats(&self, step: &EcsStep, estimate: &E, batch: usize) -> Self::Stats;
}

/// How an HMC-ECS kernel starts a chain: the estimator (an [`EcsEstimator`]) with its
/// subsample, and what the chain reports. Implemented by [`PerturbedEcs`](crate::PerturbedEcs),
/// [`SignedEcs`](crate::SignedEcs) and [`UserEcs`](crate::UserEcs).
pub trait EcsSetup<M: ?Sized>: Sync {
    /// The estimator of the log-likelihood.
    type Estimator: EcsEstimator<M>;
    /// What the chains report.
    type Report: EcsReport<<Self::Estimator as EcsEstimator<M>>::Estimate>;

    /// The estimate's name in the error for a non-finite start ("perturbed estimate").
    const ESTIMATE: &'static str;

    /// The θ-step settings.
    fn dynamics(&self) -> &EcsDynamics;

    /// The estimator and subsample of a chain starting at `position` (checked finite and of
    /// the model's dimension ≥ 1).
    #[allow(clippy::type_complexity)]
    fn start<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<
        EcsStart<Self::Estimator, <Self::Estimator as EcsEstimator<M>>::Subsample, Self::Report>,
    >;
}

/// HMC-ECS settings over the setup `S` (see the module docs), validated when made; they build
/// one [`EcsChain`] per chain.
#[derive(Debug, Clone)]
pub struct EcsKernel<S> {
    setup: S,
}

impl<S> EcsKernel<S> {
    /// Settings from an already validated setup.
    pub(crate) fn from_setup(setup: S) -> Self {
        Self { setup }
    }

    /// The setup (configuration, engine or estimator).
    pub fn setup(&self) -> &S {
        &self.setup
    }
}

/// The adapted tuning of an HMC-ECS chain.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EcsTuning<H> {
    /// The estimator's settings (m, G; or the block-Poisson m, λ, κ, a).
    pub estimator: H,
    /// Order of the Taylor control variates (0, 1 or 2; `None` for an estimator that does not
    /// say, [`EcsEstimator::taylor_order`]).
    pub cv_order: Option<u32>,
    /// The expansion point θ* at the end of warmup.
    pub center: Vec<f64>,
    /// Step size ε (after warmup: the dual-averaged one).
    pub step_size: f64,
    /// Trajectory length εL (not used by the NUTS θ-step).
    pub trajectory_length: f64,
    /// The θ-step's integrator (fixed-length HMC or NUTS with its depth limit).
    pub integrator: ThetaIntegrator,
    /// Re-centrings of θ* during warmup.
    pub recenterings: usize,
    /// Inverse mass matrix M⁻¹.
    pub metric: Metric,
}

impl<H: EcsHead> Tuning for EcsTuning<H> {
    /// The estimator's lines, the control-variate order, θ*, `Step size = ε`, the trajectory
    /// length (NUTS: the tree depth limit), the re-centrings, then the metric.
    fn comment_lines(&self) -> Vec<String> {
        let mut lines = self.estimator.lines();
        if let Some(order) = self.cv_order {
            lines.push(format!("Control-variate order = {order}"));
        }
        lines.push(format!("theta* = {:?}", self.center));
        lines.push(format!("Step size = {}", self.step_size));
        match self.integrator {
            ThetaIntegrator::Hmc => {
                lines.push(format!("Trajectory length = {}", self.trajectory_length));
            }
            ThetaIntegrator::Nuts { max_depth } => {
                lines.push(format!("Theta-step = NUTS, maximum tree depth {max_depth}"));
            }
        }
        lines.push(format!("Re-centrings of theta* during warmup = {}", self.recenterings));
        lines.extend(self.metric.describe());
        lines
    }
}

/// A running HMC-ECS chain on the estimator `T` (model `M`, report `H`): θ with the cached
/// log target and its gradient at (θ, u), the subsample u and the estimate there, the θ-step's
/// metric, step size and adaptation, and scratch.
pub struct EcsChain<M: ?Sized, T: EcsEstimator<M>, H> {
    estimator: T,
    point: PhasePoint,
    subsample: T::Subsample,
    estimate: T::Estimate,
    dynamics: Dynamics<T::Estimate>,
    /// Gradient scratch of the u-step proposal.
    grad: Vec<f64>,
    report: H,
    /// The rows declared ahead, when the model's rows live elsewhere.
    rows: Option<RowsAhead>,
    model: PhantomData<fn(&M)>,
}

impl<M: ?Sized, T: EcsEstimator<M>, H> Debug for EcsChain<M, T, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EcsChain")
            .field("position", &self.point.position)
            .field("log_density", &self.point.log_density)
            .field("step_size", &self.dynamics.step_size.get())
            .finish_non_exhaustive()
    }
}

impl<M: ?Sized, T: EcsEstimator<M>, H> EcsChain<M, T, H> {
    /// The chain's estimator.
    pub fn estimator(&self) -> &T {
        &self.estimator
    }

    /// The subsample u.
    pub fn subsample(&self) -> &T::Subsample {
        &self.subsample
    }

    /// The estimate at (θ, u).
    pub fn estimate(&self) -> &T::Estimate {
        &self.estimate
    }

    /// The current step size (after warmup: the adapted one).
    pub fn step_size(&self) -> f64 {
        self.dynamics.step_size.get()
    }

    /// The current metric.
    pub fn metric(&self) -> &Metric {
        &self.dynamics.space.metric
    }

    /// The current expansion point θ*.
    pub fn center(&self) -> &[f64] {
        self.estimator.center()
    }
}

impl<M, S> Kernel<M> for EcsKernel<S>
where
    M: TermHessians + LogPriorHessian + ?Sized,
    S: EcsSetup<M>,
    S::Estimator: Send,
    <S::Estimator as EcsEstimator<M>>::Subsample: Send,
    <S::Estimator as EcsEstimator<M>>::Estimate: Send,
{
    type Chain = EcsChain<M, S::Estimator, S::Report>;

    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<Self::Chain> {
        let d = model.dim();
        if d == 0 {
            return Err(Error::invalid("model dimension", 0, "at least 1"));
        }
        tallmc_core::error::check_finite_vector("initial position", position, d)?;
        let EcsStart { mut estimator, subsample, covariance, mut evals, report } =
            self.setup.start(model, position, rng)?;
        let rows = RowsAhead::start(model, &subsample)?;
        let (point, estimate) =
            initial_point(&mut estimator, model, position, &subsample, &mut evals, S::ESTIMATE)?;
        let dynamics = Dynamics::new(self.setup.dynamics(), covariance, evals)?;
        Ok(EcsChain {
            estimator,
            point,
            subsample,
            estimate,
            dynamics,
            grad: vec![0.0; d],
            report,
            rows,
            model: PhantomData,
        })
    }
}

impl<M, T, H> Chain<M> for EcsChain<M, T, H>
where
    M: TermHessians + LogPriorHessian + ?Sized,
    T: EcsEstimator<M> + Send,
    T::Subsample: Send,
    T::Estimate: Send,
    H: EcsReport<T::Estimate>,
{
    type Stats = H::Stats;
    type Tuning = EcsTuning<H>;

    fn position(&self) -> &[f64] {
        &self.point.position
    }

    fn log_density(&self) -> f64 {
        self.point.log_density
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<H::Stats> {
        if let Some(rows) = &mut self.rows {
            rows.before_step(model, &self.subsample)?;
        }
        let parts = EcsPoint {
            point: &mut self.point,
            subsample: &mut self.subsample,
            estimate: &mut self.estimate,
        };
        let step = gibbs_sweep(
            &mut self.estimator,
            &mut self.dynamics,
            &mut self.grad,
            model,
            parts,
            rng,
        )?;
        Ok(self.report.stats(&step, &self.estimate, self.subsample.batch_size()))
    }

    fn begin_warmup(&mut self, num_warmup: usize) {
        self.dynamics.begin_warmup(num_warmup);
    }

    fn adapt<R: Rng + ?Sized>(&mut self, model: &M, stats: &H::Stats, _rng: &mut R) -> Result<()> {
        let parts = EcsPoint {
            point: &mut self.point,
            subsample: &mut self.subsample,
            estimate: &mut self.estimate,
        };
        recenter(&mut self.estimator, &mut self.dynamics, model, stats.accept_stat(), parts)
    }

    fn end_warmup(&mut self) {
        self.dynamics.end_warmup();
    }

    fn tuning(&self) -> EcsTuning<H> {
        EcsTuning {
            estimator: self.report.clone(),
            cv_order: self.estimator.taylor_order().map(|order| order.number()),
            center: self.estimator.center().to_vec(),
            step_size: self.dynamics.step_size.get(),
            trajectory_length: self.dynamics.config.trajectory_length,
            integrator: self.dynamics.config.integrator,
            recenterings: self.dynamics.recenterings,
            metric: self.dynamics.space.metric.clone(),
        }
    }
}
