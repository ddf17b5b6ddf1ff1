//! Perturbed HMC-ECS: energy-conserving subsampling HMC (Dang, Quiroz, Kohn, Tran & Villani
//! 2019, §3–4, Algorithm 1 with the perturbed likelihood estimator of §4.2).
//!
//! **Target.** The chain moves (θ, u), u = (u_1, …, u_m) i.i.d. uniform indices into the data
//! (with replacement, in G blocks), and targets the extended density
//!
//! ```text
//! π̄_m(θ, u) ∝ exp(ℓ̂_m(θ; u) − σ̂²_m(θ; u)/2) p(θ) p(u)
//! ```
//!
//! with the difference estimator ℓ̂_m = Σ_k q_k(θ) + (n/m)Σ_i d_{u_i} and its variance estimate
//! σ̂²_m (Taylor control variates q_k around θ*, see `tallmc_estimators::DifferenceEstimator`).
//! Each iteration is HMC-within-Gibbs:
//!
//! 1. **u-step.** Redraw one of the G blocks of u (correlation ≈ 1 − 1/G between successive
//!    log-likelihood estimates) and accept with
//!    min{1, exp([ℓ̂ − σ̂²/2](θ, u′) − [ℓ̂ − σ̂²/2](θ, u))}.
//! 2. **θ-step.** HMC with u fixed: momentum p ~ N(0, M), L = ⌈εL/ε⌉ leapfrog steps on the
//!    potential U(θ) = −(ℓ̂_m − σ̂²_m/2)(θ; u) − log p(θ) (gradient ∇ℓ̂ − ½∇σ̂², both exact for
//!    the fixed u), accepted with min{1, exp(−ΔH)}. Because the dynamics and the acceptance use
//!    the *same* Û, the energy is conserved up to the O(ε²) leapfrog error and the θ-step has an
//!    acceptance rate like full-data HMC.
//!
//!    With [`ThetaIntegrator::Nuts`](crate::ThetaIntegrator::Nuts) the θ-step is instead one NUTS transition on the same Û
//!    (u still fixed): a doubling trajectory with multinomial sampling and the generalized
//!    no-U-turn criterion, as in [`crate::hamiltonian::nuts`], of at most `max_depth` doublings. Like the
//!    fixed-length step it leaves exp(−Û(θ)) ∝ π̄_m(θ | u) invariant, so the Gibbs sweep keeps
//!    π̄_m invariant (NumPyro's `HMCECS` with a `NUTS` inner kernel).
//!
//! **Exact vs perturbed.** Both Gibbs steps leave π̄_m invariant exactly; its θ-marginal is the
//! *perturbed* posterior π̄_m(θ) ∝ E_u[exp(ℓ̂ − σ̂²/2)] p(θ), not π(θ), because exp(ℓ̂ − σ̂²/2)
//! is only approximately unbiased for L(θ). Dang et al. (eq. 4.6, from Quiroz et al. 2019,
//! JASA) state ∫|π̄_m − π| = O(1/(n m²)) and the same order for posterior expectations when θ*
//! is the full-data posterior mode (O(1/√n) rates when θ* is the mode of a subset of size
//! O(√n)). When the control variates are exact (order 2 on a Gaussian model, so σ̂² = 0 and
//! ℓ̂ = ℓ) the chain is exactly π-invariant. For an exact (sign-corrected) alternative see
//! signed HMC-ECS ([`crate::ecs::signed`]).
//!
//! **Tuning (what this implementation does).**
//! * θ*: given in the config, or the full-data posterior mode found by Newton's method from the
//!   chain's initial position ([`crate::init::laplace_approximation`]).
//! * Mass matrix: M = −∇²log π(θ*) (the inverse Laplace covariance, paper §6.3), so the
//!   metric's inverse mass is the Laplace covariance; or a metric given in the config.
//! * m: given, or the smallest m with γ/m ≤ `target_variance` (default 1, Pitt et al. 2012),
//!   γ = n²σ²_d averaged over 4 draws from the Laplace approximation N(θ*, Σ) (at θ* itself
//!   every d_k is 0, so γ is measured where the chain will be), but at least
//!   `min_subsample_size` (default 100; see its docs); G is capped at m.
//! * Trajectory length εL fixed (default 1.2, the paper's value); ε by dual averaging to a
//!   target acceptance statistic of the θ-step (default 0.8) during warmup, then fixed at the
//!   averaged value. The initial ε is 0.5·d^{−1/4} unless given (dual averaging moves it).
//!   With the NUTS θ-step the trajectory length is not used (the tree chooses it) and dual
//!   averaging adapts ε to the tree's acceptance statistic, the mean of min{1, exp(H₀ − H(z))}
//!   over its leapfrog points (as Stan does).
//! * Re-centring (paper §6.3: "during a burn-in period of 1,000 iterations, update M every 200
//!   iterations based on the new θ*"): with the default [`RecenterSchedule`](crate::RecenterSchedule), at warmup
//!   iterations 200, 400, …, 1000 (only those followed by at least 100 more warmup
//!   iterations) θ* is set to the mean of the positions of the preceding window (the running
//!   posterior-mean estimate), the control variates are rebuilt there (one full pass), M is
//!   re-set from the Hessian at the new θ*, the cached potential is recomputed, and dual
//!   averaging restarts from the current ε. If the new Hessian is not negative definite the
//!   old metric is kept.
//!
//! **Cost** (per-datum evaluations, as `tallmc_estimators` counts them): per iteration
//! m terms + m gradients for the u-step (plus the control variates of the m/G refreshed
//! indices: 1 term, 1 gradient, 1 Hessian each at order 2 with `RankOne`) and m terms +
//! m gradients per leapfrog step, so about (L + 1)·m of each in total, against N·L for
//! full-data HMC (with the NUTS θ-step L is the tree's `n_leapfrog`, at most
//! 2^max_depth − 1). Setup: Newton (if θ* is not given), one full pass for the control variates,
//! a Hessian pass for M at order < 2, and 4 passes of N terms to tune m (if not given); each
//! re-centring costs one full pass. All of this is reported in the stats of the next step.
//!
//! **Divergences.** A non-finite estimate or gradient (the estimators' `NonFinite` errors) or
//! an energy error above `max_energy_error` (default 1000) rejects the trajectory and flags it
//! as divergent; the chain stays put. (With the NUTS θ-step the divergent subtree is discarded
//! and the draw comes from the part of the trajectory built before it, as in full-data NUTS.)

