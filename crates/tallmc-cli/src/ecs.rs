//! `tallmc sample hmc-ecs | hmc-ecs-signed`: HMC with energy-conserving subsampling (Dang et al.
//! 2019), perturbed or signed, with Taylor control variates around the posterior mode.
//!
//! The Laplace mode the CLI finds anyway is the expansion point θ*, so the kernels skip their
//! own Newton search. It is the full-data mode to Newton's tolerance, so the warmup does not
//! re-centre θ* (the paper's §6.3 re-sets θ* and M every 200 warmup iterations because its θ*
//! comes from an optimizer stopped early; each re-centring costs a pass over all N rows, which
//! at n = 10⁷ is more than the 3,000 draws cost). The only passes over all rows are Newton's
//! and the control variates' sums at θ*. Models with a linear predictor (logistic,
//! gaussian-mean) use the rank-one difference engine; the others use Hessian-vector products.
//! The θ-step is fixed-length HMC (`--inner hmc`, the paper's) or NUTS (`--inner nuts`,
//! `--max-depth`), see [`ThetaIntegrator`].

use anyhow::{Result, bail};
use serde::Serialize;
use tallmc_diagnostics::{SignCorrected, sign_corrected};
use tallmc_estimators::{CvOrder, DifferenceTerms, HessianProducts, RankOne};
use tallmc_models::{FastLogisticRegression, Gaussian, GaussianMean, LinearRegression};
use tallmc_samplers::sink::{ColumnMemorySink, CsvSink, Tee};
use tallmc_samplers::{
    ChainOutput, Driver, EcsDynamics, HmcEcs, HmcEcsConfig, SignedHmcEcs, SignedHmcEcsConfig,
    ThetaIntegrator,
};

use crate::args::{InnerArg, Sampler};
use crate::outputs::{AnyTuning, Outputs, Sinks, run_kernel};
use crate::run::CliModel;

/// The validated settings of an HMC-ECS run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EcsSettings {
    signed: bool,
    /// Perturbed: m (tuned if `None`); signed: the block size m.
    subsample: Option<usize>,
    /// Perturbed: G (default min(100, m)).
    blocks: Option<usize>,
    /// Signed: λ.
    lambda: Option<usize>,
    cv_order: CvOrder,
    trajectory_length: f64,
    target_accept: f64,
    /// The θ-step.
    integrator: ThetaIntegrator,
}

impl EcsSettings {
    /// Settings of perturbed or signed HMC-ECS, checked against N.
    pub(crate) fn new(sampler: &Sampler, n: usize) -> Result<Self> {
        let (a, signed, subsample, blocks, lambda) = match sampler {
            Sampler::HmcEcs(a) => (&a.ecs, false, a.subsample, a.blocks, None),
            Sampler::HmcEcsSigned(a) => (&a.ecs, true, Some(a.subsample), None, Some(a.lambda)),
            other => bail!("{} is not an HMC-ECS sampler", other.kind().name()),
        };
        if let Some(m) = subsample
            && (m == 0 || m > n)
        {
            bail!("--subsample {m}: expected 1 ≤ m ≤ N = {n}");
        }
        if let Some(g) = blocks {
            let m = subsample.map_or("the tuned m".to_string(), |m| m.to_string());
            if g == 0 || subsample.is_some_and(|m| g > m) {
                bail!("--blocks {g}: expected 1 ≤ G ≤ m = {m}");
            }
        }
        if lambda == Some(0) {
            bail!("--lambda 0: expected at least 1 factor λ");
        }
        let s = Self {
            signed,
            subsample,
            blocks,
            lambda,
            cv_order: CvOrder::from_number(a.cv_order)?,
            trajectory_length: a.trajectory_length,
            target_accept: a.target.target_accept,
            integrator: match a.inner {
                InnerArg::Hmc => ThetaIntegrator::Hmc,
                InnerArg::Nuts => ThetaIntegrator::Nuts { max_depth: a.max_depth.value() },
            },
        };
        // Validate the kernel settings now, before the mode search.
        if signed {
            s.signed_config(None).validate()?;
        } else {
            s.perturbed_config(None).validate()?;
        }
        Ok(s)
    }

    fn dynamics(&self) -> EcsDynamics {
        let mut d = EcsDynamics {
            trajectory_length: self.trajectory_length,
            recenter: None,
            parallel_control_variates: true,
            ..EcsDynamics::default()
        }
        .with_integrator(self.integrator);
        d.dual_averaging.target_accept = self.target_accept;
        d
    }

