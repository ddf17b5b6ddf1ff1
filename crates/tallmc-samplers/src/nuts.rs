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

use rand::{Rng, RngExt};
use serde::Serialize;
use tallmc_core::linalg::dot;
use tallmc_core::{
    Chain, Error, EvalCounts, FullData, Kernel, LogPrior, Parallelism, Result, TermGradients,
};
use tallmc_integrators::{
    DualAveragingConfig, LeapfrogOutcome, Metric, MetricKind, PhasePoint, leapfrog,
};

use crate::HmcTuning;
use crate::hamiltonian::{Phase, Warmup, hamiltonian};

/// Largest `max_depth` accepted: 2³⁰ − 1 leapfrog steps per transition is already far beyond
/// any useful trajectory.
pub const MAX_TREE_DEPTH: usize = 30;

/// Settings of [`Nuts`].
#[derive(Debug, Clone, PartialEq)]
pub struct NutsConfig {
    /// Largest number of trajectory doublings per transition (Stan's `max_depth`, default 10).
    pub max_depth: usize,
    /// Initial step size; found by the heuristic if `None`.
    pub initial_step_size: Option<f64>,
    /// Tune the step size by dual averaging during warmup.
    pub adapt_step_size: bool,
    /// Dual-averaging settings (target acceptance statistic 0.8 by default).
    pub dual_averaging: DualAveragingConfig,
    /// Kind of metric to adapt.
    pub metric: MetricKind,
    /// Metric to start from (unit metric of kind `metric` if `None`).
    pub initial_metric: Option<Metric>,
    /// Adapt the metric during warmup.
    pub adapt_metric: bool,
    /// Energy error above which a trajectory is divergent.
    pub max_energy_error: f64,
    /// Threads for the full-data gradient.
    pub parallelism: Parallelism,
}

impl Default for NutsConfig {
    fn default() -> Self {
        Self {
            max_depth: 10,
            initial_step_size: None,
            adapt_step_size: true,
            dual_averaging: DualAveragingConfig::default(),
            metric: MetricKind::Diagonal,
            initial_metric: None,
            adapt_metric: true,
            max_energy_error: 1000.0,
            parallelism: Parallelism::Rayon,
        }
    }
}

impl NutsConfig {
    /// The default settings with the metric held at `metric` throughout (only the step size is
    /// adapted), e.g. the Laplace covariance from [`Laplace::dense_metric`](crate::Laplace::dense_metric).
    pub fn with_fixed_metric(metric: Metric) -> Self {
        Self {
            metric: metric.kind(),
            initial_metric: Some(metric),
            adapt_metric: false,
            ..Self::default()
        }
    }

    /// Checks every setting's range: 1 ≤ `max_depth` ≤ [`MAX_TREE_DEPTH`], a positive
    /// initial step size and energy-error threshold, valid dual-averaging settings.
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_TREE_DEPTH).contains(&self.max_depth) {
            return Err(Error::invalid(
                "max_depth",
                self.max_depth,
                format!("a whole number from 1 to {MAX_TREE_DEPTH}"),
            ));
        }
        if let Some(e) = self.initial_step_size {
            tallmc_core::error::check_positive("step_size", e)?;
        }
        self.dual_averaging.validate()?;
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
}

step_stats_from_fields!(NutsStats);

/// Full-data NUTS settings (see the module docs): validated when made, they build one
/// [`NutsChain`] per chain.
#[derive(Debug, Clone)]
pub struct Nuts {
    config: NutsConfig,
}

impl Nuts {
    /// Settings checked by [`NutsConfig::validate`].
    pub fn new(config: NutsConfig) -> Result<Self> {
        config.validate()?;
        Ok(Self { config })
    }

    /// The settings.
    pub fn config(&self) -> &NutsConfig {
        &self.config
    }
}

/// One end of a trajectory: its momentum p and velocity p♯ = Σp.
#[derive(Debug, Clone)]
struct End {
    p: Vec<f64>,
    sharp: Vec<f64>,
}

impl End {
    fn zeros(d: usize) -> Self {
        Self { p: vec![0.0; d], sharp: vec![0.0; d] }
    }

    fn copy_from(&mut self, other: &Self) {
        self.p.copy_from_slice(&other.p);
        self.sharp.copy_from_slice(&other.sharp);
    }
}