use rand::Rng;
use serde::Serialize;
use tallmc_core::error::check_positive;
use tallmc_core::subsample::BlockSubsample;
use tallmc_core::{Error, EvalCounts, LogPriorHessian, Result, TermHessians};
use tallmc_estimators::tuning::subsample_size_for_variance;
use tallmc_estimators::{
    CvOrder, DifferenceEstimate, DifferenceEstimator, DifferenceTerms, RankOne,
};

use super::gibbs::EcsStep;
use super::kernel::{EcsHead, EcsKernel, EcsReport, EcsSetup, EcsStart, EcsTuning};
use super::settings::EcsDynamics;
use super::start::{TunedStart, check_center, tuned_start};

/// Settings of [`HmcEcs`].
#[derive(Debug, Clone, PartialEq)]
pub struct HmcEcsConfig {
    /// Subsample size m ≥ 1; tuned at θ* for V[ℓ̂] ≈ `target_variance` if `None` (then at
    /// least `min_subsample_size` and at most N).
    pub subsample_size: Option<usize>,
    /// Number of blocks G of u, 1 ≤ G ≤ m (one block is refreshed per iteration; the paper uses
    /// G = 100, correlation ≈ 0.99). Capped at a tuned m.
    pub blocks: usize,
    /// Order of the Taylor control variates (default 2).
    pub cv_order: CvOrder,
    /// Expansion point θ* (finite, length d); the Newton posterior mode if `None`.
    pub center: Option<Vec<f64>>,
    /// Target V[ℓ̂_m] when tuning m (> 0; default 1).
    pub target_variance: f64,
    /// Lower bound on a tuned m (≥ 1; default 100). With very good control variates the
    /// variance rule can ask for m = 1 or 2, but the perturbed target is then improper far from
    /// θ* (σ̂² needs m ≥ 2 to be non-zero, and with few data its penalty does not dominate
    /// the tails of ℓ̂), so m is kept at least this large.
    pub min_subsample_size: usize,
    /// θ-step settings.
    pub dynamics: EcsDynamics,
}

