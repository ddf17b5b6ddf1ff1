//! Part (c), the paper's Figs. 5 and 6: uncorrected SGLD, SGLD corrected by the exact MH test
//! and SGLD corrected by Austerity's test, on the 41-parameter KDD99-like logistic regression,
//! at a large and a small step size: the L1 error Σ_j |var̂_j − var_j| of the 41 marginal
//! variances against the per-datum evaluations spent, averaged over chains.

use rayon::prelude::*;
use serde::Serialize;
use tallmc_bounds::ExactTest;
use tallmc_core::Kernel;
use tallmc_core::StepStats;
use tallmc_core::rng::chain_rng;
use tallmc_models::LogisticRegression;
use tallmc_samplers::{Laplace, MinibatchMh, Sgld, SgldConfig, SgldProposal, SgldProposalConfig};

use super::common::{
    ChainTotals, Checkpoints, ImportanceSample, austerity_test, log_grid, run_to_budget,
    smallest_eigenvalue,
};
use crate::figure::{Axes, Color, Figure, Legend, Line, RefLine};
use crate::{Context, Result, Task};

/// The ε of the Austerity-corrected chains (the paper's Figs. 5–6).
pub const EPSILONS: [f64; 3] = [0.01, 0.05, 0.1];

/// Step sizes as multiples c of the smallest eigenvalue λ_min of the Laplace covariance,
/// h = c λ_min: a large one (SGLD's variances visibly inflated) and one five times smaller
/// (the paper's ratio 5e-4 / 1e-4).
pub const STEP_FACTORS: [f64; 2] = [0.1, 0.02];

/// First chain stream of part (c) (step s, method m, chain k: `STREAM + 1000 s + 100 m + k`).
const STREAM: usize = 3000;

/// Checkpoints per curve and the decades they span.
const CHECKPOINTS: usize = 21;
const DECADES: f64 = 2.0;

/// A sampler of part (c).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Method {
    /// Uncorrected SGLD.
    Sgld,
    /// SGLD proposal, exact MH test.
    Mh,
    /// SGLD proposal, Austerity test at this ε.
    Austerity(f64),
}

impl Method {
    /// Every method, in the paper's legend order.
    pub fn all() -> Vec<Method> {
        let mut m = vec![Method::Sgld];
        m.extend(EPSILONS.iter().rev().map(|&e| Method::Austerity(e)));
        m.push(Method::Mh);
        m
    }

    /// Key in the summary.
    pub fn key(&self) -> String {
        match self {
            Method::Sgld => "sgld".into(),
            Method::Mh => "mh".into(),
            Method::Austerity(e) => format!("austerity_{e}"),
        }
    }

    /// Label in figures and tables.
    pub fn label(&self) -> String {
        match self {
            Method::Sgld => "SGLD (uncorrected)".into(),
            Method::Mh => "SGLD + exact MH".into(),
            Method::Austerity(e) => format!("SGLD + Austerity ε = {e}"),
        }
    }
}

/// One method at one step size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VarianceCurve {
    /// The method.
    pub method: Method,
    /// Per-datum evaluations at each checkpoint (mean over chains).
    pub evals: Vec<f64>,
    /// L1 error of the variances at each checkpoint, mean over chains.
    pub l1: Vec<f64>,
    /// Each chain's L1 error at the budget.
    pub final_l1_chains: Vec<f64>,
    /// L1 error of the variances pooled over all chains' draws at the budget (less noisy than
    /// one chain's: closer to the method's bias).
    pub pooled_l1: f64,
    /// Mean over j of pooled var̂_j / var_j.
    pub mean_variance_ratio: f64,
    /// Mean over the draws of (1/d) Σ_j (θ_j − μ_j)²/var_j (μ, var the true means and
    /// variances): 1 for a sampler of the posterior; above 1 when the chain is too spread.
    pub second_moment_ratio: f64,
    /// MCSE of `second_moment_ratio` (ESS of its series over the chains, in blocks of 16
    /// steps).
    pub second_moment_ratio_mcse: f64,
    /// Acceptance rate (1 for SGLD).
    pub accept: f64,
    /// Transitions per chain (mean).
    pub steps: f64,
    /// Per-datum evaluations per transition.
    pub evals_per_step: f64,
    /// Mean fraction of the N data points used by the accept test (0 for SGLD).
    pub test_data_fraction: f64,
}

