//! Per-datum throughput of logistic regression at d = 29 (higgs-like data, in memory), single
//! thread: ℓ_i alone and ℓ_i with ∇ℓ_i summed, over contiguous rows and over batches of random
//! u32 indices, each reported as evaluations per second and as a ratio to a plain dot-product
//! loop (Σ_j x_ij θ_j over the same rows with the same index pattern) timed in the same run.
//!
//! Also, on random rows, the gradient-only control-variate path of the stochastic-gradient
//! kernels (η at θ and θ* from one read of each row, φ′ at both, Σ r_k x_k: two per-datum
//! gradients per row), and the full-data gradient Σ∇ℓ_i at n = 10⁶ on one thread and on all
//! threads (`FullData`, deterministic chunks), as a speed-up.
//!
//! Run: `cargo bench -p tallmc-models --bench term_throughput`. Fixed seeds; data built
//! outside the timed part; one warm-up pass, then the median of REPEATS timed passes.

#![allow(clippy::print_stdout, clippy::print_stderr, missing_docs)]

use std::hint::black_box;
use std::time::Instant;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tallmc_core::{FullData, LinearPredictor, Parallelism, TermGradients};
use tallmc_models::{
    Dataset, DesignOptions, FastLogisticRegression, LogisticRegression, synthetic,
};

const N: usize = 100_000;
const D: usize = 29;
const BATCH: usize = 1_000;
const REPEATS: usize = 9;
/// Evaluations per timed pass (several sweeps of the data).
const EVALS_PER_PASS: usize = 1_000_000;

/// Median seconds of one pass of `f` (after one warm-up pass).
fn median_secs(mut f: impl FnMut() -> f64) -> f64 {
    black_box(f());
    let mut times: Vec<f64> = (0..REPEATS)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[REPEATS / 2]
}

/// The plain baseline: Σ_j x_ij θ_j, naive loop.
#[inline(never)]
fn dot_rows_contiguous(x: &[f64], theta: &[f64], start: usize, end: usize) -> f64 {
    let mut total = 0.0;
    for row in x[start * D..end * D].chunks_exact(D) {
        let mut s = 0.0;
        for (a, b) in row.iter().zip(theta) {
            s += a * b;
        }
        total += s;
    }
    total
}

#[inline(never)]
fn dot_rows_indexed(x: &[f64], theta: &[f64], idx: &[u32]) -> f64 {
    let mut total = 0.0;
    for &i in idx {
        let row = &x[i as usize * D..(i as usize + 1) * D];
        let mut s = 0.0;
        for (a, b) in row.iter().zip(theta) {
            s += a * b;
        }
        total += s;
    }
    total
}

/// The higgs-like data of `n` rows (seed 1), or exit with the error.
fn higgs_like_or_exit(n: usize) -> synthetic::Synthetic {
    synthetic::higgs_like(n, 1).unwrap_or_else(|e| {
        eprintln!("cannot build the data: {e}");
        std::process::exit(1);
    })
}

struct Row {
    name: String,
    secs_per_eval: f64,
    baseline_secs_per_eval: f64,
}

/// What every model's rows are timed with: θ, the random batches and the two baselines.
struct Timing<'a> {
    theta: &'a [f64],
    batches: &'a [Vec<u32>],
    base_contig: f64,
    base_random: f64,
}

