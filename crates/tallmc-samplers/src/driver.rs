//! The driver: runs a kernel for warmup and draws on several chains in parallel, streaming every
//! draw to a sink.
//!
//! Chain k uses its own RNG, ChaCha8 seeded with the master seed on stream k + 1
//! ([`tallmc_core::rng::chain_rng`]), so the draws of a chain do not depend on how many chains
//! run, on the order in which they finish, or on the number of threads.
//!
//! Per chain: `init` at the chain's initial position; `begin_warmup(W)`; W times `step` then
//! `adapt`; `end_warmup`; D times `step`, each draw recorded. Every step's per-datum evaluation
//! counts are summed into the chain's report (initialization and adaptation included).

use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;
use tallmc_core::rng::chain_rng;
use tallmc_core::{ChainState, Error, EvalCounts, Kernel, StepStats};

use crate::sink::{ChainFooter, ChainHeader, DrawRecord, DrawSink, MemorySink};
use crate::{Result, SamplerError};

/// How many chains, iterations and which seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RunConfig {
    /// Warmup (adaptation) iterations per chain; not returned unless `save_warmup`.
    pub num_warmup: usize,
    /// Post-warmup draws per chain.
    pub num_draws: usize,
    /// Number of chains.
    pub num_chains: usize,
    /// Master seed.
    pub seed: u64,
    /// Record warmup draws too.
    pub save_warmup: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        Self { num_warmup: 1000, num_draws: 1000, num_chains: 4, seed: 1, save_warmup: false }
    }
}

impl RunConfig {
    /// Checks the counts.
    pub fn validate(&self) -> tallmc_core::Result<()> {
        if self.num_chains == 0 {
            return Err(Error::invalid("number of chains", 0, "at least 1"));
        }
        if self.num_draws == 0 {
            return Err(Error::invalid("number of draws", 0, "at least 1"));
        }
        Ok(())
    }
}

/// Progress of a run, reported by every chain after every iteration.
pub trait Progress: Sync {
    /// Chain `chain` finished iteration `done` (1-based) of `total` (warmup + draws).
    fn update(&self, chain: usize, done: usize, total: usize);
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn update(&self, _chain: usize, _done: usize, _total: usize) {}
}

/// Totals of one chain.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChainReport {
    /// Chain number.
    pub chain: usize,
    /// Per-datum evaluations during initialization and warmup.
    pub warmup_evals: EvalCounts,
    /// Per-datum evaluations while drawing.
    pub sampling_evals: EvalCounts,
    /// Wall time of initialization and warmup, seconds.
    pub warmup_seconds: f64,
    /// Wall time of drawing, seconds.
    pub sampling_seconds: f64,
    /// Divergent steps during warmup.
    pub warmup_divergences: usize,
    /// Divergent steps while drawing.
    pub divergences: usize,
    /// Mean acceptance statistic while drawing.
    pub mean_accept_stat: f64,
    /// Mean number of data points looked at per step while drawing.
    pub mean_batch_size: f64,
    /// The kernel's adaptation report.
    pub adaptation: Vec<String>,
}

/// A chain's report and its sink (with whatever the sink kept).
#[derive(Debug)]
pub struct ChainOutput<S> {
    /// Totals.
    pub report: ChainReport,
    /// The sink, returned so that in-memory draws can be read.
    pub sink: S,
}

/// Runs chains. Build with [`Driver::new`], then [`Driver::run`].
pub struct Driver<'a> {
    config: RunConfig,
    parameter_names: Vec<String>,
    comments: Vec<(String, String)>,
    progress: &'a dyn Progress,
}

impl<'a> Driver<'a> {
    /// A driver for `config` (validated in `run`).
    pub fn new(config: RunConfig) -> Self {
        Self { config, parameter_names: Vec::new(), comments: Vec::new(), progress: &NoProgress }
    }

    /// Names of the parameters (default `theta.1`, …).
    pub fn parameter_names(mut self, names: Vec<String>) -> Self {
        self.parameter_names = names;
        self
    }

    /// Configuration lines `key = value` handed to the sinks (CSV comments).
    pub fn comments(mut self, comments: Vec<(String, String)>) -> Self {
        self.comments = comments;
        self
    }

    /// Where to report progress.
    pub fn progress(mut self, progress: &'a dyn Progress) -> Self {
        self.progress = progress;
        self
    }

    /// The run configuration.
    pub fn config(&self) -> &RunConfig {
        &self.config
    }

    /// Runs `num_chains` chains in parallel. `inits` holds one initial position per chain (or a
    /// single one shared by all); `make_kernel(k)` builds chain k's kernel; `sinks` holds one
    /// sink per chain. Returns the chains' reports and sinks in chain order.
    pub fn run<M, K, F, S>(
        &self,
        model: &M,
        inits: &[Vec<f64>],
        make_kernel: F,
        sinks: Vec<S>,
    ) -> Result<Vec<ChainOutput<S>>>
    where
        M: Sync + ?Sized,
        K: Kernel<M>,
        F: Fn(usize) -> tallmc_core::Result<K> + Sync,
        S: DrawSink,
    {
        let c = &self.config;
        c.validate()?;
        if inits.len() != c.num_chains && inits.len() != 1 {
            return Err(Error::dimension(
                "initial positions (one per chain)",
                c.num_chains,
                inits.len(),
            )
            .into());
        }
        if sinks.len() != c.num_chains {
            return Err(Error::dimension("sinks (one per chain)", c.num_chains, sinks.len()).into());
        }
        let dim = inits[0].len();
        let names: Vec<String> = if self.parameter_names.is_empty() {
            (1..=dim).map(|j| format!("theta.{j}")).collect()
        } else {
            self.parameter_names.clone()
        };
        if names.len() != dim {
            return Err(Error::dimension("parameter names", dim, names.len()).into());
        }
        sinks
            .into_par_iter()
            .enumerate()
            .map(|(chain, sink)| {
                let init = if inits.len() == 1 { &inits[0] } else { &inits[chain] };
                self.run_chain(model, chain, init, &names, &make_kernel, sink)
            })
            .collect::<Vec<_>>()
            // The first failing chain in chain order, whichever thread failed first: the same
            // error for the same input (rayon's `collect` into a `Result` returns any one).
            .into_iter()
            .collect()
    }

