//! Stochastic-gradient Hamiltonian Monte Carlo (Chen, Fox & Guestrin 2014, eq. 15 with B̂ = 0),
//! in the form the HMC-ECS paper runs it as a baseline (Dang et al. 2019, §6.2; REFERENCES §4).
//! One kernel step is a trajectory of L steps from a freshly drawn momentum p ~ N(0, M):
//!
//! ```text
//! for l = 1, …, L:
//!     θ_l = θ_{l−1} + ε M⁻¹ p_{l−1}
//!     p_l = p_{l−1} + ε ∇log π̂(θ_l) − ε C M⁻¹ p_{l−1} + N(0, 2 C ε)
//! ```
//!
//! with ∇log π̂ = ∇log p + ĝ, ĝ the kernel's [`GradientEstimator`] on a fresh minibatch at every
//! step (plain minibatch, or control variates as in Baker et al. 2017 — another `G`), friction
//! C = c I (c > 0, default 1: the paper's C = I, after Ma et al. 2015) and mass matrix M given by
//! its inverse M⁻¹ = Σ as a [`Metric`] (identity by default; HMC-ECS uses the inverse Hessian at
//! θ*). The gradient-noise estimate B̂ is 0, so the injected noise is N(0, 2Cε).
//!
//! **Properties.** Biased, no MH correction. The continuous dynamics with B̂ = 0 and gradient
//! noise of covariance V have the stationary law π(θ) N(p; 0, M) only when the noise term
//! (ε/2)V is negligible against C: the friction must dominate the minibatch noise (Chen et al.
//! §3.2). The integrator is first order: on a Gaussian target (precision λ, M = 1, C = I,
//! noise-free gradient) the stationary variance of θ is (1/λ)·0.883, 0.936, 0.967, 0.983 at
//! ε√λ = 0.126, 0.063, 0.032, 0.016 with the trajectory length εL fixed — an O(ε√λ) bias. At
//! a fixed L and ε → 0 it tends to (1/λ)·L/(L − 1) instead: within a trajectory the gradient
//! reaches θ only through the *next* step's momentum, and the refresh discards the last one, so
//! **L = 1 is a pure random walk** (θ never feels the target) and short trajectories are biased
//! by O(1/L). With gradient noise of variance V (θ-independent), the variance grows (towards
//! (1 + εV/(2c))/λ for long trajectories; ×1.82 for the plain minibatch in the test, where
//! εV/2 = 4.5c). All these
//! values come from the exact stationary solution of the linear chain, checked by simulation
//! in `tests/sg_mcmc.rs`.
//!
//! **Cost** per kernel step: L gradient estimates — for the plain estimator L·n terms and L·n
//! gradients (the counts the estimator returns), plus O(L d) arithmetic (O(L d²) with a dense
//! M). `batch_size()` reports L·n, the number of data points the trajectory looked at.
//!
//! A non-finite gradient, position or momentum anywhere in the trajectory is a divergence: the
//! chain stays at the trajectory's start. `lp__` is NaN (the log density is never evaluated).
//! The step allocates nothing.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;
use tallmc_core::{
    ChainState, Error, EvalCounts, LogPrior, Result, StatefulKernel, StepStats, TermGradients,
};
use tallmc_estimators::{GradientEstimator, MinibatchGradient};
use tallmc_integrators::Metric;

use crate::sg::{
    BatchSampler, Subsampling, all_finite, check_batch, check_metric, check_step_size, check_steps,
    log_posterior_gradient,
};

/// Settings of [`SgHmc`].
#[derive(Debug, Clone, PartialEq)]
pub struct SgHmcConfig {
    /// Step size ε, finite and > 0.
    pub step_size: f64,
    /// Steps per trajectory L ≥ 1 (one minibatch per step; the momentum is redrawn at the start
    /// of every trajectory). HMC-ECS uses L = (trajectory length)/ε, e.g. 1.2/ε.
    pub num_steps: usize,
    /// Minibatch size n, 1 ≤ n ≤ N (checked against the model at `init`).
    pub batch: usize,
    /// Friction c > 0 and finite: C = c I.
    pub friction: f64,
    /// How minibatches are drawn (default without replacement).
    pub subsampling: Subsampling,
    /// Inverse mass matrix M⁻¹ (None: identity), dimension checked at `init`.
    pub metric: Option<Metric>,
}

