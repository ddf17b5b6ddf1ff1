//! Stochastic-gradient Nosé–Hoover thermostat: SGNHT (Ding, Fang, Babbush, Chen, Skeel & Neven
//! 2014, Algorithm 1) and its element-wise variant mSGNHT (Li, Chen, Fan & Carin 2016; used as a
//! baseline by SBPS, Pakman et al. 2017). With the Euler integrator of both papers, one update
//! with step size h is
//!
//! ```text
//! p ← p − ξ ⊙ p h + ∇log π̂(θ) h + √(2A h) ζ,     ζ ~ N(0, I)
//! θ ← θ + p h
//! SGNHT:   ξ ← ξ + (pᵀp/d − 1) h          (one scalar thermostat)
//! mSGNHT:  ξ_j ← ξ_j + (p_j² − 1) h        (one thermostat per coordinate)
//! ```
//!
//! with ∇log π̂ = ∇log p + ĝ, ĝ the kernel's [`GradientEstimator`] on a fresh minibatch at every
//! update (plain, or control variates — another `G`), unit mass, diffusion A > 0 and the
//! thermostat initialised to ξ = A. The momentum and thermostat persist across kernel steps
//! (they are part of [`SgnhtState`]); a kernel step makes L updates (default 1) and reports the
//! last position.
//!
//! **Properties.** Biased (no MH correction), O(h) from the discretization. The point of the
//! thermostat: with gradient noise, the momentum update's noise has variance 2Ah + h²V per
//! coordinate (V the covariance of ĝ), i.e. an unknown extra diffusion B = hV/2. The continuous
//! dynamics dp = (−ξp + ∇log π)dt + √(2(A + B)) dW, dθ = p dt, dξ = (pᵀp/d − 1)dt leave
//!
//! ```text
//! π(θ) · N(p; 0, I) · N(ξ; A + B, 1/d)
//! ```
//!
//! invariant (a direct Fokker–Planck check; Ding et al. Theorem 1), so ξ settles at A + B and
//! absorbs the unknown noise: E\[ξ\] = A + hV/2 (scalar B: SGNHT; for mSGNHT with a diagonal
//! noise covariance, E\[ξ_j\] = A + hV_jj/2 per coordinate, each with variance 1). For a
//! non-isotropic V, SGNHT's single ξ corrects only the average noise. The discrete chain moves
//! ξ by O(h) more: it settles where the stationary E\[p²\] of the Euler update at that fixed
//! friction is 1. `tests/sg_mcmc.rs` computes that fixed point exactly on a Gaussian target and
//! measures E\[ξ\] = 14.76 ± 0.06 against 14.80 (continuous theory 14.43: h = 0.003, A = 1,
//! hV/2 = 13.4) — see `docs/methods/sgnht.md`.
//!
//! The update order (momentum with the gradient at the current θ, then θ with the new p, then ξ
//! with the new p) follows Ding et al. (Alg. 1) and the mSGNHT authors' Euler code; the
//! REFERENCES' UNCONF tag on the mSGNHT form is resolved in `docs/methods/sgnht.md`.
//!
//! **Cost** per kernel step: L gradient estimates — for the plain estimator L·n terms and L·n
//! gradients (counted from the estimator) — plus O(L d) arithmetic.
//!
//! A non-finite gradient, position, momentum or thermostat is a divergence: the state (θ, p, ξ)
//! is restored to its value before the step. `lp__` is NaN. The step allocates nothing.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;
use tallmc_core::{
    ChainState, Error, EvalCounts, LogPrior, Result, StatefulKernel, StepStats, TermGradients,
};
use tallmc_estimators::{GradientEstimator, MinibatchGradient};

use crate::sg::{
    BatchSampler, Subsampling, all_finite, check_batch, check_step_size, check_steps,
    log_posterior_gradient,
};

/// One scalar thermostat (SGNHT) or one per coordinate (mSGNHT).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum Thermostat {
    /// SGNHT (Ding et al. 2014): ξ ← ξ + (pᵀp/d − 1) h.
    #[default]
    Scalar,
    /// mSGNHT (Li et al. 2016): ξ_j ← ξ_j + (p_j² − 1) h.
    ElementWise,
}

/// Settings of [`Sgnht`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SgnhtConfig {
    /// Step size h, finite and > 0.
    pub step_size: f64,
    /// Updates per kernel step L ≥ 1 (one minibatch each; only the last position is a draw).
    pub num_steps: usize,
    /// Minibatch size n, 1 ≤ n ≤ N (checked against the model at `init`).
    pub batch: usize,
    /// Diffusion A > 0 and finite (also the thermostat's initial value).
    pub diffusion: f64,
    /// Scalar (SGNHT) or element-wise (mSGNHT) thermostat.
    pub thermostat: Thermostat,
    /// How minibatches are drawn (default without replacement).
    pub subsampling: Subsampling,
}

