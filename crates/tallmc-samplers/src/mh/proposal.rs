//! Proposals for Metropolis–Hastings kernels.
//!
//! A [`Proposal`] draws θ′ ~ q(·|θ) and returns the log correction
//! log q(θ|θ′) − log q(θ′|θ) that enters the MH ratio, with the per-datum evaluations it made.
//! A kernel's settings hold a proposal as a prototype; each chain clones it when it is built
//! and calls [`Proposal::init`] on its copy, which then carries the chain's adaptation state.
//!
//!
//! * [`RandomWalkProposal`] — θ′ = θ + s L z (symmetric: correction 0), with the scale s tuned
//!   during warmup and, optionally, the shape Σ = L Lᵀ learned from the chain (adaptive
//!   Metropolis); used by [`RandomWalkMetropolis`](crate::RandomWalkMetropolis),
//!   [`AdaptiveMetropolis`](crate::AdaptiveMetropolis) and the minibatch MH kernels, its tuning
//!   a [`RandomWalkTuning`];
//! * [`SgldProposal`] — one stochastic-gradient Langevin step on a minibatch (Austerity eq. 10),
//!   whose forward and reverse densities are both conditioned on the same minibatch.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;
use tallmc_core::linalg::Cholesky;
use tallmc_core::subsample::WithoutReplacement;
use tallmc_core::{Error, EvalCounts, LogPrior, Result, TermGradients, Terms, Tuning};
use tallmc_integrators::{DualAveragingConfig, MetricEstimator, MetricKind};

use crate::step_size::StepSize;

/// A Metropolis–Hastings proposal q(θ′|θ).
///
/// The kernels clone a proposal for every chain they build and call [`Proposal::init`] on the
/// copy, so a proposal is both its settings and its chain's running state (scratch, adapted
/// scale); kernels need it to be `Clone + Send + Sync`.
pub trait Proposal<M: ?Sized> {
    /// The proposal's (adapted) tuning, which the kernels report as part of theirs.
    type Tuning: Tuning;

    /// Prepares scratch for a chain on `model` (validating settings against its dimension).
    /// Called once, on the chain's copy, when a kernel builds a chain.
    fn init(&mut self, model: &M) -> Result<()>;

    /// Writes θ′ ~ q(·|θ) into `out` and returns log q(θ|θ′) − log q(θ′|θ) with the
    /// per-datum evaluations made.
    fn propose<R: Rng + ?Sized>(
        &mut self, model: &M, theta: &[f64], out: &mut [f64], rng: &mut R,
    ) -> (f64, EvalCounts);

    /// Called once before warmup. Nothing by default (a proposal that does not adapt).
    fn begin_warmup(&mut self) {}

    /// Called after every warmup step with its acceptance statistic and the chain's position.
    /// Nothing by default.
    fn adapt(&mut self, _accept_stat: f64, _position: &[f64]) {}

    /// Called after every step (warmup or not) with the chain's position (for proposals that
    /// keep adapting after warmup). Nothing by default.
    fn observe(&mut self, _position: &[f64]) {}

    /// Called once after warmup. Nothing by default.
    fn end_warmup(&mut self) {}

    /// The proposal's current tuning. Its [`Tuning::comment_lines`] start with
    /// `Step size = …`.
    fn tuning(&self) -> Self::Tuning;

    /// The current step size (random-walk scale s, or SGLD's α), for the `stepsize__` column.
    fn step_size(&self) -> f64;
}

