//! The rank-two engine for [`DispersionPredictor`] models: θ = (β, τ), ℓ_k = f_k(η_k, τ) with
//! η_k = x_kᵀβ (negative binomial and Student-t regression).
//!
//! With η*_k = x_kᵀβ*, δ_k = η_k − η*_k, ε = τ − τ* and the derivatives of f_k at (η*_k, τ*)
//! written f*, f*_η, …, the Taylor control variate of order two is
//!
//! ```text
//! q_k = f* + f*_η δ_k + f*_τ ε + ½ (f*_ηη δ_k² + 2 f*_ητ δ_k ε + f*_ττ ε²),
//! ∇d_k = (r_k x_k, s_k),
//! r_k = f_η(η_k, τ) − f*_η − f*_ηη δ_k − f*_ητ ε,
//! s_k = f_τ(η_k, τ) − f*_τ − f*_ητ δ_k − f*_ττ ε
//! ```
//!
//! (order one drops the curvature terms, order zero keeps f* alone). Per slot the engine keeps
//! η*_k and the six numbers of [`PredictorDerivatives`] at the centre, and per call with
//! gradients two scalars r_k, s_k — where the generic [`HessianProducts`](super::HessianProducts)
//! engine keeps a d-vector per slot and evaluates every datum's curvature at θ* again at every
//! call (m Hessian-vector products). A call therefore costs one dot product, the family's value
//! and two scores per index at θ, and one weighted sum of rows.
//!
//! Counts, per call of m indices: m terms at θ (the value comes with the scores), m gradients
//! when asked, and for each slot whose cache missed [`CvOrder::counts_per_datum`] at θ* — the
//! same accounting as [`RankOne`](super::RankOne).

use tallmc_core::{DispersionPredictor, EvalCounts, PredictorDerivatives};

use super::{DifferenceTerms, SlotCache, call_counts, grow, lane_mut};
use crate::control_variate::{ControlVariate, CvOrder};

/// Per-lane cache of the [`RankTwo`] engine.
#[derive(Debug, Clone, Default)]
struct RankTwoLane {
    slots: SlotCache,
    eta_star: Vec<f64>,
    at_star: Vec<PredictorDerivatives>,
    /// r_k and s_k with ∇d_k = (r_k x_k, s_k), from the last call with gradients.
    r: Vec<f64>,
    s: Vec<f64>,
}

impl RankTwoLane {
    fn grow(&mut self, m: usize) {
        self.slots.grow(m);
        grow(&mut self.eta_star, m);
        grow(&mut self.at_star, m);
        grow(&mut self.r, m);
        grow(&mut self.s, m);
    }
}

/// The engine's per-call buffers.
#[derive(Debug, Clone, Default)]
struct Scratch {
    eta: Vec<f64>,
    scores: Vec<(f64, f64, f64)>,
    derivatives: Vec<PredictorDerivatives>,
    weights: Vec<f64>,
    diffs: Vec<f64>,
}

impl Scratch {
    fn grow(&mut self, m: usize) {
        grow(&mut self.eta, m);
        grow(&mut self.scores, m);
        grow(&mut self.derivatives, m);
        grow(&mut self.weights, m);
        grow(&mut self.diffs, m);
    }
}

/// The rank-two difference engine for [`DispersionPredictor`] models: θ = (β, τ),
/// ℓ_k = f_k(x_kᵀβ, τ). With δ_k = x_kᵀ(β − β*), ε = τ − τ* and f's derivatives at (η*_k, τ*),
///
/// ```text
/// q_k = f* + f*_η δ_k + f*_τ ε + ½ (f*_ηη δ_k² + 2 f*_ητ δ_k ε + f*_ττ ε²),
/// ∇d_k = (r_k x_k, s_k),  r_k = f_η − f*_η − f*_ηη δ_k − f*_ητ ε,  s_k = f_τ − f*_τ − f*_ητ δ_k − f*_ττ ε
/// ```
///
/// (order one drops the curvatures, order zero keeps f*). Counts as
/// [`RankOne`](super::RankOne)'s: m terms (and m gradients) at θ per call, plus the control
/// variate's evaluations for each slot whose cache missed.
///
/// Memory per slot: 9 scalars and an index; scratch: 12 scalars per slot of the largest call.
/// The gradient-only path ([`DifferenceTerms::add_gradient_differences`]) keeps a cache of its
/// own, so a stochastic-gradient kernel's fresh minibatches do not evict an HMC-ECS lane.
#[derive(Debug, Clone, Default)]
pub struct RankTwo {
    lanes: Vec<RankTwoLane>,
    gradient_lane: RankTwoLane,
    scratch: Scratch,
}

impl RankTwo {
    /// An engine with one lane sized for subsamples of `m` indices (it grows if needed).
    pub fn new(m: usize) -> Self {
        Self::with_lanes(1, m)
    }

    /// An engine with `lanes` lanes each sized for `m` indices.
    pub fn with_lanes(lanes: usize, m: usize) -> Self {
        let mut e = Self::default();
        for l in 0..lanes {
            e.prepare(l, m);
        }
        e
    }

    fn prepare(&mut self, lane: usize, m: usize) {
        lane_mut(&mut self.lanes, lane).grow(m);
        self.scratch.grow(m);
    }
}

