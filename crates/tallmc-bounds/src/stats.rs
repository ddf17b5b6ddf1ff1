//! Running statistics of the values a test has drawn, and the drawing loop shared by the tests.

use rand::Rng;

use crate::{Error, Population, Result};

/// Most values drawn into a test's scratch buffer at once (memory, not a statistical choice): a
/// look that needs more values draws them in several chunks, which gives the same values as one
/// big draw.
pub(crate) const DRAW_CHUNK: usize = 4096;

/// Checks common to every test at the start of a decision; returns N.
pub(crate) fn start_decision<P: Population + ?Sized>(
    population: &P, threshold: f64,
) -> Result<usize> {
    if threshold.is_nan() {
        return Err(Error::NanThreshold);
    }
    let n = population.size();
    if n == 0 {
        return Err(Error::EmptyPopulation);
    }
    let drawn = population.drawn();
    if drawn != 0 {
        return Err(Error::PopulationNotReset { drawn });
    }
    Ok(n)
}

/// The decision for an infinite threshold, taken without drawing: every mean of finite values is
/// below +∞ and above −∞.
pub(crate) fn infinite_threshold_decision(threshold: f64) -> crate::Decision {
    crate::Decision { above: threshold < 0.0, used: 0, looks: 0, mean: 0.0, half_width: 0.0 }
}

/// Draws `count` more values from `population` through `buffer` (in chunks of its length) and
/// pushes them into `stats`.
pub(crate) fn draw_more<P: Population + ?Sized, R: Rng + ?Sized>(
    population: &mut P, buffer: &mut [f64], mut count: usize, stats: &mut RunningStats, rng: &mut R,
) -> Result<()> {
    while count > 0 {
        let k = count.min(buffer.len());
        let chunk = &mut buffer[..k];
        population.draw(chunk, rng);
        stats.push_all(chunk)?;
        count -= k;
    }
    Ok(())
}

/// Running count, sum, mean and sum of squared deviations of a stream of values.
///
/// * The **mean** is a compensated (Neumaier) sum divided by the count, accurate to a few ulps
///   whatever the order of magnitude of the values; every test of this crate computes the mean of
///   the values it drew this way, so that when all N values are drawn (the exact decision) the
///   tests agree with [`crate::ExactTest`] bit for bit given the same draws.
/// * The **sum of squared deviations** M₂ = Σ (x_i − x̄)² uses Welford's update
///   (M₂ += (x − m_old)(x − m_new)), stable for values with a large mean and a small spread.
///
/// Cost: a few flops per value, no allocation. A mean test written outside this crate (see the
/// `user_mean_test` example of the `tallmc` crate) keeps its running moments in one too, and so
/// agrees with [`crate::ExactTest`] when it has drawn every value.
#[derive(Debug, Clone, Copy)]
pub struct RunningStats {
    count: usize,
    sum: f64,
    compensation: f64,
    welford_mean: f64,
    m2: f64,
    min: f64,
    max: f64,
}

impl Default for RunningStats {
    fn default() -> Self {
        Self {
            count: 0,
            sum: 0.0,
            compensation: 0.0,
            welford_mean: 0.0,
            m2: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }
}

impl RunningStats {
    /// Forgets every value.
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// Number of values pushed.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Adds `values`, which are the draws `first_index..` of the current decision; a NaN or
    /// infinite value is an error naming the value and its position.
    pub fn push_all(&mut self, values: &[f64]) -> Result<()> {
        for &x in values {
            if !x.is_finite() {
                return Err(Error::NonFiniteValue { value: x, index: self.count });
            }
            self.push(x);
        }
        Ok(())
    }

    fn push(&mut self, x: f64) {
        self.count += 1;
        // Neumaier's compensated summation.
        let t = self.sum + x;
        if self.sum.abs() >= x.abs() {
            self.compensation += (self.sum - t) + x;
        } else {
            self.compensation += (x - t) + self.sum;
        }
        self.sum = t;
        // Welford.
        let delta = x - self.welford_mean;
        self.welford_mean += delta / self.count as f64;
        self.m2 += delta * (x - self.welford_mean);
        self.min = self.min.min(x);
        self.max = self.max.max(x);
    }

    /// max − min of the values (0 when there are none).
    pub fn spread(&self) -> f64 {
        if self.count == 0 { 0.0 } else { self.max - self.min }
    }

    /// Mean of the values (0 when there are none).
    pub fn mean(&self) -> f64 {
        if self.count == 0 { 0.0 } else { (self.sum + self.compensation) / self.count as f64 }
    }

    /// Standard deviation with divisor `count` (the σ̂_t of the concentration bounds).
    pub fn sd_biased(&self) -> f64 {
        if self.count == 0 { 0.0 } else { (self.m2.max(0.0) / self.count as f64).sqrt() }
    }

    /// Standard deviation with divisor `count − 1` (the s_l of the t-test); 0 for fewer than two
    /// values.
    pub fn sd_unbiased(&self) -> f64 {
        if self.count < 2 { 0.0 } else { (self.m2.max(0.0) / (self.count - 1) as f64).sqrt() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_mean_small_spread_is_stable() {
        // Values 1e9 + {0, 1e-3, …, 9e-3}: the naive Σx² − n x̄² loses every digit. Reference:
        // two passes on the exactly representable deviations x − 1e9.
        let values: Vec<f64> = (0..10_000).map(|i| 1e9 + (i % 10) as f64 * 1e-3).collect();
        let shifted: Vec<f64> = values.iter().map(|x| x - 1e9).collect();
        let m = shifted.iter().sum::<f64>() / 1e4;
        let ss = shifted.iter().map(|d| (d - m) * (d - m)).sum::<f64>();
        let mut s = RunningStats::default();
        s.push_all(&values).unwrap();
        assert!((s.mean() - (1e9 + m)).abs() < 1e-6);
        let biased = (ss / 1e4).sqrt();
        let unbiased = (ss / 9_999.0).sqrt();
        assert!((s.sd_biased() - biased).abs() / biased < 1e-6, "{} vs {biased}", s.sd_biased());
        assert!((s.sd_unbiased() - unbiased).abs() / unbiased < 1e-6);
        assert_eq!(s.spread(), shifted[9] - shifted[0]);
    }

    #[test]
    fn compensated_mean_is_exact_on_cancelling_values() {
        let mut s = RunningStats::default();
        s.push_all(&[1e16, 1.0, -1e16, 1.0]).unwrap();
        assert_eq!(s.mean(), 0.5);
    }

    #[test]
    fn non_finite_values_are_errors_with_their_position() {
        let mut s = RunningStats::default();
        let err = s.push_all(&[1.0, 2.0, f64::NAN]).unwrap_err();
        assert!(matches!(err, Error::NonFiniteValue { index: 2, .. }));
        s.reset();
        assert!(s.push_all(&[f64::INFINITY]).is_err());
        assert_eq!(s.count(), 0);
    }
}
