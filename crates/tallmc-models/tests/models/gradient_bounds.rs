//! The gradient-bound capabilities (`tallmc_core::gradient_bounds`) of every model: each bound
//! holds against the actual per-datum gradients and the full-data Hessian at random θ, θ′ and
//! v (proptest), and is tight where it should be.

use std::sync::Arc;

use crate::common::*;
use proptest::prelude::*;
use tallmc_core::{
    LogPriorCurvature, LogPriorHessian, TermCurvatureBound, TermGradientBounds,
    TermGradientLipschitz, TermGradients, TermHessians, Terms,
};
use tallmc_models::{
    DesignOptions, Gaussian, GaussianMean, GaussianRegression, LinearRegression, LogisticRegression,
};

/// Relative slack for bounds compared with floating-point gradients (rounding only).
const ROUND: f64 = 1e-12;

const N: usize = 200;

fn all_options() -> [DesignOptions; 4] {
    [(false, false), (true, false), (false, true), (true, true)]
        .map(|(intercept, standardize)| DesignOptions { intercept, standardize })
}

fn logistic_models() -> Vec<LogisticRegression> {
    let data = Arc::new(random_dataset(N, 3, 21, bernoulli_response));
    all_options().map(|o| LogisticRegression::new(data.clone(), o, 2.0).unwrap()).into()
}

fn gaussian_models() -> Vec<GaussianRegression> {
    let data = Arc::new(random_dataset(N, 3, 22, gaussian_response));
    all_options().map(|o| GaussianRegression::new(data.clone(), o, 0.7, 3.0).unwrap()).into()
}

/// Per-datum gradients of every term (N × d, row-major).
fn all_grads<M: TermGradients>(m: &M, theta: &[f64]) -> Vec<f64> {
    let idx: Vec<u32> = (0..m.num_terms() as u32).collect();
    let mut out = vec![0.0; idx.len()];
    let mut g = vec![0.0; idx.len() * m.dim()];
    m.log_terms_grads(theta, &idx, &mut out, &mut g);
    g
}

fn full_hessian<M: TermHessians>(m: &M, theta: &[f64]) -> Vec<f64> {
    let d = m.dim();
    let mut h = vec![0.0; d * d];
    m.sum_hessian_range(theta, 0, m.num_terms() as u32, &mut h);
    h
}

fn norm2(v: &[f64]) -> f64 {
    v.iter().map(|a| a * a).sum::<f64>().sqrt()
}

fn quad(k: &[f64], v: &[f64]) -> f64 {
    let d = v.len();
    (0..d).map(|j| (0..d).map(|l| v[j] * k[j * d + l] * v[l]).sum::<f64>()).sum()
}

/// Checks the Lipschitz constants against per-datum gradient differences between θ and θ′.
fn check_lipschitz<M: TermGradients + TermGradientLipschitz>(m: &M, a: &[f64], b: &[f64]) {
    let d = m.dim();
    let (ga, gb) = (all_grads(m, a), all_grads(m, b));
    let dist = norm2(&a.iter().zip(b).map(|(x, y)| x - y).collect::<Vec<_>>());
    let c = m.gradient_lipschitz();
    for i in 0..m.num_terms() {
        let diff: Vec<f64> = (0..d).map(|j| ga[i * d + j] - gb[i * d + j]).collect();
        assert!(norm2(&diff) <= c * dist * (1.0 + ROUND) + 1e-300, "C, datum {i}");
        for (j, dj) in diff.iter().enumerate() {
            let cj = m.coordinate_gradient_lipschitz(j);
            assert!(dj.abs() <= cj * dist * (1.0 + ROUND) + 1e-300, "C_{j}, datum {i}");
        }
    }
}

