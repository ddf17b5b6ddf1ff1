//! Errors of the mean tests.

/// Errors of the mean tests and their configurations.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A parameter is outside its allowed range.
    #[error("invalid {name} = {value}: expected {expected}")]
    InvalidParameter {
        /// Name of the parameter (e.g. `epsilon`).
        name: &'static str,
        /// The value given, formatted.
        value: String,
        /// What was expected.
        expected: String,
    },
    /// The test needs a bound on the range of the population values and none was given.
    #[error(
        "the {test} needs a bound on the range of the values (max − min), and the population has none; use a model with term bounds"
    )]
    MissingRange {
        /// The test that needs it.
        test: &'static str,
    },
    /// The population's range bound is not a finite number ≥ 0.
    #[error("invalid range bound {0}: expected a finite number ≥ 0")]
    InvalidRange(f64),
    /// The values drawn spread over more than the population's range bound, so the bound is
    /// wrong and a concentration-bound test would lose its guarantee.
    #[error(
        "the values drawn span {observed}, more than the population's range bound {bound}; fix the model's term bounds"
    )]
    RangeExceeded {
        /// max − min of the values drawn so far.
        observed: f64,
        /// The range bound given by the population.
        bound: f64,
    },
    /// A population value is NaN or infinite.
    #[error("population value {value} (draw {index}) is not finite")]
    NonFiniteValue {
        /// The value.
        value: f64,
        /// Its position among the values drawn.
        index: usize,
    },
    /// The threshold is NaN.
    #[error("the threshold is NaN")]
    NanThreshold,
    /// The population already had values drawn when a test started.
    #[error(
        "the population has {drawn} values drawn already; prepare (reset) it before each decision"
    )]
    PopulationNotReset {
        /// How many values were drawn.
        drawn: usize,
    },
    /// The population is empty.
    #[error("the population is empty; a mean test needs at least one value")]
    EmptyPopulation,
}

impl Error {
    /// Shorthand for [`Error::InvalidParameter`].
    pub fn invalid(name: &'static str, value: impl ToString, expected: impl ToString) -> Self {
        Self::InvalidParameter { name, value: value.to_string(), expected: expected.to_string() }
    }
}

/// Result alias with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
