//! One continuous-time chain: init, warmup (split exactly at a time budget), sampling.

use std::time::Instant;

use rand::Rng;
use tallmc_core::rng::chain_rng;
use tallmc_core::{
    Error, EventKind, EventTotals, PdmpChain, PdmpKernel, Segment, SegmentStats, Tuning,
};

use super::run::{
    ContinuousChainOutput, ContinuousChainReport, ContinuousDriver, PROGRESS_TICKS, PdmpTuningOf,
};
use super::sink::{SegmentFooter, SegmentHeader, SegmentSink};
use crate::drivers::discrete::Progress;
use crate::error::{Result, SamplerError};

/// Runs chain `chain` (see the [module docs](super)).
pub(super) fn run_chain<M, K, S>(
    driver: &ContinuousDriver<'_>, model: &M, chain: usize, init: &[f64], names: &[String],
    kernel: &K, mut sink: S,
) -> Result<ContinuousChainOutput<S, PdmpTuningOf<K, M>>>
where
    M: Sync + ?Sized,
    K: PdmpKernel<M>,
    S: SegmentSink,
{
    let c = driver.config;
    let sink_err = |sink: &S, source| SamplerError::Sink {
        chain,
        path: sink.path().map(|p| p.to_path_buf()),
        source,
    };
    let mut rng = chain_rng(c.seed, chain);
    let start = Instant::now();
    let mut pdmp = kernel
        .build_chain(model, init, &mut rng)
        .map_err(|source| SamplerError::Init { chain, source })?;
    let dim = pdmp.trajectory().dim();
    if dim != names.len() {
        let source = Error::dimension("kernel state (trajectory dimension)", names.len(), dim);
        return Err(SamplerError::Init { chain, source });
    }
    let mut stepper = Stepper { chain, segment: 0, zero_run: 0, limit: c.max_zero_duration_steps };
    let mut ticker = Ticker::new(driver.options.progress, chain, !c.warmup.is_zero());

    // Warmup: step + adapt until the budget is spent (or the stop flag is raised); a time budget
    // splits the last segment.
    pdmp.begin_warmup();
    let mut interrupted = false;
    let mut warm = EventTotals::default();
    let mut warm_time = 0.0;
    let (mut rem_x, mut rem_v) = (vec![0.0; dim], vec![0.0; dim]);
    let mut remainder: Option<(f64, EventKind)> = None;
    if !c.warmup.is_zero() {
        let limit = c.warmup.time_limit();
        loop {
            if driver.options.stopped() {
                interrupted = true;
                break;
            }
            let stats = stepper.step(&mut pdmp, model, &mut rng)?;
            warm.add(&stats);
            let seg = pdmp.trajectory().last_segment();
            let done = match limit {
                Some(w) if warm_time + seg.duration >= w => {
                    let used = (w - warm_time).max(0.0);
                    let rest = seg.duration - used;
                    if rest > 0.0 {
                        seg.position_after(used, &mut rem_x);
                        rem_v.copy_from_slice(seg.velocity);
                        remainder = Some((rest, seg.end));
                    }
                    warm_time = w;
                    true
                }
                _ => {
                    warm_time += seg.duration;
                    c.warmup.reached(&warm)
                }
            };
            pdmp.adapt(model, &stats, &mut rng).map_err(|source| SamplerError::Segment {
                chain,
                segment: stepper.last(),
                source,
            })?;
            ticker.update(0, c.warmup.fraction(warm_time, &warm));
            if done {
                break;
            }
        }
    }
    pdmp.end_warmup();
    let tuning = pdmp.tuning();
    let adaptation = tuning.comment_lines();
    let warmup_seconds = start.elapsed().as_secs_f64();

    // Sampling: every segment to the sink, on a clock that starts at 0.
    let header = SegmentHeader {
        chain,
        seed: c.seed,
        parameter_names: names,
        warmup: c.warmup,
        sampling: c.sampling,
        config: &driver.options.comments,
        adaptation: &adaptation,
    };
    sink.begin(&header).map_err(|e| sink_err(&sink, e))?;
    let sampling_start = Instant::now();
    let mut clock = Clock { time: 0.0, limit: c.sampling.time_limit() };
    let mut samp = EventTotals::default();
    let mut finished = false;
    if let Some((rest, end)) = remainder {
        let none = SegmentStats::NONE;
        samp.add(&none);
        let seg =
            Segment { start_time: 0.0, duration: rest, position: &rem_x, velocity: &rem_v, end };
        finished = clock.emit(seg, &none, &mut sink).map_err(|e| sink_err(&sink, e))?;
    }
    while !finished {
        if interrupted || driver.options.stopped() {
            interrupted = true;
            break;
        }
        let stats = stepper.step(&mut pdmp, model, &mut rng)?;
        samp.add(&stats);
        let seg = pdmp.trajectory().last_segment();
        finished = clock.emit(seg, &stats, &mut sink).map_err(|e| sink_err(&sink, e))?
            || c.sampling.reached(&samp);
        ticker.update(PROGRESS_TICKS, c.sampling.fraction(clock.time, &samp));
    }
    let report = ContinuousChainReport {
        chain,
        warmup: warm,
        sampling: samp,
        warmup_time: warm_time,
        sampling_time: clock.time,
        warmup_seconds,
        sampling_seconds: sampling_start.elapsed().as_secs_f64(),
        interrupted,
        tuning,
    };
    let footer = SegmentFooter {
        warmup: report.warmup,
        sampling: report.sampling,
        warmup_time: report.warmup_time,
        sampling_time: report.sampling_time,
        warmup_seconds: report.warmup_seconds,
        sampling_seconds: report.sampling_seconds,
    };
    sink.finish(&footer).map_err(|e| sink_err(&sink, e))?;
    Ok(ContinuousChainOutput { report, sink })
}