impl Default for SgHmcConfig {
    /// ε = 0.01, L = 10, n = 100, C = I, without replacement, M = I.
    fn default() -> Self {
        Self {
            step_size: 0.01,
            num_steps: 10,
            batch: 100,
            friction: 1.0,
            subsampling: Subsampling::WithoutReplacement,
            metric: None,
        }
    }
}

impl SgHmcConfig {
    /// Settings with step size ε, L steps per trajectory and minibatch size n, the rest
    /// default, validated.
    pub fn new(step_size: f64, num_steps: usize, batch: usize) -> Result<Self> {
        let c = Self { step_size, num_steps, batch, ..Self::default() };
        c.validate()?;
        Ok(c)
    }

    /// Checks ε and c finite and > 0, L ≥ 1 and n ≥ 1 (n ≤ N is checked at `init`).
    pub fn validate(&self) -> Result<()> {
        check_step_size("SG-HMC step size ε", self.step_size)?;
        check_steps("SG-HMC steps per trajectory L", self.num_steps)?;
        check_batch("SG-HMC batch size n", self.batch, None)?;
        tallmc_core::error::check_positive("SG-HMC friction c (C = c I)", self.friction)
    }
}

/// State of an SG-HMC chain: position and the momentum at the end of the last trajectory
/// (redrawn at the start of the next one).
#[derive(Debug, Clone, PartialEq)]
pub struct SgHmcState {
    /// θ.
    pub position: Vec<f64>,
    /// p.
    pub momentum: Vec<f64>,
}

impl ChainState for SgHmcState {
    fn position(&self) -> &[f64] {
        &self.position
    }
    /// Not computed (the full likelihood is never evaluated): NaN.
    fn log_density(&self) -> f64 {
        f64::NAN
    }
}

/// Stats of one SG-HMC trajectory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SgHmcStats {
    /// Step size ε.
    #[serde(rename = "stepsize")]
    pub step_size: f64,
    /// Steps taken (L, or fewer when the trajectory diverged).
    #[serde(rename = "n_leapfrog")]
    pub num_steps: usize,
    /// A non-finite gradient, position or momentum (the chain did not move).
    pub divergent: bool,
    /// Everything the gradient estimator evaluated over the trajectory.
    #[serde(rename = "n")]
    pub evals: EvalCounts,
    /// Minibatch size n.
    pub batch: usize,
    /// Kinetic energy ½ pᵀ M⁻¹ p at the end of the trajectory (stationary mean d/2 when the
    /// dynamics are accurate), NaN after a divergence.
    #[serde(rename = "kinetic")]
    pub kinetic_energy: f64,
}

impl StepStats for SgHmcStats {
    fn evals(&self) -> EvalCounts {
        self.evals
    }
    /// Always 1: SG-HMC accepts every trajectory.
    fn accept_stat(&self) -> f64 {
        1.0
    }
    fn divergent(&self) -> bool {
        self.divergent
    }
    /// L·n: data points looked at over the trajectory (with repeats across steps).
    fn batch_size(&self) -> u64 {
        (self.batch * self.num_steps) as u64
    }
}

#[derive(Debug, Clone)]
struct Running {
    sampler: BatchSampler,
    metric: Metric,
    start: Vec<f64>,
    grad: Vec<f64>,
    velocity: Vec<f64>,
    z: Vec<f64>,
}

/// SG-HMC with a fixed step size (see the module docs), generic over the gradient estimator `G`
/// (default: the plain minibatch gradient).
#[derive(Debug, Clone)]
pub struct SgHmc<G = MinibatchGradient> {
    config: SgHmcConfig,
    estimator: G,
    running: Option<Running>,
}

impl SgHmc {
    /// Plain SG-HMC ((N/n) Σ_{i∈S} ∇ℓ_i) with validated settings (n ≤ N is checked in `init`).
    pub fn new(config: SgHmcConfig) -> Result<Self> {
        let estimator = MinibatchGradient::new(config.batch);
        Self::with_estimator(config, estimator)
    }
}

