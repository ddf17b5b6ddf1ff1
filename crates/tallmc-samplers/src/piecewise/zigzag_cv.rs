//! The control-variate switching-rate estimator of ZZ-CV (Bierkens, Fearnhead & Roberts 2019,
//! §4): the [`SwitchingRateEstimator`] that makes
//! [`ZigZagSubsampling`](super::ZigZagSubsampling) Zig-Zag with control variates.
//!
//! Around a reference point ξ* (the posterior mode, found by the caller, e.g. with
//! [`laplace_approximation`](crate::laplace_approximation)), with E^J = −log p − Nℓ_J:
//!
//! ```text
//! ∂_iÊ^J(ξ) = ∂_iU(ξ*) + ∂_iE^J(ξ) − ∂_iE^J(ξ*)
//!           = ∂_iU(ξ*) − [∂_i log p(ξ) − ∂_i log p(ξ*)] − N [∂_iℓ_J(ξ) − ∂_iℓ_J(ξ*)],
//! ∂_iU(ξ*)  = −∂_i log p(ξ*) − Σ_K ∂_iℓ_K(ξ*).
//! ```
//!
//! Unbiased for ∂_iU(ξ) (the mean over J of ∂_iE^J is ∂_iU). The pieces come from
//! `tallmc-estimators`: a first-order [`ControlVariate`] holds Σ_K ∇ℓ_K(ξ*) (one pass over the
//! data at set-up: N terms and N gradients), and a [`DifferenceTerms`] engine gives
//! ∇ℓ_J(ξ) − ∇ℓ_J(ξ*) for the one index drawn, with its evaluation counts (one term and gradient
//! at ξ, and one at ξ* — cached only if the same J comes again): [`RankOne`] for
//! [`LinearPredictor`](tallmc_core::LinearPredictor) models (GLMs: four scalars per datum),
//! [`HessianProducts`](tallmc_estimators::HessianProducts) for any model with per-datum
//! Hessians.
//!
//! **Bound.** ∂_iE^J is C^tot_i = (N C_i + κ)-Lipschitz in the Euclidean norm (C_i from
//! [`TermGradientLipschitz`], κ from [`LogPriorCurvature`]), so along ξ + θt
//!
//! ```text
//! θ_i∂_iÊ^J(ξ + θt) ≤ θ_i∂_iU(ξ*) + C^tot_i (‖ξ − ξ*‖₂ + √d t)     for every J,
//! ```
//!
//! i.e. a_i = θ_i∂_iU(ξ*) + C^tot_i‖ξ − ξ*‖₂ and b_i = C^tot_i√d. The estimator's spread is
//! O(N‖ξ − ξ*‖) = O(√N) in the posterior's bulk, which is what makes ZZ-CV's cost per effective
//! sample O(1) in N (see [`ZigZagSubsampling`](super::ZigZagSubsampling)). Start the chain at
//! ξ* (no burn-in is then needed when ξ* is the mode).

use tallmc_core::{EvalCounts, LogPriorCurvature, Result, TermGradientLipschitz, TermGradients};
use tallmc_estimators::{
    ControlVariate, CvOrder, DifferenceTerms, RankOne, SwitchingRateEstimator,
};

use super::datum_bounds::{checked_constant, checked_num_terms, distance, prior_kappa};

/// The ZZ-CV estimator around a reference point ξ*, with difference engine `E` (module docs).
#[derive(Debug, Clone)]
pub struct ControlVariates<E = RankOne> {
    reference: Vec<f64>,
    engine: E,
    cv: Option<ControlVariate>,
    /// ∂_iU(ξ*).
    grad_at_reference: Vec<f64>,
    /// ∂_i log p(ξ*).
    prior_at_reference: Vec<f64>,
    /// C^tot_i = N C_i + κ.
    c_total: Vec<f64>,
    prior: Vec<f64>,
    diff: Vec<f64>,
    d: [f64; 1],
    /// Whether [`SwitchingRateEstimator::prepare`] builds the control variates on all cores.
    on_all_cores: bool,
}

impl ControlVariates<RankOne> {
    /// Control variates around `reference` with the rank-one engine (GLMs).
    pub fn rank_one(reference: Vec<f64>) -> Result<Self> {
        Self::with_engine(reference, RankOne::new(1))
    }
}

impl<E> ControlVariates<E> {
    /// Control variates around `reference` (ξ*) with the difference engine `engine` (e.g.
    /// `HessianProducts::new(d, 1)`); errors if ξ* is not finite (its length is checked against
    /// the model when a chain starts).
    pub fn with_engine(reference: Vec<f64>, engine: E) -> Result<Self> {
        tallmc_core::error::check_finite("reference point ξ*", &reference)?;
        Ok(Self {
            reference,
            engine,
            cv: None,
            grad_at_reference: Vec::new(),
            prior_at_reference: Vec::new(),
            c_total: Vec::new(),
            prior: Vec::new(),
            diff: Vec::new(),
            d: [0.0],
            on_all_cores: false,
        })
    }

