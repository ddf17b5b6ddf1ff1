//! Draws kept in memory with the stats as flat columns, for code that handles any kernel alike.

use std::io;

use tallmc_core::{StatColumns, StepStats};

use super::{ChainFooter, ChainHeader, DrawRecord, DrawSink};

/// At most this many draws' room is reserved when a chain begins, whatever the run asks for;
/// the vectors grow (by doubling) as draws arrive.
pub(crate) const RESERVED_DRAWS: usize = 4096;

/// At most this many values (8 MiB of f64) are reserved per vector when a chain begins.
pub(crate) const RESERVED_VALUES: usize = 1 << 20;

/// The room reserved when a chain begins for `num_draws` draws of `per_draw` values each:
/// bounded ([`RESERVED_DRAWS`], [`RESERVED_VALUES`]), so that asking for 10¹² draws does not
/// allocate (and abort) up front.
pub(crate) fn initial_capacity(num_draws: usize, per_draw: usize) -> usize {
    num_draws.min(RESERVED_DRAWS).saturating_mul(per_draw).min(RESERVED_VALUES)
}

/// Bytes of draws that in-memory sinks ([`ColumnMemorySink`], and
/// [`MemorySink`](super::MemorySink) with its stats counted as `stat_columns` f64) hold at the
/// end of a run of `chains` chains of `draws` post-warmup draws of dimension `dim`:
///
/// `chains · draws · (dim + 1 + stat_columns) · 8`
///
/// (θ, `lp__` and the stat columns, as f64). The sinks reserve a bounded amount when a chain
/// begins and grow by doubling, so their capacity can reach up to **twice** this; a caller
/// that keeps draws in memory compares `2 ×` this with the memory available before the run,
/// rather than letting an allocation fail (which aborts the process) in the middle of it.
/// Warmup draws kept by `MemorySink` with `save_warmup` add `chains · warmup · dim · 8`.
/// Computed in u128, saturating at `u128::MAX` (far more than any memory).
///
/// ```
/// use tallmc_samplers::sink::memory_sink_bytes;
///
/// // 4 chains of 1000 draws of 10 coordinates and 12 stat columns: 4 · 1000 · 23 · 8 bytes.
/// assert_eq!(memory_sink_bytes(4, 1000, 10, 12), 736_000);
/// // 10¹² draws: about 2.4 · 10¹³ bytes per chain, which no machine has.
/// assert!(memory_sink_bytes(1, 1_000_000_000_000, 1, 1) > 1 << 44);
/// ```
pub fn memory_sink_bytes(chains: usize, draws: usize, dim: usize, stat_columns: usize) -> u128 {
    let per_draw = dim as u128 + 1 + stat_columns as u128;
    (chains as u128).saturating_mul(draws as u128).saturating_mul(per_draw).saturating_mul(8)
}

/// Like [`MemorySink`](super::MemorySink), but keeps every draw's stats as their numeric
/// columns ([`StatColumns`]) rather than as the kernel's stats type, so that one sink type
/// serves runs of different kernels (the `tallmc` command's summaries, for instance). Code
/// that knows its kernel should prefer the typed `MemorySink<S>`.
///
/// A bounded amount is reserved when a chain begins (at most 4096 draws' worth), the vectors
/// growing as draws arrive; [`memory_sink_bytes`] says beforehand how much a run will hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnMemorySink {
    /// Dimension d of θ.
    pub dim: usize,
    /// Parameter names.
    pub parameter_names: Vec<String>,
    /// Stat column names.
    pub stat_columns: Vec<String>,
    /// Post-warmup draws, row-major.
    pub draws: Vec<f64>,
    /// `lp__` of every post-warmup draw.
    pub log_density: Vec<f64>,
    /// Post-warmup stat columns, row-major (`stat_columns.len()` per draw).
    pub stats: Vec<f64>,
    /// The adapted tuning's comment lines.
    pub tuning_lines: Vec<String>,
    /// Times and evaluation totals.
    pub footer: ChainFooter,
}

impl ColumnMemorySink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of post-warmup draws kept.
    pub fn num_draws(&self) -> usize {
        self.log_density.len()
    }

    /// The draws of coordinate `j`.
    pub fn coordinate(&self, j: usize) -> Vec<f64> {
        self.draws.chunks_exact(self.dim).map(|row| row[j]).collect()
    }

    /// Stat column `name` over the draws, if the kernel has it.
    pub fn stat(&self, name: &str) -> Option<Vec<f64>> {
        let c = self.stat_columns.iter().position(|s| s == name)?;
        let w = self.stat_columns.len();
        Some(self.stats.chunks_exact(w).map(|row| row[c]).collect())
    }
}

impl<S: StepStats> DrawSink<S> for ColumnMemorySink {
    fn begin(&mut self, header: &ChainHeader<'_>) -> io::Result<()> {
        self.dim = header.parameter_names.len();
        self.parameter_names = header.parameter_names.to_vec();
        self.stat_columns = header.stat_columns.to_vec();
        let n = header.num_draws;
        self.draws.reserve(initial_capacity(n, self.dim));
        self.log_density.reserve(initial_capacity(n, 1));
        self.stats.reserve(initial_capacity(n, self.stat_columns.len()));
        Ok(())
    }
    fn end_warmup(&mut self, tuning: &[String]) -> io::Result<()> {
        self.tuning_lines = tuning.to_vec();
        Ok(())
    }
    fn record(&mut self, draw: &DrawRecord<'_, S>) -> io::Result<()> {
        if !draw.warmup {
            self.draws.extend_from_slice(draw.position);
            self.log_density.push(draw.log_density);
            StatColumns::values(draw.stats, &mut self.stats)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        }
        Ok(())
    }
    fn finish(&mut self, footer: &ChainFooter) -> io::Result<()> {
        self.footer = *footer;
        Ok(())
    }
}
