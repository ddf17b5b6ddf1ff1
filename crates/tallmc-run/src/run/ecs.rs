//! `tallmc sample hmc-ecs | hmc-ecs-signed`: HMC with energy-conserving subsampling (Dang et al.
//! 2019), perturbed or signed, with Taylor control variates around the posterior mode.
//!
//! The Laplace mode the CLI finds anyway is the expansion point θ*, so the kernels skip their
//! own Newton search. It is the full-data mode to Newton's tolerance, so the warmup does not
//! re-centre θ* (the paper's §6.3 re-sets θ* and M every 200 warmup iterations because its θ*
//! comes from an optimizer stopped early; each re-centring costs a pass over all N rows, which
//! at n = 10⁷ is more than the 3,000 draws cost). The only passes over all rows are Newton's
//! and the control variates' sums at θ*. Models with a linear predictor (logistic, probit,
//! Poisson, gaussian-mean) use the rank-one difference engine, NB2 and robust regression the
//! rank-two one; the others use Hessian-vector products.
//! The θ-step is fixed-length HMC (`--inner hmc`, the paper's) or NUTS (`--inner nuts`,
//! `--max-depth`), see [`ThetaIntegrator`].

use anyhow::Result;
use serde::Serialize;
use tallmc_diagnostics::{SignCorrected, sign_corrected};
use tallmc_estimators::{CvOrder, DifferenceTerms, HessianProducts, RankOne, RankTwo};
use tallmc_models::{
    FastLogisticRegression, Gaussian, GaussianMean, LinearRegression, NegativeBinomialRegression,
    PoissonRegression, ProbitRegression, RobustRegression,
};
use tallmc_samplers::{
    ChainOutput, Driver, EcsDynamics, HmcEcs, HmcEcsConfig, SignedHmcEcs, SignedHmcEcsConfig,
    ThetaIntegrator,
};

use super::context::RunModel;
use super::outputs::{AnyTuning, Outputs, Sinks, run_kernel};
use super::served::{Servable, Served};
use crate::spec::{EcsCommon, HmcEcsSettings, HmcEcsSignedSettings};

/// The settings of an HMC-ECS run: perturbed or signed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum EcsSettings<'a> {
    /// Perturbed HMC-ECS.
    Perturbed(&'a HmcEcsSettings),
    /// Signed HMC-ECS.
    Signed(&'a HmcEcsSignedSettings),
}

impl EcsSettings<'_> {
    fn common(&self) -> &EcsCommon {
        match self {
            Self::Perturbed(s) => &s.ecs,
            Self::Signed(s) => &s.ecs,
        }
    }

    /// Checks the settings against N and builds the kernel's settings once (before the mode
    /// search), so that a bad setting is an error before any work.
    pub(crate) fn check(&self, n: usize) -> Result<()> {
        match self {
            Self::Perturbed(s) => {
                s.check_against(n)?;
                self.perturbed_config(s, None).validate()?;
            }
            Self::Signed(s) => {
                s.check_against(n)?;
                self.signed_config(s, None).validate()?;
            }
        }
        Ok(())
    }

    fn dynamics(&self) -> EcsDynamics {
        let c = self.common();
        let mut d = EcsDynamics {
            trajectory_length: c.hmc_trajectory_length(),
            recenter: None,
            parallel_control_variates: true,
            ..EcsDynamics::default()
        }
        .with_integrator(c.integrator());
        d.dual_averaging.target_accept = c.target_accept;
        d
    }

    fn perturbed_config(&self, s: &HmcEcsSettings, center: Option<&[f64]>) -> HmcEcsConfig {
        let base = HmcEcsConfig::default();
        let blocks = s.blocks.unwrap_or(match s.subsample {
            Some(m) => base.blocks.min(m),
            None => base.blocks,
        });
        HmcEcsConfig {
            subsample_size: s.subsample,
            blocks,
            cv_order: s.ecs.order().unwrap_or(CvOrder::Two),
            center: center.map(<[f64]>::to_vec),
            dynamics: self.dynamics(),
            ..base
        }
    }

    fn signed_config(
        &self, s: &HmcEcsSignedSettings, center: Option<&[f64]>,
    ) -> SignedHmcEcsConfig {
        SignedHmcEcsConfig {
            block_size: s.subsample,
            lambda: s.lambda,
            cv_order: s.ecs.order().unwrap_or(CvOrder::Two),
            center: center.map(<[f64]>::to_vec),
            dynamics: self.dynamics(),
            ..SignedHmcEcsConfig::default()
        }
    }

    /// Whether this is signed HMC-ECS (its summary is sign-corrected).
    pub(crate) fn is_signed(&self) -> bool {
        matches!(self, Self::Signed(_))
    }

    /// Lines for the CSV comments (the tuned values are in the adaptation report).
    pub(crate) fn comments(&self) -> Vec<(String, String)> {
        let c = self.common();
        let length = match c.integrator() {
            ThetaIntegrator::Hmc => {
                ("trajectory_length".to_string(), self.dynamics().trajectory_length.to_string())
            }
            ThetaIntegrator::Nuts { max_depth } => ("max_depth".to_string(), max_depth.to_string()),
        };
        let mut lines =
            vec![("control_variates".to_string(), format!("Taylor order {}", c.cv_order))];
        if c.integrator() != ThetaIntegrator::Hmc {
            lines.push(("inner".to_string(), "nuts".to_string()));
        }
        lines.push(length);
        lines.push(("target_accept".to_string(), c.target_accept.to_string()));
        match self {
            Self::Signed(s) => {
                lines.push(("block_size".to_string(), s.subsample.to_string()));
                lines.push(("lambda".to_string(), s.lambda.to_string()));
            }
            Self::Perturbed(s) => {
                let tuned = s.subsample.map_or("tuned at θ*".to_string(), |v| v.to_string());
                lines.push(("subsample".to_string(), tuned));
                lines.push((
                    "blocks".to_string(),
                    self.perturbed_config(s, None).blocks.to_string(),
                ));
            }
        }
        lines
    }
}

