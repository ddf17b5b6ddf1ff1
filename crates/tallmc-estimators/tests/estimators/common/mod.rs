//! Shared fixtures for the estimator tests.
#![allow(dead_code)]

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use tallmc_models::{Dataset, DesignOptions, GaussianMean, LinearRegression, LogisticRegression};

pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(tallmc_testkit::seed(seed))
}

/// A fixed data set (independent of the seed offset): n rows, p covariates, standard normal.
fn covariates(n: usize, p: usize, seed: u64) -> Vec<f64> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..n * p).map(|_| StandardNormal.sample(&mut r)).collect()
}

/// Logistic regression with an intercept: d = p + 1.
pub fn logistic(n: usize, p: usize) -> LogisticRegression {
    let x = covariates(n, p, 7);
    let mut r = ChaCha8Rng::seed_from_u64(8);
    let y: Vec<f64> = (0..n)
        .map(|i| {
            let eta: f64 = 0.3
                + x[i * p..(i + 1) * p]
                    .iter()
                    .enumerate()
                    .map(|(j, v)| v * (0.5 - 0.3 * j as f64))
                    .sum::<f64>();
            let u: f64 = rand::RngExt::random(&mut r);
            f64::from(u < 1.0 / (1.0 + (-eta).exp()))
        })
        .collect();
    let data = Dataset::with_default_names(x, y, p).unwrap();
    LogisticRegression::new(data, DesignOptions::default().with_intercept(true), 10.0).unwrap()
}

/// Linear regression with an intercept: d = p + 2 (β and log σ).
pub fn linear(n: usize, p: usize) -> LinearRegression {
    let x = covariates(n, p, 9);
    let noise = covariates(n, 1, 10);
    let y: Vec<f64> = (0..n)
        .map(|i| 1.0 + x[i * p..(i + 1) * p].iter().sum::<f64>() * 0.7 + 0.5 * noise[i])
        .collect();
    let data = Dataset::with_default_names(x, y, p).unwrap();
    LinearRegression::new(data, DesignOptions::default().with_intercept(true), 10.0).unwrap()
}

/// Gaussian mean with σ = 1.3.
pub fn gaussian_mean(n: usize) -> GaussianMean {
    let y: Vec<f64> = covariates(n, 1, 11).iter().map(|v| 2.0 + 1.3 * v).collect();
    GaussianMean::from_observations(y, 1.3, 0.0, 10.0).unwrap()
}

/// Central finite difference of f at x along each coordinate.
pub fn finite_difference(x: &[f64], step: f64, mut f: impl FnMut(&[f64]) -> f64) -> Vec<f64> {
    let mut y = x.to_vec();
    (0..x.len())
        .map(|j| {
            y[j] = x[j] + step;
            let up = f(&y);
            y[j] = x[j] - step;
            let down = f(&y);
            y[j] = x[j];
            (up - down) / (2.0 * step)
        })
        .collect()
}

pub fn assert_close(got: &[f64], want: &[f64], rel: f64, what: &str) {
    let scale = want.iter().fold(1.0f64, |a, b| a.max(b.abs()));
    for (j, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= rel * scale, "{what}[{j}]: got {g}, want {w} (scale {scale})");
    }
}

/// Running moments of a scalar sample, for z-tests.
#[derive(Debug, Default, Clone)]
pub struct Moments {
    pub values: Vec<f64>,
}

impl Moments {
    pub fn push(&mut self, x: f64) {
        self.values.push(x);
    }
    pub fn mean(&self) -> f64 {
        self.values.iter().sum::<f64>() / self.values.len() as f64
    }
    pub fn var(&self) -> f64 {
        let m = self.mean();
        self.values.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (self.values.len() - 1) as f64
    }
    /// z of the mean against `target`.
    pub fn z_mean(&self, target: f64) -> f64 {
        (self.mean() - target) / (self.var() / self.values.len() as f64).sqrt()
    }
    /// z of the sample variance against `target`, with the standard error from the fourth moment.
    pub fn z_var(&self, target: f64) -> f64 {
        let m = self.mean();
        let n = self.values.len() as f64;
        let s2 = self.var();
        let m4 = self.values.iter().map(|x| (x - m).powi(4)).sum::<f64>() / n;
        (s2 - target) / ((m4 - s2 * s2) / n).sqrt()
    }
}

/// Negative binomial (NB2) regression with an intercept on gamma–Poisson counts (φ = 3):
/// d = p + 2 (β and log φ).
pub fn negative_binomial(n: usize, p: usize) -> tallmc_models::NegativeBinomialRegression {
    use rand_distr::{Gamma, Poisson};
    let x = covariates(n, p, 12);
    let mut r = ChaCha8Rng::seed_from_u64(13);
    let phi = 3.0;
    let y: Vec<f64> = (0..n)
        .map(|i| {
            let eta = 0.8 + x[i * p..(i + 1) * p].iter().sum::<f64>() * 0.4;
            let rate: f64 = Gamma::new(phi, eta.exp() / phi).unwrap().sample(&mut r);
            Poisson::new(rate.max(1e-12)).unwrap().sample(&mut r)
        })
        .collect();
    let data = Dataset::with_default_names(x, y, p).unwrap();
    let options = DesignOptions::default().with_intercept(true);
    tallmc_models::DispersionGlm::new(tallmc_models::NegativeBinomialFamily, data, options, 10.0)
        .unwrap()
}

/// Student-t (ν = 4) robust regression with an intercept on t₃ noise of scale 0.5:
/// d = p + 2 (β and log σ).
pub fn robust(n: usize, p: usize) -> tallmc_models::RobustRegression {
    use rand_distr::StudentT;
    let x = covariates(n, p, 14);
    let mut r = ChaCha8Rng::seed_from_u64(15);
    let t = StudentT::new(3.0).unwrap();
    let y: Vec<f64> = (0..n)
        .map(|i| {
            let noise: f64 = t.sample(&mut r);
            1.0 + x[i * p..(i + 1) * p].iter().sum::<f64>() * 0.7 + 0.5 * noise
        })
        .collect();
    let data = Dataset::with_default_names(x, y, p).unwrap();
    let family = tallmc_models::StudentTFamily::new(4.0).unwrap();
    let options = DesignOptions::default().with_intercept(true);
    tallmc_models::DispersionGlm::new(family, data, options, 10.0).unwrap()
}
