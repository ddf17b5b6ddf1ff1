//! A new generalized-linear-model family is a few dozen lines outside the crate: Poisson
//! regression with the log link, checked by finite differences and the batch identities of
//! `common::check_model`, with its responses validated.

use std::sync::Arc;

use crate::common::*;
use rand::RngExt;
use tallmc_core::{ParameterNames, Terms};
use tallmc_models::glm::{Glm, GlmFamily};
use tallmc_models::{DesignMatrix, DesignOptions};

// ---- The family (the whole of what a user writes) ----------------------------------------

/// Poisson regression with the log link: y ~ Poisson(e^η),
/// φ_y(η) = yη − e^η − log y!, φ′ = y − e^η, φ″ = −e^η (unbounded: no bound sub-traits).
#[derive(Debug, Clone, Copy)]
struct PoissonLog;

/// log y! for a non-negative integer y (small counts: a direct sum).
fn ln_factorial(y: f64) -> f64 {
    (2..=y as u64).map(|k| (k as f64).ln()).sum()
}

impl GlmFamily for PoissonLog {
    fn value(&self, y: f64, eta: f64) -> f64 {
        y * eta - eta.exp() - ln_factorial(y)
    }

    fn derivatives(&self, y: f64, eta: f64) -> (f64, f64, f64) {
        let mean = eta.exp();
        (y * eta - mean - ln_factorial(y), y - mean, -mean)
    }

    fn accepts_response(&self, y: f64) -> bool {
        (0.0..1e6).contains(&y) && y.fract() == 0.0
    }

    fn response_domain(&self) -> &'static str {
        "a non-negative integer below 10^6"
    }
}

// ---- Tests -------------------------------------------------------------------------------

/// Poisson draws by inversion of the cdf (means of order one).
fn poisson_response(eta: f64, r: &mut rand_chacha::ChaCha8Rng) -> f64 {
    let (mean, u) = ((0.5 * eta).exp(), r.random::<f64>());
    let (mut k, mut p) = (0.0, (-mean).exp());
    let mut cdf = p;
    while u > cdf && k < 100.0 {
        k += 1.0;
        p *= mean / k;
        cdf += p;
    }
    k
}

#[test]
fn poisson_family_derivatives_and_batches() {
    let data = Arc::new(random_dataset(100, 3, 31, poisson_response));
    for (intercept, standardize) in [(false, false), (true, false), (false, true), (true, true)] {
        let design = DesignMatrix::new(data.clone(), DesignOptions { intercept, standardize });
        let m = Glm::with_family(PoissonLog, design.unwrap(), 2.0).unwrap();
        let d = m.dim();
        let theta: Vec<f64> = (0..d).map(|j| 0.2 * ((j as f64 * 0.9).sin() + 0.1)).collect();
        let v: Vec<f64> = (0..d).map(|j| 1.0 - 0.4 * j as f64).collect();
        check_model(&m, &theta, &[0, 5, 17, 3, 17, 42, 99, 63], &v);
        assert_eq!(m.parameter_names(), m.design().column_names());
        assert_eq!(m.parameter_names()[d - 1], "x2");
        assert_eq!(m.parameter_names()[0], if intercept { "intercept" } else { "x0" });
        // ℓ_i at θ = 0 is −1 − log y_i! (η = 0).
        let y = m.design().y()[5];
        assert_close(m.log_term(&vec![0.0; d], 5), -1.0 - ln_factorial(y), 1e-14, "ℓ(0)");
    }
}

#[test]
fn poisson_family_rejects_bad_counts_by_row() {
    let x = vec![0.1, 0.2, 0.3, 0.4];
    let data = tallmc_models::Dataset::with_default_names(x, vec![0.0, 3.0, 1.5, 2.0], 1).unwrap();
    let design = DesignMatrix::new(data, DesignOptions::default()).unwrap();
    let err = Glm::with_family(PoissonLog, design, 1.0).unwrap_err().to_string();
    assert_eq!(
        err,
        "in-memory data, row 2 (0-based): invalid response y = 1.5; expected a non-negative integer below 10^6"
    );
}
