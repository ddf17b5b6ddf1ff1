//! # tallmc-bounds
//!
//! Sequential tests of one question: **is the mean of a finite population above a threshold?**
//!
//! A Metropolis–Hastings accept/reject step is such a question — accept θ′ iff the mean of
//! l_i = ℓ_i(θ′) − ℓ_i(θ) over the N data points exceeds
//! μ₀ = (1/N) log[u p(θ) q(θ′|θ) / (p(θ′) q(θ|θ′))] — and so is a Gibbs update of a binary
//! variable (the population being the log-ratios of the factors touching it). Answering it from a
//! subsample drawn without replacement is what Austerity MH and the confidence sampler do.
//!
//! * [`Population`] — N values revealed in batches drawn without replacement, with an optional
//!   bound on their range;
//! * [`MeanTest`] — decides from a population and a threshold, reporting a [`Decision`] (the
//!   answer and how many values it used);
//! * [`ExactTest`] — uses every value: the exact MH / Gibbs decision.
//!
//! Samplers are generic over [`MeanTest`], so a new test plugs into every one of them.

#![warn(missing_docs)]

pub mod error;
pub mod exact;
pub mod population;
pub mod test;

pub use error::{Error, Result};
pub use exact::ExactTest;
pub use population::SlicePopulation;
pub use test::{Decision, MeanTest, Population};