/// The methods at one step size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepSizeResult {
    /// c in h = c λ_min.
    pub factor: f64,
    /// h.
    pub step_size: f64,
    /// One curve per method.
    pub curves: Vec<VarianceCurve>,
}

/// Part (c).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fig56 {
    /// Rows N.
    pub n: usize,
    /// Parameters d.
    pub d: usize,
    /// SGLD minibatch n (gradient) = Austerity mini-batch m (test).
    pub batch: usize,
    /// Chains per method and step size.
    pub chains: usize,
    /// Evaluation budget per chain.
    pub budget: u64,
    /// Smallest eigenvalue of the Laplace covariance.
    pub lambda_min: f64,
    /// Largest true marginal variance.
    pub max_variance: f64,
    /// Σ_j var_j (the L1 error of a chain that estimates every variance as 0).
    pub sum_variance: f64,
    /// Importance draws of the ground truth.
    pub truth_draws: usize,
    /// Their effective sample size.
    pub truth_ess: f64,
    /// Expected L1 error of the truth itself, Σ_j √(2/π) MCSE_j.
    pub truth_l1_floor: f64,
    /// The two step sizes.
    pub steps: Vec<StepSizeResult>,
}

/// What one chain returns.
struct ChainVar {
    snapshots: Vec<(u64, f64)>,
    /// Means over blocks of [`RATIO_BLOCK`] steps of (1/d) Σ_j (θ_j − μ_j)²/var_j.
    ratio_blocks: Vec<f64>,
    mean: Vec<f64>,
    m2: Vec<f64>,
    count: u64,
    totals: ChainTotals,
    accept_sum: f64,
    used_sum: f64,
}

/// Steps per block of the second-moment-ratio series (for its MCSE).
const RATIO_BLOCK: u64 = 16;

/// What every chain of a Figs. 5–6 run shares: the model, the budget of each chain, the
/// checkpoint grid and the true variances and mean the errors are measured against.
struct ChainJobs<'a> {
    model: &'a LogisticRegression,
    seed: u64,
    budget: u64,
    grid: &'a [f64],
    truth: &'a [f64],
    true_mean: &'a [f64],
    task: &'a dyn Task,
}

impl ChainJobs<'_> {
    /// Runs `kernel` from `init` on RNG stream `stream`: Welford running moments, the L1 error
    /// at every checkpoint, and the series of the squared distance to the true mean in units of
    /// the true variances.
    fn run<K: Kernel<LogisticRegression>>(
        &self, kernel: &K, init: &[f64], stream: usize,
    ) -> Result<ChainVar> {
        let Self { model, seed, budget, grid, truth, true_mean, task } = *self;
        let d = truth.len();
        let mut ratio_blocks = Vec::new();
        let mut block = 0.0;
        let mut rng = chain_rng(seed, stream);
        let (mut mean, mut m2, mut count) = (vec![0.0; d], vec![0.0; d], 0u64);
        let mut cps = Checkpoints::new(grid.to_vec());
        let mut snapshots = Vec::with_capacity(grid.len());
        let (mut accept_sum, mut used_sum) = (0.0, 0.0);
        let totals = run_to_budget(model, kernel, init, &mut rng, budget, task, |th, st, e| {
            count += 1;
            let c = count as f64;
            for j in 0..d {
                let delta = th[j] - mean[j];
                mean[j] += delta / c;
                m2[j] += delta * (th[j] - mean[j]);
            }
            block +=
                (0..d).map(|j| (th[j] - true_mean[j]).powi(2) / truth[j]).sum::<f64>() / d as f64;
            if count.is_multiple_of(RATIO_BLOCK) {
                ratio_blocks.push(block / RATIO_BLOCK as f64);
                block = 0.0;
            }
            for _ in 0..cps.passed(e) {
                let l1 = if count < 2 {
                    truth.iter().sum()
                } else {
                    m2.iter().zip(truth).map(|(m, v)| (m / (c - 1.0) - v).abs()).sum()
                };
                snapshots.push((e, l1));
            }
            accept_sum += st.accept_stat();
            used_sum += st.batch_size() as f64;
        })?;
        Ok(ChainVar { snapshots, ratio_blocks, mean, m2, count, totals, accept_sum, used_sum })
    }
}