    /// Builds the control variates at ξ* with
    /// [`ControlVariate::without_hessians_on_all_cores`] (chunked partial sums on the rayon
    /// pool: the same bits on any thread count, but not those of the default single running
    /// sum, which the reproduction suites pin).
    #[must_use]
    pub fn built_on_all_cores(mut self) -> Self {
        self.on_all_cores = true;
        self
    }

    /// The reference point ξ*.
    pub fn reference(&self) -> &[f64] {
        &self.reference
    }

    /// ∇U(ξ*) = −∇log p(ξ*) − Σ_K ∇ℓ_K(ξ*) (empty before a chain started): ≈ 0 at the mode.
    pub fn gradient_at_reference(&self) -> &[f64] {
        &self.grad_at_reference
    }

    /// C^tot_i = N C_i + κ (empty before a chain started).
    pub fn lipschitz_constants(&self) -> &[f64] {
        &self.c_total
    }
}

impl<M, E> SwitchingRateEstimator<M> for ControlVariates<E>
where
    M: TermGradientLipschitz + TermGradients + LogPriorCurvature + ?Sized,
    E: DifferenceTerms<M>,
{
    fn prepare(&mut self, model: &M) -> Result<EvalCounts> {
        let d = model.dim();
        tallmc_core::error::check_finite_vector("reference point ξ*", &self.reference, d)?;
        let n = f64::from(checked_num_terms(model)?);
        let kappa = prior_kappa(model)?;
        self.c_total = (0..d)
            .map(|j| {
                checked_constant(
                    "coordinate gradient Lipschitz constant C_j",
                    Some(j),
                    model.coordinate_gradient_lipschitz(j),
                )
                .map(|c| n * c + kappa)
            })
            .collect::<Result<_>>()?;
        let (cv, mut evals) = if self.on_all_cores {
            ControlVariate::without_hessians_on_all_cores(model, &self.reference, CvOrder::One)?
        } else {
            ControlVariate::without_hessians(model, &self.reference, CvOrder::One)?
        };
        self.prior_at_reference = vec![0.0; d];
        model.log_prior_grad(&self.reference, &mut self.prior_at_reference);
        tallmc_core::error::check_finite(
            "prior gradient at the reference point ξ*",
            &self.prior_at_reference,
        )?;
        self.grad_at_reference =
            self.prior_at_reference.iter().zip(cv.gradient_sum()).map(|(p, g)| -p - g).collect();
        self.prior = vec![0.0; d];
        self.diff = vec![0.0; d];
        // Size the engine's buffers now (one datum at ξ*, counted), so steps allocate nothing.
        evals += self.engine.differences(model, &cv, &self.reference, 0, &[0], &mut self.d, true);
        self.cv = Some(cv);
        Ok(evals)
    }

    /// a_i = θ_i∂_iU(ξ*) + C^tot_i‖ξ − ξ*‖, b_i = C^tot_i√d.
    fn bounds(&mut self, _model: &M, xi: &[f64], theta: &[f64], a: &mut [f64], b: &mut [f64]) {
        let r = distance(xi, &self.reference);
        let root_d = (theta.len() as f64).sqrt();
        for i in 0..theta.len() {
            let c = self.c_total[i];
            a[i] = theta[i] * self.grad_at_reference[i] + c * r;
            b[i] = c * root_d;
        }
    }

    /// ∂_iU(ξ*) − [∂_i log p(y) − ∂_i log p(ξ*)] − N[∂_iℓ_J(y) − ∂_iℓ_J(ξ*)].
    fn estimate(&mut self, model: &M, y: &[f64], datum: u32, i: usize) -> (f64, EvalCounts) {
        let Some(cv) = self.cv.as_ref() else {
            return (f64::NAN, EvalCounts::ZERO);
        };
        let idx = [datum];
        let counts = self.engine.differences(model, cv, y, 0, &idx, &mut self.d, true);
        self.diff.fill(0.0);
        self.engine.add_weighted_gradients(model, 0, &idx, &[1.0], &mut self.diff);
        self.prior.fill(0.0);
        model.log_prior_grad(y, &mut self.prior);
        let n = cv.num_terms() as f64;
        let g = self.grad_at_reference[i]
            - (self.prior[i] - self.prior_at_reference[i])
            - n * self.diff[i];
        (g, counts)
    }

    fn describe(&self) -> String {
        "ZZ-CV: control variates around ξ* (a_i = θ_i∂_iU(ξ*) + C^tot_i‖ξ − ξ*‖, \
         b_i = C^tot_i√d)"
            .into()
    }
}
