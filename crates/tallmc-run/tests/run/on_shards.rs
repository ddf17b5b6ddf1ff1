//! Runs over shards that live elsewhere (the driver of a Dask run) against the same work here
//! over the same shards. The set-up (`setup_on_shards` against `setup_local`): the mode, the
//! Laplace covariance, the control variates' sums and the evaluation counts are equal bit for
//! bit — with Newton's warm start (N ≥ 400,000: its rows fetched by global index) and without,
//! for logistic, Poisson with an exposure column and NB2 regression, and with standardized
//! covariates (their column moments computed over the shards first). The draws
//! (`run_on_shards` against `run` on the data cut into the same shards): HMC-ECS whose rows are
//! fetched a window ahead gives the same draws bit for bit, while the driver holds a small part
//! of the rows; so do SMH, MH-SS and TunaMH, whose per-datum constants come from a pass over the
//! shards and whose minibatches' rows are declared ahead. The source here computes each
//! shard's partial on a copy of that shard's rows alone, as a worker does, and serves rows on
//! request.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tallmc_models::Dataset;
use tallmc_run::spec::{HmcEcsSettings, MhSsSettings, SmhSettings, TunaMhSettings};
use tallmc_run::{
    CountSpec, DataSpec, ModelSpec, OffsetSpec, PassKind, RegressionSpec, RunSpec, SamplerSettings,
    ShardSource, ShardedSetup, run, run_on_shards, setup_local, setup_on_shards, shard_sums,
};

const NAMES: [&str; 3] = ["a", "b", "t"];

/// n rows of (a, b, t) with t > 0 an exposure; y a count or 0/1 from a model with effects.
fn rows(n: usize, counts: bool) -> (Vec<f64>, Vec<f64>) {
    let mut state: u64 = 5;
    let mut u = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let (mut x, mut y) = (Vec::with_capacity(3 * n), Vec::with_capacity(n));
    for _ in 0..n {
        let (a, b, t) = (u() * 2.0 - 1.0, u() * 3.0, 0.5 + u());
        x.extend([a, b, t]);
        let eta: f64 = 0.2 + 0.8 * a - 0.3 * b;
        let v = if counts {
            // Inverse-CDF Poisson draw with mean t·e^η (small means).
            let (mut k, mut p, mut c, lambda) = (0.0, 0.0, 0.0, t * eta.exp());
            let target = u();
            loop {
                p = if k == 0.0 { (-lambda).exp() } else { p * lambda / k };
                c += p;
                if c >= target || k > 50.0 {
                    break k;
                }
                k += 1.0;
            }
        } else {
            f64::from(u() < 1.0 / (1.0 + (-eta).exp()))
        };
        y.push(v);
    }
    (x, y)
}

fn dataset(x: &[f64], y: &[f64]) -> Dataset {
    Dataset::new(x.to_vec(), y.to_vec(), NAMES.iter().map(|s| s.to_string()).collect()).unwrap()
}

/// Shards held apart: each pass computes every shard's partial on a copy of its rows only.
struct Apart {
    names: Vec<String>,
    x: Vec<f64>,
    y: Vec<f64>,
    lengths: Vec<u64>,
    fetched: AtomicUsize,
    fail_after: Option<usize>,
    passes: AtomicUsize,
    requests: Mutex<Vec<Option<Vec<u32>>>>,
}

impl Apart {
    fn new(x: &[f64], y: &[f64], lengths: &[u64]) -> Self {
        let names: Vec<String> = NAMES.iter().map(|s| s.to_string()).collect();
        Self::with_names(x, y, lengths, &names)
    }

    fn rows(&self, x: &[f64], y: &[f64]) -> Dataset {
        Dataset::new(x.to_vec(), y.to_vec(), self.names.clone()).unwrap()
    }

    fn with_names(x: &[f64], y: &[f64], lengths: &[u64], names: &[String]) -> Self {
        Self {
            names: names.to_vec(),
            x: x.to_vec(),
            y: y.to_vec(),
            lengths: lengths.to_vec(),
            fetched: AtomicUsize::new(0),
            fail_after: None,
            passes: AtomicUsize::new(0),
            requests: Mutex::new(Vec::new()),
        }
    }
}

impl ShardSource for Apart {
    fn shard_lengths(&self) -> Vec<u64> {
        self.lengths.clone()
    }