/// Runs part (c) on `model` (with `starts` drawn from its Laplace approximation `laplace`, whose
/// smallest eigenvalue scales the step sizes), against the posterior moments (and their MCSEs)
/// of the importance sample `sample`.
pub(crate) fn compute(
    model: &LogisticRegression, laplace: &Laplace, starts: &[Vec<f64>], sample: &ImportanceSample,
    batch: usize, chains: usize, budget: u64, ctx: &Context<'_>,
) -> Result<Fig56> {
    let lambda_min = smallest_eigenvalue(&laplace.covariance, laplace.mode.len())?;
    let moments = sample.moments(laplace);
    let (truth, truth_mcse) = (&moments.variance[..], &moments.variance_mcse[..]);
    let true_mean = &moments.mean[..];
    let n = model.design().len();
    let methods = Method::all();
    let grid = log_grid(budget as f64, DECADES, CHECKPOINTS);
    let total = (STEP_FACTORS.len() * methods.len() * chains) as u64 * budget;
    let task = ctx.reporter.task("austerity (c): SGLD and corrected SGLD (Figs. 5-6)", total);
    let jobs: Vec<(usize, usize, usize)> = (0..STEP_FACTORS.len())
        .flat_map(|s| (0..methods.len()).flat_map(move |m| (0..chains).map(move |k| (s, m, k))))
        .collect();
    let chain_jobs =
        ChainJobs { model, seed: ctx.seed, budget, grid: &grid, truth, true_mean, task: &*task };
    let runs = jobs
        .par_iter()
        .map(|&(s, m, k)| {
            let h = STEP_FACTORS[s] * lambda_min;
            let init = &starts[k % starts.len()];
            let stream = STREAM + 1000 * s + 100 * m + k;
            let prop = || SgldProposal::new(SgldProposalConfig { step_size: h, batch });
            match methods[m] {
                Method::Sgld => {
                    let config = SgldConfig { step_size: h, batch, ..Default::default() };
                    chain_jobs.run(&Sgld::new(config)?, init, stream)
                }
                Method::Mh => {
                    chain_jobs.run(&MinibatchMh::new(ExactTest::new(), prop()?), init, stream)
                }
                Method::Austerity(eps) => {
                    let test = austerity_test(eps, batch)?;
                    chain_jobs.run(&MinibatchMh::new(test, prop()?), init, stream)
                }
            }
        })
        .collect::<Result<Vec<_>>>()?;
    drop(task);
    let d = truth.len();
    let c = chains as f64;
    let steps = STEP_FACTORS
        .iter()
        .enumerate()
        .map(|(s, &factor)| {
            let curves = methods
                .iter()
                .enumerate()
                .map(|(m, &method)| {
                    let first = (s * methods.len() + m) * chains;
                    let mine = &runs[first..first + chains];
                    let points = mine.iter().map(|r| r.snapshots.len()).min().unwrap_or(0);
                    let evals: Vec<f64> = (0..points)
                        .map(|j| mine.iter().map(|r| r.snapshots[j].0 as f64).sum::<f64>() / c)
                        .collect();
                    let l1: Vec<f64> = (0..points)
                        .map(|j| mine.iter().map(|r| r.snapshots[j].1).sum::<f64>() / c)
                        .collect();
                    // Pooled variance of all chains' draws (within + between).
                    let total: f64 = mine.iter().map(|r| r.count as f64).sum();
                    let pooled: Vec<f64> = (0..d)
                        .map(|j| {
                            let grand =
                                mine.iter().map(|r| r.mean[j] * r.count as f64).sum::<f64>()
                                    / total;
                            let ss: f64 = mine
                                .iter()
                                .map(|r| r.m2[j] + r.count as f64 * (r.mean[j] - grand).powi(2))
                                .sum();
                            ss / (total - 1.0)
                        })
                        .collect();
                    let steps: u64 = mine.iter().map(|r| r.totals.steps).sum();
                    let evals_total: u64 = mine.iter().map(|r| r.totals.evals).sum();
                    let used: f64 = mine.iter().map(|r| r.used_sum).sum();
                    let blocks: Vec<&[f64]> =
                        mine.iter().map(|r| r.ratio_blocks.as_slice()).collect();
                    let nb = blocks.iter().map(|b| b.len()).min().unwrap_or(0);
                    let blocks: Vec<&[f64]> = blocks.iter().map(|b| &b[..nb]).collect();
                    let ratio = blocks.iter().flat_map(|b| b.iter()).sum::<f64>()
                        / (nb * blocks.len()).max(1) as f64;
                    VarianceCurve {
                        method,
                        evals,
                        l1,
                        final_l1_chains: mine
                            .iter()
                            .map(|r| r.snapshots.last().map_or(f64::NAN, |s| s.1))
                            .collect(),
                        pooled_l1: pooled.iter().zip(truth).map(|(p, t)| (p - t).abs()).sum(),
                        mean_variance_ratio: pooled
                            .iter()
                            .zip(truth)
                            .map(|(p, t)| p / t)
                            .sum::<f64>()
                            / d as f64,
                        second_moment_ratio: ratio,
                        second_moment_ratio_mcse: tallmc_diagnostics::mcse_mean(&blocks)
                            .unwrap_or(f64::NAN),
                        accept: mine.iter().map(|r| r.accept_sum).sum::<f64>() / steps as f64,
                        steps: steps as f64 / c,
                        evals_per_step: evals_total as f64 / steps as f64,
                        test_data_fraction: if method == Method::Sgld {
                            0.0
                        } else {
                            used / steps as f64 / n as f64
                        },
                    }
                })
                .collect();
            StepSizeResult { factor, step_size: factor * lambda_min, curves }
        })
        .collect();
    Ok(Fig56 {
        n,
        d,
        batch,
        chains,
        budget,
        lambda_min,
        max_variance: truth.iter().copied().fold(0.0, f64::max),
        sum_variance: truth.iter().sum(),
        truth_draws: sample.len(),
        truth_ess: sample.ess,
        truth_l1_floor: truth_mcse.iter().sum::<f64>() * (2.0 / std::f64::consts::PI).sqrt(),
        steps,
    })
}

