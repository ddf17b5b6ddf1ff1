//! Deciding allocates nothing after warm-up: every test owns its scratch buffer and running
//! statistics. Counted with a global allocator that tallies the allocations of the current
//! thread.

use tallmc_bounds::{
    AusterityConfig, AusterityTest, BoundKind, ConfidenceConfig, ConfidenceTest, ExactTest,
    MeanTest, SlicePopulation,
};
use tallmc_core::rng::chain_rng;
use tallmc_testkit::allocations;

fn decisions_allocate_nothing<T: MeanTest>(name: &str, mut test: T) {
    let values: Vec<f64> = (0..20_000).map(|i| ((i * 7919) % 1000) as f64 / 1000.0).collect();
    let range = SlicePopulation::exact_range(&values);
    let mut pop = SlicePopulation::new(&values, Some(range)).unwrap();
    let mut rng = chain_rng(3, 0);
    let thresholds = [0.4995, 0.3, 0.7, 0.5, 0.49, f64::INFINITY];
    // Warm-up decision.
    test.decide(&mut pop, 0.5, &mut rng).unwrap();
    let before = allocations();
    for k in 0..60 {
        pop.reset();
        test.decide(&mut pop, thresholds[k % thresholds.len()], &mut rng).unwrap();
    }
    assert_eq!(allocations() - before, 0, "{name}: decisions allocated");
}

#[test]
fn decisions_allocate_nothing_after_warm_up() {
    decisions_allocate_nothing("exact", ExactTest::new());
    decisions_allocate_nothing(
        "austerity",
        AusterityTest::new(AusterityConfig::new(0.05, 300)).unwrap(),
    );
    decisions_allocate_nothing(
        "austerity ε = 0, batch > chunk",
        AusterityTest::new(AusterityConfig::new(0.0, 5_000)).unwrap(),
    );
    for kind in BoundKind::ALL {
        decisions_allocate_nothing(
            kind.name(),
            ConfidenceTest::new(ConfidenceConfig::new(kind, 0.05)).unwrap(),
        );
    }
}
