//! How long a phase of a continuous-time run lasts: what the continuous driver spends and what
//! its segment sinks are told (it lives below both).

use serde::{Deserialize, Serialize};
use tallmc_core::{Error, EventTotals};

/// The length of the warmup or the sampling phase of a continuous-time run.
///
/// * `Time(T)`: trajectory time T, exactly — the segment that crosses T is split there;
/// * `Events(n)`: until the phase has made n velocity changes ([`EventTotals::events`]:
///   bounces/flips + refreshments + divergences), stopping after the first step that reaches n;
/// * `Evaluations(n)`: until the phase has made n per-datum evaluations of any kind
///   ([`tallmc_core::EvalCounts::total`]), stopping after the first step that reaches n;
/// * `Draws { count, grid_step }`: trajectory time `count` · `grid_step`, so that a
///   [`GridDraws`](crate::continuous::GridDraws) adapter with the same `grid_step` delivers exactly
///   `count` draws x(kΔ), k = 1, …, `count`.
///
/// A counting budget relies on the kernel making events (or evaluations): a kernel that never
/// changes its velocity (or reports no evaluations) would run forever under it — give such
/// kernels a time budget. Progress is reported as the fraction of the budget spent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Budget {
    /// Trajectory time (finite, ≥ 0; > 0 for sampling).
    Time(f64),
    /// Velocity changes (events).
    Events(u64),
    /// Per-datum evaluations.
    Evaluations(u64),
    /// `count` grid draws `grid_step` apart: time `count` · `grid_step`.
    Draws {
        /// Number of grid draws.
        count: usize,
        /// Grid step Δ (finite, > 0).
        grid_step: f64,
    },
}

/// Which phase a budget is for (error messages name it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Warmup,
    Sampling,
}

impl Budget {
    /// The trajectory time this budget stops at, for `Time` and `Draws` (`count` · `grid_step`);
    /// `None` for counting budgets.
    pub fn time_limit(&self) -> Option<f64> {
        match *self {
            Self::Time(t) => Some(t),
            Self::Draws { count, grid_step } => Some(count as f64 * grid_step),
            Self::Events(_) | Self::Evaluations(_) => None,
        }
    }

    /// The grid step of a `Draws` budget.
    pub fn grid_step(&self) -> Option<f64> {
        match *self {
            Self::Draws { grid_step, .. } => Some(grid_step),
            _ => None,
        }
    }

    /// Whether the budget is empty (time 0, no events, no evaluations, no draws).
    pub fn is_zero(&self) -> bool {
        match *self {
            Self::Time(t) => t == 0.0,
            Self::Events(n) | Self::Evaluations(n) => n == 0,
            Self::Draws { count, .. } => count == 0,
        }
    }

    /// Whether a counting budget (`Events`, `Evaluations`) is spent by `totals`; always false
    /// for time budgets (the driver stops those at the exact time).
    pub fn reached(&self, totals: &EventTotals) -> bool {
        match *self {
            Self::Events(n) => totals.events() >= n,
            Self::Evaluations(n) => totals.evals.total() >= n,
            Self::Time(_) | Self::Draws { .. } => false,
        }
    }

    /// Fraction of the budget spent after `time` of trajectory with `totals`, in [0, 1].
    pub(crate) fn fraction(&self, time: f64, totals: &EventTotals) -> f64 {
        let f = match *self {
            Self::Time(_) | Self::Draws { .. } => time / self.time_limit().unwrap_or(1.0),
            Self::Events(n) => totals.events() as f64 / n as f64,
            Self::Evaluations(n) => totals.evals.total() as f64 / n as f64,
        };
        if f.is_nan() { 1.0 } else { f.clamp(0.0, 1.0) }
    }

