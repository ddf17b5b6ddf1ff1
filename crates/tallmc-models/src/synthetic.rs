//! Synthetic data of the papers' experiments, each from a `u64` seed.
//!
//! **Randomness.** Every generator draws from ChaCha8 ([`tallmc_core::rng::ChainRng`]) keyed by
//! the seed *and a per-generator tag* (so the data streams never coincide with the chains'
//! streams `chain_rng(seed, k)`, even when a run uses one seed for both), one stream per block
//! of [`BLOCK_ROWS`] rows: block b uses stream b. Blocks are generated in parallel and every
//! reduction (column means and sds) is summed in block order, so the output is bit-identical
//! for any number of threads. Same seed, same platform → same bytes. (The higgs-like data do
//! not reproduce the peer script's numpy bytes; only its data-generating process.)
//!
//! | generator | process | paper |
//! |---|---|---|
//! | [`higgs_like`] | intercept + 28 AR(1) (ρ = 0.3) Gaussian covariates, standardized; θ_true ~ N(0, 0.5² I₂₉) from seed 20240229; y ~ Bernoulli(σ(xᵀθ_true)) | the peers' stand-in for HIGGS (Dang et al. 2019, §6; shared/bench/README.md) |
//! | [`sbps_logistic`] | w ~ U[−5, 5]^d; x ~ N(0, diag(6, 1, …, 1)); y ~ Bernoulli(σ(xᵀw)) | Pakman et al. (2017), §7.1, Fig. 4: d = 20, N = 1000 |
//! | [`confidence_gaussian`] | y ~ N(0, 0.1²) | Bardenet et al. (2014), §4.1, Fig. 4(a, b): n = 10⁵ |
//! | [`confidence_lognormal`] | log y ~ N(0, 2) (variance 2) | Bardenet et al. (2014), §4.1, Fig. 4(c): n = 10⁵ |
//! | [`gaussian_mean_example`] | y ~ N(½, 0.1²), fitted with N(μ, 1) | Bardenet et al. (2014), §4.3, Fig. 7(b): n = 10⁵ … 10¹⁵ |
//! | [`mnist_like`] | 50 "PCA scores" x_k ~ N(0, λ_k), λ_k = 5.5 k^−0.75; y ~ Bernoulli(σ(xᵀθ_true)), sd(xᵀθ_true) = 4 | stand-in for MNIST 7 vs 9 after PCA to 50 dimensions: Korattikara et al. (2014), §6.1, Fig. 2–4 (N = 12,214 train, 2,037 test) |
//! | [`kdd_like`] | intercept + 20 AR(1) Gaussian + 20 standardized binary covariates; y ~ Bernoulli(σ(xᵀθ_true)) | stand-in for KDD99 (41 parameters): Korattikara et al. (2014), §6.2, Fig. 5–6 |
//! | [`two_class_2d`] | y ~ Bernoulli(½); x ~ N(((2y − 1), 0), I₂) | Bardenet et al. (2014), §4.2.1, Fig. 6: the 2-D classification data, n = 10⁷ |
//! | [`gaussian_regression`] | x ~ N(0, I_d), no intercept; β = [`gaussian_regression_beta`]; y = xᵀβ + N(0, 1) | Dang et al. (2019), §6.7, Fig. 7: n = 10⁴, d = 2, 4, …, 256 |
//! | [`scaling_logistic`] | x = (1, z), z ~ N(0, I_{d−1}); θ = [`scaling_logistic_theta`]; y ~ Bernoulli(σ(xᵀθ)) | Cornish et al. (2019), §5: SMH's cost against n, d = 10 |
//! | [`collinear_logistic`] | x = (1, z), z AR(1) with ρ = 0.9 and z₆ = z₅ + N(0, 0.1²); θ = [`collinear_logistic_theta`] | a real survey's size and shape: 37,591 rows, 22 parameters (issue 28) |
//! | [`digits_7x7`] | 7 × 7 images of four digit prototypes (0, 1, 4, 7), shifted ±1 pixel, intensity U[0.6, 1), blurred, N(0, 0.25²) noise, clipped to [0, 1]; the 7 always-empty corner pixels removed (42 inputs) | stand-in for the downsampled 4-digit MNIST of Pakman et al. (2017), §7.3, Fig. 6: N = 8,340, d = 192 with 4 hidden units |

use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;
use serde_json::json;
use tallmc_core::rng::ChainRng;

