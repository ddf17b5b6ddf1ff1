//! NUTS beyond the closed-form checks of `exact_kernels.rs`: against a long full-data HMC run on
//! a non-Gaussian posterior, and the trajectory's mechanics (the depth limit, divergences,
//! reproducibility).
//!
//! Tolerance of the comparison: |NUTS − HMC| < 4 combined MCSE, √(MCSE²_NUTS + MCSE²_HMC), for
//! every coordinate's mean and sd. Set `TALLMC_SEED_OFFSET` to run at other seeds.

use crate::common::LinearGaussian;
use tallmc_core::Terms;
use tallmc_diagnostics::{Draws, Summary, summarize};
use tallmc_integrators::{Metric, MetricKind};
use tallmc_models::{DesignOptions, LogisticRegression, synthetic};
use tallmc_samplers::{
    HamiltonianWarmup, Hmc, HmcConfig, MetricSetting, Nuts, NutsConfig, NutsStats, RunConfig,
    sample_in_memory,
};
use tallmc_testkit::seed;

const Z_MAX: f64 = 4.0;

fn summaries(draws: &[&[f64]], d: usize) -> Vec<Summary> {
    let names: Vec<String> = (0..d).map(|j| format!("theta.{j}")).collect();
    summarize(&names, &Draws::new(draws, d).unwrap()).unwrap()
}

/// Logistic regression with few rows (n = 150, d = 3 and a wide prior): a skewed posterior.
fn small_logistic() -> LogisticRegression {
    let s = synthetic::sbps_logistic(150, 3, 4).unwrap();
    LogisticRegression::new(s.data, DesignOptions::default(), 10.0).unwrap()
}

#[test]
fn nuts_matches_long_full_data_hmc_on_a_skewed_logistic_posterior() {
    let model = small_logistic();
    let d = model.dim();
    let inits: Vec<Vec<f64>> = (0..4).map(|c| vec![0.2 * c as f64 - 0.3; d]).collect();
    let run = |k: u64| RunConfig::new(1000, 4000, 4, seed(70 + k));
    let nuts = sample_in_memory(&model, run(0), &inits, &Nuts::new(NutsConfig::default()).unwrap())
        .unwrap();
    let hmc =
        sample_in_memory(&model, run(1), &inits, &Hmc::new(HmcConfig::default()).unwrap()).unwrap();
    let nuts_draws: Vec<&[f64]> = nuts.iter().map(|c| c.sink.draws.as_slice()).collect();
    let hmc_draws: Vec<&[f64]> = hmc.iter().map(|c| c.sink.draws.as_slice()).collect();
    let a = summaries(&nuts_draws, d);
    let b = summaries(&hmc_draws, d);
    for (j, (a, b)) in a.iter().zip(&b).enumerate() {
        let z_mean = (a.mean - b.mean) / a.mcse_mean.hypot(b.mcse_mean);
        let z_sd = (a.sd - b.sd) / a.mcse_sd.hypot(b.mcse_sd);
        assert!(
            z_mean.abs() < Z_MAX && z_sd.abs() < Z_MAX,
            "coordinate {j}: NUTS mean {} sd {} vs HMC mean {} sd {} (z = {z_mean:.2}, {z_sd:.2})",
            a.mean,
            a.sd,
            b.mean,
            b.sd
        );
        assert!(a.rhat < 1.01, "coordinate {j}: NUTS R-hat {}", a.rhat);
    }
    let divergences: usize =
        nuts.iter().map(|c| c.sink.stats.iter().filter(|s| s.divergent).count()).sum();
    assert_eq!(divergences, 0, "NUTS diverged on a smooth posterior");
}

/// Step size `eps` and the unit diagonal metric of dimension `d`, neither adapted.
fn fixed_step(eps: f64, d: usize) -> HamiltonianWarmup {
    HamiltonianWarmup {
        initial_step_size: Some(eps),
        adapt_step_size: false,
        metric: MetricSetting::Fixed(Metric::unit(MetricKind::Diagonal, d)),
        ..Default::default()
    }
}

