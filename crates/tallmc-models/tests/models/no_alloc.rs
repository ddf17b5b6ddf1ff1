//! Batch evaluation allocates nothing: a counting global allocator (per thread, so other tests
//! running in parallel do not interfere) around every hot-path method of every model, on owned
//! and memory-mapped data, with and without standardization.

use std::sync::Arc;
use tallmc_testkit::allocations;

use tallmc_core::{
    TermBounds, TermGradientBounds, TermGradientLipschitz, TermGradients, TermHessians,
};
use tallmc_models::{
    Dataset, DesignOptions, Gaussian, GaussianMean, GaussianRegression, LinearRegression,
    LogisticRegression, SoftmaxMlp, read_binary, synthetic, write_binary,
};

/// Calls every gradient batch method once (index batch `idx`, ranges over all n terms) and
/// returns the sum of the values they return.
fn gradient_batch_calls<M: TermGradients>(
    m: &M, theta: &[f64], idx: &[u32], out: &mut [f64], grad: &mut [f64], grads: &mut [f64],
) -> f64 {
    let n = m.num_terms() as u32;
    m.log_terms(theta, idx, out);
    let mut sink = m.sum_log_terms(theta, idx);
    sink += m.sum_log_terms_range(theta, 0, n);
    sink += m.log_terms_grad_sum(theta, idx, out, grad);
    m.log_terms_grads(theta, idx, out, grads);
    sink += m.sum_log_terms_grad_range(theta, 1, n, grad);
    sink
}

/// Runs every batch method of `m` with preallocated buffers; returns the allocations made.
fn count<M: TermHessians>(m: &M, theta: &[f64], v: &[f64]) -> usize {
    let d = m.dim();
    let n = m.num_terms() as u32;
    let idx: Vec<u32> = (0..n).rev().step_by(3).collect();
    let k = idx.len();
    let mut out = vec![0.0; k];
    let mut grad = vec![0.0; d];
    let mut grads = vec![0.0; k * d];
    let mut hv = vec![0.0; k * d];
    let mut hess = vec![0.0; d * d];
    let before = allocations();
    let sink = gradient_batch_calls(m, theta, &idx, &mut out, &mut grad, &mut grads);
    m.hessian_vector_products(theta, &idx, v, &mut hv);
    m.sum_hessian(theta, &idx, &mut hess);
    m.sum_hessian_range(theta, 0, n, &mut hess);
    let after = allocations();
    assert!(sink.is_finite());
    after - before
}

/// The gradient batch methods of a model without Hessians.
fn count_gradients<M: TermGradients>(m: &M, theta: &[f64]) -> usize {
    let d = m.dim();
    let n = m.num_terms() as u32;
    let idx: Vec<u32> = (0..n).rev().step_by(3).collect();
    let k = idx.len();
    let (mut out, mut grad, mut grads) = (vec![0.0; k], vec![0.0; d], vec![0.0; k * d]);
    let before = allocations();
    let sink = gradient_batch_calls(m, theta, &idx, &mut out, &mut grad, &mut grads);
    let after = allocations();
    assert!(sink.is_finite());
    after - before
}

fn bound_allocs<M: TermBounds>(m: &M, a: &[f64], b: &[f64]) -> usize {
    let before = allocations();
    let c = m.term_difference_bound(a, b);
    let after = allocations();
    assert!(c.is_finite());
    after - before
}

#[test]
fn batch_evaluation_allocates_nothing() {
    // The counter sees allocations on this thread.
    let before = allocations();
    let probe = std::hint::black_box(vec![1u8; 10]);
    assert!(allocations() > before && probe.len() == 10);

    let dir = tempfile::tempdir().unwrap();
    let sim = synthetic::higgs_like(2_000, 4).unwrap();
    write_binary(&sim.data, dir.path().join("h")).unwrap();
    let mapped = Arc::new(read_binary(dir.path().join("h.bin"), true).unwrap());
    let owned = Arc::new(sim.data);
    let theta29: Vec<f64> = sim.theta_true.clone();
    let v29: Vec<f64> = (0..29).map(|j| j as f64 * 0.1).collect();

    for data in [&owned, &mapped] {
        let m = LogisticRegression::new(data.clone(), DesignOptions::default(), 10.0).unwrap();
        assert_eq!(count(&m, &theta29, &v29), 0, "logistic, plain");
        assert_eq!(bound_allocs(&m, &theta29, &v29), 0);
        let before = allocations();
        let b = m.directional_gradient_bound(&v29) + m.coordinate_gradient_bound(3);
        let c = m.gradient_lipschitz() + m.coordinate_gradient_lipschitz(3);
        assert_eq!(allocations() - before, 0, "gradient bounds");
        assert!(b.is_finite() && c.is_finite());
        let gr =
            GaussianRegression::new(data.clone(), DesignOptions::default(), 1.0, 10.0).unwrap();
        assert_eq!(count(&gr, &theta29, &v29), 0, "gaussian regression, plain");
        let lin = LinearRegression::new(data.clone(), DesignOptions::default(), 10.0).unwrap();
        let mut t = theta29.clone();
        t.push(0.1);
        let mut v = v29.clone();
        v.push(0.5);
        assert_eq!(count(&lin, &t, &v), 0, "linear, plain");
    }

    // Standardization on the fly: a data set without the intercept column, and a design that
    // adds its own.
    let x: Vec<f64> = owned.x().chunks(29).flat_map(|r| r[1..].to_vec()).collect();
    let no_intercept = Arc::new(Dataset::with_default_names(x, owned.y().to_vec(), 28).unwrap());
    let opts = DesignOptions { intercept: true, standardize: true };
    let m = LogisticRegression::new(no_intercept.clone(), opts, 10.0).unwrap();
    assert_eq!(count(&m, &theta29, &v29), 0, "logistic, standardized");
    let gr = GaussianRegression::new(no_intercept.clone(), opts, 1.0, 10.0).unwrap();
    assert_eq!(count(&gr, &theta29, &v29), 0, "gaussian regression, standardized");
    let lin = LinearRegression::new(no_intercept, opts, 10.0).unwrap();
    let mut t = theta29.clone();
    t.push(-0.3);
    let mut v = v29.clone();
    v.push(1.0);
    assert_eq!(count(&lin, &t, &v), 0, "linear, standardized");

    let toy = Arc::new(synthetic::confidence_gaussian(3_000, 2).unwrap());
    let g = Gaussian::new(toy.clone()).unwrap();
    assert_eq!(count(&g, &[0.01, -2.0], &[1.0, 0.5]), 0, "gaussian");
    assert_eq!(bound_allocs(&g, &[0.01, -2.0], &[0.0, -2.1]), 0);
    let gm = GaussianMean::new(toy, 1.0, 0.0, 10.0).unwrap();
    assert_eq!(count(&gm, &[0.01], &[1.0]), 0, "gaussian mean");
    assert_eq!(bound_allocs(&gm, &[0.01], &[0.02]), 0);

    let digits = synthetic::digits_7x7(1_000, 3).unwrap();
    let mlp = SoftmaxMlp::new(digits.data, 4, 4, 0.001).unwrap();
    let theta: Vec<f64> = (0..192).map(|j| 0.01 * (j as f64).sin()).collect();
    assert_eq!(count_gradients(&mlp, &theta), 0, "softmax network");
}
