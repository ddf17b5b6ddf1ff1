//! The `user_estimator` example, run as a test: a stratified difference estimator defined
//! outside the library through the public `EcsEstimator` trait runs perturbed HMC-ECS
//! (`HmcEcsWithEstimator`) and agrees with full-data HMC:
//!
//! * posterior means and sds within [`Z_MAX`] = 4 combined MCSE for every coordinate, R-hat
//!   < 1.01 for both (seed-independent: `TALLMC_SEED_OFFSET=100` and `200` pass too);
//! * its σ̂² is finite and positive at θ* + 1 posterior sd per coordinate (at θ* itself every
//!   difference d_i = ℓ_i − q_i is 0, so σ̂² is 0 there up to rounding: checked finite, ≥ 0 and
//!   tiny);
//! * it looks at a small share of the data per iteration and reports its evaluations.

#![allow(clippy::print_stderr)]

#[path = "../examples/user_estimator.rs"]
#[allow(dead_code)]
mod example;

use tallmc_testkit::{Z_MAX, seed};

/// R-hat bound of the posterior runs.
const RHAT_MAX: f64 = 1.01;

#[test]
fn hmc_ecs_with_the_user_estimator_matches_full_data_hmc() {
    let report = example::run(seed(1)).expect("the example runs");
    let (at, off) = (report.variance_at_mode, report.variance_off_mode);
    eprintln!("σ̂² at θ*: {at:e}, at θ* + 1 sd: {off}");
    assert!(at.is_finite() && (0.0..1e-12).contains(&at), "σ̂² at θ* = {at}");
    assert!(off.is_finite() && off > 0.0, "σ̂² at θ* + 1 sd = {off}");
    let (mut max_mean_z, mut max_sd_z) = (0.0_f64, 0.0_f64);
    for (j, name) in report.names.iter().enumerate() {
        let (h, e) = (&report.hmc.summaries[j], &report.stratified.summaries[j]);
        let z_mean = (e.mean - h.mean) / e.mcse_mean.hypot(h.mcse_mean);
        let z_sd = (e.sd - h.sd) / e.mcse_sd.hypot(h.mcse_sd);
        eprintln!("{name}: mean z = {z_mean:.2}, sd z = {z_sd:.2}");
        assert!(z_mean.abs() < Z_MAX, "{name}: mean z = {z_mean:.2}");
        assert!(z_sd.abs() < Z_MAX, "{name}: sd z = {z_sd:.2}");
        assert!(h.rhat < RHAT_MAX, "{name}: HMC R-hat {}", h.rhat);
        assert!(e.rhat < RHAT_MAX, "{name}: stratified HMC-ECS R-hat {}", e.rhat);
        max_mean_z = max_mean_z.max(z_mean.abs());
        max_sd_z = max_sd_z.max(z_sd.abs());
    }
    eprintln!("max |z|: means {max_mean_z:.2}, sds {max_sd_z:.2}");
    assert_eq!(report.hmc.divergences, 0);
    assert_eq!(report.stratified.divergences, 0);
    // m = H·m_h data points per iteration, and far fewer gradients than full-data HMC.
    let m = (example::STRATA * example::PER_STRATUM) as f64;
    assert_eq!(report.stratified.batch, m);
    assert!(report.stratified.evals.gradients * 10 < report.hmc.evals.gradients);
}
