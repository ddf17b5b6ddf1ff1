//! The No-U-Turn Sampler on the full data: multinomial sampling over a doubling trajectory with
//! the generalized no-U-turn criterion, as Stan and nuts-rs do.
//!
//! Each transition draws p ~ N(0, M) and grows a leapfrog trajectory of step size ε by doubling:
//! at depth k it picks a direction v ∈ {−1, +1} uniformly and integrates a new subtree of 2ᵏ
//! steps from the end in that direction. Every point z of the trajectory carries the weight
//! w(z) = exp(H₀ − H(z)).
//!
//! * **Sampling.** Within a subtree the two halves are merged by *uniform* progressive
//!   sampling (the later half's sample replaces the earlier one's with probability
//!   W_later / (W_earlier + W_later)); a new subtree replaces the transition's sample with the
//!   *biased* probability min{1, W_new / W_old} (Betancourt 2017, §A.3.2). The draw is
//!   distributed as the multinomial over the trajectory in proportion to w, which leaves π
//!   invariant.
//! * **Stopping.** For a (sub)trajectory with summed momenta ρ = Σ p and end points whose
//!   velocities are p♯ = Σp (Σ = M⁻¹), the generalized criterion continues while
//!   p♯₋ · ρ > 0 and p♯₊ · ρ > 0. It is checked for every subtree and the whole trajectory, and,
//!   as in Stan since 2.26, also across the seam of each merge: (first part + first point of
//!   the second part) and (last point of the first part + second part), which catches U-turns
//!   that fall between the two halves. A subtree that U-turns (or diverges) is discarded;
//!   the trajectory also stops at `max_depth` doublings (2^max_depth − 1 steps at most).
//! * **Divergences.** A leapfrog step whose log density or gradient is non-finite, or whose
//!   energy error H − H₀ exceeds `max_energy_error`, ends the trajectory; the transition is
//!   reported divergent and its draw comes from the part built before.
//! * **Warmup.** Exactly [`Hmc`](crate::Hmc)'s: Hoffman & Gelman's step-size heuristic, dual
//!   averaging towards the target of the acceptance statistic (the mean of min{1, w(z)} over
//!   all leapfrog points of the transition; default 0.8), and Stan's windowed estimate of a
//!   diagonal or dense metric.
//!
//! Cost: N term and N gradient evaluations per leapfrog step, `n_leapfrog` steps per transition
//! (at most 2^max_depth − 1), plus the step-size heuristic's during warmup.
//!
//! References: Hoffman & Gelman (2014), JMLR 15, 1593–1623; Betancourt (2017), *A conceptual
//! introduction to Hamiltonian Monte Carlo*, arXiv:1701.02434, Appendix A; Stan Reference
//! Manual, "Hamiltonian Monte Carlo".

use rand::Rng;
use serde::Serialize;
use tallmc_core::{Error, EvalCounts, LogPrior, Parallelism, Result, TermGradients};
use tallmc_integrators::Metric;

use super::kernel::{Hamiltonian, HamiltonianChain, HamiltonianSettings, Phase};
use super::settings::HamiltonianWarmup;
use super::tree::Tree;

/// Largest `max_depth` accepted: 2³⁰ − 1 leapfrog steps per transition is already far beyond
/// any useful trajectory.
pub const MAX_TREE_DEPTH: usize = 30;

/// Settings of [`Nuts`].
#[derive(Debug, Clone, PartialEq)]
pub struct NutsConfig {
    /// Largest number of trajectory doublings per transition (Stan's `max_depth`, default 10).
    pub max_depth: usize,
    /// Warmup: step size (initial, dual averaging) and metric (adapted or fixed), as for
    /// [`HmcConfig`](crate::HmcConfig).
    pub warmup: HamiltonianWarmup,
    /// Energy error above which a trajectory is divergent.
    pub max_energy_error: f64,
    /// Threads for the full-data gradient.
    pub parallelism: Parallelism,
}

impl Default for NutsConfig {
    fn default() -> Self {
        Self {
            max_depth: 10,
            warmup: HamiltonianWarmup::default(),
            max_energy_error: 1000.0,
            parallelism: Parallelism::Rayon,
        }
    }
}

impl NutsConfig {
    /// The default settings with the metric held at `metric` throughout, as
    /// [`HmcConfig::with_fixed_metric`](crate::HmcConfig::with_fixed_metric).
    pub fn with_fixed_metric(metric: Metric) -> Self {
        Self { warmup: HamiltonianWarmup::fixed_metric(metric), ..Self::default() }
    }

