//! Suite `confidence`: the experiments of Bardenet, Doucet & Holmes (2014), *Towards scaling up
//! Markov chain Monte Carlo: an adaptive subsampling approach* (ICML), §4 — the confidence
//! sampler (minibatch MH with a concentration-bound test) against Austerity's t-test and exact
//! Metropolis–Hastings.
//!
//! * [`toy`] — **Fig. 4**: N(μ, σ²) with flat priors on (μ, log σ) fitted to 10⁵ draws from
//!   N(0, 0.1²) and from logN(0, 2). Austerity (ε = 0.05, first batch 2 then 500; and the
//!   variant starting at 500) against the confidence sampler (empirical Bernstein–Serfling,
//!   δ = 0.01, p = 2, γ = 2) and exact MH, with the closed-form posterior of σ as the truth.
//!   Plus the **exactness check**: Austerity with ε = 0 and the confidence test with δ = 1e-300
//!   reproduce minibatch MH with the exact test draw for draw, bit for bit.
//! * [`scaling`] — **Fig. 7(b)**: the fraction of the data the confidence sampler uses at
//!   equilibrium against n on the Gaussian-mean example (y ~ N(½, 0.1²), model N(μ, 1)).
//! * [`logistic`] — **§4.2.1, Fig. 6**: logistic regression on the 2-D two-class data
//!   (n = 10⁵ quick, 10⁷ full), confidence-sampler chains against exact MH from 4 dispersed
//!   starting points: evaluations needed to reach the posterior and the fraction of the data
//!   used in the transient and at equilibrium.
//!
//! **Cost convention.** The currency is per-datum term evaluations ℓ_i(θ). A careful exact MH
//! caches ℓ(θ) of the current state and evaluates one full likelihood per iteration: N
//! evaluations (the full-data [`RandomWalkMetropolis`](tallmc_samplers::RandomWalkMetropolis)
//! does exactly this). A subsampling kernel evaluates ℓ_i at θ and at θ′ for every value l_i it
//! uses: 2t evaluations for t values. Hence a subsampling method beats exact MH only when it
//! uses less than **half** of the data per iteration (BDH 2014, §4.3).

pub mod logistic;
pub mod scaling;
pub mod toy;

use serde_json::{Value, json};
use tallmc_core::ParameterNames;
use tallmc_samplers::sink::MemorySink;
use tallmc_samplers::{ChainOutput, Driver, RunConfig};

use crate::report::Report;
use crate::{Context, Error, Mode, Reporter, Result};

/// Seed of every data set of the suite (fixed: the data set is part of the problem; `--seed`
/// changes the chains only).
pub const DATA_SEED: u64 = 1;

/// Everything the suite measured (the JSON summary is [`Confidence::summary`]).
#[derive(Debug)]
pub struct Confidence {
    /// Mode.
    pub mode: Mode,
    /// Seed of the chains.
    pub seed: u64,
    /// Fig. 4 and the exactness check.
    pub toy: toy::Toy,
    /// Fig. 7(b).
    pub scaling: scaling::Scaling,
    /// Fig. 6.
    pub logistic: logistic::Logistic,
}

/// Runs the suite: computes, writes `summary.json`, `report.md` and the figures when the
/// context asks for files, and returns the summary.
pub fn run(ctx: &Context<'_>) -> Result<Value> {
    let c = compute(ctx)?;
    let summary = c.summary();
    if ctx.write_files {
        let path = ctx.out_dir.join("summary.json");
        let text = serde_json::to_string_pretty(&summary).unwrap_or_default() + "\n";
        std::fs::write(&path, text).map_err(|source| Error::Write { path, source })?;
        toy::figures(&c.toy, ctx)?;
        scaling::figures(&c.scaling, ctx)?;
        logistic::figures(&c.logistic, ctx)?;
        report(&c).save(&ctx.out_dir.join("report.md"))?;
    }
    Ok(summary)
}

/// Runs the three parts.
pub fn compute(ctx: &Context<'_>) -> Result<Confidence> {
    let timed = |what: &str, clock: std::time::Instant| {
        ctx.reporter
            .note(&format!("confidence: {what} took {:.1} s", clock.elapsed().as_secs_f64()));
    };
    let clock = std::time::Instant::now();
    let toy = toy::compute(ctx)?;
    timed("Fig. 4 toy and exactness check", clock);
    let clock = std::time::Instant::now();
    let scaling = scaling::compute(ctx)?;
    timed("Fig. 7(b)", clock);
    let clock = std::time::Instant::now();
    let logistic = logistic::compute(ctx)?;
    timed("Fig. 6 logistic", clock);
    Ok(Confidence { mode: ctx.mode, seed: ctx.seed, toy, scaling, logistic })
}

