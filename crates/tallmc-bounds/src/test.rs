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
///
/// # The contract
///
/// Given a population x_1, …, x_N (revealed by [`Population::draw`] in batches drawn uniformly
/// without replacement, with an optional range bound R ≥ max_i x_i − min_i x_i) and a threshold
/// μ₀, the test decides
///
/// ```text
/// above  ⇔  μ = (1/N) Σ_{i=1..N} x_i  >  μ₀
/// ```
///
/// sequentially: after each look at t values it either stops or draws more; at t = N it must
/// return the exact answer (the mean of all N values, compared with μ₀). It returns a
/// [`Decision`]: the answer, the number of values `used` (what the caller pays for: in
/// minibatch MH, two term evaluations each), the number of looks, the mean of the values used
/// and the uncertainty it stopped with (0 when every value was used). An infinite μ₀ is decided
/// without drawing (μ > −∞ always, μ > +∞ never).
///
/// **Error control.** A test states what it guarantees about P(decision ≠ exact answer), for
/// the fixed finite population and over the draws: the [`ExactTest`](crate::ExactTest) is never
/// wrong; the [`ConfidenceTest`](crate::ConfidenceTest) is wrong with probability ≤ δ for every
/// population within its range bound (a union bound over looks of a concentration inequality
/// for sampling without replacement); [`AusterityTest`](crate::AusterityTest) has an error
/// controlled by ε under a normal approximation, with no guarantee. In minibatch MH (accept θ′
/// iff the mean of l_i = ℓ_i(θ′) − ℓ_i(θ) exceeds μ₀ = (1/N) log[u p(θ) q(θ′|θ) / (p(θ′)
/// q(θ|θ′))]) a per-decision error ≤ δ makes each transition within δ of exact MH's in total
/// variation.
///
/// **Errors, not wrong answers.** A non-finite value is reported as
/// [`Error::NonFiniteValue`](crate::Error::NonFiniteValue) (the minibatch MH kernels turn it
/// into a rejected, divergent step); a test that relies on the range bound should report values
/// spreading over more than it ([`Error::RangeExceeded`](crate::Error::RangeExceeded)) rather
/// than lose its guarantee silently.
///
/// Any type implementing this trait plugs into the samplers that take a `T: MeanTest`
/// (`MinibatchMh`, `ProxyMinibatchMh`, `ApproximateGibbs` in `tallmc-samplers`). The example
/// `crates/tallmc/examples/user_mean_test.rs` defines one outside the library (a union bound
/// over looks of the smaller of a Hoeffding–Serfling and an empirical Bernstein–Serfling
/// half-width) and runs the confidence sampler with it on a logistic regression.
pub trait MeanTest {
    /// Decides whether the mean of `population` exceeds `threshold`.
    ///
    /// The population must be freshly prepared (`drawn() == 0`).
    ///
    /// Errors: a test that needs a range on a population without one, a non-finite value, an
    /// empty population or one too small for the test's batches, a population with values
    /// already drawn, a NaN threshold.
    fn decide<P: Population + ?Sized, R: Rng + ?Sized>(
        &mut self, population: &mut P, threshold: f64, rng: &mut R,
    ) -> Result<Decision>;

    /// Whether [`MeanTest::decide`] needs [`Population::range`].
    fn needs_range(&self) -> bool;

    /// Checks that the test can run on populations of `n` values, so that a kernel reports a
    /// bad setting when it is built or initialized rather than in the middle of sampling.
    ///
    /// Errors: `n` = 0 ([`crate::Error::EmptyPopulation`]); a (first) batch larger than `n`
    /// ([`crate::Error::InvalidParameter`] naming the batch and N). [`MeanTest::decide`] makes the
    /// same check.
    fn check_population_size(&self, n: usize) -> Result<()>;

    /// The test's name and settings as `key = value` pairs, for output files (so that the
    /// approximation used, e.g. Austerity's ε, is never hidden).
    fn describe(&self) -> Vec<(String, String)>;
}
