//! The quick `confidence` suite (Bardenet, Doucet & Holmes 2014): its summary is an insta
//! snapshot (determinism), and its runs are checked statistically (correctness,
//! seed-independent — `TALLMC_SEED_OFFSET=100`, `200` pass too):
//!
//! * Fig. 4 toy: the confidence sampler's mean and sd of σ and of μ are within 4 MCSE of the
//!   closed-form posterior and within 4 combined MCSE of exact MH, on both data sets; on the
//!   log-normal data Austerity's σ marginal is biased by several percent (t₀ = 500: also by more
//!   than 4 of its own MCSE);
//! * decision audit: the confidence test's wrong decisions are compatible with its guarantee
//!   (≤ δ each), Austerity's on the log-normal data are far above ε;
//! * exactness: minibatch MH with Austerity at ε = 0 and with the confidence test at δ = 1e-300
//!   reproduces the exact test's chain bit for bit;
//! * Fig. 7(b) and Fig. 6: only what holds robustly — the equilibrium fraction is below 1 and
//!   does not grow with n; far from the mode the confidence sampler uses a small fraction of the
//!   data and reaches the posterior with fewer evaluations than exact MH.
//!
//! The suite runs once per test binary (shared by the tests below).

use std::sync::OnceLock;

use tallmc_reproduce::suites::confidence::logistic::{DISTANCE_EDGES, Sampler};
use tallmc_reproduce::suites::confidence::toy::{Method, MethodRun, ToyData, z};
use tallmc_reproduce::suites::confidence::{Confidence, compute};
use tallmc_reproduce::{Context, Mode, snapshot};
use tallmc_tests::{Z_MAX, seed, seed_offset};

/// Austerity's relative bias of E[σ] on the log-normal data must exceed this (BDH Fig. 4(c):
/// "fails dramatically"; measured −5.8 to −6.4 % with t₀ = 500 and −28 to −37 % with t₀ = 2 at
/// seeds 1, 101, …, 601, while the posterior's relative sd is 0.22 %). The test can fail if the
/// bias vanished.
const MIN_LOGNORMAL_BIAS: f64 = 0.02;

fn suite() -> &'static Confidence {
    static RESULT: OnceLock<Confidence> = OnceLock::new();
    RESULT.get_or_init(|| {
        compute(&Context::for_tests(Mode::Quick, seed(1))).expect("confidence suite")
    })
}

#[test]
fn quick_summary_snapshot() {
    if seed_offset() != 0 {
        return; // the snapshot pins the numbers of seed 1
    }
    let summary = snapshot::for_snapshot(&suite().summary(), 3);
    insta::assert_json_snapshot!("confidence_quick", summary);
}

fn run(data: ToyData, method: Method) -> &'static MethodRun {
    let p = suite().toy.problem(data).expect("toy problem ran");
    p.run(method).expect("method ran")
}

#[test]
fn confidence_sampler_matches_the_closed_form_and_exact_mh_on_both_toys() {
    for data in ToyData::ALL {
        let t = &suite().toy.problem(data).expect("toy problem ran").truth;
        let c = run(data, Method::Confidence);
        let e = run(data, Method::ExactMh);
        let checks = [
            (
                "σ mean",
                c.sigma.mean,
                c.sigma.mcse_mean,
                t.sigma_mean,
                e.sigma.mean,
                e.sigma.mcse_mean,
            ),
            ("σ sd", c.sigma.sd, c.sigma.mcse_sd, t.sigma_sd, e.sigma.sd, e.sigma.mcse_sd),
            ("μ mean", c.mu.mean, c.mu.mcse_mean, t.mu_mean, e.mu.mean, e.mu.mcse_mean),
            ("μ sd", c.mu.sd, c.mu.mcse_sd, t.mu_sd, e.mu.sd, e.mu.mcse_sd),
        ];
        for (what, est, mcse, truth, exact, exact_mcse) in checks {
            let z_truth = (est - truth) / mcse;
            let z_exact = z(est, mcse, exact, exact_mcse);
            assert!(
                z_truth.abs() < Z_MAX,
                "{}: confidence {what} {est} vs closed form {truth} (MCSE {mcse}, z = {z_truth:.2})",
                data.label()
            );
            assert!(
                z_exact.abs() < Z_MAX,
                "{}: confidence {what} {est} vs exact MH {exact} (combined MCSE {}, z = {z_exact:.2})",
                data.label(),
                mcse.hypot(exact_mcse)
            );
        }
        // Exact MH itself against the closed form (validates the truth and the MCSEs).
        let z_exact_truth = (e.sigma.mean - t.sigma_mean) / e.sigma.mcse_mean;
        assert!(
            z_exact_truth.abs() < Z_MAX,
            "{}: exact MH σ mean z = {z_exact_truth:.2}",
            data.label()
        );
        assert!(c.sigma.rhat < 1.05, "{}: confidence R-hat {}", data.label(), c.sigma.rhat);
    }
}

