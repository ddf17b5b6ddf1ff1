//! Thinning: keep a proposal from an upper bound with probability rate/bound.

use rand::{Rng, RngExt};
use serde::Serialize;

/// The outcome of one thinning decision.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ThinningDecision {
    /// Whether the proposal is kept (an event of the thinned process).
    pub accept: bool,
    /// rate⁺/bound at the proposal (+∞ for a positive rate over a zero bound; NaN when the rate
    /// or the bound is NaN).
    pub ratio: f64,
    /// Whether the bound was exceeded (ratio > 1).
    pub violation: bool,
}

/// Decides a proposal at which the true rate is `rate` (its positive part is used) and the
/// rate it was proposed from is `bound` ≥ 0: kept with probability min(1, rate⁺/bound), by one
/// uniform draw u ∈ [0, 1) (kept iff u·bound < rate⁺).
///
/// When `bound` ≥ rate⁺ everywhere, the kept proposals are exactly a Poisson process of rate
/// rate⁺ (Lewis & Shedler 1979). A ratio above 1 means the bound was wrong at this point: the
/// proposal is kept (the best one can do), and [`ThinningDecision::violation`] reports it — an
/// exact sampler should treat it as an error, SBPS counts it as its bias diagnostic. A NaN rate
/// or bound is never kept and not a violation: the caller must check finiteness (a divergence).
/// One uniform draw is consumed in every case, so the random stream does not depend on the
/// outcome.
pub fn thin<R: Rng + ?Sized>(rate: f64, bound: f64, rng: &mut R) -> ThinningDecision {
    let u: f64 = rng.random();
    let positive = rate.max(0.0);
    if rate.is_nan() || bound.is_nan() {
        return ThinningDecision { accept: false, ratio: f64::NAN, violation: false };
    }
    let ratio = if positive == 0.0 {
        0.0
    } else if bound > 0.0 {
        positive / bound
    } else {
        f64::INFINITY
    };
    ThinningDecision { accept: u * bound < positive, ratio, violation: ratio > 1.0 }
}

/// Running totals of thinning decisions.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ThinningCounts {
    /// Proposals decided.
    pub proposals: u64,
    /// Proposals kept.
    pub accepted: u64,
    /// Proposals whose ratio exceeded 1.
    pub violations: u64,
    /// The largest ratio seen (0 before any proposal).
    pub max_ratio: f64,
}

impl ThinningCounts {
    /// Adds one decision.
    pub fn record(&mut self, d: &ThinningDecision) {
        self.proposals += 1;
        self.accepted += u64::from(d.accept);
        self.violations += u64::from(d.violation);
        if d.ratio > self.max_ratio {
            self.max_ratio = d.ratio;
        }
    }

    /// accepted / proposals (NaN before any proposal).
    pub fn acceptance_rate(&self) -> f64 {
        self.accepted as f64 / self.proposals as f64
    }

    /// violations / proposals (NaN before any proposal).
    pub fn violation_rate(&self) -> f64 {
        self.violations as f64 / self.proposals as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn ratios_violations_and_nan() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let d = thin(2.0, 4.0, &mut rng);
        assert_eq!((d.ratio, d.violation), (0.5, false));
        let d = thin(5.0, 4.0, &mut rng);
        assert!(d.accept && d.violation && d.ratio == 1.25);
        let d = thin(-1.0, 4.0, &mut rng);
        assert!(!d.accept && d.ratio == 0.0);
        let d = thin(1.0, 0.0, &mut rng);
        assert!(d.accept && d.violation && d.ratio.is_infinite());
        let d = thin(f64::NAN, 1.0, &mut rng);
        assert!(!d.accept && !d.violation && d.ratio.is_nan());
        let mut c = ThinningCounts::default();
        for _ in 0..10_000 {
            c.record(&thin(1.0, 4.0, &mut rng));
        }
        // Binomial(10⁴, 1/4): sd 0.0043.
        assert!((c.acceptance_rate() - 0.25).abs() < 4.0 * 0.0044, "{}", c.acceptance_rate());
        assert_eq!(c.violations, 0);
        assert_eq!(c.max_ratio, 0.25);
    }
}
