//! The exact minibatch MH kernels of a run — SMH, TunaMH, MH-SS — per model: each with the
//! per-datum bounds it needs (`tallmc_core::termwise_bounds`), its Taylor expansions at the
//! posterior mode and a Laplace-shaped random walk; a model without the bound is a clear error
//! naming it and what to use instead.

use anyhow::{Result, bail};
use tallmc_core::termwise_bounds::{derivative_constants, lipschitz_constants};
use tallmc_core::{
    LogPrior, TermConstant, TermCurvatureConstants, TermHessians, TermLipschitz,
    TermThirdDerivativeConstants,
};
use tallmc_estimators::{CvOrder, DifferenceTerms, HessianProducts, RankOne};
use tallmc_models::{
    FastLogisticRegression, Gaussian, GaussianMean, LinearRegression, NegativeBinomialRegression,
    PoissonRegression, ProbitRegression, RobustRegression,
};
use tallmc_samplers::{
    CrankNicolsonConfig, CrankNicolsonProposal, Driver, MhSs, MhSsConfig, RandomWalkProposal,
    RandomWalkProposalConfig, Smh, SmhConfig, TunaMh, TunaMhConfig,
};

use super::context::{RunModel, unbounded_because};
use super::outputs::{Outputs, Sinks, run_kernel};
use crate::spec::{MhSsSettings, SamplerSettings, SmhSettings};

/// What an exact minibatch MH run needs besides the model and the sinks.
pub(crate) struct ExactMhRun<'a> {
    pub(crate) driver: &'a Driver<'a>,
    pub(crate) inits: &'a [Vec<f64>],
    pub(crate) sampler: &'a SamplerSettings,
    pub(crate) walk: &'a RandomWalkProposalConfig,
    /// The centre of the Taylor expansions (and of a pCN proposal): the posterior mode.
    pub(crate) mode: &'a [f64],
    /// The Laplace covariance (a pCN proposal's reference covariance).
    pub(crate) covariance: &'a [f64],
}

impl ExactMhRun<'_> {
    /// The pCN proposal N(mode, Laplace covariance) with autocorrelation `rho`.
    fn pcn(&self, rho: f64) -> Result<CrankNicolsonProposal> {
        Ok(CrankNicolsonProposal::new(CrankNicolsonConfig {
            center: self.mode.to_vec(),
            covariance: self.covariance.to_vec(),
            rho,
        })?)
    }

    /// The random walk.
    fn walk(&self) -> Result<RandomWalkProposal> {
        Ok(RandomWalkProposal::new(self.walk.clone())?)
    }
}

