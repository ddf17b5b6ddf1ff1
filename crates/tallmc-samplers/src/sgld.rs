//! Stochastic-gradient Langevin dynamics (Welling & Teh 2011), uncorrected:
//!
//! ```text
//! θ ← θ + (h/2)[∇log p(θ) + (N/n) Σ_{i∈S} ∇ℓ_i(θ)] + N(0, h I),
//! ```
//!
//! with a fresh minibatch S of n indices (without replacement) every step and a fixed step size
//! h (REFERENCES §4). Without an MH correction the chain is biased for any h > 0: the bias grows
//! with h (and with the gradient noise), which is what corrected variants (minibatch MH with an
//! [`SgldProposal`](crate::SgldProposal)) trade against cost.
//!
//! Cost: n terms and n gradients per step. A non-finite gradient is reported as a divergence and
//! the chain stays where it was.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;
use tallmc_core::subsample::WithoutReplacement;
use tallmc_core::{Error, EvalCounts, Kernel, LogPrior, Result, StepStats, TermGradients};

use crate::MinibatchState;

/// Settings of [`Sgld`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SgldConfig {
    /// Step size h > 0.
    pub step_size: f64,
    /// Minibatch size n, 1 ≤ n ≤ N.
    pub batch: usize,
}

/// Stats of one SGLD step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SgldStats {
    /// Step size h.
    pub step_size: f64,
    /// A non-finite gradient or position (the chain did not move).
    pub divergent: bool,
    /// n terms and n gradients.
    pub evals: EvalCounts,
    /// Minibatch size n.
    pub batch: usize,
}

impl StepStats for SgldStats {
    const COLUMNS: &'static [&'static str] =
        &["accept_stat__", "stepsize__", "divergent__", "n_terms__", "n_grads__"];
    fn write_columns(&self, out: &mut [f64]) {
        out[0] = 1.0;
        out[1] = self.step_size;
        out[2] = f64::from(u8::from(self.divergent));
        out[3] = self.evals.terms as f64;
        out[4] = self.evals.gradients as f64;
    }
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
    sampler: WithoutReplacement,
    grad: Vec<f64>,
    values: Vec<f64>,
    next: Vec<f64>,
}

/// Uncorrected SGLD (see the module docs).
#[derive(Debug, Clone)]
pub struct Sgld {
    config: SgldConfig,
    running: Option<Running>,
}

impl Sgld {
    /// A kernel with validated settings (the batch is checked against N in `init`).
    pub fn new(config: SgldConfig) -> Result<Self> {
        tallmc_core::error::check_positive("SGLD step size", config.step_size)?;
        if config.batch == 0 {
            return Err(Error::invalid("SGLD batch size", 0, "at least 1"));
        }
        Ok(Self { config, running: None })
    }
}

impl<M: TermGradients + LogPrior + ?Sized> Kernel<M> for Sgld {
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
        if self.config.batch > n {
            return Err(Error::invalid(
                "SGLD batch size",
                self.config.batch,
                format!("at most the number of data points N = {n}"),
            ));
        }
        self.running = Some(Running {
            sampler: WithoutReplacement::new(n)?,
            grad: vec![0.0; d],
            values: vec![0.0; self.config.batch],
            next: vec![0.0; d],
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
        r.sampler.reset();
        let idx = r.sampler.draw(self.config.batch, rng);
        r.grad.fill(0.0);
        model.log_terms_grad_sum(&state.position, idx, &mut r.values, &mut r.grad);
        let scale = model.num_terms() as f64 / idx.len() as f64;
        r.grad.iter_mut().for_each(|g| *g *= scale);
        model.log_prior_grad(&state.position, &mut r.grad);
        let sd = h.sqrt();
        for ((n, t), g) in r.next.iter_mut().zip(&state.position).zip(&r.grad) {
            let z: f64 = StandardNormal.sample(rng);
            *n = t + 0.5 * h * g + sd * z;
        }
        let divergent = r.next.iter().any(|x| !x.is_finite());
        if !divergent {
            state.position.copy_from_slice(&r.next);
        }
        Ok(SgldStats {
            step_size: h,
            divergent,
            evals: EvalCounts::terms_and_gradients(self.config.batch),
            batch: self.config.batch,
        })
    }

    fn adaptation_report(&self) -> Vec<String> {
        vec![
            format!("Step size = {}", self.config.step_size),
            format!("SGLD (uncorrected): minibatch n = {}", self.config.batch),
        ]
    }
}
