//! Derivatives, batch identities, stability and closed forms of every model.

use std::sync::Arc;

use crate::common::*;
use tallmc_core::{
    FullData, LogPrior, Parallelism, ParameterNames, TermGradients, TermHessians, Terms,
};
use tallmc_models::{
    Dataset, DesignMatrix, DesignOptions, Gaussian, GaussianMean, LinearRegression,
    LogisticRegression, read_binary, write_binary,
};

const ALL_OPTIONS: [DesignOptions; 4] = [
    DesignOptions { intercept: false, standardize: false },
    DesignOptions { intercept: true, standardize: false },
    DesignOptions { intercept: false, standardize: true },
    DesignOptions { intercept: true, standardize: true },
];

fn batch() -> Vec<u32> {
    vec![0, 5, 17, 3, 17, 42, 99, 63]
}

fn theta_for(d: usize, scale: f64) -> Vec<f64> {
    (0..d).map(|j| scale * ((j as f64 * 0.7).sin() + 0.1)).collect()
}

fn direction(d: usize) -> Vec<f64> {
    (0..d).map(|j| 1.0 - 0.3 * j as f64).collect()
}

#[test]
fn logistic_derivatives_for_every_design() {
    let data = Arc::new(random_dataset(100, 4, 1, bernoulli_response));
    for opts in ALL_OPTIONS {
        let m = LogisticRegression::new(data.clone(), opts, 3.0).unwrap();
        let d = m.dim();
        assert_eq!(d, 4 + usize::from(opts.intercept));
        check_model(&m, &theta_for(d, 0.8), &batch(), &direction(d));
        // The design's column names: the covariates' own (x0, x1, …), after `intercept`.
        let mut want = if opts.intercept { vec!["intercept"] } else { vec![] };
        want.extend(["x0", "x1", "x2", "x3"]);
        assert_eq!(m.parameter_names(), want);
    }
}

#[test]
fn linear_regression_derivatives_for_every_design() {
    let data = Arc::new(random_dataset(100, 3, 2, gaussian_response));
    for opts in ALL_OPTIONS {
        let m = LinearRegression::new(data.clone(), opts, 5.0).unwrap();
        let d = m.dim();
        assert_eq!(d, 3 + usize::from(opts.intercept) + 1);
        let mut theta = theta_for(d, 0.5);
        theta[d - 1] = -0.2; // log σ
        check_model(&m, &theta, &batch(), &direction(d));
        let names = m.parameter_names();
        let mut want = if opts.intercept { vec!["intercept"] } else { vec![] };
        want.extend(["x0", "x1", "x2", "log_sigma"]);
        assert_eq!(names, want);
    }
}

#[test]
fn gaussian_derivatives() {
    let data = random_dataset(100, 0, 3, |_, r| 1.5 + 2.0 * normal(r));
    let m = Gaussian::new(data).unwrap();
    for theta in [[0.3, 0.1], [2.0, -0.5], [-1.0, 1.2]] {
        check_model(&m, &theta, &batch(), &[0.7, -1.3]);
    }
    assert_eq!(m.parameter_names(), ["mu", "log_sigma"]);
    assert_eq!(m.log_prior(&[1.0, 2.0]), 0.0);
}

#[test]
fn gaussian_mean_derivatives() {
    let data = random_dataset(100, 0, 4, |_, r| 0.5 + 0.1 * normal(r));
    let m = GaussianMean::new(data, 1.0, 0.2, 3.0).unwrap();
    for theta in [[0.3], [0.55], [-2.0]] {
        check_model(&m, &theta, &batch(), &[1.7]);
    }
    assert_eq!(m.parameter_names(), ["mu"]);
}

