//! Signed HMC-ECS: energy-conserving subsampling HMC on the absolute value of the unbiased
//! block-Poisson likelihood estimator, with a sign correction (Dang et al. 2019, §5; the
//! estimator of Quiroz, Tran, Villani, Kohn & Dang 2021; REFERENCES §3).
//!
//! **Target.** With u the block-Poisson random numbers (λ factors, factor l holding
//! χ_l ~ Poisson(1) blocks of m indices drawn with replacement) and
//!
//! ```text
//! L̂_B(θ; u) = exp(Σ_k q_k(θ)) Π_l ξ_l,   ξ_l = exp((a + λ)/λ) Π_{h≤χ_l} (d̂^{(h,l)} − a)/λ,
//! ```
//!
//! E_u L̂_B = L(θ) exactly, but L̂_B can be negative. The chain targets
//! π̃(θ, u) ∝ |L̂_B(θ; u)| p(θ) p(u) with the same HMC-within-Gibbs scheme as
//! [`crate::ecs::perturbed`]:
//!
//! 1. **u-step.** Redraw κ of the λ factors (correlation ≈ 1 − κ/λ) and accept with
//!    min{1, |L̂_B(θ; u′)| / |L̂_B(θ; u)|}, computed in log space.
//! 2. **θ-step.** HMC with u fixed on U(θ) = −log|L̂_B(θ; u)| − log p(θ), gradient
//!    ∇Σq + Σ_{l,h} ∇d̂^{(h,l)}/(d̂^{(h,l)} − a) (exact for the fixed u), so the energy is
//!    conserved as in perturbed HMC-ECS. Fixed-length or NUTS
//!    ([`ThetaIntegrator`](crate::ThetaIntegrator)), as for perturbed HMC-ECS; with NUTS the
//!    sign recorded is that of the point the tree drew.
//!
//! Each draw records s = sign L̂_B(θ; u) (the `sign__` column). Posterior expectations are
//! estimated by the **sign-corrected** ratio E_π(ψ) ≈ Σ_j ψ(θ_j)s_j / Σ_j s_j, which is
//! consistent for the exact posterior π (no perturbation: the estimator is unbiased);
//! τ̂ = fraction of positive signs estimates τ = P(L̂_B ≥ 0), and the efficiency is divided by
//! about (2τ − 1)² relative to a chain on a positive estimator.
//!
//! **Tuning.** m = 30 and λ = 100 by default (the paper's HIGGS setting), κ = 1 (ρ ≈ 0.99). The
//! lower bound a, when not given, is chosen when a chain starts by the normal-theory formulas of
//! `tallmc_estimators::tuning::block_poisson_moments`: with μ and σ² the mean and variance of a
//! block estimate d̂ (μ = Σ_k d_k, σ² = n²σ²_d/m, averaged over 4 draws from the Laplace
//! approximation N(θ*, Σ)), a = μ − tσ with t on a grid minimizing V[log|L̂_B|] subject to
//! P(L̂_B ≥ 0) ≥ `min_prob_positive` (default 0.99); if σ = 0 (exact control variates),
//! a = μ − λ (the paper's a = −λ when μ ≈ 0). a is then kept fixed (re-centring θ* during
//! warmup does not re-tune it). θ*, M, ε and the re-centring schedule are as in
//! [`crate::ecs::perturbed`].
//!
//! **Cost** per iteration: Σ_l χ_l·m (mean λm) terms + as many gradients per leapfrog step, and
//! the same for the u-step, plus the control variates of the κ refreshed factors (on average
//! κm indices). The setup costs are those of perturbed HMC-ECS (Newton, control variates,
//! 4 passes of N terms for the tuning of a when it is not given).
//!
//! **Divergences.** A non-finite estimate or gradient or an energy error above
//! `max_energy_error` rejects the trajectory and flags it; the chain stays put. An estimate
//! with log|L̂_B| = −∞ (some d̂ = a exactly) is rejected in the u-step.

use rand::Rng;
use serde::Serialize;
use tallmc_core::{Error, EvalCounts, LogPriorHessian, Result, TermHessians};
use tallmc_estimators::tuning::block_poisson_moments;
use tallmc_estimators::{
    BlockPoissonEstimate, BlockPoissonEstimator, BlockPoissonSubsample, CvOrder, DifferenceTerms,
    RankOne,
};

use super::gibbs::EcsStep;
use super::kernel::{EcsHead, EcsKernel, EcsReport, EcsSetup, EcsStart, EcsTuning};
use super::settings::EcsDynamics;
use super::start::{TunedStart, check_center, tuned_start};