    fn partials(
        &self, model: &ModelSpec, theta: &[f64], kind: PassKind,
    ) -> Result<Vec<Vec<f64>>, String> {
        let pass = self.passes.fetch_add(1, Ordering::SeqCst);
        if self.fail_after.is_some_and(|k| pass >= k) {
            return Err("shard 2: the worker holding it was lost".into());
        }
        let n = self.y.len();
        let mut first = 0;
        self.lengths
            .iter()
            .map(|&len| {
                let (a, b) = (first, first + len as usize);
                first = b;
                let p = self.names.len();
                let own = self.rows(&self.x[a * p..b * p], &self.y[a..b]);
                shard_sums(model, own, theta, kind, n).map_err(|e| e.to_string())
            })
            .collect()
    }

    fn request_rows(&self, indices: &[u32]) -> anyhow::Result<u64> {
        let mut requests = self.requests.lock().unwrap();
        requests.push(Some(indices.to_vec()));
        Ok(requests.len() as u64 - 1)
    }

    fn collect_rows(&self, ticket: u64) -> anyhow::Result<Dataset> {
        let indices =
            self.requests.lock().unwrap()[ticket as usize].take().expect("collected once");
        self.fetched.fetch_add(indices.len(), Ordering::SeqCst);
        let p = self.names.len();
        let mut x = Vec::with_capacity(indices.len() * p);
        let mut y = Vec::with_capacity(indices.len());
        for &i in &indices {
            let i = i as usize;
            x.extend_from_slice(&self.x[i * p..(i + 1) * p]);
            y.push(self.y[i]);
        }
        Ok(self.rows(&x, &y))
    }
}

/// Everything but the wall time and the rows held by the driver.
fn numbers(s: &ShardedSetup) -> ShardedSetup {
    ShardedSetup { seconds: 0.0, rows_on_driver: 0, ..s.clone() }
}

fn count_model() -> CountSpec {
    CountSpec {
        regression: RegressionSpec::default(),
        offset: OffsetSpec { offset: None, exposure: Some("t".into()) },
    }
}

fn standardized() -> RegressionSpec {
    RegressionSpec { standardize: true, ..Default::default() }
}

#[test]
fn shards_elsewhere_give_the_local_sharded_setup_bit_for_bit() {
    let cases = [
        ("logistic, warm start", ModelSpec::Logistic(RegressionSpec::default()), false, 450_000),
        ("logistic", ModelSpec::Logistic(RegressionSpec::default()), false, 20_000),
        ("poisson", ModelSpec::Poisson(count_model()), true, 20_000),
        ("negative binomial", ModelSpec::NegativeBinomial(count_model()), true, 20_000),
        ("logistic, standardized", ModelSpec::Logistic(standardized()), false, 20_000),
        (
            "poisson, standardized",
            ModelSpec::Poisson(CountSpec { regression: standardized(), ..count_model() }),
            true,
            20_000,
        ),
    ];
    for (name, model, counts, n) in cases {
        let (x, y) = rows(n, counts);
        // Uneven shards, one of them shorter than a chunk of the reduction.
        let lengths = [n as u64 / 3, 1_000, n as u64 - n as u64 / 3 - 1_000];
        let source = Apart::new(&x, &y, &lengths);
        let remote = setup_on_shards(&model, &source, Some(2)).unwrap();
        let here = dataset(&x, &y).with_shard_lengths(&lengths).unwrap();
        let local = setup_local(&model, here, Some(2)).unwrap();
        assert_eq!(numbers(&remote), numbers(&local), "{name}");
        assert_eq!(remote.shards, 3);
        // A standardizing model's moments are those of its covariates (not a count model's
        // exposure t), over all rows.
        let moments = remote.column_moments.as_ref();
        assert_eq!(moments.is_some(), model.standardizes(), "{name}");
        if let Some(m) = moments {
            assert_eq!(m.mean.len(), if counts { 2 } else { 3 }, "{name}");
            // a ~ U(−1, 1): mean 0, sd 1/√3; b ~ U(0, 3): mean 1.5, sd √3/2 (4 standard errors).
            let se = |sd: f64| 4.0 * sd / (n as f64).sqrt();
            assert!(m.mean[0].abs() < se(3f64.sqrt().recip()), "{name}: {:?}", m.mean);
            assert!((m.mean[1] - 1.5).abs() < se(3f64.sqrt() / 2.0), "{name}: {:?}", m.mean);
            assert!((m.sd[0] - 3f64.sqrt().recip()).abs() < 0.01, "{name}: {:?}", m.sd);
            assert!((m.sd[1] - 3f64.sqrt() / 2.0).abs() < 0.02, "{name}: {:?}", m.sd);
        }
        assert!(remote.control_variate.as_ref().unwrap().hessian.len() == remote.mode.len().pow(2));
        // The driver held the warm-start rows only (or the first row, without a warm start).
        let held = source.fetched.load(Ordering::SeqCst);
        assert_eq!(remote.rows_on_driver, held, "{name}");
        if n >= 400_000 {
            // Every ⌊N / 100,000⌋-th row: between 100,000 and 200,000 of them.
            assert!((100_000..200_000).contains(&held), "{name}: {held} rows fetched");
        } else {
            assert_eq!(held, 1, "{name}");
        }
        // The sharded set-up differs from one shard only by rounding.
        let one = setup_local(&model, dataset(&x, &y), Some(2)).unwrap();
        for (a, b) in local.mode.iter().zip(&one.mode) {
            assert!((a - b).abs() <= 1e-9 * (1.0 + b.abs()), "{name}: {a} vs {b}");
        }
    }
}