/// Settings of [`RandomWalkProposal`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RandomWalkProposalConfig {
    /// Initial proposal shape Σ₀ (row-major d × d, symmetric positive definite); identity if
    /// `None`.
    pub covariance: Option<Vec<f64>>,
    /// Initial scale s; 2.4/√d with covariance learning (Haario), 2.38/√d without (Gelman,
    /// Roberts & Gilks), if `None`.
    pub initial_scale: Option<f64>,
    /// Tune s by dual averaging towards `target_accept` during warmup.
    pub adapt_scale: bool,
    /// Target acceptance rate; 0.234 (d ≥ 2) or 0.44 (d = 1) if `None`.
    pub target_accept: Option<f64>,
    /// Learn Σ from the chain's history (adaptive Metropolis, Haario et al. 2001).
    pub adapt_covariance: bool,
    /// Iterations t₀ with Σ₀ before learning; max(100, 2d) if `None`.
    pub initial_iterations: Option<usize>,
    /// Relative ridge ε: Σ_t = Cov + ε·mean(diag Cov)·I.
    pub ridge: f64,
    /// Re-factor Σ every this many iterations.
    pub update_every: usize,
    /// Keep learning Σ after warmup (Haario's original, time-inhomogeneous chain).
    pub adapt_after_warmup: bool,
}

impl Default for RandomWalkProposalConfig {
    fn default() -> Self {
        Self {
            covariance: None,
            initial_scale: None,
            adapt_scale: true,
            target_accept: None,
            adapt_covariance: false,
            initial_iterations: None,
            ridge: 1e-6,
            update_every: 1,
            adapt_after_warmup: false,
        }
    }
}

impl RandomWalkProposalConfig {
    /// Checks the settings that do not depend on the dimension.
    pub fn validate(&self) -> Result<()> {
        if let Some(s) = self.initial_scale {
            tallmc_core::error::check_positive("initial_scale", s)?;
        }
        if let Some(t) = self.target_accept {
            tallmc_core::error::check_unit_open("target_accept", t)?;
        }
        if !(self.ridge.is_finite() && self.ridge >= 0.0) {
            return Err(Error::invalid("ridge", self.ridge, "a finite number ≥ 0"));
        }
        if self.update_every == 0 {
            return Err(Error::invalid("update_every", 0, "at least 1"));
        }
        if let Some(c) = &self.covariance {
            tallmc_core::error::check_finite("proposal covariance", c)?;
        }
        Ok(())
    }
}

/// Optimal-scaling acceptance target for a random walk in dimension `dim`.
pub(crate) fn default_target(dim: usize) -> f64 {
    if dim == 1 { 0.44 } else { 0.234 }
}

/// The tuning of a [`RandomWalkProposal`]: the scale s and the shape Σ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RandomWalkTuning {
    /// The scale s (after warmup: the dual-averaged one).
    pub scale: f64,
    /// The dimension d.
    pub dim: usize,
    /// The shape Σ (row-major d × d): Σ₀, or the learned covariance (divided by s²).
    pub covariance: Vec<f64>,
    /// Whether Σ is learned from the chain (adaptive Metropolis); the CSV comments list Σ then.
    pub covariance_learned: bool,
}

impl Tuning for RandomWalkTuning {
    /// `Step size = s`, a note that it is the scale, and the learned Σ row by row (if learned).
    fn comment_lines(&self) -> Vec<String> {
        let mut lines = vec![
            format!("Step size = {}", self.scale),
            "(the step size is the random-walk scale s)".into(),
        ];
        if self.covariance_learned {
            let d = self.dim.max(1);
            lines.push("Proposal covariance divided by the squared scale (row-major):".into());
            lines.extend(
                self.covariance.chunks(d).map(|row| {
                    row.iter().map(|x| format!("{x:.6e}")).collect::<Vec<_>>().join(", ")
                }),
            );
        }
        lines
    }
}

/// The Gaussian random walk θ′ = θ + s L z, z ~ N(0, I), Σ = L Lᵀ (see the module docs).
#[derive(Debug, Clone)]
pub struct RandomWalkProposal {
    config: RandomWalkProposalConfig,
    factor: Cholesky,
    covariance: Vec<f64>,
    history: Option<MetricEstimator>,
    scale: StepSize,
    iteration: usize,
    learning: bool,
    z: Vec<f64>,
    step: Vec<f64>,
}

