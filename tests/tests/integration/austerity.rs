//! The quick `austerity` suite (Korattikara, Chen & Welling 2014, §6): its summary is an insta
//! snapshot (determinism), and every part's claims — computed once by the suite, the same
//! values as the report's verdicts in `target/reproduce/austerity/report.md` — are asserted,
//! except the ones in [`NOT_ASSERTED`]. The asserted rules take their tolerances from the Monte
//! Carlo error of each measured number (binomial sd of a rate, MCSE from the ESS of a series,
//! jackknife se over chains) and pass at other seeds (`TALLMC_SEED_OFFSET=100`, `200`):
//!
//! * Fig. 2 and the decision audit: ε = 0 is exact MH (all the data, no wrong decision); at
//!   ε = 0.01 the test uses a clearly smaller part of the data (fraction + Z_MAX·MCSE ≤ 0.8;
//!   measured 0.68, 0.66, 0.67 at seeds 1, 101, 201, MCSE 0.007) and errs within a factor 4 of
//!   ε (rejected only beyond a bound by Z_MAX binomial sds at that bound: 0.0070 ≤ rate ≤
//!   0.0575; measured 0.0245, 0.0260, 0.0245, sd 0.0035); from ε = 0.01 on each larger ε uses
//!   less data and errs more, each step by > Z_MAX combined MC errors.
//! * Fig. 3: ε = 0's log–log risk slope over the last decade lies in [−1 − Z_MAX·se, −0.6]
//!   (measured −0.81 ± 0.11, −0.83 ± 0.04, −0.89 ± 0.07); every ε's risk falls by more than 3×
//!   over the last decade (measured 5.6–9.1).
//! * Figs. 5–6: SGLD at the large step is biased (E(θ−μ)²/var − 1 > Z_MAX MCSE; measured 1.13,
//!   1.12, 1.12 ± 0.009) and the exact-MH correction's L1 error is > 2× SGLD's (0.077–0.079 vs
//!   0.010–0.011).
//! * Figs. 7–8: at ε = 0.01 the largest |empirical − exact| conditional is within the paper's
//!   0.01 up to Z_MAX binomial sds (0.02 at 40,000 repetitions; measured 0.0068, 0.0067, 0.0086);
//!   the bias has the paper's direction beyond Z_MAX sds for every ε ≥ 0.05; Fig. 8's floors at
//!   ε ≥ 0.05 exceed twice exact Gibbs' error and rise with ε.
//!
//! The suite runs once per test binary (shared by the tests below).

use tallmc_reproduce::suites::austerity::Austerity;
use tallmc_tests::NotAsserted;

/// Claims that are reported but not asserted, with why.
const NOT_ASSERTED: &[NotAsserted] = &[
    (
        "fig2_wrong_rate_equals_epsilon",
        "not reproduced: 0.0245 at ε = 0.01 (seed 1), 6.5 binomial sds (at ε) above ε — ε bounds each look of the sequential test, not the whole sequence",
    ),
    (
        "fig3_legend_implied_fraction",
        "not reproduced: 0.68 of the data at ε = 0.01 against the paper's implied ≤ 0.57",
    ),
    (
        "fig3_min_risk_at_positive_epsilon",
        "an ordering of risks over 8 chains per ε, not tested for significance",
    ),
    (
        "fig5_sgld_bias_is_huge",
        "not reproduced: E(θ−μ)²/var = 1.13 ± 0.009 at the large step, a modest bias",
    ),
    (
        "fig5_austerity_less_error_than_sgld",
        "not reproduced: SGLD's bias at this step is small next to the corrected chains' variance",
    ),
    (
        "fig5_austerity_less_error_than_mh",
        "an ordering of L1 errors (0.044–0.059 vs 0.078 at seed 1) without a Monte Carlo error",
    ),
    ("fig6_sgld_fastest_at_small_step", "an ordering of L1 errors without a Monte Carlo error"),
    (
        "fig8_small_epsilon_faster_early",
        "not reproduced at D = 30: the test needs most of a variable's factors, so small ε buys few extra sweeps",
    ),
];

tallmc_tests::quick_suite_tests!(Austerity, "austerity_quick");
