//! The θ-step settings every HMC-ECS kernel shares ([`EcsDynamics`]): the integrator of the
//! θ-step ([`ThetaIntegrator`]: fixed-length HMC or NUTS), its step size and trajectory
//! length, and when θ* and the mass matrix are re-set during warmup ([`RecenterSchedule`]).

use serde::Serialize;
use tallmc_core::error::check_positive;
use tallmc_core::{Error, Parallelism, Result};
use tallmc_integrators::{DualAveragingConfig, Metric};

use crate::hamiltonian::MAX_TREE_DEPTH;
use crate::init::NewtonOptions;

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
    /// Build the control variates at θ* with [`ControlVariate::new_on_all_cores`](tallmc_estimators::ControlVariate::new_on_all_cores) (chunked
    /// partial sums on the rayon pool) instead of [`ControlVariate::new`](tallmc_estimators::ControlVariate::new)'s single running sum.
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