impl Confidence {
    /// The JSON summary (the quick one is an insta snapshot after rounding).
    pub fn summary(&self) -> Value {
        json!({
            "suite": "confidence",
            "mode": self.mode,
            "seed": self.seed,
            "data_seed": DATA_SEED,
            "fig4_toy": self.toy.summary(),
            "fig7b_scaling": self.scaling.summary(),
            "fig6_logistic": self.logistic.summary(),
        })
    }
}

fn report(c: &Confidence) -> Report {
    let mut r = Report::new("Confidence sampler (Bardenet, Doucet & Holmes 2014)");
    r.paragraph(&format!(
        "Mode `{}`, seed {} (data seed {DATA_SEED}). Cost is counted in per-datum term \
         evaluations ℓ_i(θ): exact MH (full-data random-walk Metropolis, which caches ℓ(θ) of the \
         current state) pays **N per iteration**; a subsampling kernel pays **2 per value used** \
         (ℓ_i at θ and at θ′). A subsampling method therefore beats exact MH only when it uses \
         less than half of the data per iteration, as the paper says in §4.3.",
        c.mode, c.seed
    ));
    r.section("Claims and measurements");
    let mut rows = Vec::new();
    rows.extend(c.toy.claims());
    rows.extend(c.scaling.claims());
    rows.extend(c.logistic.claims());
    r.table(&["paper (BDH 2014)", "measured here", "verdict"], &rows);
    c.toy.report(&mut r);
    c.scaling.report(&mut r);
    c.logistic.report(&mut r);
    r
}

/// A mean-test error, saying it came from the mean test.
pub(crate) fn bounds_error(e: tallmc_bounds::Error) -> tallmc_core::Error {
    e.context("mean test")
}

/// Runs chains of `kernel` on `model` with the driver, draws and typed stats kept in memory,
/// progress under `label`.
pub(crate) fn run_driver<M, K>(
    model: &M,
    inits: &[Vec<f64>],
    config: RunConfig,
    kernel: &K,
    reporter: &dyn Reporter,
    label: &str,
) -> Result<Vec<tallmc_samplers::InMemory<K, M>>>
where
    M: ParameterNames + Sync + ?Sized,
    K: tallmc_core::Kernel<M>,
{
    let total = ((config.num_warmup + config.num_draws) * config.num_chains) as u64;
    let task = reporter.task(label, total);
    let sinks = (0..config.num_chains).map(|_| MemorySink::new()).collect();
    let out = Driver::new(config)
        .parameter_names(model.parameter_names())
        .progress(&*task)
        .run(model, inits, kernel, sinks)?;
    Ok(out)
}

/// The mean of a stat column over every chain's post-warmup draws (NaN if absent).
pub(crate) fn mean_stat<S: serde::Serialize, T>(
    chains: &[ChainOutput<MemorySink<S>, T>],
    column: &str,
) -> f64 {
    let (mut sum, mut count) = (0.0, 0usize);
    for c in chains {
        if let Some(v) = c.sink.stat(column) {
            sum += v.iter().sum::<f64>();
            count += v.len();
        }
    }
    if count == 0 { f64::NAN } else { sum / count as f64 }
}

/// Thins a sequence to at most `max` points, keeping the first and the last.
pub(crate) fn thin_indices(len: usize, max: usize) -> Vec<usize> {
    if len <= max || max < 2 {
        return (0..len).collect();
    }
    let step = (len - 1) as f64 / (max - 1) as f64;
    let mut out: Vec<usize> = (0..max).map(|k| (k as f64 * step).round() as usize).collect();
    out.dedup();
    out
}

/// Indices spaced evenly on a log scale in 0..len (for traces drawn on a log axis).
pub(crate) fn log_thin_indices(len: usize, max: usize) -> Vec<usize> {
    if len <= max || max < 2 {
        return (0..len).collect();
    }
    let top = (len as f64).ln();
    let mut out: Vec<usize> = (0..max)
        .map(|k| ((k as f64 / (max - 1) as f64 * top).exp() - 1.0).round() as usize)
        .map(|i| i.min(len - 1))
        .collect();
    out.dedup();
    out
}
