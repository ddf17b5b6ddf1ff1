//! The `user_mean_test` example, run as a test: a mean test defined outside the library through
//! the `MeanTest` trait decides correctly on known populations and, plugged into minibatch MH,
//! samples the posterior.
//!
//! * far from the threshold it decides correctly from a part of the population; at the
//!   threshold it falls back to every value (the exact decision); near it, its measured error
//!   rate is within δ; bad input gives the trait's errors;
//! * the confidence sampler with proxies deciding with it (δ = 0.01) agrees with full-data HMC:
//!   posterior means and sds within `Z_MAX` = 4 combined MCSE for every coordinate, R-hat <
//!   1.01, and less than the full data per iteration on average (seed-independent:
//!   `TALLMC_SEED_OFFSET=100` and `200` pass too).

#![allow(clippy::print_stderr)]

#[path = "../examples/user_mean_test.rs"]
#[allow(dead_code)]
mod example;
mod support;

use example::{TwoBoundConfig, TwoBoundTest};
use tallmc::bounds::{Error as TestError, SlicePopulation};
use tallmc::prelude::*;
use tallmc_testkit::seed;

/// Population size of the unit tests.
const POP: usize = 10_000;
/// Required mean data fraction of the proxy run (measured ≈ 0.7 at n = 10⁴).
const MAX_FRACTION: f64 = 0.9;

/// Values (i mod 100)/100, i < [`POP`]: mean 0.495, range 0.99 (declared 1).
fn values() -> Vec<f64> {
    (0..POP).map(|i| (i % 100) as f64 / 100.0).collect()
}

fn test(delta: f64) -> TwoBoundTest {
    TwoBoundTest::new(TwoBoundConfig::new(delta, 100).expect("valid settings"))
}

#[test]
fn far_from_the_threshold_it_decides_correctly_from_part_of_the_data() {
    let v = values();
    let mut pop = SlicePopulation::new(&v, Some(1.0)).unwrap();
    let mut t = test(1e-3);
    for s in 0..20 {
        let mut rng = chain_rng(seed(11), s);
        for (threshold, above) in [(0.2, true), (0.8, false), (0.45, true), (0.55, false)] {
            pop.reset();
            let d = t.decide(&mut pop, threshold, &mut rng).unwrap();
            assert_eq!(d.above, above, "threshold {threshold}: {d:?}");
            assert!(d.used < POP, "threshold {threshold}: used {}", d.used);
            assert!(d.half_width > 0.0 && (d.mean - threshold).abs() > d.half_width);
        }
    }
    // Far away: the first look of 100 values is enough.
    pop.reset();
    let d = t.decide(&mut pop, -1.0, &mut chain_rng(seed(12), 0)).unwrap();
    assert!(d.above && d.used == 100 && d.looks == 1, "{d:?}");
}

#[test]
fn at_the_threshold_it_falls_back_to_every_value() {
    let v = values();
    let mut pop = SlicePopulation::new(&v, Some(1.0)).unwrap();
    let mu = pop.mean();
    let mut t = test(1e-3);
    for (s, threshold) in [mu, mu - 1e-12, mu + 1e-12].into_iter().enumerate() {
        pop.reset();
        let d = t.decide(&mut pop, threshold, &mut chain_rng(seed(13), s)).unwrap();
        assert_eq!(d.used, POP, "threshold {threshold}: {d:?}");
        assert_eq!(d.half_width, 0.0);
        assert_eq!(d.above, d.mean > threshold);
        // Looks 100, 200, …, 6400, 10 000.
        assert_eq!(d.looks, 8);
    }
}

