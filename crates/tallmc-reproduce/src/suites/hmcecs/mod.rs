//! Suite `hmcecs`: the experiments of Dang, Quiroz, Kohn, Tran & Villani (2019), *Hamiltonian
//! Monte Carlo with energy conserving subsampling*, JMLR 20(100), §6 — perturbed HMC-ECS
//! ([`HmcEcs`]) with Taylor control variates.
//!
//! * [`fig7`] — **§6.7, Fig. 7**: scaling with the dimension. Gaussian regression with known
//!   σ = 1 ([`GaussianRegression`](tallmc_models::GaussianRegression), data
//!   [`synthetic::gaussian_regression`](tallmc_models::synthetic::gaussian_regression)),
//!   n = 10⁴, d = 2^h (h = 1 … 5 quick, 1 … 8 full), prior N(0, 5² I); 1st- and 2nd-order
//!   control variates at the posterior mode, m tuned for V[ℓ̂] ≈ 1, mass matrix from the
//!   Hessian at θ*, εL = 1.2, dual averaging to 0.8. Measured against d: the tuned ε (with a
//!   log-log slope and its standard error against d^{−1/4} and d^{−1/3}), the θ-step acceptance
//!   rate, the inefficiency factor, V[ℓ̂] and m. The posterior is Gaussian in closed form, so
//!   the order-2 chains (whose estimator is exact) are also a correctness check.
//! * [`cv_order`] — **§6.8, Figs. 8–9**: the order of the control variates (0, 1, 2) on the
//!   higgs-like logistic regression (d = 29), θ* started at the mode of a small subset and
//!   re-centred during warmup (the paper's training period): V[ℓ̂] along the iterations, and the
//!   posterior means and variances against full-data HMC.
//! * [`tables`] — **§6.5, Tables 1–2 and Fig. 2** (higgs-like n = 10⁵ quick / 10⁷ full):
//!   perturbed and signed HMC-ECS, SG-HMC and SGLD with and without control variates, and
//!   full-data HMC — acceptance, L, IF, ESS, m/n, τ̂, RCT against perturbed HMC-ECS, the cost
//!   ratio of full HMC, and every parameter's mean and variance against full HMC.
//!
//! **Iterations.** Quick: [`fig7`] 2 chains × (1,000 warmup + 1,000 draws) per (d, order);
//! [`cv_order`] 2 × (1,000 + 2,000) per order and 2 × (500 + 4,000) for the full-data HMC
//! reference. Full: 4 × (1,000 + 2,000), 4 × (1,000 + 4,000) and 4 × (1,000 + 10,000). The quick
//! parts together take about 15 s on 2 cores (≈ 25 s on one; the budget is 90 s), and the
//! report notes each part's time.
//!
//! **Cost** is counted by the kernels (per-datum term, gradient and Hessian evaluations), set-up
//! and re-centring passes included.

pub mod cv_order;
pub mod fig7;
pub mod tables;

use serde_json::{Value, json};
use tallmc_core::{LinearPredictor, LogPriorHessian, ParameterNames, TermHessians};
use tallmc_diagnostics::{Draws, Summary, ess_coda, summarize};
pub use tallmc_estimators::CvOrder;
use tallmc_samplers::sink::{ChainFooter, ChainHeader, DrawRecord, DrawSink, MemorySink};
use tallmc_samplers::{
    ChainOutput, Driver, HmcEcs, HmcEcsConfig, HmcEcsStats, HmcEcsTuning, RunConfig,
};

use crate::part::{Part, Suite, timed};
use crate::{Context, Mode, Reporter, Result};

/// Seed of every data set of the suite (fixed: the data set is part of the problem; `--seed`
/// changes the chains only).
pub const DATA_SEED: u64 = 1;

/// Everything the suite measured (the JSON summary is its [`Suite::summary`]).
#[derive(Debug)]
pub struct Hmcecs {
    /// Mode.
    pub mode: Mode,
    /// Seed of the chains.
    pub seed: u64,
    /// Fig. 7.
    pub fig7: fig7::Fig7,
    /// Figs. 8–9.
    pub cv_order: cv_order::CvOrders,
    /// Tables 1–2 and Fig. 2.
    pub tables: tables::Tables,
}

impl Suite for Hmcecs {
    const NAME: &'static str = "hmcecs";
    const TITLE: &'static str = "HMC with energy conserving subsampling (Dang et al. 2019)";
    const PAPER: &'static str = "paper (Dang et al. 2019)";