    /// Checks every setting's range: 1 ≤ `max_depth` ≤ [`MAX_TREE_DEPTH`], the warmup's
    /// ([`HamiltonianWarmup::validate`]) and a positive energy-error threshold.
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_TREE_DEPTH).contains(&self.max_depth) {
            return Err(Error::invalid(
                "max_depth",
                self.max_depth,
                format!("a whole number from 1 to {MAX_TREE_DEPTH}"),
            ));
        }
        self.warmup.validate()?;
        tallmc_core::error::check_positive("max_energy_error", self.max_energy_error)
    }
}

/// Stats of one NUTS transition (CmdStan's columns).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct NutsStats {
    /// Mean of min{1, exp(H₀ − H(z))} over the transition's leapfrog points (what dual averaging
    /// adapts to).
    pub accept_stat: f64,
    /// Whether the trajectory diverged.
    pub divergent: bool,
    /// Step size ε used.
    #[serde(rename = "stepsize")]
    pub step_size: f64,
    /// Doublings kept (the trajectory has 2^tree_depth points unless it stopped in a subtree).
    #[serde(rename = "treedepth")]
    pub tree_depth: usize,
    /// Leapfrog steps taken, those of a discarded last subtree included.
    pub n_leapfrog: usize,
    /// Hamiltonian at the draw.
    pub energy: f64,
    /// Per-datum evaluations.
    #[serde(rename = "n")]
    pub evals: EvalCounts,
    /// Data points looked at per gradient (N).
    pub batch_size: u64,
    /// The tree reached `max_depth` doublings (not a CSV column: `treedepth__` equals the
    /// limit there).
    #[serde(skip)]
    pub hit_max_depth: bool,
}

step_stats_from_fields!(length_limited: NutsStats);

/// Full-data NUTS settings (see the module docs): validated when made, they build one
/// [`NutsChain`] per chain.
pub type Nuts = Hamiltonian<NutsConfig>;

/// A running NUTS chain: θ with log π(θ) and ∇log π(θ) cached, the metric, step size, warmup
/// adaptation and the trajectory's scratch (allocated once).
pub type NutsChain = HamiltonianChain<NutsConfig>;

impl HamiltonianSettings for NutsConfig {
    type Trajectory = Tree;
    type Stats = NutsStats;

    fn validate(&self) -> Result<()> {
        NutsConfig::validate(self)
    }

    fn warmup(&self) -> &HamiltonianWarmup {
        &self.warmup
    }

    fn parallelism(&self) -> Parallelism {
        self.parallelism
    }

    fn new_trajectory(&self, dim: usize) -> Tree {
        Tree::new(dim, self.max_depth)
    }

    fn transition<M, R>(
        &self, tree: &mut Tree, phase: &mut Phase, h0: f64, step_size: f64, model: &M, rng: &mut R,
        earlier: EvalCounts,
    ) -> NutsStats
    where
        M: TermGradients + LogPrior + ?Sized,
        R: Rng + ?Sized,
    {
        let n = model.num_terms();
        let Phase { point, full, space } = phase;
        let out = tree.transition(
            point,
            h0,
            &space.metric,
            &mut space.velocity,
            step_size,
            self.max_energy_error,
            rng,
            |t, g| full.log_posterior_grad(model, t, g),
        );
        NutsStats {
            accept_stat: out.accept_stat,
            divergent: out.divergent,
            step_size,
            tree_depth: out.tree_depth,
            n_leapfrog: out.n_leapfrog,
            energy: out.energy,
            evals: EvalCounts::terms_and_gradients(n * out.n_leapfrog) + earlier,
            batch_size: n as u64,
            hit_max_depth: out.hit_max_depth,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_out_of_range_are_named() {
        for depth in [0, MAX_TREE_DEPTH + 1] {
            let err = Nuts::new(NutsConfig { max_depth: depth, ..NutsConfig::default() })
                .unwrap_err()
                .to_string();
            assert!(err.contains("max_depth") && err.contains(&depth.to_string()), "{err}");
        }
        let mut config = NutsConfig::default();
        config.warmup.initial_step_size = Some(-0.1);
        let err = Nuts::new(config).unwrap_err().to_string();
        assert!(err.contains("step_size") && err.contains("-0.1"), "{err}");
    }
}
