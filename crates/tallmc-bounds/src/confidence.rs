//! The confidence sampler's test (Bardenet, Doucet & Holmes 2014).

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::bounds::{BoundKind, half_width_ln};
use crate::stats::{
    DRAW_CHUNK, RunningStats, draw_more, infinite_threshold_decision, start_decision,
};
use crate::{Decision, Error, MeanTest, Population, Result, Schedule};

/// Relative slack allowed between the spread of the drawn values and the declared range bound
/// before [`ConfidenceTest`] reports [`Error::RangeExceeded`] (rounding in the user's bound).
const RANGE_SLACK: f64 = 1e-9;

/// Settings of [`ConfidenceTest`]. Build the test with [`ConfidenceTest::new`], which validates
/// them. The defaults are the paper's (BDH 2014, §4: p = 2, γ = 2, δ = 0.01, the empirical
/// Bernstein–Serfling bound) and a first batch of 100.
///
/// **Why a first batch of 100.** A look can only stop when |Λ_t − μ₀| > c_t, and c_t contains a
/// range term (κ R log(10/δ_k)/t for the default bound, about 34 R/t at k = 1 with δ = 0.01)
/// that exceeds R — the largest |Λ_t − μ₀| can be when μ₀ lies within the values' range — for
/// t below about 34. Looks that cannot stop only spend error budget (δ_k shrinks with k), so the
/// first look should come after a few dozen values; at t = 100 the range term is about R/3 and
/// the σ̂ term starts to matter. Starting at 100 rather than 1 saves about seven useless looks
/// with γ = 2, and costs nothing on populations with N ≤ 100 — but a first batch above N is an
/// error, so lower it for small populations.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ConfidenceConfig {
    /// The concentration bound giving c_t.
    pub bound: BoundKind,
    /// Total error budget δ ∈ (0, 1): the probability that the decision differs from the exact
    /// one is at most δ.
    pub delta: f64,
    /// Exponent p > 1 of the error schedule δ_k = (p − 1)δ/(p k^p).
    pub p: f64,
    /// Growth factor γ > 1 of the look sizes t_k = ⌈γ t_{k−1}⌉.
    pub gamma: f64,
    /// Values drawn before the first look, ≥ 1.
    pub first_batch: usize,
}

impl Default for ConfidenceConfig {
    fn default() -> Self {
        Self {
            bound: BoundKind::EmpiricalBernsteinSerfling,
            delta: 0.01,
            p: 2.0,
            gamma: 2.0,
            first_batch: 100,
        }
    }
}

impl ConfidenceConfig {
    /// The default settings with bound `bound` and error budget `delta`.
    pub fn new(bound: BoundKind, delta: f64) -> Self {
        Self { bound, delta, ..Self::default() }
    }

    /// Sets the first batch.
    pub fn with_first_batch(mut self, first_batch: usize) -> Self {
        self.first_batch = first_batch;
        self
    }

    /// Sets the growth factor γ.
    pub fn with_gamma(mut self, gamma: f64) -> Self {
        self.gamma = gamma;
        self
    }

    /// Sets the exponent p.
    pub fn with_p(mut self, p: f64) -> Self {
        self.p = p;
        self
    }

    /// Checks every setting (δ ∈ (0, 1), p > 1, γ > 1, first batch ≥ 1) and returns the look
    /// schedule.
    pub fn schedule(&self) -> Result<Schedule> {
        Schedule::new(self.first_batch, self.gamma, self.p, self.delta)
    }
}

/// The confidence sampler's test of "is the population mean above μ₀?" (Bardenet, Doucet &
/// Holmes 2014, §2.2, eq. (10) and Fig. 3 "MHSubLhd").
///
/// **Procedure.** Look k = 1, 2, … after t_k values drawn without replacement
/// (t₁ = `first_batch`, t_k = min(N, ⌈γ t_{k−1}⌉), see [`Schedule`]). At each look compute the
/// mean Λ_t, the standard deviation σ̂_t (divisor t) and the half-width c_t of the chosen
/// [`BoundKind`] at level δ_k = (p − 1)δ/(p k^p), with the population's range bound R. Stop when
/// |Λ_t − μ₀| > c_t or t = N, and decide above ⇔ Λ_t > μ₀.
///
/// **Properties.** Exact in the sense of a guarantee: for every population and threshold, the
/// probability that the decision differs from the exact one is at most δ (BDH 2014, Lemma 3.1),
/// provided R really bounds max − min of the population. Each look's bound holds with
/// probability ≥ 1 − δ_k; Σ δ_k ≤ δ; when all hold, stopping at |Λ_t − μ₀| > c_t ≥ |Λ_t − μ| puts
/// μ on the same side of μ₀ as Λ_t. At t = N the decision is exact. The rate of wrong decisions
/// is usually far below δ (the bounds are conservative; measured rates in
/// `docs/methods/mean-tests.md`). As δ → 0 the test tends to the exact test.
/// An infinite threshold is decided without drawing.
///
/// **Cost.** t_K values for a decision at look K; at most N. The number of looks is at most
/// ⌈log_γ(N/t₁)⌉ + 1. When |μ − μ₀| is small relative to σ/√N the test needs all N values.
///
/// **Errors.** A population without [`Population::range`] ([`Error::MissingRange`]); a range
/// that is not finite and ≥ 0 ([`Error::InvalidRange`]); drawn values spreading wider than the
/// range ([`Error::RangeExceeded`]: the bound, and the guarantee, would be void).
///
/// ```
/// use tallmc_bounds::{BoundKind, ConfidenceConfig, ConfidenceTest, MeanTest, SlicePopulation};
/// use tallmc_core::rng::chain_rng;
///
/// let values: Vec<f64> = (0..100_000).map(|i| (i as f64 + 0.5) / 100_000.0).collect();
/// let range = SlicePopulation::exact_range(&values);
/// let mut population = SlicePopulation::new(&values, Some(range))?;
/// let mut test = ConfidenceTest::new(ConfidenceConfig::new(BoundKind::EmpiricalBernsteinSerfling, 0.01))?;
/// let d = test.decide(&mut population, 0.4, &mut chain_rng(1, 0))?; // the mean is 0.5
/// assert!(d.above);
/// assert!(d.used < 100_000);
/// assert!((d.mean - 0.4).abs() > d.half_width);
/// # Ok::<(), tallmc_bounds::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ConfidenceTest {
    config: ConfidenceConfig,
    schedule: Schedule,
    stats: RunningStats,
    buffer: Vec<f64>,
}

