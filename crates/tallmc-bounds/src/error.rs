//! Errors of the mean tests: tallmc's one error vocabulary, [`tallmc_core::Error`].
//!
//! The mean tests' own cases ([`Error::MissingRange`], [`Error::InvalidRange`],
//! [`Error::RangeExceeded`], [`Error::NonFiniteValue`], [`Error::NanThreshold`],
//! [`Error::PopulationNotReset`], [`Error::EmptyPopulation`]) are variants of that enum, so a
//! kernel passes a test's error up unchanged and a user matches it where the run stopped.

pub use tallmc_core::error::{Error, Result};
