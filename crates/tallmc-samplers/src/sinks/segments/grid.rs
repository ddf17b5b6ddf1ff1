//! The discretization adapter: equally spaced draws x(kΔ) of a trajectory, for draw sinks.

use std::io;
use std::path::Path;

use serde::Serialize;
use tallmc_core::{EvalCounts, EventTotals, Segment, SegmentStats, StepStats};

use super::{SegmentFooter, SegmentHeader, SegmentSink};
use crate::budget::Budget;
use crate::sinks::draws::{ChainFooter, ChainHeader, DrawRecord, DrawSink, stat_column_names};

/// The stats of a grid draw, counting what happened since the previous grid point (columns
/// `time__`, `n_segments__`, `n_events__`, `n_proposals__`, `n_terms__`, `n_gradients__`,
/// `n_hessians__`, `n_divergent__`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct GridStats {
    /// The grid time kΔ on the sampling clock.
    pub time: f64,
    /// Kernel steps (segments) whose end lies in ((k − 1)Δ, kΔ].
    pub n_segments: u64,
    /// Velocity changes among them (bounces/flips, refreshes, divergences).
    pub n_events: u64,
    /// Thinning proposals among them.
    pub n_proposals: u64,
    /// Their per-datum evaluations.
    #[serde(rename = "n")]
    pub evals: EvalCounts,
    /// Their divergences.
    pub n_divergent: u64,
}

impl StepStats for GridStats {
    fn evals(&self) -> EvalCounts {
        self.evals
    }
    /// PDMPs have no acceptance step: NaN.
    fn accept_stat(&self) -> f64 {
        f64::NAN
    }
    fn divergent(&self) -> bool {
        self.n_divergent > 0
    }
    /// Not meaningful for a grid point: 0.
    fn batch_size(&self) -> u64 {
        0
    }
}

/// Turns a trajectory into the equally weighted draws x(Δ), x(2Δ), x(3Δ), … (on the sampling
/// clock, which is 0 at the end of warmup) and feeds them to any [`DrawSink`] —
/// [`MemorySink`](crate::sink::MemorySink), [`CsvSink`](crate::sink::CsvSink) in CmdStan's
/// layout, [`Tee`](crate::sink::Tee) — unchanged, so that ESS, R̂ and every summary of draws
/// apply.
///
/// **This is the only place where a piecewise-deterministic sampler makes equally weighted
/// draws.** The positions at events are *not* draws (events are more frequent where the
/// potential rises, so event positions over-represent high potential); the trajectory at fixed
/// times is: x(kΔ) is distributed as π at stationarity for every k. Grid draws are
/// autocorrelated (more so as Δ shrinks); for means, the exact time averages of
/// [`TimeAverageSink`](super::TimeAverageSink) are never worse.
///
/// Each draw has `lp__` = NaN (PDMPs do not evaluate the log density) and the
/// [`GridStats`]. A step's counts go to the first grid point at or after the end of
/// its segment.
///
/// With a sampling budget [`Budget::Draws`] `{ count, grid_step }` and the same Δ, exactly
/// `count` draws are delivered: the run ends at T = `count`·Δ, computed as the last grid
/// point is, and a grid point within a rounding slack (10⁻⁹ Δ + 4 ulp) of the end of the
/// final segment counts as reached. With a `Time(T)` budget there are ⌊T/Δ⌋ draws (with the
/// same slack).
#[derive(Debug)]
pub struct GridDraws<S> {
    inner: S,
    step: f64,
    next: u64,
    x: Vec<f64>,
    since: EventTotals,
    columns: Vec<String>,
}

impl<S: DrawSink<GridStats>> GridDraws<S> {
    /// Draws every `grid_step` = Δ of trajectory time into `inner`.
    ///
    /// # Errors
    /// Δ not finite and > 0.
    pub fn new(inner: S, grid_step: f64) -> tallmc_core::Result<Self> {
        if !(grid_step.is_finite() && grid_step > 0.0) {
            return Err(tallmc_core::Error::invalid("grid_step", grid_step, "a finite number > 0"));
        }
        Ok(Self {
            inner,
            step: grid_step,
            next: 1,
            x: Vec::new(),
            since: EventTotals::default(),
            columns: stat_column_names::<GridStats>()?,
        })
    }

