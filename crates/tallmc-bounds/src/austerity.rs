//! Austerity's sequential Student-t test (Korattikara, Chen & Welling 2014).

use rand::Rng;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::stats::{
    DRAW_CHUNK, RunningStats, draw_more, infinite_threshold_decision, start_decision,
};
use crate::{Decision, Error, MeanTest, Population, Result};

/// Settings of [`AusterityTest`]. Build the test with [`AusterityTest::new`], which validates
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AusterityConfig {
    /// The level ε ∈ [0, 1) of each look's test: decide once the p-value is below ε. Larger ε:
    /// fewer values, more wrong decisions. ε = 0 never stops early: every decision uses all N
    /// values and is exact. Default 0.05 (the value of BDH 2014, §4.1).
    pub epsilon: f64,
    /// Values added at each look after the first (the paper's mini-batch size m), ≥ 1.
    /// Default 500.
    pub batch: usize,
    /// Values drawn before the first look, ≥ 2 (the t-statistic needs a sample variance);
    /// `None` means `batch`.
    pub first_batch: Option<usize>,
}

impl Default for AusterityConfig {
    fn default() -> Self {
        Self { epsilon: 0.05, batch: 500, first_batch: None }
    }
}

impl AusterityConfig {
    /// A configuration with level `epsilon` and mini-batch size `batch` (first batch = `batch`).
    pub fn new(epsilon: f64, batch: usize) -> Self {
        Self { epsilon, batch, first_batch: None }
    }

    /// Sets the size of the first batch.
    pub fn with_first_batch(mut self, first_batch: usize) -> Self {
        self.first_batch = Some(first_batch);
        self
    }

    /// The size of the first batch: `first_batch`, or `batch` when unset.
    pub fn first_batch(&self) -> usize {
        self.first_batch.unwrap_or(self.batch)
    }

    /// Checks every setting: ε ∈ [0, 1), `batch` ≥ 1, first batch ≥ 2.
    pub fn validate(&self) -> Result<()> {
        if !(self.epsilon >= 0.0 && self.epsilon < 1.0) {
            return Err(Error::invalid(
                "epsilon",
                self.epsilon,
                "a number in [0, 1) (0 = exact: never stop early)",
            ));
        }
        if self.batch == 0 {
            return Err(Error::invalid("batch", self.batch, "an integer ≥ 1"));
        }
        if self.first_batch() < 2 {
            return Err(Error::invalid(
                "first_batch",
                self.first_batch(),
                "an integer ≥ 2 (the t-statistic needs a sample variance)",
            ));
        }
        Ok(())
    }
}

/// Austerity MH's approximate test of "is the population mean above μ₀?": a sequential
/// Student-t test on a sample drawn without replacement (Korattikara, Chen & Welling 2014, §4,
/// eqs. (2)–(4) and Algorithm 1).
///
/// **Procedure.** Draw `first_batch` values, then `batch` more at each later look. After each
/// look, with n values of mean l̄ and standard deviation s_l (divisor n − 1):
///
/// * s = (s_l / √n) · √(1 − (n − 1)/(N − 1)) — the standard error of l̄ with the finite-population
///   correction (eq. (3));
/// * t = (l̄ − μ₀)/s (eq. (4)) and the p-value δ = 1 − T_{n−1}(|t|), T_{n−1} the Student-t CDF
///   with n − 1 degrees of freedom;
/// * if δ < ε, decide above ⇔ l̄ > μ₀; otherwise draw another batch;
/// * at n = N the mean is the population mean and the decision is exact.
///
/// **s = 0 before n = N** (every value drawn so far is equal): the literal rule gives |t| = ∞,
/// δ = 0 and stops at once — trusting a sample without spread to speak for the values not yet
/// seen, which is wrong e.g. for sparse data where most differences l_i are exactly 0. This
/// implementation treats such a look as inconclusive and draws the next batch; the test then
/// stops as soon as a value differs, or at n = N.
///
/// **Properties.** Approximate, with no guarantee: ε bounds the error of one look only if t
/// really follows T_{n−1} (a central-limit approximation: good for light-tailed values and large
/// n, bad for heavy tails — BDH 2014 §4.1), and a decision takes several looks, so the overall
/// probability of a decision different from the exact one can exceed ε (the measured rates are
/// in `docs/methods/mean-tests.md`). ε = 0 is exact: the p-value is never < 0, so every decision
/// uses all N values. An infinite threshold is decided without drawing.
///
/// **Cost.** `first_batch` + j · `batch` values for a decision at look j + 1, at most N; one
/// Student-t CDF evaluation per look. `half_width` of the [`Decision`] is the final s.
///
/// ```
/// use tallmc_bounds::{AusterityConfig, AusterityTest, MeanTest, SlicePopulation};
/// use tallmc_core::rng::chain_rng;
///
/// // 10 000 values with mean 0.5 and sd about 0.29; is the mean above 0.45?
/// let values: Vec<f64> = (0..10_000).map(|i| (i as f64 + 0.5) / 10_000.0).collect();
/// let mut population = SlicePopulation::new(&values, None)?;
/// let mut test = AusterityTest::new(AusterityConfig::new(0.05, 100))?;
/// let d = test.decide(&mut population, 0.45, &mut chain_rng(1, 0))?;
/// assert!(d.above);
/// assert!(d.used < 10_000); // decided from a subsample
/// # Ok::<(), tallmc_bounds::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct AusterityTest {
    config: AusterityConfig,
    stats: RunningStats,
    buffer: Vec<f64>,
}

