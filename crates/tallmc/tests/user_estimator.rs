//! The `user_estimator` example, run as a test: a stratified difference estimator defined
//! outside the library through the public `EcsEstimator` trait runs perturbed HMC-ECS
//! (`HmcEcsWithEstimator`) and agrees with full-data HMC:
//!
//! * posterior means and sds within `Z_MAX` = 4 combined MCSE for every coordinate, R-hat
//!   < 1.01 for both (seed-independent: `TALLMC_SEED_OFFSET=100` and `200` pass too);
//! * its σ̂² is finite and positive at θ* + 1 posterior sd per coordinate (at θ* itself every
//!   difference d_i = ℓ_i − q_i is 0, so σ̂² is 0 there up to rounding: checked finite, ≥ 0 and
//!   tiny);
//! * it looks at a small share of the data per iteration and reports its evaluations.

#![allow(clippy::print_stderr)]

#[path = "../examples/user_estimator.rs"]
#[allow(dead_code)]
mod example;
mod support;

use tallmc_testkit::seed;

#[test]
fn hmc_ecs_with_the_user_estimator_matches_full_data_hmc() {
    let report = example::run(seed(1)).expect("the example runs");
    let (at, off) = (report.variance_at_mode, report.variance_off_mode);
    eprintln!("σ̂² at θ*: {at:e}, at θ* + 1 sd: {off}");
    assert!(at.is_finite() && (0.0..1e-12).contains(&at), "σ̂² at θ* = {at}");
    assert!(off.is_finite() && off > 0.0, "σ̂² at θ* + 1 sd = {off}");
    support::assert_agrees_with_hmc(
        &report.names,
        &report.hmc,
        &report.stratified,
        "stratified HMC-ECS",
    );
    assert_eq!(report.hmc.divergences, 0);
    assert_eq!(report.stratified.divergences, 0);
    // m = H·m_h data points per iteration, and far fewer gradients than full-data HMC.
    let m = (example::STRATA * example::PER_STRATUM) as f64;
    assert_eq!(report.stratified.batch, m);
    assert!(report.stratified.evals.gradients * 10 < report.hmc.evals.gradients);
}
