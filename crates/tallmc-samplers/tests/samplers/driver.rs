//! Driver behaviour: determinism, independence of chain streams, sinks, errors, counts.

use crate::common::LinearGaussian;
use tallmc_core::Parallelism;
use tallmc_integrators::{Metric, MetricKind};
use tallmc_samplers::sink::{CsvSink, MemorySink, Tee};
use tallmc_samplers::{
    AdaptiveMetropolis, AdaptiveMetropolisConfig, Driver, HamiltonianWarmup, Hmc, HmcConfig,
    MetricSetting, NewtonOptions, RandomWalkConfig, RandomWalkMetropolis, RunConfig, SamplerError,
    laplace_approximation, sample_in_memory,
};

fn config(chains: usize, seed: u64) -> RunConfig {
    RunConfig { num_warmup: 200, num_draws: 300, num_chains: chains, seed, save_warmup: false }
}

#[test]
fn same_seed_gives_identical_draws_for_any_thread_count_and_chain_count() {
    // 10,000 rows span three reduction chunks, so the thread count could matter if the
    // reduction were not deterministic. Start from the posterior's scales to keep L small.
    let model = LinearGaussian::new(10_000, 3, 1);
    let (_, cov) = model.posterior();
    let metric = Metric::diagonal((0..3).map(|j| cov[j * 3 + j]).collect()).unwrap();
    let metric = MetricSetting::Adapt { kind: MetricKind::Diagonal, initial: Some(metric) };
    let cfg = HmcConfig {
        warmup: HamiltonianWarmup::default().with_metric(metric),
        ..Default::default()
    };
    let hmc = Hmc::new(cfg).unwrap();
    let a = sample_in_memory(&model, config(3, 42), &[vec![0.0; 3]], &hmc).unwrap();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let b =
        pool.install(|| sample_in_memory(&model, config(3, 42), &[vec![0.0; 3]], &hmc).unwrap());
    let one = sample_in_memory(&model, config(1, 42), &[vec![0.0; 3]], &hmc).unwrap();
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.sink.draws, y.sink.draws);
        assert_eq!(x.sink.stats, y.sink.stats);
    }
    // Chain 0's stream does not depend on how many chains run.
    assert_eq!(a[0].sink.draws, one[0].sink.draws);
    // Different chains and different seeds differ.
    assert_ne!(a[0].sink.draws, a[1].sink.draws);
    let c = sample_in_memory(&model, config(1, 43), &[vec![0.0; 3]], &hmc).unwrap();
    assert_ne!(a[0].sink.draws, c[0].sink.draws);
}

#[test]
fn reported_counts_are_full_data_passes() {
    let n = 5_000;
    let model = LinearGaussian::new(n, 2, 2);
    let out = sample_in_memory(
        &model,
        config(1, 1),
        &[vec![0.0; 2]],
        &RandomWalkMetropolis::new(RandomWalkConfig::default()).unwrap(),
    )
    .unwrap();
    let r = &out[0].report;
    // Every proposal evaluates all N terms (the Gaussian prior is positive everywhere), plus the
    // initial evaluation.
    assert_eq!(r.sampling_evals.terms, 300 * n as u64);
    assert_eq!(r.warmup_evals.terms, 201 * n as u64);
    assert_eq!(r.sampling_evals.gradients, 0);
    let hmc = sample_in_memory(
        &model,
        config(1, 1),
        &[vec![0.0; 2]],
        &Hmc::new(HmcConfig::default()).unwrap(),
    )
    .unwrap();
    let leapfrogs: f64 = hmc[0].sink.stat("n_leapfrog__").unwrap().iter().sum();
    assert_eq!(hmc[0].report.sampling_evals.gradients, leapfrogs as u64 * n as u64);
    assert_eq!(hmc[0].report.sampling_evals.terms, hmc[0].report.sampling_evals.gradients);
}

