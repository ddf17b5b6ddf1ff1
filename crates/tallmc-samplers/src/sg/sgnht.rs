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
//! with ∇log π̂ = ∇log p + ĝ, ĝ the kernel's [`GradientEstimator`](tallmc_estimators::GradientEstimator) on a fresh minibatch at every
//! update (plain, or control variates — another `G`), unit mass, diffusion A > 0 and the
//! thermostat initialised to ξ = A. The momentum and thermostat persist across kernel steps
//! (they are part of the chain's [`SgnhtState`]); a kernel step makes L updates (default 1) and reports the
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
//! friction is 1. `tests/samplers/sg_mcmc.rs` computes that fixed point exactly on a Gaussian target and
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
//! A non-finite gradient, position, momentum or thermostat is a divergence: the updates stop
//! there and the chain keeps the values (a non-finite position stops the run with
//! `SamplerError::NonFiniteDraw`; a non-finite momentum or thermostat makes the next position
//! non-finite). `lp__` is NaN. The step allocates nothing.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;
use tallmc_core::{EvalCounts, Result, Tuning};
use tallmc_estimators::MinibatchGradient;

use super::kernel::{
    SgDynamics, StochasticGradient, Subsampling, all_finite, check_batch, check_step_size,
    check_steps,
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

/// Settings of [`Sgnht`]; also its dynamics ([`SgDynamics`]) and the tuning its chains report.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SgnhtConfig {
    /// Step size h, finite and > 0.
    pub step_size: f64,
    /// Updates per kernel step L ≥ 1 (one minibatch each; only the last position is a draw).
    pub num_steps: usize,
    /// Minibatch size n, 1 ≤ n ≤ N (checked against the model when a chain is built).
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

    /// Checks h and A finite and > 0, L ≥ 1 and n ≥ 1 (n ≤ N is checked when a chain is built).
    pub fn validate(&self) -> Result<()> {
        check_step_size("SGNHT step size h", self.step_size)?;
        check_steps("SGNHT updates per step L", self.num_steps)?;
        check_batch("SGNHT batch size n", self.batch, None)?;
        tallmc_core::error::check_positive("SGNHT diffusion A", self.diffusion)
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
    /// A non-finite value (the updates stopped there).
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

step_stats_from_fields!(always_accepted: SgnhtStats);

/// State of an SGNHT chain besides θ: momentum, thermostat(s) and scratch.
#[derive(Debug, Clone, PartialEq)]
pub struct SgnhtState {
    /// p (unit mass).
    pub momentum: Vec<f64>,
    /// ξ: length 1 (SGNHT) or d (mSGNHT).
    pub thermostat: Vec<f64>,
    grad: Vec<f64>,
}

/// SGNHT / mSGNHT with a fixed step size (see the module docs), generic over the gradient
/// estimator `G` (default: the plain minibatch gradient): the stochastic-gradient kernel with
/// the thermostat dynamics. [`Sgnht::new`](StochasticGradient::new) makes the plain one,
/// [`Sgnht::with_estimator`](StochasticGradient::with_estimator) another estimator.
pub type Sgnht<G = MinibatchGradient> = StochasticGradient<SgnhtConfig, G>;

impl SgDynamics for SgnhtConfig {
    type State = SgnhtState;
    type Stats = SgnhtStats;
    type Tuning = SgnhtConfig;

    fn validate(&self) -> Result<()> {
        SgnhtConfig::validate(self)
    }

    fn batch(&self) -> (&'static str, usize) {
        ("SGNHT batch size n", self.batch)
    }

    fn subsampling(&self) -> Subsampling {
        self.subsampling
    }

    /// p ~ N(0, I) and ξ = A.
    fn init_state<R: Rng + ?Sized>(&self, position: &[f64], rng: &mut R) -> Result<SgnhtState> {
        let d = position.len();
        let k = match self.thermostat {
            Thermostat::Scalar => 1,
            Thermostat::ElementWise => d,
        };
        Ok(SgnhtState {
            momentum: (0..d).map(|_| StandardNormal.sample(rng)).collect(),
            thermostat: vec![self.diffusion; k],
            grad: vec![0.0; d],
        })
    }

    fn update<R, F>(
        &self, s: &mut SgnhtState, theta: &mut [f64], mut gradient: F, rng: &mut R,
    ) -> SgnhtStats
    where
        R: Rng + ?Sized,
        F: FnMut(&[f64], &mut [f64], &mut R) -> EvalCounts,
    {
        let h = self.step_size;
        let noise_sd = (2.0 * self.diffusion * h).sqrt();
        let d = theta.len();
        let mut evals = EvalCounts::ZERO;
        let mut steps = 0;
        let mut divergent = false;
        for _ in 0..self.num_steps {
            steps += 1;
            evals += gradient(theta, &mut s.grad, rng);
            let xi = &s.thermostat;
            for (j, (p, g)) in s.momentum.iter_mut().zip(&s.grad).enumerate() {
                let z: f64 = StandardNormal.sample(rng);
                let x = if xi.len() == 1 { xi[0] } else { xi[j] };
                *p += -x * *p * h + g * h + noise_sd * z;
            }
            for (t, p) in theta.iter_mut().zip(&s.momentum) {
                *t += p * h;
            }
            match self.thermostat {
                Thermostat::Scalar => {
                    let pp: f64 = s.momentum.iter().map(|p| p * p).sum();
                    s.thermostat[0] += (pp / d as f64 - 1.0) * h;
                }
                Thermostat::ElementWise => {
                    for (x, p) in s.thermostat.iter_mut().zip(&s.momentum) {
                        *x += (p * p - 1.0) * h;
                    }
                }
            }
            if !(all_finite(&s.grad)
                && all_finite(theta)
                && all_finite(&s.momentum)
                && all_finite(&s.thermostat))
            {
                divergent = true;
                break;
            }
        }
        let thermostat = s.thermostat.iter().sum::<f64>() / s.thermostat.len() as f64;
        let kinetic_energy = 0.5 * s.momentum.iter().map(|p| p * p).sum::<f64>();
        SgnhtStats {
            step_size: h,
            num_steps: steps,
            divergent,
            evals,
            batch: self.batch,
            thermostat,
            kinetic_energy,
        }
    }

    fn tuning(&self, _state: &SgnhtState) -> SgnhtConfig {
        *self
    }
}

impl Tuning for SgnhtConfig {
    /// `Step size = h`, then the thermostat settings.
    fn comment_lines(&self) -> Vec<String> {
        let name = match self.thermostat {
            Thermostat::Scalar => "SGNHT",
            Thermostat::ElementWise => "mSGNHT",
        };
        vec![
            format!("Step size = {}", self.step_size),
            format!(
                "{name} (uncorrected): L = {}, minibatch n = {} ({:?}), diffusion A = {}",
                self.num_steps, self.batch, self.subsampling, self.diffusion
            ),
        ]
    }
}
