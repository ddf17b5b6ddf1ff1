//! The exact kernels sample the right distribution: a correlated 3-d Gaussian posterior with a
//! closed form (Bayesian linear regression with known noise). Every coordinate's posterior mean
//! and sd must be within 4 Monte Carlo standard errors of the truth, at several seeds.
//!
//! Tolerance: |estimate − truth| < 4·MCSE, with MCSE from ESS (ArviZ's `mcse_mean`,
//! `mcse_sd`). With 4 seeds × 3 coordinates × 2 quantities per kernel the chance of a false
//! failure is below 24 · 6.3e-5 ≈ 0.2% per kernel if the MCSEs are right. Set
//! `TALLMC_SEED_OFFSET` to run at other seeds.

use crate::common::LinearGaussian;
use tallmc_core::Kernel;
use tallmc_diagnostics::{Draws, summarize};
use tallmc_integrators::{Metric, MetricKind};
use tallmc_samplers::{
    AdaptiveMetropolis, AdaptiveMetropolisConfig, HamiltonianWarmup, Hmc, HmcConfig, MetricSetting,
    Nuts, NutsConfig, RandomWalkConfig, RandomWalkMetropolis, RunConfig, sample_in_memory,
};

const Z_MAX: f64 = 4.0;

/// Seeds 1–4, shifted by `TALLMC_SEED_OFFSET` (to check that the tests pass with other seeds).
fn seeds() -> [u64; 4] {
    [1, 2, 3, 4].map(tallmc_testkit::seed)
}

fn check<K>(name: &str, model: &LinearGaussian, warmup: usize, draws: usize, kernel: &K)
where
    K: Kernel<LinearGaussian>,
{
    let (mean, cov) = model.posterior();
    let d = model.d;
    for seed in seeds() {
        let config = RunConfig {
            num_warmup: warmup,
            num_draws: draws,
            num_chains: 4,
            seed,
            save_warmup: false,
        };
        // Over-dispersed starts: truth ± 3 sd.
        let inits: Vec<Vec<f64>> = (0..4)
            .map(|c| {
                (0..d)
                    .map(|j| {
                        mean[j]
                            + 3.0
                                * cov[j * d + j].sqrt()
                                * if (c + j) % 2 == 0 { 1.0 } else { -1.0 }
                    })
                    .collect()
            })
            .collect();
        let out = sample_in_memory(model, config, &inits, kernel).unwrap();
        let chains: Vec<&[f64]> = out.iter().map(|c| c.sink.draws.as_slice()).collect();
        let names: Vec<String> = (0..d).map(|j| format!("theta.{j}")).collect();
        let summary = summarize(&names, &Draws::new(&chains, d).unwrap()).unwrap();
        for (j, s) in summary.iter().enumerate() {
            let sd_true = cov[j * d + j].sqrt();
            let z_mean = (s.mean - mean[j]) / s.mcse_mean;
            let z_sd = (s.sd - sd_true) / s.mcse_sd;
            assert!(
                z_mean.abs() < Z_MAX && z_sd.abs() < Z_MAX,
                "{name}, seed {seed}, coordinate {j}: mean {} vs {} (z = {z_mean:.2}), sd {} vs {sd_true} (z = {z_sd:.2}), ess {}",
                s.mean,
                mean[j],
                s.sd,
                s.ess_bulk
            );
            assert!(s.rhat < 1.05, "{name}, seed {seed}, coordinate {j}: rhat {}", s.rhat);
        }
    }
}

fn model() -> LinearGaussian {
    LinearGaussian::new(2_000, 3, 11)
}

#[test]
fn hmc_with_diagonal_and_dense_metric_matches_closed_form() {
    let m = model();
    for kind in [MetricKind::Diagonal, MetricKind::Dense] {
        let warmup = HamiltonianWarmup::default().with_metric(MetricSetting::adapt(kind));
        let cfg = HmcConfig { warmup, ..Default::default() };
        check(&format!("HMC ({kind:?})"), &m, 1000, 1000, &Hmc::new(cfg.clone()).unwrap());
    }
}

#[test]
fn hmc_from_a_given_metric_without_adaptation_matches_closed_form() {
    let m = model();
    let (_, cov) = m.posterior();
    let cfg = HmcConfig::with_fixed_metric(Metric::dense(cov, 3).unwrap());
    check("HMC (fixed dense metric)", &m, 300, 1000, &Hmc::new(cfg.clone()).unwrap());
}

#[test]
fn nuts_with_diagonal_and_dense_metric_matches_closed_form() {
    let m = model();
    for kind in [MetricKind::Diagonal, MetricKind::Dense] {
        let warmup = HamiltonianWarmup::default().with_metric(MetricSetting::adapt(kind));
        let cfg = NutsConfig { warmup, ..Default::default() };
        check(&format!("NUTS ({kind:?})"), &m, 1000, 1000, &Nuts::new(cfg).unwrap());
    }
}

#[test]
fn nuts_with_the_unit_metric_and_a_short_tree_matches_closed_form() {
    // No metric adaptation on a correlated target, and at most 2³ − 1 steps: trajectories often
    // stop at the depth limit, which must not bias the draws either.
    let m = model();
    let cfg = NutsConfig {
        max_depth: 3,
        ..NutsConfig::with_fixed_metric(Metric::unit(MetricKind::Identity, 3))
    };
    check("NUTS (identity metric, max_depth 3)", &m, 1000, 2000, &Nuts::new(cfg).unwrap());
}

#[test]
fn random_walk_metropolis_matches_closed_form() {
    let m = model();
    let (_, cov) = m.posterior();
    let cfg = RandomWalkConfig { proposal_covariance: Some(cov), ..Default::default() };
    check("RWM", &m, 1000, 5000, &RandomWalkMetropolis::new(cfg).unwrap());
}

#[test]
fn adaptive_metropolis_matches_closed_form() {
    // Start from a poor guess of the covariance: isotropic, 2x too wide in sd, no correlation
    // (the posterior's correlations are about 0.5); AM must learn the rest. (Pure Haario AM
    // cannot recover from a guess so wide that nothing is ever accepted: the history it learns
    // from then has no spread.)
    let m = model();
    let (_, cov) = m.posterior();
    let v = 4.0 * (0..3).map(|j| cov[j * 3 + j]).fold(0.0, f64::max);
    let guess = vec![v, 0.0, 0.0, 0.0, v, 0.0, 0.0, 0.0, v];
    let cfg = AdaptiveMetropolisConfig { initial_covariance: Some(guess), ..Default::default() };
    check("AM", &m, 3000, 5000, &AdaptiveMetropolis::new(cfg).unwrap());
}

#[test]
fn random_walk_tuning_reaches_its_target_acceptance() {
    let m = model();
    let (_, cov) = m.posterior();
    let cfg = RandomWalkConfig { proposal_covariance: Some(cov), ..Default::default() };
    let config =
        RunConfig { num_warmup: 2000, num_draws: 4000, num_chains: 1, seed: 3, save_warmup: false };
    let out =
        sample_in_memory(&m, config, &[m.posterior().0], &RandomWalkMetropolis::new(cfg).unwrap())
            .unwrap();
    // The acceptance indicator's mean over 4000 correlated draws: allow ±0.05 around 0.234.
    let acc = out[0].report.mean_accept_stat;
    assert!((acc - 0.234).abs() < 0.05, "acceptance {acc}");
}