/// Running SMH, TunaMH or MH-SS: implemented per model with the bounds it has.
pub(crate) trait RunExactMh: RunModel {
    /// Runs the kernel of `run.sampler`, or explains why the model cannot.
    fn run_exact_mh(&self, run: &ExactMhRun<'_>, sinks: Vec<Sinks>) -> Result<Outputs>;

    /// Every datum's `constant` (the pass over one shard of a run over shards), or why the
    /// model has none.
    fn term_constants(&self, constant: TermConstant) -> Result<Vec<f64>>;

    /// Whether the model has the bounds `sampler` needs: the error of
    /// [`RunExactMh::run_exact_mh`] if not (checked before a run over shards starts its passes).
    fn check_exact_mh(&self, sampler: &SamplerSettings) -> Result<()>;
}

/// The per-datum constant `sampler` draws its minibatches with (`None`: not an exact minibatch
/// MH kernel).
pub(crate) fn constant_needed(sampler: &SamplerSettings) -> Option<TermConstant> {
    Some(match sampler {
        SamplerSettings::Smh(s) if s.order == 1 => TermConstant::SecondDerivativeBound,
        SamplerSettings::Smh(_) => TermConstant::ThirdDerivativeBound,
        SamplerSettings::MhSs(s) if s.order == 1 => TermConstant::GradientLipschitz,
        SamplerSettings::MhSs(_) => TermConstant::HessianLipschitz,
        SamplerSettings::Tunamh(_) => TermConstant::Lipschitz,
        _ => return None,
    })
}

pub(crate) fn smh<M, E>(
    model: &M, run: &ExactMhRun<'_>, s: &SmhSettings, engine: E, sinks: Vec<Sinks>,
) -> Result<Outputs>
where
    M: RunModel + TermHessians + LogPrior + TermCurvatureConstants + TermThirdDerivativeConstants,
    E: DifferenceTerms<M> + Clone + Send + Sync,
{
    let order = if s.order == 1 { CvOrder::One } else { CvOrder::Two };
    let config = SmhConfig { order, center: run.mode.to_vec() };
    match s.pcn {
        Some(rho) => {
            let kernel = Smh::new(run.pcn(rho)?, engine, config)?;
            run_kernel(run.driver, model, run.inits, &kernel, sinks)
        }
        None => {
            let kernel = Smh::new(run.walk()?, engine, config)?;
            run_kernel(run.driver, model, run.inits, &kernel, sinks)
        }
    }
}

pub(crate) fn mh_ss<M, E>(
    model: &M, run: &ExactMhRun<'_>, s: &MhSsSettings, engine: E, sinks: Vec<Sinks>,
) -> Result<Outputs>
where
    M: RunModel + TermHessians + LogPrior + TermCurvatureConstants + TermThirdDerivativeConstants,
    E: DifferenceTerms<M> + Clone + Send + Sync,
{
    let config = MhSsConfig { center: run.mode.to_vec(), chi: s.chi };
    let (d, i) = (run.driver, run.inits);
    match (s.order, s.pcn) {
        (1, Some(rho)) => {
            run_kernel(d, model, i, &MhSs::new(run.pcn(rho)?, engine, config)?, sinks)
        }
        (1, None) => run_kernel(d, model, i, &MhSs::new(run.walk()?, engine, config)?, sinks),
        (_, Some(rho)) => {
            let kernel = MhSs::second_order(run.pcn(rho)?, engine, config)?;
            run_kernel(d, model, i, &kernel, sinks)
        }
        (_, None) => {
            let kernel = MhSs::second_order(run.walk()?, engine, config)?;
            run_kernel(d, model, i, &kernel, sinks)
        }
    }
}

pub(crate) fn tuna_mh<M>(
    model: &M, run: &ExactMhRun<'_>, chi: f64, sinks: Vec<Sinks>,
) -> Result<Outputs>
where
    M: RunModel + LogPrior + TermLipschitz,
{
    let kernel = TunaMh::new(run.walk()?, TunaMhConfig { chi })?;
    run_kernel(run.driver, model, run.inits, &kernel, sinks)
}

/// The error for a model without the bound a kernel needs.
fn refused(sampler: &SamplerSettings, model: &str, bound: &str, instead: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "tallmc sample {} needs {bound} and --model {model} has none ({}); use {instead}",
        sampler.name(),
        unbounded_because(model)
    )
}

const LIPSCHITZ: &str = "a per-datum Lipschitz bound on ℓ_i (a bounded score)";

/// The error for a constant `model` lacks.
fn no_constant(model: &str, constant: TermConstant) -> anyhow::Error {
    anyhow::anyhow!("--model {model} has no {} ({})", constant.describe(), unbounded_because(model))
}

/// SMH and MH-SS run; TunaMH (which needs a Lipschitz bound) is refused.
fn curvature_only(sampler: &SamplerSettings, model: &str) -> Result<()> {
    match sampler {
        SamplerSettings::Smh(_) | SamplerSettings::MhSs(_) => Ok(()),
        other => Err(refused(other, model, LIPSCHITZ, "smh or mh-ss")),
    }
}
const CURVATURE: &str = "per-datum bounds on the derivatives of ℓ_i";

