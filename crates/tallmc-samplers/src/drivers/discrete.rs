//! The driver: runs a kernel for warmup and draws on several chains in parallel, streaming every
//! draw to a sink.
//!
//! Chain k uses its own RNG, ChaCha8 seeded with the master seed on stream k + 1
//! ([`tallmc_core::rng::chain_rng`]), so the draws of a chain do not depend on how many chains
//! run, on the order in which they finish, or on the number of threads.
//!
//! Per chain: the kernel's settings build the chain at its initial position; `begin_warmup(W)`;
//! W times `step` then `adapt`; `end_warmup`; D times `step`, each draw recorded. Every step's
//! per-datum evaluation counts are summed into the chain's report (initialization and
//! adaptation included).
//!
//! A chain stops early, with its sink finished (a CSV file stays complete and readable), when
//! the run's stop flag is raised ([`Driver::stop_when`], e.g. by Ctrl-C: the report says
//! `interrupted`), or when a step leaves the finite numbers (a non-finite coordinate of θ: the
//! run fails with [`SamplerError::NonFiniteDraw`], keeping every draw recorded before it).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use tallmc_core::rng::chain_rng;
use tallmc_core::{Chain, Error, EvalCounts, Kernel, StepStats, Tuning};

use crate::error::{Result, SamplerError};
use crate::sinks::draws::{
    ChainFooter, ChainHeader, DrawRecord, DrawSink, MemorySink, stat_column_names,
};

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
    /// `num_chains` chains of `num_warmup` warmup iterations (not kept) and `num_draws` draws,
    /// from the master seed `seed`.
    pub fn new(num_warmup: usize, num_draws: usize, num_chains: usize, seed: u64) -> Self {
        Self { num_warmup, num_draws, num_chains, seed, save_warmup: false }
    }

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

/// The step stats of the chains kernel `K` builds on model `M`.
pub type StatsOf<K, M> = <<K as Kernel<M>>::Chain as Chain<M>>::Stats;

/// The tuning of the chains kernel `K` builds on model `M`.
pub type TuningOf<K, M> = <<K as Kernel<M>>::Chain as Chain<M>>::Tuning;

/// One chain of kernel `K` on model `M` with its draws and typed stats in memory.
pub type InMemory<K, M> = ChainOutput<MemorySink<StatsOf<K, M>>, TuningOf<K, M>>;

/// Totals of one chain, with the kernel's typed adapted tuning `T`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChainReport<T> {
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
    /// Steps while drawing that stopped at the kernel's trajectory-length limit
    /// ([`StepStats::hit_length_limit`]).
    pub length_limit_hits: usize,
    /// Mean acceptance statistic while drawing.
    pub mean_accept_stat: f64,
    /// Mean number of data points looked at per step while drawing.
    pub mean_batch_size: f64,
    /// Largest number of data points looked at in one step while drawing (0 before any draw).
    pub max_batch_size: u64,
    /// Post-warmup draws made (fewer than asked when the run was interrupted).
    pub num_draws: usize,
    /// Whether the run's stop flag ended this chain early.
    pub interrupted: bool,
    /// The kernel's adapted tuning (at the end of warmup).
    pub tuning: T,
}

/// A chain's report and its sink (with whatever the sink kept).
#[derive(Debug)]
pub struct ChainOutput<S, T> {
    /// Totals.
    pub report: ChainReport<T>,
    /// The sink, returned so that in-memory draws can be read.
    pub sink: S,
}

impl<S, T> ChainOutput<S, T> {
    /// The same chain with its sink mapped by `sink` and its tuning by `tuning` (e.g. to
    /// collect runs of different kernels in one vector).
    pub fn map<S2, T2>(
        self, sink: impl FnOnce(S) -> S2, tuning: impl FnOnce(T) -> T2,
    ) -> ChainOutput<S2, T2> {
        let r = self.report;
        ChainOutput {
            report: ChainReport {
                chain: r.chain,
                warmup_evals: r.warmup_evals,
                sampling_evals: r.sampling_evals,
                warmup_seconds: r.warmup_seconds,
                sampling_seconds: r.sampling_seconds,
                warmup_divergences: r.warmup_divergences,
                divergences: r.divergences,
                length_limit_hits: r.length_limit_hits,
                mean_accept_stat: r.mean_accept_stat,
                mean_batch_size: r.mean_batch_size,
                max_batch_size: r.max_batch_size,
                num_draws: r.num_draws,
                interrupted: r.interrupted,
                tuning: tuning(r.tuning),
            },
            sink: sink(self.sink),
        }
    }
}

