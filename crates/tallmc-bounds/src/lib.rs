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
//! * [`ExactTest`] — uses every value: the exact MH / Gibbs decision;
//! * [`AusterityTest`] — the sequential Student-t test of Korattikara, Chen & Welling (2014):
//!   cheap, approximate, no guarantee (knob ε; ε = 0 is exact);
//! * [`ConfidenceTest`] — the concentration-bound test of Bardenet, Doucet & Holmes (2014):
//!   the decision differs from the exact one with probability at most δ, for any population with
//!   a known range bound;
//! * [`bounds`] — the Hoeffding–Serfling, empirical Bernstein and empirical Bernstein–Serfling
//!   half-widths, and [`Schedule`] — the confidence test's look sizes and error budget.
//!
//! Samplers are generic over [`MeanTest`], so a new test plugs into every one of them. Tests own
//! their scratch buffers: after the first decision, deciding allocates nothing.
//!
//! The mathematics, the guarantees, the costs and measured error rates are in
//! `docs/methods/mean-tests.md`.

#![warn(missing_docs)]

pub mod austerity;
pub mod bounds;
pub mod confidence;
pub mod error;
pub mod exact;
pub mod population;
pub mod schedule;
mod stats;
pub mod test;

pub use austerity::{AusterityConfig, AusterityTest};
pub use bounds::{BoundKind, half_width, half_width_ln, serfling_rho};
pub use confidence::{ConfidenceConfig, ConfidenceTest};
pub use error::{Error, Result};
pub use exact::ExactTest;
pub use population::SlicePopulation;
pub use schedule::Schedule;
pub use stats::RunningStats;
pub use test::{Decision, MeanTest, Population};