    /// The grid step Δ.
    pub fn grid_step(&self) -> f64 {
        self.step
    }

    /// Draws delivered so far.
    pub fn num_draws(&self) -> u64 {
        self.next - 1
    }

    /// The wrapped draw sink.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Returns the wrapped draw sink.
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// Number of draws a sampling budget gives at this Δ, when it is known in advance.
    fn expected(&self, budget: &Budget) -> usize {
        match *budget {
            Budget::Draws { count, grid_step } if grid_step == self.step => count,
            Budget::Time(_) | Budget::Draws { .. } => {
                let t = budget.time_limit().unwrap_or(0.0);
                ((t + slack(t, self.step)) / self.step).floor() as usize
            }
            Budget::Events(_) | Budget::Evaluations(_) => 0,
        }
    }

    /// Records every grid point with time ≤ `limit` in `s`.
    fn emit_until(&mut self, s: &Segment<'_>, limit: f64, strict: bool) -> io::Result<()> {
        loop {
            let t = self.next as f64 * self.step;
            if t > limit || (strict && t == limit) {
                return Ok(());
            }
            let offset = (t - s.start_time).clamp(0.0, s.duration);
            s.position_after(offset, &mut self.x);
            let n = &self.since;
            let stats = GridStats {
                time: t,
                n_segments: n.segments,
                n_events: n.events(),
                n_proposals: n.proposals,
                evals: n.evals,
                n_divergent: n.divergences,
            };
            let rec = DrawRecord {
                iteration: (self.next - 1) as usize,
                warmup: false,
                log_density: f64::NAN,
                stats: &stats,
                position: &self.x,
            };
            self.inner.record(&rec)?;
            self.since = EventTotals::default();
            self.next += 1;
        }
    }
}

/// Rounding slack at the end of a run at time `t`: 10⁻⁹ Δ + 4 ulp(t).
fn slack(t: f64, step: f64) -> f64 {
    1e-9 * step + 4.0 * f64::EPSILON * t.abs()
}

impl<S: DrawSink<GridStats>> SegmentSink for GridDraws<S> {
    fn begin(&mut self, h: &SegmentHeader<'_>) -> io::Result<()> {
        self.x = vec![0.0; h.parameter_names.len()];
        self.next = 1;
        self.since = EventTotals::default();
        let header = ChainHeader {
            chain: h.chain,
            seed: h.seed,
            parameter_names: h.parameter_names,
            stat_columns: &self.columns,
            num_warmup: 0,
            num_draws: self.expected(&h.sampling),
            save_warmup: false,
            config: h.config,
        };
        self.inner.begin(&header)?;
        self.inner.end_warmup(h.adaptation)
    }

    fn segment(&mut self, s: &Segment<'_>, stats: &SegmentStats) -> io::Result<()> {
        if s.position.len() != self.x.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "segment of dimension {} for grid draws of dimension {}",
                    s.position.len(),
                    self.x.len()
                ),
            ));
        }
        let end = s.end_time();
        self.emit_until(s, end, true)?;
        self.since.add(stats);
        let limit =
            if s.end == tallmc_core::EventKind::End { end + slack(end, self.step) } else { end };
        self.emit_until(s, limit, false)
    }

    fn finish(&mut self, f: &SegmentFooter) -> io::Result<()> {
        let footer = ChainFooter {
            warmup_seconds: f.warmup_seconds,
            sampling_seconds: f.sampling_seconds,
            warmup_evals: f.warmup.evals,
            sampling_evals: f.sampling.evals,
        };
        self.inner.finish(&footer)
    }

    fn path(&self) -> Option<&Path> {
        self.inner.path()
    }
}