impl Default for SgnhtConfig {
    /// h = 10⁻³, L = 1, n = 100, A = 1, scalar thermostat, without replacement.
    fn default() -> Self {
        Self {
            step_size: 1e-3,
            num_steps: 1,
            batch: 100,
            diffusion: 1.0,
            thermostat: Thermostat::Scalar,
            subsampling: Subsampling::WithoutReplacement,
        }
    }
}

impl SgnhtConfig {
    /// Settings with step size h, minibatch size n and the given thermostat, the rest default,
    /// validated.
    pub fn new(step_size: f64, batch: usize, thermostat: Thermostat) -> Result<Self> {
        let c = Self { step_size, batch, thermostat, ..Self::default() };
        c.validate()?;
        Ok(c)
    }

    /// Checks h and A finite and > 0, L ≥ 1 and n ≥ 1 (n ≤ N is checked at `init`).
    pub fn validate(&self) -> Result<()> {
        check_step_size("SGNHT step size h", self.step_size)?;
        check_steps("SGNHT updates per step L", self.num_steps)?;
        check_batch("SGNHT batch size n", self.batch, None)?;
        tallmc_core::error::check_positive("SGNHT diffusion A", self.diffusion)
    }
}

/// State of an SGNHT chain: position, momentum and thermostat(s).
#[derive(Debug, Clone, PartialEq)]
pub struct SgnhtState {
    /// θ.
    pub position: Vec<f64>,
    /// p (unit mass).
    pub momentum: Vec<f64>,
    /// ξ: length 1 (SGNHT) or d (mSGNHT).
    pub thermostat: Vec<f64>,
}

impl ChainState for SgnhtState {
    fn position(&self) -> &[f64] {
        &self.position
    }
    /// Not computed (the full likelihood is never evaluated): NaN.
    fn log_density(&self) -> f64 {
        f64::NAN
    }
}

/// Stats of one SGNHT kernel step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SgnhtStats {
    /// Step size h.
    #[serde(rename = "stepsize")]
    pub step_size: f64,
    /// Updates made (L, or fewer when the step diverged).
    #[serde(rename = "n_leapfrog")]
    pub num_steps: usize,
    /// A non-finite value (the state was restored).
    pub divergent: bool,
    /// Everything the gradient estimator evaluated.
    #[serde(rename = "n")]
    pub evals: EvalCounts,
    /// Minibatch size n.
    pub batch: usize,
    /// Mean of the thermostat(s) after the step (the scalar ξ for SGNHT).
    pub thermostat: f64,
    /// Kinetic energy ½ pᵀp after the step (stationary mean d/2).
    #[serde(rename = "kinetic")]
    pub kinetic_energy: f64,
}

impl StepStats for SgnhtStats {
    fn evals(&self) -> EvalCounts {
        self.evals
    }
    /// Always 1: SGNHT accepts every move.
    fn accept_stat(&self) -> f64 {
        1.0
    }
    fn divergent(&self) -> bool {
        self.divergent
    }
    /// L·n: data points looked at over the step's updates.
    fn batch_size(&self) -> u64 {
        (self.batch * self.num_steps) as u64
    }
}

#[derive(Debug, Clone)]
struct Running {
    sampler: BatchSampler,
    grad: Vec<f64>,
    saved: SgnhtState,
}

/// SGNHT / mSGNHT with a fixed step size (see the module docs), generic over the gradient
/// estimator `G` (default: the plain minibatch gradient).
#[derive(Debug, Clone)]
pub struct Sgnht<G = MinibatchGradient> {
    config: SgnhtConfig,
    estimator: G,
    running: Option<Running>,
}

impl Sgnht {
    /// Plain SGNHT/mSGNHT ((N/n) Σ_{i∈S} ∇ℓ_i) with validated settings (n ≤ N is checked in
    /// `init`).
    pub fn new(config: SgnhtConfig) -> Result<Self> {
        let estimator = MinibatchGradient::new(config.batch);
        Self::with_estimator(config, estimator)
    }
}

impl<G> Sgnht<G> {
    /// SGNHT/mSGNHT with the gradient estimator `estimator` (e.g. control variates), with
    /// validated settings.
    pub fn with_estimator(config: SgnhtConfig, estimator: G) -> Result<Self> {
        config.validate()?;
        Ok(Self { config, estimator, running: None })
    }