/// Calls the kernel and guards against runaway kernels.
struct Stepper {
    chain: usize,
    /// Segments made so far (the next one's number).
    segment: u64,
    zero_run: u64,
    limit: u64,
}

impl Stepper {
    fn step<M: ?Sized, C: PdmpChain<M>, R: Rng + ?Sized>(
        &mut self, pdmp: &mut C, model: &M, rng: &mut R,
    ) -> Result<SegmentStats> {
        let (chain, segment) = (self.chain, self.segment);
        let stats = pdmp.step(model, rng).map_err(|source| SamplerError::Segment {
            chain,
            segment,
            source,
        })?;
        let tau = pdmp.trajectory().last_segment().duration;
        if !(tau.is_finite() && tau >= 0.0) {
            let source = Error::invalid("segment duration", tau, "a finite number >= 0");
            return Err(SamplerError::Segment { chain, segment, source });
        }
        if tau == 0.0 {
            self.zero_run += 1;
            if self.zero_run > self.limit {
                let (steps, limit) = (self.zero_run, self.limit);
                return Err(SamplerError::Stalled { chain, segment, steps, limit });
            }
        } else {
            self.zero_run = 0;
        }
        self.segment += 1;
        Ok(stats)
    }

    /// Number of the last segment made.
    fn last(&self) -> u64 {
        self.segment.saturating_sub(1)
    }
}

/// The sampling clock: places segments at `time`, truncates the one that crosses `limit`.
struct Clock {
    time: f64,
    limit: Option<f64>,
}

impl Clock {
    /// Hands `seg` to the sink at the clock's time (truncated at the time budget, with end kind
    /// [`EventKind::End`]); returns whether the budget is spent.
    fn emit<S: SegmentSink>(
        &mut self, seg: Segment<'_>, stats: &SegmentStats, sink: &mut S,
    ) -> std::io::Result<bool> {
        let mut s = Segment { start_time: self.time, ..seg };
        match self.limit {
            Some(t) if self.time + s.duration >= t => {
                s.duration = t - self.time;
                s.end = EventKind::End;
                sink.segment(&s, stats)?;
                self.time = t;
                Ok(true)
            }
            _ => {
                sink.segment(&s, stats)?;
                self.time += s.duration;
                Ok(false)
            }
        }
    }
}

/// Progress in ticks of each phase's budget.
struct Ticker<'a> {
    progress: &'a dyn Progress,
    chain: usize,
    last: usize,
    total: usize,
    offset_warmup: bool,
}

impl<'a> Ticker<'a> {
    fn new(progress: &'a dyn Progress, chain: usize, warmup: bool) -> Self {
        let total = if warmup { 2 * PROGRESS_TICKS } else { PROGRESS_TICKS };
        Self { progress, chain, last: 0, total, offset_warmup: warmup }
    }

    /// Reports `fraction` of the phase starting at tick `phase_start` (0 for warmup,
    /// [`PROGRESS_TICKS`] for sampling) if a new tick was completed.
    fn update(&mut self, phase_start: usize, fraction: f64) {
        let start = if self.offset_warmup { phase_start } else { 0 };
        let tick = start + (fraction * PROGRESS_TICKS as f64).floor() as usize;
        if tick > self.last {
            self.last = tick;
            self.progress.update(self.chain, tick, self.total);
        }
    }
}
