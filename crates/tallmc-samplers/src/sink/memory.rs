//! Draws kept in memory.

use std::io;

use super::{ChainFooter, ChainHeader, DrawRecord, DrawSink};

/// Keeps the post-warmup draws (and, if the run saves them, the warmup draws separately).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemorySink {
    /// Dimension d.
    pub dim: usize,
    /// Parameter names.
    pub parameter_names: Vec<String>,
    /// Stat column names.
    pub stat_columns: Vec<String>,
    /// Post-warmup draws, row-major (draws × d).
    pub draws: Vec<f64>,
    /// `lp__` of each post-warmup draw.
    pub log_density: Vec<f64>,
    /// Stat columns of each post-warmup draw, row-major (draws × columns).
    pub stats: Vec<f64>,
    /// Warmup draws, row-major, when saved.
    pub warmup_draws: Vec<f64>,
    /// Adaptation report of the kernel.
    pub adaptation: Vec<String>,
    /// Timings and evaluation totals.
    pub footer: ChainFooter,
}

impl MemorySink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of post-warmup draws held.
    pub fn num_draws(&self) -> usize {
        self.log_density.len()
    }

    /// Draw `k` (post-warmup).
    pub fn draw(&self, k: usize) -> &[f64] {
        &self.draws[k * self.dim..(k + 1) * self.dim]
    }

    /// The post-warmup values of coordinate `j`.
    pub fn coordinate(&self, j: usize) -> Vec<f64> {
        self.draws.chunks_exact(self.dim).map(|row| row[j]).collect()
    }

    /// The post-warmup values of the stat column `name`, if the kernel reports it.
    pub fn stat(&self, name: &str) -> Option<Vec<f64>> {
        let c = self.stat_columns.iter().position(|s| s == name)?;
        let w = self.stat_columns.len();
        Some(self.stats.chunks_exact(w).map(|row| row[c]).collect())
    }
}

impl DrawSink for MemorySink {
    fn begin(&mut self, header: &ChainHeader<'_>) -> io::Result<()> {
        self.dim = header.parameter_names.len();
        self.parameter_names = header.parameter_names.to_vec();
        self.stat_columns = header.stat_columns.iter().map(|s| s.to_string()).collect();
        self.draws.reserve(header.num_draws * self.dim);
        self.log_density.reserve(header.num_draws);
        self.stats.reserve(header.num_draws * header.stat_columns.len());
        Ok(())
    }
    fn end_warmup(&mut self, adaptation: &[String]) -> io::Result<()> {
        self.adaptation = adaptation.to_vec();
        Ok(())
    }
    fn record(&mut self, draw: &DrawRecord<'_>) -> io::Result<()> {
        if draw.warmup {
            self.warmup_draws.extend_from_slice(draw.position);
        } else {
            self.draws.extend_from_slice(draw.position);
            self.log_density.push(draw.log_density);
            self.stats.extend_from_slice(draw.stats);
        }
        Ok(())
    }
    fn finish(&mut self, footer: &ChainFooter) -> io::Result<()> {
        self.footer = *footer;
        Ok(())
    }
}
