//! The quick `baseline` suite: its summary is an insta snapshot (determinism), and its runs are
//! checked statistically (correctness, seed-independent):
//!
//! * every exact kernel's posterior mean and sd on the conjugate Gaussian (n = 10⁶) within
//!   4 MCSE of the closed form;
//! * HMC on the higgs-like logistic regression (n = 10⁵, d = 29): every coordinate's mean (and
//!   sd) within 4 combined MCSE of the long adaptive-Metropolis reference, rank R-hat < 1.01,
//!   bulk ESS per draw ≥ 0.5.
//!
//! The suite runs once per test binary (shared by the tests below).

use std::sync::OnceLock;

use tallmc_reproduce::exact::ExactKernel;
use tallmc_reproduce::suites::baseline::{Baseline, compute};
use tallmc_reproduce::{Context, Mode, snapshot};
use tallmc_tests::{Z_MAX, seed, seed_offset};

fn baseline() -> &'static Baseline {
    static RESULT: OnceLock<Baseline> = OnceLock::new();
    RESULT
        .get_or_init(|| compute(&Context::for_tests(Mode::Quick, seed(1))).expect("baseline suite"))
}

#[test]
fn quick_summary_snapshot() {
    if seed_offset() != 0 {
        return; // the snapshot pins the numbers of seed 1
    }
    let summary = snapshot::for_snapshot(&baseline().summary(), 3);
    insta::assert_json_snapshot!("baseline_quick", summary);
}

#[test]
fn exact_kernels_match_the_conjugate_posterior() {
    let b = baseline();
    let (mean, sd) = b.gaussian_truth;
    for run in &b.gaussian {
        let s = &run.summaries[0];
        let (zm, zs) = ((s.mean - mean) / s.mcse_mean, (s.sd - sd) / s.mcse_sd);
        assert!(
            zm.abs() < Z_MAX && zs.abs() < Z_MAX,
            "{}: mean {} vs {mean} (z = {zm:.2}), sd {} vs {sd} (z = {zs:.2})",
            run.kernel.label(),
            s.mean,
            s.sd
        );
        assert!(s.rhat < 1.05, "{}: R-hat {}", run.kernel.label(), s.rhat);
        let e = run.sampling_evals;
        assert_eq!((e.terms % 1_000_000, e.gradients % 1_000_000), (0, 0), "full-data passes only");
    }
}

#[test]
fn hmc_on_higgs_like_matches_the_long_adaptive_metropolis_run() {
    let b = baseline();
    let hmc = b.logistic.iter().find(|r| r.kernel == ExactKernel::Hmc).expect("HMC ran");
    let r = &b.logistic_reference;
    for (j, s) in hmc.summaries.iter().enumerate() {
        let z_mean = (s.mean - r.mean[j]) / s.mcse_mean.hypot(r.mcse_mean[j]);
        let z_sd = (s.sd - r.sd[j]) / s.mcse_sd.hypot(r.mcse_sd[j]);
        assert!(
            z_mean.abs() < Z_MAX,
            "{}: mean {} vs reference {} (combined MCSE {}, z = {z_mean:.2})",
            s.name,
            s.mean,
            r.mean[j],
            s.mcse_mean.hypot(r.mcse_mean[j])
        );
        assert!(
            z_sd.abs() < Z_MAX,
            "{}: sd {} vs reference {} (z = {z_sd:.2})",
            s.name,
            s.sd,
            r.sd[j]
        );
        assert!(s.rhat < 1.01, "{}: rank R-hat {} ≥ 1.01", s.name, s.rhat);
        let per_draw = s.ess_bulk / hmc.draws as f64;
        assert!(per_draw >= 0.5, "{}: bulk ESS per draw {per_draw:.3} < 0.5", s.name);
    }
    assert_eq!(hmc.divergences(), 0, "divergent transitions on a log-concave posterior");
}