    /// Runs the parts.
    fn compute(ctx: &Context<'_>) -> Result<Self> {
        let fig7 = timed(ctx, "hmcecs", "Fig. 7 scaling", || fig7::compute(ctx))?;
        let cv_order =
            timed(ctx, "hmcecs", "Figs. 8-9 control-variate order", || cv_order::compute(ctx))?;
        let tables = timed(ctx, "hmcecs", "Tables 1-2 and Fig. 2", || tables::compute(ctx))?;
        Ok(Hmcecs { mode: ctx.mode, seed: ctx.seed, fig7, cv_order, tables })
    }

    fn parts(&self) -> Vec<&dyn Part> {
        vec![&self.fig7, &self.cv_order, &self.tables]
    }

    fn summary(&self) -> Value {
        json!({
            "suite": "hmcecs",
            "mode": self.mode,
            "seed": self.seed,
            "data_seed": DATA_SEED,
            "fig7_scaling": self.fig7.summary(),
            "fig89_cv_order": self.cv_order.summary(),
            "tables12_fig2": self.tables.summary(),
        })
    }

    fn intro(&self) -> String {
        format!(
            "Mode `{}`, seed {} (data seed {DATA_SEED}). Perturbed HMC-ECS: HMC-within-Gibbs on \
             (θ, u) targeting exp(ℓ̂ − σ̂²/2) p(θ) with Taylor control variates of order 0, 1 or \
             2 around θ*, u redrawn in G = 100 blocks, εL = 1.2, ε by dual averaging to an \
             acceptance statistic of 0.8, mass matrix from the Hessian of the log posterior at \
             θ*. Cost is counted in per-datum evaluations by the kernels.",
            self.mode, self.seed
        )
    }
}

/// A sink keeping the draws in memory ([`MemorySink`]) and the `sigma2__` stat (σ̂²_m, the
/// estimated V[ℓ̂]) of every recorded iteration — warmup included when the run saves warmup.
#[derive(Debug, Clone, Default)]
pub struct TraceSink {
    /// The draws and post-warmup stats.
    pub memory: MemorySink<HmcEcsStats>,
    /// σ̂²_m at every recorded iteration, in order.
    pub sigma2: Vec<f64>,
}

impl DrawSink<HmcEcsStats> for TraceSink {
    fn begin(&mut self, header: &ChainHeader<'_>) -> std::io::Result<()> {
        self.sigma2.reserve(header.num_warmup + header.num_draws);
        self.memory.begin(header)
    }
    fn end_warmup(&mut self, adaptation: &[String]) -> std::io::Result<()> {
        self.memory.end_warmup(adaptation)
    }
    fn record(&mut self, draw: &DrawRecord<'_, HmcEcsStats>) -> std::io::Result<()> {
        self.sigma2.push(draw.stats.variance);
        self.memory.record(draw)
    }
    fn finish(&mut self, footer: &ChainFooter) -> std::io::Result<()> {
        self.memory.finish(footer)
    }
}

/// A finished HMC-ECS run: the chains, per-coordinate summaries and inefficiency factors.
#[derive(Debug)]
pub struct EcsRun {
    /// The chains.
    pub chains: Vec<ChainOutput<TraceSink, HmcEcsTuning>>,
    /// Per-coordinate summaries of the post-warmup draws, all chains.
    pub summaries: Vec<Summary>,
    /// Per-coordinate inefficiency factor IF = draws / ESS, ESS by coda's `effectiveSize`
    /// summed over chains (the paper's measure).
    pub inefficiency: Vec<f64>,
}

impl EcsRun {
    /// Mean of a stat column over every chain's post-warmup draws (NaN if absent).
    pub fn mean_stat(&self, column: &str) -> f64 {
        crate::chains::pooled_mean(self.chains.iter().map(|c| c.sink.memory.stat(column)))
    }

    /// The adapted step size ε, averaged over chains.
    pub fn step_size(&self) -> f64 {
        self.mean_stat("stepsize__")
    }

    /// Mean acceptance statistic of the θ-step after warmup.
    pub fn accept(&self) -> f64 {
        self.mean_stat("accept_stat__")
    }

    /// Mean acceptance statistic of the u-step after warmup.
    pub fn u_accept(&self) -> f64 {
        self.mean_stat("u_accept_stat__")
    }

    /// Mean σ̂²_m (the estimated V[ℓ̂]) after warmup.
    pub fn sigma2(&self) -> f64 {
        self.mean_stat("sigma2__")
    }

    /// Mean leapfrog steps per iteration after warmup.
    pub fn n_leapfrog(&self) -> f64 {
        self.mean_stat("n_leapfrog__")
    }

    /// The subsample size m (mean over chains; every chain tunes its own).
    pub fn subsample_size(&self) -> f64 {
        self.chains.iter().map(|c| c.report.mean_batch_size).sum::<f64>() / self.chains.len() as f64
    }

