//! Models of the user's own: any type with the evaluation traits of `tallmc_core` (the Python
//! package's `CustomModel`, whose terms call back into Python), run by [`run_custom`] with
//! every sampler whose needs the model meets. Such a model has no bounds, so the bound-based
//! samplers (confidence, lipSBPS, Zig-Zag with subsampling) refuse it; HMC-ECS and the
//! stochastic-gradient kernels use Hessian-vector products for their control variates, and
//! second-order control variates only when the Hessians are the model's own
//! ([`CustomModel::exact_hessians`]).

use anyhow::Result;
use tallmc_core::{
    LogPrior, LogPriorHessian, ParameterNames, TermConstant, TermGradients, TermHessians, Terms,
};
use tallmc_estimators::HessianProducts;

use super::confidence::{ConfidenceRun, RunConfidence};
use super::context::RunModel;
use super::design::DesignWarnings;
use super::ecs::WithEngine;
use super::exact_mh::{ExactMhRun, RunExactMh};
use super::outputs::{Outputs, Sinks};
use super::pdmp::{PdmpOutputs, PdmpRun, RunPdmp, run_without_bounds};
use crate::spec::SamplerSettings;

/// A model of the user's own, for [`run_custom`](crate::run_custom): the evaluation traits of
/// every run model, and whether its per-datum Hessians are its own.
pub trait CustomModel: RunModel {
    /// Whether [`TermHessians`] are the model's own (exact) rather than finite differences of
    /// its gradients: without them, second-order control variates are refused (HMC-ECS and the
    /// SG kernels then need `cv_order` 1).
    fn exact_hessians(&self) -> bool {
        true
    }
}

/// The run's view of a user's model: every trait delegated, and the run's capabilities (no
/// bound, Hessian-vector products for control variates, no design).
pub(crate) struct Custom<'a, M>(pub(crate) &'a M);

impl<M: CustomModel> Terms for Custom<'_, M> {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn num_terms(&self) -> usize {
        self.0.num_terms()
    }
    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        self.0.log_terms(theta, indices, out);
    }
    fn sum_log_terms(&self, theta: &[f64], indices: &[u32]) -> f64 {
        self.0.sum_log_terms(theta, indices)
    }
    fn sum_log_terms_range(&self, theta: &[f64], start: u32, end: u32) -> f64 {
        self.0.sum_log_terms_range(theta, start, end)
    }
}

impl<M: CustomModel> TermGradients for Custom<'_, M> {
    fn log_terms_grad_sum(
        &self, theta: &[f64], indices: &[u32], out: &mut [f64], grad_sum: &mut [f64],
    ) -> f64 {
        self.0.log_terms_grad_sum(theta, indices, out, grad_sum)
    }
    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        self.0.log_terms_grads(theta, indices, out, grads);
    }
    fn sum_log_terms_grad_range(
        &self, theta: &[f64], start: u32, end: u32, grad_sum: &mut [f64],
    ) -> f64 {
        self.0.sum_log_terms_grad_range(theta, start, end, grad_sum)
    }
}

impl<M: CustomModel> TermHessians for Custom<'_, M> {
    fn hessian_vector_products(&self, theta: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]) {
        self.0.hessian_vector_products(theta, indices, v, out);
    }
    fn sum_hessian(&self, theta: &[f64], indices: &[u32], hess: &mut [f64]) {
        self.0.sum_hessian(theta, indices, hess);
    }
    fn sum_hessian_vector_range(
        &self, theta: &[f64], start: u32, end: u32, v: &[f64], out: &mut [f64],
    ) {
        self.0.sum_hessian_vector_range(theta, start, end, v, out);
    }
    fn sum_hessian_range(&self, theta: &[f64], start: u32, end: u32, hess: &mut [f64]) {
        self.0.sum_hessian_range(theta, start, end, hess);
    }
}

impl<M: CustomModel> LogPrior for Custom<'_, M> {
    fn log_prior(&self, theta: &[f64]) -> f64 {
        self.0.log_prior(theta)
    }
    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.0.log_prior_grad(theta, grad)
    }
}

impl<M: CustomModel> LogPriorHessian for Custom<'_, M> {
    fn add_log_prior_hessian(&self, theta: &[f64], hess: &mut [f64]) {
        self.0.add_log_prior_hessian(theta, hess);
    }
}

impl<M: CustomModel> ParameterNames for Custom<'_, M> {
    fn parameter_names(&self) -> Vec<String> {
        self.0.parameter_names()
    }
}

/// No bound: the confidence sampler refuses.
impl<M: CustomModel> RunConfidence for Custom<'_, M> {
    fn run_confidence(&self, _run: &ConfidenceRun<'_>, _sinks: Vec<Sinks>) -> Result<Outputs> {
        anyhow::bail!(
            "tallmc sample confidence needs a bound on |ℓ_i(θ′) − ℓ_i(θ)| (or, with --cv, on \
             the third derivatives of ℓ_i), and a model of your own states none; use austerity \
             or an exact sampler"
        )
    }
}

/// Control variates by Hessian-vector products.
impl<M: CustomModel> WithEngine for Custom<'_, M> {
    type Engine = HessianProducts;
    fn engine(&self, lanes: usize, m: usize) -> HessianProducts {
        HessianProducts::with_lanes(self.dim(), lanes, m)
    }
    fn exact_hessians(&self) -> bool {
        self.0.exact_hessians()
    }
}

/// No gradient bound: SBPS, and BPS / Zig-Zag with the automatic envelope.
impl<M: CustomModel> RunPdmp for Custom<'_, M> {
    fn run_pdmp(&self, run: &PdmpRun<'_>) -> Result<PdmpOutputs> {
        run_without_bounds(self, "custom", run)
    }
}

/// No per-datum bounds: the exact minibatch MH kernels refuse.
impl<M: CustomModel> RunExactMh for Custom<'_, M> {
    fn run_exact_mh(&self, run: &ExactMhRun<'_>, _sinks: Vec<Sinks>) -> Result<Outputs> {
        Err(no_bounds(run.sampler))
    }

    fn term_constants(&self, constant: TermConstant) -> Result<Vec<f64>> {
        anyhow::bail!("a model of your own states no {}", constant.describe())
    }

    fn check_exact_mh(&self, sampler: &SamplerSettings) -> Result<()> {
        Err(no_bounds(sampler))
    }
}

/// Why the exact minibatch MH kernels refuse a model of your own.
fn no_bounds(sampler: &SamplerSettings) -> anyhow::Error {
    anyhow::anyhow!(
        "tallmc sample {} needs per-datum bounds on ℓ_i, and a model of your own states none; \
         use hmc-ecs or an exact full-data sampler",
        sampler.name()
    )
}

/// No design to diagnose.
impl<M: CustomModel> DesignWarnings for Custom<'_, M> {}
