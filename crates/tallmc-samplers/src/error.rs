//! Errors of the samplers crate.

use std::path::PathBuf;

/// Errors from running chains.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SamplerError {
    /// A kernel, model or configuration error.
    #[error(transparent)]
    Core(#[from] tallmc_core::Error),
    /// Writing draws (or trajectory segments) failed.
    #[error("{}", sink_message(*chain, path.as_deref(), source))]
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
    /// A step of chain `chain` left the finite numbers: coordinate `parameter` of θ is
    /// `value` (a stochastic-gradient chain whose step size is too large, typically). The draws
    /// recorded before it are kept: the sink was finished.
    #[error(
        "chain {chain} left the finite numbers at iteration {iteration}: {parameter} = {value}; \
         the draws before it were kept (a smaller step size usually cures this)"
    )]
    NonFiniteDraw {
        /// The chain.
        chain: usize,
        /// The iteration (0-based, warmup included).
        iteration: usize,
        /// Name of the first non-finite coordinate.
        parameter: String,
        /// Its value.
        value: f64,
    },
    /// Continuous-time chain `chain` failed at trajectory segment `segment` (0-based, warmup
    /// included): the kernel returned an error, or reported a segment of negative or non-finite
    /// duration.
    #[error("chain {chain} failed at segment {segment}: {source}")]
    Segment {
        /// The chain.
        chain: usize,
        /// The segment (kernel step), 0-based, warmup included.
        segment: u64,
        /// What went wrong.
        source: tallmc_core::Error,
    },
    /// Continuous-time chain `chain` stopped moving: `steps` zero-duration segments in a row,
    /// more than the run's `max_zero_duration_steps`.
    #[error(
        "chain {chain} stalled at segment {segment}: {steps} zero-duration segments in a row \
         (more than max_zero_duration_steps = {limit}); the kernel no longer advances in time"
    )]
    Stalled {
        /// The chain.
        chain: usize,
        /// The segment (kernel step) at which the limit was exceeded, 0-based, warmup included.
        segment: u64,
        /// Zero-duration segments in a row.
        steps: u64,
        /// The limit.
        limit: u64,
    },
}

/// Result alias with [`SamplerError`].
pub type Result<T, E = SamplerError> = std::result::Result<T, E>;

/// What failed, naming the file once: the sinks' own errors already name it ("cannot write
/// runs/h/chain_2.csv (No space left on device); the file was cut back …").
fn sink_message(chain: usize, path: Option<&std::path::Path>, source: &std::io::Error) -> String {
    let text = source.to_string();
    match path.map(|p| p.display().to_string()) {
        Some(p) if !text.contains(&p) => {
            format!("cannot write the output of chain {chain} to {p}: {text}")
        }
        _ => format!("cannot write the output of chain {chain}: {text}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sink_error_names_the_file_once() {
        let path = PathBuf::from("runs/h/chain_2.csv");
        let named = std::io::Error::other(
            "cannot write runs/h/chain_2.csv (No space left on device); the file was cut back to its last whole row (12 rows)",
        );
        let e =
            SamplerError::Sink { chain: 1, path: Some(path.clone()), source: named }.to_string();
        assert_eq!(e.matches("runs/h/chain_2.csv").count(), 1, "{e}");
        assert!(
            e.starts_with("cannot write the output of chain 1: cannot write runs/h/chain_2.csv")
        );
        let plain = std::io::Error::other("disk full");
        let e = SamplerError::Sink { chain: 1, path: Some(path), source: plain }.to_string();
        assert_eq!(e, "cannot write the output of chain 1 to runs/h/chain_2.csv: disk full");
    }
}
