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
//!    With [`ThetaIntegrator::Nuts`] the θ-step is instead one NUTS transition on the same Û
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
//!   iterations based on the new θ*"): with the default [`RecenterSchedule`], at warmup
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
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;
use tallmc_core::subsample::BlockSubsample;
use tallmc_core::{
    Error, EvalCounts, FullData, LogPriorHessian, Parallelism, Result, TermHessians,
};
use tallmc_estimators::tuning::{population_differences, subsample_size_for_variance};
use tallmc_estimators::{
    ControlVariate, CvOrder, DifferenceEstimate, DifferenceEstimator, DifferenceTerms, RankOne,
};
use tallmc_integrators::{DualAveragingConfig, Metric};

use tallmc_core::error::check_positive;

use super::gibbs::{EcsEstimator, EcsStep, GibbsSubsample};
use super::kernel::{EcsHead, EcsKernel, EcsReport, EcsSetup, EcsStart, EcsTuning};
use crate::hamiltonian::MAX_TREE_DEPTH;
use crate::init::{NewtonOptions, laplace_approximation};

/// Number of Laplace draws at which the subsample tuning measures the differences' variance.
pub(crate) const TUNING_DRAWS: usize = 4;

/// When θ* and M are re-set during warmup: at warmup iterations `interval`, 2·`interval`, …
/// up to `until`, each followed by at least `min_remaining` more warmup iterations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RecenterSchedule {
    /// Iterations between re-centrings (≥ 1).
    pub interval: usize,
    /// Last warmup iteration at which a re-centring may happen.
    pub until: usize,
    /// Warmup iterations that must remain after a re-centring (for dual averaging to settle).
    pub min_remaining: usize,
}

impl Default for RecenterSchedule {
    /// The paper's §6.3 schedule: every 200 iterations during the first 1,000.
    fn default() -> Self {
        Self { interval: 200, until: 1000, min_remaining: 100 }
    }
}

impl RecenterSchedule {
    /// Whether a re-centring happens after warmup iteration `done` (1-based count of completed
    /// warmup iterations) of `num_warmup`.
    pub fn due(&self, done: usize, num_warmup: usize) -> bool {
        done > 0
            && done.is_multiple_of(self.interval)
            && done <= self.until
            && done + self.min_remaining <= num_warmup
    }
}

/// How the θ-step of HMC-ECS moves θ with the subsample u fixed: the integrator of Hamilton's
/// equations for H(θ, p) = Û(θ) + ½pᵀM⁻¹p on the estimated potential
/// Û(θ) = −ℓ̃(θ; u) − log p(θ), and how it picks the next θ from the trajectory.
///
/// Both leave exp(−Û) invariant for the fixed u, hence the Gibbs sweep leaves the extended
/// target π̄(θ, u) invariant; they differ in how the trajectory length is chosen and in cost.
/// Every leapfrog step costs one estimate with gradient (m terms + m gradients for perturbed
/// HMC-ECS), counted in the stats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ThetaIntegrator {
    /// Fixed-length HMC (Dang et al. 2019, Algorithm 1): L = ⌈εL/ε⌉ leapfrog steps
    /// ([`EcsDynamics::trajectory_length`] εL, at most [`EcsDynamics::max_leapfrog_steps`]),
    /// the end point accepted with probability min{1, exp(H₀ − H₁)}. The default.
    #[default]
    Hmc,
    /// The No-U-Turn Sampler ([`crate::hamiltonian::nuts`]; Hoffman & Gelman 2014, Betancourt 2017 App. A):
    /// the trajectory doubles in a random direction until the generalized no-U-turn criterion
    /// p♯₋·ρ > 0, p♯₊·ρ > 0 fails (ρ the summed momenta, p♯ = M⁻¹p at the ends), a step
    /// diverges, or `max_depth` doublings are done (2^max_depth − 1 leapfrog steps at most);
    /// the draw is multinomial over the trajectory with weights exp(H₀ − H(z)). The
    /// trajectory length εL is not used. Stats report the tree depth, `n_leapfrog` and
    /// whether the depth limit was hit.
    Nuts {
        /// Largest number of doublings, 1 ≤ `max_depth` ≤ [`MAX_TREE_DEPTH`] (Stan's default
        /// is 10).
        max_depth: usize,
    },
}