use crate::data::Dataset;
use crate::error::{Error, Result, check_finite_value, check_positive};

mod digits;
mod logistic_designs;

pub use digits::{
    DIGITS_7X7_BLUR, DIGITS_7X7_CLASSES, DIGITS_7X7_EMPTY, DIGITS_7X7_INPUTS, DIGITS_7X7_N,
    DIGITS_7X7_NOISE_SD, DIGITS_7X7_PIXELS, DIGITS_7X7_SIDE, digits_7x7, digits_7x7_images,
    digits_7x7_kept_pixels,
};
pub use logistic_designs::{
    COLLINEAR_COVARIATES, COLLINEAR_N, COLLINEAR_NEAR_COPY_SD, COLLINEAR_PRIOR_SD, COLLINEAR_RHO,
    collinear_logistic, collinear_logistic_theta, scaling_logistic, scaling_logistic_theta,
};

/// Rows per block; block b of a data set is drawn from ChaCha8 stream b. Part of the
/// value-stability contract: changing it changes every generated data set.
pub const BLOCK_ROWS: usize = 4096;

/// A synthetic data set and the parameter that generated it.
#[derive(Debug)]
pub struct Synthetic {
    /// The data.
    pub data: Dataset,
    /// The true parameter (empty for the response-only toys).
    pub theta_true: Vec<f64>,
}

const TAG_HIGGS: u64 = u64::from_le_bytes(*b"higgs-xy");
const TAG_HIGGS_THETA: u64 = u64::from_le_bytes(*b"higgs-th");
const TAG_SBPS: u64 = u64::from_le_bytes(*b"sbps-lr\0");
const TAG_CONF_NORMAL: u64 = u64::from_le_bytes(*b"conf-nrm");
const TAG_CONF_LOGNORMAL: u64 = u64::from_le_bytes(*b"conf-lgn");
const TAG_GAUSS_MEAN: u64 = u64::from_le_bytes(*b"gau-mean");
const TAG_NORMAL: u64 = u64::from_le_bytes(*b"normal\0\0");
const TAG_LOGNORMAL: u64 = u64::from_le_bytes(*b"lognorml");
const TAG_MNIST: u64 = u64::from_le_bytes(*b"mnist-xy");
const TAG_MNIST_THETA: u64 = u64::from_le_bytes(*b"mnist-th");
const TAG_KDD: u64 = u64::from_le_bytes(*b"kdd99-xy");
const TAG_KDD_THETA: u64 = u64::from_le_bytes(*b"kdd99-th");
const TAG_TWO_CLASS: u64 = u64::from_le_bytes(*b"2class2d");
const TAG_GAUSS_REGR: u64 = u64::from_le_bytes(*b"gau-regr");

/// ChaCha8 keyed by (seed, tag) — 32-byte key = seed (LE) ‖ tag (LE) ‖ 16 zero bytes — on
/// stream `stream`.
pub fn data_rng(seed: u64, tag: u64, stream: u64) -> ChainRng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(&tag.to_le_bytes());
    let mut rng = ChainRng::from_seed(key);
    rng.set_stream(stream);
    rng
}

#[inline]
fn normal(rng: &mut ChainRng) -> f64 {
    StandardNormal.sample(rng)
}

#[inline]
fn sigmoid(eta: f64) -> f64 {
    if eta >= 0.0 {
        1.0 / (1.0 + (-eta).exp())
    } else {
        let e = eta.exp();
        e / (1.0 + e)
    }
}

fn check_rows(n: usize, min: usize) -> Result<()> {
    if n < min || n > u32::MAX as usize {
        return Err(Error::invalid("n", n, format!("{min} ≤ n ≤ {} (indices are u32)", u32::MAX)));
    }
    Ok(())
}

/// Number of covariates of the higgs-like data besides the intercept.
pub const HIGGS_LIKE_COVARIATES: usize = 28;
/// Dimension of θ for the higgs-like data (intercept + 28).
pub const HIGGS_LIKE_DIM: usize = HIGGS_LIKE_COVARIATES + 1;
/// AR(1) correlation of the higgs-like covariates.
pub const HIGGS_LIKE_RHO: f64 = 0.3;
/// The fixed seed of θ_true (the same for every n and data seed).
pub const HIGGS_LIKE_THETA_SEED: u64 = 20_240_229;
/// Standard deviation of θ_true's coordinates.
pub const HIGGS_LIKE_THETA_SD: f64 = 0.5;
/// The prior sd every sampler uses on the higgs-like data: θ ~ N(0, 10² I₂₉).
pub const HIGGS_LIKE_PRIOR_SD: f64 = 10.0;

