//! Gibbs sampling with a mean test (Austerity §5) on binary models.
//!
//! * Exact Gibbs ([`ExactTest`]) on a 6-variable three-way MRF samples the enumerated joint:
//!   every state's frequency is within [`Z_MAX`] Monte Carlo standard errors of its exact
//!   probability, the MCSE of a frequency being √(p(1 − p)/ESS) with p the *exact* probability
//!   and ESS the effective sample size of the state's indicator series over 4 chains (ArviZ's
//!   `ess_mean`, which accounts for the autocorrelation of the chain). 64 states × 4 sd: a false
//!   failure has probability about 64 · 6.3e-5 ≈ 0.4% if the normal approximation holds (the
//!   smallest exact probability is checked to be large enough for ≥ 100 expected visits).
//! * The per-update decision probability (the "empirical conditional" of Austerity Fig. 7) is
//!   within [`Z_MAX`] binomial sds √(p(1 − p)/R) of the exact conditional.
//! * Determinism, the separate subsampling stream, evaluation counts, no allocation in `step`
//!   (a counting global allocator), errors.
//!
//! Seeds are shifted by the environment variable `TALLMC_SEED_OFFSET` (u64, default 0). Run
//! with `--nocapture` to see the measured numbers.

#![allow(clippy::print_stderr)]

use rand::{Rng, RngExt};
use tallmc_bounds::{Decision, ExactTest, MeanTest, Population};
use tallmc_core::rng::chain_rng;
use tallmc_core::{BinaryFactors, Chain, Kernel, StepStats};
use tallmc_diagnostics::ess_mean;
use tallmc_models::ThreeWayMrf;
use tallmc_models::mrf::state_index;
use tallmc_samplers::{
    ApproximateGibbs, GibbsConfig, GibbsStats, RunConfig, Scan, empirical_conditional,
    sample_in_memory,
};
use tallmc_testkit::assert_allocation_free;

use tallmc_testkit::{Z_MAX, seed};

// ---------------------------------------------------------------------------------------------
// Allocation counting (per thread, so tests running in parallel do not disturb each other).

// ---------------------------------------------------------------------------------------------
// Test-local tests and models.

/// Uses every value, drawn in chunks whose sizes (1 to 5) are drawn from the test's RNG: the
/// exact decision, with a different number of looks and different RNG consumption than
/// [`ExactTest`].
#[derive(Clone, Debug, Default)]
struct RandomChunksExact {
    buffer: [f64; 5],
}

impl MeanTest for RandomChunksExact {
    fn decide<P: Population + ?Sized, R: Rng + ?Sized>(
        &mut self, population: &mut P, threshold: f64, rng: &mut R,
    ) -> tallmc_bounds::Result<Decision> {
        let n = population.size();
        let (mut sum, mut looks) = (0.0, 0);
        while population.drawn() < n {
            let k = rng.random_range(1..=5usize).min(n - population.drawn());
            population.draw(&mut self.buffer[..k], rng);
            sum += self.buffer[..k].iter().sum::<f64>();
            looks += 1;
        }
        let mean = sum / n as f64;
        Ok(Decision { above: mean > threshold, used: n, looks, mean, half_width: 0.0 })
    }
    fn needs_range(&self) -> bool {
        false
    }
    fn check_population_size(&self, n: usize) -> tallmc_bounds::Result<()> {
        if n == 0 { Err(tallmc_bounds::Error::EmptyPopulation) } else { Ok(()) }
    }
    fn describe(&self) -> Vec<(String, String)> {
        vec![("test".into(), "exact in random chunks".into())]
    }
}

/// Decides from the mean of the first m values alone (a crude approximate test), and records
/// the population's range bound.
#[derive(Clone, Debug)]
struct FirstBatch {
    m: usize,
    buffer: Vec<f64>,
    needs_range: bool,
    last_range: Option<f64>,
}

impl FirstBatch {
    fn new(m: usize) -> Self {
        Self { m, buffer: vec![0.0; m], needs_range: false, last_range: None }
    }
}

