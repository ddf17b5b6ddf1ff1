//! The run value end to end through the library: serialized and read back unchanged, run in
//! memory with the same draws as with files, small data sets that once got wrong defaults,
//! and the design warnings.

use std::sync::atomic::AtomicBool;

use tallmc_models::Dataset;
use tallmc_run::spec::{
    ConfidenceSettings, HmcEcsSettings, NutsSettings, SgldSettings, ZigzagCvSettings,
};
use tallmc_run::{DataSpec, ModelSpec, OutputSpec, RegressionSpec, RunSpec, SamplerSettings};

/// y_i ~ N(1.5, 2²), n values from a fixed LCG-driven Box–Muller.
fn gaussian_values(n: usize) -> Vec<f64> {
    let mut state: u64 = 99;
    let mut uniform = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            let (u, v) = (uniform(), uniform());
            1.5 + 2.0 * (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        })
        .collect()
}

fn gaussian_mean_spec(sampler: SamplerSettings) -> RunSpec {
    let model = ModelSpec::GaussianMean { sigma: 2.0, prior_mean: 0.0, prior_sd: 10.0 };
    let mut spec = RunSpec::new(model, DataSpec::Arrays { label: "test".into() }, sampler);
    spec.chains = 2;
    spec.warmup = 200;
    spec.draws = 300;
    spec.seed = 5;
    spec.execution.progress = false;
    spec.execution.report = false;
    spec
}

fn run(spec: &RunSpec, data: Dataset) -> tallmc_run::RunResult {
    tallmc_run::run(spec, Some(data), &AtomicBool::new(false), None).expect("the run")
}

#[test]
fn every_samplers_settings_survive_a_json_round_trip() {
    let samplers = [
        SamplerSettings::Nuts(NutsSettings { max_depth: 7, ..Default::default() }),
        SamplerSettings::HmcEcs(HmcEcsSettings { subsample: Some(300), ..Default::default() }),
        SamplerSettings::Sgld(SgldSettings::with_step_size(0.01)),
        SamplerSettings::Confidence(ConfidenceSettings { cv: true, ..Default::default() }),
        SamplerSettings::ZigzagCv(ZigzagCvSettings::default()),
    ];
    for sampler in samplers {
        let spec = gaussian_mean_spec(sampler);
        let json = serde_json::to_string(&spec).unwrap();
        let back: RunSpec = serde_json::from_str(&json).unwrap();
        assert_eq!(back, spec, "{json}");
    }
    // The sampler's settings come with the defaults of their definitions when left out.
    let nuts: SamplerSettings = serde_json::from_str(r#"{"name": "nuts"}"#).unwrap();
    assert_eq!(nuts, SamplerSettings::Nuts(NutsSettings::default()));
    // A required setting without a default is an error naming it.
    let e = serde_json::from_str::<SamplerSettings>(r#"{"name": "sgld"}"#).unwrap_err();
    assert!(e.to_string().contains("step_size"), "{e}");
}

#[test]
fn a_run_in_memory_writes_nothing_and_draws_what_a_run_with_files_draws() {
    let ys = gaussian_values(2000);
    let spec = gaussian_mean_spec(SamplerSettings::Nuts(NutsSettings::default()));
    let in_memory = run(&spec, Dataset::from_response(ys.clone()).unwrap());
    assert!(in_memory.summary["spec"]["output"]["dir"].is_null());
    let dir = tempfile::tempdir().unwrap();
    let mut with_files = spec.clone();
    with_files.output = OutputSpec { dir: Some(dir.path().join("run")), overwrite: false };
    let written = run(&with_files, Dataset::from_response(ys).unwrap());
    assert!(dir.path().join("run/summary.json").exists());
    assert_eq!(in_memory.parameter_names, ["mu"]);
    for (a, b) in in_memory.chains.iter().zip(&written.chains) {
        assert_eq!(a.draws.len(), 300);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a.draws), bits(&b.draws));
        assert_eq!(bits(&a.stats), bits(&b.stats));
    }
}