    /// Checks the budget: times finite and ≥ 0, grid steps finite and > 0, the product
    /// `count` · `grid_step` finite; zero is allowed for warmup only.
    pub(crate) fn validate(&self, phase: Phase) -> tallmc_core::Result<()> {
        let warm = phase == Phase::Warmup;
        let (name_time, name_step, name_events, name_evals, name_draws) = if warm {
            (
                "warmup time budget",
                "warmup grid_step",
                "warmup events budget",
                "warmup evaluations budget",
                "warmup draws budget",
            )
        } else {
            (
                "sampling time budget",
                "sampling grid_step",
                "sampling events budget",
                "sampling evaluations budget",
                "sampling draws budget",
            )
        };
        let at_least = if warm { "≥ 0" } else { "> 0" };
        match *self {
            Self::Time(t) => {
                if !(t.is_finite() && (t > 0.0 || (warm && t == 0.0))) {
                    return Err(Error::invalid(
                        name_time,
                        t,
                        format!("a finite trajectory time {at_least}"),
                    ));
                }
            }
            Self::Events(n) if n == 0 && !warm => {
                return Err(Error::invalid(name_events, n, "at least 1 event"));
            }
            Self::Evaluations(n) if n == 0 && !warm => {
                return Err(Error::invalid(name_evals, n, "at least 1 evaluation"));
            }
            Self::Draws { count, grid_step } => {
                if !(grid_step.is_finite() && grid_step > 0.0) {
                    return Err(Error::invalid(name_step, grid_step, "a finite number > 0"));
                }
                if count == 0 && !warm {
                    return Err(Error::invalid(name_draws, count, "at least 1 draw"));
                }
                let t = count as f64 * grid_step;
                if !t.is_finite() {
                    return Err(Error::invalid(
                        name_draws,
                        format!("{count} draws × grid_step {grid_step} = {t}"),
                        "a finite trajectory time",
                    ));
                }
            }
            Self::Events(_) | Self::Evaluations(_) => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_phase_and_value() {
        let e = Budget::Time(-1.0).validate(Phase::Warmup).unwrap_err().to_string();
        assert_eq!(e, "invalid warmup time budget = -1: expected a finite trajectory time ≥ 0");
        let e = Budget::Time(0.0).validate(Phase::Sampling).unwrap_err().to_string();
        assert!(e.contains("sampling time budget = 0"), "{e}");
        assert!(Budget::Time(0.0).validate(Phase::Warmup).is_ok());
        assert!(Budget::Time(f64::NAN).validate(Phase::Warmup).is_err());
        assert!(Budget::Time(f64::INFINITY).validate(Phase::Sampling).is_err());
        let e = Budget::Events(0).validate(Phase::Sampling).unwrap_err().to_string();
        assert!(e.contains("sampling events budget = 0"), "{e}");
        assert!(Budget::Events(0).validate(Phase::Warmup).is_ok());
        let e = Budget::Evaluations(0).validate(Phase::Sampling).unwrap_err().to_string();
        assert!(e.contains("sampling evaluations budget = 0"), "{e}");
        let zero_step = Budget::Draws { count: 10, grid_step: 0.0 };
        let e = zero_step.validate(Phase::Warmup).unwrap_err().to_string();
        assert!(e.contains("warmup grid_step = 0"), "{e}");
        let e = Budget::Draws { count: 0, grid_step: 0.1 }.validate(Phase::Sampling).unwrap_err();
        assert!(e.to_string().contains("sampling draws budget = 0"), "{e}");
        let huge = Budget::Draws { count: usize::MAX, grid_step: f64::MAX };
        assert!(huge.validate(Phase::Sampling).is_err());
    }

    #[test]
    fn limits_and_fractions() {
        let d = Budget::Draws { count: 3, grid_step: 0.1 };
        assert_eq!(d.time_limit(), Some(3.0 * 0.1));
        assert_eq!(d.grid_step(), Some(0.1));
        assert_eq!(Budget::Events(5).time_limit(), None);
        let mut t = EventTotals { bounces: 4, ..Default::default() };
        assert!(!Budget::Events(5).reached(&t));
        t.refreshes = 1;
        assert!(Budget::Events(5).reached(&t));
        assert_eq!(Budget::Events(10).fraction(0.0, &t), 0.5);
        assert_eq!(Budget::Time(2.0).fraction(3.0, &t), 1.0);
        assert!(Budget::Events(0).is_zero() && !Budget::Time(1.0).is_zero());
    }
}