/// What the draw driver and the continuous-time driver take besides their budgets (parameter
/// names, configuration lines, progress, stop flag), and the checks and the parallel loop over
/// chains they share.
pub(crate) struct RunOptions<'a> {
    /// Names of the parameters (empty: `theta.1`, …).
    pub(crate) parameter_names: Vec<String>,
    /// Configuration lines `key = value` handed to the sinks.
    pub(crate) comments: Vec<(String, String)>,
    pub(crate) progress: &'a dyn Progress,
    pub(crate) stop: Option<&'a AtomicBool>,
}

impl RunOptions<'_> {
    /// Default names, no comments, no progress, no stop flag.
    pub(crate) fn new() -> Self {
        Self {
            parameter_names: Vec::new(),
            comments: Vec::new(),
            progress: &NoProgress,
            stop: None,
        }
    }

    /// Whether the stop flag is raised.
    pub(crate) fn stopped(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// Checks `inits` (one per chain or one for all, of one length) and the number of sinks
    /// against `num_chains`; returns the parameter names (the given ones, of the initial
    /// positions' length, or `theta.1`, …).
    fn parameter_names_for(
        &self, num_chains: usize, inits: &[Vec<f64>], num_sinks: usize,
    ) -> Result<Vec<String>> {
        if inits.len() != num_chains && inits.len() != 1 {
            return Err(Error::dimension(
                "initial positions (one per chain)",
                num_chains,
                inits.len(),
            )
            .into());
        }
        if num_sinks != num_chains {
            return Err(Error::dimension("sinks (one per chain)", num_chains, num_sinks).into());
        }
        let dim = inits[0].len();
        if let Some(k) = inits.iter().position(|x| x.len() != dim) {
            return Err(Error::dimension(
                format!("initial position of chain {k}"),
                dim,
                inits[k].len(),
            )
            .into());
        }
        let names: Vec<String> = if self.parameter_names.is_empty() {
            (1..=dim).map(|j| format!("theta.{j}")).collect()
        } else {
            self.parameter_names.clone()
        };
        if names.len() != dim {
            return Err(Error::dimension("parameter names", dim, names.len()).into());
        }
        Ok(names)
    }

    /// Runs `run(chain, initial position, sink)` for every chain in parallel after checking
    /// the inputs (as [`Self::parameter_names_for`], whose names `run` receives); the outputs
    /// in chain order, or the first failing chain's error in chain order, whichever thread
    /// failed first: the same error for the same input (rayon's `collect` into a `Result`
    /// returns any one).
    pub(crate) fn run_chains<S, O, F>(
        &self, num_chains: usize, inits: &[Vec<f64>], sinks: Vec<S>, run: F,
    ) -> Result<Vec<O>>
    where
        S: Send,
        O: Send,
        F: Fn(usize, &[f64], &[String], S) -> Result<O> + Sync,
    {
        let names = self.parameter_names_for(num_chains, inits, sinks.len())?;
        // Through `map_owned`, not a rayon iterator here: this function is instantiated for
        // every kernel, model and sink, and rayon's machinery with it (see
        // `tallmc_core::parallel`).
        tallmc_core::parallel::map_owned(sinks, |chain, sink| {
            let init = if inits.len() == 1 { &inits[0] } else { &inits[chain] };
            run(chain, init, &names, sink)
        })
        .into_iter()
        .collect()
    }
}

/// Runs chains of a kernel on several threads, the settings of a run being `C`: the draw driver
/// [`Driver`] (`C` = [`RunConfig`]) and the continuous-time driver
/// [`ContinuousDriver`](crate::ContinuousDriver) (`C` =
/// [`ContinuousRunConfig`](crate::ContinuousRunConfig)) are this builder with their own `run`.
pub struct Runner<'a, C> {
    pub(crate) config: C,
    pub(crate) options: RunOptions<'a>,
}

impl<'a, C> Runner<'a, C> {
    /// A driver for `config` (validated in `run`).
    pub fn new(config: C) -> Self {
        Self { config, options: RunOptions::new() }
    }

    /// Names of the parameters (default `theta.1`, …).
    pub fn parameter_names(mut self, names: Vec<String>) -> Self {
        self.options.parameter_names = names;
        self
    }

    /// Configuration lines `key = value` handed to the sinks (CSV comments).
    pub fn comments(mut self, comments: Vec<(String, String)>) -> Self {
        self.options.comments = comments;
        self
    }

