//! Errors of the samplers crate.

use std::path::PathBuf;

/// Errors from running chains.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SamplerError {
    /// A kernel, model or configuration error.
    #[error(transparent)]
    Core(#[from] tallmc_core::Error),
    /// Writing draws failed.
    #[error("cannot write draws of chain {chain} to {}: {source}", path.as_ref().map_or("the sink".to_string(), |p| p.display().to_string()))]
    Sink {
        /// Chain whose sink failed.
        chain: usize,
        /// File, when the sink writes one.
        path: Option<PathBuf>,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Chain `chain` could not start.
    #[error("chain {chain} could not start: {source}")]
    Init {
        /// The chain.
        chain: usize,
        /// What went wrong.
        source: tallmc_core::Error,
    },
    /// Chain `chain` failed at iteration `iteration`.
    #[error("chain {chain} failed at iteration {iteration}: {source}")]
    Chain {
        /// The chain.
        chain: usize,
        /// The iteration (0-based, warmup included).
        iteration: usize,
        /// What went wrong.
        source: tallmc_core::Error,
    },
}

/// Result alias with [`SamplerError`].
pub type Result<T, E = SamplerError> = std::result::Result<T, E>;
