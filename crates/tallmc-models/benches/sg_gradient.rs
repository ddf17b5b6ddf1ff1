//! The per-step gradient of the stochastic-gradient kernels with a first-order control variate
//! on one minibatch reused call after call (an SG-HMC trajectory: b = 1,300 random rows of
//! n = 10⁶, d = 29, the fast logistic family): w Σ_k (φ′(x_kᵀθ) − φ′(x_kᵀθ*)) x_k with φ′(η*)
//! cached. Three ways, timed alternately in the same run: the four separate model calls
//! (predictors, scores, coefficients, weighted rows, each a pass over the 1,300 rows), the
//! fused [`LinearPredictor::add_score_differences`] (one pass, 64 rows at a time), and the same
//! on the model's contiguous copy of the minibatch
//! ([`LinearPredictor::add_score_differences_gathered`] after one
//! [`LinearPredictor::gather_rows`], what the SG kernels run). All give the same bits (checked
//! here).
//!
//! Run: `cargo bench -p tallmc-models --bench sg_gradient` (`SG_BATCH=b` for another minibatch
//! size: the cost per row grows once the b rows outgrow the L2 cache). Reports the minimum over
//! ROUNDS of the mean ns per row over CALLS calls (the minimum: the machine is shared).

#![allow(clippy::print_stdout, clippy::print_stderr, missing_docs)]

use std::hint::black_box;
use std::time::Instant;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tallmc_core::{LinearPredictor, RowBatch};
use tallmc_models::{DesignOptions, FastLogisticRegression, synthetic};

const N: usize = 1_000_000;
const CALLS: usize = 2_000;
const ROUNDS: usize = 15;

fn unfused(
    model: &FastLogisticRegression, theta: &[f64], idx: &[u32], d1_star: &[f64], w: f64,
    eta: &mut [f64], d1: &mut [f64], out: &mut [f64],
) {
    model.linear_predictors(theta, idx, eta);
    model.predictor_scores(idx, eta, d1, None);
    for (a, &c) in d1.iter_mut().zip(d1_star) {
        *a = w * (*a - c);
    }
    model.add_weighted_rows(idx, d1, out);
}

fn main() {
    let sim = synthetic::higgs_like(N, 1).unwrap_or_else(|e| {
        eprintln!("cannot build the data: {e}");
        std::process::exit(1);
    });
    let theta = sim.theta_true.clone();
    let star: Vec<f64> = theta.iter().map(|t| t * 0.99).collect();
    let model = FastLogisticRegression::new(sim.data, DesignOptions::default(), 10.0)
        .expect("valid higgs-like model");
    let d = theta.len();
    let batch_size: usize =
        std::env::var("SG_BATCH").ok().and_then(|v| v.parse().ok()).unwrap_or(1_300);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let idx: Vec<u32> = (0..batch_size).map(|_| rng.random_range(0..N as u32)).collect();
    let (mut eta, mut d1_star) = (vec![0.0; batch_size], vec![0.0; batch_size]);
    model.linear_predictors(&star, &idx, &mut eta);
    model.predictor_scores(&idx, &eta, &mut d1_star, None);
    let w = N as f64 / batch_size as f64;

    let mut d1 = vec![0.0; batch_size];
    let (mut a, mut b) = (vec![0.0; d], vec![0.0; d]);
    unfused(&model, &theta, &idx, &d1_star, w, &mut eta, &mut d1, &mut a);
    model.add_score_differences(&theta, &idx, &d1_star, w, &mut b);
    assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()), "fused bits differ");
    let mut batch = RowBatch::default();
    model.gather_rows(&idx, &mut batch);
    assert!(batch.copied, "a GLM gathers");
    let mut g = vec![0.0; d];
    model.add_score_differences_gathered(&batch, &theta, &d1_star, w, &mut g);
    assert!(a.iter().zip(&g).all(|(x, y)| x.to_bits() == y.to_bits()), "gathered bits differ");

    let (mut best_unfused, mut best_fused, mut best_gathered) =
        (f64::INFINITY, f64::INFINITY, f64::INFINITY);
    for _ in 0..ROUNDS {
        let t = Instant::now();
        for _ in 0..CALLS {
            unfused(&model, &theta, &idx, &d1_star, w, &mut eta, &mut d1, &mut a);
        }
        best_unfused = best_unfused.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for _ in 0..CALLS {
            model.add_score_differences(&theta, &idx, &d1_star, w, &mut b);
        }
        best_fused = best_fused.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for _ in 0..CALLS {
            model.add_score_differences_gathered(&batch, &theta, &d1_star, w, &mut g);
        }
        best_gathered = best_gathered.min(t.elapsed().as_secs_f64());
        black_box((&a, &b, &g));
    }
    let per_row = |s: f64| s / (CALLS * batch_size) as f64 * 1e9;
    println!("cached minibatch, b = {batch_size}, n = {N}, d = {d}:");
    println!("  four calls  {:7.2} ns per row", per_row(best_unfused));
    println!("  fused       {:7.2} ns per row", per_row(best_fused));
    println!("  gathered    {:7.2} ns per row", per_row(best_gathered));
    println!("  fused / four calls = {:.2}", best_fused / best_unfused);
    println!("  gathered / four calls = {:.2}", best_gathered / best_unfused);
}
