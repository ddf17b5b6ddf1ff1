//! Draws kept in memory with the stats as flat columns, for code that handles any kernel alike.

use std::io;

use tallmc_core::{StatColumns, StepStats};

use super::{ChainFooter, ChainHeader, DrawRecord, DrawSink};

/// Like [`MemorySink`](super::MemorySink), but keeps every draw's stats as their numeric
/// columns ([`StatColumns`]) rather than as the kernel's stats type, so that one sink type
/// serves runs of different kernels (the `tallmc` command's summaries, for instance). Code
/// that knows its kernel should prefer the typed `MemorySink<S>`.
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
        self.draws.reserve(header.num_draws * self.dim);
        self.log_density.reserve(header.num_draws);
        self.stats.reserve(header.num_draws * self.stat_columns.len());
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