    /// Where to report progress (the draw driver after every iteration, the continuous-time
    /// driver in ticks of each phase's budget, see [`ContinuousDriver`](crate::ContinuousDriver)).
    pub fn progress(mut self, progress: &'a dyn Progress) -> Self {
        self.options.progress = progress;
        self
    }

    /// A flag that, once raised, ends every chain after its current iteration (or segment),
    /// finishing its sink (files stay complete and readable); the reports say `interrupted`
    /// and how far each chain went.
    pub fn stop_when(mut self, stop: &'a AtomicBool) -> Self {
        self.options.stop = Some(stop);
        self
    }

    /// The run configuration.
    pub fn config(&self) -> &C {
        &self.config
    }
}

/// Runs chains of a [`Kernel`]: the [`Runner`] of a [`RunConfig`]. Build with [`Driver::new`],
/// then [`Driver::run`].
pub type Driver<'a> = Runner<'a, RunConfig>;

impl Runner<'_, RunConfig> {
    /// Runs `num_chains` chains of `kernel` in parallel. `inits` holds one initial position per
    /// chain (or a single one shared by all); `sinks` holds one sink per chain. Returns the
    /// chains' reports and sinks in chain order.
    pub fn run<M, K, S>(
        &self, model: &M, inits: &[Vec<f64>], kernel: &K, sinks: Vec<S>,
    ) -> Result<Vec<ChainOutput<S, TuningOf<K, M>>>>
    where
        M: Sync + ?Sized,
        K: Kernel<M>,
        S: DrawSink<StatsOf<K, M>>,
    {
        self.run_chains(model, inits, sinks, |_, init, rng| kernel.build_chain(model, init, rng))
    }

    fn run_chains<M, C, B, S>(
        &self, model: &M, inits: &[Vec<f64>], sinks: Vec<S>, build: B,
    ) -> Result<Vec<ChainOutput<S, C::Tuning>>>
    where
        M: Sync + ?Sized,
        C: Chain<M>,
        B: Fn(usize, &[f64], &mut ChaCha8Rng) -> tallmc_core::Result<C> + Sync,
        S: DrawSink<C::Stats>,
    {
        let c = &self.config;
        c.validate()?;
        let columns = stat_column_names::<C::Stats>()?;
        self.options.run_chains(c.num_chains, inits, sinks, |chain, init, names, sink| {
            let mut rng = chain_rng(c.seed, chain);
            let start = Instant::now();
            let built = build(chain, init, &mut rng)
                .map_err(|source| SamplerError::Init { chain, source })?;
            let run = ChainRun { driver: self, model, chain, names, columns: &columns };
            run.run(built, rng, start, sink)
        })
    }
}

/// What one chain's loop needs from the run.
struct ChainRun<'r, 'a, M: ?Sized> {
    driver: &'r Driver<'a>,
    model: &'r M,
    chain: usize,
    names: &'r [String],
    columns: &'r [String],
}

impl<M: ?Sized> ChainRun<'_, '_, M> {
    fn stopped(&self) -> bool {
        self.driver.options.stopped()
    }

    /// The first non-finite coordinate of θ after a step, as an error.
    fn check_finite(&self, position: &[f64], iteration: usize) -> Result<()> {
        match position.iter().position(|x| !x.is_finite()) {
            None => Ok(()),
            Some(index) => Err(SamplerError::NonFiniteDraw {
                chain: self.chain,
                iteration,
                parameter: self.names[index].clone(),
                value: position[index],
            }),
        }
    }

