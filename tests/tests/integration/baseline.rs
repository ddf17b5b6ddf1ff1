//! The quick `baseline` suite: its summary is an insta snapshot (determinism), and its claims —
//! computed once by the suite, the same values as the report's verdicts — are asserted
//! (correctness, seed-independent), except the ones in [`NOT_ASSERTED`]:
//!
//! * every exact kernel's posterior mean and sd on the conjugate Gaussian (n = 10⁶) within
//!   4 MCSE of the closed form, R-hat < 1.05;
//! * HMC on the higgs-like logistic regression (n = 10⁵, d = 29): every coordinate's mean and
//!   sd within 4 combined MCSE of the long adaptive-Metropolis reference, rank R-hat < 1.01,
//!   bulk ESS per draw ≥ 0.5, no divergent transition;
//! * full-data kernels make full-data passes only (evaluation counts multiples of N).
//!
//! The suite runs once per test binary (shared by the tests below).

use tallmc_reproduce::suites::baseline::Baseline;
use tallmc_tests::NotAsserted;

/// Claims that are reported but not asserted, with why.
const NOT_ASSERTED: &[NotAsserted] = &[(
    "gradients_pay_in_29_dimensions",
    "informative: a ratio of two ESS estimates without a standard error",
)];

tallmc_tests::quick_suite_tests!(Baseline, "baseline_quick");

/// Every exact kernel ran on both problems (the claims read what is there; this checks that
/// it all is).
#[test]
fn every_exact_kernel_ran() {
    let b = suite();
    assert_eq!(b.gaussian.len(), 3, "every exact kernel ran on the conjugate Gaussian");
    assert_eq!(b.logistic.len(), 3, "every exact kernel ran on the logistic regression");
}