/// A (sub)trajectory in the order it was integrated: its multinomial sample, log of the summed
/// weights, summed momenta ρ, and the ends where it began (next to what came before) and where
/// it ended.
#[derive(Debug, Clone)]
struct Subtree {
    sample: PhasePoint,
    log_weight: f64,
    rho: Vec<f64>,
    begin: End,
    end: End,
}

impl Subtree {
    fn zeros(d: usize) -> Self {
        Self {
            sample: PhasePoint::zeros(d),
            log_weight: f64::NEG_INFINITY,
            rho: vec![0.0; d],
            begin: End::zeros(d),
            end: End::zeros(d),
        }
    }
}

/// Whether `p♯_a · ρ > 0` and `p♯_b · ρ > 0` for ρ = ρ₁ + ρ₂ given as two parts (the
/// generalized no-U-turn criterion holds: keep going).
fn no_u_turn(a: &[f64], b: &[f64], rho1: &[f64], rho2: &[f64]) -> bool {
    dot(a, rho1) + dot(a, rho2) > 0.0 && dot(b, rho1) + dot(b, rho2) > 0.0
}

/// The three checks of merging trajectory `first` (ρ₁, far end `first_far`, end next to the
/// seam `first_near`) with `second`, which continues it in the same direction: the merged
/// trajectory, `first` plus the first point of `second`, and the last point of `first` plus
/// `second`.
fn merge_keeps_going(
    rho1: &[f64], first_far: &End, first_near: &End, rho2: &[f64], second: (&End, &End),
) -> bool {
    let (second_near, second_far) = second;
    no_u_turn(&first_far.sharp, &second_far.sharp, rho1, rho2)
        && no_u_turn(&first_far.sharp, &second_near.sharp, rho1, &second_near.p)
        && no_u_turn(&first_near.sharp, &second_far.sharp, &first_near.p, rho2)
}

/// log(eᵃ + eᵇ) without overflow.
fn log_add_exp(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if hi == f64::NEG_INFINITY { hi } else { hi + (lo - hi).exp().ln_1p() }
}

/// What the leaves of one transition share while its subtrees are built.
struct Integration<'a, M: ?Sized> {
    model: &'a M,
    full: &'a mut FullData,
    metric: &'a Metric,
    velocity: &'a mut [f64],
    /// Signed step size: +ε forwards, −ε backwards in time.
    step_size: f64,
    h0: f64,
    max_energy_error: f64,
    n_leapfrog: usize,
    sum_accept: f64,
    divergent: bool,
}

impl<M: TermGradients + LogPrior + ?Sized> Integration<'_, M> {
    /// Integrates a subtree of 2^depth leapfrog steps from the frontier `z` (advanced in place)
    /// into `out`, using `scratch` (at least `depth` subtrees) for the later halves. Returns
    /// `false` if it diverged or U-turned (the caller discards it).
    fn build<R: Rng + ?Sized>(
        &mut self, z: &mut PhasePoint, depth: usize, out: &mut Subtree, scratch: &mut [Subtree],
        rng: &mut R,
    ) -> bool {
        if depth == 0 {
            return self.leaf(z, out);
        }
        let (later, deeper) = scratch.split_first_mut().expect("one scratch subtree per level");
        if !self.build(z, depth - 1, out, deeper, rng)
            || !self.build(z, depth - 1, later, deeper, rng)
        {
            return false;
        }
        let log_weight = log_add_exp(out.log_weight, later.log_weight);
        if later.log_weight > log_weight
            || rng.random::<f64>() < (later.log_weight - log_weight).exp()
        {
            out.sample.copy_from(&later.sample);
        }
        let keep_going = merge_keeps_going(
            &out.rho,
            &out.begin,
            &out.end,
            &later.rho,
            (&later.begin, &later.end),
        );
        for (r, l) in out.rho.iter_mut().zip(&later.rho) {
            *r += l;
        }
        out.end.copy_from(&later.end);
        out.log_weight = log_weight;
        keep_going
    }

    /// One leapfrog step from `z`: the one-point subtree there.
    fn leaf(&mut self, z: &mut PhasePoint, out: &mut Subtree) -> bool {
        let full = &mut *self.full;
        let model = self.model;
        let outcome = leapfrog(z, self.metric, self.step_size, 1, self.velocity, |t, g| {
            full.log_posterior_grad(model, t, g)
        });
        self.n_leapfrog += 1;
        let h = match outcome {
            LeapfrogOutcome::NonFinite { .. } => f64::INFINITY,
            LeapfrogOutcome::Completed { .. } => hamiltonian(z, self.metric, self.velocity),
        };
        let h = if h.is_nan() { f64::INFINITY } else { h };
        let log_weight = self.h0 - h;
        self.sum_accept += if log_weight > 0.0 { 1.0 } else { log_weight.exp() };
        if h - self.h0 > self.max_energy_error {
            self.divergent = true;
            return false;
        }
        out.sample.copy_from(z);
        out.log_weight = log_weight;
        out.rho.copy_from_slice(&z.momentum);
        out.begin.p.copy_from_slice(&z.momentum);
        self.metric.velocity(&z.momentum, &mut out.begin.sharp);
        out.end.copy_from(&out.begin);
        true
    }
}

