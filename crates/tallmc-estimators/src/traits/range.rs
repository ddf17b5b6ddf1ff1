//! [`RangeSource`]: where minibatch Metropolis–Hastings gets the range bound the
//! concentration-bound mean tests need (the confidence sampler, Bardenet et al. 2014).

use tallmc_core::TermBounds;

/// A bound on the range max_i l_i − min_i l_i of the log-likelihood differences
/// l_i = ℓ_i(θ′) − ℓ_i(θ) of one MH decision, which concentration inequalities (Hoeffding,
/// Bernstein–Serfling) need; the exact test and Austerity's t-test need none.
///
/// **Required:** [`range`](Self::range). Provided: [`AVAILABLE`](Self::AVAILABLE) (`true`; a
/// source that never has a range says `false`, so that a kernel whose test needs one refuses
/// to start a chain).
///
/// Implemented by [`NoRange`] and [`TermBoundRange`] (2·C(θ, θ′) from the model's
/// [`TermBounds`]).
pub trait RangeSource<M: ?Sized> {
    /// Whether [`RangeSource::range`] ever returns a value.
    const AVAILABLE: bool = true;
    /// A bound on max_i l_i − min_i l_i for l_i = ℓ_i(θ′) − ℓ_i(θ), if available.
    fn range(model: &M, theta: &[f64], theta_prime: &[f64]) -> Option<f64>;
}

/// No range bound (enough for the exact test and Austerity's t-test).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRange;

impl<M: ?Sized> RangeSource<M> for NoRange {
    const AVAILABLE: bool = false;
    fn range(_: &M, _: &[f64], _: &[f64]) -> Option<f64> {
        None
    }
}

/// The range 2·C(θ, θ′) from the model's [`TermBounds`].
#[derive(Debug, Clone, Copy, Default)]
pub struct TermBoundRange;

impl<M: TermBounds + ?Sized> RangeSource<M> for TermBoundRange {
    fn range(model: &M, theta: &[f64], theta_prime: &[f64]) -> Option<f64> {
        Some(2.0 * model.term_difference_bound(theta, theta_prime))
    }
}