impl ConfidenceTest {
    /// The test with validated settings (see [`ConfidenceConfig::schedule`]).
    pub fn new(config: ConfidenceConfig) -> Result<Self> {
        let schedule = config.schedule()?;
        Ok(Self { config, schedule, stats: RunningStats::default(), buffer: vec![0.0; DRAW_CHUNK] })
    }

    /// The settings.
    pub fn config(&self) -> &ConfidenceConfig {
        &self.config
    }

    /// The look schedule.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }
}

impl MeanTest for ConfidenceTest {
    fn decide<P: Population + ?Sized, R: Rng + ?Sized>(
        &mut self, population: &mut P, threshold: f64, rng: &mut R,
    ) -> Result<Decision> {
        let n = start_decision(population, threshold)?;
        self.check_population_size(n)?;
        let range = population.range().ok_or(Error::MissingRange { test: "confidence test" })?;
        if !(range.is_finite() && range >= 0.0) {
            return Err(Error::InvalidRange(range));
        }
        if threshold.is_infinite() {
            return Ok(infinite_threshold_decision(threshold));
        }
        self.stats.reset();
        let mut look = 0;
        let mut target = self.schedule.first_size(n);
        loop {
            let more = target - self.stats.count();
            draw_more(population, &mut self.buffer, more, &mut self.stats, rng)?;
            look += 1;
            let used = self.stats.count();
            let mean = self.stats.mean();
            let spread = self.stats.spread();
            if spread > range * (1.0 + RANGE_SLACK) {
                return Err(Error::RangeExceeded { observed: spread, bound: range });
            }
            if used == n {
                return Ok(Decision {
                    above: mean > threshold,
                    used,
                    looks: look,
                    mean,
                    half_width: 0.0,
                });
            }
            let c = half_width_ln(
                self.config.bound,
                used,
                n,
                self.stats.sd_biased(),
                range,
                self.schedule.ln_inv_delta_at(look),
            );
            if (mean - threshold).abs() > c {
                return Ok(Decision {
                    above: mean > threshold,
                    used,
                    looks: look,
                    mean,
                    half_width: c,
                });
            }
            target = self.schedule.next_size(used, n);
        }
    }

    fn needs_range(&self) -> bool {
        true
    }

    fn check_population_size(&self, n: usize) -> Result<()> {
        if n == 0 {
            return Err(Error::EmptyPopulation);
        }
        if self.config.first_batch > n {
            return Err(Error::invalid(
                "first_batch",
                self.config.first_batch,
                format!("at most the population size N = {n}"),
            ));
        }
        Ok(())
    }

    fn describe(&self) -> Vec<(String, String)> {
        vec![
            ("test".into(), "confidence".into()),
            ("bound".into(), self.config.bound.name().into()),
            ("delta".into(), self.config.delta.to_string()),
            ("p".into(), self.config.p.to_string()),
            ("gamma".into(), self.config.gamma.to_string()),
            ("first_batch".into(), self.config.first_batch.to_string()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SlicePopulation;
    use tallmc_core::rng::chain_rng;

    #[test]
    fn stops_at_scheduled_looks_with_the_bound_it_reports() {
        let values: Vec<f64> = (0..50_000).map(|i| ((i * 7919) % 1000) as f64 / 1000.0).collect();
        let range = SlicePopulation::exact_range(&values);
        let mut pop = SlicePopulation::new(&values, Some(range)).unwrap();
        for kind in BoundKind::ALL {
            let mut test = ConfidenceTest::new(ConfidenceConfig::new(kind, 0.05)).unwrap();
            pop.reset();
            let d = test.decide(&mut pop, 0.45, &mut chain_rng(2, 0)).unwrap();
            assert!(d.above);
            let sizes: Vec<usize> = test.schedule().sizes(values.len()).collect();
            assert_eq!(d.used, sizes[d.looks - 1], "{kind}");
            assert!(d.used < values.len());
            assert!((d.mean - 0.45).abs() > d.half_width);
            // The reported half-width is c_t at the look's level.
            let delta = test.schedule().delta_at(d.looks);
            let c_no_sd = half_width_ln(kind, d.used, values.len(), 0.0, range, -delta.ln());
            assert!(d.half_width >= c_no_sd * (1.0 - 1e-12));
        }
        let test = ConfidenceTest::new(ConfidenceConfig::default()).unwrap();
        let described = test.describe();
        let keys: Vec<&str> = described.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["test", "bound", "delta", "p", "gamma", "first_batch"]);
        assert_eq!(described[1].1, "empirical-bernstein-serfling");
        assert_eq!(described[2].1, "0.01");
    }
}