/// θ_true of the higgs-like data: 29 draws of N(0, 0.5²) from ChaCha8 keyed by the fixed seed
/// [`HIGGS_LIKE_THETA_SEED`] (intercept first).
pub fn higgs_like_theta() -> Vec<f64> {
    let mut rng = data_rng(HIGGS_LIKE_THETA_SEED, TAG_HIGGS_THETA, 0);
    (0..HIGGS_LIKE_DIM).map(|_| HIGGS_LIKE_THETA_SD * normal(&mut rng)).collect()
}

/// The "higgs-like" Bayesian logistic regression data of shared/bench/README.md ("The model"):
///
/// * z_i ∈ ℝ²⁸ with AR(1) correlation 0.3: z_i1 = ε_i1, z_ij = 0.3 z_i,j−1 + √(1 − 0.09) ε_ij,
///   ε_ij ~ N(0, 1), so Cov(z_ij, z_ik) = 0.3^|j−k|;
/// * every covariate column standardized over the n rows (mean 0, population sd 1);
/// * x_i = (1, z̃_i) — the intercept column is stored explicitly (d = 29, as in the binary
///   files), so fit it with `DesignOptions::default()` (no extra intercept, no standardization);
/// * θ_true = [`higgs_like_theta`]; y_i ~ Bernoulli(σ(x_iᵀθ_true)) stored as 0.0 / 1.0, drawn as
///   1{u_i < σ(x_iᵀθ_true)} with u_i ~ U[0, 1).
///
/// Callers use the prior N(0, [`HIGGS_LIKE_PRIOR_SD`]² I₂₉). Row i belongs to block
/// i / [`BLOCK_ROWS`]; a block's stream yields, row by row, ε_i1 … ε_i28 then u_i. Scales to
/// n = 10⁷ (2.3 GB) on all cores; n must be in 2 ..= u32::MAX.
pub fn higgs_like(n: usize, seed: u64) -> Result<Synthetic> {
    check_rows(n, 2)?;
    let d = HIGGS_LIKE_DIM;
    let theta = higgs_like_theta();
    let c = (1.0 - HIGGS_LIKE_RHO * HIGGS_LIKE_RHO).sqrt();
    let mut x = vec![0.0; n * d];
    let mut y = vec![0.0; n];
    // Pass 1: raw AR(1) covariates and the uniforms (kept in y for now); block column sums.
    let sums: Vec<Vec<f64>> = x
        .par_chunks_mut(BLOCK_ROWS * d)
        .zip(y.par_chunks_mut(BLOCK_ROWS))
        .enumerate()
        .map(|(b, (xb, ub))| {
            let mut rng = data_rng(seed, TAG_HIGGS, b as u64);
            let mut sums = vec![0.0; d];
            for (row, u) in xb.chunks_exact_mut(d).zip(ub.iter_mut()) {
                row[0] = 1.0;
                let mut prev = normal(&mut rng);
                row[1] = prev;
                for v in &mut row[2..] {
                    prev = HIGGS_LIKE_RHO * prev + c * normal(&mut rng);
                    *v = prev;
                }
                *u = rng.random::<f64>();
                for (s, v) in sums.iter_mut().zip(row.iter()) {
                    *s += v;
                }
            }
            sums
        })
        .collect();
    let nf = n as f64;
    let mut mean = vec![0.0; d];
    for s in &sums {
        for (m, v) in mean.iter_mut().zip(s) {
            *m += v;
        }
    }
    mean.iter_mut().for_each(|m| *m /= nf);
    // Pass 2: population sds.
    let sq: Vec<Vec<f64>> = x
        .par_chunks(BLOCK_ROWS * d)
        .map(|xb| {
            let mut s = vec![0.0; d];
            for row in xb.chunks_exact(d) {
                for j in 1..d {
                    let dv = row[j] - mean[j];
                    s[j] += dv * dv;
                }
            }
            s
        })
        .collect();
    let mut inv_sd = vec![1.0; d];
    for j in 1..d {
        let ss: f64 = sq.iter().map(|s| s[j]).sum();
        inv_sd[j] = 1.0 / (ss / nf).sqrt();
    }
    // Pass 3: standardize and draw the responses.
    x.par_chunks_mut(BLOCK_ROWS * d).zip(y.par_chunks_mut(BLOCK_ROWS)).for_each(|(xb, yb)| {
        for (row, yi) in xb.chunks_exact_mut(d).zip(yb.iter_mut()) {
            let mut eta = theta[0];
            for j in 1..d {
                row[j] = (row[j] - mean[j]) * inv_sd[j];
                eta += row[j] * theta[j];
            }
            *yi = if *yi < sigmoid(eta) { 1.0 } else { 0.0 };
        }
    });
    let mean_y = crate::data::deterministic_sum(&y) / nf;
    let mut data = Dataset::with_default_names(x, y, d)?;
    data.set_metadata("format", json!("tallmc_higgs_like_v1"));
    data.set_metadata("seed", json!(seed));
    data.set_metadata("theta_seed", json!(HIGGS_LIKE_THETA_SEED));
    data.set_metadata("theta_true", json!(theta));
    data.set_metadata(
        "covariates",
        json!({"count": HIGGS_LIKE_COVARIATES, "ar1_rho": HIGGS_LIKE_RHO,
               "standardized": "per column over the n rows, mean 0, sd 1 (ddof=0)"}),
    );
    data.set_metadata(
        "prior",
        json!({"type": "normal", "mean": 0.0, "sd": HIGGS_LIKE_PRIOR_SD,
               "iid_over": "all 29 coefficients incl. intercept"}),
    );
    data.set_metadata("likelihood", json!("y_i ~ Bernoulli(sigmoid(x_i . theta))"));
    data.set_metadata("mean_y", json!(mean_y));
    data.set_metadata(
        "generator",
        json!({"tallmc": env!("CARGO_PKG_VERSION"), "bit_generator": "ChaCha8",
               "block_rows": BLOCK_ROWS}),
    );
    Ok(Synthetic { data, theta_true: theta })
}

