//! Property tests: bad input is an error and never a panic; the FFT autocovariance equals the
//! direct sum; rank-based diagnostics are invariant to monotone maps; bounds hold; the summary
//! equals the individual functions.

use proptest::prelude::*;
use tallmc_diagnostics as diag;

/// Relative tolerance for "equal up to rounding" in these properties.
const ROUNDING: f64 = 1e-12;

fn rel_close(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= ROUNDING * a.abs().max(b.abs())
}

/// Any f64, including NaN, infinities and subnormals, with some weight on ordinary values.
fn any_value() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => -10.0..10.0f64,
        1 => any::<f64>(),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
    ]
}

/// 1–5 chains of equal length 4–60 with finite values.
fn valid_chains() -> impl Strategy<Value = Vec<Vec<f64>>> {
    (1usize..=5, 4usize..=60)
        .prop_flat_map(|(m, n)| prop::collection::vec(prop::collection::vec(-5.0..5.0f64, n), m))
}

/// Calls every scalar diagnostic; returns whether all returned `Ok`.
fn all_ok(chains: &[Vec<f64>]) -> bool {
    let results = [
        diag::ess_bulk(chains),
        diag::ess_tail(chains),
        diag::ess_mean(chains),
        diag::ess_sd(chains),
        diag::ess_quantile(chains, 0.3),
        diag::ess_coda(chains),
        diag::rhat(chains),
        diag::rhat_split(chains),
        diag::mcse_mean(chains),
        diag::mcse_sd(chains),
        diag::mcse_quantile(chains, 0.9),
        diag::mean(chains),
        diag::sd(chains),
        diag::quantile(chains, 0.5),
    ];
    let summary = diag::Summary::from_chains("x", chains);
    results.iter().all(Result::is_ok) && summary.is_ok()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 128,
        // A fixed seed: the same cases on every run (reproducible CI); no regression files.
        rng_seed: proptest::test_runner::RngSeed::Fixed(20_261_123),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_input_never_panics(
        chains in prop::collection::vec(prop::collection::vec(any_value(), 0..12), 0..5),
        prob in prop_oneof![Just(-0.1), Just(f64::NAN), 0.0..=1.0f64, Just(1.5)],
    ) {
        let valid_shape = !chains.is_empty()
            && chains.iter().all(|c| c.len() == chains[0].len())
            && chains[0].len() >= diag::MIN_DRAWS;
        let finite = chains.iter().flatten().all(|v| v.is_finite());
        prop_assert_eq!(all_ok(&chains), valid_shape && finite);
        let q = diag::ess_quantile(&chains, prob);
        prop_assert_eq!(q.is_ok(), valid_shape && finite && (0.0..=1.0).contains(&prob));
        let q = diag::mcse_quantile(&chains, prob);
        prop_assert_eq!(q.is_ok(), valid_shape && finite && (0.0..=1.0).contains(&prob));
        if let Some(c) = chains.first() {
            let _ = diag::autocorr(c);
            let _ = diag::spectrum0_ar(c);
        }
    }

    #[test]
    fn fft_autocovariance_equals_the_direct_sum(x in prop::collection::vec(-100.0..100.0f64, 1..300)) {
        let fast = diag::autocov(&x).unwrap();
        let n = x.len();
        let m = x.iter().sum::<f64>() / n as f64;
        for (k, g) in fast.iter().enumerate() {
            let direct = (0..n - k).map(|t| (x[t] - m) * (x[t + k] - m)).sum::<f64>() / n as f64;
            prop_assert!((g - direct).abs() <= 1e-10 * fast[0].max(1.0), "lag {}: {} vs {}", k, g, direct);
        }
    }

    #[test]
    fn rank_diagnostics_are_invariant_to_monotone_maps(chains in valid_chains()) {
        let exp: Vec<Vec<f64>> = chains.iter().map(|c| c.iter().map(|v| v.exp()).collect()).collect();
        let twice: Vec<Vec<f64>> = chains.iter().map(|c| c.iter().map(|v| 2.0 * v).collect()).collect();
        prop_assert!(rel_close(diag::ess_bulk(&chains).unwrap(), diag::ess_bulk(&exp).unwrap()));
        prop_assert!(rel_close(diag::ess_tail(&chains).unwrap(), diag::ess_tail(&twice).unwrap()));
        prop_assert!(rel_close(diag::rhat(&chains).unwrap(), diag::rhat(&twice).unwrap()));
        prop_assert!(rel_close(diag::ess_mean(&chains).unwrap(), diag::ess_mean(&twice).unwrap()));
    }

    #[test]
    fn ess_is_positive_and_capped(chains in valid_chains()) {
        let s = (chains.len() * chains[0].len()) as f64;
        for ess in [diag::ess_bulk(&chains).unwrap(), diag::ess_mean(&chains).unwrap(), diag::ess_tail(&chains).unwrap()] {
            // τ̂ ≥ 1/log₁₀(S') with S' ≤ S split draws, so ESS ≤ S log₁₀ S.
            prop_assert!(ess > 0.0 && ess <= s * s.log10() * (1.0 + 1e-12), "ess {} for S = {}", ess, s);
        }
        prop_assert!(diag::ess_coda(&chains).unwrap() >= 0.0);
    }

    #[test]
    fn summary_equals_the_individual_functions(chains in valid_chains()) {
        let s = diag::Summary::from_chains("x", &chains).unwrap();
        prop_assert!(rel_close(s.mean, diag::mean(&chains).unwrap()));
        prop_assert!(rel_close(s.sd, diag::sd(&chains).unwrap()));
        prop_assert!(rel_close(s.q5, diag::quantile(&chains, 0.05).unwrap()));
        prop_assert!(rel_close(s.q50, diag::quantile(&chains, 0.5).unwrap()));
        prop_assert!(rel_close(s.q95, diag::quantile(&chains, 0.95).unwrap()));
        prop_assert!(rel_close(s.mcse_mean, diag::mcse_mean(&chains).unwrap()));
        prop_assert!(rel_close(s.mcse_sd, diag::mcse_sd(&chains).unwrap()));
        prop_assert!(rel_close(s.ess_bulk, diag::ess_bulk(&chains).unwrap()));
        prop_assert!(rel_close(s.ess_tail, diag::ess_tail(&chains).unwrap()));
        prop_assert!(rel_close(s.rhat, diag::rhat(&chains).unwrap()));
    }
}