/// The difference engine of a model: rank-one for models with a linear predictor (logistic,
/// probit, Poisson, gaussian-mean), rank-two for those with a linear predictor and a shared
/// dispersion parameter (NB2, robust), Hessian-vector products otherwise (linear, gaussian, the
/// user's own models). HMC-ECS and the stochastic-gradient kernels' control variates use it.
pub trait WithEngine: RunModel + Sized {
    /// The engine type.
    type Engine: DifferenceTerms<Self> + Clone + Send + Sync;
    /// An engine with `lanes` lanes sized for `m` indices each (it grows if needed).
    fn engine(&self, lanes: usize, m: usize) -> Self::Engine;
    /// Whether the model's per-datum Hessians are its own (exact), so that second-order
    /// control variates are exact too; a model of the user's own without them refuses order 2.
    fn exact_hessians(&self) -> bool {
        true
    }
}

/// The engine of a model whose rows are served: the model's own engine type, over the served
/// model (the difference engines work on any model with the traits they read).
pub(crate) trait ServedEngine: WithEngine + Servable {
    /// The engine over the served model.
    type Served: for<'a> DifferenceTerms<Served<'a, Self>> + Clone + Send + Sync;
    /// An engine with `lanes` lanes sized for `m` indices each.
    fn served_engine(&self, lanes: usize, m: usize) -> Self::Served;
}

/// Second-order control variates need exact per-datum Hessians.
pub(crate) fn check_cv_order<M: WithEngine>(model: &M, order: CvOrder) -> Result<()> {
    if order == CvOrder::Two && !model.exact_hessians() {
        anyhow::bail!(
            "--cv-order 2: second-order control variates need the model's per-datum Hessians, \
             and this model gives none (CustomModel without hess_terms: give hess_terms, or use \
             --cv-order 1, which needs gradients only)"
        );
    }
    Ok(())
}

macro_rules! rank_one_engine {
    ($($model:ty),*) => {$(
        impl WithEngine for $model {
            type Engine = RankOne;
            fn engine(&self, lanes: usize, m: usize) -> RankOne {
                RankOne::with_lanes(lanes, m)
            }
        }
        impl ServedEngine for $model {
            type Served = RankOne;
            fn served_engine(&self, lanes: usize, m: usize) -> RankOne {
                RankOne::with_lanes(lanes, m)
            }
        }
    )*};
}

