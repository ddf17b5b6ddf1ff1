//! Part (b), the paper's Fig. 3: the risk of the posterior predictive mean of held-out points
//! against the per-datum evaluations spent, for random-walk Austerity MH at several ε.
//!
//! Risk at a budget B: the mean over the test points x* of the mean over chains of
//! (p̂_chain(x*) − p(x*))², with p̂_chain the chain's running average of σ(x*ᵀθ) after B
//! evaluations and p(x*) = E_π σ(x*ᵀθ) the ground truth (importance sampling from the Laplace
//! approximation). It splits into bias² + variance: with p̄ the mean over the C chains and s²
//! their sample variance, variance = s² and bias² = (p̄ − p)² − s²/C (unbiased for the squared
//! bias of one chain's estimate), averaged over x*.

use rayon::prelude::*;
use serde::Serialize;
use tallmc_core::rng::chain_rng;
use tallmc_samplers::MinibatchMh;

use super::MnistSetup;
use super::common::{
    ChainTotals, Checkpoints, ImportanceSample, austerity_test, index_pairs, log_log_slope,
    run_to_budget, sigmoid,
};
use super::fig2::{TEST_BATCH, fixed_proposal};
use crate::figure::{Axes, Bars, Color, Figure, Legend, Line};
use crate::{Context, Result};

/// The ε of the paper's Fig. 3.
pub const EPSILONS: [f64; 5] = [0.0, 0.01, 0.05, 0.1, 0.2];

/// First chain stream of part (b) (ε index e, chain k: `STREAM + 100 e + k`).
const STREAM: usize = 2000;

/// Checkpoints per curve (log-spaced over [`DECADES`] decades up to the budget).
const CHECKPOINTS: usize = 26;
/// Decades of evaluations the curves span.
const DECADES: f64 = 2.5;

/// The risk curve of one ε.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RiskCurve {
    /// ε.
    pub epsilon: f64,
    /// Per-datum evaluations at each checkpoint (mean over chains; each chain is read after
    /// the first step that reaches the checkpoint).
    pub evals: Vec<f64>,
    /// Risk (bias² + variance) at each checkpoint.
    pub risk: Vec<f64>,
    /// Squared bias (mean over test points; can be slightly negative by Monte Carlo error).
    pub bias2: Vec<f64>,
    /// Variance between chains (mean over test points).
    pub variance: Vec<f64>,
    /// Log–log slope of the risk over the last decade of evaluations.
    pub slope_last_decade: f64,
    /// Jackknife (leave one chain out) standard error of that slope.
    pub slope_jackknife_se: f64,
    /// Jackknife standard error of the squared bias at the budget.
    pub bias2_jackknife_se: f64,
    /// Transitions per chain at the budget (mean).
    pub steps: f64,
    /// Mean fraction of the data the test used.
    pub data_fraction: f64,
    /// Acceptance rate.
    pub accept: f64,
}

/// Part (b).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fig3 {
    /// Chains per ε.
    pub chains: usize,
    /// Evaluation budget of every chain.
    pub budget: u64,
    /// Held-out points.
    pub n_test: usize,
    /// Importance draws of the ground truth.
    pub truth_draws: usize,
    /// Their effective sample size.
    pub truth_ess: f64,
    /// Largest MCSE of a true predictive probability.
    pub truth_max_mcse: f64,
    /// Mean over the test points of the truth's squared MCSE: the part of every measured risk
    /// that is the truth's own error.
    pub truth_risk_floor: f64,
    /// Draws used for the predictive means: one whenever at least this many evaluations were
    /// made since the previous one (N: one draw per full-data pass or less often; the random
    /// walk's autocorrelation time is ~100 steps, so this loses nothing).
    pub thin_evals: u64,
    /// One curve per ε.
    pub curves: Vec<RiskCurve>,
}

