//! Exactness: Austerity with ε = 0 and the confidence test with δ → 0 (1e-300) make the exact
//! decision, use all N values when the decision needs them, and — fed the same draws (same RNG
//! seed) — agree with `ExactTest` decision for decision, down to the bits of the mean.

use crate::common;

use crate::common::{Family, mean_sd, rng};
use proptest::prelude::*;
use tallmc_bounds::{
    AusterityConfig, AusterityTest, BoundKind, ConfidenceConfig, ConfidenceTest, Decision,
    ExactTest, MeanTest, SlicePopulation,
};
use tallmc_core::rng::chain_rng;

const TINY_DELTA: f64 = 1e-300;

fn decide<T: MeanTest>(
    test: &mut T, pop: &mut SlicePopulation<'_>, threshold: f64, seed: u64,
) -> Decision {
    pop.reset();
    test.decide(pop, threshold, &mut chain_rng(seed, 0)).expect("decision")
}

/// Runs every near-exact test and the exact test with the same seed and checks they agree.
fn check_agreement(
    values: &[f64], threshold: f64, seed: u64, batch: usize, first: usize,
) -> Vec<Decision> {
    let n = values.len();
    let range = SlicePopulation::exact_range(values);
    let mut pop = SlicePopulation::new(values, Some(range)).unwrap();
    let exact = decide(&mut ExactTest::new(), &mut pop, threshold, seed);
    assert_eq!(exact.used, n);
    let mut austerity =
        AusterityTest::new(AusterityConfig::new(0.0, batch.min(n)).with_first_batch(first.min(n)))
            .unwrap();
    let a = decide(&mut austerity, &mut pop, threshold, seed);
    assert_eq!(a.above, exact.above, "Austerity ε = 0 vs exact, threshold {threshold}");
    assert_eq!(a.used, n, "Austerity ε = 0 stopped early");
    assert_eq!(a.mean.to_bits(), exact.mean.to_bits(), "means differ");
    let mut out = vec![a];
    for kind in BoundKind::ALL {
        let config = ConfidenceConfig::new(kind, TINY_DELTA).with_first_batch(first.min(n));
        let c = decide(&mut ConfidenceTest::new(config).unwrap(), &mut pop, threshold, seed);
        assert_eq!(c.above, exact.above, "{kind} δ = 1e-300 vs exact, threshold {threshold}");
        if c.used == n {
            assert_eq!(c.mean.to_bits(), exact.mean.to_bits());
            assert_eq!(c.half_width, 0.0);
        } else {
            assert!((c.mean - threshold).abs() > c.half_width);
        }
        out.push(c);
    }
    out
}

#[test]
fn near_exact_tests_agree_with_the_exact_test() {
    let mut r = rng(31, 0);
    for family in Family::ALL {
        for n in [100usize, 2_000] {
            for index in 0..6 {
                let values = family.population(n, common::seed(31), index);
                let (mu, sd) = mean_sd(&values);
                for (j, offset) in
                    [1e-3, -1e-3, 0.3, -0.3, 0.05, -0.05, 3.0, -3.0].into_iter().enumerate()
                {
                    let seed = common::seed(1000 + index * 100 + j as u64);
                    let threshold = mu + offset * sd / (n as f64).sqrt() * 10.0;
                    let decisions = check_agreement(&values, threshold, seed, 50, 20);
                    // Thresholds within 0.01 standard errors of the population mean: only all N
                    // values decide at level 1e-300.
                    if offset.abs() < 0.01 {
                        assert!(decisions.iter().all(|d| d.used == n), "{decisions:?}");
                    }
                }
                // A threshold drawn at random near the mean.
                use rand::RngExt;
                let threshold = mu + (r.random::<f64>() - 0.5) * sd;
                check_agreement(&values, threshold, common::seed(7 + index), 37, 2);
            }
        }
    }
}

#[test]
fn ties_constants_and_thresholds_at_the_mean() {
    // The exact rule is "mean > threshold": a threshold equal to the mean is "not above".
    let two_values: Vec<f64> = (0..1_000).map(|i| (i % 2) as f64).collect();
    for d in check_agreement(&two_values, 0.5, 1, 10, 10) {
        assert!(!d.above);
        assert_eq!(d.used, 1_000);
    }
    // A constant population: R = 0, every bound is 0 and the first look decides exactly.
    let constant = vec![2.5; 500];
    for threshold in [2.5, 2.4, 2.6] {
        let ds = check_agreement(&constant, threshold, 2, 10, 10);
        assert_eq!(ds[0].used, 500); // Austerity ε = 0 always uses everything
        for d in &ds[1..] {
            assert_eq!(d.above, threshold < 2.5);
            assert_eq!(d.used, if threshold == 2.5 { 500 } else { 10 });
        }
    }
    // Integers with many ties and a large offset (Welford / compensated sums stay exact).
    let ints: Vec<f64> = (0..3_001).map(|i| 1e9 + (i % 3) as f64).collect();
    check_agreement(&ints, 1e9 + 1.0, 3, 100, 100);
    check_agreement(&ints, 1e9 + 1.0 - 1e-6, 3, 100, 100);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 200,
        // A fixed seed: the same cases on every run (reproducible CI); no regression files.
        rng_seed: proptest::test_runner::RngSeed::Fixed(20_261_123),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Reference check on arbitrary small populations, thresholds and batch sizes.
    #[test]
    fn near_exact_tests_match_the_exact_test(
        values in prop::collection::vec(-1e3f64..1e3, 2..60),
        u in 0.0f64..1.0,
        batch in 1usize..60,
        first in 2usize..60,
        seed in any::<u64>(),
    ) {
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        check_agreement(&values, lo + u * (hi - lo), seed, batch, first);
    }
}
