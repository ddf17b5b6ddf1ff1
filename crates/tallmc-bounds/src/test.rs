//! The two traits: populations and tests.

use rand::Rng;
use serde::Serialize;

use crate::Result;

/// A finite population of N real values, revealed in batches drawn uniformly **without
/// replacement**.
///
/// The caller prepares the population for one decision (e.g. sets θ and θ′ and resets its index
/// sampler); the test then draws until it can decide.
pub trait Population {
    /// Population size N.
    fn size(&self) -> usize;

    /// How many values have been drawn since the population was prepared.
    fn drawn(&self) -> usize;

    /// Draws `out.len()` further values uniformly without replacement among those not drawn
    /// yet and writes them into `out`. Callers never ask for more than `size() − drawn()`.
    fn draw<R: Rng + ?Sized>(&mut self, out: &mut [f64], rng: &mut R);

    /// A bound R ≥ max_i v_i − min_i v_i on the range of the values, if one is known. Needed by
    /// the concentration-bound tests.
    fn range(&self) -> Option<f64>;
}

/// The outcome of one sequential test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Decision {
    /// Whether the test decided that the population mean exceeds the threshold.
    pub above: bool,
    /// Number of values drawn (each costs the caller its evaluations).
    pub used: usize,
    /// Number of looks (batches) taken.
    pub looks: usize,
    /// Mean of the values used.
    pub mean: f64,
    /// The final uncertainty the decision was taken with: the bound c_t for concentration-bound
    /// tests, the (finite-population corrected) standard error for the t-test, 0 when every
    /// value was used.
    pub half_width: f64,
}

/// A sequential test of "is the population mean above the threshold?".
///
/// Implementations draw batches from the population until they can decide (or the population
/// is exhausted, when the decision is exact). They keep their scratch space between calls, so
/// deciding allocates nothing after the first calls.
pub trait MeanTest {
    /// Decides whether the mean of `population` exceeds `threshold`.
    ///
    /// Errors: a test that needs a range on a population without one, a non-finite value, an
    /// empty population, a NaN threshold.
    fn decide<P: Population + ?Sized, R: Rng + ?Sized>(
        &mut self,
        population: &mut P,
        threshold: f64,
        rng: &mut R,
    ) -> Result<Decision>;

    /// Whether [`MeanTest::decide`] needs [`Population::range`].
    fn needs_range(&self) -> bool;

    /// Checks, before sampling starts, that the test can decide on populations of `n` values
    /// (e.g. that a t-test's first batch fits). Samplers call it from their `init` for every
    /// population size they will use, so a bad setting fails early with a clear message.
    fn check_population_size(&self, n: usize) -> Result<()>;

    /// The test's name and settings as `key = value` pairs, for output files (so that the
    /// approximation used, e.g. Austerity's ε, is never hidden).
    fn describe(&self) -> Vec<(String, String)>;
}