#[test]
fn a_failed_pass_is_reported_with_its_cause() {
    let model = ModelSpec::Logistic(RegressionSpec::default());
    let (x, y) = rows(5_000, false);
    let mut source = Apart::new(&x, &y, &[2_500, 2_500]);
    for fail_after in [0, 3] {
        source.fail_after = Some(fail_after);
        source.passes.store(0, Ordering::SeqCst);
        let e = format!("{:#}", setup_on_shards(&model, &source, Some(1)).unwrap_err());
        assert!(e.contains("the worker holding it was lost"), "after {fail_after} passes: {e}");
    }
}

#[test]
fn constant_columns_and_empty_sources_are_refused() {
    let (mut x, y) = rows(100, false);
    x.chunks_exact_mut(3).for_each(|r| r[1] = 2.5);
    // Constant in every shard, and over all of them: named.
    let model = ModelSpec::Logistic(standardized());
    let e = setup_on_shards(&model, &Apart::new(&x, &y, &[60, 40]), None).unwrap_err();
    assert!(format!("{e:#}").contains("column `b` is constant (value 2.5)"), "{e:#}");
    // Constant within each shard only: fine (the moments are those of all the rows).
    x.iter_mut().skip(1).step_by(3).take(60).for_each(|b| *b = 1.0);
    setup_on_shards(&model, &Apart::new(&x, &y, &[60, 40]), None).unwrap();
    // A spec with moments of its own is checked against the covariates.
    let given = ModelSpec::Logistic(RegressionSpec {
        column_moments: Some(tallmc_models::ColumnMoments { mean: vec![0.0], sd: vec![1.0] }),
        ..standardized()
    });
    let e = setup_on_shards(&given, &Apart::new(&x, &y, &[60, 40]), None).unwrap_err();
    assert!(format!("{e:#}").contains("one per covariate (3: a, b, t)"), "{e:#}");
    let plain = ModelSpec::Logistic(RegressionSpec::default());
    let e = setup_on_shards(&plain, &Apart::new(&x, &y, &[0, 0]), None).unwrap_err().to_string();
    assert!(e.contains("no rows"), "{e}");
}

/// Every chain's draws and stats, as bits.
fn bits(r: &tallmc_run::RunResult) -> Vec<Vec<u64>> {
    let d = r.parameter_names.len();
    r.chains
        .iter()
        .map(|c| {
            let mut v: Vec<u64> = (0..d).flat_map(|j| c.coordinate(j)).map(f64::to_bits).collect();
            v.extend(c.stat("lp__").unwrap_or_default().into_iter().map(f64::to_bits));
            v
        })
        .collect()
}

/// `spec` on the rows (x, y) cut into shards of `lengths`: run here, then over shards held
/// apart; (local, remote, the source the remote run read).
fn both_ways(
    spec: &RunSpec, x: &[f64], y: &[f64], lengths: &[u64],
) -> (tallmc_run::RunResult, tallmc_run::RunResult, Apart) {
    let stop = AtomicBool::new(false);
    let here = dataset(x, y).with_shard_lengths(lengths).unwrap();
    let local = run(spec, Some(here), &stop, None).unwrap();
    let source = Apart::new(x, y, lengths);
    let remote = run_on_shards(spec, &source, &stop, None).unwrap();
    (local, remote, source)
}

