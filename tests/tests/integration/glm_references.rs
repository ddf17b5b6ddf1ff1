//! The GLM families on real data against long full-data references (fixtures made by
//! `bench/reference/glm_references.py`: NumPyro NUTS in float64, 4 × 10,000 draws, with a
//! hand-written log likelihood checked against 50-digit mpmath values):
//!
//! * each family's log likelihood equals the 50-digit values at the fixtures' check points
//!   (near the mode, shifted, and far in the tails: huge and tiny dispersions, |η| ≈ 30);
//! * NUTS and HMC-ECS posterior means and sds agree with the reference within 4 combined
//!   MCSE (ours from the run's ESS, the reference's from its own).
//!
//! Data: RAND health insurance experiment (statsmodels, 20,190 rows: Poisson and NB2 on doctor
//! visits), Fair's affairs (6,366 rows: probit on any affair), nycflights13 (10,230 flights:
//! robust regression of arrival delay, heavy tailed).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use serde_json::Value;
use tallmc_core::Terms;
use tallmc_models::dispersion::{NegativeBinomialFamily, StudentTFamily};
use tallmc_models::glm::{PoissonFamily, ProbitFamily};
use tallmc_models::{
    DesignMatrix, DesignOptions, LoadOptions, NegativeBinomialRegression, PoissonRegression,
    ProbitRegression, RobustRegression, load,
};
use tallmc_run::spec::{HmcEcsSettings, NutsSettings};
use tallmc_run::{
    CountSpec, DataSpec, ModelSpec, RegressionSpec, RobustSpec, RunSpec, SamplerSettings,
};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/glm")
}

fn reference(name: &str) -> Value {
    let text = std::fs::read_to_string(fixtures().join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

/// A 20-digit string as f64.
fn digits(v: &Value) -> f64 {
    v.as_str().unwrap().parse().unwrap()
}

/// The fixtures: (reference file, model spec).
fn cases() -> Vec<(&'static str, ModelSpec)> {
    let r = RegressionSpec::default();
    vec![
        ("probit_fair.json", ModelSpec::Probit(r)),
        ("poisson_randhie.json", ModelSpec::Poisson(CountSpec::default())),
        ("negative-binomial_randhie.json", ModelSpec::NegativeBinomial(CountSpec::default())),
        ("robust_nycflights13_flights.json", ModelSpec::Robust(RobustSpec::default())),
    ]
}

/// Σ_i ℓ_i(θ) over all rows, and ℓ_i(θ) of single rows, of the family `spec` on `csv`.
fn log_likelihood(spec: &ModelSpec, csv: &str, theta: &[f64], rows: &[u32]) -> (f64, Vec<f64>) {
    let data = load(fixtures().join(csv), &LoadOptions::default()).unwrap();
    let design = DesignMatrix::new(data, DesignOptions::default().with_intercept(true)).unwrap();
    let n = design.len() as u32;
    fn eval<M: Terms>(m: M, theta: &[f64], n: u32, rows: &[u32]) -> (f64, Vec<f64>) {
        let mut out = vec![0.0; rows.len()];
        m.log_terms(theta, rows, &mut out);
        (m.sum_log_terms_range(theta, 0, n), out)
    }
    match spec {
        ModelSpec::Probit(_) => {
            eval(ProbitRegression::with_family(ProbitFamily, design, 10.0).unwrap(), theta, n, rows)
        }
        ModelSpec::Poisson(_) => eval(
            PoissonRegression::with_family(PoissonFamily, design, 10.0).unwrap(),
            theta,
            n,
            rows,
        ),
        ModelSpec::NegativeBinomial(_) => eval(
            NegativeBinomialRegression::with_family(NegativeBinomialFamily, design, 10.0).unwrap(),
            theta,
            n,
            rows,
        ),
        ModelSpec::Robust(r) => eval(
            RobustRegression::with_family(StudentTFamily::new(r.nu).unwrap(), design, 10.0)
                .unwrap(),
            theta,
            n,
            rows,
        ),
        other => panic!("no reference for {other:?}"),
    }
}

#[test]
fn log_likelihoods_equal_the_50_digit_values() {
    for (file, spec) in cases() {
        let r = reference(file);
        let csv = r["dataset"].as_str().unwrap();
        for check in r["log_likelihood_checks"].as_array().unwrap() {
            let theta = numbers(&check["theta"]);
            let rows: Vec<&Value> = check["rows"].as_array().unwrap().iter().collect();
            let idx: Vec<u32> = rows.iter().map(|v| v["row"].as_u64().unwrap() as u32).collect();
            let (sum, terms) = log_likelihood(&spec, csv, &theta, &idx);
            let want = digits(&check["sum"]);
            let rel = (sum - want).abs() / want.abs();
            assert!(rel < 1e-12, "{file} at {theta:?}: Σℓ = {sum} vs {want} (rel {rel:.1e})");
            for (row, got) in rows.iter().zip(terms) {
                let want = digits(&row["log_term"]);
                let err = (got - want).abs();
                assert!(
                    err < 1e-12 * (1.0 + want.abs()),
                    "{file} row {}: ℓ = {got} vs {want} (error {err:.1e})",
                    row["row"]
                );
            }
        }
    }
}

/// (mean, sd, mcse of the mean, mcse of the sd) per parameter of a run's summary.
fn ours(summary: &Value) -> Vec<[f64; 4]> {
    summary["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| ["mean", "sd", "mcse_mean", "mcse_sd"].map(|k| p[k].as_f64().unwrap()))
        .collect()
}

/// Runs `sampler` on the fixture and checks every mean and sd against the reference within
/// 4 combined MCSE.
fn agrees(file: &str, model: ModelSpec, sampler: SamplerSettings, warmup: usize, draws: usize) {
    let r = reference(file);
    let csv = fixtures().join(r["dataset"].as_str().unwrap());
    let mut spec = RunSpec::new(model, DataSpec::file(csv), sampler);
    (spec.warmup, spec.draws, spec.seed) = (warmup, draws, tallmc_testkit::seed(11));
    (spec.execution.progress, spec.execution.report) = (false, false);
    let result = tallmc_run::run(&spec, None, &AtomicBool::new(false), None).unwrap();
    let names: Vec<&str> =
        r["parameter_names"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(result.parameter_names, names, "{file}");
    let (mean, sd) = (numbers(&r["mean"]), numbers(&r["sd"]));
    let (mcse_mean, mcse_sd) = (numbers(&r["mcse_mean"]), numbers(&r["mcse_sd"]));
    let name = spec.sampler.name();
    for (j, [m, s, em, es]) in ours(&result.summary).into_iter().enumerate() {
        let tol_m = 4.0 * em.hypot(mcse_mean[j]);
        let tol_s = 4.0 * es.hypot(mcse_sd[j]);
        assert!(
            (m - mean[j]).abs() < tol_m,
            "{file} {name} {}: mean {m} vs reference {} (4 combined MCSE = {tol_m:.2e})",
            names[j],
            mean[j]
        );
        assert!(
            (s - sd[j]).abs() < tol_s,
            "{file} {name} {}: sd {s} vs reference {} (4 combined MCSE = {tol_s:.2e})",
            names[j],
            sd[j]
        );
    }
}

#[test]
fn nuts_agrees_with_the_references() {
    for (file, model) in cases() {
        agrees(file, model, SamplerSettings::Nuts(NutsSettings::default()), 400, 600);
    }
}

#[test]
fn hmc_ecs_agrees_with_the_references() {
    for (file, model) in cases() {
        agrees(file, model, SamplerSettings::HmcEcs(HmcEcsSettings::default()), 1000, 1000);
    }
}
