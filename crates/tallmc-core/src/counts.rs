//! Per-datum evaluation counts: the unit of cost in every tallmc figure.

use std::fmt;
use std::ops::{Add, AddAssign};

use serde::{Deserialize, Serialize};

/// How many per-datum evaluations a step (or a whole run) made, by kind.
///
/// * `terms` — evaluations of ℓ_i(θ) for one datum i at one θ;
/// * `gradients` — evaluations of ∇ℓ_i(θ);
/// * `hessians` — evaluations of ∇²ℓ_i(θ) or of a product ∇²ℓ_i(θ)·v.
///
/// A call that returns ℓ_i and ∇ℓ_i together for k indices counts k terms *and* k gradients.
/// Evaluations of the prior are not counted: they do not touch the data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvalCounts {
    /// Per-datum log-likelihood term evaluations ℓ_i(θ).
    pub terms: u64,
    /// Per-datum gradient evaluations ∇ℓ_i(θ).
    pub gradients: u64,
    /// Per-datum Hessian (or Hessian-vector product) evaluations.
    pub hessians: u64,
}

impl EvalCounts {
    /// No evaluations.
    pub const ZERO: Self = Self { terms: 0, gradients: 0, hessians: 0 };

    /// `k` term evaluations.
    pub fn terms(k: usize) -> Self {
        Self { terms: k as u64, ..Self::ZERO }
    }

    /// `k` evaluations of terms together with their gradients.
    pub fn terms_and_gradients(k: usize) -> Self {
        Self { terms: k as u64, gradients: k as u64, hessians: 0 }
    }

    /// `k` Hessian (or Hessian-vector product) evaluations.
    pub fn hessians(k: usize) -> Self {
        Self { hessians: k as u64, ..Self::ZERO }
    }

    /// Total per-datum evaluations of every kind: the cost used for CT = IF × evaluations.
    pub fn total(&self) -> u64 {
        self.terms + self.gradients + self.hessians
    }
}

/// `terms T, gradients G, Hessians H`, each count right-aligned in the formatter's width (if
/// any), so that lines of counts line up in a table.
///
/// ```
/// use tallmc_core::EvalCounts;
/// let c = EvalCounts::terms_and_gradients(250);
/// assert_eq!(c.to_string(), "terms 250, gradients 250, Hessians 0");
/// assert_eq!(format!("{c:4}"), "terms  250, gradients  250, Hessians    0");
/// ```
impl fmt::Display for EvalCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = f.width().unwrap_or(0);
        write!(
            f,
            "terms {:>w$}, gradients {:>w$}, Hessians {:>w$}",
            self.terms, self.gradients, self.hessians
        )
    }
}

impl Add for EvalCounts {
    type Output = Self;
    fn add(self, rhs: Self) -> Self {
        Self {
            terms: self.terms + rhs.terms,
            gradients: self.gradients + rhs.gradients,
            hessians: self.hessians + rhs.hessians,
        }
    }
}

impl AddAssign for EvalCounts {
    fn add_assign(&mut self, rhs: Self) {
        *self = *self + rhs;
    }
}

impl std::iter::Sum for EvalCounts {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::ZERO, Add::add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_by_kind() {
        let a = EvalCounts::terms_and_gradients(3);
        let b = EvalCounts::terms(2) + EvalCounts::hessians(5);
        let s: EvalCounts = [a, b].into_iter().sum();
        assert_eq!(s, EvalCounts { terms: 5, gradients: 3, hessians: 5 });
        assert_eq!(s.total(), 13);
    }
}