/// Standardization and intercept on a memory-mapped file: derivatives hold, and the values
/// are bit-identical to the same model on owned data.
#[test]
fn models_on_a_memory_mapped_file() {
    let dir = tempfile::tempdir().unwrap();
    let owned = random_dataset(100, 5, 5, bernoulli_response);
    write_binary(&owned, dir.path().join("lr.bin")).unwrap();
    let mapped = read_binary(dir.path().join("lr.json"), true).unwrap();
    assert!(mapped.is_memory_mapped());
    let opts = DesignOptions { intercept: true, standardize: true };
    let m_map = LogisticRegression::new(mapped, opts, 2.0).unwrap();
    let m_own = LogisticRegression::new(owned, opts, 2.0).unwrap();
    let theta = theta_for(6, 0.6);
    check_model(&m_map, &theta, &batch(), &direction(6));
    let idx: Vec<u32> = (0..100).collect();
    let (mut a, mut b) = (vec![0.0; 100], vec![0.0; 100]);
    m_map.log_terms(&theta, &idx, &mut a);
    m_own.log_terms(&theta, &idx, &mut b);
    assert_eq!(a, b);
    assert_eq!(m_map.max_row_norm(), m_own.max_row_norm());

    let lin_data = random_dataset(100, 3, 6, gaussian_response);
    write_binary(&lin_data, dir.path().join("lin")).unwrap();
    let lin_map = read_binary(dir.path().join("lin.bin"), true).unwrap();
    let lin = LinearRegression::new(lin_map, opts, 4.0).unwrap();
    let mut theta = theta_for(5, 0.4);
    theta[4] = 0.3;
    check_model(&lin, &theta, &batch(), &direction(5));
}

#[test]
fn logistic_is_stable_at_extreme_linear_predictors() {
    // One covariate of ±800 and θ = 1: η = ±800 for each response.
    let x = vec![800.0, 800.0, -800.0, -800.0];
    let y = vec![1.0, 0.0, 1.0, 0.0];
    let data = Dataset::with_default_names(x, y, 1).unwrap();
    let m = LogisticRegression::new(data, DesignOptions::default(), 10.0).unwrap();
    let idx = [0u32, 1, 2, 3];
    let mut out = [0.0; 4];
    let mut grads = [0.0; 4];
    m.log_terms_grads(&[1.0], &idx, &mut out, &mut grads);
    assert_eq!(out, [0.0, -800.0, -800.0, 0.0]);
    // ∇ℓ = (y − σ(η)) x: σ(800) = 1, σ(−800) = 0.
    assert_eq!(grads, [0.0, -800.0, -800.0, 0.0]);
    let mut hv = [0.0; 4];
    m.hessian_vector_products(&[1.0], &idx, &[1.0], &mut hv);
    assert!(hv.iter().all(|h| h.is_finite() && *h == 0.0));
    let mut g = [0.0];
    let total = m.sum_log_terms_grad_range(&[1.0], 0, 4, &mut g);
    assert_eq!(total, -1600.0);
    assert_eq!(g[0], -1600.0);
}

#[test]
fn logistic_lipschitz_constants_are_row_norms() {
    let data = random_dataset(50, 3, 7, bernoulli_response);
    let opts = DesignOptions { intercept: true, standardize: true };
    let m = LogisticRegression::new(data, opts, 1.0).unwrap();
    let design: &DesignMatrix = m.design();
    let mut max: f64 = 0.0;
    for i in 0..50 {
        let norm = (0..4).map(|j| design.get(i, j).powi(2)).sum::<f64>().sqrt();
        assert_close(m.lipschitz_constant(i), norm, 1e-14, "row norm");
        max = max.max(norm);
    }
    assert_close(m.max_row_norm(), max, 1e-14, "max row norm");
}

#[test]
fn gaussian_mean_posterior_matches_numerical_integration() {
    let data = random_dataset(200, 0, 8, |_, r| 0.5 + 0.1 * normal(r));
    let m = GaussianMean::new(data, 1.0, -0.3, 0.5).unwrap();
    let (mean, sd) = m.posterior_mean_sd();
    // Log posterior on a fine grid around the mode (±12 sd), trapezoid rule on exp(lp − max).
    let mut full = FullData::for_model(&m, Parallelism::Sequential);
    let grid: Vec<f64> =
        (0..=4000).map(|k| mean - 12.0 * sd + 24.0 * sd * k as f64 / 4000.0).collect();
    let lp: Vec<f64> = grid.iter().map(|&mu| full.log_posterior(&m, &[mu])).collect();
    let top = lp.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = lp.iter().map(|v| (v - top).exp()).collect();
    let h = grid[1] - grid[0];
    let integrate = |f: &dyn Fn(usize) -> f64| {
        (0..grid.len())
            .map(|k| f(k) * if k == 0 || k == grid.len() - 1 { 0.5 } else { 1.0 })
            .sum::<f64>()
            * h
    };
    let z = integrate(&|k| w[k]);
    let m1 = integrate(&|k| w[k] * grid[k]) / z;
    let m2 = integrate(&|k| w[k] * (grid[k] - m1).powi(2)) / z;
    assert_close(m1, mean, 1e-9, "posterior mean");
    assert_close(m2.sqrt(), sd, 1e-7, "posterior sd");
    // An independent closed form: the mode of the log posterior (Newton from 0 is exact).
    let mut g = [0.0];
    full.log_posterior_grad(&m, &[0.0], &mut g);
    let mut hess = [0.0];
    full.hessian(&m, &[0.0], &mut hess);
    hess[0] -= 1.0 / 0.25;
    assert_close(0.0 - g[0] / hess[0], mean, 1e-12, "Newton step");
    assert_close((-1.0 / hess[0]).sqrt(), sd, 1e-12, "curvature");
}

