//! Stochastic-gradient Langevin dynamics (Welling & Teh 2011), uncorrected, with a fixed step
//! size as in the HMC-ECS paper's baseline (Dang et al. 2019, §6.2; REFERENCES §4):
//!
//! ```text
//! θ ← θ + (h/2) Σ [∇log p(θ) + ĝ(θ)] + N(0, h Σ),
//! ```
//!
//! where ĝ(θ) is an unbiased estimate of Σ_{i<N} ∇ℓ_i(θ) from a fresh minibatch S of n indices
//! every step, computed by the kernel's [`GradientEstimator`] `G` (plain: (N/n) Σ_{i∈S} ∇ℓ_i(θ);
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
//!   `tests/sg_mcmc.rs`). Stable only for hλ_max < 4.
//!
//! **Cost** per step: one gradient estimate — for the plain estimator n terms and n gradients
//! (counted from the [`EvalCounts`] the estimator returns, so a control-variate estimator reports
//! what it evaluated), plus O(d) (O(d²) with a dense Σ) arithmetic.
//!
//! A non-finite gradient or position is a divergence: the chain stays where it was. `lp__` is
//! NaN: the full log density is never evaluated. The step allocates nothing.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;
use tallmc_core::{Error, EvalCounts, LogPrior, Result, StatefulKernel, StepStats, TermGradients};
use tallmc_estimators::{GradientEstimator, MinibatchGradient};
use tallmc_integrators::Metric;

use crate::MinibatchState;
use crate::sg::{
    BatchSampler, Subsampling, all_finite, check_batch, check_metric, check_step_size,
    log_posterior_gradient,
};

/// Settings of [`Sgld`].
#[derive(Debug, Clone, PartialEq)]
pub struct SgldConfig {
    /// Step size h, finite and > 0.
    pub step_size: f64,
    /// Minibatch size n, 1 ≤ n ≤ N (checked against the model at `init`).
    pub batch: usize,
    /// How minibatches are drawn (default without replacement).
    pub subsampling: Subsampling,
    /// Constant preconditioner Σ (None: identity), dimension checked at `init`.
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

    /// Checks h finite and > 0 and n ≥ 1 (n ≤ N is checked at `init`).
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
    /// A non-finite gradient or position (the chain did not move).
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

#[derive(Debug, Clone)]
struct Running {
    sampler: BatchSampler,
    grad: Vec<f64>,
    next: Vec<f64>,
    drift: Vec<f64>,
    z: Vec<f64>,
}

/// Uncorrected SGLD with a fixed step size (see the module docs), generic over the gradient
/// estimator `G` (default: the plain minibatch gradient).
#[derive(Debug, Clone)]
pub struct Sgld<G = MinibatchGradient> {
    config: SgldConfig,
    estimator: G,
    running: Option<Running>,
}

impl Sgld {
    /// Plain SGLD ((N/n) Σ_{i∈S} ∇ℓ_i) with validated settings (n ≤ N is checked in `init`).
    pub fn new(config: SgldConfig) -> Result<Self> {
        let estimator = MinibatchGradient::new(config.batch);
        Self::with_estimator(config, estimator)
    }
}

impl<G> Sgld<G> {
    /// SGLD with the gradient estimator `estimator` (e.g. a control-variate estimator), with
    /// validated settings.
    pub fn with_estimator(config: SgldConfig, estimator: G) -> Result<Self> {
        config.validate()?;
        Ok(Self { config, estimator, running: None })
    }

    /// The settings.
    pub fn config(&self) -> &SgldConfig {
        &self.config
    }

    /// The gradient estimator.
    pub fn estimator(&self) -> &G {
        &self.estimator
    }
}

impl<M, G> StatefulKernel<M> for Sgld<G>
where
    M: TermGradients + LogPrior + ?Sized,
    G: GradientEstimator<M>,
{
    type State = MinibatchState;
    type Stats = SgldStats;

    fn init<R: Rng + ?Sized>(
        &mut self,
        model: &M,
        position: &[f64],
        _rng: &mut R,
    ) -> Result<MinibatchState> {
        let (d, n) = (model.dim(), model.num_terms());
        tallmc_core::error::check_finite_vector("initial position", position, d)?;
        check_batch("SGLD batch size n", self.config.batch, Some(n))?;
        check_metric(self.config.preconditioner.as_ref(), d)?;
        self.running = Some(Running {
            sampler: BatchSampler::new(self.config.subsampling, n, self.config.batch)?,
            grad: vec![0.0; d],
            next: vec![0.0; d],
            drift: vec![0.0; d],
            z: vec![0.0; d],
        });
        Ok(MinibatchState { position: position.to_vec() })
    }

    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &M,
        state: &mut MinibatchState,
        rng: &mut R,
    ) -> Result<SgldStats> {
        let Some(r) = self.running.as_mut() else {
            return Err(Error::Other("Sgld::step called before init".into()));
        };
        let h = self.config.step_size;
        let batch = self.config.batch;
        let evals = log_posterior_gradient(
            &mut self.estimator,
            &mut r.sampler,
            batch,
            model,
            &state.position,
            &mut r.grad,
            rng,
        );
        let sd = h.sqrt();
        match &self.config.preconditioner {
            None => {
                for ((n, t), g) in r.next.iter_mut().zip(&state.position).zip(&r.grad) {
                    let z: f64 = StandardNormal.sample(rng);
                    *n = t + 0.5 * h * g + sd * z;
                }
            }
            Some(metric) => {
                // Drift (h/2) Σ g; noise √h v with v ~ N(0, Σ).
                metric.velocity(&r.grad, &mut r.drift);
                metric.sample_velocity(rng, &mut r.next, &mut r.z);
                for ((n, t), g) in r.next.iter_mut().zip(&state.position).zip(&r.drift) {
                    *n = t + 0.5 * h * g + sd * *n;
                }
            }
        }
        let divergent = !all_finite(&r.grad) || !all_finite(&r.next);
        if !divergent {
            state.position.copy_from_slice(&r.next);
        }
        Ok(SgldStats { step_size: h, divergent, evals, batch })
    }

    fn adaptation_report(&self) -> Vec<String> {
        let mut lines = vec![
            format!("Step size = {}", self.config.step_size),
            format!("SGLD (uncorrected): minibatch n = {}", self.config.batch),
        ];
        if self.config.subsampling == Subsampling::WithReplacement {
            lines.push("Minibatches drawn with replacement".into());
        }
        if let Some(m) = &self.config.preconditioner {
            lines.push("Preconditioner:".into());
            lines.extend(m.describe());
        }
        lines
    }
}