impl ThetaIntegrator {
    /// Stan's default tree depth limit.
    pub const DEFAULT_MAX_DEPTH: usize = 10;

    /// NUTS with the default depth limit ([`Self::DEFAULT_MAX_DEPTH`] = 10).
    pub fn nuts() -> Self {
        Self::Nuts { max_depth: Self::DEFAULT_MAX_DEPTH }
    }

    /// The depth limit of NUTS (`None` for fixed-length HMC).
    pub fn max_depth(&self) -> Option<usize> {
        match *self {
            Self::Hmc => None,
            Self::Nuts { max_depth } => Some(max_depth),
        }
    }

    /// Checks 1 ≤ `max_depth` ≤ [`MAX_TREE_DEPTH`].
    pub fn validate(&self) -> Result<()> {
        match *self {
            Self::Nuts { max_depth } if !(1..=MAX_TREE_DEPTH).contains(&max_depth) => {
                Err(Error::invalid(
                    "max_depth",
                    max_depth,
                    format!("a whole number from 1 to {MAX_TREE_DEPTH}"),
                ))
            }
            _ => Ok(()),
        }
    }
}

/// Settings of the θ-step shared by perturbed and signed HMC-ECS.
#[derive(Debug, Clone, PartialEq)]
pub struct EcsDynamics {
    /// The θ-step's integrator: fixed-length HMC (default) or NUTS.
    pub integrator: ThetaIntegrator,
    /// Trajectory length εL (> 0; the paper uses 1.2). Not used by the NUTS θ-step.
    pub trajectory_length: f64,
    /// Initial step size ε (> 0); 0.5·d^{−1/4} if `None`.
    pub initial_step_size: Option<f64>,
    /// Tune ε by dual averaging during warmup.
    pub adapt_step_size: bool,
    /// Dual-averaging settings (target acceptance statistic δ, default 0.8).
    pub dual_averaging: DualAveragingConfig,
    /// Upper bound on leapfrog steps per fixed-length θ-step (NUTS: see `max_depth`).
    pub max_leapfrog_steps: usize,
    /// Energy error above which a trajectory is divergent.
    pub max_energy_error: f64,
    /// Re-centring of θ* and M during warmup (`None`: never).
    pub recenter: Option<RecenterSchedule>,
    /// Metric to use instead of the Laplace covariance at θ* (then never re-set).
    pub initial_metric: Option<Metric>,
    /// Newton settings for finding θ* when it is not given.
    pub newton: NewtonOptions,
    /// Threads for the full-data passes of the setup and of re-centring.
    pub parallelism: Parallelism,
    /// Build the control variates at θ* with [`ControlVariate::new_on_all_cores`] (chunked
    /// partial sums on the rayon pool) instead of [`ControlVariate::new`]'s single running sum.
    /// Same bits on any thread count either way, but not the same bits as each other: `false`
    /// (the default) keeps the reproduction suites' snapshots; the CLI sets `true`.
    pub parallel_control_variates: bool,
}

impl Default for EcsDynamics {
    fn default() -> Self {
        Self {
            integrator: ThetaIntegrator::Hmc,
            trajectory_length: 1.2,
            initial_step_size: None,
            adapt_step_size: true,
            dual_averaging: DualAveragingConfig::default(),
            max_leapfrog_steps: 1024,
            max_energy_error: 1000.0,
            recenter: Some(RecenterSchedule::default()),
            initial_metric: None,
            newton: NewtonOptions::default(),
            parallelism: Parallelism::Rayon,
            parallel_control_variates: false,
        }
    }
}

