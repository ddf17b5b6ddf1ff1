//! §4.2.1, Fig. 6 of BDH 2014: logistic regression on the 2-D two-class data — how fast the
//! confidence sampler reaches the posterior from far away, and how much data it uses on the way
//! and once there.
//!
//! **Problem.** [`synthetic::two_class_2d`]: y ~ Bernoulli(½), x ~ N(((2y − 1), 0), I₂), two
//! covariates, no intercept; n = 10⁵ (quick) or 10⁷ (full, the paper's); prior N(0, 10² I).
//!
//! **Truth.** The Laplace approximation at this n (mode θ̂ and covariance Σ_L from Newton's
//! method on the full data). For a 2-parameter logistic regression with n ≥ 10⁵ the posterior
//! is Gaussian up to O(n^{−1/2}) posterior sds (≈ 0.003 at n = 10⁵), far below the 3-sd
//! threshold below and the Monte Carlo error of the equilibrium means, which the report
//! checks against it.
//!
//! **"Reaching the posterior".** The error of a state is its Mahalanobis distance from the mode,
//! ‖θ − θ̂‖_{Σ_L⁻¹}, in posterior sds. A chain has reached the posterior at the first iteration
//! with error ≤ 3: for a 2-d Gaussian, P(error > 3) = e^{−9/2} ≈ 1.1 %, so a stationary chain
//! is inside almost always, and a chain outside is still in its transient. The cost of the
//! transient is the number of per-datum evaluations made until then.
//!
//! **Runs.** 4 starting points θ̂ + 10·(cos φ_k, sin φ_k), φ_k = π/4 + kπ/2: at the distance of
//! the prior sd from the mode, where a random draw from the prior typically lies (the paper
//! draws "four random starting points"); about 10³ posterior sds at n = 10⁵, 10⁴ at n = 10⁷.
//! The same starts for both samplers. Both use the same random walk:
//! the Laplace covariance scaled by 2.38/√2 (the optimal scaling for a Gaussian target), fixed —
//! no adaptation, so that the transient is the kernel's and not an adaptation schedule's (the
//! paper uses adaptive Metropolis). Exact MH is the full-data random-walk Metropolis (N
//! evaluations per iteration); the confidence sampler is minibatch MH with the Fig. 4 test
//! (empirical Bernstein–Serfling, δ = 0.01, p = 2, γ = 2, first batch 100) and the logistic
//! range bound 2‖θ′ − θ‖ max_i ‖x_i‖ (BDH §4.2). Each chain runs until it has made a fixed
//! number of iterations after reaching the posterior (or a cap).

use serde::Serialize;
use serde_json::{Value, json};
use tallmc_bounds::{BoundKind, ConfidenceConfig, ConfidenceTest};
use tallmc_core::linalg::Cholesky;
use tallmc_core::rng::chain_rng;
use tallmc_core::{Chain, Kernel, StepStats, Terms};
use tallmc_models::{DesignOptions, LogisticRegression, synthetic};
use tallmc_samplers::{
    MinibatchMh, NewtonOptions, RandomWalkConfig, RandomWalkMetropolis, RandomWalkProposal,
    RandomWalkProposalConfig, laplace_approximation,
};

use super::{DATA_SEED, bounds_error};
use crate::chains::log_thin_indices;
use crate::figure::{Axes, Figure, Legend, Line, Marker, PALETTE, RefLine};
use crate::part::{Claim, Part};
use crate::report::{Report, fmt_n, fmt_sig};
use crate::{Context, Error, Result, Task};

