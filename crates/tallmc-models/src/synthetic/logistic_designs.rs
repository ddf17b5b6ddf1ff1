//! Logistic-regression designs of the exact minibatch MH suite (`cargo xtask reproduce
//! exact-mh`): an i.i.d. Gaussian design whose size sweeps 10³ … 10⁷ (the scaling figure of
//! Cornish et al. 2019), and a collinear design the size and shape of a real survey data set.

use rand::RngExt;
use rayon::prelude::*;
use serde_json::json;

use super::{BLOCK_ROWS, Synthetic, check_rows, data_rng, normal, sigmoid, tag};
use crate::data::Dataset;
use crate::error::{Error, Result};

const TAG_SCALING: u64 = u64::from_le_bytes(*b"smh-scal");
const TAG_COLLINEAR: u64 = u64::from_le_bytes(*b"collinrr");

/// The coefficients of [`scaling_logistic`]: an intercept of −0.5, then
/// θ_j = (−1)^j (0.25 + 0.25 (j mod 3)), j = 1 … d − 1 (−0.5, 0.75, −0.25, 0.5, −0.75, …):
/// fixed, of order one and alternating, so that every n and d gives the same kind of problem (about 40 %
/// ones, and no covariate separates the classes).
pub fn scaling_logistic_theta(d: usize) -> Vec<f64> {
    (0..d)
        .map(|j| {
            if j == 0 {
                -0.5
            } else {
                let sign = if j % 2 == 0 { 1.0 } else { -1.0 };
                sign * (0.25 + 0.25 * (j % 3) as f64)
            }
        })
        .collect()
}

/// Logistic regression with an intercept and d − 1 independent standard normal covariates:
///
/// * x_i = (1, z_i), z_ij ~ N(0, 1) — the intercept column is stored (fit with
///   `DesignOptions::default()`);
/// * θ_true = [`scaling_logistic_theta`]`(d)`; y_i ~ Bernoulli(σ(x_iᵀθ_true)), drawn as
///   1{u_i < σ(x_iᵀθ_true)}.
///
/// The problem of the SMH scaling figure (Cornish et al. 2019, §5: d = 10, n from 10³ up), whose
/// exact data-generating process the paper leaves open. Row i is drawn from the stream of its
/// block i / [`BLOCK_ROWS`]: d − 1 normals, then u_i. The rows of a smaller n are the first rows of
/// a larger one (same seed): the sizes of a sweep are nested samples. n in 1 ..= u32::MAX, d ≥ 2.
pub fn scaling_logistic(n: usize, d: usize, seed: u64) -> Result<Synthetic> {
    check_rows(n, 1)?;
    if d < 2 {
        return Err(Error::invalid("d", d, "at least 2 (an intercept and a covariate)"));
    }
    let theta = scaling_logistic_theta(d);
    let mut x = vec![0.0; n * d];
    let mut y = vec![0.0; n];
    x.par_chunks_mut(BLOCK_ROWS * d).zip(y.par_chunks_mut(BLOCK_ROWS)).enumerate().for_each(
        |(b, (xb, yb))| {
            let mut rng = data_rng(seed, TAG_SCALING, b as u64);
            for (row, yi) in xb.chunks_exact_mut(d).zip(yb.iter_mut()) {
                row[0] = 1.0;
                let mut eta = theta[0];
                for (v, t) in row[1..].iter_mut().zip(&theta[1..]) {
                    *v = normal(&mut rng);
                    eta += *v * t;
                }
                *yi = if rng.random::<f64>() < sigmoid(eta) { 1.0 } else { 0.0 };
            }
        },
    );
    let mut data = Dataset::with_default_names(x, y, d)?;
    tag(&mut data, "scaling_logistic", "Cornish et al. 2019, section 5", seed, Some(&theta));
    Ok(Synthetic { data, theta_true: theta })
}

/// Rows of [`collinear_logistic`]'s real-like size.
pub const COLLINEAR_N: usize = 37_591;
/// Covariates of [`collinear_logistic`] (plus an intercept: 22 parameters).
pub const COLLINEAR_COVARIATES: usize = 21;
/// AR(1) correlation of neighbouring covariates of [`collinear_logistic`].
pub const COLLINEAR_RHO: f64 = 0.9;
/// Noise sd of covariate 6 about covariate 5 in [`collinear_logistic`] (corr ≈ 0.995).
pub const COLLINEAR_NEAR_COPY_SD: f64 = 0.1;
/// The prior sd every sampler uses on [`collinear_logistic`]: θ ~ N(0, 10² I₂₂).
pub const COLLINEAR_PRIOR_SD: f64 = 10.0;

/// The coefficients of [`collinear_logistic`]: an intercept of −1, then θ_j = 0.6 sin(1.7 j),
/// j = 1 … 21.
pub fn collinear_logistic_theta() -> Vec<f64> {
    std::iter::once(-1.0)
        .chain((1..=COLLINEAR_COVARIATES).map(|j| 0.6 * (1.7 * j as f64).sin()))
        .collect()
}

