//! The softmax network: gradients against central finite differences at random θ, batch sums
//! against single terms, log-softmax stability at huge logits, the prior, and input validation.

use std::sync::Arc;

use crate::common::*;
use tallmc_core::{
    LogPrior, LogPriorCurvature, LogPriorHessian, ParameterNames, TermGradients, Terms,
};
use tallmc_models::{Dataset, SoftmaxMlp};

const P: usize = 5;
const H: usize = 3;
const K: usize = 4;
const N: usize = 40;

/// Inputs of unequal scales and labels 0..K.
fn data(seed: u64) -> Arc<Dataset> {
    let mut r = rng(seed);
    let x: Vec<f64> = (0..N * P).map(|t| (1.0 + (t % P) as f64 * 0.5) * normal(&mut r)).collect();
    let y: Vec<f64> = (0..N).map(|i| ((i * 7 + 3) % K) as f64).collect();
    Arc::new(Dataset::with_default_names(x, y, P).unwrap())
}

fn model() -> SoftmaxMlp {
    SoftmaxMlp::new(data(1), H, K, 0.01).unwrap()
}

fn random_theta(d: usize, seed: u64, sd: f64) -> Vec<f64> {
    let mut r = rng(seed);
    (0..d).map(|_| sd * normal(&mut r)).collect()
}

#[test]
fn shape_and_names() {
    let m = model();
    let d = P * H + H + H * K + K;
    assert_eq!(m.dim(), d);
    assert_eq!(m.shape().dim(), d);
    let names = m.parameter_names();
    assert_eq!(names.len(), d);
    assert_eq!(names[0], "w1.1.1");
    assert_eq!(names[P], "w1.2.1");
    assert_eq!(names[P * H], "b1.1");
    assert_eq!(names[P * H + H], "w2.1.1");
    assert_eq!(names[d - 1], format!("b2.{K}"));
    // The paper's network: 42 inputs, 4 hidden units, 4 classes → d = 192.
    let x = vec![0.5; 3 * 42];
    let data = Dataset::with_default_names(x, vec![0.0, 3.0, 1.0], 42).unwrap();
    assert_eq!(SoftmaxMlp::new(data, 4, 4, 0.001).unwrap().dim(), 192);
}

#[test]
fn gradients_match_central_finite_differences() {
    let m = model();
    let d = m.dim();
    let idx: Vec<u32> = vec![0, 7, 7, 13, 39, 21];
    let k = idx.len();
    for seed in 0..5 {
        let theta = random_theta(d, 100 + seed, 0.8);
        let (mut vals, mut grads) = (vec![0.0; k], vec![f64::NAN; k * d]);
        m.log_terms_grads(&theta, &idx, &mut vals, &mut grads);
        let (mut lp, mut lm) = (vec![0.0; k], vec![0.0; k]);
        let (mut tp, mut tm) = (theta.clone(), theta.clone());
        for j in 0..d {
            let h = 1e-5 * (1.0 + theta[j].abs());
            tp[j] = theta[j] + h;
            tm[j] = theta[j] - h;
            m.log_terms(&tp, &idx, &mut lp);
            m.log_terms(&tm, &idx, &mut lm);
            for t in 0..k {
                let fd = (lp[t] - lm[t]) / (2.0 * h);
                assert_close(grads[t * d + j], fd, FD_GRAD_TOL, &format!("∂ℓ_{t}/∂θ_{j}"));
            }
            tp[j] = theta[j];
            tm[j] = theta[j];
        }
    }
}

#[test]
fn batch_sums_equal_sums_of_single_terms() {
    let m = model();
    let d = m.dim();
    let theta = random_theta(d, 7, 0.5);
    let all: Vec<u32> = (0..N as u32).collect();
    let singles: Vec<f64> = all
        .iter()
        .map(|&i| {
            let mut o = [0.0];
            m.log_terms(&theta, &[i], &mut o);
            o[0]
        })
        .collect();
    let total: f64 = singles.iter().sum();
    let mut out = vec![0.0; N];
    m.log_terms(&theta, &all, &mut out);
    assert_eq!(out, singles);
    assert_close(m.sum_log_terms(&theta, &all), total, SUM_TOL, "sum_log_terms");
    assert_close(m.sum_log_terms_range(&theta, 0, N as u32), total, SUM_TOL, "range");
    // Summed gradients (accumulating onto the buffer) equal the per-term gradients' sum, and
    // one-index gradient calls.
    let mut gsum: Vec<f64> = (0..d).map(|j| j as f64).collect();
    let t = m.log_terms_grad_sum(&theta, &all, &mut out, &mut gsum);
    assert_close(t, total, SUM_TOL, "grad_sum total");
    assert_eq!(out, singles);
    let mut grads = vec![0.0; N * d];
    m.log_terms_grads(&theta, &all, &mut out, &mut grads);
    let mut grange = vec![0.0; d];
    let tr = m.sum_log_terms_grad_range(&theta, 0, N as u32, &mut grange);
    assert_close(tr, total, SUM_TOL, "grad range total");
    for j in 0..d {
        let per: f64 = (0..N).map(|i| grads[i * d + j]).sum();
        assert_close(gsum[j] - j as f64, per, SUM_TOL, "grad_sum vs per-term");
        assert_close(grange[j], per, SUM_TOL, "grad range vs per-term");
        let mut g1 = vec![0.0; d];
        let mut o = [0.0];
        m.log_terms_grads(&theta, &[5], &mut o, &mut g1);
        assert_eq!(g1[j], grads[5 * d + j]);
    }
    // Logits agree with the terms: ℓ_i = log softmax(o(x_i))_{y_i}.
    let mut o = vec![0.0; K];
    for i in 0..N {
        m.logits(&theta, m.data().row(i), &mut o);
        let lse = o.iter().map(|v| v.exp()).sum::<f64>().ln();
        let y = m.data().y()[i] as usize;
        assert_close(o[y] - lse, singles[i], 1e-12, "logits");
        let best = (0..K).max_by(|&a, &b| o[a].total_cmp(&o[b])).unwrap();
        assert_eq!(m.predict(&theta, m.data().row(i)), best);
    }
}