/// `differences` on one lane's cache (see [`DifferenceTerms::differences`]).
#[allow(clippy::too_many_arguments)]
fn lane_differences<M: DispersionPredictor + ?Sized>(
    l: &mut RankTwoLane, s: &mut Scratch, model: &M, cv: &ControlVariate, theta: &[f64],
    indices: &[u32], d: &mut [f64], with_gradients: bool,
) -> EvalCounts {
    let m = indices.len();
    let p = theta.len() - 1;
    let order = cv.order();
    let center = cv.center();
    let misses = l.slots.update(cv, indices);
    if misses > 0 {
        let (pos, idx) = (&l.slots.miss_pos[..misses], &l.slots.miss_idx[..misses]);
        let eta = &mut s.eta[..misses];
        model.dispersion_predictors(center, idx, eta);
        let at = &mut s.derivatives[..misses];
        if order == CvOrder::Two {
            model.predictor_derivatives_at(center[p], idx, eta, at);
        } else {
            // Orders 0 and 1 use no curvature: the scores only (the family's cheaper call).
            let scores = &mut s.scores[..misses];
            model.predictor_scores_at(center[p], idx, eta, scores);
            for (a, &(value, f_eta, f_tau)) in at.iter_mut().zip(scores.iter()) {
                *a = PredictorDerivatives { value, eta: f_eta, tau: f_tau, ..Default::default() };
            }
        }
        for (j, &k) in pos.iter().enumerate() {
            l.eta_star[k] = s.eta[j];
            l.at_star[k] = s.derivatives[j];
        }
    }
    // At θ.
    let tau = theta[p];
    model.dispersion_predictors(theta, indices, &mut s.eta[..m]);
    model.predictor_scores_at(tau, indices, &s.eta[..m], &mut s.scores[..m]);
    let eps = tau - center[p];
    let (c1, c2) = match order {
        CvOrder::Zero => (0.0, 0.0),
        CvOrder::One => (1.0, 0.0),
        CvOrder::Two => (1.0, 1.0),
    };
    for k in 0..m {
        let a = &l.at_star[k];
        let delta = s.eta[k] - l.eta_star[k];
        // ∂q/∂η and ∂q/∂τ at (η_k, τ).
        let q_eta = c1 * a.eta + c2 * (a.eta_eta * delta + a.eta_tau * eps);
        let q_tau = c1 * a.tau + c2 * (a.eta_tau * delta + a.tau_tau * eps);
        let curvature =
            a.eta_eta * delta * delta + 2.0 * a.eta_tau * delta * eps + a.tau_tau * eps * eps;
        let q = a.value + c1 * (a.eta * delta + a.tau * eps) + 0.5 * c2 * curvature;
        let (value, f_eta, f_tau) = s.scores[k];
        d[k] = value - q;
        if with_gradients {
            l.r[k] = f_eta - q_eta;
            l.s[k] = f_tau - q_tau;
        }
    }
    call_counts(m, with_gradients, misses, order.counts_per_datum())
}

/// **Adds** Σ_k w_k ∇d_k = (Σ_k w_k r_k x_k, Σ_k w_k s_k) of a lane's last call into `out`.
fn add_lane_gradients<M: DispersionPredictor + ?Sized>(
    l: &RankTwoLane, coefficients: &mut [f64], model: &M, indices: &[u32], weights: &[f64],
    out: &mut [f64],
) {
    let m = indices.len();
    let p = out.len() - 1;
    let mut tau_sum = 0.0;
    for k in 0..m {
        coefficients[k] = weights[k] * l.r[k];
        tau_sum += weights[k] * l.s[k];
    }
    model.add_weighted_predictor_rows(indices, &coefficients[..m], &mut out[..p]);
    out[p] += tau_sum;
}

impl<M: DispersionPredictor + ?Sized> DifferenceTerms<M> for RankTwo {
    fn differences(
        &mut self, model: &M, cv: &ControlVariate, theta: &[f64], lane: usize, indices: &[u32],
        d: &mut [f64], with_gradients: bool,
    ) -> EvalCounts {
        self.prepare(lane, indices.len());
        let l = &mut self.lanes[lane];
        lane_differences(l, &mut self.scratch, model, cv, theta, indices, d, with_gradients)
    }

    fn add_weighted_gradients(
        &mut self, model: &M, lane: usize, indices: &[u32], weights: &[f64], out: &mut [f64],
    ) {
        let l = &self.lanes[lane];
        add_lane_gradients(l, &mut self.scratch.weights, model, indices, weights, out);
    }

    /// The value comes with the family's scores, so this path counts m terms like
    /// `differences` (the rank-one engine's gradient path evaluates none).
    fn add_gradient_differences(
        &mut self, model: &M, cv: &ControlVariate, theta: &[f64], indices: &[u32], weight: f64,
        out: &mut [f64],
    ) -> EvalCounts {
        let m = indices.len();
        self.scratch.grow(m);
        self.gradient_lane.grow(m);
        let (l, s) = (&mut self.gradient_lane, &mut self.scratch);
        let mut d = std::mem::take(&mut s.diffs);
        let counts = lane_differences(l, s, model, cv, theta, indices, &mut d[..m], true);
        // The differences are not needed: their buffer holds the weights.
        d[..m].fill(weight);
        add_lane_gradients(l, &mut s.weights, model, indices, &d[..m], out);
        s.diffs = d;
        counts
    }
}