impl MeanTest for FirstBatch {
    fn decide<P: Population + ?Sized, R: Rng + ?Sized>(
        &mut self, population: &mut P, threshold: f64, rng: &mut R,
    ) -> tallmc_bounds::Result<Decision> {
        self.last_range = population.range();
        let k = self.m.min(population.size());
        population.draw(&mut self.buffer[..k], rng);
        if let Some((index, &value)) =
            self.buffer[..k].iter().enumerate().find(|v| !v.1.is_finite())
        {
            return Err(tallmc_bounds::Error::NonFiniteValue { value, index });
        }
        let mean = self.buffer[..k].iter().sum::<f64>() / k as f64;
        Ok(Decision { above: mean > threshold, used: k, looks: 1, mean, half_width: f64::NAN })
    }
    fn needs_range(&self) -> bool {
        self.needs_range
    }
    fn check_population_size(&self, n: usize) -> tallmc_bounds::Result<()> {
        if n == 0 {
            Err(tallmc_bounds::Error::EmptyPopulation)
        } else if n > 1000 {
            Err(tallmc_bounds::Error::invalid("population size", n, "at most 1000 (test)"))
        } else {
            Ok(())
        }
    }
    fn describe(&self) -> Vec<(String, String)> {
        vec![("test".into(), format!("first {} values", self.m))]
    }
}

/// Variables whose factor log-ratios do not depend on x: P(x_i = 1 | x_−i) = σ(Σ_n c_{i,n}),
/// the variables independent. Variable i has `values[i].len()` factors (possibly none).
struct Independent {
    values: Vec<Vec<f64>>,
    bound: Option<f64>,
}

impl Independent {
    fn new(values: Vec<Vec<f64>>) -> Self {
        Self { values, bound: None }
    }
    fn conditional(&self, i: usize) -> f64 {
        1.0 / (1.0 + (-self.values[i].iter().sum::<f64>()).exp())
    }
}

impl BinaryFactors for Independent {
    fn num_variables(&self) -> usize {
        self.values.len()
    }
    fn num_factors(&self, i: usize) -> usize {
        self.values[i].len()
    }
    fn factor_log_ratios(&self, i: usize, _x: &[f64], factors: &[u32], out: &mut [f64]) {
        for (o, &f) in out.iter_mut().zip(factors) {
            *o = self.values[i][f as usize];
        }
    }
    fn log_ratio_bound(&self, i: usize) -> f64 {
        self.bound.unwrap_or_else(|| self.values[i].iter().fold(0.0, |m: f64, v| m.max(v.abs())))
    }
}

fn independent_model() -> Independent {
    // N_i = 0, 3, 6, 9, 12 factors; Σ_n c_{i,n} = 0, 0.075, −0.6, 1.575, −3.0.
    Independent::new(
        (0..5)
            .map(|i| {
                let sign = if i % 2 == 0 { -1.0 } else { 1.0 };
                (0..3 * i).map(|n| sign * 0.05 * (n as f64 - 0.5)).collect()
            })
            .collect(),
    )
}

fn kernel<T: MeanTest>(test: T) -> ApproximateGibbs<T> {
    ApproximateGibbs::new(GibbsConfig::default(), test).unwrap()
}

fn zeros(d: usize) -> Vec<f64> {
    vec![0.0; d]
}

// ---------------------------------------------------------------------------------------------
// Exact Gibbs samples the enumerated joint.