/// Risk, squared bias and variance at every checkpoint from the chains' predictive means.
fn risk_curve(chains: &[&ChainRisk], p_true: &[f64]) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let c = chains.len() as f64;
    let n_test = p_true.len();
    let points = chains.iter().map(|r| r.snapshots.len()).min().unwrap_or(0);
    let (mut evals, mut risk, mut bias2, mut variance) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for j in 0..points {
        evals.push(chains.iter().map(|r| r.snapshots[j].0 as f64).sum::<f64>() / c);
        let (mut b2, mut var) = (0.0, 0.0);
        for i in 0..n_test {
            let mean = chains.iter().map(|r| r.snapshots[j].1[i]).sum::<f64>() / c;
            let ss = chains.iter().map(|r| (r.snapshots[j].1[i] - mean).powi(2)).sum::<f64>();
            let s2 = if chains.len() > 1 { ss / (c - 1.0) } else { 0.0 };
            b2 += (mean - p_true[i]).powi(2) - s2 / c;
            var += s2;
        }
        let (b2, var) = (b2 / n_test as f64, var / n_test as f64);
        bias2.push(b2);
        variance.push(var);
        risk.push(b2 + var);
    }
    (evals, risk, bias2, variance)
}

/// Log–log slope of `risk` over the checkpoints in the last decade of the budget.
fn last_decade_slope(evals: &[f64], risk: &[f64], budget: u64) -> f64 {
    let keep: Vec<usize> =
        (0..evals.len()).filter(|&j| evals[j] >= budget as f64 / 10.0 * 0.999).collect();
    log_log_slope(
        &keep.iter().map(|&j| evals[j]).collect::<Vec<_>>(),
        &keep.iter().map(|&j| risk[j]).collect::<Vec<_>>(),
    )
}

struct ChainRisk {
    snapshots: Vec<(u64, Vec<f64>)>,
    totals: ChainTotals,
    fraction: f64,
    accepted: u64,
}

/// Runs part (b): `chains` chains per ε from `starts`, each until `budget` evaluations, against
/// the test-set predictive probabilities of the importance sample `truth`.
pub(crate) fn compute(
    setup: &MnistSetup, starts: &[Vec<f64>], truth: &ImportanceSample, chains: usize, budget: u64,
    ctx: &Context<'_>,
) -> Result<Fig3> {
    let (p_true, p_mcse) = truth.predictive(setup.test.x());
    let x = setup.test.x();
    let d = setup.laplace.mode.len();
    let n_test = p_true.len();
    let thin = setup.model.design().len() as u64;
    let grid = super::common::log_grid(budget as f64, DECADES, CHECKPOINTS);
    let total = (EPSILONS.len() * chains) as u64 * budget;
    let task = ctx.reporter.task("austerity (b): risk of the predictive mean (Fig. 3)", total);
    let jobs = index_pairs(EPSILONS.len(), chains);
    let runs = jobs
        .par_iter()
        .map(|&(e, k)| {
            let test = austerity_test(EPSILONS[e], TEST_BATCH)?;
            let kernel = MinibatchMh::new(test, fixed_proposal(setup)?);
            let mut rng = chain_rng(ctx.seed, STREAM + 100 * e + k);
            let mut sum = vec![0.0; n_test];
            let mut count = 0u64;
            let mut last: Option<u64> = None;
            let mut cps = Checkpoints::new(grid.clone());
            let mut snapshots = Vec::with_capacity(grid.len());
            let (mut fraction, mut accepted) = (0.0, 0u64);
            let totals = run_to_budget(
                &setup.model,
                &kernel,
                &starts[k % starts.len()],
                &mut rng,
                budget,
                &*task,
                |theta, st, evals| {
                    if last.is_none_or(|l| evals - l >= thin) {
                        for (s, row) in sum.iter_mut().zip(x.chunks_exact(d)) {
                            *s += sigmoid(row.iter().zip(theta).map(|(a, b)| a * b).sum());
                        }
                        count += 1;
                        last = Some(evals);
                    }
                    for _ in 0..cps.passed(evals) {
                        let c = count as f64;
                        snapshots.push((evals, sum.iter().map(|s| s / c).collect()));
                    }
                    fraction += st.data_fraction;
                    accepted += u64::from(st.accepted);
                },
            )?;
            Ok(ChainRisk { snapshots, totals, fraction, accepted })
        })
        .collect::<Result<Vec<_>>>()?;
    drop(task);
    let curves = EPSILONS
        .iter()
        .zip(runs.chunks(chains))
        .map(|(&epsilon, mine)| {
            let mine: Vec<&ChainRisk> = mine.iter().collect();
            let (evals, risk, bias2, variance) = risk_curve(&mine, &p_true);
            let slope = last_decade_slope(&evals, &risk, budget);
            // Jackknife over chains (leave one chain out): standard errors of the slope and of
            // the final squared bias.
            let (slope_se, bias2_se) = if chains > 2 {
                let loo: Vec<(f64, f64)> = (0..chains)
                    .map(|k| {
                        let rest: Vec<&ChainRisk> = mine
                            .iter()
                            .enumerate()
                            .filter(|(j, _)| *j != k)
                            .map(|(_, r)| *r)
                            .collect();
                        let (ev, rk, b2, _) = risk_curve(&rest, &p_true);
                        (last_decade_slope(&ev, &rk, budget), b2.last().copied().unwrap_or(0.0))
                    })
                    .collect();
                let se = |f: &dyn Fn(&(f64, f64)) -> f64| {
                    let m = loo.iter().map(f).sum::<f64>() / chains as f64;
                    ((chains - 1) as f64 / chains as f64
                        * loo.iter().map(|x| (f(x) - m).powi(2)).sum::<f64>())
                    .sqrt()
                };
                (se(&|x| x.0), se(&|x| x.1))
            } else {
                (f64::NAN, f64::NAN)
            };
            let steps: u64 = mine.iter().map(|r| r.totals.steps).sum();
            RiskCurve {
                epsilon,
                evals,
                risk,
                bias2,
                variance,
                slope_last_decade: slope,
                slope_jackknife_se: slope_se,
                bias2_jackknife_se: bias2_se,
                steps: steps as f64 / chains as f64,
                data_fraction: mine.iter().map(|r| r.fraction).sum::<f64>() / steps as f64,
                accept: mine.iter().map(|r| r.accepted).sum::<u64>() as f64 / steps as f64,
            }
        })
        .collect();
    Ok(Fig3 {
        chains,
        budget,
        n_test,
        truth_draws: truth.len(),
        truth_ess: truth.ess,
        truth_max_mcse: p_mcse.iter().copied().fold(0.0, f64::max),
        truth_risk_floor: p_mcse.iter().map(|m| m * m).sum::<f64>() / n_test as f64,
        thin_evals: thin,
        curves,
    })
}

