//! The error type shared by the core traits and kernels.

/// Result alias with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Errors reported by tallmc's core types and by kernels.
///
/// Every message names the offending value and what was expected. Numerical trouble inside a
/// trajectory (a non-finite energy, a huge energy error) is *not* an error: kernels report it as
/// a divergence in their stats.
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
    /// Anything else, with a message.
    #[error("{0}")]
    Other(String),
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
}