/// Runs 4 chains of `draws` sweeps on a D = 6 MRF (log ψ ~ N(0, 0.5²)) and checks every state's
/// frequency against the enumerated joint. States expected fewer than 100 times are lumped into
/// one category (so the normal approximation holds whatever the seed).
fn check_joint(scan: Scan, draws: usize, base_seed: u64) {
    let d = 6;
    let mrf = ThreeWayMrf::random(d, 0.5, seed(base_seed)).unwrap();
    let exact = mrf.enumerate().unwrap().probs();
    let n_total = 4 * draws;
    let (p_min, p_max) = exact.iter().fold((1.0_f64, 0.0_f64), |(l, h), &p| (l.min(p), h.max(p)));
    let tv_uniform: f64 = exact.iter().map(|p| (p - 1.0 / 64.0).abs()).sum::<f64>() / 2.0;
    assert!(tv_uniform > 0.2, "the field is too close to uniform: TV = {tv_uniform}");
    // Category of each state: itself, or the lumped category 64.
    let rare = |p: f64| p * (n_total as f64) < 100.0;
    let category: Vec<usize> =
        exact.iter().enumerate().map(|(s, &p)| if rare(p) { 64 } else { s }).collect();
    let mut p_cat = exact.clone();
    p_cat.push(exact.iter().filter(|&&p| rare(p)).sum());

    let config = RunConfig::new(200, draws, 4, seed(base_seed));
    let inits = vec![zeros(d), vec![1.0; d], zeros(d), vec![1.0; d]];
    let out = sample_in_memory(
        &mrf,
        config,
        &inits,
        &ApproximateGibbs::new(GibbsConfig { scan }, ExactTest::new()).unwrap(),
    )
    .unwrap();
    let cats: Vec<Vec<usize>> = out
        .iter()
        .map(|c| {
            (0..c.sink.num_draws())
                .map(|k| category[state_index(c.sink.draw(k), d).unwrap()])
                .collect()
        })
        .collect();
    let (mut max_z, mut sum_z2, mut tv, mut tested) = (0.0_f64, 0.0, 0.0, 0);
    let (mut ess_lo, mut ess_hi) = (f64::INFINITY, 0.0_f64);
    for (c, &p) in p_cat.iter().enumerate() {
        if p == 0.0 || (c < 64 && category[c] != c) {
            continue;
        }
        let indicators: Vec<Vec<f64>> = cats
            .iter()
            .map(|chain| chain.iter().map(|&t| f64::from(u8::from(t == c))).collect())
            .collect();
        let freq = indicators.iter().flatten().sum::<f64>() / n_total as f64;
        let ess = ess_mean(&indicators).unwrap();
        let mcse = (p * (1.0 - p) / ess).sqrt();
        let z = (freq - p) / mcse;
        assert!(
            z.abs() < Z_MAX,
            "{scan:?}: category {c}: frequency {freq:.5} vs exact {p:.5}, MCSE {mcse:.2e} \
             (ESS {ess:.0}), z = {z:.2}"
        );
        max_z = max_z.max(z.abs());
        sum_z2 += z * z;
        tv += (freq - p).abs() / 2.0;
        ess_lo = ess_lo.min(ess);
        ess_hi = ess_hi.max(ess);
        tested += 1;
    }
    // Costs: every update used all 10 factors of its variable.
    for c in &out {
        assert_eq!(c.report.sampling_evals.terms, (draws * d * 10) as u64);
        assert_eq!(c.report.mean_batch_size, (d * 10) as f64);
        assert_eq!(c.sink.stat("frac_used__").unwrap().iter().sum::<f64>(), draws as f64);
    }
    let flip_rate = out.iter().map(|c| c.report.mean_accept_stat).sum::<f64>() / 4.0;
    eprintln!(
        "exact Gibbs, {scan:?} scan, D = 6, 4 × {draws} sweeps: p in [{p_min:.2e}, {p_max:.4}], \
         TV(P, uniform) = {tv_uniform:.3}; {tested} categories: max |z| = {max_z:.2}, \
         Σ z² = {sum_z2:.1}, TV(empirical, P) = {tv:.4}, ESS per category in \
         [{ess_lo:.0}, {ess_hi:.0}], flip rate {flip_rate:.3}"
    );
}

#[test]
fn exact_gibbs_systematic_scan_samples_the_enumerated_joint() {
    check_joint(Scan::Systematic, 100_000, 11);
}

#[test]
fn exact_gibbs_random_scan_samples_the_enumerated_joint() {
    check_joint(Scan::Random, 60_000, 12);
}

#[test]
fn independent_variables_with_unequal_populations() {
    // Draws are independent across sweeps (the conditionals do not depend on x), so each
    // frequency has binomial sd √(p(1 − p)/n). Variable 0 has no factors: p = 1/2.
    let model = independent_model();
    let k = kernel(ExactTest::new());
    let mut rng = chain_rng(seed(20), 0);
    let mut chain = k.build_chain(&model, &zeros(5), &mut rng).unwrap();
    let n = 40_000;
    let mut ones = [0usize; 5];
    let mut terms = 0;
    for _ in 0..n {
        let stats = chain.step(&model, &mut rng).unwrap();
        terms += stats.evals.terms;
        for (o, &x) in ones.iter_mut().zip(chain.position()) {
            *o += usize::from(x == 1.0);
        }
    }
    assert_eq!(terms, (n * (3 + 6 + 9 + 12)) as u64);
    for (i, &c) in ones.iter().enumerate() {
        let p = model.conditional(i);
        let freq = c as f64 / n as f64;
        let z = (freq - p) / (p * (1.0 - p) / n as f64).sqrt();
        assert!(z.abs() < Z_MAX, "variable {i}: {freq} vs {p} (z = {z:.2})");
    }
}

