//! Hamiltonian Monte Carlo on the full data, with dual-averaging step size and windowed
//! mass-matrix adaptation.
//!
//! Each step draws p ~ N(0, M), integrates Hamilton's equations for H(θ, p) = −log π(θ) +
//! ½ pᵀΣp with L leapfrog steps of size ε, and accepts the end point with probability
//! min{1, exp(−ΔH)}, ΔH = H(θ′, p′) − H(θ, p). The chain is exactly π-invariant.
//!
//! * **Trajectory length.** The integration time T = λ·U(1 − j, 1 + j) is jittered around λ and
//!   L = ⌈T/ε⌉ (at most `max_leapfrog_steps`). The default λ = π/2 is a quarter period of the
//!   dynamics of a standard normal, which is what the target looks like in the coordinates of a
//!   well-adapted metric: θ_{t+1} = θ_t cos T + p sin T there, so draws are nearly
//!   uncorrelated; the jitter (default j = 0.2) avoids resonances when the metric is imperfect.
//! * **Step size.** Found by Hoffman & Gelman's heuristic (double or halve ε until the one-step
//!   acceptance crosses 0.8), then tuned during warmup by dual averaging towards the target
//!   acceptance statistic (default 0.8, REFERENCES §3) and fixed at the averaged value.
//! * **Metric.** Identity, diagonal or dense Σ, estimated in Stan's doubling windows
//!   ([`WarmupSchedule`](tallmc_integrators::WarmupSchedule)); after each window the step size is re-initialized and dual averaging
//!   restarts.
//! * **Divergences.** A trajectory whose log density or gradient becomes non-finite, or whose
//!   energy error exceeds `max_energy_error` (default 1000), is rejected and reported as
//!   divergent — never a panic.
//!
//! Cost: N term and N gradient evaluations per leapfrog step (the full-data gradient, computed
//! on all cores with the deterministic reduction of [`FullData`](tallmc_core::FullData)), plus those of the step-size
//! heuristic during warmup (reported in the next step's counts).
//!
//! Reference: Neal (2011), *MCMC using Hamiltonian dynamics*; Hoffman & Gelman (2014), JMLR 15,
//! Alg. 4–5; Stan Reference Manual, "HMC algorithm parameters".

use rand::{Rng, RngExt};
use serde::Serialize;
use tallmc_core::{Error, EvalCounts, LogPrior, Parallelism, Result, TermGradients};
use tallmc_integrators::Metric;

use super::kernel::{Hamiltonian, HamiltonianChain, HamiltonianSettings, Phase};
use super::settings::HamiltonianWarmup;

/// Settings of [`Hmc`].
#[derive(Debug, Clone, PartialEq)]
pub struct HmcConfig {
    /// Integration time λ (in the metric's units).
    pub trajectory_length: f64,
    /// Relative jitter j ∈ [0, 1) of the integration time: T = λ·U(1 − j, 1 + j).
    pub trajectory_jitter: f64,
    /// Upper bound on leapfrog steps per iteration.
    pub max_leapfrog_steps: usize,
    /// Warmup: step size (initial, dual averaging) and metric (adapted or fixed).
    pub warmup: HamiltonianWarmup,
    /// Energy error above which a trajectory is divergent.
    pub max_energy_error: f64,
    /// Threads for the full-data gradient.
    pub parallelism: Parallelism,
}

impl Default for HmcConfig {
    fn default() -> Self {
        Self {
            trajectory_length: std::f64::consts::FRAC_PI_2,
            trajectory_jitter: 0.2,
            max_leapfrog_steps: 1024,
            warmup: HamiltonianWarmup::default(),
            max_energy_error: 1000.0,
            parallelism: Parallelism::Rayon,
        }
    }
}

impl HmcConfig {
    /// The default settings with the metric held at `metric` throughout (only the step size is
    /// adapted), e.g. the Laplace covariance from [`Laplace::dense_metric`](crate::Laplace::dense_metric).
    pub fn with_fixed_metric(metric: Metric) -> Self {
        Self { warmup: HamiltonianWarmup::fixed_metric(metric), ..Self::default() }
    }

