//! What HMC with energy-conserving subsampling (HMC-ECS, Dang et al. 2019) needs from a
//! log-likelihood estimator: [`EcsEstimator`], what one of its evaluations records
//! ([`EcsEstimate`]) and the auxiliary subsample u it is evaluated on ([`GibbsSubsample`]).
//!
//! The kernels (perturbed and signed HMC-ECS, and HMC-ECS on an estimator of your own) are in
//! `tallmc-samplers`; they run an HMC-within-Gibbs sweep over any implementation of these
//! traits. The library's implementations: [`DifferenceEstimator`](crate::DifferenceEstimator)
//! on a [`BlockSubsample`](tallmc_core::subsample::BlockSubsample) (perturbed) and
//! [`BlockPoissonEstimator`](crate::BlockPoissonEstimator) on a
//! [`BlockPoissonSubsample`](crate::BlockPoissonSubsample) (signed).

use rand::Rng;
use tallmc_core::{EvalCounts, Result};

use crate::control_variate::CvOrder;

/// The auxiliary random numbers u of HMC-ECS (a subsample of data indices), with the law p(u)
/// they are drawn from and the partial refresh of the u-step.
///
/// HMC-ECS targets π̄(θ, u) ∝ exp(ℓ̃(θ; u)) p(θ) p(u) (ℓ̃ the estimator's log-target, see
/// [`EcsEstimator`]). [`GibbsSubsample::draw`] draws u ~ p(u) afresh (at initialization);
/// the u-step proposes u′ by [`GibbsSubsample::propose`], a move that must leave p(u) invariant
/// and be symmetric (redrawing one of G blocks from its marginal does both; successive
/// estimates then have correlation ≈ 1 − 1/G), and the kernel accepts it with
/// min{1, exp(ℓ̃(θ; u′) − ℓ̃(θ; u))} — the prior and p(u) cancel. A rejected proposal is undone
/// by [`GibbsSubsample::reject`], so that no step allocates.
///
/// Required: `draw`, `propose`, `reject`, `batch_size`; `accept` is provided (nothing to do for
/// a subsample whose `propose` keeps what `reject` restores).
///
/// Implemented by [`BlockSubsample`](tallmc_core::subsample::BlockSubsample) (m indices uniform
/// with replacement in G blocks, perturbed HMC-ECS) and
/// [`BlockPoissonSubsample`](crate::BlockPoissonSubsample) (signed HMC-ECS); a stratified
/// subsample of your own is the `user_estimator` example of the `tallmc` crate.
pub trait GibbsSubsample {
    /// Draws all of u afresh from p(u) (initialization).
    fn draw<R: Rng + ?Sized>(&mut self, rng: &mut R);
    /// Proposes u′ by refreshing part of u (one block, or κ factors).
    fn propose<R: Rng + ?Sized>(&mut self, rng: &mut R);
    /// Goes back to u (after [`GibbsSubsample::propose`]).
    fn reject(&mut self);
    /// Number of data indices in u (the batch size the kernel reports).
    fn batch_size(&self) -> usize;
    /// Keeps u′ (after [`GibbsSubsample::propose`]). Nothing by default.
    fn accept(&mut self) {}

    /// Appends u's data indices to `out`; `false` (the default) when the subsample cannot say
    /// its indices ahead of drawing them, so it cannot read rows that live elsewhere
    /// ([`tallmc_core::RowService`]).
    fn current_indices(&self, out: &mut Vec<u32>) -> bool {
        let _ = out;
        false
    }

    /// Appends to `out` the data indices that proposals `skip + 1` to `skip + refreshes` from
    /// now will draw (whatever is accepted: they come from a stream of their own); `false` (the
    /// default) when they are not known ahead.
    fn upcoming_indices(&self, skip: usize, refreshes: usize, out: &mut Vec<u32>) -> bool {
        let _ = (skip, refreshes, out);
        false
    }
}

/// What one evaluation of an [`EcsEstimator`] records.
pub trait EcsEstimate: Copy {
    /// The log-likelihood part ℓ̃(θ; u) of the extended target: ℓ̂ − σ̂²/2 for perturbed
    /// HMC-ECS ([`DifferenceEstimate::perturbed`](crate::DifferenceEstimate::perturbed)),
    /// log|L̂_B| for signed HMC-ECS.
    fn log_target(&self) -> f64;
    /// The per-datum evaluations (terms, gradients, Hessians) this evaluation made.
    fn counts(&self) -> EvalCounts;
}

