//! The §7.1 posterior shared by several parts: logistic regression, d = 20, N = 1000, with its
//! Laplace approximation and a long full-data HMC reference — built once, lazily.

use std::sync::OnceLock;

use serde_json::{Value, json};
use tallmc_models::synthetic::{SBPS_DIM, SBPS_N, sbps_logistic};
use tallmc_models::{DesignOptions, LogisticRegression};
use tallmc_samplers::{Laplace, NewtonOptions, RunConfig, laplace_approximation};

use super::linalg::SymmetricEigen;
use super::{DATA_SEED, chain_seed};
use crate::chains::run_config;
use crate::exact::{ExactKernel, run_exact};
use crate::{Context, Result};

/// Prior sd of every coefficient of the logistic regressions of the suite: N(0, 10² I). The
/// paper states no prior (the authors' code has none); a weak proper prior keeps the posterior
/// proper whatever the data.
pub const PRIOR_SD: f64 = 10.0;

/// Seed tag of the HMC reference chains.
const REFERENCE_TAG: u64 = 1;

/// The full-data HMC reference of the §7.1 posterior: per coordinate mean, sd and MCSE of the
/// mean, and the draws of w₁ (per chain) for checks of test functions.
#[derive(Debug, Clone)]
pub struct Reference {
    /// Posterior means.
    pub mean: Vec<f64>,
    /// Posterior standard deviations.
    pub sd: Vec<f64>,
    /// MCSE of the means.
    pub mcse: Vec<f64>,
    /// Draws of w₁, one vector per chain.
    pub w1: Vec<Vec<f64>>,
    /// Chains × (warmup + draws).
    pub config: RunConfig,
    /// Mean acceptance statistic.
    pub accept: f64,
    /// Largest R̂ over coordinates.
    pub max_rhat: f64,
    /// Per-datum evaluations per draw.
    pub evals_per_draw: f64,
}

/// The logistic regression of §7.1 (Fig. 3–5): `sbps_logistic(1000, 20, DATA_SEED)`, no
/// intercept, prior N(0, 10² I); its mode ŵ and Laplace covariance; the HMC reference; the
/// eigendecomposition of the Laplace covariance.
#[derive(Debug)]
pub struct Logistic {
    /// The model.
    pub model: LogisticRegression,
    /// Mode and Laplace covariance.
    pub laplace: Laplace,
    /// Full-data HMC with the Laplace metric.
    pub reference: Reference,
    /// Eigendecomposition of the Laplace covariance (largest first).
    pub eigen: SymmetricEigen,
}

impl Logistic {
    /// Builds the model, the Laplace approximation and the reference: HMC with the Laplace
    /// covariance as dense metric, 4 chains × (500 + 5,000) draws (quick) or
    /// 4 × (1,000 + 25,000) (full), started at dispersed Laplace draws.
    pub fn build(ctx: &Context<'_>) -> Result<Self> {
        let d = SBPS_DIM;
        let model = logistic_model(SBPS_N, d)?;
        let laplace = laplace_approximation(&model, &vec![0.0; d], NewtonOptions::default())?;
        let config = run_config(
            ctx.mode.pick(500, 1_000),
            ctx.mode.pick(5_000, 25_000),
            4,
            chain_seed(ctx.seed, REFERENCE_TAG),
        );
        let run =
            run_exact(&model, ExactKernel::Hmc, &laplace, config, ctx.reporter, "sbps reference")?;
        let reference = Reference {
            mean: run.summaries.iter().map(|s| s.mean).collect(),
            sd: run.summaries.iter().map(|s| s.sd).collect(),
            mcse: run.summaries.iter().map(|s| s.mcse_mean).collect(),
            w1: run.coordinate(0),
            config,
            accept: run.accept(),
            max_rhat: run.summaries.iter().map(|s| s.rhat).fold(0.0, f64::max),
            evals_per_draw: run.evals_per_draw(),
        };
        let eigen = SymmetricEigen::new(&laplace.covariance, d);
        Ok(Self { model, laplace, reference, eigen })
    }

    /// Dimension d.
    pub fn dim(&self) -> usize {
        self.laplace.mode.len()
    }

    /// The reference's summary (for the suite's JSON).
    pub fn reference_summary(&self) -> Value {
        let r = &self.reference;
        let rel: Vec<f64> = r.mcse.iter().zip(&r.sd).map(|(m, s)| m / s).collect();
        let gap: Vec<f64> =
            (0..self.dim()).map(|j| (r.mean[j] - self.laplace.mode[j]) / r.sd[j]).collect();
        let ratio: Vec<f64> = r.sd.iter().zip(self.laplace.sds()).map(|(s, l)| s / l).collect();
        json!({
            "n": SBPS_N, "d": self.dim(), "prior_sd": PRIOR_SD,
            "data": "sbps_logistic: w ~ U[-5,5]^d, x ~ N(0, diag(6,1,...,1)), y ~ Bern(sigmoid(w'x))",
            "hmc": {"chains": r.config.num_chains, "warmup": r.config.num_warmup,
                    "draws": r.config.num_draws, "accept": r.accept, "max_rhat": r.max_rhat,
                    "evals_per_draw": r.evals_per_draw,
                    "max_mcse_over_sd": rel.iter().copied().fold(0.0, f64::max)},
            "max_abs_mean_minus_mode_in_sds": gap.iter().map(|g| g.abs()).fold(0.0, f64::max),
            "sd_over_laplace_sd": {"min": ratio.iter().copied().fold(f64::INFINITY, f64::min),
                                   "max": ratio.iter().copied().fold(0.0, f64::max)},
        })
    }
}

/// The §7.1 logistic regression with `n` rows and `d` coefficients (data seed [`DATA_SEED`]),
/// no intercept, prior N(0, [`PRIOR_SD`]² I).
pub fn logistic_model(n: usize, d: usize) -> Result<LogisticRegression> {
    let sim = sbps_logistic(n, d, DATA_SEED)?;
    Ok(LogisticRegression::new(sim.data, DesignOptions::default(), PRIOR_SD)?)
}

/// Problems shared by several parts, each built on first use.
pub struct Problems<'a> {
    ctx: &'a Context<'a>,
    logistic: OnceLock<Logistic>,
}

impl std::fmt::Debug for Problems<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Problems").field("logistic", &self.logistic.get().is_some()).finish()
    }
}

impl<'a> Problems<'a> {
    /// Nothing built yet.
    pub fn new(ctx: &'a Context<'a>) -> Self {
        Self { ctx, logistic: OnceLock::new() }
    }

    /// The §7.1 d = 20 posterior with its reference (built on the first call).
    pub fn logistic(&self) -> Result<&Logistic> {
        if let Some(p) = self.logistic.get() {
            return Ok(p);
        }
        let built = Logistic::build(self.ctx)?;
        Ok(self.logistic.get_or_init(|| built))
    }
}