/// Dimension of the SBPS logistic-regression experiment.
pub const SBPS_DIM: usize = 20;
/// Number of observations of the SBPS logistic-regression experiment.
pub const SBPS_N: usize = 1000;
/// Variance of the first covariate in the SBPS experiment (the others have variance 1).
pub const SBPS_FIRST_VARIANCE: f64 = 6.0;

/// The logistic-regression data of Pakman et al. (2017), §7.1 (Fig. 4 uses n = [`SBPS_N`] =
/// 1000, d = [`SBPS_DIM`] = 20; the brief's "§5" is the preconditioning section — the data are
/// in §7.1):
///
/// * w_j ~ U[−5, 5], j = 1..d (θ_true);
/// * x_i ~ N(0, diag(6, 1, …, 1)) — the paper says "one component of the diagonal
///   *covariance* set to 6", so 6 is a **variance**: x_i1 = √6 ε_i1, x_ij = ε_ij otherwise;
/// * y_i ~ Bernoulli(σ(w ᵀx_i)); no intercept (fit with `DesignOptions::default()`).
///
/// Draws: stream 0 yields w (d uniforms); row i is drawn from the stream of its block
/// i / [`BLOCK_ROWS`] + 1: d normals, then the uniform deciding y_i.
pub fn sbps_logistic(n: usize, d: usize, seed: u64) -> Result<Synthetic> {
    check_rows(n, 1)?;
    if d == 0 {
        return Err(Error::invalid("d", 0, "at least one covariate"));
    }
    let mut rng = data_rng(seed, TAG_SBPS, 0);
    let w: Vec<f64> = (0..d).map(|_| rng.random_range(-5.0..5.0)).collect();
    let sd0 = SBPS_FIRST_VARIANCE.sqrt();
    let mut x = vec![0.0; n * d];
    let mut y = vec![0.0; n];
    x.par_chunks_mut(BLOCK_ROWS * d).zip(y.par_chunks_mut(BLOCK_ROWS)).enumerate().for_each(
        |(b, (xb, yb))| {
            let mut rng = data_rng(seed, TAG_SBPS, b as u64 + 1);
            for (row, yi) in xb.chunks_exact_mut(d).zip(yb.iter_mut()) {
                let mut eta = 0.0;
                for (j, v) in row.iter_mut().enumerate() {
                    let scale = if j == 0 { sd0 } else { 1.0 };
                    *v = scale * normal(&mut rng);
                    eta += *v * w[j];
                }
                *yi = if rng.random::<f64>() < sigmoid(eta) { 1.0 } else { 0.0 };
            }
        },
    );
    let mut data = Dataset::with_default_names(x, y, d)?;
    tag(&mut data, "sbps_logistic", "Pakman et al. 2017, section 7.1", seed, Some(&w));
    Ok(Synthetic { data, theta_true: w })
}