/// A running NUTS chain: θ with log π(θ) and ∇log π(θ) cached, the metric, step size, warmup
/// adaptation and the trajectory's scratch (allocated once).
#[derive(Debug, Clone)]
pub struct NutsChain {
    config: NutsConfig,
    phase: Phase,
    step_size: f64,
    warmup: Warmup,
    unreported: EvalCounts,
    /// The trajectory's two ends, each a frontier to extend.
    left: PhasePoint,
    right: PhasePoint,
    /// The whole trajectory's ends (p, p♯) and summed momenta.
    left_end: End,
    right_end: End,
    rho: Vec<f64>,
    /// The newest subtree and, per level below it, the later half being built.
    subtree: Subtree,
    scratch: Vec<Subtree>,
}

impl NutsChain {
    /// The current step size (after warmup: the adapted one).
    pub fn step_size(&self) -> f64 {
        self.step_size
    }

    /// The current metric.
    pub fn metric(&self) -> &Metric {
        &self.phase.metric
    }

    fn find_step_size<M, R>(&mut self, model: &M, rng: &mut R) -> f64
    where
        M: TermGradients + LogPrior + ?Sized,
        R: Rng + ?Sized,
    {
        let (eps, evals) = self.phase.find_step_size(model, self.step_size, rng);
        self.unreported += evals;
        eps
    }
}

impl<M: TermGradients + LogPrior + ?Sized> Kernel<M> for Nuts {
    type Chain = NutsChain;

    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<NutsChain> {
        let c = &self.config;
        let phase =
            Phase::start(model, position, c.initial_metric.as_ref(), c.metric, c.parallelism)?;
        let d = model.dim();
        let mut chain = NutsChain {
            config: self.config.clone(),
            phase,
            step_size: c.initial_step_size.unwrap_or(1.0),
            warmup: Warmup::default(),
            unreported: EvalCounts::terms_and_gradients(model.num_terms()),
            left: PhasePoint::zeros(d),
            right: PhasePoint::zeros(d),
            left_end: End::zeros(d),
            right_end: End::zeros(d),
            rho: vec![0.0; d],
            subtree: Subtree::zeros(d),
            scratch: (0..c.max_depth).map(|_| Subtree::zeros(d)).collect(),
        };
        if c.initial_step_size.is_none() {
            chain.step_size = chain.find_step_size(model, rng);
        }
        Ok(chain)
    }
}

impl<M: TermGradients + LogPrior + ?Sized> Chain<M> for NutsChain {
    type Stats = NutsStats;
    type Tuning = HmcTuning;

    fn position(&self) -> &[f64] {
        &self.phase.point.position
    }