/// Logistic regression has every bound.
impl RunExactMh for FastLogisticRegression {
    fn run_exact_mh(&self, run: &ExactMhRun<'_>, sinks: Vec<Sinks>) -> Result<Outputs> {
        match run.sampler {
            SamplerSettings::Smh(s) => smh(self, run, s, RankOne::new(1), sinks),
            SamplerSettings::Tunamh(s) => tuna_mh(self, run, s.chi, sinks),
            SamplerSettings::MhSs(s) => mh_ss(self, run, s, RankOne::new(1), sinks),
            other => bail!("{} is not an exact minibatch MH kernel", other.name()),
        }
    }

    fn term_constants(&self, constant: TermConstant) -> Result<Vec<f64>> {
        Ok(derivative_constants(self, constant).unwrap_or_else(|| lipschitz_constants(self)))
    }

    fn check_exact_mh(&self, _sampler: &SamplerSettings) -> Result<()> {
        Ok(())
    }
}

/// Probit regression bounds its derivatives (|φ″| ≤ 1, |φ‴| ≤ 0.2958) but not its score.
impl RunExactMh for ProbitRegression {
    fn run_exact_mh(&self, run: &ExactMhRun<'_>, sinks: Vec<Sinks>) -> Result<Outputs> {
        match run.sampler {
            SamplerSettings::Smh(s) => smh(self, run, s, RankOne::new(1), sinks),
            SamplerSettings::MhSs(s) => mh_ss(self, run, s, RankOne::new(1), sinks),
            other => Err(refused(other, "probit", LIPSCHITZ, "smh or mh-ss")),
        }
    }

    fn term_constants(&self, constant: TermConstant) -> Result<Vec<f64>> {
        derivative_constants(self, constant).ok_or_else(|| no_constant("probit", constant))
    }

    fn check_exact_mh(&self, sampler: &SamplerSettings) -> Result<()> {
        curvature_only(sampler, "probit")
    }
}

/// The Gaussian mean's terms are quadratic: bounded curvature (1/σ²), no third derivative, an
/// unbounded score.
impl RunExactMh for GaussianMean {
    fn run_exact_mh(&self, run: &ExactMhRun<'_>, sinks: Vec<Sinks>) -> Result<Outputs> {
        let d = 1;
        match run.sampler {
            SamplerSettings::Smh(s) => smh(self, run, s, HessianProducts::new(d, 1), sinks),
            SamplerSettings::MhSs(s) => mh_ss(self, run, s, HessianProducts::new(d, 1), sinks),
            other => Err(refused(other, "gaussian-mean", LIPSCHITZ, "smh or mh-ss")),
        }
    }

    fn term_constants(&self, constant: TermConstant) -> Result<Vec<f64>> {
        derivative_constants(self, constant).ok_or_else(|| no_constant("gaussian-mean", constant))
    }

    fn check_exact_mh(&self, sampler: &SamplerSettings) -> Result<()> {
        curvature_only(sampler, "gaussian-mean")
    }
}

/// The error for a model without any per-datum bound.
fn unbounded(sampler: &SamplerSettings, model: &str) -> anyhow::Error {
    refused(sampler, model, CURVATURE, "hmc-ecs, confidence, or an exact full-data sampler")
}

/// Implements [`RunExactMh`] for models without per-datum bounds: a message naming them.
macro_rules! exact_mh_refused {
    ($($model:ty => $name:literal),*) => {$(
        impl RunExactMh for $model {
            fn run_exact_mh(&self, run: &ExactMhRun<'_>, _sinks: Vec<Sinks>) -> Result<Outputs> {
                Err(unbounded(run.sampler, $name))
            }

            fn term_constants(&self, constant: TermConstant) -> Result<Vec<f64>> {
                Err(no_constant($name, constant))
            }

            fn check_exact_mh(&self, sampler: &SamplerSettings) -> Result<()> {
                Err(unbounded(sampler, $name))
            }
        }
    )*};
}

exact_mh_refused!(
    Gaussian => "gaussian",
    LinearRegression => "linear",
    PoissonRegression => "poisson",
    NegativeBinomialRegression => "negative-binomial",
    RobustRegression => "robust"
);