    /// Divergent transitions after warmup.
    pub fn divergences(&self) -> usize {
        self.chains.iter().map(|c| c.report.divergences).sum()
    }

    /// Mean over coordinates of the inefficiency factor.
    pub fn mean_inefficiency(&self) -> f64 {
        self.inefficiency.iter().sum::<f64>() / self.inefficiency.len() as f64
    }

    /// Largest inefficiency factor over coordinates.
    pub fn max_inefficiency(&self) -> f64 {
        self.inefficiency.iter().copied().fold(f64::NAN, f64::max)
    }

    /// Per-datum evaluations (all kinds, warmup and set-up included) per post-warmup draw.
    pub fn evals_per_draw(&self) -> f64 {
        let total: u64 = self
            .chains
            .iter()
            .map(|c| c.report.warmup_evals.total() + c.report.sampling_evals.total())
            .sum();
        let draws: usize = self.chains.iter().map(|c| c.sink.memory.num_draws()).sum();
        total as f64 / draws as f64
    }
}

/// Runs perturbed HMC-ECS with `config` on `model` (rank-one difference engine), draws and the
/// σ̂² trace kept in memory, then summarizes every coordinate.
pub(crate) fn run_ecs<M>(
    model: &M, inits: &[Vec<f64>], run: RunConfig, config: &HmcEcsConfig, reporter: &dyn Reporter,
    label: &str,
) -> Result<EcsRun>
where
    M: LinearPredictor + TermHessians + LogPriorHessian + ParameterNames + Sync,
{
    let names = model.parameter_names();
    let total = ((run.num_warmup + run.num_draws) * run.num_chains) as u64;
    let task = reporter.task(label, total);
    let sinks = (0..run.num_chains).map(|_| TraceSink::default()).collect();
    let chains = Driver::new(run).parameter_names(names.clone()).progress(&*task).run(
        model,
        inits,
        &HmcEcs::new(config.clone())?,
        sinks,
    )?;
    drop(task);
    let d = names.len();
    let draws: Vec<&[f64]> = chains.iter().map(|c| c.sink.memory.draws.as_slice()).collect();
    let summaries = summarize(&names, &Draws::new(&draws, d)?)?;
    let total_draws = run.num_draws * run.num_chains;
    let mut inefficiency = Vec::with_capacity(d);
    for j in 0..d {
        let coord: Vec<Vec<f64>> = chains.iter().map(|c| c.sink.memory.coordinate(j)).collect();
        let ess = ess_coda(&coord)?;
        inefficiency.push(if ess > 0.0 { total_draws as f64 / ess } else { f64::INFINITY });
    }
    Ok(EcsRun { chains, summaries, inefficiency })
}

/// Least-squares slope of y on x with its standard error (NaN with fewer than 3 points).
pub fn slope_with_se(x: &[f64], y: &[f64]) -> (f64, f64) {
    let k = x.len().min(y.len());
    if k < 2 {
        return (f64::NAN, f64::NAN);
    }
    let kf = k as f64;
    let mx = x[..k].iter().sum::<f64>() / kf;
    let my = y[..k].iter().sum::<f64>() / kf;
    let sxx: f64 = x[..k].iter().map(|v| (v - mx) * (v - mx)).sum();
    let sxy: f64 = x[..k].iter().zip(&y[..k]).map(|(a, b)| (a - mx) * (b - my)).sum();
    let slope = sxy / sxx;
    if k < 3 {
        return (slope, f64::NAN);
    }
    let rss: f64 =
        x[..k].iter().zip(&y[..k]).map(|(a, b)| (b - my - slope * (a - mx)).powi(2)).sum();
    (slope, (rss / (kf - 2.0) / sxx).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slope_and_standard_error_of_a_line_with_noise() {
        let x = [0.0, 1.0, 2.0, 3.0];
        let (b, se) = slope_with_se(&x, &[1.0, 3.0, 5.0, 7.0]);
        assert!((b - 2.0).abs() < 1e-12 && se.abs() < 1e-12);
        // y = 2x + (1, −1, −1, 1): the noise is orthogonal to x − x̄ and has mean 0, so the
        // slope stays 2, the residuals are the noise (rss = 4), and se = √(rss/(k − 2)/Sxx).
        let (b, se) = slope_with_se(&x, &[1.0, 1.0, 3.0, 7.0]);
        assert!((b - 2.0).abs() < 1e-12);
        assert!((se - (4.0f64 / 2.0 / 5.0).sqrt()).abs() < 1e-12);
    }
}