impl<G> SgHmc<G> {
    /// SG-HMC with the gradient estimator `estimator` (e.g. control variates), with validated
    /// settings.
    pub fn with_estimator(config: SgHmcConfig, estimator: G) -> Result<Self> {
        config.validate()?;
        Ok(Self { config, estimator, running: None })
    }

    /// The settings.
    pub fn config(&self) -> &SgHmcConfig {
        &self.config
    }

    /// The gradient estimator.
    pub fn estimator(&self) -> &G {
        &self.estimator
    }
}

impl<M, G> StatefulKernel<M> for SgHmc<G>
where
    M: TermGradients + LogPrior + ?Sized,
    G: GradientEstimator<M>,
{
    type State = SgHmcState;
    type Stats = SgHmcStats;

    fn init<R: Rng + ?Sized>(
        &mut self,
        model: &M,
        position: &[f64],
        _rng: &mut R,
    ) -> Result<SgHmcState> {
        let (d, n) = (model.dim(), model.num_terms());
        tallmc_core::error::check_finite_vector("initial position", position, d)?;
        check_batch("SG-HMC batch size n", self.config.batch, Some(n))?;
        check_metric(self.config.metric.as_ref(), d)?;
        self.running = Some(Running {
            sampler: BatchSampler::new(self.config.subsampling, n, self.config.batch)?,
            metric: self.config.metric.clone().unwrap_or(Metric::Identity(d)),
            start: vec![0.0; d],
            grad: vec![0.0; d],
            velocity: vec![0.0; d],
            z: vec![0.0; d],
        });
        Ok(SgHmcState { position: position.to_vec(), momentum: vec![0.0; d] })
    }

    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &M,
        state: &mut SgHmcState,
        rng: &mut R,
    ) -> Result<SgHmcStats> {
        let Some(r) = self.running.as_mut() else {
            return Err(Error::Other("SgHmc::step called before init".into()));
        };
        let (eps, c, batch) = (self.config.step_size, self.config.friction, self.config.batch);
        let noise_sd = (2.0 * c * eps).sqrt();
        r.start.copy_from_slice(&state.position);
        r.metric.sample_momentum(rng, &mut state.momentum, &mut r.z);
        let mut evals = EvalCounts::ZERO;
        let mut steps = 0;
        let mut divergent = false;
        for _ in 0..self.config.num_steps {
            steps += 1;
            // v = M⁻¹ p_{l−1}: moves θ and sets the friction.
            r.metric.velocity(&state.momentum, &mut r.velocity);
            for (t, v) in state.position.iter_mut().zip(&r.velocity) {
                *t += eps * v;
            }
            evals += log_posterior_gradient(
                &mut self.estimator,
                &mut r.sampler,
                batch,
                model,
                &state.position,
                &mut r.grad,
                rng,
            );
            for ((p, g), v) in state.momentum.iter_mut().zip(&r.grad).zip(&r.velocity) {
                let z: f64 = StandardNormal.sample(rng);
                *p += eps * g - eps * c * v + noise_sd * z;
            }
            if !(all_finite(&r.grad) && all_finite(&state.position) && all_finite(&state.momentum))
            {
                divergent = true;
                break;
            }
        }
        let kinetic_energy = if divergent {
            state.position.copy_from_slice(&r.start);
            state.momentum.fill(0.0);
            f64::NAN
        } else {
            r.metric.kinetic_energy(&state.momentum, &mut r.velocity)
        };
        Ok(SgHmcStats { step_size: eps, num_steps: steps, divergent, evals, batch, kinetic_energy })
    }

    fn adaptation_report(&self) -> Vec<String> {
        let c = &self.config;
        let mut lines = vec![
            format!("Step size = {}", c.step_size),
            format!(
                "SG-HMC (uncorrected): L = {}, minibatch n = {} ({:?}), friction C = {} I",
                c.num_steps, c.batch, c.subsampling, c.friction
            ),
        ];
        if let Some(r) = &self.running {
            lines.extend(r.metric.describe());
        }
        lines
    }
}