impl Default for HmcEcsConfig {
    fn default() -> Self {
        Self {
            subsample_size: None,
            blocks: 100,
            cv_order: CvOrder::Two,
            center: None,
            target_variance: 1.0,
            min_subsample_size: 100,
            dynamics: EcsDynamics::default(),
        }
    }
}

impl HmcEcsConfig {
    /// Checks every setting's range (θ*'s length is checked when a chain is built).
    pub fn validate(&self) -> Result<()> {
        if self.blocks == 0 {
            return Err(Error::invalid("number of blocks G", 0, "an integer in [1, m]"));
        }
        if let Some(m) = self.subsample_size {
            if m == 0 {
                return Err(Error::invalid("subsample size m", 0, "at least 1"));
            }
            if self.blocks > m {
                return Err(Error::invalid(
                    "number of blocks G",
                    self.blocks,
                    format!("an integer in [1, m = {m}]"),
                ));
            }
        }
        check_positive("target_variance", self.target_variance)?;
        if self.min_subsample_size == 0 {
            return Err(Error::invalid("min_subsample_size", 0, "at least 1"));
        }
        check_center(self.center.as_deref())?;
        self.dynamics.validate()
    }
}

/// Stats of one HMC-ECS iteration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct HmcEcsStats {
    /// min{1, exp(−ΔH)} of the θ-step (0 when divergent); NUTS: the mean of
    /// min{1, exp(H₀ − H(z))} over the tree's leapfrog points.
    pub accept_stat: f64,
    /// Whether the θ-step accepted (NUTS: whether the draw is a new point of the tree).
    pub accepted: bool,
    /// Whether the θ-step diverged.
    pub divergent: bool,
    /// min{1, exp(Δ(ℓ̂ − σ̂²/2))} of the u-step.
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
    /// ℓ̂_m at the new state.
    pub log_likelihood: f64,
    /// σ̂²_m at the new state.
    #[serde(rename = "sigma2")]
    pub variance: f64,
    /// Per-datum evaluations as the estimator reports them (plus setup/re-centring passes).
    #[serde(rename = "n")]
    pub evals: EvalCounts,
    /// Subsample size m.
    pub batch_size: u64,
    /// The NUTS θ-step's tree reached `max_depth` doublings (not a CSV column: `treedepth__`
    /// equals the limit there).
    #[serde(skip)]
    pub hit_max_depth: bool,
}

step_stats_from_fields!(length_limited: HmcEcsStats);

/// The perturbed estimator's settings in a chain's tuning: subsample size m and blocks G.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PerturbedTuning {
    /// Subsample size m (given or tuned).
    pub subsample_size: usize,
    /// Number of blocks G of u (`None` for a subsample of your own).
    pub blocks: Option<usize>,
}

impl EcsHead for PerturbedTuning {
    fn lines(&self) -> Vec<String> {
        vec![format!("Subsample size m = {}", self.subsample_size)]
    }
}

impl EcsReport<DifferenceEstimate> for PerturbedTuning {
    type Stats = HmcEcsStats;