impl AusterityTest {
    /// The test with validated settings (see [`AusterityConfig::validate`]).
    pub fn new(config: AusterityConfig) -> Result<Self> {
        config.validate()?;
        let largest = config.batch.max(config.first_batch()).min(DRAW_CHUNK);
        Ok(Self { config, stats: RunningStats::default(), buffer: vec![0.0; largest] })
    }

    /// The settings.
    pub fn config(&self) -> &AusterityConfig {
        &self.config
    }

    /// The p-value 1 − T_{n−1}(|t|) of the current sample, or `None` when it is not defined
    /// (s = 0) or cannot be evaluated.
    fn p_value(&self, threshold: f64, n_total: usize) -> Option<(f64, f64)> {
        let n = self.stats.count();
        let nf = n as f64;
        let fpc = 1.0 - (nf - 1.0) / (n_total as f64 - 1.0);
        let s = self.stats.sd_unbiased() / nf.sqrt() * fpc.max(0.0).sqrt();
        if s.is_nan() || s <= 0.0 {
            return None;
        }
        let t = (self.stats.mean() - threshold) / s;
        let dist = StudentsT::new(0.0, 1.0, nf - 1.0).ok()?;
        Some((dist.sf(t.abs()), s))
    }
}

impl MeanTest for AusterityTest {
    fn decide<P: Population + ?Sized, R: Rng + ?Sized>(
        &mut self, population: &mut P, threshold: f64, rng: &mut R,
    ) -> Result<Decision> {
        let n = start_decision(population, threshold)?;
        self.check_population_size(n)?;
        if threshold.is_infinite() {
            return Ok(infinite_threshold_decision(threshold));
        }
        self.stats.reset();
        let mut looks = 0;
        let mut target = self.config.first_batch();
        loop {
            let more = target - self.stats.count();
            draw_more(population, &mut self.buffer, more, &mut self.stats, rng)?;
            looks += 1;
            let used = self.stats.count();
            let mean = self.stats.mean();
            if used == n {
                return Ok(Decision {
                    above: mean > threshold,
                    used,
                    looks,
                    mean,
                    half_width: 0.0,
                });
            }
            if self.config.epsilon > 0.0
                && let Some((p_value, s)) = self.p_value(threshold, n)
                && p_value < self.config.epsilon
            {
                return Ok(Decision { above: mean > threshold, used, looks, mean, half_width: s });
            }
            target = used.saturating_add(self.config.batch).min(n);
        }
    }

    fn needs_range(&self) -> bool {
        false
    }

    fn check_population_size(&self, n: usize) -> Result<()> {
        if n == 0 {
            return Err(Error::EmptyPopulation);
        }
        let expected = || format!("at most the population size N = {n}");
        if self.config.first_batch() > n {
            return Err(Error::invalid("first_batch", self.config.first_batch(), expected()));
        }
        if self.config.batch > n {
            return Err(Error::invalid("batch", self.config.batch, expected()));
        }
        Ok(())
    }

    fn describe(&self) -> Vec<(String, String)> {
        vec![
            ("test".into(), "austerity".into()),
            ("epsilon".into(), self.config.epsilon.to_string()),
            ("batch".into(), self.config.batch.to_string()),
            ("first_batch".into(), self.config.first_batch().to_string()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SlicePopulation;
    use tallmc_core::rng::chain_rng;

    #[test]
    fn a_sample_without_spread_is_inconclusive() {
        // 999 zeros and one 1000: mean 1 > 0.5. The literal rule (|t| = ∞ on a constant sample)
        // would answer "below" from almost every first batch; here the test keeps drawing until
        // it meets the 1000, after which the sample mean is ≥ 1 and every decision is right.
        let mut values = vec![0.0; 999];
        values.push(1000.0);
        let mut pop = SlicePopulation::new(&values, None).unwrap();
        let mut test = AusterityTest::new(AusterityConfig::new(0.2, 10)).unwrap();
        let mut rng = chain_rng(5, 0);
        for _ in 0..200 {
            pop.reset();
            let d = test.decide(&mut pop, 0.5, &mut rng).unwrap();
            assert!(d.above, "{d:?}");
        }
        // A constant population is decided exactly, from every value.
        let constant = vec![3.0; 1000];
        let mut pop = SlicePopulation::new(&constant, None).unwrap();
        let d = test.decide(&mut pop, 2.0, &mut rng).unwrap();
        assert!(d.above && d.used == 1000 && d.half_width == 0.0);
    }

    #[test]
    fn decisions_report_the_standard_error_and_the_looks() {
        let values: Vec<f64> = (0..5_000).map(|i| ((i * 37) % 101) as f64).collect();
        let mut pop = SlicePopulation::new(&values, None).unwrap();
        let mut test =
            AusterityTest::new(AusterityConfig::new(0.05, 100).with_first_batch(40)).unwrap();
        let d = test.decide(&mut pop, 30.0, &mut chain_rng(1, 0)).unwrap();
        assert!(d.above);
        assert_eq!(d.used, 40 + 100 * (d.looks - 1));
        assert!(d.half_width > 0.0);
        // Stopped because the p-value fell below ε: |t| above the t quantile.
        let t = (d.mean - 30.0) / d.half_width;
        let q = StudentsT::new(0.0, 1.0, d.used as f64 - 1.0).unwrap().sf(t.abs());
        assert!(q < 0.05);
        assert_eq!(
            test.describe(),
            vec![
                ("test".to_string(), "austerity".to_string()),
                ("epsilon".to_string(), "0.05".to_string()),
                ("batch".to_string(), "100".to_string()),
                ("first_batch".to_string(), "40".to_string()),
            ]
        );
        assert_eq!(AusterityConfig::new(0.1, 300).first_batch(), 300);
    }
}
