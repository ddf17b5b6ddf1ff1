//! Where draws go: the driver streams every draw and its stats to a [`DrawSink`].
//!
//! * [`MemorySink`] keeps everything in memory, with the kernel's typed stats;
//! * [`ColumnMemorySink`] keeps everything in memory with the stats as numeric columns, for
//!   code that handles runs of any kernel alike;
//! * [`CsvSink`] writes CmdStan's CSV layout (readable by `arviz.from_cmdstan`);
//! * [`Tee`] sends the same stream to two sinks.
//!
//! The CSV sinks write through a [`RowFile`]: a file that only ever holds whole lines, cut back
//! to its last whole row on a write error, and that another thread can [abandon] with a footer
//! (see [`row_file`] for the guarantees). The in-memory sinks reserve a bounded
//! amount when a chain begins and grow as draws arrive; [`memory_sink_bytes`] says beforehand
//! how much a run will hold.
//!
//! [abandon]: RowFileHandle::abandon

mod columns;
mod csv;
mod memory;
pub mod row_file;

pub use columns::{ColumnMemorySink, memory_sink_bytes};
pub use csv::CsvSink;
pub(crate) use csv::csv_header;
pub use csv::push_number;
pub use memory::MemorySink;
pub use row_file::{
    ABANDONED_FOOTER, BUFFER_BYTES, RowFile, RowFileHandle, RowTarget, WRITE_INTERVAL,
};

use std::io;

use tallmc_core::{EvalCounts, StatColumns, StepStats};

/// What a sink learns before the first draw of a chain.
#[derive(Debug, Clone)]
pub struct ChainHeader<'a> {
    /// Chain number (0-based).
    pub chain: usize,
    /// Master seed of the run.
    pub seed: u64,
    /// Parameter names, one per coordinate of θ.
    pub parameter_names: &'a [String],
    /// The kernel's per-step stat columns (CmdStan style, ending in `__`), read from the stats
    /// type's definition ([`StatColumns`]).
    pub stat_columns: &'a [String],
    /// Warmup iterations.
    pub num_warmup: usize,
    /// Post-warmup draws.
    pub num_draws: usize,
    /// Whether warmup draws are recorded too.
    pub save_warmup: bool,
    /// Configuration as `key = value` pairs, written as comments.
    pub config: &'a [(String, String)],
}

impl<'a> ChainHeader<'a> {
    /// The header of chain 0 of seed 0 with these parameters and stat columns, no warmup, no
    /// draws announced and no comments: a start for struct-update syntax
    /// (`ChainHeader { num_draws: 1000, ..ChainHeader::new(&names, &columns) }`), e.g. for a
    /// sink's own tests.
    pub fn new(parameter_names: &'a [String], stat_columns: &'a [String]) -> Self {
        Self {
            chain: 0,
            seed: 0,
            parameter_names,
            stat_columns,
            num_warmup: 0,
            num_draws: 0,
            save_warmup: false,
            config: &[],
        }
    }
}

/// One draw, with the kernel's own typed stats.
#[derive(Debug, Clone, Copy)]
pub struct DrawRecord<'a, S> {
    /// Iteration, 0-based, warmup included.
    pub iteration: usize,
    /// Whether this is a warmup iteration.
    pub warmup: bool,
    /// The kernel's log target at the draw (`lp__`).
    pub log_density: f64,
    /// The step's stats (their columns are the header's `stat_columns`).
    pub stats: &'a S,
    /// θ.
    pub position: &'a [f64],
}

/// What a sink learns after the last draw of a chain.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ChainFooter {
    /// Wall time of warmup, seconds.
    pub warmup_seconds: f64,
    /// Wall time of sampling, seconds.
    pub sampling_seconds: f64,
    /// Per-datum evaluations during warmup (including initialization).
    pub warmup_evals: EvalCounts,
    /// Per-datum evaluations while drawing.
    pub sampling_evals: EvalCounts,
}

/// A destination for the draws of one chain of a kernel whose step stats are `S`.
pub trait DrawSink<S>: Send {
    /// Called once before any draw.
    fn begin(&mut self, header: &ChainHeader<'_>) -> io::Result<()>;
    /// Called once at the end of warmup with the adapted tuning's comment lines
    /// ([`Tuning::comment_lines`](tallmc_core::Tuning::comment_lines)).
    fn end_warmup(&mut self, tuning: &[String]) -> io::Result<()>;
    /// Called for every recorded draw.
    fn record(&mut self, draw: &DrawRecord<'_, S>) -> io::Result<()>;
    /// Called once after the last draw.
    fn finish(&mut self, footer: &ChainFooter) -> io::Result<()>;
    /// The file this sink writes, if any (for error messages).
    fn path(&self) -> Option<&std::path::Path> {
        None
    }
}

impl<S, D: DrawSink<S> + ?Sized> DrawSink<S> for Box<D> {
    fn begin(&mut self, header: &ChainHeader<'_>) -> io::Result<()> {
        (**self).begin(header)
    }
    fn end_warmup(&mut self, tuning: &[String]) -> io::Result<()> {
        (**self).end_warmup(tuning)
    }
    fn record(&mut self, draw: &DrawRecord<'_, S>) -> io::Result<()> {
        (**self).record(draw)
    }
    fn finish(&mut self, footer: &ChainFooter) -> io::Result<()> {
        (**self).finish(footer)
    }
    fn path(&self) -> Option<&std::path::Path> {
        (**self).path()
    }
}

/// Sends every call to two sinks.
#[derive(Debug)]
pub struct Tee<A, B>(pub A, pub B);

impl<S, A: DrawSink<S>, B: DrawSink<S>> DrawSink<S> for Tee<A, B> {
    fn begin(&mut self, header: &ChainHeader<'_>) -> io::Result<()> {
        self.0.begin(header)?;
        self.1.begin(header)
    }
    fn end_warmup(&mut self, tuning: &[String]) -> io::Result<()> {
        self.0.end_warmup(tuning)?;
        self.1.end_warmup(tuning)
    }
    fn record(&mut self, draw: &DrawRecord<'_, S>) -> io::Result<()> {
        self.0.record(draw)?;
        self.1.record(draw)
    }
    fn finish(&mut self, footer: &ChainFooter) -> io::Result<()> {
        self.0.finish(footer)?;
        self.1.finish(footer)
    }
    fn path(&self) -> Option<&std::path::Path> {
        self.0.path().or(self.1.path())
    }
}

/// The column names of stats type `S`, read from its definition at `S::default()`.
///
/// # Errors
/// A field that cannot be a numeric column (a string, a sequence), named.
pub fn stat_column_names<S: StepStats>() -> tallmc_core::Result<Vec<String>> {
    StatColumns::names(&S::default())
        .map_err(|e| tallmc_core::Error::invalid("stats type", std::any::type_name::<S>(), e))
}