/// Settings of [`SignedHmcEcs`].
#[derive(Debug, Clone, PartialEq)]
pub struct SignedHmcEcsConfig {
    /// Block size m ≥ 1 (indices per block estimate d̂; default 30).
    pub block_size: usize,
    /// Number of factors λ ≥ 1 (default 100).
    pub lambda: usize,
    /// Factors refreshed per u-step, 1 ≤ κ ≤ λ (default 1).
    pub kappa: usize,
    /// Lower bound a (finite); tuned at initialization if `None` (module docs).
    pub lower_bound: Option<f64>,
    /// Minimum predicted P(L̂_B ≥ 0) when tuning a, in [0.5, 1) (default 0.99).
    pub min_prob_positive: f64,
    /// Order of the Taylor control variates (default 2).
    pub cv_order: CvOrder,
    /// Expansion point θ* (finite, length d); the Newton posterior mode if `None`.
    pub center: Option<Vec<f64>>,
    /// θ-step settings.
    pub dynamics: EcsDynamics,
}

impl Default for SignedHmcEcsConfig {
    fn default() -> Self {
        Self {
            block_size: 30,
            lambda: 100,
            kappa: 1,
            lower_bound: None,
            min_prob_positive: 0.99,
            cv_order: CvOrder::Two,
            center: None,
            dynamics: EcsDynamics::default(),
        }
    }
}

impl SignedHmcEcsConfig {
    /// Checks every setting's range (θ*'s length is checked when a chain is built).
    pub fn validate(&self) -> Result<()> {
        if self.block_size == 0 {
            return Err(Error::invalid("block size m", 0, "at least 1"));
        }
        if self.lambda == 0 {
            return Err(Error::invalid("number of factors λ", 0, "at least 1"));
        }
        if self.kappa == 0 || self.kappa > self.lambda {
            return Err(Error::invalid(
                "refreshed factors κ",
                self.kappa,
                format!("an integer in [1, λ = {}]", self.lambda),
            ));
        }
        if let Some(a) = self.lower_bound
            && !a.is_finite()
        {
            return Err(Error::invalid("lower bound a", a, "a finite number"));
        }
        if !(0.5..1.0).contains(&self.min_prob_positive) {
            return Err(Error::invalid(
                "min_prob_positive",
                self.min_prob_positive,
                "a number in [0.5, 1)",
            ));
        }
        check_center(self.center.as_deref())?;
        self.dynamics.validate()
    }
}

/// Stats of one signed HMC-ECS iteration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SignedHmcEcsStats {
    /// min{1, exp(−ΔH)} of the θ-step (0 when divergent); NUTS: the mean of
    /// min{1, exp(H₀ − H(z))} over the tree's leapfrog points.
    pub accept_stat: f64,
    /// Whether the θ-step accepted (NUTS: whether the draw is a new point of the tree).
    pub accepted: bool,
    /// Whether the θ-step diverged.
    pub divergent: bool,
    /// min{1, |L̂_B(θ; u′)|/|L̂_B(θ; u)|} of the u-step.
    pub u_accept_stat: f64,
    /// Whether the u-step accepted.
    pub u_accepted: bool,
    /// Step size ε.
    #[serde(rename = "stepsize")]
    pub step_size: f64,
    /// Leapfrog steps taken.
    pub n_leapfrog: usize,
    /// Doublings of the NUTS θ-step's tree (0 for the fixed-length θ-step).
    #[serde(rename = "treedepth")]
    pub tree_depth: usize,
    /// Hamiltonian at the new state.
    pub energy: f64,
    /// ΔH of the θ-proposal (NaN when divergent); NUTS: H at the draw − H₀.
    pub energy_error: f64,
    /// Sign of L̂_B at the new state (+1, −1; 0 if some d̂ = a exactly).
    pub sign: f64,
    /// log|L̂_B| at the new state.
    pub log_abs_likelihood: f64,
    /// Number of data looked at per estimate at the new state (Σ_l χ_l · m).
    pub batch_size: u64,
    /// Per-datum evaluations as the estimator reports them (plus setup/re-centring passes).
    #[serde(rename = "n")]
    pub evals: EvalCounts,
    /// The NUTS θ-step's tree reached `max_depth` doublings (not a CSV column).
    #[serde(skip)]
    pub hit_max_depth: bool,
}

step_stats_from_fields!(length_limited: SignedHmcEcsStats);

/// The block-Poisson estimator's settings in a chain's tuning.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SignedTuning {
    /// Block size m.
    pub block_size: usize,
    /// Number of factors λ.
    pub lambda: usize,
    /// Factors refreshed per u-step κ.
    pub kappa: usize,
    /// Lower bound a (given or tuned at the start).
    pub lower_bound: f64,
}

impl EcsHead for SignedTuning {
    fn lines(&self) -> Vec<String> {
        vec![format!(
            "Block-Poisson: m = {}, lambda = {}, kappa = {}, a = {}",
            self.block_size, self.lambda, self.kappa, self.lower_bound
        )]
    }
}

impl EcsReport<BlockPoissonEstimate> for SignedTuning {
    type Stats = SignedHmcEcsStats;