impl Timing<'_> {
    /// ℓ_i and ℓ_i with Σ∇ℓ_i of `model`, contiguous and random, as rows of the table.
    fn model_rows<M: TermGradients>(&self, label: &str, model: &M, rows: &mut Vec<Row>) {
        let (theta, batches) = (self.theta, self.batches);
        let (base_contig, base_random) = (self.base_contig, self.base_random);
        let sweeps = EVALS_PER_PASS / N;
        let mut out = vec![0.0; BATCH];
        let mut grad = vec![0.0; D];
        let tag = format!("d={D}/n={N}/batch={BATCH}/{label}");
        let t = median_secs(|| {
            let mut t = 0.0;
            for _ in 0..sweeps {
                for s in (0..N as u32).step_by(BATCH) {
                    t += model.sum_log_terms_range(theta, s, s + BATCH as u32);
                }
            }
            t
        });
        rows.push(Row {
            name: format!("logistic_ll/contiguous/{tag}"),
            secs_per_eval: t / EVALS_PER_PASS as f64,
            baseline_secs_per_eval: base_contig,
        });
        let t = median_secs(|| {
            let mut t = 0.0;
            for b in batches {
                model.log_terms(theta, b, &mut out);
                t += out[0];
            }
            t
        });
        rows.push(Row {
            name: format!("logistic_ll/random/{tag}"),
            secs_per_eval: t / EVALS_PER_PASS as f64,
            baseline_secs_per_eval: base_random,
        });
        let t = median_secs(|| {
            let mut t = 0.0;
            for _ in 0..sweeps {
                for s in (0..N as u32).step_by(BATCH) {
                    grad.fill(0.0);
                    t += model.sum_log_terms_grad_range(theta, s, s + BATCH as u32, &mut grad);
                }
            }
            t + grad[0]
        });
        rows.push(Row {
            name: format!("logistic_ll_grad_sum/contiguous/{tag}"),
            secs_per_eval: t / EVALS_PER_PASS as f64,
            baseline_secs_per_eval: base_contig,
        });
        let t = median_secs(|| {
            let mut t = 0.0;
            for b in batches {
                grad.fill(0.0);
                t += model.log_terms_grad_sum(theta, b, &mut out, &mut grad);
            }
            t + grad[0]
        });
        rows.push(Row {
            name: format!("logistic_ll_grad_sum/random/{tag}"),
            secs_per_eval: t / EVALS_PER_PASS as f64,
            baseline_secs_per_eval: base_random,
        });
    }
}