    fn log_density(&self) -> f64 {
        self.phase.point.log_density
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<NutsStats> {
        let n = model.num_terms();
        let h0 = self.phase.refresh_momentum(rng);
        let Self { phase, left, right, left_end, right_end, rho, subtree, scratch, .. } = self;
        let Phase { point, full, metric, velocity, proposal: sample, .. } = phase;
        left.copy_from(point);
        right.copy_from(point);
        sample.copy_from(point);
        left_end.p.copy_from_slice(&point.momentum);
        metric.velocity(&point.momentum, &mut left_end.sharp);
        right_end.copy_from(left_end);
        rho.copy_from_slice(&point.momentum);
        let mut log_weight = 0.0;
        let mut tree_depth = 0;
        let mut run = Integration {
            model,
            full,
            metric,
            velocity,
            step_size: self.step_size,
            h0,
            max_energy_error: self.config.max_energy_error,
            n_leapfrog: 0,
            sum_accept: 0.0,
            divergent: false,
        };
        while tree_depth < self.config.max_depth {
            let forward = rng.random::<f64>() > 0.5;
            let (frontier, near, far) = if forward {
                (&mut *right, &mut *right_end, &*left_end)
            } else {
                (&mut *left, &mut *left_end, &*right_end)
            };
            run.step_size = if forward { self.step_size } else { -self.step_size };
            if !run.build(frontier, tree_depth, subtree, scratch, rng) {
                break;
            }
            tree_depth += 1;
            if subtree.log_weight > log_weight
                || rng.random::<f64>() < (subtree.log_weight - log_weight).exp()
            {
                sample.copy_from(&subtree.sample);
            }
            log_weight = log_add_exp(log_weight, subtree.log_weight);
            let keep_going =
                merge_keeps_going(rho, far, near, &subtree.rho, (&subtree.begin, &subtree.end));
            for (r, s) in rho.iter_mut().zip(&subtree.rho) {
                *r += s;
            }
            near.copy_from(&subtree.end);
            if !keep_going {
                break;
            }
        }
        let (n_leapfrog, sum_accept, divergent) = (run.n_leapfrog, run.sum_accept, run.divergent);
        let energy = hamiltonian(sample, metric, velocity);
        point.copy_from(sample);
        let evals =
            EvalCounts::terms_and_gradients(n * n_leapfrog) + std::mem::take(&mut self.unreported);
        Ok(NutsStats {
            accept_stat: sum_accept / n_leapfrog.max(1) as f64,
            divergent,
            step_size: self.step_size,
            tree_depth,
            n_leapfrog,
            energy,
            evals,
            batch_size: n as u64,
        })
    }

    fn begin_warmup(&mut self, num_warmup: usize) {
        let c = &self.config;
        let d = self.phase.metric.dim();
        self.warmup.begin(
            num_warmup,
            self.step_size,
            c.adapt_step_size,
            c.dual_averaging,
            c.adapt_metric,
            c.metric,
            d,
        );
    }

    fn adapt<R: Rng + ?Sized>(&mut self, model: &M, stats: &NutsStats, rng: &mut R) -> Result<()> {
        let Phase { point, metric, .. } = &mut self.phase;
        if self.warmup.observe(stats.accept_stat, &point.position, &mut self.step_size, metric)? {
            self.step_size = self.find_step_size(model, rng);
            self.warmup.restart(self.step_size);
        }
        Ok(())
    }

    fn end_warmup(&mut self) {
        self.warmup.finish(&mut self.step_size);
    }

    fn tuning(&self) -> HmcTuning {
        HmcTuning { step_size: self.step_size, metric: self.phase.metric.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_add_exp_is_stable() {
        assert_eq!(log_add_exp(f64::NEG_INFINITY, f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert_eq!(log_add_exp(0.0, f64::NEG_INFINITY), 0.0);
        assert!((log_add_exp(1000.0, 1000.0) - (1000.0 + 2f64.ln())).abs() < 1e-12);
        assert!((log_add_exp(-3.0, 2.0) - ((-3f64).exp() + 2f64.exp()).ln()).abs() < 1e-12);
    }

    #[test]
    fn merge_detects_a_turn_at_the_seam() {
        let end = |p: [f64; 2]| End { p: p.to_vec(), sharp: p.to_vec() };
        // Two halves heading the same way: keep going.
        let (a_far, a_near, b_near, b_far) =
            (end([1.0, 0.0]), end([1.0, 0.1]), end([1.0, 0.2]), end([1.0, 0.3]));
        let rho_a = [2.0, 0.1];
        let rho_b = [2.0, 0.5];
        assert!(merge_keeps_going(&rho_a, &a_far, &a_near, &rho_b, (&b_near, &b_far)));
        // The second half reverses: the merged trajectory has turned back.
        let (b_near, b_far) = (end([-1.0, 0.0]), end([-3.0, 0.0]));
        let rho_b = [-4.0, 0.0];
        assert!(!merge_keeps_going(&rho_a, &a_far, &a_near, &rho_b, (&b_near, &b_far)));
    }

    #[test]
    fn settings_out_of_range_are_named() {
        for depth in [0, MAX_TREE_DEPTH + 1] {
            let err = Nuts::new(NutsConfig { max_depth: depth, ..NutsConfig::default() })
                .unwrap_err()
                .to_string();
            assert!(err.contains("max_depth") && err.contains(&depth.to_string()), "{err}");
        }
        let err = Nuts::new(NutsConfig { initial_step_size: Some(-0.1), ..NutsConfig::default() })
            .unwrap_err()
            .to_string();
        assert!(err.contains("step_size") && err.contains("-0.1"), "{err}");
    }
}