// ---------------------------------------------------------------------------------------------
// The per-update decision probability.

#[test]
fn empirical_conditional_matches_the_exact_conditional() {
    let d = 6;
    let mrf = ThreeWayMrf::random(d, 0.8, seed(30)).unwrap();
    let joint = mrf.enumerate().unwrap();
    let mut rng = chain_rng(seed(31), 0);
    let mut test = ExactTest::new();
    let reps = 20_000;
    let mut max_z = 0.0_f64;
    let mut checked = 0;
    for s in [0usize, 13, 22, 37, 50, 63] {
        let x: Vec<f64> = (0..d).map(|v| ((s >> v) & 1) as f64).collect();
        for i in 0..d {
            let p = mrf.exact_conditional(i, &x);
            assert!((p - joint.conditional(i, &x).unwrap()).abs() < 1e-12);
            let e = empirical_conditional(&mrf, &mut test, i, &x, reps, &mut rng).unwrap();
            assert_eq!(e.reps, reps);
            assert_eq!(e.mean_fraction_used, 1.0);
            let sd = (p * (1.0 - p) / reps as f64).sqrt();
            let z = (e.probability - p) / sd;
            assert!(
                z.abs() < Z_MAX,
                "state {s}, variable {i}: {} vs {p} (z = {z:.2})",
                e.probability
            );
            max_z = max_z.max(z.abs());
            checked += 1;
        }
    }
    eprintln!(
        "empirical conditional (exact test), {checked} (state, variable) pairs × {reps} reps: max |z| = {max_z:.2}"
    );

    // A subsampling test: the first m values of N_i = 10. With m = N_i it is exact; with m < N_i
    // it uses m/N_i of the population per decision.
    let x = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0];
    let mut full = FirstBatch::new(10);
    let a =
        empirical_conditional(&mrf, &mut full, 2, &x, 1000, &mut chain_rng(seed(32), 0)).unwrap();
    let b =
        empirical_conditional(&mrf, &mut test, 2, &x, 1000, &mut chain_rng(seed(32), 0)).unwrap();
    assert_eq!(a.ones, b.ones, "the first-10 test on 10 values is the exact test");
    let mut half = FirstBatch::new(5);
    let e = empirical_conditional(&mrf, &mut half, 2, &x, 1000, &mut rng).unwrap();
    assert_eq!(e.mean_fraction_used, 0.5);
    assert_eq!(e.mean_looks, 1.0);
}

#[test]
fn empirical_conditional_rejects_bad_input() {
    let mrf = ThreeWayMrf::random(5, 0.3, 0).unwrap();
    let mut test = ExactTest::new();
    let mut rng = chain_rng(1, 0);
    let x = zeros(5);
    let e = empirical_conditional(&mrf, &mut test, 5, &x, 10, &mut rng).unwrap_err();
    assert!(e.to_string().contains("variable = 5"), "{e}");
    let e = empirical_conditional(&mrf, &mut test, 0, &x, 0, &mut rng).unwrap_err();
    assert!(e.to_string().contains("reps = 0"), "{e}");
    let e = empirical_conditional(&mrf, &mut test, 0, &[0.0, 2.0, 0.0, 0.0, 0.0], 1, &mut rng)
        .unwrap_err();
    assert!(e.to_string().contains("entry 1 is 2"), "{e}");
    assert!(empirical_conditional(&mrf, &mut test, 0, &[0.0; 4], 1, &mut rng).is_err());
}

// ---------------------------------------------------------------------------------------------
// Random-number streams.

fn run_chain<T: MeanTest + Clone + Send + Sync>(
    model: &ThreeWayMrf, test: T, scan: Scan, sweeps: usize, s: u64,
) -> (Vec<Vec<f64>>, Vec<GibbsStats>) {
    let k = ApproximateGibbs::new(GibbsConfig { scan }, test).unwrap();
    let mut rng = chain_rng(s, 0);
    let d = model.num_variables();
    let mut chain = k.build_chain(model, &zeros(d), &mut rng).unwrap();
    let mut xs = Vec::with_capacity(sweeps);
    let mut stats = Vec::with_capacity(sweeps);
    for _ in 0..sweeps {
        stats.push(chain.step(model, &mut rng).unwrap());
        xs.push(chain.position().to_vec());
    }
    (xs, stats)
}

