//! The skeleton of a trajectory: its start, every velocity change, its end.

use std::io;

use serde::{Deserialize, Serialize};
use tallmc_core::{EventKind, Segment, SegmentStats};

use super::{SegmentFooter, SegmentHeader, SegmentSink};

/// What a skeleton row records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SkeletonEvent {
    /// The first row: the position and velocity at the start of sampling (time 0).
    Start,
    /// An event at the end of a segment: the position there and the velocity *after* it
    /// ([`EventKind::End`] for the last row: the end of the run, with the velocity of the last
    /// piece).
    Event(EventKind),
}

impl SkeletonEvent {
    /// The name written in the `event` column: `start`, or [`EventKind::name`].
    pub fn name(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::Event(k) => k.name(),
        }
    }

    /// The `coordinate` column: j + 1 for a Zig-Zag flip of coordinate j, 0 otherwise.
    pub fn coordinate(self) -> u64 {
        match self {
            Self::Event(EventKind::Flip(j)) => u64::from(j) + 1,
            _ => 0,
        }
    }
}

/// Receives skeleton rows (the CSV writer and the in-memory table).
pub(super) trait RowOut {
    fn row(&mut self, time: f64, event: SkeletonEvent, x: &[f64], v: &[f64]) -> io::Result<()>;
}

/// Turns segments into skeleton rows.
///
/// A row (tₖ, eventₖ, xₖ, vₖ) means x(t) = xₖ + vₖ (t − tₖ) until the next row. The row of an
/// event is written when the next segment arrives, because the velocity after the event is
/// that segment's velocity (and its start is the event's exact position); the end row is
/// written by `finish`. An event that ends the very last segment (a counting budget stops
/// right after it) changes nothing on [0, T]; the end row stands in for it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Rows {
    /// Also write rows for rejected proposals and bound horizons.
    pub(super) non_events: bool,
    pending: Option<EventKind>,
    started: bool,
    last_start: f64,
    last_duration: f64,
    last_x: Vec<f64>,
    last_v: Vec<f64>,
    end_x: Vec<f64>,
}

impl Rows {
    pub(super) fn begin(&mut self, dim: usize) {
        let non_events = self.non_events;
        *self = Self { non_events, ..Self::default() };
        self.last_x = vec![0.0; dim];
        self.last_v = vec![0.0; dim];
        self.end_x = vec![0.0; dim];
    }

    pub(super) fn segment(&mut self, s: &Segment<'_>, out: &mut impl RowOut) -> io::Result<()> {
        if s.position.len() != self.last_x.len() || s.velocity.len() != self.last_x.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "segment of dimension {} for a skeleton of dimension {}",
                    s.position.len(),
                    self.last_x.len()
                ),
            ));
        }
        if !self.started {
            out.row(s.start_time, SkeletonEvent::Start, s.position, s.velocity)?;
            self.started = true;
        } else if let Some(k) = self.pending {
            out.row(s.start_time, SkeletonEvent::Event(k), s.position, s.velocity)?;
        }
        self.pending = match s.end {
            k if k.changes_velocity() => Some(k),
            k @ (EventKind::Rejected | EventKind::Horizon) if self.non_events => Some(k),
            _ => None,
        };
        self.last_start = s.start_time;
        self.last_duration = s.duration;
        self.last_x.copy_from_slice(s.position);
        self.last_v.copy_from_slice(s.velocity);
        Ok(())
    }

    pub(super) fn finish(&mut self, out: &mut impl RowOut) -> io::Result<()> {
        if !self.started {
            return Ok(());
        }
        for ((e, x), v) in self.end_x.iter_mut().zip(&self.last_x).zip(&self.last_v) {
            *e = x + self.last_duration * v;
        }
        let t = self.last_start + self.last_duration;
        out.row(t, SkeletonEvent::Event(EventKind::End), &self.end_x, &self.last_v)
    }
}

