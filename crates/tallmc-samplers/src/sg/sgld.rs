//! Stochastic-gradient Langevin dynamics (Welling & Teh 2011), uncorrected, with a fixed step
//! size as in the HMC-ECS paper's baseline (Dang et al. 2019, §6.2; REFERENCES §4):
//!
//! ```text
//! θ ← θ + (h/2) Σ [∇log p(θ) + ĝ(θ)] + N(0, h Σ),
//! ```
//!
//! where ĝ(θ) is an unbiased estimate of Σ_{i<N} ∇ℓ_i(θ) from a fresh minibatch S of n indices
//! every step, computed by the kernel's [`GradientEstimator`](tallmc_estimators::GradientEstimator) `G` (plain: (N/n) Σ_{i∈S} ∇ℓ_i(θ);
//! with control variates: Baker et al. 2017 — the same kernel with another `G`), and Σ is an
//! optional constant preconditioner (identity by default; a diagonal or dense [`Metric`], e.g.
//! the Laplace covariance at the mode). The minibatch is drawn without replacement by default
//! ([`Subsampling`]).
//!
//! **Properties.** Biased for every h > 0: there is no MH correction. Two sources:
//!
//! * the Euler–Maruyama discretization. On a Gaussian target with precision λ (Σ = I), exact
//!   gradients give the stationary law N(mean, 1/(λ(1 − hλ/4))) — variance inflated by a factor
//!   1/(1 − hλ/4) = 1 + hλ/4 + O(h²);
//! * the gradient noise. If ĝ has variance V per coordinate (independent of θ, as on a Gaussian
//!   mean model), the stationary variance is (1 + hV/4)/(λ(1 − hλ/4)): the minibatch adds
//!   hV/4, which is O(h) but with V ∝ N²/n it usually dominates (tested exactly in
//!   `tests/samplers/sg_mcmc.rs`). Stable only for hλ_max < 4.
//!
//! **Cost** per step: one gradient estimate — for the plain estimator n terms and n gradients
//! (counted from the [`EvalCounts`] the estimator returns, so a control-variate estimator reports
//! what it evaluated), plus O(d) (O(d²) with a dense Σ) arithmetic.
//!
//! A non-finite gradient or position is a divergence, and the chain takes the non-finite
//! position (the driver then stops the run with `SamplerError::NonFiniteDraw`). `lp__` is NaN:
//! the full log density is never evaluated. The step allocates nothing.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;
use tallmc_core::{EvalCounts, Result, StepStats, Tuning};
use tallmc_estimators::MinibatchGradient;
use tallmc_integrators::Metric;

use super::kernel::{
    SgDynamics, StochasticGradient, Subsampling, all_finite, check_batch, check_metric,
    check_step_size,
};

/// Settings of [`Sgld`]; also its dynamics ([`SgDynamics`]) and the tuning its chains report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SgldConfig {
    /// Step size h, finite and > 0.
    pub step_size: f64,
    /// Minibatch size n, 1 ≤ n ≤ N (checked against the model when a chain is built).
    pub batch: usize,
    /// How minibatches are drawn (default without replacement).
    pub subsampling: Subsampling,
    /// Constant preconditioner Σ (None: identity), dimension checked when a chain is built.
    pub preconditioner: Option<Metric>,
}

impl Default for SgldConfig {
    /// h = 10⁻⁴, n = 100, without replacement, no preconditioner.
    fn default() -> Self {
        Self {
            step_size: 1e-4,
            batch: 100,
            subsampling: Subsampling::WithoutReplacement,
            preconditioner: None,
        }
    }
}

impl SgldConfig {
    /// Settings with step size `step_size` and minibatch size `batch`, the rest default,
    /// validated.
    pub fn new(step_size: f64, batch: usize) -> Result<Self> {
        let c = Self { step_size, batch, ..Self::default() };
        c.validate()?;
        Ok(c)
    }

    /// Checks h finite and > 0 and n ≥ 1 (n ≤ N is checked when a chain is built).
    pub fn validate(&self) -> Result<()> {
        check_step_size("SGLD step size h", self.step_size)?;
        check_batch("SGLD batch size n", self.batch, None)
    }
}