/// Prior sd of every coefficient.
pub const PRIOR_SD: f64 = 10.0;
/// Distance of the starting points from the mode (in θ units): the prior sd.
pub const START_RADIUS: f64 = PRIOR_SD;
/// A chain has reached the posterior when its Mahalanobis distance from the mode is ≤ this.
pub const HIT_SDS: f64 = 3.0;
/// Chains (starting points) per sampler.
pub const CHAINS: usize = 4;
/// The confidence test's δ.
pub const DELTA: f64 = 0.01;
/// Iterations exact MH makes after reaching the posterior (its data fraction is 1 by
/// construction; these only give its equilibrium acceptance and mean).
pub const MH_AFTER_HIT: usize = 100;
/// Width of the windows over which the figure averages the data fraction.
const WINDOW: usize = 25;
/// Points kept per error trace in the figure.
const TRACE_POINTS: usize = 600;
/// Distance from the mode (posterior sds) from which a step counts as far in the transient.
pub const FAR_SDS: f64 = 100.0;
/// The paper's "up to 5 times faster", read as: the best start's ratio is at least this.
pub const MIN_BEST_SPEEDUP: f64 = 4.0;
/// The paper's "around 70 %" of the data at equilibrium, as a range.
pub const EQUILIBRIUM_FRACTION: (f64, f64) = (0.6, 0.8);
/// Largest distance (posterior sds) of a chain's equilibrium mean from the mode.
pub const MAX_EQUILIBRIUM_ERROR_SDS: f64 = 2.0;
/// Edges of the distance bins (Mahalanobis distance of the current state from the mode) over
/// which the data fraction is averaged; the last bin is open.
pub const DISTANCE_EDGES: [f64; 9] = [0.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10000.0];

/// The two samplers compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sampler {
    /// Full-data random-walk Metropolis.
    ExactMh,
    /// Minibatch MH with the confidence test.
    Confidence,
}

impl Sampler {
    /// Both.
    pub const ALL: [Self; 2] = [Self::ExactMh, Self::Confidence];

    /// Key in JSON summaries.
    pub fn key(self) -> &'static str {
        match self {
            Self::ExactMh => "exact_mh",
            Self::Confidence => "confidence",
        }
    }

    /// Label for tables and figures.
    pub fn label(self) -> &'static str {
        match self {
            Self::ExactMh => "exact MH",
            Self::Confidence => "confidence sampler",
        }
    }
}

/// One chain from one starting point.
#[derive(Debug, Clone)]
pub struct TransientChain {
    /// Which sampler.
    pub sampler: Sampler,
    /// Index of the starting point.
    pub start_index: usize,
    /// The starting point.
    pub start: Vec<f64>,
    /// Iterations made.
    pub iterations: usize,
    /// First iteration (1-based) with error ≤ [`HIT_SDS`], if any.
    pub hit_iteration: Option<usize>,
    /// Per-datum evaluations made up to and including that iteration.
    pub evals_to_hit: Option<u64>,
    /// Mean fraction of the data used per iteration up to the hit (all iterations without one).
    pub transient_fraction: f64,
    /// Mean fraction after the hit (NaN without one).
    pub equilibrium_fraction: f64,
    /// Acceptance rate after the hit.
    pub equilibrium_accept: f64,
    /// Mean of θ after the hit, minus the mode, in posterior sds (per coordinate).
    pub equilibrium_mean_error_sds: Vec<f64>,
    /// Per-datum evaluations in all.
    pub total_evals: u64,
    /// (cumulative evaluations, error) at log-spaced iterations, for the figure.
    pub trace: Vec<(f64, f64)>,
    /// Data fraction averaged over windows of 25 iterations.
    pub windowed_fraction: Vec<f64>,
    /// Per distance bin ([`DISTANCE_EDGES`]): (sum of data fractions, iterations) of the steps
    /// taken from a state at that distance.
    pub by_distance: Vec<(f64, usize)>,
    /// Wall seconds.
    pub seconds: f64,
}

/// Fig. 6.
#[derive(Debug, Clone)]
pub struct Logistic {
    /// Rows.
    pub n: usize,
    /// Laplace mode.
    pub mode: Vec<f64>,
    /// Laplace posterior sds.
    pub sds: Vec<f64>,
    /// max_i ‖x_i‖.
    pub max_row_norm: f64,
    /// Random-walk scale (the proposal is N(θ, scale² Σ_L)).
    pub scale: f64,
    /// Iterations each confidence-sampler chain makes after reaching the posterior (exact MH:
    /// [`MH_AFTER_HIT`]).
    pub equilibrium_iterations: usize,
    /// Cap on the iterations of a chain.
    pub max_iterations: usize,
    /// The chains, exact MH first, in starting-point order.
    pub chains: Vec<TransientChain>,
}

/// What every chain of the part shares: the data size, the posterior's mode, sds and Cholesky
/// factor (to measure the error), the seed and the iteration budgets.
struct Target<'a> {
    n: usize,
    mode: &'a [f64],
    sds: &'a [f64],
    factor: &'a Cholesky,
    seed: u64,
    equilibrium_iterations: usize,
    max_iterations: usize,
}