/// The skeleton of one chain's post-warmup trajectory, in memory: the same rows as
/// [`SkeletonSink`](super::SkeletonSink) writes (start, every velocity change, end; optionally
/// rejected proposals and horizons).
///
/// Rows are appended with amortized growth (no allocation per segment otherwise).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemorySkeleton {
    rows: Rows,
    /// Dimension d.
    pub dim: usize,
    /// Parameter names.
    pub parameter_names: Vec<String>,
    /// Row times (sampling clock).
    pub times: Vec<f64>,
    /// Row events.
    pub events: Vec<SkeletonEvent>,
    /// Row positions, row-major (rows × d).
    pub positions: Vec<f64>,
    /// Row velocities (after the event), row-major (rows × d).
    pub velocities: Vec<f64>,
    /// Totals and timings of the chain.
    pub footer: SegmentFooter,
}

impl MemorySkeleton {
    /// An empty skeleton with velocity-change rows only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also keep rows for rejected proposals and bound horizons (velocity unchanged).
    pub fn with_non_events(mut self, yes: bool) -> Self {
        self.rows.non_events = yes;
        self
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Position of row `i`.
    pub fn position(&self, i: usize) -> &[f64] {
        &self.positions[i * self.dim..(i + 1) * self.dim]
    }

    /// Velocity of row `i`.
    pub fn velocity(&self, i: usize) -> &[f64] {
        &self.velocities[i * self.dim..(i + 1) * self.dim]
    }

    /// Writes x(t) = xᵢ + vᵢ (t − tᵢ) into `out`, row i being the last with tᵢ ≤ t (t clamped to
    /// the skeleton's time span). Returns false (and leaves `out` alone) when the skeleton is
    /// empty or `out` has the wrong length. O(log rows).
    pub fn position_at(&self, t: f64, out: &mut [f64]) -> bool {
        if self.is_empty() || out.len() != self.dim {
            return false;
        }
        let t = t.clamp(self.times[0], self.times[self.len() - 1]);
        let i = self.times.partition_point(|&ti| ti <= t).saturating_sub(1);
        let s = t - self.times[i];
        for ((o, x), v) in out.iter_mut().zip(self.position(i)).zip(self.velocity(i)) {
            *o = x + s * v;
        }
        true
    }
}

struct MemoryRows<'a> {
    times: &'a mut Vec<f64>,
    events: &'a mut Vec<SkeletonEvent>,
    positions: &'a mut Vec<f64>,
    velocities: &'a mut Vec<f64>,
}

impl RowOut for MemoryRows<'_> {
    fn row(&mut self, time: f64, event: SkeletonEvent, x: &[f64], v: &[f64]) -> io::Result<()> {
        self.times.push(time);
        self.events.push(event);
        self.positions.extend_from_slice(x);
        self.velocities.extend_from_slice(v);
        Ok(())
    }
}

impl MemorySkeleton {
    fn split(&mut self) -> (&mut Rows, MemoryRows<'_>) {
        let out = MemoryRows {
            times: &mut self.times,
            events: &mut self.events,
            positions: &mut self.positions,
            velocities: &mut self.velocities,
        };
        (&mut self.rows, out)
    }
}

impl SegmentSink for MemorySkeleton {
    fn begin(&mut self, header: &SegmentHeader<'_>) -> io::Result<()> {
        self.dim = header.parameter_names.len();
        self.parameter_names = header.parameter_names.to_vec();
        self.times.clear();
        self.events.clear();
        self.positions.clear();
        self.velocities.clear();
        self.rows.begin(self.dim);
        Ok(())
    }

    fn segment(&mut self, segment: &Segment<'_>, _stats: &SegmentStats) -> io::Result<()> {
        let (rows, mut out) = self.split();
        rows.segment(segment, &mut out)
    }

    fn finish(&mut self, footer: &SegmentFooter) -> io::Result<()> {
        self.footer = *footer;
        let (rows, mut out) = self.split();
        rows.finish(&mut out)
    }
}
