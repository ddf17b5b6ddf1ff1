//! The quick `confidence` suite (Bardenet, Doucet & Holmes 2014): its summary is an insta
//! snapshot (determinism), and every part's claims — computed once by the suite, the same
//! values as the report's verdicts, with tolerances from Monte Carlo standard errors — are
//! asserted, except the ones in [`NOT_ASSERTED`] (seed-independent — `TALLMC_SEED_OFFSET=100`,
//! `200` pass too):
//!
//! * Fig. 4 toy: the confidence sampler's mean and sd of σ and of μ are within 4 MCSE of the
//!   closed-form posterior and within 4 combined MCSE of exact MH, on both data sets (and exact
//!   MH agrees with the closed form); on the log-normal data Austerity's σ marginal is biased by
//!   several percent (t₀ = 500: also by more than 4 of its own MCSE);
//! * decision audit: the confidence test's wrong decisions are compatible with its guarantee
//!   (≤ δ each), Austerity's on the log-normal data are far above ε;
//! * exactness: minibatch MH with Austerity at ε = 0 and with the confidence test at δ = 1e-300
//!   reproduces the exact test's chain bit for bit;
//! * Fig. 7(b) and Fig. 6: only what holds robustly — the equilibrium fraction is below 1 and
//!   does not grow with n; far from the mode the confidence sampler uses a small fraction of the
//!   data and reaches the posterior with fewer evaluations than exact MH.
//!
//! The suite runs once per test binary (shared by the tests below).

use tallmc_reproduce::part::Suite;
use tallmc_reproduce::suites::confidence::Confidence;
use tallmc_reproduce::suites::confidence::toy::{Method, ToyData};
use tallmc_tests::NotAsserted;

/// Claims that are reported but not asserted, with why: the ones the suite measures as not
/// reproduced at the quick sizes, and comparisons a quick run decides at its Monte Carlo noise
/// floor.
const NOT_ASSERTED: &[NotAsserted] = &[
    (
        "fig4a_austerity_shifts_the_sigma_marginal",
        "not reproduced at n = 10⁵: Austerity t₀ = 2 shifts E[σ] by a significant (≈ 8 MCSE) \
         but small 0.2 %, far from 7 %; its marginal is about twice too wide instead",
    ),
    (
        "fig4b_first_batch_500_is_better",
        "decided at the noise floor: t₀ = 500's shift is clearly smaller, but its sd is smaller \
         than t₀ = 2's by ≈ 2 combined MCSE only",
    ),
    (
        "fig7b_fraction_drops_with_n",
        "decided at the noise floor: the quick sizes (10⁵ to 10⁶) show a drop of ≈ 3 combined \
         MCSE; the paper's drop is over n = 10⁵ to 10¹⁵",
    ),
    (
        "s4_3_fraction_below_half_pays",
        "decided at the noise floor: the fraction is 0.44–0.51 at the quick sizes, within 4 MCSE \
         of one half",
    ),
    (
        "fig6_up_to_five_times_faster",
        "partly reproduced at n = 10⁵ (1.5–3.4× from the four starts; the paper's n is 10⁷)",
    ),
    (
        "fig6_equilibrium_fraction_around_70_percent",
        "not reproduced at n = 10⁵: at equilibrium the test needs (almost) all the data",
    ),
];

tallmc_tests::quick_suite_tests!(Confidence, "confidence_quick");

/// Every part ran in full (the claims read what is there; this checks that it all is).
#[test]
fn every_part_ran_in_full() {
    let s = suite();
    for data in ToyData::ALL {
        let p = s.toy.problem(data).expect("toy problem ran");
        for m in Method::ALL {
            assert!(p.run(m).is_some(), "{}: {} did not run", data.label(), m.label());
        }
    }
    assert_eq!(s.toy.audits.len(), 6);
    assert_eq!(s.toy.exactness.len(), 2);
    assert!(s.scaling.runs.len() >= 2);
    assert_eq!(s.logistic.chains.len(), 8);
    assert_eq!(s.parts().len(), 3);
}
