//! Shared helpers of the integration tests: named tolerances, small random data sets, and a
//! generic derivative / batch-consistency checker for any model.

#![allow(dead_code)]

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use tallmc_core::{LogPriorHessian, TermHessians};
use tallmc_models::Dataset;

/// Relative tolerance of central finite differences of first derivatives (h ≈ 1e-5).
pub const FD_GRAD_TOL: f64 = 1e-6;
/// Relative tolerance of finite differences of gradients (Hessian-vector products).
pub const FD_HESS_TOL: f64 = 1e-5;
/// Tolerance for quantities that differ only by summation order.
pub const SUM_TOL: f64 = 1e-11;

pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

pub fn normal(rng: &mut ChaCha8Rng) -> f64 {
    StandardNormal.sample(rng)
}

pub fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

#[track_caller]
pub fn assert_close(a: f64, b: f64, tol: f64, what: &str) {
    assert!(close(a, b, tol), "{what}: {a} vs {b} (tol {tol})");
}

/// n rows of p covariates with non-zero means and unequal scales (so standardization matters),
/// and a response from `response(eta, rng)` with η = a fixed linear combination.
pub fn random_dataset(
    n: usize, p: usize, seed: u64, response: impl Fn(f64, &mut ChaCha8Rng) -> f64,
) -> Dataset {
    let mut r = rng(seed);
    let mut x = Vec::with_capacity(n * p);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let mut eta = 0.3;
        for j in 0..p {
            let v = (j as f64 - 1.0) + (1.0 + 0.5 * j as f64) * normal(&mut r);
            eta += 0.4 * v / (1.0 + j as f64);
            x.push(v);
        }
        y.push(response(eta, &mut r));
    }
    Dataset::with_default_names(x, y, p).unwrap()
}

pub fn bernoulli_response(eta: f64, r: &mut ChaCha8Rng) -> f64 {
    let p = 1.0 / (1.0 + (-eta).exp());
    if r.random::<f64>() < p { 1.0 } else { 0.0 }
}

pub fn gaussian_response(eta: f64, r: &mut ChaCha8Rng) -> f64 {
    eta + 0.7 * normal(r)
}