/// Only the output biases are non-zero, so the logits are exactly b₂.
fn theta_with_output_bias(m: &SoftmaxMlp, b2: [f64; K]) -> Vec<f64> {
    let mut theta = vec![0.0; m.dim()];
    let d = theta.len();
    theta[d - K..].copy_from_slice(&b2);
    theta
}

#[test]
fn log_softmax_is_stable_at_huge_logits() {
    let m = model();
    let d = m.dim();
    // Labels of rows 0..4 are 3, 2, 1, 0.
    let idx = [0u32, 1, 2, 3];
    let b2 = [1e6, -1e6, 0.0, 5e5];
    let theta = theta_with_output_bias(&m, b2);
    let (mut out, mut grads) = (vec![0.0; 4], vec![0.0; 4 * d]);
    m.log_terms_grads(&theta, &idx, &mut out, &mut grads);
    assert_eq!(out, [-5e5, -1e6, -2e6, 0.0]);
    for (t, &y) in [3usize, 2, 1, 0].iter().enumerate() {
        let g = &grads[t * d..(t + 1) * d];
        assert!(g.iter().all(|v| v.is_finite()));
        // ∂ℓ/∂b₂ = e_y − softmax = e_y − e_0.
        for c in 0..K {
            let want = f64::from(u8::from(c == y)) - f64::from(u8::from(c == 0));
            assert_eq!(g[d - K + c], want, "datum {t}, class {c}");
        }
    }
    // A confidently right datum keeps its relative accuracy: ℓ = −log(1 + 3e^{−40}).
    let theta = theta_with_output_bias(&m, [0.0, 0.0, 0.0, 40.0]);
    let (mut o, mut g) = ([0.0], vec![0.0; d]);
    m.log_terms_grads(&theta, &[0], &mut o, &mut g);
    let tail = 3.0 * (-40.0f64).exp();
    assert_close(o[0], -tail, 1e-14 * tail, "tiny ℓ");
    assert!((g[d - 1] - tail).abs() <= 1e-14 * tail, "g_y = Σ_k≠y softmax_k: {}", g[d - 1]);
}

#[test]
fn prior_is_l2_with_curvature_2c() {
    let m = model();
    let d = m.dim();
    let c = m.l2();
    assert_close(m.prior_sd(), (0.5 / c).sqrt(), 1e-15, "prior sd");
    assert_close(m.prior_curvature_bound(), 2.0 * c, 1e-14, "κ");
    assert!(m.prior_hessian_is_constant());
    let theta = random_theta(d, 9, 1.0);
    let sq: f64 = theta.iter().map(|t| t * t).sum();
    let zero = vec![0.0; d];
    assert_close(m.log_prior(&theta) - m.log_prior(&zero), -c * sq, 1e-12, "−c‖θ‖²");
    let mut g = vec![0.0; d];
    m.log_prior_grad(&theta, &mut g);
    let mut h = vec![0.0; d * d];
    m.add_log_prior_hessian(&theta, &mut h);
    for j in 0..d {
        assert_close(g[j], -2.0 * c * theta[j], 1e-12, "prior gradient");
        assert_eq!(h[j * d + j], -m.prior_curvature_bound());
    }
}

#[test]
fn bad_inputs_are_named() {
    let x = vec![0.1; 3 * 2];
    let labels = |y: Vec<f64>| Arc::new(Dataset::with_default_names(x.clone(), y, 2).unwrap());
    let err = SoftmaxMlp::new(labels(vec![0.0, 3.0, 4.0]), 2, 4, 0.01).unwrap_err().to_string();
    assert_eq!(
        err,
        "in-memory data, row 2 (0-based): invalid class label y = 4; expected an integer in 0..4 (K = 4 classes)"
    );
    let err = SoftmaxMlp::new(labels(vec![0.0, 1.5, 1.0]), 2, 4, 0.01).unwrap_err().to_string();
    assert!(err.contains("row 1 (0-based): invalid class label y = 1.5"), "{err}");
    let err = SoftmaxMlp::new(labels(vec![-1.0, 1.0, 1.0]), 2, 4, 0.01).unwrap_err().to_string();
    assert!(err.contains("row 0 (0-based): invalid class label y = -1;"), "{err}");
    let ok = labels(vec![0.0, 1.0, 1.0]);
    for (h, k, c, what) in
        [(0, 2, 0.1, "hidden"), (65, 2, 0.1, "hidden"), (2, 1, 0.1, "classes"), (2, 2, 0.0, "l2")]
    {
        let err = SoftmaxMlp::new(ok.clone(), h, k, c).unwrap_err().to_string();
        assert!(err.starts_with(&format!("invalid {what} = ")), "{err}");
    }
    let err = SoftmaxMlp::new(Dataset::from_response(vec![0.0, 1.0]).unwrap(), 2, 2, 0.1)
        .unwrap_err()
        .to_string();
    assert!(err.contains("inputs"), "{err}");
}