    fn stats(
        &self, step: &EcsStep, estimate: &BlockPoissonEstimate, batch: usize,
    ) -> SignedHmcEcsStats {
        SignedHmcEcsStats {
            accept_stat: step.accept_stat,
            accepted: step.accepted,
            divergent: step.divergent,
            u_accept_stat: step.u_accept_stat,
            u_accepted: step.u_accepted,
            step_size: step.step_size,
            n_leapfrog: step.n_leapfrog,
            tree_depth: step.tree_depth,
            energy: step.energy,
            energy_error: step.energy_error,
            sign: estimate.sign,
            log_abs_likelihood: estimate.log_abs_likelihood,
            batch_size: batch as u64,
            evals: step.evals,
            hit_max_depth: step.hit_max_depth,
        }
    }
}

/// The adapted tuning of a signed HMC-ECS chain.
pub type SignedHmcEcsTuning = EcsTuning<SignedTuning>;

/// The setup of signed HMC-ECS: its settings and the difference engine `E`.
#[derive(Debug, Clone)]
pub struct SignedEcs<E> {
    config: SignedHmcEcsConfig,
    engine: E,
}

impl<E> SignedEcs<E> {
    /// The settings.
    pub fn config(&self) -> &SignedHmcEcsConfig {
        &self.config
    }
}

/// Signed HMC-ECS (see the module docs), generic over the difference engine `E`: the HMC-ECS
/// kernel on the block-Poisson estimator.
pub type SignedHmcEcs<E = RankOne> = EcsKernel<SignedEcs<E>>;

impl EcsKernel<SignedEcs<RankOne>> {
    /// Settings checked by [`SignedHmcEcsConfig::validate`], with the rank-one engine (one
    /// lane per factor).
    pub fn new(config: SignedHmcEcsConfig) -> Result<Self> {
        let engine = RankOne::with_lanes(config.lambda, 8 * config.block_size);
        Self::with_engine(config, engine)
    }
}

impl<E> EcsKernel<SignedEcs<E>> {
    /// Settings checked by [`SignedHmcEcsConfig::validate`], with the difference engine
    /// `engine` (e.g. `HessianProducts::with_lanes(d, λ, 8m)` for models without a linear
    /// predictor).
    pub fn with_engine(config: SignedHmcEcsConfig, engine: E) -> Result<Self> {
        config.validate()?;
        Ok(Self::from_setup(SignedEcs { config, engine }))
    }
}

/// a minimizing V[log|L̂_B|] subject to P(L̂_B ≥ 0) ≥ `min_prob` for d̂ ~ N(μ, σ²).
fn tune_lower_bound(mu: f64, sd: f64, lambda: usize, min_prob: f64) -> f64 {
    if !(sd.is_finite() && sd > 0.0) {
        return mu - lambda as f64;
    }
    let t_max = 4.0 * lambda as f64 / sd.min(1.0) + 10.0;
    let mut best = (f64::INFINITY, mu - lambda as f64);
    for s in 0..=2000 {
        let a = mu - t_max * f64::from(s) / 2000.0 * sd;
        if let Ok(mo) = block_poisson_moments(mu, sd, lambda, a)
            && mo.prob_positive >= min_prob
            && mo.var_log_abs < best.0
        {
            best = (mo.var_log_abs, a);
        }
    }
    best.1
}

impl<M, E> EcsSetup<M> for SignedEcs<E>
where
    M: TermHessians + LogPriorHessian + ?Sized,
    E: DifferenceTerms<M> + Clone + Sync,
{
    type Estimator = BlockPoissonEstimator<E>;
    type Report = SignedTuning;
    const ESTIMATE: &'static str = "block-Poisson estimate";

    fn dynamics(&self) -> &EcsDynamics {
        &self.config.dynamics
    }

    fn start<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<EcsStart<BlockPoissonEstimator<E>, BlockPoissonSubsample, SignedTuning>> {
        let n = model.num_terms();
        let cfg = &self.config;
        let tune = |mean: f64, var: f64| -> Result<f64> {
            let nf = n as f64;
            let sd = (nf * nf * var / cfg.block_size as f64).sqrt();
            Ok(tune_lower_bound(nf * mean, sd, cfg.lambda, cfg.min_prob_positive))
        };
        let TunedStart { cv, covariance, evals, engine, tuned: a } = tuned_start(
            model,
            cfg.center.as_deref(),
            position,
            &cfg.dynamics,
            cfg.cv_order,
            &self.engine,
            cfg.lower_bound,
            tune,
            rng,
        )?;
        let mut subsample = BlockPoissonSubsample::new(n, cfg.block_size, cfg.lambda, cfg.kappa)?;
        subsample.draw_all(rng);
        let estimator =
            BlockPoissonEstimator::new(model, cv, engine, cfg.block_size, cfg.lambda, a)?;
        let report = SignedTuning {
            block_size: cfg.block_size,
            lambda: cfg.lambda,
            kappa: cfg.kappa,
            lower_bound: estimator.lower_bound(),
        };
        Ok(EcsStart { estimator, subsample, covariance, evals, report })
    }
}
