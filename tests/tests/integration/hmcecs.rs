//! The quick `hmcecs` suite (Dang, Quiroz, Kohn, Tran & Villani 2019): its summary is an insta
//! snapshot (determinism), and every part's claims — computed once by the suite, the same
//! values as the report's verdicts — are asserted, except the ones in [`NOT_ASSERTED`]
//! (correctness, seed-independent — `TALLMC_SEED_OFFSET=100` passes too):
//!
//! * Fig. 7: the order-2 chains (whose estimator is exact on the Gaussian regression, σ̂² ≈ 0)
//!   have posterior means and sds within 4 MCSE of the closed form for every d; the tuned step
//!   size falls with d but not faster than d^{−1/3} (fitted log-log slope + 2 se > −1/3; measured
//!   −0.24 to −0.28 at offsets 0–300) and like d^{−1/4} (within 2 se, or above −1/3 by more than
//!   2 se); the mean IF is below 3 and the acceptance rate within [0.7, 0.95] (target 0.8) for
//!   every run; order 1 has 0 < V[ℓ̂] < 3, and V[ℓ̂] in [0.5, 1.5] where m is tuned;
//! * Figs. 8–9: orders 1 and 2 agree with full-data HMC (means and sds within 4 combined MCSE);
//!   order 0 is visibly worse (a huge V[ℓ̂] at the same m).
//! * Tables 1–2, Fig. 2 (n = 10⁵): perturbed HMC-ECS means within 4 combined MCSE of full-data
//!   HMC (the perturbation, O(1/(n m²)), is below Monte Carlo error here) and sds within 10 %;
//!   signed HMC-ECS's sign-corrected means within 4 combined MCSE; every SG method's median RCT
//!   above 1 unless it misses the posterior (Table 1's ordering at comparable accuracy);
//!   full-data HMC ≥ 100× the evaluations per effective draw (measured 283× at seed 1); plain
//!   SG-HMC's sds far off (> 50 %: the minibatch noise dominates the friction) — a bias the
//!   table must show, not hide. The n = 10⁶ version is `tests/hmcecs_must_show.rs`
//!   (ignored; run by hand).
//!
//! The suite runs once per test binary (shared by the tests below).

use tallmc_reproduce::suites::hmcecs::{CvOrder, Hmcecs};
use tallmc_tests::NotAsserted;

/// Claims that are reported but not asserted, with why.
const NOT_ASSERTED: &[NotAsserted] = &[
    (
        "fig8_order1_variance_settles_after_training",
        "informative: a ratio of medians of σ̂² without a standard error",
    ),
    (
        "table2_hmc_ecs_mixes_like_full_hmc",
        "informative: a ratio of inefficiency-factor estimates without a standard error",
    ),
];

tallmc_tests::quick_suite_tests!(Hmcecs, "hmcecs_quick");

/// Every part ran in full (the claims read what is there; this checks that it all is).
#[test]
fn every_part_ran_in_full() {
    let s = suite();
    for order in [CvOrder::One, CvOrder::Two] {
        assert!(s.fig7.runs_of(order).len() >= 3, "Fig. 7: order {}", order.number());
    }
    for order in [CvOrder::Zero, CvOrder::One, CvOrder::Two] {
        assert!(s.cv_order.run(order).is_some(), "Figs. 8-9: order {} ran", order.number());
    }
}