impl Target<'_> {
    /// Iterations a chain of `sampler` makes after reaching the posterior.
    fn after_hit(&self, sampler: Sampler) -> usize {
        match sampler {
            Sampler::ExactMh => MH_AFTER_HIT,
            Sampler::Confidence => self.equilibrium_iterations,
        }
    }

    /// Mahalanobis distance of θ from the mode.
    fn error(&self, theta: &[f64], scratch: &mut [f64]) -> f64 {
        for ((s, t), m) in scratch.iter_mut().zip(theta).zip(self.mode) {
            *s = t - m;
        }
        self.factor.solve_lower_in_place(scratch);
        scratch.iter().map(|v| v * v).sum::<f64>().sqrt()
    }
}

/// Runs one chain step by step until [`Target::after_hit`] iterations after the hit (or the cap).
fn run_chain<M, K>(
    model: &M, kernel: &K, sampler: Sampler, start_index: usize, start: &[f64],
    target: &Target<'_>, task: &dyn Task,
) -> Result<TransientChain>
where
    M: ?Sized,
    K: Kernel<M>,
{
    let clock = std::time::Instant::now();
    // Chain k of sampler s: stream (s, k) so the two samplers' streams differ.
    let stream = start_index + CHAINS * usize::from(sampler == Sampler::Confidence);
    let mut rng = chain_rng(target.seed, stream);
    let after_hit = target.after_hit(sampler);
    let mut chain = kernel.build_chain(model, start, &mut rng)?;
    chain.begin_warmup(0);
    chain.end_warmup();
    let d = start.len();
    let mut scratch = vec![0.0; d];
    let mut evals = 0u64;
    let mut hit: Option<(usize, u64)> = None;
    let (mut frac_before, mut frac_after, mut acc_after) = (0.0, 0.0, 0.0);
    let mut sum_after = vec![0.0; d];
    let mut errors = Vec::new();
    let mut cumulative = Vec::new();
    let mut fractions = Vec::new();
    let mut by_distance = vec![(0.0, 0usize); DISTANCE_EDGES.len()];
    let mut iterations = 0;
    let mut err = target.error(chain.position(), &mut scratch);
    while iterations < target.max_iterations {
        let stats = chain.step(model, &mut rng)?;
        iterations += 1;
        evals += stats.evals().total();
        let fraction = stats.batch_size() as f64 / target.n as f64;
        let bin = DISTANCE_EDGES.partition_point(|&e| e <= err).saturating_sub(1);
        by_distance[bin].0 += fraction;
        by_distance[bin].1 += 1;
        err = target.error(chain.position(), &mut scratch);
        errors.push(err);
        cumulative.push(evals as f64);
        fractions.push(fraction);
        match hit {
            None => {
                frac_before += fraction;
                if err <= HIT_SDS {
                    hit = Some((iterations, evals));
                }
            }
            Some((h, _)) => {
                frac_after += fraction;
                acc_after += stats.accept_stat();
                for (s, t) in sum_after.iter_mut().zip(chain.position()) {
                    *s += t;
                }
                if iterations >= h + after_hit {
                    task.advance(1);
                    break;
                }
            }
        }
        task.advance(1);
    }
    let (hit_iteration, evals_to_hit) = hit.map_or((None, None), |(h, e)| (Some(h), Some(e)));
    let before = hit_iteration.unwrap_or(iterations);
    let after = iterations - before;
    let trace = log_thin_indices(iterations, TRACE_POINTS)
        .into_iter()
        .map(|i| (cumulative[i], errors[i]))
        .collect();
    let windowed_fraction =
        fractions.chunks(WINDOW).map(|w| w.iter().sum::<f64>() / w.len() as f64).collect();
    let nan_if_empty = |x: f64, k: usize| if k == 0 { f64::NAN } else { x / k as f64 };
    Ok(TransientChain {
        sampler,
        start_index,
        start: start.to_vec(),
        iterations,
        hit_iteration,
        evals_to_hit,
        transient_fraction: nan_if_empty(frac_before, before),
        equilibrium_fraction: nan_if_empty(frac_after, after),
        equilibrium_accept: nan_if_empty(acc_after, after),
        equilibrium_mean_error_sds: sum_after
            .iter()
            .zip(target.mode)
            .zip(target.sds)
            .map(|((s, m), sd)| (nan_if_empty(*s, after) - m) / sd)
            .collect(),
        total_evals: evals,
        trace,
        windowed_fraction,
        by_distance,
        seconds: clock.elapsed().as_secs_f64(),
    })
}