fn main() {
    let sim = higgs_like_or_exit(N);
    let theta = sim.theta_true.clone();
    let x = sim.data.x().to_vec();
    // The same covariates without the intercept column, standardized on the fly (d = 29 again).
    let x28: Vec<f64> = x.chunks_exact(D).flat_map(|r| r[1..].iter().copied()).collect();
    let standardized_data = Dataset::with_default_names(x28, sim.data.y().to_vec(), D - 1)
        .expect("finite synthetic data");
    let plain = LogisticRegression::new(sim.data, DesignOptions::default(), 10.0)
        .expect("valid higgs-like model");
    let standardized = LogisticRegression::new(
        standardized_data,
        DesignOptions { intercept: true, standardize: true },
        10.0,
    )
    .expect("valid standardized model");
    let fast_plain = FastLogisticRegression::from_design(plain.design().clone(), 10.0)
        .expect("valid higgs-like model");
    let fast_standardized =
        FastLogisticRegression::from_design(standardized.design().clone(), 10.0)
            .expect("valid standardized model");

    let mut rng = ChaCha8Rng::seed_from_u64(20_240_229);
    let batches: Vec<Vec<u32>> = (0..EVALS_PER_PASS / BATCH)
        .map(|_| (0..BATCH).map(|_| rng.random_range(0..N as u32)).collect())
        .collect();
    let sweeps = EVALS_PER_PASS / N;

    // Baselines, timed in this run.
    let base_contig = median_secs(|| {
        let mut t = 0.0;
        for _ in 0..sweeps {
            for s in (0..N).step_by(BATCH) {
                t += dot_rows_contiguous(&x, &theta, s, s + BATCH);
            }
        }
        t
    }) / EVALS_PER_PASS as f64;
    let base_random =
        median_secs(|| batches.iter().map(|b| dot_rows_indexed(&x, &theta, b)).sum::<f64>())
            / EVALS_PER_PASS as f64;

    let mut rows = Vec::new();
    let timing = Timing { theta: &theta, batches: &batches, base_contig, base_random };
    timing.model_rows("plain", &plain, &mut rows);
    timing.model_rows("standardized", &standardized, &mut rows);
    timing.model_rows("plain, fast exp/log1p", &fast_plain, &mut rows);
    timing.model_rows("standardized, fast exp/log1p", &fast_standardized, &mut rows);
    let mut grad = vec![0.0; D];

    // The SG control-variate gradient on random rows: two gradients per row (at θ and θ*).
    let center: Vec<f64> = theta.iter().map(|t| t + 0.01).collect();
    let (mut eta, mut eta_star) = (vec![0.0; BATCH], vec![0.0; BATCH]);
    let (mut d1, mut d1_star) = (vec![0.0; BATCH], vec![0.0; BATCH]);
    let t = median_secs(|| {
        grad.fill(0.0);
        for b in &batches {
            plain.linear_predictor_pairs(&theta, &center, b, &mut eta, &mut eta_star);
            plain.predictor_scores(b, &eta_star, &mut d1_star, None);
            plain.predictor_scores(b, &eta, &mut d1, None);
            for (r, s) in d1.iter_mut().zip(&d1_star) {
                *r -= s;
            }
            plain.add_weighted_rows(b, &d1, &mut grad);
        }
        grad[0]
    });
    rows.push(Row {
        name: format!(
            "cv_gradient_pair/random/d={D}/n={N}/batch={BATCH}/plain (2 gradients per row)"
        ),
        secs_per_eval: t / EVALS_PER_PASS as f64,
        baseline_secs_per_eval: base_random,
    });

    println!(
        "term throughput, single thread, {REPEATS} repeats (median), {EVALS_PER_PASS} evaluations per repeat"
    );
    println!(
        "baseline dot product Σ_j x_ij θ_j (d = {D}): contiguous {:.2} ns/row ({:.1} M rows/s), random {:.2} ns/row ({:.1} M rows/s)",
        base_contig * 1e9,
        1e-6 / base_contig,
        base_random * 1e9,
        1e-6 / base_random
    );
    println!();
    println!("| benchmark | ns/eval | M evals/s/core | × dot product |");
    println!("|---|---:|---:|---:|");
    for r in &rows {
        println!(
            "| {} | {:.2} | {:.2} | {:.2} |",
            r.name,
            r.secs_per_eval * 1e9,
            1e-6 / r.secs_per_eval,
            r.secs_per_eval / r.baseline_secs_per_eval
        );
    }
    full_data_thread_scaling();
}

/// Σ∇ℓ_i over n = 10⁶ rows with [`FullData`] in a rayon pool of one thread and of all the
/// machine's threads (the same deterministic chunks, so the same bits): seconds per pass and the
/// speed-up.
fn full_data_thread_scaling() {
    const N_FULL: usize = 1_000_000;
    let sim = higgs_like_or_exit(N_FULL);
    let theta = sim.theta_true.clone();
    let model = LogisticRegression::new(sim.data, DesignOptions::default(), 10.0)
        .expect("valid higgs-like model");
    let all = std::thread::available_parallelism().map_or(1, usize::from);
    let mut results = Vec::new();
    for threads in [1, all] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
        let mut full = FullData::for_model(&model, Parallelism::Rayon);
        let mut g = vec![0.0; D];
        let secs = pool.install(|| {
            median_secs(|| {
                g.fill(0.0);
                full.log_likelihood_grad(&model, &theta, &mut g) + g[0]
            })
        });
        results.push((threads, secs));
    }
    println!();
    println!("full-data gradient Σ∇ℓ_i, n = {N_FULL}, d = {D} ({REPEATS} repeats, median)");
    println!();
    println!("| threads | ms per gradient | speed-up |");
    println!("|---:|---:|---:|");
    for &(threads, secs) in &results {
        println!("| {threads} | {:.2} | {:.2}× |", secs * 1e3, results[0].1 / secs);
    }
}
