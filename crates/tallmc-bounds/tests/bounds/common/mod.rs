//! Shared helpers of the integration tests: seeds, finite populations, binomial tolerances.

#![allow(dead_code)]

use rand::RngExt;
use rand_distr::{Distribution, LogNormal, Normal, StudentT};
use tallmc_core::rng::{ChainRng, chain_rng, setup_rng};

/// `base` plus the optional environment variable `TALLMC_SEED_OFFSET` (u64, default 0), so that
/// every statistical test can be re-run with other seeds.
pub use tallmc_testkit::seed;

/// The RNG of one simulation stream.
pub fn rng(base: u64, stream: usize) -> ChainRng {
    chain_rng(seed(base), stream)
}

/// The families of finite populations the coverage tests draw from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// N(0, 1).
    Gaussian,
    /// U(0, 1).
    Uniform,
    /// Student-t with 2 degrees of freedom (infinite variance: heavy tails).
    StudentT2,
    /// logN(0, 2) (σ = 2 on the log scale, as in BDH 2014 §4.1: heavy right tail).
    LogNormal,
}

impl Family {
    pub const ALL: [Family; 4] =
        [Family::Gaussian, Family::Uniform, Family::StudentT2, Family::LogNormal];

    pub fn name(self) -> &'static str {
        match self {
            Family::Gaussian => "gaussian",
            Family::Uniform => "uniform",
            Family::StudentT2 => "student-t(2)",
            Family::LogNormal => "lognormal(0,2)",
        }
    }

    /// N values drawn i.i.d. from the family with the set-up RNG of `seed`, `index`.
    pub fn population(self, n: usize, seed: u64, index: u64) -> Vec<f64> {
        let mut rng = setup_rng(seed.wrapping_mul(1_000_003).wrapping_add(index));
        let normal = Normal::new(0.0, 1.0).expect("valid normal");
        let t2 = StudentT::new(2.0).expect("valid t");
        let lognormal = LogNormal::new(0.0, 2.0).expect("valid lognormal");
        (0..n)
            .map(|_| match self {
                Family::Gaussian => normal.sample(&mut rng),
                Family::Uniform => rng.random::<f64>(),
                Family::StudentT2 => t2.sample(&mut rng),
                Family::LogNormal => lognormal.sample(&mut rng),
            })
            .collect()
    }
}

/// Mean and standard deviation (divisor N) of a population, two passes.
pub fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// The largest number of "failures" among `trials` independent events of probability at most
/// `p` that is still consistent with that probability, at false-alarm level `alpha`.
///
/// Derivation: the count X is a sum of independent Bernoulli(p_i), p_i ≤ p, so it is
/// stochastically dominated by Binomial(trials, p). Bernstein's inequality for a sum of
/// independent variables bounded by 1 with total variance v = trials·p(1 − p) gives
/// P(X ≥ trials·p + x) ≤ exp(−x² / (2(v + x/3))). Setting the right side to `alpha` and solving
/// for x: x = L/3 + √(L²/9 + 2vL), L = log(1/alpha). The bound is rigorous (no normal
/// approximation), so an assertion `count ≤ allowed_failures(..)` fails with probability at most
/// `alpha` when the rate really is ≤ p.
pub fn allowed_failures(trials: usize, p: f64, alpha: f64) -> f64 {
    let v = trials as f64 * p * (1.0 - p);
    let l = (1.0 / alpha).ln();
    trials as f64 * p + l / 3.0 + (l * l / 9.0 + 2.0 * v * l).sqrt()
}

/// How far the thresholds are from the population mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Regime {
    /// μ₀ = μ + U·σ/√m, U ~ U(−1, 1), m = the test's first batch: within one standard error of
    /// the mean of the first subsample, where subsample tests err most.
    Hard,
    /// μ₀ = μ ± (0.5 + U)σ, U ~ U(0, 1): a decision a small subsample usually gets right.
    Far,
    /// μ₀ = μ + U·σ/√N, U ~ U(−1, 1): within one standard error of the mean of the whole
    /// population, where only (nearly) all N values decide reliably. The worst case for a test
    /// without a guarantee.
    Nearest,
}

impl Regime {
    pub fn name(self) -> &'static str {
        match self {
            Regime::Hard => "hard",
            Regime::Far => "far",
            Regime::Nearest => "nearest",
        }
    }
}

/// Outcome of many decisions of one test in one cell of the grid.
#[derive(Debug, Clone, Copy)]
pub struct Cell {
    pub decisions: usize,
    pub wrong: usize,
    pub mean_used: f64,
}

impl Cell {
    pub fn rate(&self) -> f64 {
        self.wrong as f64 / self.decisions as f64
    }
}

/// Runs `decisions` decisions of `test` on `pops` populations of `family` with N = `n` values,
/// thresholds in `regime` (scale m = `first_batch`), and counts decisions that differ from the
/// exact one (sign of population mean − threshold).
pub fn run_cell<T: tallmc_bounds::MeanTest>(
    test: &mut T, family: Family, n: usize, regime: Regime, first_batch: usize, decisions: usize,
    pops: usize, base_seed: u64,
) -> Cell {
    let populations: Vec<Vec<f64>> =
        (0..pops).map(|i| family.population(n, seed(base_seed), i as u64)).collect();
    let stats: Vec<(f64, f64)> = populations.iter().map(|v| mean_sd(v)).collect();
    let mut slices: Vec<tallmc_bounds::SlicePopulation<'_>> = populations
        .iter()
        .map(|v| {
            tallmc_bounds::SlicePopulation::new(
                v,
                Some(tallmc_bounds::SlicePopulation::exact_range(v)),
            )
            .expect("valid population")
        })
        .collect();
    let mut r = rng(base_seed, 1 + family as usize * 10 + regime as usize);
    let (mut wrong, mut used) = (0usize, 0usize);
    for i in 0..decisions {
        let j = i % pops;
        let (mu, sd) = stats[j];
        let threshold = match regime {
            Regime::Hard => mu + (2.0 * r.random::<f64>() - 1.0) * sd / (first_batch as f64).sqrt(),
            Regime::Nearest => mu + (2.0 * r.random::<f64>() - 1.0) * sd / (n as f64).sqrt(),
            Regime::Far => {
                let sign = if r.random::<bool>() { 1.0 } else { -1.0 };
                mu + sign * (0.5 + r.random::<f64>()) * sd
            }
        };
        let pop = &mut slices[j];
        pop.reset();
        let d = test.decide(pop, threshold, &mut r).expect("decision");
        used += d.used;
        if d.above != (pop.mean() > threshold) {
            wrong += 1;
        }
    }
    Cell { decisions, wrong, mean_used: used as f64 / decisions as f64 }
}

/// The smallest number of "failures" among `trials` independent events of probability at least
/// `p` that is still consistent with that probability, at false-alarm level `alpha`: the lower
/// tail version of [`allowed_failures`] (Bernstein's inequality applied to trials − X).
pub fn required_failures(trials: usize, p: f64, alpha: f64) -> f64 {
    let v = trials as f64 * p * (1.0 - p);
    let l = (1.0 / alpha).ln();
    trials as f64 * p - l / 3.0 - (l * l / 9.0 + 2.0 * v * l).sqrt()
}
