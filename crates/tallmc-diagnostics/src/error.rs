//! The error type of tallmc-diagnostics.

/// Result alias with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Errors reported by the diagnostics: all of them are bad input.
///
/// Every message names the offending value and what was expected. Degenerate but valid input
/// (constant chains, one chain where R̂ needs two) is *not* an error: it gives the value ArviZ
/// gives, often NaN, as each function documents.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No chains were given.
    #[error("no chains given: expected at least one chain of draws")]
    NoChains,
    /// Chains have different lengths.
    #[error(
        "chain {chain} has {found} draws but chain 0 has {expected}: all chains must have the same length"
    )]
    UnequalChains {
        /// Index of the first chain whose length differs from chain 0's.
        chain: usize,
        /// Length of chain 0.
        expected: usize,
        /// Length of chain `chain`.
        found: usize,
    },
    /// Too few draws per chain for the requested diagnostic.
    #[error("too few draws for {what}: {found} per chain, expected at least {min}")]
    TooFewDraws {
        /// The diagnostic asked for (e.g. `ess_bulk`).
        what: &'static str,
        /// Draws per chain given.
        found: usize,
        /// The minimum number of draws per chain.
        min: usize,
    },
    /// A draw is NaN or infinite.
    #[error("non-finite draw {value} in chain {chain} at draw {draw}: all draws must be finite")]
    NonFinite {
        /// Chain index.
        chain: usize,
        /// Draw index within the chain.
        draw: usize,
        /// The value.
        value: f64,
    },
    /// A scalar argument is outside its allowed range, or another error of tallmc's one
    /// vocabulary ([`tallmc_core::Error`]; e.g. `InvalidParameter`).
    #[error(transparent)]
    Core(#[from] tallmc_core::Error),
    /// An error in the draws of one named parameter (from [`summarize`](crate::summarize)).
    #[error("parameter {name}: {source}")]
    InParameter {
        /// The parameter's name.
        name: String,
        /// What was wrong with its draws.
        source: Box<Error>,
    },
}

impl Error {
    /// A [`tallmc_core::Error::DimensionMismatch`] naming `what`.
    pub(crate) fn dimension(what: impl ToString, expected: usize, found: usize) -> Self {
        Self::Core(tallmc_core::Error::dimension(what, expected, found))
    }

    /// A [`tallmc_core::Error::InvalidParameter`] naming the argument.
    pub(crate) fn invalid(
        name: &'static str, value: impl ToString, expected: &'static str,
    ) -> Self {
        Self::Core(tallmc_core::Error::invalid(name, value, expected))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_value_and_expectation() {
        let e = Error::UnequalChains { chain: 2, expected: 100, found: 99 };
        assert_eq!(
            e.to_string(),
            "chain 2 has 99 draws but chain 0 has 100: all chains must have the same length"
        );
        let e = Error::NonFinite { chain: 1, draw: 7, value: f64::NAN };
        assert_eq!(
            e.to_string(),
            "non-finite draw NaN in chain 1 at draw 7: all draws must be finite"
        );
        let e = Error::invalid("prob", 1.5, "a number in the open interval (0, 1)");
        assert_eq!(
            e.to_string(),
            "invalid prob = 1.5: expected a number in the open interval (0, 1)"
        );
    }
}
