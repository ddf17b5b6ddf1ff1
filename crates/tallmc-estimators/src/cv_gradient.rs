//! The control-variate gradient estimator for stochastic-gradient kernels.

use tallmc_core::{EvalCounts, Terms};

use crate::control_variate::ControlVariate;
use crate::differences::DifferenceTerms;
use crate::error::{Error, Result};
use crate::traits::GradientEstimator;

/// The control-variate estimator of Σ_{i<N} ∇ℓ_i(θ) (Baker, Fearnhead, Fox & Nemeth 2017, eq. (4);
/// REFERENCES §4):
///
/// ```text
/// ∇ℓ̂(θ) = ∇Σ_k q_k(θ) + (N/n) Σ_{k∈S} ∇d_k(θ),   ∇d_k = ∇ℓ_k(θ) − ∇q_k(θ),
/// ```
///
/// with a Taylor control variate around θ* ≈ the mode. Order 1 is the SGLD-CV gradient of Baker
/// et al. (∇q_k(θ) = ∇ℓ_k(θ*), ∇Σq = Σ∇ℓ_k(θ*)); order 2 adds ∇²ℓ_k(θ*)(θ − θ*) to each and
/// H(θ − θ*) to the sum; order 0 has ∇q_k = 0 and reduces to the plain minibatch gradient.
///
/// **Properties.** Unbiased (each k ∈ S is uniform on 0..N); its variance is (N²/n) times the
/// spread of ∇d_k, which vanishes as θ → θ* (order 1: O(‖θ − θ*‖²); order 2: O(‖θ − θ*‖⁴)).
/// **Cost** per call, through [`DifferenceTerms::add_gradient_differences`]: with the
/// [`RankOne`](crate::RankOne) engine n gradients at θ and, from order 1, n gradients at θ* (plus
/// n Hessians at order 2) and no term — the values ℓ_k are never needed; with
/// [`HessianProducts`](crate::HessianProducts), also n terms at θ and the control variates of the
/// slots whose index changed (see [`crate::differences`]).
#[derive(Debug, Clone)]
pub struct ControlVariateGradient<E> {
    cv: ControlVariate,
    engine: E,
}

impl<E> ControlVariateGradient<E> {
    /// An estimator for `model` with control variate `cv` and engine `engine`, for minibatches
    /// of up to `max_batch` indices (the engine's own scratch is sized by the engine, e.g.
    /// `RankOne::new(max_batch)`). Errors: `max_batch == 0`, or `cv` built for a model of another
    /// dimension or size.
    pub fn new<M: Terms + ?Sized>(
        model: &M, cv: ControlVariate, engine: E, max_batch: usize,
    ) -> Result<Self> {
        if max_batch == 0 {
            return Err(Error::invalid("batch size n", 0, "at least 1"));
        }
        Error::check_len("control variate dimension", cv.dim(), model.dim())?;
        Error::check_len("control variate number of terms N", cv.num_terms(), model.num_terms())?;
        Ok(Self { cv, engine })
    }

    /// The control variate.
    pub fn control_variate(&self) -> &ControlVariate {
        &self.cv
    }

    /// The control variate, to re-centre it.
    pub fn control_variate_mut(&mut self) -> &mut ControlVariate {
        &mut self.cv
    }
}

impl<M: ?Sized, E: DifferenceTerms<M>> GradientEstimator<M> for ControlVariateGradient<E> {
    fn estimate_gradient(
        &mut self, model: &M, theta: &[f64], indices: &[u32], grad: &mut [f64],
    ) -> EvalCounts {
        self.cv.sum_grad(theta, grad);
        let weight = self.cv.num_terms() as f64 / indices.len() as f64;
        self.engine.add_gradient_differences(model, &self.cv, theta, indices, weight, grad)
    }
}