/// The log-likelihood estimator of an HMC-ECS kernel, with its subsample and estimate types.
///
/// **Contract.** For the model's log-likelihood ℓ(θ) = Σ_{i<N} ℓ_i(θ) and a subsample u drawn
/// by [`Self::Subsample`](EcsEstimator::Subsample) (see [`GibbsSubsample`]),
/// [`EcsEstimator::estimate_log_target`] returns an estimate whose
/// [`log_target`](EcsEstimate::log_target) ℓ̃(θ; u) defines the extended target
///
/// ```text
/// π̄(θ, u) ∝ exp(ℓ̃(θ; u)) p(θ) p(u),
/// ```
///
/// and **overwrites** `grad` with ∇_θ ℓ̃(θ; u), the exact gradient at the fixed u (the θ-step
/// is HMC on U(θ) = −ℓ̃(θ; u) − log p(θ); the kernel adds the prior). For perturbed HMC-ECS
/// the estimate is a [`DifferenceEstimate`](crate::DifferenceEstimate) and
///
/// * ℓ̂(θ; u) (`log_likelihood`) must be an unbiased estimator of ℓ(θ) over u ~ p(u);
/// * σ̂²(θ; u) (`variance`) an estimate of V_u[ℓ̂(θ; u)];
/// * ℓ̃ = ℓ̂ − σ̂²/2, so exp(ℓ̃) is the bias-corrected likelihood estimator of Dang et al.
///   (2019, eq. 3.4), approximately unbiased for L(θ) when ℓ̂ is near Gaussian; the chain's
///   θ-marginal is the perturbed posterior ∝ E_u[exp(ℓ̂ − σ̂²/2)] p(θ), close to π when σ̂² is
///   O(1) (the smaller V[ℓ̂], the closer);
/// * the gradient is ∇ℓ̂ − ½∇σ̂² at the fixed u.
///
/// The u-step and the θ-step both leave π̄ invariant exactly, whatever the estimator; how
/// close the θ-marginal is to π is the estimator's business.
///
/// **Counting.** [`EcsEstimate::counts`] must report every per-datum evaluation the call made
/// (ℓ_i, ∇ℓ_i, ∇²ℓ_i, including control variates q_i evaluated at θ*), so that the kernels'
/// stats and the driver's cost figures are measured, not guessed.
///
/// **The centre θ*.** The estimator expands around a point θ* ([`EcsEstimator::center`]); the
/// kernel sets the mass matrix from the Laplace covariance there, (−∇²log π(θ*))⁻¹. During
/// warmup it moves θ* to the mean of recent positions with [`EcsEstimator::recenter`]; an
/// estimator that caches per-datum quantities at θ* refreshes them there (or notices the move,
/// e.g. by [`ControlVariate::id`](crate::ControlVariate::id)). The default does not move
/// θ* (the kernel then keeps it and its mass matrix).
///
/// **Required:** [`estimate_log_target`](EcsEstimator::estimate_log_target) and
/// [`center`](EcsEstimator::center). Provided: [`recenter`](EcsEstimator::recenter) (does not
/// move), and what only spares work or fills a report:
/// [`hessian_sum`](EcsEstimator::hessian_sum) (the Σ_i ∇²ℓ_i(θ*) an order-2 control variate
/// already holds, sparing the kernel a Hessian pass) and
/// [`taylor_order`](EcsEstimator::taylor_order) (reported in the chain's tuning).
///
/// **Errors.** A non-finite estimate or gradient is a recoverable `Err`
/// ([`NonFiniteEstimate`](tallmc_core::Error::NonFiniteEstimate), see
/// [`is_recoverable`](tallmc_core::Error::is_recoverable)): the kernel treats it as a rejected
/// u-step or a divergent trajectory. Any other error is fatal and stops the chain.
///
/// Implemented by [`DifferenceEstimator`](crate::DifferenceEstimator) (perturbed) and
/// [`BlockPoissonEstimator`](crate::BlockPoissonEstimator) (signed). The `tallmc` crate's
/// example `user_estimator` implements a stratified difference estimator outside the library
/// and runs HMC-ECS with it: `cargo run --release -p tallmc --example user_estimator`.
pub trait EcsEstimator<M: ?Sized> {
    /// The subsample u.
    type Subsample: GibbsSubsample;
    /// What one estimate records (value, variance or sign, counts).
    type Estimate: EcsEstimate;

    /// The estimate at (θ, u), **overwriting** `grad` (length d) with ∇_θ of its
    /// [`log_target`](EcsEstimate::log_target) at the fixed u.
    fn estimate_log_target(
        &mut self, model: &M, theta: &[f64], u: &Self::Subsample, grad: &mut [f64],
    ) -> Result<Self::Estimate>;

    /// The point θ* the estimator expands around (length d).
    fn center(&self) -> &[f64];

    /// Moves θ* to `center`, returning the per-datum evaluations made, or `None` if this
    /// estimator does not move (the default). On `Err` θ* must be left where it was.
    fn recenter(&mut self, _model: &M, _center: &[f64]) -> Result<Option<EvalCounts>> {
        Ok(None)
    }

    /// Σ_{i<N} ∇²ℓ_i(θ*) (d × d, row-major) if the estimator holds it (a second-order control
    /// variate does): the kernel then sets the mass matrix without a Hessian pass of its own.
    /// `None` by default.
    fn hessian_sum(&self) -> Option<&[f64]> {
        None
    }

    /// The order of the Taylor control variates, for the chain's tuning report; `None` (the
    /// default) for an estimator that does not say.
    fn taylor_order(&self) -> Option<CvOrder> {
        None
    }
}

/// The centre methods of an [`EcsEstimator`] built on a Taylor control variate held in the
/// field `cv` (θ* is the control variate's centre; re-centring rebuilds its sums in one pass):
/// written once for [`DifferenceEstimator`](crate::DifferenceEstimator) and
/// [`BlockPoissonEstimator`](crate::BlockPoissonEstimator).
macro_rules! centre_of_control_variate {
    () => {
        fn center(&self) -> &[f64] {
            self.cv.center()
        }

        /// Re-centres the control variate (one pass; the engine notices and refreshes its
        /// caches).
        fn recenter(
            &mut self, model: &M, center: &[f64],
        ) -> $crate::error::Result<Option<tallmc_core::EvalCounts>> {
            self.cv.recenter(model, center).map(Some)
        }

        fn hessian_sum(&self) -> Option<&[f64]> {
            self.cv.known_hessian_sum()
        }

        fn taylor_order(&self) -> Option<$crate::CvOrder> {
            Some(self.cv.order())
        }
    };
}
pub(crate) use centre_of_control_variate;
