//! Errors of the estimators and their configurations.

/// Result alias with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Errors of the estimators, their subsample states and their tuning helpers.
///
/// Configuration errors (sizes, orders, dimensions) are reported at construction and name the
/// bad value and the expected range. Numerical trouble during estimation (a non-finite estimate
/// or gradient) is reported as [`Error::NonFinite`] so that a kernel can turn it into a
/// divergence instead of propagating NaN silently; it allocates nothing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A parameter is outside its allowed range.
    #[error("invalid {name} = {value}: expected {expected}")]
    InvalidParameter {
        /// Name of the parameter (e.g. `subsample size m`).
        name: &'static str,
        /// The value given, formatted.
        value: String,
        /// What was expected.
        expected: String,
    },
    /// A vector has the wrong length.
    #[error("dimension mismatch for {what}: expected {expected}, found {found}")]
    DimensionMismatch {
        /// What had the wrong size (e.g. `θ`).
        what: &'static str,
        /// The expected length.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// A second-order control variate was asked for a model without per-datum Hessians.
    #[error(
        "a second-order control variate needs per-datum Hessians: build it with ControlVariate::new on a model implementing TermHessians, or use order 0 or 1"
    )]
    HessiansRequired,
    /// A value that must be finite is NaN or infinite.
    #[error("non-finite {what}: {value}")]
    NonFinite {
        /// What was not finite (e.g. `θ*` or `difference estimate ℓ̂`).
        what: &'static str,
        /// The offending value (the first non-finite entry for vectors).
        value: f64,
    },
    /// An error of a core type (e.g. a block subsample's configuration).
    #[error(transparent)]
    Core(#[from] tallmc_core::Error),
}

impl Error {
    /// An [`Error::InvalidParameter`].
    pub(crate) fn invalid(
        name: &'static str,
        value: impl std::fmt::Display,
        expected: impl Into<String>,
    ) -> Self {
        Self::InvalidParameter { name, value: value.to_string(), expected: expected.into() }
    }

    /// Checks a length.
    pub(crate) fn check_len(what: &'static str, found: usize, expected: usize) -> Result<()> {
        if found == expected {
            Ok(())
        } else {
            Err(Self::DimensionMismatch { what, expected, found })
        }
    }

    /// Checks that every entry is finite.
    pub(crate) fn check_finite(what: &'static str, values: &[f64]) -> Result<()> {
        match values.iter().find(|v| !v.is_finite()) {
            Some(&value) => Err(Self::NonFinite { what, value }),
            None => Ok(()),
        }
    }

    /// Checks that one value is finite.
    pub(crate) fn check_finite_value(what: &'static str, value: f64) -> Result<()> {
        if value.is_finite() { Ok(()) } else { Err(Self::NonFinite { what, value }) }
    }
}
