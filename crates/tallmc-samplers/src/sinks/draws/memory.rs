//! Draws kept in memory, with the kernel's own typed stats.

use std::io;

use tallmc_core::StatColumns;

use super::columns::initial_capacity;
use super::{ChainFooter, ChainHeader, DrawRecord, DrawSink};

/// Keeps a chain's draws, log densities and typed stats in memory.
///
/// A bounded amount is reserved when a chain begins (at most 4096 draws' worth), the vectors
/// growing as draws arrive: a run asking for more draws than memory holds fails when memory
/// runs out, not up front. [`memory_sink_bytes`](super::memory_sink_bytes) says beforehand
/// how much a run will hold.
#[derive(Debug, Clone, PartialEq)]
pub struct MemorySink<S> {
    /// Dimension d of θ.
    pub dim: usize,
    /// Parameter names.
    pub parameter_names: Vec<String>,
    /// Stat column names (as written to CSV).
    pub stat_columns: Vec<String>,
    /// Post-warmup draws, row-major (draw k is `draws[k d .. (k + 1) d]`).
    pub draws: Vec<f64>,
    /// `lp__` of every post-warmup draw.
    pub log_density: Vec<f64>,
    /// The kernel's stats of every post-warmup draw.
    pub stats: Vec<S>,
    /// Warmup draws (when saved), row-major.
    pub warmup_draws: Vec<f64>,
    /// The adapted tuning's comment lines.
    pub tuning_lines: Vec<String>,
    /// Times and evaluation totals.
    pub footer: ChainFooter,
}

impl<S> Default for MemorySink<S> {
    fn default() -> Self {
        Self {
            dim: 0,
            parameter_names: Vec::new(),
            stat_columns: Vec::new(),
            draws: Vec::new(),
            log_density: Vec::new(),
            stats: Vec::new(),
            warmup_draws: Vec::new(),
            tuning_lines: Vec::new(),
            footer: ChainFooter::default(),
        }
    }
}

impl<S> MemorySink<S> {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of post-warmup draws kept.
    pub fn num_draws(&self) -> usize {
        self.log_density.len()
    }

    /// Draw `k`.
    pub fn draw(&self, k: usize) -> &[f64] {
        &self.draws[k * self.dim..(k + 1) * self.dim]
    }

    /// The draws of coordinate `j`.
    pub fn coordinate(&self, j: usize) -> Vec<f64> {
        self.draws.chunks_exact(self.dim).map(|row| row[j]).collect()
    }

    /// The same sink with every draw's stats mapped by `f` (e.g. to keep only what a report
    /// needs when runs of different kernels are collected together).
    pub fn map_stats<U>(self, f: impl FnMut(S) -> U) -> MemorySink<U> {
        MemorySink {
            dim: self.dim,
            parameter_names: self.parameter_names,
            stat_columns: self.stat_columns,
            draws: self.draws,
            log_density: self.log_density,
            stats: self.stats.into_iter().map(f).collect(),
            warmup_draws: self.warmup_draws,
            tuning_lines: self.tuning_lines,
            footer: self.footer,
        }
    }

    /// One stats field over the draws, by its column name (`"n_leapfrog__"`), for code that
    /// handles any kernel; code that knows the kernel reads `stats` directly.
    pub fn stat(&self, name: &str) -> Option<Vec<f64>>
    where
        S: serde::Serialize,
    {
        let c = self.stat_columns.iter().position(|s| s == name)?;
        let mut row = Vec::with_capacity(self.stat_columns.len());
        self.stats
            .iter()
            .map(|s| {
                row.clear();
                StatColumns::values(s, &mut row).ok()?;
                row.get(c).copied()
            })
            .collect()
    }
}

impl<S: Clone + Send> DrawSink<S> for MemorySink<S> {
    fn begin(&mut self, header: &ChainHeader<'_>) -> io::Result<()> {
        self.dim = header.parameter_names.len();
        self.parameter_names = header.parameter_names.to_vec();
        self.stat_columns = header.stat_columns.to_vec();
        let n = header.num_draws;
        self.draws.reserve(initial_capacity(n, self.dim));
        self.log_density.reserve(initial_capacity(n, 1));
        self.stats.reserve(initial_capacity(n, 1));
        Ok(())
    }
    fn end_warmup(&mut self, tuning: &[String]) -> io::Result<()> {
        self.tuning_lines = tuning.to_vec();
        Ok(())
    }
    fn record(&mut self, draw: &DrawRecord<'_, S>) -> io::Result<()> {
        if draw.warmup {
            self.warmup_draws.extend_from_slice(draw.position);
        } else {
            self.draws.extend_from_slice(draw.position);
            self.log_density.push(draw.log_density);
            self.stats.push(draw.stats.clone());
        }
        Ok(())
    }
    fn finish(&mut self, footer: &ChainFooter) -> io::Result<()> {
        self.footer = *footer;
        Ok(())
    }
}