impl RandomWalkProposal {
    /// A proposal with validated settings (the covariance is checked against the model in
    /// `init`).
    pub fn new(config: RandomWalkProposalConfig) -> Result<Self> {
        config.validate()?;
        Ok(Self {
            config,
            factor: Cholesky::identity(0),
            covariance: Vec::new(),
            history: None,
            scale: StepSize::new(0.0),
            iteration: 0,
            learning: false,
            z: Vec::new(),
            step: Vec::new(),
        })
    }

    /// Sizes the proposal for dimension `dim` and factors Σ₀.
    pub fn setup(&mut self, dim: usize) -> Result<()> {
        if dim == 0 {
            return Err(Error::invalid("model dimension", 0, "at least 1"));
        }
        self.covariance = match &self.config.covariance {
            Some(c) if c.len() != dim * dim => {
                return Err(Error::dimension(
                    "proposal covariance (d × d entries)",
                    dim * dim,
                    c.len(),
                ));
            }
            Some(c) => c.clone(),
            None => {
                let mut identity = vec![0.0; dim * dim];
                (0..dim).for_each(|j| identity[j * dim + j] = 1.0);
                identity
            }
        };
        self.factor = Cholesky::new(&self.covariance, dim, "proposal covariance")?;
        let default_scale = if self.config.adapt_covariance { 2.4 } else { 2.38 };
        self.scale =
            StepSize::new(self.config.initial_scale.unwrap_or(default_scale / (dim as f64).sqrt()));
        self.history =
            self.config.adapt_covariance.then(|| MetricEstimator::new(MetricKind::Dense, dim));
        self.iteration = 0;
        self.learning = false;
        self.z = vec![0.0; dim];
        self.step = vec![0.0; dim];
        Ok(())
    }

    /// The current scale s.
    pub fn scale(&self) -> f64 {
        self.scale.get()
    }

    /// The current shape Σ (row-major d × d): Σ₀, or the learned covariance.
    pub fn covariance(&self) -> &[f64] {
        &self.covariance
    }

    /// Writes θ + s L z into `out`. Draws d standard normals.
    pub fn draw<R: Rng + ?Sized>(&mut self, theta: &[f64], rng: &mut R, out: &mut [f64]) {
        self.z.iter_mut().for_each(|x| *x = StandardNormal.sample(rng));
        self.factor.mul_lower(&self.z, &mut self.step);
        let scale = self.scale.get();
        for ((o, t), s) in out.iter_mut().zip(theta).zip(&self.step) {
            *o = t + scale * s;
        }
    }

    fn learn(&mut self, position: &[f64]) {
        let Some(history) = self.history.as_mut() else { return };
        history.add(position);
        self.iteration += 1;
        let d = position.len();
        let t0 = self.config.initial_iterations.unwrap_or(100.max(2 * d));
        if self.iteration <= t0 || !self.iteration.is_multiple_of(self.config.update_every) {
            return;
        }
        history.sample_covariance(&mut self.covariance);
        let mean_var = (0..d).map(|j| self.covariance[j * d + j]).sum::<f64>() / d as f64;
        for j in 0..d {
            self.covariance[j * d + j] += self.config.ridge * mean_var;
        }
        // A degenerate history (e.g. nothing accepted yet) keeps the previous factor.
        let _ = self.factor.refactor(&self.covariance, "adaptive Metropolis covariance");
    }

    /// Starts warmup: the scale tuner, and covariance learning if configured.
    pub fn begin_warmup(&mut self) {
        self.learning = self.config.adapt_covariance;
        let target = self.config.target_accept.unwrap_or(default_target(self.z.len()));
        let cfg = DualAveragingConfig { target_accept: target, ..Default::default() };
        self.scale.begin_warmup(self.config.adapt_scale && self.scale.get() > 0.0, cfg);
    }

    /// One warmup update: tune s with the acceptance statistic, learn Σ from the position.
    pub fn adapt(&mut self, accept_stat: f64, position: &[f64]) {
        self.scale.update(accept_stat);
        if self.learning && !self.config.adapt_after_warmup {
            self.learn(position);
        }
    }

