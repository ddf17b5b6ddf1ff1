//! The per-iteration estimator calls allocate nothing once warmed up.

use crate::common::*;
use tallmc_core::subsample::BlockSubsample;
use tallmc_estimators::{
    BlockPoissonEstimator, BlockPoissonSubsample, ControlVariate, ControlVariateGradient, CvOrder,
    DifferenceEstimator, GradientEstimator, HessianProducts, RankOne,
};
use tallmc_testkit::allocations;

#[test]
fn estimator_calls_do_not_allocate() {
    let model = logistic(1000, 3);
    let center = [0.2, 0.4, 0.0, -0.5];
    let theta = [0.25, 0.35, 0.05, -0.45];
    let (cv, _) = ControlVariate::new(&model, &center, CvOrder::Two).unwrap();
    let mut r = rng(500);
    let mut sub = BlockSubsample::new(1000, 60, 6).unwrap();
    sub.draw_all(&mut r);
    let mut de = DifferenceEstimator::new(&model, cv.clone(), RankOne::new(60), 60).unwrap();
    let mut dg =
        DifferenceEstimator::new(&model, cv.clone(), HessianProducts::new(4, 60), 60).unwrap();
    let mut sg = ControlVariateGradient::new(&model, cv.clone(), RankOne::new(60), 60).unwrap();
    let mut bp_sub = BlockPoissonSubsample::new(1000, 5, 20, 2).unwrap();
    bp_sub.draw_all(&mut r);
    let mut bp =
        BlockPoissonEstimator::new(&model, cv, RankOne::with_lanes(20, 5 * 8), 5, 20, -20.0)
            .unwrap();
    let (mut g, mut gv) = ([0.0; 4], [0.0; 4]);
    let mut step = |sub: &mut BlockSubsample,
                    bp_sub: &mut BlockPoissonSubsample,
                    r: &mut rand_chacha::ChaCha8Rng,
                    accept: bool| {
        sub.propose_refresh(r);
        de.estimate(&model, &theta, sub.indices()).unwrap();
        de.perturbed_grad(&model, &theta, sub.indices(), &mut g).unwrap();
        de.estimate_grad(&model, &theta, sub.indices(), &mut g, &mut gv).unwrap();
        dg.perturbed_grad(&model, &theta, sub.indices(), &mut g).unwrap();
        sg.estimate_gradient(&model, &theta, sub.indices(), &mut g);
        if accept {
            sub.accept()
        } else {
            sub.reject()
        }
        bp_sub.propose_refresh(r);
        bp.estimate_grad(&model, &theta, bp_sub, &mut g).unwrap();
        if accept { bp_sub.accept() } else { bp_sub.reject() }
    };
    // Warm up (first sight of the largest sizes may allocate).
    for k in 0..50 {
        step(&mut sub, &mut bp_sub, &mut r, k % 2 == 0);
    }
    let before = allocations();
    for k in 0..200 {
        step(&mut sub, &mut bp_sub, &mut r, k % 3 == 0);
    }
    assert_eq!(allocations() - before, 0, "estimator calls allocated");
}