    fn run<C, S>(
        &self, mut kernel: C, mut rng: ChaCha8Rng, start: Instant, mut sink: S,
    ) -> Result<ChainOutput<S, C::Tuning>>
    where
        C: Chain<M>,
        S: DrawSink<C::Stats>,
    {
        let (chain, model) = (self.chain, self.model);
        let c = self.driver.config;
        let sink_err = |sink: &S, source| SamplerError::Sink {
            chain,
            path: sink.path().map(|p| p.to_path_buf()),
            source,
        };
        let header = ChainHeader {
            chain,
            seed: c.seed,
            parameter_names: self.names,
            stat_columns: self.columns,
            num_warmup: c.num_warmup,
            num_draws: c.num_draws,
            save_warmup: c.save_warmup,
            config: &self.driver.options.comments,
        };
        sink.begin(&header).map_err(|e| sink_err(&sink, e))?;
        let total = c.num_warmup + c.num_draws;
        let mut report = ChainReport {
            chain,
            warmup_evals: EvalCounts::ZERO,
            sampling_evals: EvalCounts::ZERO,
            warmup_seconds: 0.0,
            sampling_seconds: 0.0,
            warmup_divergences: 0,
            divergences: 0,
            length_limit_hits: 0,
            mean_accept_stat: f64::NAN,
            mean_batch_size: f64::NAN,
            max_batch_size: 0,
            num_draws: 0,
            interrupted: false,
            tuning: kernel.tuning(),
        };
        // Ends the chain early: finish the sink so that what it wrote stays readable.
        let finish = |sink: &mut S, report: &ChainReport<C::Tuning>| {
            let footer = ChainFooter {
                warmup_seconds: report.warmup_seconds,
                sampling_seconds: report.sampling_seconds,
                warmup_evals: report.warmup_evals,
                sampling_evals: report.sampling_evals,
            };
            sink.finish(&footer)
        };
        kernel.begin_warmup(c.num_warmup);
        for it in 0..c.num_warmup {
            if self.stopped() {
                report.interrupted = true;
                break;
            }
            let fail = |source| SamplerError::Chain { chain, iteration: it, source };
            let stats = kernel.step(model, &mut rng).map_err(fail)?;
            report.warmup_evals += stats.evals();
            report.warmup_divergences += usize::from(stats.divergent());
            kernel.adapt(model, &stats, &mut rng).map_err(fail)?;
            if let Err(e) = self.check_finite(kernel.position(), it) {
                report.warmup_seconds = start.elapsed().as_secs_f64();
                finish(&mut sink, &report).map_err(|e| sink_err(&sink, e))?;
                return Err(e);
            }
            if c.save_warmup {
                let rec = DrawRecord {
                    iteration: it,
                    warmup: true,
                    log_density: kernel.log_density(),
                    stats: &stats,
                    position: kernel.position(),
                };
                sink.record(&rec).map_err(|e| sink_err(&sink, e))?;
            }
            self.driver.options.progress.update(chain, it + 1, total);
        }
        kernel.end_warmup();
        report.tuning = kernel.tuning();
        sink.end_warmup(&report.tuning.comment_lines()).map_err(|e| sink_err(&sink, e))?;
        report.warmup_seconds = start.elapsed().as_secs_f64();
        let sampling_start = Instant::now();
        let (mut accept_sum, mut batch_sum) = (0.0, 0.0);
        for k in 0..c.num_draws {
            if report.interrupted || self.stopped() {
                report.interrupted = true;
                break;
            }
            let it = c.num_warmup + k;
            let stats = kernel.step(model, &mut rng).map_err(|source| SamplerError::Chain {
                chain,
                iteration: it,
                source,
            })?;
            report.sampling_evals += stats.evals();
            report.divergences += usize::from(stats.divergent());
            report.length_limit_hits += usize::from(stats.hit_length_limit());
            if let Err(e) = self.check_finite(kernel.position(), it) {
                report.sampling_seconds = sampling_start.elapsed().as_secs_f64();
                finish(&mut sink, &report).map_err(|e| sink_err(&sink, e))?;
                return Err(e);
            }
            accept_sum += stats.accept_stat();
            batch_sum += stats.batch_size() as f64;
            report.max_batch_size = report.max_batch_size.max(stats.batch_size());
            report.num_draws += 1;
            let rec = DrawRecord {
                iteration: it,
                warmup: false,
                log_density: kernel.log_density(),
                stats: &stats,
                position: kernel.position(),
            };
            sink.record(&rec).map_err(|e| sink_err(&sink, e))?;
            self.driver.options.progress.update(chain, it + 1, total);
        }
        report.sampling_seconds = sampling_start.elapsed().as_secs_f64();
        if report.num_draws > 0 {
            report.mean_accept_stat = accept_sum / report.num_draws as f64;
            report.mean_batch_size = batch_sum / report.num_draws as f64;
        }
        finish(&mut sink, &report).map_err(|e| sink_err(&sink, e))?;
        Ok(ChainOutput { report, sink })
    }
}

/// Runs chains of `kernel` into [`MemorySink`]s: the convenient form for tests and library
/// users.
pub fn sample_in_memory<M, K>(
    model: &M, config: RunConfig, inits: &[Vec<f64>], kernel: &K,
) -> Result<Vec<InMemory<K, M>>>
where
    M: Sync + ?Sized,
    K: Kernel<M>,
{
    let sinks = (0..config.num_chains).map(|_| MemorySink::new()).collect();
    Driver::new(config).run(model, inits, kernel, sinks)
}