#[test]
fn austerity_is_biased_by_several_percent_on_the_lognormal_toy() {
    let t = &suite().toy.problem(ToyData::Lognormal).expect("toy problem ran").truth;
    // t₀ = 500 is the configuration of BDH Fig. 4(c) ("t = 500 works better for this example,
    // but fails dramatically if X are samples from a lognormal"): its chains mix well enough
    // (σ ESS ≈ 25–260 from 4 × 6,000 draws at seeds 1–601) for the MCSE to mean something, and
    // the bias is asserted in units of it.
    let a = run(ToyData::Lognormal, Method::AusterityT500);
    let bias = a.sigma_relative_bias(t);
    let z_bias = (a.sigma.mean - t.sigma_mean) / a.sigma.mcse_mean;
    assert!(
        bias.abs() > MIN_LOGNORMAL_BIAS,
        "t₀ = 500: E[σ] {} vs closed form {}: bias {:.2} % is not several percent",
        a.sigma.mean,
        t.sigma_mean,
        100.0 * bias
    );
    assert!(
        z_bias.abs() > Z_MAX,
        "t₀ = 500: bias {:.2} % is within {Z_MAX} of its own MCSE {} (z = {z_bias:.2})",
        100.0 * bias,
        a.sigma.mcse_mean
    );
    // t₀ = 2 is far worse (−28 to −37 %) but its chains are nearly stuck (σ ESS ≈ 6–46, R-hat
    // up to 1.5), so their MCSE is not a reliable unit: only the size of the bias is asserted.
    let a = run(ToyData::Lognormal, Method::AusterityT2);
    let bias = a.sigma_relative_bias(t);
    assert!(
        bias.abs() > MIN_LOGNORMAL_BIAS,
        "t₀ = 2: E[σ] {} vs closed form {}: bias {:.2} % is not several percent",
        a.sigma.mean,
        t.sigma_mean,
        100.0 * bias
    );
}

/// The largest count of wrong decisions compatible, at level 1e-6, with each of `n` decisions
/// being wrong with probability at most `p` given the past: such a count is dominated by
/// Binomial(n, p), and Bernstein's inequality P(X ≥ np + x) ≤ exp(−x²/(2(np(1 − p) + x/3)))
/// gives x.
fn bernstein_max_count(n: u64, p: f64) -> f64 {
    let (mean, var, l) = (n as f64 * p, n as f64 * p * (1.0 - p), -(1e-6f64).ln());
    // x² = 2l(var + x/3)  ⇒  x = (2l/3 + √((2l/3)² + 8 l var)) / 2.
    let b = 2.0 * l / 3.0;
    mean + (b + (b * b + 8.0 * l * var).sqrt()) / 2.0
}