    /// After every step: keeps learning Σ when `adapt_after_warmup` is set.
    pub fn observe(&mut self, position: &[f64]) {
        if self.learning && self.config.adapt_after_warmup {
            self.learn(position);
        }
    }

    /// Ends warmup: fixes s at the averaged value and stops learning (unless configured).
    pub fn end_warmup(&mut self) {
        self.scale.end_warmup();
        if !self.config.adapt_after_warmup {
            self.learning = false;
        }
    }

    /// The current tuning: s and Σ.
    pub fn tuning(&self) -> RandomWalkTuning {
        RandomWalkTuning {
            scale: self.scale.get(),
            dim: self.z.len(),
            covariance: self.covariance.clone(),
            covariance_learned: self.config.adapt_covariance,
        }
    }
}

impl<M: Terms + ?Sized> Proposal<M> for RandomWalkProposal {
    type Tuning = RandomWalkTuning;

    fn init(&mut self, model: &M) -> Result<()> {
        self.setup(model.dim())
    }
    fn propose<R: Rng + ?Sized>(
        &mut self, _m: &M, theta: &[f64], out: &mut [f64], rng: &mut R,
    ) -> (f64, EvalCounts) {
        self.draw(theta, rng, out);
        (0.0, EvalCounts::ZERO)
    }
    fn begin_warmup(&mut self) {
        RandomWalkProposal::begin_warmup(self);
    }
    fn adapt(&mut self, accept_stat: f64, position: &[f64]) {
        RandomWalkProposal::adapt(self, accept_stat, position);
    }
    fn observe(&mut self, position: &[f64]) {
        RandomWalkProposal::observe(self, position);
    }
    fn end_warmup(&mut self) {
        RandomWalkProposal::end_warmup(self);
    }
    fn tuning(&self) -> RandomWalkTuning {
        RandomWalkProposal::tuning(self)
    }
    fn step_size(&self) -> f64 {
        self.scale.get()
    }
}

/// Settings of [`SgldProposal`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SgldProposalConfig {
    /// Step size α > 0 (also the variance of the injected noise).
    pub step_size: f64,
    /// Minibatch size n (1 ≤ n ≤ N), drawn without replacement for each proposal.
    pub batch: usize,
}

/// The tuning of an [`SgldProposal`] (fixed: it adapts nothing).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SgldProposalTuning {
    /// Step size α.
    pub step_size: f64,
    /// Minibatch size n.
    pub batch: usize,
}

impl Tuning for SgldProposalTuning {
    /// `Step size = α`, then the SGLD settings.
    fn comment_lines(&self) -> Vec<String> {
        vec![
            format!("Step size = {}", self.step_size),
            format!(
                "SGLD proposal: step size alpha = {}, minibatch n = {}",
                self.step_size, self.batch
            ),
        ]
    }
}

/// A stochastic-gradient Langevin proposal (Welling & Teh 2011; Austerity eq. 10):
///
/// ```text
/// θ′ = μ(θ) + η,   μ(θ) = θ + (α/2)[(N/n) Σ_{i∈S} ∇ℓ_i(θ) + ∇log p(θ)],   η ~ N(0, α I),
/// ```
///
/// with S a minibatch of n indices drawn without replacement. The reverse density uses the
/// **same** minibatch, q(θ|θ′, S) = N(θ; μ_S(θ′), αI), so that each minibatch defines a kernel
/// satisfying detailed balance and the mixture over minibatches does too:
/// log q(θ|θ′) − log q(θ′|θ) = [‖θ′ − μ_S(θ)‖² − ‖θ − μ_S(θ′)‖²]/(2α).
///
/// Cost: 2n gradient (and term) evaluations per proposal (at θ and at θ′).
#[derive(Debug, Clone)]
pub struct SgldProposal {
    config: SgldProposalConfig,
    sampler: Option<WithoutReplacement>,
    grad: Vec<f64>,
    values: Vec<f64>,
    mean_forward: Vec<f64>,
}

