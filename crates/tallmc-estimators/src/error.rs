//! Errors of the estimators: tallmc's one error vocabulary, [`tallmc_core::Error`].
//!
//! Configuration errors (sizes, orders, dimensions) are reported at construction and name the
//! bad value and the expected range. Numerical trouble during estimation (a non-finite estimate
//! or gradient) is [`Error::NonFiniteEstimate`], which allocates nothing and is
//! [recoverable](Error::is_recoverable): a kernel turns it into a divergence instead of
//! propagating NaN silently. [`Error::HessiansRequired`] is the estimators' own case.

pub use tallmc_core::error::{Error, Result};