#[test]
fn hmc_ecs_on_rows_fetched_ahead_gives_the_local_sharded_draws_bit_for_bit() {
    let cases = [
        ("logistic, warm start", ModelSpec::Logistic(RegressionSpec::default()), false, 450_000),
        ("negative binomial", ModelSpec::NegativeBinomial(count_model()), true, 30_000),
        (
            "negative binomial, standardized",
            ModelSpec::NegativeBinomial(CountSpec { regression: standardized(), ..count_model() }),
            true,
            30_000,
        ),
    ];
    for (name, model, counts, n) in cases {
        let (x, y) = rows(n, counts);
        let lengths = [n as u64 / 2, 7_000, n as u64 - n as u64 / 2 - 7_000];
        let sampler =
            SamplerSettings::HmcEcs(HmcEcsSettings { subsample: Some(400), ..Default::default() });
        let mut spec =
            RunSpec::new(model.clone(), DataSpec::Arrays { label: "shards".into() }, sampler);
        // 350 iterations: the rows of three windows of 128 declared, fetched and dropped.
        (spec.chains, spec.warmup, spec.draws, spec.seed) = (2, 150, 200, 11);
        (spec.execution.progress, spec.execution.report) = (false, false);
        let (local, remote, source) = both_ways(&spec, &x, &y, &lengths);
        assert_eq!(remote.parameter_names, local.parameter_names, "{name}");
        assert_eq!(bits(&remote), bits(&local), "{name}: the draws differ");
        // A standardizing run records the moments it computed over the shards with its spec.
        let recorded = &remote.summary["spec"]["model"]["column_moments"];
        assert_eq!(recorded.is_object(), model.standardizes(), "{name}: {recorded}");
        // Rows fetched: the warm start's, then u and the proposals of every window (m + 350
        // refreshes of m/G = 4 rows per chain), far fewer than N.
        let fetched = source.fetched.load(Ordering::SeqCst);
        let warm = if n >= 400_000 { 112_500 } else { 1 };
        let per_chain = 400 + (350 + 2 * 128) * 4;
        assert!(fetched <= warm + 2 * per_chain, "{name}: {fetched} rows fetched");
        assert!(fetched > warm + 2 * 400, "{name}: {fetched} rows fetched");
    }
}

/// `name`'s sampler on `n` logistic rows in three shards, here and elsewhere: the same draws
/// bit for bit; returns the rows fetched from the shards.
fn exact_mh_both_ways(name: &str, sampler: SamplerSettings, n: usize) -> usize {
    let (x, y) = rows(n, false);
    let lengths = [n as u64 / 2, 3_000, n as u64 - n as u64 / 2 - 3_000];
    let model = ModelSpec::Logistic(RegressionSpec::default());
    let mut spec = RunSpec::new(model, DataSpec::Arrays { label: "shards".into() }, sampler);
    (spec.chains, spec.warmup, spec.draws, spec.seed) = (2, 300, 300, 23);
    (spec.execution.progress, spec.execution.report) = (false, false);
    let (local, remote, source) = both_ways(&spec, &x, &y, &lengths);
    assert_eq!(bits(&remote), bits(&local), "{name}: the draws differ");
    let batch = |r: &tallmc_run::RunResult| -> Vec<u64> {
        r.chains.iter().flat_map(|c| c.stat("batch_size__").unwrap()).map(f64::to_bits).collect()
    };
    assert_eq!(batch(&remote), batch(&local), "{name}: the minibatches differ");
    source.fetched.load(Ordering::SeqCst)
}

#[test]
fn exact_minibatch_mh_on_rows_fetched_ahead_gives_the_local_sharded_draws_bit_for_bit() {
    let n = 60_000;
    // SMH-2's minibatches are tiny: their rows, with the windows declared ahead of them, are
    // fewer than N over the whole run. MH-SS (order 1) reads a few percent of the rows per
    // iteration and TunaMH more (C = O(N)): over 1,200 iterations they fetch more rows than N
    // (a row read again after it was dropped is fetched again); only their bits are checked.
    let cases = [
        ("smh --order 2", SamplerSettings::Smh(SmhSettings { order: 2, pcn: None }), true),
        ("smh --pcn 0.5", SamplerSettings::Smh(SmhSettings { order: 2, pcn: Some(0.5) }), true),
        ("mh-ss", SamplerSettings::MhSs(MhSsSettings::default()), false),
        ("tunamh", SamplerSettings::Tunamh(TunaMhSettings { chi: 1e-4 }), false),
    ];
    for (name, sampler, few) in cases {
        let fetched = exact_mh_both_ways(name, sampler, n);
        assert!(fetched > 0, "{name}: no row fetched");
        assert!(!few || fetched < n, "{name}: {fetched} rows of {n} fetched");
    }
}