/// Checks every derivative and batch identity of a model at `theta` on `indices` (a small
/// batch, with repeats allowed) and on the contiguous range 3..n−2.
pub fn check_model<M: TermHessians + LogPriorHessian>(
    m: &M, theta: &[f64], indices: &[u32], v: &[f64],
) {
    let d = m.dim();
    let k = indices.len();
    assert_eq!(theta.len(), d);

    // Values agree across the batch methods; per-term gradients sum to the summed gradient,
    // which accumulates onto the buffer it is given.
    let mut out1 = vec![0.0; k];
    m.log_terms(theta, indices, &mut out1);
    let mut out2 = vec![f64::NAN; k];
    let mut grads = vec![f64::NAN; k * d];
    m.log_terms_grads(theta, indices, &mut out2, &mut grads);
    let mut out3 = vec![f64::NAN; k];
    let mut gsum: Vec<f64> = (0..d).map(|j| j as f64 + 0.5).collect();
    let total = m.log_terms_grad_sum(theta, indices, &mut out3, &mut gsum);
    for t in 0..k {
        assert_eq!(out1[t].to_bits(), out2[t].to_bits(), "log_terms vs log_terms_grads");
        assert_eq!(out1[t].to_bits(), out3[t].to_bits(), "log_terms vs log_terms_grad_sum");
    }
    assert_close(total, out1.iter().sum(), SUM_TOL, "returned total");
    assert_close(m.sum_log_terms(theta, indices), out1.iter().sum(), SUM_TOL, "sum_log_terms");
    for j in 0..d {
        let per_term: f64 = (0..k).map(|t| grads[t * d + j]).sum();
        assert_close(gsum[j] - (j as f64 + 0.5), per_term, SUM_TOL, "summed vs per-term grads");
    }

    // Finite differences of each term's gradient.
    let mut tp = theta.to_vec();
    let mut tm = theta.to_vec();
    let mut lp = vec![0.0; k];
    let mut lm = vec![0.0; k];
    for j in 0..d {
        let h = 1e-5 * (1.0 + theta[j].abs());
        tp[j] = theta[j] + h;
        tm[j] = theta[j] - h;
        m.log_terms(&tp, indices, &mut lp);
        m.log_terms(&tm, indices, &mut lm);
        for t in 0..k {
            let fd = (lp[t] - lm[t]) / (2.0 * h);
            assert_close(
                grads[t * d + j],
                fd,
                FD_GRAD_TOL,
                &format!("d ell_{} / d theta_{j}", indices[t]),
            );
        }
        tp[j] = theta[j];
        tm[j] = theta[j];
    }

    // Hessian-vector products against finite differences of the per-term gradients.
    let mut hv = vec![f64::NAN; k * d];
    m.hessian_vector_products(theta, indices, v, &mut hv);
    let h = 1e-5;
    let tp: Vec<f64> = theta.iter().zip(v).map(|(a, b)| a + h * b).collect();
    let tm: Vec<f64> = theta.iter().zip(v).map(|(a, b)| a - h * b).collect();
    let mut gp = vec![0.0; k * d];
    let mut gm = vec![0.0; k * d];
    m.log_terms_grads(&tp, indices, &mut lp, &mut gp);
    m.log_terms_grads(&tm, indices, &mut lm, &mut gm);
    for t in 0..k * d {
        let fd = (gp[t] - gm[t]) / (2.0 * h);
        assert_close(hv[t], fd, FD_HESS_TOL, &format!("Hv entry {t}"));
    }

    // sum_hessian (accumulating) against Hessian-vector products with unit vectors.
    let mut hess: Vec<f64> = (0..d * d).map(|t| t as f64).collect();
    m.sum_hessian(theta, indices, &mut hess);
    let mut e = vec![0.0; d];
    let mut col = vec![0.0; k * d];
    for j in 0..d {
        e.fill(0.0);
        e[j] = 1.0;
        m.hessian_vector_products(theta, indices, &e, &mut col);
        for i in 0..d {
            let want: f64 = (0..k).map(|t| col[t * d + i]).sum();
            assert_close(hess[i * d + j] - (i * d + j) as f64, want, SUM_TOL * 10.0, "sum_hessian");
        }
    }

    // Contiguous ranges equal the index-batch forms.
    let n = m.num_terms() as u32;
    let (a, b) = (3u32.min(n), n.saturating_sub(2).max(3u32.min(n)));
    let range: Vec<u32> = (a..b).collect();
    let mut out = vec![0.0; range.len()];
    m.log_terms(theta, &range, &mut out);
    let direct: f64 = out.iter().sum();
    assert_close(m.sum_log_terms_range(theta, a, b), direct, SUM_TOL, "sum_log_terms_range");
    assert_close(m.sum_log_terms(theta, &range), direct, SUM_TOL, "sum_log_terms on a range");
    let mut g1 = vec![1.0; d];
    let mut g2 = vec![1.0; d];
    let v1 = m.sum_log_terms_grad_range(theta, a, b, &mut g1);
    let v2 = m.log_terms_grad_sum(theta, &range, &mut out, &mut g2);
    assert_close(v1, v2, SUM_TOL, "sum_log_terms_grad_range value");
    for j in 0..d {
        assert_close(g1[j], g2[j], SUM_TOL, "sum_log_terms_grad_range gradient");
    }
    // Full range in batches of 7 equals the full range sum.
    let all: Vec<u32> = (0..n).collect();
    let batched: f64 = all.chunks(7).map(|c| m.sum_log_terms(theta, c)).sum();
    assert_close(batched, m.sum_log_terms_range(theta, 0, n), SUM_TOL, "batches vs full range");
    assert_eq!(m.sum_log_terms_range(theta, 5, 5), 0.0);

    // Prior: gradient and Hessian by finite differences.
    let mut pg = vec![0.25; d];
    let lp0 = m.log_prior_grad(theta, &mut pg);
    assert_eq!(lp0.to_bits(), m.log_prior(theta).to_bits());
    let mut tp = theta.to_vec();
    let mut tm = theta.to_vec();
    let mut ph = vec![0.0; d * d];
    m.add_log_prior_hessian(theta, &mut ph);
    for j in 0..d {
        let h = 1e-5 * (1.0 + theta[j].abs());
        tp[j] = theta[j] + h;
        tm[j] = theta[j] - h;
        let fd = (m.log_prior(&tp) - m.log_prior(&tm)) / (2.0 * h);
        assert_close(pg[j] - 0.25, fd, FD_GRAD_TOL, "prior gradient");
        let mut gp = vec![0.0; d];
        let mut gm = vec![0.0; d];
        m.log_prior_grad(&tp, &mut gp);
        m.log_prior_grad(&tm, &mut gm);
        for i in 0..d {
            assert_close(ph[i * d + j], (gp[i] - gm[i]) / (2.0 * h), FD_HESS_TOL, "prior Hessian");
        }
        tp[j] = theta[j];
        tm[j] = theta[j];
    }
}
