//! What a multi-chain in-memory run did, in one value: the per-parameter summaries over all
//! chains and the run's totals.

use tallmc_core::EvalCounts;
use tallmc_diagnostics::{Draws, Summary, summarize};
use tallmc_samplers::driver::ChainOutput;
use tallmc_samplers::sink::MemorySink;

/// The per-parameter summaries over all chains of an in-memory run, and its totals.
///
/// With K chains of D draws each (post-warmup), `summaries` holds, per parameter, the mean, sd,
/// the MCSE of both, bulk and tail ESS and rank-normalized split R-hat over the K·D draws
/// ([`summarize`]); `evals` adds every chain's warmup and sampling evaluations, so that
/// "per-datum evaluations per draw" is `evals / draws`.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// Per-parameter summaries over all chains.
    pub summaries: Vec<Summary>,
    /// Per-datum evaluations of all chains, warmup included (add any set-up cost yourself).
    pub evals: EvalCounts,
    /// Post-warmup draws of all chains.
    pub draws: usize,
    /// Divergent transitions of all chains while drawing (warmup not included).
    pub divergences: usize,
    /// Mean acceptance statistic while drawing, averaged over chains.
    pub accept: f64,
    /// Mean number of data points looked at per iteration while drawing, averaged over chains.
    pub batch: f64,
}

impl RunSummary {
    /// Summarizes the chains returned by
    /// [`sample_in_memory`](tallmc_samplers::sample_in_memory), with parameter names `names`.
    ///
    /// # Errors
    /// No chains, chains of unequal length, draws not a multiple of `names.len()`, or a
    /// non-finite draw ([`tallmc_diagnostics::Error`]).
    pub fn of<S, T>(
        names: &[String], chains: &[ChainOutput<MemorySink<S>, T>],
    ) -> Result<Self, tallmc_diagnostics::Error> {
        let draws: Vec<&[f64]> = chains.iter().map(|c| c.sink.draws.as_slice()).collect();
        let summaries = summarize(names, &Draws::new(&draws, names.len())?)?;
        let mut evals = EvalCounts::ZERO;
        for c in chains {
            evals += c.report.warmup_evals;
            evals += c.report.sampling_evals;
        }
        let k = chains.len() as f64;
        Ok(Self {
            summaries,
            evals,
            draws: draws.iter().map(|d| d.len() / names.len().max(1)).sum(),
            divergences: chains.iter().map(|c| c.report.divergences).sum(),
            accept: chains.iter().map(|c| c.report.mean_accept_stat).sum::<f64>() / k,
            batch: chains.iter().map(|c| c.report.mean_batch_size).sum::<f64>() / k,
        })
    }
}
