//! Everything in memory: time averages, skeleton and (optionally) grid draws of each chain.

use std::io;

use tallmc_core::{PdmpKernel, Segment, SegmentStats};

use tallmc_diagnostics::continuous::{ContinuousSummary, TimeAverageConfig, summarize_continuous};

use super::run::{ContinuousChainOutput, ContinuousDriver, ContinuousRunConfig, PdmpTuningOf};
use super::sink::{
    GridDraws, MemorySkeleton, SegmentFooter, SegmentHeader, SegmentSink, TimeAverageSink,
};
use crate::error::Result;
use crate::sinks::draws::MemorySink;
use crate::sinks::segments::GridStats;

/// Options of [`sample_trajectories_in_memory`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct InMemoryOptions {
    /// Grid step Δ of the grid draws; `None`: the sampling budget's `grid_step` if it is
    /// [`Budget::Draws`](super::Budget::Draws), else no grid draws.
    pub grid_step: Option<f64>,
    /// Options of the time averages (batches, cross moments).
    pub averages: TimeAverageConfig,
    /// Keep rejected proposals and horizons in the skeleton too.
    pub skeleton_non_events: bool,
}

/// One chain's trajectory in memory: exact time averages, the skeleton and, if asked, grid
/// draws (a [`MemorySink`] behind [`GridDraws`]).
#[derive(Debug)]
pub struct MemoryTrajectory {
    /// Exact time averages of x.
    pub averages: TimeAverageSink,
    /// The skeleton.
    pub skeleton: MemorySkeleton,
    /// Grid draws, when a grid step was given.
    pub grid: Option<GridDraws<MemorySink<GridStats>>>,
}

impl MemoryTrajectory {
    /// Empty sinks for `options`.
    ///
    /// # Errors
    /// An invalid grid step or batch configuration.
    pub fn new(options: &InMemoryOptions) -> tallmc_core::Result<Self> {
        let averages = TimeAverageSink::new(options.averages).map_err(|e| {
            tallmc_core::Error::invalid("time average options", e, "a valid BatchConfig")
        })?;
        let grid = match options.grid_step {
            Some(step) => Some(GridDraws::new(MemorySink::new(), step)?),
            None => None,
        };
        let skeleton = MemorySkeleton::new().with_non_events(options.skeleton_non_events);
        Ok(Self { averages, skeleton, grid })
    }

    /// The grid draws (`None` without a grid).
    pub fn draws(&self) -> Option<&MemorySink<GridStats>> {
        self.grid.as_ref().map(GridDraws::inner)
    }
}

impl SegmentSink for MemoryTrajectory {
    fn begin(&mut self, header: &SegmentHeader<'_>) -> io::Result<()> {
        self.averages.begin(header)?;
        self.skeleton.begin(header)?;
        self.grid.begin(header)
    }
    fn segment(&mut self, segment: &Segment<'_>, stats: &SegmentStats) -> io::Result<()> {
        self.averages.segment(segment, stats)?;
        self.skeleton.segment(segment, stats)?;
        self.grid.segment(segment, stats)
    }
    fn finish(&mut self, footer: &SegmentFooter) -> io::Result<()> {
        self.averages.finish(footer)?;
        self.skeleton.finish(footer)?;
        self.grid.finish(footer)
    }
}

/// Runs chains into [`MemoryTrajectory`] sinks: the convenient form for tests and library
/// users. With `options.grid_step` = `None` and a [`Budget::Draws`](super::Budget::Draws)
/// sampling budget, the grid draws use the budget's step (so there are exactly `count` of
/// them per chain).
///
/// # Errors
/// As [`ContinuousDriver::run`], plus an invalid grid step or batch configuration.
pub fn sample_trajectories_in_memory<M, K>(
    model: &M, config: ContinuousRunConfig, inits: &[Vec<f64>], kernel: &K,
    options: InMemoryOptions,
) -> Result<Vec<ContinuousChainOutput<MemoryTrajectory, PdmpTuningOf<K, M>>>>
where
    M: Sync + ?Sized,
    K: PdmpKernel<M>,
{
    let options =
        InMemoryOptions { grid_step: options.grid_step.or(config.sampling.grid_step()), ..options };
    let sinks = (0..config.num_chains)
        .map(|_| MemoryTrajectory::new(&options))
        .collect::<tallmc_core::Result<Vec<_>>>()?;
    ContinuousDriver::new(config).run(model, inits, kernel, sinks)
}

/// Per-coordinate summaries of the chains' exact time averages, pooled
/// ([`summarize_continuous`]).
///
/// # Errors
/// No chains, or a chain with no sampled time.
pub fn summarize_trajectories<T>(
    chains: &[ContinuousChainOutput<MemoryTrajectory, T>],
) -> tallmc_diagnostics::Result<Vec<ContinuousSummary>> {
    let avgs = chains
        .iter()
        .map(|c| c.sink.averages.averages().ok_or(tallmc_diagnostics::Error::NoChains))
        .collect::<tallmc_diagnostics::Result<Vec<_>>>()?;
    let names = chains.first().map_or(&[][..], |c| c.sink.averages.parameter_names());
    summarize_continuous(names, &avgs)
}
