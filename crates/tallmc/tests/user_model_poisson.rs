//! The `user_model_poisson` example, run as a test: a Poisson regression defined outside the
//! library through the core traits passes the same checks as the built-in models.
//!
//! * its gradient and Hessian agree with central finite differences, its batch forms with each
//!   other, and bad data are rejected with errors naming the value;
//! * perturbed HMC-ECS on it agrees with full-data HMC: posterior means and sds within
//!   `Z_MAX` = 4 combined MCSE for every coordinate, R-hat < 1.01 for both, no divergences
//!   after warmup (seed-independent: `TALLMC_SEED_OFFSET=100` and `200` pass too).

#![allow(clippy::print_stderr)]

#[path = "../examples/user_model_poisson.rs"]
#[allow(dead_code)]
mod example;
mod support;

use example::{D, ModelError, PoissonRegression, simulate};
use tallmc::prelude::*;
use tallmc_testkit::seed;

/// Relative tolerance of the finite-difference checks (central differences, step 1e-5).
const FD_TOL: f64 = 1e-6;
/// Finite-difference step.
const FD_STEP: f64 = 1e-5;

fn small_model() -> PoissonRegression {
    let (x, y) = simulate(200, seed(3)).expect("simulate");
    PoissonRegression::new(x, y, D, 10.0).expect("valid data")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= FD_TOL * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn gradient_and_hessian_match_finite_differences() {
    let m = small_model();
    let idx: Vec<u32> = (0..200).collect();
    for theta in [[0.0; D], [0.5, 0.4, -0.3, 0.2], [-1.0, 1.5, 0.7, -2.0]] {
        // Gradient of the sum of the terms plus the prior.
        let mut out = vec![0.0; idx.len()];
        let mut grad = [0.0; D];
        let total = m.log_terms_grad_sum(&theta, &idx, &mut out, &mut grad)
            + m.log_prior_grad(&theta, &mut grad);
        let f = |t: &[f64]| m.sum_log_terms(t, &idx) + m.log_prior(t);
        assert!(close(total, f(&theta)));
        for j in 0..D {
            let (mut up, mut down) = (theta, theta);
            up[j] += FD_STEP;
            down[j] -= FD_STEP;
            let fd = (f(&up) - f(&down)) / (2.0 * FD_STEP);
            assert!(close(grad[j], fd), "θ = {theta:?}, ∂_{j}: {} vs fd {fd}", grad[j]);
        }
        // Hessian of the same, against differences of the gradient.
        let mut hess = vec![0.0; D * D];
        m.sum_hessian(&theta, &idx, &mut hess);
        m.add_log_prior_hessian(&theta, &mut hess);
        let g = |t: &[f64]| {
            let mut out = vec![0.0; idx.len()];
            let mut g = [0.0; D];
            m.log_terms_grad_sum(t, &idx, &mut out, &mut g);
            m.log_prior_grad(t, &mut g);
            g
        };
        for j in 0..D {
            let (mut up, mut down) = (theta, theta);
            up[j] += FD_STEP;
            down[j] -= FD_STEP;
            let (gu, gd) = (g(&up), g(&down));
            for a in 0..D {
                let fd = (gu[a] - gd[a]) / (2.0 * FD_STEP);
                assert!(close(hess[a * D + j], fd), "θ = {theta:?}, H[{a},{j}] vs fd {fd}");
            }
        }
    }
}

#[test]
fn batch_forms_agree() {
    let m = small_model();
    let theta = [0.3, -0.2, 0.5, 0.1];
    let idx: Vec<u32> = vec![0, 7, 7, 199, 42];
    let k = idx.len();
    let (mut out, mut rows) = (vec![0.0; k], vec![0.0; k * D]);
    m.log_terms_grads(&theta, &idx, &mut out, &mut rows);
    let (mut out2, mut sum) = (vec![0.0; k], [1.0; D]);
    let total = m.log_terms_grad_sum(&theta, &idx, &mut out2, &mut sum);
    assert_eq!(out, out2);
    assert!(close(total, out.iter().sum()));
    for j in 0..D {
        let s: f64 = rows.chunks_exact(D).map(|r| r[j]).sum();
        assert!(close(sum[j], 1.0 + s));
    }
    // Hessian-vector products against the summed Hessian.
    let v = [0.2, -1.0, 0.4, 0.3];
    let mut hv = vec![0.0; k * D];
    m.hessian_vector_products(&theta, &idx, &v, &mut hv);
    let mut h = vec![0.0; D * D];
    m.sum_hessian(&theta, &idx, &mut h);
    for a in 0..D {
        let from_h: f64 = (0..D).map(|b| h[a * D + b] * v[b]).sum();
        let from_hv: f64 = hv.chunks_exact(D).map(|r| r[a]).sum();
        assert!(close(from_h, from_hv));
    }
    // The contiguous full-data sums equal the indexed ones.
    let all: Vec<u32> = (0..200).collect();
    assert!(close(m.sum_log_terms_range(&theta, 0, 200), m.sum_log_terms(&theta, &all)));
}

#[test]
fn bad_data_are_rejected_with_the_value_named() {
    let x = vec![1.0, 0.5, 1.0, -0.5];
    let err = |x: Vec<f64>, y: Vec<f64>| PoissonRegression::new(x, y, 2, 1.0).unwrap_err();
    assert_eq!(err(x.clone(), vec![1.0, -2.0]), ModelError::NotACount { row: 1, value: -2.0 });
    assert_eq!(err(x.clone(), vec![1.5, 2.0]), ModelError::NotACount { row: 0, value: 1.5 });
    assert!(matches!(err(x.clone(), vec![f64::NAN, 2.0]), ModelError::NotACount { row: 0, .. }));
    let e = err(vec![1.0, 0.5, 1.0, f64::INFINITY], vec![1.0, 2.0]);
    assert_eq!(e, ModelError::NonFiniteCovariate { row: 1, column: 1, value: f64::INFINITY });
    assert!(e.to_string().contains("x[1, 1] = inf"), "{e}");
    assert!(err(x.clone(), vec![1.0, -2.0]).to_string().contains("y[1] = -2"));
    assert!(matches!(err(x.clone(), vec![1.0]), ModelError::Shape { .. }));
    assert_eq!(err(vec![], vec![]), ModelError::Empty);
    assert!(matches!(
        PoissonRegression::new(x, vec![1.0, 2.0], 2, 0.0),
        Err(ModelError::PriorSd(_))
    ));
}

#[test]
fn hmc_ecs_on_the_user_model_matches_full_data_hmc() {
    let report = example::run(seed(1)).expect("the example runs");
    support::assert_agrees_with_hmc(&report.names, &report.hmc, &report.ecs, "HMC-ECS");
    assert_eq!(report.hmc.divergences, 0);
    assert_eq!(report.ecs.divergences, 0);
    // The subsampling sampler looks at a small share of the data per iteration.
    assert!(report.ecs.batch < 0.05 * example::N as f64, "batch {}", report.ecs.batch);
    assert!(report.ecs.evals.gradients * 10 < report.hmc.evals.gradients);
}
