//! Running chains for the suites and reading their outputs: the run settings, the driver with
//! draws and typed stats in memory, stat-column means, and thinning for figures.

use tallmc_core::ParameterNames;
use tallmc_samplers::sink::MemorySink;
use tallmc_samplers::{ChainOutput, Driver, RunConfig};

use crate::{Reporter, Result};

/// `chains` chains of `warmup` + `draws` iterations from master seed `seed`, warmup draws
/// not kept.
pub fn run_config(warmup: usize, draws: usize, chains: usize, seed: u64) -> RunConfig {
    RunConfig { num_warmup: warmup, num_draws: draws, num_chains: chains, seed, save_warmup: false }
}

/// Runs chains of `kernel` on `model` with the driver, draws and typed stats kept in memory,
/// progress under `label`.
pub fn run_driver<M, K>(
    model: &M, inits: &[Vec<f64>], config: RunConfig, kernel: &K, reporter: &dyn Reporter,
    label: &str,
) -> Result<Vec<tallmc_samplers::InMemory<K, M>>>
where
    M: ParameterNames + Sync + ?Sized,
    K: tallmc_core::Kernel<M>,
{
    let total = ((config.num_warmup + config.num_draws) * config.num_chains) as u64;
    let task = reporter.task(label, total);
    let sinks = (0..config.num_chains).map(|_| MemorySink::new()).collect();
    let out = Driver::new(config)
        .parameter_names(model.parameter_names())
        .progress(&*task)
        .run(model, inits, kernel, sinks)?;
    Ok(out)
}

/// The mean of the values of every column in `columns` pooled (NaN if there are none; a
/// `None` is a chain without the column).
pub fn pooled_mean(columns: impl IntoIterator<Item = Option<Vec<f64>>>) -> f64 {
    let (mut sum, mut count) = (0.0, 0usize);
    for v in columns.into_iter().flatten() {
        sum += v.iter().sum::<f64>();
        count += v.len();
    }
    if count == 0 { f64::NAN } else { sum / count as f64 }
}

/// The mean of a stat column over every chain's post-warmup draws (NaN if absent).
pub fn mean_stat<S: serde::Serialize, T>(
    chains: &[ChainOutput<MemorySink<S>, T>], column: &str,
) -> f64 {
    pooled_mean(chains.iter().map(|c| c.sink.stat(column)))
}

/// Thins a sequence to at most `max` points, keeping the first and the last.
pub fn thin_indices(len: usize, max: usize) -> Vec<usize> {
    if len <= max || max < 2 {
        return (0..len).collect();
    }
    let step = (len - 1) as f64 / (max - 1) as f64;
    let mut out: Vec<usize> = (0..max).map(|k| (k as f64 * step).round() as usize).collect();
    out.dedup();
    out
}

/// Indices spaced evenly on a log scale in 0..len (for traces drawn on a log axis).
pub fn log_thin_indices(len: usize, max: usize) -> Vec<usize> {
    if len <= max || max < 2 {
        return (0..len).collect();
    }
    let top = (len as f64).ln();
    let mut out: Vec<usize> = (0..max)
        .map(|k| ((k as f64 / (max - 1) as f64 * top).exp() - 1.0).round() as usize)
        .map(|i| i.min(len - 1))
        .collect();
    out.dedup();
    out
}

/// A model, its chains' starting points and the reporter of their progress: what every run of
/// one problem shares.
pub struct Chains<'a, M: ?Sized> {
    /// The model.
    pub model: &'a M,
    /// One starting point per chain.
    pub inits: &'a [Vec<f64>],
    /// Progress reporting.
    pub reporter: &'a dyn Reporter,
}

impl<M: ParameterNames + Sync + ?Sized> Chains<'_, M> {
    /// [`run_driver`] of `kernel` on these chains.
    pub fn run<K: tallmc_core::Kernel<M>>(
        &self, config: RunConfig, kernel: &K, label: &str,
    ) -> Result<Vec<tallmc_samplers::InMemory<K, M>>> {
        run_driver(self.model, self.inits, config, kernel, self.reporter, label)
    }
}
