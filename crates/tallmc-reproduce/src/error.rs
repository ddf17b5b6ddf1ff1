//! Errors of the reproduction suites.

/// What can stop a suite.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A model or data error.
    #[error(transparent)]
    Model(#[from] tallmc_models::Error),
    /// A sampler error.
    #[error(transparent)]
    Sampler(#[from] tallmc_samplers::SamplerError),
    /// A kernel or configuration error.
    #[error(transparent)]
    Core(#[from] tallmc_core::Error),
    /// A diagnostics error.
    #[error(transparent)]
    Diagnostics(#[from] tallmc_diagnostics::Error),
    /// Writing an output file failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: std::path::PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A reference fixture is missing or does not match the data it claims to describe.
    #[error("reference fixture {name}: {message}")]
    Fixture {
        /// Fixture name.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// A chain's thread panicked (a bug: the message is on stderr).
    #[error("a chain thread panicked")]
    ChainPanicked,
    /// A kernel's run lacks a per-iteration stat column the suite reads (a bug).
    #[error("the chains have no stat column {0:?}")]
    MissingStat(String),
    /// No suite of that name.
    #[error("unknown suite {0:?}; available: {1}")]
    UnknownSuite(String, String),
}

/// Result alias with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
