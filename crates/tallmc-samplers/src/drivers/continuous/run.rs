//! What a continuous-time run is given and what it returns: the budgets ([`ContinuousRunConfig`])
//! and each chain's report and sink ([`ContinuousChainOutput`]).

use serde::Serialize;
use tallmc_core::{Error, EventTotals, PdmpChain, PdmpKernel};

use crate::budget::{Budget, Phase};
use crate::drivers::discrete::Runner;

/// Budgets, chains and seed of a continuous-time run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ContinuousRunConfig {
    /// Warmup (adaptation) budget; may be zero.
    pub warmup: Budget,
    /// Sampling budget; must not be zero.
    pub sampling: Budget,
    /// Number of chains (≥ 1).
    pub num_chains: usize,
    /// Master seed.
    pub seed: u64,
    /// Zero-duration segments allowed in a row before the chain is declared stalled (≥ 1): a
    /// guard against a kernel that stops moving (a zero duration is legitimate now and then,
    /// e.g. two Zig-Zag flips at the same time).
    pub max_zero_duration_steps: u64,
}

impl Default for ContinuousRunConfig {
    /// 1 000 warmup events, 10 000 sampling events, 4 chains, seed 1, stall limit 1 000.
    fn default() -> Self {
        Self {
            warmup: Budget::Events(1_000),
            sampling: Budget::Events(10_000),
            num_chains: 4,
            seed: 1,
            max_zero_duration_steps: DEFAULT_MAX_ZERO_DURATION_STEPS,
        }
    }
}

/// Default of [`ContinuousRunConfig::max_zero_duration_steps`].
pub const DEFAULT_MAX_ZERO_DURATION_STEPS: u64 = 1_000;

impl ContinuousRunConfig {
    /// Checks the chain count, the budgets ([`Budget`]: a zero sampling budget, a negative or
    /// non-finite time, a zero or non-finite grid step are errors naming the value) and the
    /// stall limit.
    pub fn validate(&self) -> tallmc_core::Result<()> {
        if self.num_chains == 0 {
            return Err(Error::invalid("number of chains", 0, "at least 1"));
        }
        self.warmup.validate(Phase::Warmup)?;
        self.sampling.validate(Phase::Sampling)?;
        if self.max_zero_duration_steps == 0 {
            return Err(Error::invalid("max_zero_duration_steps", 0, "at least 1"));
        }
        Ok(())
    }
}

/// The tuning of the chains PDMP kernel `K` builds on model `M`.
pub type PdmpTuningOf<K, M> = <<K as PdmpKernel<M>>::Chain as PdmpChain<M>>::Tuning;

/// Totals of one continuous-time chain, with the kernel's typed tuning `T`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContinuousChainReport<T> {
    /// Chain number.
    pub chain: usize,
    /// Counts of the warmup steps (including the step that crossed the end of warmup).
    pub warmup: EventTotals,
    /// Counts of the sampling steps (every segment handed to the sink; the remainder of the
    /// segment that crossed the end of warmup counts as a segment with no work).
    pub sampling: EventTotals,
    /// Trajectory time of warmup.
    pub warmup_time: f64,
    /// Trajectory time of sampling (the sum of the sampled segments' durations).
    pub sampling_time: f64,
    /// Wall time of initialization and warmup, seconds.
    pub warmup_seconds: f64,
    /// Wall time of sampling, seconds.
    pub sampling_seconds: f64,
    /// Whether the run's stop flag ended this chain early (its budget was then not spent).
    pub interrupted: bool,
    /// The kernel's tuning at the end of warmup (its
    /// [`comment_lines`](tallmc_core::Tuning::comment_lines) are the sinks' adaptation lines).
    pub tuning: T,
}

/// A chain's report and its sink (with whatever the sink kept).
#[derive(Debug)]
pub struct ContinuousChainOutput<S, T> {
    /// Totals.
    pub report: ContinuousChainReport<T>,
    /// The sink, returned so that in-memory results can be read.
    pub sink: S,
}

impl<S, T> ContinuousChainOutput<S, T> {
    /// The same chain with its sink mapped by `sink` and its tuning by `tuning` (e.g. to
    /// collect runs of different kernels in one vector).
    pub fn map<S2, T2>(
        self, sink: impl FnOnce(S) -> S2, tuning: impl FnOnce(T) -> T2,
    ) -> ContinuousChainOutput<S2, T2> {
        let r = self.report;
        ContinuousChainOutput {
            report: ContinuousChainReport {
                chain: r.chain,
                warmup: r.warmup,
                sampling: r.sampling,
                warmup_time: r.warmup_time,
                sampling_time: r.sampling_time,
                warmup_seconds: r.warmup_seconds,
                sampling_seconds: r.sampling_seconds,
                interrupted: r.interrupted,
                tuning: tuning(r.tuning),
            },
            sink: sink(self.sink),
        }
    }
}

/// Runs continuous-time chains: the [`Runner`] of a [`ContinuousRunConfig`]. Build with
/// [`ContinuousDriver::new`], then [`ContinuousDriver::run`]. See the [module docs](super) for
/// what a run does. Progress is reported in [`PROGRESS_TICKS`] ticks of each phase's budget
/// (the fraction of time, events or evaluations spent): `done` counts ticks over warmup then
/// sampling, `total` is 2 · [`PROGRESS_TICKS`] (or [`PROGRESS_TICKS`] without warmup), and an
/// update is made only when a tick is completed. The stop flag ends every chain after its
/// current segment; the reports say `interrupted`, with the time and events made so far.
pub type ContinuousDriver<'a> = Runner<'a, ContinuousRunConfig>;

/// Progress ticks per phase (see [`ContinuousDriver::progress`]).
pub const PROGRESS_TICKS: usize = 1_000;