fn stats_of(config: NutsConfig, draws: usize) -> (Vec<NutsStats>, Vec<f64>) {
    let model = LinearGaussian::new(2_000, 3, 11);
    let (mean, _) = model.posterior();
    let run = RunConfig::new(0, draws, 1, seed(80));
    let out = sample_in_memory(&model, run, &[mean], &Nuts::new(config).unwrap()).unwrap();
    let chain = out.into_iter().next().unwrap();
    (chain.sink.stats, chain.sink.draws)
}

#[test]
fn a_tiny_step_size_runs_every_transition_to_the_depth_limit() {
    // Posterior sds ≈ 0.02: 15 steps of 10⁻⁶ cannot turn around, so every tree is full.
    let config = NutsConfig { warmup: fixed_step(1e-6, 3), max_depth: 4, ..NutsConfig::default() };
    let (stats, _) = stats_of(config, 50);
    for (k, s) in stats.iter().enumerate() {
        assert_eq!((s.tree_depth, s.n_leapfrog, s.divergent), (4, 15, false), "{s:?}");
        // The first step also reports the set-up's gradient at the start.
        assert_eq!(s.evals.gradients, (15 + u64::from(k == 0)) * 2_000);
        assert!((0.99..=1.0).contains(&s.accept_stat), "{s:?}");
    }
}

#[test]
fn a_step_size_far_too_large_is_reported_as_divergent_and_the_chain_stays_put() {
    let config = NutsConfig { warmup: fixed_step(50.0, 3), ..NutsConfig::default() };
    let (stats, draws) = stats_of(config, 20);
    assert!(stats.iter().all(|s| s.divergent && s.tree_depth == 0 && s.n_leapfrog == 1));
    assert!(stats.iter().all(|s| s.accept_stat < 1e-6), "{stats:?}");
    let first = &draws[..3];
    assert!(draws.chunks(3).all(|x| x == first), "a divergent transition moved the chain");
    assert!(draws.iter().all(|x| x.is_finite()));
}

#[test]
fn the_same_seed_gives_the_same_draws() {
    let (a, da) = stats_of(NutsConfig::default(), 30);
    let (b, db) = stats_of(NutsConfig::default(), 30);
    assert_eq!(da, db);
    assert_eq!(a, b);
}

#[test]
fn many_short_trees_leave_a_small_correlated_gaussian_invariant() {
    // Large samples (4 × 50,000 draws) of short trees (at most 3 steps) make the MCSEs small
    // enough to see a mis-weighted multinomial choice within trees, which the
    // closed-form checks at 4 × 1,000 draws cannot.
    let model = LinearGaussian::new(20, 2, 5);
    let (mean, cov) = model.posterior();
    let sd_min = cov[0].min(cov[3]).sqrt();
    let config =
        NutsConfig { warmup: fixed_step(0.5 * sd_min, 2), max_depth: 2, ..NutsConfig::default() };
    let run = RunConfig::new(0, 50_000, 4, seed(90));
    let out =
        sample_in_memory(&model, run, std::slice::from_ref(&mean), &Nuts::new(config).unwrap())
            .unwrap();
    let draws: Vec<&[f64]> = out.iter().map(|c| c.sink.draws.as_slice()).collect();
    for (j, s) in summaries(&draws, 2).iter().enumerate() {
        let sd = cov[j * 2 + j].sqrt();
        let z_mean = (s.mean - mean[j]) / s.mcse_mean;
        let z_sd = (s.sd - sd) / s.mcse_sd;
        assert!(
            z_mean.abs() < Z_MAX && z_sd.abs() < Z_MAX,
            "coordinate {j}: mean {} vs {} (z = {z_mean:.2}), sd {} vs {sd} (z = {z_sd:.2})",
            s.mean,
            mean[j],
            s.sd
        );
    }
}