#[test]
fn same_seed_same_chain() {
    let mrf = ThreeWayMrf::random(12, 0.3, seed(40)).unwrap();
    for scan in [Scan::Systematic, Scan::Random] {
        let (xa, sa) = run_chain(&mrf, FirstBatch::new(20), scan, 500, seed(41));
        let (xb, sb) = run_chain(&mrf, FirstBatch::new(20), scan, 500, seed(41));
        assert_eq!(xa, xb);
        assert_eq!(sa, sb);
        let (xc, _) = run_chain(&mrf, FirstBatch::new(20), scan, 500, seed(42));
        assert_ne!(xa, xc);
    }
}

#[test]
fn tests_with_the_same_decisions_give_the_same_chain_whatever_their_rng_use() {
    // RandomChunksExact makes the exact decision but draws its chunk sizes from the subsampling
    // RNG and takes a random number of looks; with u drawn from a separate stream, the chain is
    // the exact chain, decision for decision.
    let mrf = ThreeWayMrf::random(12, 0.3, seed(50)).unwrap();
    for scan in [Scan::Systematic, Scan::Random] {
        let (x_exact, s_exact) = run_chain(&mrf, ExactTest::new(), scan, 2000, seed(51));
        let (x_chunks, s_chunks) =
            run_chain(&mrf, RandomChunksExact::default(), scan, 2000, seed(51));
        let (x_first, _) = run_chain(&mrf, FirstBatch::new(55), scan, 2000, seed(51));
        assert_eq!(x_exact, x_chunks, "{scan:?}");
        assert_eq!(x_exact, x_first, "{scan:?}");
        let looks_exact: u64 = s_exact.iter().map(|s| s.n_looks).sum();
        let looks_chunks: u64 = s_chunks.iter().map(|s| s.n_looks).sum();
        assert_eq!(looks_exact, 2000 * 12);
        assert!(looks_chunks > 5 * looks_exact, "{looks_chunks} looks");
        let flips: u64 = s_exact.iter().map(|s| s.n_flips).sum();
        assert!(flips > 1000, "the chain moves ({flips} flips)");
    }
}

// ---------------------------------------------------------------------------------------------
// Counts and stats.

#[test]
fn a_sweep_counts_its_factor_evaluations() {
    let d = 12;
    let n = 55; // (12 − 1)(12 − 2)/2
    let mrf = ThreeWayMrf::random(d, 0.3, seed(60)).unwrap();
    let mut rng = chain_rng(seed(61), 0);
    let k = kernel(ExactTest::new());
    let mut chain = k.build_chain(&mrf, &zeros(d), &mut rng).unwrap();
    for _ in 0..20 {
        let before = chain.position().to_vec();
        let s = chain.step(&mrf, &mut rng).unwrap();
        assert_eq!(s.evals.terms, (d * n) as u64);
        assert_eq!((s.evals.gradients, s.evals.hessians), (0, 0));
        assert_eq!(s.batch_size, (d * n) as u64);
        assert_eq!(s.n_updates, d as u64);
        assert_eq!(s.n_looks, d as u64);
        assert_eq!(s.mean_fraction_used, 1.0);
        assert!(!s.divergent);
        let ones = chain.position().iter().filter(|&&v| v == 1.0).count() as u64;
        assert_eq!(s.n_ones, ones, "systematic scan: every variable set once");
        let flips = before.iter().zip(chain.position()).filter(|(a, b)| a != b).count() as u64;
        assert_eq!(s.n_flips, flips);
        assert_eq!(s.accept_stat, flips as f64 / d as f64);
        assert!(Chain::<ThreeWayMrf>::log_density(&chain).is_nan());
    }
    let k = kernel(FirstBatch::new(20));
    let mut chain = k.build_chain(&mrf, &zeros(d), &mut rng).unwrap();
    let s = chain.step(&mrf, &mut rng).unwrap();
    assert_eq!(s.evals.terms, (d * 20) as u64);
    assert!((s.mean_fraction_used - 20.0 / 55.0).abs() < 1e-15);

    // CmdStan-style columns, read from the stats' definition.
    let names = tallmc_core::StatColumns::names(&s).unwrap();
    let mut cols = Vec::new();
    tallmc_core::StatColumns::values(&s, &mut cols).unwrap();
    assert_eq!(names.len(), cols.len());
    assert!(names.iter().all(|c| c.ends_with("__")));
    assert!(cols.iter().all(|v| v.is_finite()));
    let col = |name: &str| cols[names.iter().position(|c| c == name).unwrap()];
    assert_eq!(col("n_terms__"), (d * 20) as f64);
    assert_eq!(col("n_updates__"), d as f64);
    assert_eq!(col("accept_stat__"), s.accept_stat);
    assert_eq!(StepStats::batch_size(&s), (d * 20) as u64);
}

