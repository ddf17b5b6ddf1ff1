//! The skeleton of a trajectory as CSV ([`SkeletonSink`]).

use std::io;
use std::path::{Path, PathBuf};

use tallmc_core::{Segment, SegmentStats};

use super::skeleton::{RowOut, Rows, SkeletonEvent};
use super::{SegmentFooter, SegmentHeader, SegmentSink};
use crate::sinks::draws::{RowFile, RowFileHandle, RowTarget, csv_header, push_number};

/// Writes the skeleton of one chain's post-warmup trajectory to a CSV file: one row for the
/// start, one per velocity change (bounce, flip, refresh, divergence), one for the end, and
/// optionally one per rejected proposal or bound horizon ([`SkeletonSink::with_non_events`]).
///
/// ```text
/// # tallmc 0.1.0
/// # skeleton of a piecewise-deterministic trajectory: x(t) = x_k + v_k (t - t_k) for t_k <= t <= t_{k+1}
/// # id = 1
/// # seed = 42
/// # warmup = Time(100.0)
/// # sampling = Draws { count: 1000, grid_step: 0.5 }
/// # key = value                            (the driver's comments)
/// # Adaptation terminated
/// # ...                                    (the comment lines of the chain's tuning)
/// time,event,coordinate,theta.1,...,theta.d,v.theta.1,...,v.theta.d
/// 0,start,0,...
/// 0.73,flip,2,...
/// ...
/// 500,end,0,...
/// #
/// # warmup: trajectory time = 100, segments = ..., events = ..., bounces = ..., ..., seconds = ...
/// # sampling: trajectory time = 500, segments = ..., events = ..., ...
/// ```
///
/// `coordinate` is j + 1 for a Zig-Zag flip of coordinate j and 0 otherwise; velocities are
/// those *after* the row's event. Numbers are in Rust's shortest round-trip form, so parsing
/// them gives back the exact f64.
///
/// # What the file holds
///
/// The file is written through a [`RowFile`] (see [its guarantees](crate::sink::row_file)):
///
/// * after a normal run, or a run stopped by the driver's stop flag (a first Ctrl-C), the
///   layout above in full, the end row and the footer included;
/// * after a run killed at any moment (SIGKILL), whole lines — the rows made up to about
///   [`WRITE_INTERVAL`](crate::sink::WRITE_INTERVAL) (0.25 s) before the kill — and no end
///   row nor footer; a kill that lands during a write can add one unterminated fragment of a
///   line at the end (readers drop a last line without its newline);
/// * after a write error (a full disk), the file cut back to its last whole line, nothing
///   written after it, and an error naming the file: `cannot write runs/zz/skeleton_1.csv (No
///   space left on device); the file was cut back to its last whole row (1,234 rows)`;
/// * after [`SkeletonSink::handle`]`().`[`abandon`](RowFileHandle::abandon)`(footer)` from
///   another thread (a second Ctrl-C), the whole rows made so far, then the footer's comment
///   lines, nothing after them (no end row: the trajectory after the last row is unknown).
#[derive(Debug)]
pub struct SkeletonSink {
    path: PathBuf,
    file: RowFileHandle,
    rows: Rows,
}

/// The skeleton rows' destination: the locked file.
struct CsvRows<'a>(&'a mut RowFile);

impl SkeletonSink {
    /// Creates (truncates) the file.
    ///
    /// # Errors
    /// The file cannot be created.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Self::from_row_file(RowFile::create(path)?))
    }

    /// Writes to `target` (an empty file or stream), naming it `path` in error messages; for
    /// tests with a target that fails on purpose, and for files opened by the caller.
    pub fn with_target(target: impl RowTarget + 'static, path: impl Into<PathBuf>) -> Self {
        Self::from_row_file(RowFile::with_target(target, path))
    }

    fn from_row_file(file: RowFile) -> Self {
        let path = file.path().to_path_buf();
        Self { path, file: RowFileHandle::new(file), rows: Rows::default() }
    }

    /// A handle to the file, to [abandon](RowFileHandle::abandon) it from another thread (a
    /// second Ctrl-C): the buffered rows and a footer are written, and this sink's later
    /// writes are ignored.
    pub fn handle(&self) -> RowFileHandle {
        self.file.clone()
    }

    /// Also write rows for rejected thinning proposals and bound horizons (the velocity does
    /// not change there; useful to inspect a kernel's bounds).
    pub fn with_non_events(mut self, yes: bool) -> Self {
        self.rows.non_events = yes;
        self
    }
}

impl RowOut for CsvRows<'_> {
    fn row(&mut self, time: f64, event: SkeletonEvent, x: &[f64], v: &[f64]) -> io::Result<()> {
        use std::fmt::Write as _;
        self.0.row_with(|line| {
            push_number(line, time);
            let _ = write!(line, ",{},{}", event.name(), event.coordinate());
            for &z in x.iter().chain(v) {
                line.push(',');
                push_number(line, z);
            }
        })
    }
}

impl SegmentSink for SkeletonSink {
    fn begin(&mut self, h: &SegmentHeader<'_>) -> io::Result<()> {
        let mut o = self.file.lock();
        o.line_fmt(format_args!("# tallmc {}", env!("CARGO_PKG_VERSION")))?;
        o.line(
            "# skeleton of a piecewise-deterministic trajectory: \
             x(t) = x_k + v_k (t - t_k) for t_k <= t <= t_{k+1}",
        )?;
        o.line_fmt(format_args!("# id = {}", h.chain + 1))?;
        o.line_fmt(format_args!("# seed = {}", h.seed))?;
        o.line_fmt(format_args!("# warmup = {:?}", h.warmup))?;
        o.line_fmt(format_args!("# sampling = {:?}", h.sampling))?;
        for (k, v) in h.config {
            o.line_fmt(format_args!("# {k} = {v}"))?;
        }
        o.line("# Adaptation terminated")?;
        for l in h.adaptation {
            o.line_fmt(format_args!("# {l}"))?;
        }
        let names = h.parameter_names;
        o.line(&csv_header(&["time", "event", "coordinate"], &[("", names), ("v.", names)]))?;
        self.rows.begin(h.parameter_names.len());
        Ok(())
    }

    fn segment(&mut self, segment: &Segment<'_>, _stats: &SegmentStats) -> io::Result<()> {
        self.rows.segment(segment, &mut CsvRows(&mut self.file.lock()))
    }

    fn finish(&mut self, f: &SegmentFooter) -> io::Result<()> {
        let mut o = self.file.lock();
        self.rows.finish(&mut CsvRows(&mut o))?;
        o.line("# ")?;
        for (phase, t, time, secs) in [
            ("warmup", &f.warmup, f.warmup_time, f.warmup_seconds),
            ("sampling", &f.sampling, f.sampling_time, f.sampling_seconds),
        ] {
            o.line_fmt(format_args!(
                "# {phase}: trajectory time = {time}, segments = {}, events = {}, \
                 bounces = {}, refreshes = {}, divergences = {}, proposals = {}, \
                 violations = {}, terms = {}, gradients = {}, hessians = {}, seconds = {secs:.6}",
                t.segments,
                t.events(),
                t.bounces,
                t.refreshes,
                t.divergences,
                t.proposals,
                t.violations,
                t.evals.terms,
                t.evals.gradients,
                t.evals.hessians,
            ))?;
        }
        o.finish()
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.path)
    }
}