    fn run_chain<M, K, F, S>(
        &self,
        model: &M,
        chain: usize,
        init: &[f64],
        names: &[String],
        make_kernel: &F,
        mut sink: S,
    ) -> Result<ChainOutput<S>>
    where
        M: Sync + ?Sized,
        K: Kernel<M>,
        F: Fn(usize) -> tallmc_core::Result<K>,
        S: DrawSink,
    {
        let c = self.config;
        let sink_err = |sink: &S, source| SamplerError::Sink {
            chain,
            path: sink.path().map(|p| p.to_path_buf()),
            source,
        };
        let mut rng = chain_rng(c.seed, chain);
        let start = Instant::now();
        let mut kernel =
            make_kernel(chain).map_err(|source| SamplerError::Init { chain, source })?;
        let mut state = kernel
            .init(model, init, &mut rng)
            .map_err(|source| SamplerError::Init { chain, source })?;
        let header = ChainHeader {
            chain,
            seed: c.seed,
            parameter_names: names,
            stat_columns: K::Stats::COLUMNS,
            num_warmup: c.num_warmup,
            num_draws: c.num_draws,
            save_warmup: c.save_warmup,
            config: &self.comments,
        };
        sink.begin(&header).map_err(|e| sink_err(&sink, e))?;
        let total = c.num_warmup + c.num_draws;
        let mut columns = vec![0.0; K::Stats::COLUMNS.len()];
        let mut report = ChainReport {
            chain,
            warmup_evals: EvalCounts::ZERO,
            sampling_evals: EvalCounts::ZERO,
            warmup_seconds: 0.0,
            sampling_seconds: 0.0,
            warmup_divergences: 0,
            divergences: 0,
            mean_accept_stat: 0.0,
            mean_batch_size: 0.0,
            adaptation: Vec::new(),
        };
        kernel.begin_warmup(c.num_warmup);
        for it in 0..c.num_warmup {
            let fail = |source| SamplerError::Chain { chain, iteration: it, source };
            let stats = kernel.step(model, &mut state, &mut rng).map_err(fail)?;
            report.warmup_evals += stats.evals();
            report.warmup_divergences += usize::from(stats.divergent());
            kernel.adapt(model, &mut state, &stats, &mut rng).map_err(fail)?;
            if c.save_warmup {
                stats.write_columns(&mut columns);
                let rec = DrawRecord {
                    iteration: it,
                    warmup: true,
                    log_density: state.log_density(),
                    stats: &columns,
                    position: state.position(),
                };
                sink.record(&rec).map_err(|e| sink_err(&sink, e))?;
            }
            self.progress.update(chain, it + 1, total);
        }
        kernel.end_warmup();
        report.adaptation = kernel.adaptation_report();
        sink.end_warmup(&report.adaptation).map_err(|e| sink_err(&sink, e))?;
        report.warmup_seconds = start.elapsed().as_secs_f64();
        let sampling_start = Instant::now();
        let (mut accept_sum, mut batch_sum) = (0.0, 0.0);
        for k in 0..c.num_draws {
            let it = c.num_warmup + k;
            let stats = kernel
                .step(model, &mut state, &mut rng)
                .map_err(|source| SamplerError::Chain { chain, iteration: it, source })?;
            report.sampling_evals += stats.evals();
            report.divergences += usize::from(stats.divergent());
            accept_sum += stats.accept_stat();
            batch_sum += stats.batch_size() as f64;
            stats.write_columns(&mut columns);
            let rec = DrawRecord {
                iteration: it,
                warmup: false,
                log_density: state.log_density(),
                stats: &columns,
                position: state.position(),
            };
            sink.record(&rec).map_err(|e| sink_err(&sink, e))?;
            self.progress.update(chain, it + 1, total);
        }
        report.sampling_seconds = sampling_start.elapsed().as_secs_f64();
        report.mean_accept_stat = accept_sum / c.num_draws as f64;
        report.mean_batch_size = batch_sum / c.num_draws as f64;
        let footer = ChainFooter {
            warmup_seconds: report.warmup_seconds,
            sampling_seconds: report.sampling_seconds,
            warmup_evals: report.warmup_evals,
            sampling_evals: report.sampling_evals,
        };
        sink.finish(&footer).map_err(|e| sink_err(&sink, e))?;
        Ok(ChainOutput { report, sink })
    }
}

/// Runs chains into [`MemorySink`]s: the convenient form for tests and library users.
pub fn sample_in_memory<M, K, F>(
    model: &M,
    config: RunConfig,
    inits: &[Vec<f64>],
    make_kernel: F,
) -> Result<Vec<ChainOutput<MemorySink>>>
where
    M: Sync + ?Sized,
    K: Kernel<M>,
    F: Fn(usize) -> tallmc_core::Result<K> + Sync,
{
    let sinks = (0..config.num_chains).map(|_| MemorySink::new()).collect();
    Driver::new(config).run(model, inits, make_kernel, sinks)
}