impl Fig3 {
    /// The curve of `epsilon`, if measured.
    pub fn curve(&self, epsilon: f64) -> Option<&RiskCurve> {
        self.curves.iter().find(|c| c.epsilon == epsilon)
    }

    /// The figure: risk against evaluations (log–log), one line per ε, and the split of the
    /// final risk into bias² and variance.
    pub fn figure(&self) -> Figure {
        let mut risk = Axes::new()
            .with_title(format!(
                "Risk of the predictive mean of {} held-out points ({} chains per ε)",
                self.n_test, self.chains
            ))
            .with_log_x()
            .with_log_y()
            .with_x_range(self.budget as f64 / 10f64.powf(DECADES + 1.0), self.budget as f64 * 1.5)
            .with_x_label("per-datum evaluations per chain")
            .with_y_label("risk = bias² + variance")
            .with_legend(Legend::BottomLeft);
        for c in &self.curves {
            risk.push(Line::new(&c.evals, &c.risk).with_label(format!("ε = {}", c.epsilon)));
        }
        if let Some(c0) = self.curve(0.0)
            && let (Some(&x1), Some(&y1)) = (c0.evals.last(), c0.risk.last())
        {
            let x0 = x1 / 10f64.powf(DECADES);
            risk.push(
                Line::new(&[x0, x1], &[y1 * x1 / x0, y1])
                    .with_dashes()
                    .with_color(Color::GREY)
                    .with_label("slope −1"),
            );
        }
        let cats: Vec<String> = self.curves.iter().map(|c| format!("ε = {}", c.epsilon)).collect();
        let last = |f: &dyn Fn(&RiskCurve) -> &Vec<f64>| {
            self.curves.iter().map(|c| f(c).last().copied().unwrap_or(f64::NAN)).collect::<Vec<_>>()
        };
        let split = Axes::new()
            .with_title("At the budget: variance and squared bias")
            .with_y_label("mean over test points")
            .with_categories(cats)
            .with_series(Bars::new(&last(&|c| &c.variance)).with_label("variance"))
            .with_series(
                Bars::new(&last(&|c| &c.bias2)).with_label("bias² (estimate; < 0: none detected)"),
            );
        Figure::new().with_columns(2).with_panel(risk).with_panel(split)
    }
}
