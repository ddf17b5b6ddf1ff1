//! The per-datum bounds of the exact minibatch MH kernels, checked term by term on random
//! points: the Lipschitz constants c_i (TunaMH), the Taylor remainders of orders 1 and 2 against
//! a₂,i ‖h‖₁²/2 and a₃,i ‖h‖₁³/6 (SMH), and the Lipschitz constants of the gradients L_i and of
//! the Hessians L₂,i (MH-SS of orders 1 and 2; the Hessian difference in the spectral norm), for
//! logistic and probit regression (standardized and not), linear regression with known σ and
//! the Gaussian mean. Where a bound is attained (the Gaussian's curvature) it is checked to be
//! exact; elsewhere the largest ratio seen shows it is not vacuous.

use std::sync::Arc;

use crate::common::*;
use tallmc_core::{
    TermCurvatureConstants, TermHessians, TermLipschitz, TermThirdDerivativeConstants,
};
use tallmc_models::glm::ProbitFamily;
use tallmc_models::{
    DesignMatrix, DesignOptions, GaussianMean, GaussianRegression, LogisticRegression,
    ProbitRegression,
};

/// ℓ_i(θ), ∇ℓ_i(θ) and ∇²ℓ_i(θ) (row-major) of one term.
fn term<M: TermHessians>(m: &M, theta: &[f64], i: usize) -> (f64, Vec<f64>, Vec<f64>) {
    let d = m.dim();
    let (mut v, mut g, mut h) = ([0.0], vec![0.0; d], vec![0.0; d * d]);
    m.log_terms_grads(theta, &[i as u32], &mut v, &mut g);
    m.sum_hessian(theta, &[i as u32], &mut h);
    (v[0], g, h)
}

/// Largest ratios (observed / bound) of the four bounds over `points` random (θ̂, θ) pairs at
/// scale `scale`, asserting each is ≤ 1 up to rounding. `None` where the model lacks a bound.
struct Ratios {
    lipschitz: f64,
    order1: f64,
    order2: f64,
    gradient: f64,
    hessian: f64,
}

fn check<M>(m: &M, scale: f64, seed: u64, lipschitz: Option<&dyn Fn(usize) -> f64>) -> Ratios
where
    M: TermHessians + TermCurvatureConstants + TermThirdDerivativeConstants,
{
    let d = m.dim();
    let mut r = rng(seed);
    let mut worst =
        Ratios { lipschitz: 0.0, order1: 0.0, order2: 0.0, gradient: 0.0, hessian: 0.0 };
    let l1 = |v: &[f64]| v.iter().map(|a| a.abs()).sum::<f64>();
    let l2 = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
    for _ in 0..40 {
        let center: Vec<f64> = (0..d).map(|_| 0.5 * normal(&mut r)).collect();
        let h: Vec<f64> = (0..d).map(|_| scale * normal(&mut r)).collect();
        let theta: Vec<f64> = center.iter().zip(&h).map(|(c, x)| c + x).collect();
        for i in 0..m.num_terms() {
            let (v0, g0, h0) = term(m, &center, i);
            let (v1, g1, h1) = term(m, &theta, i);
            // Rounding allowance: a few ulps of the magnitudes the differences come from.
            let slack = 1e-12 * (1.0 + v0.abs() + v1.abs() + l1(&g0) * l1(&h));
            let t1 = v0 + g0.iter().zip(&h).map(|(a, b)| a * b).sum::<f64>();
            let hh: f64 =
                (0..d).map(|j| (0..d).map(|k| h0[j * d + k] * h[j] * h[k]).sum::<f64>()).sum();
            let t2 = t1 + 0.5 * hh;
            let (a, b) = (l1(&h), l2(&h));
            let ratio = |worst: &mut f64, observed: f64, bound: f64, what: &str| {
                assert!(
                    observed <= bound + slack,
                    "term {i}, {what}: |{observed}| > bound {bound} (‖h‖₁ = {a})"
                );
                if bound > 1e-300 {
                    *worst = worst.max(observed / bound);
                }
            };
            let a2 = m.term_second_derivative_bound(i);
            ratio(&mut worst.order1, (v1 - t1).abs(), a2 * a * a / 2.0, "order-1 remainder");
            let a3 = m.term_third_derivative_bound(i);
            ratio(&mut worst.order2, (v1 - t2).abs(), a3 * a * a * a / 6.0, "order-2 remainder");
            let dg: Vec<f64> = g1.iter().zip(&g0).map(|(x, y)| x - y).collect();
            let li = m.term_gradient_lipschitz(i);
            ratio(&mut worst.gradient, l2(&dg), li * b, "gradient Lipschitz");
            let dh: Vec<f64> = h1.iter().zip(&h0).map(|(x, y)| x - y).collect();
            let l2i = m.term_hessian_lipschitz(i);
            ratio(&mut worst.hessian, spectral_norm(&dh, d), l2i * b, "Hessian Lipschitz");
            if let Some(c) = lipschitz {
                ratio(&mut worst.lipschitz, (v1 - v0).abs(), c(i) * b, "Lipschitz");
            }
        }
    }
    worst
}