/// n values f(ε, u) per row from blocked streams (block b → stream b), in parallel.
fn response_only(
    n: usize, seed: u64, tag: u64, draw: impl Fn(&mut ChainRng) -> f64 + Sync,
) -> Result<Dataset> {
    check_rows(n, 1)?;
    let mut y = vec![0.0; n];
    y.par_chunks_mut(BLOCK_ROWS).enumerate().for_each(|(b, yb)| {
        let mut rng = data_rng(seed, tag, b as u64);
        for v in yb {
            *v = draw(&mut rng);
        }
    });
    Dataset::from_response(y)
}

/// Number of observations of the confidence-sampler toys of Bardenet et al. (2014), §4.1.
pub const CONFIDENCE_TOY_N: usize = 100_000;
/// Standard deviation of the Gaussian toy, §4.1: y ~ N(0, 0.1²).
pub const CONFIDENCE_GAUSSIAN_SD: f64 = 0.1;
/// Variance of log y for the log-normal toy, §4.1: y ~ logN(0, 2).
pub const CONFIDENCE_LOGNORMAL_LOG_VARIANCE: f64 = 2.0;

/// y_i ~ N(0, 0.1²), i < n: the data of Bardenet, Doucet & Holmes (2014), §4.1, Fig. 4(a, b)
/// (n = [`CONFIDENCE_TOY_N`] = 10⁵), fitted with [`crate::Gaussian`] (θ = (μ, log σ), flat
/// priors). Response only (p = 0).
pub fn confidence_gaussian(n: usize, seed: u64) -> Result<Dataset> {
    response_only(n, seed, TAG_CONF_NORMAL, |rng| CONFIDENCE_GAUSSIAN_SD * normal(rng))
}

/// y_i = exp(√2 ε_i), ε_i ~ N(0, 1), i < n: the heavy-tailed data of Bardenet et al. (2014),
/// §4.1, Fig. 4(c), also fitted with [`crate::Gaussian`].
///
/// The paper writes "log N(0, 2)" in the same section where it writes N(0, 0.1²) and
/// N(μ, σ²), i.e. with the *variance* as second argument; so log y ~ N(0, 2): σ_log = √2
/// ([`CONFIDENCE_LOGNORMAL_LOG_VARIANCE`]). Use [`lognormal_sample`] for another reading.
pub fn confidence_lognormal(n: usize, seed: u64) -> Result<Dataset> {
    let s = CONFIDENCE_LOGNORMAL_LOG_VARIANCE.sqrt();
    response_only(n, seed, TAG_CONF_LOGNORMAL, move |rng| (s * normal(rng)).exp())
}

/// Mean of the data of the Gaussian-mean example (Bardenet et al. 2014, §4.3).
pub const GAUSSIAN_MEAN_EXAMPLE_MEAN: f64 = 0.5;
/// Standard deviation σ_X of the data of the Gaussian-mean example.
pub const GAUSSIAN_MEAN_EXAMPLE_SD: f64 = 0.1;
/// The known σ of the fitted model N(μ, σ²) in the Gaussian-mean example.
pub const GAUSSIAN_MEAN_EXAMPLE_MODEL_SIGMA: f64 = 1.0;

/// y_i ~ N(½, 0.1²), i < n: the Gaussian-mean example of Bardenet, Doucet & Holmes (2014,
/// §4.3, Fig. 7(b)). The model is N(μ, 1) with μ unknown — [`crate::GaussianMean`] with
/// σ = [`GAUSSIAN_MEAN_EXAMPLE_MODEL_SIGMA`] = 1 (the paper's prior is not stated; use a wide
/// one) — fitted to X ~ N(½, σ_X²) with σ_X = 0.1, "so that data are clustered in terms of log
/// likelihood". Fig. 7(b) runs n from 10⁵ to 10¹⁵; only n ≤ u32::MAX can be materialized here
/// (the larger n of the paper need a sufficient-statistics model, not a data set).
pub fn gaussian_mean_example(n: usize, seed: u64) -> Result<Dataset> {
    response_only(n, seed, TAG_GAUSS_MEAN, |rng| {
        GAUSSIAN_MEAN_EXAMPLE_MEAN + GAUSSIAN_MEAN_EXAMPLE_SD * normal(rng)
    })
}

