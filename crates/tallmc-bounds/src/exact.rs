//! The exact test: use every value.

use rand::Rng;

use crate::stats::{
    DRAW_CHUNK, RunningStats, draw_more, infinite_threshold_decision, start_decision,
};
use crate::{Decision, Error, MeanTest, Population, Result};

/// Draws the whole population and compares its mean with the threshold: the decision of exact
/// MH (or exact Gibbs).
///
/// **Decision:** above ⇔ (1/N) Σ_i x_i > μ₀, the mean computed with compensated summation in
/// draw order (the same arithmetic as the approximate tests use when they reach t = N, so that
/// with the same draws every test agrees with this one bit for bit).
///
/// **Properties:** never wrong. An infinite threshold is decided without drawing.
///
/// **Cost:** N values (in one look per 4096 values, the size of its scratch buffer).
///
/// ```
/// use tallmc_bounds::{ExactTest, MeanTest, SlicePopulation};
/// use tallmc_core::rng::chain_rng;
///
/// let values: Vec<f64> = (0..1_000).map(|i| (i % 10) as f64).collect(); // mean 4.5
/// let mut population = SlicePopulation::new(&values, None)?;
/// let mut test = ExactTest::new();
/// let d = test.decide(&mut population, 4.4, &mut chain_rng(7, 0))?;
/// assert!(d.above);
/// assert_eq!(d.used, 1_000);
/// # Ok::<(), tallmc_bounds::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct ExactTest {
    buffer: Vec<f64>,
    stats: RunningStats,
}

impl ExactTest {
    /// The exact test.
    pub fn new() -> Self {
        Self::default()
    }
}

impl MeanTest for ExactTest {
    fn decide<P: Population + ?Sized, R: Rng + ?Sized>(
        &mut self, population: &mut P, threshold: f64, rng: &mut R,
    ) -> Result<Decision> {
        let n = start_decision(population, threshold)?;
        if threshold.is_infinite() {
            return Ok(infinite_threshold_decision(threshold));
        }
        if self.buffer.len() < DRAW_CHUNK {
            self.buffer.resize(DRAW_CHUNK, 0.0);
        }
        self.stats.reset();
        draw_more(population, &mut self.buffer, n, &mut self.stats, rng)?;
        let mean = self.stats.mean();
        Ok(Decision {
            above: mean > threshold,
            used: n,
            looks: n.div_ceil(DRAW_CHUNK),
            mean,
            half_width: 0.0,
        })
    }

    fn needs_range(&self) -> bool {
        false
    }

    fn check_population_size(&self, n: usize) -> Result<()> {
        if n == 0 { Err(Error::EmptyPopulation) } else { Ok(()) }
    }

    fn describe(&self) -> Vec<(String, String)> {
        vec![("test".into(), "exact".into())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SlicePopulation;
    use tallmc_core::rng::chain_rng;

    #[test]
    fn exact_test_uses_everything_and_is_right() {
        let values: Vec<f64> = (0..10_000).map(|i| (i % 7) as f64 - 3.0 + 1e-4).collect();
        let mut pop = SlicePopulation::new(&values, None).unwrap();
        let mut rng = chain_rng(1, 0);
        let mut test = ExactTest::new();
        let d = test.decide(&mut pop, 0.0, &mut rng).unwrap();
        assert_eq!(d.used, 10_000);
        assert_eq!(d.looks, 3);
        assert_eq!(d.above, pop.mean() > 0.0);
        pop.reset();
        let d = test.decide(&mut pop, 1.0, &mut rng).unwrap();
        assert!(!d.above);
        pop.reset();
        assert!(matches!(test.decide(&mut pop, f64::NAN, &mut rng), Err(Error::NanThreshold)));
    }

    #[test]
    fn infinite_thresholds_need_no_values_and_used_populations_are_refused() {
        let values = [1.0, 2.0, 3.0];
        let mut pop = SlicePopulation::new(&values, None).unwrap();
        let mut rng = chain_rng(1, 0);
        let mut test = ExactTest::new();
        let d = test.decide(&mut pop, f64::INFINITY, &mut rng).unwrap();
        assert!(!d.above && d.used == 0);
        let d = test.decide(&mut pop, f64::NEG_INFINITY, &mut rng).unwrap();
        assert!(d.above && d.used == 0);
        test.decide(&mut pop, 0.0, &mut rng).unwrap();
        let err = test.decide(&mut pop, 0.0, &mut rng).unwrap_err();
        assert_eq!(err, Error::PopulationNotReset { drawn: 3 });
        assert!(test.check_population_size(0).is_err());
        assert!(test.check_population_size(1).is_ok());
    }
}