/// Runs both samplers from the 4 starting points.
pub fn compute(ctx: &Context<'_>) -> Result<Logistic> {
    let n = ctx.mode.pick(100_000, 10_000_000);
    let equilibrium_iterations = ctx.mode.pick(400, 500);
    let max_iterations = ctx.mode.pick(20_000, 300_000);
    ctx.reporter.note(&format!("confidence: Fig. 6, 2-D logistic regression (n = {n})"));
    let data = synthetic::two_class_2d(n, DATA_SEED)?.data;
    let model = LogisticRegression::new(data, DesignOptions::default(), PRIOR_SD)?;
    let d = model.dim();
    let laplace = laplace_approximation(&model, &vec![0.0; d], NewtonOptions::default())?;
    let factor = Cholesky::new(&laplace.covariance, d, "Laplace covariance")?;
    let sds = laplace.sds();
    let scale = 2.38 / (d as f64).sqrt();
    // For the progress bar only: a random walk far from the mode gains about a third of its
    // step per iteration.
    let largest_sd = sds.iter().copied().fold(0.0, f64::max);
    let transient_guess = (3.0 * START_RADIUS / (scale * largest_sd)) as usize;
    let target = Target {
        n,
        mode: &laplace.mode,
        sds: &sds,
        factor: &factor,
        seed: ctx.seed,
        equilibrium_iterations,
        max_iterations,
    };
    let starts: Vec<Vec<f64>> = (0..CHAINS)
        .map(|k| {
            let phi = std::f64::consts::FRAC_PI_4 + k as f64 * std::f64::consts::FRAC_PI_2;
            let dir = [phi.cos(), phi.sin()];
            laplace.mode.iter().enumerate().map(|(j, m)| m + START_RADIUS * dir[j % 2]).collect()
        })
        .collect();
    let mut chains = Vec::new();
    for sampler in Sampler::ALL {
        let task = ctx.reporter.task(
            &format!("Fig. 6 logistic: {}", sampler.label()),
            (CHAINS * max_iterations.min(equilibrium_iterations + transient_guess)) as u64,
        );
        let results: Vec<Result<TransientChain>> = std::thread::scope(|scope| {
            let handles: Vec<_> = starts
                .iter()
                .enumerate()
                .map(|(k, start)| {
                    let (model, target, task, cov) = (&model, &target, &*task, &laplace.covariance);
                    scope.spawn(move || -> Result<TransientChain> {
                        match sampler {
                            Sampler::ExactMh => {
                                let kernel = RandomWalkMetropolis::new(RandomWalkConfig {
                                    proposal_covariance: Some(cov.clone()),
                                    initial_scale: Some(scale),
                                    adapt_scale: false,
                                    ..Default::default()
                                })?;
                                run_chain(model, &kernel, sampler, k, start, target, task)
                            }
                            Sampler::Confidence => {
                                let test = ConfidenceTest::new(ConfidenceConfig::new(
                                    BoundKind::EmpiricalBernsteinSerfling,
                                    DELTA,
                                ))
                                .map_err(bounds_error)?;
                                let walk = RandomWalkProposal::new(RandomWalkProposalConfig {
                                    covariance: Some(cov.clone()),
                                    initial_scale: Some(scale),
                                    adapt_scale: false,
                                    ..Default::default()
                                })?;
                                let kernel = MinibatchMh::new(test, walk).with_term_bounds();
                                run_chain(model, &kernel, sampler, k, start, target, task)
                            }
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or(Err(Error::ChainPanicked))).collect()
        });
        drop(task);
        for r in results {
            chains.push(r?);
        }
    }
    Ok(Logistic {
        n,
        mode: laplace.mode.clone(),
        sds,
        max_row_norm: model.max_row_norm(),
        scale,
        equilibrium_iterations,
        max_iterations,
        chains,
    })
}

impl Logistic {
    /// The chains of `sampler`, in starting-point order.
    pub fn chains_of(&self, sampler: Sampler) -> Vec<&TransientChain> {
        self.chains.iter().filter(|c| c.sampler == sampler).collect()
    }

    /// Per starting point: evaluations to reach the posterior, exact MH ÷ confidence sampler.
    pub fn speedups(&self) -> Vec<f64> {
        let (mh, conf) = (self.chains_of(Sampler::ExactMh), self.chains_of(Sampler::Confidence));
        mh.iter()
            .zip(&conf)
            .map(|(a, b)| match (a.evals_to_hit, b.evals_to_hit) {
                (Some(x), Some(y)) if y > 0 => x as f64 / y as f64,
                _ => f64::NAN,
            })
            .collect()
    }

    /// Mean over the chains of `sampler` of `f` (NaN if any is NaN).
    pub fn mean_of(&self, sampler: Sampler, f: impl Fn(&TransientChain) -> f64) -> f64 {
        let c = self.chains_of(sampler);
        c.iter().map(|x| f(x)).sum::<f64>() / c.len().max(1) as f64
    }

    /// Mean data fraction per distance bin ([`DISTANCE_EDGES`]), all chains of `sampler`
    /// pooled, with the number of steps in the bin (NaN where there are none).
    pub fn fraction_by_distance(&self, sampler: Sampler) -> Vec<(f64, usize)> {
        let mut total = vec![(0.0, 0usize); DISTANCE_EDGES.len()];
        for c in self.chains_of(sampler) {
            for (t, b) in total.iter_mut().zip(&c.by_distance) {
                t.0 += b.0;
                t.1 += b.1;
            }
        }
        total.into_iter().map(|(s, k)| (if k == 0 { f64::NAN } else { s / k as f64 }, k)).collect()
    }

    /// Mean data fraction of the confidence sampler's steps from states at least [`FAR_SDS`]
    /// posterior sds from the mode, all chains pooled (`None` without such steps).
    pub fn far_fraction(&self) -> Option<f64> {
        let bins = self.fraction_by_distance(Sampler::Confidence);
        let far = DISTANCE_EDGES.iter().position(|&e| e >= FAR_SDS)?;
        let (sum, steps) = bins[far..]
            .iter()
            .filter(|b| b.1 > 0)
            .fold((0.0, 0), |(s, k), b| (s + b.0 * b.1 as f64, k + b.1));
        (steps > 0).then(|| sum / steps as f64)
    }
}

impl Part for Logistic {
    fn key(&self) -> &'static str {
        "fig6_logistic"
    }

    fn summary(&self) -> Value {
        let mut by = serde_json::Map::new();
        for s in Sampler::ALL {
            let chains: Vec<Value> = self
                .chains_of(s)
                .iter()
                .map(|c| {
                    json!({
                        "start": c.start, "iterations": c.iterations,
                        "hit_iteration": c.hit_iteration, "evals_to_hit": c.evals_to_hit,
                        "evals_to_hit_over_n": c.evals_to_hit.map(|e| e as f64 / self.n as f64),
                        "transient_fraction": c.transient_fraction,
                        "equilibrium_fraction": c.equilibrium_fraction,
                        "equilibrium_accept": c.equilibrium_accept,
                        "equilibrium_mean_error_in_sds": c.equilibrium_mean_error_sds,
                        "total_evals": c.total_evals,
                        "wall_seconds": c.seconds,
                    })
                })
                .collect();
            by.insert(
                s.key().into(),
                json!({
                    "chains": chains,
                    "mean_transient_fraction": self.mean_of(s, |c| c.transient_fraction),
                    "mean_equilibrium_fraction": self.mean_of(s, |c| c.equilibrium_fraction),
                }),
            );
        }
        json!({
            "n": self.n, "d": self.mode.len(),
            "data": "y ~ Bernoulli(1/2), x ~ N((2y - 1, 0), I_2); no intercept; prior N(0, 10^2 I)",
            "truth": "Laplace approximation",
            "laplace_mode": self.mode, "laplace_sds": self.sds,
            "max_row_norm": self.max_row_norm, "rw_scale": self.scale,
            "start_radius": START_RADIUS, "hit_mahalanobis": HIT_SDS,
            "equilibrium_iterations": self.equilibrium_iterations,
            "exact_mh_iterations_after_hit": MH_AFTER_HIT,
            "max_iterations": self.max_iterations,
            "confidence": {"bound": "empirical-bernstein-serfling", "delta": DELTA, "p": 2.0, "gamma": 2.0, "first_batch": 100},
            "samplers": by,
            "confidence_fraction_by_distance": {
                "distance_bin_lower_edges": DISTANCE_EDGES,
                "mean_fraction": self.fraction_by_distance(Sampler::Confidence).iter().map(|b| b.0).collect::<Vec<_>>(),
                "steps": self.fraction_by_distance(Sampler::Confidence).iter().map(|b| b.1).collect::<Vec<_>>(),
            },
            "speedup_evals_to_reach_posterior": self.speedups(),
        })
    }

    fn claims(&self) -> Vec<Claim> {
        let pct = |x: f64| format!("{} %", fmt_sig(100.0 * x, 2));
        let sp = self.speedups();
        let conf = self.chains_of(Sampler::Confidence);
        let n = fmt_n(self.n);
        let best = sp.iter().copied().fold(f64::NAN, f64::max);
        let total =
            |s: Sampler| -> u64 { self.chains_of(s).iter().filter_map(|c| c.evals_to_hit).sum() };
        let all_hit =
            !self.chains.is_empty() && self.chains.iter().all(|c| c.hit_iteration.is_some());
        let (mh_total, conf_total) = (total(Sampler::ExactMh), total(Sampler::Confidence));
        let far = self.far_fraction();
        let eq = self.mean_of(Sampler::Confidence, |c| c.equilibrium_fraction);
        let worst_error = conf
            .iter()
            .flat_map(|c| c.equilibrium_mean_error_sds.iter().map(|e| e.abs()))
            .fold(0.0, f64::max);
        vec![
            Claim::new(
                "fig6_up_to_five_times_faster",
                "Fig. 6 (n = 10⁷): the confidence-sampler chains converge up to 5 times faster than MH (4 starting points)",
                format!(
                    "n = {n}: evaluations to reach the posterior (Mahalanobis ≤ {HIT_SDS}), MH ÷ confidence, per start: {}",
                    sp.iter()
                        .map(|s| format!("{}×", fmt_sig(*s, 2)))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                format!("the best start's ratio ≥ {MIN_BEST_SPEEDUP}"),
                best >= MIN_BEST_SPEEDUP,
            ),
            Claim::new(
                "fig6_fewer_evaluations_to_reach_the_posterior",
                "Fig. 6: the confidence sampler reaches the posterior with fewer evaluations than exact MH",
                format!(
                    "every chain reached the posterior: {all_hit}; evaluations to reach it, summed over the starts: exact MH {mh_total}, confidence {conf_total}"
                ),
                "every chain of both samplers reaches the posterior, and the confidence sampler's total is below exact MH's",
                all_hit && conf_total < mh_total,
            ),
            Claim::new(
                "s4_2_1_gains_in_the_transient",
                "§4.2.1: the most significant gains in samples used happen in the initial transient phase",
                format!(
                    "confidence sampler's mean data fraction per iteration before reaching the posterior: {} (after: {}); at ≥ {FAR_SDS} posterior sds from the mode: {}",
                    conf.iter().map(|c| pct(c.transient_fraction)).collect::<Vec<_>>().join(", "),
                    conf.iter().map(|c| pct(c.equilibrium_fraction)).collect::<Vec<_>>().join(", "),
                    far.map_or("no steps".into(), pct)
                ),
                format!(
                    "every chain's fraction before the hit is below its fraction after it, and the mean fraction ≥ {FAR_SDS} sds from the mode is below 50 %"
                ),
                !conf.is_empty()
                    && conf.iter().all(|c| c.transient_fraction < c.equilibrium_fraction)
                    && far.is_some_and(|f| f < 0.5),
            ),
            Claim::new(
                "fig6_equilibrium_fraction_around_70_percent",
                "Fig. 6: the average number of samples used is still around 70 % after the transient",
                format!(
                    "n = {n}, after reaching it ({} iterations): {} (per chain); {} × exact MH's evaluations per iteration{}",
                    self.equilibrium_iterations,
                    conf.iter().map(|c| pct(c.equilibrium_fraction)).collect::<Vec<_>>().join(", "),
                    fmt_sig(2.0 * eq, 3),
                    if self.n < 10_000_000 {
                        " (the paper's n = 10⁷ is the full mode)"
                    } else {
                        ""
                    }
                ),
                format!(
                    "mean equilibrium fraction in [{}, {}]",
                    pct(EQUILIBRIUM_FRACTION.0),
                    pct(EQUILIBRIUM_FRACTION.1)
                ),
                (EQUILIBRIUM_FRACTION.0..=EQUILIBRIUM_FRACTION.1).contains(&eq),
            ),
            Claim::new(
                "equilibrium_draws_around_the_mode",
                "(design) after the hit, the confidence sampler's draws are around the Laplace mode",
                format!(
                    "largest |chain mean − mode| over chains and coordinates: {} posterior sds",
                    fmt_sig(worst_error, 2)
                ),
                format!(
                    "every chain's mean within {MAX_EQUILIBRIUM_ERROR_SDS} posterior sds of the mode (a loose check: {CHAINS} chains of correlated draws; the sd of a chain mean is a few tenths of a posterior sd)"
                ),
                !conf.is_empty() && worst_error < MAX_EQUILIBRIUM_ERROR_SDS,
            ),
        ]
    }

    fn figures(&self) -> Vec<(&'static str, Figure)> {
        vec![("fig6_logistic_transient.svg", figure(self))]
    }

    fn report(&self, r: &mut Report) {
        r.section("Fig. 6: logistic regression on the 2-D two-class data");
        r.paragraph(&format!(
            "n = {}, d = 2, prior N(0, {PRIOR_SD}² I). Truth: Laplace approximation, mode ({}) and \
             sds ({}) — for d = 2 at this n its error is O(n^{{−1/2}}) posterior sds, negligible \
             against the 3-sd threshold and the MCSE of the equilibrium means (table). Starting \
             points: mode + {START_RADIUS}·(cos φ, sin φ), φ = 45°, 135°, 225°, 315°. Proposal for \
             both samplers: N(θ, {}² Σ_L), fixed. A chain has *reached the posterior* at the first \
             iteration whose Mahalanobis distance from the mode is ≤ {HIT_SDS} (a 2-d Gaussian is \
             outside with probability 1.1 %); it then runs {} more iterations ({MH_AFTER_HIT} \
             for exact MH, whose data fraction is 1 by construction). Exact MH costs N \
             evaluations per iteration; the confidence sampler 2 per value (range bound \
             2‖θ′ − θ‖·max_i‖x_i‖, max_i‖x_i‖ = {}).",
            fmt_n(self.n),
            self.mode.iter().map(|v| fmt_sig(*v, 5)).collect::<Vec<_>>().join(", "),
            self.sds.iter().map(|v| fmt_sig(*v, 3)).collect::<Vec<_>>().join(", "),
            fmt_sig(self.scale, 3),
            self.equilibrium_iterations,
            fmt_sig(self.max_row_norm, 3),
        ));
        r.table_of(
            &[
                "sampler",
                "start",
                "iterations to reach",
                "evaluations to reach ÷ n",
                "data fraction before",
                "data fraction after",
                "accept after",
                "mean after − mode (sds)",
            ],
            self.chains.iter(),
            |c| {
                vec![
                    c.sampler.label().into(),
                    format!(
                        "({})",
                        c.start.iter().map(|v| fmt_sig(*v, 3)).collect::<Vec<_>>().join(", ")
                    ),
                    c.hit_iteration.map_or("never".into(), |h| h.to_string()),
                    c.evals_to_hit.map_or("–".into(), |e| fmt_sig(e as f64 / self.n as f64, 3)),
                    fmt_sig(c.transient_fraction, 3),
                    fmt_sig(c.equilibrium_fraction, 3),
                    fmt_sig(c.equilibrium_accept, 2),
                    c.equilibrium_mean_error_sds
                        .iter()
                        .map(|v| fmt_sig(*v, 2))
                        .collect::<Vec<_>>()
                        .join(", "),
                ]
            },
        );
        let sp = self.speedups();
        r.paragraph(&format!(
            "Speed-up in evaluations to reach the posterior (exact MH ÷ confidence), per start: \
             {}. The equilibrium means are single-chain averages of autocorrelated draws (a few \
             thousand), so deviations of a few tenths of a posterior sd are Monte Carlo error.",
            sp.iter().map(|s| format!("{}×", fmt_sig(*s, 3))).collect::<Vec<_>>().join(", ")
        ));
        r.paragraph(
            "Where the savings come from: the confidence sampler's mean data fraction per \
             iteration against the Mahalanobis distance of the current state from the mode (all \
             four chains pooled). Far from the mode |Λ_t − ψ| is large against the bound and a few \
             hundred values decide; within a few dozen sds every decision needs (almost) all of \
             them.",
        );
        let bins = self.fraction_by_distance(Sampler::Confidence);
        let rows: Vec<Vec<String>> = bins
            .iter()
            .enumerate()
            .filter(|(_, b)| b.1 > 0)
            .map(|(k, b)| {
                let hi = DISTANCE_EDGES.get(k + 1).map_or("∞".to_string(), |h| fmt_sig(*h, 2));
                vec![
                    format!("[{}, {hi})", fmt_sig(DISTANCE_EDGES[k], 2)),
                    b.1.to_string(),
                    fmt_sig(b.0, 3),
                ]
            })
            .collect();
        r.table(&["distance from mode (posterior sds)", "steps", "mean data fraction"], &rows);
        r.image("Fig. 6: error vs evaluations", "fig6_logistic_transient.svg");
    }
}

/// `fig6_logistic_transient.svg`: error (Mahalanobis distance from the mode) against cumulative
/// evaluations for every chain (left), and the confidence sampler's data fraction per iteration
/// (right).
fn figure(l: &Logistic) -> Figure {
    let mut left = Axes::new()
        .with_title(format!(
            "Error vs evaluations (n = {}): solid MH, dashed confidence",
            fmt_n(l.n)
        ))
        .with_x_label("per-datum evaluations")
        .with_y_label("‖θ − θ̂‖ in posterior sds")
        .with_log_y()
        .with_legend(Legend::BottomLeft);
    for c in &l.chains {
        let x: Vec<f64> = c.trace.iter().map(|p| p.0).collect();
        let y: Vec<f64> = c.trace.iter().map(|p| p.1).collect();
        let mut line = Line::new(&x, &y).with_color(PALETTE[c.start_index % PALETTE.len()]);
        line = match c.sampler {
            Sampler::ExactMh => line.with_label(format!("start {}: MH", c.start_index + 1)),
            Sampler::Confidence => {
                line.with_dashes().with_label(format!("start {}: confidence", c.start_index + 1))
            }
        };
        left.push(line);
    }
    left.push(RefLine::horizontal(HIT_SDS).with_label("reached (3 sds)"));
    let mut right = Axes::new()
        .with_title(format!(
            "Confidence sampler: data fraction per iteration ({WINDOW}-iteration means)"
        ))
        .with_x_label("iteration")
        .with_y_label("fraction of n")
        .with_y_range(0.0, 1.05)
        .with_legend(Legend::BottomRight);
    for c in l.chains_of(Sampler::Confidence) {
        let x: Vec<f64> =
            (0..c.windowed_fraction.len()).map(|k| ((k * WINDOW) + WINDOW / 2) as f64).collect();
        right.push(
            Line::new(&x, &c.windowed_fraction)
                .with_color(PALETTE[c.start_index % PALETTE.len()])
                .with_label(format!("start {}", c.start_index + 1)),
        );
    }
    right.push(RefLine::horizontal(0.5).with_label("break-even with exact MH"));
    let bins = l.fraction_by_distance(Sampler::Confidence);
    let (mut bx, mut by) = (Vec::new(), Vec::new());
    for (k, b) in bins.iter().enumerate() {
        if b.1 > 0 {
            // Plot at the bin's geometric centre (the first bin at 1.5, the open one at 1.5 × edge).
            let lo = DISTANCE_EDGES[k].max(1.0);
            let hi = DISTANCE_EDGES.get(k + 1).copied().unwrap_or(2.25 * lo);
            bx.push((lo * hi).sqrt());
            by.push(b.0);
        }
    }
    let third = Axes::new()
        .with_title("Confidence sampler: data fraction vs distance from the mode")
        .with_x_label("‖θ − θ̂‖ in posterior sds")
        .with_y_label("mean fraction of n")
        .with_log_x()
        .with_y_range(0.0, 1.05)
        .with_legend(Legend::TopRight)
        .with_series(Line::new(&bx, &by).with_marker(Marker::Circle).with_label("4 chains pooled"))
        .with_series(RefLine::horizontal(0.5).with_label("break-even with exact MH"));
    Figure::new()
        .with_title("Fig. 6: 2-D logistic regression, transient and equilibrium")
        .with_columns(3)
        .with_panel(left)
        .with_panel(right)
        .with_panel(third)
}