/// A logistic regression the size and shape of a real tall survey data set: [`COLLINEAR_N`]
/// rows (or `n`), an intercept and 21 strongly collinear covariates — the problem on which the
/// issue found the confidence sampler reading every datum and Austerity biased:
///
/// * z_i1 = ε_i1, z_ij = 0.9 z_i,j−1 + √(1 − 0.81) ε_ij (AR(1), unit variances, corr 0.9^|j−k|),
///   then z_i6 = z_i5 + 0.1 ε′_i (a near-copy: corr(z₅, z₆) ≈ 0.995), ε, ε′ ~ N(0, 1);
/// * x_i = (1, z_i) with the intercept column stored (fit with `DesignOptions::default()`);
/// * θ_true = [`collinear_logistic_theta`]; y_i ~ Bernoulli(σ(x_iᵀθ_true)) as 1{u_i < σ(·)}.
///
/// The same process as the command-line test's `tall.csv` (tallmc-cli's tests), which draws from
/// its own generator and standardizes the columns; this one leaves them raw (means 0, sds about
/// 1). Callers use the prior N(0, [`COLLINEAR_PRIOR_SD`]² I₂₂). A block's stream yields, row by
/// row, ε_i1 … ε_i21, ε′_i, then u_i. n in 1 ..= u32::MAX.
pub fn collinear_logistic(n: usize, seed: u64) -> Result<Synthetic> {
    check_rows(n, 1)?;
    let p = COLLINEAR_COVARIATES;
    let d = p + 1;
    let theta = collinear_logistic_theta();
    let c = (1.0 - COLLINEAR_RHO * COLLINEAR_RHO).sqrt();
    let mut x = vec![0.0; n * d];
    let mut y = vec![0.0; n];
    x.par_chunks_mut(BLOCK_ROWS * d).zip(y.par_chunks_mut(BLOCK_ROWS)).enumerate().for_each(
        |(b, (xb, yb))| {
            let mut rng = data_rng(seed, TAG_COLLINEAR, b as u64);
            for (row, yi) in xb.chunks_exact_mut(d).zip(yb.iter_mut()) {
                row[0] = 1.0;
                let mut prev = normal(&mut rng);
                row[1] = prev;
                for v in &mut row[2..] {
                    prev = COLLINEAR_RHO * prev + c * normal(&mut rng);
                    *v = prev;
                }
                row[6] = row[5] + COLLINEAR_NEAR_COPY_SD * normal(&mut rng);
                let eta: f64 = row.iter().zip(&theta).map(|(v, t)| v * t).sum();
                *yi = if rng.random::<f64>() < sigmoid(eta) { 1.0 } else { 0.0 };
            }
        },
    );
    let mut data = Dataset::with_default_names(x, y, d)?;
    tag(&mut data, "collinear_logistic", "issue 28's real-like survey design", seed, Some(&theta));
    data.set_metadata(
        "covariates",
        json!({"count": p, "ar1_rho": COLLINEAR_RHO,
               "near_copy": {"of": 5, "column": 6, "noise_sd": COLLINEAR_NEAR_COPY_SD}}),
    );
    Ok(Synthetic { data, theta_true: theta })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_sizes_are_nested_samples_and_the_design_is_as_documented() {
        let small = scaling_logistic(5_000, 10, 3).unwrap();
        let large = scaling_logistic(20_000, 10, 3).unwrap();
        assert_eq!(small.data.x(), &large.data.x()[..5_000 * 10]);
        assert_eq!(small.data.y(), &large.data.y()[..5_000]);
        let x = large.data.x();
        assert!(x.chunks(10).all(|r| r[0] == 1.0));
        // Covariate means within 5 standard errors (1/√n) of 0, variances within 5 se of 1.
        let n = 20_000.0;
        for j in 1..10 {
            let col: Vec<f64> = x.chunks(10).map(|r| r[j]).collect();
            let mean = col.iter().sum::<f64>() / n;
            let var = col.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
            assert!(mean.abs() < 5.0 / n.sqrt(), "{j}: mean {mean}");
            assert!((var - 1.0).abs() < 5.0 * (2.0 / n).sqrt(), "{j}: var {var}");
        }
        assert!(scaling_logistic(10, 1, 3).is_err());
    }

    #[test]
    fn collinear_design_has_its_correlations() {
        let s = collinear_logistic(COLLINEAR_N, 5).unwrap();
        let d = COLLINEAR_COVARIATES + 1;
        let x = s.data.x();
        let col = |j: usize| -> Vec<f64> { x.chunks(d).map(|r| r[j]).collect() };
        let corr = |a: &[f64], b: &[f64]| {
            let n = a.len() as f64;
            let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
            let cov: f64 = a.iter().zip(b).map(|(u, v)| (u - ma) * (v - mb)).sum();
            let va: f64 = a.iter().map(|u| (u - ma).powi(2)).sum();
            let vb: f64 = b.iter().map(|v| (v - mb).powi(2)).sum();
            cov / (va * vb).sqrt()
        };
        // Neighbours: 0.9 (se ≈ (1 − ρ²)/√n ≈ 0.001); the near-copy: ≈ 0.995.
        assert!((corr(&col(1), &col(2)) - 0.9).abs() < 0.01);
        assert!((corr(&col(10), &col(11)) - 0.9).abs() < 0.01);
        assert!(corr(&col(5), &col(6)) > 0.99);
        let ones = s.data.y().iter().sum::<f64>() / COLLINEAR_N as f64;
        assert!((0.1..0.9).contains(&ones), "share of ones {ones}");
    }
}