    /// The settings.
    pub fn config(&self) -> &SgnhtConfig {
        &self.config
    }

    /// The gradient estimator.
    pub fn estimator(&self) -> &G {
        &self.estimator
    }
}

impl<M, G> StatefulKernel<M> for Sgnht<G>
where
    M: TermGradients + LogPrior + ?Sized,
    G: GradientEstimator<M>,
{
    type State = SgnhtState;
    type Stats = SgnhtStats;

    /// Starts at `position` with p ~ N(0, I) and ξ = A.
    fn init<R: Rng + ?Sized>(
        &mut self,
        model: &M,
        position: &[f64],
        rng: &mut R,
    ) -> Result<SgnhtState> {
        let (d, n) = (model.dim(), model.num_terms());
        tallmc_core::error::check_finite_vector("initial position", position, d)?;
        check_batch("SGNHT batch size n", self.config.batch, Some(n))?;
        let k = match self.config.thermostat {
            Thermostat::Scalar => 1,
            Thermostat::ElementWise => d,
        };
        let state = SgnhtState {
            position: position.to_vec(),
            momentum: (0..d).map(|_| StandardNormal.sample(rng)).collect(),
            thermostat: vec![self.config.diffusion; k],
        };
        self.running = Some(Running {
            sampler: BatchSampler::new(self.config.subsampling, n, self.config.batch)?,
            grad: vec![0.0; d],
            saved: state.clone(),
        });
        Ok(state)
    }

    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &M,
        state: &mut SgnhtState,
        rng: &mut R,
    ) -> Result<SgnhtStats> {
        let Some(r) = self.running.as_mut() else {
            return Err(Error::Other("Sgnht::step called before init".into()));
        };
        let c = self.config;
        let h = c.step_size;
        let noise_sd = (2.0 * c.diffusion * h).sqrt();
        let d = state.position.len();
        r.saved.position.copy_from_slice(&state.position);
        r.saved.momentum.copy_from_slice(&state.momentum);
        r.saved.thermostat.copy_from_slice(&state.thermostat);
        let mut evals = EvalCounts::ZERO;
        let mut steps = 0;
        let mut divergent = false;
        for _ in 0..c.num_steps {
            steps += 1;
            evals += log_posterior_gradient(
                &mut self.estimator,
                &mut r.sampler,
                c.batch,
                model,
                &state.position,
                &mut r.grad,
                rng,
            );
            let xi = &state.thermostat;
            for (j, (p, g)) in state.momentum.iter_mut().zip(&r.grad).enumerate() {
                let z: f64 = StandardNormal.sample(rng);
                let x = if xi.len() == 1 { xi[0] } else { xi[j] };
                *p += -x * *p * h + g * h + noise_sd * z;
            }
            for (t, p) in state.position.iter_mut().zip(&state.momentum) {
                *t += p * h;
            }
            match c.thermostat {
                Thermostat::Scalar => {
                    let pp: f64 = state.momentum.iter().map(|p| p * p).sum();
                    state.thermostat[0] += (pp / d as f64 - 1.0) * h;
                }
                Thermostat::ElementWise => {
                    for (x, p) in state.thermostat.iter_mut().zip(&state.momentum) {
                        *x += (p * p - 1.0) * h;
                    }
                }
            }
            if !(all_finite(&r.grad)
                && all_finite(&state.position)
                && all_finite(&state.momentum)
                && all_finite(&state.thermostat))
            {
                divergent = true;
                break;
            }
        }
        if divergent {
            state.position.copy_from_slice(&r.saved.position);
            state.momentum.copy_from_slice(&r.saved.momentum);
            state.thermostat.copy_from_slice(&r.saved.thermostat);
        }
        let thermostat = state.thermostat.iter().sum::<f64>() / state.thermostat.len() as f64;
        let kinetic_energy = 0.5 * state.momentum.iter().map(|p| p * p).sum::<f64>();
        Ok(SgnhtStats {
            step_size: h,
            num_steps: steps,
            divergent,
            evals,
            batch: c.batch,
            thermostat,
            kinetic_energy,
        })
    }

    fn adaptation_report(&self) -> Vec<String> {
        let c = &self.config;
        let name = match c.thermostat {
            Thermostat::Scalar => "SGNHT",
            Thermostat::ElementWise => "mSGNHT",
        };
        vec![
            format!("Step size = {}", c.step_size),
            format!(
                "{name} (uncorrected): L = {}, minibatch n = {} ({:?}), diffusion A = {}",
                c.num_steps, c.batch, c.subsampling, c.diffusion
            ),
        ]
    }
}
