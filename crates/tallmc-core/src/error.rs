//! The error type shared by the core traits and kernels.

/// Result alias with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The one error vocabulary of tallmc's core types, mean tests, estimators and kernels.
///
/// Every message names the offending value and what was expected. `tallmc_bounds::Error` and
/// `tallmc_estimators::Error` are this type, so an error raised by a mean test or an estimator
/// reaches the kernel, the driver and the user as the same matchable value; the crates with
/// errors of their own (data files in `tallmc-models`, diagnostics, the drivers' I/O and the
/// reproduction suites) wrap it with `#[from]`.
///
/// **Recoverable or fatal.** Numerical trouble inside a trajectory or a decision (a
/// non-finite estimate, a non-finite population value) is *recoverable*: a kernel that meets it
/// rejects the move and reports a divergence in its stats, and the chain goes on. Every other
/// variant is *fatal*: the chain stops with it. [`Error::is_recoverable`] tells the two apart,
/// as nuts-rs's `LogpError::is_recoverable` does. Model evaluations themselves return plain
/// numbers; a NaN or ±∞ there is a divergence by construction.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A parameter is outside its allowed range.
    #[error("invalid {name} = {value}: expected {expected}")]
    InvalidParameter {
        /// Name of the parameter, as the user wrote it (e.g. `step_size`).
        name: &'static str,
        /// The value given, formatted.
        value: String,
        /// What was expected (e.g. `a finite number > 0`).
        expected: String,
    },
    /// A vector or matrix has the wrong length.
    #[error("dimension mismatch for {what}: expected {expected}, found {found}")]
    DimensionMismatch {
        /// What had the wrong size (e.g. `initial position`).
        what: String,
        /// The expected length.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// A value that must be finite is NaN or infinite.
    #[error("non-finite value in {what}: {value} at index {index}")]
    NonFinite {
        /// Where the value was (e.g. `initial position`).
        what: String,
        /// Index of the value.
        index: usize,
        /// The value.
        value: f64,
    },
    /// A state that must be binary (entries 0.0 or 1.0) is not.
    #[error("{what}: entry {index} is {value}; a binary state has entries 0.0 or 1.0")]
    NotBinary {
        /// Which state (e.g. `initial state`).
        what: String,
        /// Index of the entry.
        index: usize,
        /// The entry.
        value: f64,
    },
    /// A matrix that must be symmetric positive definite is not.
    #[error("{what} is not symmetric positive definite (pivot {pivot} = {value})")]
    NotPositiveDefinite {
        /// Which matrix.
        what: String,
        /// Row of the failing Cholesky pivot.
        pivot: usize,
        /// Value of the pivot before the square root.
        value: f64,
    },
    /// The log density is not finite where a finite value is required (e.g. at the start).
    #[error("log density is {value} at {what}; a finite value is required")]
    NonFiniteLogDensity {
        /// Where it was evaluated.
        what: String,
        /// The value.
        value: f64,
    },
    /// A quantity a kernel needs at its initial position is not finite there.
    #[error("{what} is not finite at the initial position; start the chain elsewhere")]
    NonFiniteAtStart {
        /// The quantity (e.g. `the minibatch estimate of the rate`).
        what: &'static str,
    },
    /// An exact sampler's rate exceeded the upper bound it was thinned against, so the bound
    /// (provided by the model) is wrong and the draws would be biased.
    #[error(
        "the {what} was exceeded: rate/bound = {ratio} at trajectory time {time}; an exact \
         sampler needs a bound that holds everywhere"
    )]
    BoundViolation {
        /// Which bound.
        what: String,
        /// rate/bound at the proposal (> 1).
        ratio: f64,
        /// Trajectory time of the proposal.
        time: f64,
    },

    // --- Mean tests (`tallmc-bounds`) ---
    /// A mean test needs a bound on the range of the population values and none was given.
    #[error(
        "the {test} needs a bound on the range of the values (max − min), and the population has none; use a model with term bounds"
    )]
    MissingRange {
        /// The test that needs it.
        test: &'static str,
    },
    /// A kernel was built with a mean test that needs a range bound, from a model without term
    /// bounds.
    #[error(
        "the {test} test needs a bound on the range of ℓ_i(θ′) − ℓ_i(θ): build the kernel with \
         `with_term_bounds()` on a model with term bounds"
    )]
    TermBoundsRequired {
        /// The test, as it describes itself.
        test: String,
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
    /// A population value is NaN or infinite (recoverable: the decision is a rejection).
    #[error("population value {value} (draw {index}) is not finite")]
    NonFiniteValue {
        /// The value.
        value: f64,
        /// Its position among the values drawn.
        index: usize,
    },
    /// A mean test's threshold is NaN.
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

    // --- Estimators (`tallmc-estimators`) ---
    /// A second-order control variate was asked for a model without per-datum Hessians.
    #[error(
        "a second-order control variate needs per-datum Hessians: build it with ControlVariate::new on a model implementing TermHessians, or use order 0 or 1"
    )]
    HessiansRequired,
    /// An estimate or its gradient is NaN or infinite (recoverable: a divergence or a
    /// rejected move). Allocates nothing, so that estimators can return it in their hot loop.
    #[error("non-finite {what}: {value}")]
    NonFiniteEstimate {
        /// What was not finite (e.g. `θ*` or `difference estimate ℓ̂`).
        what: &'static str,
        /// The offending value (the first non-finite entry for vectors).
        value: f64,
    },

    // --- Where an error happened ---
    /// An error, with where it happened (a Gibbs variable, the proxy sums at θ*, …).
    #[error("{context}: {source}")]
    Context {
        /// Where (e.g. `Gibbs update of variable 3`).
        context: String,
        /// The error.
        source: Box<Error>,
    },
    /// A full-data pass over shards held elsewhere (a cluster's workers) failed
    /// ([`crate::shard_passes`]); the message says which shard and why.
    #[error("a pass over the shards failed: {0}")]
    ShardPass(String),
    /// A kernel's internal invariant does not hold: a bug in tallmc, please report it.
    #[error("internal error: {0}; this is a bug in tallmc, please report it")]
    Internal(&'static str),
}

