//! A population held in memory.

use rand::Rng;
use tallmc_core::subsample::WithoutReplacement;

use crate::{Error, Population, Result};

/// The values of a slice, drawn without replacement (partial Fisher–Yates over a kept
/// permutation, O(batch) per draw). For tests of the mean tests and for users with values
/// already computed.
#[derive(Debug, Clone)]
pub struct SlicePopulation<'a> {
    values: &'a [f64],
    sampler: WithoutReplacement,
    range: Option<f64>,
}

impl<'a> SlicePopulation<'a> {
    /// A population over `values` with an optional range bound (checked: finite, ≥ 0).
    pub fn new(values: &'a [f64], range: Option<f64>) -> Result<Self> {
        if values.is_empty() {
            return Err(Error::EmptyPopulation);
        }
        if let Some(r) = range
            && !(r.is_finite() && r >= 0.0)
        {
            return Err(Error::InvalidRange(r));
        }
        let sampler = WithoutReplacement::new(values.len())
            .map_err(|e| Error::invalid("population size", values.len(), e))?;
        Ok(Self { values, sampler, range })
    }

    /// The range max − min of the values, computed exactly (one pass).
    pub fn exact_range(values: &[f64]) -> f64 {
        let (lo, hi) = values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
        hi - lo
    }

    /// The exact mean of all values.
    pub fn mean(&self) -> f64 {
        self.values.iter().sum::<f64>() / self.values.len() as f64
    }

    /// Starts a new decision: forget what was drawn.
    pub fn reset(&mut self) {
        self.sampler.reset();
    }
}

impl Population for SlicePopulation<'_> {
    fn size(&self) -> usize {
        self.values.len()
    }
    fn drawn(&self) -> usize {
        self.sampler.drawn().len()
    }
    fn draw<R: Rng + ?Sized>(&mut self, out: &mut [f64], rng: &mut R) {
        let idx = self.sampler.draw(out.len(), rng);
        for (o, &i) in out.iter_mut().zip(idx) {
            *o = self.values[i as usize];
        }
    }
    fn range(&self) -> Option<f64> {
        self.range
    }
}