macro_rules! hessian_products_engine {
    ($($model:ty),*) => {$(
        impl WithEngine for $model {
            type Engine = HessianProducts;
            fn engine(&self, lanes: usize, m: usize) -> HessianProducts {
                HessianProducts::with_lanes(tallmc_core::Terms::dim(self), lanes, m)
            }
        }
        impl ServedEngine for $model {
            type Served = HessianProducts;
            fn served_engine(&self, lanes: usize, m: usize) -> HessianProducts {
                HessianProducts::with_lanes(tallmc_core::Terms::dim(self), lanes, m)
            }
        }
    )*};
}

rank_one_engine!(FastLogisticRegression, GaussianMean, ProbitRegression, PoissonRegression);
hessian_products_engine!(LinearRegression, Gaussian);

macro_rules! rank_two_engine {
    ($($model:ty),*) => {$(
        impl WithEngine for $model {
            type Engine = RankTwo;
            fn engine(&self, lanes: usize, m: usize) -> RankTwo {
                RankTwo::with_lanes(lanes, m)
            }
        }
        impl ServedEngine for $model {
            type Served = RankTwo;
            fn served_engine(&self, lanes: usize, m: usize) -> RankTwo {
                RankTwo::with_lanes(lanes, m)
            }
        }
    )*};
}

rank_two_engine!(NegativeBinomialRegression, RobustRegression);

/// Runs perturbed or signed HMC-ECS with θ* = `center`.
pub(crate) fn run_ecs<M: WithEngine>(
    model: &M, s: EcsSettings<'_>, center: &[f64], driver: &Driver<'_>, inits: &[Vec<f64>],
    sinks: Vec<Sinks>,
) -> Result<Outputs> {
    check_cv_order(model, s.common().order().unwrap_or(CvOrder::Two))?;
    Ok(match s {
        EcsSettings::Signed(signed) => {
            let cfg = s.signed_config(signed, Some(center));
            let engine = model.engine(cfg.lambda, 8 * cfg.block_size);
            run_kernel(driver, model, inits, &SignedHmcEcs::with_engine(cfg, engine)?, sinks)?
        }
        EcsSettings::Perturbed(perturbed) => {
            let cfg = s.perturbed_config(perturbed, Some(center));
            let engine = model.engine(1, cfg.subsample_size.unwrap_or(1));
            run_kernel(driver, model, inits, &HmcEcs::with_engine(cfg, engine)?, sinks)?
        }
    })
}

/// Sign-corrected summary of one parameter of a signed run (summary.json).
#[derive(Debug, Serialize)]
pub(crate) struct SignCorrectedParameter {
    name: String,
    #[serde(flatten)]
    summary: SignCorrected,
}

/// The sign-corrected block of summary.json.
#[derive(Debug, Serialize)]
pub(crate) struct SignCorrectedSummary {
    /// Fraction of positive signs over every chain's draws.
    tau: f64,
    /// Draws with a negative sign.
    negative_signs: usize,
    parameters: Vec<SignCorrectedParameter>,
}

/// Sign-corrected means, sds and MCSEs of every parameter from the `sign__` column.
pub(crate) fn sign_corrected_summary(
    names: &[String], outputs: &[ChainOutput<Sinks, AnyTuning>],
) -> Result<SignCorrectedSummary> {
    let signs: Vec<Vec<f64>> =
        outputs.iter().map(|o| o.sink.0.stat("sign__").unwrap_or_default()).collect();
    let negative_signs = signs.iter().flatten().filter(|s| **s < 0.0).count();
    let mut parameters = Vec::with_capacity(names.len());
    let mut tau = f64::NAN;
    for (j, name) in names.iter().enumerate() {
        let values: Vec<Vec<f64>> = outputs.iter().map(|o| o.sink.0.coordinate(j)).collect();
        let summary = sign_corrected(&values, &signs)
            .map_err(|e| anyhow::anyhow!("sign-corrected summary of {name}: {e}"))?;
        tau = summary.tau;
        parameters.push(SignCorrectedParameter { name: name.clone(), summary });
    }
    Ok(SignCorrectedSummary { tau, negative_signs, parameters })
}