    fn stats(&self, step: &EcsStep, estimate: &DifferenceEstimate, _batch: usize) -> HmcEcsStats {
        HmcEcsStats {
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
            log_likelihood: estimate.log_likelihood,
            variance: estimate.variance,
            evals: step.evals,
            batch_size: self.subsample_size as u64,
            hit_max_depth: step.hit_max_depth,
        }
    }
}

/// The adapted tuning of a perturbed HMC-ECS chain.
pub type HmcEcsTuning = EcsTuning<PerturbedTuning>;

/// The setup of perturbed HMC-ECS: its settings and the difference engine `E`.
#[derive(Debug, Clone)]
pub struct PerturbedEcs<E> {
    config: HmcEcsConfig,
    engine: E,
}

impl<E> PerturbedEcs<E> {
    /// The settings.
    pub fn config(&self) -> &HmcEcsConfig {
        &self.config
    }
}

/// Perturbed HMC-ECS (see the module docs), generic over the difference engine `E`
/// ([`RankOne`] for `LinearPredictor` models via [`HmcEcs::new`],
/// `HessianProducts` for any model with Hessians via [`HmcEcs::with_engine`]): the HMC-ECS
/// kernel on the difference estimator.
pub type HmcEcs<E = RankOne> = EcsKernel<PerturbedEcs<E>>;

impl EcsKernel<PerturbedEcs<RankOne>> {
    /// Settings checked by [`HmcEcsConfig::validate`], with the rank-one engine (models
    /// implementing `LinearPredictor`: logistic regression, Gaussian mean).
    pub fn new(config: HmcEcsConfig) -> Result<Self> {
        let m = config.subsample_size.unwrap_or(1);
        Self::with_engine(config, RankOne::new(m))
    }
}

impl<E> EcsKernel<PerturbedEcs<E>> {
    /// Settings checked by [`HmcEcsConfig::validate`], with the difference engine `engine`
    /// (e.g. `HessianProducts::new(d, m)` for models without a linear predictor).
    pub fn with_engine(config: HmcEcsConfig, engine: E) -> Result<Self> {
        config.validate()?;
        Ok(Self::from_setup(PerturbedEcs { config, engine }))
    }
}

impl<M, E> EcsSetup<M> for PerturbedEcs<E>
where
    M: TermHessians + LogPriorHessian + ?Sized,
    E: DifferenceTerms<M> + Clone + Sync,
{
    type Estimator = DifferenceEstimator<E>;
    type Report = PerturbedTuning;
    const ESTIMATE: &'static str = "perturbed estimate";

    fn dynamics(&self) -> &EcsDynamics {
        &self.config.dynamics
    }

    fn start<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<EcsStart<DifferenceEstimator<E>, BlockSubsample, PerturbedTuning>> {
        let n = model.num_terms();
        let cfg = &self.config;
        let fixed = cfg.subsample_size.map(|m| (m, cfg.blocks));
        let tune = |_mean: f64, var: f64| -> Result<(usize, usize)> {
            let gamma = (n as f64) * (n as f64) * var;
            // At least the floor, at most N: a tuned m never exceeds the data (an explicit
            // m > N is an error of the settings).
            let m = subsample_size_for_variance(gamma, cfg.target_variance)?
                .max(cfg.min_subsample_size)
                .min(n);
            Ok((m, cfg.blocks.min(m)))
        };
        let TunedStart { cv, covariance, evals, engine, tuned: (m, blocks) } = tuned_start(
            model,
            cfg.center.as_deref(),
            position,
            &cfg.dynamics,
            cfg.cv_order,
            &self.engine,
            fixed,
            tune,
            rng,
        )?;
        let mut subsample = BlockSubsample::new(n, m, blocks)?;
        subsample.draw_all(rng);
        let estimator = DifferenceEstimator::new(model, cv, engine, m)?;
        let report = PerturbedTuning { subsample_size: m, blocks: Some(blocks) };
        Ok(EcsStart { estimator, subsample, covariance, evals, report })
    }
}