#[test]
fn csv_sink_writes_cmdstan_layout_and_round_trips() {
    let model = LinearGaussian::new(1_000, 2, 3);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chain_1.csv");
    let sinks = vec![Tee(MemorySink::new(), CsvSink::create(&path).unwrap())];
    let out = Driver::new(config(1, 9))
        .parameter_names(vec!["a".into(), "b".into()])
        .comments(vec![("model".into(), "linear-gaussian".into())])
        .run(&model, &[vec![0.0; 2]], &Hmc::new(HmcConfig::default()).unwrap(), sinks)
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let header = text.lines().find(|l| !l.starts_with('#')).unwrap();
    assert_eq!(
        header,
        "lp__,accept_stat__,accepted__,divergent__,stepsize__,n_leapfrog__,energy__,\
         energy_error__,n_terms__,n_gradients__,n_hessians__,batch_size__,a,b"
    );
    assert!(text.contains("# model = linear-gaussian"));
    assert!(text.contains("# Adaptation terminated\n# Step size = "));
    assert!(text.contains("seconds (Sampling)"));
    let rows: Vec<Vec<f64>> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    let mem = &out[0].sink.0;
    assert_eq!(rows.len(), 300);
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(row[0], mem.log_density[k]);
        assert_eq!(&row[12..], mem.draw(k), "draw {k} does not round-trip exactly");
    }
}

#[test]
fn bad_inputs_are_clear_errors() {
    let model = LinearGaussian::new(100, 2, 4);
    let hmc = Hmc::new(HmcConfig::default()).unwrap();
    let e = sample_in_memory(&model, config(1, 1), &[vec![0.0; 3]], &hmc).unwrap_err();
    assert!(e.to_string().contains("initial position: expected 2, found 3"), "{e}");
    let e = sample_in_memory(&model, config(1, 1), &[vec![0.0, f64::NAN]], &hmc).unwrap_err();
    assert!(e.to_string().contains("non-finite value in initial position"), "{e}");
    let e = sample_in_memory(&model, config(0, 1), &[vec![0.0; 2]], &hmc).unwrap_err();
    assert!(matches!(e, SamplerError::Core(_)), "{e}");
    let mut cfg = HmcConfig::default();
    cfg.warmup.initial_step_size = Some(-1.0);
    let e = Hmc::new(cfg).unwrap_err();
    assert_eq!(e.to_string(), "invalid step_size = -1: expected a finite number > 0");
    let e = Hmc::new(HmcConfig { trajectory_jitter: 1.5, ..Default::default() }).unwrap_err();
    assert!(e.to_string().contains("trajectory_jitter = 1.5"));
    let e =
        AdaptiveMetropolis::new(AdaptiveMetropolisConfig { update_every: 0, ..Default::default() })
            .unwrap_err();
    assert!(e.to_string().contains("update_every = 0"));
    let bad_cov = RandomWalkConfig {
        proposal_covariance: Some(vec![1.0, 2.0, 2.0, 1.0]),
        ..Default::default()
    };
    let e = sample_in_memory(
        &model,
        config(1, 1),
        &[vec![0.0; 2]],
        &RandomWalkMetropolis::new(bad_cov).unwrap(),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("proposal covariance is not symmetric positive definite"),
        "{e}"
    );
}

#[test]
fn divergences_are_reported_not_panics() {
    // A huge fixed step size on a sharply peaked posterior: every trajectory blows up.
    let model = LinearGaussian::new(10_000, 2, 5);
    let cfg = HmcConfig {
        warmup: HamiltonianWarmup {
            initial_step_size: Some(5.0),
            adapt_step_size: false,
            metric: MetricSetting::Fixed(Metric::unit(MetricKind::Diagonal, 2)),
            ..Default::default()
        },
        ..Default::default()
    };
    let out =
        sample_in_memory(&model, config(1, 1), &[vec![0.0; 2]], &Hmc::new(cfg.clone()).unwrap())
            .unwrap();
    assert_eq!(out[0].report.divergences, 300);
    assert!(
        out[0].sink.draws.iter().all(|x| *x == 0.0),
        "a divergent step must not move the chain"
    );
}

#[test]
fn laplace_of_a_gaussian_posterior_is_exact() {
    let model = LinearGaussian::new(2_000, 3, 6);
    let (mean, cov) = model.posterior();
    let opts = NewtonOptions { parallelism: Parallelism::Sequential, ..Default::default() };
    let lap = laplace_approximation(&model, &[5.0, -3.0, 1.0], opts).unwrap();
    for j in 0..3 {
        assert!((lap.mode[j] - mean[j]).abs() < 1e-9, "{:?} vs {mean:?}", lap.mode);
    }
    for (a, b) in lap.covariance.iter().zip(&cov) {
        assert!((a - b).abs() < 1e-9 * b.abs().max(1e-6));
    }
}
