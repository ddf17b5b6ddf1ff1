//! Bad input gives clear errors naming the value and the expected range — at construction, or
//! from `check_population_size` before any sampling.

use proptest::prelude::*;
use rand::Rng;
use tallmc_bounds::{
    AusterityConfig, AusterityTest, BoundKind, ConfidenceConfig, ConfidenceTest, Error, ExactTest,
    MeanTest, Population, SlicePopulation,
};
use tallmc_core::rng::chain_rng;

/// Asserts that `result` is an invalid-parameter error for `name`, and that its message shows
/// the value and an expectation.
fn assert_invalid<T: std::fmt::Debug>(result: Result<T, Error>, name: &str, value: &str) {
    let err = result.expect_err("expected an error");
    let msg = err.to_string();
    assert!(matches!(err, Error::InvalidParameter { name: n, .. } if n == name), "{msg}");
    assert!(msg.contains(name) && msg.contains(value) && msg.contains("expected"), "{msg}");
}

#[test]
fn austerity_settings_are_validated() {
    for eps in [-0.1, 1.0, 1.5, f64::NAN, f64::INFINITY] {
        assert_invalid(
            AusterityTest::new(AusterityConfig::new(eps, 10)),
            "epsilon",
            &eps.to_string(),
        );
    }
    let msg = AusterityTest::new(AusterityConfig::new(1.0, 10)).unwrap_err().to_string();
    assert!(msg.contains("[0, 1)"), "{msg}");
    assert!(AusterityTest::new(AusterityConfig::new(0.0, 10)).is_ok(), "ε = 0 is allowed");
    assert_invalid(
        AusterityTest::new(AusterityConfig::new(0.05, 0).with_first_batch(10)),
        "batch",
        "0",
    );
    assert_invalid(AusterityTest::new(AusterityConfig::new(0.05, 1)), "first_batch", "1");
    assert_invalid(
        AusterityTest::new(AusterityConfig::new(0.05, 10).with_first_batch(1)),
        "first_batch",
        "1",
    );
    assert!(AusterityTest::new(AusterityConfig::new(0.05, 1).with_first_batch(2)).is_ok());
}

#[test]
fn confidence_settings_are_validated() {
    let base = ConfidenceConfig::default();
    for delta in [0.0, 1.0, -0.5, 2.0, f64::NAN] {
        assert_invalid(
            ConfidenceTest::new(ConfidenceConfig { delta, ..base }),
            "delta",
            &delta.to_string(),
        );
    }
    for gamma in [1.0, 0.5, f64::NAN, f64::INFINITY] {
        assert_invalid(ConfidenceTest::new(base.with_gamma(gamma)), "gamma", &gamma.to_string());
    }
    for p in [1.0, 0.0, f64::NAN] {
        assert_invalid(ConfidenceTest::new(base.with_p(p)), "p", &p.to_string());
    }
    assert_invalid(ConfidenceTest::new(base.with_first_batch(0)), "first_batch", "0");
    assert!(
        ConfidenceTest::new(ConfidenceConfig::new(BoundKind::HoeffdingSerfling, 1e-300)).is_ok()
    );
}

#[test]
fn batches_larger_than_the_population_are_refused_before_sampling() {
    let austerity = AusterityTest::new(AusterityConfig::new(0.05, 500)).unwrap();
    let err = austerity.check_population_size(100).unwrap_err();
    assert!(err.to_string().contains("first_batch = 500"), "{err}");
    assert!(err.to_string().contains("N = 100"), "{err}");
    let austerity =
        AusterityTest::new(AusterityConfig::new(0.05, 500).with_first_batch(50)).unwrap();
    assert_invalid(austerity.check_population_size(100), "batch", "500");
    assert!(austerity.check_population_size(500).is_ok());
    assert_eq!(austerity.check_population_size(0), Err(Error::EmptyPopulation));

    let confidence = ConfidenceTest::new(ConfidenceConfig::default()).unwrap();
    assert_invalid(confidence.check_population_size(99), "first_batch", "100");
    assert!(confidence.check_population_size(100).is_ok());
    assert_eq!(confidence.check_population_size(0), Err(Error::EmptyPopulation));
    assert_eq!(ExactTest::new().check_population_size(0), Err(Error::EmptyPopulation));

    // decide() makes the same check before drawing anything.
    let values = vec![1.0; 100];
    let mut pop = SlicePopulation::new(&values, Some(0.0)).unwrap();
    let mut test = AusterityTest::new(AusterityConfig::new(0.05, 500)).unwrap();
    assert!(test.decide(&mut pop, 0.0, &mut chain_rng(1, 0)).is_err());
    assert_eq!(pop.drawn(), 0);
}

#[test]
fn a_missing_or_bad_range_is_an_error_for_bound_tests_only() {
    let values: Vec<f64> = (0..200).map(f64::from).collect();
    let mut rng = chain_rng(1, 0);
    let mut test = ConfidenceTest::new(ConfidenceConfig::default()).unwrap();
    assert!(test.needs_range());
    let mut pop = SlicePopulation::new(&values, None).unwrap();
    let err = test.decide(&mut pop, 1.0, &mut rng).unwrap_err();
    assert!(matches!(err, Error::MissingRange { .. }), "{err}");
    assert!(err.to_string().contains("range"), "{err}");
    // Austerity and the exact test do not need one.
    let mut austerity = AusterityTest::new(AusterityConfig::new(0.05, 20)).unwrap();
    assert!(!austerity.needs_range());
    pop.reset();
    assert!(austerity.decide(&mut pop, 1.0, &mut rng).is_ok());
    // A range bound smaller than the values' spread is caught when the values show it.
    let mut pop = SlicePopulation::new(&values, Some(10.0)).unwrap();
    let err = test.decide(&mut pop, 1.0, &mut rng).unwrap_err();
    assert!(matches!(err, Error::RangeExceeded { bound, .. } if bound == 10.0), "{err}");
    // Invalid ranges are refused by the population.
    assert_eq!(SlicePopulation::new(&values, Some(-1.0)).unwrap_err(), Error::InvalidRange(-1.0));
    assert!(SlicePopulation::new(&values, Some(f64::NAN)).is_err());
}