impl EcsDynamics {
    /// These settings with the θ-step integrator `integrator`.
    ///
    /// ```
    /// use tallmc_samplers::{EcsDynamics, HmcEcs, HmcEcsConfig, ThetaIntegrator};
    ///
    /// let dynamics = EcsDynamics::default().with_integrator(ThetaIntegrator::nuts());
    /// assert!(HmcEcs::new(HmcEcsConfig { dynamics, ..HmcEcsConfig::default() }).is_ok());
    ///
    /// let too_deep =
    ///     EcsDynamics::default().with_integrator(ThetaIntegrator::Nuts { max_depth: 31 });
    /// assert!(too_deep.validate().unwrap_err().to_string().contains("31"));
    /// ```
    pub fn with_integrator(self, integrator: ThetaIntegrator) -> Self {
        Self { integrator, ..self }
    }

    /// Checks every setting's range.
    pub fn validate(&self) -> Result<()> {
        self.integrator.validate()?;
        check_positive("trajectory_length", self.trajectory_length)?;
        if let Some(e) = self.initial_step_size {
            check_positive("initial_step_size", e)?;
        }
        self.dual_averaging.validate()?;
        if self.max_leapfrog_steps == 0 {
            return Err(Error::invalid("max_leapfrog_steps", 0, "at least 1"));
        }
        check_positive("max_energy_error", self.max_energy_error)?;
        if let Some(s) = self.recenter
            && s.interval == 0
        {
            return Err(Error::invalid("recenter interval", 0, "at least 1 iteration"));
        }
        Ok(())
    }
}

/// Validates an optional θ* (finite; its length is checked when a chain is built).
pub(crate) fn check_center(center: Option<&[f64]>) -> Result<()> {
    if let Some(c) = center
        && let Some((j, v)) = c.iter().enumerate().find(|(_, v)| !v.is_finite())
    {
        return Err(Error::invalid(
            "center θ*",
            format!("{v} (coordinate {j})"),
            "a finite vector of length d",
        ));
    }
    Ok(())
}

/// θ* (given or the Newton mode from `position`), with the evaluations made.
pub(crate) fn find_center<M>(
    model: &M, given: Option<&[f64]>, position: &[f64], dyn_: &EcsDynamics,
) -> Result<(Vec<f64>, EvalCounts)>
where
    M: TermHessians + LogPriorHessian + ?Sized,
{
    let d = model.dim();
    match given {
        Some(c) => {
            if c.len() != d {
                return Err(Error::dimension("center θ*", d, c.len()));
            }
            Ok((c.to_vec(), EvalCounts::ZERO))
        }
        None => {
            let options = NewtonOptions { parallelism: dyn_.parallelism, ..dyn_.newton };
            let lap = laplace_approximation(model, position, options)?;
            Ok((lap.mode, lap.evals))
        }
    }
}

/// θ* (given or the Newton mode from `position`), the control variates of order `order` there
/// and the Laplace covariance at θ*, with the evaluations made.
pub(crate) fn centered_control_variate<M>(
    model: &M, given: Option<&[f64]>, position: &[f64], dyn_: &EcsDynamics, order: CvOrder,
) -> Result<(Vec<f64>, ControlVariate, Vec<f64>, EvalCounts)>
where
    M: TermHessians + LogPriorHessian + ?Sized,
{
    let (center, mut evals) = find_center(model, given, position, dyn_)?;
    let (cv, c) = if dyn_.parallel_control_variates {
        ControlVariate::new_on_all_cores(model, &center, order)?
    } else {
        ControlVariate::new(model, &center, order)?
    };
    evals += c;
    let (covariance, c) = laplace_covariance(model, &cv, dyn_.parallelism)?;
    evals += c;
    Ok((center, cv, covariance, evals))
}