/// Data sets smaller than a default once broke a run: the confidence sampler's first look
/// (100) and HMC-ECS's tuned subsample (at least 100) above N. Both now stop at N.
#[test]
fn defaults_fit_data_sets_smaller_than_them() {
    let ys = gaussian_values(60);
    let confidence = gaussian_mean_spec(SamplerSettings::Confidence(ConfidenceSettings::default()));
    let r = run(&confidence, Dataset::from_response(ys.clone()).unwrap());
    assert_eq!(r.chains[0].num_draws(), 300);
    let ecs = gaussian_mean_spec(SamplerSettings::HmcEcs(HmcEcsSettings::default()));
    let r = run(&ecs, Dataset::from_response(ys).unwrap());
    let m = r.summary["tuning"][0]["estimator"]["subsample_size"].as_u64();
    assert_eq!(m, Some(60), "the tuned m is capped at N: {}", r.summary["tuning"]);
    // An explicit m above N is still an error naming it.
    let too_big = gaussian_mean_spec(SamplerSettings::HmcEcs(HmcEcsSettings {
        subsample: Some(61),
        ..Default::default()
    }));
    let e = tallmc_run::run(
        &too_big,
        Some(Dataset::from_response(gaussian_values(60)).unwrap()),
        &AtomicBool::new(false),
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("--subsample 61: expected 1 ≤ m ≤ N = 60"), "{e}");
}

/// A logistic data set whose covariates are `columns(i)`, with 0/1 responses `label(i)`.
fn logistic_data(n: usize, names: &[&str], row: impl Fn(usize) -> (Vec<f64>, f64)) -> Dataset {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for i in 0..n {
        let (r, label) = row(i);
        x.extend(r);
        y.push(label);
    }
    Dataset::new(x, y, names.iter().map(|s| s.to_string()).collect()).unwrap()
}

fn logistic_warnings(data: Dataset) -> Vec<String> {
    let model = ModelSpec::Logistic(RegressionSpec::default());
    let mut spec = RunSpec::new(
        model,
        DataSpec::Arrays { label: "t".into() },
        SamplerSettings::Nuts(NutsSettings::default()),
    );
    spec.chains = 1;
    spec.warmup = 100;
    spec.draws = 100;
    spec.execution.progress = false;
    spec.execution.report = false;
    let r = run(&spec, data);
    r.summary["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_constant_column_and_separated_classes_are_warned_about() {
    // A pseudo-random but deterministic covariate, and a second one that is constant.
    let z = |i: usize| ((i * 7919) % 1000) as f64 / 500.0 - 1.0;
    let constant = logistic_data(400, &["age", "country"], |i| {
        (vec![z(i), 3.0], f64::from(u8::from((i * 31) % 7 < 3)))
    });
    let w = logistic_warnings(constant);
    assert!(
        w.iter().any(|w| w.contains("`country`") && w.contains("driven by the prior")),
        "{w:?}"
    );
    // y = 1 exactly when age + income > 0, with a margin (rows near the line moved off it):
    // no column alone separates, the mode does.
    let separated = logistic_data(400, &["age", "income"], |i| {
        let (a, b) = (z(i), z(i + 123));
        let shift = if (a + b).abs() < 0.1 { 0.2_f64.copysign(a + b + 1e-9) } else { 0.0 };
        (vec![a + shift, b], f64::from(u8::from(a + b + shift > 0.0)))
    });
    let w = logistic_warnings(separated);
    assert!(w.iter().any(|w| w.contains("perfectly separated")), "{w:?}");
    // Mixed, overlapping classes: no design warning.
    let fine = logistic_data(400, &["age", "income"], |i| {
        (vec![z(i), z(i + 123)], f64::from(u8::from((i * 31) % 7 < 3)))
    });
    let w = logistic_warnings(fine);
    assert!(!w.iter().any(|w| w.contains("prior")), "{w:?}");
}