/// y_i ~ N(mean, sd²), i < n (blocked ChaCha8 streams as above).
pub fn normal_sample(n: usize, mean: f64, sd: f64, seed: u64) -> Result<Dataset> {
    check_finite_value("mean", mean)?;
    check_positive("sd", sd)?;
    response_only(n, seed, TAG_NORMAL, move |rng| mean + sd * normal(rng))
}

/// y_i = exp(log_mean + log_sd ε_i), ε_i ~ N(0, 1), i < n.
pub fn lognormal_sample(n: usize, log_mean: f64, log_sd: f64, seed: u64) -> Result<Dataset> {
    check_finite_value("log_mean", log_mean)?;
    check_positive("log_sd", log_sd)?;
    response_only(n, seed, TAG_LOGNORMAL, move |rng| (log_mean + log_sd * normal(rng)).exp())
}

/// Rows of logistic-regression data: `fill(row, rng)` writes one row of covariates, then
/// y = 1{u < σ(xᵀθ)} with u ~ U[0, 1) from the same stream. Blocked streams (block b → stream
/// b + 1 of (seed, tag)), generated in parallel, bit-identical for any thread count.
fn logistic_rows(
    n: usize, d: usize, theta: &[f64], seed: u64, tag: u64,
    fill: impl Fn(&mut [f64], &mut ChainRng) + Sync,
) -> (Vec<f64>, Vec<f64>) {
    let mut x = vec![0.0; n * d];
    let mut y = vec![0.0; n];
    x.par_chunks_mut(BLOCK_ROWS * d).zip(y.par_chunks_mut(BLOCK_ROWS)).enumerate().for_each(
        |(b, (xb, yb))| {
            let mut rng = data_rng(seed, tag, b as u64 + 1);
            for (row, yi) in xb.chunks_exact_mut(d).zip(yb.iter_mut()) {
                fill(row, &mut rng);
                let eta: f64 = row.iter().zip(theta).map(|(a, t)| a * t).sum();
                *yi = if rng.random::<f64>() < sigmoid(eta) { 1.0 } else { 0.0 };
            }
        },
    );
    (x, y)
}

/// Training rows of the MNIST-like stand-in (Korattikara et al. 2014, §6.1: 7 vs 9).
pub const MNIST_LIKE_TRAIN: usize = 12_214;
/// Test rows of the MNIST-like stand-in (§6.1, Fig. 3: 2,037 test points).
pub const MNIST_LIKE_TEST: usize = 2_037;
/// Dimension of the MNIST-like stand-in (50 PCA components, no intercept).
pub const MNIST_LIKE_DIM: usize = 50;

/// Variance of the k-th "PCA score" (k = 1 … 50) of the MNIST-like stand-in: 5.5 k^−0.75,
/// decaying like the leading eigenvalues of MNIST digit images scaled to [0, 1] (≈ 5 for the
/// first component, ≈ 0.3 at the fiftieth).
pub fn mnist_like_variance(k: usize) -> f64 {
    5.5 * (k as f64).powf(-0.75)
}

/// A stand-in for the paper's MNIST 7-vs-9 logistic regression after PCA to 50 dimensions
/// (Korattikara, Chen & Welling 2014, §6.1), which tallmc cannot download:
///
/// * x_i ∈ ℝ⁵⁰ with independent x_ik ~ N(0, λ_k), λ_k = [`mnist_like_variance`]`(k)` (PCA scores
///   are uncorrelated with decreasing variances), no intercept (the classes are balanced);
/// * θ_true,k = c z_k / √λ_k with z_k ~ N(0, 1) from a fixed stream, c chosen so that
///   sd(xᵀθ_true) = 4 — classes about as separable as 7 vs 9 (a few percent misclassified);
/// * y_i ~ Bernoulli(σ(x_iᵀθ_true)).
///
/// Returns `n_train` training rows and, separately, `n_test` held-out rows (the suite uses
/// [`MNIST_LIKE_TRAIN`] and [`MNIST_LIKE_TEST`]). θ_true does not depend on `seed`.
pub fn mnist_like(n_train: usize, n_test: usize, seed: u64) -> Result<(Synthetic, Dataset)> {
    check_rows(n_train, 1)?;
    check_rows(n_test, 1)?;
    check_rows(n_train + n_test, 2)?;
    let d = MNIST_LIKE_DIM;
    let sd: Vec<f64> = (1..=d).map(|k| mnist_like_variance(k).sqrt()).collect();
    let mut rng = data_rng(0, TAG_MNIST_THETA, 0);
    let z: Vec<f64> = (0..d).map(|_| normal(&mut rng)).collect();
    let c = 4.0 / z.iter().map(|v| v * v).sum::<f64>().sqrt();
    let theta: Vec<f64> = z.iter().zip(&sd).map(|(zk, s)| c * zk / s).collect();
    let (x, y) = logistic_rows(n_train + n_test, d, &theta, seed, TAG_MNIST, |row, rng| {
        for (v, s) in row.iter_mut().zip(&sd) {
            *v = s * normal(rng);
        }
    });
    let split = n_train * d;
    let test = Dataset::with_default_names(x[split..].to_vec(), y[n_train..].to_vec(), d)?;
    let mut train = Dataset::with_default_names(x[..split].to_vec(), y[..n_train].to_vec(), d)?;
    tag(
        &mut train,
        "mnist_like",
        "Korattikara et al. 2014, section 6.1 (stand-in)",
        seed,
        Some(&theta),
    );
    Ok((Synthetic { data: train, theta_true: theta }, test))
}