    fn perturbed_config(&self, center: Option<&[f64]>) -> HmcEcsConfig {
        let base = HmcEcsConfig::default();
        let blocks = self.blocks.unwrap_or(match self.subsample {
            Some(m) => base.blocks.min(m),
            None => base.blocks,
        });
        HmcEcsConfig {
            subsample_size: self.subsample,
            blocks,
            cv_order: self.cv_order,
            center: center.map(<[f64]>::to_vec),
            dynamics: self.dynamics(),
            ..base
        }
    }

    fn signed_config(&self, center: Option<&[f64]>) -> SignedHmcEcsConfig {
        let base = SignedHmcEcsConfig::default();
        SignedHmcEcsConfig {
            block_size: self.subsample.unwrap_or(base.block_size),
            lambda: self.lambda.unwrap_or(base.lambda),
            cv_order: self.cv_order,
            center: center.map(<[f64]>::to_vec),
            dynamics: self.dynamics(),
            ..base
        }
    }

    /// Whether this is signed HMC-ECS (its summary is sign-corrected).
    pub(crate) fn is_signed(&self) -> bool {
        self.signed
    }

    /// Lines for the CSV comments (the tuned values are in the adaptation report).
    pub(crate) fn comments(&self) -> Vec<(String, String)> {
        let tuned = |v: Option<usize>| v.map_or("tuned at θ*".to_string(), |v| v.to_string());
        let length = match self.integrator {
            ThetaIntegrator::Hmc => {
                ("trajectory_length".to_string(), self.dynamics().trajectory_length.to_string())
            }
            ThetaIntegrator::Nuts { max_depth } => ("max_depth".to_string(), max_depth.to_string()),
        };
        let mut c = vec![(
            "control_variates".to_string(),
            format!("Taylor order {}", self.cv_order.number()),
        )];
        if self.integrator != ThetaIntegrator::Hmc {
            c.push(("inner".to_string(), "nuts".to_string()));
        }
        c.push(length);
        c.push(("target_accept".to_string(), self.target_accept.to_string()));
        if self.signed {
            let cfg = self.signed_config(None);
            c.push(("block_size".to_string(), cfg.block_size.to_string()));
            c.push(("lambda".to_string(), cfg.lambda.to_string()));
        } else {
            c.push(("subsample".to_string(), tuned(self.subsample)));
            c.push(("blocks".to_string(), self.perturbed_config(None).blocks.to_string()));
        }
        c
    }
}

/// The difference engine of a model: rank-one for models with a linear predictor (logistic,
/// gaussian-mean), Hessian-vector products otherwise. HMC-ECS and the stochastic-gradient
/// kernels' control variates use it.
pub trait WithEngine: CliModel + Sized {
    /// The engine type.
    type Engine: DifferenceTerms<Self> + Clone + Send + Sync;
    /// An engine with `lanes` lanes sized for `m` indices each (it grows if needed).
    fn engine(&self, lanes: usize, m: usize) -> Self::Engine;
}

macro_rules! rank_one_engine {
    ($($model:ty),*) => {$(
        impl WithEngine for $model {
            type Engine = RankOne;
            fn engine(&self, lanes: usize, m: usize) -> RankOne {
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
    )*};
}

rank_one_engine!(FastLogisticRegression, GaussianMean);
hessian_products_engine!(LinearRegression, Gaussian);

/// Runs perturbed or signed HMC-ECS with θ* = `center`.
pub(crate) fn run_ecs<M: WithEngine>(
    model: &M, s: &EcsSettings, center: &[f64], driver: &Driver<'_>, inits: &[Vec<f64>],
    sinks: Vec<Tee<ColumnMemorySink, CsvSink>>,
) -> Result<Outputs> {
    Ok(if s.signed {
        let cfg = s.signed_config(Some(center));
        let engine = model.engine(cfg.lambda, 8 * cfg.block_size);
        run_kernel(driver, model, inits, &SignedHmcEcs::with_engine(cfg, engine)?, sinks)?
    } else {
        let cfg = s.perturbed_config(Some(center));
        let engine = model.engine(1, cfg.subsample_size.unwrap_or(1));
        run_kernel(driver, model, inits, &HmcEcs::with_engine(cfg, engine)?, sinks)?
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