#[test]
fn bad_model_inputs_are_rejected_with_clear_messages() {
    let x = vec![0.1, 0.2, 0.3];
    let data = Arc::new(Dataset::with_default_names(x, vec![0.0, 1.0, 0.5], 1).unwrap());
    let err = LogisticRegression::new(data.clone(), DesignOptions::default(), 1.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "in-memory data, row 2 (0-based): invalid response y = 0.5; expected 0 or 1"
    );
    let ok =
        Arc::new(Dataset::with_default_names(vec![0.1, 0.2, 0.3], vec![0.0, 1.0, 1.0], 1).unwrap());
    for sd in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let err = LogisticRegression::new(ok.clone(), DesignOptions::default(), sd).unwrap_err();
        assert!(err.to_string().starts_with("invalid prior_sd = "), "{err}");
        assert!(LinearRegression::new(ok.clone(), DesignOptions::default(), sd).is_err());
    }
    let no_columns = Arc::new(Dataset::from_response(vec![0.0, 1.0]).unwrap());
    let err =
        LogisticRegression::new(no_columns.clone(), DesignOptions::default(), 1.0).unwrap_err();
    assert!(err.to_string().contains("at least one column"), "{err}");
    assert!(
        LogisticRegression::new(no_columns, DesignOptions::default().with_intercept(true), 1.0)
            .is_ok()
    );

    let err = Gaussian::from_observations(vec![1.0]).unwrap_err();
    assert!(err.to_string().contains("n ≥ 2"), "{err}");
    let err = Gaussian::from_observations(vec![2.0, 2.0, 2.0]).unwrap_err();
    assert!(err.to_string().contains("distinct"), "{err}");
    assert!(GaussianMean::from_observations(vec![1.0], 0.0, 0.0, 1.0).is_err());
    assert!(GaussianMean::from_observations(vec![1.0], 1.0, f64::NAN, 1.0).is_err());
    assert!(GaussianMean::from_observations(vec![1.0], 1.0, 0.0, -1.0).is_err());
    assert!(GaussianMean::from_observations(vec![1.0], 1.0, 0.0, 1.0).is_ok());

    let err = Dataset::from_response(vec![1.0, f64::NAN]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "in-memory data: non-finite value NaN at row 1 (0-based), column `y`; expected a finite number"
    );
    let err = Dataset::with_default_names(vec![1.0, 2.0, 3.0], vec![1.0, 2.0], 2).unwrap_err();
    assert!(err.to_string().contains("expected 4, found 3"), "{err}");
    let err = Dataset::new(vec![1.0, 2.0], vec![1.0], vec!["a".into(), "a".into()]).unwrap_err();
    assert!(err.to_string().contains("unique"), "{err}");
}

#[test]
fn full_data_passes_are_deterministic_on_models() {
    let sim = tallmc_models::synthetic::higgs_like(20_000, 3).unwrap();
    let m = LogisticRegression::new(sim.data, DesignOptions::default(), 10.0).unwrap();
    let mut seq = FullData::for_model(&m, Parallelism::Sequential);
    let mut par = FullData::for_model(&m, Parallelism::Rayon);
    let (mut g1, mut g2) = (vec![0.0; 29], vec![0.0; 29]);
    let v1 = seq.log_likelihood_grad(&m, &sim.theta_true, &mut g1);
    let v2 = par.log_likelihood_grad(&m, &sim.theta_true, &mut g2);
    assert_eq!(v1.to_bits(), v2.to_bits());
    assert_eq!(g1, g2);
}

#[test]
fn models_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Dataset>();
    check::<DesignMatrix>();
    check::<LogisticRegression>();
    check::<LinearRegression>();
    check::<Gaussian>();
    check::<GaussianMean>();
    check::<tallmc_models::GaussianRegression>();
    check::<tallmc_models::SoftmaxMlp>();
}