impl Error {
    /// Shorthand for [`Error::InvalidParameter`].
    pub fn invalid(name: &'static str, value: impl ToString, expected: impl ToString) -> Self {
        Self::InvalidParameter { name, value: value.to_string(), expected: expected.to_string() }
    }

    /// Shorthand for [`Error::DimensionMismatch`].
    pub fn dimension(what: impl ToString, expected: usize, found: usize) -> Self {
        Self::DimensionMismatch { what: what.to_string(), expected, found }
    }

    /// This error with where it happened ([`Error::Context`]).
    pub fn context(self, context: impl ToString) -> Self {
        Self::Context { context: context.to_string(), source: Box::new(self) }
    }

    /// Whether a kernel may treat this error as a divergence (a rejected move) and go on:
    /// a non-finite estimate or population value, also under a [`Error::Context`]. Every
    /// other error is fatal.
    pub fn is_recoverable(&self) -> bool {
        match self {
            Self::NonFiniteEstimate { .. } | Self::NonFiniteValue { .. } => true,
            Self::Context { source, .. } => source.is_recoverable(),
            _ => false,
        }
    }

    /// Checks that `found == expected` ([`Error::DimensionMismatch`] naming `what` otherwise).
    pub fn check_len(what: &str, found: usize, expected: usize) -> Result<()> {
        if found == expected { Ok(()) } else { Err(Self::dimension(what, expected, found)) }
    }

    /// Checks that every entry of an estimate is finite ([`Error::NonFiniteEstimate`] with the
    /// first offending entry otherwise; allocates nothing).
    pub fn check_finite_estimate(what: &'static str, values: &[f64]) -> Result<()> {
        match values.iter().find(|v| !v.is_finite()) {
            Some(&value) => Err(Self::NonFiniteEstimate { what, value }),
            None => Ok(()),
        }
    }

    /// Checks that one estimate is finite ([`Error::NonFiniteEstimate`] otherwise).
    pub fn check_finite_estimate_value(what: &'static str, value: f64) -> Result<()> {
        if value.is_finite() { Ok(()) } else { Err(Self::NonFiniteEstimate { what, value }) }
    }
}

/// Checks that `values` has length `expected` and holds only finite numbers.
pub fn check_finite_vector(what: &str, values: &[f64], expected: usize) -> Result<()> {
    if values.len() != expected {
        return Err(Error::dimension(what, expected, values.len()));
    }
    check_finite(what, values)
}

/// Checks that every entry of `values` is finite.
pub fn check_finite(what: &str, values: &[f64]) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(index) => {
            Err(Error::NonFinite { what: what.to_string(), index, value: values[index] })
        }
        None => Ok(()),
    }
}

/// Checks that `value` is finite and strictly positive.
pub fn check_positive(name: &'static str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(name, value, "a finite number > 0"))
    }
}

/// Checks that `value` lies in the open interval (0, 1).
pub fn check_unit_open(name: &'static str, value: f64) -> Result<()> {
    if value > 0.0 && value < 1.0 {
        Ok(())
    } else {
        Err(Error::invalid(name, value, "a number in the open interval (0, 1)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_value_and_expectation() {
        let e = Error::invalid("step_size", -0.1, "a finite number > 0");
        assert_eq!(e.to_string(), "invalid step_size = -0.1: expected a finite number > 0");
        let e = check_finite_vector("initial position", &[0.0, f64::NAN], 2).unwrap_err();
        assert_eq!(e.to_string(), "non-finite value in initial position: NaN at index 1");
        let e = check_finite_vector("initial position", &[0.0], 2).unwrap_err();
        assert!(e.to_string().contains("expected 2, found 1"));
        assert!(check_unit_open("target_accept", 1.0).is_err());
        assert!(check_unit_open("target_accept", 0.8).is_ok());
        assert!(check_positive("step_size", f64::INFINITY).is_err());
    }

    #[test]
    fn context_keeps_the_typed_error_and_its_recoverability() {
        let e = Error::NonFiniteEstimate { what: "ℓ̂", value: f64::NAN }.context("time 0.5");
        assert_eq!(e.to_string(), "time 0.5: non-finite ℓ̂: NaN");
        assert!(e.is_recoverable());
        let fatal = Error::EmptyPopulation.context("mean test");
        assert!(!fatal.is_recoverable());
        assert!(
            matches!(&fatal, Error::Context { source, .. } if **source == Error::EmptyPopulation)
        );
        assert!(Error::NonFiniteValue { value: f64::INFINITY, index: 3 }.is_recoverable());
        assert!(!Error::HessiansRequired.is_recoverable());
    }
}