/// Dimension of the KDD99-like stand-in: intercept + 20 continuous + 20 binary covariates.
pub const KDD_LIKE_DIM: usize = 41;

/// A stand-in for the paper's KDD99 intrusion-detection logistic regression with 41 parameters
/// (Korattikara, Chen & Welling 2014, §6.2; 10% of ~4 million rows), which tallmc cannot
/// download:
///
/// * x_i0 = 1 (intercept); x_i1 … x_i20 an AR(1) Gaussian sequence with correlation 0.5;
///   x_i21 … x_i40 binary flags 1{u < p_j}, p_j = 0.05 + 0.45 (j − 21)/19, centred and scaled
///   by their known mean and sd (standardized in law);
/// * θ_true = (−1, z₁ … z₄₀) with z ~ N(0, 0.5²) from a fixed stream;
/// * y_i ~ Bernoulli(σ(x_iᵀθ_true)).
pub fn kdd_like(n: usize, seed: u64) -> Result<Synthetic> {
    check_rows(n, 1)?;
    let d = KDD_LIKE_DIM;
    let mut rng = data_rng(0, TAG_KDD_THETA, 0);
    let mut theta: Vec<f64> = (0..d).map(|_| 0.5 * normal(&mut rng)).collect();
    theta[0] = -1.0;
    let c = (1.0f64 - 0.25).sqrt();
    let (x, y) = logistic_rows(n, d, &theta, seed, TAG_KDD, |row, rng| {
        row[0] = 1.0;
        let mut prev = normal(rng);
        row[1] = prev;
        for v in &mut row[2..21] {
            prev = 0.5 * prev + c * normal(rng);
            *v = prev;
        }
        for (j, v) in row[21..].iter_mut().enumerate() {
            let p = 0.05 + 0.45 * j as f64 / 19.0;
            let flag = if rng.random::<f64>() < p { 1.0 } else { 0.0 };
            *v = (flag - p) / (p * (1.0 - p)).sqrt();
        }
    });
    let mut data = Dataset::with_default_names(x, y, d)?;
    tag(
        &mut data,
        "kdd_like",
        "Korattikara et al. 2014, section 6.2 (stand-in)",
        seed,
        Some(&theta),
    );
    Ok(Synthetic { data, theta_true: theta })
}

/// The 2-D binary classification data of Bardenet, Doucet & Holmes (2014, §4.2.1, Fig. 6):
/// "given the label, both classes are sampled from unit Gaussians centered on the x-axis" —
/// y_i ~ Bernoulli(½), x_i ~ N(((2y_i − 1)·1, 0), I₂) (the centres ±1 are our reading; the paper
/// gives no value). Two covariates, no intercept. `theta_true` is the Bayes-optimal logistic
/// coefficient (2, 0): log-odds = 2 x₁ for these class-conditional densities.
pub fn two_class_2d(n: usize, seed: u64) -> Result<Synthetic> {
    check_rows(n, 1)?;
    let d = 2;
    let mut x = vec![0.0; n * d];
    let mut y = vec![0.0; n];
    x.par_chunks_mut(BLOCK_ROWS * d).zip(y.par_chunks_mut(BLOCK_ROWS)).enumerate().for_each(
        |(b, (xb, yb))| {
            let mut rng = data_rng(seed, TAG_TWO_CLASS, b as u64);
            for (row, yi) in xb.chunks_exact_mut(d).zip(yb.iter_mut()) {
                let label = rng.random::<f64>() < 0.5;
                *yi = if label { 1.0 } else { 0.0 };
                row[0] = if label { 1.0 } else { -1.0 } + normal(&mut rng);
                row[1] = normal(&mut rng);
            }
        },
    );
    let mut data = Dataset::with_default_names(x, y, d)?;
    tag(&mut data, "two_class_2d", "Bardenet et al. 2014, section 4.2.1", seed, None);
    Ok(Synthetic { data, theta_true: vec![2.0, 0.0] })
}