/// The Laplace covariance Σ = (−∇²log π(θ*))⁻¹ at the control variate's centre, reusing the
/// control variate's Hessian sum at order 2 (else one Hessian pass, counted).
pub(crate) fn laplace_covariance<M>(
    model: &M, cv: &ControlVariate, parallelism: Parallelism,
) -> Result<(Vec<f64>, EvalCounts)>
where
    M: TermHessians + LogPriorHessian + ?Sized,
{
    let d = model.dim();
    let center = cv.center();
    let mut counts = EvalCounts::ZERO;
    let mut h = if cv.order() == CvOrder::Two {
        cv.hessian_sum().to_vec()
    } else {
        let mut h = vec![0.0; d * d];
        FullData::for_model(model, parallelism).hessian(model, center, &mut h);
        counts += EvalCounts::hessians(model.num_terms());
        h
    };
    model.add_log_prior_hessian(center, &mut h);
    h.iter_mut().for_each(|x| *x = -*x);
    let chol = tallmc_core::linalg::Cholesky::new(&h, d, "negative Hessian of log π at θ*")?;
    Ok((chol.inverse(), counts))
}

/// `TUNING_DRAWS` draws from N(θ*, Σ), row-major.
pub(crate) fn laplace_draws<R: Rng + ?Sized>(
    center: &[f64], cov: &[f64], rng: &mut R,
) -> Result<Vec<f64>> {
    let d = center.len();
    let chol = tallmc_core::linalg::Cholesky::new(cov, d, "Laplace covariance")?;
    let mut z = vec![0.0; d];
    let mut x = vec![0.0; d];
    let mut out = Vec::with_capacity(TUNING_DRAWS * d);
    for _ in 0..TUNING_DRAWS {
        for zj in &mut z {
            *zj = StandardNormal.sample(rng);
        }
        chol.mul_lower(&z, &mut x);
        out.extend(center.iter().zip(&x).map(|(c, v)| c + v));
    }
    Ok(out)
}

/// Mean over Laplace draws of the population mean and variance of d_k (one pass each).
pub(crate) fn tuning_differences<M: ?Sized, E: DifferenceTerms<M>>(
    model: &M, cv: &ControlVariate, engine: &mut E, draws: &[f64],
) -> Result<(f64, f64, EvalCounts)> {
    let d = cv.dim();
    let (mut mean, mut var, mut counts) = (0.0, 0.0, EvalCounts::ZERO);
    for theta in draws.chunks_exact(d) {
        let (mu, v, c) = population_differences(model, cv, engine, theta)?;
        mean += mu;
        var += v;
        counts += c;
    }
    let k = (draws.len() / d) as f64;
    Ok((mean / k, var / k, counts))
}

/// What the difference-estimator ECS kernels compute before their first iteration.
pub(crate) struct TunedStart<E, T> {
    /// The control variates at θ*.
    pub cv: ControlVariate,
    /// The Laplace covariance Σ at θ*.
    pub covariance: Vec<f64>,
    /// Every evaluation made (centre, control variates, covariance, tuning).
    pub evals: EvalCounts,
    /// The difference engine, after the tuning passes.
    pub engine: E,
    /// The tuned (or given) setting.
    pub tuned: T,
}

/// The start-up shared by the difference-estimator ECS kernels: θ*, the control variates and Σ
/// from [`centered_control_variate`], then the kernel's setting: `fixed` if given, else
/// `tune(mean, var)` of the population mean and variance of d_k averaged over `TUNING_DRAWS`
/// draws from N(θ*, Σ) (the only use of `rng` and of `engine` here).
#[allow(clippy::too_many_arguments)]
pub(crate) fn tuned_start<M, E, T, R>(
    model: &M, given: Option<&[f64]>, position: &[f64], dyn_: &EcsDynamics, order: CvOrder,
    engine: &E, fixed: Option<T>, tune: impl FnOnce(f64, f64) -> Result<T>, rng: &mut R,
) -> Result<TunedStart<E, T>>
where
    M: TermHessians + LogPriorHessian + ?Sized,
    E: DifferenceTerms<M> + Clone,
    R: Rng + ?Sized,
{
    let (center, cv, covariance, mut evals) =
        centered_control_variate(model, given, position, dyn_, order)?;
    let mut engine = engine.clone();
    let tuned = match fixed {
        Some(t) => t,
        None => {
            let draws = laplace_draws(&center, &covariance, rng)?;
            let (mean, var, c) = tuning_differences(model, &cv, &mut engine, &draws)?;
            evals += c;
            tune(mean, var)?
        }
    };
    Ok(TunedStart { cv, covariance, evals, engine, tuned })
}

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