    /// Checks every setting's range.
    pub fn validate(&self) -> Result<()> {
        tallmc_core::error::check_positive("trajectory_length", self.trajectory_length)?;
        if !(0.0..1.0).contains(&self.trajectory_jitter) {
            return Err(Error::invalid(
                "trajectory_jitter",
                self.trajectory_jitter,
                "a number in [0, 1)",
            ));
        }
        if self.max_leapfrog_steps == 0 {
            return Err(Error::invalid("max_leapfrog_steps", 0, "at least 1"));
        }
        self.warmup.validate()?;
        tallmc_core::error::check_positive("max_energy_error", self.max_energy_error)
    }
}

/// Stats of one HMC step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct HmcStats {
    /// min{1, exp(−ΔH)} (0 for a divergent trajectory).
    pub accept_stat: f64,
    /// Whether the end point was accepted.
    pub accepted: bool,
    /// Whether the trajectory diverged.
    pub divergent: bool,
    /// Step size ε used.
    #[serde(rename = "stepsize")]
    pub step_size: f64,
    /// Leapfrog steps taken.
    pub n_leapfrog: usize,
    /// Hamiltonian at the chain's new state.
    pub energy: f64,
    /// ΔH of the proposal (NaN or +∞ when divergent).
    pub energy_error: f64,
    /// Per-datum evaluations.
    #[serde(rename = "n")]
    pub evals: EvalCounts,
    /// Data points looked at per gradient (N).
    pub batch_size: u64,
}

step_stats_from_fields!(HmcStats);

/// Full-data HMC settings (see the module docs): validated when made, they build one
/// [`HmcChain`] per chain.
pub type Hmc = Hamiltonian<HmcConfig>;

/// A running HMC chain: θ with log π(θ) and ∇log π(θ) cached, the metric, step size,
/// warmup adaptation and scratch.
pub type HmcChain = HamiltonianChain<HmcConfig>;

impl HamiltonianSettings for HmcConfig {
    /// HMC keeps no scratch beyond the chain's phase point.
    type Trajectory = ();
    type Stats = HmcStats;

    fn validate(&self) -> Result<()> {
        HmcConfig::validate(self)
    }

    fn warmup(&self) -> &HamiltonianWarmup {
        &self.warmup
    }

    fn parallelism(&self) -> Parallelism {
        self.parallelism
    }

    fn new_trajectory(&self, _dim: usize) {}

    /// L = ⌈T/ε⌉ leapfrog steps (at most `max_leapfrog_steps`) for the jittered integration
    /// time T, then the Metropolis correction of the end point.
    fn transition<M, R>(
        &self, _trajectory: &mut (), phase: &mut Phase, h0: f64, eps: f64, model: &M, rng: &mut R,
        earlier: EvalCounts,
    ) -> HmcStats
    where
        M: TermGradients + LogPrior + ?Sized,
        R: Rng + ?Sized,
    {
        let n = model.num_terms();
        let Phase { point, full, space } = phase;
        let j = self.trajectory_jitter;
        let time = self.trajectory_length * (1.0 + j * (2.0 * rng.random::<f64>() - 1.0));
        let steps = ((time / eps).ceil() as usize).clamp(1, self.max_leapfrog_steps);
        let t = space.fixed_length(point, h0, eps, steps, self.max_energy_error, rng, |t, g| {
            full.log_posterior_grad(model, t, g)
        });
        HmcStats {
            accept_stat: t.accept_stat,
            accepted: t.accepted,
            divergent: t.divergent,
            step_size: eps,
            n_leapfrog: t.n_leapfrog,
            energy: t.energy,
            energy_error: t.energy_error,
            evals: EvalCounts::terms_and_gradients(n * t.n_leapfrog) + earlier,
            batch_size: n as u64,
        }
    }
}