/// Stats of one SGLD step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SgldStats {
    /// Step size h.
    #[serde(rename = "stepsize")]
    pub step_size: f64,
    /// A non-finite gradient or position (the chain took it; the run stops there).
    pub divergent: bool,
    /// What the gradient estimator evaluated (plain: n terms and n gradients).
    #[serde(rename = "n")]
    pub evals: EvalCounts,
    /// Minibatch size n.
    pub batch: usize,
}

impl StepStats for SgldStats {
    fn evals(&self) -> EvalCounts {
        self.evals
    }
    /// Always 1: SGLD accepts every move.
    fn accept_stat(&self) -> f64 {
        1.0
    }
    fn divergent(&self) -> bool {
        self.divergent
    }
    fn batch_size(&self) -> u64 {
        self.batch as u64
    }
}

/// Scratch of an SGLD chain.
#[derive(Debug, Clone)]
pub struct SgldState {
    grad: Vec<f64>,
    next: Vec<f64>,
    drift: Vec<f64>,
    z: Vec<f64>,
}

/// Uncorrected SGLD with a fixed step size (see the module docs), generic over the gradient
/// estimator `G` (default: the plain minibatch gradient): the stochastic-gradient kernel with
/// SGLD's dynamics. [`Sgld::new`](StochasticGradient::new) makes the plain one,
/// [`Sgld::with_estimator`](StochasticGradient::with_estimator) another estimator.
pub type Sgld<G = MinibatchGradient> = StochasticGradient<SgldConfig, G>;

impl SgDynamics for SgldConfig {
    type State = SgldState;
    type Stats = SgldStats;
    type Tuning = SgldConfig;

    fn validate(&self) -> Result<()> {
        SgldConfig::validate(self)
    }

    fn batch(&self) -> (&'static str, usize) {
        ("SGLD batch size n", self.batch)
    }

    fn subsampling(&self) -> Subsampling {
        self.subsampling
    }

    fn init_state<R: Rng + ?Sized>(&self, position: &[f64], _rng: &mut R) -> Result<SgldState> {
        let d = position.len();
        check_metric(self.preconditioner.as_ref(), d)?;
        Ok(SgldState {
            grad: vec![0.0; d],
            next: vec![0.0; d],
            drift: vec![0.0; d],
            z: vec![0.0; d],
        })
    }

    fn update<R, F>(
        &self, r: &mut SgldState, theta: &mut [f64], mut gradient: F, rng: &mut R,
    ) -> SgldStats
    where
        R: Rng + ?Sized,
        F: FnMut(&[f64], &mut [f64], &mut R) -> EvalCounts,
    {
        let h = self.step_size;
        let evals = gradient(theta, &mut r.grad, rng);
        let sd = h.sqrt();
        match &self.preconditioner {
            None => {
                for ((n, t), g) in r.next.iter_mut().zip(&*theta).zip(&r.grad) {
                    let z: f64 = StandardNormal.sample(rng);
                    *n = t + 0.5 * h * g + sd * z;
                }
            }
            Some(metric) => {
                // Drift (h/2) Σ g; noise √h v with v ~ N(0, Σ).
                metric.velocity(&r.grad, &mut r.drift);
                metric.sample_velocity(rng, &mut r.next, &mut r.z);
                for ((n, t), g) in r.next.iter_mut().zip(&*theta).zip(&r.drift) {
                    *n = t + 0.5 * h * g + sd * *n;
                }
            }
        }
        let divergent = !all_finite(&r.grad) || !all_finite(&r.next);
        theta.copy_from_slice(&r.next);
        SgldStats { step_size: h, divergent, evals, batch: self.batch }
    }

    fn tuning(&self, _state: &SgldState) -> SgldConfig {
        self.clone()
    }
}

impl Tuning for SgldConfig {
    /// `Step size = h`, the minibatch, the subsampling if with replacement, the preconditioner.
    fn comment_lines(&self) -> Vec<String> {
        let mut lines = vec![
            format!("Step size = {}", self.step_size),
            format!("SGLD (uncorrected): minibatch n = {}", self.batch),
        ];
        if self.subsampling == Subsampling::WithReplacement {
            lines.push("Minibatches drawn with replacement".into());
        }
        if let Some(m) = &self.preconditioner {
            lines.push("Preconditioner:".into());
            lines.extend(m.describe());
        }
        lines
    }
}
