//! `GaussianRegression`: the shared derivative checker, the generator of Dang et al. §6.7, and
//! non-finite memory-mapped data.

use std::sync::Arc;

use crate::common::*;
use tallmc_core::{ParameterNames, Terms};
use tallmc_models::{DesignOptions, GaussianRegression, read_binary, synthetic, write_binary};

#[test]
fn derivatives_for_every_design() {
    let data = Arc::new(random_dataset(100, 3, 9, gaussian_response));
    for (intercept, standardize) in [(false, false), (true, false), (false, true), (true, true)] {
        let opts = DesignOptions::default().with_intercept(intercept).with_standardize(standardize);
        let m = GaussianRegression::new(data.clone(), opts, 0.7, 5.0).unwrap();
        let d = m.dim();
        let theta: Vec<f64> = (0..d).map(|j| 0.4 * ((j as f64 * 0.7).sin() + 0.1)).collect();
        let v: Vec<f64> = (0..d).map(|j| 1.0 - 0.3 * j as f64).collect();
        check_model(&m, &theta, &[0, 5, 17, 3, 17, 42, 99, 63], &v);
        assert_eq!(m.parameter_names()[0], if intercept { "intercept" } else { "x0" });
        assert_eq!(m.parameter_names()[d - 1], "x2");
    }
}

#[test]
fn generator_recovers_beta_and_is_deterministic() {
    let a = synthetic::gaussian_regression(5_000, 4, 3).unwrap();
    let b = synthetic::gaussian_regression(5_000, 4, 3).unwrap();
    assert_eq!(a.data.x(), b.data.x());
    assert_eq!(a.data.y(), b.data.y());
    assert_eq!(a.theta_true, [0.5, -0.75, 1.0, -1.25]);
    let m = GaussianRegression::new(a.data, DesignOptions::default(), 1.0, 5.0).unwrap();
    let (mean, cov) = m.posterior_mean_covariance().unwrap();
    for j in 0..4 {
        // Posterior sd ≈ 1/√n; the mean is within 5 sds of β.
        let sd = cov[j * 4 + j].sqrt();
        assert!((sd * (5_000f64).sqrt() - 1.0).abs() < 0.1, "sd {sd}");
        assert!(
            (mean[j] - a.theta_true[j]).abs() < 5.0 * sd,
            "{j}: {} vs {}",
            mean[j],
            a.theta_true[j]
        );
    }
    assert!(synthetic::gaussian_regression(10, 0, 1).is_err());
    assert!(synthetic::gaussian_regression(0, 2, 1).is_err());
}

#[test]
fn non_finite_memory_mapped_data_are_named() {
    let sim = synthetic::gaussian_regression(6, 2, 1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (bin, json) = write_binary(&sim.data, dir.path().join("gr")).unwrap();
    let mut bytes = std::fs::read(&bin).unwrap();
    // y of row 4: after the 6 × 2 covariates.
    let at = (12 + 4) * 8;
    bytes[at..at + 8].copy_from_slice(&f64::INFINITY.to_le_bytes());
    std::fs::write(&bin, bytes).unwrap();
    let data = read_binary(&json, false).unwrap();
    let msg =
        GaussianRegression::new(data, DesignOptions::default(), 1.0, 5.0).unwrap_err().to_string();
    assert!(msg.contains("non-finite value inf at row 4") && msg.contains("`y`"), "{msg}");
}
