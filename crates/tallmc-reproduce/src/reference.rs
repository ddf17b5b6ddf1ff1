//! Long exact reference runs, committed as fixtures.
//!
//! The higgs-like logistic regression has no closed-form posterior. Its reference is a long
//! adaptive-Metropolis run (an exact MH kernel independent of HMC's code paths), made once by
//! `cargo xtask reference` and committed as `fixtures/higgs_am_reference_n100000.json` with the
//! Monte Carlo standard error of every number. Tests and the quick baseline suite compare against
//! it with tolerances built from the *combined* MCSE √(MCSE_run² + MCSE_ref²).
//!
//! The fixture records a fingerprint of the data set it describes (FNV-1a over the bits of X and
//! y), so a change of the data generator is detected instead of silently comparing against the
//! wrong posterior.

use serde::{Deserialize, Serialize};
use tallmc_diagnostics::{Draws, summarize};
use tallmc_models::{DesignOptions, LogisticRegression, synthetic};
use tallmc_samplers::{
    AdaptiveMetropolis, AdaptiveMetropolisConfig, Driver, NewtonOptions, laplace_approximation,
    sink::MemorySink,
};

use crate::chains::run_config;
use crate::context::Reporter;
use crate::{Error, Result};

/// Rows of the quick higgs-like problem.
pub const HIGGS_QUICK_N: usize = 100_000;
/// Seed of the higgs-like data sets used by the suites and tests (fixed: the data set is part of
/// the problem, like HIGGS itself; `--seed` changes the chains only).
pub const HIGGS_DATA_SEED: u64 = 1;
/// Prior sd of the higgs-like model.
pub const HIGGS_PRIOR_SD: f64 = 10.0;

const HIGGS_FIXTURE: &str = include_str!("../fixtures/higgs_am_reference_n100000.json");

/// A reference posterior summary from a long exact run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// What this is.
    pub description: String,
    /// Rows of the data set.
    pub n: usize,
    /// Seed of the data set.
    pub data_seed: u64,
    /// FNV-1a 64 of the bits of X (row-major) then y.
    pub data_fingerprint: String,
    /// Kernel used.
    pub sampler: String,
    /// Chains.
    pub chains: usize,
    /// Warmup iterations per chain.
    pub warmup: usize,
    /// Draws per chain.
    pub draws: usize,
    /// Seed of the chains.
    pub seed: u64,
    /// Posterior means.
    pub mean: Vec<f64>,
    /// Posterior sds.
    pub sd: Vec<f64>,
    /// MCSE of the means.
    pub mcse_mean: Vec<f64>,
    /// MCSE of the sds.
    pub mcse_sd: Vec<f64>,
    /// Bulk ESS.
    pub ess_bulk: Vec<f64>,
    /// Rank-normalized R-hat.
    pub rhat: Vec<f64>,
}

/// FNV-1a (64 bit) over the bits of `x` then `y`.
pub fn fingerprint(x: &[f64], y: &[f64]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in x.iter().chain(y) {
        for b in v.to_bits().to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// The higgs-like model of the quick suites: n = 10⁵ rows, data seed 1, prior N(0, 10² I).
pub fn higgs_model(n: usize) -> Result<(LogisticRegression, String)> {
    let sim = synthetic::higgs_like(n, HIGGS_DATA_SEED)?;
    let fp = fingerprint(sim.data.x(), sim.data.y());
    Ok((LogisticRegression::new(sim.data, DesignOptions::default(), HIGGS_PRIOR_SD)?, fp))
}

/// The committed reference for the quick higgs-like problem, checked against `fingerprint`.
pub fn higgs_reference(fingerprint: &str) -> Result<Reference> {
    let r: Reference = serde_json::from_str(HIGGS_FIXTURE).map_err(|e| Error::Fixture {
        name: "higgs_am_reference_n100000".into(),
        message: format!("cannot parse: {e}; regenerate it with `cargo xtask reference`"),
    })?;
    if r.data_fingerprint != fingerprint {
        return Err(Error::Fixture {
            name: "higgs_am_reference_n100000".into(),
            message: format!(
                "made for data fingerprint {} but the generator now gives {fingerprint}; \
                 the higgs-like generator changed — regenerate with `cargo xtask reference`",
                r.data_fingerprint
            ),
        });
    }
    Ok(r)
}

/// Runs the long adaptive-Metropolis reference on the quick higgs-like problem.
pub fn run_higgs_reference(
    chains: usize, warmup: usize, draws: usize, seed: u64, reporter: &dyn Reporter,
) -> Result<Reference> {
    let (model, fp) = higgs_model(HIGGS_QUICK_N)?;
    let d = 29;
    let laplace = laplace_approximation(&model, &vec![0.0; d], NewtonOptions::default())?;
    let inits = laplace.dispersed_positions(chains, 2.0, seed)?;
    let cfg = AdaptiveMetropolisConfig {
        initial_covariance: Some(laplace.covariance.clone()),
        ..Default::default()
    };
    let config = run_config(warmup, draws, chains, seed);
    let task = reporter.task("adaptive Metropolis reference", ((warmup + draws) * chains) as u64);
    let sinks = (0..chains).map(|_| MemorySink::new()).collect();
    let out = Driver::new(config).progress(&*task).run(
        &model,
        &inits,
        &AdaptiveMetropolis::new(cfg)?,
        sinks,
    )?;
    drop(task);
    let chains_draws: Vec<&[f64]> = out.iter().map(|c| c.sink.draws.as_slice()).collect();
    let names: Vec<String> = (1..=d).map(|j| format!("theta.{j}")).collect();
    let s = summarize(&names, &Draws::new(&chains_draws, d)?)?;
    Ok(Reference {
        description: "Posterior of the higgs-like logistic regression (n = 100000, data seed 1, \
                      prior N(0, 10^2 I)) from a long adaptive-Metropolis run started at \
                      dispersed draws around the mode with the Laplace covariance; adaptation \
                      during warmup only, so the draws come from a fixed exact MH kernel."
            .into(),
        n: HIGGS_QUICK_N,
        data_seed: HIGGS_DATA_SEED,
        data_fingerprint: fp,
        sampler: "adaptive Metropolis (Haario et al. 2001)".into(),
        chains,
        warmup,
        draws,
        seed,
        mean: s.iter().map(|x| x.mean).collect(),
        sd: s.iter().map(|x| x.sd).collect(),
        mcse_mean: s.iter().map(|x| x.mcse_mean).collect(),
        mcse_sd: s.iter().map(|x| x.mcse_sd).collect(),
        ess_bulk: s.iter().map(|x| x.ess_bulk).collect(),
        rhat: s.iter().map(|x| x.rhat).collect(),
    })
}