#[test]
fn audited_decisions_confidence_within_delta_austerity_far_above_epsilon() {
    use tallmc_reproduce::suites::confidence::toy::{AUSTERITY_EPSILON, CONFIDENCE_DELTA};
    let audits = &suite().toy.audits;
    assert_eq!(audits.len(), 6);
    for a in audits {
        let wrong = a.wrong_fraction * a.decisions as f64;
        match a.method {
            // The guarantee: each decision wrong with probability ≤ δ whatever the past.
            Method::Confidence => {
                let max = bernstein_max_count(a.decisions, CONFIDENCE_DELTA);
                assert!(
                    wrong <= max,
                    "{}: confidence test wrong {wrong} times in {} decisions (allowed {max:.1})",
                    a.data.label(),
                    a.decisions
                );
            }
            // BDH §4.1: the t-test's ε does not control the error. On the log-normal data the
            // rate is far above ε (measured 0.4–0.45 at ε = 0.05); asserted: above 2ε by more than
            // a Binomial(n, 2ε) fluctuation could explain.
            Method::AusterityT2 | Method::AusterityT500 if a.data == ToyData::Lognormal => {
                let max = bernstein_max_count(a.decisions, 2.0 * AUSTERITY_EPSILON);
                assert!(
                    wrong > max,
                    "{}: Austerity wrong {wrong} times in {} decisions (≤ {max:.1}, compatible with 2ε)",
                    a.method.label(),
                    a.decisions
                );
            }
            _ => {}
        }
    }
}

#[test]
fn epsilon_zero_and_delta_to_zero_reproduce_exact_mh_bit_for_bit() {
    let ex = &suite().toy.exactness;
    assert_eq!(ex.len(), 2);
    for e in ex {
        assert!(
            e.austerity_identical,
            "{}: Austerity ε = 0 chain differs from the exact test's",
            e.data.label()
        );
        assert!(
            e.confidence_identical,
            "{}: confidence δ = 1e-300 chain differs from the exact test's",
            e.data.label()
        );
        assert!(e.accept > 0.2 && e.accept < 0.8, "{}: acceptance {}", e.data.label(), e.accept);
    }
}

#[test]
fn equilibrium_fraction_is_below_one_and_does_not_grow_with_n() {
    let runs = &suite().scaling.runs;
    assert!(runs.len() >= 2);
    for r in runs {
        assert!(
            r.mean_fraction + Z_MAX * r.mcse_fraction < 1.0,
            "n = {}: mean fraction {} (MCSE {})",
            r.n,
            r.mean_fraction,
            r.mcse_fraction
        );
    }
    let (a, b) = (&runs[0], &runs[runs.len() - 1]);
    let z_growth = z(b.mean_fraction, b.mcse_fraction, a.mean_fraction, a.mcse_fraction);
    assert!(
        z_growth < Z_MAX,
        "fraction grows from {} (n = {}) to {} (n = {}), z = {z_growth:.2}",
        a.mean_fraction,
        a.n,
        b.mean_fraction,
        b.n
    );
}

#[test]
fn logistic_chains_reach_the_posterior_and_the_confidence_sampler_saves_in_the_transient() {
    let l = &suite().logistic;
    assert_eq!(l.chains.len(), 8);
    for c in &l.chains {
        assert!(
            c.hit_iteration.is_some(),
            "{} from {:?} never reached the posterior",
            c.sampler.label(),
            c.start
        );
    }
    let total = |s: Sampler| -> u64 { l.chains_of(s).iter().filter_map(|c| c.evals_to_hit).sum() };
    let (mh, conf) = (total(Sampler::ExactMh), total(Sampler::Confidence));
    assert!(conf < mh, "evaluations to reach the posterior: confidence {conf} ≥ exact MH {mh}");
    // Far from the mode (≥ 100 posterior sds) a decision needs a small fraction of the data.
    let bins = l.fraction_by_distance(Sampler::Confidence);
    let far = DISTANCE_EDGES.iter().position(|&e| e >= 100.0).expect("a bin at 100 sds");
    let (sum, steps) = bins[far..]
        .iter()
        .filter(|b| b.1 > 0)
        .fold((0.0, 0), |(s, k), b| (s + b.0 * b.1 as f64, k + b.1));
    assert!(steps > 0, "no steps far from the mode");
    let far_fraction = sum / steps as f64;
    assert!(far_fraction < 0.5, "mean data fraction ≥ 100 sds from the mode: {far_fraction}");
    // The equilibrium draws are around the Laplace mode (a loose check of the kernel: 4 chains
    // of 500 correlated draws; the sd of each chain mean is a few tenths of a posterior sd).
    for c in l.chains_of(Sampler::Confidence) {
        for e in &c.equilibrium_mean_error_sds {
            assert!(e.abs() < 2.0, "equilibrium mean {e} posterior sds from the mode");
        }
    }
}
