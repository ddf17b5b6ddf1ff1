//! Where trajectory segments go: the continuous-time driver hands every post-warmup segment
//! to a [`SegmentSink`].
//!
//! * [`SkeletonSink`] writes the skeleton (event times, positions, velocities) to CSV, and
//!   [`MemorySkeleton`] keeps the same rows in memory;
//! * [`GridDraws`] turns the trajectory into equally spaced draws x(kΔ) for any
//!   [`DrawSink`](crate::sink::DrawSink) — the only place where a PDMP makes draws;
//! * [`TimeAverageSink`] accumulates exact time averages with batch-means MCSE
//!   ([`tallmc_diagnostics::continuous`]);
//! * [`crate::sink::Tee`], `Option<S>`, `Box<S>` and `&mut S` combine them.

mod averages;
mod grid;
mod skeleton;
mod skeleton_csv;

pub use averages::{TestFn, TimeAverageSink};
pub use grid::{GridDraws, GridStats};
pub use skeleton::{MemorySkeleton, SkeletonEvent};
pub use skeleton_csv::SkeletonSink;

use std::io;
use std::path::Path;

use serde::Serialize;
use tallmc_core::{EventTotals, Segment, SegmentStats};

use crate::budget::Budget;
use crate::sinks::draws::Tee;

/// What a segment sink learns before the first segment of a chain (at the end of warmup).
#[derive(Debug, Clone)]
pub struct SegmentHeader<'a> {
    /// Chain number (0-based).
    pub chain: usize,
    /// Master seed of the run.
    pub seed: u64,
    /// Parameter names, one per coordinate.
    pub parameter_names: &'a [String],
    /// The warmup budget (already spent).
    pub warmup: Budget,
    /// The sampling budget.
    pub sampling: Budget,
    /// Configuration as `key = value` pairs, written as comments.
    pub config: &'a [(String, String)],
    /// The comment lines of the chain's tuning at the end of warmup
    /// ([`PdmpChain::tuning`](tallmc_core::PdmpChain::tuning)).
    pub adaptation: &'a [String],
}

/// What a segment sink learns after the last segment of a chain.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SegmentFooter {
    /// Counts of the warmup steps.
    pub warmup: EventTotals,
    /// Counts of the sampling steps.
    pub sampling: EventTotals,
    /// Trajectory time of warmup.
    pub warmup_time: f64,
    /// Trajectory time of sampling (the sum of the sampled segments' durations).
    pub sampling_time: f64,
    /// Wall time of initialization and warmup, seconds.
    pub warmup_seconds: f64,
    /// Wall time of sampling, seconds.
    pub sampling_seconds: f64,
}

/// A destination for the post-warmup trajectory of one chain.
///
/// The driver calls [`SegmentSink::begin`] once at the end of warmup, then
/// [`SegmentSink::segment`] for every segment in order (contiguous: each starts where and when
/// the previous one ended, on a clock that is 0 at the end of warmup), then
/// [`SegmentSink::finish`]. A segment's [`SegmentStats`] are those of the kernel step that
/// produced it ([`SegmentStats::NONE`] for the remainder of the segment that crossed the end
/// of warmup). Segments are never draws: see [`GridDraws`] for draws.
pub trait SegmentSink: Send {
    /// Called once, at the end of warmup, before the first segment.
    fn begin(&mut self, header: &SegmentHeader<'_>) -> io::Result<()>;
    /// Called for every post-warmup segment.
    fn segment(&mut self, segment: &Segment<'_>, stats: &SegmentStats) -> io::Result<()>;
    /// Called once after the last segment.
    fn finish(&mut self, footer: &SegmentFooter) -> io::Result<()>;
    /// The file this sink writes, if any (for error messages).
    fn path(&self) -> Option<&Path> {
        None
    }
}

/// A pointer to a segment sink is a segment sink: every call goes to the sink it points to.
macro_rules! forward_segment_sink {
    ($($pointer:ty),+) => {$(
        impl<S: SegmentSink + ?Sized> SegmentSink for $pointer {
            fn begin(&mut self, header: &SegmentHeader<'_>) -> io::Result<()> {
                (**self).begin(header)
            }
            fn segment(&mut self, segment: &Segment<'_>, stats: &SegmentStats) -> io::Result<()> {
                (**self).segment(segment, stats)
            }
            fn finish(&mut self, footer: &SegmentFooter) -> io::Result<()> {
                (**self).finish(footer)
            }
            fn path(&self) -> Option<&Path> {
                (**self).path()
            }
        }
    )+};
}

forward_segment_sink!(Box<S>, &mut S);

/// `None` ignores everything.
impl<S: SegmentSink> SegmentSink for Option<S> {
    fn begin(&mut self, header: &SegmentHeader<'_>) -> io::Result<()> {
        self.as_mut().map_or(Ok(()), |s| s.begin(header))
    }
    fn segment(&mut self, segment: &Segment<'_>, stats: &SegmentStats) -> io::Result<()> {
        self.as_mut().map_or(Ok(()), |s| s.segment(segment, stats))
    }
    fn finish(&mut self, footer: &SegmentFooter) -> io::Result<()> {
        self.as_mut().map_or(Ok(()), |s| s.finish(footer))
    }
    fn path(&self) -> Option<&Path> {
        self.as_ref().and_then(|s| s.path())
    }
}

/// Sends every call to both sinks (the same [`Tee`] as for draw sinks).
impl<A: SegmentSink, B: SegmentSink> SegmentSink for Tee<A, B> {
    fn begin(&mut self, header: &SegmentHeader<'_>) -> io::Result<()> {
        self.0.begin(header)?;
        self.1.begin(header)
    }
    fn segment(&mut self, segment: &Segment<'_>, stats: &SegmentStats) -> io::Result<()> {
        self.0.segment(segment, stats)?;
        self.1.segment(segment, stats)
    }
    fn finish(&mut self, footer: &SegmentFooter) -> io::Result<()> {
        self.0.finish(footer)?;
        self.1.finish(footer)
    }
    fn path(&self) -> Option<&Path> {
        SegmentSink::path(&self.0).or(SegmentSink::path(&self.1))
    }
}

/// An `io::Error` of kind `InvalidData` carrying a diagnostics error's message.
pub(crate) fn data_error(e: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}