/// The noise sd σ of [`gaussian_regression`] (the model's known σ).
pub const GAUSSIAN_REGRESSION_SIGMA: f64 = 1.0;

/// The coefficients of [`gaussian_regression`]: β_j = (−1)^j (½ + (j mod 5)/4), j = 0 … d − 1,
/// i.e. 0.5, −0.75, 1, −1.25, 1.5, −0.5, 0.75, … — fixed (no randomness), of order one, with
/// alternating signs, so that every d gives the same kind of problem.
pub fn gaussian_regression_beta(d: usize) -> Vec<f64> {
    (0..d)
        .map(|j| {
            let sign = if j % 2 == 0 { 1.0 } else { -1.0 };
            sign * (0.5 + (j % 5) as f64 / 4.0)
        })
        .collect()
}

/// The Gaussian (linear) regression data of Dang et al. (2019), §6.7 (Fig. 7: the scaling of
/// HMC-ECS with d; n = 10⁴, d = 2^h, h = 1 … 8), whose data-generating process the paper does not
/// state:
///
/// * x_i ~ N(0, I_d) (d covariates, no intercept — fit with `DesignOptions::default()`);
/// * β = [`gaussian_regression_beta`]`(d)` (the returned `theta_true`);
/// * y_i = x_iᵀβ + e_i, e_i ~ N(0, σ²), σ = [`GAUSSIAN_REGRESSION_SIGMA`] = 1.
///
/// Fitted with [`crate::GaussianRegression`] (σ known) and the paper's prior N(0, 5² I_d), the
/// posterior is Gaussian with covariance ≈ I/n. Row i is drawn from the stream of its block
/// i / [`BLOCK_ROWS`]: d normals (the covariates), then one normal (the noise). n must be in
/// 1 ..= u32::MAX, d ≥ 1.
pub fn gaussian_regression(n: usize, d: usize, seed: u64) -> Result<Synthetic> {
    check_rows(n, 1)?;
    if d == 0 {
        return Err(Error::invalid("d", 0, "at least one covariate"));
    }
    let beta = gaussian_regression_beta(d);
    let mut x = vec![0.0; n * d];
    let mut y = vec![0.0; n];
    x.par_chunks_mut(BLOCK_ROWS * d).zip(y.par_chunks_mut(BLOCK_ROWS)).enumerate().for_each(
        |(b, (xb, yb))| {
            let mut rng = data_rng(seed, TAG_GAUSS_REGR, b as u64);
            for (row, yi) in xb.chunks_exact_mut(d).zip(yb.iter_mut()) {
                let mut eta = 0.0;
                for (v, bj) in row.iter_mut().zip(&beta) {
                    *v = normal(&mut rng);
                    eta += *v * bj;
                }
                *yi = eta + GAUSSIAN_REGRESSION_SIGMA * normal(&mut rng);
            }
        },
    );
    let mut data = Dataset::with_default_names(x, y, d)?;
    tag(&mut data, "gaussian_regression", "Dang et al. 2019, section 6.7", seed, Some(&beta));
    data.set_metadata("sigma", json!(GAUSSIAN_REGRESSION_SIGMA));
    Ok(Synthetic { data, theta_true: beta })
}

/// Records in `data`'s metadata the generator's name and the paper section it reproduces (or
/// stands in for), the seed and, when known, the true parameter θ.
pub(crate) fn tag(
    data: &mut Dataset, generator: &str, paper: &str, seed: u64, theta_true: Option<&[f64]>,
) {
    data.set_metadata("seed", json!(seed));
    if let Some(theta) = theta_true {
        data.set_metadata("theta_true", json!(theta));
    }
    data.set_metadata("generator", json!({"tallmc": generator, "paper": paper}));
}
