//! The skeleton of a trajectory as CSV ([`SkeletonSink`]).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use tallmc_core::{Segment, SegmentStats};

use super::skeleton::{RowOut, Rows, SkeletonEvent};
use super::{SegmentFooter, SegmentHeader, SegmentSink};
use crate::sink::{csv_header, push_number};

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
#[derive(Debug)]
pub struct SkeletonSink {
    path: PathBuf,
    out: CsvRows,
    rows: Rows,
}

#[derive(Debug)]
struct CsvRows {
    out: BufWriter<File>,
    line: String,
}

impl SkeletonSink {
    /// Creates (truncates) the file.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let out = BufWriter::new(File::create(&path)?);
        Ok(Self { path, out: CsvRows { out, line: String::new() }, rows: Rows::default() })
    }

    /// Also write rows for rejected thinning proposals and bound horizons (the velocity does
    /// not change there; useful to inspect a kernel's bounds).
    pub fn with_non_events(mut self, yes: bool) -> Self {
        self.rows.non_events = yes;
        self
    }
}

impl RowOut for CsvRows {
    fn row(&mut self, time: f64, event: SkeletonEvent, x: &[f64], v: &[f64]) -> io::Result<()> {
        use std::fmt::Write as _;
        self.line.clear();
        push_number(&mut self.line, time);
        let _ = write!(self.line, ",{},{}", event.name(), event.coordinate());
        for &z in x.iter().chain(v) {
            self.line.push(',');
            push_number(&mut self.line, z);
        }
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())
    }
}

impl SegmentSink for SkeletonSink {
    fn begin(&mut self, h: &SegmentHeader<'_>) -> io::Result<()> {
        let o = &mut self.out.out;
        writeln!(o, "# tallmc {}", env!("CARGO_PKG_VERSION"))?;
        writeln!(
            o,
            "# skeleton of a piecewise-deterministic trajectory: \
             x(t) = x_k + v_k (t - t_k) for t_k <= t <= t_{{k+1}}"
        )?;
        writeln!(o, "# id = {}", h.chain + 1)?;
        writeln!(o, "# seed = {}", h.seed)?;
        writeln!(o, "# warmup = {:?}", h.warmup)?;
        writeln!(o, "# sampling = {:?}", h.sampling)?;
        for (k, v) in h.config {
            writeln!(o, "# {k} = {v}")?;
        }
        writeln!(o, "# Adaptation terminated")?;
        for l in h.adaptation {
            writeln!(o, "# {l}")?;
        }
        let names = h.parameter_names;
        let header = csv_header(&["time", "event", "coordinate"], &[("", names), ("v.", names)]);
        writeln!(o, "{header}")?;
        self.rows.begin(h.parameter_names.len());
        Ok(())
    }

    fn segment(&mut self, segment: &Segment<'_>, _stats: &SegmentStats) -> io::Result<()> {
        self.rows.segment(segment, &mut self.out)
    }

    fn finish(&mut self, f: &SegmentFooter) -> io::Result<()> {
        self.rows.finish(&mut self.out)?;
        let o = &mut self.out.out;
        writeln!(o, "# ")?;
        for (phase, t, time, secs) in [
            ("warmup", &f.warmup, f.warmup_time, f.warmup_seconds),
            ("sampling", &f.sampling, f.sampling_time, f.sampling_seconds),
        ] {
            writeln!(
                o,
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
            )?;
        }
        o.flush()
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.path)
    }
}