/// The setup of HMC-ECS on an estimator of your own: θ-step settings, the estimator `T` and
/// the subsample layout `S`.
#[derive(Debug, Clone)]
pub struct UserEcs<T, S> {
    dynamics: EcsDynamics,
    estimator: T,
    subsample: S,
}

impl<T, S> UserEcs<T, S> {
    /// The estimator given to [`HmcEcsWithEstimator::new`] (each chain runs a copy).
    pub fn estimator(&self) -> &T {
        &self.estimator
    }
}

/// Perturbed HMC-ECS with a log-likelihood estimator of your own: the kernel of [`HmcEcs`]
/// (same u-step, θ-step, step-size adaptation and re-centring of θ* during warmup; see the
/// module docs) on any [`EcsEstimator`] whose estimate is a [`DifferenceEstimate`] (ℓ̂ and
/// σ̂², target exp(ℓ̂ − σ̂²/2) p(θ) p(u)), with any [`GibbsSubsample`] `S`.
///
/// You build the estimator, with its [`ControlVariate`] around θ* (e.g. the posterior mode of
/// [`laplace_approximation`]), and a subsample `S` whose contents each chain redraws from its
/// RNG ([`GibbsSubsample::draw`]) when it is built ([`Kernel::build_chain`]). Every chain
/// runs its own copy of both (so one settings value starts several chains), sets the mass
/// matrix from the Laplace covariance at θ* (or `dynamics.initial_metric`) and evaluates the
/// estimator at the start. The evaluations you made building the estimator are yours to
/// count; everything from the chain's start on (the Hessian pass for M when the control
/// variate is below order 2, every estimate, every re-centring pass) is in the chain's stats.
///
/// The runnable example is `user_estimator` of the `tallmc` crate (a stratified difference
/// estimator written outside the library):
/// `cargo run --release -p tallmc --example user_estimator`.
///
/// [`Kernel::build_chain`]: tallmc_core::Kernel::build_chain
pub type HmcEcsWithEstimator<T, S> = EcsKernel<UserEcs<T, S>>;

impl<T, S> EcsKernel<UserEcs<T, S>> {
    /// Settings with validated θ-step settings, the estimator `estimator` and the subsample
    /// layout `subsample` (its contents are redrawn for every chain).
    pub fn new(dynamics: EcsDynamics, estimator: T, subsample: S) -> Result<Self> {
        dynamics.validate()?;
        Ok(Self::from_setup(UserEcs { dynamics, estimator, subsample }))
    }
}

impl<M, T, S> EcsSetup<M> for UserEcs<T, S>
where
    M: TermHessians + LogPriorHessian + ?Sized,
    T: EcsEstimator<M, Subsample = S, Estimate = DifferenceEstimate> + Clone + Sync,
    S: GibbsSubsample + Clone + Sync,
{
    type Estimator = T;
    type Report = PerturbedTuning;
    const ESTIMATE: &'static str = "user estimate";

    fn dynamics(&self) -> &EcsDynamics {
        &self.dynamics
    }

    fn start<R: Rng + ?Sized>(
        &self, model: &M, _position: &[f64], rng: &mut R,
    ) -> Result<EcsStart<T, S, PerturbedTuning>> {
        let d = model.dim();
        let estimator = self.estimator.clone();
        let cv = estimator.control_variate();
        if cv.dim() != d {
            return Err(Error::dimension("control variate of the estimator", d, cv.dim()));
        }
        let (covariance, evals) = laplace_covariance(model, cv, self.dynamics.parallelism)?;
        let mut subsample = self.subsample.clone();
        subsample.draw(rng);
        let report = PerturbedTuning { subsample_size: subsample.batch_size(), blocks: None };
        Ok(EcsStart { estimator, subsample, covariance, evals, report })
    }
}
