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
//! with ∇log π̂ = ∇log p + ĝ, ĝ the kernel's [`GradientEstimator`](tallmc_estimators::GradientEstimator) on a fresh minibatch at every
//! step (or one minibatch for the whole trajectory: [`SgHmcConfig::minibatch`]) (plain minibatch, or control variates as in Baker et al. 2017 — another `G`), friction
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
//! in `tests/samplers/sg_mcmc.rs`.
//!
//! **Cost** per kernel step: L gradient estimates — for the plain estimator L·n terms and L·n
//! gradients (the counts the estimator returns), plus O(L d) arithmetic (O(L d²) with a dense
//! M). `batch_size()` reports L·n, the number of data points the trajectory looked at.
//!
//! A non-finite gradient, position or momentum anywhere in the trajectory is a divergence: the
//! trajectory stops there and the chain keeps its position (a non-finite one stops the run with
//! `SamplerError::NonFiniteDraw`). `lp__` is NaN (the log density is never evaluated). The step
//! allocates nothing.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;
use tallmc_core::{EvalCounts, Result, Tuning};
use tallmc_estimators::MinibatchGradient;
use tallmc_integrators::Metric;

use super::kernel::{
    MinibatchScope, SgDynamics, StochasticGradient, Subsampling, all_finite, check_batch,
    check_metric, check_step_size, check_steps,
};

/// Settings of [`SgHmc`]; also its dynamics ([`SgDynamics`]) and the tuning its chains report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SgHmcConfig {
    /// Step size ε, finite and > 0.
    pub step_size: f64,
    /// Steps per trajectory L ≥ 1 (one minibatch per step; the momentum is redrawn at the start
    /// of every trajectory). HMC-ECS uses L = (trajectory length)/ε, e.g. 1.2/ε.
    pub num_steps: usize,
    /// Minibatch size n, 1 ≤ n ≤ N (checked against the model when a chain is built).
    pub batch: usize,
    /// Friction c > 0 and finite: C = c I.
    pub friction: f64,
    /// How minibatches are drawn (default without replacement).
    pub subsampling: Subsampling,
    /// A fresh minibatch for every step of a trajectory (default) or one per trajectory
    /// ([`MinibatchScope::PerStep`], BlackJAX's choice).
    pub minibatch: MinibatchScope,
    /// Inverse mass matrix M⁻¹ (None: identity), dimension checked when a chain is built.
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
            minibatch: MinibatchScope::PerGradient,
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

    /// Checks ε and c finite and > 0, L ≥ 1 and n ≥ 1 (n ≤ N is checked when a chain is built).
    pub fn validate(&self) -> Result<()> {
        check_step_size("SG-HMC step size ε", self.step_size)?;
        check_steps("SG-HMC steps per trajectory L", self.num_steps)?;
        check_batch("SG-HMC batch size n", self.batch, None)?;
        tallmc_core::error::check_positive("SG-HMC friction c (C = c I)", self.friction)
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
    /// A non-finite gradient, position or momentum (the trajectory stopped there).
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

step_stats_from_fields!(always_accepted: SgHmcStats);

/// State of an SG-HMC chain besides θ: the momentum at the end of the last trajectory
/// (redrawn at the start of the next one), the mass matrix and scratch.
#[derive(Debug, Clone)]
pub struct SgHmcState {
    /// p.
    pub momentum: Vec<f64>,
    metric: Metric,
    grad: Vec<f64>,
    velocity: Vec<f64>,
    z: Vec<f64>,
}

/// SG-HMC with a fixed step size (see the module docs), generic over the gradient estimator `G`
/// (default: the plain minibatch gradient): the stochastic-gradient kernel with SG-HMC's
/// dynamics. [`SgHmc::new`](StochasticGradient::new) makes the plain one,
/// [`SgHmc::with_estimator`](StochasticGradient::with_estimator) another estimator.
pub type SgHmc<G = MinibatchGradient> = StochasticGradient<SgHmcConfig, G>;

impl SgDynamics for SgHmcConfig {
    type State = SgHmcState;
    type Stats = SgHmcStats;
    /// The settings with the metric a chain used (M⁻¹ = I of the model's dimension if none).
    type Tuning = SgHmcConfig;

    fn validate(&self) -> Result<()> {
        SgHmcConfig::validate(self)
    }

    fn batch(&self) -> (&'static str, usize) {
        ("SG-HMC batch size n", self.batch)
    }

    fn subsampling(&self) -> Subsampling {
        self.subsampling
    }

    fn minibatch_scope(&self) -> MinibatchScope {
        self.minibatch
    }

    fn init_state<R: Rng + ?Sized>(&self, position: &[f64], _rng: &mut R) -> Result<SgHmcState> {
        let d = position.len();
        check_metric(self.metric.as_ref(), d)?;
        Ok(SgHmcState {
            momentum: vec![0.0; d],
            metric: self.metric.clone().unwrap_or(Metric::Identity(d)),
            grad: vec![0.0; d],
            velocity: vec![0.0; d],
            z: vec![0.0; d],
        })
    }

    fn update<R, F>(
        &self, r: &mut SgHmcState, theta: &mut [f64], mut gradient: F, rng: &mut R,
    ) -> SgHmcStats
    where
        R: Rng + ?Sized,
        F: FnMut(&[f64], &mut [f64], &mut R) -> EvalCounts,
    {
        let (eps, c, batch) = (self.step_size, self.friction, self.batch);
        let noise_sd = (2.0 * c * eps).sqrt();
        r.metric.sample_momentum(rng, &mut r.momentum, &mut r.z);
        let mut evals = EvalCounts::ZERO;
        let mut steps = 0;
        let mut divergent = false;
        for _ in 0..self.num_steps {
            steps += 1;
            // v = M⁻¹ p_{l−1}: moves θ and sets the friction.
            r.metric.velocity(&r.momentum, &mut r.velocity);
            for (t, v) in theta.iter_mut().zip(&r.velocity) {
                *t += eps * v;
            }
            evals += gradient(theta, &mut r.grad, rng);
            for ((p, g), v) in r.momentum.iter_mut().zip(&r.grad).zip(&r.velocity) {
                let z: f64 = StandardNormal.sample(rng);
                *p += eps * g - eps * c * v + noise_sd * z;
            }
            if !(all_finite(&r.grad) && all_finite(theta) && all_finite(&r.momentum)) {
                divergent = true;
                break;
            }
        }
        let kinetic_energy = if divergent {
            f64::NAN
        } else {
            r.metric.kinetic_energy(&r.momentum, &mut r.velocity)
        };
        SgHmcStats { step_size: eps, num_steps: steps, divergent, evals, batch, kinetic_energy }
    }

    fn tuning(&self, state: &SgHmcState) -> SgHmcConfig {
        SgHmcConfig { metric: Some(state.metric.clone()), ..self.clone() }
    }
}

impl Tuning for SgHmcConfig {
    /// `Step size = ε`, the trajectory settings, then the metric.
    fn comment_lines(&self) -> Vec<String> {
        let mut lines = vec![
            format!("Step size = {}", self.step_size),
            format!(
                "SG-HMC (uncorrected): L = {}, minibatch n = {} ({:?}), friction C = {} I",
                self.num_steps, self.batch, self.subsampling, self.friction
            ),
        ];
        if self.minibatch == MinibatchScope::PerStep {
            lines.push("SG-HMC minibatch: one per trajectory".to_string());
        }
        if let Some(m) = &self.metric {
            lines.extend(m.describe());
        }
        lines
    }
}