impl SgldProposal {
    /// A proposal with validated settings (the batch is checked against N in `init`).
    pub fn new(config: SgldProposalConfig) -> Result<Self> {
        tallmc_core::error::check_positive("SGLD step size", config.step_size)?;
        if config.batch == 0 {
            return Err(Error::invalid("SGLD batch size", 0, "at least 1"));
        }
        Ok(Self {
            config,
            sampler: None,
            grad: Vec::new(),
            values: Vec::new(),
            mean_forward: Vec::new(),
        })
    }

    /// μ_S(θ) written into `out` for the minibatch `idx`; returns the evaluations.
    fn drift<M: TermGradients + LogPrior + ?Sized>(
        grad: &mut [f64], values: &mut [f64], model: &M, idx: &[u32], theta: &[f64], alpha: f64,
        out: &mut [f64],
    ) -> EvalCounts {
        grad.fill(0.0);
        model.log_terms_grad_sum(theta, idx, &mut values[..idx.len()], grad);
        let scale = model.num_terms() as f64 / idx.len() as f64;
        grad.iter_mut().for_each(|g| *g *= scale);
        model.log_prior_grad(theta, grad);
        for ((o, t), g) in out.iter_mut().zip(theta).zip(grad.iter()) {
            *o = t + 0.5 * alpha * g;
        }
        EvalCounts::terms_and_gradients(idx.len())
    }
}

impl<M: TermGradients + LogPrior + ?Sized> Proposal<M> for SgldProposal {
    type Tuning = SgldProposalTuning;

    fn init(&mut self, model: &M) -> Result<()> {
        let n = model.num_terms();
        if self.config.batch > n {
            return Err(Error::invalid(
                "SGLD batch size",
                self.config.batch,
                format!("at most the number of data points N = {n}"),
            ));
        }
        let d = model.dim();
        self.sampler = Some(WithoutReplacement::new(n)?);
        self.grad = vec![0.0; d];
        self.values = vec![0.0; self.config.batch];
        self.mean_forward = vec![0.0; d];
        Ok(())
    }

    fn propose<R: Rng + ?Sized>(
        &mut self, model: &M, theta: &[f64], out: &mut [f64], rng: &mut R,
    ) -> (f64, EvalCounts) {
        let alpha = self.config.step_size;
        let Some(sampler) = self.sampler.as_mut() else {
            out.copy_from_slice(theta);
            return (f64::NEG_INFINITY, EvalCounts::ZERO);
        };
        sampler.reset();
        let idx = sampler.draw(self.config.batch, rng);
        let mut evals = Self::drift(
            &mut self.grad,
            &mut self.values,
            model,
            idx,
            theta,
            alpha,
            &mut self.mean_forward,
        );
        let sd = alpha.sqrt();
        for (o, m) in out.iter_mut().zip(&self.mean_forward) {
            let z: f64 = StandardNormal.sample(rng);
            *o = m + sd * z;
        }
        // Reverse move: μ_S(θ′) on the same minibatch, reusing `grad` and then comparing.
        let forward: f64 = out.iter().zip(&self.mean_forward).map(|(a, b)| (a - b) * (a - b)).sum();
        let mean_reverse = &mut self.mean_forward; // forward mean no longer needed
        evals +=
            Self::drift(&mut self.grad, &mut self.values, model, idx, out, alpha, mean_reverse);
        let reverse: f64 =
            theta.iter().zip(mean_reverse.iter()).map(|(a, b)| (a - b) * (a - b)).sum();
        let log_correction = (forward - reverse) / (2.0 * alpha);
        (if log_correction.is_nan() { f64::NEG_INFINITY } else { log_correction }, evals)
    }

    fn tuning(&self) -> SgldProposalTuning {
        SgldProposalTuning { step_size: self.config.step_size, batch: self.config.batch }
    }
    fn step_size(&self) -> f64 {
        self.config.step_size
    }
}
