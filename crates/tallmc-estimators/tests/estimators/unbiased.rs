//! Monte Carlo checks (10⁵ replications, z-tests with |z| < Z_MAX) that ℓ̂, ∇ℓ̂ and L̂_B are
//! unbiased, and that E σ̂² = ((m − 1)/m) V[ℓ̂] (divisor m).

// The tests print the measured numbers they check (shown with --nocapture).
#![allow(clippy::print_stderr)]

use crate::common::*;
use rand::RngExt;
use tallmc_core::{FullData, Parallelism};
use tallmc_estimators::tuning::{block_poisson_moments, population_differences};
use tallmc_estimators::{
    BlockPoissonEstimator, BlockPoissonSubsample, ControlVariate, CvOrder, DifferenceEstimator,
    RankOne,
};
use tallmc_testkit::Z_MAX;

const REPS: usize = 100_000;

#[test]
fn difference_estimator_and_its_gradient_are_unbiased() {
    let n = 200;
    let model = logistic(n, 2);
    let center = [0.2, 0.4, -0.2];
    let theta = [0.5, 0.1, 0.1];
    let mut full = FullData::for_model(&model, Parallelism::Sequential);
    let mut g_true = [0.0; 3];
    let ll = full.log_likelihood_grad(&model, &theta, &mut g_true);
    let m = 5;
    for (s, order) in [CvOrder::Zero, CvOrder::One, CvOrder::Two].into_iter().enumerate() {
        let (cv, _) = ControlVariate::new(&model, &center, order).unwrap();
        let (_, var_d, _) =
            population_differences(&model, &cv, &mut RankOne::new(0), &theta).unwrap();
        let v_true = (n * n) as f64 * var_d / m as f64;
        let mut est = DifferenceEstimator::new(&model, cv, RankOne::new(m), m).unwrap();
        let mut r = rng(100 + s as u64);
        let (mut l_hat, mut s2) = (Moments::default(), Moments::default());
        let mut grads: Vec<Moments> = vec![Moments::default(); 3];
        let mut idx = vec![0u32; m];
        let (mut gl, mut gv) = ([0.0; 3], [0.0; 3]);
        for _ in 0..REPS {
            for i in idx.iter_mut() {
                *i = r.random_range(0..n as u32);
            }
            let e = est.estimate_grad(&model, &theta, &idx, &mut gl, &mut gv).unwrap();
            l_hat.push(e.log_likelihood);
            s2.push(e.variance);
            for (g, v) in grads.iter_mut().zip(gl) {
                g.push(v);
            }
        }
        let z = l_hat.z_mean(ll);
        eprintln!("order {order:?}: ℓ̂ z = {z:.2}, sd(ℓ̂) = {:.3}", l_hat.var().sqrt());
        assert!(z.abs() < Z_MAX, "order {order:?}: ℓ̂ biased, z = {z}");
        let zv = l_hat.z_var(v_true);
        eprintln!(
            "order {order:?}: V[ℓ̂] sample {:.4} vs n²σ²_d/m {v_true:.4}, z = {zv:.2}",
            l_hat.var()
        );
        assert!(zv.abs() < Z_MAX, "V[ℓ̂] ≠ n²σ²_d/m, z = {zv}");
        let zs = s2.z_mean(v_true * (m - 1) as f64 / m as f64);
        eprintln!("order {order:?}: E σ̂² z against (m−1)/m · V[ℓ̂] = {zs:.2}");
        assert!(zs.abs() < Z_MAX, "E σ̂² ≠ (m−1)/m V[ℓ̂], z = {zs}");
        for (j, g) in grads.iter().enumerate() {
            let z = g.z_mean(g_true[j]);
            eprintln!("order {order:?}: ∇ℓ̂[{j}] z = {z:.2}");
            assert!(z.abs() < Z_MAX, "order {order:?}: ∇ℓ̂[{j}] biased, z = {z}");
        }
    }
}

#[test]
fn block_poisson_estimator_is_unbiased_for_the_likelihood() {
    let n = 200;
    let model = logistic(n, 2);
    let center = [0.2, 0.4, -0.2];
    let theta = [0.345, 0.255, -0.055];
    let mut full = FullData::for_model(&model, Parallelism::Sequential);
    let ll = full.log_likelihood(&model, &theta);
    let (cv, _) = ControlVariate::new(&model, &center, CvOrder::One).unwrap();
    let (mean_d, var_d, _) =
        population_differences(&model, &cv, &mut RankOne::new(0), &theta).unwrap();
    let (m, lambda) = (4, 2);
    let mu = mean_d * n as f64;
    let sd = (n as f64) * (var_d / m as f64).sqrt();
    // σ_d̂ ≈ 1 and a = μ − 2.5σ_d̂, λ = 2: predicted V[log|L̂_B|] ≈ 0.66 and P(L̂_B < 0) ≈ 1.2%,
    // so negative estimates occur (the sign matters) and the ratio's variance is small.
    let a = mu - 2.5 * sd;
    let pred = block_poisson_moments(mu, sd, lambda, a).unwrap();
    eprintln!(
        "μ = {mu:.3}, σ_d̂ = {sd:.3}, predicted V[log|L̂|] = {:.3}, P(L̂ ≥ 0) = {:.4}",
        pred.var_log_abs, pred.prob_positive
    );
    let mut est = BlockPoissonEstimator::new(&model, cv, RankOne::new(m), m, lambda, a).unwrap();
    let mut sub = BlockPoissonSubsample::new(n, m, lambda, lambda).unwrap();
    let mut r = rng(200);
    let (mut ratio, mut pos) = (Moments::default(), 0usize);
    for _ in 0..REPS {
        sub.draw_all(&mut r);
        let e = est.estimate(&model, &theta, &sub).unwrap();
        ratio.push(e.sign * (e.log_abs_likelihood - ll).exp());
        pos += usize::from(e.sign >= 0.0);
    }
    let z = ratio.z_mean(1.0);
    let p = pos as f64 / REPS as f64;
    eprintln!(
        "E[sign · L̂_B / L] = {:.4} ± {:.4} (z = {z:.2}); P(L̂ ≥ 0) = {p:.4}",
        ratio.mean(),
        (ratio.var() / REPS as f64).sqrt()
    );
    assert!(z.abs() < Z_MAX, "L̂_B biased: z = {z}");
    assert!(p < 0.9999, "the test should see negative estimates (P = {p})");
    // Power: the standard error must be small enough to detect a 3% bias at 4 se.
    assert!((ratio.var() / REPS as f64).sqrt() < 0.0075);
}