/// Checks K and K^abs against the full-data Hessian at θ along v.
fn check_curvature<M: TermHessians + TermCurvatureBound>(m: &M, theta: &[f64], v: &[f64]) {
    let d = m.dim();
    let cb = m.curvature_bound();
    assert_eq!(cb.dim, d);
    assert_eq!(cb.evals.hessians, m.num_terms() as u64);
    let h = full_hessian(m, theta);
    let kv = quad(&cb.quadratic, v);
    assert!(kv >= 0.0);
    assert!(quad(&h, v).abs() <= kv * (1.0 + ROUND) + 1e-300, "vᵀHv vs vᵀKv");
    for t in 0..d * d {
        assert!(h[t].abs() <= cb.absolute[t] * (1.0 + ROUND) + 1e-300, "|H| vs K^abs at {t}");
        assert_eq!(cb.quadratic[t], cb.quadratic[(t % d) * d + t / d], "K symmetric");
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        // A fixed seed: the same cases on every run (reproducible CI); no regression files.
        rng_seed: proptest::test_runner::RngSeed::Fixed(20_261_123),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn logistic_gradient_bounds_hold(
        a in prop::collection::vec(-3.0..3.0f64, 4),
        b in prop::collection::vec(-3.0..3.0f64, 4),
        v in prop::collection::vec(-2.0..2.0f64, 4),
        scale in prop_oneof![Just(1.0), Just(30.0)],
    ) {
        for m in logistic_models() {
            let d = m.dim();
            let a: Vec<f64> = a[..d].iter().map(|x| scale * x).collect();
            let (b, v) = (&b[..d], &v[..d]);
            let g = all_grads(&m, &a);
            let bv = m.directional_gradient_bound(v);
            for i in 0..N {
                let row = &g[i * d..(i + 1) * d];
                for (j, gj) in row.iter().enumerate() {
                    prop_assert!(gj.abs() <= m.coordinate_gradient_bound(j), "B_{}", j);
                }
                let dot: f64 = row.iter().zip(v).map(|(x, y)| x * y).sum();
                prop_assert!(dot.abs() <= bv * (1.0 + ROUND), "B(v), datum {}", i);
            }
            check_lipschitz(&m, &a, b);
            check_curvature(&m, &a, v);
        }
    }

    #[test]
    fn gaussian_regression_bounds_hold(
        a in prop::collection::vec(-3.0..3.0f64, 4),
        b in prop::collection::vec(-3.0..3.0f64, 4),
        v in prop::collection::vec(-2.0..2.0f64, 4),
    ) {
        for m in gaussian_models() {
            let d = m.dim();
            check_lipschitz(&m, &a[..d], &b[..d]);
            check_curvature(&m, &a[..d], &v[..d]);
        }
    }

    #[test]
    fn gaussian_mean_bounds_hold(mu in -5.0..5.0f64, mu2 in -5.0..5.0f64) {
        let data = random_dataset(N, 0, 23, |_, r| 0.5 + 2.0 * normal(r));
        let m = GaussianMean::new(data, 0.7, 0.1, 3.0).unwrap();
        check_lipschitz(&m, &[mu], &[mu2]);
        check_curvature(&m, &[mu], &[1.0]);
    }
}

/// Logistic B_j is max_i |x̃_ij| exactly, and a supremum: the score saturates along a ray.
#[test]
fn logistic_coordinate_bounds_are_column_maxima_and_attained() {
    for m in logistic_models() {
        let (design, d) = (m.design(), m.dim());
        for j in 0..d {
            let (i, max) = (0..N)
                .map(|i| (i, design.get(i, j).abs()))
                .fold((0, 0.0), |acc, x| if x.1 > acc.1 { x } else { acc });
            assert_eq!(m.coordinate_gradient_bound(j), max);
            // θ = −t (2y_i − 1) x̃_i: η_i → −∞·(2y_i − 1), so |y_i − σ(η_i)| → 1.
            let sign = 1.0 - 2.0 * design.y()[i];
            let theta: Vec<f64> = (0..d).map(|k| 1000.0 * sign * design.get(i, k)).collect();
            let g = all_grads(&m, &theta);
            assert_close(g[i * d + j].abs(), max, 1e-12, "saturated score");
        }
        // B(v) along v = x̃_i* (the longest row) is ‖x̃_i*‖² and is attained the same way.
        let norms: Vec<f64> = (0..N).map(|i| design.row_norm(i)).collect();
        let i = (0..N).max_by(|&a, &b| norms[a].total_cmp(&norms[b])).unwrap();
        let v: Vec<f64> = (0..d).map(|k| design.get(i, k)).collect();
        assert_close(m.directional_gradient_bound(&v), norms[i] * norms[i], 1e-14, "B(x̃)");
        let sign = 1.0 - 2.0 * design.y()[i];
        let theta: Vec<f64> = v.iter().map(|x| 1000.0 * sign * x).collect();
        let g = all_grads(&m, &theta);
        let dot: f64 = (0..d).map(|k| g[i * d + k] * v[k]).sum();
        assert_close(dot.abs(), m.directional_gradient_bound(&v), 1e-12, "B(v) attained");
    }
}

/// At θ = 0 every logistic weight is σ(1 − σ) = ¼: ∇²ℓ(0) = −K exactly (up to rounding).
#[test]
fn logistic_curvature_bound_is_attained_at_zero() {
    for m in logistic_models() {
        let d = m.dim();
        let cb = m.curvature_bound();
        assert!(!cb.exact);
        let h = full_hessian(&m, &vec![0.0; d]);
        for t in 0..d * d {
            assert_close(-h[t], cb.quadratic[t], 1e-12, "−H(0) = K");
        }
        for j in 0..d {
            assert_eq!(cb.quadratic[j * d + j], cb.absolute[j * d + j]);
        }
        assert_close(m.gradient_lipschitz(), 0.25 * m.max_row_norm().powi(2), 1e-14, "C");
    }
}

/// Gaussian regression: K = −∇²ℓ at every θ (exact), and both Lipschitz constants are attained
/// by a step along the row that defines them.
#[test]
fn gaussian_regression_bounds_are_exact_and_attained() {
    for m in gaussian_models() {
        let (design, d) = (m.design(), m.dim());
        let cb = m.curvature_bound();
        assert!(cb.exact);
        for theta in [vec![0.0; d], vec![1.5; d]] {
            let h = full_hessian(&m, &theta);
            for t in 0..d * d {
                assert_close(-h[t], cb.quadratic[t], 1e-12, "−H = K");
            }
        }
        let norms: Vec<f64> = (0..N).map(|i| design.row_norm(i)).collect();
        let zero = vec![0.0; d];
        let g0 = all_grads(&m, &zero);
        let ratio = |i: usize, j: Option<usize>| {
            let step: Vec<f64> = (0..d).map(|k| design.get(i, k)).collect();
            let g1 = all_grads(&m, &step);
            let diff: Vec<f64> = (0..d).map(|k| g1[i * d + k] - g0[i * d + k]).collect();
            j.map_or(norm2(&diff), |j| diff[j].abs()) / norms[i]
        };
        let i = (0..N).max_by(|&a, &b| norms[a].total_cmp(&norms[b])).unwrap();
        assert_close(ratio(i, None), m.gradient_lipschitz(), 1e-12, "C attained");
        for j in 0..d {
            let key = |i: usize| design.get(i, j).abs() * norms[i];
            let i = (0..N).max_by(|&a, &b| key(a).total_cmp(&key(b))).unwrap();
            let cj = m.coordinate_gradient_lipschitz(j);
            assert_close(ratio(i, Some(j)), cj, 1e-12, "C_j attained");
            assert_close(cj, key(i) / (0.7 * 0.7), 1e-15, "C_j = R_j / σ²");
        }
    }
}

#[test]
fn gaussian_mean_bounds_are_exact() {
    let data = random_dataset(N, 0, 24, |_, r| normal(r));
    let m = GaussianMean::new(data, 0.5, 0.0, 2.0).unwrap();
    assert_eq!(m.gradient_lipschitz(), 4.0);
    assert_eq!(m.coordinate_gradient_lipschitz(0), 4.0);
    let cb = m.curvature_bound();
    assert!(cb.exact);
    assert_eq!(cb.quadratic, [N as f64 * 4.0]);
    assert_eq!(cb.absolute, cb.quadratic);
    assert_eq!(cb.evals.hessians, N as u64);
    assert_eq!(-full_hessian(&m, &[0.3])[0], cb.quadratic[0]);
    // Consecutive gradients differ by exactly |Δμ|/σ².
    let (ga, gb) = (all_grads(&m, &[0.25]), all_grads(&m, &[-0.75]));
    assert_close(ga[7] - gb[7], -4.0, 1e-14, "ℓ′ difference");
}

/// κ is the ∞-norm of the prior Hessian, and the prior Hessians are constant.
#[test]
fn prior_curvature_is_the_prior_hessian_norm() {
    fn check<M: LogPriorCurvature + LogPriorHessian + Terms>(m: &M, want: f64) {
        let d = m.dim();
        for theta in [vec![0.0; d], vec![1.7; d]] {
            let mut h = vec![0.0; d * d];
            m.add_log_prior_hessian(&theta, &mut h);
            let inf_norm =
                (0..d).map(|j| (0..d).map(|k| h[j * d + k].abs()).sum::<f64>()).fold(0.0, f64::max);
            assert_eq!(m.prior_curvature_bound(), inf_norm);
        }
        assert_eq!(m.prior_curvature_bound(), want);
        assert!(m.prior_hessian_is_constant());
    }
    check(&logistic_models()[1], 0.25);
    check(&gaussian_models()[0], 1.0 / 9.0);
    let data = Arc::new(random_dataset(N, 2, 25, gaussian_response));
    check(&LinearRegression::new(data.clone(), DesignOptions::default(), 4.0).unwrap(), 1.0 / 16.0);
    check(&GaussianMean::new(data.clone(), 1.0, 0.0, 0.5).unwrap(), 4.0);
    check(&Gaussian::new(data).unwrap(), 0.0);
}