/// A population that reports a range the slice population would refuse.
struct LyingRange<'a>(SlicePopulation<'a>, f64);

impl Population for LyingRange<'_> {
    fn size(&self) -> usize {
        self.0.size()
    }
    fn drawn(&self) -> usize {
        self.0.drawn()
    }
    fn draw<R: Rng + ?Sized>(&mut self, out: &mut [f64], rng: &mut R) {
        self.0.draw(out, rng)
    }
    fn range(&self) -> Option<f64> {
        Some(self.1)
    }
}

#[test]
fn bad_values_thresholds_and_populations_are_errors() {
    let mut rng = chain_rng(2, 0);
    let mut values: Vec<f64> = (0..300).map(f64::from).collect();
    let range = SlicePopulation::exact_range(&values);
    let mut confidence = ConfidenceTest::new(ConfidenceConfig::default()).unwrap();
    let mut austerity = AusterityTest::new(AusterityConfig::new(0.05, 20)).unwrap();
    let mut exact = ExactTest::new();

    let mut pop = LyingRange(SlicePopulation::new(&values, None).unwrap(), f64::INFINITY);
    assert_eq!(
        confidence.decide(&mut pop, 0.0, &mut rng).unwrap_err(),
        Error::InvalidRange(f64::INFINITY)
    );

    let mut pop = SlicePopulation::new(&values, Some(range)).unwrap();
    assert_eq!(confidence.decide(&mut pop, f64::NAN, &mut rng).unwrap_err(), Error::NanThreshold);
    assert_eq!(austerity.decide(&mut pop, f64::NAN, &mut rng).unwrap_err(), Error::NanThreshold);

    // A population with values drawn already must be reset first.
    let mut buf = [0.0; 3];
    pop.draw(&mut buf, &mut rng);
    for err in [
        confidence.decide(&mut pop, 0.0, &mut rng).unwrap_err(),
        austerity.decide(&mut pop, 0.0, &mut rng).unwrap_err(),
        exact.decide(&mut pop, 0.0, &mut rng).unwrap_err(),
    ] {
        assert_eq!(err, Error::PopulationNotReset { drawn: 3 });
    }

    // NaN and infinite values: every test reports the value.
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        values.iter_mut().for_each(|v| *v = bad);
        let mut pop = SlicePopulation::new(&values, Some(range)).unwrap();
        let errs = [
            confidence.decide(&mut pop, 0.0, &mut rng).unwrap_err(),
            {
                pop.reset();
                austerity.decide(&mut pop, 0.0, &mut rng).unwrap_err()
            },
            {
                pop.reset();
                exact.decide(&mut pop, 0.0, &mut rng).unwrap_err()
            },
        ];
        for err in errs {
            assert!(matches!(err, Error::NonFiniteValue { index: 0, .. }), "{err}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        // A fixed seed: the same cases on every run (reproducible CI); no regression files.
        rng_seed: proptest::test_runner::RngSeed::Fixed(20_261_123),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]
    /// Any settings either build a test or give an invalid-parameter error naming one of the
    /// settings; never a panic.
    #[test]
    fn any_settings_build_or_fail_cleanly(
        epsilon in prop::num::f64::ANY,
        delta in prop::num::f64::ANY,
        gamma in prop::num::f64::ANY,
        p in prop::num::f64::ANY,
        batch in 0usize..1_000,
        first in 0usize..1_000,
        n in 0usize..2_000,
    ) {
        match AusterityTest::new(AusterityConfig::new(epsilon, batch).with_first_batch(first)) {
            Ok(t) => {
                prop_assert!((0.0..1.0).contains(&epsilon) && batch >= 1 && first >= 2);
                prop_assert_eq!(t.check_population_size(n).is_ok(), n >= 1 && n >= batch && n >= first);
            }
            Err(Error::InvalidParameter { name, .. }) => {
                prop_assert!(["epsilon", "batch", "first_batch"].contains(&name));
            }
            Err(e) => prop_assert!(false, "unexpected error {}", e),
        }
        let config = ConfidenceConfig { bound: BoundKind::EmpiricalBernstein, delta, p, gamma, first_batch: first };
        match ConfidenceTest::new(config) {
            Ok(t) => {
                prop_assert!(delta > 0.0 && delta < 1.0 && p > 1.0 && gamma > 1.0 && first >= 1);
                prop_assert!(p.is_finite() && gamma.is_finite());
                prop_assert_eq!(t.check_population_size(n).is_ok(), n >= 1 && n >= first);
            }
            Err(Error::InvalidParameter { name, .. }) => {
                prop_assert!(["delta", "p", "gamma", "first_batch"].contains(&name));
            }
            Err(e) => prop_assert!(false, "unexpected error {}", e),
        }
    }
}