/// Near the threshold (|μ − μ₀| = 0.02 with values in [0, 1]) decisions are taken part-way; the
/// share of wrong ones over 400 decisions is ≤ δ = 0.05 plus 4 binomial sds.
#[test]
fn near_the_threshold_the_error_rate_is_within_delta() {
    let v = values();
    let mut pop = SlicePopulation::new(&v, Some(1.0)).unwrap();
    let delta = 0.05;
    let mut t = test(delta);
    let runs = 400;
    let (mut wrong, mut used) = (0, 0);
    let mut rng = chain_rng(seed(14), 0);
    for k in 0..runs {
        let threshold = if k % 2 == 0 { 0.475 } else { 0.515 };
        pop.reset();
        let d = t.decide(&mut pop, threshold, &mut rng).unwrap();
        wrong += usize::from(d.above != (0.495 > threshold));
        used += d.used;
    }
    let rate = wrong as f64 / runs as f64;
    let allowed = delta + 4.0 * (delta * (1.0 - delta) / runs as f64).sqrt();
    let fraction = used as f64 / (runs * POP) as f64;
    eprintln!(
        "near the threshold: error rate {rate:.4} (δ = {delta}), data fraction {fraction:.3}"
    );
    assert!(rate <= allowed, "error rate {rate} > {allowed}");
    assert!(fraction < 1.0);
}

#[test]
fn bad_input_gives_the_traits_errors() {
    let v = values();
    let mut rng = chain_rng(seed(15), 0);
    let mut t = test(0.01);
    let mut no_range = SlicePopulation::new(&v, None).unwrap();
    assert!(t.needs_range());
    assert!(matches!(t.decide(&mut no_range, 0.5, &mut rng), Err(TestError::MissingRange { .. })));
    let mut pop = SlicePopulation::new(&v, Some(1.0)).unwrap();
    assert_eq!(t.decide(&mut pop, f64::NAN, &mut rng), Err(TestError::NanThreshold));
    let d = t.decide(&mut pop, f64::NEG_INFINITY, &mut rng).unwrap();
    assert!(d.above && d.used == 0);
    let d = t.decide(&mut pop, f64::INFINITY, &mut rng).unwrap();
    assert!(!d.above && d.used == 0);
    t.decide(&mut pop, 0.2, &mut rng).unwrap();
    assert!(matches!(t.decide(&mut pop, 0.2, &mut rng), Err(TestError::PopulationNotReset { .. })));
    // A range bound smaller than the values' spread is reported, not trusted.
    let mut wrong_range = SlicePopulation::new(&v, Some(0.5)).unwrap();
    assert!(matches!(
        t.decide(&mut wrong_range, 0.3, &mut rng),
        Err(TestError::RangeExceeded { .. })
    ));
    let mut with_nan = v.clone();
    with_nan[3] = f64::NAN;
    let mut pop = SlicePopulation::new(&with_nan, Some(1.0));
    if let Ok(pop) = pop.as_mut() {
        let mut small = test(0.01);
        let r = small.decide(pop, -100.0, &mut rng);
        // −100 is decided on the first look unless it contains the NaN: then an error.
        assert!(matches!(r, Ok(_) | Err(TestError::NonFiniteValue { .. })), "{r:?}");
    }
    assert_eq!(t.check_population_size(0), Err(TestError::EmptyPopulation));
    assert!(t.check_population_size(1).is_ok());
    assert!(TwoBoundConfig::new(0.0, 10).is_err());
    assert!(TwoBoundConfig::new(1.0, 10).is_err());
    assert!(TwoBoundConfig::new(f64::NAN, 10).is_err());
    assert!(TwoBoundConfig::new(0.1, 0).is_err());
    assert!(t.describe().iter().any(|(k, v)| k == "delta" && v == "0.01"));
}

#[test]
fn minibatch_mh_with_the_user_test_matches_full_data_hmc() {
    let report = example::run(seed(1)).expect("the example runs");
    let (max_mean_z, max_sd_z) =
        support::assert_agrees_with_hmc(&report.names, &report.hmc, &report.user, "user-test MH");
    let fraction = report.data_fraction();
    eprintln!(
        "max |z|: means {max_mean_z:.2}, sds {max_sd_z:.2}; data fraction per iteration: proxy \
         {fraction:.4}, plain {:.4}",
        report.plain_data_fraction()
    );
    assert!(fraction < MAX_FRACTION, "proxy data fraction {fraction}");
    assert!(report.plain_data_fraction() <= 1.0);
    // Per value used, the proxy kernel evaluates 3 terms, 1 gradient and 1 Hessian product.
    assert!(report.user.evals.terms > 0 && report.user.evals.hessians > 0);
}