#[test]
fn exact_minibatch_mh_over_shards_refuses_models_without_the_bound() {
    let stop = AtomicBool::new(false);
    let cases = [
        (
            ModelSpec::Poisson(count_model()),
            SamplerSettings::Smh(SmhSettings::default()),
            "poisson",
        ),
        (
            ModelSpec::Probit(RegressionSpec::default()),
            SamplerSettings::Tunamh(TunaMhSettings::default()),
            "Lipschitz",
        ),
    ];
    for (model, sampler, says) in cases {
        let (x, y) = rows(2_000, matches!(model, ModelSpec::Poisson(_)));
        let source = Apart::new(&x, &y, &[1_000, 1_000]);
        let spec = RunSpec::new(model, DataSpec::Arrays { label: "shards".into() }, sampler);
        let e = run_on_shards(&spec, &source, &stop, None).unwrap_err().to_string();
        assert!(e.contains(says), "{e}");
    }
    let (x, y) = rows(2_000, false);
    // The pass itself names the missing constant.
    let constant = tallmc_core::TermConstant::Lipschitz;
    let e = shard_sums(
        &ModelSpec::Probit(RegressionSpec::default()),
        dataset(&x, &y),
        &[],
        PassKind::TermConstants { constant },
        2_000,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("Lipschitz"), "{e}");
}

#[test]
fn samplers_that_read_every_row_are_refused_over_shards() {
    let model = ModelSpec::Logistic(RegressionSpec::default());
    let (x, y) = rows(1_000, false);
    let source = Apart::new(&x, &y, &[500, 500]);
    let stop = AtomicBool::new(false);
    let cases = [
        (SamplerSettings::Nuts(Default::default()), "nuts over shards"),
        (SamplerSettings::HmcEcs(HmcEcsSettings::default()), "--subsample"),
    ];
    for (sampler, says) in cases {
        let spec =
            RunSpec::new(model.clone(), DataSpec::Arrays { label: "shards".into() }, sampler);
        let e = run_on_shards(&spec, &source, &stop, None).unwrap_err().to_string();
        assert!(e.contains(says), "{e}");
    }
}

/// The design's warnings of a short HMC-ECS run on `x` (columns `names`) and `y`, over three
/// shards elsewhere and here.
fn warnings_both_ways(x: &[f64], y: &[f64], names: &[&str]) -> [Vec<String>; 2] {
    let n = y.len();
    let lengths = [n as u64 / 3, n as u64 / 3, n as u64 - 2 * (n as u64 / 3)];
    let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    let data = || Dataset::new(x.to_vec(), y.to_vec(), names.clone()).unwrap();
    let sampler =
        SamplerSettings::HmcEcs(HmcEcsSettings { subsample: Some(200), ..Default::default() });
    let model = ModelSpec::Logistic(RegressionSpec::default());
    let mut spec = RunSpec::new(model, DataSpec::Arrays { label: "shards".into() }, sampler);
    (spec.chains, spec.warmup, spec.draws, spec.seed) = (1, 20, 20, 3);
    (spec.execution.progress, spec.execution.report) = (false, false);
    let stop = AtomicBool::new(false);
    let here = run(&spec, Some(data().with_shard_lengths(&lengths).unwrap()), &stop, None).unwrap();
    let source = Apart::with_names(x, y, &lengths, &names);
    let remote = run_on_shards(&spec, &source, &stop, None).unwrap();
    let warnings = |r: &tallmc_run::RunResult| -> Vec<String> {
        let w = r.summary["warnings"].as_array().cloned().unwrap_or_default();
        w.iter().filter_map(|v| v.as_str().map(String::from)).collect()
    };
    [warnings(&remote), warnings(&here)]
}

#[test]
fn the_design_checks_run_as_passes_over_the_shards() {
    // A zero column and a column collinear with two others.
    let (x3, y) = rows(6_000, false);
    let mut x = Vec::new();
    for r in x3.chunks_exact(3) {
        x.extend([r[0], r[1], 0.0, r[0] + 2.0 * r[1]]);
    }
    let [remote, here] = warnings_both_ways(&x, &y, &["a", "b", "zero", "e"]);
    assert_eq!(remote, here);
    let all = remote.join(" | ");
    assert!(all.contains("Column `zero` is 0 in every row"), "{all}");
    assert!(all.contains("Column `e` is (nearly) a linear combination"), "{all}");
    // Separated with a margin by a + b > 1.5 together, not by one column: found at the mode.
    let kept: Vec<&[f64]> =
        x3.chunks_exact(3).filter(|r| (r[0] + r[1] - 1.5).abs() > 0.3).collect();
    let y: Vec<f64> = kept.iter().map(|r| f64::from(r[0] + r[1] > 1.5)).collect();
    let [remote, here] = warnings_both_ways(&kept.concat(), &y, &NAMES);
    assert_eq!(remote, here);
    assert!(remote.join(" ").contains("perfectly separated"), "{remote:?}");
}