impl Fig56 {
    /// The curve of `method` at step-size index `s` (0 = large, 1 = small).
    pub fn curve(&self, s: usize, method: Method) -> Option<&VarianceCurve> {
        self.steps.get(s)?.curves.iter().find(|c| c.method == method)
    }

    /// The figure: one panel per step size, L1 error of the variances against evaluations.
    pub fn figure(&self) -> Figure {
        let mut fig = Figure::new().with_columns(2);
        for (s, r) in self.steps.iter().enumerate() {
            let which = if s == 0 { "large" } else { "small" };
            let mut ax = Axes::new()
                .with_title(format!(
                    "Fig. {}: {which} step h = {:.2e} = {} λ_min (N = {}, n = m = {})",
                    5 + s,
                    r.step_size,
                    r.factor,
                    self.n,
                    self.batch
                ))
                .with_log_x()
                .with_log_y()
                .with_x_range(
                    self.budget as f64 / 10f64.powf(DECADES + 1.0),
                    self.budget as f64 * 1.5,
                )
                .with_x_label("per-datum evaluations per chain")
                .with_y_label("L1 error of the 41 variances (mean over chains)")
                .with_legend(Legend::BottomLeft);
            for c in &r.curves {
                ax.push(Line::new(&c.evals, &c.l1).with_label(c.method.label()));
            }
            ax.push(
                RefLine::horizontal(self.truth_l1_floor)
                    .with_color(Color::GREY)
                    .with_label("error of the truth itself"),
            );
            fig.push(ax);
        }
        fig
    }
}