/// The spectral norm of a symmetric d × d matrix (row-major): the largest |eigenvalue|, by
/// power iteration on A² from a fixed start (converges for any symmetric A; 200 rounds are ample
/// for d ≤ 4, and an underestimate would only weaken the check, never fail it falsely).
fn spectral_norm(a: &[f64], d: usize) -> f64 {
    let mut v: Vec<f64> = (0..d).map(|j| 1.0 + 0.1 * j as f64).collect();
    let mut norm = 0.0;
    for _ in 0..200 {
        let av: Vec<f64> = (0..d).map(|j| (0..d).map(|k| a[j * d + k] * v[k]).sum()).collect();
        let aav: Vec<f64> = (0..d).map(|j| (0..d).map(|k| a[j * d + k] * av[k]).sum()).collect();
        let n2 = aav.iter().map(|x| x * x).sum::<f64>().sqrt();
        if n2 == 0.0 {
            return 0.0;
        }
        norm = n2.sqrt() * (v.iter().map(|x| x * x).sum::<f64>().sqrt()).recip().sqrt();
        v = aav.iter().map(|x| x / n2).collect();
    }
    norm
}

fn options() -> [DesignOptions; 2] {
    [
        DesignOptions { intercept: true, standardize: false },
        DesignOptions { intercept: true, standardize: true },
    ]
}

#[test]
fn logistic_bounds_hold_term_by_term() {
    let data = Arc::new(random_dataset(60, 3, 5, bernoulli_response));
    for options in options() {
        let m = LogisticRegression::new(data.clone(), options, 10.0).unwrap();
        for (scale, seed) in [(0.05, 1), (1.0, 2), (5.0, 3)] {
            let c = |i: usize| m.term_lipschitz(i);
            let w = check(&m, scale, seed, Some(&c));
            // Near the centre the remainders are a fair part of their bounds.
            if scale == 0.05 {
                assert!(w.order1 > 0.01 && w.gradient > 0.05, "{options:?}: loose bounds");
            }
            assert!(w.hessian > 0.01, "{options:?} at {scale}: Hessian ratio {}", w.hessian);
            assert!(w.lipschitz > 0.05, "{options:?} at {scale}: Lipschitz ratio {}", w.lipschitz);
        }
    }
}

#[test]
fn probit_and_linear_bounds_hold_term_by_term() {
    let data = Arc::new(random_dataset(60, 3, 6, bernoulli_response));
    for options in options() {
        let design = DesignMatrix::new(data.clone(), options).unwrap();
        let m = ProbitRegression::with_family(ProbitFamily, design, 10.0).unwrap();
        for (scale, seed) in [(0.05, 4), (1.0, 5)] {
            check(&m, scale, seed, None);
        }
    }
    let data = Arc::new(random_dataset(60, 3, 7, gaussian_response));
    let m = GaussianRegression::new(data, options()[0], 0.7, 10.0).unwrap();
    let w = check(&m, 1.0, 8, None);
    // Quadratic terms: the order-2 expansion is exact (a₃ = 0 bounds a zero remainder).
    assert_eq!(m.term_third_derivative_bound(0), 0.0);
    assert_eq!(m.term_hessian_lipschitz(0), 0.0);
    assert!(w.order1 > 0.1, "{}", w.order1);
}

#[test]
fn the_gaussian_mean_curvature_is_attained() {
    let y: Vec<f64> = (0..50).map(|i| ((i * 37) % 50) as f64 / 10.0 - 2.5).collect();
    let m = GaussianMean::from_observations(y, 0.8, 0.0, 10.0).unwrap();
    let w = check(&m, 1.0, 9, None);
    // ℓ_i = −(y_i − μ)²/(2σ²): the order-1 remainder is exactly h²/(2σ²), ∇ℓ_i moves by h/σ².
    assert!((w.order1 - 1.0).abs() < 1e-9 && (w.gradient - 1.0).abs() < 1e-9);
    assert!((m.term_second_derivative_bound(3) - 1.0 / 0.64).abs() < 1e-12);
}