#[test]
fn the_population_range_is_twice_the_log_ratio_bound() {
    let mrf = ThreeWayMrf::random(7, 0.4, seed(70)).unwrap();
    let mut test = FirstBatch::new(15);
    test.needs_range = true;
    let mut rng = chain_rng(1, 0);
    for i in 0..7 {
        empirical_conditional(&mrf, &mut test, i, &zeros(7), 1, &mut rng).unwrap();
        assert_eq!(test.last_range, Some(2.0 * mrf.log_ratio_bound(i)));
    }
}

// ---------------------------------------------------------------------------------------------
// No allocation.

fn steps_allocate_nothing<M: BinaryFactors, T: MeanTest + Clone + Send + Sync>(
    name: &str, model: &M, test: T, scan: Scan,
) {
    let k = ApproximateGibbs::new(GibbsConfig { scan }, test).unwrap();
    let mut rng = chain_rng(1, 0);
    let mut chain = k.build_chain(model, &zeros(model.num_variables()), &mut rng).unwrap();
    // The first step lets the test size its scratch.
    assert_allocation_free(&format!("{name} steps"), 1, 50, || {
        chain.step(model, &mut rng).unwrap();
    });
}

#[test]
fn gibbs_steps_do_not_allocate() {
    let mrf = ThreeWayMrf::random(20, 0.2, 1).unwrap();
    for scan in [Scan::Systematic, Scan::Random] {
        steps_allocate_nothing("exact, MRF", &mrf, ExactTest::new(), scan);
        steps_allocate_nothing("first batch, MRF", &mrf, FirstBatch::new(50), scan);
        steps_allocate_nothing("exact, independent", &independent_model(), ExactTest::new(), scan);
    }
}

// ---------------------------------------------------------------------------------------------
// Errors.

#[test]
fn bad_states_and_failing_tests_are_errors() {
    let mrf = ThreeWayMrf::random(5, 0.3, 0).unwrap();
    let mut rng = chain_rng(1, 0);
    let k = kernel(ExactTest::new());
    let e = k.build_chain(&mrf, &zeros(4), &mut rng).unwrap_err();
    assert!(e.to_string().contains("expected 5, found 4"), "{e}");
    let e = k.build_chain(&mrf, &[0.0, 1.0, 0.5, 0.0, 0.0], &mut rng).unwrap_err();
    assert!(e.to_string().contains("entry 2 is 0.5"), "{e}");

    // A non-finite log-ratio: the error names the variable and the test's complaint.
    let mut model = independent_model();
    model.values[3][4] = f64::NAN;
    let k = kernel(ExactTest::new());
    let mut chain = k.build_chain(&model, &zeros(5), &mut rng).unwrap();
    let e = chain.step(&model, &mut rng).unwrap_err().to_string();
    assert!(e.contains("variable 3") && e.contains("NaN"), "{e}");

    // A test that needs a range, on a model without a finite bound.
    let mut model = independent_model();
    model.bound = Some(f64::INFINITY);
    let mut test = FirstBatch::new(3);
    test.needs_range = true;
    let e = kernel(test).build_chain(&model, &zeros(5), &mut rng).unwrap_err().to_string();
    assert!(e.contains("variable 1") && e.contains("inf"), "{e}");

    // A population the test refuses (FirstBatch accepts at most 1000 values; N_i = 1176 at D = 50).
    let big = ThreeWayMrf::random(50, 0.1, 0).unwrap();
    let e =
        kernel(FirstBatch::new(3)).build_chain(&big, &zeros(50), &mut rng).unwrap_err().to_string();
    assert!(e.contains("variable 0 has 1176 factors"), "{e}");
}
