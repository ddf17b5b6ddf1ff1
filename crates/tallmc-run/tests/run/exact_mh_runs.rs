//! `tallmc sample smh|tunamh|mh-ss` as a run: each kernel on a logistic regression of 20,000
//! rows gives the posterior NUTS gives (means within 4 combined MCSE), reads a small fraction
//! of the rows per iteration (summary.json's data fraction and the `batch_size__` column) — with
//! the random walk and with pCN proposals (`--pcn`) — and
//! models without the bounds a kernel needs are refused, naming the bound and what to use.

use std::sync::atomic::AtomicBool;

use tallmc_models::Dataset;
use tallmc_run::spec::{MhSsSettings, NutsSettings, SmhSettings, TunaMhSettings};
use tallmc_run::{
    CountSpec, DataSpec, ModelSpec, RegressionSpec, RunResult, RunSpec, SamplerSettings,
};

/// n rows of two covariates and a 0/1 response from a logistic model.
fn data(n: usize) -> Dataset {
    let mut state: u64 = 17;
    let mut u = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let (a, b) = (2.0 * u() - 1.0, 2.0 * u() - 1.0);
        x.extend([a, b]);
        let eta = 0.3 + 1.2 * a - 0.8 * b;
        y.push(f64::from(u() < 1.0 / (1.0 + (-eta).exp())));
    }
    Dataset::new(x, y, vec!["a".into(), "b".into()]).unwrap()
}

fn run(model: ModelSpec, sampler: SamplerSettings, data: Dataset) -> anyhow::Result<RunResult> {
    let mut spec = RunSpec::new(model, DataSpec::Arrays { label: "t".into() }, sampler);
    (spec.chains, spec.warmup, spec.draws, spec.seed) = (4, 500, 2_000, 5);
    (spec.execution.progress, spec.execution.report) = (false, false);
    tallmc_run::run(&spec, Some(data), &AtomicBool::new(false), None)
}

/// Per parameter: (mean, MCSE of the mean), from the run's summary.
fn means(r: &RunResult) -> Vec<(f64, f64)> {
    r.summary["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["mean"].as_f64().unwrap(), p["mcse_mean"].as_f64().unwrap()))
        .collect()
}

#[test]
fn the_exact_minibatch_kernels_agree_with_nuts_reading_few_rows() {
    let n = 20_000;
    let logistic = || ModelSpec::Logistic(RegressionSpec::default());
    let nuts = run(logistic(), SamplerSettings::Nuts(NutsSettings::default()), data(n)).unwrap();
    let reference = means(&nuts);
    let kernels = [
        ("smh --order 1", SamplerSettings::Smh(SmhSettings { order: 1, pcn: None }), 0.01),
        ("smh --order 2", SamplerSettings::Smh(SmhSettings { order: 2, pcn: None }), 0.001),
        ("smh --pcn 0.5", SamplerSettings::Smh(SmhSettings { order: 2, pcn: Some(0.5) }), 0.001),
        ("mh-ss", SamplerSettings::MhSs(MhSsSettings::default()), 0.01),
        (
            "mh-ss --pcn 0",
            SamplerSettings::MhSs(MhSsSettings { pcn: Some(0.0), ..Default::default() }),
            0.01,
        ),
        (
            "mh-ss --order 2",
            SamplerSettings::MhSs(MhSsSettings { order: 2, ..Default::default() }),
            0.001,
        ),
        ("tunamh", SamplerSettings::Tunamh(TunaMhSettings::default()), 0.5),
    ];
    for (name, sampler, max_fraction) in kernels {
        let r = run(logistic(), sampler, data(n)).unwrap();
        for (j, ((m, se), (m0, se0))) in means(&r).iter().zip(&reference).enumerate() {
            let z = (m - m0) / (se * se + se0 * se0).sqrt();
            assert!(z.abs() < 4.0, "{name}, parameter {j}: {m} vs NUTS {m0} (z = {z})");
        }
        let fraction = r.summary["totals"]["data_fraction_per_iteration"].as_f64().unwrap();
        assert!(fraction < max_fraction, "{name}: data fraction {fraction}");
        // The summary's largest minibatch: at least the mean, at most N.
        let most = r.summary["totals"]["max_rows_per_iteration"].as_u64().unwrap();
        assert!(most as f64 >= fraction * n as f64 && most as usize <= n, "{name}: max {most}");
        let batches = r.chains[0].stat("batch_size__").unwrap();
        assert!(batches.iter().all(|b| b.is_finite() && *b >= 0.0), "{name}");
        let exceeded: f64 = r.chains[0].stat("bounds_exceeded__").unwrap().iter().sum();
        assert_eq!(exceeded, 0.0, "{name}");
    }
}

#[test]
fn models_without_the_bounds_are_refused_naming_them() {
    let counts = ModelSpec::Poisson(CountSpec::default());
    let e = run(counts, SamplerSettings::Smh(SmhSettings::default()), data(100)).unwrap_err();
    assert!(format!("{e:#}").contains("smh needs per-datum bounds"), "{e:#}");
    let probit = ModelSpec::Probit(RegressionSpec::default());
    let e = run(probit, SamplerSettings::Tunamh(TunaMhSettings::default()), data(100)).unwrap_err();
    let e = format!("{e:#}");
    assert!(
        e.contains("tunamh needs a per-datum Lipschitz bound") && e.contains("use smh or mh-ss"),
        "{e}"
    );
    let bad = SamplerSettings::Smh(SmhSettings { order: 3, pcn: None });
    assert!(bad.validate().unwrap_err().to_string().contains("1 or 2"));
    for rho in [-0.5, 1.0, f64::NAN] {
        let bad = SamplerSettings::Smh(SmhSettings { order: 2, pcn: Some(rho) });
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("pcn") && e.contains("[0, 1)"), "{e}");
        let bad = SamplerSettings::MhSs(MhSsSettings { pcn: Some(rho), ..Default::default() });
        assert!(bad.validate().unwrap_err().to_string().contains("pcn"));
    }
    let bad = SamplerSettings::MhSs(MhSsSettings { order: 0, ..Default::default() });
    assert!(bad.validate().unwrap_err().to_string().contains("1 or 2"));
    let bad = SamplerSettings::Tunamh(TunaMhSettings { chi: -1.0 });
    assert!(bad.validate().unwrap_err().to_string().contains("≥ 0"));
}
