//! The exact test: use every value.

use rand::Rng;

use crate::{Decision, Error, MeanTest, Population, Result};

/// Values drawn per batch by [`ExactTest`] (memory for the scratch buffer, not a statistical
/// choice).
const CHUNK: usize = 4096;

/// Draws the whole population and compares its mean with the threshold: the decision of exact
/// MH (or exact Gibbs). Cost: N values. Never wrong.
#[derive(Debug, Clone, Default)]
pub struct ExactTest {
    buffer: Vec<f64>,
}

impl ExactTest {
    /// The exact test.
    pub fn new() -> Self {
        Self::default()
    }
}

impl MeanTest for ExactTest {
    fn decide<P: Population + ?Sized, R: Rng + ?Sized>(
        &mut self,
        population: &mut P,
        threshold: f64,
        rng: &mut R,
    ) -> Result<Decision> {
        if threshold.is_nan() {
            return Err(Error::NanThreshold);
        }
        let n = population.size();
        if n == 0 {
            return Err(Error::EmptyPopulation);
        }
        if self.buffer.len() < CHUNK {
            self.buffer.resize(CHUNK, 0.0);
        }
        let mut sum = 0.0;
        let mut looks = 0;
        let start = population.drawn();
        while population.drawn() < n {
            let k = (n - population.drawn()).min(CHUNK);
            let batch = &mut self.buffer[..k];
            population.draw(batch, rng);
            if let Some((i, &v)) = batch.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(Error::NonFiniteValue { value: v, index: population.drawn() - k + i });
            }
            sum += batch.iter().sum::<f64>();
            looks += 1;
        }
        let used = n - start;
        let mean = sum / used.max(1) as f64;
        Ok(Decision { above: mean > threshold, used, looks, mean, half_width: 0.0 })
    }

    fn needs_range(&self) -> bool {
        false
    }

    /// Any N ≥ 1.
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
        assert_eq!(d.above, pop.mean() > 0.0);
        pop.reset();
        let d = test.decide(&mut pop, 1.0, &mut rng).unwrap();
        assert!(!d.above);
        pop.reset();
        assert!(matches!(test.decide(&mut pop, f64::NAN, &mut rng), Err(Error::NanThreshold)));
    }
}
