//! The continuous-time driver: runs the chains a [`PdmpKernel`] builds on several threads in
//! parallel and streams every post-warmup segment to a [`SegmentSink`].

use tallmc_core::PdmpKernel;

use super::chain::run_chain;
use super::run::{ContinuousChainOutput, ContinuousRunConfig, PdmpTuningOf};
use super::sink::SegmentSink;
use crate::drivers::discrete::Runner;
use crate::error::Result;

impl Runner<'_, ContinuousRunConfig> {
    /// Runs `num_chains` chains of `kernel` in parallel (the settings build every chain).
    /// `inits` holds one initial position per chain (or a single one shared by all); `sinks`
    /// holds one sink per chain. Returns the chains' reports and sinks in chain order.
    ///
    /// # Errors
    /// An invalid configuration; `inits` or `sinks` of the wrong count; parameter names of the
    /// wrong length; a chain that cannot be built ([`SamplerError::Init`]); a kernel `Err`, or a
    /// segment of negative or non-finite duration ([`SamplerError::Segment`], naming the chain
    /// and the segment number); too many zero-duration segments in a row
    /// ([`SamplerError::Stalled`]); a sink error ([`SamplerError::Sink`], with the path).
    ///
    /// [`SamplerError::Init`]: crate::SamplerError::Init
    /// [`SamplerError::Segment`]: crate::SamplerError::Segment
    /// [`SamplerError::Stalled`]: crate::SamplerError::Stalled
    /// [`SamplerError::Sink`]: crate::SamplerError::Sink
    pub fn run<M, K, S>(
        &self, model: &M, inits: &[Vec<f64>], kernel: &K, sinks: Vec<S>,
    ) -> Result<Vec<ContinuousChainOutput<S, PdmpTuningOf<K, M>>>>
    where
        M: Sync + ?Sized,
        K: PdmpKernel<M>,
        S: SegmentSink,
    {
        let c = &self.config;
        c.validate()?;
        self.options.run_chains(c.num_chains, inits, sinks, |chain, init, names, sink| {
            run_chain(self, model, chain, init, names, kernel, sink)
        })
    }
}
