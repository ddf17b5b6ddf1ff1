//! The quick `sbps` suite (Pakman, Gilboa, Carlson & Paninski 2017): its summary is an insta
//! snapshot (determinism), and every part's claims — computed once by the suite, the same values
//! `report.md`'s verdict column shows — are asserted (correctness, seed-independent:
//! `TALLMC_SEED_OFFSET` = 100, 200, 300 pass too).
//!
//! A claim that the suite measures as **not** reproduced, or that a quick run decides at its
//! noise floor, is listed in [`NOT_ASSERTED`] with the reason and printed, not asserted.
//! Everything else must hold. Beyond the claims:
//!
//! * Fig. 1: exact BPS's and noisy BPS's time averages of x₁, x₂, x₁², x₂² within 4 MCSE of the
//!   truth (0, 0, 1, 1) — the claims, restated with the numbers so that a failure shows them;
//! * the trade-off: the HMC reference is resolved (MCSE < 2 % of the sd for every coordinate)
//!   and its R̂ < 1.01;
//! * Fig. 5: every continuous estimate's and discrete estimate's standard error is finite and
//!   positive, and the continuous time averages agree with the truth within 4 of their own MCSE
//!   pooled over runs where the truth is the Gaussian value.
//!
//! The suite runs once per test binary (shared by the tests below).

use std::sync::OnceLock;

use tallmc_reproduce::suites::sbps::{Part, SbpsSuite, Suite, compute};
use tallmc_reproduce::{Context, Mode};
use tallmc_tests::{NotAsserted, Z_MAX, assert_not_asserted_exist, quick_snapshot, seed};

/// Claims that are reported but not asserted, with why (see `docs/reproduction.md`): the ones
/// the suite measures as not reproduced, and comparisons that a quick run decides at its Monte
/// Carlo noise floor (their verdict changes with the seed, so asserting either way would make a
/// flaky test; the report shows the numbers of every run).
const NOT_ASSERTED: &[NotAsserted] = &[
    (
        "psbps_mixes_faster_along_top_direction",
        "not reproduced: the §7.1 posterior is only mildly anisotropic (marginal sds within a \
         factor 3) and its leading direction is not axis-aligned, so a diagonal preconditioner \
         does not speed it up (ESS ratios 0.8–1.1 over seeds)",
    ),
    (
        "results_insensitive_to_n",
        "not reproduced: n = 30 gives mean errors of about 1 posterior sd (violation rate 5 %): \
         the band's Gaussian noise model needs n ≳ 100 here",
    ),
    (
        "sbps_fewer_passes_than_lipsbps",
        "decided at the noise floor: lipSBPS's bound N·L ≈ 4·10⁴ one-datum gradients per unit \
         time is ≈ 8× SBPS's cost per unit time (≈ 5·10³), but its exact dynamics mix faster per \
         unit time; both reach 0.1–0.4 sd in 4000 epochs, and the ratio is 1.1 at seed 1 and \
         ≥ 10 at seeds 101, 201, 301",
    ),
    (
        "sbps_vs_lipsbps_library_bound",
        "informative: with the library's tighter bound lipSBPS is closer still (ratios 1.4–9)",
    ),
    (
        "sbps_beats_tuned_sgld_and_msgnht",
        "decided at the noise floor: SBPS's and the scanned SGLD's final errors are both \
         0.07–0.1 sd in a one-chain quick run, and the order changes with the seed",
    ),
    (
        "continuous_beats_discrete_at_r_over_b_0.1",
        "not reproduced: at r/b = 0.1 the standard errors are equal (ratio 0.85–1.0 over seeds); \
         the advantage is measured at r/b ≤ 0.03",
    ),
];

fn suite() -> &'static SbpsSuite {
    static RESULT: OnceLock<SbpsSuite> = OnceLock::new();
    RESULT.get_or_init(|| compute(&Context::for_tests(Mode::Quick, seed(1))).expect("sbps suite"))
}

/// Asserts every claim of `part` that is not in [`NOT_ASSERTED`]; prints the others.
fn assert_claims(part: &dyn Part) {
    tallmc_tests::assert_claims(part, NOT_ASSERTED);
}

/// Every id in [`NOT_ASSERTED`] names a claim the suite makes.
#[test]
fn not_asserted_claims_exist() {
    assert_not_asserted_exist(suite(), NOT_ASSERTED);
}

#[test]
fn quick_summary_snapshot() {
    if let Some(summary) = quick_snapshot(&suite().summary()) {
        insta::assert_json_snapshot!("sbps_quick", summary);
    }
}

#[test]
fn fig1_noise_leaves_the_marginal_unchanged_and_slows_mixing() {
    let f = &suite().fig1;
    for p in [&f.exact, &f.noisy] {
        for (name, z) in ["E x1", "E x2", "E x1^2", "E x2^2"].iter().zip(p.z_scores()) {
            assert!(z.abs() < Z_MAX, "{} BPS: {name} z = {z:.2}", p.name);
        }
    }
    assert_claims(f);
}

#[test]
fn fig2_band_claims() {
    let f = &suite().fig2;
    assert!(f.rejected.len() >= 3 && !f.band.is_empty(), "{:?}", f.run);
    assert!(f.accepted.1.is_finite() && f.accepted.0 > 0.0);
    assert_claims(f);
}

#[test]
fn fig3_psbps_claims() {
    assert_claims(&suite().fig3);
}

#[test]
fn tradeoff_k3_n100_is_accurate_and_error_grows_as_k_falls() {
    let s = suite();
    let r = &s.reference;
    let rel = r["hmc"]["max_mcse_over_sd"].as_f64().expect("reference MCSE");
    assert!(rel < 0.02, "HMC reference MCSE / sd = {rel}");
    let rhat = r["hmc"]["max_rhat"].as_f64().expect("reference R-hat");
    assert!(rhat < 1.01, "HMC reference R-hat = {rhat}");
    assert_claims(&s.tradeoff);
}

#[test]
fn fig5_continuous_beats_discrete_for_small_r() {
    let f = &suite().fig5;
    for q in &f.ratios {
        assert!(
            q.continuous_se.iter().chain(&q.discrete_se).all(|v| v.is_finite() && *v > 0.0),
            "r/b = {}",
            q.ratio
        );
        if q.gaussian_truth {
            let n = q.continuous.len() as f64;
            let mean = q.continuous.iter().sum::<f64>() / n;
            let se = q.continuous_pooled_se() / n.sqrt();
            let z = (mean - q.truth) / se;
            assert!(
                z.abs() < Z_MAX,
                "r/b = {}: pooled continuous estimate {mean} vs truth {} (z = {z:.2})",
                q.ratio,
                q.truth
            );
        }
    }
    assert_claims(f);
}

#[test]
fn fig6_network_claims() {
    assert_claims(&suite().fig6);
}

#[test]
fn fig4_sbps_against_exact_and_stochastic_gradient_samplers() {
    let f = &suite().fig4;
    for r in &f.runs {
        assert!(r.final_error().is_finite(), "{}: final error {}", r.label, r.final_error());
    }
    assert_claims(f);
}

#[test]
fn zzcv_cost_per_effective_sample_is_flat_in_n() {
    assert_claims(&suite().zzcv_scaling);
}
