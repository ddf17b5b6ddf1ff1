//! Poisson clocks: the first arrival of an inhomogeneous Poisson process, thinning against an
//! upper bound, and superposition of independent clocks — the one implementation every
//! piecewise-deterministic sampler (BPS, SBPS, lipSBPS, Zig-Zag) simulates its events with.
//!
//! A Poisson process on t ≥ 0 with rate λ(t) ≥ 0 has its first arrival τ with
//!
//! ```text
//! P(τ > t) = exp(−Λ(t)),     Λ(t) = ∫_0^t λ(s) ds,
//! ```
//!
//! so τ = Λ⁻¹(E) with E ~ Exp(1) (inversion; τ = ∞ when E ≥ Λ(∞)). Four rates are inverted
//! exactly ([`Rate`]):
//!
//! * [`ConstantRate`] λ(t) = c: τ = E/c;
//! * [`AffineRate`] λ(t) = [a + bt]⁺ for any signs of a and b (REFERENCES §5): the smaller
//!   positive root of aτ + bτ²/2 = E in the cancellation-free form τ = 2E/(a + √(a² + 2bE)), or
//!   −a/b + √(2E/b) when the rate starts at zero;
//! * [`SquaredAffineRate`] λ(t) = c(r + st)² (a Taylor remainder's bound along a line):
//!   τ = 3E/(c r²(q² + q + 1)), q = ∛(1 + 3sE/(c r³));
//! * [`PiecewiseLinearRate`] λ(t) = [γ(t)]⁺, γ linear between knots (SBPS's proposal band, and
//!   piecewise-constant automatic bounds as a special case), inverted piece by piece with the
//!   affine formula — only the positive part of a piece that crosses zero counts.
//!
//! **Thinning** (Lewis & Shedler 1979): to simulate a rate λ(t) ≤ λ̄(t), propose from λ̄ and keep
//! a proposal at t with probability λ(t)/λ̄(t); the kept points form a Poisson process of rate λ.
//! [`thin`] makes that decision and reports the ratio, so a caller can count *bound
//! violations* (ratio > 1: the bound was wrong there; an error for an exact sampler, the bias
//! diagnostic of SBPS); [`ThinningCounts`] accumulates proposals, acceptances and violations.
//!
//! **Superposition**: independent Poisson processes with rates λ₁, …, λ_K superpose to one with
//! rate Σλ_k, and the process that fired first is process k with probability λ_k(τ)/Σλ(τ).
//! Drawing each clock's first arrival and taking the earliest ([`earliest`]) simulates both at
//! once: Zig-Zag's d coordinate clocks, a bounce clock plus a refresh clock, lipSBPS's data,
//! prior and refresh clocks.
//!
//! Cost: O(1) per arrival for constant and affine rates, O(pieces visited) for piecewise-linear
//! rates; nothing allocates after a [`PiecewiseLinearRate`] has held its largest band.

mod affine;
mod piecewise;
mod quadratic;
mod superposition;
mod thinning;

pub use affine::{AffineRate, ConstantRate};
pub use piecewise::PiecewiseLinearRate;
pub use quadratic::SquaredAffineRate;
pub use superposition::earliest;
pub use thinning::{ThinningCounts, ThinningDecision, thin};

use rand::Rng;
use rand_distr::{Distribution, Exp1};

/// A Poisson rate λ(t) ≥ 0 on t ≥ 0 whose first arrival can be drawn exactly by inversion.
pub trait Rate {
    /// λ(t) for t ≥ 0.
    fn rate(&self, t: f64) -> f64;

    /// Λ(t) = ∫_0^t λ(s) ds for t ≥ 0 (+∞ allowed).
    fn integrated(&self, t: f64) -> f64;

    /// The first arrival for the unit-exponential variable `e`: inf{t ≥ 0 : Λ(t) ≥ e}, or
    /// `f64::INFINITY` when Λ(∞) ≤ e (the process may never fire).
    fn arrival_for(&self, e: f64) -> f64;

    /// The first arrival, drawn with one Exp(1) variable from `rng`.
    fn first_arrival<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        self.arrival_for(unit_exponential(rng))
    }
}

/// E ~ Exp(1).
pub fn unit_exponential<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    Exp1.sample(rng)
}
